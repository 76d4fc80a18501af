//! Turns the builder's float tree (skip-count array, one node per leaf)
//! into a mesh's archived tree: inner nodes only, each holding both
//! children's bounds, quantised and rounded outward (the compressed trees of
//! van den Bergen, GDC 2013), so every decoded volume contains the exact one and culling
//! stays conservative.
//!
//! - Boxes: 8 bits per face against the parent's *decoded* box (lower
//!   faces up from its lower face, upper faces down from its upper face,
//!   see [`kiln_formats::tri_mesh::BoxNode`]).
//! - Spheres: MeldSpheres (the Pathfinder sphere-tree article) over the same partition, computed in
//!   f64; centres and radii quantised to 16 bits against the mesh's box,
//!   radii rounded up so the decoded sphere contains the exact one.

use crate::geom::sah::BinNode as Node;
use glam::{DVec3, Vec4};
use kiln_formats::tri_mesh::{
    BoxNode, FloatBoxNode, LEAF_BIT, Links, MAX_LEAVES, MAX_NODES, MAX_WIDE_LEAVES, MAX_WIDE_NODES,
    SphereFrame, SphereNode, WIDE, WIDTH, WideNode, box_step,
};
use kiln_formats::vertices::dequantize;
use rayon::prelude::*;

/// Groups the binary skip-count tree into nodes of up to `W` children
/// (8 for a mesh's box tree, 4 for the others) by dynamic programming over the binary tree (the collapse of
/// Ylitie, Karras and Laine, "Efficient Incoherent Ray Traversal on GPUs
/// Through Compressed Wide BVHs", HPG 2017): each binary subtree is either
/// a wide node of its own or spread over up to `W - 1` slots of its parent,
/// whichever gives the lower cost; a wide node costs its surface area (the
/// chance a query enters it) plus [`NODE_PENALTY`] of the root's, and
/// leaves cost the same however they are grouped. Leaves keep their
/// left-to-right order. Returns the wide nodes in breadth-first order (the
/// archive's), none for a tree of one leaf; binary nodes that are neither a
/// wide node nor a leaf went to their parent's slots.
fn collapse<const W: usize>(nodes: &[Node]) -> Vec<Wide<W>> {
    collapse_with(nodes, NODE_PENALTY)
}

/// Levels of the collapse with fewer wide nodes than this are made on the
/// current thread.
const COLLAPSE_GRAIN: usize = 4096;

/// Whether binary node `i` is a leaf.
#[inline]
fn is_leaf(nodes: &[Node], i: usize) -> bool {
    nodes[i].end as usize == i + 1
}

/// [`collapse`] with a node penalty of `share` of the root's area.
fn collapse_with<const W: usize>(nodes: &[Node], share: f64) -> Vec<Wide<W>> {
    let area = |i: usize| half_area(&nodes[i]);
    let mut wide = Vec::with_capacity(nodes.len() / 4 + 1);
    if nodes.is_empty() || is_leaf(nodes, 0) {
        return wide;
    }
    let penalty = area(0) * share;
    let pick = picks(nodes, penalty);
    // the slots subtree `i` takes when given `j`, in left-to-right order,
    // written at `w.children[w.len..]`
    fn slots<const W: usize>(
        i: usize,
        j: usize,
        nodes: &[Node],
        pick: &[Pick<W>],
        w: &mut Wide<W>,
    ) {
        let leaf = is_leaf(nodes, i);
        let k = if leaf { 0 } else { usize::from(pick[i][j - 1]) };
        if k == 0 {
            let c = w.len();
            w.children[c] = i as u32;
            if leaf {
                w.leaf_mask |= 1 << c;
                w.leaf_data[c] = nodes[i].data;
            }
            w.len += 1;
        } else {
            slots(i + 1, k, nodes, pick, w);
            slots(nodes[i + 1].end as usize, j - k, nodes, pick, w);
        }
    }
    // wide node `b`: its own two children spread over its slots
    let make = |b: usize| {
        let (l, r) = (b + 1, nodes[b + 1].end as usize);
        let best = usize::from(pick[b][W - 1]);
        let mut w = Wide {
            node: b as u32,
            children: [0; W],
            leaf_mask: 0,
            len: 0,
            leaf_data: [0; W],
        };
        slots(l, best, nodes, &pick, &mut w);
        slots(r, W - best, nodes, &pick, &mut w);
        w
    };
    // breadth-first, a level at a time: each node's inner children after
    // those of the node before it. A large level's nodes are made in
    // parallel, in order (a queue taken one node at a time was 53–63 ms of
    // the 2.1M terrain's first bake on any number of threads).
    let (mut level, mut next) = (vec![0usize], Vec::new());
    while !level.is_empty() {
        let start = wide.len();
        if level.len() >= COLLAPSE_GRAIN {
            wide.par_extend(level.par_iter().map(|&b| make(b)));
        } else {
            wide.extend(level.iter().map(|&b| make(b)));
        }
        next.clear();
        for w in &wide[start..] {
            let inner = w
                .kids()
                .enumerate()
                .filter(|&(c, _)| w.leaf_mask >> c & 1 == 0);
            next.extend(inner.map(|(_, b)| b));
        }
        std::mem::swap(&mut level, &mut next);
    }
    wide
}

