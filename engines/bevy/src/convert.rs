//! Bevy's transforms as the runtime's poses. Bevy's math types are the
//! runtime's (one glam version across the workspace), so vectors and
//! rotations pass as they are.

use bevy::math::{Quat, Vec3};
use bevy::transform::components::GlobalTransform;
use kiln_runtime as k;

/// The rigid part of a global transform (its scale is not a body's: a
/// body is placed by rotation and translation alone).
pub(crate) fn pose_of(t: &GlobalTransform) -> k::Pose {
    let (_, rotation, translation) = t.to_scale_rotation_translation();
    k::Pose::new(rotation.normalize(), translation)
}

/// A pose from a Bevy rotation and translation.
pub(crate) fn pose(rotation: Quat, translation: Vec3) -> k::Pose {
    k::Pose::new(rotation, translation)
}
