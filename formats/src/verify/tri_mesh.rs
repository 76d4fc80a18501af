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

/// The order, coverage and depth checks of a 4-wide tree of `inner` nodes
/// over `leaves` leaves, rooted at `root`, in one tight depth-first walk:
/// inner nodes and leaves must be met in index order, each once, no deeper
/// than [`MAX_DEPTH`]. `node(i)` checks inner node `i` on its own and gives
/// its child references and how many are used; `leaf_ok(leaf, count)`
/// checks a leaf's triangle (or instance) count. A node's leading leaf
/// children are checked on the spot (most children are leaves); the rest go
/// on a stack of (reference, parent, depth).
// inlined into each caller so `node` and `leaf_ok` fold into the loop:
// left to the compiler (two callers) the 2.1M-triangle terrain's walk took
// 13.5 ms instead of 9.6 (`profile_queries open`)
#[inline(always)]
pub(super) fn check_order(
    root: u32,
    inner: usize,
    leaves: usize,
    node: impl Fn(usize) -> Result<([u32; WIDTH], usize), TreeError>,
    leaf_ok: impl Fn(usize, u32) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let (mut next_inner, mut next_leaf) = (0usize, 0usize);
    let mut leaf = |r: u32, parent: usize| -> Result<(), TreeError> {
        let (first, count) = leaf_range(r & !LEAF_BIT);
        if first as usize != next_leaf || next_leaf >= leaves {
            return Err(TreeError::Leaf {
                node: parent,
                first,
                count,
                expected: next_leaf,
                prims: leaves,
            });
        }
        leaf_ok(next_leaf, count)?;
        next_leaf += 1;
        Ok(())
    };
    let mut stack: Vec<(u32, u32, u32)> = Vec::with_capacity(WIDTH * MAX_DEPTH);
    stack.push((root, 0, 1));
    while let Some((r, parent, depth)) = stack.pop() {
        if depth as usize > MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        if r & LEAF_BIT != 0 {
            leaf(r, parent as usize)?;
            continue;
        }
        if r as usize != next_inner || next_inner >= inner {
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
    if next_leaf != leaves || next_inner != inner {
        return Err(TreeError::Coverage {
            covered: next_leaf,
            prims: leaves,
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
    verify_mesh_tree(mesh).map_err(|source| VerifyError::MeshTree { mesh: m, source })?;
    Ok(())
}
