//! Ray casts against the whole level: the top-level tree in world space,
//! then each touched instance's shape in its local space (the ray is
//! transformed once per instance; the parameter `t` is the same in both
//! spaces because the transform is affine).

use super::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::instance::transpose_vector;
use crate::level::Level;
use crate::shape::{LocalRayHit, ShapeRef};
use crate::walk::{Grow, RayVisitor, walk_ray};
use glam::Vec3;
use kiln_formats::level::{ArchivedLevel, leaf_range};

/// A ray: `origin + t · dir` for `t` in `[0, max_t]`. `dir` need not be
/// unit length; `t` is measured in multiples of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Start point.
    pub origin: Vec3,
    /// Direction (non-zero).
    pub dir: Vec3,
    /// Largest `t` of interest (may be infinite).
    pub max_t: f32,
}

impl Ray {
    /// A ray from its parts.
    pub fn new(origin: Vec3, dir: Vec3, max_t: f32) -> Ray {
        Ray { origin, dir, max_t }
    }

    /// True when the ray can be cast: finite origin and direction, non-zero
    /// direction, `max_t >= 0` (NaN is not).
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite()
            && self.dir.is_finite()
            && self.dir != Vec3::ZERO
            && self.max_t >= 0.0
    }
}

/// The closest hit of a ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// World-space hit point (`origin + t · dir`).
    pub point: Vec3,
    /// Unit geometric normal of the surface hit, facing the ray's origin.
    /// A ray that starts inside a solid reports `t = 0` and `-dir`
    /// (normalised) here.
    pub normal: Vec3,
    /// Whether the ray hit the surface's front face (for triangles:
    /// counter-clockwise in glTF terms, after the node transform's
    /// handedness; for solids: the outside). False for a ray that starts
    /// inside a solid.
    pub front_face: bool,
    /// Instance index in the archive (see [`Level::object_name`]).
    pub instance: u32,
    /// The feature hit: for a triangle mesh, the index of the triangle in
    /// its source mesh (primitives concatenated); for a box or a polytope,
    /// its face (plane index); for a concave solid, the index of the
    /// triangle in its collider; 0 for a sphere or capsule. `None` for a
    /// ray that starts inside a solid: it crosses no surface.
    pub feature: Option<u32>,
}

/// Hit search over the top-level tree: each instance leaf asks its shape
/// for a hit within the current range.
struct TopSearch<'a> {
    level: &'a ArchivedLevel,
    filter: &'a Filter<'a>,
    ray: Ray,
    t_max: f32,
    any: bool,
    hit: Option<(LocalRayHit, u32)>, // hit, instance
}

impl RayVisitor for TopSearch<'_> {
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    fn leaf(&mut self, data: u32) -> bool {
        let (inst_index, _) = leaf_range(data);
        if !self.filter.sees(self.level, inst_index) {
            return false;
        }
        let inst = &self.level.instances[inst_index as usize];
        let shape = ShapeRef(&self.level.shapes[inst.shape.to_native() as usize]);
        if let Some(h) = shape.raycast(inst, self.ray.origin, self.ray.dir, self.t_max, self.any)
            && (self.hit.is_none() || h.t < self.t_max)
        {
            self.t_max = h.t;
            self.hit = Some((h, inst_index));
        }
        self.any && self.hit.is_some()
    }
}

impl Level {
    /// Walks the level for `ray` (which must be valid).
    fn search(&self, ray: &Ray, any: bool, filter: &Filter) -> Option<(LocalRayHit, u32)> {
        let level = self.archive();
        let mut v = TopSearch {
            level,
            filter,
            ray: *ray,
            t_max: ray.max_t,
            any,
            hit: None,
        };
        walk_ray(
            level.top.as_slice(),
            &SlabRay::new(ray.origin, ray.dir),
            &Grow::NONE,
            &mut v,
        );
        v.hit
    }
}

impl Level {
    /// The closest hit of `origin + t · dir`, `0 <= t <= max_t`, or `None`.
    /// Invalid rays (see [`Ray::is_valid`]) hit nothing.
    pub fn raycast(&self, origin: Vec3, dir: Vec3, max_t: f32) -> Option<RayHit> {
        self.cast(&Ray::new(origin, dir, max_t))
    }

    /// Whether anything lies on the ray within `[0, max_t]` (occlusion test;
    /// stops at the first hit found).
    pub fn raycast_any(&self, origin: Vec3, dir: Vec3, max_t: f32) -> bool {
        let ray = Ray::new(origin, dir, max_t);
        ray.is_valid() && self.search(&ray, true, &Filter::ALL).is_some()
    }

    /// [`Level::raycast`] for a prepared [`Ray`].
    pub fn cast(&self, ray: &Ray) -> Option<RayHit> {
        self.cast_filtered(ray, &Filter::ALL)
    }

    /// [`Level::cast`] seeing only the objects `filter` accepts.
    pub fn cast_filtered(&self, ray: &Ray, filter: &Filter) -> Option<RayHit> {
        if !ray.is_valid() {
            return None;
        }
        let (h, inst_index) = self.search(ray, false, filter)?;
        let inst = &self.archive().instances[inst_index as usize];
        if h.inside {
            return Some(RayHit {
                t: 0.0,
                point: ray.origin,
                normal: -ray.dir.normalize(),
                front_face: false,
                instance: inst_index,
                feature: None,
            });
        }
        // front normal in world space: L^T n (glTF: a mirroring transform
        // flips the winding, which this inverse-transpose form already does)
        let n = transpose_vector(&inst.local_from_world, h.normal).normalize_or_zero();
        let front_face = n.dot(ray.dir) < 0.0;
        Some(RayHit {
            t: h.t,
            point: ray.origin + ray.dir * h.t,
            normal: if front_face { n } else { -n },
            front_face,
            instance: inst_index,
            feature: Some(h.feature),
        })
    }

    /// Casts many rays on the rayon pool; `out[i]` answers `rays[i]`.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_batch(&self, rays: &[Ray], out: &mut [Option<RayHit>]) {
        super::batch(rays, out, 256, |r, o| *o = self.cast(r));
    }

    /// Occlusion tests for many rays on the rayon pool.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        super::batch(rays, out, 256, |r, o| {
            *o = self.raycast_any(r.origin, r.dir, r.max_t)
        });
    }
}
