//! Top-down binary tree construction with the binned surface area heuristic
//! (Wald, "On fast construction of SAH-based bounding volume hierarchies",
//! 2007), one primitive per leaf, written straight into a depth-first
//! array of [`BinNode`]s (left child after its parent, `end` one past the
//! subtree).
//!
//! A subtree over `k` primitives always has `2k - 1` nodes, so the array
//! position of every subtree is known before it is built: the two halves of
//! a split are built into disjoint slices, in parallel with `rayon::join`,
//! and the result is byte-identical whatever the thread count (every
//! floating-point reduction happens inside one task, in a fixed order).

use glam::{Vec3A, Vec4};
use kiln_formats::level::MAX_DEPTH;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// One node of the builder's binary tree, in a depth-first array: the
/// skip-count layout of the archive's top-level tree (left child at
/// `i + 1`, `end` one past the subtree, a leaf when `end == i + 1`).
/// Encoding turns it into archived nodes (the top-level tree) or wide
/// quantised nodes (mesh trees).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinNode {
    /// Lower corner of the box.
    pub min: [f32; 3],
    /// Upper corner of the box.
    pub max: [f32; 3],
    /// One past the last node of this node's subtree.
    pub end: u32,
    /// Leaf: `leaf_data(first, 1)`; inner: the split axis.
    pub data: u32,
}

impl BinNode {
    /// The node over bounds `b` (its box), with `end` and `data`: written
    /// lane by lane, where `to_array` had built each corner on the stack
    /// and read it back across two stores (a stalled load a node).
    #[inline(always)]
    fn new(b: &Bounds, end: u32, data: u32) -> BinNode {
        BinNode {
            min: [b.min.x, b.min.y, b.min.z],
            max: [b.max.x, b.max.y, b.max.z],
            end,
            data,
        }
    }
}

/// Encodes a leaf payload of a [`BinNode`]: `count` primitives from
/// `first`.
#[inline]
pub const fn leaf_data(first: u32, count: u32) -> u32 {
    (first << 1) | (count - 1)
}

/// Decodes a [`BinNode`] leaf payload into `(first, count)`.
#[inline]
pub const fn leaf_range(data: u32) -> (u32, u32) {
    (data >> 1, (data & 1) + 1)
}

/// The builder's working form of a primitive, 32 bytes (half a form that
/// stores its centroid: less to hold and move, though measured alone it did
/// not make the terrain's build faster): its box as two SIMD vectors, with
/// the leaf's id in the fourth lanes. The lower corner's holds the bits
/// `id + ID_BIAS`, a normal float for every id a tree can have, and the
/// upper corner's its negation, so the fourth lane of `min + max` is
/// exactly zero: no lane the binning computes with is ever denormal
/// (denormal arithmetic costs a microcode assist per operation, which made
/// a first version of this layout 40% slower), and the id comes back bit
/// for bit because those lanes are only ever copied.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prim {
    lo: Vec4,
    hi: Vec4,
}

/// See [`Prim`].
const ID_BIAS: u32 = 0x0080_0000;

impl Prim {
    fn new([x, y, z]: [f32; 3], [a, b, c]: [f32; 3], id: u32) -> Prim {
        let id = f32::from_bits(id.wrapping_add(ID_BIAS));
        Prim {
            lo: Vec4::new(x, y, z, id),
            hi: Vec4::new(a, b, c, -id),
        }
    }
    #[inline]
    fn min(&self) -> Vec3A {
        Vec3A::from_vec4(self.lo)
    }
    #[inline]
    fn max(&self) -> Vec3A {
        Vec3A::from_vec4(self.hi)
    }
    /// The doubled centroid, `min + max`.
    #[inline]
    fn c2(&self) -> Vec3A {
        self.min() + self.max()
    }
    #[inline]
    fn id(&self) -> u32 {
        self.lo.w.to_bits().wrapping_sub(ID_BIAS)
    }
}

/// Number of candidate split planes per axis is `BINS - 1`.
const BINS: usize = 16;
/// Nodes this small get an exact SAH sweep over sorted centroids instead
/// of binning (cheaper than clearing the bins, and better).
const SMALL: usize = 12;
/// Below this many primitives a subtree is built on the current thread.
const PARALLEL_GRAIN: usize = 4096;
/// Past this depth splits are median splits, which bounds the depth by
/// `SAH_DEPTH + log2(n)`, far below [`MAX_DEPTH`].
const SAH_DEPTH: usize = 64;
const _: () = assert!(SAH_DEPTH + 33 < MAX_DEPTH);

/// A box and a centroid box, grown together.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    min: Vec3A,
    max: Vec3A,
    cmin: Vec3A,
    cmax: Vec3A,
    count: u32,
}

