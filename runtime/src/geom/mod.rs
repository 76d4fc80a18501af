//! The primitive tests every shape is built from: ray against box and
//! ball (conservative, for culling), watertight ray against triangle,
//! sphere against triangle (closest point and sweep), and GJK distance
//! between convex shapes.

// the core of the convex query shapes (capsules, boxes, hulls): tested on
// its own here, not yet called by a query
#[allow(dead_code)]
pub(crate) mod gjk;
pub mod ray_box;
pub mod ray_triangle;
pub mod sphere_triangle;
