//! A closed solid given by its world triangles — the brute-force oracle of
//! every test that asks a baked solid (a polytope, a box, a BSP tree's
//! collider) what it contains and where rays and spheres first meet it.
//!
//! Inside is decided by the winding number ([`crate::convex::winding_number`]:
//! the solid angles of the triangles seen from the point, Van Oosterom and
//! Strackee, "The solid angle of a plane triangle", IEEE Trans. Biomed.
//! Eng. 1983), which holds
//! for convex and concave solids alike; distances are to the nearest
//! triangle; a sweep's first touch is the earliest over the triangles
//! ([`crate::sweep_toi`]). Everything is f64, over every triangle.

use crate::{dist_point_triangle, sweep_toi};
use glam::DVec3;

/// A closed, outward-facing triangle surface.
pub struct Solid {
    tris: Vec<[DVec3; 3]>,
    /// Bounding sphere of each triangle, to skip far ones in sweeps.
    bounds: Vec<(DVec3, f64)>,
}

impl Solid {
    /// The solid bounded by `tris` (closed, facing outwards).
    pub fn new(tris: Vec<[DVec3; 3]>) -> Solid {
        let bounds = tris
            .iter()
            .map(|t| {
                let c = (t[0] + t[1] + t[2]) / 3.0;
                (c, t.iter().map(|v| v.distance(c)).fold(0.0, f64::max))
            })
            .collect();
        Solid { tris, bounds }
    }

    /// Object `i` of `level` as a solid: its collider's world triangles,
    /// as the exporter writes them.
    pub fn of(level: &kiln_runtime::Level, i: usize) -> Solid {
        Solid::new(crate::object_triangles(level, i))
    }

    /// The triangles.
    pub fn triangles(&self) -> &[[DVec3; 3]] {
        &self.tris
    }

    /// The winding number of the surface around `p`: 1 inside, 0 outside.
    pub fn winding(&self, p: DVec3) -> f64 {
        crate::convex::winding_number(&self.tris, p)
    }

    /// Whether `p` is inside (winding number over ½). Decided only away
    /// from the surface: callers ask where [`Solid::distance`] is clear of
    /// their tolerance.
    pub fn inside(&self, p: DVec3) -> bool {
        self.winding(p) > 0.5
    }

    /// Distance from `p` to the surface.
    pub fn distance(&self, p: DVec3) -> f64 {
        self.tris
            .iter()
            .map(|t| dist_point_triangle(p, *t))
            .fold(f64::INFINITY, f64::min)
    }

    /// Inside, deeper than `eps` below the surface.
    pub fn inside_by(&self, p: DVec3, eps: f64) -> bool {
        self.inside(p) && self.distance(p) > eps
    }

    /// Outside, farther than `eps` from the surface.
    pub fn outside_by(&self, p: DVec3, eps: f64) -> bool {
        !self.inside(p) && self.distance(p) > eps
    }

    /// Where the ray `o + t·d`, `t` in `[0, max_t]`, first meets the solid:
    /// 0 from inside, else the nearest triangle crossed.
    pub fn ray(&self, o: DVec3, d: DVec3, max_t: f64) -> Option<f64> {
        if self.inside(o) {
            return Some(0.0);
        }
        self.tris
            .iter()
            .filter_map(|t| {
                let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
                let p = d.cross(e2);
                let det = e1.dot(p);
                if det.abs() < 1e-300 {
                    return None;
                }
                let s = o - t[0];
                let u = s.dot(p) / det;
                let q = s.cross(e1);
                let v = d.dot(q) / det;
                let t = e2.dot(q) / det;
                (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && (0.0..=max_t).contains(&t)).then_some(t)
            })
            .min_by(f64::total_cmp)
    }

    /// The first `t` in `[0, max_t]` at which a sphere of radius `r`
    /// moving along `c + t·d` touches the solid: 0 if its centre starts
    /// inside.
    pub fn sweep(&self, c: DVec3, d: DVec3, r: f64, max_t: f64) -> Option<f64> {
        if self.inside(c) {
            return Some(0.0);
        }
        let len = d.length() * max_t;
        let dir = d.normalize();
        self.tris
            .iter()
            .zip(&self.bounds)
            .filter(|(_, (bc, br))| {
                let s = (*bc - c).dot(dir).clamp(0.0, len);
                (c + dir * s).distance(*bc) <= r + br + 1e-9
            })
            .filter_map(|(t, _)| sweep_toi(c, d, r, max_t, *t))
            .min_by(f64::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit cube's twelve outward triangles.
    fn cube() -> Solid {
        Solid::new(crate::decomposition::cells_surface(&[[0, 0, 0]]))
    }

    #[test]
    fn the_cube_answers_as_a_cube() {
        let c = cube();
        assert!((c.winding(DVec3::splat(0.5)) - 1.0).abs() < 1e-12);
        assert!(c.winding(DVec3::splat(2.0)).abs() < 1e-12);
        assert!(c.inside_by(DVec3::splat(0.5), 0.4) && !c.inside_by(DVec3::splat(0.5), 0.6));
        assert!(c.outside_by(DVec3::new(0.5, 0.5, 1.5), 0.4));
        assert!((c.distance(DVec3::new(0.5, 0.5, 1.5)) - 0.5).abs() < 1e-12);
        let t = c
            .ray(DVec3::new(0.5, 0.5, 3.0), DVec3::NEG_Z, 10.0)
            .unwrap();
        assert!((t - 2.0).abs() < 1e-12);
        assert_eq!(c.ray(DVec3::new(0.5, 0.5, 3.0), DVec3::Z, 10.0), None);
        let s = c
            .sweep(DVec3::new(0.5, 0.5, 3.0), DVec3::NEG_Z, 0.5, 10.0)
            .unwrap();
        assert!((s - 1.5).abs() < 1e-9, "{s}");
        assert_eq!(c.sweep(DVec3::splat(0.5), DVec3::X, 0.1, 1.0), Some(0.0));
    }
}
