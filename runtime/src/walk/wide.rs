//! A mesh's box tree: 8-wide self-framed nodes ([`ArchivedWideNode`]),
//! all eight children of a node decoded and tested in one pass.
//!
//! Two implementations of that pass, [`Lanes`]: [`Portable`], written per
//! lane in plain f32, and on x86-64 [`Avx2`], which runs the same IEEE
//! operations in the same order on 8-lane registers (`std::arch`, chosen
//! at run time by `is_x86_feature_detected!`). Every operation is a plain
//! add, subtract, multiply, compare, or a min or max written with SSE's
//! rule (the second operand when the first is not strictly less, or
//! greater), so both give the same masks and distances bit for bit, and
//! so the same answers: a test walks both over the same queries.
//!
//! A walk with [`Avx2`] is entered through [`with_avx2`], a function
//! compiled for AVX2, so that the node pass inlines into the walk's loop.

use super::{Found, Grow, Region, Tree, Unframed, prefetch_span};
use crate::geom::ray_box::{EXIT_SCALE, SlabRay};
use kiln_formats::tri_mesh::{ArchivedLeaf, ArchivedWideNode, BOX_STEPS, LEAF_BIT, WIDE};

/// One pass over a node's eight children: which of them (bit `c` for
/// child `c`, unused slots included: the caller masks them) pass, and
/// each one's key.
pub(crate) trait Lanes: Copy {
    /// The children whose boxes, grown by `grow`, `ray` enters within
    /// `[0, t_max]`, and their entry distances (the slab test of
    /// `SlabRay::hit_a`).
    fn ray(
        &self,
        n: &ArchivedWideNode,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
    ) -> (u32, [f32; WIDE]);
    /// The children whose boxes may touch `region`, and their keys: the
    /// squared distance from a ball region's centre, zero for a box.
    fn region(&self, n: &ArchivedWideNode, region: &Region) -> (u32, [f32; WIDE]);
}

