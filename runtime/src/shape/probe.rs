//! Convex query shapes against one placed shape, each family split into
//! the convex pieces [`crate::geom::probe`] answers for: the triangles a
//! mesh tree hands out, a polytope or box as a whole, a sphere's centre or
//! a capsule's segment with their radius. Everything runs in f64 world
//! space (any placement); the mesh trees cull in local space.

use super::{ShapeRef, Solid, tri_mesh};
use crate::geom::gjk::{Moved, OrientedBox, Point, Segment, Support, Triangle};
use crate::geom::probe::{self, Touch};
use crate::geom::ray_box::SlabRay;
use crate::geom::sat::{Edge, Face, Polyhedral};
use crate::geom::sphere_triangle;
use crate::instance::{Placement, apply};
use crate::query::Probe;
use crate::walk::{Grow, RayVisitor, TreeRef, vec3a};
use glam::{DVec3, Vec3};
use kiln_formats::polytope::{ArchivedPolytope, NO_TWIN};
use kiln_formats::tri_mesh::ArchivedTriMesh;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A polytope under any affine placement, known by its support function
/// and its face normals and edges in world space.
struct PlacedPolytope<'a> {
    p: &'a ArchivedPolytope,
    world: [f64; 12],
    inv: [f64; 12],
}

thread_local! {
    /// A placed polytope's vertices in world space, for its edges: a
    /// buffer reused by every call on a thread.
    static WORLD_VERTICES: std::cell::RefCell<Vec<DVec3>> = const { std::cell::RefCell::new(Vec::new()) };
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

    /// Face `k`'s local normal `n` and its world normal `m = Lᵀ n`
    /// (normals map by the inverse transpose; not unit).
    fn world_normal(&self, k: usize) -> (DVec3, DVec3) {
        let (l, pl) = (&self.inv, &self.p.planes[k]);
        let n = DVec3::new(
            f64::from(pl[0].to_native()),
            f64::from(pl[1].to_native()),
            f64::from(pl[2].to_native()),
        );
        let m = DVec3::new(
            l[0] * n.x + l[4] * n.y + l[8] * n.z,
            l[1] * n.x + l[5] * n.y + l[9] * n.z,
            l[2] * n.x + l[6] * n.y + l[10] * n.z,
        );
        (n, m)
    }

    /// Appends the faces in world space; `false` (appending nothing) for a
    /// degenerate placement, which leaves no faces to go by.
    fn push_faces(&self, faces: &mut Vec<Face>) -> bool {
        let (l, f0) = (&self.inv, faces.len());
        // the local translation: a world point x is L x + t locally
        let t = DVec3::new(l[3], l[7], l[11]);
        for k in 0..self.p.planes.len() {
            // m · x = n · (L x) = n · (v − t) for the world point x of a
            // local point v: the support value in world space from the
            // face's own vertices (f32 planes and vertices agree only to
            // rounding), without placing them
            let (n, m) = self.world_normal(k);
            let len = m.length();
            if !(len > 0.0 && len.is_finite()) {
                faces.truncate(f0);
                return false;
            }
            let h = self
                .p
                .face(k)
                .iter()
                .map(|v| n.dot(self.local(v.to_native())))
                .fold(f64::NEG_INFINITY, f64::max);
            faces.push(Face {
                n: m / len,
                h: (h - n.dot(t)) / len,
            });
        }
        true
    }

    /// Appends the edges in world space, with their faces' normals from
    /// `faces` (this polytope's, in order), placing the vertices into
    /// `world`; `false` (appending nothing) where a face has no twin
    /// across an edge: not closed, no Gauss map to go by.
    fn push_edges(&self, world: &mut Vec<DVec3>, faces: &[Face], edges: &mut Vec<Edge>) -> bool {
        let e0 = edges.len();
        world.clear();
        world.extend(
            (0..self.p.vertices.len() as u32).map(|v| apply(&self.world, self.local(v), 1.0)),
        );
        for k in 0..self.p.planes.len() {
            let (lp, tw) = (self.p.face(k), self.p.twins(k));
            for j in 0..lp.len() {
                let (a, b) = (lp[j].to_native(), lp[(j + 1) % lp.len()].to_native());
                let twin = tw[j].to_native();
                if twin == NO_TWIN {
                    edges.truncate(e0);
                    return false;
                }
                if a < b {
                    let (n1, n2) = (faces[k].n, faces[usize::from(twin)].n);
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
        for k in 0..self.p.planes.len() {
            f(self.world_normal(k).1);
        }
    }
    fn is_solid(&self) -> bool {
        self.p.planes.len() > 2
    }
    fn solid_faces(&self, faces: &mut Vec<Face>) -> bool {
        self.is_solid() && self.push_faces(faces)
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let f0 = faces.len();
        if !self.push_faces(faces) {
            return false;
        }
        let done = WORLD_VERTICES.with(|cell| match cell.try_borrow_mut() {
            Ok(mut world) => self.push_edges(&mut world, &faces[f0..], edges),
            // not reached (nothing builds features while building them)
            Err(_) => self.push_edges(&mut Vec::new(), &faces[f0..], edges),
        });
        if !done {
            faces.truncate(f0);
        }
        done
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

/// A triangle the probe's box meets, waiting for its exact test.
struct Candidate {
    /// An upper bound of its contact's depth ([`depth_bound`]).
    bound: f64,
    /// Its place in the tree walk (ties go to the earlier).
    order: u32,
    slot: u32,
    tri: [DVec3; 3],
}

thread_local! {
    /// The candidates of [`mesh_touch`], reused by every call on a thread.
    static CANDIDATES: std::cell::RefCell<Vec<Candidate>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An upper bound of the depth [`probe::touch`] then [`probe::flatten`]
/// can give `q` grown by `rq` against `tri` (`centre`: the probe's
/// centre, as `flatten` takes it), from one support call: how far `q`
/// must move along the triangle's normal, on the centre's side, to clear
/// its plane, plus `rq` (both sides' larger where the centre is on the
/// plane). The separating-axis depth is a minimum over axes that include
/// both of the triangle's normals, the expanding polytope's is that
/// minimum to its tolerance, a flattened contact's is this very value or its own,
/// and cores apart by `g` (at least the gap across the plane) touch to
/// `rq − g`, which this also bounds. `+∞` for a degenerate triangle.
fn depth_bound(q: &impl Support, rq: f64, tri: &[DVec3; 3], centre: DVec3) -> f64 {
    let n = (tri[1] - tri[0]).cross(tri[2] - tri[0]);
    let n2 = n.length_squared();
    if n2 == 0.0 || !n2.is_finite() {
        return f64::INFINITY;
    }
    let n = n / n2.sqrt();
    let side = (centre - tri[0]).dot(n);
    // how far q moves along n (resp. −n) to clear the plane
    let up = || (tri[0] - q.support(-n)).dot(n);
    let down = || (q.support(n) - tri[0]).dot(n);
    let d = if side > 0.0 {
        up()
    } else if side < 0.0 {
        down()
    } else {
        up().max(down())
    };
    d + rq
}

/// The deepest touch of the probe with the mesh's triangles, with the
/// triangle's source id; of equally deep ones, the first the tree walk
/// meets.
///
/// Branch and bound: every triangle the probe's box meets gets a cheap
/// upper bound of its depth ([`depth_bound`]), and the exact tests run
/// from the highest bound down, stopping where the bound falls below the
/// deepest contact found (by more than rounding could blur). Triangles
/// under a probe that rests on a surface are many, but one or two are
/// the deepest; the answer is the one testing them all in walk order
/// would give.
fn mesh_touch(place: &Placement, mesh: &ArchivedTriMesh, probe: &Probe) -> Option<(Touch, u32)> {
    CANDIDATES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut c) => mesh_touch_in(place, mesh, probe, &mut c),
        // a nested call (none today) finds the scratch taken: it uses its own
        Err(_) => mesh_touch_in(place, mesh, probe, &mut Vec::new()),
    })
}

/// [`mesh_touch`] with `cands` as its scratch.
fn mesh_touch_in(
    place: &Placement,
    mesh: &ArchivedTriMesh,
    probe: &Probe,
    cands: &mut Vec<Candidate>,
) -> Option<(Touch, u32)> {
    let (c, h) = probe.bounds();
    let (lo, hi) = local_box(place, c, h);
    let centre = probe.centre();
    let (core, radius) = (&probe.core, probe.radius);
    cands.clear();
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let tri = tri_mesh::world_triangle(place, mesh, slot);
            cands.push(Candidate {
                bound: depth_bound(core, radius, &tri, centre),
                order: cands.len() as u32,
                slot,
                tri,
            });
        }
        false
    });
    // rounding of the bound and the exact tests, and the expanding
    // polytope's tolerance, stay far below this
    let slack = 1e-8 * (c.abs().max_element() + h.max_element() + radius + 1.0);
    // highest bound first; equal bounds in walk order
    cands.sort_unstable_by(|a, b| b.bound.total_cmp(&a.bound).then(a.order.cmp(&b.order)));
    let mut best: Option<(Touch, u32, u32, [DVec3; 3])> = None;
    for cand in cands.iter() {
        // no contact is deeper than its bound, and every depth is ≥ 0
        let floor = best.map_or(0.0, |(b, ..)| b.depth);
        if cand.bound + slack < floor {
            break;
        }
        let tri = Triangle(cand.tri);
        let flat = tri_mesh::flat_mask(mesh, cand.slot);
        if let Some(t) = probe::touch(core, radius, &tri, 0.0)
            .map(|t| flat_region(t, &tri.0, flat, core, radius, centre, cands))
            && best.is_none_or(|(b, _, order, _)| {
                t.depth > b.depth || (t.depth == b.depth && cand.order < order)
            })
        {
            best = Some((
                t,
                tri_mesh::slot_source(mesh, cand.slot),
                cand.order,
                cand.tri,
            ));
        }
    }
    best.map(|(t, source, _, tri)| (probe::settle(core, radius, &Triangle(tri), 0.0, t), source))
}