const EMPTY: Bounds = Bounds {
    min: Vec3A::splat(f32::INFINITY),
    max: Vec3A::splat(f32::NEG_INFINITY),
    cmin: Vec3A::splat(f32::INFINITY),
    cmax: Vec3A::splat(f32::NEG_INFINITY),
    count: 0,
};

impl Bounds {
    #[inline]
    fn add(&mut self, p: &Prim) {
        let c2 = p.c2();
        self.min = self.min.min(p.min());
        self.max = self.max.max(p.max());
        self.cmin = self.cmin.min(c2);
        self.cmax = self.cmax.max(c2);
        self.count += 1;
    }
    fn of(prims: &[Prim]) -> Bounds {
        let mut b = EMPTY;
        for p in prims {
            b.add(p);
        }
        b
    }
}

/// Builds the tree over boxes given in order: returns, for each leaf in
/// depth-first order, the index of its box, and the nodes (the form every
/// caller wants: mesh trees, the top-level tree, nearest distances).
pub fn build_boxes(
    boxes: impl IntoParallelIterator<Item = ([f32; 3], [f32; 3]), Iter: IndexedParallelIterator>,
) -> (Vec<u32>, Vec<BinNode>) {
    // taken on the pool: a large mesh's leaf boxes cost as much as a
    // level of the tree (the 2.1M terrain's, first bake of a process:
    // 30–38 ms on one thread, 15–20 on two)
    let mut work: Vec<Prim> = boxes
        .into_par_iter()
        .enumerate()
        .map(|(i, (min, max))| Prim::new(min, max, i as u32))
        .collect();
    let nodes = build(&mut work);
    (work.par_iter().map(Prim::id).collect(), nodes)
}

/// Builds the tree. On return `work` is in leaf order (leaf `j` in
/// depth-first order holds `work[j]`), and each leaf's `data` is
/// `leaf_data(j, 1)`.
fn build(work: &mut [Prim]) -> Vec<BinNode> {
    if work.is_empty() {
        return Vec::new();
    }
    // left uninitialised: `build_rec` writes every node once (filling 32
    // bytes a node first cost a pass over tens of megabytes)
    let mut nodes = Box::<[BinNode]>::new_uninit_slice(2 * work.len() - 1);
    let bounds = Bounds::of(work);
    // the other buffer binned splits partition into (see `build_rec`),
    // copied on the pool: its first touch of fresh pages is most of the
    // copy (on one thread, 9 ms of the 2.1M terrain's bake)
    let mut spare: Vec<Prim> = work.par_iter().copied().collect();
    build_rec(work, &mut spare, false, &mut nodes, 0, 0, 1, bounds, None);
    // SAFETY: `build_rec` writes `nodes[0]` and hands the rest on as two
    // slices that tile it, each exactly as long as its subtree (it asserts
    // `2k - 1` nodes for `k` primitives, and a leaf's slice is its one
    // node), so by induction every element was written.
    unsafe { nodes.assume_init() }.into_vec()
}

/// Builds the subtree over `prims` (which sit at `first_prim..` in leaf
/// order, with box and centroid box `b`) into `nodes`, whose first element
/// is array index `base`. `spare` is the same stretch of the other buffer:
/// a binned split partitions from one buffer into the other (without
/// branches: the tree does not depend on the order within a side), and
/// the children go on from there. `spare_is_work` says whether `spare` is
/// the caller's `work`, where each leaf's primitive must end. `orders`:
/// for a small node whose parent was small too, its primitives' order on
/// each axis, handed down (see [`small_split`]).
#[allow(clippy::too_many_arguments)]
fn build_rec(
    prims: &mut [Prim],
    spare: &mut [Prim],
    spare_is_work: bool,
    nodes: &mut [MaybeUninit<BinNode>],
    base: u32,
    first_prim: u32,
    depth: usize,
    b: Bounds,
    orders: Option<Orders>,
) {
    // what `build`'s proof that every node is written rests on
    assert_eq!(nodes.len(), 2 * prims.len() - 1);
    let end = base + nodes.len() as u32;
    if prims.len() == 1 {
        if spare_is_work {
            spare[0] = prims[0];
        }
        nodes[0].write(BinNode::new(&b, end, leaf_data(first_prim, 1)));
        return;
    }
    // a binned split moves the primitives into `spare`
    let mut halves = (None, None);
    let (split, moved) = if depth >= SAH_DEPTH {
        (None, false)
    } else if prims.len() <= SMALL {
        let split = small_split(prims, orders).map(|(s, l, r)| {
            halves = (l, r);
            s
        });
        (split, false)
    } else {
        let s = sah_split(prims, spare, &b);
        let moved = s.is_some();
        (s, moved)
    };
    let (mid, axis, left, right) = match split {
        Some(s) => s,
        None => median_split(prims, &b),
    };
    nodes[0].write(BinNode::new(&b, end, axis as u32));
    let (prims, spare, spare_is_work) = if moved {
        (spare, prims, !spare_is_work)
    } else {
        (prims, spare, spare_is_work)
    };
    // left subtree: mid prims → 2*mid-1 nodes right after this one
    let parallel = prims.len() > PARALLEL_GRAIN;
    let (left_prims, right_prims) = prims.split_at_mut(mid);
    let (left_spare, right_spare) = spare.split_at_mut(mid);
    let (left_nodes, right_nodes) = nodes[1..].split_at_mut(2 * mid - 1);
    let left_base = base + 1;
    let right_base = base + 2 * mid as u32;
    let right_first = first_prim + mid as u32;
    let mut build_left = || {
        build_rec(
            left_prims,
            left_spare,
            spare_is_work,
            left_nodes,
            left_base,
            first_prim,
            depth + 1,
            left,
            halves.0,
        )
    };
    let mut build_right = || {
        build_rec(
            right_prims,
            right_spare,
            spare_is_work,
            right_nodes,
            right_base,
            right_first,
            depth + 1,
            right,
            halves.1,
        )
    };
    if parallel {
        rayon::join(build_left, build_right);
    } else {
        build_left();
        build_right();
    }
}

