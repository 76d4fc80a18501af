//! # kiln-baker
//!
//! Turns glTF levels (or in-memory triangle meshes) into Kiln archives.
//!
//! The bake reads as its modules, in order: [`ingest`] (glTF → [`Scene`]) →
//! [`build`] (weld, pair, SAH trees, top-level tree) → encode
//! (`kiln_formats::encode`) → [`write`](mod@write) (atomic). [`bake`](mod@bake) strings them
//! together; the `baker` binary is a thin shell over this library.
//!
//! ```no_run
//! use kiln_baker::{bake_file, BakeSettings};
//! let baked = bake_file("level.glb".as_ref(), &BakeSettings::default())?;
//! kiln_baker::write::write_atomic("level.kiln".as_ref(), &baked.bytes)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bake;
pub mod build;
pub mod export;
pub mod ingest;
pub mod report;
pub mod scene;
pub mod write;

pub use bake::{BakeSettings, Baked, bake_file, bake_scene};
pub use ingest::{IngestError, IngestErrorKind};
pub use report::BakeReport;
pub use scene::{Scene, SceneInstance, SceneMesh};
pub mod inspect;
pub mod query;
