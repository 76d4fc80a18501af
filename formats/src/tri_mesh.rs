//! The TriMesh collider: a triangle mesh under a wide tree (terrain, and
//! any mesh that is neither convex nor a primitive).
//!
//! Triangles are stored as **leaves** of one or two triangles that share
//! an edge, as 12-byte quads ([`Leaf`]) that carry their first source
//! id. The tree stores inner nodes only, each holding its children's
//! bounds (up to eight quantised boxes, [`WideNode`], or four quantised
//! spheres, [`SphereNode`]) and two [`Links`] words: a node's inner children are
//! consecutive nodes and its leaf children consecutive leaves, so a node
//! names only the first of each and which slots hold leaves. Nodes are in
//! breadth-first order (each node's children follow those of the node
//! before it) and leaves in the order their parents list them, which
//! verification checks in one pass.

use crate::vertices::{Vertices, dequantize};
use rkyv::{Archive, Serialize};

/// Tag of a child reference that names a leaf rather than an inner node
/// (the references walks pass around; see [`Links::child`]).
pub const LEAF_BIT: u32 = 1 << 31;

/// Children per node of a 4-wide tree: sphere trees and the top-level tree.
pub const WIDTH: usize = 4;

/// Most inner nodes a tree can index ([`Links`] keeps 28 bits for a node
/// index).
pub const MAX_NODES: usize = 1 << 28;

/// Most leaves a tree can index ([`Links`] keeps 30 bits for a leaf index).
pub const MAX_LEAVES: usize = 1 << 30;

/// Where a node's children are: `used` slots (2 to 4) in slot order, slot
/// `c` a leaf when bit `c` of `leaf_mask` is set, else an inner node. The
/// inner children are nodes `first_node`, `first_node + 1`, … in slot
/// order and the leaves `first_leaf`, `first_leaf + 1`, … likewise.
///
/// Stored as two words (`[BoxNode::links]`): `first_node << 4 |
/// leaf_mask` and `first_leaf << 2 | (used - 1)`. A node with no inner
/// (or no leaf) children still stores where they would start: the count
/// of those numbered before it, which is what verification checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Links {
    /// Index of the first inner child (or where it would be).
    pub first_node: u32,
    /// Index of the first leaf child (or where it would be).
    pub first_leaf: u32,
    /// Bit `c`: slot `c` holds a leaf.
    pub leaf_mask: u32,
    /// Used slots; stored as 2 bits, so an unchecked word may say 1.
    pub used: u32,
}

impl Links {
    /// Unpacks the two stored words.
    #[inline(always)]
    pub const fn unpack(w: [u32; 2]) -> Links {
        Links {
            first_node: w[0] >> 4,
            first_leaf: w[1] >> 2,
            leaf_mask: w[0] & 0xf,
            used: (w[1] & 3) + 1,
        }
    }

    /// Packs into the two stored words; `None` when an index or count is
    /// out of range (see [`MAX_NODES`], [`MAX_LEAVES`]) or a leaf bit
    /// names an unused slot.
    pub fn pack(self) -> Option<[u32; 2]> {
        let ok = (self.first_node as usize) < MAX_NODES
            && (self.first_leaf as usize) < MAX_LEAVES
            && (2..=WIDTH as u32).contains(&self.used)
            && self.leaf_mask >> self.used == 0;
        ok.then(|| {
            [
                self.first_node << 4 | self.leaf_mask,
                self.first_leaf << 2 | (self.used - 1),
            ]
        })
    }

    /// Unpacks the two stored words of a [`WideNode`]: `first_node << 8 |
    /// leaf_mask` and `first_leaf << 3 | (used - 1)`.
    #[inline(always)]
    pub const fn unpack_wide(w: [u32; 2]) -> Links {
        Links {
            first_node: w[0] >> 8,
            first_leaf: w[1] >> 3,
            leaf_mask: w[0] & 0xff,
            used: (w[1] & 7) + 1,
        }
    }

