//! Verification of the TriMesh shape: vertices, leaves and the wide tree
//! (see [`crate::tri_mesh`]).

use super::{TreeError, TreeStats, VerifyError};
use crate::level::MAX_DEPTH;
use crate::tri_mesh::{
    ArchivedBoxNode, ArchivedFloatBoxNode, ArchivedLeaf, ArchivedMeshTree, ArchivedSphereNode,
    ArchivedTriMesh, ArchivedWideNode, LEAF_BIT, LEAF_CHUNK, Links, SphereFrame, WIDE, WIDTH,
    box_step, decode_hi, decode_lo,
};
use crate::vertices::{Axis, dequantize, layout_of};
use rayon::prelude::*;

/// A decoded bounding volume of a mesh tree (for statistics and checks).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Vol {
    Box([f32; 3], [f32; 3]),
    Ball([f32; 3], f32),
}

impl Vol {
    /// Surface area (up to a constant shared by every volume of a tree).
    pub(super) fn area(&self) -> f64 {
        match *self {
            Vol::Box(a, b) => {
                let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]].map(f64::from);
                2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0])
            }
            Vol::Ball(_, r) => 4.0 * std::f64::consts::PI * f64::from(r) * f64::from(r),
        }
    }
}

/// Checks a mesh's tree: node count, each node's used slots (two to
/// eight in a box node, to four in a sphere node, [`Links`]), a box node's
/// own box (finite, not inverted, a finite size) and codes that cannot
/// cross (lower + upper code ≤ 255 per axis), the breadth-first numbering
/// of nodes and leaves, and depth (`check_links`).
///
/// A leaf's triangle count is the leaf's own (`d ≠ c`, see
/// [`crate::tri_mesh::Leaf::is_pair`]); the tree does not repeat it.
pub fn verify_mesh_tree(mesh: &ArchivedTriMesh) -> Result<(), TreeError> {
    let leaves = mesh.leaves.len();
    let root = mesh.root.to_native();
    match &mesh.tree {
        ArchivedMeshTree::Boxes(nodes) => check_links(root, leaves, &WideNodes(nodes)),
        ArchivedMeshTree::Spheres(t) => check_links(root, leaves, &SphereNodes(&t.nodes)),
    }
}

/// A tree as [`check_links`] reads it. Its node check is a method of a
/// type rather than a closure so that it always folds into the scan's
/// loop.
pub(super) trait Wide: Sync {
    /// Most children of a node.
    const WIDTH: usize = WIDTH;
    /// Number of inner nodes.
    fn len(&self) -> usize;
    /// Checks inner node `i` on its own (slots, codes) and gives its links.
    fn node(&self, i: usize) -> Result<Links, TreeError>;
}

/// Box nodes: a mesh's tree or the top-level tree.
pub(super) struct BoxNodes<'a>(pub &'a [ArchivedBoxNode]);

/// The top-level tree's float nodes.
pub(super) struct FloatNodes<'a>(pub &'a [ArchivedFloatBoxNode]);

/// A mesh's box nodes (8-wide, each with its own box).
struct WideNodes<'a>(&'a [ArchivedWideNode]);

/// A mesh's sphere nodes.
struct SphereNodes<'a>(&'a [ArchivedSphereNode]);

impl Wide for FloatNodes<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn node(&self, i: usize) -> Result<Links, TreeError> {
        let n = &self.0[i];
        let links = slots(n.links(), i)?;
        for c in 0..links.used as usize {
            let Vol::Box(min, max) = float_child(n, c) else {
                unreachable!("a float node's child is a box")
            };
            if !(0..3).all(|k| min[k].is_finite() && max[k].is_finite() && min[k] <= max[k]) {
                return Err(TreeError::Bounds { node: i, min, max });
            }
        }
        Ok(links)
    }
}

impl Wide for BoxNodes<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn node(&self, i: usize) -> Result<Links, TreeError> {
        box_node(&self.0[i], i)
    }
}

impl Wide for WideNodes<'_> {
    const WIDTH: usize = WIDE;
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn node(&self, i: usize) -> Result<Links, TreeError> {
        wide_node(&self.0[i], i)
    }
}

impl Wide for SphereNodes<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn node(&self, i: usize) -> Result<Links, TreeError> {
        slots(self.0[i].links(), i)
    }
}

