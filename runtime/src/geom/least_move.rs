//! The least translation that frees a convex shape from obstacles given in
//! the space of its translations (configuration-space obstacles:
//! Lozano-Pérez, "Spatial Planning: A Configuration Space Approach", 1983).
//!
//! A shape touching a concave solid in several places — a corner, a
//! crease, a slot — is freed by the least translation over all
//! directions, not by the least move along one chosen direction (which,
//! along a second wall, is the wall's whole length). In the space of
//! translations `v`, each surface triangle the shape may meet is an
//! obstacle: the triangle grown by the reflected shape, bounded by
//! planes, and for a rounded shape by the tubes and balls around its
//! edges and corners. The free translations are those outside every
//! obstacle (with the shape's centre outside the solid), and the least of
//! them lies on one, two or three obstacle surfaces where it is a
//! critical point of `|v|` on them: the point of one surface nearest the
//! origin, a local minimum of `|v|` on the curve where two meet, or a
//! point where three meet. [`least_move`] lists those points within a
//! known free bound, nearest first, and keeps the first the caller finds
//! free. A point on planes alone is a linear solve; one on a curved
//! surface is found by Newton's method on the Lagrange conditions
//! (Nocedal and Wright, "Numerical Optimization", 2006, §18.1), started
//! from alternating projections onto the surfaces (von Neumann 1950).

use glam::{DMat3, DVec3};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One surface bounding an obstacle, in translation space; the free side
/// is where [`Surface::value`] is positive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Surface {
    /// The plane `n · v = h`, `n` a unit vector.
    Plane { n: DVec3, h: f64 },
    /// The sphere of radius `r` about `c`.
    Ball { c: DVec3, r: f64 },
    /// The infinite round tube of radius `r` about the line through `a`
    /// along the unit vector `u`.
    Tube { a: DVec3, u: DVec3, r: f64 },
}

impl Surface {
    /// The signed distance-like value that is 0 on the surface.
    fn value(&self, x: DVec3) -> f64 {
        match *self {
            Surface::Plane { n, h } => n.dot(x) - h,
            Surface::Ball { c, r } => (x - c).length() - r,
            Surface::Tube { a, u, r } => off_axis(x - a, u).length() - r,
        }
    }

    /// The gradient of [`Self::value`] (zero where it has none).
    fn gradient(&self, x: DVec3) -> DVec3 {
        match *self {
            Surface::Plane { n, .. } => n,
            Surface::Ball { c, .. } => (x - c).normalize_or_zero(),
            Surface::Tube { a, u, .. } => off_axis(x - a, u).normalize_or_zero(),
        }
    }

    /// The Hessian of [`Self::value`].
    fn hessian(&self, x: DVec3) -> DMat3 {
        let outer = |g: DVec3| DMat3::from_cols(g * g.x, g * g.y, g * g.z);
        match *self {
            Surface::Plane { .. } => DMat3::ZERO,
            Surface::Ball { c, .. } => {
                let d = x - c;
                let l = d.length();
                if l == 0.0 {
                    return DMat3::ZERO;
                }
                (DMat3::IDENTITY - outer(d / l)) * (1.0 / l)
            }
            Surface::Tube { a, u, .. } => {
                let w = off_axis(x - a, u);
                let l = w.length();
                if l == 0.0 {
                    return DMat3::ZERO;
                }
                (DMat3::IDENTITY - outer(u) - outer(w / l)) * (1.0 / l)
            }
        }
    }

    /// The point of the surface nearest `x`, if one is (a point on a
    /// ball's centre or a tube's axis has none).
    fn project(&self, x: DVec3) -> Option<DVec3> {
        match *self {
            Surface::Plane { n, h } => Some(x - n * (n.dot(x) - h)),
            Surface::Ball { c, r } => {
                let d = x - c;
                let l = d.length();
                (l > 0.0).then(|| c + d * (r / l))
            }
            Surface::Tube { a, u, r } => {
                let w = off_axis(x - a, u);
                let l = w.length();
                (l > 0.0).then(|| x - w + w * (r / l))
            }
        }
    }

    /// The least `|v|` over the surface: no candidate on it is nearer.
    pub(crate) fn reach(&self) -> f64 {
        match *self {
            Surface::Plane { h, .. } => h.abs(),
            Surface::Ball { c, r } => (c.length() - r).abs(),
            Surface::Tube { a, u, r } => (off_axis(-a, u).length() - r).abs(),
        }
    }

    fn is_plane(&self) -> bool {
        matches!(self, Surface::Plane { .. })
    }
}

/// The part of `d` across the unit direction `u`.
fn off_axis(d: DVec3, u: DVec3) -> DVec3 {
    d - u * d.dot(u)
}

/// One obstacle surface and the box that holds every point where it can
/// bound the free translations (its patch: the part of the surface that
/// is the obstacle's boundary, where the contact it stands for is one the
/// solid allows). A candidate on the surface outside the box is none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Patch {
    /// The surface.
    pub s: Surface,
    /// The box's least corner.
    pub lo: DVec3,
    /// The box's greatest corner.
    pub hi: DVec3,
}

impl Patch {
    /// A surface with a box that holds every point of it (for tests and
    /// surfaces whose patch is not known).
    #[cfg(test)]
    pub(crate) fn whole(s: Surface) -> Patch {
        Patch {
            s,
            lo: DVec3::splat(f64::NEG_INFINITY),
            hi: DVec3::splat(f64::INFINITY),
        }
    }

    /// The least `|v|` over the patch: no candidate on it is nearer.
    fn reach(&self) -> f64 {
        // the box's nearest point to the origin, per axis
        let gap = (self.lo.max(-self.hi)).max(DVec3::ZERO);
        self.s.reach().max(gap.length())
    }

    /// Whether `x` lies in the box, to `tol`.
    fn holds(&self, x: DVec3, tol: f64) -> bool {
        x.cmpge(self.lo - tol).all() && x.cmple(self.hi + tol).all()
    }

