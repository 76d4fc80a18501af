//! Distance between two convex shapes given by support functions, in f64:
//! the Gilbert–Johnson–Keerthi algorithm (Gilbert, Johnson and Keerthi, "A
//! fast procedure for computing the distance between complex objects in
//! three-dimensional space", 1988), with the closest point on each simplex
//! found by Voronoi-region tests (Ericson, "Real-Time Collision Detection",
//! 2004, §5.1) instead of Johnson's determinants, and the termination
//! tests of van den Bergen ("A fast and robust GJK implementation for
//! collision detection of convex objects", 1999).
//!
//! This is the core the convex query shapes (capsules, boxes, hulls) are
//! built on: a shape with a radius (sphere, capsule) is its core (point,
//! segment) grown by the radius, so the distance between cores minus the
//! radius is exact, and GJK on polytopes ends in finitely many steps.

use glam::DVec3;

/// A convex shape known by its support function.
pub(crate) trait Support {
    /// A point of the shape farthest along `d` (any one when several are).
    fn support(&self, d: DVec3) -> DVec3;
    /// Some point of the shape (the search starts from it).
    fn any_point(&self) -> DVec3;
}

/// A point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Point(pub DVec3);

impl Support for Point {
    fn support(&self, _: DVec3) -> DVec3 {
        self.0
    }
    fn any_point(&self) -> DVec3 {
        self.0
    }
}

/// A segment (a capsule's core).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment(pub DVec3, pub DVec3);

impl Support for Segment {
    fn support(&self, d: DVec3) -> DVec3 {
        if d.dot(self.1 - self.0) > 0.0 {
            self.1
        } else {
            self.0
        }
    }
    fn any_point(&self) -> DVec3 {
        (self.0 + self.1) * 0.5
    }
}

/// A triangle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Triangle(pub [DVec3; 3]);

impl Support for Triangle {
    fn support(&self, d: DVec3) -> DVec3 {
        let v = &self.0;
        let (a, b, c) = (v[0].dot(d), v[1].dot(d), v[2].dot(d));
        if a >= b && a >= c {
            v[0]
        } else if b >= c {
            v[1]
        } else {
            v[2]
        }
    }
    fn any_point(&self) -> DVec3 {
        (self.0[0] + self.0[1] + self.0[2]) / 3.0
    }
}

/// An oriented box: centre, unit axes (columns of a rotation) and half
/// extents along them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrientedBox {
    pub center: DVec3,
    pub axes: [DVec3; 3],
    pub half: DVec3,
}

impl Support for OrientedBox {
    fn support(&self, d: DVec3) -> DVec3 {
        let mut p = self.center;
        for k in 0..3 {
            let s = if d.dot(self.axes[k]) >= 0.0 {
                1.0
            } else {
                -1.0
            };
            p += self.axes[k] * (s * self.half[k]);
        }
        p
    }
    fn any_point(&self) -> DVec3 {
        self.center
    }
}

#[cfg(test)]
impl OrientedBox {
    /// A box for tests: turned at random, centred up to `reach` from the
    /// origin, half extents 0.05 to 1.55.
    pub(crate) fn random(rng: &mut kiln_geometry::rng::Rng, reach: f64) -> OrientedBox {
        OrientedBox {
            center: rng.unit() * rng.f() * reach,
            axes: rng.rotation(),
            half: DVec3::new(rng.f(), rng.f(), rng.f()) * 1.5 + 0.05,
        }
    }
}

/// The convex hull of a point set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hull<'a>(pub &'a [DVec3]);

impl Support for Hull<'_> {
    fn support(&self, d: DVec3) -> DVec3 {
        self.0[farthest_point(self.0, d)]
    }
    fn any_point(&self) -> DVec3 {
        self.0[0]
    }
}

/// The first of `0..n` whose `along` is largest (0 when none is larger
/// than −∞, as for a NaN direction): a support point's index. Four
/// running maxima over interleaved indices, merged at the end, so the
/// compares do not wait on one another — a query hull's support is the
/// most called function of its casts on meshes (hull casts on the quick
/// terrain 0.87 → 0.98 of parry3d's rate). Where the CPU has AVX2, a
/// query hull's points ([`farthest_point`]) and a baked polytope's f32
/// vertices (`collider::polytope`) are searched four a step in lanes
/// that answer as this does.
#[inline]
pub(crate) fn first_farthest(n: usize, along: impl Fn(usize) -> f64) -> usize {
    let mut best = [(f64::NEG_INFINITY, usize::MAX); 4];
    let whole = n - n % 4;
    for base in (0..whole).step_by(4) {
        for (k, b) in best.iter_mut().enumerate() {
            let x = along(base + k);
            if x > b.0 {
                *b = (x, base + k);
            }
        }
    }
    finish_lanes(best, whole, n, along)
}

/// The end of a search in four lanes ([`first_farthest`], and the AVX2
/// searches that answer as it does): `best[k]` is lane `k`'s first
/// largest `(value, index)` over `0..whole`, where lane `k` saw the
/// indices `4j + k`; the tail `whole..n` goes to lanes 0, 1, 2 in turn,
/// and the lanes merge to the largest value, the lowest index among
/// equals — the first index of the largest, as one plain loop finds it.
/// 0 where no value beats −∞ (an index of `usize::MAX` means none).
#[inline(always)]
pub(crate) fn finish_lanes(
    mut best: [(f64, usize); 4],
    whole: usize,
    n: usize,
    along: impl Fn(usize) -> f64,
) -> usize {
    for (k, i) in (whole..n).enumerate() {
        let x = along(i);
        if x > best[k].0 {
            best[k] = (x, i);
        }
    }
    let (mut bx, mut bi) = best[0];
    for &(x, i) in &best[1..] {
        if x > bx || (x == bx && i < bi) {
            (bx, bi) = (x, i);
        }
    }
    if bi == usize::MAX { 0 } else { bi }
}

/// The first of the points `v` farthest along `d` by `p · d` (glam's
/// `(x·dx + y·dy) + z·dz`): [`first_farthest`] over them, or where the
/// CPU has AVX2 (found at run time) and there are 8 points or more, four
/// points a step in f64 lanes — the same products and sums in the same
/// order, each lane keeping its first largest by a strict compare, so
/// the same index bit for bit. A query hull's support: the most called
/// function of hull casts and overlaps after a baked polytope's.
#[inline]
pub(crate) fn farthest_point(v: &[DVec3], d: DVec3) -> usize {
    #[cfg(target_arch = "x86_64")]
    if v.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 was found on this CPU just above, the one feature
        // `farthest_point_avx2` is compiled for
        return unsafe { farthest_point_avx2(v, d) };
    }
    first_farthest(v.len(), |i| v[i].dot(d))
}

