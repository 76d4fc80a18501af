//! Convex query shapes against one placed shape, each family split into
//! the convex pieces [`crate::geom::probe`] answers for: the triangles a
//! mesh tree hands out, a polytope or box as a whole, a sphere's centre or
//! a capsule's segment with their radius. Everything runs in f64 world
//! space (any placement); the mesh trees cull in local space.

use super::{ShapeRef, Solid, tri_mesh};
use crate::geom::gjk::{OrientedBox, Point, Segment, Support, Triangle};
use crate::geom::probe::{self, Touch};
use crate::geom::ray_box::SlabRay;
use crate::geom::sat::{Edge, Face, Polyhedral};
use crate::instance::{Placement, apply};
use crate::query::Probe;
use crate::walk::{Grow, RayVisitor, TreeRef};
use glam::{DVec3, Vec3};
use kiln_formats::level::leaf_range;
use kiln_formats::polytope::{ArchivedPolytope, NO_TWIN};
use kiln_formats::tri_mesh::ArchivedTriMesh;

/// A polytope under any affine placement, known by its support function
/// and its face normals and edges in world space.
struct PlacedPolytope<'a> {
    p: &'a ArchivedPolytope,
    world: [f64; 12],
    inv: [f64; 12],
}

impl PlacedPolytope<'_> {
    fn local(&self, v: u32) -> DVec3 {
        let p = &self.p.vertices[v as usize];
        DVec3::new(
            f64::from(p[0].to_native()),
            f64::from(p[1].to_native()),
            f64::from(p[2].to_native()),
        )
    }
}

impl Support for PlacedPolytope<'_> {
    fn support(&self, d: DVec3) -> DVec3 {
        let w = &self.world;
        // the local direction whose support maps to d's: Mᵀd
        let ld = DVec3::new(
            w[0] * d.x + w[4] * d.y + w[8] * d.z,
            w[1] * d.x + w[5] * d.y + w[9] * d.z,
            w[2] * d.x + w[6] * d.y + w[10] * d.z,
        );
        let mut best = (f64::NEG_INFINITY, 0u32);
        for v in 0..self.p.vertices.len() as u32 {
            let x = self.local(v).dot(ld);
            if x > best.0 {
                best = (x, v);
            }
        }
        apply(w, self.local(best.1), 1.0)
    }
    fn any_point(&self) -> DVec3 {
        apply(&self.world, self.local(0), 1.0)
    }
}

impl Polyhedral for PlacedPolytope<'_> {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        let l = &self.inv;
        for pl in self.p.planes.iter() {
            let n = DVec3::new(
                f64::from(pl[0].to_native()),
                f64::from(pl[1].to_native()),
                f64::from(pl[2].to_native()),
            );
            f(DVec3::new(
                l[0] * n.x + l[4] * n.y + l[8] * n.z,
                l[1] * n.x + l[5] * n.y + l[9] * n.z,
                l[2] * n.x + l[6] * n.y + l[10] * n.z,
            ));
        }
    }
    fn is_solid(&self) -> bool {
        self.p.planes.len() > 2
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let l = &self.inv;
        let np = self.p.planes.len();
        let (f0, e0) = (faces.len(), edges.len());
        let world: Vec<DVec3> = (0..self.p.vertices.len() as u32)
            .map(|v| apply(&self.world, self.local(v), 1.0))
            .collect();
        for k in 0..np {
            let pl = &self.p.planes[k];
            let n = DVec3::new(
                f64::from(pl[0].to_native()),
                f64::from(pl[1].to_native()),
                f64::from(pl[2].to_native()),
            );
            // normals map by the inverse transpose
            let n = DVec3::new(
                l[0] * n.x + l[4] * n.y + l[8] * n.z,
                l[1] * n.x + l[5] * n.y + l[9] * n.z,
                l[2] * n.x + l[6] * n.y + l[10] * n.z,
            )
            .normalize_or_zero();
            if n == DVec3::ZERO {
                // a degenerate placement: no faces to go by
                faces.truncate(f0);
                return false;
            }
            // the face's own vertices give its support value (f32
            // planes and vertices agree only to rounding)
            let h = self
                .p
                .face(k)
                .iter()
                .map(|v| n.dot(world[v.to_native() as usize]))
                .fold(f64::NEG_INFINITY, f64::max);
            faces.push(Face { n, h });
        }
        for k in 0..np {
            let (lp, tw) = (self.p.face(k), self.p.twins(k));
            for j in 0..lp.len() {
                let (a, b) = (lp[j].to_native(), lp[(j + 1) % lp.len()].to_native());
                let twin = tw[j].to_native();
                if twin == NO_TWIN {
                    // not closed: no Gauss map to go by
                    faces.truncate(f0);
                    edges.truncate(e0);
                    return false;
                }
                if a < b {
                    let (n1, n2) = (faces[f0 + k].n, faces[f0 + usize::from(twin)].n);
                    edges.push(Edge {
                        p: world[a as usize],
                        q: world[b as usize],
                        n1,
                        n2,
                        out: n1 + n2,
                    });
                }
            }
        }
        true
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        for k in 0..self.p.planes.len() {
            let lp = self.p.face(k);
            for j in 0..lp.len() {
                let (a, b) = (lp[j].to_native(), lp[(j + 1) % lp.len()].to_native());
                if a < b {
                    f(apply(&self.world, self.local(b) - self.local(a), 0.0));
                }
            }
        }
    }
}