/// SSE's `minps` for one lane: `a` if `a < b`, else `b`.
#[inline(always)]
fn min1(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// SSE's `maxps` for one lane: `a` if `a > b`, else `b`.
#[inline(always)]
fn max1(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// The node's box on axis `k` and its decode step.
#[inline(always)]
fn frame(n: &ArchivedWideNode, k: usize) -> (f32, f32, f32) {
    let (min, max) = (n.min[k].to_native(), n.max[k].to_native());
    (min, max, (max - min) * (1.0 / BOX_STEPS))
}

/// The pass written per lane, in plain f32: any CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl Portable {
    /// Children's faces on axis `k`: `(lo, hi)` per lane.
    #[inline(always)]
    fn faces(n: &ArchivedWideNode, k: usize) -> ([f32; WIDE], [f32; WIDE]) {
        let (min, max, step) = frame(n, k);
        (
            std::array::from_fn(|c| min + f32::from(n.lo[k][c]) * step),
            std::array::from_fn(|c| max - f32::from(n.hi[k][c]) * step),
        )
    }
}

impl Lanes for Portable {
    #[inline(always)]
    fn ray(
        &self,
        n: &ArchivedWideNode,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
    ) -> (u32, [f32; WIDE]) {
        let mut near = [0.0f32; WIDE];
        let mut far = [t_max; WIDE];
        for k in 0..3 {
            let (lo, hi) = Self::faces(n, k);
            let (g, o, inv) = (grow.ext[k], ray.origin[k], ray.inv_dir[k]);
            for c in 0..WIDE {
                let (l, h) = (lo[c] - g, hi[c] + g);
                if inv == 0.0 {
                    // the ray does not move along this axis: inside the slab or not
                    if !(o >= l && o <= h) {
                        far[c] = f32::NEG_INFINITY;
                    }
                } else {
                    let (t0, t1) = ((l - o) * inv, (h - o) * inv);
                    near[c] = max1(near[c], min1(t0, t1));
                    far[c] = min1(far[c], max1(t0, t1));
                }
            }
        }
        let mut hit = 0;
        for c in 0..WIDE {
            hit |= u32::from(near[c] <= far[c] * EXIT_SCALE) << c;
        }
        (hit, near)
    }

    #[inline(always)]
    fn region(&self, n: &ArchivedWideNode, region: &Region) -> (u32, [f32; WIDE]) {
        let faces = [0, 1, 2].map(|k| Self::faces(n, k));
        let mut hit = 0;
        let mut key = [0.0f32; WIDE];
        match *region {
            Region::Ball { c: centre, r } => {
                let rr = r * r;
                for (c, key) in key.iter_mut().enumerate() {
                    let d = |k: usize| {
                        let (l, h) = (faces[k].0[c], faces[k].1[c]);
                        max1(max1(l - centre[k], centre[k] - h), 0.0)
                    };
                    let (dx, dy, dz) = (d(0), d(1), d(2));
                    *key = dx * dx + dy * dy + dz * dz;
                    hit |= u32::from(*key <= rr) << c;
                }
            }
            Region::Box { lo, hi } => {
                for c in 0..WIDE {
                    let o = |k: usize| faces[k].0[c] <= hi[k] && faces[k].1[c] >= lo[k];
                    hit |= u32::from(o(0) && o(1) && o(2)) << c;
                }
            }
        }
        (hit, key)
    }
}

/// The pass on AVX2's 8-lane registers. A value exists only where the CPU
/// has AVX2 ([`Avx2::detect`]), which is what makes its calls sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _proof: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The pass, if this CPU has AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2 { _proof: () })
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes for Avx2 {
    #[inline(always)]
    fn ray(
        &self,
        n: &ArchivedWideNode,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
    ) -> (u32, [f32; WIDE]) {
        // SAFETY: an `Avx2` exists only where `detect` found AVX2, the one
        // feature `avx2::ray` is compiled for
        unsafe { avx2::ray(n, ray, grow, t_max) }
    }
    #[inline(always)]
    fn region(&self, n: &ArchivedWideNode, region: &Region) -> (u32, [f32; WIDE]) {
        // SAFETY: as in `ray`
        unsafe { avx2::region(n, region) }
    }
}

/// Runs `f` in a function compiled for AVX2, so that the AVX2 pass inlines
/// into the walk `f` runs (the proof `_cpu` says the CPU has it).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn with_avx2<R>(_cpu: Avx2, f: impl FnOnce() -> R) -> R {
    #[target_feature(enable = "avx2")]
    fn compiled_for_avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    // SAFETY: `_cpu` exists only where `Avx2::detect` found AVX2
    unsafe { compiled_for_avx2(f) }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{EXIT_SCALE, Grow, Region, SlabRay, WIDE, frame};
    use kiln_formats::tri_mesh::ArchivedWideNode;
    use std::arch::x86_64::*;

    // the layout the code loads read: eight `u8`s per axis, `lo` from byte
    // 24 and `hi` from byte 48 of the node's 80
    const _: () = assert!(
        std::mem::offset_of!(ArchivedWideNode, lo) == 24
            && std::mem::offset_of!(ArchivedWideNode, hi) == 48
            && WIDE == 8
            && std::mem::size_of::<ArchivedWideNode>() == 80
    );

    /// The eight codes at byte `at` of `n` as floats.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn codes(n: &ArchivedWideNode, at: usize) -> __m256 {
        let p = (n as *const ArchivedWideNode).cast::<u8>();
        // SAFETY: `at` is 24, 32, 40 (`lo`) or 48, 56, 64 (`hi`, see the
        // assert above), so bytes `at..at + 8` lie inside the borrowed
        // 80-byte node and are initialised `u8`s; the load is an unaligned
        // form (the node is 4-aligned)
        let b = unsafe { _mm_loadl_epi64(p.add(at).cast::<__m128i>()) };
        _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b))
    }

    /// The children's faces on axis `k`, as `Portable::faces`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn faces(n: &ArchivedWideNode, k: usize) -> (__m256, __m256) {
        let (min, max, step) = frame(n, k);
        let s = _mm256_set1_ps(step);
        (
            _mm256_add_ps(_mm256_set1_ps(min), _mm256_mul_ps(codes(n, 24 + 8 * k), s)),
            _mm256_sub_ps(_mm256_set1_ps(max), _mm256_mul_ps(codes(n, 48 + 8 * k), s)),
        )
    }

    /// Eight lanes out of a register.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn lanes(v: __m256) -> [f32; WIDE] {
        let mut out = [0.0f32; WIDE];
        // SAFETY: `out` is 32 writable bytes; the store is an unaligned form
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) };
        out
    }

    /// `Portable::ray` on eight lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn ray(
        n: &ArchivedWideNode,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
    ) -> (u32, [f32; WIDE]) {
        let mut near = _mm256_setzero_ps();
        let mut far = _mm256_set1_ps(t_max);
        for k in 0..3 {
            let (lo, hi) = faces(n, k);
            let (g, o, inv) = (grow.ext[k], ray.origin[k], ray.inv_dir[k]);
            let g = _mm256_set1_ps(g);
            let (l, h) = (_mm256_sub_ps(lo, g), _mm256_add_ps(hi, g));
            let o = _mm256_set1_ps(o);
            if inv == 0.0 {
                let inside = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(o, l),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(o, h),
                );
                far = _mm256_blendv_ps(_mm256_set1_ps(f32::NEG_INFINITY), far, inside);
            } else {
                let inv = _mm256_set1_ps(inv);
                let t0 = _mm256_mul_ps(_mm256_sub_ps(l, o), inv);
                let t1 = _mm256_mul_ps(_mm256_sub_ps(h, o), inv);
                near = _mm256_max_ps(near, _mm256_min_ps(t0, t1));
                far = _mm256_min_ps(far, _mm256_max_ps(t0, t1));
            }
        }
        let exit = _mm256_mul_ps(far, _mm256_set1_ps(EXIT_SCALE));
        let hit = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(near, exit)) as u32;
        (hit, lanes(near))
    }

    /// `Portable::region` on eight lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn region(n: &ArchivedWideNode, region: &Region) -> (u32, [f32; WIDE]) {
        let faces = [faces(n, 0), faces(n, 1), faces(n, 2)];
        match *region {
            Region::Ball { c, r } => {
                let zero = _mm256_setzero_ps();
                let d = |k: usize| {
                    let (l, h) = faces[k];
                    let ck = _mm256_set1_ps(c[k]);
                    _mm256_max_ps(
                        _mm256_max_ps(_mm256_sub_ps(l, ck), _mm256_sub_ps(ck, h)),
                        zero,
                    )
                };
                let (dx, dy, dz) = (d(0), d(1), d(2));
                let d2 = _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
                    _mm256_mul_ps(dz, dz),
                );
                let hit = _mm256_cmp_ps::<_CMP_LE_OQ>(d2, _mm256_set1_ps(r * r));
                (_mm256_movemask_ps(hit) as u32, lanes(d2))
            }
            Region::Box { lo, hi } => {
                let mut hit = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
                for (k, &(l, h)) in faces.iter().enumerate() {
                    let o = _mm256_and_ps(
                        _mm256_cmp_ps::<_CMP_LE_OQ>(l, _mm256_set1_ps(hi[k])),
                        _mm256_cmp_ps::<_CMP_GE_OQ>(h, _mm256_set1_ps(lo[k])),
                    );
                    hit = _mm256_and_ps(hit, o);
                }
                (_mm256_movemask_ps(hit) as u32, [0.0; WIDE])
            }
        }
    }
}