/// The bin of centroid coordinate `c`: [`bins_of`]'s lane, so the
/// partition and the binning can never disagree on a primitive.
#[inline]
fn bin_of(c: f32, cmin: f32, scale: f32) -> usize {
    bins_of(Vec3A::splat(c), Vec3A::splat(cmin), Vec3A::splat(scale))[0]
}

/// The bins of a centroid on the three axes: clamped in float (a NaN to
/// bin 0: the clamp's `max` keeps its second operand), then truncated.
#[inline]
fn bins_of(c: Vec3A, cmin: Vec3A, scale: Vec3A) -> [usize; 3] {
    let f = ((c - cmin) * scale)
        .max(Vec3A::ZERO)
        .min(Vec3A::splat((BINS - 1) as f32));
    truncate3(f)
}

/// The three lanes of `f` (each in `0.0..=15.0`: clamped, and a NaN
/// lane already taken to 0 by the clamp's `max`) truncated to integers,
/// the same values as `as i32` gives: one SIMD conversion, where three
/// saturating scalar casts cost three times the instructions.
#[cfg(target_arch = "x86_64")]
#[inline]
fn truncate3(f: Vec3A) -> [usize; 3] {
    use std::arch::x86_64::{_mm_cvtsi128_si32, _mm_cvttps_epi32, _mm_shuffle_epi32};
    // SAFETY: SSE2 register operations only (no memory is read or
    // written), and SSE2 is in x86-64's baseline, so every CPU this code
    // can run on has them.
    unsafe {
        let i = _mm_cvttps_epi32(f.into());
        [
            _mm_cvtsi128_si32(i) as usize,
            _mm_cvtsi128_si32(_mm_shuffle_epi32::<1>(i)) as usize,
            _mm_cvtsi128_si32(_mm_shuffle_epi32::<2>(i)) as usize,
        ]
    }
}

/// See the x86-64 form.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn truncate3(f: Vec3A) -> [usize; 3] {
    let f = f.to_array();
    [
        f[0] as i32 as usize,
        f[1] as i32 as usize,
        f[2] as i32 as usize,
    ]
}

/// A side's primitive count as the SAH cost counts it: rounded up to a
/// multiple of the archive's node width (4). The binary tree is collapsed
/// into 4-wide nodes, so a side of 5 leaves costs as much as one of 8 (two
/// nodes' worth of tests); rounding steers splits toward whole nodes of
/// leaves, the way Embree rounds primitive counts up to whole leaf blocks
/// (Wald et al., "Embree: A Kernel Framework for Efficient CPU Ray
/// Tracing", SIGGRAPH 2014). On the 2.1M terrain it cut the box nodes from
/// 387k to 369k (0.28 bytes per triangle) with the same query times.
#[inline(always)]
fn blocks(count: u32) -> f32 {
    ((count + 3) & !3) as f32
}

