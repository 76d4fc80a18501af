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
use glam::DVec3;
use kiln_formats::tri_mesh::{
    BoxNode, EMPTY, LEAF_BIT, SphereFrame, SphereNode, WIDTH, box_step, decode_hi, decode_lo,
    dequantize,
};
use rayon::prelude::*;

/// Groups the binary skip-count tree into nodes of up to [`WIDTH`]
/// children: starting from a binary node's two children, the inner child
/// with the largest surface area is replaced by its own two children (in
/// place, so leaves keep their left-to-right order) until four children or
/// only leaves remain. Returns the wide nodes in depth-first order (first
/// child first), plus each binary node's archived reference.
fn collapse(nodes: &[Node], leaf_payload: impl Fn(u32) -> u32) -> (Vec<Wide>, Vec<u32>) {
    let is_leaf = |i: usize| nodes[i].end as usize == i + 1;
    let area = |i: usize| {
        let n = &nodes[i];
        let d = [0, 1, 2].map(|k| n.max[k] - n.min[k]);
        d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
    };
    let mut refs = vec![EMPTY; nodes.len()];
    let mut wide = Vec::with_capacity(nodes.len() / 4 + 1);
    if nodes.is_empty() {
        return (wide, refs);
    }
    if is_leaf(0) {
        refs[0] = LEAF_BIT | leaf_payload(nodes[0].data);
        return (wide, refs);
    }
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        refs[b] = wide.len() as u32;
        let mut w = Wide {
            children: [b + 1, nodes[b + 1].end as usize, 0, 0],
            len: 2,
        };
        while w.len < WIDTH {
            // the widest inner child, first on ties
            let mut pick: Option<(usize, f32)> = None;
            for p in 0..w.len {
                let c = w.children[p];
                if !is_leaf(c) && pick.is_none_or(|(_, a)| area(c) > a) {
                    pick = Some((p, area(c)));
                }
            }
            let Some((p, _)) = pick else { break };
            // open it in place: its two children take its slot
            let c = w.children[p];
            w.children.copy_within(p + 1..w.len, p + 2);
            w.children[p] = c + 1;
            w.children[p + 1] = nodes[c + 1].end as usize;
            w.len += 1;
        }
        for &c in w.children[..w.len].iter().rev() {
            if is_leaf(c) {
                refs[c] = LEAF_BIT | leaf_payload(nodes[c].data);
            } else {
                stack.push(c);
            }
        }
        wide.push(w);
    }
    (wide, refs)
}

/// A wide node before encoding: the binary nodes that are its children.
struct Wide {
    children: [usize; WIDTH],
    len: usize,
}

/// Box tree: returns the root reference and the inner nodes.
///
/// A node's codes depend on its parent's decoded box, so the tree is
/// encoded top-down; subtrees (contiguous ranges of the depth-first
/// output) are encoded in parallel once their root's box is known. Every
/// node's result depends only on its parent's, so the output is the same on
/// any number of threads.
pub fn encode_boxes(nodes: &[Node], leaf_payload: impl Fn(u32) -> u32) -> (u32, Vec<BoxNode>) {
    let (wide, refs) = collapse(nodes, leaf_payload);
    let Some(root) = nodes.first() else {
        return (0, Vec::new());
    };
    let mut out = vec![BLANK; wide.len()];
    if !wide.is_empty() {
        // wide nodes in each subtree, children after parents
        let mut sizes = vec![1usize; wide.len()];
        for wi in (0..wide.len()).rev() {
            let w = &wide[wi];
            sizes[wi] += w.children[..w.len]
                .iter()
                .filter(|&&c| refs[c] & LEAF_BIT == 0)
                .map(|&c| sizes[refs[c] as usize])
                .sum::<usize>();
        }
        let tree = Subtrees {
            nodes,
            refs: &refs,
            wide: &wide,
            sizes: &sizes,
        };
        tree.encode(0, (root.min, root.max), &mut out);
    }
    (refs[0], out)
}

