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
}

impl<S: Polyhedral> Polyhedral for Moved<'_, S> {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.face_normals(f);
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.edge_directions(f);
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
    a.face_normals(&mut |n| try_axis(n));
    b.face_normals(&mut |n| try_axis(n));
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
