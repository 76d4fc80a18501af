//! The point an overlap reports: a point of the collider piece's surface
//! that lies in or on the query shape, as far along the contact normal as
//! such points reach.
//!
//! Where the cores are apart the closest points give it directly
//! ([`super::probe`]). Where they overlap, the witness of the depth — the
//! collider's point where the shape, moved out by the depth, last touches
//! it — lies up to the depth outside the shape as posed, so the point is
//! found here instead, from the vertices of the intersection of the two
//! convex bodies that lie on the collider's surface: the collider's edges
//! clipped to the shape, and the shape's edges clipped to the collider
//! (Cyrus and Beck, "Generalized two- and three-dimensional clipping",
//! 1978). Of those the ones farthest along the normal — the collider's
//! part deepest in the shape — are averaged, so a box resting on a floor
//! reports the middle of the patch it rests on.
//!
//! A rounded side (a sphere's or capsule's core) contributes its core
//! clipped to the other side, and its surface points around it.

use super::gjk::OrientedBox;
use super::sat::{Edge, Face, Polyhedral};
use glam::DVec3;

/// A convex piece as the clipper sees it.
enum Body {
    /// A polyhedron: its faces, and its edges (with a flat shape's
    /// in-plane outward normals, which bound it in its plane).
    Poly {
        faces: Vec<Face>,
        edges: Vec<Edge>,
        solid: bool,
    },
    /// A point or a segment (grown by a radius outside this module).
    Line(DVec3, DVec3),
}

impl Body {
    fn of(s: &impl Polyhedral) -> Option<Body> {
        if let Some(b) = s.as_box()
            && b.half.min_element() <= 0.0
        {
            return Body::flat_box(&b);
        }
        let (mut faces, mut edges) = (Vec::new(), Vec::new());
        if s.features(&mut faces, &mut edges) {
            let solid = faces.len() > 2;
            return Some(Body::Poly {
                faces,
                edges,
                solid,
            });
        }
        s.ends().map(|(a, b)| Body::Line(a, b))
    }
}

impl Body {
    /// A box with a zero extent (a query box may have one): a rectangle,
    /// a segment or a point.
    fn flat_box(b: &OrientedBox) -> Option<Body> {
        let c = b.center;
        let flat: Vec<usize> = (0..3).filter(|&k| b.half[k] <= 0.0).collect();
        let wide: Vec<usize> = (0..3).filter(|&k| b.half[k] > 0.0).collect();
        let axis = |k: usize| b.axes[k].try_normalize();
        match wide.as_slice() {
            [] => Some(Body::Line(c, c)),
            &[i] => {
                let e = b.axes[i] * b.half[i];
                Some(Body::Line(c - e, c + e))
            }
            &[i, j] => {
                let n = axis(flat[0])?;
                let (ai, aj) = (axis(i)?, axis(j)?);
                let (ei, ej) = (ai * b.half[i], aj * b.half[j]);
                let faces = vec![
                    Face { n, h: n.dot(c) },
                    Face {
                        n: -n,
                        h: -n.dot(c),
                    },
                ];
                let mut edges = Vec::new();
                for (along, across, a) in [(ei, ej, aj), (ej, ei, ai)] {
                    for s in [-1.0, 1.0] {
                        let mid = c + across * s;
                        edges.push(Edge {
                            p: mid - along,
                            q: mid + along,
                            n1: n,
                            n2: -n,
                            out: a * s,
                        });
                    }
                }
                Some(Body::Poly {
                    faces,
                    edges,
                    solid: false,
                })
            }
            _ => None,
        }
    }
}

/// The half-spaces `m · x ≤ k` bounding a polyhedron: its face planes
/// and, for a flat one, its rim's in-plane planes.
fn half_spaces(faces: &[Face], edges: &[Edge], solid: bool) -> Vec<(DVec3, f64)> {
    let mut hs: Vec<(DVec3, f64)> = faces.iter().map(|f| (f.n, f.h)).collect();
    if !solid {
        hs.extend(edges.iter().map(|e| (e.out, e.out.dot(e.p))));
    }
    hs
}

