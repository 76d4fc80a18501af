//! A brute-force oracle for convex query shapes, in f64 and independent of
//! the runtime's GJK and separating-axis code.
//!
//! Every shape is a *core* (a point, a segment, a triangle or a convex
//! polytope given by its boundary triangles and planes) grown by a radius.
//! The distance between two cores is the smallest distance between their
//! boundary primitives — closed forms for point/segment/triangle pairs
//! (Ericson, "Real-Time Collision Detection", 2004, §5.1) — or zero when one
//! holds a vertex of the other or a segment crosses a triangle. The
//! penetration depth of overlapping cores is the least overlap over every
//! candidate separating axis (face normals, and cross products of every
//! pair of edges), and a query hull's boundary comes from a brute-force
//! hull of its points: neither uses the runtime's hull. Times of impact come from the distance along the
//! motion, which is convex in time: a ternary search for the closest
//! approach, then bisection before it.

use glam::DVec3;

/// Distance between segments `p1q1` and `p2q2` (either may be a point).
pub fn dist_segment_segment(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> f64 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let point_seg = |p: DVec3, a: DVec3, b: DVec3| {
        let ab = b - a;
        let l = ab.length_squared();
        let s = if l > 0.0 {
            ((p - a).dot(ab) / l).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (a + ab * s - p).length()
    };
    // the endpoints against the other segment: exact whenever the closest
    // pair has an endpoint, and a safe bound for near-parallel segments
    let ends = point_seg(p1, p2, q2)
        .min(point_seg(q1, p2, q2))
        .min(point_seg(p2, p1, q1))
        .min(point_seg(q2, p1, q1));
    if a == 0.0 || e == 0.0 {
        return ends;
    }
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = a * e - b * b;
    if denom <= 0.0 {
        return ends;
    }
    let s = ((b * f - c * e) / denom).clamp(0.0, 1.0);
    let t = ((b * s + f) / e).clamp(0.0, 1.0);
    let s = ((b * t - c) / a).clamp(0.0, 1.0);
    ((p1 + d1 * s) - (p2 + d2 * t)).length().min(ends)
}

/// Whether segment `ab` passes through triangle `t` (not lying in its
/// plane: that case is left to the edge distances).
pub fn segment_crosses_triangle(a: DVec3, b: DVec3, t: [DVec3; 3]) -> bool {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    let (da, db) = (n.dot(a - t[0]), n.dot(b - t[0]));
    if da * db > 0.0 || da == db {
        return false;
    }
    let p = a + (b - a) * (da / (da - db));
    (0..3).all(|k| (t[(k + 1) % 3] - t[k]).cross(p - t[k]).dot(n) >= 0.0)
}

/// Distance between segment `ab` and triangle `t`.
pub fn dist_segment_triangle(a: DVec3, b: DVec3, t: [DVec3; 3]) -> f64 {
    if segment_crosses_triangle(a, b, t) {
        return 0.0;
    }
    let mut d = crate::dist_point_triangle(a, t).min(crate::dist_point_triangle(b, t));
    for k in 0..3 {
        d = d.min(dist_segment_segment(a, b, t[k], t[(k + 1) % 3]));
    }
    d
}

/// Distance between two triangles: zero when an edge of either passes
/// through the other; otherwise the nearest pair is a corner of one and
/// the other triangle, or an edge of each (each such pair measured once).
pub fn dist_triangle_triangle(t: [DVec3; 3], u: [DVec3; 3]) -> f64 {
    let edge = |v: &[DVec3; 3], k: usize| (v[k], v[(k + 1) % 3]);
    for k in 0..3 {
        let ((a, b), (c, d)) = (edge(&t, k), edge(&u, k));
        if segment_crosses_triangle(a, b, u) || segment_crosses_triangle(c, d, t) {
            return 0.0;
        }
    }
    let mut d = f64::INFINITY;
    for k in 0..3 {
        d = d
            .min(crate::dist_point_triangle(t[k], u))
            .min(crate::dist_point_triangle(u[k], t));
        let (a, b) = edge(&t, k);
        for j in 0..3 {
            let (c, e) = edge(&u, j);
            d = d.min(dist_segment_segment(a, b, c, e));
        }
    }
    d
}

/// A convex polytope: its vertices, boundary triangles and face planes
/// (`n · x ≤ d` inside, `n` unit).
#[derive(Clone, Debug)]
pub struct Polytope {
    /// Corner points.
    pub vertices: Vec<DVec3>,
    /// Boundary triangles.
    pub triangles: Vec<[DVec3; 3]>,
    /// Face planes.
    pub planes: Vec<(DVec3, f64)>,
}

impl Polytope {
    /// The polytope bounded by outward-facing triangles (degenerate ones
    /// give no plane).
    pub fn from_triangles(triangles: Vec<[DVec3; 3]>) -> Polytope {
        let planes = triangles
            .iter()
            .filter_map(|t| {
                let n = (t[1] - t[0]).cross(t[2] - t[0]).try_normalize()?;
                Some((n, n.dot(t[0])))
            })
            .collect();
        let mut vertices: Vec<DVec3> = triangles.iter().flatten().copied().collect();
        vertices.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).expect("finite"));
        vertices.dedup();
        Polytope {
            vertices,
            triangles,
            planes,
        }
    }

    /// The convex hull of `points` (`None` if flat).
    pub fn hull(points: &[DVec3]) -> Option<Polytope> {
        hull_triangles(points).map(Polytope::from_triangles)
    }

    /// A box: centre, unit axes, half extents (each may be 0: a flat box is
    /// a rectangle, given by its two faces).
    pub fn cuboid(centre: DVec3, axes: [DVec3; 3], half: DVec3) -> Polytope {
        let corner = |i: usize, j: usize, k: usize| {
            centre
                + axes[0] * half.x * [-1.0, 1.0][i]
                + axes[1] * half.y * [-1.0, 1.0][j]
                + axes[2] * half.z * [-1.0, 1.0][k]
        };
        let c = [
            corner(0, 0, 0),
            corner(1, 0, 0),
            corner(1, 1, 0),
            corner(0, 1, 0),
            corner(0, 0, 1),
            corner(1, 0, 1),
            corner(1, 1, 1),
            corner(0, 1, 1),
        ];
        let quads = [
            [0, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [2, 3, 7, 6],
            [1, 2, 6, 5],
            [0, 4, 7, 3],
        ];
        let mut tris = Vec::new();
        for q in quads {
            tris.push([c[q[0]], c[q[1]], c[q[2]]]);
            tris.push([c[q[0]], c[q[2]], c[q[3]]]);
        }
        let mut p = Polytope::from_triangles(tris);
        // planes straight from the axes (a flat box's triangles still
        // have normals, but no thickness to tell inside from outside)
        p.planes = (0..3)
            .flat_map(|k| {
                let (a, h) = (axes[k], half[k]);
                [(a, a.dot(centre) + h), (-a, -a.dot(centre) + h)]
            })
            .collect();
        p
    }

    fn contains(&self, p: DVec3) -> bool {
        self.planes.iter().all(|(n, d)| n.dot(p) <= *d)
    }
}

