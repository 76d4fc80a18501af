//! The archived types: one level holds triangle meshes (each with its own
//! tree), the instances that place them in the world, and a top-level tree
//! over the instances.
//!
//! Every type here is plain data: `[f32; 3]`, `u32`, `Vec` and `String`.
//! Builder types (index-linked trees, glam) stay in the baker; the runtime
//! converts to glam at the edge.
//!
//! # Trees
//! The **top-level tree** over instances is binary and stored in one array
//! in depth-first order (the skip-count layout of van den Bergen's slides):
//! the left child of node `i` is `i + 1`; every node records `end`, the
//! index one past the last node of its subtree, so a failed box test jumps
//! to `end`. The right child of an inner node is therefore
//! `nodes[i + 1].end`. A node is a leaf exactly when `end == i + 1`.
//!
//! ```text
//!  index:  0      1      2      3      4
//!          root   L      LL     LR     R
//!  end:    5      4      3      4      5
//! ```
//!
//! **Mesh trees** are 4-wide and store only inner nodes, each holding its
//! children's bounds (quantised boxes, [`BoxNode`], or quantised spheres,
//! [`SphereNode`]) and up to four child references; a reference with
//! [`LEAF_BIT`] set names a leaf of one or two triangles instead of a
//! node. Inner nodes are in depth-first order and leaves in the order the
//! walk meets them, which verification enforces.

use rkyv::{Archive, Serialize};

/// Deepest tree a valid archive may contain. The builder guarantees it (it
/// falls back to median splits long before) and verification enforces it, so
/// traversal can use a fixed-size stack.
pub const MAX_DEPTH: usize = 128;

/// One node of the top-level tree: an axis-aligned box, the end of its
/// subtree, and a payload (`data`).
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

/// Tag of a child reference that points at a leaf (see [`BoxNode::child`]).
pub const LEAF_BIT: u32 = 1 << 31;

/// An unused child slot of a mesh-tree node. Used slots come first.
pub const EMPTY: u32 = u32::MAX;

/// Children per mesh-tree node.
pub const WIDTH: usize = 4;

/// Steps of the 8-bit child-box codes of a [`BoxNode`].
pub const BOX_STEPS: f32 = 255.0;

/// An inner node of a mesh's box tree: the boxes of up to four children,
/// quantised to 8 bits per face against this node's own decoded box, and
/// the child references. Leaves are not nodes. Inner nodes are in
/// depth-first order (the root is node 0 and a node's inner children come
/// after it). Codes are stored per axis, then per child, so a walk decodes
/// and tests all four children with one SIMD lane each.
///
/// With `step = (max - min) · (1/255)` of the node's box (see
/// [`box_step`]), child `c`'s box is `min + lo[k][c] · step ..= max -
/// hi[k][c] · step` on axis `k`: lower faces count up from the node's lower
/// face and upper faces count down from its upper face, so code 0
/// reproduces the node's faces exactly. The baker rounds outward against
/// exactly this formula.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct BoxNode {
    /// Lower-face codes, `[axis][child]`.
    pub lo: [[u8; WIDTH]; 3],
    /// Upper-face codes (steps down from the node's upper face), `[axis][child]`.
    pub hi: [[u8; WIDTH]; 3],
    /// Child references: an inner node index, [`LEAF_BIT`] | leaf payload
    /// (`leaf << 1 | (triangles - 1)`, see [`leaf_data`]), or [`EMPTY`]
    /// (only after the used slots; at least two slots are used).
    pub child: [u32; WIDTH],
}

/// An inner node of a mesh's sphere tree: the spheres of up to four
/// children, quantised to 16 bits against the mesh's [`SphereFrame`], and
/// the child references (as in [`BoxNode`]).
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SphereNode {
    /// Codes `[component][child]`, components x, y, z, radius.
    pub sphere: [[u16; WIDTH]; 4],
    /// Child references, as in [`BoxNode::child`].
    pub child: [u32; WIDTH],
}

/// Decoding frame of a mesh's sphere tree: a centre code `q` decodes to
/// `origin + q · scale` per axis and a radius code to `q · radius_scale`,
/// in f32, in exactly this order.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq, Default)]
#[repr(C)]
pub struct SphereFrame {
    /// Lowest centre.
    pub origin: [f32; 3],
    /// Centre step per axis.
    pub scale: [f32; 3],
    /// Radius step.
    pub radius_scale: f32,
    /// The root's sphere codes.
    pub root: [u16; 4],
}

/// Which kind of tree a mesh carries (`TriMesh::kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TreeKind {
    /// Axis-aligned boxes ([`BoxNode`]).
    #[default]
    Aabb,
    /// Spheres ([`SphereNode`]).
    Sphere,
}

impl TreeKind {
    /// The stored tag.
    pub const fn tag(self) -> u32 {
        match self {
            TreeKind::Aabb => 0,
            TreeKind::Sphere => 1,
        }
    }
    /// The kind of a stored tag.
    pub const fn from_tag(tag: u32) -> Option<TreeKind> {
        match tag {
            0 => Some(TreeKind::Aabb),
            1 => Some(TreeKind::Sphere),
            _ => None,
        }
    }
    /// The name the command line uses.
    pub const fn name(self) -> &'static str {
        match self {
            TreeKind::Aabb => "aabb",
            TreeKind::Sphere => "sphere",
        }
    }
}