/// The local box around a world box (centre, half extents), in f32 and
/// grown by a hair for rounding.
fn local_box(place: &Placement, centre: DVec3, half: DVec3) -> (Vec3, Vec3) {
    let l = place.local_matrix();
    let c = place.local_point64(centre);
    let h = DVec3::new(
        l[0].abs() * half.x + l[1].abs() * half.y + l[2].abs() * half.z,
        l[4].abs() * half.x + l[5].abs() * half.y + l[6].abs() * half.z,
        l[8].abs() * half.x + l[9].abs() * half.y + l[10].abs() * half.z,
    );
    let pad = h * 1e-5 + c.abs() * 1e-6 + 1e-6;
    ((c - h - pad).as_vec3(), (c + h + pad).as_vec3())
}

/// The deepest touch of the probe with the mesh's triangles, with the
/// triangle's source id.
fn mesh_touch(place: &Placement, mesh: &ArchivedTriMesh, probe: &Probe) -> Option<(Touch, u32)> {
    let (c, h) = probe.bounds();
    let (lo, hi) = local_box(place, c, h);
    let mut best: Option<(Touch, u32)> = None;
    let centre = probe.centre();
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = leaf_range(leaf);
        for slot in first << 1..(first << 1) + count {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            let flat = tri_mesh::flat_mask(mesh, slot);
            if let Some(t) = probe::touch(&probe.core, probe.radius, &tri, 0.0)
                .map(|t| probe::flatten(t, &tri.0, flat, &probe.core, probe.radius, centre))
                && best.is_none_or(|(b, _)| t.depth > b.depth)
            {
                best = Some((t, tri_mesh::slot_source(mesh, slot)));
            }
        }
        false
    });
    best
}

/// Cast visitor inside one mesh.
struct MeshCast<'a, 'b> {
    mesh: &'a ArchivedTriMesh,
    place: &'b Placement,
    probe: &'b Probe<'b>,
    motion: DVec3,
    /// The probe's centre at the start (the side of a flat floor it is on
    /// does not change along a cast that stops at first contact).
    centre: DVec3,
    ignore_leaving: bool,
    t_cull: f32,
    limit: f64,
    best: Option<(f64, Touch, u32)>,
}

impl RayVisitor for MeshCast<'_, '_> {
    fn t_max(&self) -> f32 {
        self.t_cull
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = leaf_range(data);
        for slot in first << 1..(first << 1) + count {
            let tri = Triangle(tri_mesh::world_triangle(self.place, self.mesh, slot));
            let flat = tri_mesh::flat_mask(self.mesh, slot);
            let (core, radius) = (&self.probe.core, self.probe.radius);
            let Some((t, hit)) = probe::cast(
                core,
                radius,
                self.motion,
                self.limit,
                &tri,
                0.0,
                self.ignore_leaving,
                |t| probe::flatten(t, &tri.0, flat, core, radius, self.centre),
            ) else {
                continue;
            };
            if self.best.is_none() || t < self.limit {
                self.limit = t;
                self.t_cull = tri_mesh::next_up(t as f32);
                self.best = Some((t, hit, tri_mesh::slot_source(self.mesh, slot)));
                if t == 0.0 {
                    return true;
                }
            }
        }
        false
    }
}

