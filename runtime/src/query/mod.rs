//! Queries, one file per operation and shape pair.

pub mod ray_box;
pub mod ray_triangle;
pub mod raycast;
pub mod sphere;
pub mod sphere_triangle;
