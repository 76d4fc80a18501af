//! Queries on the TriMesh shape: its 4-wide tree walked in local space,
//! exact triangle tests at the leaves.
//!
//! Rays are transformed into local space once and tested with the
//! watertight ray/triangle test there. Sphere queries cull in local space
//! (an exact ball for similarity placements, the box around the ellipsoid
//! otherwise) and run the exact face/edge/vertex tests on world-space f64
//! copies of the candidate triangles, so any placement is handled exactly.

use super::{LocalRayHit, ShapeContact};
use crate::geom::ray_box::SlabRay;
use crate::geom::ray_triangle::WatertightRay;
use crate::geom::sphere_triangle;
use crate::instance::{Placement, local_radius};
use crate::walk::{Grow, NearVisitor, RayVisitor, TreeRef};
use glam::{DVec3, Vec3};
use kiln_formats::tri_mesh::{ArchivedTriMesh, leaf_triangle};

/// Leaf `leaf` and how many triangles it holds (1 or 2): its triangle
/// slots are `leaf << 1` and, for a pair, the one after.
#[inline(always)]
pub(crate) fn leaf_span(mesh: &ArchivedTriMesh, leaf: u32) -> (u32, u32) {
    (leaf, 1 + u32::from(mesh.leaves[leaf as usize].is_pair()))
}

/// Vertex indices of triangle `slot` (`leaf << 1 | triangle in leaf`).
#[inline]
fn slot_triangle(mesh: &ArchivedTriMesh, slot: u32) -> [u32; 3] {
    leaf_triangle(mesh.corners((slot >> 1) as usize), slot & 1)
}

/// Source triangle id of triangle `slot`: the feature a hit reports.
#[inline]
pub(crate) fn slot_source(mesh: &ArchivedTriMesh, slot: u32) -> u32 {
    mesh.source_id((slot >> 1) as usize, slot & 1)
}

/// The flat-edge bits of the triangle in leaf slot `slot`: bit `k` marks
/// edge `k` (corner `k` to `k + 1`) as one between coplanar triangles.
pub(crate) fn flat_mask(mesh: &ArchivedTriMesh, slot: u32) -> u8 {
    mesh.leaves
        .get((slot >> 1) as usize)
        .map_or(0, |l| l.bits >> (3 * (slot & 1)) & 7)
}

/// Triangle `slot` in world space, f64.
#[inline]
pub(crate) fn world_triangle(place: &Placement, mesh: &ArchivedTriMesh, slot: u32) -> [DVec3; 3] {
    let tri = slot_triangle(mesh, slot);
    let p = |k: usize| place.world_point64(Vec3::from(mesh.vertices.get(tri[k])).as_dvec3());
    [p(0), p(1), p(2)]
}

/// Hit search inside one mesh: closest hit, or (with `any`) the first found.
pub(crate) struct MeshSearch<'a> {
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
        let (leaf, l) = (data, &self.mesh.leaves[data as usize]);
        let (q, count) = (
            self.mesh.corners(data as usize),
            1 + usize::from(l.is_pair()),
        );
        // each corner sheared once, b and c for both triangles
        let p = |k: usize| self.ray.shear(Vec3::from(self.mesh.vertices.get(q[k])));
        // (a, b, c) and (c, b, d); a lone triangle's second slot is never
        // tested (`take(count)`), so `c` fills it and `d` is not loaded
        let (a, b, c) = (p(0), p(1), p(2));
        let tris = [(a, b, c), (c, b, if count == 2 { p(3) } else { c })];
        for (k, &(x, y, z)) in tris.iter().take(count).enumerate() {
            if let Some(th) = WatertightRay::hit(x, y, z, self.t_max)
                && (self.hit.is_none() || th < self.t_max)
            {
                self.t_max = th;
                self.hit = Some((th, leaf << 1 | k as u32));
                if self.any {
                    return true;
                }
            }
        }
        false
    }
}

impl<'a> MeshSearch<'a> {
    /// A search of `mesh` for the local ray `origin + t·dir`, `t ≤ t_max`.
    #[inline]
    pub(crate) fn new(
        mesh: &'a ArchivedTriMesh,
        origin: Vec3,
        dir: Vec3,
        t_max: f32,
        any: bool,
    ) -> Self {
        MeshSearch {
            mesh,
            ray: WatertightRay::new(origin, dir),
            t_max,
            any,
            hit: None,
        }
    }

