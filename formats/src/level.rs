//! The level: shapes, the instances that place them in the world, and a
//! top-level tree over the instances. Each shape family has its own file
//! ([`crate::tri_mesh`], …); this file holds what ties them together.
//!
//! Every type here is plain data: `[f32; 3]`, `u32`, `Vec` and `String`.
//! Builder types (index-linked trees, glam) stay in the baker; the runtime
//! converts to glam at the edge.
//!
//! # The top-level tree
//! The **top-level tree** over instances ([`TopTree`]) has the form of a
//! mesh's box tree ([`crate::tri_mesh::BoxNode`]): inner nodes of up to
//! four children whose boxes are quantised to 8 bits against the parent's
//! decoded box, in depth-first order, each leaf one instance. The walkers
//! test a node's four children at once.
//!
//! [`Node`] is the float binary node in the skip-count layout of van den
//! Bergen ("Physics for game programmers: spatial data structures", GDC
//! 2013) that the builders produce and [`crate::verify::verify_tree`]
//! checks: the left child of node `i` is `i + 1`; every node records
//! `end`, the index one past the last node of its subtree. The right child
//! of an inner node is therefore `nodes[i + 1].end`. A node is a leaf
//! exactly when `end == i + 1`.
//!
//! ```text
//!  index:  0      1      2      3      4
//!          root   L      LL     LR     R
//!  end:    5      4      3      4      5
//! ```

use crate::bsp::Bsp;
use crate::polytope::Polytope;
use crate::primitive::{Capsule, Cuboid, Sphere};
use crate::tri_mesh::TriMesh;
use rkyv::{Archive, Serialize};

/// Deepest tree a valid archive may contain. The builder guarantees it (it
/// falls back to median splits long before) and verification enforces it, so
/// traversal can use a fixed-size stack.
pub const MAX_DEPTH: usize = 128;

/// One node of a float binary tree in skip-count layout (what the
/// builders produce, before the 4-wide quantised form is stored): an
/// axis-aligned box, the end of its subtree, and a payload (`data`).
///
/// For a leaf, `data` is `first << 1 | (count - 1)`: the leaf covers
/// primitives `first..first + count` (one instance for the top-level
/// tree). For an inner node, `data` is the split
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

/// An object placed in the world: a shape and its affine transform.
///
/// Matrices are 3×4, row-major: `p' = M[..3] · p + M[3]` per row, i.e.
/// `[m00 m01 m02 t0, m10 m11 m12 t1, m20 m21 m22 t2]`.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Instance {
    /// Local (shape) space to world space.
    pub world_from_local: [f32; 12],
    /// World space to local space (the inverse of `world_from_local`).
    pub local_from_world: [f32; 12],
    /// Index into [`Level::shapes`].
    pub shape: u32,
    /// Index of this instance in the baked scene (glTF node traversal
    /// order); instances are stored in top-tree leaf order.
    pub source: u32,
}

/// If the 3×3 part of a row-major 3×4 matrix is a similarity — orthogonal
/// columns of equal length, to `tol` relative to the squared length — its
/// scale (the columns' length). The baker, verification and the runtime
/// all decide "similarity" with this one test (at different tolerances).
pub fn similarity_scale(m: &[f64; 12], tol: f64) -> Option<f64> {
    let col = |k: usize| [m[k], m[4 + k], m[8 + k]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (a, b, c) = (col(0), col(1), col(2));
    let s2 = dot(a, a);
    let t = tol * s2;
    let similar = s2 > 0.0
        && s2.is_finite()
        && (dot(b, b) - s2).abs() <= t
        && (dot(c, c) - s2).abs() <= t
        && dot(a, b).abs() <= t
        && dot(b, c).abs() <= t
        && dot(c, a).abs() <= t;
    similar.then(|| s2.sqrt())
}

/// One collision shape, in its own local space. Instances refer to shapes
/// by index, so a shape used by many objects is stored once.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub enum Shape {
    /// A triangle mesh under a tree (terrain, open or large meshes).
    TriMesh(TriMesh),
    /// A convex polytope (planes, vertices, faces).
    Polytope(Polytope),
    /// A box.
    Cuboid(Cuboid),
    /// A sphere.
    Sphere(Sphere),
    /// A capsule.
    Capsule(Capsule),
    /// A solid-leaf BSP tree (concave solids).
    Bsp(Bsp),
}

