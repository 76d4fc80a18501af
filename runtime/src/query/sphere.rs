//! Sphere queries against the whole level: overlaps (which objects a
//! resting sphere touches) and sweeps (when a moving sphere first touches
//! anything).
//!
//! The top-level tree picks the instances the sphere may reach (culling in
//! world space); each instance's shape answers exactly for itself
//! (`shape`).

use crate::geom::ray_box::SlabRay;
use crate::geom::sphere_triangle::Contact;
use crate::instance::Placement;
use crate::level::Level;
use crate::shape::ShapeRef;
use crate::shape::tri_mesh::next_up;
use crate::walk::{Grow, RayVisitor, walk_box, walk_ray};
use glam::Vec3;
use kiln_formats::level::{ArchivedInstance, ArchivedLevel, leaf_range};

/// One object touched by a sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereOverlap {
    /// Instance index (see [`Level::object_name`]).
    pub instance: u32,
    /// Closest point of the object to the sphere's centre.
    pub point: Vec3,
    /// Unit normal from the object towards the centre (the face normal on
    /// the centre's side when the centre lies on the surface).
    pub normal: Vec3,
    /// Penetration depth: radius minus the distance to `point` (≥ 0); for
    /// a centre inside a solid, radius plus the distance to its surface.
    pub depth: f32,
    /// Feature of the closest point: source triangle id, a concave solid's
    /// collider triangle, or a convex solid's face.
    pub feature: u32,
}

/// The first contact of a swept sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepHit {
    /// Time of impact: the sphere's centre is at `center + t·dir`. Zero when
    /// it starts in contact.
    pub t: f32,
    /// Contact point on the object.
    pub point: Vec3,
    /// Unit normal from the contact towards the sphere's centre at `t` (for
    /// a sphere starting in contact, the direction that separates it).
    pub normal: Vec3,
    /// Instance index.
    pub instance: u32,
    /// Feature touched: as in [`SphereOverlap::feature`].
    pub feature: u32,
}

/// A sphere query: centre and radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre.
    pub center: Vec3,
    /// Radius (≥ 0).
    pub radius: f32,
}

/// A sphere sweep: `center + t·dir`, `t` in `[0, max_t]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    /// Start centre.
    pub center: Vec3,
    /// Radius (≥ 0).
    pub radius: f32,
    /// Motion (non-zero).
    pub dir: Vec3,
    /// Largest `t` of interest.
    pub max_t: f32,
}

fn valid_sphere(c: Vec3, r: f32) -> bool {
    c.is_finite() && r.is_finite() && r >= 0.0
}

fn shape_of<'a>(level: &'a ArchivedLevel, inst: &ArchivedInstance) -> ShapeRef<'a> {
    ShapeRef(&level.shapes[inst.shape.to_native() as usize])
}

impl Level {
    /// Every object the sphere touches (distance ≤ `radius`), each once with
    /// its closest point, in instance order. Appends to `out`, which it
    /// clears first, so a caller can reuse one buffer and never allocate.
    pub fn overlap_sphere_into(&self, center: Vec3, radius: f32, out: &mut Vec<SphereOverlap>) {
        out.clear();
        if !valid_sphere(center, radius) {
            return;
        }
        let level = self.archive();
        let ext = Vec3::splat(radius * (1.0 + 1e-5) + 1e-6);
        walk_box(level.top.as_slice(), center - ext, center + ext, |data| {
            let (ii, _) = leaf_range(data);
            let inst = &level.instances[ii as usize];
            let place = Placement::new(inst);
            if let Some(b) = shape_of(level, inst).closest(&place, center, radius) {
                out.push(SphereOverlap {
                    instance: ii,
                    point: b.contact.point.as_vec3(),
                    normal: b.contact.normal.as_vec3(),
                    depth: b.depth(f64::from(radius)) as f32,
                    feature: b.feature,
                });
            }
            false
        });
    }

    /// [`Level::overlap_sphere_into`] into a new vector.
    pub fn overlap_sphere(&self, center: Vec3, radius: f32) -> Vec<SphereOverlap> {
        let mut out = Vec::new();
        self.overlap_sphere_into(center, radius, &mut out);
        out
    }

