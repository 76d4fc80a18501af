//! Spheres and capsules: the points within a radius of a segment, in
//! closed form (a sphere is a capsule whose segment is a point). They
//! are only ever placed by similarities (verification enforces it), so
//! every query runs in local space and the answer is mapped back.

use super::{ColliderContact, LocalRayHit, keep};
use crate::geom::contact_point::{from_segment, on_segment};
use crate::geom::sphere_triangle::{Contact, ray_cylinder, ray_sphere};
use crate::instance::Frame;
use glam::{DVec3, Vec3};

/// A sphere or capsule: the points within `radius` of the segment from
/// `(0, -half, 0)` to `(0, half, 0)` (a sphere has `half = 0`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounded {
    /// Half the segment's length.
    pub half: f64,
    /// Radius.
    pub radius: f64,
}

impl Rounded {
    /// The segment's ends in world space.
    fn ends(&self, place: &Frame) -> (DVec3, DVec3) {
        let h = DVec3::new(0.0, self.half, 0.0);
        (place.world_point64(-h), place.world_point64(h))
    }

    /// First entry of `o + t·d` into the rounded segment `a..b` of radius
    /// `r`, for an origin outside it.
    fn enter(a: DVec3, b: DVec3, r: f64, o: DVec3, d: DVec3) -> Option<f64> {
        if a == b {
            return ray_sphere(o, d, a, r);
        }
        let side = ray_cylinder(o, d, a, b, r).map(|(t, _)| t);
        [side, ray_sphere(o, d, a, r), ray_sphere(o, d, b, r)]
            .into_iter()
            .flatten()
            .min_by(f64::total_cmp)
    }

    /// Ray in local space.
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32) -> Option<LocalRayHit> {
        let (o64, d64) = (o.as_dvec3(), d.as_dvec3());
        let h = DVec3::new(0.0, self.half, 0.0);
        if (o64 - on_segment(-h, h, o64)).length() <= self.radius {
            return Some(LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: None,
                inside: true,
            });
        }
        let t = Self::enter(-h, h, self.radius, o64, d64)?;
        if t > f64::from(t_max) {
            return None;
        }
        let p = o64 + d64 * t;
        Some(LocalRayHit {
            t: t as f32,
            normal: (p - on_segment(-h, h, p)).as_vec3(),
            feature: None,
            inside: false,
        })
    }

    /// Whether the world point `p` is inside.
    pub fn contains(&self, place: &Frame, p: Vec3) -> bool {
        let (a, b) = self.ends(place);
        let p = p.as_dvec3();
        (p - on_segment(a, b, p)).length() <= self.radius * place.world_scale()
    }

    /// Closest surface point to `c` if within `r` (or `c` inside).
    pub fn closest(&self, place: &Frame, c: Vec3, r: f32) -> Option<ColliderContact> {
        let (a, b) = self.ends(place);
        let rad = self.radius * place.world_scale();
        let c = c.as_dvec3();
        let q = on_segment(a, b, c);
        let (normal, len) = from_segment(a, b, c);
        let contact = Contact {
            t: 0.0,
            point: q + normal * rad,
            normal,
        };
        keep(contact, (len - rad).abs(), len <= rad, None, r)
    }

    /// First contact of the sweep at a time `≤ limit`.
    pub fn sweep(&self, place: &Frame, s: &crate::collider::Sweep, limit: f64) -> Option<Contact> {
        let (a, b) = self.ends(place);
        let rad = self.radius * place.world_scale();
        let (c, d, r) = (s.center.as_dvec3(), s.dir.as_dvec3(), f64::from(s.radius));
        let q = on_segment(a, b, c);
        if (c - q).length() <= rad + r {
            let h = self.closest(place, s.center, f32::INFINITY)?;
            return Some(h.contact);
        }
        let t = Self::enter(a, b, rad + r, c, d)?;
        if t > limit {
            return None;
        }
        let at = c + d * t;
        let q = on_segment(a, b, at);
        let normal = (at - q).normalize();
        let contact = Contact {
            t,
            point: q + normal * rad,
            normal,
        };
        Some(contact)
    }
}