/// Checks box node `n` (index `i`) on its own: its slots, and that no
/// used child's lower and upper codes cross; gives its links.
#[inline(always)]
fn box_node(n: &ArchivedBoxNode, i: usize) -> Result<Links, TreeError> {
    let links = slots(n.links(), i)?;
    // a lower and upper code cross when their sum carries out of a byte:
    // four slots at once per axis (the carry out of bit 7 is the majority
    // of the two top bits and the carry into it), the unused masked off
    let mut carry = 0u32;
    for k in 0..3 {
        let (l, h) = (u32::from_le_bytes(n.lo[k]), u32::from_le_bytes(n.hi[k]));
        let low = (l & 0x7f7f_7f7f) + (h & 0x7f7f_7f7f);
        carry |= (l & h) | ((l | h) & low);
    }
    let used_bytes = (u64::MAX >> (64 - 8 * links.used)) as u32;
    if carry & 0x8080_8080 & used_bytes != 0 {
        return Err(TreeError::Crossed { node: i });
    }
    Ok(links)
}

/// Checks wide box node `n` (index `i`) on its own: its slots, its own box
/// (finite, not inverted, of a finite size, so its codes decode to finite
/// faces) and that no used child's lower and upper codes cross; gives its
/// links.
#[inline(always)]
fn wide_node(n: &ArchivedWideNode, i: usize) -> Result<Links, TreeError> {
    let links = slots(n.links(), i)?;
    let (min, max) = (n.min.map(|v| v.to_native()), n.max.map(|v| v.to_native()));
    let bounded = (0..3).all(|k| {
        min[k].is_finite()
            && max[k].is_finite()
            && min[k] <= max[k]
            && (max[k] - min[k]).is_finite()
    });
    if !bounded {
        return Err(TreeError::Bounds { node: i, min, max });
    }
    // as `box_node`, eight slots at once per axis
    let mut carry = 0u64;
    for k in 0..3 {
        let (l, h) = (u64::from_le_bytes(n.lo[k]), u64::from_le_bytes(n.hi[k]));
        let low = (l & 0x7f7f_7f7f_7f7f_7f7f) + (h & 0x7f7f_7f7f_7f7f_7f7f);
        carry |= (l & h) | ((l | h) & low);
    }
    let used_bytes = u64::MAX >> (64 - 8 * links.used);
    if carry & 0x8080_8080_8080_8080 & used_bytes != 0 {
        return Err(TreeError::Crossed { node: i });
    }
    Ok(links)
}

/// Whether a tree of `inner` nodes of up to `width` children can hold
/// `leaves` leaves: a node has 2 to `width` children, so L leaves need
/// between ⌈(L-1)/(width-1)⌉ and L-1 nodes. `Ok(false)` for the empty
/// tree (nothing to walk).
pub(super) fn node_count(inner: usize, leaves: usize, width: usize) -> Result<bool, TreeError> {
    if leaves == 0 || inner > leaves - 1 || inner * (width - 1) < leaves - 1 {
        if leaves == 0 && inner == 0 {
            return Ok(false);
        }
        return Err(TreeError::Empty {
            nodes: inner,
            prims: leaves,
        });
    }
    Ok(true)
}

/// A node's slots: at least two used (the packing bounds the most), no
/// leaf bit on an unused slot.
#[inline(always)]
fn slots(links: Links, node: usize) -> Result<Links, TreeError> {
    if links.used < 2 || links.leaf_mask >> links.used != 0 {
        return Err(TreeError::Slots { node });
    }
    Ok(links)
}

/// Trees with at least this many inner nodes are checked in chunks on the
/// rayon pool (smaller ones are not worth waking a thread for).
pub const PARALLEL_TREE_NODES: usize = 1 << 12;

/// Inner nodes per chunk of a large tree's check.
const TREE_CHUNK: usize = 1 << 11;

