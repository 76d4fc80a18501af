//! Geometry every step of the bake may use, and that imports none of them:
//! welding, topology and volume, convex hulls, primitive fits, the binned
//! SAH tree builder, nearest-point distances.

pub mod fit;
pub mod hull;
pub mod nearest;
pub mod sah;
pub mod topology;
pub mod weld;
