//! The primitive tests every shape is built from: ray against box and
//! ball (conservative, for culling), watertight ray against triangle,
//! sphere against triangle (closest point and sweep), GJK distance
//! between convex shapes, penetration depth (separating axes, expanding
//! polytope), and convex hulls (for hull query shapes; the
//! baker builds its polytopes with the same code).

pub(crate) mod contact_point;
pub(crate) mod epa;
pub(crate) mod gjk;
pub mod hull;
pub(crate) mod probe;
pub mod ray_box;
pub mod ray_triangle;
pub(crate) mod sat;
pub mod sphere_triangle;
#[cfg(test)]
pub(crate) mod test_rng;