/// Half the surface area of a binary node's box, in f64.
fn half_area(n: &Node) -> f64 {
    let d = [0, 1, 2].map(|k| f64::from(n.max[k]) - f64::from(n.min[k]));
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

/// How binary subtree `i` is best collapsed into nodes of `W` slots:
/// `pick[j - 1]` for `j` < `W` (a child shares its parent's slots with its
/// sibling) is 0 for a wide node of its own, else the slots its left child
/// takes when the subtree has `j` slots of its parent; `pick[W - 1]` the
/// slots its left child takes when `i` is a wide node.
type Pick<const W: usize> = [u8; W];

/// Every binary node's [`Pick`] under a node penalty `penalty`, by
/// dynamic programming over the subtrees' costs (Ylitie, Karras and Laine
/// 2017).
///
/// Children come after their parent in the depth-first array, and a
/// subtree's rows are its own stretch of it, so the two halves of a large
/// subtree are filled on the pool: the result is the same at any thread
/// count (each row is a function of its children's). The costs go from a
/// child to its parent by value, never stored: the table is the picks
/// alone, 4 bytes a node (on one thread in reverse order, with the costs
/// stored, it had been 15 ms of the 2.1M terrain's bake at any number of
/// threads).
fn picks<const W: usize>(nodes: &[Node], penalty: f64) -> Vec<Pick<W>> {
    let mut pick = vec![[0u8; W]; nodes.len()];
    if !nodes.is_empty() {
        fill_picks(nodes, 0, &mut pick, penalty);
    }
    pick
}

/// Subtrees with more nodes than this have their halves' picks filled on
/// the pool.
const PICK_GRAIN: usize = 1 << 15;

/// Fills the picks of subtree `i`, `pick` being its rows (`i..end`), and
/// returns its costs in at most 1, 2, … `W - 1` slots of its parent
/// (entry `W - 1` unused; f32, the sums in the same order as ever, so the
/// same picks).
fn fill_picks<const W: usize>(
    nodes: &[Node],
    i: usize,
    pick: &mut [Pick<W>],
    penalty: f64,
) -> [f32; W] {
    if is_leaf(nodes, i) {
        return [0.0; W];
    }
    let (l, r) = (i + 1, nodes[i + 1].end as usize);
    let parallel = pick.len() > PICK_GRAIN;
    let (row, rest) = pick.split_first_mut().expect("a subtree's own row");
    let (left, right) = rest.split_at_mut(r - l);
    let (cl, cr) = if parallel {
        rayon::join(
            || fill_picks(nodes, l, left, penalty),
            || fill_picks(nodes, r, right, penalty),
        )
    } else {
        (
            fill_picks(nodes, l, left, penalty),
            fill_picks(nodes, r, right, penalty),
        )
    };
    let (best, split) = best_split(&cl, &cr, W);
    let own = (half_area(&nodes[i]) + penalty) as f32 + best;
    let mut c = [own; W];
    *row = [0; W];
    row[W - 1] = split as u8;
    for j in 2..W {
        let (s, k) = best_split(&cl, &cr, j);
        if s < c[j - 1] {
            (c[j - 1], row[j - 1]) = (s, k as u8);
        }
    }
    c
}

/// The cheapest way to spread two sibling subtrees, of costs `l` and `r`,
/// over `j` (at least 2) slots: its cost and the slots the left takes (the
/// first on ties, and the first where no cost is finite: boxes far enough
/// out, 10¹⁹ m and more, have areas past f32's range, and a split of no
/// slots would overfill the wide node).
fn best_split<const W: usize>(l: &[f32; W], r: &[f32; W], j: usize) -> (f32, usize) {
    let cost = |k: usize| (l[k - 1] + r[j - k - 1], k);
    (2..j)
        .map(cost)
        .fold(cost(1), |b, c| if c.0 < b.0 { c } else { b })
}

/// What a wide node costs beyond its area, as a share of the root's area
/// (memory and a decode per node, not only the chance of entering it).
const NODE_PENALTY: f64 = 2e-5;

/// A wide node before encoding: the binary node it stands for and the
/// binary nodes that are its children.
///
/// Which children are leaves, and each leaf's payload, are read once here,
/// where the collapse has the binary node at hand and makes a level's wide
/// nodes in parallel: the breadth-first gathering and the layout, which go
/// through the wide nodes in order on one thread, then read no binary node
/// (their scattered reads had been 16 ms of the 2.1M terrain's bake on two
/// threads).
struct Wide<const W: usize> {
    node: u32,
    children: [u32; W],
    /// Bit `c`: child `c` is a leaf.
    leaf_mask: u8,
    len: u8,
    /// Child `c`'s [`Node::data`] where it is a leaf (else 0).
    leaf_data: [u32; W],
}

impl<const W: usize> Wide<W> {
    /// The binary nodes that are this node's children, in slot order.
    fn kids(&self) -> impl DoubleEndedIterator<Item = usize> + ExactSizeIterator + '_ {
        self.children[..self.len()].iter().map(|&b| b as usize)
    }
    /// The slots used.
    fn len(&self) -> usize {
        usize::from(self.len)
    }
}

/// A tree in archive form.
pub struct Encoded<N> {
    /// The root reference: node 0, or [`LEAF_BIT`] (leaf 0) for a tree of
    /// one leaf.
    pub root: u32,
    /// Inner nodes, breadth-first (see [`Links`]).
    pub nodes: Vec<N>,
    /// For each archived leaf, in order, the builder's payload
    /// ([`Node::data`]) of the leaf it holds: the caller stores its
    /// primitives in this order.
    pub leaves: Vec<u32>,
}

/// The collapsed tree's archive layout: the root reference, each wide
/// node's links, the builder payloads of the leaves in archive order, and
/// where each level of nodes starts (plus the end).
struct Layout {
    root: u32,
    links: Vec<[u32; 2]>,
    leaves: Vec<u32>,
    levels: Vec<usize>,
}