/// The part `[t0, t1]` of the segment `a + t (b − a)`, `t ∈ [0, 1]`, inside
/// the half-spaces grown by `tol` (Cyrus and Beck).
fn clip(a: DVec3, b: DVec3, hs: &[(DVec3, f64)], tol: f64) -> Option<(f64, f64)> {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for &(m, k) in hs {
        let room = k + tol * m.length() - m.dot(a);
        let rate = m.dot(d);
        if rate == 0.0 {
            if room < 0.0 {
                return None;
            }
        } else if rate > 0.0 {
            t1 = t1.min(room / rate);
        } else {
            t0 = t0.max(room / rate);
        }
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, t1))
}

/// Whether `x` lies within `tol` of a face of the solid `faces` (which it
/// is inside).
fn on_boundary(x: DVec3, faces: &[Face], tol: f64) -> bool {
    faces.iter().any(|f| f.n.dot(x) - f.h >= -tol)
}

/// Whether `x` lies in the half-spaces grown by `tol`.
fn within(x: DVec3, hs: &[(DVec3, f64)], tol: f64) -> bool {
    hs.iter().all(|&(m, k)| m.dot(x) <= k + tol * m.length())
}

/// The closest point of the segment `a`–`b` to `p`.
pub(crate) fn on_segment(a: DVec3, b: DVec3, p: DVec3) -> DVec3 {
    let e = b - a;
    let ee = e.length_squared();
    if ee == 0.0 {
        return a;
    }
    a + e * ((p - a).dot(e) / ee).clamp(0.0, 1.0)
}

/// The point of the second segment closest to the first (Ericson,
/// "Real-Time Collision Detection", 2004, §5.1.9).
fn segments_closest_on_second(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> DVec3 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    if a == 0.0 {
        return on_segment(p2, q2, p1);
    }
    if e == 0.0 {
        return p2;
    }
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = a * e - b * b;
    let s = if denom > 0.0 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p2 + d2 * ((b * s + f) / e).clamp(0.0, 1.0)
}

/// The surface points of the rounded piece (`a`–`b` grown by `r`) around
/// its core point `y`: out from the axis towards `n` and away from it,
/// and, at an end, out along the axis.
fn around(a: DVec3, b: DVec3, r: f64, y: DVec3, n: DVec3, out: &mut Vec<DVec3>) {
    let axis = b - a;
    let len = axis.length();
    let u = if len > 0.0 {
        let ax = axis / len;
        let across = n - ax * n.dot(ax);
        if (y - a).length() <= 1e-12 * len {
            out.push(y - ax * r);
        }
        if (y - b).length() <= 1e-12 * len {
            out.push(y + ax * r);
        }
        across.try_normalize()
    } else {
        Some(n)
    };
    if let Some(u) = u {
        out.push(y + u * r);
        out.push(y - u * r);
    }
}

