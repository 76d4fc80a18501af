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

/// The least translation `v` with `|v| < bound` that the caller's `free`
/// accepts, among the critical points of `|v|` on one, two or three of
/// `surfaces` (see the module docs); or that none is nearer than `bound`;
/// or that more than [`MOST_SURFACES`] distinct surfaces (or
/// [`MOST_CURVED`] tubes and balls) come nearer than the answer (a hostile
/// archive, or a shape amid hundreds of tiny triangles), too many to
/// weigh.
///
/// `scale` is the size of the coordinates (tolerances are relative to
/// it). Surfaces are taken nearest first: no candidate on a surface is
/// nearer than the surface, so once a free candidate is no farther than
/// the next surface, it is the least, and the surfaces beyond are never
/// looked at. A candidate is asked of `free` only where it is a local
/// minimum of `|v|` over the free side of its surfaces to first order
/// (`v` is in the cone of their outward gradients), nearest first.
pub(crate) fn least_move(
    surfaces: &mut Vec<Surface>,
    bound: f64,
    scale: f64,
    mut free: impl FnMut(DVec3) -> bool,
) -> Least {
    surfaces.retain(|s| s.reach() < bound && s.reach().is_finite());
    // a tessellated curve offers more tubes and balls than a query
    // should weigh: tell so before solving for any (a tube is given by
    // the two triangles of its edge, a ball by a corner's triangles)
    if surfaces.iter().filter(|s| !s.is_plane()).count() > 4 * MOST_CURVED {
        return Least::TooMany;
    }
    surfaces.sort_by(|a, b| a.reach().total_cmp(&b.reach()));
    let tol = 1e-13 * scale;
    // one surface given twice (coplanar triangles, an edge two triangles
    // share) is one
    let mut s: Vec<Surface> = Vec::new();
    // pair[k][i], i < k: no point on both i and k is nearer
    let mut pair: Vec<Vec<f64>> = Vec::new();
    // candidates not yet asked, nearest first
    let mut heap: BinaryHeap<Reverse<Candidate>> = BinaryHeap::new();
    let push = |x: DVec3, on: &[&Surface], heap: &mut BinaryHeap<Reverse<Candidate>>| {
        let l = x.length();
        if l < bound && x.is_finite() && in_cone(x, on, tol) {
            heap.push(Reverse(Candidate(l, x)));
        }
    };
    let mut next = 0;
    loop {
        // the next distinct surface: nothing on it or later is nearer
        let mut added = None;
        while next < surfaces.len() {
            let c = surfaces[next];
            next += 1;
            if !s.iter().any(|k| same(k, &c, 1e-9 * scale)) {
                added = Some(c);
                break;
            }
        }
        let floor = added.map_or(bound, |c| c.reach().min(bound));
        // every candidate no farther than that is settled: ask them
        while let Some(&Reverse(Candidate(l, x))) = heap.peek() {
            if l > floor {
                break;
            }
            heap.pop();
            if free(x) {
                return Least::Found(x);
            }
        }
        let Some(c) = added else {
            return Least::NoneNearer;
        };
        if s.len() == MOST_SURFACES
            || (!c.is_plane() && s.iter().filter(|x| !x.is_plane()).count() == MOST_CURVED)
        {
            return Least::TooMany;
        }
        // the new surface alone, with each earlier one, and with each
        // earlier pair whose points can come nearer than the bound
        let k = s.len();
        s.push(c);
        if let Some(x) = c.project(DVec3::ZERO) {
            push(x, &[&c], &mut heap);
        }
        let mut row = Vec::with_capacity(k);
        for a in &s[..k] {
            let found = meet(&[a, &c], tol);
            for &x in &found {
                push(x, &[a, &c], &mut heap);
            }
            // two planes: their line's nearest point bounds anything on
            // both (parallel ones share nothing); curved ones, the least
            // critical point found on their curve (its minimum wherever
            // the starts reach it), or nothing where none was found
            row.push(
                found
                    .iter()
                    .map(|x| x.length())
                    .fold(f64::INFINITY, f64::min)
                    .max(a.reach().max(c.reach())),
            );
        }
        for i in 0..k {
            if row[i] >= bound {
                continue;
            }
            for j in i + 1..k {
                if row[j] >= bound || pair[j][i] >= bound {
                    continue;
                }
                for x in meet(&[&s[i], &s[j], &c], tol) {
                    push(x, &[&s[i], &s[j], &c], &mut heap);
                }
            }
        }
        pair.push(row);
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

/// A candidate translation and its length, ordered by the length.
#[derive(Clone, Copy, PartialEq)]
struct Candidate(f64, DVec3);

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

/// The most distinct surfaces [`least_move`] weighs: their triples cost
/// the cube.
pub(crate) const MOST_SURFACES: usize = 64;

/// The most tubes and balls among them: a triple with a curved surface
/// costs a Newton solve, a hundred times a triple of planes.
pub(crate) const MOST_CURVED: usize = 16;

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
/// surfaces that the solver reaches (up to two).
fn meet(s: &[&Surface], tol: f64) -> Vec<DVec3> {
    if s.iter().all(|x| x.is_plane()) {
        return planes_meet(s).into_iter().collect();
    }
    // from alternating projections started at the origin and at each
    // surface's own nearest point: a curve of two curved surfaces (an
    // ellipse) can hold two local minima
    let mut found: Vec<DVec3> = Vec::with_capacity(2);
    // (three surfaces meet in isolated points: one start finds the one
    // near the origin)
    let others = if s.len() == 2 { 2 } else { 0 };
    let starts = std::iter::once(DVec3::ZERO)
        .chain(s.iter().take(others).filter_map(|x| x.project(DVec3::ZERO)));
    for start in starts {
        let Some(x) = alternate(s, start).and_then(|x| newton(s, x, tol)) else {
            continue;
        };
        if !found.iter().any(|y| (*y - x).length() <= 1e3 * tol) {
            found.push(x);
        }
        if found.len() == 2 {
            break;
        }
    }
    found
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
    for _ in 0..25 {
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
    let big = (0..n)
        .flat_map(|r| (0..n).map(move |c| (r, c)))
        .fold(0.0f64, |b, (r, c)| b.max(m[r][c].abs()));
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
        let mut r = Rng(0x1ea5_7e0e_0000_0001);
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

    /// The least free translation out of the corner of two walls, a ball
    /// of radius 1 held 0.3 and 0.2 deep: the point where the two offset
    /// planes meet, not along either wall.
    #[test]
    fn a_ball_in_a_corner_goes_out_diagonally() {
        // walls x ≤ 0 and y ≤ 0; the ball at (0.7, 0.8): free where x ≥ 1
        // and y ≥ 1 (planes in translation space)
        let mut s = vec![
            Surface::Plane {
                n: DVec3::X,
                h: 0.3,
            },
            Surface::Plane {
                n: DVec3::Y,
                h: 0.2,
            },
        ];
        let got = least_move(&mut s, 10.0, 1.0, |v| {
            v.x >= 0.3 - 1e-12 && v.y >= 0.2 - 1e-12
        });
        let Least::Found(v) = got else {
            panic!("{got:?}");
        };
        assert!(v.abs_diff_eq(DVec3::new(0.3, 0.2, 0.0), 1e-12), "{v}");
        // nothing nearer than a bound below the answer
        let got = least_move(&mut s, 0.3, 1.0, |v| v.x >= 0.3 && v.y >= 0.2);
        assert_eq!(got, Least::NoneNearer);
    }
}
