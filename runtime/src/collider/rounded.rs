//! Spheres and capsules: the points within a radius of a segment, in
//! closed form (a sphere is a capsule whose segment is a point). They
//! are only ever placed by similarities (verification enforces it), so
//! every query, rays included, runs on the shape placed in world space
//! ([`Placed`]: its ends placed and its radius scaled).

use super::{At, ColliderContact, LocalRayHit, keep};
use crate::geom::contact_point::{from_segment, on_segment};
use crate::geom::ray_round::{ray_cylinder, ray_sphere};
use crate::geom::sphere_triangle::Contact;
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

/// A sphere or capsule in world space: its segment's ends and its
/// radius.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub a: DVec3,
    pub b: DVec3,
    pub radius: f64,
}

impl Rounded {
    /// The shape placed at `at`: its ends placed by the frame and its
    /// radius scaled by the frame's scale. At a stored similarity they are
    /// read straight from the instance, with the frame's values (up to the
    /// sign of a zero): the ends are the translation and the world
    /// matrix's second column times `∓half` added to it, the scale the
    /// length of its first column (building the frame was a sixth of a
    /// box's yes/no test on a field of balls).
    #[inline(always)]
    pub fn placed(&self, at: &At) -> Placed {
        // (arrays converted by hand: `map`'s closures here were left out of
        // line in some builds, a tenth of a box's yes/no test on a field
        // of balls)
        if let At::Instance(_, inst) = at {
            let r = &inst.rotation;
            let q = [
                r[0].to_native(),
                r[1].to_native(),
                r[2].to_native(),
                r[3].to_native(),
            ];
            if q != [0.0; 4] {
                let t = &inst.translation;
                let t = DVec3::new(
                    f64::from(t[0].to_native()),
                    f64::from(t[1].to_native()),
                    f64::from(t[2].to_native()),
                );
                let wide = |c: [f32; 3]| DVec3::new(c[0].into(), c[1].into(), c[2].into());
                let [x, y] = kiln_formats::placement::similarity_first_columns(q);
                let (x, y) = (wide(x), wide(y));
                return Placed {
                    a: y * -self.half + t,
                    b: y * self.half + t,
                    radius: self.radius * x.length(),
                };
            }
        }
        let place = at.frame();
        let h = DVec3::new(0.0, self.half, 0.0);
        Placed {
            a: place.world_point64(-h),
            b: place.world_point64(h),
            radius: self.radius * place.world_scale(),
        }
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

    /// Ray in local space: [`Rounded::raycast_placed`] on the shape where
    /// it lies in its own frame.
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32) -> Option<LocalRayHit> {
        let h = DVec3::new(0.0, self.half, 0.0);
        let local = Placed {
            a: -h,
            b: h,
            radius: self.radius,
        };
        Self::raycast_placed(&local, o, d, t_max)
    }

    /// The ray `o + t·d`, `t ≤ t_max`, against the shape as placed, in the
    /// space it is placed in: with a world ray, the local ray's answer
    /// (the same `t`, to rounding, as the map between the spaces is
    /// affine) without the inverse placement, its normal in world space.
    pub fn raycast_placed(w: &Placed, o: Vec3, d: Vec3, t_max: f32) -> Option<LocalRayHit> {
        let (o64, d64) = (o.as_dvec3(), d.as_dvec3());
        if (o64 - on_segment(w.a, w.b, o64)).length() <= w.radius {
            return Some(LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: None,
                inside: true,
            });
        }
        let t = Self::enter(w.a, w.b, w.radius, o64, d64)?;
        if t > f64::from(t_max) {
            return None;
        }
        let p = o64 + d64 * t;
        Some(LocalRayHit {
            t: t as f32,
            normal: (p - on_segment(w.a, w.b, p)).as_vec3(),
            feature: None,
            inside: false,
        })
    }

    /// Whether the world point `p` is inside the shape as placed.
    pub fn contains(w: &Placed, p: Vec3) -> bool {
        let p = p.as_dvec3();
        (p - on_segment(w.a, w.b, p)).length() <= w.radius
    }

    /// Closest surface point to `c` if within `r` (or `c` inside).
    pub fn closest(w: &Placed, c: Vec3, r: f32) -> Option<ColliderContact> {
        let (a, b, rad) = (w.a, w.b, w.radius);
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
    pub fn sweep(w: &Placed, s: &crate::collider::Sweep, limit: f64) -> Option<Contact> {
        let (a, b, rad) = (w.a, w.b, w.radius);
        let (c, d, r) = (s.center.as_dvec3(), s.dir.as_dvec3(), f64::from(s.radius));
        let q = on_segment(a, b, c);
        if (c - q).length() <= rad + r {
            let h = Self::closest(w, s.center, f32::INFINITY)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collider::testing::{placed_copies, turned_placements};
    use kiln_baker::SceneMesh;
    use kiln_geometry::rng::Rng;

    /// A sphere or capsule read straight from its instance is placed as
    /// its frame places it, to the bit (up to the sign of a zero), under
    /// turned placements scaled from 10⁻³ to 900 and moved up to 10⁵ away,
    /// and under the identity.
    #[test]
    fn placed_from_the_instance_as_from_the_frame() {
        let (knot, tris) = kiln_tests::torus_knot(24, 8, false);
        let mut rng = Rng(0x5afe_ba11_0000_0001);
        let transforms = turned_placements(&mut rng);
        let mut read = 0;
        for kind in ["sphere", "capsule"] {
            let level = placed_copies(
                SceneMesh::new("knot", knot.clone(), &tris),
                &transforms,
                kind,
            );
            let a = level.archive();
            for inst in a.instances.iter() {
                let shape =
                    crate::collider::ColliderRef(&a.colliders[inst.collider.to_native() as usize]);
                let super::super::Family::Rounded(r) = shape.family() else {
                    panic!("a {kind} baked as another family");
                };
                assert_eq!(r.half == 0.0, kind == "sphere");
                let at = At::Instance(a, inst);
                let (got, frame) = (r.placed(&at), at.frame());
                let h = DVec3::new(0.0, r.half, 0.0);
                assert_eq!(got.a, frame.world_point64(-h), "{kind}");
                assert_eq!(got.b, frame.world_point64(h), "{kind}");
                assert_eq!(got.radius, r.radius * frame.world_scale(), "{kind}");
                read += usize::from(inst.rotation.iter().any(|v| v.to_native() != 0.0));
            }
        }
        assert!(read >= 40, "{read} read from the instance");
    }
}
