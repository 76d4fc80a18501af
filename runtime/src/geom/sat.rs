//! Penetration depth of two overlapping convex polyhedra by the separating
//! axis test, in f64: the shortest translation that separates them is
//! normal to a face of their Minkowski difference, and every such face is
//! a face of one shape or spanned by an edge of each (Gottschalk, Lin and
//! Manocha, "OBBTree", SIGGRAPH 1996; Ericson, "Real-Time Collision
//! Detection", 2004, §4.4 and §5.2.1). So the smallest overlap over the
//! face normals of both shapes and the cross products of their edge
//! directions is the exact depth, with its axis. Degenerate shapes
//! (points, segments, triangles) are polyhedra with fewer faces: a
//! triangle's face normal serves both of its sides.
//!
//! This is what a query shape reports when its core crosses a collider's
//! (the distance between cores is then zero and GJK has no direction); a
//! radius on either side adds to the depth.

use super::gjk::{Moved, OrientedBox, Point, Segment, Support, Triangle};
use glam::DVec3;

/// A convex polyhedron's separating-axis candidates: its face normals and
/// edge directions (any length, either sign, repeats allowed).
pub(crate) trait Polyhedral: Support {
    /// Calls `f` with every face normal.
    fn face_normals(&self, f: &mut dyn FnMut(DVec3));
    /// Calls `f` with every edge direction.
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3));
    /// Calls `f` with every edge's direction and the outward normals of
    /// its two faces, and answers `true` — if the shape is a solid that
    /// knows them (the Gauss map of its edges; flat and thinner shapes
    /// answer `false`).
    fn edge_faces(&self, _f: &mut dyn FnMut(DVec3, DVec3, DVec3)) -> bool {
        false
    }
}

/// Whether edges `(a, b)` of one solid and `(c, d)` of another (their
/// faces' outward normals) can span a face of the Minkowski difference
/// of the first minus the second: their arcs on the Gauss map cross
/// (Gregorius, "The Separating Axis Test between Convex Polyhedra", GDC
/// 2013). Borderline cases count as crossing: an extra axis never spoils
/// the minimum, a missing one would.
fn minkowski_face(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> bool {
    // the second solid enters the difference negated
    let (c, d) = (-c, -d);
    let (bxa, dxc) = (b.cross(a), d.cross(c));
    let (cba, dba) = (c.dot(bxa), d.dot(bxa));
    let (adc, bdc) = (a.dot(dxc), b.dot(dxc));
    const EPS: f64 = 1e-12;
    cba * dba <= EPS && adc * bdc <= EPS && cba * bdc >= -EPS
}

impl Polyhedral for Point {
    fn face_normals(&self, _: &mut dyn FnMut(DVec3)) {}
    fn edge_directions(&self, _: &mut dyn FnMut(DVec3)) {}
}

impl Polyhedral for Segment {
    fn face_normals(&self, _: &mut dyn FnMut(DVec3)) {}
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        f(self.1 - self.0);
    }
}

impl Polyhedral for Triangle {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        let v = &self.0;
        f((v[1] - v[0]).cross(v[2] - v[0]));
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        let v = &self.0;
        f(v[1] - v[0]);
        f(v[2] - v[1]);
        f(v[0] - v[2]);
    }
}

impl Polyhedral for OrientedBox {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.axes.iter().for_each(|&a| f(a));
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.axes.iter().for_each(|&a| f(a));
    }
    fn edge_faces(&self, f: &mut dyn FnMut(DVec3, DVec3, DVec3)) -> bool {
        if self.half.min_element() <= 0.0 {
            return false;
        }
        // the four edges along axis i lie between faces ±j and ±k
        for i in 0..3 {
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            for sj in [-1.0, 1.0] {
                for sk in [-1.0, 1.0] {
                    f(self.axes[i], self.axes[j] * sj, self.axes[k] * sk);
                }
            }
        }
        true
    }
}

impl<S: Polyhedral> Polyhedral for Moved<'_, S> {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.face_normals(f);
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.edge_directions(f);
    }
    fn edge_faces(&self, f: &mut dyn FnMut(DVec3, DVec3, DVec3)) -> bool {
        self.0.edge_faces(f)
    }
}

