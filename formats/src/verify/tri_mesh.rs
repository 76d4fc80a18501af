//! Verification of the TriMesh shape: vertices, leaves and the 4-wide
//! tree (see [`crate::tri_mesh`]).

use super::{TreeError, TreeStats, VerifyError};
use crate::level::{MAX_DEPTH, leaf_range};
use crate::tri_mesh::{
    ArchivedBoxNode, ArchivedMeshTree, ArchivedSphereNode, ArchivedTriMesh, EMPTY, LEAF_BIT,
    SphereFrame, WIDTH, box_step, decode_hi, decode_lo, dequantize,
};

/// A decoded bounding volume of a mesh tree (for statistics and checks).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Vol {
    Box([f32; 3], [f32; 3]),
    Ball([f32; 3], f32),
}

impl Vol {
    /// Surface area (up to a constant shared by every volume of a tree).
    fn area(&self) -> f64 {
        match *self {
            Vol::Box(a, b) => {
                let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]].map(f64::from);
                2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0])
            }
            Vol::Ball(_, r) => 4.0 * std::f64::consts::PI * f64::from(r) * f64::from(r),
        }
    }
}

/// Checks a mesh's tree: kind and node count, two to four used child slots
/// per node (empty ones last), child references in depth-first order
/// (inner nodes numbered as the walk meets them, leaves likewise, so every
/// node and leaf is reached exactly once and the walk cannot loop), leaf
/// triangle counts against the source ids, depth at most [`MAX_DEPTH`],
/// child-box codes that cannot cross (lower + upper code ≤ 255 per axis).
pub fn verify_mesh_tree(mesh: &ArchivedTriMesh) -> Result<(), TreeError> {
    let leaves = mesh.leaves.len();
    let inner = mesh.tree.len();
    if !node_count(inner, leaves)? {
        return Ok(());
    }
    let ids = mesh.source_ids.as_slice();
    // a leaf holds two triangles exactly when its second source id is set
    let leaf = |leaf: usize, count: u32| {
        if (count == 2) != (ids[leaf][1].to_native() != u32::MAX) {
            return Err(TreeError::LeafCount { leaf, count });
        }
        Ok(())
    };
    let root = mesh.root.to_native();
    match &mesh.tree {
        ArchivedMeshTree::Boxes(n) => check_order(root, inner, leaves, |i| box_node(n, i), leaf),
        ArchivedMeshTree::Spheres(t) => check_order(
            root,
            inner,
            leaves,
            |i| {
                let child = t.nodes[i].child.map(|c| c.to_native());
                let used = slots(i, &child)?;
                Ok((child, used))
            },
            leaf,
        ),
    }
}

/// Checks box node `i` on its own: its slots, and that no used child's
/// lower and upper codes cross; gives its children and how many are used.
#[inline]
pub(super) fn box_node(
    nodes: &[ArchivedBoxNode],
    i: usize,
) -> Result<([u32; WIDTH], usize), TreeError> {
    let n = &nodes[i];
    let child = n.child.map(|c| c.to_native());
    let used = slots(i, &child)?;
    // every slot tested, the unused masked off: no branch per code
    let mut crossed = 0u32;
    for k in 0..3 {
        for c in 0..WIDTH {
            let sum = u16::from(n.lo[k][c]) + u16::from(n.hi[k][c]);
            crossed |= u32::from(sum > 255) << c;
        }
    }
    if crossed & ((1 << used) - 1) != 0 {
        return Err(TreeError::Crossed { node: i });
    }
    Ok((child, used))
}

