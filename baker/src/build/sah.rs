//! Top-down binary tree construction with the binned surface area heuristic
//! (Wald, "On fast construction of SAH-based bounding volume hierarchies",
//! 2007), one primitive per leaf, written straight into the depth-first
//! array of `kiln_formats::level` (left child after its parent, `end` one
//! past the subtree).
//!
//! A subtree over `k` primitives always has `2k - 1` nodes, so the array
//! position of every subtree is known before it is built: the two halves of
//! a split are built into disjoint slices, in parallel with `rayon::join`,
//! and the result is byte-identical whatever the thread count (every
//! floating-point reduction happens inside one task, in a fixed order).

use kiln_formats::level::{MAX_DEPTH, Node, leaf_data};

/// A primitive to partition: its box, doubled centroid, and caller id.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrimRef {
    /// Box lower corner.
    pub min: [f32; 3],
    /// Box upper corner.
    pub max: [f32; 3],
    /// Caller's id for this primitive.
    pub id: u32,
}

impl PrimRef {
    #[inline]
    fn centroid2(&self, axis: usize) -> f32 {
        self.min[axis] + self.max[axis]
    }
}

/// Number of candidate split planes per axis is `BINS - 1`.
const BINS: usize = 16;
/// Below this many primitives a subtree is built on the current thread.
const PARALLEL_GRAIN: usize = 4096;
/// Past this depth splits are median splits, which bounds the depth by
/// `SAH_DEPTH + log2(n)`, far below [`MAX_DEPTH`].
const SAH_DEPTH: usize = 64;
const _: () = assert!(SAH_DEPTH + 33 < MAX_DEPTH);

/// Builds the tree. On return `prims` is in leaf order (leaf `j` in
/// depth-first order holds `prims[j]`), and each leaf's `data` is
/// `leaf_data(j, 1)`.
pub fn build(prims: &mut [PrimRef]) -> Vec<Node> {
    if prims.is_empty() {
        return Vec::new();
    }
    let mut nodes = vec![
        Node {
            min: [0.0; 3],
            max: [0.0; 3],
            end: 0,
            data: 0,
        };
        2 * prims.len() - 1
    ];
    build_rec(prims, &mut nodes, 0, 0, 1);
    nodes
}

/// Builds the subtree over `prims` (which sit at `first_prim..` in leaf
/// order) into `nodes`, whose first element is array index `base`.
fn build_rec(prims: &mut [PrimRef], nodes: &mut [Node], base: u32, first_prim: u32, depth: usize) {
    debug_assert_eq!(nodes.len(), 2 * prims.len() - 1);
    let (min, max) = bounds(prims);
    let end = base + nodes.len() as u32;
    if prims.len() == 1 {
        nodes[0] = Node {
            min,
            max,
            end,
            data: leaf_data(first_prim, 1),
        };
        return;
    }
    let (mid, axis) = if depth < SAH_DEPTH {
        sah_split(prims, min, max)
    } else {
        median_split(prims, min, max)
    };
    nodes[0] = Node {
        min,
        max,
        end,
        data: axis as u32,
    };
    // left subtree: mid prims → 2*mid-1 nodes right after this one
    let parallel = prims.len() > PARALLEL_GRAIN;
    let (left_prims, right_prims) = prims.split_at_mut(mid);
    let (left_nodes, right_nodes) = nodes[1..].split_at_mut(2 * mid - 1);
    let left_base = base + 1;
    let right_base = base + 2 * mid as u32;
    let right_first = first_prim + mid as u32;
    if parallel {
        rayon::join(
            || build_rec(left_prims, left_nodes, left_base, first_prim, depth + 1),
            || build_rec(right_prims, right_nodes, right_base, right_first, depth + 1),
        );
    } else {
        build_rec(left_prims, left_nodes, left_base, first_prim, depth + 1);
        build_rec(right_prims, right_nodes, right_base, right_first, depth + 1);
    }
}

fn bounds(prims: &[PrimRef]) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for p in prims {
        for k in 0..3 {
            min[k] = min[k].min(p.min[k]);
            max[k] = max[k].max(p.max[k]);
        }
    }
    (min, max)
}