/// Checks the numbering of a tree over `leaves` leaves, rooted at
/// `root`, in one pass over its nodes in storage order: node `i`'s first
/// inner child and first leaf must be the counts of inner children and
/// leaves that the nodes before it have (counting from 1 and 0: the root
/// is node 0), and node `i` must already be counted (a child of an
/// earlier node), so every node but the root is exactly one earlier
/// node's child, every leaf exactly one node's, and a walk only ever goes
/// to larger indices. The counts must end at the node and leaf totals.
///
/// That numbering is breadth-first, so the tree's levels are runs of
/// nodes: level `d + 1` ends where the first node of level `d + 1` starts
/// its children. Following those starts gives the depth, which must
/// leave every leaf at most [`MAX_DEPTH`] levels down (the walks' fixed
/// stacks rely on it).
///
/// A large tree is checked in chunks on the rayon pool, each from the
/// counts its first node claims; the chunks must then chain from (1, 0)
/// to the totals. Only when that fails does the serial scan run, to name
/// the first error, so the error does not depend on the thread count.
pub(super) fn check_links<T: Wide>(root: u32, leaves: usize, tree: &T) -> Result<(), TreeError> {
    let inner = tree.len();
    if !node_count(inner, leaves, T::WIDTH)? {
        return Ok(());
    }
    let expected_root = if inner == 0 { LEAF_BIT } else { 0 };
    if root != expected_root {
        return Err(TreeError::Root {
            found: root,
            expected: expected_root,
        });
    }
    if inner == 0 {
        return Ok(());
    }
    let end = (inner as u64, leaves as u64);
    let chained = if inner >= PARALLEL_TREE_NODES {
        // each chunk's (claimed start, end) counts, if it holds together
        let ends: Vec<Option<(Counts, Counts)>> = (0..inner.div_ceil(TREE_CHUNK))
            .into_par_iter()
            .map(|k| {
                let range = k * TREE_CHUNK..((k + 1) * TREE_CHUNK).min(inner);
                let first = tree.node(range.start).ok()?;
                let start = (u64::from(first.first_node), u64::from(first.first_leaf));
                let stop = scan_links(tree, range, start).ok()?;
                Some((start, stop))
            })
            .collect();
        let mut at = Some((1, 0));
        for e in ends {
            at = match (at, e) {
                (Some(a), Some((start, stop))) if a == start => Some(stop),
                _ => None,
            };
        }
        at == Some(end)
    } else {
        scan_links(tree, 0..inner, (1, 0)).is_ok_and(|e| e == end)
    };
    if !chained {
        let stop = scan_links(tree, 0..inner, (1, 0))?;
        return Err(TreeError::Coverage {
            covered: if stop.0 != end.0 { stop.0 } else { stop.1 } as usize,
            prims: if stop.0 != end.0 { inner } else { leaves },
        });
    }
    // depth: level by level, each level ending where its first node's
    // children start (strictly later: every node was counted before it)
    let (mut level_end, mut depth) = (1usize, 1usize);
    while level_end < inner {
        level_end = tree.node(level_end)?.first_node as usize;
        depth += 1;
    }
    // the deepest nodes' children are one level further down
    if depth >= MAX_DEPTH {
        return Err(TreeError::TooDeep);
    }
    Ok(())
}

/// The next inner-node and leaf numbers of a breadth-first numbering.
type Counts = (u64, u64);

/// [`check_links`]'s scan over nodes `range`, counting from `start` (the
/// next inner child and leaf numbers); gives the counts after the range.
#[inline(always)]
fn scan_links(
    tree: &impl Wide,
    range: std::ops::Range<usize>,
    start: Counts,
) -> Result<Counts, TreeError> {
    let (mut next_node, mut next_leaf) = start;
    for i in range {
        let l = tree.node(i)?;
        if i > 0 && next_node <= i as u64 {
            return Err(TreeError::Orphan { node: i });
        }
        if (u64::from(l.first_node), u64::from(l.first_leaf)) != (next_node, next_leaf) {
            return Err(TreeError::Links {
                node: i,
                found: (l.first_node, l.first_leaf),
                expected: (next_node, next_leaf),
            });
        }
        next_node += u64::from(l.inner());
        next_leaf += u64::from(l.leaves());
    }
    Ok((next_node, next_leaf))
}