    /// Packs into a [`WideNode`]'s two words; `None` when an index or
    /// count is out of range (see [`MAX_WIDE_NODES`], [`MAX_WIDE_LEAVES`])
    /// or a leaf bit names an unused slot.
    pub fn pack_wide(self) -> Option<[u32; 2]> {
        let ok = (self.first_node as usize) < MAX_WIDE_NODES
            && (self.first_leaf as usize) < MAX_WIDE_LEAVES
            && (2..=WIDE as u32).contains(&self.used)
            && self.leaf_mask >> self.used == 0;
        ok.then(|| {
            [
                self.first_node << 8 | self.leaf_mask,
                self.first_leaf << 3 | (self.used - 1),
            ]
        })
    }

    /// Leaf children.
    #[inline(always)]
    pub const fn leaves(&self) -> u32 {
        self.leaf_mask.count_ones()
    }

    /// Inner children (wraps for an unchecked word whose leaf bits name
    /// unused slots; verification refuses those).
    #[inline(always)]
    pub const fn inner(&self) -> u32 {
        self.used.wrapping_sub(self.leaf_mask.count_ones())
    }

    /// The reference of slot `c` (below `used`): [`LEAF_BIT`] | leaf
    /// index, or an inner node index.
    #[inline(always)]
    pub const fn child(&self, c: usize) -> u32 {
        let before = (self.leaf_mask & ((1 << c) - 1)).count_ones();
        if self.leaf_mask >> c & 1 != 0 {
            LEAF_BIT | self.first_leaf.wrapping_add(before)
        } else {
            self.first_node.wrapping_add(c as u32 - before)
        }
    }
}

/// Steps of the 8-bit child-box codes of a [`BoxNode`].
pub const BOX_STEPS: f32 = 255.0;

/// An inner node of a 4-wide box tree (a large level's top-level tree,
/// [`crate::level::TopNodes`]): the boxes of up to four children,
/// quantised to 8 bits per face against this node's own decoded box, and
/// where the children are ([`Links`]). Leaves are not nodes. Inner nodes
/// are in breadth-first order (the root is node 0). Codes are stored per
/// axis, then per child, so a walk decodes and tests all four children
/// with one SIMD lane each. 32 bytes.
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
    /// The children, packed (see [`Links`]).
    pub links: [u32; 2],
}

/// Children per node of a mesh's box tree ([`WideNode`]).
pub const WIDE: usize = 8;

/// Most inner nodes a box tree of [`WideNode`]s can index (its links keep
/// 24 bits for a node index).
pub const MAX_WIDE_NODES: usize = 1 << 24;

/// Most leaves a box tree of [`WideNode`]s can index (its links keep 29
/// bits for a leaf index).
pub const MAX_WIDE_LEAVES: usize = 1 << 29;

/// An inner node of a mesh's box tree: its own exact box, the boxes of up
/// to eight children quantised to 8 bits per face against that box, and
/// where the children are ([`Links`], packed as [`Links::pack_wide`]).
/// Leaves are not nodes; inner nodes are in breadth-first order (the root
/// is node 0).
///
/// The node carries its own frame (a "self-framed" node), so a walk needs
/// nothing from the node's parent to decode it: its stack holds a
/// reference and a distance, not a box. Child `c`'s box on axis `k` is
/// `min + lo[k][c] · step ..= max - hi[k][c] · step` with `step =
/// box_step(min[k], max[k])` ([`decode_lo`], [`decode_hi`]), as in
/// [`BoxNode`]; the baker rounds outward against exactly that. Codes are
/// stored per axis, then per child, so a walk decodes and tests all eight
/// children with one SIMD lane each (the wide trees of Ylitie, Karras and
/// Laine, "Efficient Incoherent Ray Traversal on GPUs Through Compressed
/// Wide BVHs", HPG 2017, whose nodes also carry their own frame). 80
/// bytes.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct WideNode {
    /// The node's lower corner (the exact box of everything under it).
    pub min: [f32; 3],
    /// The node's upper corner.
    pub max: [f32; 3],
    /// Lower-face codes, `[axis][child]`.
    pub lo: [[u8; WIDE]; 3],
    /// Upper-face codes (steps down from the node's upper face), `[axis][child]`.
    pub hi: [[u8; WIDE]; 3],
    /// The children, packed (see [`Links::pack_wide`]).
    pub links: [u32; 2],
}

