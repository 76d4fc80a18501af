//! The geometry kernels both sides of Kiln use, below both: the baker
//! builds its polytopes with [`hull`] and measures its colliders with
//! [`sphere_triangle`]; the runtime makes hull query shapes with the same
//! [`hull`] and answers spheres with the same [`sphere_triangle`]. Plain
//! f64 functions on [`glam`] vectors, and the [`cache`] hint their hot
//! loops share; nothing here knows the archive.
//!
//! ```
//! use glam::DVec3;
//! let corners: Vec<DVec3> = (0..8)
//!     .map(|i| DVec3::new((i & 1) as f64, (i >> 1 & 1) as f64, (i >> 2 & 1) as f64))
//!     .collect();
//! let cube = kiln_geometry::hull::hull(&corners).expect("a solid");
//! assert_eq!(cube.faces.len(), 6);
//! assert!((cube.volume() - 1.0).abs() < 1e-12);
//! ```

pub mod cache;
pub mod frame;
pub mod hull;
pub mod ray_round;
pub mod rng;
pub mod sphere_triangle;
pub mod voxels;