    /// How near the origin a point in both boxes (grown by `tol`) can
    /// be: infinite where they do not meet.
    fn common_reach(&self, o: &Patch, tol: f64) -> f64 {
        let (lo, hi) = (self.lo.max(o.lo) - tol, self.hi.min(o.hi) + tol);
        if lo.cmpgt(hi).any() {
            return f64::INFINITY;
        }
        lo.max(-hi).max(DVec3::ZERO).length()
    }

    /// Whether this box holds the other's, to `tol`.
    fn holds_box(&self, o: &Patch, tol: f64) -> bool {
        self.holds(o.lo, tol) && self.holds(o.hi, tol)
    }
}

/// The least translation `v` with `|v| < bound` that the caller's `free`
/// accepts, among the critical points of `|v|` on one, two or three of
/// the `patches`' surfaces within their boxes (see the module docs); or
/// that none is nearer than `bound`; or that more than [`MOST_SURFACES`]
/// distinct patches come nearer than the answer, or their meetings cost
/// more than [`MOST_WORK`] (a hostile archive, or a shape amid thousands
/// of tiny triangles), too many to weigh.
///
/// `scale` is the size of the coordinates (tolerances are relative to
/// it). Patches are taken nearest first: no candidate on a patch is
/// nearer than its surface or its box, so once a free candidate is no
/// farther than the next patch, it is the least, and the patches beyond
/// are never looked at. Two or three patches are solved together only
/// where their boxes meet. A candidate is asked of `free` only where it
/// is a local minimum of `|v|` over the free side of its surfaces to
/// first order (`v` is in the cone of their outward gradients), nearest
/// first.
pub(crate) fn least_move(
    patches: &[Patch],
    bound: f64,
    scale: f64,
    mut free: impl FnMut(DVec3) -> bool,
) -> Least {
    let mut reached: Vec<(f64, Patch)> = patches
        .iter()
        .map(|p| (p.reach(), *p))
        .filter(|(r, _)| *r < bound && r.is_finite())
        .collect();
    reached.sort_by(|a, b| a.0.total_cmp(&b.0));
    let tol = 1e-13 * scale;
    let pad = 1e-9 * scale;
    // patches weighed so far
    let mut s: Vec<Patch> = Vec::new();
    // pair[k][i], i < k: no point on both i and k is nearer (NaN while
    // the pair waits to be solved)
    let mut pair: Vec<Vec<f64>> = Vec::new();
    // candidates not yet asked, pairs and triples not yet solved, nearest
    // first (a pair or triple by the least its points can be: most lie
    // beyond the answer and are never solved)
    let mut heap: BinaryHeap<Reverse<Candidate>> = BinaryHeap::new();
    let push = |x: DVec3, on: &[&Patch], heap: &mut BinaryHeap<Reverse<Candidate>>| {
        let l = x.length();
        if l < bound && x.is_finite() && on.iter().all(|p| p.holds(x, pad)) && {
            let surfaces: [&Surface; 3] = std::array::from_fn(|i| &on[i.min(on.len() - 1)].s);
            in_cone(x, &surfaces[..on.len()], tol)
        } {
            heap.push(Reverse(Candidate(l, Waiting::Point(x))));
        }
    };
    let (mut work, mut waiting) = (0usize, 0usize);
    let mut next = 0;
    loop {
        // the next patch not held by one weighed (one surface given twice
        // by coplanar triangles, a corner many triangles share): nothing
        // on it or later is nearer
        let mut added = None;
        while next < reached.len() {
            let (r, c) = reached[next];
            next += 1;
            if !s
                .iter()
                .any(|k| same(&k.s, &c.s, 1e-9 * scale) && k.holds_box(&c, pad))
            {
                added = Some((r, c));
                break;
            }
        }
        let floor = added.map_or(bound, |(r, _)| r.min(bound));
        // everything no farther than that is settled: ask the candidates,
        // solve the triples
        while let Some(&Reverse(Candidate(l, what))) = heap.peek() {
            if l > floor {
                break;
            }
            heap.pop();
            match what {
                Waiting::Point(x) => {
                    // asking costs a test of the caller's triangles (most
                    // often one: the caller asks the last blocker first)
                    work += ASK;
                    if free(x) {
                        return Least::Found(x);
                    }
                }
                Waiting::Triple(i, j, k) => {
                    let on = [&s[i as usize], &s[j as usize], &s[k as usize]];
                    let surfaces = on.map(|p| &p.s);
                    work += cost(&surfaces);
                    if work > MOST_WORK {
                        return Least::TooMany;
                    }
                    for x in meet(&surfaces, tol) {
                        push(x, &on, &mut heap);
                    }
                }
                Waiting::Pair(i, k, common) => {
                    let (i, k) = (i as usize, k as usize);
                    let (a, c) = (&s[i], &s[k]);
                    work += cost(&[&a.s, &c.s]);
                    let found = meet(&[&a.s, &c.s], tol);
                    for &x in &found {
                        push(x, &[a, c], &mut heap);
                    }
                    // how near a point on both can be: the bound for
                    // the triples with them
                    let least = match (a.s, c.s, found.first()) {
                        // two planes: the nearest point of the part of
                        // their line in both boxes
                        (Surface::Plane { n, .. }, Surface::Plane { n: m, .. }, Some(&x)) => {
                            let d = n.cross(m).normalize();
                            let (lo, hi) = (a.lo.max(c.lo) - pad, a.hi.min(c.hi) + pad);
                            line_in_box(x, d, lo, hi).map_or(f64::INFINITY, |(t0, t1)| {
                                (x + d * t0.max(0.0).min(t1)).length()
                            })
                        }
                        (Surface::Plane { .. }, Surface::Plane { .. }, None) => f64::INFINITY,
                        // a curve's least point may fall between the samples
                        // that seek it (two great tubes nearly along one
                        // another): no nearer than either patch, and no
                        // more is known
                        _ => 0.0,
                    }
                    .max(a.reach().max(c.reach()))
                    .max(common);
                    pair[k][i] = least;
                    if least >= bound {
                        continue;
                    }
                    // each triple once, when the last of its pairs is
                    // solved
                    let get = |x: usize, y: usize| {
                        if x < y { pair[y][x] } else { pair[x][y] }
                    };
                    for j in (0..s.len()).filter(|&j| j != i && j != k) {
                        let (r1, r2) = (get(i, j), get(j, k));
                        if r1.is_nan() || r2.is_nan() || r1 >= bound || r2 >= bound {
                            continue;
                        }
                        let b = &s[j];
                        if a.s.is_plane() && b.s.is_plane() && c.s.is_plane() {
                            // three planes: their point now (as cheap as
                            // queueing them)
                            work += 1;
                            if let Some(x) = planes_meet(&[&a.s, &b.s, &c.s]) {
                                push(x, &[a, b, c], &mut heap);
                            }
                            continue;
                        }
                        let mut t = [i as u32, j as u32, k as u32];
                        t.sort_unstable();
                        waiting += 1;
                        heap.push(Reverse(Candidate(
                            least.max(r1).max(r2),
                            Waiting::Triple(t[0], t[1], t[2]),
                        )));
                    }
                }
            }
        }
        let Some((_, c)) = added else {
            return Least::NoneNearer;
        };
        if s.len() == MOST_SURFACES || work > MOST_WORK || waiting > MOST_WAITING {
            return Least::TooMany;
        }
        // the new patch alone now, and with each earlier one it meets
        // when the queue reaches them
        let k = s.len();
        s.push(c);
        if let Some(x) = c.s.project(DVec3::ZERO) {
            push(x, &[&c], &mut heap);
        }
        let mut row = vec![f64::INFINITY; k];
        for (i, a) in s[..k].iter().enumerate() {
            let common = a.common_reach(&c, pad);
            if common >= bound || same(&a.s, &c.s, 1e-9 * scale) {
                continue;
            }
            row[i] = f64::NAN;
            let least = common.max(a.reach()).max(c.reach());
            heap.push(Reverse(Candidate(
                least,
                Waiting::Pair(i as u32, k as u32, common),
            )));
        }
        pair.push(row);
    }
}