impl ArchivedWideNode {
    /// Where this node's children are.
    #[inline(always)]
    pub fn links(&self) -> Links {
        Links::unpack_wide(self.links.map(|w| w.to_native()))
    }
}

/// An inner node of a mesh's sphere tree: the spheres of up to four
/// children, quantised to 16 bits against the mesh's [`SphereFrame`], and
/// where the children are (as in [`BoxNode`]). 40 bytes.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SphereNode {
    /// Codes `[component][child]`, components x, y, z, radius.
    pub sphere: [[u16; WIDTH]; 4],
    /// The children, packed (see [`Links`]).
    pub links: [u32; 2],
}

impl ArchivedBoxNode {
    /// Where this node's children are.
    #[inline(always)]
    pub fn links(&self) -> Links {
        Links::unpack(self.links.map(|w| w.to_native()))
    }
}

/// An inner node of a box tree whose children's boxes are plain f32
/// corners (exact, nothing to decode), and where the children are (as in
/// [`BoxNode`]). Stored per axis, then per child, as [`BoxNode`]'s codes
/// are. 104 bytes, against 32 for the quantised node: the form for trees
/// small enough to live in a core's caches, where a walk that needs no
/// parent box to read a node is faster (the top-level tree of a level of
/// up to a few thousand objects, see [`crate::level::TopTree`]). Slots
/// past the node's used ones hold zeros and are never read.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct FloatBoxNode {
    /// Lower corners, `[axis][child]`.
    pub lo: [[f32; WIDTH]; 3],
    /// Upper corners, `[axis][child]`.
    pub hi: [[f32; WIDTH]; 3],
    /// The children, packed (see [`Links`]).
    pub links: [u32; 2],
}

impl ArchivedFloatBoxNode {
    /// Where this node's children are.
    #[inline(always)]
    pub fn links(&self) -> Links {
        Links::unpack(self.links.map(|w| w.to_native()))
    }
}

impl ArchivedSphereNode {
    /// Where this node's children are.
    #[inline(always)]
    pub fn links(&self) -> Links {
        Links::unpack(self.links.map(|w| w.to_native()))
    }
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

/// Which kind of bounding volumes a mesh tree uses (a bake setting; the
/// archive says it per mesh through [`MeshTree`]'s variant). Boxes are the
/// default: on the same partition, sphere trees measured slower for every
/// query kind on terrain and on dense indoor levels (BENCHMARKS.md), as a
/// sphere around a flat two-triangle quad encloses far more space than its
/// box; spheres stay for measuring and for content where they might win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TreeKind {
    /// Axis-aligned boxes ([`WideNode`]).
    #[default]
    Aabb,
    /// Spheres ([`SphereNode`]).
    Sphere,
}

impl TreeKind {
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

impl SphereFrame {
    /// Decodes sphere codes to `(centre, radius)`.
    pub fn decode(&self, q: [u16; 4]) -> ([f32; 3], f32) {
        (
            [0, 1, 2].map(|k| dequantize(self.origin[k], self.scale[k], q[k])),
            f32::from(q[3]) * self.radius_scale,
        )
    }
}

/// A mesh's tree: inner nodes holding their children's quantised boxes
/// (8-wide) or spheres (4-wide), in breadth-first order (the root is node
/// 0).
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub enum MeshTree {
    /// Box nodes, each decoded against its own stored box.
    Boxes(Vec<WideNode>),
    /// Sphere nodes with their decoding frame.
    Spheres(SphereTree),
}

/// A sphere tree: inner nodes and the frame their codes decode against.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct SphereTree {
    /// Decoding frame (and the root sphere).
    pub frame: SphereFrame,
    /// Inner nodes, breadth-first.
    pub nodes: Vec<SphereNode>,
}

