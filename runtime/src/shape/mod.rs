//! Per-shape queries, one module per shape family, behind one dispatch
//! ([`ShapeRef`]). Each shape answers every query kind — ray, sphere
//! closest point and touch test, sphere sweep, point containment — for one
//! instance, and *returns* its answer; the level-wide walks in
//! [`crate::query`] only pick instances and keep the best answer.
//!
//! The dispatch is an exhaustive `match` over the archived shape enum, so a
//! new shape family cannot be added without saying how it answers each
//! query: no query can silently miss a shape.

pub(crate) mod bsp;
pub(crate) mod convex;
pub(crate) mod probe;
pub(crate) mod solid;
pub(crate) mod tri_mesh;

use crate::geom::sphere_triangle::Contact;
use crate::instance::{Placement, transform_point, transform_vector};
use glam::{DVec3, Vec3};
use kiln_formats::level::ArchivedShape;
use solid::{Convex, LocalPolytope, Rounded};

/// A ray hit in a shape's local space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalRayHit {
    /// Ray parameter (the same in local and world space).
    pub t: f32,
    /// The surface's front-side normal in local space (unnormalised):
    /// the triangle's winding normal, or a solid's outward normal.
    pub normal: Vec3,
    /// Feature id: source triangle, collider triangle (concave solids), or
    /// face/plane index.
    pub feature: u32,
    /// The ray starts inside a solid (`t = 0`).
    pub inside: bool,
}

/// The closest point of a shape to a sphere's centre, in world space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShapeContact {
    /// Point, and normal from the shape towards the centre.
    pub contact: Contact,
    /// Distance from the centre to the point (f64).
    pub distance: f64,
    /// Feature id.
    pub feature: u32,
    /// The centre is inside a solid: `distance` is then the depth of the
    /// centre below the surface and the normal the shortest way out.
    pub inside: bool,
}

impl ShapeContact {
    /// Penetration depth of a sphere of radius `r`.
    #[inline]
    pub fn depth(&self, r: f64) -> f64 {
        if self.inside {
            r + self.distance
        } else {
            (r - self.distance).max(0.0)
        }
    }
}

/// A sphere sweep: `center + t·dir`, `t` in `[0, max_t]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sweep {
    /// Start centre.
    pub center: Vec3,
    /// Radius (≥ 0).
    pub radius: f32,
    /// Motion (non-zero).
    pub dir: Vec3,
    /// Largest `t` of interest.
    pub max_t: f32,
}

/// The world ray `origin + t·dir` in the local space of `local_from_world`
/// (the same `t`); `None` where the transform leaves it degenerate (a zero
/// or non-finite direction, a non-finite origin), which hits nothing.
#[inline]
pub(crate) fn local_ray(
    local_from_world: &crate::instance::Rows,
    origin: Vec3,
    dir: Vec3,
) -> Option<(Vec3, Vec3)> {
    let lo = transform_point(local_from_world, origin);
    let ld = transform_vector(local_from_world, dir);
    (ld != Vec3::ZERO && ld.is_finite() && lo.is_finite()).then_some((lo, ld))
}

/// One archived shape, ready to answer queries.
#[derive(Clone, Copy)]
pub(crate) struct ShapeRef<'a>(pub &'a ArchivedShape);

impl<'a> ShapeRef<'a> {
    /// The closest hit (or with `any`, any hit) of the ray `lo + t·ld`,
    /// `t ≤ t_max`, in the shape's local space (see [`local_ray`]).
    #[inline]
    pub fn raycast_local(self, lo: Vec3, ld: Vec3, t_max: f32, any: bool) -> Option<LocalRayHit> {
        match self.solid() {
            Solid::Mesh(m) => tri_mesh::raycast(m, lo, ld, t_max, any),
            Solid::Convex(c) => c.raycast(lo, ld, t_max),
            Solid::Rounded(r) => r.raycast(lo, ld, t_max),
            Solid::Bsp(b) => b.raycast(lo, ld, t_max, any),
        }
    }