/// A box node with no children.
const BLANK: BoxNode = BoxNode {
    lo: [[0; WIDTH]; 3],
    hi: [[0; WIDTH]; 3],
    child: [EMPTY; WIDTH],
};

/// What [`encode_boxes`] reads while encoding subtrees.
struct Subtrees<'a> {
    nodes: &'a [Node],
    refs: &'a [u32],
    wide: &'a [Wide],
    sizes: &'a [usize],
}

/// Subtrees with fewer wide nodes than this are encoded on one thread.
const ENCODE_GRAIN: usize = 4096;

impl Subtrees<'_> {
    /// Encodes the subtree of wide node `wi`, whose decoded box is `box_`,
    /// into `out` (exactly its nodes, depth-first).
    fn encode(&self, wi: usize, box_: ([f32; 3], [f32; 3]), out: &mut [BoxNode]) {
        let (node, inner) = encode_box_node(self.nodes, self.refs, &self.wide[wi], box_);
        out[0] = node;
        // the children's subtrees follow their parent in child order
        let mut rest = &mut out[1..];
        let mut next = wi + 1;
        let parts = inner.0[..inner.1].iter().map(|&(child, child_box)| {
            debug_assert_eq!(child, next, "subtrees in child order");
            next += self.sizes[child];
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(self.sizes[child]);
            rest = tail;
            (child, child_box, part)
        });
        if self.sizes[wi] >= ENCODE_GRAIN {
            let parts: Vec<_> = parts.collect();
            parts
                .into_par_iter()
                .for_each(|(child, b, part)| self.encode(child, b, part));
        } else {
            parts.for_each(|(child, b, part)| self.encode(child, b, part));
        }
    }
}

/// A wide node and its decoded box.
type Decoded = (usize, ([f32; 3], [f32; 3]));

/// Up to [`WIDTH`] inner children with their decoded boxes, and how many.
type Inner = ([Decoded; WIDTH], usize);

/// One wide node's codes against its decoded box `(pmin, pmax)`, and its
/// inner children with their decoded boxes.
fn encode_box_node(
    nodes: &[Node],
    refs: &[u32],
    w: &Wide,
    (pmin, pmax): ([f32; 3], [f32; 3]),
) -> (BoxNode, Inner) {
    let step: [f32; 3] = std::array::from_fn(|k| box_step(pmin[k], pmax[k]));
    let mut node = BLANK;
    let mut inner: Inner = ([(0, ([0.0; 3], [0.0; 3])); WIDTH], 0);
    for (c, &child) in w.children[..w.len].iter().enumerate() {
        let n = &nodes[child];
        for k in 0..3 {
            let mut lo = code_lo(pmin[k], step[k], n.min[k]);
            let mut hi = code_hi(pmax[k], step[k], n.max[k]);
            // codes that cross (possible only when a step is below the
            // coordinates' ulp) are refused by verification; backing
            // either off only grows the box
            while u16::from(lo) + u16::from(hi) > 255 {
                if lo > hi { lo -= 1 } else { hi -= 1 }
            }
            node.lo[k][c] = lo;
            node.hi[k][c] = hi;
        }
        let lo = std::array::from_fn(|k| decode_lo(pmin[k], step[k], node.lo[k][c]));
        let hi = std::array::from_fn(|k| decode_hi(pmax[k], step[k], node.hi[k][c]));
        // outward rounding is the whole point: check it, always (cheap)
        assert!(
            (0..3).all(|k| lo[k] <= n.min[k] && hi[k] >= n.max[k]),
            "decoded child box does not contain the exact box"
        );
        if refs[child] & LEAF_BIT == 0 {
            inner.0[inner.1] = (refs[child] as usize, (lo, hi));
            inner.1 += 1;
        }
        node.child[c] = refs[child];
    }
    (node, inner)
}