/// The interval of `t` where `x + d t` lies in the box from `lo` to
/// `hi`; `None` where the line misses it.
fn line_in_box(x: DVec3, d: DVec3, lo: DVec3, hi: DVec3) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (f64::NEG_INFINITY, f64::INFINITY);
    for i in 0..3 {
        if d[i].abs() <= 1e-300 {
            if x[i] < lo[i] || x[i] > hi[i] {
                return None;
            }
            continue;
        }
        let (a, b) = ((lo[i] - x[i]) / d[i], (hi[i] - x[i]) / d[i]);
        t0 = t0.max(a.min(b));
        t1 = t1.min(a.max(b));
    }
    (t0 <= t1).then_some((t0, t1))
}

/// What solving where `s` meet costs, in solves of planes: a curved
/// surface takes Newton's method, a hundred times a linear solve.
fn cost(s: &[&Surface]) -> usize {
    if s.iter().all(|x| x.is_plane()) {
        1
    } else {
        100
    }
}

/// What [`least_move`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Least {
    /// The least free translation nearer than the bound.
    Found(DVec3),
    /// No free translation is nearer than the bound.
    NoneNearer,
    /// Too many surfaces come nearer than the answer to weigh them all.
    TooMany,
}

/// A candidate translation, or three patches whose meeting points are
/// yet to be solved for, keyed by the least length they can have and
/// ordered by it.
#[derive(Clone, Copy, PartialEq)]
struct Candidate(f64, Waiting);