/// Splits at the best binned-SAH plane over all three axes (binned in one
/// pass); returns the left count (both sides non-empty), the axis, and the
/// children's bounds, which come straight from the bins. Leaves always
/// hold one primitive, so only the children's costs (area × [`blocks`] of
/// the count) are compared. The primitives are partitioned into `dst`
/// (left side first); `None`, with nothing moved, when all centroids
/// coincide.
fn sah_split(
    prims: &[Prim],
    dst: &mut [Prim],
    b: &Bounds,
) -> Option<(usize, usize, Bounds, Bounds)> {
    let extent = b.cmax - b.cmin;
    let mut scale = [0.0f32; 3];
    for k in 0..3 {
        if extent[k] > 0.0 {
            scale[k] = BINS as f32 / extent[k];
        }
    }
    if scale == [0.0; 3] {
        return None;
    }
    let cmin = b.cmin.to_array();
    let mut sets = [EMPTY_BINS; 2];
    bin_all(prims, b.cmin, Vec3A::from(scale), &mut sets);
    let bins = &sets[0];
    let mut best: Option<(f32, usize, usize)> = None; // (cost, axis, split bin)
    for k in 0..3 {
        if scale[k] == 0.0 {
            continue;
        }
        // an empty bin leaves both sides as they were, so the plane after
        // it costs exactly what the plane before it did: its cost is
        // neither computed nor offered (a `<` never takes an equal cost,
        // so the split found is the same)
        let mut right_cost = [0.0f32; BINS + 1];
        let mut acc = Bin::EMPTY;
        for s in (1..BINS).rev() {
            let bin = &bins[k][s];
            right_cost[s] = if bin.count == 0 {
                right_cost[s + 1]
            } else {
                acc.merge(bin);
                acc.half_area() * blocks(acc.count)
            };
        }
        let mut left = Bin::EMPTY;
        for s in 1..BINS {
            let bin = &bins[k][s - 1];
            if bin.count == 0 {
                continue;
            }
            left.merge(bin);
            if left.count as usize == prims.len() {
                continue;
            }
            let cost = left.half_area() * blocks(left.count) + right_cost[s];
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, k, s));
            }
        }
    }
    let (_, axis, split) = best?;
    let (mut left, mut right) = (EMPTY, EMPTY);
    for (s, bin) in bins[axis].iter().enumerate() {
        let side = if s < split { &mut left } else { &mut right };
        side.min = side.min.min(bin.min);
        side.max = side.max.max(bin.max);
        side.count += bin.count;
    }
    // one loop per axis, so the centroid's coordinate is a fixed lane
    let i = match axis {
        0 => partition::<0>(prims, dst, cmin[0], scale[0], split, &mut left, &mut right),
        1 => partition::<1>(prims, dst, cmin[1], scale[1], split, &mut left, &mut right),
        _ => partition::<2>(prims, dst, cmin[2], scale[2], split, &mut left, &mut right),
    };
    debug_assert_eq!(i, left.count as usize);
    Some((i, axis, left, right))
}

/// Partitions `prims` into `dst` by their bin on axis `AXIS` (left side,
/// bins below `split`, first), taking each side's centroid box on the way
/// (each primitive is looked at exactly once), without branches: a
/// mispredicted side per primitive cost more than the copy. Returns the
/// left count.
#[inline(always)]
fn partition<const AXIS: usize>(
    prims: &[Prim],
    dst: &mut [Prim],
    cmin: f32,
    scale: f32,
    split: usize,
    left: &mut Bounds,
    right: &mut Bounds,
) -> usize {
    let (mut i, mut j) = (0usize, prims.len());
    let big = Vec3A::splat(f32::INFINITY);
    for p in prims {
        let c = p.c2();
        let along = match AXIS {
            0 => c.x,
            1 => c.y,
            _ => c.z,
        };
        let to_left = bin_of(along, cmin, scale) < split;
        let m = glam::BVec3A::splat(to_left);
        left.cmin = left.cmin.min(Vec3A::select(m, c, big));
        left.cmax = left.cmax.max(Vec3A::select(m, c, -big));
        right.cmin = right.cmin.min(Vec3A::select(m, big, c));
        right.cmax = right.cmax.max(Vec3A::select(m, -big, c));
        j -= usize::from(!to_left);
        let at = if to_left { i } else { j };
        dst[at] = *p;
        i += usize::from(to_left);
    }
    i
}

/// A bin of the binned SAH: the box of its primitives and their count
/// (the children's centroid boxes are taken while partitioning instead).
#[derive(Clone, Copy, Debug)]
struct Bin {
    min: Vec3A,
    max: Vec3A,
    count: u32,
}

impl Bin {
    const EMPTY: Bin = Bin {
        min: Vec3A::splat(f32::INFINITY),
        max: Vec3A::splat(f32::NEG_INFINITY),
        count: 0,
    };
    #[inline]
    fn merge(&mut self, o: &Bin) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.count += o.count;
    }
    #[inline]
    fn half_area(&self) -> f32 {
        let d = self.max - self.min;
        d.x * d.y + d.y * d.z + d.z * d.x
    }
}