    /// Asks the CPU to load leaf `leaf`'s corners, which the leaf test
    /// reads through the leaf row: a batch walk calls this a turn before
    /// it tests the leaf, so the loads overlap other rays' work.
    #[inline(always)]
    pub(crate) fn prefetch_leaf(&self, leaf: u32) {
        if (leaf as usize) < self.mesh.leaves.len() {
            for v in self.mesh.corners(leaf as usize) {
                crate::walk::prefetch_bytes(self.mesh.vertices.record(v));
            }
        }
    }

    /// The hit found (after the walk). The normal is the triangle's
    /// winding normal in local space (unnormalised).
    #[inline]
    pub(crate) fn answer(&self) -> Option<LocalRayHit> {
        let (t, slot) = self.hit?;
        let mesh = self.mesh;
        let tri = slot_triangle(mesh, slot);
        let p = |k: usize| Vec3::from(mesh.vertices.get(tri[k]));
        Some(LocalRayHit {
            t,
            normal: (p(1) - p(0)).cross(p(2) - p(0)),
            feature: slot_source(mesh, slot),
            inside: false,
        })
    }
}

/// The closest hit (or with `any`, the first found) of the local ray
/// `origin + t·dir` with `t ≤ t_max`. The normal is the triangle's
/// winding normal in local space (unnormalised).
#[inline]
pub(crate) fn raycast(
    mesh: &ArchivedTriMesh,
    origin: Vec3,
    dir: Vec3,
    t_max: f32,
    any: bool,
) -> Option<LocalRayHit> {
    let mut v = MeshSearch::new(mesh, origin, dir, t_max, any);
    TreeRef::of(mesh).walk_ray(&SlabRay::new(origin, dir), &Grow::NONE, &mut v);
    v.answer()
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
    /// The bound on the local centre's rounding.
    err: f32,
}