/// Penetration of `a` into `b`: the smallest distance `a` must move to be
/// separated from `b` (0 when they only touch), and the unit direction of
/// that move (from `b` towards `a`). For shapes that do not overlap the
/// depth is 0 or less (minus a lower bound of the gap along the best axis).
pub(crate) fn penetration(a: &impl Polyhedral, b: &impl Polyhedral) -> (f64, DVec3) {
    let mut best = (f64::INFINITY, DVec3::Y);
    let mut try_axis = |u: DVec3| {
        let len = u.length();
        if len.is_nan() || len <= 1e-12 || len.is_infinite() {
            return;
        }
        let u = u / len;
        // a moved along +u: max over b minus min over a; along −u: the mirror
        let lo_a = a.support(-u).dot(u);
        let hi_a = a.support(u).dot(u);
        let lo_b = b.support(-u).dot(u);
        let hi_b = b.support(u).dot(u);
        let plus = hi_b - lo_a;
        let minus = hi_a - lo_b;
        if plus < best.0 {
            best = (plus, u);
        }
        if minus < best.0 {
            best = (minus, -u);
        }
    };
    let (mut fa, mut fb) = (0usize, 0usize);
    a.face_normals(&mut |n| {
        fa += 1;
        try_axis(n)
    });
    b.face_normals(&mut |n| {
        fb += 1;
        try_axis(n)
    });
    // solids that know their edges' faces: only the edge pairs whose
    // Gauss-map arcs cross span faces of the difference
    let mut ea = Vec::new();
    let mut eb = Vec::new();
    let a_solid = a.edge_faces(&mut |e, n1, n2| ea.push((e, n1, n2)));
    let b_solid = b.edge_faces(&mut |e, n1, n2| eb.push((e, n1, n2)));
    if a_solid && b_solid {
        for &(e1, a1, b1) in &ea {
            for &(e2, c2, d2) in &eb {
                if minkowski_face(a1, b1, c2, d2) {
                    try_axis(e1.cross(e2));
                }
            }
        }
        return best;
    }
    // a point or segment against a solid: the segment's Gauss map is the
    // great circle square to it, which a solid edge's arc must cross
    let crosses = |e: DVec3, c: DVec3, d: DVec3| c.dot(e) * d.dot(e) <= 1e-12 * e.length_squared();
    if b_solid && fa == 0 {
        a.edge_directions(&mut |e| {
            for &(e2, c, d) in &eb {
                if crosses(e, c, d) {
                    try_axis(e.cross(e2));
                }
            }
        });
        return best;
    }
    if a_solid && fb == 0 {
        b.edge_directions(&mut |e| {
            for &(e1, c, d) in &ea {
                if crosses(e, c, d) {
                    try_axis(e1.cross(e));
                }
            }
        });
        return best;
    }
    // edge pairs; the axes too, so shapes without faces (points,
    // segments) always have candidates (any direction is a valid upper
    // bound, so extra axes never spoil the minimum)
    for u in [DVec3::X, DVec3::Y, DVec3::Z] {
        try_axis(u);
    }
    a.edge_directions(&mut |ea| {
        b.edge_directions(&mut |eb| {
            let c = ea.cross(eb);
            // parallel edges: no face of the difference from this pair
            if c.length_squared() > 1e-24 * ea.length_squared() * eb.length_squared() {
                try_axis(c);
            }
        });
        // a segment against a point or a flat shape in its plane: the
        // directions perpendicular to the edge within that plane
        b.face_normals(&mut |n| try_axis(ea.cross(n)));
    });
    b.edge_directions(&mut |eb| a.face_normals(&mut |n| try_axis(eb.cross(n))));
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::gjk::distance;

    struct Rng(u64);
    impl Rng {
        fn f(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn unit(&mut self) -> DVec3 {
            loop {
                let v = DVec3::new(self.f(), self.f(), self.f()) * 2.0 - 1.0;
                let l = v.length();
                if l > 0.1 && l <= 1.0 {
                    return v / l;
                }
            }
        }
        fn rotation(&mut self) -> [DVec3; 3] {
            let q = glam::DQuat::from_axis_angle(self.unit(), self.f() * std::f64::consts::TAU);
            [q * DVec3::X, q * DVec3::Y, q * DVec3::Z]
        }
    }

    /// Brute force over many directions: every direction gives a valid
    /// separating move, so the true depth is at most their minimum.
    fn sampled(a: &impl Support, b: &impl Support, rng: &mut Rng) -> f64 {
        (0..20_000)
            .map(|_| {
                let u = rng.unit();
                b.support(u).dot(u) - a.support(-u).dot(u)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// The answer is a real separating move (moved by the depth plus a
    /// hair the shapes are apart; by the depth minus a hair they still
    /// overlap along that axis) and no sampled direction beats it.
    fn check(a: &impl Polyhedral, b: &impl Polyhedral, rng: &mut Rng, what: &str) {
        let (depth, n) = penetration(a, b);
        assert!((n.length() - 1.0).abs() < 1e-9, "{what}");
        if depth <= 0.0 {
            return;
        }
        let apart = distance(&Moved(a, n * (depth + 1e-6)), b);
        assert!(
            apart.is_some_and(|s| s.distance > 0.0),
            "{what}: moved by {depth} along {n} still overlapping"
        );
        let best = sampled(a, b, rng);
        assert!(
            depth <= best + 1e-9,
            "{what}: depth {depth} but a direction needs only {best}"
        );
        // sampling is within a few mm of the true minimum at these sizes
        assert!(
            depth >= best - 0.05,
            "{what}: depth {depth} vs sampled {best}"
        );
    }

    #[test]
    fn boxes_segments_points_and_triangles_against_sampled_directions() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..300 {
            let b1 = OrientedBox {
                center: DVec3::ZERO,
                axes: rng.rotation(),
                half: DVec3::new(0.2 + rng.f(), 0.2 + rng.f(), 0.01 + rng.f()),
            };
            let b2 = OrientedBox {
                center: rng.unit() * rng.f(),
                axes: rng.rotation(),
                half: DVec3::new(0.2 + rng.f(), 0.05 + rng.f(), 0.3 + rng.f()),
            };
            check(&b1, &b2, &mut rng, &format!("box/box {i}"));
            let tri = Triangle([rng.unit(), rng.unit(), rng.unit()]);
            check(&b1, &tri, &mut rng, &format!("box/triangle {i}"));
            let c = rng.unit() * 0.3;
            let seg = Segment(c - rng.unit(), c + rng.unit());
            check(&seg, &b2, &mut rng, &format!("segment/box {i}"));
            check(&seg, &tri, &mut rng, &format!("segment/triangle {i}"));
            let p = Point(rng.unit() * 0.3 * rng.f());
            check(&p, &b2, &mut rng, &format!("point/box {i}"));
        }
    }

    /// A solid with its Gauss map hidden: every edge pair is tried.
    struct AllPairs<'a, T>(&'a T);
    impl<T: Support> Support for AllPairs<'_, T> {
        fn support(&self, d: DVec3) -> DVec3 {
            self.0.support(d)
        }
        fn any_point(&self) -> DVec3 {
            self.0.any_point()
        }
    }
    impl<T: Polyhedral> Polyhedral for AllPairs<'_, T> {
        fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
            self.0.face_normals(f)
        }
        fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
            self.0.edge_directions(f)
        }
    }

    #[test]
    fn gauss_map_pruning_finds_the_same_depth_as_every_edge_pair() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut overlapping = 0;
        for i in 0..2000 {
            let b1 = OrientedBox {
                center: DVec3::ZERO,
                axes: rng.rotation(),
                half: DVec3::new(0.1 + rng.f(), 0.1 + rng.f(), 0.01 + rng.f()),
            };
            let b2 = OrientedBox {
                center: rng.unit() * rng.f() * 1.5,
                axes: rng.rotation(),
                half: DVec3::new(0.1 + rng.f(), 0.05 + rng.f(), 0.2 + rng.f()),
            };
            let (d, n) = penetration(&b1, &b2);
            let (all, _) = penetration(&AllPairs(&b1), &AllPairs(&b2));
            // (apart, the value is only some bound below zero)
            let same =
                |x: f64, y: f64| (x <= 0.0 && y <= 0.0) || (x - y).abs() <= 1e-12 * (1.0 + y.abs());
            assert!(same(d, all), "case {i}: {d} vs {all}");
            let c = rng.unit() * 0.3;
            let seg = Segment(c - rng.unit(), c + rng.unit());
            let (ds, _) = penetration(&seg, &b2);
            let (all_s, _) = penetration(&AllPairs(&seg), &AllPairs(&b2));
            assert!(same(ds, all_s), "segment {i}: {ds} vs {all_s}");
            overlapping += usize::from(ds > 0.0);
            let (dp, _) = penetration(&b1, &seg);
            let (all_p, _) = penetration(&AllPairs(&b1), &AllPairs(&seg));
            assert!(same(dp, all_p), "segment {i}: {dp} vs {all_p}");
            if d > 0.0 {
                overlapping += 1;
                // the pruned axis separates
                let apart = distance(&Moved(&b1, n * (d + 1e-9)), &b2);
                assert!(apart.is_some_and(|s| s.distance > 0.0), "case {i}");
            }
        }
        assert!(overlapping > 500, "{overlapping}");
    }

    #[test]
    fn a_box_resting_into_a_floor_triangle_leaves_straight_up() {
        let floor = Triangle([
            DVec3::new(-10.0, 0.0, -10.0),
            DVec3::new(0.0, 0.0, 10.0),
            DVec3::new(10.0, 0.0, -10.0),
        ]);
        let b = OrientedBox {
            center: DVec3::new(0.0, 0.4, 0.0),
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
            half: DVec3::splat(0.5),
        };
        let (depth, n) = penetration(&b, &floor);
        assert!((depth - 0.1).abs() < 1e-12, "{depth}");
        assert!((n - DVec3::Y).length() < 1e-12, "{n}");
    }
}
