//! Ray/box slab test that never misses a box the exact ray touches.
//!
//! Van den Bergen ("Collision Detection", GDC 2013) warns that rounding noise in a segment/box
//! test gives false negatives and fixes it by adding an upper bound of the
//! noise to the comparison. For the slab form used here that bound is
//! Ize's ("Robust BVH ray traversal", JCGT 2013): each slab distance carries
//! a relative error of at most γ(3) = 3ε/(1-3ε), so the exit distance is
//! scaled by 1 + 2γ(3) before it is compared with the entry distance.
//! Axes along which the ray does not move are tested directly (is the
//! origin inside the slab, faces included?), so `0 · ∞ = NaN` never arises
//! for a ray lying in a box's face plane.

use glam::{BVec3A, Vec3, Vec3A};

/// 1 + 2γ(3) for f32 (ε = 2⁻²⁴), rounded up.
pub(crate) const EXIT_SCALE: f32 =
    1.0 + 2.0 * (3.0 * f32::EPSILON * 0.5) / (1.0 - 3.0 * f32::EPSILON * 0.5) + f32::EPSILON;

/// A ray prepared for slab tests.
#[derive(Clone, Copy, Debug)]
pub struct SlabRay {
    /// Ray origin.
    pub origin: Vec3A,
    /// Ray direction.
    pub dir: Vec3A,
    /// Per-axis reciprocal of the direction (zero on axes where the ray
    /// does not move).
    pub inv_dir: Vec3A,
    /// Axes along which the ray does not move (zero reciprocal).
    flat: BVec3A,
    /// Whether any axis is flat.
    any_flat: bool,
}

impl SlabRay {
    /// Prepares a ray.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        let inv = |d: f32| {
            let r = 1.0 / d;
            if r.is_finite() { r } else { 0.0 }
        };
        let inv_dir = Vec3A::new(inv(dir.x), inv(dir.y), inv(dir.z));
        let flat = inv_dir.cmpeq(Vec3A::ZERO);
        SlabRay {
            origin: origin.into(),
            dir: dir.into(),
            inv_dir,
            flat,
            any_flat: flat.any(),
        }
    }

    /// Entry distance if the ray meets the box within `[0, t_max]` (the
    /// tests' form of [`SlabRay::hit_a`]).
    #[cfg(test)]
    fn hit(&self, min: Vec3, max: Vec3, t_max: f32) -> Option<f32> {
        self.hit_a(min.into(), max.into(), t_max)
    }

    /// Entry distance if the ray meets the box `min..=max` within `[0,
    /// t_max]`.
    #[inline]
    pub fn hit_a(&self, min: Vec3A, max: Vec3A, t_max: f32) -> Option<f32> {
        let t0 = (min - self.origin) * self.inv_dir;
        let t1 = (max - self.origin) * self.inv_dir;
        let mut lo = t0.min(t1);
        let mut hi = t0.max(t1);
        if self.any_flat {
            // on a flat axis the slab is everything or nothing: is the
            // origin between the faces (faces included)?
            let inside = self.origin.cmpge(min) & self.origin.cmple(max);
            let inf = Vec3A::splat(f32::INFINITY);
            lo = Vec3A::select(self.flat, Vec3A::select(inside, -inf, inf), lo);
            hi = Vec3A::select(self.flat, Vec3A::select(inside, inf, -inf), hi);
        }
        let near = lo.max_element().max(0.0);
        let far = hi.min_element().min(t_max) * EXIT_SCALE;
        (near <= far).then_some(near)
    }
}

