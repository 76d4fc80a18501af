//! # kiln-baker
//!
//! Turns glTF levels (or in-memory triangle meshes) into Kiln archives.
//!
//! The bake reads as its modules, in order: [`config`] (settings) →
//! [`ingest`] (glTF → [`Scene`]) → [`classify`] (a collider kind per
//! object, and the rule that chose it) → [`prepare`] (what each
//! collider's builder starts from: welded triangles, a fitted primitive)
//! → build, in [`collider`] (each family's builder — a concave solid's
//! watertight low-poly surface and BSP tree among them — and the
//! top-level tree) → [`encode`] (archive types, then `kiln_formats::encode`
//! for the bytes) → [`write`](mod@write) (atomic). [`bake`](mod@bake)
//! strings them together, and bakes a file to a file for the CLI's `bake`
//! and `watch` alike. The `baker` tool (`baker/cli`: the command line,
//! watch, inspect, query, view) is a crate of its own over this library,
//! which depends on no CLI, watcher or HTTP crate. Below the steps, and importing none of them: [`kind`] (the
//! collider kinds) and [`geom`] (welding, topology, hulls, fits, the SAH
//! builder, nearest distances).
//!
//! ```no_run
//! use kiln_baker::{bake_file, BakeSettings};
//! let baked = bake_file("level.glb".as_ref(), &BakeSettings::default())?;
//! kiln_baker::write::write_atomic("level.kiln".as_ref(), &baked.bytes)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bake;
pub mod classify;
pub mod collider;
pub mod config;
pub mod encode;
pub mod export;
pub mod geom;
pub mod ingest;
pub mod kind;
pub mod limits;
pub mod prepare;
pub mod report;
pub mod scene;
pub mod tile;
pub mod write;

pub use bake::{
    Baked, Outcome, Plan, bake_file, bake_plan, bake_scene, bake_to_file, is_up_to_date, plan,
};
pub use config::BakeSettings;
pub use ingest::{IngestError, IngestErrorKind};
pub use report::{BakeReport, StageTimes};
pub use scene::{Motion, Scene, SceneInstance, SceneMesh};
