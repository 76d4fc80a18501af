//! # kiln-runtime
//!
//! Opens a Kiln archive (a memory map, validated once) and answers collision
//! queries on it from any number of threads, without parsing or allocating
//! at load.
//!
//! One method per question, each taking a [`Filter`] (which objects the
//! query sees; [`Filter::ALL`] for every one) and each with a batched form
//! that answers many queries on the rayon pool:
//!
//! | question | method | batched |
//! |---|---|---|
//! | the closest hit of a ray | [`Level::raycast`] | [`Level::raycast_batch`] |
//! | does a ray hit anything | [`Level::raycast_any`] | [`Level::raycast_any_batch`] |
//! | what does a shape touch, and how deep | [`Level::overlap`] (and [`Level::overlap_into`]) | [`Level::overlap_batch`] |
//! | does a shape touch anything | [`Level::overlap_any`] | [`Level::overlap_any_batch`] |
//! | where does a moving shape first touch | [`Level::cast`] | [`Level::cast_batch`] |
//! | which solids contain a point | [`Level::contains_point`] (and [`Level::contains_point_into`]) | [`Level::contains_point_batch`] |
//! | does any solid contain a point | [`Level::contains_point_any`] | [`Level::contains_point_any_batch`] |
//!
//! Rays also have a batched form on the calling thread alone,
//! [`Level::raycast_many`] and [`Level::raycast_any_many`], for engines
//! with their own job system: it walks several rays side by side, which is
//! faster than one call per ray on levels larger than the cache.
//!
//! Every answer names the object it met by an [`ObjectId`] ([`Level::object_name`],
//! [`Level::find_object`], [`Level::objects`]) and the feature it touched
//! by an `Option<u32>` ([`RayHit::feature`]).
//!
//! A [`World`] holds a level and bodies that move beside it (spheres,
//! capsules, boxes, hulls, copies of baked props), inserted, moved and
//! removed by the game, and answers every question above with the same
//! method names over both; its bodies live in a dynamic tree of fat boxes
//! (the world's own: not part of the API). A world larger than one
//! archive is tiles ([`WorldManifest`]) mounted into a [`World`] at f64
//! points ([`World::mount`], [`World::set_origin`]: a floating origin),
//! or kept mounted around focus points by a [`Streamer`].
//!
//! Query shapes ([`QueryShape`]) are spheres, capsules, boxes and convex
//! hulls, placed by a [`Pose`]. A kinematic character controller
//! ([`character`]) is built on these queries; [`LevelHandle`] reloads an
//! archive that a bake replaced. `glam`, whose vectors every query takes,
//! is re-exported.
//!
//! Inside, the private modules stand in layers, each importing only from
//! its own and those below (a tidy test holds them to it): `character`
//! (on the public queries), `space` (the query trait a level and a world
//! share), `stream` → `world` (a level, its tiles and its bodies), `handle`
//! (hot reload) → `query` (level-wide operations, written once over a
//! level and a world's bodies: the trees pick objects) → `dynamic` (the
//! bodies and their tree) → `level` (open → validate) → `collider` (one
//! module per baked collider family, each answering every operation for
//! one placed instance) → `shape` (query shapes, placed in world space),
//! `instance` (placement), `walk` (tree walkers) → `geom` (the primitive
//! tests); `object` and `filter` are plain values every layer names.
//!
//! ```
//! use kiln_runtime::{Filter, Level, QueryShape, Pose, Ray, Vec3};
//! # let baked = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap();
//! # std::fs::write(std::env::temp_dir().join("kiln-doc-lib.kiln"), &baked.bytes).unwrap();
//! # let path = std::env::temp_dir().join("kiln-doc-lib.kiln");
//! let level = Level::open(path)?;
//! // a ray straight down onto the floor
//! let down = Ray::new(Vec3::new(12.0, 10.0, 5.0), Vec3::NEG_Y, 100.0);
//! let hit = level.raycast(&down, &Filter::ALL).expect("the floor is there");
//! assert!(hit.point.y.abs() < 1e-4);
//! println!("ground at {} on {}", hit.point, level.object_name(hit.object).unwrap_or_default());
//! // a ball resting on it touches it; lifted by 1 m it touches nothing
//! let ball = QueryShape::Sphere { radius: 0.5 };
//! assert!(level.overlap_any(&ball, &Pose::at(Vec3::new(12.0, 0.5, 5.0)), &Filter::ALL));
//! assert!(!level.overlap_any(&ball, &Pose::at(Vec3::new(12.0, 1.5, 5.0)), &Filter::ALL));
//! # Ok::<(), kiln_runtime::OpenError>(())
//! ```

mod authored;
pub mod character;
mod collider;
mod dynamic;
mod filter;
mod geom;
mod handle;
mod level;
mod manifest;
mod mass;
mod object;
mod placement;
mod query;
mod shape;
mod space;
mod stream;
mod walk;
mod world;

pub use authored::AuthoredBody;
pub use dynamic::body::{BodyCollider, BodyShapeError, WorldError};
pub use filter::Filter;
pub use glam;
pub use glam::{Quat, Vec3};
pub use handle::LevelHandle;
pub use kiln_formats::ArchiveError;
/// The archive format version this runtime reads; an archive of another
/// version is refused.
pub use kiln_formats::header::FORMAT_VERSION;
pub use kiln_formats::level::Motion;
pub use level::{Level, OpenError};
pub use manifest::WorldManifest;
pub use mass::MassProperties;
pub use object::{ObjectId, TileId};
pub use query::{CastOptions, Ray, RayHit, ShapeCast, ShapeHit, ShapeOverlap, is_direction};
pub use shape::{ConvexHull, HullError, Pose, QueryShape};
pub use space::Space;
pub use stream::{StreamError, StreamReport, Streamer};
pub use world::{Body, TriggerEvent, World};

/// The world's dynamic tree, reachable for the peer benchmark
/// (`benches/peers/dynamic.rs`) alone: not part of the API, and not held
/// to semantic versioning. A game's bodies go through [`World`].
#[doc(hidden)]
pub mod internals {
    pub use crate::dynamic::tree::{Aabb, DynamicTree, Proxy, Update};
    pub use crate::walk::with_portable_lanes;
}
