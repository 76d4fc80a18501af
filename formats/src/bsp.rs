//! The Bsp collider: a solid-leaf BSP tree (Thibault and Naylor, "Set
//! Operations on Polyhedra Using Binary Space Partitioning Trees",
//! SIGGRAPH 1987) over a closed collider mesh, with bevel planes below its
//! solid leaves so that sphere queries by dynamic plane shifting (Melax,
//! "Dynamic Plane Shifting BSP Traversal", Graphics Interface 2000) stay
//! close to the exact answer.
//!
//! ```text
//! planes[k] = [nx, ny, nz, d]        n unit; "back" is n · x ≤ d (the solid side of a face)
//! nodes[0]  = the root
//! node      = { plane, front, back }  front: n · x > d, back: n · x ≤ d
//!                                     (plane's top bit: a bevel node)
//! child     = a node index greater than the parent's, or EMPTY, or SOLID
//! ```
//!
//! Every node but the root is the child of exactly one node and children
//! come after their parents, so the tree has no cycles and no shared
//! subtrees, and a walk visits each node at most once.
//!
//! The collider mesh the tree was built from (closed, consistently
//! oriented) is stored beside it as a [`TriMesh`] — triangles under their
//! own box tree, each triangle's id its index in the collider — and
//! answers what needs the surface exactly: closest points and sweeps. The
//! tree answers what needs inside and outside: points, rays, and shapes
//! that start inside.

use crate::tri_mesh::TriMesh;
use rkyv::{Archive, Serialize};

/// Set in [`BspNode::plane`] for a bevel node: its front child is
/// [`EMPTY`] and its plane only touches its cell, so queries without a
/// radius (points, rays) may step straight to its back child.
pub const BEVEL: u32 = 1 << 31;

/// Child reference: an empty (outside) leaf.
pub const EMPTY: u32 = u32::MAX;
/// Child reference: a solid (inside) leaf.
pub const SOLID: u32 = u32::MAX - 1;
/// Most nodes a tree may have.
pub const MAX_NODES: usize = 1 << 20;
/// Deepest a tree may be (root = 1): queries recurse once per level.
pub const MAX_DEPTH: usize = 512;

/// One inner node.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct BspNode {
    /// Index into [`Bsp::planes`], with [`BEVEL`] set on bevel nodes.
    pub plane: u32,
    /// The `n · x > d` side.
    pub front: u32,
    /// The `n · x ≤ d` side.
    pub back: u32,
}

/// A solid-leaf BSP tree in its local space.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Bsp {
    /// Planes: unit normal and offset.
    pub planes: Vec<[f32; 4]>,
    /// Nodes, the root first, every child after its parent.
    pub nodes: Vec<BspNode>,
    /// How many of the nodes are bevel planes (for reports).
    pub bevel_nodes: u32,
    /// The collider mesh, counter-clockwise seen from outside, under its
    /// own tree; source ids are triangle indices in the collider.
    pub surface: TriMesh,
}
