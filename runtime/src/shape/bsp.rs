//! Queries on a concave solid ([`kiln_formats::bsp`]): a solid-leaf BSP
//! tree for inside and outside, and the collider's triangles under their
//! own box tree for everything that needs the surface.
//!
//! Points descend the tree. Rays, sphere overlaps and sweeps that start
//! outside are answered exactly on the surface triangles (`tri_mesh`):
//! the surface is closed, so the first surface contact of anything that
//! starts outside is its first contact with the solid. What starts inside
//! (a point the tree puts in a solid cell) answers `t = 0`, and a sphere
//! centred inside takes the nearest surface point as the way out. (Dynamic
//! plane shifting, Melax, "Dynamic Plane Shifting BSP Traversal", GI 2000,
//! was the first design: it needs no second structure but reports contacts
//! up to r·(sec(θ/4) − 1) early near sharp edges, points off the surface.)
//!
//! Verification guarantees children come after their parents, so the
//! descent ends, and the surface is a valid triangle mesh.

use super::{LocalRayHit, ShapeContact, tri_mesh};
use crate::geom::sphere_triangle::Contact;
use crate::instance::Placement;
use crate::walk::vec3a;
use glam::{DVec3, Vec3};
use kiln_formats::bsp::{ArchivedBsp, BEVEL, EMPTY, SOLID};

/// A BSP shape ready to answer.
#[derive(Clone, Copy)]
pub(crate) struct BspView<'a>(pub &'a ArchivedBsp);

impl<'a> BspView<'a> {
    /// Whether the local point `p` is in the solid (points on a face count
    /// as inside).
    pub fn contains_local(&self, p: DVec3) -> bool {
        // the solid is what the closed surface encloses, so nothing outside
        // the surface's exact box is in it: most rays and spheres that reach
        // a concave solid start outside its box, and skip the descent (100
        // tori, rays against a triangle tree of the same collider 0.96 →
        // 1.00)
        let s = &self.0.surface;
        if p.cmplt(vec3a(&s.min).as_dvec3()).any() || p.cmpgt(vec3a(&s.max).as_dvec3()).any() {
            return false;
        }
        let mut at = 0u32;
        loop {
            match at {
                SOLID => return true,
                EMPTY => return false,
                _ => {
                    let n = &self.0.nodes[at as usize];
                    let (k, front, back) =
                        (n.plane.to_native(), n.front.to_native(), n.back.to_native());
                    if k & BEVEL != 0 {
                        // a bevel has nothing in front
                        at = back;
                        continue;
                    }
                    let pl = &self.0.planes[k as usize];
                    let f = |i: usize| f64::from(pl[i].to_native());
                    let s = DVec3::new(f(0), f(1), f(2)).dot(p) - f(3);
                    at = if s > 0.0 { front } else { back };
                }
            }
        }
    }