/// The four f64 lanes of an AVX2 support search ([`farthest_point`]'s
/// and a baked polytope's): lane `k` sees the points `4j + k` in turn,
/// keeps its first largest by a strict compare, and the lanes end in
/// [`finish_lanes`] as the scalar search's do. Indices ride in f64 lanes
/// (exact below 2⁵³); a lane that never rose keeps −1, no index.
#[cfg(target_arch = "x86_64")]
pub(crate) struct FarLanes {
    best: std::arch::x86_64::__m256d,
    best_i: std::arch::x86_64::__m256d,
    at: std::arch::x86_64::__m256d,
}

#[cfg(target_arch = "x86_64")]
impl FarLanes {
    /// No point seen yet.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn new() -> FarLanes {
        use std::arch::x86_64::*;
        FarLanes {
            best: _mm256_set1_pd(f64::NEG_INFINITY),
            best_i: _mm256_set1_pd(-1.0),
            at: _mm256_setr_pd(0.0, 1.0, 2.0, 3.0),
        }
    }

    /// The next four points' values.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn keep(&mut self, s: std::arch::x86_64::__m256d) {
        use std::arch::x86_64::*;
        let more = _mm256_cmp_pd::<_CMP_GT_OQ>(s, self.best);
        self.best = _mm256_blendv_pd(self.best, s, more);
        self.best_i = _mm256_blendv_pd(self.best_i, self.at, more);
        self.at = _mm256_add_pd(self.at, _mm256_set1_pd(4.0));
    }

    /// The first index of the largest value over `0..n`, the points
    /// `whole..n` (fewer than four) taken by `along` one by one.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn finish(self, whole: usize, n: usize, along: impl Fn(usize) -> f64) -> usize {
        use std::arch::x86_64::*;
        let (mut value, mut index) = ([0.0f64; 4], [0.0f64; 4]);
        // SAFETY: both arrays are 32 writable bytes; unaligned stores
        unsafe {
            _mm256_storeu_pd(value.as_mut_ptr(), self.best);
            _mm256_storeu_pd(index.as_mut_ptr(), self.best_i);
        }
        // written out: `array::from_fn` here was a call a lane
        let lane = |k: usize| {
            let i = index[k];
            (value[k], if i < 0.0 { usize::MAX } else { i as usize })
        };
        finish_lanes([lane(0), lane(1), lane(2), lane(3)], whole, n, along)
    }
}

/// [`farthest_point`] four points a step in AVX2's f64 lanes: lane `k`
/// sees points `4j + k`. Indices ride in f64 lanes (exact below 2⁵³).
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn farthest_point_avx2(v: &[DVec3], d: DVec3) -> usize {
    use std::arch::x86_64::*;
    // the layout the loads read: `DVec3` is `repr(C)`, three f64s packed
    const _: () = assert!(std::mem::size_of::<DVec3>() == 24 && std::mem::align_of::<DVec3>() == 8);
    let whole = v.len() - v.len() % 4;
    let (dx, dy, dz) = (
        _mm256_set1_pd(d.x),
        _mm256_set1_pd(d.y),
        _mm256_set1_pd(d.z),
    );
    let mut lanes = FarLanes::new();
    let base = v.as_ptr().cast::<f64>();
    for j in (0..whole).step_by(4) {
        // SAFETY: points j..j + 4 exist (j + 4 <= whole <= len), so the
        // twelve f64s from point j's x are inside `v`, initialised; the
        // loads are unaligned forms of two f64s each
        let (a, b, c) = unsafe {
            let p = base.add(3 * j);
            let pair = |k: usize| _mm_loadu_pd(p.add(k));
            (
                _mm256_set_m128d(pair(6), pair(0)),  // x0 y0 | x2 y2
                _mm256_set_m128d(pair(8), pair(2)),  // z0 x1 | z2 x3
                _mm256_set_m128d(pair(10), pair(4)), // y1 z1 | y3 z3
            )
        };
        let x = _mm256_blend_pd::<0b1010>(a, b); // x0 x1 x2 x3
        let y = _mm256_shuffle_pd::<0b0101>(a, c); // y0 y1 y2 y3
        let z = _mm256_blend_pd::<0b1010>(b, c); // z0 z1 z2 z3
        lanes.keep(_mm256_add_pd(
            _mm256_add_pd(_mm256_mul_pd(x, dx), _mm256_mul_pd(y, dy)),
            _mm256_mul_pd(z, dz),
        ));
    }
    lanes.finish(whole, v.len(), |i| v[i].dot(d))
}

/// The result of a distance query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Separation {
    /// Distance between the shapes (0 when they touch or overlap).
    pub distance: f64,
    /// The closest point of the first shape.
    pub on_a: DVec3,
    /// The closest point of the second shape.
    pub on_b: DVec3,
}

impl Separation {
    /// The unit direction from the second shape's closest point to the
    /// first's (zero where they coincide). Normalised by its own length,
    /// not by `distance`: the two are rounded apart, which far from the
    /// origin, with the shapes a hair apart, leaves `(on_a − on_b) /
    /// distance` off unit length by 1e-5 and more.
    pub fn normal(&self) -> DVec3 {
        (self.on_a - self.on_b).normalize_or_zero()
    }
}

/// One vertex of the simplex in the Minkowski difference A − B, with the
/// points of A and B it came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vertex {
    /// The point of A − B: `a − b`.
    pub w: DVec3,
    /// The point of A.
    pub a: DVec3,
    /// The point of B.
    pub b: DVec3,
}

impl Vertex {
    /// The point of A − B farthest along `d`, with its points of A and B.
    #[inline(always)]
    pub(crate) fn support(a: &impl Support, b: &impl Support, d: DVec3) -> Vertex {
        let (pa, pb) = (a.support(d), b.support(-d));
        Vertex {
            w: pa - pb,
            a: pa,
            b: pb,
        }
    }
}

/// The distance between `a` and `b`, with a closest point on each, or
/// `None` when they overlap (distance 0 and no unique closest points).
/// Touching shapes report distance 0 with their common point.
pub(crate) fn distance(a: &impl Support, b: &impl Support) -> Option<Separation> {
    match search(a, b, f64::INFINITY, -1.0, None) {
        Gap::Apart(s) => Some(s),
        _ => None,
    }
}

/// What a bounded GJK search learned about the gap between two shapes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Gap {
    /// Farther apart than the `far` bound (no closest points computed).
    Beyond,
    /// Within the `near` bound (no closest points computed).
    Near,
    /// Apart (or touching) with this separation, all the way to
    /// convergence.
    Apart(Separation),
    /// Overlapping.
    Overlap,
}