impl<F: FnMut(u32) -> Next> NearVisitor for Shrinking<F> {
    #[inline]
    fn radius(&self) -> f32 {
        local_radius(self.world, self.scale) + self.err
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

/// Visits the leaves of `mesh` that a world sphere may touch, culling in
/// local space. With a similarity placement the walk is exact by distance
/// and nearest first, and `leaf` may shrink the world radius still of
/// interest (the best distance so far, so farther subtrees are dropped);
/// otherwise the walk visits the leaves in the box around the ellipsoid
/// the sphere becomes.
fn walk_sphere(
    place: &Placement,
    mesh: &ArchivedTriMesh,
    center: Vec3,
    radius: f32,
    mut leaf: impl FnMut(u32) -> Next,
) {
    let (lc, err) = place.local_point_cull(center);
    let tree = TreeRef::of(mesh);
    match place.similarity() {
        Some(s) => {
            let mut v = Shrinking {
                leaf,
                world: radius,
                scale: s,
                err,
            };
            tree.walk_nearest(lc, &mut v)
        }
        None => {
            let le = place.local_extent(radius) + Vec3::splat(err);
            tree.walk_box(lc - le, lc + le, |d| leaf(d) == Next::Stop)
        }
    }
}

/// The closest point of the mesh to `center` within `radius` (world
/// space, f64), with its distance.
pub(crate) fn closest(
    place: &Placement,
    mesh: &ArchivedTriMesh,
    center: Vec3,
    radius: f32,
) -> Option<ShapeContact> {
    let c = center.as_dvec3();
    let r = f64::from(radius);
    // (contact, distance, triangle slot)
    let mut best: Option<(sphere_triangle::Contact, f64, u32)> = None;
    walk_sphere(place, mesh, center, radius, |leaf| {
        let (first, count) = leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let [a, b, cc] = world_triangle(place, mesh, slot);
            if let Some(hit) = sphere_triangle::overlap(c, r, a, b, cc) {
                let d = (c - hit.point).length();
                if best.is_none_or(|(_, bd, _)| d < bd) {
                    best = Some((hit, d, slot));
                }
            }
        }
        // only something closer than the best so far matters now
        Next::Within(best.map_or(radius, |(_, d, _)| next_up(d as f32)))
    });
    best.map(|(contact, distance, slot)| ShapeContact {
        contact,
        distance,
        feature: slot_source(mesh, slot),
        inside: false,
    })
}

/// Whether the mesh comes within `r` of `c` (world space, f64; stops at
/// the first contact). The walk culls in f32 around `c` rounded, with the
/// radius grown by that rounding.
pub(crate) fn touches(place: &Placement, mesh: &ArchivedTriMesh, c: DVec3, r: f64) -> bool {
    let center = c.as_vec3();
    let rounding = (center.as_dvec3() - c).length() + r * f64::from(f32::EPSILON);
    let radius = next_up((r + rounding) as f32);
    let mut found = false;
    walk_sphere(place, mesh, center, radius, |leaf| {
        let (first, count) = leaf_span(mesh, leaf);
        found = (first << 1..(first << 1) + count).any(|slot| {
            let [a, b, cc] = world_triangle(place, mesh, slot);
            sphere_triangle::overlap(c, r, a, b, cc).is_some()
        });
        if found {
            Next::Stop
        } else {
            Next::Within(radius)
        }
    });
    found
}

/// Sweep visitor inside one mesh. `t_cull` (f32) culls volumes; `limit`
/// is the exact f64 time of the best contact so far, the bound of the
/// exact per-triangle tests.
struct SweepMesh<'a, 'b> {
    mesh: &'a ArchivedTriMesh,
    place: &'b Placement,
    c: DVec3,
    r: f64,
    d: DVec3,
    t_cull: f32,
    limit: f64,
    best: Option<(sphere_triangle::Contact, u32)>,
}

impl RayVisitor for SweepMesh<'_, '_> {
    fn t_max(&self) -> f32 {
        self.t_cull
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = leaf_span(self.mesh, data);
        for slot in first << 1..(first << 1) + count {
            let [a, b, c] = world_triangle(self.place, self.mesh, slot);
            let Some(hit) = sphere_triangle::sweep(self.c, self.r, self.d, self.limit, a, b, c)
            else {
                continue;
            };
            if self.best.is_none() || hit.t < self.limit {
                self.limit = hit.t;
                // widen the f32 cull range by an ulp so equal-time contacts
                // elsewhere are not culled by rounding
                self.t_cull = next_up(hit.t as f32);
                self.best = Some((hit, slot));
                if hit.t == 0.0 {
                    return true;
                }
            }
        }
        false
    }
}

/// The first contact, at a time `≤ limit`, of the world sphere `center +
/// t·dir` (radius `radius`) with the mesh; volumes are culled beyond
/// `t_cull`.
pub(crate) fn sweep(
    place: &Placement,
    mesh: &ArchivedTriMesh,
    s: &crate::shape::Sweep,
    limit: f64,
    t_cull: f32,
) -> Option<(sphere_triangle::Contact, u32)> {
    let (lo, err) = place.local_point_cull(s.center);
    let ld = place.local_vector(s.dir);
    if !lo.is_finite() || !ld.is_finite() || ld == Vec3::ZERO {
        return None;
    }
    // the origin's rounding, and the direction's over the whole motion
    let err = err + ld.length() * 1e-6;
    let ext = place.local_extent(s.radius) + Vec3::splat(err);
    let grow = match place.similarity() {
        Some(sc) => Grow {
            ext: ext.into(),
            radius: local_radius(s.radius, sc) + err,
        },
        None => Grow::by_extent(ext),
    };
    let mut v = SweepMesh {
        mesh,
        place,
        c: s.center.as_dvec3(),
        r: f64::from(s.radius),
        d: s.dir.as_dvec3(),
        t_cull,
        limit,
        best: None,
    };
    TreeRef::of(mesh).walk_ray(&SlabRay::new(lo, ld), &grow, &mut v);
    v.best.map(|(hit, slot)| (hit, slot_source(mesh, slot)))
}

/// The next f32 above a non-negative finite `x` (`f32::next_up` needs a
/// newer compiler than the workspace's minimum).
pub(crate) fn next_up(x: f32) -> f32 {
    if x.is_finite() && x >= 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}
