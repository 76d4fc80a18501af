//! Sphere queries against the whole level: overlaps (which objects a
//! resting sphere touches) and sweeps (when a moving sphere first touches
//! anything).
//!
//! Culling runs in each instance's local space, where the world sphere is
//! bounded by the box `L·c ± r·|row_i(L)|` (exact for the ellipsoid a
//! non-uniform scale makes of it). The exact tests then run in world space
//! and f64 on the candidate triangles, so any transform is handled exactly.

use super::ray_box::SlabRay;
use super::raycast::{slot_source, slot_triangle, transform_point, transform_vector, v3};
use super::sphere_triangle::{self, Contact};
use crate::level::Level;
use crate::walk::{Grow, MeshTree, NearVisitor, RayVisitor, walk_box, walk_ray};
use glam::{DVec3, Vec3};
use kiln_formats::level::{ArchivedInstance, ArchivedLevel, ArchivedTriMesh, leaf_range};

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
    /// Penetration depth: radius minus the distance to `point` (≥ 0).
    pub depth: f32,
    /// Source triangle id of the closest point.
    pub triangle: u32,
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
    /// Source triangle id.
    pub triangle: u32,
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

/// An instance's placement, prepared for exact world-space triangle tests.
struct Frame<'a> {
    inst: &'a ArchivedInstance,
    /// World-from-local in f64, or `None` for the identity.
    world: Option<[f64; 12]>,
}

impl<'a> Frame<'a> {
    fn new(inst: &'a ArchivedInstance) -> Self {
        let m: [f64; 12] = std::array::from_fn(|k| f64::from(inst.world_from_local[k].to_native()));
        const ID: [f64; 12] = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
        Frame {
            inst,
            world: (m != ID).then_some(m),
        }
    }

    #[inline]
    fn point(&self, p: Vec3) -> DVec3 {
        let p = p.as_dvec3();
        match &self.world {
            None => p,
            Some(m) => DVec3::new(
                m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3],
                m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
                m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11],
            ),
        }
    }

    #[inline]
    fn triangle(&self, mesh: &ArchivedTriMesh, slot: u32) -> [DVec3; 3] {
        let tri = slot_triangle(mesh, slot);
        let p = |k: usize| self.point(v3(&mesh.vertices[tri[k] as usize]));
        [p(0), p(1), p(2)]
    }

    /// If world→local is a similarity (equal row lengths, orthogonal rows:
    /// rotation, uniform scale, translation), its scale: a world sphere of
    /// radius `r` is then a local sphere of radius `r·scale`.
    fn similarity_scale(&self) -> Option<f32> {
        let l = &self.inst.local_from_world;
        let row =
            |k: usize| Vec3::new(l[k].to_native(), l[k + 1].to_native(), l[k + 2].to_native());
        let (a, b, c) = (row(0), row(4), row(8));
        let s = a.length();
        let tol = 1e-5 * s * s;
        let similar = (b.length() - s).abs() <= 1e-5 * s
            && (c.length() - s).abs() <= 1e-5 * s
            && a.dot(b).abs() <= tol
            && b.dot(c).abs() <= tol
            && c.dot(a).abs() <= tol;
        similar.then_some(s)
    }

    /// Visits the leaves of `mesh` that a world sphere may touch, culling in
    /// local space. With a similarity transform the walk is exact by
    /// distance and nearest first, and `leaf` may shrink the world radius
    /// still of interest (the best distance so far, so farther subtrees are
    /// dropped); otherwise the walk visits the leaves in the box around the
    /// ellipsoid the sphere becomes.
    fn walk_sphere(
        &self,
        mesh: &ArchivedTriMesh,
        center: Vec3,
        radius: f32,
        mut leaf: impl FnMut(u32) -> Next,
    ) {
        let lc = transform_point(&self.inst.local_from_world, center);
        let tree = MeshTree::of(mesh);
        match self.similarity_scale() {
            Some(s) => {
                let mut v = Shrinking {
                    leaf,
                    world: radius,
                    scale: s,
                };
                tree.walk_nearest(lc, &mut v)
            }
            None => {
                let le = self.local_extent(radius);
                tree.walk_box(lc - le, lc + le, |d| leaf(d) == Next::Stop)
            }
        }
    }

    /// How a world sphere of radius `r` grows local volumes in a sweep.
    fn local_grow(&self, r: f32) -> Grow {
        let ext = self.local_extent(r);
        match self.similarity_scale() {
            Some(s) => Grow {
                ext: ext.into(),
                radius: local_radius(r, s),
            },
            None => Grow::by_extent(ext),
        }
    }

    /// Half-extent, in local space, of the box around a world sphere of radius `r`.
    fn local_extent(&self, r: f32) -> Vec3 {
        let l = &self.inst.local_from_world;
        let row = |k: usize| {
            Vec3::new(l[k].to_native(), l[k + 1].to_native(), l[k + 2].to_native()).length()
        };
        // a hair more than r·|row| so f32 rounding of the local centre
        // cannot cull a triangle that touches
        Vec3::new(row(0), row(4), row(8)) * (r * (1.0 + 1e-5)) + Vec3::splat(1e-6 * r.max(1.0))
    }
}