/// The GJK search for the distance between `a` and `b`, stopping early
/// once it is proved greater than `far` (a support point gives a lower
/// bound: van den Bergen's separating-axis early out) or at most `near`
/// (a point of the Minkowski difference gives an upper bound). `hint`, a
/// vector from `b` towards `a` (the last answer's `on_a − on_b` for a
/// moved shape), picks the first direction: a warm start.
pub(crate) fn search(
    a: &impl Support,
    b: &impl Support,
    far: f64,
    near: f64,
    hint: Option<DVec3>,
) -> Gap {
    search_in(a, b, far, near, hint, None, None)
}

/// A search's last simplex, kept to start the next search on the same
/// pair after `a` moved: moved with it, its points are still points of
/// the new Minkowski difference, so the next search starts next to its
/// answer (the simplex carried along the motion, as in van den Bergen's
/// "Ray casting against general convex objects with application to
/// continuous collision detection", 2004).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Warm(Option<Simplex>);

impl Warm {
    /// The unit normal from `b` towards `a` at separation `s` (found by
    /// the search this simplex ended): where the search ended on a face
    /// of A − B (a triangle), that face's normal, exact to the rounding
    /// of the face's own size; else [`Separation::normal`], which
    /// loses the digits a distance of a few tolerances lacks.
    fn normal(&self, s: &Separation) -> DVec3 {
        let n = s.normal();
        if let Some(x) = self.0.as_ref().filter(|x| x.n == 3) {
            let w = [x.v[0].w, x.v[1].w, x.v[2].w];
            let f = (w[1] - w[0]).cross(w[2] - w[0]).normalize_or_zero();
            // the closest point lies on the face, so along its normal;
            // anything else (a search that ended making no progress) is
            // not the face's answer
            let f = if f.dot(w[0]) < 0.0 { -f } else { f };
            if f.dot(n) > 0.999 {
                return f;
            }
        }
        n
    }

    /// The simplex with `a`'s points moved by `by`.
    fn move_a(&mut self, by: DVec3) {
        if let Some(s) = &mut self.0 {
            for v in &mut s.v[..s.n] {
                v.a += by;
                v.w += by;
            }
        }
    }
}

/// [`search`], also handing back the tetrahedron of points of A − B
/// around the origin when it ends overlapping on one (the origin deeper
/// inside than a hair): where the expanding polytope ([`super::epa`])
/// starts, so a depth needs no second search.
/// It stops early by `far` and `near` as [`search`] does; `warm`, when
/// given, receives the search's last simplex.
pub(crate) fn search_enclosing(
    a: &impl Support,
    b: &impl Support,
    far: f64,
    near: f64,
    warm: Option<&mut Warm>,
) -> (Gap, Option<[Vertex; 4]>) {
    let mut tet = None;
    let gap = search_in(a, b, far, near, None, Some(&mut tet), warm);
    (gap, tet)
}

/// The coordinate magnitude of a problem, for relative tolerances.
pub(crate) fn scale(a: &impl Support, b: &impl Support) -> f64 {
    a.any_point()
        .abs()
        .max(b.any_point().abs())
        .max_element()
        .max(1.0)
}

/// Gaps this small count as contact, as in [`search`]: 1e-12 of the
/// coordinates (the closed forms and the separating axes use it too).
pub(crate) fn contact_eps(a: &impl Support, b: &impl Support) -> f64 {
    1e-12 * scale(a, b)
}

/// [`search`], handing the final tetrahedron to `tet` when it ends on one;
/// starting from `warm`'s simplex when it holds one (else from `hint`),
/// and leaving the last simplex there.
#[inline(always)]
fn search_in(
    a: &impl Support,
    b: &impl Support,
    far: f64,
    near: f64,
    hint: Option<DVec3>,
    tet: Option<&mut Option<[Vertex; 4]>>,
    warm: Option<&mut Warm>,
) -> Gap {
    let first = |d: DVec3| Vertex::support(a, b, d);
    let cold = || {
        let start = hint
            .filter(|h| *h != DVec3::ZERO && h.is_finite())
            .unwrap_or_else(|| a.any_point() - b.any_point());
        Simplex::of(first(if start == DVec3::ZERO {
            DVec3::X
        } else {
            -start
        }))
    };
    // the search works in `warm`'s storage when given (no copies of the
    // 328-byte simplex in or out), else in its own
    let mut own;
    let simplex: &mut Simplex = match warm {
        Some(Warm(slot)) => match slot {
            Some(s) if s.n < 4 => s,
            _ => slot.insert(cold()),
        },
        None => {
            own = cold();
            &mut own
        }
    };
    let mut v = simplex.reduce();
    // the scale of the problem, for relative tolerances
    let w0 = simplex.v[0];
    let scale = w0.a.abs().max(w0.b.abs()).max_element().max(1.0);
    // squared: distances under 1e-12 of the coordinates are contact
    let eps = (1e-12 * scale).powi(2);
    // a negative `near` never holds (no early "near" answer)
    let far2 = far * far;
    let near2 = if near >= 0.0 { near * near } else { -1.0 };
    let mut stale = None;
    'search: {
        for _ in 0..128 {
            let vv = v.length_squared();
            if vv <= eps {
                break;
            }
            if vv <= near2 {
                // v is a point of A − B: the distance is at most |v|
                break 'search Gap::Near;
            }
            let w = first(-v);
            let vw = v.dot(w.w);
            if vw > 0.0 && vw * vw > far2 * vv {
                // every point x of A − B has x · v ≥ w · v: the distance
                // is at least w · v / |v|
                break 'search Gap::Beyond;
            }
            // no point of A − B beyond the current one along −v: converged
            // (van den Bergen's test, relative)
            if vv - vw <= 1e-12 * vv.max(eps) {
                break;
            }
            if simplex.vertices().iter().any(|s| s.w == w.w) {
                break;
            }
            // the closest points so far, should this step make no progress
            let before = simplex.points();
            simplex.push(w);
            let nv = simplex.reduce();
            if simplex.n == 4 {
                // the origin inside the tetrahedron: overlap
                if let Some(t) = tet {
                    *t = Some(simplex.v);
                }
                break 'search Gap::Overlap;
            }
            if nv.length_squared() >= vv {
                // no progress (rounding): the previous answer stands
                stale = Some(before);
                break;
            }
            v = nv;
        }
        let (on_a, on_b) = stale.unwrap_or_else(|| simplex.points());
        let distance = v.length();
        if distance * distance <= eps {
            Gap::Overlap
        } else if distance <= near {
            Gap::Near
        } else if distance > far {
            Gap::Beyond
        } else {
            Gap::Apart(Separation {
                distance,
                on_a,
                on_b,
            })
        }
    }
}