/// [`verify_mesh_tree`] plus the tree's shape statistics (decodes every
/// volume, so slower; `nodes` counts inner nodes).
pub fn mesh_tree_stats(mesh: &ArchivedTriMesh) -> Result<TreeStats, TreeError> {
    verify_mesh_tree(mesh)?;
    let leaves = mesh.leaves.len();
    let inner = mesh.tree.len();
    if leaves == 0 {
        return Ok(TreeStats::default());
    }
    let f = |v: &[rkyv::rend::f32_le; 3]| v.map(|x| x.to_native());
    let count = |leaf: u32| 1.0 + f64::from(u8::from(mesh.leaves[leaf as usize].is_pair()));
    let mut stats = match &mesh.tree {
        ArchivedMeshTree::Boxes(nodes) => stats_walk(
            mesh.root.to_native(),
            Vol::Box(f(&mesh.min), f(&mesh.max)),
            |i| nodes[i].links(),
            |i, c, _| wide_child(&nodes[i], c),
            |leaf, vol| vol.area() * count(leaf),
        ),
        ArchivedMeshTree::Spheres(t) => {
            let frame = SphereFrame {
                origin: f(&t.frame.origin),
                scale: f(&t.frame.scale),
                radius_scale: t.frame.radius_scale.to_native(),
                root: t.frame.root.map(|x| x.to_native()),
            };
            let ball = |q: [u16; 4]| {
                let (c, r) = frame.decode(q);
                Vol::Ball(c, r)
            };
            stats_walk(
                mesh.root.to_native(),
                ball(frame.root),
                |i| t.nodes[i].links(),
                |i, c, _| ball(t.nodes[i].sphere.map(|q| q[c].to_native())),
                |leaf, vol| vol.area() * count(leaf),
            )
        }
    };
    stats.nodes = inner;
    Ok(stats)
}

/// Child `c`'s box of box node `n`, whose box is `vol`.
pub(super) fn box_child(n: &ArchivedBoxNode, c: usize, vol: Vol) -> Vol {
    let Vol::Box(pmin, pmax) = vol else {
        return vol;
    };
    let step: [f32; 3] = std::array::from_fn(|k| box_step(pmin[k], pmax[k]));
    Vol::Box(
        std::array::from_fn(|k| decode_lo(pmin[k], step[k], n.lo[k][c])),
        std::array::from_fn(|k| decode_hi(pmax[k], step[k], n.hi[k][c])),
    )
}

/// Child `c`'s box of wide node `n` (decoded against the node's own box).
pub(super) fn wide_child(n: &ArchivedWideNode, c: usize) -> Vol {
    let (min, max) = (n.min.map(|v| v.to_native()), n.max.map(|v| v.to_native()));
    let step: [f32; 3] = std::array::from_fn(|k| box_step(min[k], max[k]));
    Vol::Box(
        std::array::from_fn(|k| decode_lo(min[k], step[k], n.lo[k][c])),
        std::array::from_fn(|k| decode_hi(max[k], step[k], n.hi[k][c])),
    )
}

/// Child `c`'s box of float node `n`.
pub(super) fn float_child(n: &ArchivedFloatBoxNode, c: usize) -> Vol {
    Vol::Box(
        std::array::from_fn(|k| n.lo[k][c].to_native()),
        std::array::from_fn(|k| n.hi[k][c].to_native()),
    )
}

/// Walks a verified tree from `root` (volume `root_vol`) for its shape
/// statistics: `leaf(index, volume)` gives a leaf's SAH share (its area
/// times its primitive count). `nodes` is left for the caller.
pub(super) fn stats_walk(
    root: u32,
    root_vol: Vol,
    links: impl Fn(usize) -> Links,
    child_vol: impl Fn(usize, usize, Vol) -> Vol,
    mut leaf: impl FnMut(u32, Vol) -> f64,
) -> TreeStats {
    let mut stats = TreeStats::default();
    let mut sah = 0.0f64;
    let mut stack = Vec::with_capacity(WIDE * MAX_DEPTH);
    stack.push((root, 1usize, root_vol));
    while let Some((r, depth, vol)) = stack.pop() {
        stats.depth = stats.depth.max(depth);
        if r & LEAF_BIT != 0 {
            stats.leaves += 1;
            sah += leaf(r & !LEAF_BIT, vol);
            continue;
        }
        sah += vol.area();
        let l = links(r as usize);
        for c in (0..l.used as usize).rev() {
            stack.push((l.child(c), depth + 1, child_vol(r as usize, c, vol)));
        }
    }
    let root_area = root_vol.area();
    stats.sah_cost = if root_area > 0.0 {
        sah / root_area
    } else {
        0.0
    };
    stats
}

