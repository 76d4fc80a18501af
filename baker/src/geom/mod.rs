//! Geometry every step of the bake may use, and that imports none of them:
//! welding, topology and volume, convex hulls, primitive fits, the binned
//! SAH tree builder, nearest-point distances.

pub mod fit;
/// Convex hulls live in the runtime, which builds them for query shapes.
pub use kiln_runtime::geom::hull;
pub mod nearest;
pub mod sah;
pub mod topology;
pub mod weld;

/// The six axis directions, positive and negative (bevel planes, the
/// level-shell rays).
pub const SIGNED_AXES: [glam::DVec3; 6] = [
    glam::DVec3::X,
    glam::DVec3::NEG_X,
    glam::DVec3::Y,
    glam::DVec3::NEG_Y,
    glam::DVec3::Z,
    glam::DVec3::NEG_Z,
];