/// Whether a 4-wide tree of `inner` nodes can hold `leaves` leaves: a node
/// has 2 to 4 children, so L leaves need between ⌈(L-1)/3⌉ and L-1 nodes.
/// `Ok(false)` for the empty tree (nothing to walk).
pub(super) fn node_count(inner: usize, leaves: usize) -> Result<bool, TreeError> {
    if leaves == 0 || inner > leaves - 1 || inner * (WIDTH - 1) < leaves - 1 {
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

/// How many of a node's child slots are used: two to four, empty ones last.
#[inline]
fn slots(node: usize, child: &[u32; WIDTH]) -> Result<usize, TreeError> {
    let used = child.iter().take_while(|&&c| c != EMPTY).count();
    if used < 2 || child[used..].iter().any(|&c| c != EMPTY) {
        return Err(TreeError::Slots { node });
    }
    Ok(used)
}

/// Trees with at least this many inner nodes are checked in pieces on the
/// rayon pool (`check_order`; smaller ones are not worth waking a
/// thread for).
pub const PARALLEL_TREE_NODES: usize = 1 << 12;

/// The order, coverage and depth checks of a 4-wide tree of `inner` nodes
/// over `leaves` leaves, rooted at `root`, in one tight depth-first walk:
/// inner nodes and leaves must be met in index order, each once, no deeper
/// than [`MAX_DEPTH`]. `node(i)` checks inner node `i` on its own and gives
/// its child references and how many are used; `leaf_ok(leaf, count)`
/// checks a leaf's triangle (or instance) count.
///
/// A large tree is first checked in parallel pieces ([`check_pieces`]);
/// when any piece fails, the serial walk runs to name the first error, so
/// the error does not depend on the thread count.
pub(super) fn check_order(
    root: u32,
    inner: usize,
    leaves: usize,
    node: impl Fn(usize) -> Result<([u32; WIDTH], usize), TreeError> + Sync,
    leaf_ok: impl Fn(usize, u32) -> Result<(), TreeError> + Sync,
) -> Result<(), TreeError> {
    if inner >= PARALLEL_TREE_NODES && check_pieces(root, inner, leaves, &node, &leaf_ok) {
        return Ok(());
    }
    check_range(root, 1, (0, 0), (inner, leaves), leaves, &node, &leaf_ok)
}

/// [`check_order`]'s walk split into pieces two levels below the root:
/// the root's inner children each become a *node* piece (the serial walk
/// meets that node alone: it must come exactly where the numbering
/// stands) followed by their children, and every child is walked on its
/// own (leaves included), from the inner and leaf numbers it claims to
/// start at (its own index, and the first leaf down its first children) to
/// the next piece's claim (the last to the tree's end). The pieces chain
/// from (1, 0), right after the root, to (`inner`, `leaves`), and each is
/// exactly the serial walk's stretch for it, so all of them passing is the
/// serial walk passing. Any doubt (a root that is not node 0, a claim that
/// cannot be read) answers `false`.
fn check_pieces(
    root: u32,
    inner: usize,
    leaves: usize,
    node: &(impl Fn(usize) -> Result<([u32; WIDTH], usize), TreeError> + Sync),
    leaf_ok: &(impl Fn(usize, u32) -> Result<(), TreeError> + Sync),
) -> bool {
    use rayon::prelude::*;
    /// A piece: a subtree walked whole, or an inner node met on its own.
    #[derive(Clone, Copy)]
    enum Piece {
        Subtree(u32, u32),
        Node(u32),
    }
    if root != 0 {
        return false;
    }
    let Ok((top, used)) = node(0) else {
        return false;
    };
    let mut pieces = Vec::with_capacity(WIDTH * (WIDTH + 1));
    for &c in &top[..used] {
        if c & LEAF_BIT != 0 || c as usize >= inner {
            pieces.push(Piece::Subtree(c, 2));
            continue;
        }
        let Ok((below, n)) = node(c as usize) else {
            return false;
        };
        pieces.push(Piece::Node(c));
        pieces.extend(below[..n].iter().map(|&g| Piece::Subtree(g, 3)));
    }
    // the first leaf met below `r`: down the first children
    let first_leaf = |mut r: u32| -> Option<usize> {
        for _ in 0..MAX_DEPTH {
            if r & LEAF_BIT != 0 {
                return Some(leaf_range(r & !LEAF_BIT).0 as usize);
            }
            if r as usize >= inner {
                return None;
            }
            r = node(r as usize).ok()?.0[0];
        }
        None
    };
    let mut starts = vec![(inner, leaves); pieces.len() + 1];
    for k in (0..pieces.len()).rev() {
        starts[k] = match pieces[k] {
            Piece::Subtree(c, _) if c & LEAF_BIT != 0 => {
                (starts[k + 1].0, leaf_range(c & !LEAF_BIT).0 as usize)
            }
            Piece::Subtree(c, _) | Piece::Node(c) => match first_leaf(c) {
                Some(l) => (c as usize, l),
                None => return false,
            },
        };
    }
    starts[0] == (1, 0)
        && (0..pieces.len()).into_par_iter().all(|k| match pieces[k] {
            // met alone: numbered where the walk stands, the next piece
            // right after it (its own check ran when it was split)
            Piece::Node(c) => starts[k + 1] == (c as usize + 1, starts[k].1),
            Piece::Subtree(c, depth) => {
                check_range(c, depth, starts[k], starts[k + 1], leaves, node, leaf_ok).is_ok()
            }
        })
}

/// The walk of [`check_order`] over the subtree at `root` (met at depth
/// `depth`), which must number its inner nodes and leaves from `start` up
/// to `end` (exclusive), each in order, each once; `prims` is the tree's
/// leaf count, for messages. A node's leading leaf children are checked on
/// the spot (most children are leaves); the rest go on a stack of
/// (reference, parent, depth).
// inlined into each caller so `node` and `leaf_ok` fold into the loop:
// left to the compiler (two callers) the 2.1M-triangle terrain's walk took
// 13.5 ms instead of 9.6 (`profile_queries open`)
#[inline(always)]
fn check_range(
    root: u32,
    depth: u32,
    start: (usize, usize),
    end: (usize, usize),
    prims: usize,
    node: &impl Fn(usize) -> Result<([u32; WIDTH], usize), TreeError>,
    leaf_ok: &impl Fn(usize, u32) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let (mut next_inner, mut next_leaf) = start;
    let mut leaf = |r: u32, parent: usize| -> Result<(), TreeError> {
        let (first, count) = leaf_range(r & !LEAF_BIT);
        if first as usize != next_leaf || next_leaf >= end.1 {
            return Err(TreeError::Leaf {
                node: parent,
                first,
                count,
                expected: next_leaf,
                prims,
            });
        }
        leaf_ok(next_leaf, count)?;
        next_leaf += 1;
        Ok(())
    };
    let mut stack: Vec<(u32, u32, u32)> = Vec::with_capacity(WIDTH * MAX_DEPTH);
    stack.push((root, 0, depth));
    while let Some((r, parent, depth)) = stack.pop() {
        if depth as usize > MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        if r & LEAF_BIT != 0 {
            leaf(r, parent as usize)?;
            continue;
        }
        if r as usize != next_inner || next_inner >= end.0 {
            return Err(TreeError::Order {
                node: parent as usize,
                child: r,
                expected: next_inner,
            });
        }
        let i = r as usize;
        next_inner += 1;
        let (child, used) = node(i)?;
        // leading leaves, counted without a branch per child (whether a
        // child is a leaf is what a branch predictor cannot guess)
        let leaf_bits = (0..WIDTH).fold(0u32, |m, c| m | (child[c] >> 31) << c);
        let lead = (!leaf_bits & ((1 << used) - 1))
            .trailing_zeros()
            .min(used as u32) as usize;
        if lead > 0 && depth as usize >= MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        for &c in &child[..lead] {
            leaf(c, i)?;
        }
        for &c in child[lead..used].iter().rev() {
            stack.push((c, i as u32, depth + 1));
        }
    }
    if next_leaf != end.1 || next_inner != end.0 {
        return Err(TreeError::Coverage {
            covered: next_leaf,
            prims,
        });
    }
    Ok(())
}

/// [`verify_mesh_tree`] plus the tree's shape statistics (decodes every
/// volume, so slower; `nodes` counts inner nodes).
pub fn mesh_tree_stats(mesh: &ArchivedTriMesh) -> Result<TreeStats, TreeError> {
    walk_mesh_tree(mesh, true)
}

fn walk_mesh_tree(mesh: &ArchivedTriMesh, with_stats: bool) -> Result<TreeStats, TreeError> {
    let leaves = mesh.leaves.len();
    let inner = mesh.tree.len();
    if !node_count(inner, leaves)? {
        return Ok(TreeStats::default());
    }
    let f = |v: &[rkyv::rend::f32_le; 3]| v.map(|x| x.to_native());
    let (box_nodes, sphere_nodes, frame): (&[ArchivedBoxNode], &[ArchivedSphereNode], _) =
        match &mesh.tree {
            ArchivedMeshTree::Boxes(n) => (n.as_slice(), &[], SphereFrame::default()),
            ArchivedMeshTree::Spheres(t) => (
                &[],
                t.nodes.as_slice(),
                SphereFrame {
                    origin: f(&t.frame.origin),
                    scale: f(&t.frame.scale),
                    radius_scale: t.frame.radius_scale.to_native(),
                    root: t.frame.root.map(|x| x.to_native()),
                },
            ),
        };
    let boxes = matches!(mesh.tree, ArchivedMeshTree::Boxes(_));
    let ball = |q: [u16; 4]| {
        let (c, r) = frame.decode(q);
        Vol::Ball(c, r)
    };
    let root_vol = if boxes {
        Vol::Box(f(&mesh.min), f(&mesh.max))
    } else {
        ball(frame.root)
    };
    let refs = |i: usize| {
        if boxes {
            box_nodes[i].child.map(|c| c.to_native())
        } else {
            sphere_nodes[i].child.map(|c| c.to_native())
        }
    };
    // the volume of child `c` of inner node `i`, whose volume is `vol`
    let child_vol = |i: usize, c: usize, vol: Vol| -> Vol {
        if !with_stats {
            return vol;
        }
        if boxes {
            let n = &box_nodes[i];
            let Vol::Box(pmin, pmax) = vol else {
                unreachable!("box trees hold boxes")
            };
            let step: [f32; 3] = std::array::from_fn(|k| box_step(pmin[k], pmax[k]));
            Vol::Box(
                std::array::from_fn(|k| decode_lo(pmin[k], step[k], n.lo[k][c])),
                std::array::from_fn(|k| decode_hi(pmax[k], step[k], n.hi[k][c])),
            )
        } else {
            ball(sphere_nodes[i].sphere.map(|q| q[c].to_native()))
        }
    };
    let mut stats = TreeStats {
        nodes: inner,
        ..TreeStats::default()
    };
    let (mut next_inner, mut next_leaf) = (0usize, 0usize);
    let mut sah = 0.0f64;
    // (reference, parent, depth, volume); first child pushed last, visited first
    let mut stack = Vec::with_capacity(WIDTH * MAX_DEPTH);
    stack.push((mesh.root.to_native(), 0usize, 1usize, root_vol));
    while let Some((r, parent, depth, vol)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        stats.depth = stats.depth.max(depth);
        if r & LEAF_BIT != 0 {
            let (leaf, count) = leaf_range(r & !LEAF_BIT);
            if leaf as usize != next_leaf || next_leaf >= leaves {
                return Err(TreeError::Leaf {
                    node: parent,
                    first: leaf,
                    count,
                    expected: next_leaf,
                    prims: leaves,
                });
            }
            let second = mesh.source_ids[next_leaf][1].to_native() != u32::MAX;
            if (count == 2) != second {
                return Err(TreeError::LeafCount {
                    leaf: next_leaf,
                    count,
                });
            }
            next_leaf += 1;
            stats.leaves += 1;
            if with_stats {
                sah += vol.area() * f64::from(count);
            }
            continue;
        }
        if r as usize != next_inner || next_inner >= inner {
            return Err(TreeError::Order {
                node: parent,
                child: r,
                expected: next_inner,
            });
        }
        let i = r as usize;
        next_inner += 1;
        let child = refs(i);
        let used = child.iter().take_while(|&&c| c != EMPTY).count();
        if used < 2 || child[used..].iter().any(|&c| c != EMPTY) {
            return Err(TreeError::Slots { node: i });
        }
        if boxes {
            let n = &box_nodes[i];
            let crossed = (0..used)
                .any(|c| (0..3).any(|k| u16::from(n.lo[k][c]) + u16::from(n.hi[k][c]) > 255));
            if crossed {
                return Err(TreeError::Crossed { node: i });
            }
        }
        if with_stats {
            sah += vol.area();
        }
        for c in (0..used).rev() {
            stack.push((child[c], i, depth + 1, child_vol(i, c, vol)));
        }
    }
    if next_leaf != leaves || next_inner != inner {
        return Err(TreeError::Coverage {
            covered: next_leaf,
            prims: leaves,
        });
    }
    let root_area = root_vol.area();
    stats.sah_cost = if root_area > 0.0 {
        sah / root_area
    } else {
        0.0
    };
    Ok(stats)
}

/// Checks a TriMesh shape: finite vertices, leaf indices in range, source
/// ids parallel to leaves, a finite decoding frame, and its tree
/// ([`verify_mesh_tree`]).
pub fn verify_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    // the sizes the tree walk relies on first (it reads a source id per leaf)
    if mesh.source_ids.len() != mesh.leaves.len() || mesh.flat_edges.len() != mesh.leaves.len() {
        return Err(VerifyError::SourceIds {
            mesh: m,
            triangles: mesh.leaves.len(),
            ids: mesh.source_ids.len().min(mesh.flat_edges.len()),
        });
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

/// Every vertex finite, every leaf's vertex indices in range.
fn scan_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    let vertices = mesh.vertices.len();
    if let Some(v) = mesh
        .vertices
        .iter()
        .position(|p| !p.iter().all(|c| c.to_native().is_finite()))
    {
        return Err(VerifyError::Vertex { mesh: m, vertex: v });
    }
    for (t, leaf) in mesh.leaves.iter().enumerate() {
        for v in leaf.iter().map(|v| v.to_native()) {
            if v as usize >= vertices {
                return Err(VerifyError::VertexIndex {
                    mesh: m,
                    triangle: t,
                    vertex: v,
                    vertices,
                });
            }
        }
    }
    Ok(())
}