/// Checks a TriMesh collider: vertex axes and records as their layout says,
/// finite vertices, one base pair per run of leaves, leaf corners in
/// range, each listing table exactly its flagged leaves, a finite
/// decoding frame, and its tree ([`verify_mesh_tree`]).
pub fn verify_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    let (leaves, expected) = (mesh.leaves.len(), mesh.leaves.len().div_ceil(LEAF_CHUNK));
    if mesh.bases.len() != expected {
        return Err(VerifyError::LeafBases {
            mesh: m,
            leaves,
            expected,
            bases: mesh.bases.len(),
        });
    }
    // the vertex grids decode to finite values, and the records are laid
    // out as the axes say
    let v = &mesh.vertices;
    let axes = v.axes();
    if !axes.iter().all(Axis::is_valid)
        || v.layout != layout_of(&axes)
        || !v.data.len().is_multiple_of(v.stride())
    {
        return Err(VerifyError::VertexLayout { mesh: m });
    }
    // the root box and the sphere frame must decode to finite numbers everywhere
    let fin = |v: f32| v.is_finite();
    let box_ok = (0..3).all(|k| {
        let (lo, hi) = (mesh.min[k].to_native(), mesh.max[k].to_native());
        fin(lo) && fin(hi) && lo <= hi && fin(hi - lo)
    });
    let sphere_ok = match &mesh.tree {
        ArchivedMeshTree::Boxes(_) => true,
        ArchivedMeshTree::Spheres(t) => {
            let fr = &t.frame;
            let rs = fr.radius_scale.to_native();
            (0..3).all(|k| {
                let (o, s) = (fr.origin[k].to_native(), fr.scale[k].to_native());
                fin(o) && fin(s) && s >= 0.0 && fin(dequantize(o, s, u16::MAX))
            }) && fin(rs)
                && rs >= 0.0
                && fin(rs * f32::from(u16::MAX))
        }
    };
    if !(box_ok && sphere_ok) {
        return Err(VerifyError::Quantization { mesh: m });
    }
    // the vertex and leaf scans beside the tree walk (on the rayon pool
    // for a large mesh); a scan's error is reported before the tree's
    let tree =
        || verify_mesh_tree(mesh).map_err(|source| VerifyError::MeshTree { mesh: m, source });
    let (scanned, walked) = if mesh.leaves.len() >= PARALLEL_LEAVES {
        rayon::join(|| scan_tri_mesh(m, mesh), tree)
    } else {
        (scan_tri_mesh(m, mesh), tree())
    };
    scanned.and(walked)
}

/// Meshes with at least this many leaves are verified on the rayon pool.
const PARALLEL_LEAVES: usize = 1 << 16;

/// Items per task of a large mesh's vertex and leaf scans.
const SCAN_CHUNK: usize = 1 << 15;

/// Whether the first `N` little-endian f32 words of every record of
/// `data` are finite (exponent bits not all ones), without a branch per
/// record. A record of `N` f32 axes and `3 - N` grid axes is `6 + 2N`
/// bytes (a constant here, so the loop is compiled for it).
fn floats_finite<const N: usize>(data: &[u8]) -> bool {
    data.chunks_exact(6 + 2 * N).fold(true, |ok, rec| {
        let words: &[u8] = &rec[..4 * N];
        (0..N).fold(ok, |ok, k| {
            let w = u32::from_le_bytes([
                words[4 * k],
                words[4 * k + 1],
                words[4 * k + 2],
                words[4 * k + 3],
            ]);
            ok & (w & 0x7f80_0000 != 0x7f80_0000)
        })
    })
}