/// The boundary of the convex hull of `points` as outward triangles
/// (`None` if flat), by brute force: every triple of points whose plane
/// has every point on one side is a face (a face of more than three
/// points gives several overlapping triangles, which cover it). O(n⁴),
/// for the few points of a query hull; independent of the runtime's
/// hull.
pub fn hull_triangles(points: &[DVec3]) -> Option<Vec<[DVec3; 3]>> {
    let mut p: Vec<DVec3> = points.to_vec();
    p.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).expect("finite"));
    p.dedup();
    let size = p
        .iter()
        .map(|x| x.abs().max_element())
        .fold(1.0f64, f64::max);
    let eps = 1e-12 * size;
    let mut tris = Vec::new();
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            for k in j + 1..p.len() {
                let Some(n) = (p[j] - p[i]).cross(p[k] - p[i]).try_normalize() else {
                    continue;
                };
                let h = n.dot(p[i]);
                let (above, below) = p.iter().fold((false, false), |(a, b), x| {
                    let d = n.dot(*x) - h;
                    (a || d > eps, b || d < -eps)
                });
                match (above, below) {
                    (true, true) | (false, false) => {}
                    // every point below: n is outward
                    (false, true) => tris.push([p[i], p[j], p[k]]),
                    (true, false) => tris.push([p[i], p[k], p[j]]),
                }
            }
        }
    }
    (!tris.is_empty()).then_some(tris)
}

/// The core of a shape.
#[derive(Clone, Debug)]
pub enum Core {
    /// A point (a sphere's centre).
    Point(DVec3),
    /// A segment (a capsule's axis).
    Segment(DVec3, DVec3),
    /// A triangle of a mesh.
    Triangle([DVec3; 3]),
    /// A solid convex polytope.
    Solid(Polytope),
}