/// Lays out the collapsed tree (wide nodes already breadth-first, see
/// [`collapse`]): each node's inner children and leaves follow those of
/// the node before it, as [`Links`] stores them. A tree of one leaf has
/// that leaf for a root and no nodes; an empty one nothing.
fn layout<const W: usize>(wide: &[Wide<W>], nodes: &[Node]) -> Layout {
    if wide.is_empty() {
        return Layout {
            root: if nodes.is_empty() { 0 } else { LEAF_BIT },
            links: Vec::new(),
            leaves: nodes.first().map(|n| n.data).into_iter().collect(),
            levels: vec![0],
        };
    }
    let mut links = Vec::with_capacity(wide.len());
    let mut leaves = Vec::with_capacity(wide.len() * 2 + 2);
    // level 0 is the root; when the scan reaches a level's end, every
    // node of the next level has been counted
    let mut levels = vec![0, 1];
    let mut next_node = 1;
    for (k, w) in wide.iter().enumerate() {
        if k == *levels.last().expect("a level") {
            levels.push(next_node);
        }
        let (first_node, first_leaf) = (next_node as u32, leaves.len() as u32);
        for (c, b) in w.kids().enumerate() {
            if w.leaf_mask >> c & 1 != 0 {
                leaves.push(w.leaf_data[c]);
            } else {
                debug_assert_eq!(wide[next_node].node as usize, b, "breadth-first");
                next_node += 1;
            }
        }
        let l = Links {
            first_node,
            first_leaf,
            leaf_mask: u32::from(w.leaf_mask),
            used: w.len as u32,
        };
        let packed = if W == WIDE { l.pack_wide() } else { l.pack() };
        links.push(packed.unwrap_or_else(|| {
            let (most_nodes, most_leaves) = if W == WIDE {
                (MAX_WIDE_NODES, MAX_WIDE_LEAVES)
            } else {
                (MAX_NODES, MAX_LEAVES)
            };
            panic!(
                "a tree of {} nodes and {} leaves is larger than an archive indexes \
                 ({most_nodes} nodes, {most_leaves} leaves)",
                wide.len(),
                leaves.len()
            )
        }));
    }
    Layout {
        root: 0,
        links,
        leaves,
        levels,
    }
}

/// Box tree in archive form.
///
/// A node's codes depend on its parent's decoded box, so the tree is
/// encoded top-down, level by level; a level's nodes are encoded in
/// parallel once the level above is done. Every node's result depends
/// only on its parent's, so the output is the same on any number of
/// threads.
pub fn encode_boxes(nodes: &[Node]) -> Encoded<BoxNode> {
    let wide = collapse::<WIDTH>(nodes);
    let layout = layout(&wide, nodes);
    let mut out = vec![BLANK; wide.len()];
    // each node's decoded box, set by its parent's level
    let mut boxes = vec![([0.0f32; 3], [0.0f32; 3]); wide.len()];
    if let Some(root) = nodes.first().filter(|_| !wide.is_empty()) {
        boxes[0] = (root.min, root.max);
    }
    let first_node = |k: usize| Links::unpack(layout.links[k]).first_node as usize;
    for (l, level) in layout.levels.windows(2).enumerate() {
        let range = level[0]..level[1];
        // this level's boxes are read; the next level's written, each
        // chunk of nodes its children's stretch (a level's inner children
        // are the next level's nodes, in order)
        let (above, below) = boxes.split_at_mut(level[1]);
        let (mine, next_end) = (&above[range.clone()], layout.levels.get(l + 2));
        let mut below = &mut below[..next_end.map_or(0, |&e| e - level[1])];
        let mut parts = Vec::with_capacity(range.len().div_ceil(ENCODE_CHUNK));
        for (c, nodes_out) in out[range.clone()].chunks_mut(ENCODE_CHUNK).enumerate() {
            let start = range.start + c * ENCODE_CHUNK;
            let end = start + nodes_out.len();
            let kids_end = if end < range.end {
                first_node(end)
            } else {
                next_end.copied().unwrap_or(level[1])
            };
            let (kid_boxes, rest) =
                std::mem::take(&mut below).split_at_mut(kids_end - first_node(start));
            below = rest;
            parts.push((start, nodes_out, kid_boxes));
        }
        let encode = |(start, nodes_out, kid_boxes): (usize, &mut [BoxNode], &mut [Decoded])| {
            // the children's exact boxes first, then the codes: a loop of
            // loads alone keeps many of these scattered reads in flight,
            // where reading them inside the encoding waited on each (a
            // third of it); a chunk at a time, so they stay in cache
            let mut kids = [[([0.0f32; 3], [0.0f32; 3], false); WIDTH]; ENCODE_CHUNK];
            for (i, kid) in kids[..nodes_out.len()].iter_mut().enumerate() {
                let w = &wide[start + i];
                *kid = std::array::from_fn(|c| {
                    let c = c.min(w.len() - 1);
                    let b = w.children[c] as usize;
                    (nodes[b].min, nodes[b].max, w.leaf_mask >> c & 1 != 0)
                });
            }
            let mut next = 0;
            for (i, node) in nodes_out.iter_mut().enumerate() {
                let k = start + i;
                let (mut b, (inner, count)) =
                    encode_box_node(&kids[i], wide[k].len(), mine[k - range.start]);
                b.links = layout.links[k];
                *node = b;
                kid_boxes[next..next + count].copy_from_slice(&inner[..count]);
                next += count;
            }
        };
        if range.len() >= ENCODE_GRAIN {
            parts.into_par_iter().for_each(encode);
        } else {
            parts.into_iter().for_each(encode);
        }
    }
    Encoded {
        root: layout.root,
        nodes: out,
        leaves: layout.leaves,
    }
}

/// A mesh's box tree in archive form: 8-wide self-framed nodes
/// ([`WideNode`]), each holding its own exact box (its binary node's) and
/// its children's codes against that box, four slots at a time by
/// `encode_box_node`. No node's codes depend on another node, so the
/// nodes are encoded in parallel, in order: the same output on any number
/// of threads.
pub fn encode_wide_boxes(nodes: &[Node]) -> Encoded<WideNode> {
    let wide = collapse::<WIDE>(nodes);
    let layout = layout(&wide, nodes);
    let make = |(w, &links): (&Wide<WIDE>, &[u32; 2])| {
        let own = &nodes[w.node as usize];
        let mut out = WideNode {
            min: own.min,
            max: own.max,
            lo: [[0; WIDE]; 3],
            hi: [[0; WIDE]; 3],
            links,
        };
        for first in (0..w.len()).step_by(WIDTH) {
            let len = (w.len() - first).min(WIDTH);
            let kids: Kids = std::array::from_fn(|c| {
                let c = first + c.min(len - 1);
                let b = w.children[c] as usize;
                (nodes[b].min, nodes[b].max, w.leaf_mask >> c & 1 != 0)
            });
            let (codes, _) = encode_box_node(&kids, len, (own.min, own.max));
            for k in 0..3 {
                out.lo[k][first..first + len].copy_from_slice(&codes.lo[k][..len]);
                out.hi[k][first..first + len].copy_from_slice(&codes.hi[k][..len]);
            }
        }
        out
    };
    let out = if wide.len() >= ENCODE_GRAIN {
        wide.par_iter()
            .zip(layout.links.par_iter())
            .map(make)
            .collect()
    } else {
        wide.iter().zip(&layout.links).map(make).collect()
    };
    Encoded {
        root: layout.root,
        nodes: out,
        leaves: layout.leaves,
    }
}

