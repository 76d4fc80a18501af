//! The archived types: one level holds triangle meshes (each with its own
//! tree), the instances that place them in the world, and a top-level tree
//! over the instances.
//!
//! Every type here is plain data: `[f32; 3]`, `u32`, `Vec` and `String`.
//! Builder types (index-linked trees, glam) stay in the baker; the runtime
//! converts to glam at the edge.
//!
//! # Trees
//! Trees are binary and stored in **one array in depth-first order** (the
//! skip-count layout of van den Bergen's slides): the left child of node `i`
//! is `i + 1`; every node records `end`, the index one past the last node of
//! its subtree, so a failed box test jumps to `end`. The right child of an
//! inner node is therefore `nodes[i + 1].end`. A node is a leaf exactly when
//! `end == i + 1`.
//!
//! ```text
//!  index:  0      1      2      3      4
//!          root   L      LL     LR     R
//!  end:    5      4      3      4      5
//! ```

use rkyv::{Archive, Serialize};

/// Deepest tree a valid archive may contain. The builder guarantees it (it
/// falls back to median splits long before) and verification enforces it, so
/// traversal can use a fixed-size stack.
pub const MAX_DEPTH: usize = 128;

/// Most triangles a mesh leaf may reference.
pub const MAX_LEAF_TRIANGLES: u32 = 2;

/// One node of the top-level tree: an axis-aligned box, the end of its
/// subtree, and a payload (`data`). Mesh trees use the quantised [`QNode`]
/// with the same `end` and `data`.
///
/// For a leaf, `data` is `first << 1 | (count - 1)`: the leaf covers
/// primitives `first..first + count` (one or two triangles for a mesh tree,
/// one instance for the top-level tree). For an inner node, `data` is the split
/// axis (0, 1 or 2), used to visit the nearer child first.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Node {
    /// Lower corner of the box.
    pub min: [f32; 3],
    /// Upper corner of the box.
    pub max: [f32; 3],
    /// One past the last node of this node's subtree.
    pub end: u32,
    /// Leaf primitive range or inner split axis (see the type docs).
    pub data: u32,
}

/// A mesh-tree node with its box quantised to 16 bits per coordinate
/// against the mesh's root box (see [`TriMesh::origin`]), rounded outward
/// at bake time, so the decoded box always contains the exact one. Same
/// `end`/`data` as [`Node`]; 20 bytes instead of 32.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct QNode {
    /// Quantised lower corner.
    pub min: [u16; 3],
    /// Quantised upper corner.
    pub max: [u16; 3],
    /// One past the last node of this node's subtree.
    pub end: u32,
    /// Leaf primitive range or inner split axis (as for [`Node`]).
    pub data: u32,
}

/// Decodes one quantised coordinate: `origin + q · scale`, in f32, in
/// exactly this order (the baker rounds against the same formula).
#[inline]
pub fn dequantize(origin: f32, scale: f32, q: u16) -> f32 {
    origin + f32::from(q) * scale
}

/// An object placed in the world: a mesh and its affine transform.
///
/// Matrices are 3×4, row-major: `p' = M[..3] · p + M[3]` per row, i.e.
/// `[m00 m01 m02 t0, m10 m11 m12 t1, m20 m21 m22 t2]`.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Instance {
    /// Local (mesh) space to world space.
    pub world_from_local: [f32; 12],
    /// World space to local space (the inverse of `world_from_local`).
    pub local_from_world: [f32; 12],
    /// Index into [`Level::meshes`].
    pub mesh: u32,
    /// Index of this instance in the baked scene (glTF node traversal
    /// order); instances are stored in top-tree leaf order.
    pub source: u32,
}