impl SlabRay {
    /// Entry distance if the ray meets the ball `c`, `r` within
    /// `[0, t_max]`. Conservative: the radius is grown by a bound on the
    /// f32 rounding of the distance from the centre to the ray's line
    /// (a few ulps of the coordinates and of the distance along the ray),
    /// so a ball the exact ray touches is never missed.
    #[inline]
    pub fn hit_ball(&self, c: Vec3A, r: f32, t_max: f32) -> Option<f32> {
        let oc = c - self.origin;
        let dd = self.dir.length_squared();
        let tc = oc.dot(self.dir) / dd;
        let along = self.dir * tc;
        let off = oc - along;
        let m = c.abs().max_element() + self.origin.abs().max_element() + along.abs().max_element();
        let rr = r * (1.0 + 1e-6) + 2e-6 * m;
        let h2 = rr * rr - off.length_squared();
        if h2.is_nan() || h2 < 0.0 {
            return None;
        }
        let h = (h2 / dd).sqrt() * (1.0 + 1e-6);
        let near = (tc - h).max(0.0);
        let far = tc + h;
        (far >= 0.0 && near <= t_max * EXIT_SCALE).then_some(near)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_hits_and_misses() {
        let r = SlabRay::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X);
        assert_eq!(r.hit(Vec3::ZERO, Vec3::ONE, 10.0), Some(1.0));
        assert_eq!(r.hit(Vec3::ZERO, Vec3::ONE, 0.5), None);
        let r = SlabRay::new(Vec3::new(-1.0, 1.5, 0.5), Vec3::X);
        assert_eq!(r.hit(Vec3::ZERO, Vec3::ONE, 10.0), None);
    }

    #[test]
    fn rays_in_a_face_plane_count_as_touching() {
        // parallel to x, lying exactly in the box's y = 0 face
        let r = SlabRay::new(Vec3::new(-1.0, 0.0, 0.5), Vec3::X);
        assert!(r.hit(Vec3::ZERO, Vec3::ONE, 10.0).is_some());
        // and in the y = 1 face
        let r = SlabRay::new(Vec3::new(-1.0, 1.0, 0.5), Vec3::X);
        assert!(r.hit(Vec3::ZERO, Vec3::ONE, 10.0).is_some());
    }

    #[test]
    fn balls_are_hit_from_outside_inside_and_at_a_graze() {
        let r = SlabRay::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
        let t = r.hit_ball(Vec3A::ZERO, 1.0, 100.0).unwrap();
        assert!((t - 4.0).abs() < 1e-4, "{t}");
        assert_eq!(r.hit_ball(Vec3A::ZERO, 1.0, 3.0), None, "beyond t_max");
        // tangent: the line passes exactly at distance r
        assert!(r.hit_ball(Vec3A::new(0.0, 1.0, 0.0), 1.0, 100.0).is_some());
        assert_eq!(r.hit_ball(Vec3A::new(0.0, 1.01, 0.0), 1.0, 100.0), None);
        // behind the origin: no; around the origin: entry 0
        assert_eq!(r.hit_ball(Vec3A::new(-8.0, 0.0, 0.0), 1.0, 100.0), None);
        assert_eq!(
            r.hit_ball(Vec3A::new(-5.0, 0.5, 0.0), 1.0, 100.0),
            Some(0.0)
        );
        // far from the origin, grazing: never lost to rounding
        let o = Vec3::new(10_000.0, 10_000.0, 10_000.0);
        let r = SlabRay::new(o, Vec3::new(1.0, 1e-3, 0.0));
        let c = Vec3A::from(o + Vec3::new(50.0, 0.05, 0.25));
        assert!(r.hit_ball(c, 0.25, 100.0).is_some());
    }

    #[test]
    fn flat_boxes_are_hit() {
        let r = SlabRay::new(Vec3::new(0.5, 5.0, 0.5), Vec3::NEG_Y);
        assert_eq!(r.hit(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0), 10.0), Some(5.0));
    }

    #[test]
    fn a_far_box_grazed_at_a_corner_is_not_lost_to_rounding() {
        // ray from far away through the exact corner of a box
        let min = Vec3::new(1000.0, 1000.0, 1000.0);
        let max = Vec3::new(1000.5, 1000.25, 1000.125);
        let origin = Vec3::new(-3000.0, 7.0, 11.0);
        let dir = max - origin;
        let r = SlabRay::new(origin, dir);
        assert!(r.hit(min, max, 2.0).is_some());
    }
}