/// Below this many primitives a node's primitives are binned on the
/// current thread.
const PARALLEL_BINNING: usize = 1 << 16;

/// A node's bins: per axis, [`BINS`] bins.
type Bins = [[Bin; BINS]; 3];

/// Empty bins.
const EMPTY_BINS: Bins = [[Bin::EMPTY; BINS]; 3];

/// Bins every primitive on all three axes into `sets[0]` (`sets[1]` is
/// scratch; both empty on entry), in place: returning the 2.3 KB of bins
/// by value had cost a copy or two a node. Large nodes are binned in two
/// halves in parallel and merged: bins hold only minima, maxima and
/// counts, which merge exactly in any order, so the result is the same.
fn bin_all(prims: &[Prim], cmin: Vec3A, scale: Vec3A, sets: &mut [Bins; 2]) {
    if prims.len() >= PARALLEL_BINNING {
        let (a, b) = prims.split_at(prims.len() / 2);
        let mut other = [EMPTY_BINS; 2];
        rayon::join(
            || bin_all(a, cmin, scale, sets),
            || bin_all(b, cmin, scale, &mut other),
        );
        merge_bins(&mut sets[0], &other[0]);
        return;
    }
    let add = |bins: &mut Bins, p: &Prim| {
        let [x, y, z] = bins_of(p.c2(), cmin, scale);
        let (lo, hi) = (p.min(), p.max());
        for (axis, s) in [(0, x), (1, y), (2, z)] {
            bins[axis][s].merge(&Bin {
                min: lo,
                max: hi,
                count: 1,
            });
        }
    };
    // two sets of bins, for alternate primitives: neighbours in the input
    // tend to fall in the same bins, and with one set each merge waited on
    // the previous one's store to the same bin
    let [bins, other] = sets;
    let mut pairs = prims.chunks_exact(2);
    for pair in &mut pairs {
        add(bins, &pair[0]);
        add(other, &pair[1]);
    }
    if let [p] = pairs.remainder() {
        add(bins, p);
    }
    merge_bins(bins, other);
}

/// Merges `other`'s bins into `bins`, bin by bin.
fn merge_bins(bins: &mut Bins, other: &Bins) {
    for (xa, ya) in bins.iter_mut().zip(other) {
        for (xb, yb) in xa.iter_mut().zip(ya) {
            xb.merge(yb);
        }
    }
}

/// A small node's primitives in order of centroid on each axis (ties by
/// id): indices into the node's slice.
type Orders = [[u8; SMALL]; 3];

/// The split of a small node and the orders of its two halves.
type SmallSplit = (
    (usize, usize, Bounds, Bounds),
    Option<Orders>,
    Option<Orders>,
);

/// Exact SAH for a small node: for each axis, the primitives in order of
/// centroid, and a sweep over every split position. `None` only if the
/// node has fewer than two prims. A node's orders are sorted once, where
/// the walk down first meets a small node; each half's come from its
/// parent's, kept in order (a half of a sorted list is sorted), so the
/// nodes below never sort again (sorting at every small node had been a
/// tenth of a bake). The halves' orders are `None` where a half is a
/// single primitive or a pair.
fn small_split(prims: &mut [Prim], orders: Option<Orders>) -> Option<SmallSplit> {
    let n = prims.len();
    if n == 2 {
        // one way to split two, in the order the sweep below would give
        // (by centroid on x, then id), so the tree never depends on the
        // order a partition left the primitives in
        let key = |p: &Prim| (total_order_key(p.c2().x), p.id());
        if key(&prims[1]) < key(&prims[0]) {
            prims.swap(0, 1);
        }
        let split = (1, 0, Bounds::of(&prims[..1]), Bounds::of(&prims[1..]));
        return Some((split, None, None));
    }
    let orders = orders.unwrap_or_else(|| sorted_orders(prims));
    let mut boxes = [Bin::EMPTY; SMALL];
    for (i, p) in prims.iter().enumerate() {
        boxes[i] = Bin {
            min: p.min(),
            max: p.max(),
            count: 1,
        };
    }
    let mut best: Option<(f32, usize, usize)> = None;
    let mut right_cost = [0.0f32; SMALL];
    for (k, order) in orders.iter().enumerate() {
        let mut acc = Bin::EMPTY;
        for s in (1..n).rev() {
            acc.merge(&boxes[order[s] as usize]);
            right_cost[s] = acc.half_area() * blocks(acc.count);
        }
        let mut left = Bin::EMPTY;
        for s in 1..n {
            left.merge(&boxes[order[s - 1] as usize]);
            let cost = left.half_area() * blocks(left.count) + right_cost[s];
            if best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((cost, k, s));
            }
        }
    }
    let (_, axis, mid) = best?;
    let order = &orders[axis];
    let mut sorted = [prims[0]; SMALL];
    // where each primitive goes: its rank on the split axis
    let mut rank = [0u8; SMALL];
    for (r, &i) in order[..n].iter().enumerate() {
        sorted[r] = prims[i as usize];
        rank[i as usize] = r as u8;
    }
    prims.copy_from_slice(&sorted[..n]);
    // both halves' orders: the parent's, in the new places, split by side
    // without a branch (which side a primitive falls on is a coin toss)
    let (mut left, mut right) = ([[0u8; SMALL]; 3], [[0u8; SMALL]; 3]);
    for ((l, r), parent) in left.iter_mut().zip(right.iter_mut()).zip(&orders) {
        let (mut jl, mut jr) = (0, 0);
        for &i in &parent[..n] {
            let at = rank[i as usize];
            let right_side = usize::from(at as usize >= mid);
            // written to both, kept by one: the other's count stays
            l[jl.min(SMALL - 1)] = at;
            r[jr.min(SMALL - 1)] = at.wrapping_sub(mid as u8);
            jl += 1 - right_side;
            jr += right_side;
        }
    }
    let keep = |o: [[u8; SMALL]; 3], len: usize| (len > 2).then_some(o);
    let (l, r) = prims.split_at(mid);
    Some((
        (mid, axis, Bounds::of(l), Bounds::of(r)),
        keep(left, mid),
        keep(right, n - mid),
    ))
}

