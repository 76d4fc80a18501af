//! Queries on the solid shapes: polytopes and boxes (through the convex
//! routines of [`super::convex`]), spheres and capsules (closed forms).
//!
//! Spaces: rays and point containment are affine-invariant, so they run in
//! local space for any placement. Closest points and sweeps measure
//! distances: for a similarity placement they run in local space (the
//! world sphere is a local sphere of radius `r / scale`) and the answer is
//! mapped back; a polytope under any other placement is taken to world
//! space plane by plane and vertex by vertex, in f64, so non-uniform scale
//! and shear are exact too. Primitives are only ever placed by similarities
//! (verification enforces it).

use super::convex::{self, BoxView, ConvexView, RayAnswer};
use super::{LocalRayHit, ShapeContact};
use crate::geom::contact_point::{from_segment, on_segment};
use crate::geom::sphere_triangle::{Contact, ray_cylinder, ray_sphere};
use crate::instance::{Placement, apply};
use glam::{DVec3, Vec3};
use kiln_formats::polytope::ArchivedPolytope;

/// A polytope in its local space.
pub(crate) struct LocalPolytope<'a>(pub &'a ArchivedPolytope);

impl ConvexView for LocalPolytope<'_> {
    #[inline]
    fn plane_count(&self) -> usize {
        self.0.planes.len()
    }
    #[inline]
    fn plane(&self, k: usize) -> (DVec3, f64) {
        let p = &self.0.planes[k];
        let f = |i: usize| f64::from(p[i].to_native());
        (DVec3::new(f(0), f(1), f(2)), f(3))
    }
    #[inline]
    fn face_len(&self, k: usize) -> usize {
        self.0.face(k).len()
    }
    #[inline]
    fn face_index(&self, k: usize, j: usize) -> u32 {
        self.0.face(k)[j].to_native()
    }
    #[inline]
    fn vertex_count(&self) -> usize {
        self.0.vertices.len()
    }
    #[inline]
    fn archived_planes(&self) -> Option<&[[rkyv::rend::f32_le; 4]]> {
        Some(self.0.planes.as_slice())
    }
    #[inline]
    fn vertex(&self, v: u32) -> DVec3 {
        let p = &self.0.vertices[v as usize];
        DVec3::new(
            f64::from(p[0].to_native()),
            f64::from(p[1].to_native()),
            f64::from(p[2].to_native()),
        )
    }
}

/// A polytope taken to world space by any affine placement: planes by the
/// inverse transpose (renormalised), vertices by the placement, in f64.
///
/// Face loops wind counter-clockwise about their outward normals, and the
/// convex routines rely on it (which side of a loop's edge is the face's).
/// A mirroring placement (negative determinant) maps a loop onto one that
/// winds the other way round the mapped normal, so the view then reads
/// each loop backwards.
struct WorldPolytope<'a> {
    local: LocalPolytope<'a>,
    world: [f64; 12],
    inv: [f64; 12],
    /// The placement mirrors: loops are read backwards.
    mirrored: bool,
}

impl ConvexView for WorldPolytope<'_> {
    fn plane_count(&self) -> usize {
        self.local.plane_count()
    }
    fn plane(&self, k: usize) -> (DVec3, f64) {
        let (n, d) = self.local.plane(k);
        let l = &self.inv;
        // n · (L w + t) ≤ d  ⇔  (Lᵀ n) · w ≤ d − n · t
        let nw = DVec3::new(
            l[0] * n.x + l[4] * n.y + l[8] * n.z,
            l[1] * n.x + l[5] * n.y + l[9] * n.z,
            l[2] * n.x + l[6] * n.y + l[10] * n.z,
        );
        let dw = d - n.dot(DVec3::new(l[3], l[7], l[11]));
        let len = nw.length();
        (nw / len, dw / len)
    }
    fn face_len(&self, k: usize) -> usize {
        self.local.face_len(k)
    }
    fn face_index(&self, k: usize, j: usize) -> u32 {
        if self.mirrored {
            self.local.face_index(k, self.local.face_len(k) - 1 - j)
        } else {
            self.local.face_index(k, j)
        }
    }
    fn vertex_count(&self) -> usize {
        self.local.vertex_count()
    }
    fn vertex(&self, v: u32) -> DVec3 {
        apply(&self.world, self.local.vertex(v), 1.0)
    }
}

/// A convex shape's local view: a polytope (which may also be taken to
/// world space) or a box (placed by similarities only).
pub(crate) enum Convex<'a> {
    /// A polytope.
    Polytope(LocalPolytope<'a>),
    /// A box.
    Box(BoxView),
}