/// A shape moved by `offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moved<'a, S: Support>(pub &'a S, pub DVec3);

impl<S: Support> Support for Moved<'_, S> {
    fn support(&self, d: DVec3) -> DVec3 {
        self.0.support(d) + self.1
    }
    fn any_point(&self) -> DVec3 {
        self.0.any_point() + self.1
    }
}

/// Where a cast meets its shape: the separation of the cores there
/// (within the tolerance of the radius) and the unit normal from `b`
/// towards `a`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Meet {
    /// The cores' separation.
    pub s: Separation,
    /// The unit normal from `b` towards `a`.
    pub normal: DVec3,
}

/// The first contact of `a` grown by `radius`, moving by `motion · t` for
/// `t` in `[0, t_max]`, with the static `b`: the time, and where it meets
/// (`None` when the cores touch). Conservative advancement on the
/// exact distance (Mirtich, "Impulse-based dynamic simulation of rigid
/// body systems", 1996): each step moves by the distance over the closing
/// speed along the separating direction, less half the tolerance, so it
/// never passes the contact and stops within `tolerance` of it, apart
/// (where the closest features stay the same, the step after the first
/// lands there). Each step's distance search starts from the last one's
/// simplex moved with `a` ([`Warm`]). `start` is the separation at `t =
/// 0`, with the simplex that found it, when the caller has them. A shape
/// that starts within `radius + tolerance` answers `t = 0`.
pub(crate) fn cast(
    a: &impl Support,
    radius: f64,
    motion: DVec3,
    t_max: f64,
    b: &impl Support,
    tolerance: f64,
    start: Option<(Separation, &mut Warm)>,
) -> Option<(f64, Option<Meet>)> {
    cast_steps(a, radius, motion, t_max, b, tolerance, start, 256)
}

/// [`cast`] with at most `steps` steps of conservative advancement. A
/// search that has not converged by then (a grazing approach closes in
/// ever more slowly) finishes by the convexity of the gap along the
/// motion: a golden-section search for its minimum over the rest of the
/// range decides whether contact happens at all, then bisection before
/// that minimum finds the first time within `tolerance`.
#[allow(clippy::too_many_arguments)]
fn cast_steps(
    a: &impl Support,
    radius: f64,
    motion: DVec3,
    t_max: f64,
    b: &impl Support,
    tolerance: f64,
    start: Option<(Separation, &mut Warm)>,
    steps: usize,
) -> Option<(f64, Option<Meet>)> {
    let mut t = 0.0;
    let mut own = Warm::default();
    let (mut known, warm) = match start {
        Some((s, w)) => (Some(s), w),
        None => (None, &mut own),
    };
    // the time `warm`'s simplex was taken at
    let mut warm_t = 0.0;
    for _ in 0..steps {
        let s = match known.take() {
            Some(s) => s,
            None => {
                warm.move_a(motion * (t - warm_t));
                warm_t = t;
                let at = Moved(a, motion * t);
                match search_in(&at, b, f64::INFINITY, -1.0, None, None, Some(warm)) {
                    Gap::Apart(s) => s,
                    _ => return Some((t, None)),
                }
            }
        };
        if s.distance <= 0.0 {
            return Some((t, None));
        }
        let gap = s.distance - radius;
        let n = s.normal();
        if gap <= tolerance {
            let normal = warm.normal(&s);
            return Some((t, Some(Meet { s, normal })));
        }
        let closing = -motion.dot(n);
        if closing <= 0.0 {
            return None;
        }
        // aim half the tolerance short of contact: where the closest
        // features stay the same the next gap is that half, and the
        // closest points answer; aiming at contact itself lands the cores
        // touching or, by rounding, overlapping, whose contact then needs
        // a depth search
        t += (gap - 0.5 * tolerance) / closing;
        if t > t_max {
            return None;
        }
    }
    // the gap is convex in time (the distance between a convex set and a
    // point moving on a line), and positive at t
    let gap = |u: f64| distance(&Moved(a, motion * u), b).map_or(-radius, |s| s.distance) - radius;
    let (mut lo, mut hi) = (t, t_max);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut x1, mut x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
    let (mut f1, mut f2) = (gap(x1), gap(x2));
    for _ in 0..200 {
        if f1 <= tolerance || f2 <= tolerance || hi - lo <= 1e-15 * t_max.max(1.0) {
            break;
        }
        if f1 <= f2 {
            (hi, x2, f2) = (x2, x1, f1);
            x1 = hi - r * (hi - lo);
            f1 = gap(x1);
        } else {
            (lo, x1, f1) = (x1, x2, f2);
            x2 = lo + r * (hi - lo);
            f2 = gap(x2);
        }
    }
    let (mut near, mut low) = if f1 <= f2 { (x1, f1) } else { (x2, f2) };
    let end = gap(t_max);
    if end < low {
        (near, low) = (t_max, end);
    }
    if low > tolerance {
        return None;
    }
    // bisect [t, near] for the first time within the tolerance
    let (mut out, mut touch) = (t, near);
    for _ in 0..200 {
        let mid = 0.5 * (out + touch);
        if mid <= out || mid >= touch {
            break;
        }
        if gap(mid) <= tolerance {
            touch = mid;
        } else {
            out = mid;
        }
    }
    let meet = distance(&Moved(a, motion * touch), b)
        .filter(|s| s.distance > 0.0)
        .map(|s| Meet {
            s,
            normal: s.normal(),
        });
    Some((touch, meet))
}

/// A simplex of one to four vertices with the barycentric weights of the
/// point it stands for (fixed size: no allocation in the loop).
#[derive(Clone, Copy, Debug)]
struct Simplex {
    v: [Vertex; 4],
    l: [f64; 4],
    n: usize,
}

impl Simplex {
    /// The simplex of one vertex.
    fn of(v: Vertex) -> Simplex {
        Simplex {
            v: [v; 4],
            l: [1.0, 0.0, 0.0, 0.0],
            n: 1,
        }
    }
    fn push(&mut self, v: Vertex) {
        self.v[self.n] = v;
        self.n += 1;
    }
    fn vertices(&self) -> &[Vertex] {
        &self.v[..self.n]
    }

    /// The closest points of A and B: the weighted vertices.
    #[inline]
    fn points(&self) -> (DVec3, DVec3) {
        let (mut on_a, mut on_b) = (DVec3::ZERO, DVec3::ZERO);
        for (s, &l) in self.vertices().iter().zip(&self.l) {
            on_a += s.a * l;
            on_b += s.b * l;
        }
        (on_a, on_b)
    }

