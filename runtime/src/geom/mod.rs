//! The primitive tests every shape is built from: ray against box and
//! ball (conservative, for culling), watertight ray against triangle,
//! sphere against triangle (closest point and sweep).

pub mod ray_box;
pub mod ray_triangle;
pub mod sphere_triangle;