/// A mesh triangle's contact `t` seen through its flat edges, for an
/// overlap, which sees the triangles near the shape (`cands`): where the
/// contact lies on flat edges only and every corner of the shape that
/// reaches below the face's plane lies over a triangle of that plane among
/// them, the shape is over the flat region, whose surface there is the
/// plane: the contact takes the face normal and the depth that clears the
/// plane (what the region as a whole asks; a lone triangle of it can be
/// left sideways by less). Elsewhere, [`probe::flatten`].
fn flat_region(
    t: Touch,
    tri: &[DVec3; 3],
    flat: u8,
    core: &crate::query::Core,
    radius: f64,
    centre: DVec3,
    cands: &[Candidate],
) -> Touch {
    let Some((n, clear)) = probe::flat_face(&t, tri, flat, core, radius, centre) else {
        return t;
    };
    if probe::agrees(clear, t.depth, tri, centre, radius) {
        return Touch { normal: n, ..t };
    }
    let p0 = tri[0];
    let size = p0.abs().max_element() + centre.abs().max_element() + radius + 1.0;
    let eps = 1e-7 * size;
    // a corner on a shared edge of two triangles is over both, to rounding
    // (a distance: the decision moves the depth by about as much)
    let edge_eps = 1e-9 * size;
    // the triangles of the face's plane among those near the shape
    let coplanar = |c: &&Candidate| c.tri.iter().all(|x| (*x - p0).dot(n).abs() <= eps);
    let mut over = true;
    core.for_each_vertex(&mut |v| {
        let h = (v - p0).dot(n);
        if !over || h - radius >= 0.0 {
            return;
        }
        let p = v - n * h;
        over = cands.iter().filter(coplanar).any(|c| {
            let [a, b, cc] = c.tri;
            let m = (b - a).cross(cc - a);
            let m2 = m.length_squared();
            m2 > 0.0
                && [(a, b), (b, cc), (cc, a)].iter().all(|&(x, y)| {
                    (y - x).cross(p - x).dot(m) >= -edge_eps * m2.sqrt() * (y - x).length()
                })
        });
    });
    if over {
        // the point under the shape's deepest corner, on the plane
        let s = core.support(-n);
        Touch {
            point: s - n * (s - p0).dot(n),
            normal: n,
            depth: clear.max(0.0),
        }
    } else {
        t
    }
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
    leave: Option<DVec3>,
    t_cull: f32,
    limit: f64,
    best: Option<(f64, Touch, u32)>,
}