    /// The shape's triangle mesh, if it is one.
    #[inline]
    pub fn tri_mesh(self) -> Option<&'a kiln_formats::tri_mesh::ArchivedTriMesh> {
        match self.0 {
            ArchivedShape::TriMesh(m) => Some(m),
            _ => None,
        }
    }

    /// The closest point of the shape within `radius` of `center`.
    #[inline]
    pub fn closest(self, place: &Placement, center: Vec3, radius: f32) -> Option<ShapeContact> {
        match self.solid() {
            Solid::Mesh(m) => tri_mesh::closest(place, m, center, radius),
            Solid::Convex(c) => c.closest(place, center, radius),
            Solid::Rounded(r) => r.closest(place, center, radius),
            Solid::Bsp(b) => b.closest(place, center, radius),
        }
    }

    /// Whether the shape comes within `radius` of `center`.
    #[inline]
    pub fn touches(self, place: &Placement, center: Vec3, radius: f32) -> bool {
        match self.solid() {
            Solid::Mesh(m) => tri_mesh::touches(place, m, center.as_dvec3(), f64::from(radius)),
            Solid::Convex(c) => c.touches(place, center, radius),
            Solid::Rounded(r) => r.closest(place, center, radius).is_some(),
            Solid::Bsp(b) => b.touches(place, center, radius),
        }
    }

    /// The first contact of the sweep `s` at a time `≤ limit` (exact, f64),
    /// culling volumes beyond `t_cull`; with its feature.
    #[inline]
    pub fn sweep(
        self,
        place: &Placement,
        s: &Sweep,
        limit: f64,
        t_cull: f32,
    ) -> Option<(Contact, u32)> {
        match self.solid() {
            Solid::Mesh(m) => tri_mesh::sweep(place, m, s, limit, t_cull),
            Solid::Convex(c) => c.sweep(place, s, limit),
            Solid::Rounded(r) => r.sweep(place, s, limit),
            Solid::Bsp(b) => b.sweep(place, s, limit, t_cull),
        }
    }

    /// Whether the world point `p` is inside the shape (triangle meshes
    /// have no inside).
    #[inline]
    pub fn contains(self, place: &Placement, p: Vec3) -> bool {
        match self.solid() {
            Solid::Mesh(_) => false,
            Solid::Convex(c) => c.contains(place, p),
            Solid::Rounded(r) => r.contains(place, p),
            Solid::Bsp(b) => b.contains(place, p),
        }
    }

    /// The shape as one of the three ways queries are answered.
    #[inline]
    fn solid(self) -> Solid<'a> {
        let f = |x: &rkyv::rend::f32_le| f64::from(x.to_native());
        match self.0 {
            ArchivedShape::TriMesh(m) => Solid::Mesh(m),
            ArchivedShape::Polytope(p) => Solid::Convex(Convex::Polytope(LocalPolytope(p))),
            ArchivedShape::Cuboid(c) => {
                let h = &c.half_extents;
                Solid::Convex(Convex::Box(convex::BoxView(DVec3::new(
                    f(&h[0]),
                    f(&h[1]),
                    f(&h[2]),
                ))))
            }
            ArchivedShape::Sphere(s) => Solid::Rounded(Rounded {
                half: 0.0,
                radius: f(&s.radius),
            }),
            ArchivedShape::Capsule(c) => Solid::Rounded(Rounded {
                half: f(&c.half_height),
                radius: f(&c.radius),
            }),
            ArchivedShape::Bsp(b) => Solid::Bsp(bsp::BspView(b)),
        }
    }
}

/// How a shape family answers: its tree, the convex routines, the
/// closed forms of a rounded segment, or a BSP tree.
enum Solid<'a> {
    Mesh(&'a kiln_formats::tri_mesh::ArchivedTriMesh),
    Convex(Convex<'a>),
    Rounded(Rounded),
    Bsp(bsp::BspView<'a>),
}