    /// A ray in local space (any placement: rays are affine-invariant):
    /// `t = 0` from inside, else the surface's first hit.
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32, any: bool) -> Option<LocalRayHit> {
        if self.contains_local(o.as_dvec3()) {
            return Some(LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: 0, // not reported: the ray starts inside
                inside: true,
            });
        }
        tri_mesh::raycast(&self.0.surface, o, d, t_max, any)
    }

    /// Whether the world point `p` is inside.
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        self.contains_local(place.local_point64(p.as_dvec3()))
    }

    /// The closest surface point to the world sphere (`c`, `r`) if it
    /// touches, where moving the sphere out along it frees the sphere from
    /// the solid; else (a pinched solid) the way out of the solid, as every
    /// query shape gets it ([`super::probe::solid_touch`]); for a centre
    /// inside, [`Self::way_out`].
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ShapeContact> {
        if self.contains(place, c) {
            return self.way_out(place, c, r);
        }
        let h = tri_mesh::closest(place, &self.0.surface, c, r)?;
        if self.frees_sphere(place, c, r, h.contact.normal, f64::from(r) - h.distance) {
            return Some(h);
        }
        // the way out along the closest point's normal (for a sphere the
        // deepest triangle's normal and the direction from the nearest
        // surface point are that one, so `probe::solid_touch`'s two
        // candidates are one); the point stays the closest surface point,
        // which lies in the sphere
        let (t, feature) =
            super::probe::exit_along(place, self, &point_probe(c, r), h.contact.normal).unwrap_or(
                (
                    crate::geom::probe::Touch {
                        point: h.contact.point,
                        normal: h.contact.normal,
                        depth: f64::from(r) - h.distance,
                    },
                    h.feature,
                ),
            );
        Some(ShapeContact {
            contact: Contact {
                t: 0.0,
                point: h.contact.point,
                normal: t.normal,
            },
            distance: f64::from(r) - t.depth,
            feature,
            inside: false,
        })
    }

    /// Whether the sphere (`c`, `r`) moved by `depth` (and a hair) along
    /// `n` touches the surface nowhere and has its centre outside: the
    /// common case of a sphere's way out, told by the closed-form sphere
    /// tests (the general check, `probe::frees`, runs GJK on every
    /// triangle near, ten times the cost of the whole query).
    fn frees_sphere(&self, place: &Placement, c: Vec3, r: f32, n: DVec3, depth: f64) -> bool {
        // the hair of `probe::frees`, in f64 throughout: at a few
        // kilometres from the origin an f32 centre and a larger hair
        // passed shapes still overlapping a neighbour by 1 mm
        let size = f64::from(c.abs().max_element() + r + 1.0);
        let moved = c.as_dvec3() + n * (depth + 1e-7 * size);
        !tri_mesh::touches(place, &self.0.surface, moved, f64::from(r))
            && !self.contains_local(place.local_point64(moved))
    }

    /// For a centre inside: the way out of the solid, as every query shape
    /// gets it ([`super::probe::inside_solid`]); `distance` is then the
    /// depth less the radius, so [`ShapeContact::depth`] gives the depth.
    fn way_out(&self, place: &Placement, c: Vec3, r: f32) -> Option<ShapeContact> {
        // through the nearest surface point, `r` beyond it: the common case,
        // told by the closed-form sphere tests as in `closest`
        if let Some(near) = tri_mesh::closest(place, &self.0.surface, c, f32::MAX)
            && near.distance > 0.0
        {
            let n = (near.contact.point - c.as_dvec3()) / near.distance;
            if self.frees_sphere(place, c, r, n, f64::from(r) + near.distance) {
                return Some(ShapeContact {
                    contact: Contact {
                        t: 0.0,
                        point: near.contact.point,
                        normal: n,
                    },
                    distance: near.distance,
                    feature: near.feature,
                    inside: true,
                });
            }
            // `probe::inside_solid`'s way, along the same direction, with
            // the nearest surface point where the sphere reaches it
            if let Some((t, feature)) = super::probe::exit_along(place, self, &point_probe(c, r), n)
            {
                let reaches = near.distance <= f64::from(r);
                return Some(ShapeContact {
                    contact: Contact {
                        t: 0.0,
                        point: if reaches { near.contact.point } else { t.point },
                        normal: t.normal,
                    },
                    distance: t.depth - f64::from(r),
                    feature,
                    inside: true,
                });
            }
        }
        let (t, feature) = super::probe::inside_solid(place, self, &point_probe(c, r))?;
        Some(ShapeContact {
            contact: Contact {
                t: 0.0,
                point: t.point,
                normal: t.normal,
            },
            distance: t.depth - f64::from(r),
            feature,
            inside: true,
        })
    }

    /// Whether the world sphere touches the solid.
    pub fn touches(&self, place: &Placement, c: Vec3, r: f32) -> bool {
        tri_mesh::touches(place, &self.0.surface, c.as_dvec3(), f64::from(r))
            || self.contains(place, c)
    }

    /// First contact of the sweep at a time `≤ limit`, culling volumes
    /// beyond `t_cull`: `t = 0` with the way out for a centre inside, else
    /// the surface's first contact.
    pub fn sweep(
        &self,
        place: &Placement,
        s: &crate::shape::Sweep,
        limit: f64,
        t_cull: f32,
    ) -> Option<(Contact, u32)> {
        if self.contains(place, s.center) {
            let h = self.way_out(place, s.center, s.radius)?;
            return Some((h.contact, h.feature));
        }
        tri_mesh::sweep(place, &self.0.surface, s, limit, t_cull)
    }
}

/// A sphere as a query probe: its centre grown by its radius.
fn point_probe(c: Vec3, r: f32) -> crate::query::Probe<'static> {
    crate::query::Probe {
        core: crate::query::Core::Point(crate::geom::gjk::Point(c.as_dvec3())),
        radius: f64::from(r),
    }
}