/// What waits in [`least_move`]'s queue.
#[derive(Clone, Copy, PartialEq)]
enum Waiting {
    /// A translation to ask of the caller.
    Point(DVec3),
    /// Three weighed patches, by index.
    Triple(u32, u32, u32),
    /// Two weighed patches, by index, and how near a point in both their
    /// boxes can be.
    Pair(u32, u32, f64),
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Whether `x` is in the cone of the outward gradients of the surfaces
/// `on` at `x` (to rounding): the first-order condition for `x` to be a
/// local minimum of `|v|` over the free side of all of them. Where it
/// fails, a shorter free translation lies beside `x`.
fn in_cone(x: DVec3, on: &[&Surface], tol: f64) -> bool {
    let l = x.length();
    if l <= tol {
        return true;
    }
    let g: [DVec3; 3] = std::array::from_fn(|i| on.get(i).map_or(DVec3::ZERO, |s| s.gradient(x)));
    // x = Σ μ g by least squares; then every μ ≥ 0 and nothing left over
    let k = on.len();
    let mut m = [[0.0f64; 4]; 3];
    for i in 0..k {
        for j in 0..k {
            m[i][j] = g[i].dot(g[j]);
        }
        m[i][k] = g[i].dot(x);
    }
    let Some(mu) = solve::<3, 4>(&mut m, k) else {
        // dependent gradients: no verdict, the caller asks
        return true;
    };
    let rest = x - (0..k).fold(DVec3::ZERO, |a, i| a + g[i] * mu[i]);
    mu[..k].iter().all(|&m| m >= -1e-9) && rest.length() <= 1e-6 * l
}

/// The most distinct patches [`least_move`] weighs.
pub(crate) const MOST_SURFACES: usize = 1024;

/// The most triples [`least_move`] keeps waiting (a few dozen bytes
/// each).
pub(crate) const MOST_WAITING: usize = 1_000_000;

/// The most work [`least_move`] does on meetings and candidates, in
/// solves of planes (a meeting with a curved surface costs a hundred,
/// asking the caller [`ASK`]): some milliseconds.
pub(crate) const MOST_WORK: usize = 4_000_000;

/// What asking the caller whether a candidate is free costs, in solves of
/// planes.
const ASK: usize = 4;

/// Whether two surfaces are one, to `tol`.
fn same(a: &Surface, b: &Surface, tol: f64) -> bool {
    match (*a, *b) {
        (Surface::Plane { n, h }, Surface::Plane { n: m, h: g }) => {
            (n - m).abs().max_element() <= 1e-9 && (h - g).abs() <= tol
        }
        (Surface::Ball { c, r }, Surface::Ball { c: d, r: s }) => {
            (c - d).abs().max_element() <= tol && r == s
        }
        (Surface::Tube { a, u, r }, Surface::Tube { a: b, u: v, r: s }) => {
            r == s && u.cross(v).length() <= 1e-9 && off_axis(b - a, u).length() <= tol
        }
        _ => false,
    }
}

/// The critical points of `|v|` on the intersection of two or three
/// surfaces (a curve, or isolated points), refined by Newton's method from
/// starts spread along the curve: where two surfaces meet, each local
/// minimum of `|v|` among points sampled along their curve (an ellipse or
/// a quartic can hold two); where three meet, each point where the third
/// surface crosses the curve of the other two.
fn meet(s: &[&Surface], tol: f64) -> Vec<DVec3> {
    if s.iter().all(|x| x.is_plane()) {
        return planes_meet(s).into_iter().collect();
    }
    if let [a, b] = s
        && let Some(points) = degenerate(a, b, tol)
    {
        return points;
    }
    let mut starts: Vec<DVec3> = Vec::new();
    let sampled = if s.len() == 2 {
        curve(s[0], s[1]).map(|c| {
            c.runs(&mut |at, n, closed| least_along(at, n, closed, &mut starts));
            if starts.is_empty() {
                // a meeting small enough to fall between the sampled
                // angles (a ball all but tangent to a tube) is there at
                // the angle where the ball comes nearest the tube
                extremal_starts(s[0], s[1], &mut starts);
            }
        })
    } else {
        crossings(s, &mut starts)
    };
    if sampled.is_none() {
        // a curve with no parametrisation here (parallel axes, a tube
        // along a plane): from alternating projections started at the
        // origin and at each surface's own nearest point
        let others = if s.len() == 2 { 2 } else { 0 };
        starts.extend(
            std::iter::once(DVec3::ZERO)
                .chain(s.iter().take(others).filter_map(|x| x.project(DVec3::ZERO)))
                .filter_map(|x| alternate(s, x)),
        );
    }
    let mut found: Vec<DVec3> = Vec::with_capacity(2);
    for start in starts {
        let Some(x) = newton(s, start, tol) else {
            continue;
        };
        if !found.iter().any(|y| (*y - x).length() <= 1e3 * tol) {
            found.push(x);
        }
    }
    found
}

/// The least points of a meeting that Newton's method cannot take (its
/// equations are singular there), in closed form: a tube along a plane
/// meets it in up to two lines along its axis (one where it touches); a
/// ball centred on a tube's axis meets it in up to two circles about the
/// axis (one where they touch); two tubes along one direction meet in
/// up to two lines. `None` where `a` and `b` are none of these.
fn degenerate(a: &Surface, b: &Surface, tol: f64) -> Option<Vec<DVec3>> {
    let (tube, other) = match (a, b) {
        (Surface::Tube { .. }, _) => (a, b),
        (_, Surface::Tube { .. }) => (b, a),
        _ => return None,
    };
    let Surface::Tube { a: a0, u, r } = *tube else {
        unreachable!("a tube")
    };
    // the nearest point to the origin of the line through x along u
    let nearest = |x: DVec3| x - u * x.dot(u);
    // the points (in the plane across u through a0, as offsets from a0)
    // at distance r from a0 and at distance `r2` from `c2` (in that plane)
    let circles = |c2: DVec3, r2: f64| -> Vec<DVec3> {
        let l = c2.length();
        if l <= 0.0 {
            return Vec::new();
        }
        let x = (l * l + r * r - r2 * r2) / (2.0 * l);
        let h2 = r * r - x * x;
        if h2 < -1e-9 * r * r {
            return Vec::new();
        }
        let k = c2 / l;
        let side = u.cross(k);
        let h = h2.max(0.0).sqrt();
        if h <= 1e-9 * r {
            vec![k * x]
        } else {
            vec![k * x + side * h, k * x - side * h]
        }
    };
    match *other {
        Surface::Plane { n, h } if n.dot(u).abs() <= 1e-9 => {
            // the lines of the tube at height d over the axis, across n
            let k = (n - u * n.dot(u)).normalize_or_zero();
            let d = h - n.dot(a0);
            let h2 = r * r - d * d;
            if k == DVec3::ZERO || h2 < -1e-9 * r * r {
                return Some(Vec::new());
            }
            let side = u.cross(k) * h2.max(0.0).sqrt();
            let mut out = vec![nearest(a0 + k * d + side)];
            if side.length() > 1e-9 * r {
                out.push(nearest(a0 + k * d - side));
            }
            Some(out)
        }
        Surface::Tube { a, u: v, r: s } if u.cross(v).length() <= 1e-9 => {
            let c2 = off_axis(a - a0, u);
            Some(
                circles(c2, s)
                    .into_iter()
                    .map(|w| nearest(a0 + w))
                    .collect(),
            )
        }
        Surface::Ball { c, r: big } if off_axis(c - a0, u).length() <= 1e3 * tol => {
            let along2 = big * big - r * r;
            if along2 < -1e-9 * big * big {
                return Some(Vec::new());
            }
            let along = along2.max(0.0).sqrt();
            let centre = a0 + u * (c - a0).dot(u);
            let mut out = Vec::new();
            for m in if along <= 1e-9 * big {
                vec![centre]
            } else {
                vec![centre + u * along, centre - u * along]
            } {
                // the circle's point nearest the origin
                let w = off_axis(-m, u).normalize_or_zero();
                let w = if w == DVec3::ZERO {
                    u.any_orthonormal_vector()
                } else {
                    w
                };
                out.push(m + w * r);
            }
            Some(out)
        }
        _ => None,
    }
}

/// How many points [`curve`] samples a curve at.
const SAMPLES: usize = 48;

/// The cosines and sines of [`SAMPLES`] angles evenly round the circle.
fn angles() -> &'static [(f64, f64); SAMPLES] {
    static ANGLES: std::sync::OnceLock<[(f64, f64); SAMPLES]> = std::sync::OnceLock::new();
    ANGLES.get_or_init(|| {
        std::array::from_fn(|k| {
            let t = std::f64::consts::TAU * k as f64 / SAMPLES as f64;
            (t.cos(), t.sin())
        })
    })
}