/// The first contact of the moving probe with the mesh's triangles.
fn mesh_cast(
    place: &Placement,
    mesh: &ArchivedTriMesh,
    probe: &Probe,
    motion: DVec3,
    limit: f64,
    ignore_leaving: bool,
) -> Option<(f64, Touch, u32)> {
    let (c, h) = probe.bounds();
    let (lo, hi) = local_box(place, c, h);
    let lc = (lo + hi) * 0.5;
    let lm = place.local_vector64(motion).as_vec3();
    if !lm.is_finite() || lm == Vec3::ZERO {
        return None;
    }
    let mut v = MeshCast {
        mesh,
        place,
        probe,
        motion,
        centre: probe.centre(),
        ignore_leaving,
        t_cull: next_up_limit(limit),
        limit,
        best: None,
    };
    TreeRef::of(mesh).walk_ray(
        &SlabRay::new(lc, lm),
        &Grow::by_extent((hi - lo) * 0.5),
        &mut v,
    );
    v.best
}

fn next_up_limit(limit: f64) -> f32 {
    tri_mesh::next_up(limit.min(f64::from(f32::MAX)) as f32)
}

/// A convex piece of a solid shape family in world space.
enum Piece<'a> {
    Point(Point),
    Segment(Segment),
    Box(OrientedBox),
    Polytope(PlacedPolytope<'a>),
}

impl<'a> ShapeRef<'a> {
    /// The convex solid as a world-space piece with its radius (`None`
    /// for meshes and concave solids).
    fn piece(&self, place: &Placement) -> Option<(Piece<'a>, f64)> {
        let s = place.world_scale();
        Some(match self.solid() {
            Solid::Mesh(_) | Solid::Bsp(_) => return None,
            Solid::Convex(super::solid::Convex::Polytope(p)) => (
                Piece::Polytope(PlacedPolytope {
                    p: p.0,
                    world: place.world_matrix(),
                    inv: place.local_matrix(),
                }),
                0.0,
            ),
            Solid::Convex(super::solid::Convex::Box(b)) => {
                let axis = |d: DVec3| place.world_vector64(d) / s;
                (
                    Piece::Box(OrientedBox {
                        center: place.world_point64(DVec3::ZERO),
                        axes: [axis(DVec3::X), axis(DVec3::Y), axis(DVec3::Z)],
                        half: b.0 * s,
                    }),
                    0.0,
                )
            }
            Solid::Rounded(r) => {
                let h = DVec3::new(0.0, r.half, 0.0);
                let (a, b) = (place.world_point64(-h), place.world_point64(h));
                let core = if r.half == 0.0 {
                    Piece::Point(Point(a))
                } else {
                    Piece::Segment(Segment(a, b))
                };
                (core, r.radius * s)
            }
        })
    }

    /// The deepest contact of the probe with this placed shape, with its
    /// feature.
    pub(crate) fn probe_touch(&self, place: &Placement, probe: &Probe) -> Option<(Touch, u32)> {
        if let Some((piece, rc)) = self.piece(place) {
            let t = match &piece {
                Piece::Point(p) => probe::touch(&probe.core, probe.radius, p, rc),
                Piece::Segment(p) => probe::touch(&probe.core, probe.radius, p, rc),
                Piece::Box(p) => probe::touch(&probe.core, probe.radius, p, rc),
                Piece::Polytope(p) => probe::touch(&probe.core, probe.radius, p, rc),
            };
            return t.map(|t| (t, 0));
        }
        match self.solid() {
            Solid::Mesh(m) => mesh_touch(place, m, probe),
            Solid::Bsp(b) => {
                mesh_touch(place, &b.0.surface, probe).or_else(|| inside_solid(place, &b, probe))
            }
            _ => None,
        }
    }