/// Largest code whose decoded lower face is at or below `x` (code 0 is the
/// parent's own face, which contains `x`).
fn code_lo(pmin: f32, step: f32, x: f32) -> u8 {
    if step <= 0.0 {
        return 0;
    }
    // `as` truncates toward zero and saturates: floor for the non-negative
    // quotient, without a libm call
    let mut q = ((x - pmin) / step).clamp(0.0, 255.0) as u8;
    while q > 0 && decode_lo(pmin, step, q) > x {
        q -= 1;
    }
    q
}

/// Largest code whose decoded upper face is at or above `x`.
fn code_hi(pmax: f32, step: f32, x: f32) -> u8 {
    if step <= 0.0 {
        return 0;
    }
    let mut q = ((pmax - x) / step).clamp(0.0, 255.0) as u8;
    while q > 0 && decode_hi(pmax, step, q) < x {
        q -= 1;
    }
    q
}

/// Most a 16-bit code can say.
const STEPS16: f32 = u16::MAX as f32;

/// Sphere tree: returns the root reference, the decoding frame (with the
/// root's sphere) and the inner nodes. `leaf_points(data)` lists the
/// vertices of the leaf whose builder payload is `data`.
pub fn encode_spheres(
    nodes: &[Node],
    leaf_payload: impl Fn(u32) -> u32,
    leaf_points: impl Fn(u32) -> Vec<[f32; 3]>,
) -> (u32, SphereFrame, Vec<SphereNode>) {
    let (wide, refs) = collapse(nodes, &leaf_payload);
    let Some(root) = nodes.first() else {
        return (0, SphereFrame::default(), Vec::new());
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
        .map(|w| {
            let mut node = SphereNode {
                sphere: [[0; WIDTH]; 4],
                child: [EMPTY; WIDTH],
            };
            for (c, &child) in w.children[..w.len].iter().enumerate() {
                let q = quantize_sphere(&frame, exact[child]);
                for (k, v) in q.into_iter().enumerate() {
                    node.sphere[k][c] = v;
                }
                node.child[c] = refs[child];
            }
            node
        })
        .collect();
    (refs[0], frame, out)
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

    fn leaf(i: u32, min: [f32; 3], max: [f32; 3]) -> Node {
        Node {
            min,
            max,
            end: i + 1,
            data: i,
        }
    }

    #[test]
    fn decoded_child_boxes_contain_the_exact_boxes() {
        // a balanced tree over random thin boxes far from the origin
        let mut s = 7u32;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 10_000) as f32 / 10_000.0
        };
        let leaves: Vec<([f32; 3], [f32; 3])> = (0..256)
            .map(|_| {
                let x = 5000.0 + 2048.0 * rnd();
                let y = -4.64 + 22.3964 * rnd();
                ([x, y, 0.1], [x + 0.37 * rnd(), y + 0.01, 0.1])
            })
            .collect();
        let (_, nodes) = crate::geom::sah::build_boxes(leaves.iter().copied());
        let (root, boxes) = encode_boxes(&nodes, |d| d);
        assert_eq!(root, 0);
        // 4-wide: between 255/3 and 255 nodes, every leaf referenced once
        assert!(boxes.len() >= 85 && boxes.len() < 255, "{}", boxes.len());
        let mut leaves: Vec<u32> = boxes
            .iter()
            .flat_map(|b| b.child)
            .filter(|&c| c != EMPTY && c & LEAF_BIT != 0)
            .collect();
        leaves.sort();
        assert_eq!(leaves.len(), 256);
        leaves.dedup();
        assert_eq!(leaves.len(), 256);
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
    fn one_leaf_is_a_leaf_root() {
        let nodes = [leaf(0, [0.0; 3], [1.0; 3])];
        let (root, boxes) = encode_boxes(&nodes, |d| d | 1);
        assert_eq!((root, boxes.len()), (LEAF_BIT | 1, 0));
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