/// The primitives' order on each axis by centroid, ties by id: insertion
/// sorts of small indices on integer keys that order as (`total_cmp`, id)
/// do (sorting 64-byte prims four times per node dominated the build
/// once, comparing floats through the prims later).
fn sorted_orders(prims: &[Prim]) -> Orders {
    let n = prims.len();
    let mut keys = [[0u64; SMALL]; 3];
    for (i, p) in prims.iter().enumerate() {
        let c2 = p.c2();
        for (k, key) in keys.iter_mut().enumerate() {
            key[i] = u64::from(total_order_key(c2[k])) << 32 | u64::from(p.id());
        }
    }
    let mut orders = [[0u8; SMALL]; 3];
    for (order, key) in orders.iter_mut().zip(&keys) {
        for (i, o) in order.iter_mut().enumerate().take(n) {
            *o = i as u8;
        }
        for i in 1..n {
            let mut j = i;
            while j > 0 && key[order[j - 1] as usize] > key[order[j] as usize] {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    orders
}

/// An integer that orders as `f32::total_cmp` orders the floats.
fn total_order_key(x: f32) -> u32 {
    let b = x.to_bits();
    (b ^ ((((b as i32) >> 31) as u32) >> 1)) ^ 0x8000_0000
}

/// Splits in half by count along the longest axis of the node box.
fn median_split(prims: &mut [Prim], b: &Bounds) -> (usize, usize, Bounds, Bounds) {
    let d = b.max - b.min;
    let axis = if d.x >= d.y && d.x >= d.z {
        0
    } else if d.y >= d.z {
        1
    } else {
        2
    };
    let mid = prims.len() / 2;
    prims.select_nth_unstable_by(mid, |a, b| {
        a.c2()[axis]
            .total_cmp(&b.c2()[axis])
            .then(a.id().cmp(&b.id()))
    });
    let (l, r) = prims.split_at(mid);
    (mid, axis, Bounds::of(l), Bounds::of(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a builder tree over `prims` one-primitive leaves: every
    /// `end` where the skip-count layout puts it, split axes 0–2, finite
    /// boxes, leaves covering the primitives once and in order, depth at
    /// most `MAX_DEPTH`. Returns the number of leaves.
    fn check_tree(nodes: &[BinNode], prims: usize) -> Result<usize, String> {
        if nodes.is_empty() || prims == 0 {
            return if nodes.is_empty() && prims == 0 {
                Ok(0)
            } else {
                Err(format!("{} nodes for {prims} primitives", nodes.len()))
            };
        }
        let (mut next, mut leaves) = (0usize, 0usize);
        let mut stack = vec![(0usize, nodes.len(), 1usize)];
        while let Some((i, end, depth)) = stack.pop() {
            let n = &nodes[i];
            if depth > MAX_DEPTH || n.end as usize != end {
                return Err(format!(
                    "node {i}: end {} expected {end} at depth {depth}",
                    n.end
                ));
            }
            if !(0..3).all(|k| n.min[k].is_finite() && n.max[k].is_finite() && n.min[k] <= n.max[k])
            {
                return Err(format!("node {i}: box {:?} {:?}", n.min, n.max));
            }
            if end == i + 1 {
                let (first, count) = leaf_range(n.data);
                if count != 1 || first as usize != next || next >= prims {
                    return Err(format!("node {i}: leaf {first}+{count}, expected {next}"));
                }
                (next, leaves) = (next + 1, leaves + 1);
            } else {
                let left_end = nodes[i + 1].end as usize;
                if n.data > 2 || left_end <= i + 1 || left_end >= end {
                    return Err(format!("node {i}: axis {} left end {left_end}", n.data));
                }
                stack.push((left_end, end, depth + 1));
                stack.push((i + 1, left_end, depth + 1));
            }
        }
        if next != prims {
            return Err(format!("leaves cover {next} of {prims} primitives"));
        }
        Ok(leaves)
    }

    #[test]
    fn the_tree_check_refuses_broken_trees() {
        let leaf = |first, end| BinNode {
            min: [0.0; 3],
            max: [1.0; 3],
            end,
            data: leaf_data(first, 1),
        };
        let good = vec![
            BinNode {
                data: 0,
                ..leaf(0, 3)
            },
            leaf(0, 2),
            leaf(1, 3),
        ];
        assert_eq!(check_tree(&good, 2), Ok(2));
        let mut wrong_end = good.clone();
        wrong_end[0].end = 2;
        let mut wrong_leaf = good.clone();
        wrong_leaf[2].data = leaf_data(0, 1);
        let mut wrong_axis = good.clone();
        wrong_axis[0].data = 7;
        let mut nan = good.clone();
        nan[1].min[0] = f32::NAN;
        for bad in [wrong_end, wrong_leaf, wrong_axis, nan] {
            assert!(check_tree(&bad, 2).is_err(), "{bad:?}");
        }
        assert!(check_tree(&good, 3).is_err());
        for first in [0, 7, (u32::MAX >> 2) - 1] {
            for count in [1, 2] {
                assert_eq!(leaf_range(leaf_data(first, count)), (first, count));
            }
        }
    }

    type Boxes = Vec<([f32; 3], [f32; 3])>;

    fn prims(n: usize, seed: u32) -> Boxes {
        let mut rng = kiln_geometry::rng::Rng::new(u64::from(seed));
        let mut r = || (rng.next_u64() % 1000) as f32 / 10.0;
        (0..n)
            .map(|_| {
                let (x, y, z) = (r(), r(), r());
                ([x, y, z], [x + r() / 10.0, y + 1.0, z])
            })
            .collect()
    }

    #[test]
    fn every_size_gives_a_valid_tree_covering_each_primitive_once() {
        for n in 1..=100 {
            let (mut ids, nodes) = build_boxes(prims(n, n as u32));
            assert_eq!(check_tree(&nodes, n), Ok(n));
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

    /// The orders a small node hands its halves are the ones sorting the
    /// halves afresh gives (ties included: coarse coordinates make many).
    #[test]
    fn a_small_nodes_halves_inherit_their_sorted_orders() {
        let mut halves = 0;
        for seed in 0..300 {
            let n = 3 + seed as usize % (SMALL - 2);
            let mut work: Vec<Prim> = prims(n, seed)
                .into_iter()
                .enumerate()
                .map(|(i, (lo, hi))| Prim::new(lo.map(f32::floor), hi.map(f32::floor), i as u32))
                .collect();
            let Some(((mid, ..), left, right)) = small_split(&mut work, None) else {
                panic!("seed {seed}: {n} prims split");
            };
            for (half, order) in [(&work[..mid], left), (&work[mid..], right)] {
                assert_eq!(order.is_some(), half.len() > 2, "seed {seed}");
                if let Some(order) = order {
                    halves += 1;
                    let fresh = sorted_orders(half);
                    for k in 0..3 {
                        assert_eq!(
                            order[k][..half.len()],
                            fresh[k][..half.len()],
                            "seed {seed}"
                        );
                    }
                }
            }
        }
        assert!(halves > 300, "{halves}");
    }

    #[test]
    fn coincident_centroids_still_split() {
        let (_, nodes) = build_boxes(vec![([0.0; 3], [1.0; 3]); 33]);
        assert_eq!(check_tree(&nodes, 33), Ok(33));
    }

    #[test]
    fn sah_beats_a_median_split_on_clustered_input() {
        // two far clusters of unequal size: SAH puts the cut in the gap
        let (_, nodes) = build_boxes((0..30).into_par_iter().map(|i| {
            let x = if i < 10 { i as f32 } else { 1000.0 + i as f32 };
            ([x, 0.0, 0.0], [x + 0.5, 1.0, 1.0])
        }));
        let left_end = nodes[1].end as usize;
        assert_eq!(
            (left_end - 1).div_ceil(2),
            10,
            "left subtree holds the small cluster"
        );
    }

    #[test]
    fn bins_are_the_plain_clamped_truncation() {
        // what the SIMD conversions must equal: clamp in float (a NaN to
        // 0, as `as i32` takes it), then truncate
        let plain = |x: f32| x.clamp(0.0, (BINS - 1) as f32) as i32 as usize;
        let xs = [
            0.0,
            -0.0,
            0.999_999_9,
            1.0,
            7.5,
            14.999_999,
            15.0,
            15.5,
            16.0,
            -1e-30,
            -3.0,
            1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(1),
        ];
        for (k, &a) in xs.iter().enumerate() {
            let (b, c) = (xs[(k + 5) % xs.len()], xs[(k + 11) % xs.len()]);
            // `bin_of` with cmin 0 and scale 1 sees the value itself
            assert_eq!(bin_of(a, 0.0, 1.0), plain(a), "{a}");
            let v = bins_of(Vec3A::new(a, b, c), Vec3A::ZERO, Vec3A::ONE);
            assert_eq!(v, [plain(a), plain(b), plain(c)], "{a} {b} {c}");
        }
        // and through the subtraction and the scale
        let mut rng = kiln_geometry::rng::Rng::new(0x1234_5678);
        for _ in 0..10_000 {
            let c = (rng.next_u64() % 20_000) as f32 * 0.01 - 50.0;
            let (cmin, scale) = (-40.0, 16.0 / 70.0);
            assert_eq!(bin_of(c, cmin, scale), plain((c - cmin) * scale), "{c}");
            assert_eq!(
                bins_of(Vec3A::splat(c), Vec3A::splat(cmin), Vec3A::splat(scale)),
                [plain((c - cmin) * scale); 3]
            );
        }
    }

    #[test]
    fn integer_keys_order_floats_as_total_cmp_does() {
        let mut xs = vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let mut rng = kiln_geometry::rng::Rng::new(0x9E37_79B9);
        for _ in 0..2000 {
            let x = f32::from_bits(rng.next_u64() as u32);
            if !x.is_nan() {
                xs.push(x);
            }
        }
        for a in &xs {
            for b in xs.iter().step_by(7) {
                assert_eq!(
                    total_order_key(*a).cmp(&total_order_key(*b)),
                    a.total_cmp(b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn the_tree_does_not_depend_on_the_order_of_its_input() {
        // distinct centroids on every axis, so no tie falls back on the
        // ids (which follow the input order)
        let n = 19_997u64; // prime: i·a mod n is a permutation
        let at = |i: u64, a: u64| ((i * a) % n) as f32 * 0.01;
        let spread: Boxes = (0..n)
            .map(|i| {
                let lo = [at(i, 7_919), at(i, 104_729), at(i, 15_485_863)];
                let w = 0.02 + at(i, 31) * 1e-3;
                (lo, [lo[0] + w, lo[1] + 2.0 * w, lo[2] + 0.5 * w])
            })
            .collect();
        // twelve boxes near the origin and a pair far off: the binned
        // split at the root leaves the pair a side of its own
        let mut pair: Boxes = (0..12)
            .map(|i| {
                // i·5 and i·7 mod 12 are permutations: distinct on y and z
                let lo = [
                    i as f32 * 0.7,
                    (i * 5 % 12) as f32 * 0.3,
                    (i * 7 % 12) as f32 * 0.45,
                ];
                (lo, lo.map(|v| v + 1.0))
            })
            .collect();
        pair.push(([1000.0, 0.0, 0.0], [1001.0, 1.0, 1.0]));
        pair.push(([1000.5, 2.0, 3.0], [1001.5, 3.0, 4.0]));
        for boxes in [spread, pair] {
            let (order, nodes) = build_boxes(boxes.par_iter().copied());
            let n = boxes.len();
            // the same boxes in other orders: strides through the list
            // (each coprime with both lengths, so a permutation)
            for stride in [n - 1, 3, 5] {
                let perm: Vec<usize> = (0..n).map(|i| (i * stride) % n).collect();
                let (order_p, nodes_p) = build_boxes(perm.par_iter().map(|&i| boxes[i]));
                assert_eq!(nodes_p, nodes, "stride {stride} of {n}");
                let back: Vec<u32> = order_p.iter().map(|&j| perm[j as usize] as u32).collect();
                assert_eq!(back, order, "stride {stride} of {n}");
            }
        }
    }

    #[test]
    fn parallel_and_serial_builds_are_identical() {
        // large enough that the root's binning is split across threads
        let base = prims(150_000, 7);
        let on = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| build_boxes(base.clone()))
        };
        assert_eq!(on(1), on(2));
    }
}