    /// Whether the probe touches this placed shape (no contact computed).
    pub(crate) fn probe_touches(&self, place: &Placement, probe: &Probe) -> bool {
        let (q, r) = (&probe.core, probe.radius);
        if let Some((piece, rc)) = self.piece(place) {
            return match &piece {
                Piece::Point(p) => probe::touches(q, r, p, rc),
                Piece::Segment(p) => probe::touches(q, r, p, rc),
                Piece::Box(p) => probe::touches(q, r, p, rc),
                Piece::Polytope(p) => probe::touches(q, r, p, rc),
            };
        }
        let mesh_touches = |mesh: &ArchivedTriMesh| {
            let (c, h) = probe.bounds();
            let (lo, hi) = local_box(place, c, h);
            let mut found = false;
            TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
                let (first, count) = leaf_range(leaf);
                found = (first << 1..(first << 1) + count).any(|slot| {
                    let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
                    probe::touches(q, r, &tri, 0.0)
                });
                found
            });
            found
        };
        match self.solid() {
            Solid::Mesh(m) => mesh_touches(m),
            Solid::Bsp(b) => {
                mesh_touches(&b.0.surface) || b.contains_local(place.local_point64(q.any_point()))
            }
            _ => false,
        }
    }

    /// The first contact of the probe moving by `t · motion`, `t ≤
    /// limit`, with its time and feature.
    pub(crate) fn probe_cast(
        &self,
        place: &Placement,
        probe: &Probe,
        motion: DVec3,
        limit: f64,
        ignore_leaving: bool,
    ) -> Option<(f64, Touch, u32)> {
        if let Some((piece, rc)) = self.piece(place) {
            let (q, r) = (&probe.core, probe.radius);
            let same = |t: Touch| t;
            let hit = match &piece {
                Piece::Point(p) => probe::cast(q, r, motion, limit, p, rc, ignore_leaving, same),
                Piece::Segment(p) => probe::cast(q, r, motion, limit, p, rc, ignore_leaving, same),
                Piece::Box(p) => probe::cast(q, r, motion, limit, p, rc, ignore_leaving, same),
                Piece::Polytope(p) => probe::cast(q, r, motion, limit, p, rc, ignore_leaving, same),
            };
            return hit.map(|(t, h)| (t, h, 0));
        }
        match self.solid() {
            Solid::Mesh(m) => mesh_cast(place, m, probe, motion, limit, ignore_leaving),
            Solid::Bsp(b) => {
                // wholly inside: no surface to meet, the way out at t = 0
                if let Some((t, f)) = inside_solid(place, &b, probe)
                    && !(ignore_leaving && probe::leaving(t.normal, motion * limit))
                {
                    return Some((0.0, t, f));
                }
                mesh_cast(place, &b.0.surface, probe, motion, limit, ignore_leaving)
            }
            _ => None,
        }
    }
}

/// A probe that touches no surface triangle of a concave solid is wholly
/// inside or wholly outside it. Inside, the answer is the way out through
/// the surface point nearest the shape's centre: the normal points from
/// the centre to that point, and the depth is how far the shape must move
/// along it to clear the surface's tangent plane there. For a sphere that
/// is the exact shortest way out; for other shapes it is the way out
/// through that point, which a concave solid may make longer or shorter
/// than the shortest one.
fn inside_solid(place: &Placement, b: &super::bsp::BspView, probe: &Probe) -> Option<(Touch, u32)> {
    if !b.contains_local(place.local_point64(probe.core.any_point())) {
        return None;
    }
    let c = probe.centre();
    let h = tri_mesh::closest(place, &b.0.surface, c.as_vec3(), f32::MAX)?;
    let out = h.contact.point - c;
    let len = out.length();
    let n = if len > 0.0 {
        out / len
    } else {
        h.contact.normal
    };
    let depth = (h.contact.point - probe.core.support(-n)).dot(n) + probe.radius;
    Some((
        Touch {
            point: h.contact.point,
            normal: n,
            depth: depth.max(0.0),
        },
        h.feature,
    ))
}