impl MeshTree {
    /// Which kind of volumes this tree uses.
    pub fn kind(&self) -> TreeKind {
        match self {
            MeshTree::Boxes(_) => TreeKind::Aabb,
            MeshTree::Spheres(_) => TreeKind::Sphere,
        }
    }
    /// Number of inner nodes.
    pub fn len(&self) -> usize {
        match self {
            MeshTree::Boxes(n) => n.len(),
            MeshTree::Spheres(t) => t.nodes.len(),
        }
    }
    /// Whether the tree has no inner nodes (zero or one leaf).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ArchivedMeshTree {
    /// Which kind of volumes this tree uses.
    pub fn kind(&self) -> TreeKind {
        match self {
            ArchivedMeshTree::Boxes(_) => TreeKind::Aabb,
            ArchivedMeshTree::Spheres(_) => TreeKind::Sphere,
        }
    }
    /// Number of inner nodes.
    pub fn len(&self) -> usize {
        match self {
            ArchivedMeshTree::Boxes(n) => n.len(),
            ArchivedMeshTree::Spheres(t) => t.nodes.len(),
        }
    }
    /// Whether the tree has no inner nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of inner nodes.
    pub fn node_bytes(&self) -> usize {
        match self {
            ArchivedMeshTree::Boxes(n) => n.len() * std::mem::size_of::<ArchivedWideNode>(),
            ArchivedMeshTree::Spheres(t) => {
                t.nodes.len() * std::mem::size_of::<ArchivedSphereNode>()
            }
        }
    }
}

/// Leaves per entry of [`TriMesh::bases`]: leaf `l` takes its vertex and
/// source-id bases from entry `l / LEAF_CHUNK`.
pub const LEAF_CHUNK: usize = 32;

/// One stored leaf: one or two triangles sharing an edge, as the four
/// corners `[a, b, c, d]` of a quad meaning the triangles `(a, b, c)` and
/// `(c, b, d)` (both keep the source winding); a leaf with one triangle
/// repeats `c` as `d` (a stored pair never does: `(c, b, c)` would be
/// degenerate, and degenerate triangles are not stored).
///
/// 12 bytes, the source id of its first triangle included: corner `a`
/// and that id as 16-bit offsets from the bases of the leaf's run of
/// [`LEAF_CHUNK`] leaves ([`TriMesh::bases`]), the other three corners as
/// signed 16-bit offsets from `a`. A mesh's vertices are numbered so a
/// leaf's corners lie close together (welding numbers them by first use);
/// the baker gives a leaf whose corners are further apart copies of its
/// vertices at the end of the vertex list. A corner `a` or a first id
/// outside its run's 16-bit window is listed instead ([`A_LISTED`],
/// [`ID_LISTED`]).
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Leaf {
    /// Vertex index of corner `a` minus its run's vertex base; zero for a
    /// leaf flagged [`A_LISTED`].
    pub a: u16,
    /// Corners `b`, `c`, `d` as `a + offset`.
    pub offset: [i16; 3],
    /// Source id of the first triangle minus its run's id base; zero for a
    /// leaf flagged [`ID_LISTED`].
    pub id: u16,
    /// Bits 0–5: the **flat edges** — bit `3·j + k` is set when edge `k`
    /// (from corner `k` to corner `k + 1`) of the leaf's triangle `j` (see
    /// [`leaf_triangle`]) joins a neighbour that continues it in the same
    /// plane (within [`FLAT_EDGE_ANGLE`]), so the edge and its ends are
    /// inside a flat region, not a real edge of the surface: a contact
    /// there takes the face's normal (no ghost bumps on tessellated
    /// floors). Bit 6: [`A_LISTED`]. Bit 7: [`ID_LISTED`].
    pub bits: u8,
    /// For a pair, the second triangle's source id minus the first's
    /// (1–255), or zero when the second id is listed in
    /// [`TriMesh::second_ids`]; zero for a lone triangle.
    pub delta: u8,
}

/// [`Leaf::bits`] flag: corner `a` is listed in
/// [`TriMesh::listed_corners`] rather than offset from the run's base.
pub const A_LISTED: u8 = 1 << 6;

/// [`Leaf::bits`] flag: the first source id is listed in
/// [`TriMesh::listed_ids`] rather than offset from the run's base.
pub const ID_LISTED: u8 = 1 << 7;