fn half_area(min: [f32; 3], max: [f32; 3]) -> f32 {
    let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

#[derive(Clone, Copy)]
struct Bin {
    min: [f32; 3],
    max: [f32; 3],
    count: u32,
}

const EMPTY_BIN: Bin = Bin {
    min: [f32::INFINITY; 3],
    max: [f32::NEG_INFINITY; 3],
    count: 0,
};

impl Bin {
    fn grow(&mut self, min: [f32; 3], max: [f32; 3], count: u32) {
        for k in 0..3 {
            self.min[k] = self.min[k].min(min[k]);
            self.max[k] = self.max[k].max(max[k]);
        }
        self.count += count;
    }
}

/// Splits at the best binned-SAH plane over all three axes; returns the
/// number of primitives on the left (both sides non-empty) and the axis.
/// Leaves always hold one primitive, so only the two children's costs
/// (area × count) are compared.
fn sah_split(prims: &mut [PrimRef], min: [f32; 3], max: [f32; 3]) -> (usize, usize) {
    // centroid bounds (doubled centroids, like PrimRef::centroid2)
    let mut cmin = [f32::INFINITY; 3];
    let mut cmax = [f32::NEG_INFINITY; 3];
    for p in prims.iter() {
        for k in 0..3 {
            cmin[k] = cmin[k].min(p.centroid2(k));
            cmax[k] = cmax[k].max(p.centroid2(k));
        }
    }
    let mut best: Option<(f32, usize, usize)> = None; // (cost, axis, split bin)
    for axis in 0..3 {
        let extent = cmax[axis] - cmin[axis];
        if extent.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            continue;
        }
        let scale = BINS as f32 / extent;
        let mut bins = [EMPTY_BIN; BINS];
        for p in prims.iter() {
            bins[bin_of(p.centroid2(axis), cmin[axis], scale)].grow(p.min, p.max, 1);
        }
        // sweep from the right, then from the left
        let mut right_area = [0.0f32; BINS];
        let mut acc = EMPTY_BIN;
        for b in (1..BINS).rev() {
            acc.grow(bins[b].min, bins[b].max, bins[b].count);
            right_area[b] = if acc.count > 0 {
                half_area(acc.min, acc.max) * acc.count as f32
            } else {
                0.0
            };
        }
        let mut left = EMPTY_BIN;
        for b in 1..BINS {
            left.grow(bins[b - 1].min, bins[b - 1].max, bins[b - 1].count);
            let right_count = prims.len() as u32 - left.count;
            if left.count == 0 || right_count == 0 {
                continue;
            }
            let cost = half_area(left.min, left.max) * left.count as f32 + right_area[b];
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, b));
            }
        }
    }
    match best {
        Some((_, axis, split)) => {
            let extent = cmax[axis] - cmin[axis];
            let scale = BINS as f32 / extent;
            let mid = partition(prims, |p| {
                bin_of(p.centroid2(axis), cmin[axis], scale) < split
            });
            debug_assert!(mid > 0 && mid < prims.len());
            (mid, axis)
        }
        // all centroids coincide: any split is as good as any other
        None => median_split(prims, min, max),
    }
}

#[inline]
fn bin_of(c: f32, cmin: f32, scale: f32) -> usize {
    (((c - cmin) * scale) as usize).min(BINS - 1)
}

/// Splits in half by count along the longest axis of the node box.
fn median_split(prims: &mut [PrimRef], min: [f32; 3], max: [f32; 3]) -> (usize, usize) {
    let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
    let axis = if d[0] >= d[1] && d[0] >= d[2] {
        0
    } else if d[1] >= d[2] {
        1
    } else {
        2
    };
    let mid = prims.len() / 2;
    prims.select_nth_unstable_by(mid, |a, b| {
        a.centroid2(axis)
            .total_cmp(&b.centroid2(axis))
            .then(a.id.cmp(&b.id))
    });
    (mid, axis)
}

/// Stable-order-independent in-place partition; returns the count of
/// elements for which `left` holds, which end up first.
fn partition(prims: &mut [PrimRef], left: impl Fn(&PrimRef) -> bool) -> usize {
    let mut i = 0;
    let mut j = prims.len();
    while i < j {
        if left(&prims[i]) {
            i += 1;
        } else {
            j -= 1;
            prims.swap(i, j);
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::verify::verify_tree;

    fn prims(n: usize, seed: u32) -> Vec<PrimRef> {
        let mut s = seed.wrapping_mul(2654435761).max(1);
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 1000) as f32 / 10.0
        };
        (0..n)
            .map(|i| {
                let (x, y, z) = (r(), r(), r());
                PrimRef {
                    min: [x, y, z],
                    max: [x + r() / 10.0, y + 1.0, z],
                    id: i as u32,
                }
            })
            .collect()
    }

    #[test]
    fn every_size_gives_a_valid_tree_covering_each_primitive_once() {
        for n in 1..=100 {
            let mut p = prims(n, n as u32);
            let nodes = build(&mut p);
            let stats = verify_tree(&nodes, n, 1).unwrap();
            assert_eq!(stats.leaves, n);
            let mut ids: Vec<u32> = p.iter().map(|p| p.id).collect();
            ids.sort();
            assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
            // every node box contains its leaf boxes
            for (i, node) in nodes.iter().enumerate() {
                for leaf in &nodes[i..node.end as usize] {
                    if leaf.end as usize == i + 1 {
                        continue;
                    }
                    for k in 0..3 {
                        assert!(node.min[k] <= leaf.min[k] && leaf.max[k] <= node.max[k]);
                    }
                }
            }
        }
    }

    #[test]
    fn coincident_centroids_still_split() {
        let mut p = vec![
            PrimRef {
                min: [0.0; 3],
                max: [1.0; 3],
                id: 0
            };
            33
        ];
        for (i, q) in p.iter_mut().enumerate() {
            q.id = i as u32;
        }
        let nodes = build(&mut p);
        verify_tree(&nodes, 33, 1).unwrap();
    }

    #[test]
    fn sah_beats_a_median_split_on_clustered_input() {
        // two far clusters of unequal size: SAH puts the cut in the gap
        let mut p: Vec<PrimRef> = (0..30)
            .map(|i| {
                let x = if i < 10 { i as f32 } else { 1000.0 + i as f32 };
                PrimRef {
                    min: [x, 0.0, 0.0],
                    max: [x + 0.5, 1.0, 1.0],
                    id: i,
                }
            })
            .collect();
        let nodes = build(&mut p);
        let left_end = nodes[1].end as usize;
        assert_eq!(
            (left_end - 1).div_ceil(2),
            10,
            "left subtree holds the small cluster"
        );
    }

    #[test]
    fn parallel_and_serial_builds_are_identical() {
        let base = prims(50_000, 7);
        let mut a = base.clone();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let na = one.install(|| build(&mut a));
        let mut b = base.clone();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let nb = two.install(|| build(&mut b));
        assert_eq!(na, nb);
        assert_eq!(a, b);
    }
}
