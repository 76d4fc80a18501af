//! The primitive colliders, stored analytically in their local space, centred
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

impl Cuboid {
    /// The corners' numbering every tool shares: corner `i` has `+h_k` on
    /// axis `k` where bit `k` of `i` is set, `-h_k` otherwise.
    pub fn corner(half_extents: [f32; 3], i: u32) -> [f32; 3] {
        [0, 1, 2].map(|k| {
            if i & (1 << k) != 0 {
                half_extents[k]
            } else {
                -half_extents[k]
            }
        })
    }

    /// The faces as corner loops, counter-clockwise seen from outside, in
    /// plane order `+x, -x, +y, -y, +z, -z` (face `2k` faces `+axis k`).
    pub const FACES: [[u32; 4]; 6] = [
        [1, 3, 7, 5],
        [0, 4, 6, 2],
        [2, 6, 7, 3],
        [0, 1, 5, 4],
        [4, 5, 7, 6],
        [0, 2, 3, 1],
    ];
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
