//! # kiln-runtime
//!
//! Opens a Kiln archive (a memory map, validated once) and answers collision
//! queries on it from any number of threads.
//!
//! The data path reads as the modules: [`level`] (open → validate) →
//! [`query`] (level-wide operations: the top-level tree picks instances) →
//! `instance` (placement) → `shape` (one module per shape family, each
//! answering every query kind) → `walk` (tree walkers) and [`geom`] (the
//! primitive tests: ray/box, ray/triangle, sphere/triangle).
//!
//! ```no_run
//! use kiln_runtime::Level;
//! use glam::Vec3;
//! let level = Level::open("level.kiln")?;
//! if let Some(hit) = level.raycast(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, 100.0) {
//!     println!("ground at {} on {}", hit.point, level.object_name(hit.instance));
//! }
//! # Ok::<(), kiln_runtime::OpenError>(())
//! ```

pub mod character;
pub mod geom;
pub mod handle;
mod instance;
pub mod level;
pub mod query;
mod shape;
mod walk;

pub use glam::Quat;
pub use glam::Vec3;
pub use handle::LevelHandle;
pub use level::{Level, OpenError};
pub use query::filter::Filter;
pub use query::raycast::{Ray, RayHit};
pub use query::shape::{
    CastOptions, ConvexHull, HullError, Pose, QueryShape, ShapeHit, ShapeOverlap,
};
pub use query::sphere::{Sphere, SphereOverlap, Sweep, SweepHit};