/// Box tree in archive form with plain f32 child boxes
/// ([`FloatBoxNode`]): the same collapse and layout as [`encode_boxes`],
/// each child's box its exact one (nothing to round).
pub fn encode_float_boxes(nodes: &[Node]) -> Encoded<FloatBoxNode> {
    let wide = collapse::<WIDTH>(nodes);
    let layout = layout(&wide, nodes);
    let out = wide
        .iter()
        .zip(&layout.links)
        .map(|(w, &links)| {
            let mut n = FloatBoxNode {
                lo: [[0.0; WIDTH]; 3],
                hi: [[0.0; WIDTH]; 3],
                links,
            };
            for (c, b) in w.kids().enumerate() {
                for k in 0..3 {
                    n.lo[k][c] = nodes[b].min[k];
                    n.hi[k][c] = nodes[b].max[k];
                }
            }
            n
        })
        .collect();
    Encoded {
        root: layout.root,
        nodes: out,
        leaves: layout.leaves,
    }
}

/// A box node with no children.
const BLANK: BoxNode = BoxNode {
    lo: [[0; WIDTH]; 3],
    hi: [[0; WIDTH]; 3],
    links: [0; 2],
};

/// Levels with fewer nodes than this are encoded on one thread.
const ENCODE_GRAIN: usize = 1024;

/// Wide nodes encoded together: their children's boxes gathered into a
/// buffer that stays in cache (28 KB).
const ENCODE_CHUNK: usize = 256;

/// A decoded box.
type Decoded = ([f32; 3], [f32; 3]);

/// The decoded boxes of up to [`WIDTH`] inner children, in slot order,
/// and how many.
type Inner = ([Decoded; WIDTH], usize);

/// A wide node's children as encoding needs them: exact box and whether
/// it is a leaf, in slot order (slots past the node's count repeat its
/// last child).
type Kids = [([f32; 3], [f32; 3], bool); WIDTH];

/// One wide node's codes against its decoded box `(pmin, pmax)` (links
/// left blank) from its `len` children, and its inner children's decoded
/// boxes. One axis at a time, the four slots side by side: the same float
/// operations per lane as the scalar `code_lo` / `code_hi` its tests keep
/// (so the same codes; a test holds the two to each other), about a third
/// of the time.
fn encode_box_node(kids: &Kids, len: usize, (pmin, pmax): Decoded) -> (BoxNode, Inner) {
    let mut node = BLANK;
    let mut lo_box = [Vec4::ZERO; 3];
    let mut hi_box = [Vec4::ZERO; 3];
    for k in 0..3 {
        let step = box_step(pmin[k], pmax[k]);
        let (pmin, pmax) = (Vec4::splat(pmin[k]), Vec4::splat(pmax[k]));
        let min = Vec4::from_array(kids.map(|c| c.0[k]));
        let max = Vec4::from_array(kids.map(|c| c.1[k]));
        let (mut lo, mut hi) = if step > 0.0 {
            let s = Vec4::splat(step);
            let floor = |q: Vec4| q.clamp(Vec4::ZERO, Vec4::splat(255.0)).as_uvec4().as_vec4();
            let mut lo = floor((min - pmin) / s);
            let mut hi = floor((pmax - max) / s);
            // back off codes whose decoded face misses the exact one (the
            // division rounded up)
            loop {
                let down = lo.cmpgt(Vec4::ZERO) & (pmin + lo * s).cmpgt(min);
                if !down.any() {
                    break;
                }
                lo -= Vec4::select(down, Vec4::ONE, Vec4::ZERO);
            }
            loop {
                let down = hi.cmpgt(Vec4::ZERO) & (pmax - hi * s).cmplt(max);
                if !down.any() {
                    break;
                }
                hi -= Vec4::select(down, Vec4::ONE, Vec4::ZERO);
            }
            (lo.as_uvec4().to_array(), hi.as_uvec4().to_array())
        } else {
            ([0; WIDTH], [0; WIDTH])
        };
        for c in 0..len {
            // codes that cross (possible only when a step is below the
            // coordinates' ulp) are refused by verification; backing
            // either off only grows the box
            while lo[c] + hi[c] > 255 {
                if lo[c] > hi[c] {
                    lo[c] -= 1
                } else {
                    hi[c] -= 1
                }
            }
            node.lo[k][c] = lo[c] as u8;
            node.hi[k][c] = hi[c] as u8;
        }
        let codes = |q: [u8; WIDTH]| Vec4::from_array(q.map(f32::from));
        let s = Vec4::splat(step);
        lo_box[k] = pmin + codes(node.lo[k]) * s;
        hi_box[k] = pmax - codes(node.hi[k]) * s;
        // outward rounding is the whole point: check it, always (cheap)
        let inside = lo_box[k].cmple(min) & hi_box[k].cmpge(max);
        assert!(
            (inside.bitmask() | (!((1u32 << len) - 1) & 0xf)) == 0xf,
            "decoded child box does not contain the exact box"
        );
    }
    let mut inner: Inner = ([([0.0; 3], [0.0; 3]); WIDTH], 0);
    for (c, kid) in kids[..len].iter().enumerate() {
        if !kid.2 {
            inner.0[inner.1] = (
                std::array::from_fn(|k| lo_box[k][c]),
                std::array::from_fn(|k| hi_box[k][c]),
            );
            inner.1 += 1;
        }
    }
    (node, inner)
}

