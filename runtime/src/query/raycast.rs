//! Ray casts against the whole level: the top-level tree in world space,
//! then each touched instance's TriTree in its local space (the ray is
//! transformed once per instance; the parameter `t` is the same in both
//! spaces because the transform is affine).

use super::ray_box::SlabRay;
use super::ray_triangle::WatertightRay;
use crate::level::Level;
use crate::walk::{Grow, MeshTree, RayVisitor, walk_ray};
use glam::Vec3;
use kiln_formats::level::{ArchivedLevel, ArchivedTriMesh, leaf_range};

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
    /// Unit geometric normal of the triangle, facing the ray's origin.
    pub normal: Vec3,
    /// Whether the ray hit the triangle's front face (counter-clockwise in
    /// glTF terms, after the node transform's handedness).
    pub front_face: bool,
    /// Instance index in the archive (see [`Level::object_name`]).
    pub instance: u32,
    /// Index of the triangle in its source mesh (primitives concatenated).
    pub triangle: u32,
}

#[inline]
pub(crate) fn v3(a: &[rkyv::rend::f32_le; 3]) -> Vec3 {
    Vec3::new(a[0].to_native(), a[1].to_native(), a[2].to_native())
}

#[inline]
pub(crate) fn transform_point(m: &[rkyv::rend::f32_le; 12], p: Vec3) -> Vec3 {
    let r = |k: usize| {
        m[k].to_native() * p.x
            + m[k + 1].to_native() * p.y
            + m[k + 2].to_native() * p.z
            + m[k + 3].to_native()
    };
    Vec3::new(r(0), r(4), r(8))
}

#[inline]
pub(crate) fn transform_vector(m: &[rkyv::rend::f32_le; 12], d: Vec3) -> Vec3 {
    let r =
        |k: usize| m[k].to_native() * d.x + m[k + 1].to_native() * d.y + m[k + 2].to_native() * d.z;
    Vec3::new(r(0), r(4), r(8))
}

/// `Lᵀ · n` for the 3×3 part of a row-major 3×4 matrix `L`.
#[inline]
fn transpose_vector(m: &[rkyv::rend::f32_le; 12], n: Vec3) -> Vec3 {
    let c =
        |k: usize| m[k].to_native() * n.x + m[k + 4].to_native() * n.y + m[k + 8].to_native() * n.z;
    Vec3::new(c(0), c(1), c(2))
}

/// Vertex indices of triangle `slot` (`leaf << 1 | triangle in leaf`).
#[inline]
pub(crate) fn slot_triangle(mesh: &ArchivedTriMesh, slot: u32) -> [u32; 3] {
    let q = &mesh.leaves[(slot >> 1) as usize];
    let q = [
        q[0].to_native(),
        q[1].to_native(),
        q[2].to_native(),
        q[3].to_native(),
    ];
    kiln_formats::level::leaf_triangle(q, slot & 1)
}

/// Source triangle id of triangle `slot`.
#[inline]
pub(crate) fn slot_source(mesh: &ArchivedTriMesh, slot: u32) -> u32 {
    mesh.source_ids[(slot >> 1) as usize][(slot & 1) as usize].to_native()
}

/// Hit search inside one mesh: closest hit, or (with `any`) the first found.
struct MeshSearch<'a> {
    mesh: &'a ArchivedTriMesh,
    ray: WatertightRay,
    t_max: f32,
    any: bool,
    hit: Option<(f32, u32)>, // t, triangle slot (leaf << 1 | triangle in leaf)
}

impl RayVisitor for MeshSearch<'_> {
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn leaf(&mut self, data: u32) -> bool {
        let (leaf, count) = leaf_range(data);
        let q = &self.mesh.leaves[leaf as usize];
        let p = |k: usize| v3(&self.mesh.vertices[q[k].to_native() as usize]);
        // (a, b, c) and (c, b, d)
        let (a, b, c) = (p(0), p(1), p(2));
        let tris = [(a, b, c), (c, b, p(3))];
        for (k, &(x, y, z)) in tris.iter().take(count as usize).enumerate() {
            if let Some(th) = self.ray.intersect(x, y, z, self.t_max) {
                if self.hit.is_none() || th < self.t_max {
                    self.t_max = th;
                    self.hit = Some((th, leaf << 1 | k as u32));
                    if self.any {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// Hit search over the top-level tree: each instance leaf transforms the
/// ray into local space and searches its mesh with the current range.
struct TopSearch<'a> {
    level: &'a ArchivedLevel,
    ray: Ray,
    t_max: f32,
    any: bool,
    hit: Option<(f32, u32, u32)>, // t, instance, triangle slot in its mesh
}

impl RayVisitor for TopSearch<'_> {
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    fn leaf(&mut self, data: u32) -> bool {
        let (inst_index, _) = leaf_range(data);
        let inst = &self.level.instances[inst_index as usize];
        let mesh = &self.level.meshes[inst.mesh.to_native() as usize];
        let origin = transform_point(&inst.local_from_world, self.ray.origin);
        let dir = transform_vector(&inst.local_from_world, self.ray.dir);
        if dir == Vec3::ZERO || !dir.is_finite() || !origin.is_finite() {
            return false;
        }
        let mut v = MeshSearch {
            mesh,
            ray: WatertightRay::new(origin, dir),
            t_max: self.t_max,
            any: self.any,
            hit: None,
        };
        MeshTree::of(mesh).walk_ray(&SlabRay::new(origin, dir), &Grow::NONE, &mut v);
        if let Some((t, tri)) = v.hit {
            if self.hit.is_none() || t < self.t_max {
                self.t_max = t;
                self.hit = Some((t, inst_index, tri));
            }
        }
        self.any && self.hit.is_some()
    }
}

impl Level {
    /// Walks the level for `ray` (which must be valid).
    fn search(&self, ray: &Ray, any: bool) -> Option<(f32, u32, u32)> {
        let level = self.archive();
        let mut v = TopSearch {
            level,
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
        ray.is_valid() && self.search(&ray, true).is_some()
    }

    /// [`Level::raycast`] for a prepared [`Ray`].
    pub fn cast(&self, ray: &Ray) -> Option<RayHit> {
        if !ray.is_valid() {
            return None;
        }
        let (t, inst_index, tri_slot) = self.search(ray, false)?;
        let level = self.archive();
        let inst = &level.instances[inst_index as usize];
        let mesh = &level.meshes[inst.mesh.to_native() as usize];
        let tri = slot_triangle(mesh, tri_slot);
        let p = |k: usize| v3(&mesh.vertices[tri[k] as usize]);
        let local_n = (p(1) - p(0)).cross(p(2) - p(0));
        // front normal in world space: L^T n (glTF: a mirroring transform
        // flips the winding, which this inverse-transpose form already does)
        let n = transpose_vector(&inst.local_from_world, local_n).normalize_or_zero();
        let front_face = n.dot(ray.dir) < 0.0;
        Some(RayHit {
            t,
            point: ray.origin + ray.dir * t,
            normal: if front_face { n } else { -n },
            front_face,
            instance: inst_index,
            triangle: slot_source(mesh, tri_slot),
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