/// A runtime query shape under its pose as the oracle sees it: its core
/// in f64 world space and its radius (a hull's core is the hull of its
/// placed vertices, by this module's own hull).
pub fn query_core(shape: &kiln_runtime::QueryShape, pose: &kiln_runtime::Pose) -> (Core, f64) {
    use kiln_runtime::QueryShape as Q;
    let rot = pose.rotation.as_dquat().normalize();
    let t = pose.translation.as_dvec3();
    match shape {
        Q::Sphere { radius } => (Core::Point(t), f64::from(*radius)),
        Q::Capsule {
            half_height,
            radius,
        } => {
            let h = rot * DVec3::new(0.0, f64::from(*half_height), 0.0);
            (Core::Segment(t - h, t + h), f64::from(*radius))
        }
        Q::Cuboid { half } => (
            Core::Solid(Polytope::cuboid(
                t,
                [rot * DVec3::X, rot * DVec3::Y, rot * DVec3::Z],
                half.as_dvec3(),
            )),
            0.0,
        ),
        Q::Hull(h) => {
            let pts: Vec<DVec3> = h.vertices().map(|p| rot * p.as_dvec3() + t).collect();
            (
                Core::Solid(Polytope::hull(&pts).expect("a solid hull")),
                0.0,
            )
        }
    }
}

enum Prim {
    P(DVec3),
    S(DVec3, DVec3),
    T([DVec3; 3]),
}

impl Prim {
    /// Its axis-aligned box.
    fn bounds(&self) -> (DVec3, DVec3) {
        match self {
            Prim::P(p) => (*p, *p),
            Prim::S(a, b) => (a.min(*b), a.max(*b)),
            Prim::T([a, b, c]) => (a.min(*b).min(*c), a.max(*b).max(*c)),
        }
    }
}

fn prim_dist(a: &Prim, b: &Prim) -> f64 {
    use Prim::*;
    match (a, b) {
        (P(p), P(q)) => (*p - *q).length(),
        (P(p), S(a, b)) | (S(a, b), P(p)) => dist_segment_segment(*p, *p, *a, *b),
        (P(p), T(t)) | (T(t), P(p)) => crate::dist_point_triangle(*p, *t),
        (S(a, b), S(c, d)) => dist_segment_segment(*a, *b, *c, *d),
        (S(a, b), T(t)) | (T(t), S(a, b)) => dist_segment_triangle(*a, *b, *t),
        (T(t), T(u)) => dist_triangle_triangle(*t, *u),
    }
}

impl Core {
    /// Face normals and edge directions (each edge once), the candidates
    /// of [`penetration`].
    fn axes(&self) -> (Vec<DVec3>, Vec<DVec3>) {
        let edges_of = |tris: &[[DVec3; 3]]| {
            let mut e: Vec<[[u64; 3]; 2]> = Vec::new();
            let key = |v: DVec3| v.to_array().map(f64::to_bits);
            for t in tris {
                for k in 0..3 {
                    let (p, q) = (t[k], t[(k + 1) % 3]);
                    let (p, q) = if p.to_array() < q.to_array() {
                        (p, q)
                    } else {
                        (q, p)
                    };
                    e.push([key(p), key(q)]);
                }
            }
            e.sort_unstable();
            e.dedup();
            e.iter()
                .map(|[p, q]| {
                    let v = |k: &[u64; 3]| DVec3::from_array(k.map(f64::from_bits));
                    v(q) - v(p)
                })
                .collect::<Vec<_>>()
        };
        match self {
            Core::Point(_) => (Vec::new(), Vec::new()),
            Core::Segment(a, b) => (Vec::new(), vec![*b - *a]),
            Core::Triangle(t) => (vec![(t[1] - t[0]).cross(t[2] - t[0])], edges_of(&[*t])),
            Core::Solid(p) => (
                p.planes.iter().map(|(n, _)| *n).collect(),
                edges_of(&p.triangles),
            ),
        }
    }

    /// Its corner points.
    pub fn vertices(&self) -> Vec<DVec3> {
        match self {
            Core::Point(p) => vec![*p],
            Core::Segment(a, b) => vec![*a, *b],
            Core::Triangle(t) => t.to_vec(),
            Core::Solid(p) => p.vertices.clone(),
        }
    }

    fn prims(&self) -> Vec<Prim> {
        match self {
            Core::Point(p) => vec![Prim::P(*p)],
            Core::Segment(a, b) => vec![Prim::S(*a, *b)],
            Core::Triangle(t) => vec![Prim::T(*t)],
            Core::Solid(p) => p.triangles.iter().map(|t| Prim::T(*t)).collect(),
        }
    }