/// Largest code whose decoded lower face is at or below `x` (code 0 is the
/// parent's own face, which contains `x`): one lane of [`encode_box_node`],
/// kept as its reference.
#[cfg(test)]
fn code_lo(pmin: f32, step: f32, x: f32) -> u8 {
    if step <= 0.0 {
        return 0;
    }
    // `as` truncates toward zero and saturates: floor for the non-negative
    // quotient, without a libm call
    let mut q = ((x - pmin) / step).clamp(0.0, 255.0) as u8;
    while q > 0 && kiln_formats::tri_mesh::decode_lo(pmin, step, q) > x {
        q -= 1;
    }
    q
}

/// Largest code whose decoded upper face is at or above `x` (the reference,
/// as [`code_lo`]).
#[cfg(test)]
fn code_hi(pmax: f32, step: f32, x: f32) -> u8 {
    if step <= 0.0 {
        return 0;
    }
    let mut q = ((pmax - x) / step).clamp(0.0, 255.0) as u8;
    while q > 0 && kiln_formats::tri_mesh::decode_hi(pmax, step, q) < x {
        q -= 1;
    }
    q
}

/// Most a 16-bit code can say.
const STEPS16: f32 = u16::MAX as f32;

/// Sphere tree in archive form, with its decoding frame (and the root's
/// sphere). `leaf_points(data)` lists the vertices of the leaf whose
/// builder payload is `data`.
pub fn encode_spheres(
    nodes: &[Node],
    leaf_points: impl Fn(u32) -> Vec<[f32; 3]>,
) -> (Encoded<SphereNode>, SphereFrame) {
    let wide = collapse::<WIDTH>(nodes);
    let layout = layout(&wide, nodes);
    let Some(root) = nodes.first() else {
        let empty = Encoded {
            root: layout.root,
            nodes: Vec::new(),
            leaves: layout.leaves,
        };
        return (empty, SphereFrame::default());
    };
    // exact spheres, children before parents (children have larger indices)
    let mut exact = vec![(DVec3::ZERO, 0.0f64); nodes.len()];
    for i in (0..nodes.len()).rev() {
        let n = &nodes[i];
        exact[i] = if n.end as usize == i + 1 {
            let pts: Vec<DVec3> = leaf_points(n.data)
                .iter()
                .map(|p| DVec3::from(p.map(f64::from)))
                .collect();
            let c = (DVec3::from(n.min.map(f64::from)) + DVec3::from(n.max.map(f64::from))) * 0.5;
            let r = pts.iter().map(|p| p.distance(c)).fold(0.0, f64::max);
            (c, r)
        } else {
            meld(exact[i + 1], exact[nodes[i + 1].end as usize])
        };
    }
    // frame: centres within the root box (melded centres stay in the hull
    // of the leaf centres), radii up to the root box's diagonal
    let origin = root.min;
    let scale: [f32; 3] = std::array::from_fn(|k| {
        let extent = root.max[k] - root.min[k];
        if extent <= 0.0 {
            return 0.0;
        }
        let mut s = extent / STEPS16;
        while dequantize(origin[k], s, u16::MAX) < root.max[k] {
            s = f32::from_bits(s.to_bits() + 1);
        }
        s
    });
    let diag =
        (DVec3::from(root.max.map(f64::from)) - DVec3::from(root.min.map(f64::from))).length();
    let radius_scale = ((diag * 1.01 / f64::from(STEPS16)) as f32).max(f32::MIN_POSITIVE);
    let mut frame = SphereFrame {
        origin,
        scale,
        radius_scale,
        root: [0; 4],
    };
    frame.root = quantize_sphere(&frame, exact[0]);
    let out = wide
        .iter()
        .zip(&layout.links)
        .map(|(w, &links)| {
            let mut node = SphereNode {
                sphere: [[0; WIDTH]; 4],
                links,
            };
            for (c, child) in w.kids().enumerate() {
                let q = quantize_sphere(&frame, exact[child]);
                for (k, v) in q.into_iter().enumerate() {
                    node.sphere[k][c] = v;
                }
            }
            node
        })
        .collect();
    let tree = Encoded {
        root: layout.root,
        nodes: out,
        leaves: layout.leaves,
    };
    (tree, frame)
}

/// The smallest sphere containing both spheres.
fn meld(a: (DVec3, f64), b: (DVec3, f64)) -> (DVec3, f64) {
    let d = b.0 - a.0;
    let dist = d.length();
    if dist + b.1 <= a.1 {
        return a;
    }
    if dist + a.1 <= b.1 {
        return b;
    }
    let r = (dist + a.1 + b.1) * 0.5;
    // centre on the segment, `r - a.1` from a's centre towards b's
    (a.0 + d * ((r - a.1) / dist), r)
}