/// Runs `$body` with `$v` bound to whichever local view `$c` holds (both
/// are `ConvexView`s; a macro keeps the call static).
macro_rules! on_local {
    ($c:expr, $v:ident => $body:expr) => {
        match $c {
            Convex::Polytope($v) => $body,
            Convex::Box($v) => $body,
        }
    };
}

impl<'a> Convex<'a> {
    /// Ray in local space (any placement: rays are affine-invariant).
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32) -> Option<LocalRayHit> {
        let (o64, d64) = (o.as_dvec3(), d.as_dvec3());
        let hit = on_local!(self, v => convex::raycast(v, o64, d64, f64::from(t_max)))?;
        Some(match hit {
            RayAnswer::Inside => LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: 0, // not reported: the ray starts inside
                inside: true,
            },
            RayAnswer::Enter { t, face } => LocalRayHit {
                t: t as f32,
                normal: on_local!(self, v => v.plane(face as usize).0).as_vec3(),
                feature: face,
                inside: false,
            },
        })
    }

    /// Whether the world point `p` is inside (containment is
    /// affine-invariant: tested in local space for any placement).
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        if let Convex::Box(b) = self
            && let Some(inside) = box_contains_f32(b, place, p)
        {
            return inside;
        }
        let lp = place.local_point64(p.as_dvec3());
        on_local!(self, v => convex::contains(v, lp))
    }

    /// Closest surface point to `c` if within `r` (or `c` inside), world space.
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ShapeContact> {
        let cw = c.as_dvec3();
        if let (Convex::Polytope(p), None) = (self, place.similarity()) {
            let cl = convex::closest(&world_view(p, place), cw);
            let contact = Contact {
                t: 0.0,
                point: cl.point,
                normal: cl.normal,
            };
            return keep(contact, cl.distance, cl.inside, cl.face, r);
        }
        let lc = place.local_point64(cw);
        let cl = on_local!(self, v => convex::closest(v, lc));
        let contact = Contact {
            t: 0.0,
            point: place.world_point64(cl.point),
            normal: place.world_vector64(cl.normal).normalize(),
        };
        keep(
            contact,
            cl.distance * place.world_scale(),
            cl.inside,
            cl.face,
            r,
        )
    }

    /// Whether the world ball (`c`, `r`) touches the solid (the same
    /// answer as [`Convex::closest`], without the contact).
    pub fn touches(&self, place: &Placement, c: Vec3, r: f32) -> bool {
        let (cw, r) = (c.as_dvec3(), f64::from(r));
        if let (Convex::Polytope(p), None) = (self, place.similarity()) {
            return convex::touches(&world_view(p, place), cw, r);
        }
        let lc = place.local_point64(cw);
        let lr = r / place.world_scale();
        on_local!(self, v => convex::touches(v, lc, lr))
    }

    /// First contact of the sweep at a time `≤ limit`.
    pub fn sweep(
        &self,
        place: &Placement,
        s: &crate::shape::Sweep,
        limit: f64,
    ) -> Option<(Contact, u32)> {
        let (c, d, r) = (s.center.as_dvec3(), s.dir.as_dvec3(), f64::from(s.radius));
        if let (Convex::Polytope(p), None) = (self, place.similarity()) {
            return convex::sweep(&world_view(p, place), c, r, d, limit);
        }
        let (lc, ld, lr) = (
            place.local_point64(c),
            place.local_vector64(d),
            r / place.world_scale(),
        );
        let (h, face) = on_local!(self, v => convex::sweep(v, lc, lr, ld, limit))?;
        let contact = Contact {
            t: h.t,
            point: place.world_point64(h.point),
            normal: place.world_vector64(h.normal).normalize(),
        };
        Some((contact, face))
    }
}

/// A polytope taken to world space by its (non-similar) placement.
fn world_view<'b>(p: &LocalPolytope<'b>, place: &Placement) -> WorldPolytope<'b> {
    let world = place.world_matrix();
    WorldPolytope {
        local: LocalPolytope(p.0),
        mirrored: crate::instance::determinant(&world) < 0.0,
        world,
        inv: place.local_matrix(),
    }
}

/// A closest point kept only if it touches a sphere of radius `r`.
fn keep(contact: Contact, distance: f64, inside: bool, face: u32, r: f32) -> Option<ShapeContact> {
    (inside || distance <= f64::from(r)).then_some(ShapeContact {
        contact,
        distance,
        feature: face,
        inside,
    })
}