impl RayVisitor for MeshCast<'_, '_> {
    fn t_max(&self) -> f32 {
        self.t_cull
    }

    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = tri_mesh::leaf_span(self.mesh, data);
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
                self.leave,
                |t| probe::flatten(t, &tri.0, flat, core, radius, self.centre),
            ) else {
                continue;
            };
            // the first contact; of those at the start, the deepest (as an
            // overlap answers)
            let better = match self.best {
                None => true,
                Some((bt, bh, _)) => t < bt || (t == 0.0 && bt == 0.0 && hit.depth > bh.depth),
            };
            if better {
                self.limit = t;
                self.t_cull = tri_mesh::next_up(t as f32);
                self.best = Some((t, hit, tri_mesh::slot_source(self.mesh, slot)));
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
    leave: Option<DVec3>,
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
        leave,
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
            let (q, r) = (&probe.core, probe.radius);
            let t = match &piece {
                Piece::Point(p) => probe::point_touch(&q.closed(), r, p.0, rc)
                    .unwrap_or_else(|| probe::touch(q, r, p, rc))
                    .map(|t| probe::settle(q, r, p, rc, t)),
                Piece::Segment(p) => {
                    probe::touch(q, r, p, rc).map(|t| probe::settle(q, r, p, rc, t))
                }
                Piece::Box(p) => probe::touch(q, r, p, rc).map(|t| probe::settle(q, r, p, rc, t)),
                Piece::Polytope(p) => {
                    probe::touch(q, r, p, rc).map(|t| probe::settle(q, r, p, rc, t))
                }
            };
            return t.map(|t| (t, 0));
        }
        match self.solid() {
            Solid::Mesh(m) => mesh_touch(place, m, probe),
            Solid::Bsp(b) => solid_touch(place, &b, probe),
            _ => None,
        }
    }

    /// Whether the probe touches this placed shape (no contact computed).
    pub(crate) fn probe_touches(&self, place: &Placement, probe: &Probe) -> bool {
        let (q, r) = (&probe.core, probe.radius);
        if let Some((piece, rc)) = self.piece(place) {
            return match &piece {
                Piece::Point(p) => probe::point_touches(&q.closed(), r, p.0, rc)
                    .unwrap_or_else(|| probe::touches(q, r, p, rc)),
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
                let (first, count) = tri_mesh::leaf_span(mesh, leaf);
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
        leave: Option<DVec3>,
    ) -> Option<(f64, Touch, u32)> {
        if let Some((piece, rc)) = self.piece(place) {
            let (q, r) = (&probe.core, probe.radius);
            let same = |t: Touch| (t, t.normal);
            let hit = match &piece {
                Piece::Point(p) => probe::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Segment(p) => probe::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Box(p) => probe::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Polytope(p) => probe::cast(q, r, motion, limit, p, rc, leave, same),
            };
            return hit.map(|(t, h)| (t, h, 0));
        }
        match self.solid() {
            Solid::Mesh(m) => mesh_cast(place, m, probe, motion, limit, leave),
            Solid::Bsp(b) => {
                // centred inside: the way out of the solid at t = 0
                if let Some((t, f)) = inside_solid(place, &b, probe) {
                    return (!leave.is_some_and(|whole| probe::leaving(t.normal, whole)))
                        .then_some((0.0, t, f));
                }
                let hit = mesh_cast(place, &b.0.surface, probe, motion, limit, leave)?;
                if hit.0 > 0.0 {
                    return Some(hit);
                }
                // in contact at the start: the way out of the solid, as an
                // overlap answers, unless the motion leaves along it (the
                // triangle the motion presses into then answers)
                match solid_touch(place, &b, probe) {
                    Some((t, f)) if !leave.is_some_and(|whole| probe::leaving(t.normal, whole)) => {
                        Some((0.0, t, f))
                    }
                    _ => Some(hit),
                }
            }
            _ => None,
        }
    }
}

/// The contact of a probe with a concave solid: the least move along one
/// direction that frees the shape from the solid, so that a shape is never
/// pushed further in, nor out of one triangle into another.
///
/// - Centred inside: [`inside_solid`].
/// - Centred outside and touching the surface: the deepest surface
///   triangle's contact, where moving by its depth along its normal frees
///   the shape (the common case, checked by one more walk); else the
///   shorter of the ways out ([`exit_along`]) along that normal and along
///   the direction from the surface point nearest the centre to the
///   centre (outwards). No way out is shallower than the deepest
///   triangle's: freeing the shape frees it from that triangle too.
///
/// The point is then a surface point in the shape ([`surface_point`]).
pub(crate) fn solid_touch(
    place: &Placement,
    b: &super::bsp::BspView,
    probe: &Probe,
) -> Option<(Touch, u32)> {
    solid_way_out(place, b, probe).map(|(t, f)| (surface_point(place, b, probe, t), f))
}

/// [`solid_touch`] with the point where the moved shape last touches.
fn solid_way_out(
    place: &Placement,
    b: &super::bsp::BspView,
    probe: &Probe,
) -> Option<(Touch, u32)> {
    if let Some(inside) = inside_way_out(place, b, probe) {
        return Some(inside);
    }
    let (t, f) = mesh_touch(place, &b.0.surface, probe)?;
    if frees(place, b, probe, t.normal, t.depth) {
        return Some((t, f));
    }
    let c = probe.centre();
    let mut best = exit_along(place, b, probe, t.normal);
    if let Some(near) = tri_mesh::closest(place, &b.0.surface, c.as_vec3(), f32::MAX)
        && near.distance > 0.0
    {
        let out = (c - near.contact.point) / near.distance;
        if let Some(other) = exit_along(place, b, probe, out)
            && best.is_none_or(|(x, _)| other.0.depth < x.depth)
        {
            best = Some(other);
        }
    }
    best.or(Some((t, f)))
}

/// Whether the probe moved by `depth` (and a hair) along `n` is free of
/// the solid: it overlaps no surface triangle, and its centre is outside.
fn frees(place: &Placement, b: &super::bsp::BspView, probe: &Probe, n: DVec3, depth: f64) -> bool {
    let (c, h) = probe.bounds();
    let size = c.abs().max_element() + h.max_element() + 1.0;
    let v = n * (depth + 1e-7 * size);
    if b.contains_local(place.local_point64(probe.centre() + v)) {
        return false;
    }
    let moved = Moved(&probe.core, v);
    let (lo, hi) = local_box(place, c + v, h);
    let mesh = &b.0.surface;
    let mut touched = false;
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        touched = (first << 1..(first << 1) + count).any(|slot| {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            probe::touch(&moved, probe.radius, &tri, 0.0).is_some_and(|t| t.depth > 1e-9 * size)
        });
        touched
    });
    !touched
}