    /// Whether the sphere touches anything (stops at the first contact).
    pub fn intersects_sphere(&self, center: Vec3, radius: f32) -> bool {
        if !valid_sphere(center, radius) {
            return false;
        }
        let level = self.archive();
        let ext = Vec3::splat(radius * (1.0 + 1e-5) + 1e-6);
        let mut found = false;
        walk_box(level.top.as_slice(), center - ext, center + ext, |data| {
            let (ii, _) = leaf_range(data);
            let inst = &level.instances[ii as usize];
            found = shape_of(level, inst).touches(&Placement::new(inst), center, radius);
            found
        });
        found
    }

    /// The first contact of a sphere moving from `center` along `dir` for
    /// `t` in `[0, max_t]`, against faces, edges and vertices; no
    /// tunnelling at any speed. A sphere that starts in contact reports
    /// `t = 0` with the separating normal.
    pub fn sweep_sphere(
        &self,
        center: Vec3,
        radius: f32,
        dir: Vec3,
        max_t: f32,
    ) -> Option<SweepHit> {
        if !valid_sphere(center, radius)
            || !dir.is_finite()
            || dir == Vec3::ZERO
            || max_t.is_nan()
            || max_t < 0.0
        {
            return None;
        }
        let level = self.archive();
        let mut v = SweepTop {
            level,
            sweep: Sweep {
                center,
                radius,
                dir,
                max_t,
            },
            t_max: max_t,
            best_t: f64::from(max_t),
            best: None,
        };
        let grow = Grow::by_extent(Vec3::splat(radius * (1.0 + 1e-5) + 1e-6));
        walk_ray(
            level.top.as_slice(),
            &SlabRay::new(center, dir),
            &grow,
            &mut v,
        );
        v.best.map(|(hit, ii, feature)| SweepHit {
            t: hit.t as f32,
            point: hit.point.as_vec3(),
            normal: hit.normal.as_vec3(),
            instance: ii,
            feature,
        })
    }

    /// Overlap queries for many spheres on the rayon pool: `out[i]` answers
    /// `spheres[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn overlap_sphere_batch(&self, spheres: &[Sphere], out: &mut [Vec<SphereOverlap>]) {
        super::batch(spheres, out, 64, |s, o| {
            self.overlap_sphere_into(s.center, s.radius, o)
        });
    }

    /// Yes/no sphere tests on the rayon pool.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn intersects_sphere_batch(&self, spheres: &[Sphere], out: &mut [bool]) {
        super::batch(spheres, out, 64, |s, o| {
            *o = self.intersects_sphere(s.center, s.radius)
        });
    }

    /// Sphere sweeps on the rayon pool.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn sweep_sphere_batch(&self, sweeps: &[Sweep], out: &mut [Option<SweepHit>]) {
        super::batch(sweeps, out, 64, |s, o| {
            *o = self.sweep_sphere(s.center, s.radius, s.dir, s.max_t)
        });
    }
}

/// Sweep visitor over the top-level tree. `t_max` (f32) culls boxes;
/// `best_t` is the exact f64 time of the best contact so far, the limit of
/// the exact per-triangle tests.
struct SweepTop<'a> {
    level: &'a ArchivedLevel,
    sweep: Sweep,
    t_max: f32,
    best_t: f64,
    best: Option<(Contact, u32, u32)>, // contact, instance, feature
}

impl RayVisitor for SweepTop<'_> {
    fn t_max(&self) -> f32 {
        self.t_max
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (ii, _) = leaf_range(data);
        let inst = &self.level.instances[ii as usize];
        let place = Placement::new(inst);
        let shape = shape_of(self.level, inst);
        if let Some((hit, feature)) = shape.sweep(&place, &self.sweep, self.best_t, self.t_max)
            && (self.best.is_none() || hit.t < self.best_t)
        {
            self.best_t = hit.t;
            // widen the f32 cull range by an ulp so equal-time contacts
            // elsewhere are not culled by rounding
            self.t_max = next_up(hit.t as f32);
            self.best = Some((hit, ii, feature));
        }
        // a contact at t = 0 cannot be beaten
        self.best.is_some() && self.best_t == 0.0
    }
}