/// What a sphere walk's leaf visitor asks for next.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Next {
    /// Go on, with only this world radius still of interest.
    Within(f32),
    /// Stop the walk.
    Stop,
}

/// A nearest-first walk's visitor around a leaf closure that may shrink
/// the world radius still of interest.
struct Shrinking<F> {
    leaf: F,
    world: f32,
    scale: f32,
}

impl<F: FnMut(u32) -> Next> NearVisitor for Shrinking<F> {
    #[inline]
    fn radius(&self) -> f32 {
        local_radius(self.world, self.scale)
    }
    #[inline]
    fn leaf(&mut self, data: u32) -> bool {
        match (self.leaf)(data) {
            Next::Stop => true,
            Next::Within(w) => {
                self.world = self.world.min(w);
                false
            }
        }
    }
}

/// A world radius in a similarity frame of scale `s`, grown by a hair so
/// f32 rounding of the local centre cannot cull a triangle that touches.
fn local_radius(r: f32, s: f32) -> f32 {
    r * s * (1.0 + 1e-5) + 1e-6 * r.max(1.0)
}

fn mesh_of<'a>(level: &'a ArchivedLevel, inst: &ArchivedInstance) -> &'a ArchivedTriMesh {
    &level.meshes[inst.mesh.to_native() as usize]
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
        let c = center.as_dvec3();
        let r = f64::from(radius);
        let ext = Vec3::splat(radius * (1.0 + 1e-5) + 1e-6);
        walk_box(level.top.as_slice(), center - ext, center + ext, |data| {
            let (ii, _) = leaf_range(data);
            let inst = &level.instances[ii as usize];
            let mesh = mesh_of(level, inst);
            let frame = Frame::new(inst);
            let mut best: Option<(f64, Contact, u32)> = None;
            frame.walk_sphere(mesh, center, radius, |leaf| {
                let (first, count) = leaf_range(leaf);
                for slot in first << 1..(first << 1) + count {
                    let [a, b, cc] = frame.triangle(mesh, slot);
                    if let Some(hit) = sphere_triangle::overlap(c, r, a, b, cc) {
                        let d = (c - hit.point).length();
                        if best.is_none_or(|(bd, _, _)| d < bd) {
                            best = Some((d, hit, slot));
                        }
                    }
                }
                // only something closer than the best so far matters now
                Next::Within(best.map_or(radius, |(d, _, _)| next_up(d as f32)))
            });
            if let Some((d, hit, slot)) = best {
                out.push(SphereOverlap {
                    instance: ii,
                    point: hit.point.as_vec3(),
                    normal: hit.normal.as_vec3(),
                    depth: (r - d).max(0.0) as f32,
                    triangle: slot_source(mesh, slot),
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
        let c = center.as_dvec3();
        let r = f64::from(radius);
        let ext = Vec3::splat(radius * (1.0 + 1e-5) + 1e-6);
        let mut found = false;
        walk_box(level.top.as_slice(), center - ext, center + ext, |data| {
            let (ii, _) = leaf_range(data);
            let inst = &level.instances[ii as usize];
            let mesh = mesh_of(level, inst);
            let frame = Frame::new(inst);
            frame.walk_sphere(mesh, center, radius, |leaf| {
                let (first, count) = leaf_range(leaf);
                found = (first << 1..(first << 1) + count).any(|slot| {
                    let [a, b, cc] = frame.triangle(mesh, slot);
                    sphere_triangle::overlap(c, r, a, b, cc).is_some()
                });
                if found {
                    Next::Stop
                } else {
                    Next::Within(radius)
                }
            });
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
        v.best.map(|(hit, ii, tri)| SweepHit {
            t: hit.t as f32,
            point: hit.point.as_vec3(),
            normal: hit.normal.as_vec3(),
            instance: ii,
            triangle: tri,
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
    best: Option<(Contact, u32, u32)>, // contact, instance, source triangle
}

impl RayVisitor for SweepTop<'_> {
    fn t_max(&self) -> f32 {
        self.t_max
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (ii, _) = leaf_range(data);
        let inst = &self.level.instances[ii as usize];
        let mesh = mesh_of(self.level, inst);
        let frame = Frame::new(inst);
        let s = self.sweep;
        let lo = transform_point(&inst.local_from_world, s.center);
        let ld = transform_vector(&inst.local_from_world, s.dir);
        if !lo.is_finite() || !ld.is_finite() || ld == Vec3::ZERO {
            return false;
        }
        let grow = frame.local_grow(s.radius);
        let mut v = SweepMesh {
            top: self,
            instance: ii,
            mesh,
            frame: &frame,
            c: s.center.as_dvec3(),
            r: f64::from(s.radius),
            d: s.dir.as_dvec3(),
        };
        MeshTree::of(mesh).walk_ray(&SlabRay::new(lo, ld), &grow, &mut v);
        // a contact at t = 0 cannot be beaten
        self.best.is_some() && self.best_t == 0.0
    }
}

/// Sweep visitor inside one instance's mesh; records contacts in the top
/// visitor, shrinking the shared range.
struct SweepMesh<'a, 'b> {
    top: &'b mut SweepTop<'a>,
    instance: u32,
    mesh: &'a ArchivedTriMesh,
    frame: &'b Frame<'a>,
    c: DVec3,
    r: f64,
    d: DVec3,
}

impl RayVisitor for SweepMesh<'_, '_> {
    fn t_max(&self) -> f32 {
        self.top.t_max
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = leaf_range(data);
        for slot in first << 1..(first << 1) + count {
            let [a, b, c] = self.frame.triangle(self.mesh, slot);
            let Some(hit) =
                sphere_triangle::sweep(self.c, self.r, self.d, self.top.best_t, a, b, c)
            else {
                continue;
            };
            if self.top.best.is_none() || hit.t < self.top.best_t {
                self.top.best_t = hit.t;
                // widen the f32 cull range by an ulp so equal-time contacts
                // elsewhere are not culled by rounding
                self.top.t_max = next_up(hit.t as f32);
                let tri = slot_source(self.mesh, slot);
                self.top.best = Some((hit, self.instance, tri));
                if hit.t == 0.0 {
                    return true;
                }
            }
        }
        false
    }
}

/// The next f32 above a non-negative finite `x` (`f32::next_up` needs a
/// newer compiler than the workspace's minimum).
fn next_up(x: f32) -> f32 {
    if x.is_finite() && x >= 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}