/// A mesh's box tree of wide nodes, its node pass `L`.
#[derive(Clone, Copy)]
pub(crate) struct WideTreeView<'a, L> {
    nodes: &'a [ArchivedWideNode],
    /// The mesh's leaf rows, for prefetching the rows of leaves a walk
    /// enters.
    leaves: &'a [ArchivedLeaf],
    root: Option<u32>,
    /// Whether walks ask for children's lines ahead (see
    /// [`super::PREFETCH_FROM_BYTES`]).
    ahead: bool,
    /// The node pass.
    pub(crate) lanes: L,
}

impl<'a, L: Lanes> WideTreeView<'a, L> {
    /// A tree over `nodes` and `leaves`, rooted at `root`, its nodes
    /// tested by `lanes`.
    #[inline]
    pub(crate) fn new(
        nodes: &'a [ArchivedWideNode],
        leaves: &'a [ArchivedLeaf],
        root: Option<u32>,
        lanes: L,
    ) -> Self {
        let bytes = std::mem::size_of_val(nodes) + std::mem::size_of_val(leaves);
        WideTreeView {
            nodes,
            leaves,
            root,
            ahead: bytes > super::PREFETCH_FROM_BYTES,
            lanes,
        }
    }

    /// The same tree with another node pass.
    #[inline]
    pub(crate) fn with_lanes<M: Lanes>(&self, lanes: M) -> WideTreeView<'a, M> {
        WideTreeView {
            nodes: self.nodes,
            leaves: self.leaves,
            root: self.root,
            ahead: self.ahead,
            lanes,
        }
    }
}

