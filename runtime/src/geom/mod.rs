//! The primitive tests every shape is built from: ray against box and
//! ball (conservative, for culling), watertight ray against triangle, GJK
//! distance between convex shapes, penetration depth (separating axes,
//! expanding polytope), contact points. Sphere against triangle and convex
//! hulls, which the baker uses too, live below both in `kiln_geometry`.

pub(crate) use kiln_geometry::{hull, ray_round, sphere_triangle};

pub(crate) mod contact_point;
pub(crate) mod convex_contact;
pub(crate) mod epa;
pub(crate) mod gjk;
pub(crate) mod least_move;
pub(crate) mod ray_box;
pub(crate) mod ray_triangle;
pub(crate) mod sat;