    /// The core moved by `v`.
    pub fn moved(&self, v: DVec3) -> Core {
        match self {
            Core::Point(p) => Core::Point(*p + v),
            Core::Segment(a, b) => Core::Segment(*a + v, *b + v),
            Core::Triangle(t) => Core::Triangle(t.map(|p| p + v)),
            Core::Solid(p) => Core::Solid(Polytope {
                vertices: p.vertices.iter().map(|x| *x + v).collect(),
                triangles: p.triangles.iter().map(|t| t.map(|x| x + v)).collect(),
                planes: p.planes.iter().map(|(n, d)| (*n, d + n.dot(v))).collect(),
            }),
        }
    }

    /// Axis-aligned bounds.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.vertices().iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        )
    }
}

/// Distance between two cores (0 when they meet).
pub fn distance(a: &Core, b: &Core) -> f64 {
    for (s, o) in [(a, b), (b, a)] {
        if let Core::Solid(p) = s
            && o.vertices().iter().any(|v| p.contains(*v))
        {
            return 0.0;
        }
    }
    let (pa, pb) = (a.prims(), b.prims());
    let (ba, bb): (Vec<_>, Vec<_>) = (
        pa.iter().map(Prim::bounds).collect(),
        pb.iter().map(Prim::bounds).collect(),
    );
    let mut d = f64::INFINITY;
    for (x, bx) in pa.iter().zip(&ba) {
        for (y, by) in pb.iter().zip(&bb) {
            // the distance between their boxes bounds theirs from below
            // (to a few ulps, which the factor covers): a pair whose boxes
            // are farther apart than the nearest pair so far cannot be
            // nearer
            if box_distance(bx, by) * (1.0 - 1e-9) > d {
                continue;
            }
            d = d.min(prim_dist(x, y));
            if d == 0.0 {
                return 0.0;
            }
        }
    }
    d
}

/// The distance between two axis-aligned boxes `(lo, hi)`.
fn box_distance(a: &(DVec3, DVec3), b: &(DVec3, DVec3)) -> f64 {
    (b.0 - a.1).max(a.0 - b.1).max(DVec3::ZERO).length()
}

/// Penetration of core `a` into core `b`: the shortest move of `a` that
/// separates them, and its unit direction (from `b` towards `a`); depth 0
/// and no direction when no axis has room (a flat Minkowski difference).
///
/// By separating axes over every candidate: the face normals of both and
/// the cross products of every edge of one with every edge of the other,
/// which include every face normal of the Minkowski difference, whose
/// nearest face is the way out; extra axes (a face's diagonals) only ask
/// more. Independent of the runtime's hull and separating-axis code.
pub fn penetration(a: &Core, b: &Core) -> (f64, Option<DVec3>) {
    let (na, ea) = a.axes();
    let (nb, eb) = b.axes();
    let (va, vb) = (a.vertices(), b.vertices());
    let mut best = (f64::INFINITY, None);
    let mut test = |u: DVec3| {
        let Some(u) = u.try_normalize() else {
            return;
        };
        for s in [u, -u] {
            // moving a by `d · s` clears b
            let top = vb
                .iter()
                .map(|y| y.dot(s))
                .fold(f64::NEG_INFINITY, f64::max);
            let low = va.iter().map(|x| x.dot(s)).fold(f64::INFINITY, f64::min);
            let d = top - low;
            if d < best.0 {
                best = (d, Some(s));
            }
        }
    };
    na.iter().chain(&nb).for_each(|&n| test(n));
    for x in &ea {
        for y in &eb {
            test(x.cross(*y));
        }
    }
    match best {
        (d, Some(s)) if d.is_finite() => (d.max(0.0), Some(s)),
        _ => (0.0, None),
    }
}

/// Generalised winding number of closed triangles around `p` (solid
/// angles, Van Oosterom and Strackee 1983): about 1 inside, 0 outside.
pub fn winding_number(tris: &[[DVec3; 3]], p: DVec3) -> f64 {
    let w: f64 = tris
        .iter()
        .map(|t| {
            let (a, b, c) = (t[0] - p, t[1] - p, t[2] - p);
            let (la, lb, lc) = (a.length(), b.length(), c.length());
            let num = a.dot(b.cross(c));
            let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
            2.0 * num.atan2(den)
        })
        .sum();
    w / (4.0 * std::f64::consts::PI)
}

/// Distance from `p` to the boundary of core `c` (for a solid, to its
/// surface even from inside).
pub fn surface_distance(p: DVec3, c: &Core) -> f64 {
    match c {
        Core::Solid(poly) => poly
            .triangles
            .iter()
            .map(|t| crate::dist_point_triangle(p, *t))
            .fold(f64::INFINITY, f64::min),
        _ => distance(&Core::Point(p), c),
    }
}

