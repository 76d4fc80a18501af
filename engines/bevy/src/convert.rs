//! Bevy's math types and the runtime's: the same glam types of two glam
//! versions, converted component by component.

use bevy::math::{Quat, Vec3};
use bevy::transform::components::GlobalTransform;
use kiln_runtime as k;

/// A Bevy vector as the runtime's.
pub(crate) fn vec_in(v: Vec3) -> k::Vec3 {
    k::Vec3::from_array(v.to_array())
}

/// A runtime vector as Bevy's.
pub(crate) fn vec_out(v: k::Vec3) -> Vec3 {
    Vec3::from_array(v.to_array())
}

/// A Bevy rotation as the runtime's.
pub(crate) fn quat_in(q: Quat) -> k::Quat {
    k::Quat::from_array(q.to_array())
}

/// A runtime rotation as Bevy's.
pub(crate) fn quat_out(q: k::Quat) -> Quat {
    Quat::from_array(q.to_array())
}

/// The rigid part of a global transform (its scale is not a body's: a
/// body is placed by rotation and translation alone).
pub(crate) fn pose_of(t: &GlobalTransform) -> k::Pose {
    let (_, rotation, translation) = t.to_scale_rotation_translation();
    k::Pose::new(quat_in(rotation.normalize()), vec_in(translation))
}

/// A pose from a Bevy rotation and translation.
pub(crate) fn pose(rotation: Quat, translation: Vec3) -> k::Pose {
    k::Pose::new(quat_in(rotation), vec_in(translation))
}
