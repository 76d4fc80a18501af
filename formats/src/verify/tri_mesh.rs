//! Verification of the TriMesh shape: vertices, leaves and the 4-wide
//! tree (see [`crate::tri_mesh`]).

use super::{TreeError, TreeStats, VerifyError};
use crate::level::{MAX_DEPTH, leaf_range};
use crate::tri_mesh::{
    ArchivedBoxNode, ArchivedLeaf, ArchivedMeshTree, ArchivedSphereNode, ArchivedTriMesh, EMPTY,
    FLAT_BITS, LEAF_BIT, SECOND_LISTED, SphereFrame, WIDTH, box_step, decode_hi, decode_lo,
    dequantize,
};
use rayon::prelude::*;

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
/// node and leaf is reached exactly once and the walk cannot loop), depth
/// at most [`MAX_DEPTH`], child-box codes that cannot cross (lower + upper
/// code ≤ 255 per axis).
///
/// A leaf reference's triangle count (1 or 2) is what walks test; it is
/// not checked against the leaf's own `d = c` (which only readers without
/// the tree use): a disagreement can only make a query test the
/// degenerate triangle `(c, b, c)` or skip a stored one, never read out of
/// bounds, and the body checksum already refuses accidental damage.
pub fn verify_mesh_tree(mesh: &ArchivedTriMesh) -> Result<(), TreeError> {
    let leaves = mesh.leaves.len();
    let inner = mesh.tree.len();
    if !node_count(inner, leaves)? {
        return Ok(());
    }
    let root = mesh.root.to_native();
    match &mesh.tree {
        ArchivedMeshTree::Boxes(nodes) => check_order(root, inner, leaves, &MeshTree { nodes }),
        ArchivedMeshTree::Spheres(t) => check_order(
            root,
            inner,
            leaves,
            &MeshTree {
                nodes: t.nodes.as_slice(),
            },
        ),
    }
}

/// A 4-wide tree as [`check_order`]'s walk sees it. Its two checks are
/// methods of a type rather than closures so that they always fold into
/// the walk's loop (as called closures the terrain's walk spent a third of
/// its time passing their results through memory).
pub(super) trait Wide: Sync {
    /// Checks inner node `i` on its own; gives its child references and
    /// how many are used.
    fn node(&self, i: usize) -> Result<([u32; WIDTH], usize), TreeError>;
    /// Checks the primitive count `count` of leaf `leaf`.
    fn leaf(&self, leaf: usize, count: u32) -> Result<(), TreeError>;
    /// Whether [`Wide::leaf`] passes, for a `leaf` that may be out of
    /// range (any answer then, but no panic).
    fn leaf_fits(&self, leaf: u32, count: u32) -> bool;
}

/// A mesh's tree of box or sphere nodes (`N`).
struct MeshTree<'a, N> {
    nodes: &'a [N],
}

/// A kind of mesh-tree node, checked on its own.
trait MeshNode: Sized + Sync {
    /// [`Wide::node`] for node `i` of `nodes`.
    fn check(nodes: &[Self], i: usize) -> Result<([u32; WIDTH], usize), TreeError>;
}

impl MeshNode for ArchivedBoxNode {
    #[inline(always)]
    fn check(nodes: &[Self], i: usize) -> Result<([u32; WIDTH], usize), TreeError> {
        box_node(nodes, i)
    }
}

impl MeshNode for ArchivedSphereNode {
    #[inline(always)]
    fn check(nodes: &[Self], i: usize) -> Result<([u32; WIDTH], usize), TreeError> {
        let child = nodes[i].child.map(|c| c.to_native());
        let used = slots(i, &child)?;
        Ok((child, used))
    }
}

impl<N: MeshNode> Wide for MeshTree<'_, N> {
    #[inline(always)]
    fn node(&self, i: usize) -> Result<([u32; WIDTH], usize), TreeError> {
        N::check(self.nodes, i)
    }
    /// A mesh leaf reference may count one or two triangles (see
    /// [`verify_mesh_tree`]).
    #[inline(always)]
    fn leaf(&self, _leaf: usize, _count: u32) -> Result<(), TreeError> {
        Ok(())
    }
    #[inline(always)]
    fn leaf_fits(&self, _leaf: u32, _count: u32) -> bool {
        true
    }
}