/// A point of the surface of `cb` grown by `rc` in or on `qb` grown by
/// `rq` (to `tol`), from the vertices of their intersection, as far
/// along `n` as those reach (the farthest averaged where they tie, for a
/// polyhedral collider); `None` where none is found (a rounded side the
/// clipping does not reach, or a shape wholly inside).
fn deepest(qb: &Body, rq: f64, cb: &Body, rc: f64, n: DVec3, tol: f64) -> Option<DVec3> {
    let mut found: Vec<DVec3> = Vec::new();
    let mut polyhedral = false;
    match (qb, cb) {
        (
            Body::Poly {
                faces: qf,
                edges: qe,
                solid: qs,
            },
            Body::Poly {
                faces: cf,
                edges: ce,
                solid: cs,
            },
        ) => {
            polyhedral = true;
            let (qh, ch) = (half_spaces(qf, qe, *qs), half_spaces(cf, ce, *cs));
            // the collider's edges in the shape: on its surface throughout
            for e in ce {
                if let Some((t0, t1)) = clip(e.p, e.q, &qh, tol) {
                    found.push(e.p.lerp(e.q, t0));
                    found.push(e.p.lerp(e.q, t1));
                }
            }
            // the shape's edges in the collider, where they meet its surface
            for e in qe {
                if let Some((t0, t1)) = clip(e.p, e.q, &ch, tol) {
                    for t in [t0, t1] {
                        let x = e.p.lerp(e.q, t);
                        if !*cs || on_boundary(x, cf, tol) {
                            found.push(x);
                        }
                    }
                }
            }
        }
        (
            Body::Line(a, b),
            Body::Poly {
                faces: cf,
                edges: ce,
                solid: cs,
            },
        ) => {
            // the shape's core where it meets the collider's surface
            let ch = half_spaces(cf, ce, *cs);
            if let Some((t0, t1)) = clip(*a, *b, &ch, tol) {
                for t in [t0, t1] {
                    let x = a.lerp(*b, t);
                    if !*cs || on_boundary(x, cf, tol) {
                        found.push(x);
                    }
                }
            }
            if found.is_empty() && *cs {
                // the core wholly inside: the surface point nearest it,
                // the projection of an end onto the nearest face plane,
                // if the radius reaches it
                for end in [*a, *b] {
                    if let Some((f, gap)) = cf
                        .iter()
                        .map(|f| (f, f.h - f.n.dot(end)))
                        .min_by(|x, y| x.1.total_cmp(&y.1))
                        && gap <= rq + tol
                    {
                        found.push(end + f.n * gap);
                    }
                }
            }
        }
        (
            Body::Poly {
                faces: qf,
                edges: qe,
                solid: qs,
            },
            Body::Line(a, b),
        ) => {
            // the collider's core in the shape, and its surface around it
            let qh = half_spaces(qf, qe, *qs);
            let mut near = Vec::new();
            if let Some((t0, t1)) = clip(*a, *b, &qh, tol) {
                for t in [t0, t1] {
                    around(*a, *b, rc, a.lerp(*b, t), n, &mut near);
                }
            }
            found.extend(near.into_iter().filter(|&x| within(x, &qh, tol)));
        }
        (Body::Line(qa, qb), Body::Line(a, b)) => {
            let y = segments_closest_on_second(*qa, *qb, *a, *b);
            let mut near = Vec::new();
            around(*a, *b, rc, y, n, &mut near);
            found.extend(
                near.into_iter()
                    .filter(|&x| (x - on_segment(*qa, *qb, x)).length() <= rq + tol),
            );
        }
    }
    let best = found
        .iter()
        .map(|x| x.dot(n))
        .fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() {
        return None;
    }
    let first = *found.iter().find(|x| x.dot(n) == best)?;
    if !polyhedral {
        return Some(first);
    }
    // the farthest, averaged where they tie: a point of their face of the
    // intersection, which lies on the collider's surface where every tie
    // does on one face; else the first
    let ties: Vec<DVec3> = found
        .iter()
        .copied()
        .filter(|x| x.dot(n) >= best - tol)
        .collect();
    let mid = ties.iter().copied().sum::<DVec3>() / ties.len() as f64;
    let Body::Poly {
        faces: cf,
        edges: ce,
        solid: cs,
    } = cb
    else {
        return Some(first);
    };
    let Body::Poly {
        faces: qf,
        edges: qe,
        solid: qs,
    } = qb
    else {
        return Some(first);
    };
    let on_c = within(mid, &half_spaces(cf, ce, *cs), tol) && (!*cs || on_boundary(mid, cf, tol));
    let in_q = within(mid, &half_spaces(qf, qe, *qs), tol);
    Some(if on_c && in_q { mid } else { first })
}

impl Body {
    /// Whether `x` lies in the body grown by `r` (to `tol`).
    fn holds(&self, r: f64, x: DVec3, tol: f64) -> bool {
        match self {
            Body::Poly {
                faces,
                edges,
                solid,
            } => within(x, &half_spaces(faces, edges, *solid), tol + r),
            Body::Line(a, b) => (x - on_segment(*a, *b, x)).length() <= r + tol,
        }
    }

    /// Whether the body has no inside (every point of it is on its
    /// surface).
    fn flat(&self) -> bool {
        matches!(self, Body::Poly { solid: false, .. })
    }
}