/// The decode step of a parent box `min..=max` for its children's codes.
#[inline]
pub fn box_step(min: f32, max: f32) -> f32 {
    (max - min) * (1.0 / BOX_STEPS)
}

/// A child's decoded lower face: `parent_min + q · step`.
#[inline]
pub fn decode_lo(parent_min: f32, step: f32, q: u8) -> f32 {
    parent_min + f32::from(q) * step
}

/// A child's decoded upper face: `parent_max - q · step`.
#[inline]
pub fn decode_hi(parent_max: f32, step: f32, q: u8) -> f32 {
    parent_max - f32::from(q) * step
}

/// Decodes one 16-bit coordinate: `origin + q · scale`, in f32, in
/// exactly this order (the baker rounds against the same formula).
#[inline]
pub fn dequantize(origin: f32, scale: f32, q: u16) -> f32 {
    origin + f32::from(q) * scale
}

impl SphereFrame {
    /// Decodes sphere codes to `(centre, radius)`.
    pub fn decode(&self, q: [u16; 4]) -> ([f32; 3], f32) {
        (
            [0, 1, 2].map(|k| dequantize(self.origin[k], self.scale[k], q[k])),
            f32::from(q[3]) * self.radius_scale,
        )
    }
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
///
/// Triangles are stored as **leaves**: pairs of triangles that share an
/// edge, as four vertex indices `[a, b, c, d]` meaning the triangles
/// `(a, b, c)` and `(c, b, d)` (both keep the source winding); a leaf with
/// one triangle repeats `c` as `d`. Leaves are in tree order.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Name of the source mesh (may be empty).
    pub name: String,
    /// Vertex positions in mesh space.
    pub vertices: Vec<[f32; 3]>,
    /// Leaves: one or two triangles as four vertex indices (see above).
    pub leaves: Vec<[u32; 4]>,
    /// For each leaf, the source-mesh index (primitives concatenated,
    /// degenerate triangles counted) of its first and second triangle, so
    /// hits map back to the artist's data; `u32::MAX` for a missing second.
    pub source_ids: Vec<[u32; 2]>,
    /// Lower corner of the mesh's exact box (the root box).
    pub min: [f32; 3],
    /// Upper corner of the mesh's exact box.
    pub max: [f32; 3],
    /// The root: inner node 0, or [`LEAF_BIT`] | payload when the mesh is
    /// one leaf. Unused when there are no leaves.
    pub root: u32,
    /// [`TreeKind`] tag: which of `boxes` / `spheres` holds the tree.
    pub kind: u32,
    /// Box-tree inner nodes (kind [`TreeKind::Aabb`]), depth-first.
    pub boxes: Vec<BoxNode>,
    /// Sphere-tree decoding frame (kind [`TreeKind::Sphere`]).
    pub sphere_frame: SphereFrame,
    /// Sphere-tree inner nodes (kind [`TreeKind::Sphere`]), depth-first.
    pub spheres: Vec<SphereNode>,
}

impl TriMesh {
    /// Number of triangles stored.
    pub fn triangle_count(&self) -> usize {
        self.source_ids
            .iter()
            .map(|s| if s[1] == u32::MAX { 1 } else { 2 })
            .sum()
    }

    /// Every stored triangle as vertex indices, with its source id, in leaf order.
    pub fn triangles(&self) -> impl Iterator<Item = ([u32; 3], u32)> + '_ {
        self.leaves.iter().zip(&self.source_ids).flat_map(|(q, s)| {
            let second = (s[1] != u32::MAX).then_some((leaf_triangle(*q, 1), s[1]));
            std::iter::once((leaf_triangle(*q, 0), s[0])).chain(second)
        })
    }
}

impl ArchivedTriMesh {
    /// Number of triangles stored.
    pub fn triangle_count(&self) -> usize {
        self.source_ids
            .iter()
            .map(|s| if s[1].to_native() == u32::MAX { 1 } else { 2 })
            .sum()
    }

    /// Every stored triangle as vertex indices, with its source id, in leaf order.
    pub fn triangles(&self) -> impl Iterator<Item = ([u32; 3], u32)> + '_ {
        self.leaves
            .iter()
            .zip(self.source_ids.iter())
            .flat_map(|(q, s)| {
                let q = q.map(|v| v.to_native());
                let s = s.map(|v| v.to_native());
                let second = (s[1] != u32::MAX).then_some((leaf_triangle(q, 1), s[1]));
                std::iter::once((leaf_triangle(q, 0), s[0])).chain(second)
            })
    }
}

/// Triangle `k` (0 or 1) of a leaf `[a, b, c, d]`.
#[inline]
pub const fn leaf_triangle(q: [u32; 4], k: u32) -> [u32; 3] {
    if k == 0 {
        [q[0], q[1], q[2]]
    } else {
        [q[2], q[1], q[3]]
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
    assert!(std::mem::size_of::<BoxNode>() == 40);
    assert!(std::mem::size_of::<ArchivedBoxNode>() == 40);
    assert!(std::mem::align_of::<ArchivedBoxNode>() == 4);
    assert!(std::mem::size_of::<ArchivedSphereNode>() == 48);
    assert!(std::mem::align_of::<ArchivedSphereNode>() == 4);
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

/// Largest primitive index a leaf can encode (a mesh leaf payload also
/// carries [`LEAF_BIT`], and the largest payload would read as [`EMPTY`]).
pub const MAX_PRIMITIVES: u32 = (u32::MAX >> 2) - 1;

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
