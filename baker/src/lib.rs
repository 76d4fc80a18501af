//! # kiln-baker
//!
//! Turns glTF levels (or in-memory triangle meshes) into Kiln archives.
//!
//! The bake reads as its modules, in order: [`config`] (settings) →
//! [`ingest`] (glTF → [`Scene`]) → [`prepare`] (weld every mesh once) →
//! [`classify`] (a collider kind per object, and the rule that chose it) →
//! [`build`] (shapes in the builders' own types, top-level tree) →
//! [`encode`] (archive types, then `kiln_formats::encode` for the bytes) →
//! [`write`](mod@write) (atomic). [`bake`](mod@bake) strings them together;
//! the `baker` binary is a thin shell over this library.
//!
//! ```no_run
//! use kiln_baker::{bake_file, BakeSettings};
//! let baked = bake_file("level.glb".as_ref(), &BakeSettings::default())?;
//! kiln_baker::write::write_atomic("level.kiln".as_ref(), &baked.bytes)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bake;
pub mod build;
pub mod classify;
pub mod config;
pub mod encode;
pub mod export;
pub mod ingest;
pub mod prepare;
pub mod report;
pub mod scene;
pub mod write;

pub use bake::{Baked, Plan, bake_file, bake_plan, bake_scene, is_up_to_date, plan};
pub use config::BakeSettings;
pub use ingest::{IngestError, IngestErrorKind};
pub use report::BakeReport;
pub use scene::{Scene, SceneInstance, SceneMesh};
pub mod inspect;
pub mod query;