/// A triangle mesh with its tree (the TriTree shape).
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Name of the source mesh (may be empty).
    pub name: String,
    /// Vertex positions in mesh space.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as vertex indices, in tree-leaf order.
    pub triangles: Vec<[u32; 3]>,
    /// For each triangle, its index in the source mesh (primitives
    /// concatenated, degenerate triangles counted), so hits map back to the
    /// artist's data.
    pub source_ids: Vec<u32>,
    /// Corner the node boxes are quantised from.
    pub origin: [f32; 3],
    /// Size of one quantisation step per axis (zero on a flat axis).
    pub scale: [f32; 3],
    /// The tree, depth-first; empty when the mesh has no triangles.
    pub nodes: Vec<QNode>,
}

impl TriMesh {
    /// The decoded box of node `i`.
    pub fn node_box(&self, i: usize) -> ([f32; 3], [f32; 3]) {
        let n = &self.nodes[i];
        let d = |q: [u16; 3]| [0, 1, 2].map(|k| dequantize(self.origin[k], self.scale[k], q[k]));
        (d(n.min), d(n.max))
    }
}

/// A whole baked level: the archive body.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Level {
    /// Unique meshes; instances refer to them by index.
    pub meshes: Vec<TriMesh>,
    /// Placed objects.
    pub instances: Vec<Instance>,
    /// Name of the object (glTF node) behind each instance, parallel to `instances`.
    pub instance_names: Vec<String>,
    /// Top-level tree over the instances' world boxes; leaves hold one instance.
    pub top: Vec<Node>,
}

const _: () = {
    assert!(std::mem::size_of::<Node>() == 32);
    assert!(std::mem::size_of::<ArchivedNode>() == 32);
    assert!(std::mem::align_of::<ArchivedNode>() == 4);
    assert!(std::mem::size_of::<QNode>() == 20);
    assert!(std::mem::size_of::<ArchivedQNode>() == 20);
    assert!(std::mem::align_of::<ArchivedQNode>() == 4);
    assert!(std::mem::size_of::<Instance>() == 104);
    assert!(std::mem::size_of::<ArchivedInstance>() == 104);
    assert!(std::mem::align_of::<ArchivedLevel>() <= crate::header::BODY_ALIGN);
};

/// Encodes a leaf payload.
#[inline]
pub const fn leaf_data(first: u32, count: u32) -> u32 {
    (first << 1) | (count - 1)
}

/// Decodes a leaf payload into `(first, count)`.
#[inline]
pub const fn leaf_range(data: u32) -> (u32, u32) {
    (data >> 1, (data & 1) + 1)
}

/// Largest primitive index a leaf can encode.
pub const MAX_PRIMITIVES: u32 = u32::MAX >> 1;

/// Read access shared by [`Node`] and [`ArchivedNode`], so verification and
/// statistics are written once.
pub trait NodeView {
    /// Lower corner.
    fn min(&self) -> [f32; 3];
    /// Upper corner.
    fn max(&self) -> [f32; 3];
    /// End of the subtree.
    fn end(&self) -> u32;
    /// Payload.
    fn data(&self) -> u32;
}

impl NodeView for Node {
    #[inline]
    fn min(&self) -> [f32; 3] {
        self.min
    }
    #[inline]
    fn max(&self) -> [f32; 3] {
        self.max
    }
    #[inline]
    fn end(&self) -> u32 {
        self.end
    }
    #[inline]
    fn data(&self) -> u32 {
        self.data
    }
}

impl NodeView for ArchivedNode {
    #[inline]
    fn min(&self) -> [f32; 3] {
        self.min.map(|v| v.to_native())
    }
    #[inline]
    fn max(&self) -> [f32; 3] {
        self.max.map(|v| v.to_native())
    }
    #[inline]
    fn end(&self) -> u32 {
        self.end.to_native()
    }
    #[inline]
    fn data(&self) -> u32 {
        self.data.to_native()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_payload_round_trips() {
        for (first, count) in [(0, 1), (0, 2), (7, 1), (MAX_PRIMITIVES, 2)] {
            assert_eq!(leaf_range(leaf_data(first, count)), (first, count));
        }
    }
}