/// Codes for a sphere: nearest centre, radius rounded up so the decoded
/// sphere contains the exact one with room for f32 rounding.
fn quantize_sphere(frame: &SphereFrame, (c, r): (DVec3, f64)) -> [u16; 4] {
    let mut q = [0u16; 4];
    for k in 0..3 {
        if frame.scale[k] > 0.0 {
            let v = ((c[k] - f64::from(frame.origin[k])) / f64::from(frame.scale[k])).round();
            q[k] = v.clamp(0.0, f64::from(STEPS16)) as u16;
        }
    }
    let (dc, _) = frame.decode(q);
    let shift = DVec3::from(dc.map(f64::from)).distance(c);
    // relative slack well above f64 rounding of the meld arithmetic
    let need = (shift + r) * (1.0 + 1e-9) + 1e-12;
    let rs = f64::from(frame.radius_scale);
    let mut code = (need / rs).ceil().max(0.0);
    while f64::from(code as f32 * frame.radius_scale) < need {
        code += 1.0;
    }
    assert!(
        code <= f64::from(STEPS16),
        "sphere radius {need} exceeds the frame's range"
    );
    q[3] = code as u16;
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::tri_mesh::{decode_hi, decode_lo};
    use kiln_geometry::rng::Rng;

    fn leaf(i: u32, min: [f32; 3], max: [f32; 3]) -> Node {
        Node {
            min,
            max,
            end: i + 1,
            data: i,
        }
    }

    /// A random binary skip-count tree over `n` leaves, depth-first, with
    /// random boxes (the collapse reads only areas and structure).
    fn random_tree(seed: &mut Rng, n: u32) -> Vec<Node> {
        fn next(seed: &mut Rng) -> u64 {
            seed.next_u64()
        }
        fn grow(seed: &mut Rng, n: u32, first: u32, out: &mut Vec<Node>) {
            let at = out.len();
            let size = |seed: &mut Rng| 0.1 + (next(seed) % 1000) as f32 / 100.0;
            let max = [size(seed), size(seed), size(seed)];
            out.push(Node {
                min: [0.0; 3],
                max,
                end: 0,
                data: first,
            });
            if n > 1 {
                let left = 1 + (next(seed) % u64::from(n - 1)) as u32;
                grow(seed, left, first, out);
                grow(seed, n - left, first + left, out);
            }
            out[at].end = out.len() as u32;
        }
        let mut out = Vec::new();
        grow(seed, n, 0, &mut out);
        out
    }

    /// The cheapest collapse by enumeration: every way to cut a wide
    /// node's binary subtree into at most four slots, each inner slot
    /// costed the same way.
    fn brute_cost(nodes: &[Node], b: usize, penalty: f64, width: usize) -> f64 {
        // every frontier (list of slots) of subtree i with at most `width` slots
        fn frontiers(nodes: &[Node], i: usize, width: usize) -> Vec<Vec<usize>> {
            let mut all = vec![vec![i]];
            if nodes[i].end as usize != i + 1 {
                let (l, r) = (i + 1, nodes[i + 1].end as usize);
                for a in frontiers(nodes, l, width) {
                    for c in frontiers(nodes, r, width) {
                        if a.len() + c.len() <= width {
                            all.push([a.clone(), c].concat());
                        }
                    }
                }
            }
            all
        }
        let (l, r) = (b + 1, nodes[b + 1].end as usize);
        let mut best = f64::INFINITY;
        for a in frontiers(nodes, l, width) {
            for c in frontiers(nodes, r, width) {
                if a.len() + c.len() > width {
                    continue;
                }
                let sum: f64 = a
                    .iter()
                    .chain(&c)
                    .filter(|&&s| nodes[s].end as usize != s + 1)
                    .map(|&s| brute_cost(nodes, s, penalty, width))
                    .sum();
                best = best.min(sum);
            }
        }
        half_area(&nodes[b]) + penalty + best
    }

    #[test]
    fn the_collapse_is_the_cheapest_by_enumeration() {
        cheapest_by_enumeration::<WIDTH>();
        cheapest_by_enumeration::<WIDE>();
    }

    fn cheapest_by_enumeration<const W: usize>() {
        let mut seed = Rng::new(0x9E37_79B9);
        for case in 0..400 {
            let nodes = random_tree(&mut seed, 2 + case % 11);
            let share = [0.0, NODE_PENALTY, 0.02, 0.3][case as usize % 4];
            let wide = collapse_with::<W>(&nodes, share);
            let area = |i: usize| half_area(&nodes[i]);
            let penalty = area(0) * share;
            // the built tree's cost: every binary node made a wide node
            let got: f64 = wide.iter().map(|w| area(w.node as usize) + penalty).sum();
            let want = brute_cost(&nodes, 0, penalty, W);
            assert!(
                (got - want).abs() <= 1e-5 * want,
                "case {case}: {got} vs {want}"
            );
            // and it holds every leaf once, left to right, in 2..=4 slots
            let made: std::collections::HashMap<usize, &Wide<W>> =
                wide.iter().map(|w| (w.node as usize, w)).collect();
            let mut leaves = Vec::new();
            let mut stack = vec![0];
            while let Some(b) = stack.pop() {
                if is_leaf(&nodes, b) {
                    leaves.push(nodes[b].data);
                    continue;
                }
                let w = made[&b];
                assert!((2..=W).contains(&w.len()));
                for (c, b) in w.kids().enumerate() {
                    // the mask and payloads the layout reads instead of the nodes
                    assert_eq!(w.leaf_mask >> c & 1 != 0, is_leaf(&nodes, b), "case {case}");
                    if is_leaf(&nodes, b) {
                        assert_eq!(w.leaf_data[c], nodes[b].data, "case {case}");
                    }
                }
                stack.extend(w.kids().rev());
            }
            let count = nodes.len().div_ceil(2) as u32;
            assert_eq!(leaves, (0..count).collect::<Vec<_>>(), "case {case}");
        }
    }

    /// Boxes so far out that their areas overflow f32 (every cost the
    /// same infinity) still collapse into valid wide nodes: every leaf in
    /// one slot of one node, no node over its width (a level placed at
    /// 10³⁰ m had panicked the bake).
    #[test]
    fn boxes_whose_areas_overflow_still_collapse() {
        for far in [1e19f32, 1e30, 3e38] {
            let boxes: Vec<([f32; 3], [f32; 3])> = (0..300)
                .map(|i| {
                    let p = [i as f32 * 0.5, (i % 7) as f32, 0.0];
                    let p = if i % 2 == 0 { p.map(|v| v + far) } else { p };
                    (p, p.map(|v| v + 1.0))
                })
                .collect();
            let (_, nodes) = crate::geom::sah::build_boxes(boxes.par_iter().copied());
            fn leaves_met<const W: usize>(nodes: &[Node], n: usize, far: f32) -> Vec<u32> {
                let mut met = vec![0; n];
                for w in &collapse::<W>(nodes) {
                    assert!(
                        (2..=W).contains(&w.len()),
                        "{far}: {} of {W} slots",
                        w.len()
                    );
                    for (c, _) in w.kids().enumerate() {
                        if w.leaf_mask >> c & 1 != 0 {
                            met[crate::geom::sah::leaf_range(w.leaf_data[c]).0 as usize] += 1;
                        }
                    }
                }
                met
            }
            for met in [
                leaves_met::<WIDTH>(&nodes, boxes.len(), far),
                leaves_met::<WIDE>(&nodes, boxes.len(), far),
            ] {
                assert!(met.iter().all(|&m| m == 1), "{far}: leaves met {met:?}");
            }
        }
    }

    #[test]
    fn the_collapse_is_breadth_first_and_the_same_on_any_thread_count() {
        // enough leaves that several levels are made in parallel
        let mut s = Rng::new(11);
        let mut rnd = || (s.next_u64() % 100_000) as f32 / 100.0;
        let boxes: Vec<([f32; 3], [f32; 3])> = (0..120_000)
            .map(|_| {
                let p = [rnd(), rnd(), rnd()];
                (p, p.map(|v| v + 1.0))
            })
            .collect();
        let (_, nodes) = crate::geom::sah::build_boxes(boxes.par_iter().copied());
        let on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            let wide = pool.unwrap().install(|| collapse::<WIDE>(&nodes));
            wide.iter()
                .map(|w| {
                    (
                        w.node as usize,
                        w.kids().collect::<Vec<_>>(),
                        w.leaf_mask,
                        w.leaf_data,
                    )
                })
                .collect::<Vec<_>>()
        };
        let one = on(1);
        assert!(one.len() > 4 * COLLAPSE_GRAIN, "{} wide nodes", one.len());
        assert_eq!(one, on(2));
        assert_eq!(one, on(3));
        // breadth-first: the root first, then every node's inner children
        // in order, node after node
        let inner: Vec<usize> = one
            .iter()
            .flat_map(|(_, kids, _, _)| kids.iter().copied())
            .filter(|&c| !is_leaf(&nodes, c))
            .collect();
        let made: Vec<usize> = one.iter().map(|&(b, ..)| b).collect();
        assert_eq!(made[0], 0);
        assert_eq!(inner, made[1..]);
    }

    /// `n` random thin boxes far from the origin (where rounding bites),
    /// from `seed`.
    fn thin_far_boxes(seed: u64, n: usize) -> Vec<Decoded> {
        let mut s = Rng::new(seed);
        let mut rnd = || (s.next_u64() % 10_000) as f32 / 10_000.0;
        (0..n)
            .map(|_| {
                let x = 5000.0 + 2048.0 * rnd();
                let y = -4.64 + 22.3964 * rnd();
                ([x, y, 0.1], [x + 0.37 * rnd(), y + 0.01, 0.1])
            })
            .collect()
    }

    /// Whether box `inner` lies in box `outer`.
    fn inside((lo, hi): Decoded, (a, b): Decoded) -> bool {
        (0..3).all(|k| lo[k] <= a[k] && b[k] <= hi[k])
    }

    /// Walks an encoded tree from `root` (whose decoded box is `root_box`)
    /// through `children` (a node and its decoded box → its children's
    /// references and decoded boxes), and checks that every archived leaf
    /// is met once, its decoded box holding the input box `input` of the
    /// builder leaf that `leaves` (the encoding's leaf data) puts there,
    /// `order` being the builder's leaf order.
    fn walk_decoded(
        root: u32,
        root_box: Decoded,
        leaves: &[u32],
        order: &[u32],
        input: &[Decoded],
        mut children: impl FnMut(u32, Decoded) -> Vec<(u32, Decoded)>,
    ) {
        let mut met = vec![false; leaves.len()];
        let mut stack = vec![(root, root_box)];
        while let Some((r, decoded)) = stack.pop() {
            if r & LEAF_BIT != 0 {
                let k = (r & !LEAF_BIT) as usize;
                assert!(!met[k], "leaf {k} met twice");
                met[k] = true;
                let (j, _) = crate::geom::sah::leaf_range(leaves[k]);
                assert!(inside(decoded, input[order[j as usize] as usize]));
                continue;
            }
            for (child, b) in children(r, decoded) {
                // breadth-first: children after their parent
                assert!(child & LEAF_BIT != 0 || child > r);
                stack.push((child, b));
            }
        }
        assert_eq!(met.len(), input.len());
        assert!(met.iter().all(|&m| m), "a leaf never met");
    }

    #[test]
    fn decoded_child_boxes_contain_the_exact_boxes() {
        // a balanced tree over random thin boxes far from the origin
        let leaves = thin_far_boxes(7, 256);
        let (order, nodes) = crate::geom::sah::build_boxes(leaves.par_iter().copied());
        let e = encode_boxes(&nodes);
        let (root, boxes) = (e.root, &e.nodes);
        assert_eq!(root, 0);
        // 4-wide: between 255/3 and 255 nodes
        assert!(boxes.len() >= 85 && boxes.len() < 255, "{}", boxes.len());
        // each node's children decode against the parent's decoded box
        let root_box = (nodes[0].min, nodes[0].max);
        walk_decoded(
            root,
            root_box,
            &e.leaves,
            &order,
            &leaves,
            |r, (pmin, pmax)| {
                let n = &boxes[r as usize];
                let l = Links::unpack(n.links);
                let step: [f32; 3] = std::array::from_fn(|k| box_step(pmin[k], pmax[k]));
                (0..l.used as usize)
                    .map(|c| {
                        let lo = std::array::from_fn(|k| decode_lo(pmin[k], step[k], n.lo[k][c]));
                        let hi = std::array::from_fn(|k| decode_hi(pmax[k], step[k], n.hi[k][c]));
                        (l.child(c), (lo, hi))
                    })
                    .collect()
            },
        );
        // encode_boxes asserts containment; here: codes are used (tight),
        // not all zero
        let used = boxes
            .iter()
            .flat_map(|b| b.lo.iter().chain(&b.hi).flatten())
            .filter(|&&q| q > 0)
            .count();
        assert!(used > boxes.len() * 8, "codes too loose: {used}");
    }

    #[test]
    fn wide_nodes_hold_their_own_box_and_children_inside_it() {
        // thin boxes far from the origin, as above, under 8-wide nodes
        let leaves = thin_far_boxes(8, 700);
        let (order, nodes) = crate::geom::sah::build_boxes(leaves.par_iter().copied());
        let e = encode_wide_boxes(&nodes);
        assert_eq!(e.root, 0);
        // 8-wide: between 699/7 and 699 nodes, and fewer than 4-wide takes
        let four = encode_boxes(&nodes).nodes.len();
        assert!(
            e.nodes.len() >= 100 && e.nodes.len() < four,
            "{} / {four}",
            e.nodes.len()
        );
        let root_box = (nodes[0].min, nodes[0].max);
        assert_eq!((e.nodes[0].min, e.nodes[0].max), root_box);
        // each node's children decode against the node's own box, which
        // its parent's decoded box holds
        walk_decoded(
            e.root,
            root_box,
            &e.leaves,
            &order,
            &leaves,
            |r, decoded| {
                let n = &e.nodes[r as usize];
                assert!(inside(decoded, (n.min, n.max)));
                let l = Links::unpack_wide(n.links);
                assert!((2..=WIDE as u32).contains(&l.used));
                let step: [f32; 3] = std::array::from_fn(|k| box_step(n.min[k], n.max[k]));
                (0..l.used as usize)
                    .map(|c| {
                        let lo = std::array::from_fn(|k| decode_lo(n.min[k], step[k], n.lo[k][c]));
                        let hi = std::array::from_fn(|k| decode_hi(n.max[k], step[k], n.hi[k][c]));
                        (l.child(c), (lo, hi))
                    })
                    .collect()
            },
        );
    }

    #[test]
    fn the_four_slot_encoder_gives_the_scalar_codes() {
        let mut s = Rng::new(0x2545_F491);
        let mut rnd = || (s.next_u64() % 1_000_000) as f32 / 1_000_000.0;
        for case in 0..20_000 {
            // parents from wide to a few ulps and flat (steps below the
            // ulp, and zero), children anywhere inside, some on a face
            let origin = [0.0, 1e3, -7e5][case % 3] + rnd();
            let size = [100.0, 1.0, 1e-3, 0.0][case % 4];
            let pmin = [origin, origin - 1.0, origin + 3.0];
            let pmax = pmin.map(|v| v + size * (0.5 + rnd()));
            let len = 2 + case % 3;
            let mut kids: Kids = [([0.0; 3], [0.0; 3], false); WIDTH];
            for (c, kid) in kids.iter_mut().enumerate() {
                for k in 0..3 {
                    let (a, b) = (rnd(), rnd());
                    let (a, b) = (a.min(b), a.max(b));
                    let at = |t: f32| match (case + c + k) % 5 {
                        0 => pmin[k],
                        1 => pmax[k],
                        _ => pmin[k] + (pmax[k] - pmin[k]) * t,
                    };
                    kid.0[k] = at(a).max(pmin[k]).min(pmax[k]);
                    kid.1[k] = at(b).max(kid.0[k]).min(pmax[k]);
                }
                kid.2 = (case + c) % 2 == 0;
            }
            for c in len..WIDTH {
                kids[c] = kids[len - 1];
            }
            let (node, inner) = encode_box_node(&kids, len, (pmin, pmax));
            let mut want_inner = Vec::new();
            for (c, kid) in kids[..len].iter().enumerate() {
                let mut lo = [0u8; 3];
                let mut hi = [0u8; 3];
                for k in 0..3 {
                    let step = box_step(pmin[k], pmax[k]);
                    let (mut l, mut h) = (
                        code_lo(pmin[k], step, kid.0[k]),
                        code_hi(pmax[k], step, kid.1[k]),
                    );
                    while u16::from(l) + u16::from(h) > 255 {
                        if l > h { l -= 1 } else { h -= 1 }
                    }
                    (lo[k], hi[k]) = (l, h);
                    assert_eq!(
                        (node.lo[k][c], node.hi[k][c]),
                        (l, h),
                        "case {case} slot {c} axis {k}"
                    );
                }
                if !kid.2 {
                    let step = |k: usize| box_step(pmin[k], pmax[k]);
                    want_inner.push((
                        std::array::from_fn(|k| decode_lo(pmin[k], step(k), lo[k])),
                        std::array::from_fn(|k| decode_hi(pmax[k], step(k), hi[k])),
                    ));
                }
            }
            for c in len..WIDTH {
                assert_eq!(
                    (node.lo.map(|a| a[c]), node.hi.map(|a| a[c])),
                    ([0; 3], [0; 3])
                );
            }
            assert_eq!(&inner.0[..inner.1], &want_inner[..], "case {case}");
        }
    }

    #[test]
    fn one_leaf_is_a_leaf_root() {
        let nodes = [leaf(0, [0.0; 3], [1.0; 3])];
        let e = encode_boxes(&nodes);
        assert_eq!((e.root, e.nodes.len(), e.leaves), (LEAF_BIT, 0, vec![0]));
    }

    #[test]
    fn melded_spheres_contain_their_children() {
        let a = (DVec3::new(0.0, 0.0, 0.0), 1.0);
        let b = (DVec3::new(4.0, 0.0, 0.0), 0.5);
        let m = meld(a, b);
        assert!((m.1 - 2.75).abs() < 1e-12);
        for (c, r) in [a, b] {
            assert!(c.distance(m.0) + r <= m.1 + 1e-12);
        }
        // nested: the bigger one
        assert_eq!(meld(a, (DVec3::new(0.1, 0.0, 0.0), 0.2)), a);
    }

    #[test]
    fn quantised_spheres_contain_the_exact_spheres() {
        let frame = SphereFrame {
            origin: [-1000.0, 3.0, 7.0],
            scale: [2000.0 / 65535.0, 0.001, 0.0],
            radius_scale: 0.05,
            root: [0; 4],
        };
        for i in 0..1000 {
            let c = DVec3::new(
                -1000.0 + i as f64 * 1.999,
                3.0 + (i % 60) as f64 * 1e-3,
                7.0,
            );
            let r = (i % 17) as f64 * 0.37;
            let (dc, dr) = frame.decode(quantize_sphere(&frame, (c, r)));
            let dc = DVec3::from(dc.map(f64::from));
            assert!(dc.distance(c) + r <= f64::from(dr));
        }
    }
}