/// The flat-edge bits of [`Leaf::bits`].
pub const FLAT_BITS: u8 = 0x3f;

impl Leaf {
    /// The leaf with corners `q`, flat-edge mask `flat` (bits 0–5) and
    /// second-id `delta` (zero: listed, or a lone triangle), its corner
    /// `a` and first id not placed yet (zero offsets, neither flag set);
    /// `None` when a corner is more than an `i16` away from `a`.
    pub fn new(q: [u32; 4], flat: u8, delta: u8) -> Option<Leaf> {
        let off = |v: u32| i16::try_from(i64::from(v) - i64::from(q[0])).ok();
        Some(Leaf {
            a: 0,
            offset: [off(q[1])?, off(q[2])?, off(q[3])?],
            id: 0,
            bits: flat & FLAT_BITS,
            delta,
        })
    }
}

/// What a leaf says of itself, the same for the native and the archived
/// form: the rules readers and verification share.
macro_rules! leaf_rules {
    ($leaf:ty) => {
        impl $leaf {
            /// Whether the leaf holds two triangles (`d ≠ c`).
            #[inline]
            pub fn is_pair(&self) -> bool {
                self.offset[2] != self.offset[1]
            }

            /// Whether corner `a` is listed ([`A_LISTED`]).
            #[inline]
            pub fn a_listed(&self) -> bool {
                self.bits & A_LISTED != 0
            }

            /// Whether the first source id is listed ([`ID_LISTED`]).
            #[inline]
            pub fn id_listed(&self) -> bool {
                self.bits & ID_LISTED != 0
            }

            /// Whether the second source id is listed: a pair with a zero
            /// delta.
            #[inline]
            pub fn second_listed(&self) -> bool {
                self.is_pair() & (self.delta == 0)
            }
        }
    };
}

leaf_rules!(Leaf);
leaf_rules!(ArchivedLeaf);

/// A leaf's corners from corner `a` and the others' offsets.
#[inline(always)]
fn corners(a: u32, offset: [i16; 3]) -> [u32; 4] {
    let at = |o: i16| a.wrapping_add_signed(i32::from(o));
    [a, at(offset[0]), at(offset[1]), at(offset[2])]
}

/// A leaf's corner `a` or first id: `base + offset`, or when `listed` is
/// set the value its table lists (a value missing from a damaged table
/// answers the base rather than panic).
#[inline(always)]
fn placed(base: u32, offset: u16, listed: bool, table: impl FnOnce() -> Option<u32>) -> u32 {
    if listed {
        table().unwrap_or(base)
    } else {
        base.wrapping_add(u32::from(offset))
    }
}

/// The value a `[leaf, value]` table sorted by leaf lists for `leaf`.
#[inline]
fn lookup<E>(table: &[E], leaf: usize, entry: impl Fn(&E) -> [u32; 2]) -> Option<u32> {
    let at = table.partition_point(|e| (entry(e)[0] as usize) < leaf);
    let e = entry(table.get(at)?);
    (e[0] as usize == leaf).then_some(e[1])
}