    /// The point of the simplex closest to the origin; the simplex becomes
    /// the smallest sub-simplex holding it, with its barycentric weights
    /// (in place: a simplex is 328 bytes, and copying it whole per step
    /// went through `memcpy`).
    fn reduce(&mut self) -> DVec3 {
        let v = &self.v;
        match self.n {
            1 => {
                self.l[0] = 1.0;
                v[0].w
            }
            2 => {
                let (a, b) = (v[0].w, v[1].w);
                let ab = b - a;
                let t = (-a).dot(ab) / ab.length_squared();
                if t <= 0.0 {
                    self.keep1(0);
                    a
                } else if t >= 1.0 {
                    self.keep1(1);
                    b
                } else {
                    self.l[..2].copy_from_slice(&[1.0 - t, t]);
                    a + ab * t
                }
            }
            3 => {
                let w = [v[0].w, v[1].w, v[2].w];
                let region = super::sphere_triangle::closest_region(DVec3::ZERO, w[0], w[1], w[2]);
                self.keep_region([0, 1, 2], region);
                region.point(w)
            }
            _ => self.reduce_tetrahedron(),
        }
    }

    /// Keeps vertex `k` alone.
    #[inline]
    fn keep1(&mut self, k: usize) {
        self.v[0] = self.v[k];
        self.l[0] = 1.0;
        self.n = 1;
    }

    /// Keeps the vertices of triangle `f` (indices into the simplex) that
    /// `region` names, with its weights.
    fn keep_region(&mut self, f: [usize; 3], region: super::sphere_triangle::TriangleRegion) {
        use super::sphere_triangle::TriangleRegion;
        let v = [self.v[f[0]], self.v[f[1]], self.v[f[2]]];
        match region {
            TriangleRegion::Vertex(k) => self.keep1(f[k]),
            TriangleRegion::Edge(i, j, t) => {
                (self.v[0], self.v[1]) = (v[i], v[j]);
                self.l[..2].copy_from_slice(&[1.0 - t, t]);
                self.n = 2;
            }
            TriangleRegion::Face(s, t) => {
                self.v[..3].copy_from_slice(&v);
                self.l[..3].copy_from_slice(&[1.0 - s - t, s, t]);
                self.n = 3;
            }
        }
    }