/// Checks box node `i` on its own: its slots, and that no used child's
/// lower and upper codes cross; gives its children and how many are used.
#[inline(always)]
pub(super) fn box_node(
    nodes: &[ArchivedBoxNode],
    i: usize,
) -> Result<([u32; WIDTH], usize), TreeError> {
    let n = &nodes[i];
    let child = n.child.map(|c| c.to_native());
    let used = slots(i, &child)?;
    // a lower and upper code cross when their sum carries out of a byte:
    // four slots at once per axis (the carry out of bit 7 is the majority
    // of the two top bits and the carry into it), the unused masked off
    let mut carry = 0u32;
    for k in 0..3 {
        let (l, h) = (u32::from_le_bytes(n.lo[k]), u32::from_le_bytes(n.hi[k]));
        let low = (l & 0x7f7f_7f7f) + (h & 0x7f7f_7f7f);
        carry |= (l & h) | ((l | h) & low);
    }
    let used_bytes = (u64::MAX >> (64 - 8 * used)) as u32;
    if carry & 0x8080_8080 & used_bytes != 0 {
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
#[inline(always)]
fn slots(node: usize, child: &[u32; WIDTH]) -> Result<usize, TreeError> {
    // the empty slots as a mask, without a branch per slot: they must run
    // to the last slot and leave at least two used
    let empty = (0..WIDTH).fold(0u32, |m, c| m | u32::from(child[c] == EMPTY) << c);
    let used = empty.trailing_zeros().min(WIDTH as u32) as usize;
    if used < 2 || empty >> used != (1 << (WIDTH - used)) - 1 {
        return Err(TreeError::Slots { node });
    }
    Ok(used)
}

/// Trees with at least this many inner nodes are checked in pieces on the
/// rayon pool (`check_order`; smaller ones are not worth waking a
/// thread for).
pub const PARALLEL_TREE_NODES: usize = 1 << 12;

/// The order, coverage and depth checks of a 4-wide tree of `inner` nodes
/// over `leaves` leaves, rooted at `root`: in a depth-first walk, inner
/// nodes and leaves must be met in index order, each once, no deeper than
/// [`MAX_DEPTH`]. `tree.node(i)` checks inner node `i` on its own and
/// gives its child references and how many are used; `tree.leaf(leaf,
/// count)` checks a leaf's triangle (or instance) count.
///
/// The verdict comes from [`range_ok`]'s scan, over the whole tree or, for
/// a large one, in parallel pieces ([`check_pieces`]). Only when it fails
/// does the walk itself ([`check_range`]) run, serially, to name the first
/// error, so the error does not depend on the thread count.
pub(super) fn check_order(
    root: u32,
    inner: usize,
    leaves: usize,
    tree: &impl Wide,
) -> Result<(), TreeError> {
    let quick = if inner >= PARALLEL_TREE_NODES {
        check_pieces(root, inner, leaves, tree)
    } else {
        range_ok(root, 1, (0, 0), (inner, leaves), tree)
    };
    if quick {
        return Ok(());
    }
    check_range(root, 1, (0, 0), (inner, leaves), leaves, tree)
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
fn check_pieces(root: u32, inner: usize, leaves: usize, tree: &impl Wide) -> bool {
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
    let Ok((top, used)) = tree.node(0) else {
        return false;
    };
    let mut pieces = Vec::with_capacity(WIDTH * (WIDTH + 1));
    for &c in &top[..used] {
        if c & LEAF_BIT != 0 || c as usize >= inner {
            pieces.push(Piece::Subtree(c, 2));
            continue;
        }
        let Ok((below, n)) = tree.node(c as usize) else {
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
            r = tree.node(r as usize).ok()?.0[0];
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
            Piece::Subtree(c, depth) => range_ok(c, depth, starts[k], starts[k + 1], tree),
        })
}

/// A finished subtree waiting for its parent in [`range_ok`]'s scan: the
/// inner and leaf numbers it starts at and ends before, and its height
/// in inner levels.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Span {
    start: (u32, u32),
    end: (u32, u32),
    height: u32,
}

/// Most finished subtrees that wait at once in [`range_ok`]'s scan of a
/// valid tree, plus its sentinel. Those waiting after node `i` is scanned
/// are `i` and the later siblings of the nodes on its path up (a parent
/// before `i` holds `i` in its contiguous subtree, so it is an ancestor):
/// at most `WIDTH - 1` for each of fewer than [`MAX_DEPTH`] ancestors.
const SPANS: usize = WIDTH * MAX_DEPTH + 2;

/// [`check_range`]'s verdict, by a scan instead of a walk: inner nodes
/// `end.0 - 1` down to `start.0`, each once, in storage order. A walk
/// pushes and pops every child and lets each child's kind decide what
/// runs next, which a branch predictor cannot guess (on the 2.1M-triangle
/// terrain a third of the nodes mix leaves and nodes); here a node's
/// children only update a few numbers.
///
/// The scan runs the depth-first walk backwards (in depth-first order a
/// subtree is a contiguous run of nodes that starts at its root).
/// When node `i` is scanned, the subtrees of its inner children are done
/// and wait on a stack, the one that must start right after `i` on top.
/// Node `i` takes its children in slot order: a leaf must be the leaf
/// number reached so far, an inner child must be the top subtree and
/// start exactly at the inner and leaf numbers reached so far, whose end
/// it then continues from. It leaves its own span on the stack. The piece
/// passes when one span remains, rooted at `root`, from `start` to
/// `end`, no deeper than [`MAX_DEPTH`] from `depth`. This accepts exactly
/// the trees that the walk does: each node's span is what the walk
/// numbers inside its subtree.
#[inline(always)]
fn range_ok(
    root: u32,
    depth: u32,
    start: (usize, usize),
    end: (usize, usize),
    tree: &impl Wide,
) -> bool {
    // numbers that fit the u32 arithmetic below (leaf payloads are
    // smaller than MAX_PRIMITIVES, inner references below LEAF_BIT)
    if end.1 > crate::level::MAX_PRIMITIVES as usize || end.0 >= LEAF_BIT as usize {
        return false;
    }
    let (s, e) = (
        (start.0 as u32, start.1 as u32),
        (end.0 as u32, end.1 as u32),
    );
    if root & LEAF_BIT != 0 {
        let (first, count) = leaf_range(root & !LEAF_BIT);
        return s.0 == e.0 && first == s.1 && s.1 + 1 == e.1 && tree.leaf_fits(first, count);
    }
    if root != s.0 || s.0 >= e.0 {
        return false;
    }
    // a sentinel at the bottom, which no inner child can match
    let never = Span {
        start: (u32::MAX, u32::MAX),
        end: (0, 0),
        height: 0,
    };
    let mut spans = [never; SPANS];
    let mut top = 1;
    for i in (s.0..e.0).rev() {
        let Ok((child, used)) = tree.node(i as usize) else {
            return false;
        };
        let mut at = (i + 1, 0);
        let mut first_leaf = 0;
        let mut height = 1;
        let mut ok = true;
        for (k, &c) in child.iter().enumerate().take(used) {
            let leaf = c & LEAF_BIT != 0;
            let (number, count) = leaf_range(c & !LEAF_BIT);
            let span = spans[top - 1];
            if k == 0 {
                at.1 = if leaf { number } else { span.start.1 };
                first_leaf = at.1;
            }
            if leaf {
                ok &= number == at.1 && tree.leaf_fits(number, count);
                at.1 += 1;
            } else {
                ok &= c == at.0 && span.start == at;
                at = span.end;
                height = height.max(span.height + 1);
                top -= 1;
            }
            if top == 0 {
                return false;
            }
        }
        if !ok || top == SPANS {
            return false;
        }
        spans[top] = Span {
            start: (i, first_leaf),
            end: at,
            height,
        };
        top += 1;
    }
    top == 2
        && spans[1].start == s
        && spans[1].end == e
        && depth + spans[1].height <= MAX_DEPTH as u32
}

/// The walk of [`check_order`] over the subtree at `root` (met at depth
/// `depth`), which must number its inner nodes and leaves from `start` up
/// to `end` (exclusive), each in order, each once; `prims` is the tree's
/// leaf count, for messages. A node's leading leaf children are checked on
/// the spot (most children are leaves); the rest go on a stack of
/// (reference, parent, depth). It runs only on a tree that
/// [`range_ok`] refused.
fn check_range(
    root: u32,
    depth: u32,
    start: (usize, usize),
    end: (usize, usize),
    prims: usize,
    tree: &impl Wide,
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
        tree.leaf(next_leaf, count)?;
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
        let (child, used) = tree.node(i)?;
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

/// Checks a TriMesh shape: finite vertices, leaf corners in range and
/// reserved bits zero, source ids parallel to leaves, the listed second
/// ids exactly the flagged leaves, a finite decoding frame, and its tree
/// ([`verify_mesh_tree`]).
pub fn verify_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    if mesh.source_ids.len() != mesh.leaves.len() {
        return Err(VerifyError::SourceIds {
            mesh: m,
            triangles: mesh.leaves.len(),
            ids: mesh.source_ids.len(),
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

/// Items per task of a large mesh's vertex and leaf scans.
const SCAN_CHUNK: usize = 1 << 15;

/// Every vertex finite; every leaf's corners in range and its reserved
/// bits zero; the second-id list exactly the flagged leaves, ascending.
fn scan_tri_mesh(m: usize, mesh: &ArchivedTriMesh) -> Result<(), VerifyError> {
    let vertices = mesh.vertices.len();
    let parallel = mesh.leaves.len() >= PARALLEL_LEAVES;
    // the verdicts first, in chunks on the pool for a large mesh and
    // without branches inside a chunk; the item at fault only when there
    // is one, found serially so the error never depends on the threads
    let finite =
        |c: &[rkyv::rend::f32_le]| c.iter().fold(true, |ok, v| ok & v.to_native().is_finite());
    let flat = mesh.vertices.as_flattened();
    let all_finite = if parallel {
        flat.par_chunks(SCAN_CHUNK).all(finite)
    } else {
        finite(flat)
    };
    if !all_finite {
        let v = mesh
            .vertices
            .iter()
            .position(|p| !p.iter().all(|c| c.to_native().is_finite()))
            .expect("a vertex failed");
        return Err(VerifyError::Vertex { mesh: m, vertex: v });
    }
    // every corner in `0..vertices`: computed in i64 and read as u64, a
    // corner below 0 lands past any count, so one unsigned maximum decides
    let n = vertices as u64;
    let fits = |leaf: &ArchivedLeaf| {
        let a = i64::from(leaf.a.to_native());
        let c = leaf
            .offset
            .each_ref()
            .map(|o| (a + i64::from(o.to_native())) as u64);
        ((a as u64).max(c[0]).max(c[1]).max(c[2]) < n)
            & ((leaf.bits & !FLAT_BITS == 0)
                | ((leaf.bits & !FLAT_BITS == SECOND_LISTED) & (leaf.delta == 0)))
    };
    let scan = |c: &[ArchivedLeaf]| {
        c.iter().fold((true, 0usize), |(all, flagged), leaf| {
            (
                all & fits(leaf),
                flagged + usize::from(leaf.bits & SECOND_LISTED != 0),
            )
        })
    };
    let (all, flagged) = if parallel {
        mesh.leaves
            .par_chunks(SCAN_CHUNK)
            .map(scan)
            .reduce(|| (true, 0), |x, y| (x.0 & y.0, x.1 + y.1))
    } else {
        scan(&mesh.leaves)
    };
    if !all {
        let (t, leaf) = mesh
            .leaves
            .iter()
            .enumerate()
            .find(|(_, l)| !fits(l))
            .expect("a leaf failed");
        if let Some(&v) = leaf.corners().iter().find(|&&v| v as usize >= vertices) {
            return Err(VerifyError::VertexIndex {
                mesh: m,
                triangle: t,
                vertex: v,
                vertices,
            });
        }
        return Err(VerifyError::LeafBits { mesh: m, leaf: t });
    }
    // ascending, each flagged, as many as flagged: exactly the flagged set
    let entries = mesh.second_ids.len();
    let mut last = None;
    for (e, s) in mesh.second_ids.iter().enumerate() {
        let leaf = s[0].to_native() as usize;
        let listed = mesh
            .leaves
            .get(leaf)
            .is_some_and(|l| l.bits & SECOND_LISTED != 0);
        if !listed || last.is_some_and(|p| p >= leaf) {
            return Err(VerifyError::SecondIds {
                mesh: m,
                entry: e,
                entries,
                flagged,
            });
        }
        last = Some(leaf);
    }
    if entries != flagged {
        return Err(VerifyError::SecondIds {
            mesh: m,
            entry: entries,
            entries,
            flagged,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::leaf_data;

    /// A bare 4-wide tree for the order checks: child references per
    /// node, and each leaf's primitive count.
    #[derive(Clone)]
    struct Bare {
        nodes: Vec<[u32; WIDTH]>,
        counts: Vec<u32>,
    }

    impl Wide for Bare {
        fn node(&self, i: usize) -> Result<([u32; WIDTH], usize), TreeError> {
            let child = self.nodes[i];
            Ok((child, slots(i, &child)?))
        }
        fn leaf(&self, leaf: usize, count: u32) -> Result<(), TreeError> {
            if self.counts[leaf] != count {
                return Err(TreeError::LeafSize {
                    node: leaf,
                    count,
                    max: self.counts[leaf],
                });
            }
            Ok(())
        }
        fn leaf_fits(&self, leaf: u32, count: u32) -> bool {
            let last = self.counts.len() - 1;
            self.counts[(leaf as usize).min(last)] == count
        }
    }

    /// xorshift64*, for reproducible trees.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
        }
    }

    impl Bare {
        fn new_leaf(&mut self, rng: &mut Rng) -> u32 {
            let count = 1 + rng.below(2) as u32;
            self.counts.push(count);
            LEAF_BIT | leaf_data(self.counts.len() as u32 - 1, count)
        }

        /// A random subtree numbered depth-first, as the baker numbers
        /// trees; its reference. `budget` bounds the inner nodes.
        fn grow(&mut self, rng: &mut Rng, depth: usize, budget: &mut usize) -> u32 {
            if *budget == 0 || depth >= 14 || (depth > 1 && rng.below(4) == 0) {
                return self.new_leaf(rng);
            }
            *budget -= 1;
            let i = self.nodes.len();
            self.nodes.push([EMPTY; WIDTH]);
            let used = 2 + rng.below(3) as usize;
            for c in 0..used {
                self.nodes[i][c] = self.grow(rng, depth + 1, budget);
            }
            i as u32
        }

        /// A chain of `inner` nodes, each with one leaf and the next node
        /// (in either order), the last with two leaves: `inner` levels
        /// of inner nodes.
        fn chain(inner: usize, rng: &mut Rng) -> Bare {
            let mut t = Bare {
                nodes: vec![],
                counts: vec![],
            };
            for i in 0..inner {
                t.nodes.push([EMPTY; WIDTH]);
                let leaf = t.new_leaf(rng);
                let next = if i + 1 < inner {
                    i as u32 + 1
                } else {
                    t.new_leaf(rng)
                };
                let pair = if rng.below(2) == 0 {
                    [leaf, next]
                } else {
                    [next, leaf]
                };
                t.nodes[i][..2].copy_from_slice(&pair);
            }
            // the leaves must be numbered in walk order: renumber them
            let mut order = vec![];
            let mut stack = vec![0u32];
            while let Some(r) = stack.pop() {
                if r & LEAF_BIT != 0 {
                    order.push(r);
                    continue;
                }
                let n = t.nodes[r as usize];
                stack.extend(n.iter().rev().filter(|&&c| c != EMPTY));
            }
            for node in &mut t.nodes {
                for c in node
                    .iter_mut()
                    .filter(|c| **c != EMPTY && **c & LEAF_BIT != 0)
                {
                    let k = order.iter().position(|r| r == c).unwrap() as u32;
                    let count = leaf_range(*c & !LEAF_BIT).1;
                    t.counts[k as usize] = count;
                    *c = LEAF_BIT | leaf_data(k, count);
                }
            }
            t
        }

        fn full(&self) -> Result<(), TreeError> {
            let (n, l) = (self.nodes.len(), self.counts.len());
            check_range(0, 1, (0, 0), (n, l), l, self)
        }

        fn scan(&self) -> bool {
            range_ok(0, 1, (0, 0), (self.nodes.len(), self.counts.len()), self)
        }
    }

    fn random_tree(rng: &mut Rng, budget: usize) -> Bare {
        let mut t = Bare {
            nodes: vec![],
            counts: vec![],
        };
        let mut b = budget;
        while t.nodes.is_empty() {
            t.counts.clear();
            t.grow(rng, 1, &mut b);
        }
        t
    }

    /// A word a broken or hostile tree might hold in a child slot.
    fn damage(rng: &mut Rng, t: &Bare, old: u32) -> u32 {
        let (n, l) = (t.nodes.len() as u64, t.counts.len() as u32);
        match rng.below(6) {
            0 => rng.below(n + 2) as u32,
            1 => EMPTY,
            2 => LEAF_BIT | leaf_data(rng.below(u64::from(l) + 1) as u32, 1 + rng.below(2) as u32),
            3 => old ^ 1 << rng.below(32),
            4 => old.wrapping_add(rng.below(3) as u32).wrapping_sub(1),
            _ => rng.below(1 << 32) as u32,
        }
    }

    /// The scan accepts exactly the trees the walk accepts: every valid
    /// random tree, and the walk's verdict on 20,000 damaged ones (child
    /// references swapped for other nodes, leaves, empty slots, flipped
    /// bits; leaf sizes changed).
    #[test]
    fn the_scan_and_the_walk_agree_on_every_tree() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut rejected, mut accepted) = (0, 0);
        for round in 0..400 {
            let t = random_tree(&mut rng, 1 + round % 60);
            assert_eq!(t.full(), Ok(()), "round {round}: a valid tree");
            assert!(t.scan(), "round {round}: the scan refuses a valid tree");
            for _ in 0..50 {
                let mut bad = t.clone();
                if rng.below(8) == 0 {
                    let k = rng.below(bad.counts.len() as u64) as usize;
                    bad.counts[k] = 3 - bad.counts[k];
                } else {
                    let i = rng.below(bad.nodes.len() as u64) as usize;
                    let c = rng.below(WIDTH as u64) as usize;
                    bad.nodes[i][c] = damage(&mut rng, &bad, bad.nodes[i][c]);
                }
                let walk = bad.full().is_ok();
                assert_eq!(bad.scan(), walk, "round {round}: {:?}", bad.nodes);
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

    /// The depth limit, at its edge: inner nodes may sit down to level
    /// `MAX_DEPTH - 1` (their leaves one below).
    #[test]
    fn the_scan_and_the_walk_agree_at_the_depth_limit() {
        let mut rng = Rng(5);
        for inner in [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 3] {
            let t = Bare::chain(inner, &mut rng);
            let walk = t.full();
            assert_eq!(walk.is_ok(), inner < MAX_DEPTH, "{inner}: {walk:?}");
            assert_eq!(t.scan(), walk.is_ok(), "{inner} levels");
        }
    }

    /// A tree large enough to be checked in parallel pieces passes as
    /// pieces, and a damaged one fails as pieces exactly when the walk
    /// fails.
    #[test]
    fn pieces_agree_with_the_walk() {
        let mut rng = Rng(11);
        let t = random_tree(&mut rng, 3 * PARALLEL_TREE_NODES);
        assert!(t.nodes.len() >= PARALLEL_TREE_NODES, "{}", t.nodes.len());
        let pieces = |t: &Bare| check_pieces(0, t.nodes.len(), t.counts.len(), t);
        assert!(pieces(&t));
        let (mut rejected, mut accepted) = (0, 0);
        for _ in 0..300 {
            let mut bad = t.clone();
            let i = rng.below(bad.nodes.len() as u64) as usize;
            let c = rng.below(WIDTH as u64) as usize;
            bad.nodes[i][c] = damage(&mut rng, &bad, bad.nodes[i][c]);
            let walk = bad.full().is_ok();
            // pieces may only doubt a tree the walk refuses
            assert!(!walk || pieces(&bad), "a valid damaged tree refused");
            assert!(walk || !pieces(&bad), "a broken tree passed as pieces");
            if walk {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        assert!(rejected > 100 && accepted > 5, "{rejected} / {accepted}");
    }
}