/// Whether box `b` placed by `place` holds `p`, decided in f32 where that
/// is certain: `None` within the bound of [`Placement::local_point_bounded`]
/// of a face (or for an affine placement), where the f64 test decides.
/// The f64 inverse is most of a box's point test.
fn box_contains_f32(b: &BoxView, place: &Placement, p: Vec3) -> Option<bool> {
    let (lp, err) = place.local_point_bounded(p)?;
    let (a, h) = (lp.abs(), b.0.as_vec3());
    if (a + err).cmple(h).all() {
        return Some(true);
    }
    if (a - err).cmpgt(h).any() {
        return Some(false);
    }
    None
}

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
    fn ends(&self, place: &Placement) -> (DVec3, DVec3) {
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
                feature: 0,
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
            feature: 0,
            inside: false,
        })
    }

    /// Whether the world point `p` is inside.
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        let (a, b) = self.ends(place);
        let p = p.as_dvec3();
        (p - on_segment(a, b, p)).length() <= self.radius * place.world_scale()
    }

    /// Closest surface point to `c` if within `r` (or `c` inside).
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ShapeContact> {
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
        keep(contact, (len - rad).abs(), len <= rad, 0, r)
    }

    /// First contact of the sweep at a time `≤ limit`.
    pub fn sweep(
        &self,
        place: &Placement,
        s: &crate::shape::Sweep,
        limit: f64,
    ) -> Option<(Contact, u32)> {
        let (a, b) = self.ends(place);
        let rad = self.radius * place.world_scale();
        let (c, d, r) = (s.center.as_dvec3(), s.dir.as_dvec3(), f64::from(s.radius));
        let q = on_segment(a, b, c);
        if (c - q).length() <= rad + r {
            let h = self.closest(place, s.center, f32::INFINITY)?;
            return Some((h.contact, 0));
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
        Some((contact, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Level;
    use crate::query::placed;
    use glam::{DAffine3, DQuat};
    use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
    use kiln_geometry::rng::Rng;

    /// A box's point test, decided in f32 where the point is clearly
    /// inside or outside, answers exactly as the f64 test on 84,000
    /// points: on, just inside and just outside faces, edges and corners
    /// (by 0 to 10⁻³ of the box), and anywhere near, of boxes under
    /// turned placements scaled from 10⁻³ to 900 and moved up to 10⁵
    /// away. Both ways of deciding occur.
    #[test]
    fn box_points_decided_in_f32_answer_as_in_f64() {
        // any closed mesh: the collider is the box fitted around it
        let (knot, tris) = kiln_tests::torus_knot(24, 8, false);
        let mut rng = Rng(0xb0c5_0f32_0000_0001);
        let mut transforms = vec![DAffine3::IDENTITY];
        for scale in [1e-3, 0.37, 1.0, 13.7, 900.0] {
            for far in [0.0, 30.0, 1e4, 1e5] {
                transforms.push(DAffine3::from_scale_rotation_translation(
                    DVec3::splat(scale),
                    DQuat::from_axis_angle(rng.unit(), rng.f() * 6.2),
                    rng.unit() * far,
                ));
            }
        }
        let scene = Scene {
            meshes: vec![SceneMesh::new("knot", knot, &tris)],
            instances: transforms
                .iter()
                .enumerate()
                .map(|(i, &transform)| SceneInstance {
                    name: format!("box{i}"),
                    mesh: 0,
                    transform,
                    extras_collider: Some("box".into()),
                    ..SceneInstance::default()
                })
                .collect(),
            ..Scene::default()
        };
        let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap();
        let (mut inside, mut undecided) = (0, 0);
        let steps = [0.0, 1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3];
        for ii in 0..level.object_count() {
            let (shape, place) = placed(level.archive(), ii);
            let super::super::Solid::Convex(Convex::Box(view)) = shape.solid() else {
                panic!("instance {ii} is not a box");
            };
            let h = view.0;
            for k in 0..4000 {
                // a face, edge or corner point moved in or out, or any point
                let local = if k % 4 == 3 {
                    rng.v(1.5) * h
                } else {
                    let mut x = rng.v(1.0) * h;
                    for axis in 0..=(k % 3) {
                        let a = (axis + k / 3) % 3;
                        let side = if rng.f() < 0.5 { -1.0 } else { 1.0 };
                        let step = steps[(rng.f() * 7.0) as usize]
                            * if rng.f() < 0.5 { -1.0 } else { 1.0 };
                        x[a] = side * h[a] * (1.0 + step);
                    }
                    x
                };
                let p = place.world_point64(local).as_vec3();
                let exact = convex::contains(&view, place.local_point64(p.as_dvec3()));
                assert_eq!(
                    Convex::Box(BoxView(h)).contains(&place, p),
                    exact,
                    "box {ii}, point {p:?}"
                );
                inside += usize::from(exact);
                undecided += usize::from(box_contains_f32(&view, &place, p).is_none());
            }
        }
        let decided = level.object_count() as usize * 4000 - undecided;
        assert!(
            inside > 20_000 && undecided > 5_000 && decided > 10_000,
            "{inside} inside, {undecided} left to f64, {decided} decided in f32"
        );
    }
}