/// A point of both cores, where they overlap and one is a point or a
/// segment: that core clipped to the other, or the segments' closest
/// points.
fn common_core_point(qb: &Body, cb: &Body, tol: f64) -> Option<DVec3> {
    let clipped = |a: DVec3, b: DVec3, faces: &[Face], edges: &[Edge], solid: bool| {
        clip(a, b, &half_spaces(faces, edges, solid), tol)
            .map(|(t0, t1)| a.lerp(b, 0.5 * (t0 + t1)))
    };
    match (qb, cb) {
        (
            Body::Line(a, b),
            Body::Poly {
                faces,
                edges,
                solid,
            },
        )
        | (
            Body::Poly {
                faces,
                edges,
                solid,
            },
            Body::Line(a, b),
        ) => clipped(*a, *b, faces, edges, *solid),
        (Body::Line(qa, qb), Body::Line(a, b)) => {
            Some(segments_closest_on_second(*qa, *qb, *a, *b))
        }
        _ => None,
    }
}

/// The point an overlap of `q` grown by `rq` with `c` grown by `rc`
/// reports, given its contact (`witness`, `normal`, `depth`): a point of
/// the collider's surface in or on the shape.
///
/// - Cores apart, the witness (the collider's point nearest the shape's
///   core) in the shape: the witness.
/// - Else the intersection's vertices on the collider's surface, deepest
///   along the normal ([`deepest`]).
/// - Else (a rounded side whose core the other does not reach) where the
///   segment from a point of both to a point of the shape outside the
///   collider crosses the collider's surface, found by bisection.
///
/// `None`: no such point was found — a shape wholly inside the
/// collider, which then keeps the witness.
pub(crate) fn settle(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    (witness, normal, depth): (DVec3, DVec3, f64),
    tol: f64,
) -> Option<DVec3> {
    let apart = depth < rq + rc - tol;
    if apart
        && let Some((a, b)) = q.ends()
        && (witness - on_segment(a, b, witness)).length() <= rq + tol
    {
        // the common case (spheres and capsules), told without building
        // the bodies
        return Some(witness);
    }
    let (qb, cb) = (Body::of(q)?, Body::of(c)?);
    if apart && qb.holds(rq, witness, tol) {
        return Some(witness);
    }
    if let Some(p) = deepest(&qb, rq, &cb, rc, normal, tol) {
        return Some(p);
    }
    // a point of both: the shape's core point nearest the collider's
    // core, moved towards it by up to the shape's radius
    let common = match super::gjk::search(q, c, f64::INFINITY, -1.0, Some(normal)) {
        super::gjk::Gap::Apart(s) => {
            let d = s.on_b - s.on_a;
            s.on_a + d * (rq.min(s.distance) / s.distance)
        }
        _ => common_core_point(&qb, &cb, tol)?,
    };
    if !cb.holds(rc, common, tol) || !qb.holds(rq, common, tol) {
        return None;
    }
    if cb.flat() {
        return Some(common);
    }
    // a point of the shape outside the collider: its farthest along the
    // normal or against it, or a corner
    let mut outside = None;
    let mut try_point = |x: DVec3| {
        if outside.is_none() && !cb.holds(rc, x, tol) {
            outside = Some(x);
        }
    };
    try_point(q.support(normal) + normal * rq);
    try_point(q.support(-normal) - normal * rq);
    match &qb {
        Body::Line(a, b) => {
            // each end's point farthest from the collider's core
            for e in [*a, *b] {
                let from = match &cb {
                    Body::Line(ca, cb) => on_segment(*ca, *cb, e),
                    Body::Poly { .. } => common,
                };
                try_point(e + (e - from).normalize_or_zero() * rq);
            }
        }
        Body::Poly { edges, .. } => edges.iter().for_each(|e| {
            try_point(e.p);
            try_point(e.q);
        }),
    }
    let far = outside?;
    // bisection on the segment from `common` (in both) to `far` (in the
    // shape, outside the collider): a point of the collider's surface
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if cb.holds(rc, common.lerp(far, mid), 0.0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(common.lerp(far, lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::gjk::{Point, Segment, Triangle};

    fn surface_point_in(
        q: &impl Polyhedral,
        rq: f64,
        c: &impl Polyhedral,
        rc: f64,
        n: DVec3,
        tol: f64,
    ) -> Option<DVec3> {
        deepest(&Body::of(q)?, rq, &Body::of(c)?, rc, n, tol)
    }

    fn unit_box(center: DVec3, half: DVec3) -> OrientedBox {
        OrientedBox {
            center,
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
            half,
        }
    }

    #[test]
    fn a_box_on_a_floor_triangle_reports_the_middle_of_its_footprint() {
        let floor = Triangle([
            DVec3::new(-10.0, 0.0, -10.0),
            DVec3::new(10.0, 0.0, -10.0),
            DVec3::new(0.0, 0.0, 10.0),
        ]);
        // a box 0.1 into the floor, seen along +y
        let b = unit_box(DVec3::new(1.0, 0.4, 2.0), DVec3::splat(0.5));
        let p = surface_point_in(&b, 0.0, &floor, 0.0, DVec3::Y, 1e-9).unwrap();
        assert!(p.abs_diff_eq(DVec3::new(1.0, 0.0, 2.0), 1e-9), "{p}");
    }

    #[test]
    fn a_box_corner_in_a_box_reports_a_point_of_the_collider_in_the_shape() {
        // the query's corner at (0.9, 0.9, 0.9) pokes into the collider's
        // corner region: the collider's surface inside the query
        let c = unit_box(DVec3::ZERO, DVec3::ONE);
        let q = unit_box(DVec3::splat(1.4), DVec3::splat(0.5));
        let n = DVec3::X;
        let p = surface_point_in(&q, 0.0, &c, 0.0, n, 1e-9).unwrap();
        let inside = |b: &OrientedBox, x: DVec3| ((x - b.center).abs() - b.half).max_element();
        assert!(inside(&q, p) <= 1e-9, "{p} outside the shape");
        assert!(
            inside(&c, p).abs() <= 1e-9,
            "{p} off the collider's surface"
        );
        assert!((p.x - 1.0).abs() <= 1e-9, "{p} not the farthest along x");
    }

    #[test]
    fn a_capsule_through_a_triangle_reports_where_its_axis_crosses() {
        let tri = Triangle([
            DVec3::new(-1.0, 0.0, -1.0),
            DVec3::new(1.0, 0.0, -1.0),
            DVec3::new(0.0, 0.0, 1.0),
        ]);
        let s = Segment(DVec3::new(0.1, -0.3, 0.0), DVec3::new(0.3, 0.5, 0.2));
        let p = surface_point_in(&s, 0.2, &tri, 0.0, DVec3::Y, 1e-9).unwrap();
        let t = 0.3 / 0.8;
        let want = s.0.lerp(s.1, t);
        assert!(p.abs_diff_eq(want, 1e-8), "{p} {want}");
    }

    #[test]
    fn a_sphere_inside_a_box_near_a_face_reports_the_face_point() {
        let c = unit_box(DVec3::ZERO, DVec3::ONE);
        let p = surface_point_in(
            &Point(DVec3::new(0.0, 0.9, 0.0)),
            0.3,
            &c,
            0.0,
            DVec3::Y,
            1e-9,
        );
        assert!(p.unwrap().abs_diff_eq(DVec3::new(0.0, 1.0, 0.0), 1e-9));
        // wholly inside: none
        let p = surface_point_in(&Point(DVec3::ZERO), 0.3, &c, 0.0, DVec3::Y, 1e-9);
        assert!(p.is_none());
    }

    #[test]
    fn a_box_holding_a_sphere_collider_reports_its_surface_towards_the_normal() {
        let q = unit_box(DVec3::ZERO, DVec3::ONE);
        let p = surface_point_in(
            &q,
            0.0,
            &Point(DVec3::new(0.0, 0.8, 0.0)),
            0.5,
            DVec3::Y,
            1e-9,
        )
        .unwrap();
        // up would leave the box; down stays in it
        assert!(p.abs_diff_eq(DVec3::new(0.0, 0.3, 0.0), 1e-9), "{p}");
    }
}