/// First `t` in `[0, max_t]` at which core `q` moving by `motion · t` comes
/// within `r` of core `c` (`gap(t) = distance − r`), or `None`.
pub fn time_of_impact(q: &Core, motion: DVec3, max_t: f64, c: &Core, r: f64) -> Option<f64> {
    // moving by `motion · t` changes the distance by at most |motion| a unit of t
    crate::search::first_root(
        |t| distance(&q.moved(motion * t), c) - r,
        max_t,
        motion.length(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms_on_known_cases() {
        let x = DVec3::X;
        let y = DVec3::Y;
        let z = DVec3::Z;
        // skew segments one apart
        assert!((dist_segment_segment(-x, x, z - y, z + y) - 1.0).abs() < 1e-15);
        // parallel, overlapping in projection
        assert!((dist_segment_segment(-x, x, y, y + x * 3.0) - 1.0).abs() < 1e-15);
        let t = [DVec3::ZERO, x * 2.0, y * 2.0];
        assert!(segment_crosses_triangle(
            DVec3::new(0.5, 0.5, -1.0),
            DVec3::new(0.5, 0.5, 1.0),
            t
        ));
        assert!(!segment_crosses_triangle(
            DVec3::new(3.0, 3.0, -1.0),
            DVec3::new(3.0, 3.0, 1.0),
            t
        ));
        assert!((dist_triangle_triangle(t, t.map(|p| p + z * 0.5 + x * 0.1)) - 0.5).abs() < 1e-15);
        let cube = Polytope::cuboid(DVec3::ZERO, [x, y, z], DVec3::ONE);
        let probe = Core::Point(DVec3::new(0.2, 0.9, 0.0));
        assert_eq!(distance(&probe, &Core::Solid(cube.clone())), 0.0);
        let (d, n) = penetration(&probe, &Core::Solid(cube.clone()));
        assert!((d - 0.1).abs() < 1e-12 && (n.unwrap() - y).length() < 1e-12);
        let seg = Core::Segment(DVec3::new(3.0, 0.0, 0.0), DVec3::new(3.0, 5.0, 0.0));
        let t = time_of_impact(&seg, -x, 10.0, &Core::Solid(cube), 0.5).unwrap();
        assert!((t - 1.5).abs() < 1e-9, "{t}");
    }

    /// The triangle distance that measures each corner and edge pair once,
    /// and the distance that skips pairs by their boxes, against the plain
    /// forms (every edge of each triangle against the other; every pair),
    /// on triangles and boxes that cross, touch and stand apart.
    #[test]
    fn pair_skipping_distances_match_the_plain_forms() {
        let mut rng = crate::Rng::new(5);
        let mut p = |s: f32| (rng.unit32() * rng.range(0.0, s)).as_dvec3();
        let (mut zero, mut apart) = (0, 0);
        for i in 0..3000 {
            let spread = [0.3, 1.0, 3.0][i % 3];
            let t = [p(1.0), p(1.0), p(1.0)];
            let o = p(spread);
            let u = [o + p(1.0), o + p(1.0), o + p(1.0)];
            let mut plain = f64::INFINITY;
            for k in 0..3 {
                plain = plain
                    .min(dist_segment_triangle(t[k], t[(k + 1) % 3], u))
                    .min(dist_segment_triangle(u[k], u[(k + 1) % 3], t));
            }
            let d = dist_triangle_triangle(t, u);
            assert!(
                (d - plain).abs() <= 1e-12,
                "{t:?} {u:?}: {d} against {plain}"
            );
            if d == 0.0 {
                zero += 1;
            } else {
                apart += 1;
            }
            // a turned box against the same triangle, every pair measured
            let c = p(spread);
            let (ax, ay) = (p(1.0).normalize_or(DVec3::X), p(1.0));
            let az = ax.cross(ay).normalize_or(DVec3::Z);
            let ay = az.cross(ax);
            let cube = Polytope::cuboid(c, [ax, ay, az], DVec3::new(0.2, 0.5, 0.8));
            let every = cube
                .triangles
                .iter()
                .map(|f| dist_triangle_triangle(*f, u))
                .fold(f64::INFINITY, f64::min);
            let inside = u.iter().any(|v| cube.contains(*v));
            let got = distance(&Core::Solid(cube), &Core::Triangle(u));
            let want = if inside { 0.0 } else { every };
            assert_eq!(got, want, "box at {c} against {u:?}");
        }
        assert!(zero > 300 && apart > 300, "{zero} meeting, {apart} apart");
    }
}