/// Points along the curve where surfaces `a` and `b` meet, in runs of
/// consecutive points (a run that goes all the way round is closed, its
/// last point next to its first); `None` where the curve is not
/// parametrised here. A tube's curve is sampled by the angle about its
/// axis, the other surface solved along the line of the tube through
/// that angle (one point on a plane, up to two on a ball or another
/// tube: two branches); a ball's curve with a plane or a ball is a circle.
fn curve(a: &Surface, b: &Surface) -> Option<Curve> {
    let (tube, other) = match (a, b) {
        (Surface::Tube { .. }, _) => (a, b),
        (_, Surface::Tube { .. }) => (b, a),
        _ => return circle(a, b).map(|(c, rho, k)| ring(c, rho, k)),
    };
    let Surface::Tube { a: a0, u, r } = *tube else {
        unreachable!("a tube")
    };
    let (e1, e2) = u.any_orthonormal_pair();
    // for each angle, the line a0 + r·w(θ) + s·u meets `other` at the
    // roots s of a quadratic A s² + B s + C (or a linear B s + C)
    let mut out = Curve {
        points: [[None; SAMPLES]; 2],
        branches: 2,
    };
    for (k, &(cos, sin)) in angles().iter().enumerate() {
        let q = a0 + (e1 * cos + e2 * sin) * r;
        let (qa, qb, qc) = match *other {
            Surface::Plane { n, h } => (0.0, n.dot(u), n.dot(q) - h),
            Surface::Ball { c, r } => {
                let d = q - c;
                (1.0, 2.0 * d.dot(u), d.dot(d) - r * r)
            }
            Surface::Tube { a, u: v, r } => {
                let (w0, wu) = (off_axis(q - a, v), off_axis(u, v));
                (wu.dot(wu), 2.0 * w0.dot(wu), w0.dot(w0) - r * r)
            }
        };
        let roots = quadratic(qa, qb, qc)?;
        for (b, s) in roots.iter().enumerate() {
            out.points[b][k] = s.map(|s| q + u * s);
        }
    }
    Some(out)
}

/// Starts on the meeting of a tube and a ball at the angle about the
/// tube's axis where the ball's centre lies. The lines of the tube's
/// surface come nearer the centre the nearer their angle is to that one,
/// so the angles where the two meet are one interval about it: when no
/// sampled angle of [`curve`] sees the meeting, it lies there (the two
/// all but tangent). A plane meets every line of a tube that is not along
/// it, and two tubes add none.
fn extremal_starts(a: &Surface, b: &Surface, starts: &mut Vec<DVec3>) {
    let (a0, u, r, c, rb) = match (a, b) {
        (&Surface::Tube { a: a0, u, r }, &Surface::Ball { c, r: rb })
        | (&Surface::Ball { c, r: rb }, &Surface::Tube { a: a0, u, r }) => (a0, u, r, c, rb),
        _ => return,
    };
    let Some(w) = off_axis(c - a0, u).try_normalize() else {
        return;
    };
    let q = a0 + w * r;
    let d = q - c;
    if let Some(roots) = quadratic(1.0, 2.0 * d.dot(u), d.dot(d) - rb * rb) {
        starts.extend(roots.iter().flatten().map(|s| q + u * *s));
    }
}

/// A run's point by its index in the run.
type RunAt<'a> = dyn Fn(usize) -> DVec3 + 'a;

/// Points sampled along a curve, on one or two branches, at the angles of
/// [`angles`] (`None` where the branch is not there).
struct Curve {
    points: [[Option<DVec3>; SAMPLES]; 2],
    branches: usize,
}

