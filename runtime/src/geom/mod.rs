//! The primitive tests every shape is built from: ray against box and
//! ball (conservative, for culling), watertight ray against triangle,
//! sphere against triangle (closest point and sweep), GJK distance
//! between convex shapes, and convex hulls (for hull query shapes; the
//! baker builds its polytopes with the same code).

// the core of the convex query shapes (capsules, boxes, hulls): tested on
// its own here, not yet called by a query
#[allow(dead_code)]
pub(crate) mod gjk;
pub mod hull;
pub mod ray_box;
pub mod ray_triangle;
pub mod sphere_triangle;
