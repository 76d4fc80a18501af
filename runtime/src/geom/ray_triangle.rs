//! Watertight ray/triangle intersection (Woop, Benthin, Wald, "Watertight
//! Ray/Triangle Intersection", JCGT 2013).
//!
//! The ray is sheared so it runs along +z from the origin; each triangle
//! edge then gives a 2D edge function whose sign is computed the same way
//! for both triangles sharing the edge. A ray through a shared edge or
//! vertex therefore hits at least one of the triangles around it: closed
//! meshes have no cracks. Edge functions that round to exactly zero are
//! recomputed in f64, as the paper prescribes.

use glam::Vec3;

/// A ray prepared for the watertight test.
#[derive(Clone, Copy, Debug)]
pub struct WatertightRay {
    origin: Vec3,
    kx: usize,
    ky: usize,
    kz: usize,
    sx: f32,
    sy: f32,
    sz: f32,
}

/// A triangle corner in a [`WatertightRay`]'s frame (see
/// [`WatertightRay::shear`]).
#[derive(Clone, Copy, Debug)]
pub struct Sheared {
    x: f32,
    y: f32,
    z: f32,
}

impl WatertightRay {
    /// Prepares a ray; `dir` must be non-zero and finite.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        // plain arrays and selects, not a glam vector indexed by a runtime
        // axis (a branch per index): every ray pays this setup (on
        // sauer_pandora's any-hit rays, 250–253 → 239–246 ms a million)
        let d = dir.to_array();
        let a = dir.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let (x, y) = ((kz + 1) % 3, (kz + 2) % 3);
        // keep the winding of the sheared triangle
        let flip = d[kz] < 0.0;
        let (kx, ky) = if flip { (y, x) } else { (x, y) };
        WatertightRay {
            origin,
            kx,
            ky,
            kz,
            sx: d[kx] / d[kz],
            sy: d[ky] / d[kz],
            sz: 1.0 / d[kz],
        }
    }

    /// Returns the ray parameter `t` of the hit if the ray meets triangle
    /// `(v0, v1, v2)` (either side) with `0 <= t <= t_max` (the tests'
    /// form; walks shear a leaf's shared corners once and call
    /// [`WatertightRay::hit`]).
    #[cfg(test)]
    pub fn intersect(&self, v0: Vec3, v1: Vec3, v2: Vec3, t_max: f32) -> Option<f32> {
        Self::hit(self.shear(v0), self.shear(v1), self.shear(v2), t_max)
    }

    /// A corner in the ray's frame: moved to the origin, sheared so the
    /// ray runs along the third axis, that axis scaled by `1 / dir[kz]`.
    /// Corners shared by two triangles (a leaf's pair) are sheared once;
    /// [`Self::hit`] on them answers for the triangle.
    #[inline(always)]
    pub fn shear(&self, v: Vec3) -> Sheared {
        // plain arrays: indexing a glam vector by a runtime axis is a branch
        let a = (v - self.origin).to_array();
        let (kx, ky, kz) = (self.kx, self.ky, self.kz);
        Sheared {
            x: a[kx] - self.sx * a[kz],
            y: a[ky] - self.sy * a[kz],
            z: self.sz * a[kz],
        }
    }

    /// The ray parameter `t` of the hit if the ray meets the triangle of
    /// sheared corners `(a, b, c)` (either side) with `0 <= t <= t_max`.
    #[inline(always)]
    pub fn hit(a: Sheared, b: Sheared, c: Sheared, t_max: f32) -> Option<f32> {
        let (ax, ay, bx, by, cx, cy) = (a.x, a.y, b.x, b.y, c.x, c.y);
        let mut u = cx * by - cy * bx;
        let mut v = ax * cy - ay * cx;
        let mut w = bx * ay - by * ax;
        if u == 0.0 || v == 0.0 || w == 0.0 {
            let (ax, ay, bx, by, cx, cy) = (
                f64::from(ax),
                f64::from(ay),
                f64::from(bx),
                f64::from(by),
                f64::from(cx),
                f64::from(cy),
            );
            u = (cx * by - cy * bx) as f32;
            v = (ax * cy - ay * cx) as f32;
            w = (bx * ay - by * ax) as f32;
        }
        if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 {
            return None;
        }
        let t_scaled = u * a.z + v * b.z + w * c.z;
        // 0 <= t_scaled / det <= t_max, without dividing first
        if det > 0.0 {
            if t_scaled < 0.0 || t_scaled > t_max * det {
                return None;
            }
        } else if t_scaled > 0.0 || t_scaled < t_max * det {
            return None;
        }
        Some(t_scaled / det)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> [Vec3; 3] {
        [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ]
    }

    #[test]
    fn hits_both_sides_and_respects_the_range() {
        let [a, b, c] = tri();
        let down = WatertightRay::new(Vec3::new(0.25, 0.25, 2.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(down.intersect(a, b, c, 10.0), Some(2.0));
        assert_eq!(down.intersect(a, b, c, 1.5), None);
        let up = WatertightRay::new(Vec3::new(0.25, 0.25, -3.0), Vec3::new(0.0, 0.0, 2.0));
        assert_eq!(up.intersect(a, b, c, 10.0), Some(1.5));
        let away = WatertightRay::new(Vec3::new(0.25, 0.25, 2.0), Vec3::new(0.0, 0.0, 1.0));
        assert_eq!(away.intersect(a, b, c, 10.0), None);
        let beside = WatertightRay::new(Vec3::new(0.75, 0.75, 2.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(beside.intersect(a, b, c, 10.0), None);
    }

    /// The twelve triangles of the cube [-1, 1]³.
    fn cube() -> Vec<[Vec3; 3]> {
        let c = |i: usize| {
            Vec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            )
        };
        let quads = [
            [0, 1, 3, 2],
            [4, 6, 7, 5],
            [0, 4, 5, 1],
            [2, 3, 7, 6],
            [0, 2, 6, 4],
            [1, 5, 7, 3],
        ];
        quads
            .iter()
            .flat_map(|q| [[c(q[0]), c(q[1]), c(q[2])], [c(q[0]), c(q[2]), c(q[3])]])
            .collect()
    }

    #[test]
    fn rays_at_shared_edges_and_vertices_of_a_closed_mesh_never_slip_through() {
        let tris = cube();
        let mut rng = kiln_geometry::rng::Rng::new(0x1234_5678);
        let mut rnd = || rng.range(-1.0, 1.0);
        for i in 0..20_000 {
            // a point on an edge or a vertex of the cube (every edge and
            // vertex of a closed mesh is shared)
            let mut target = Vec3::new(rnd().signum(), rnd().signum(), rnd().signum());
            if i % 4 != 0 {
                target[i % 3] = rnd(); // along an edge (cube edges and diagonals)
            }
            if i % 7 == 0 {
                // on a face diagonal, the edge shared inside each quad
                target = Vec3::new(1.0, rnd(), 0.0);
                target.z = target.y;
            }
            // come from outside, through the target, into the solid: the
            // ray crosses the surface exactly at a shared edge or vertex
            let inside = Vec3::new(rnd(), rnd(), rnd()) * 0.9;
            let origin = target + (target - inside) * (1.0 + 10.0 * rnd().abs());
            let ray = WatertightRay::new(origin, inside - origin);
            let hit = tris
                .iter()
                .any(|t| ray.intersect(t[0], t[1], t[2], 2.0).is_some());
            assert!(hit, "ray {origin} -> {target} slipped through");
        }
    }

    #[test]
    fn degenerate_triangles_never_hit() {
        let a = Vec3::ZERO;
        let b = Vec3::X;
        let r = WatertightRay::new(Vec3::new(0.5, 0.0, 1.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(r.intersect(a, b, b * 2.0, 10.0), None);
    }
}
