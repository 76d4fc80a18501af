//! Geometry every step of the bake may use, and that imports none of them:
//! welding, topology and volume, primitive fits, the binned SAH tree
//! builder, nearest-point distances, affine maps as the archive's 3×4
//! rows. Convex hulls and sphere–triangle closest points, which the
//! runtime uses too, come from `kiln_geometry`.

pub mod fit;
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

/// An affine map as 3×4 row-major f64 rows (`p' = M[..3] · p + M[3]` per
/// row), the layout of `kiln_formats::placement`.
pub fn to_rows64(a: &glam::DAffine3) -> [f64; 12] {
    let m = a.matrix3;
    let t = a.translation;
    [
        m.x_axis.x, m.y_axis.x, m.z_axis.x, t.x, //
        m.x_axis.y, m.y_axis.y, m.z_axis.y, t.y, //
        m.x_axis.z, m.y_axis.z, m.z_axis.z, t.z,
    ]
}

/// The affine map of 3×4 row-major f64 rows ([`to_rows64`]'s inverse).
pub fn from_rows64(m: &[f64; 12]) -> glam::DAffine3 {
    glam::DAffine3::from_cols_array(&[
        m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10], m[3], m[7], m[11],
    ])
}