/// The way out of a concave solid for a probe whose centre is inside
/// it, whatever else it touches: the solid, not the surface triangles
/// near it, is what the shape must leave (a triangle's own contact would
/// push a shape that is mostly inside further in).
///
/// The direction is from the centre to the surface point nearest it
/// (outwards: the centre is inside), and the depth is the least distance
/// along it that frees the shape from the solid ([`exit_along`]). For a
/// sphere this is the shortest way out wherever the solid is convex
/// around the nearest point; for other shapes and pinched solids it is
/// the shortest way out along that direction, which is always a way out.
/// The point is a surface point in the shape ([`surface_point`]), or,
/// for a shape wholly inside, where the shape, moved by the depth,
/// touches the surface it last leaves; the feature is that triangle's
/// source id.
pub(crate) fn inside_solid(
    place: &Placement,
    b: &super::bsp::BspView,
    probe: &Probe,
) -> Option<(Touch, u32)> {
    inside_way_out(place, b, probe).map(|(t, f)| (surface_point(place, b, probe, t), f))
}

/// A contact `t` with a concave solid with its point moved to the
/// surface point in the shape farthest along its normal, over the
/// surface triangles the shape touches ([`probe::settle`] on each); `t`
/// as it is where the shape touches none (wholly inside).
fn surface_point(place: &Placement, b: &super::bsp::BspView, probe: &Probe, t: Touch) -> Touch {
    let (c, h) = probe.bounds();
    let (lo, hi) = local_box(place, c, h);
    let mesh = &b.0.surface;
    let (core, radius) = (&probe.core, probe.radius);
    let mut best: Option<DVec3> = None;
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            if let Some(own) = probe::touch(core, radius, &tri, 0.0) {
                let own = Touch {
                    normal: t.normal,
                    ..own
                };
                // a triangle the shape reaches none of (it only grazes it,
                // to rounding) offers no point
                let Some(p) = probe::settled_point(core, radius, &tri, 0.0, own) else {
                    continue;
                };
                if best.is_none_or(|b| p.dot(t.normal) > b.dot(t.normal)) {
                    best = Some(p);
                }
            }
        }
        false
    });
    best.map_or(t, |point| Touch { point, ..t })
}

/// [`inside_solid`] with the point where the moved shape last touches.
fn inside_way_out(
    place: &Placement,
    b: &super::bsp::BspView,
    probe: &Probe,
) -> Option<(Touch, u32)> {
    let c = probe.centre();
    if !b.contains_local(place.local_point64(c)) {
        return None;
    }
    let near = tri_mesh::closest(place, &b.0.surface, c.as_vec3(), f32::MAX)?;
    let out = near.contact.point - c;
    let len = out.length();
    let n = if len > 0.0 {
        out / len
    } else {
        near.contact.normal
    };
    exit_along(place, b, probe, n).or(Some((
        // no way out was found along n (rounding at a degenerate
        // surface): the nearest point's tangent plane, as before
        Touch {
            point: near.contact.point,
            normal: n,
            depth: ((near.contact.point - probe.core.support(-n)).dot(n) + probe.radius).max(0.0),
        },
        near.feature,
    )))
}

/// A surface triangle on the way out ([`exit_along`]), with bounds of
/// the interval of distances along the way at which the shape touches it.
struct Span {
    /// No sooner than this.
    first: f64,
    /// No later than this.
    last: f64,
    v: [DVec3; 3],
    slot: u32,
}

/// A distance along the way out and a span's index, ordered by the
/// distance (then the index).
#[derive(Clone, Copy, PartialEq)]
struct Key(f64, usize);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Collects the surface triangles a moving probe's volume reaches.
struct Reached<'a> {
    slots: &'a mut Vec<u32>,
    mesh: &'a ArchivedTriMesh,
}