impl Curve {
    /// Calls `f` with each run of consecutive points (a point by its
    /// index in the run), its length, and whether it closes on itself
    /// (its last point next to its first).
    fn runs(&self, f: &mut dyn FnMut(&RunAt, usize, bool)) {
        for points in &self.points[..self.branches] {
            // start after a gap, so that a run across the wrap is whole
            let Some(gap) = points.iter().position(Option::is_none) else {
                f(&|i| points[i].unwrap_or_default(), SAMPLES, true);
                continue;
            };
            let mut start = None;
            for k in 1..=SAMPLES {
                let at = (gap + k) % SAMPLES;
                match (points[at], start) {
                    (Some(_), None) => start = Some(k),
                    (None, Some(s)) => {
                        f(
                            &|i| points[(gap + s + i) % SAMPLES].unwrap_or_default(),
                            k - s,
                            false,
                        );
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                f(
                    &|i| points[(gap + s + i) % SAMPLES].unwrap_or_default(),
                    SAMPLES + 1 - s,
                    false,
                );
            }
        }
    }
}

/// The roots of `a s² + b s + c` (or of `b s + c` where `a` is 0), least
/// first, each `None` where there is none; `None` where the line the
/// caller solves along runs along the surface (no finite root to
/// follow).
fn quadratic(a: f64, b: f64, c: f64) -> Option<[Option<f64>; 2]> {
    if a == 0.0 {
        return (b.abs() > 1e-9).then(|| [Some(-c / b), None]);
    }
    if a < 1e-12 {
        return None;
    }
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return Some([None, None]);
    }
    let root = disc.sqrt();
    Some([Some((-b - root) / (2.0 * a)), Some((-b + root) / (2.0 * a))])
}

/// The circle where a ball meets a plane or another ball: its centre,
/// radius and axis; `None` where they do not meet in a circle.
fn circle(a: &Surface, b: &Surface) -> Option<(DVec3, f64, DVec3)> {
    let (ball, other) = match (a, b) {
        (Surface::Ball { .. }, _) => (a, b),
        (_, Surface::Ball { .. }) => (b, a),
        _ => return None,
    };
    let Surface::Ball { c, r } = *ball else {
        unreachable!("a ball")
    };
    let (centre, along, k) = match *other {
        Surface::Plane { n, h } => (c - n * (n.dot(c) - h), n.dot(c) - h, n),
        Surface::Ball { c: d, r: s } => {
            let l = (d - c).length();
            if l <= 0.0 {
                return None;
            }
            let k = (d - c) / l;
            let x = (l * l + r * r - s * s) / (2.0 * l);
            (c + k * x, x, k)
        }
        Surface::Tube { .. } => return None,
    };
    let rho2 = r * r - along * along;
    (rho2 > 0.0).then(|| (centre, rho2.sqrt(), k))
}

/// Points round the circle about `c` of radius `rho` and axis `k`.
fn ring(c: DVec3, rho: f64, k: DVec3) -> Curve {
    let (e1, e2) = k.any_orthonormal_pair();
    let mut out = Curve {
        points: [[None; SAMPLES]; 2],
        branches: 1,
    };
    for (p, &(cos, sin)) in out.points[0].iter_mut().zip(angles()) {
        *p = Some(c + (e1 * cos + e2 * sin) * rho);
    }
    out
}

/// Adds to `starts` each point of a run (`at`, `n` points, `closed`) no
/// farther from the origin than its neighbours (a closed run wraps
/// round).
fn least_along(at: &RunAt, n: usize, closed: bool, starts: &mut Vec<DVec3>) {
    for k in 0..n {
        let l = at(k).length();
        let before = if k > 0 {
            Some(at(k - 1))
        } else {
            closed.then(|| at(n - 1))
        };
        let after = if k + 1 < n {
            Some(at(k + 1))
        } else {
            closed.then(|| at(0))
        };
        if before.is_none_or(|p| l <= p.length()) && after.is_none_or(|p| l <= p.length()) {
            starts.push(at(k));
        }
    }
}

/// Starts for the points where three surfaces (one at least curved) meet:
/// where two are planes, the points of their line on the third; else each
/// point along the curve of two where the third's value changes sign.
/// `None` where no curve of two is parametrised here.
fn crossings(s: &[&Surface], starts: &mut Vec<DVec3>) -> Option<()> {
    let planes: Vec<&Surface> = s.iter().copied().filter(|x| x.is_plane()).collect();
    if let [p, q] = planes[..] {
        let third = s.iter().copied().find(|x| !x.is_plane())?;
        let base = planes_meet(&[p, q])?;
        let (Surface::Plane { n: n1, .. }, Surface::Plane { n: n2, .. }) = (*p, *q) else {
            unreachable!("planes")
        };
        let d = n1.cross(n2).normalize_or_zero();
        let (qa, qb, qc) = match *third {
            Surface::Ball { c, r } => {
                let w = base - c;
                (1.0, 2.0 * w.dot(d), w.dot(w) - r * r)
            }
            Surface::Tube { a, u, r } => {
                let (w0, wd) = (off_axis(base - a, u), off_axis(d, u));
                (wd.dot(wd), 2.0 * w0.dot(wd), w0.dot(w0) - r * r)
            }
            Surface::Plane { .. } => return None,
        };
        let roots = quadratic(qa, qb, qc)?;
        starts.extend(roots.iter().flatten().map(|&t| base + d * t));
        return Some(());
    }
    // the pair to follow: one with a tube, else two with a ball, the
    // first that parametrises
    let mut order = [(0, 1, 2), (0, 2, 1), (1, 2, 0)];
    order.sort_by_key(|&(i, j, _)| std::cmp::Reverse(curve_kind(s[i], s[j])));
    let (k, curve) = order
        .iter()
        .filter(|&&(i, j, _)| curve_kind(s[i], s[j]) > 0)
        .find_map(|&(i, j, k)| curve(s[i], s[j]).map(|c| (k, c)))?;
    curve.runs(&mut |at, n, closed| {
        let ends = if closed { n } else { n.saturating_sub(1) };
        for m in 0..ends {
            let (x, y) = (at(m), at((m + 1) % n));
            let (fx, fy) = (s[k].value(x), s[k].value(y));
            if fx == 0.0 || (fx < 0.0) != (fy < 0.0) {
                let t = if fx == fy { 0.0 } else { fx / (fx - fy) };
                starts.push(x + (y - x) * t.clamp(0.0, 1.0));
            }
        }
    });
    Some(())
}

/// 2 where [`curve`] follows a tube's angle for `a` and `b`, 1 where a
/// circle, 0 where neither.
fn curve_kind(a: &Surface, b: &Surface) -> u8 {
    match (a, b) {
        (Surface::Tube { .. }, _) | (_, Surface::Tube { .. }) => 2,
        (Surface::Ball { .. }, _) | (_, Surface::Ball { .. }) => 1,
        _ => 0,
    }
}

/// The point of least norm on two or three planes (their line's nearest
/// point, or their common point): `v = G (GᵀG)⁻¹ h`.
fn planes_meet(s: &[&Surface]) -> Option<DVec3> {
    let plane = |x: &Surface| match *x {
        Surface::Plane { n, h } => (n, h),
        _ => unreachable!("planes only"),
    };
    match s {
        [a, b] => {
            let ((n1, h1), (n2, h2)) = (plane(a), plane(b));
            let d = n1.dot(n2);
            let det = 1.0 - d * d;
            if det < 1e-12 {
                return None;
            }
            let l1 = (h1 - d * h2) / det;
            let l2 = (h2 - d * h1) / det;
            Some(n1 * l1 + n2 * l2)
        }
        [a, b, c] => {
            let ((n1, h1), (n2, h2), (n3, h3)) = (plane(a), plane(b), plane(c));
            let det = n1.dot(n2.cross(n3));
            if det.abs() < 1e-9 {
                return None;
            }
            Some((n2.cross(n3) * h1 + n3.cross(n1) * h2 + n1.cross(n2) * h3) / det)
        }
        _ => None,
    }
}

/// A point on every surface of `s`, by projecting onto each in turn from
/// `x` (a few rounds: Newton finishes).
fn alternate(s: &[&Surface], mut x: DVec3) -> Option<DVec3> {
    for _ in 0..4 {
        for a in s {
            x = a.project(x)?;
        }
    }
    Some(x)
}

/// Newton's method on the Lagrange conditions of least `|v|²/2` subject to
/// `value = 0` on each surface of `s`, from `x`: the critical point it
/// converges to, if it does.
fn newton(s: &[&Surface], mut x: DVec3, tol: f64) -> Option<DVec3> {
    let k = s.len();
    let n = 3 + k;
    // multipliers by least squares: x + Σ λ g ≈ 0
    let mut lambda = [0.0f64; 3];
    {
        let g: Vec<DVec3> = s.iter().map(|a| a.gradient(x)).collect();
        let mut m = [[0.0f64; 4]; 3];
        for i in 0..k {
            for j in 0..k {
                m[i][j] = g[i].dot(g[j]);
            }
            m[i][k] = -g[i].dot(x);
        }
        if let Some(l) = solve::<3, 4>(&mut m, k) {
            lambda[..k].copy_from_slice(&l[..k]);
        }
    }
    for _ in 0..12 {
        let g: [DVec3; 3] =
            std::array::from_fn(|i| s.get(i).map_or(DVec3::ZERO, |a| a.gradient(x)));
        let mut grad_l = x;
        let mut h = DMat3::IDENTITY;
        for i in 0..k {
            grad_l += g[i] * lambda[i];
            h += s[i].hessian(x) * lambda[i];
        }
        let values: [f64; 3] = std::array::from_fn(|i| s.get(i).map_or(0.0, |a| a.value(x)));
        let err = grad_l
            .length()
            .max(values.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        if err <= tol {
            return Some(x);
        }
        // [[H, G], [Gᵀ, 0]] · (dx, dλ) = −(∇L, φ)
        let mut m = [[0.0f64; 7]; 6];
        for r in 0..3 {
            m[r][..3].copy_from_slice(&h.row(r).to_array());
            for i in 0..k {
                m[r][3 + i] = g[i][r];
                m[3 + i][r] = g[i][r];
            }
            m[r][n] = -grad_l[r];
        }
        for i in 0..k {
            m[3 + i][n] = -values[i];
        }
        let d = solve::<6, 7>(&mut m, n)?;
        let dx = DVec3::new(d[0], d[1], d[2]);
        if !dx.is_finite() {
            return None;
        }
        x += dx;
        for i in 0..k {
            lambda[i] += d[3 + i];
        }
    }
    None
}

/// Solves the `n × n` system whose augmented rows are `m` (column `n` the
/// right-hand side) by Gaussian elimination with partial pivoting; `None`
/// where it is singular.
fn solve<const R: usize, const C: usize>(m: &mut [[f64; C]; R], n: usize) -> Option<[f64; R]> {
    let mut big = 0.0f64;
    for row in m.iter().take(n) {
        for x in &row[..n] {
            big = big.max(x.abs());
        }
    }
    if big == 0.0 || !big.is_finite() {
        return None;
    }
    for col in 0..n {
        let p = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[p][col].abs() <= 1e-13 * big {
            return None;
        }
        m.swap(col, p);
        let pivot = m[col];
        for row in m.iter_mut().take(n).skip(col + 1) {
            let f = row[col] / pivot[col];
            for (x, p) in row.iter_mut().zip(&pivot).take(n + 1).skip(col) {
                *x -= f * p;
            }
        }
    }
    let mut x = [0.0f64; R];
    for r in (0..n).rev() {
        let mut v = m[r][n];
        for c in r + 1..n {
            v -= m[r][c] * x[c];
        }
        x[r] = v / m[r][r];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_geometry::rng::Rng;

    /// Two planes: the nearest point of their line; three: their point.
    #[test]
    fn planes_meet_on_their_line_and_at_their_point() {
        let p = |n: DVec3, h: f64| Surface::Plane {
            n: n.normalize(),
            h,
        };
        let (a, b, c) = (p(DVec3::X, 1.0), p(DVec3::Y, 2.0), p(DVec3::Z, -3.0));
        let x = planes_meet(&[&a, &b]).unwrap();
        assert!(x.abs_diff_eq(DVec3::new(1.0, 2.0, 0.0), 1e-12), "{x}");
        let x = planes_meet(&[&a, &b, &c]).unwrap();
        assert!(x.abs_diff_eq(DVec3::new(1.0, 2.0, -3.0), 1e-12), "{x}");
        assert!(planes_meet(&[&a, &p(DVec3::X, 3.0)]).is_none());
    }

    /// On curved surfaces, Newton's point lies on every surface and is a
    /// critical point of the distance on the curve where two meet: a step
    /// along the curve either way changes the distance only to second
    /// order.
    #[test]
    fn curved_meetings_are_critical_points_on_their_curve() {
        let mut r = Rng(0x1ea5_7e0e_0000_0002);
        let mut met = 0;
        for case in 0..2000 {
            let pick = |r: &mut Rng| match (r.f() * 3.0) as usize {
                0 => Surface::Plane {
                    n: r.unit(),
                    h: r.f() * 2.0 - 1.0,
                },
                1 => Surface::Ball {
                    c: r.v(1.0),
                    r: 0.2 + r.f(),
                },
                _ => Surface::Tube {
                    a: r.v(1.0),
                    u: r.unit(),
                    r: 0.2 + r.f(),
                },
            };
            let (a, b) = (pick(&mut r), pick(&mut r));
            if a.is_plane() && b.is_plane() {
                continue;
            }
            for x in meet(&[&a, &b], 1e-10) {
                met += 1;
                assert!(
                    a.value(x).abs() < 1e-8 && b.value(x).abs() < 1e-8,
                    "case {case}"
                );
                // step along the curve (its tangent, back onto both
                // surfaces) either way: the distance's central difference
                // vanishes to third order
                let t = a.gradient(x).cross(b.gradient(x)).normalize();
                let step = 1e-4;
                let (Some(y), Some(z)) = (
                    alternate(&[&a, &b], x + t * step),
                    alternate(&[&a, &b], x - t * step),
                ) else {
                    continue;
                };
                assert!(
                    (y.length() - z.length()).abs() <= 1e-9,
                    "case {case}: {x} ({}) between {y} and {z}",
                    x.length()
                );
            }
        }
        assert!(met > 500, "{met}");
    }

    /// Where a curved surface meets another, the least point found is the
    /// curve's nearest point to the origin, also where the curve holds a
    /// second, farther local minimum (a plane across a tube, the origin
    /// within the ellipse): judged against Newton's method from a
    /// thousand random starts.
    /// A ball all but tangent to a tube, from inside it, meets it in a
    /// curve narrower than the sampled angles: found from the angle where
    /// the ball comes nearest the tube's surface.
    #[test]
    fn a_meeting_between_the_sampled_angles_is_found() {
        let ball = Surface::Ball {
            c: DVec3::new(-0.2920372168468437, 0.5351263412088021, 0.36190024606824167),
            r: 0.37994823947323536,
        };
        let tube = Surface::Tube {
            a: DVec3::new(
                0.023361096683775506,
                0.2039946331081024,
                -0.0819843608937808,
            ),
            u: DVec3::new(0.6167897053156837, -0.2604658506910914, -0.7427839524655594).normalize(),
            r: 0.562569246497385,
        };
        let mut r = Rng(7);
        let brute = (0..2000)
            .filter_map(|_| {
                let x = alternate(&[&ball, &tube], r.v(2.0))?;
                newton(&[&ball, &tube], x, 1e-12)
            })
            .map(|x| x.length())
            .fold(f64::INFINITY, f64::min);
        assert!(brute.is_finite(), "they meet");
        let got = meet(&[&ball, &tube], 1e-12)
            .iter()
            .map(|x| x.length())
            .fold(f64::INFINITY, f64::min);
        assert!((got - brute).abs() <= 1e-9, "{got} against {brute}");
    }

    #[test]
    fn the_nearest_point_of_each_curve_is_found() {
        let mut r = Rng(0x1ea5_7e0e_0000_0002);
        let mut judged = 0;
        for case in 0..300 {
            let pick = |r: &mut Rng, k: usize| match k {
                0 => Surface::Plane {
                    n: r.unit(),
                    h: r.f() * 0.6 - 0.3,
                },
                1 => Surface::Ball {
                    c: r.v(1.0),
                    r: 0.3 + r.f(),
                },
                _ => Surface::Tube {
                    a: r.v(0.5),
                    u: r.unit(),
                    r: 0.2 + r.f() * 0.5,
                },
            };
            let kinds = [(0, 2), (1, 2), (2, 2), (0, 1), (1, 1)][case % 5];
            let (a, b) = (pick(&mut r, kinds.0), pick(&mut r, kinds.1));
            let brute = (0..1000)
                .filter_map(|_| {
                    let x = alternate(&[&a, &b], r.v(2.0))?;
                    newton(&[&a, &b], x, 1e-12)
                })
                .map(|x| x.length())
                .fold(f64::INFINITY, f64::min);
            if !brute.is_finite() {
                continue;
            }
            judged += 1;
            let got = meet(&[&a, &b], 1e-12)
                .iter()
                .map(|x| x.length())
                .fold(f64::INFINITY, f64::min);
            assert!(
                (got - brute).abs() <= 1e-9,
                "case {case} {a:?} {b:?}: {got} against {brute}"
            );
        }
        assert!(judged > 150, "{judged}");
    }

    /// The least free translation out of the corner of two walls, a ball
    /// of radius 1 held 0.3 and 0.2 deep: the point where the two offset
    /// planes meet, not along either wall.
    #[test]
    fn a_ball_in_a_corner_goes_out_diagonally() {
        // walls x ≤ 0 and y ≤ 0; the ball at (0.7, 0.8): free where x ≥ 1
        // and y ≥ 1 (planes in translation space)
        let s = vec![
            Patch::whole(Surface::Plane {
                n: DVec3::X,
                h: 0.3,
            }),
            Patch::whole(Surface::Plane {
                n: DVec3::Y,
                h: 0.2,
            }),
        ];
        let got = least_move(&s, 10.0, 1.0, |v| v.x >= 0.3 - 1e-12 && v.y >= 0.2 - 1e-12);
        let Least::Found(v) = got else {
            panic!("{got:?}");
        };
        assert!(v.abs_diff_eq(DVec3::new(0.3, 0.2, 0.0), 1e-12), "{v}");
        // nothing nearer than a bound below the answer
        let got = least_move(&s, 0.3, 1.0, |v| v.x >= 0.3 && v.y >= 0.2);
        assert_eq!(got, Least::NoneNearer);
    }
}