/// Every vertex finite; every leaf's corners in range; each listing
/// table exactly its flagged leaves, ascending.
fn scan_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    let vertices = mesh.vertices.len();
    let parallel = mesh.leaves.len() >= PARALLEL_LEAVES;
    // the verdicts first, in chunks on the pool for a large mesh and
    // without branches inside a chunk; the item at fault only when there
    // is one, found serially so the error never depends on the threads
    // only the f32 axes can hold a non-finite value (a valid grid decodes
    // to finite values only), and they are each record's first words
    let stride = mesh.vertices.stride();
    let floats = (0..3)
        .filter(|&k| !mesh.vertices.axes[k].get().on_grid())
        .count();
    let finite = |c: &[u8]| match floats {
        0 => true,
        1 => floats_finite::<1>(c),
        2 => floats_finite::<2>(c),
        _ => floats_finite::<3>(c),
    };
    let data = &mesh.vertices.data[..];
    let all_finite = if parallel {
        data.par_chunks(SCAN_CHUNK * stride).all(finite)
    } else {
        finite(data)
    };
    if !all_finite {
        let v = data
            .chunks_exact(stride)
            .position(|rec| !finite(rec))
            .expect("a vertex failed");
        return Err(VerifyError::Vertex { mesh: m, vertex: v });
    }
    // every corner in `0..vertices`: from corner `a` as the runtime
    // computes it (u32), the others in i64 read as u64, so a corner below
    // 0 (or past u32) lands past any count and one unsigned maximum decides
    let n = vertices as u64;
    let fits = |a: u32, leaf: &ArchivedLeaf| {
        let a = i64::from(a);
        let c = leaf
            .offset
            .each_ref()
            .map(|o| (a + i64::from(o.to_native())) as u64);
        (a as u64).max(c[0]).max(c[1]).max(c[2]) < n
    };
    // per run of leaves with its bases: whether every unlisted corner `a`
    // fits, and how many leaves each table should list
    let scan = |leaves: &[ArchivedLeaf], bases: &[[rkyv::rend::u32_le; 2]]| {
        let (mut all, mut f) = (true, [0usize; 3]);
        for (run, base) in leaves.chunks(LEAF_CHUNK).zip(bases) {
            let base = base[0].to_native();
            // counted per run in u32 lanes, so the loop has no branch
            let (mut fits_all, mut corners, mut ids, mut seconds) = (true, 0u32, 0u32, 0u32);
            for leaf in run {
                let listed = leaf.a_listed();
                let a = base.wrapping_add(u32::from(leaf.a.to_native()));
                fits_all &= listed | fits(a, leaf);
                corners += u32::from(listed);
                ids += u32::from(leaf.id_listed());
                seconds += u32::from(leaf.second_listed());
            }
            all &= fits_all;
            f[0] += corners as usize;
            f[1] += ids as usize;
            f[2] += seconds as usize;
        }
        (all, f)
    };
    let (all, flagged) = if parallel {
        mesh.leaves
            .par_chunks(SCAN_CHUNK)
            .zip(mesh.bases.par_chunks(SCAN_CHUNK / LEAF_CHUNK))
            .map(|(l, b)| scan(l, b))
            .reduce(
                || (true, [0; 3]),
                |x, y| {
                    (
                        x.0 & y.0,
                        [x.1[0] + y.1[0], x.1[1] + y.1[1], x.1[2] + y.1[2]],
                    )
                },
            )
    } else {
        scan(&mesh.leaves, &mesh.bases)
    };
    let out_of_range = |t: usize, a: u32| {
        let leaf = &mesh.leaves[t];
        let c = leaf
            .offset
            .each_ref()
            .map(|o| a.wrapping_add_signed(i32::from(o.to_native())));
        let v = std::iter::once(a)
            .chain(c)
            .find(|&v| v as usize >= vertices)
            // a corner past u32 wraps into range at run time; name it as
            // the u32 it would have been cut to
            .unwrap_or(u32::MAX);
        VerifyError::VertexIndex {
            mesh: m,
            triangle: t,
            vertex: v,
            vertices,
        }
    };
    if !all {
        let (t, a) = (0..mesh.leaves.len())
            .filter(|&t| !mesh.leaves[t].a_listed())
            .map(|t| (t, mesh.corners(t)[0]))
            .find(|&(t, a)| !fits(a, &mesh.leaves[t]))
            .expect("a leaf failed");
        return Err(out_of_range(t, a));
    }
    let listed = |table: &'static str,
                  entries: &[[rkyv::rend::u32_le; 2]],
                  flag: &dyn Fn(&ArchivedLeaf) -> bool,
                  flagged: usize| {
        let n = entries.len();
        let fault = |entry| VerifyError::Listed {
            mesh: m,
            table,
            entry,
            entries: n,
            flagged,
        };
        // ascending, each flagged, as many as flagged: exactly the flagged set
        let mut last = None;
        for (e, s) in entries.iter().enumerate() {
            let leaf = s[0].to_native() as usize;
            if !mesh.leaves.get(leaf).is_some_and(flag) || last.is_some_and(|p| p >= leaf) {
                return Err(fault(e));
            }
            last = Some(leaf);
        }
        if n != flagged {
            return Err(fault(n));
        }
        Ok(())
    };
    listed(
        "listed-corner",
        &mesh.listed_corners,
        &ArchivedLeaf::a_listed,
        flagged[0],
    )?;
    listed(
        "listed-id",
        &mesh.listed_ids,
        &ArchivedLeaf::id_listed,
        flagged[1],
    )?;
    listed(
        "second-id",
        &mesh.second_ids,
        &ArchivedLeaf::second_listed,
        flagged[2],
    )?;
    // the listed corners, now known to name their own leaves
    for e in mesh.listed_corners.iter() {
        let (t, a) = (e[0].to_native() as usize, e[1].to_native());
        if !fits(a, &mesh.leaves[t]) {
            return Err(out_of_range(t, a));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare 4-wide tree for the numbering checks: each node's stored
    /// links words, and the leaf count.
    #[derive(Clone)]
    struct Bare {
        nodes: Vec<[u32; 2]>,
        leaves: usize,
    }

    impl Wide for Bare {
        fn len(&self) -> usize {
            self.nodes.len()
        }
        fn node(&self, i: usize) -> Result<Links, TreeError> {
            slots(Links::unpack(self.nodes[i]), i)
        }
    }

    /// xorshift64*, for reproducible trees.
    use kiln_geometry::rng::Rng;

    /// A uniform draw below `n` from Kiln's test generator.
    fn below(rng: &mut Rng, n: u64) -> u64 {
        (rng.next_u64() >> 11) % n
    }

    /// A tree's shape: a leaf, or an inner node's children.
    enum Shape {
        Leaf,
        Node(Vec<Shape>),
    }

    /// A random shape of at most `budget` inner nodes (at least one).
    fn grow(rng: &mut Rng, depth: usize, budget: &mut usize) -> Shape {
        if depth > 1 && (*budget == 0 || depth >= 14 || below(rng, 4) == 0) {
            return Shape::Leaf;
        }
        *budget = budget.saturating_sub(1);
        let used = 2 + below(rng, 3) as usize;
        Shape::Node((0..used).map(|_| grow(rng, depth + 1, budget)).collect())
    }

    /// `shape` numbered breadth-first, as the baker numbers trees.
    fn number(shape: &Shape) -> Bare {
        let mut queue = std::collections::VecDeque::from([shape]);
        let (mut nodes, mut next_node, mut leaves) = (vec![], 1u32, 0u32);
        while let Some(Shape::Node(children)) = queue.pop_front() {
            let mut mask = 0;
            for (c, child) in children.iter().enumerate() {
                match child {
                    Shape::Leaf => mask |= 1 << c,
                    node => queue.push_back(node),
                }
            }
            let l = Links {
                first_node: next_node,
                first_leaf: leaves,
                leaf_mask: mask,
                used: children.len() as u32,
            };
            next_node += l.inner();
            leaves += l.leaves();
            nodes.push(l.pack().expect("in range"));
        }
        Bare {
            nodes,
            leaves: leaves as usize,
        }
    }

    /// The reference verdict, by a breadth-first walk from the root: the
    /// nodes dequeued in index order, each storing the next numbers of
    /// both kinds (even with no child of a kind) and each reference the
    /// next number of its kind, every node and leaf met, inner nodes fewer
    /// than `MAX_DEPTH` levels deep.
    fn by_walk(t: &Bare) -> bool {
        let n = t.nodes.len();
        let mut queue = vec![(0usize, 1usize)];
        let (mut pos, mut next_leaf) = (0, 0);
        while pos < queue.len() {
            let (i, depth) = queue[pos];
            let l = Links::unpack(t.nodes[i]);
            if i != pos || depth >= MAX_DEPTH || l.used < 2 || l.leaf_mask >> l.used != 0 {
                return false;
            }
            if (l.first_node as usize, l.first_leaf as usize) != (queue.len(), next_leaf) {
                return false;
            }
            for c in 0..l.used as usize {
                let r = l.child(c);
                if r & LEAF_BIT != 0 {
                    if (r & !LEAF_BIT) as usize != next_leaf {
                        return false;
                    }
                    next_leaf += 1;
                } else {
                    if r as usize != queue.len() || r as usize >= n {
                        return false;
                    }
                    queue.push((r as usize, depth + 1));
                }
            }
            pos += 1;
        }
        queue.len() == n && next_leaf == t.leaves
    }

    fn check(t: &Bare) -> Result<(), TreeError> {
        check_links(0, t.leaves, t)
    }

    /// A word a broken or hostile tree might hold.
    fn damage(rng: &mut Rng, old: u32) -> u32 {
        match below(rng, 4) {
            0 => old ^ 1 << below(rng, 32),
            1 => old.wrapping_add(below(rng, 3) as u32 * 4).wrapping_sub(4),
            2 => old.wrapping_add(below(rng, 3) as u32).wrapping_sub(1),
            _ => below(rng, 1 << 32) as u32,
        }
    }

    /// The one-pass check accepts exactly the trees a breadth-first walk
    /// accepts: every valid random tree, and the walk's verdict on 20,000
    /// damaged ones (first-child and first-leaf numbers moved, leaf bits
    /// and slot counts flipped, random words).
    #[test]
    fn the_check_and_the_walk_agree_on_every_tree() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut rejected, mut accepted) = (0, 0);
        for round in 0..400 {
            let t = number(&grow(&mut rng, 1, &mut (1 + round % 60)));
            assert!(by_walk(&t), "round {round}: the walk refuses a valid tree");
            assert_eq!(check(&t), Ok(()), "round {round}: a valid tree");
            for _ in 0..50 {
                let mut bad = t.clone();
                let i = below(&mut rng, bad.nodes.len() as u64) as usize;
                let w = below(&mut rng, 2) as usize;
                bad.nodes[i][w] = damage(&mut rng, bad.nodes[i][w]);
                let walk = by_walk(&bad);
                assert_eq!(check(&bad).is_ok(), walk, "round {round}: {:?}", bad.nodes);
                if walk {
                    accepted += 1;
                } else {
                    rejected += 1;
                }
            }
        }
        assert!(
            rejected > 10_000 && accepted > 100,
            "{rejected} / {accepted}"
        );
    }

    /// A chain of `inner` nodes, each with a leaf and the next node (in
    /// either order), the last with two leaves: `inner` levels.
    fn chain(inner: usize, rng: &mut Rng) -> Shape {
        let mut s = Shape::Node(vec![Shape::Leaf, Shape::Leaf]);
        for _ in 1..inner {
            s = if below(rng, 2) == 0 {
                Shape::Node(vec![Shape::Leaf, s])
            } else {
                Shape::Node(vec![s, Shape::Leaf])
            };
        }
        s
    }

    /// The depth limit, at its edge: inner nodes may sit down to level
    /// `MAX_DEPTH - 1` (their leaves one below).
    #[test]
    fn the_check_and_the_walk_agree_at_the_depth_limit() {
        let mut rng = Rng(5);
        for inner in [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 3] {
            let t = number(&chain(inner, &mut rng));
            let verdict = check(&t);
            assert_eq!(verdict.is_ok(), inner < MAX_DEPTH, "{inner}: {verdict:?}");
            assert_eq!(by_walk(&t), verdict.is_ok(), "{inner} levels");
        }
    }

    /// A tree large enough to be checked in chunks on the pool passes,
    /// and a damaged one fails exactly when the walk fails, with the
    /// error the serial scan names.
    #[test]
    fn chunks_agree_with_the_walk() {
        let mut rng = Rng(11);
        let mut t = number(&grow(&mut rng, 1, &mut (3 * PARALLEL_TREE_NODES)));
        while t.nodes.len() < PARALLEL_TREE_NODES {
            t = number(&grow(&mut rng, 1, &mut (3 * PARALLEL_TREE_NODES)));
        }
        assert_eq!(check(&t), Ok(()));
        let (mut rejected, mut accepted) = (0, 0);
        for _ in 0..300 {
            let mut bad = t.clone();
            let i = below(&mut rng, bad.nodes.len() as u64) as usize;
            let w = below(&mut rng, 2) as usize;
            bad.nodes[i][w] = damage(&mut rng, bad.nodes[i][w]);
            let walk = by_walk(&bad);
            let verdict = check(&bad);
            assert_eq!(verdict.is_ok(), walk, "node {i}: {verdict:?}");
            if walk {
                accepted += 1;
            } else {
                rejected += 1;
                let serial = scan_links(&bad, 0..bad.nodes.len(), (1, 0));
                if let Err(e) = serial {
                    assert_eq!(verdict, Err(e));
                }
            }
        }
        assert!(rejected > 100 && accepted > 2, "{rejected} / {accepted}");
    }
}
