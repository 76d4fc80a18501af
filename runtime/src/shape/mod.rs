//! Per-shape queries, one module per shape family, behind one dispatch
//! ([`ShapeRef`]). Each shape answers every query kind — ray, sphere
//! closest point and touch test, sphere sweep, point containment — for one
//! instance, and *returns* its answer; the level-wide walks in
//! [`crate::query`] only pick instances and keep the best answer.
//!
//! The dispatch is an exhaustive `match` over the archived shape enum, so a
//! new shape family cannot be added without saying how it answers each
//! query: no query can silently miss a shape.

pub(crate) mod tri_mesh;

use crate::geom::sphere_triangle::Contact;
use crate::instance::{Placement, transform_point, transform_vector};
use glam::Vec3;
use kiln_formats::level::{ArchivedInstance, ArchivedShape};

/// A ray hit in a shape's local space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalRayHit {
    /// Ray parameter (the same in local and world space).
    pub t: f32,
    /// The surface's front-side normal in local space (unnormalised):
    /// the triangle's winding normal, or a solid's outward normal.
    pub normal: Vec3,
    /// Feature id: source triangle, or face/plane index.
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

/// One archived shape, ready to answer queries.
#[derive(Clone, Copy)]
pub(crate) struct ShapeRef<'a>(pub &'a ArchivedShape);

impl<'a> ShapeRef<'a> {
    /// The closest hit (or with `any`, any hit) of the world ray `origin +
    /// t·dir`, `t ≤ t_max`, with the shape placed by `inst`.
    #[inline]
    pub fn raycast(
        self,
        inst: &ArchivedInstance,
        origin: Vec3,
        dir: Vec3,
        t_max: f32,
        any: bool,
    ) -> Option<LocalRayHit> {
        let lo = transform_point(&inst.local_from_world, origin);
        let ld = transform_vector(&inst.local_from_world, dir);
        if ld == Vec3::ZERO || !ld.is_finite() || !lo.is_finite() {
            return None;
        }
        match self.0 {
            ArchivedShape::TriMesh(m) => tri_mesh::raycast(m, lo, ld, t_max, any),
        }
    }

    /// The closest point of the shape within `radius` of `center`.
    #[inline]
    pub fn closest(self, place: &Placement<'a>, center: Vec3, radius: f32) -> Option<ShapeContact> {
        match self.0 {
            ArchivedShape::TriMesh(m) => tri_mesh::closest(place, m, center, radius),
        }
    }

    /// Whether the shape comes within `radius` of `center`.
    #[inline]
    pub fn touches(self, place: &Placement<'a>, center: Vec3, radius: f32) -> bool {
        match self.0 {
            ArchivedShape::TriMesh(m) => tri_mesh::touches(place, m, center, radius),
        }
    }

    /// The first contact of the sweep `s` at a time `≤ limit` (exact, f64),
    /// culling volumes beyond `t_cull`; with its feature.
    #[inline]
    pub fn sweep(
        self,
        place: &Placement<'a>,
        s: &crate::Sweep,
        limit: f64,
        t_cull: f32,
    ) -> Option<(Contact, u32)> {
        match self.0 {
            ArchivedShape::TriMesh(m) => tri_mesh::sweep(place, m, s, limit, t_cull),
        }
    }
}
