//! The rigid part of a linear map: what the baker stores as a body's
//! frame and the runtime splits an object's placement by, the same rule on
//! both sides so the two frames agree.

use glam::{DMat3, DQuat, DVec3};

/// The rotation of `m`'s columns made orthonormal (Gram–Schmidt from the
/// first; a mirroring map keeps its mirror in what is left, `rotationᵀ m`).
/// A degenerate column falls back to a perpendicular axis.
///
/// ```
/// use glam::{DMat3, DQuat, DVec3};
/// let turn = DQuat::from_rotation_y(0.5);
/// let m = DMat3::from_quat(turn) * DMat3::from_diagonal(DVec3::new(2.0, 3.0, 4.0));
/// assert!(kiln_geometry::frame::rotation_of(&m).angle_between(turn) < 1e-12);
/// ```
pub fn rotation_of(m: &DMat3) -> DQuat {
    let x = m.x_axis.normalize_or(DVec3::X);
    let y = (m.y_axis - x * x.dot(m.y_axis)).normalize_or(x.any_orthonormal_vector());
    let z = x.cross(y);
    DQuat::from_mat3(&DMat3::from_cols(x, y, z)).normalize()
}