impl<L: Lanes> Tree for WideTreeView<'_, L> {
    type Vol = Unframed;
    type Stack<E: Copy> = super::Stack<E, { (WIDE - 1) * super::MAX_DEPTH }>;

    #[inline]
    fn root(&self) -> Option<(u32, Unframed)> {
        self.root.map(|r| (r, Unframed))
    }

    #[inline(always)]
    fn prefetch_ref(&self, r: u32) {
        if !self.ahead {
            return;
        }
        if r & LEAF_BIT == 0 {
            if let Some(n) = self.nodes.get(r as usize) {
                // 80 bytes span two or three lines: ask for the first,
                // middle and last byte's
                let p = (n as *const ArchivedWideNode).cast::<i8>();
                prefetch_span(p, 48);
                prefetch_span(p.wrapping_add(32), 48);
            }
        } else {
            super::prefetch(self.leaves.get((r & !LEAF_BIT) as usize));
        }
    }

    #[inline(always)]
    fn ray_children(
        &self,
        node: u32,
        _vol: &Unframed,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
        out: &mut Found<Unframed>,
    ) -> usize {
        let n = &self.nodes[node as usize];
        let (hit, near) = self.lanes.ray(n, ray, grow, t_max);
        super::found_unframed(self, &n.links(), hit, &near, out)
    }

    #[inline(always)]
    fn children_in(
        &self,
        node: u32,
        _vol: &Unframed,
        region: &Region,
        out: &mut Found<Unframed>,
    ) -> usize {
        let n = &self.nodes[node as usize];
        let (hit, key) = self.lanes.region(n, region);
        super::found_unframed(self, &n.links(), hit, &key, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Vec3, Vec3A};
    use kiln_geometry::rng::Rng;
    use rkyv::rend::{f32_le, u32_le};

    /// A node of random codes over a random box (some flat, some far from
    /// the origin).
    fn node(rng: &mut Rng) -> ArchivedWideNode {
        let mut f = |lo: f32, hi: f32| lo + (hi - lo) * (rng.next_u64() % 1_000_000) as f32 / 1e6;
        let base = [0.0, 1e3, -7e4][(f(0.0, 2.99)) as usize];
        let min: [f32; 3] = std::array::from_fn(|_| base + f(-10.0, 10.0));
        let size: [f32; 3] = std::array::from_fn(|k| {
            if f(0.0, 1.0) < 0.1 {
                0.0
            } else {
                f(0.0, 20.0) + k as f32
            }
        });
        let mut code = || (f(0.0, 127.99)) as u8;
        let lo = std::array::from_fn(|_| std::array::from_fn(|_| code()));
        let hi = std::array::from_fn(|_| std::array::from_fn(|_| code()));
        ArchivedWideNode {
            min: min.map(f32_le::from_native),
            max: std::array::from_fn(|k| f32_le::from_native(min[k] + size[k])),
            lo,
            hi,
            links: [u32_le::from_native(0); 2],
        }
    }

    #[test]
    fn both_passes_give_the_same_bits() {
        let Some(avx2) = detect_or_say() else {
            return;
        };
        let mut rng = Rng::new(0x5eed_0008);
        for case in 0..50_000 {
            let n = node(&mut rng);
            let mut f =
                |lo: f32, hi: f32| lo + (hi - lo) * (rng.next_u64() % 1_000_000) as f32 / 1e6;
            let centre = Vec3::new(f(-20.0, 20.0), f(-20.0, 20.0), f(-20.0, 20.0))
                + Vec3::splat(n.min[0].to_native());
            let mut dir = Vec3::new(f(-1.0, 1.0), f(-1.0, 1.0), f(-1.0, 1.0));
            // axis-parallel rays, which take the flat-axis branch
            if case % 5 == 0 {
                dir[case % 3] = 0.0;
            }
            let ray = SlabRay::new(centre - dir * 30.0, dir);
            let grow = if case % 3 == 0 {
                Grow::NONE
            } else {
                Grow::by_extent(Vec3::new(f(0.0, 2.0), f(0.0, 2.0), f(0.0, 2.0)))
            };
            let t_max = [f32::INFINITY, 40.0, 1.0][case % 3];
            let (a, b) = (
                Portable.ray(&n, &ray, &grow, t_max),
                avx2.ray(&n, &ray, &grow, t_max),
            );
            assert_eq!(a.0, b.0, "case {case}");
            assert_eq!(a.1.map(f32::to_bits), b.1.map(f32::to_bits), "case {case}");
            let regions = [
                Region::Ball {
                    c: Vec3A::from(centre),
                    r: f(0.0, 15.0),
                },
                Region::Box {
                    lo: Vec3A::from(centre) - f(0.0, 8.0),
                    hi: Vec3A::from(centre) + f(0.0, 8.0),
                },
            ];
            for region in &regions {
                let (a, b) = (Portable.region(&n, region), avx2.region(&n, region));
                assert_eq!(a.0, b.0, "case {case}");
                assert_eq!(a.1.map(f32::to_bits), b.1.map(f32::to_bits), "case {case}");
            }
        }
    }

    /// The AVX2 pass, or `None` with a loud line where the CPU has none.
    #[cfg(target_arch = "x86_64")]
    fn detect_or_say() -> Option<Avx2> {
        let a = Avx2::detect();
        if a.is_none() {
            eprintln!("*** this CPU has no AVX2: the AVX2 pass was not compared ***");
        }
        a
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn detect_or_say() -> Option<Portable> {
        eprintln!("*** not x86-64: no AVX2 pass to compare ***");
        None
    }
}