    /// [`Simplex::reduce`] of a tetrahedron: the origin itself when inside
    /// (all four vertices kept), else the best of the faces the origin is
    /// outside of (Ericson §5.1.6), each through
    /// [`super::sphere_triangle::closest_region`] (Ericson §5.1.5).
    fn reduce_tetrahedron(&mut self) -> DVec3 {
        use super::sphere_triangle::closest_region;
        let faces = [[0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2], [1, 3, 2, 0]];
        let s = &self.v;
        let (a, b, c, d) = (s[0].w, s[1].w, s[2].w, s[3].w);
        // a flat tetrahedron (a segment parallel to a face, say) holds
        // nothing: the answer is on one of its faces
        let size = (b - a).length().max((c - a).length()).max((d - a).length());
        let flat = (b - a).dot((c - a).cross(d - a)).abs() <= 1e-12 * size * size * size;
        let mut best = None;
        for f in faces {
            let (a, b, c, d) = (s[f[0]].w, s[f[1]].w, s[f[2]].w, s[f[3]].w);
            let n = (b - a).cross(c - a);
            // the origin and the fourth vertex on opposite sides of the face
            let (so, sd) = ((-a).dot(n), (d - a).dot(n));
            if flat || so * sd < 0.0 {
                let w = [a, b, c];
                let region = closest_region(DVec3::ZERO, a, b, c);
                let p = region.point(w);
                if best.as_ref().is_none_or(|&(q, _, _): &(DVec3, _, _)| {
                    p.length_squared() < q.length_squared()
                }) {
                    best = Some((p, [f[0], f[1], f[2]], region));
                }
            }
        }
        match best {
            Some((p, f, region)) => {
                self.keep_region(f, region);
                p
            }
            // no face with the origin outside it: inside, report the overlap
            None => {
                self.l = [0.25; 4];
                DVec3::ZERO
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::sphere_triangle::closest_point;
    use kiln_geometry::rng::Rng;

    /// A query hull's support in AVX2 lanes and the scalar search choose
    /// the same point on 40,000 sets of 0 to 80 points (every tail
    /// length), most of which tie: points on a grid of few values, on
    /// one face whose normal is the direction, repeated; signed zeros,
    /// huge and tiny coordinates; directions random, along an axis, zero,
    /// infinite and NaN. The scalar search is checked against the plain
    /// one (the largest product, then the lowest index). Skips the lanes,
    /// saying so, where the CPU has no AVX2.
    #[test]
    fn point_support_lanes_choose_as_the_scalar_search() {
        let mut rng = Rng::new(0x5_0772);
        let (mut ties, mut checked) = (0, 0);
        for round in 0..40_000 {
            let n = rng.below(81);
            let kind = round % 5;
            let mut v: Vec<DVec3> = Vec::new();
            for _ in 0..n {
                let p =
                    match kind {
                        0 => DVec3::from_array([0, 1, 2].map(|_| rng.below(3) as f64 - 1.0)),
                        1 if rng.below(2) == 0 => DVec3::new(rng.f() * 2.0 - 1.0, rng.f(), 1.0),
                        1 => DVec3::new(rng.f(), rng.f(), rng.f() - 1.0),
                        2 if !v.is_empty() && rng.below(2) == 0 => v[rng.below(v.len())],
                        3 => DVec3::from_array([0, 1, 2].map(|_| {
                            [0.0, -0.0, 1e300, -1e300, 1e-300, f64::MAX, 1.0][rng.below(7)]
                        })),
                        _ => rng.unit() * rng.f() * 10.0,
                    };
                v.push(p);
            }
            let d = match rng.below(8) {
                0 => DVec3::Z,
                1 => DVec3::ZERO,
                2 => DVec3::new(f64::INFINITY, 0.0, 1.0),
                3 => DVec3::new(f64::NAN, 1.0, 0.0),
                4 => DVec3::new(1.0, 1.0, 0.0),
                _ => rng.unit(),
            };
            let scalar_says = first_farthest(v.len(), |i| v[i].dot(d));
            let values: Vec<f64> = v.iter().map(|p| p.dot(d)).collect();
            let top = values
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
            let plain = values
                .iter()
                .position(|&x| x == top && x > f64::NEG_INFINITY)
                .unwrap_or(0);
            assert_eq!(scalar_says, plain, "round {round}: {v:?} along {d}");
            assert_eq!(farthest_point(&v, d), scalar_says, "round {round}");
            ties += usize::from(values.iter().filter(|&&x| x == top).count() > 1);
            #[cfg(target_arch = "x86_64")]
            if v.len() >= 4 && std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 found just above
                let lanes = unsafe { farthest_point_avx2(&v, d) };
                assert_eq!(lanes, scalar_says, "round {round}: {v:?} along {d}");
                checked += 1;
            }
        }
        assert!(ties > 10_000, "only {ties} sets tie");
        if checked == 0 {
            eprintln!(
                "SKIPPED: this CPU has no AVX2; the point support's AVX2 lanes were not checked"
            );
        }
    }

    /// Oracle: distance between a segment and a triangle by closed forms
    /// (endpoints to the triangle, the segment against each edge, and the
    /// segment crossing the triangle).
    fn segment_triangle(p: DVec3, q: DVec3, t: [DVec3; 3]) -> f64 {
        let mut d = f64::INFINITY;
        for e in [p, q] {
            d = d.min(e.distance(closest_point(e, t[0], t[1], t[2])));
        }
        for k in 0..3 {
            d = d.min(segment_segment(p, q, t[k], t[(k + 1) % 3]));
        }
        // crossing: the segment meets the triangle's plane inside it
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let (dp, dq) = ((p - t[0]).dot(n), (q - t[0]).dot(n));
        if dp * dq <= 0.0 && dp != dq {
            let x = p + (q - p) * (dp / (dp - dq));
            if x.distance(closest_point(x, t[0], t[1], t[2])) <= 1e-12 * (1.0 + x.length()) {
                d = 0.0;
            }
        }
        d
    }

    /// Distance between two segments by dense parameter search refined
    /// by the closed form on the best pair (an independent method: a
    /// golden-section on the convex distance function).
    fn segment_segment(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> f64 {
        let f = |s: f64| {
            let x = p1 + (q1 - p1) * s;
            // closest point on segment 2 to x, closed form
            let d = q2 - p2;
            let t = if d.length_squared() == 0.0 {
                0.0
            } else {
                ((x - p2).dot(d) / d.length_squared()).clamp(0.0, 1.0)
            };
            x.distance(p2 + d * t)
        };
        // the distance along segment 1 is convex: ternary search
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..100 {
            let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
            if f(m1) <= f(m2) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        f((lo + hi) * 0.5).min(f(0.0)).min(f(1.0))
    }

    #[test]
    fn bounded_searches_agree_with_the_full_distance() {
        let mut r = Rng(0x51f1_5eed_0bad_cafe);
        let (mut beyond, mut near, mut apart) = (0, 0, 0);
        for i in 0..20_000 {
            let at = r.v(1.0) * if i % 3 == 0 { 1e4 } else { 1.0 };
            let t = Triangle([at + r.v(1.0), at + r.v(1.0), at + r.v(1.0)]);
            let seg = Segment(at + r.v(1.5), at + r.v(1.5));
            let limit = r.f() * 0.5;
            let full = distance(&seg, &t);
            let hint = (i % 2 == 0).then(|| r.v(1.0));
            match search(&seg, &t, limit, limit * 0.5, hint) {
                Gap::Beyond => {
                    beyond += 1;
                    let d = full.expect("apart").distance;
                    assert!(d > limit - 1e-9, "case {i}: {d} beyond {limit}");
                }
                Gap::Near => {
                    near += 1;
                    let d = full.map_or(0.0, |s| s.distance);
                    assert!(d <= limit * 0.5 + 1e-9, "case {i}: {d} near {limit}");
                }
                Gap::Apart(s) => {
                    apart += 1;
                    let d = full.expect("apart").distance;
                    assert!(
                        (s.distance - d).abs() <= 1e-9 * (1.0 + at.length()),
                        "case {i}"
                    );
                    assert!(d > limit * 0.5 - 1e-9 && d <= limit + 1e-9, "case {i}: {d}");
                }
                Gap::Overlap => assert!(full.is_none(), "case {i}: {full:?}"),
            }
            // the early outs off, a warm start finds the same distance
            let warm = search(&seg, &t, f64::INFINITY, -1.0, hint);
            match (warm, full) {
                (Gap::Apart(w), Some(f)) => {
                    assert!((w.distance - f.distance).abs() <= 1e-9 * (1.0 + at.length()))
                }
                (Gap::Overlap, None) => {}
                other => panic!("case {i}: {other:?}"),
            }
        }
        assert!(
            beyond > 1000 && near > 1000 && apart > 100,
            "{beyond} {near} {apart}"
        );
    }

    #[test]
    fn segment_triangle_distances_match_closed_forms() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut overlaps = 0;
        for i in 0..20_000 {
            let at = r.v(1.0) * if i % 3 == 0 { 1e4 } else { 1.0 };
            let t = [at + r.v(1.0), at + r.v(1.0), at + r.v(1.0)];
            let (mut p, mut q) = (at + r.v(1.5), at + r.v(1.5));
            match i % 5 {
                // a segment lying in the triangle's plane, along an edge
                1 => {
                    let e = t[1] - t[0];
                    p = t[0] + e * (r.f() - 0.5);
                    q = t[0] + e * (r.f() + 0.5);
                }
                // a degenerate segment (a point: a sphere's core)
                2 => q = p,
                _ => {}
            }
            let want = segment_triangle(p, q, t);
            let scale = 1.0 + at.abs().max_element();
            match distance(&Segment(p, q), &Triangle(t)) {
                Some(s) => {
                    assert!(
                        (s.distance - want).abs() <= 1e-9 * scale,
                        "case {i}: gjk {} oracle {want}",
                        s.distance
                    );
                    // the witnesses are on the shapes and that far apart
                    assert!((s.on_a.distance(s.on_b) - s.distance).abs() <= 1e-9 * scale);
                    let on_tri = closest_point(s.on_b, t[0], t[1], t[2]);
                    assert!(on_tri.distance(s.on_b) <= 1e-9 * scale, "case {i}");
                }
                None => {
                    overlaps += 1;
                    assert!(
                        want <= 1e-9 * scale,
                        "case {i}: gjk says touching, oracle {want}"
                    );
                }
            }
        }
        assert!(overlaps > 100, "{overlaps} crossing cases");
    }

    #[test]
    fn box_triangle_distances_match_vertex_edge_face_pairs() {
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        let mut overlaps = 0;
        for i in 0..5_000 {
            let q =
                glam::DQuat::from_euler(glam::EulerRot::XYZ, r.f() * 6.0, r.f() * 6.0, r.f() * 6.0);
            let half = DVec3::new(
                0.05 + r.f(),
                0.05 + r.f(),
                if i % 4 == 0 { 1e-3 } else { 0.05 + r.f() },
            );
            let bx = OrientedBox {
                center: DVec3::ZERO,
                axes: [q * DVec3::X, q * DVec3::Y, q * DVec3::Z],
                half,
            };
            let off = r.v(3.0);
            let t = [off + r.v(1.0), off + r.v(1.0), off + r.v(1.0)];
            // oracle: a box and a triangle apart are closest at a
            // vertex–face or edge–edge pair
            let corners: Vec<DVec3> = (0..8)
                .map(|k| {
                    let s = |b: usize| if k >> b & 1 == 1 { 1.0 } else { -1.0 };
                    bx.axes[0] * (s(0) * half.x)
                        + bx.axes[1] * (s(1) * half.y)
                        + bx.axes[2] * (s(2) * half.z)
                })
                .collect();
            let to_box = |p: DVec3| {
                let l = DVec3::new(p.dot(bx.axes[0]), p.dot(bx.axes[1]), p.dot(bx.axes[2]));
                (l - l.clamp(-half, half)).length()
            };
            let mut want = t.iter().map(|&p| to_box(p)).fold(f64::INFINITY, f64::min);
            for &c in &corners {
                want = want.min(c.distance(closest_point(c, t[0], t[1], t[2])));
            }
            let edges: Vec<(usize, usize)> = (0..8)
                .flat_map(|a| (0..3).map(move |b| (a, a ^ (1 << b))))
                .filter(|(a, b)| a < b)
                .collect();
            for (a, b) in edges {
                for k in 0..3 {
                    want = want.min(segment_segment(
                        corners[a],
                        corners[b],
                        t[k],
                        t[(k + 1) % 3],
                    ));
                }
            }
            // overlap by the separating-axis test: the box's three axes,
            // the triangle's normal and the nine edge × axis directions
            // (Akenine-Möller, "Fast 3D triangle-box overlap testing", 2001)
            let mut axes = bx.axes.to_vec();
            axes.push((t[1] - t[0]).cross(t[2] - t[0]));
            for k in 0..3 {
                for &ax in &bx.axes {
                    axes.push((t[(k + 1) % 3] - t[k]).cross(ax));
                }
            }
            let separated = axes
                .iter()
                .filter(|a| a.length_squared() > 1e-24)
                .any(|&ax| {
                    let ax = ax.normalize();
                    let r = (0..3)
                        .map(|k| half[k] * bx.axes[k].dot(ax).abs())
                        .sum::<f64>();
                    let (lo, hi) = t
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                            (l.min(p.dot(ax)), h.max(p.dot(ax)))
                        });
                    lo > r + 1e-9 || hi < -r - 1e-9
                });
            if !separated {
                want = 0.0;
            }
            match distance(&bx, &Triangle(t)) {
                Some(s) => assert!(
                    (s.distance - want).abs() <= 1e-9,
                    "case {i}: gjk {} oracle {want}",
                    s.distance
                ),
                None => assert!(want <= 1e-9, "case {i}: gjk says overlap, oracle {want}"),
            }
            overlaps += usize::from(want == 0.0);
        }
        assert!(overlaps > 100, "{overlaps} overlapping cases");
    }

    #[test]
    fn hulls_and_points_touching_and_apart() {
        let cube: Vec<DVec3> = (0..8)
            .map(|k| DVec3::new((k & 1) as f64, (k >> 1 & 1) as f64, (k >> 2 & 1) as f64))
            .collect();
        // a point 2 above the top face, over its middle
        let s = distance(&Hull(&cube), &Point(DVec3::new(0.5, 3.0, 0.5))).unwrap();
        assert!((s.distance - 2.0).abs() < 1e-12);
        assert!(s.on_a.distance(DVec3::new(0.5, 1.0, 0.5)) < 1e-12);
        // inside: overlap
        assert!(distance(&Hull(&cube), &Point(DVec3::splat(0.5))).is_none());
        // a triangle resting on the top face: touching is overlap (0)
        let t = Triangle([
            DVec3::new(0.2, 1.0, 0.2),
            DVec3::new(0.8, 1.0, 0.2),
            DVec3::new(0.5, 1.0, 0.8),
        ]);
        assert!(distance(&Hull(&cube), &t).is_none());
        // beside an edge, diagonally: √2/2 · 0.1·√2 = 0.1
        let p = Point(DVec3::new(1.1, 1.1, 0.5));
        let s = distance(&Hull(&cube), &p).unwrap();
        assert!(
            (s.distance - 0.1 * 2f64.sqrt()).abs() < 1e-12,
            "{}",
            s.distance
        );
    }

    #[test]
    fn casts_cut_short_finish_by_the_convex_gap_alike() {
        // two steps of advancement, then the golden-section and bisection
        // finish, must agree with the full search
        let mut r = Rng(0x0bad_cafe_f00d_1234);
        let (mut hits, mut misses) = (0, 0);
        for i in 0..600 {
            let t = [r.v(1.0), r.v(1.0), r.v(1.0)];
            let (p, q) = (r.v(3.0), r.v(3.0));
            let radius = 0.05 + r.f() * 0.3;
            let motion = if i % 3 == 0 {
                r.v(2.0)
            } else {
                ((t[0] + t[1] + t[2]) / 3.0 - (p + q) * 0.5) * (1.0 + r.f())
            };
            let (seg, tri) = (Segment(p, q), Triangle(t));
            let full = cast(&seg, radius, motion, 1.0, &tri, 1e-9, None);
            let short = cast_steps(&seg, radius, motion, 1.0, &tri, 1e-9, None, 2);
            match (full, short) {
                (Some((a, _)), Some((b, _))) => {
                    hits += 1;
                    assert!(
                        (a - b).abs() * motion.length() <= 1e-6,
                        "case {i}: {a} vs {b}"
                    );
                }
                (None, None) => misses += 1,
                (a, b) => panic!("case {i}: full {a:?}, cut short {b:?}"),
            }
        }
        assert!(hits > 100 && misses > 50, "{hits} hits, {misses} misses");
        // a sphere passing 1 mm over a box corner never touches it
        let corner = OrientedBox {
            center: DVec3::ZERO,
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
            half: DVec3::ONE,
        };
        let across = DVec3::new(6.0, 0.0, 0.0);
        let at = |y: f64| Point(DVec3::new(-3.0, y, 1.0));
        let short = |y: f64| cast_steps(&at(y), 0.5, across, 1.0, &corner, 1e-9, None, 2);
        assert_eq!(short(1.501), None);
        let hit = short(1.499);
        let want = cast(&at(1.499), 0.5, across, 1.0, &corner, 1e-9, None);
        // a grazing approach fixes the time only to the tolerance over the
        // closing speed: within a micrometre along the motion
        assert!(
            (hit.unwrap().0 - want.unwrap().0).abs() * 6.0 < 1e-6,
            "{hit:?} {want:?}"
        );
    }

    #[test]
    fn capsule_casts_against_triangles_match_a_dense_search() {
        let mut r = Rng(0x1234_5678_9abc_def1);
        let (mut hits, mut misses) = (0, 0);
        for i in 0..600 {
            let at = r.v(1.0) * if i % 4 == 0 { 1e4 } else { 1.0 };
            let t = [at + r.v(1.0), at + r.v(1.0), at + r.v(1.0)];
            let (p, q) = (at + r.v(3.0), at + r.v(3.0));
            let radius = 0.05 + r.f() * 0.3;
            // aim at the triangle most of the time
            let towards = (t[0] + t[1] + t[2]) / 3.0 - (p + q) * 0.5;
            let motion = if i % 3 == 0 {
                r.v(2.0)
            } else {
                towards * (1.0 + r.f())
            };
            let seg = Segment(p, q);
            let got = cast(&seg, radius, motion, 1.0, &Triangle(t), 1e-9, None);
            // oracle: the first time the exact segment–triangle distance
            // falls to the radius, by dense sampling then bisection
            let gap = |u: f64| segment_triangle(p + motion * u, q + motion * u, t) - radius;
            let n = 1000;
            let first = (0..=n)
                .map(|k| k as f64 / n as f64)
                .find(|&u| gap(u) <= 0.0);
            let want = first.map(|u1| {
                if u1 == 0.0 {
                    return 0.0;
                }
                let (mut lo, mut hi) = (u1 - 1.0 / n as f64, u1);
                for _ in 0..80 {
                    let m = 0.5 * (lo + hi);
                    if gap(m) <= 0.0 { hi = m } else { lo = m }
                }
                hi
            });
            let scale = 1.0 + at.abs().max_element();
            let len = motion.length();
            match (got, want) {
                (Some((tg, _)), Some(tw)) => {
                    hits += 1;
                    // 1e-4 m along the motion, absolute
                    assert!(
                        (tg - tw).abs() * len <= 1e-4 + 1e-10 * scale,
                        "case {i}: {tg} vs {tw}"
                    );
                }
                (None, None) => misses += 1,
                // a graze the sampling could miss: the closest approach is
                // within the tolerance
                (g, w) => {
                    let closest = (0..=n)
                        .map(|k| gap(k as f64 / n as f64))
                        .fold(f64::INFINITY, f64::min);
                    assert!(
                        closest.abs() <= 1e-4,
                        "case {i}: cast {g:?} oracle {w:?}, closest {closest}"
                    );
                }
            }
        }
        assert!(hits > 150 && misses > 50, "{hits} hits, {misses} misses");
    }

    /// A box dropped onto another box's face, far from the origin, meets
    /// it at the time the face's offset gives, with the face's own normal
    /// to rounding (the closest points, a hair apart, would give it only
    /// to about 1e-6 there).
    #[test]
    fn box_casts_meet_faces_with_the_face_normal() {
        let mut r = Rng(0xface_0a11_5eed_0007);
        let mut worst = 0.0f64;
        for i in 0..2_000 {
            let at = r.v(1.0) * if i % 2 == 0 { 1e4 } else { 1.0 };
            let floor = OrientedBox {
                center: at,
                axes: r.rotation(),
                half: DVec3::new(2.0 + r.f(), 0.1 + r.f(), 2.0 + r.f()),
            };
            let up = floor.axes[1];
            let side = floor.axes[0];
            let falling = OrientedBox {
                center: at + up * (floor.half.y + 1.0 + r.f()) + side * (r.f() - 0.5),
                axes: r.rotation(),
                half: DVec3::new(0.1 + 0.2 * r.f(), 0.1 + 0.2 * r.f(), 0.1 + 0.2 * r.f()),
            };
            // down, with a little drift that keeps it over the face
            let motion = up * -(2.0 + r.f()) + side * (0.5 * r.f() - 0.25);
            let low = (falling.support(-up) - floor.center).dot(up) - floor.half.y;
            let want = low / -motion.dot(up);
            let scale = 1.0 + at.abs().max_element();
            let (t, meet) = cast(&falling, 0.0, motion, 1.0, &floor, 1e-9 * scale, None)
                .unwrap_or_else(|| panic!("case {i}: missed"));
            let meet = meet.unwrap_or_else(|| panic!("case {i}: no separation"));
            assert!(
                (t - want).abs() * motion.length() <= 2e-9 * scale,
                "case {i}: {t} {want}"
            );
            let off = (meet.normal - up).length();
            worst = worst.max(off);
            assert!(
                off <= 1e-11,
                "case {i}: normal {} off {up} by {off:e}",
                meet.normal
            );
        }
        eprintln!("worst normal deviation {worst:e}");
    }

    /// A cast warm-started from the simplex of the search at its start
    /// meets where a cold one does.
    #[test]
    fn warm_started_casts_agree_with_cold_ones() {
        let mut r = Rng(0x05ee_d0f5_aee9_0001);
        let (mut hits, mut misses) = (0, 0);
        for i in 0..5_000 {
            let at = r.v(1.0) * if i % 3 == 0 { 1e4 } else { 1.0 };
            let t = Triangle([at + r.v(1.0), at + r.v(1.0), at + r.v(1.0)]);
            let seg = Segment(at + r.v(3.0), at + r.v(3.0));
            let radius = r.f() * 0.3;
            let motion = r.v(4.0);
            let tolerance = 1e-9 * (1.0 + at.abs().max_element());
            let cold = cast(&seg, radius, motion, 1.0, &t, tolerance, None);
            let mut warm = Warm::default();
            if let Gap::Apart(s) =
                search_enclosing(&seg, &t, f64::INFINITY, -1.0, Some(&mut warm)).0
                && s.distance > radius + tolerance
            {
                let hot = cast(
                    &seg,
                    radius,
                    motion,
                    1.0,
                    &t,
                    tolerance,
                    Some((s, &mut warm)),
                );
                match (cold, hot) {
                    (Some((a, _)), Some((b, _))) => {
                        hits += 1;
                        assert!(
                            (a - b).abs() * motion.length() <= 4.0 * tolerance,
                            "case {i}"
                        );
                    }
                    (None, None) => misses += 1,
                    other => panic!("case {i}: {other:?}"),
                }
            }
        }
        assert!(hits > 500 && misses > 500, "{hits} {misses}");
    }
}
