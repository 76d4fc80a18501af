//! The Polytope shape: a convex solid as the planes bounding it, its
//! vertices (support mapping, closest points) and its faces as vertex
//! loops (face `k` lies in plane `k`).
//!
//! ```text
//! planes[k] = [nx, ny, nz, d]     inside: n · x ≤ d   (n unit, outward)
//! face k    = vertices[face_vertices[face_starts[k] .. face_starts[k + 1]]]
//!             counter-clockwise seen from outside
//! face_twins[i] = the face across the edge from face_vertices[i] to the
//!             next vertex of its loop (NO_TWIN: none)
//! ```

use rkyv::{Archive, Serialize};

/// Most planes (and faces) a polytope may have.
pub const MAX_PLANES: usize = 256;

/// Most vertices a polytope may have (a convex polytope with `P` faces has
/// at most `2P - 4` vertices).
pub const MAX_VERTICES: usize = 2 * MAX_PLANES;

/// `face_twins` entry of an edge with no face across it (a polytope that
/// is not closed).
pub const NO_TWIN: u16 = u16::MAX;
/// How far a vertex may lie outside a plane, relative to the polytope's
/// size (the largest absolute coordinate of its box, at least 1): f32
/// rounding of planes and vertices computed in f64.
pub const PLANE_TOLERANCE: f32 = 1e-4;

/// A convex polytope in its local space.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Polytope {
    /// Face planes: unit outward normal and offset, `n · x ≤ d` inside.
    pub planes: Vec<[f32; 4]>,
    /// Vertices.
    pub vertices: Vec<[f32; 3]>,
    /// Start of each face's loop in `face_vertices`, one more entry than
    /// there are faces (the last is `face_vertices.len()`).
    pub face_starts: Vec<u32>,
    /// Face loops: vertex indices, counter-clockwise seen from outside.
    pub face_vertices: Vec<u32>,
    /// For each loop entry, the face across the edge that starts there
    /// (from that vertex to the next of the loop), or [`NO_TWIN`]: the
    /// edges' two faces, so queries walk the edges and their Gauss map
    /// without searching.
    pub face_twins: Vec<u16>,
    /// Lower corner of the vertices' box.
    pub min: [f32; 3],
    /// Upper corner of the vertices' box.
    pub max: [f32; 3],
}

impl ArchivedPolytope {
    /// The vertex loop of face `k` (verified: in range).
    #[inline]
    pub fn face(&self, k: usize) -> &[rkyv::rend::u32_le] {
        let a = self.face_starts[k].to_native() as usize;
        let b = self.face_starts[k + 1].to_native() as usize;
        &self.face_vertices[a..b]
    }

    /// The faces across the edges of face `k`'s loop, entry for entry
    /// (verified: as long as the loop, each in range or [`NO_TWIN`]).
    #[inline]
    pub fn twins(&self, k: usize) -> &[rkyv::rend::u16_le] {
        let a = self.face_starts[k].to_native() as usize;
        let b = self.face_starts[k + 1].to_native() as usize;
        &self.face_twins[a..b]
    }
}
