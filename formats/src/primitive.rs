//! The primitive shapes, stored analytically in their local space, centred
//! on the origin. An instance places them (its transform carries the fit's
//! centre and orientation); primitives are only placed by similarity
//! transforms (rotation, uniform scale, translation), which verification
//! checks, so a sphere stays a sphere in the world.

use rkyv::{Archive, Serialize};

/// A box, centred on the origin, along the local axes.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Cuboid {
    /// Half the size along each local axis (> 0).
    pub half_extents: [f32; 3],
}

/// A sphere centred on the origin.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Sphere {
    /// Radius (> 0).
    pub radius: f32,
}

/// A capsule: the points within `radius` of the segment from
/// `(0, -half_height, 0)` to `(0, half_height, 0)`.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Capsule {
    /// Half the length of the inner segment (≥ 0).
    pub half_height: f32,
    /// Radius (> 0).
    pub radius: f32,
}

const _: () = {
    assert!(std::mem::size_of::<ArchivedCuboid>() == 12);
    assert!(std::mem::size_of::<ArchivedSphere>() == 4);
    assert!(std::mem::size_of::<ArchivedCapsule>() == 8);
};