/// A triangle mesh with its tree (the TriMesh collider).
///
/// Triangles are stored as [`Leaf`]s in tree order. Each run of
/// [`LEAF_CHUNK`] leaves shares a vertex base and a source-id base
/// ([`TriMesh::bases`]); a leaf stores its corner `a` and its first
/// triangle's source id as 16-bit offsets from them, or lists them when
/// they fall outside. The second triangle's id is the first's plus the
/// leaf's [`Leaf::delta`], or listed when the delta is zero.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Name of the source mesh (may be empty).
    pub name: String,
    /// Vertex positions in mesh space, each axis as f32 or exactly on a
    /// 16-bit grid.
    pub vertices: Vertices,
    /// Leaves: one or two triangles each (see [`Leaf`]).
    pub leaves: Vec<Leaf>,
    /// `[vertex base, source-id base]` of each run of [`LEAF_CHUNK`]
    /// leaves (the last run may be shorter): one entry per run.
    pub bases: Vec<[u32; 2]>,
    /// `[leaf, vertex]`, by ascending leaf: corner `a` of each leaf
    /// flagged [`A_LISTED`] (exactly those).
    pub listed_corners: Vec<[u32; 2]>,
    /// `[leaf, id]`, by ascending leaf: the first triangle's source id of
    /// each leaf flagged [`ID_LISTED`] (exactly those). Source ids are
    /// source-mesh indices (primitives concatenated, degenerate triangles
    /// counted), so hits map back to the artist's data.
    pub listed_ids: Vec<[u32; 2]>,
    /// `[leaf, id]`, by ascending leaf: the second triangle's source id of
    /// each pair whose [`Leaf::delta`] is zero (exactly those).
    pub second_ids: Vec<[u32; 2]>,
    /// Lower corner of the mesh's exact box (the root box).
    pub min: [f32; 3],
    /// Upper corner of the mesh's exact box.
    pub max: [f32; 3],
    /// The root: inner node 0, or [`LEAF_BIT`] (leaf 0) when the mesh is
    /// one leaf. Unused when there are no leaves.
    pub root: u32,
    /// The tree's inner nodes, boxes or spheres.
    pub tree: MeshTree,
}

impl TriMesh {
    /// Number of triangles stored.
    pub fn triangle_count(&self) -> usize {
        self.leaves
            .iter()
            .map(|l| 1 + usize::from(l.is_pair()))
            .sum()
    }

    /// The corners `[a, b, c, d]` of leaf `leaf` (in range).
    pub fn corners(&self, leaf: usize) -> [u32; 4] {
        let l = &self.leaves[leaf];
        let base = self.bases[leaf / LEAF_CHUNK][0];
        let a = placed(base, l.a, l.a_listed(), || {
            lookup(&self.listed_corners, leaf, |e| *e)
        });
        corners(a, l.offset)
    }

    /// The source id of triangle `k` (0 or 1) of leaf `leaf` (in range).
    pub fn source_id(&self, leaf: usize, k: u32) -> u32 {
        let l = &self.leaves[leaf];
        let base = self.bases[leaf / LEAF_CHUNK][1];
        let first = placed(base, l.id, l.id_listed(), || {
            lookup(&self.listed_ids, leaf, |e| *e)
        });
        match (k, l.delta) {
            (0, _) => first,
            (_, 0) => lookup(&self.second_ids, leaf, |e| *e).unwrap_or(first),
            (_, d) => first.wrapping_add(u32::from(d)),
        }
    }

    /// Every stored triangle as vertex indices, with its source id, in leaf order.
    pub fn triangles(&self) -> impl Iterator<Item = ([u32; 3], u32)> + '_ {
        self.leaves.iter().enumerate().flat_map(|(l, leaf)| {
            let q = self.corners(l);
            let second = leaf
                .is_pair()
                .then(|| (leaf_triangle(q, 1), self.source_id(l, 1)));
            std::iter::once((leaf_triangle(q, 0), self.source_id(l, 0))).chain(second)
        })
    }
}

impl ArchivedTriMesh {
    /// Number of triangles stored.
    pub fn triangle_count(&self) -> usize {
        self.leaves
            .iter()
            .map(|l| 1 + usize::from(l.is_pair()))
            .sum()
    }

    /// The corners `[a, b, c, d]` of leaf `leaf` (in range; in the vertex
    /// list once the mesh is verified). A listed corner is found by binary
    /// search, for the few leaves whose run could not place it.
    #[inline(always)]
    pub fn corners(&self, leaf: usize) -> [u32; 4] {
        let l = &self.leaves[leaf];
        let base = self.bases[leaf / LEAF_CHUNK][0].to_native();
        let a = placed(base, l.a.to_native(), l.a_listed(), || {
            lookup(&self.listed_corners, leaf, |e| e.map(|v| v.to_native()))
        });
        corners(a, l.offset.map(|o| o.to_native()))
    }