impl RayVisitor for Reached<'_> {
    fn t_max(&self) -> f32 {
        1.0
    }
    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = tri_mesh::leaf_span(self.mesh, data);
        self.slots.extend(first << 1..(first << 1) + count);
        false
    }
}

/// The least distance `s ≥ 0` such that the probe moved by `s · n` (a
/// unit world direction) is free of the concave solid `b`: it overlaps no
/// surface triangle and lies outside. Each surface triangle the probe
/// meets while moving along `n` is met over one interval of `s` (a convex
/// shape moving along a line against a convex piece), found by a cast in
/// from each end; between the intervals the shape touches no surface and
/// is wholly inside or wholly outside, which the point-in-solid test of
/// its centre tells. The first gap outside is the way out.
pub(crate) fn exit_along(
    place: &Placement,
    b: &super::bsp::BspView,
    probe: &Probe,
    n: DVec3,
) -> Option<(Touch, u32)> {
    let mesh = &b.0.surface;
    let (core, radius) = (&probe.core, probe.radius);
    let n = n.normalize();
    // far enough along n that the probe is past every surface point
    let (lo, hi) = (vec3a(&mesh.min).as_dvec3(), vec3a(&mesh.max).as_dvec3());
    let mut far_surface = f64::NEG_INFINITY;
    for k in 0..8 {
        let corner = DVec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        );
        far_surface = far_surface.max(place.world_point64(corner).dot(n));
    }
    let trailing = core.support(-n).dot(n) - radius;
    let size = far_surface.abs() + trailing.abs() + radius + 1.0;
    let reach = (far_surface - trailing).max(0.0) + 1e-3 * size;
    let motion = n * reach;
    // the triangles within the swept volume
    let (c, h) = probe.bounds();
    let (blo, bhi) = local_box(place, c, h);
    let lm = place.local_vector64(motion).as_vec3();
    if !lm.is_finite() || lm == Vec3::ZERO {
        return None;
    }
    let mut slots = Vec::new();
    TreeRef::of(mesh).walk_ray(
        &SlabRay::new((blo + bhi) * 0.5, lm),
        &Grow::by_extent((bhi - blo) * 0.5),
        &mut Reached {
            slots: &mut slots,
            mesh,
        },
    );
    let same = |t: Touch| (t, t.normal);
    let far = Moved(core, motion);
    // a sphere's casts in closed form (the general casts' conservative
    // advancement costs ten times as much, and spheres are most queries)
    let sphere = match core {
        crate::query::Core::Point(p) => Some(p.0),
        _ => None,
    };
    // where the moving probe meets each triangle, and (asked only for
    // the triangles the walk below reaches) where it leaves it, by a
    // cast back from the far end
    let enter = |v: &[DVec3; 3]| match sphere {
        Some(c) => sphere_triangle::sweep(c, radius, motion, 1.0, v[0], v[1], v[2]).map(|h| h.t),
        None => probe::cast(core, radius, motion, 1.0, &Triangle(*v), 0.0, None, same).map(|h| h.0),
    };
    let leave = |v: &[DVec3; 3]| match sphere {
        Some(c) => {
            sphere_triangle::sweep(c + motion, radius, -motion, 1.0, v[0], v[1], v[2]).map(|h| {
                let touch = Touch {
                    point: h.point,
                    normal: h.normal,
                    depth: 0.0,
                };
                (h.t, touch)
            })
        }
        None => probe::cast(&far, radius, -motion, 1.0, &Triangle(*v), 0.0, None, same),
    };
    // Each triangle's interval of `s` is bounded without a cast: the
    // shape meets it no sooner than its front reaches the triangle's
    // lowest point along n, and touches it no later than its back passes
    // the highest. A triangle whose interval ends by the current `s` can
    // neither move `s` on nor close a gap past it, so it is dropped
    // uncast; the others are cast in from their end only once their
    // bound says they may have been met (Hjaltason and Samet, "Distance
    // browsing in spatial databases", 1999), and out from the far end
    // highest bound first.
    // The shape also lies within a ball about its centre, which meets the
    // triangle only where the centre's line passes within the sum of the
    // two balls' radii of the triangle's own ball (a triangle the line
    // passes farther off is never met).
    let front = core.support(n).dot(n) + radius;
    let slack = 1e-9 * size;
    let centre = probe.centre();
    let mut ball = 0.0f64;
    core.for_each_vertex(&mut |x| ball = ball.max((x - centre).length()));
    let ball = ball + radius;
    let mut spans: Vec<Span> = slots
        .iter()
        .filter_map(|&slot| {
            let v = tri_mesh::world_triangle(place, mesh, slot);
            let (lo, hi) = v
                .iter()
                .map(|x| x.dot(n))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                    (lo.min(d), hi.max(d))
                });
            let mid = (v[0] + v[1] + v[2]) / 3.0;
            let own = v.iter().map(|x| (*x - mid).length()).fold(0.0, f64::max);
            let along = (mid - centre).dot(n);
            let off = (mid - centre - n * along).length_squared();
            let reach = (own + ball) * (1.0 + 1e-9) + slack;
            let half = (reach * reach - off).max(0.0).sqrt();
            if off > reach * reach {
                return None;
            }
            Some(Span {
                first: (lo - front).max(along - half) - slack,
                last: (hi - trailing).min(along + half) + slack,
                v,
                slot,
            })
        })
        .collect();
    spans.sort_unstable_by(|a, b| a.first.total_cmp(&b.first).then(a.slot.cmp(&b.slot)));
    let mut at: Option<(Touch, u32)> = None;
    let mut s = 0.0f64;
    // spans[next..]: not looked at yet; `near`: those whose bound allows
    // them to be met by s, latest bound first, `true` where known to be
    // met (else not cast in yet); `ahead`: met past s, earliest first
    let mut next = 0;
    let mut near: BinaryHeap<(Key, bool)> = BinaryHeap::new();
    let mut ahead: BinaryHeap<Reverse<Key>> = BinaryHeap::new();
    loop {
        while let Some(sp) = spans.get(next)
            && sp.first <= s + slack
        {
            near.push((Key(sp.last, next), false));
            next += 1;
        }
        while let Some(&Reverse(Key(e, i))) = ahead.peek()
            && e <= s + slack
        {
            ahead.pop();
            near.push((Key(spans[i].last, i), true));
        }
        if let Some((Key(last, i), known)) = near.pop() {
            if at.is_some() && last <= s {
                // nor any other near one: their bounds are no later
                near.clear();
                continue;
            }
            if !known {
                match enter(&spans[i].v).map(|e| e * reach) {
                    Some(e) if e <= s + slack => {}
                    Some(e) => {
                        ahead.push(Reverse(Key(e, i)));
                        continue;
                    }
                    None => continue,
                }
            }
            let Some((back, touch)) = leave(&spans[i].v) else {
                continue;
            };
            let out = (1.0 - back) * reach;
            if out > s || at.is_none() {
                s = s.max(out);
                at = Some((touch, tri_mesh::slot_source(mesh, spans[i].slot)));
            }
            continue;
        }
        // none met by s: the next span the shape meets, exactly (no span
        // whose bound is later than a known meeting meets it sooner)
        while let Some(sp) = spans.get(next)
            && ahead.peek().is_none_or(|Reverse(Key(e, _))| sp.first <= *e)
        {
            if (at.is_none() || sp.last > s)
                && let Some(e) = enter(&sp.v)
            {
                ahead.push(Reverse(Key(e * reach, next)));
            }
            next += 1;
        }
        let Some(Reverse(Key(e, i))) = ahead.pop() else {
            break;
        };
        // a gap from s to that meeting, touching no surface: the shape
        // is wholly outside or wholly inside there
        let mid = (s + e) * 0.5;
        if at.is_some() && !b.contains_local(place.local_point64(centre + n * mid)) {
            break;
        }
        near.push((Key(spans[i].last, i), true));
    }
    let (last, source) = at?;
    Some((
        Touch {
            point: last.point,
            normal: n,
            depth: s,
        },
        source,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::placed;
    use crate::{ConvexHull, Level, Pose, QueryShape};
    use glam::{DAffine3, DQuat, Quat};
    use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
    use kiln_geometry::rng::Rng;

    /// A level of `mesh` placed once under each of `transforms`, baked as
    /// `collider`; instance `i` is placement `i`.
    fn placed_copies(mesh: SceneMesh, transforms: &[DAffine3], collider: &str) -> Level {
        let scene = Scene {
            meshes: vec![mesh],
            instances: transforms
                .iter()
                .enumerate()
                .map(|(i, &transform)| SceneInstance {
                    name: format!("{collider}{i}"),
                    mesh: 0,
                    transform,
                    extras_collider: Some(collider.into()),
                    ..SceneInstance::default()
                })
                .collect(),
            ..Scene::default()
        };
        Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
    }

    /// The deepest touch over every triangle the probe's box meets, in
    /// walk order, the first of equally deep ones: what [`mesh_touch`]
    /// must answer.
    fn every_triangle(
        place: &Placement,
        mesh: &ArchivedTriMesh,
        probe: &Probe,
    ) -> Option<(Touch, u32)> {
        let (c, h) = probe.bounds();
        let (lo, hi) = local_box(place, c, h);
        let centre = probe.centre();
        let mut all = Vec::new();
        TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
            let (first, count) = tri_mesh::leaf_span(mesh, leaf);
            for slot in first << 1..(first << 1) + count {
                all.push(Candidate {
                    bound: 0.0,
                    order: all.len() as u32,
                    slot,
                    tri: tri_mesh::world_triangle(place, mesh, slot),
                });
            }
            false
        });
        let mut best: Option<(Touch, u32, Triangle)> = None;
        for c in &all {
            let tri = Triangle(c.tri);
            let flat = tri_mesh::flat_mask(mesh, c.slot);
            if let Some(t) = probe::touch(&probe.core, probe.radius, &tri, 0.0)
                .map(|t| flat_region(t, &tri.0, flat, &probe.core, probe.radius, centre, &all))
                && best.is_none_or(|(b, ..)| t.depth > b.depth)
            {
                best = Some((t, tri_mesh::slot_source(mesh, c.slot), tri));
            }
        }
        best.map(|(t, source, tri)| {
            (
                probe::settle(&probe.core, probe.radius, &tri, 0.0, t),
                source,
            )
        })
    }

    /// A placed polytope's faces listed alone (from its local planes and
    /// vertices, nothing placed) are the faces its features list (from
    /// its vertices placed in world space), to rounding, under mirrored,
    /// sheared, non-uniform and far placements.
    #[test]
    fn placed_polytope_faces_alone_are_its_features_faces() {
        let mut rng = Rng(0x00fa_ce5a_10e0_0001);
        let pts: Vec<[f32; 3]> = (0..40)
            .map(|_| {
                (rng.unit() * DVec3::new(1.0, 0.6, 0.8))
                    .as_vec3()
                    .to_array()
            })
            .collect();
        let hull = crate::geom::hull::hull(
            &pts.iter()
                .map(|p| Vec3::from(*p).as_dvec3())
                .collect::<Vec<_>>(),
        )
        .expect("a solid hull");
        // the hull's faces as a closed mesh over its own vertices
        let verts: Vec<[f32; 3]> = hull
            .vertices
            .iter()
            .map(|v| v.as_vec3().to_array())
            .collect();
        let tris: Vec<[u32; 3]> = hull
            .faces
            .iter()
            .flat_map(|(lp, ..)| {
                lp[1..]
                    .windows(2)
                    .map(|w| [lp[0], w[0], w[1]])
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut transforms: Vec<DAffine3> =
            kiln_tests::placements().into_iter().map(|p| p.1).collect();
        transforms.push(DAffine3::from_cols_array(&[
            -0.5, 0.0, 0.0, 0.3, 2.0, 0.0, 0.0, 0.1, 1.5, 3000.0, -200.0, 1500.0,
        ]));
        for (i, &transform) in transforms.iter().enumerate() {
            let level = placed_copies(
                SceneMesh::new("rock", verts.clone(), &tris),
                &[transform],
                "convex",
            );
            let (shape, place) = placed(level.archive(), 0);
            let Some((Piece::Polytope(p), _)) = shape.piece(&place) else {
                panic!("placement {i}: the rock is a polytope");
            };
            let (mut alone, mut faces, mut edges) = (Vec::new(), Vec::new(), Vec::new());
            assert!(p.solid_faces(&mut alone), "placement {i}");
            assert!(p.features(&mut faces, &mut edges), "placement {i}");
            assert_eq!(alone.len(), faces.len());
            assert!(edges.len() >= alone.len(), "placement {i}");
            let scale = 1.0 + transform.translation.abs().max_element();
            for (k, (a, f)) in alone.iter().zip(&faces).enumerate() {
                assert!(a.n.abs_diff_eq(f.n, 1e-12), "placement {i} face {k}");
                assert!((a.h - f.h).abs() <= 1e-12 * scale, "placement {i} face {k}");
            }
            // every edge lies on the planes of both its faces
            for e in &edges {
                for x in [e.p, e.q] {
                    let off = alone
                        .iter()
                        .map(|f| f.n.dot(x) - f.h)
                        .fold(f64::MIN, f64::max);
                    assert!(
                        off.abs() <= 1e-6 * scale,
                        "placement {i}: {x} off the surface by {off}"
                    );
                }
            }
        }
    }

    /// A 24 × 24 grid of half-metre cells: a flat half (coplanar
    /// triangles tie exactly), a creased ridge and bumps.
    fn ground() -> SceneMesh {
        let n = 24u32;
        let mut pos = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let (fx, fy) = (x as f32 * 0.5, y as f32 * 0.5);
                let h = if x < n / 2 {
                    0.0
                } else {
                    (fx - 6.0).min(9.0 - fx).max(0.0) * 0.6 + (fy * 1.7).sin() * 0.3
                };
                pos.push([fx, h, fy]);
            }
        }
        SceneMesh::new("ground", pos, &kiln_tests::grid_triangles(n))
    }

    /// The bounded search gives exactly the answer of testing every
    /// triangle in walk order — the same contact, bit for bit, and the
    /// same triangle among equally deep ones — for hulls, boxes and
    /// capsules resting on, sinking into and hovering over flat ground,
    /// creases and bumps, under an identity and a turned, scaled
    /// placement.
    #[test]
    fn bounded_mesh_touch_answers_as_testing_every_triangle() {
        let turned = DAffine3::from_scale_rotation_translation(
            DVec3::splat(1.3),
            DQuat::from_axis_angle(DVec3::new(0.2, 1.0, 0.1).normalize(), 0.7),
            DVec3::new(40.0, -3.0, 7.0),
        );
        let level = placed_copies(ground(), &[DAffine3::IDENTITY, turned], "mesh");
        let mut rng = Rng(0x5eed_b0a2_d000_0001);
        let pts: Vec<Vec3> = (0..12)
            .map(|_| (rng.unit() * DVec3::new(0.6, 0.4, 0.5)).as_vec3())
            .collect();
        let hull = ConvexHull::new(&pts).expect("a solid hull");
        let shapes = [
            QueryShape::Hull(&hull),
            QueryShape::Box {
                half: Vec3::new(0.5, 0.2, 0.3),
            },
            QueryShape::Capsule {
                half_height: 0.4,
                radius: 0.2,
            },
        ];
        let (mut touched, mut many) = (0, 0);
        for i in 0..6000 {
            let ii = (i % 2) as u32;
            let (shape, place) = placed(level.archive(), ii);
            let Solid::Mesh(mesh) = shape.solid() else {
                panic!("the ground is a mesh");
            };
            // flat poses (axis-aligned boxes on the flat half tie exactly)
            // and random ones, from 0.6 m below the ground to above it
            let local = DVec3::new(rng.f() * 12.0, rng.f() * 1.2 - 0.6, rng.f() * 12.0);
            let rotation = if i % 3 == 0 {
                Quat::IDENTITY
            } else {
                Quat::from_axis_angle(
                    rng.unit().as_vec3(),
                    (rng.f() * std::f64::consts::TAU) as f32,
                )
            };
            let at = if ii == 0 {
                local
            } else {
                turned.transform_point3(local)
            };
            let pose = Pose::new(rotation, at.as_vec3());
            let probe = Probe::new(&shapes[i % 3], &pose).expect("a valid pose");
            let got = mesh_touch(&place, mesh, &probe);
            let want = every_triangle(&place, mesh, &probe);
            assert_eq!(got, want, "case {i}");
            touched += usize::from(got.is_some());
            let (c, h) = probe.bounds();
            let (lo, hi) = local_box(&place, c, h);
            let mut n = 0;
            TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
                n += tri_mesh::leaf_span(mesh, leaf).1;
                false
            });
            many += usize::from(got.is_some() && n > 2);
        }
        // most poses touch, and most of those meet several triangles
        assert!(touched > 3000 && many > 2500, "{touched} {many}");
    }

    /// [`exit_along`] as it was before its bounds: every triangle of the
    /// surface cast in, spans taken in order of entry, each cast out.
    fn exit_along_casting_every_triangle(
        place: &Placement,
        b: &super::super::bsp::BspView,
        probe: &Probe,
        n: DVec3,
    ) -> Option<f64> {
        let mesh = &b.0.surface;
        let (core, radius) = (&probe.core, probe.radius);
        let n = n.normalize();
        let (lo, hi) = (vec3a(&mesh.min).as_dvec3(), vec3a(&mesh.max).as_dvec3());
        let far_surface = (0..8)
            .map(|k| {
                let pick = |bit: usize, a: f64, b: f64| if k & bit == 0 { a } else { b };
                let c = DVec3::new(
                    pick(1, lo.x, hi.x),
                    pick(2, lo.y, hi.y),
                    pick(4, lo.z, hi.z),
                );
                place.world_point64(c).dot(n)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        let trailing = core.support(-n).dot(n) - radius;
        let size = far_surface.abs() + trailing.abs() + radius + 1.0;
        let reach = (far_surface - trailing).max(0.0) + 1e-3 * size;
        let motion = n * reach;
        let same = |t: Touch| (t, t.normal);
        let far = Moved(core, motion);
        let mut slots = Vec::new();
        TreeRef::of(mesh).walk_box(vec3a(&mesh.min).into(), vec3a(&mesh.max).into(), |leaf| {
            let (first, count) = tri_mesh::leaf_span(mesh, leaf);
            slots.extend(first << 1..(first << 1) + count);
            false
        });
        let mut spans: Vec<(f64, [DVec3; 3], u32)> = slots
            .into_iter()
            .filter_map(|slot| {
                let v = tri_mesh::world_triangle(place, mesh, slot);
                let e = match core {
                    crate::query::Core::Point(p) => {
                        sphere_triangle::sweep(p.0, radius, motion, 1.0, v[0], v[1], v[2])
                            .map(|h| h.t)
                    }
                    _ => probe::cast(core, radius, motion, 1.0, &Triangle(v), 0.0, None, same)
                        .map(|h| h.0),
                };
                Some((e? * reach, v, slot))
            })
            .collect();
        spans.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        let (centre, slack) = (probe.centre(), 1e-9 * size);
        let (mut s, mut any) = (0.0f64, false);
        for (enter, v, _) in &spans {
            if *enter > s + slack
                && any
                && !b.contains_local(place.local_point64(centre + n * ((s + enter) * 0.5)))
            {
                break;
            }
            let back = match core {
                crate::query::Core::Point(p) => {
                    sphere_triangle::sweep(p.0 + motion, radius, -motion, 1.0, v[0], v[1], v[2])
                        .map(|h| h.t)
                }
                _ => probe::cast(&far, radius, -motion, 1.0, &Triangle(*v), 0.0, None, same)
                    .map(|h| h.0),
            };
            if let Some(back) = back {
                s = s.max((1.0 - back) * reach);
                any = true;
            }
        }
        any.then_some(s)
    }

    /// The bounded way out of a concave solid is the way out found by
    /// casting every triangle, for spheres, capsules, boxes and hulls in,
    /// across and beside a knotted tube, along random directions, under an
    /// identity and a turned, scaled, far placement.
    #[test]
    fn bounded_exit_answers_as_casting_every_triangle() {
        let (pos, tris) = kiln_tests::torus_knot(48, 8, false);
        let turned = DAffine3::from_scale_rotation_translation(
            DVec3::new(1.5, 0.7, 1.2),
            DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), 1.1),
            DVec3::new(900.0, -40.0, 300.0),
        );
        let level = placed_copies(
            SceneMesh::new("knot", pos, &tris),
            &[DAffine3::IDENTITY, turned],
            "bsp",
        );
        let mut rng = Rng(0xe417_a10e_0000_0001);
        let pts: Vec<Vec3> = (0..10)
            .map(|_| (rng.unit() * DVec3::new(0.15, 0.1, 0.12)).as_vec3())
            .collect();
        let hull = ConvexHull::new(&pts).expect("a solid hull");
        let (mut found, mut checked) = (0, 0);
        for i in 0..3000 {
            let ii = (i % 2) as u32;
            let (shape, place) = placed(level.archive(), ii);
            let Solid::Bsp(b) = shape.solid() else {
                panic!("the knot is a solid");
            };
            let size = 0.03 + rng.f() * 0.3;
            let shapes = [
                QueryShape::Sphere {
                    radius: size as f32,
                },
                QueryShape::Capsule {
                    half_height: size as f32,
                    radius: (size * 0.5) as f32,
                },
                QueryShape::Box {
                    half: Vec3::new(1.0, 0.5, 0.7) * size as f32,
                },
                QueryShape::Hull(&hull),
            ];
            let local = rng.unit() * DVec3::new(0.8, 0.3, 0.8);
            let at = if ii == 0 {
                local
            } else {
                turned.transform_point3(local)
            };
            let rotation = Quat::from_axis_angle(
                rng.unit().as_vec3(),
                (rng.f() * std::f64::consts::TAU) as f32,
            );
            let probe = Probe::new(&shapes[i % 4], &Pose::new(rotation, at.as_vec3()))
                .expect("a valid pose");
            let n = rng.unit();
            let got = exit_along(&place, &b, &probe, n);
            let want = exit_along_casting_every_triangle(&place, &b, &probe, n);
            assert_eq!(got.map(|(t, _)| t.depth), want, "case {i}");
            if let Some((t, _)) = got {
                assert!(t.normal.abs_diff_eq(n.normalize(), 1e-12), "case {i}");
                found += 1;
            }
            checked += 1;
        }
        assert!(found > checked / 4, "{found} of {checked} met the knot");
    }
}