impl Shape {
    /// The shape family's name, as `inspect` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Shape::TriMesh(_) => "trimesh",
            Shape::Polytope(_) => "polytope",
            Shape::Cuboid(_) => "box",
            Shape::Sphere(_) => "sphere",
            Shape::Capsule(_) => "capsule",
            Shape::Bsp(_) => "bsp",
        }
    }
}

impl ArchivedShape {
    /// The shape family's name, as `inspect` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            ArchivedShape::TriMesh(_) => "trimesh",
            ArchivedShape::Polytope(_) => "polytope",
            ArchivedShape::Cuboid(_) => "box",
            ArchivedShape::Sphere(_) => "sphere",
            ArchivedShape::Capsule(_) => "capsule",
            ArchivedShape::Bsp(_) => "bsp",
        }
    }

    /// Whether the shape is a primitive (placed only by similarities).
    pub fn is_primitive(&self) -> bool {
        matches!(
            self,
            ArchivedShape::Cuboid(_) | ArchivedShape::Sphere(_) | ArchivedShape::Capsule(_)
        )
    }

    /// The triangle mesh, if this shape is one.
    pub fn tri_mesh(&self) -> Option<&crate::tri_mesh::ArchivedTriMesh> {
        match self {
            ArchivedShape::TriMesh(m) => Some(m),
            _ => None,
        }
    }
}

/// The layer every object no rule puts elsewhere belongs to (bit 0).
pub const DEFAULT_LAYER: &str = "default";
/// Most collision layers a level may have (a 32-bit mask).
pub const MAX_LAYERS: usize = 32;

/// A whole baked level: the archive body.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Level {
    /// Unique shapes; instances refer to them by index.
    pub shapes: Vec<Shape>,
    /// Placed objects.
    pub instances: Vec<Instance>,
    /// Name of the object (glTF node) behind each instance, parallel to `instances`.
    pub instance_names: Vec<String>,
    /// The classification rule that chose each instance's shape, in
    /// words, parallel to `instances`.
    pub instance_rules: Vec<String>,
    /// Collision layer names, bit `k` of a mask naming `layer_names[k]`;
    /// `layer_names[0]` is always [`DEFAULT_LAYER`], at most
    /// [`MAX_LAYERS`] in all.
    pub layer_names: Vec<String>,
    /// Each instance's layers as a bit mask over `layer_names` (never 0:
    /// an object no rule puts in a layer is in the default one), parallel
    /// to `instances`.
    pub instance_layers: Vec<u32>,
    /// Top-level tree over the instances' world boxes; leaves hold one instance.
    pub top: TopTree,
}

/// The top-level tree: the instances' world boxes in the 4-wide quantised
/// form of a mesh's box tree. A leaf reference is
/// [`crate::tri_mesh::LEAF_BIT`] | [`leaf_data`]`(instance, 1)`; a level of
/// one instance has a leaf for a root and no nodes; an empty level has no
/// nodes and a root that is never read.
#[derive(Archive, Serialize, Clone, Debug, PartialEq, Default)]
pub struct TopTree {
    /// Lower corner of the box around every instance.
    pub min: [f32; 3],
    /// Upper corner of the box around every instance.
    pub max: [f32; 3],
    /// The root reference: inner node 0, or a leaf.
    pub root: u32,
    /// Inner nodes in depth-first order.
    pub nodes: Vec<crate::tri_mesh::BoxNode>,
}

const _: () = {
    assert!(std::mem::size_of::<Node>() == 32);
    assert!(std::mem::size_of::<ArchivedNode>() == 32);
    assert!(std::mem::align_of::<ArchivedNode>() == 4);
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
/// carries [`crate::tri_mesh::LEAF_BIT`], and the largest payload would
/// read as [`crate::tri_mesh::EMPTY`]).
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