    /// The source id of triangle `k` (0 or 1) of leaf `leaf` (in range).
    /// A listed id is found by binary search: this runs once per answer,
    /// not per triangle tested.
    #[inline]
    pub fn source_id(&self, leaf: usize, k: u32) -> u32 {
        let l = &self.leaves[leaf];
        let base = self.bases[leaf / LEAF_CHUNK][1].to_native();
        let first = placed(base, l.id.to_native(), l.id_listed(), || {
            lookup(&self.listed_ids, leaf, |e| e.map(|v| v.to_native()))
        });
        match (k, l.delta) {
            (0, _) => first,
            (_, 0) => lookup(&self.second_ids, leaf, |e| e.map(|v| v.to_native())).unwrap_or(first),
            (_, d) => first.wrapping_add(u32::from(d)),
        }
    }

    /// Every stored triangle as vertex indices, with its source id, in leaf order.
    pub fn triangles(&self) -> impl Iterator<Item = ([u32; 3], u32)> + '_ {
        self.leaves.iter().enumerate().flat_map(|(l, leaf)| {
            let q = self.corners(l);
            let second = leaf
                .is_pair()
                .then(|| (leaf_triangle(q, 1), self.source_id(l, 1)));
            std::iter::once((leaf_triangle(q, 0), self.source_id(l, 0))).chain(second)
        })
    }
}

/// Largest angle, in radians, between two triangles' planes for their
/// shared edge to count as flat (about 0.25°).
pub const FLAT_EDGE_ANGLE: f64 = 4.4e-3;

/// Triangle `k` (0 or 1) of a leaf `[a, b, c, d]`.
#[inline]
pub const fn leaf_triangle(q: [u32; 4], k: u32) -> [u32; 3] {
    if k == 0 {
        [q[0], q[1], q[2]]
    } else {
        [q[2], q[1], q[3]]
    }
}

const _: () = {
    assert!(std::mem::size_of::<ArchivedLeaf>() == 12);
    assert!(std::mem::align_of::<ArchivedLeaf>() == 2);
    assert!(std::mem::size_of::<BoxNode>() == 32);
    assert!(std::mem::size_of::<ArchivedBoxNode>() == 32);
    assert!(std::mem::align_of::<ArchivedBoxNode>() == 4);
    assert!(std::mem::size_of::<ArchivedSphereNode>() == 40);
    assert!(std::mem::align_of::<ArchivedSphereNode>() == 4);
    assert!(std::mem::size_of::<ArchivedFloatBoxNode>() == 104);
    assert!(std::mem::align_of::<ArchivedFloatBoxNode>() == 4);
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every slot layout round-trips through the two stored words, and
    /// each slot's reference counts only the earlier slots of its kind.
    #[test]
    fn links_round_trip_and_name_consecutive_children() {
        for used in 2..=WIDTH as u32 {
            for leaf_mask in 0..1u32 << used {
                for (first_node, first_leaf) in [(1, 0), (77, 1234), (MAX_NODES as u32 - 5, 9)] {
                    let l = Links {
                        first_node,
                        first_leaf,
                        leaf_mask,
                        used,
                    };
                    let words = l.pack().expect("in range");
                    assert_eq!(Links::unpack(words), l);
                    assert_eq!(l.inner() + l.leaves(), used);
                    let (mut node, mut leaf) = (first_node, first_leaf);
                    for c in 0..used as usize {
                        if leaf_mask >> c & 1 != 0 {
                            assert_eq!(l.child(c), LEAF_BIT | leaf);
                            leaf += 1;
                        } else {
                            assert_eq!(l.child(c), node);
                            node += 1;
                        }
                    }
                }
            }
        }
        // out of range: an index past its bits, one slot, a leaf bit on
        // an unused slot
        let l = Links {
            first_node: 1,
            first_leaf: 0,
            leaf_mask: 0,
            used: 2,
        };
        for bad in [
            Links {
                first_node: MAX_NODES as u32,
                ..l
            },
            Links {
                first_leaf: MAX_LEAVES as u32,
                ..l
            },
            Links { used: 1, ..l },
            Links { leaf_mask: 4, ..l },
        ] {
            assert_eq!(bad.pack(), None, "{bad:?}");
        }
    }
}
