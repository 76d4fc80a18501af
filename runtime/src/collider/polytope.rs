//! Polytopes and boxes, placed: every query through the exact routines
//! over plane sets of [`super::convex`], and, for query shapes, a
//! polytope in world space as a convex piece ([`PlacedPolytope`]).
//!
//! Spaces: rays and point containment are affine-invariant, so they run in
//! local space for any placement. Closest points and sweeps measure
//! distances: for a similarity placement they run in local space (the
//! world sphere is a local sphere of radius `r / scale`) and the answer is
//! mapped back; a polytope under any other placement is taken to world
//! space plane by plane and vertex by vertex, in f64, so non-uniform scale
//! and shear are exact too. Boxes are only ever placed by similarities
//! (verification enforces it).

use super::convex::{self, ConvexView, CuboidView, RayAnswer};
use super::{ColliderContact, LocalRayHit, keep};
use crate::geom::gjk::Support;
use crate::geom::sat::{Corners, Edge, Extent, Face, Near, Polyhedral};
use crate::geom::sphere_triangle::Contact;
use crate::placement::{Frame, Placement, apply};
use glam::{DVec3, Vec3};
use kiln_formats::polytope::{ArchivedPolytope, NO_TWIN};

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
        u32::from(self.0.face(k)[j].to_native())
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
    Cuboid(CuboidView),
}

/// Runs `$body` with `$v` bound to whichever local view `$c` holds (both
/// are `ConvexView`s; a macro keeps the call static).
macro_rules! on_local {
    ($c:expr, $v:ident => $body:expr) => {
        match $c {
            Convex::Polytope($v) => $body,
            Convex::Cuboid($v) => $body,
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
                feature: None, // the ray starts inside: no surface crossed
                inside: true,
            },
            RayAnswer::Enter { t, face } => LocalRayHit {
                t: t as f32,
                normal: on_local!(self, v => v.plane(face as usize).0).as_vec3(),
                feature: Some(face),
                inside: false,
            },
        })
    }

    /// Whether the world point `p` is inside (containment is
    /// affine-invariant: tested in local space for any placement).
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        if let Convex::Cuboid(b) = self
            && let Some(inside) = box_contains_f32(b, place, p)
        {
            return inside;
        }
        let lp = place.local_point64(p.as_dvec3());
        on_local!(self, v => convex::contains(v, lp))
    }

    /// Closest surface point to `c` if within `r` (or `c` inside), world space.
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ColliderContact> {
        if let Convex::Cuboid(b) = self
            && box_touches_f32(b, place, c, r) == Some(false)
        {
            return None;
        }
        let cw = c.as_dvec3();
        if let (Convex::Polytope(p), None) = (self, place.similarity()) {
            let cl = convex::closest(&world_view(p, place), cw);
            let contact = Contact {
                t: 0.0,
                point: cl.point,
                normal: cl.normal,
            };
            return keep(contact, cl.distance, cl.inside, Some(cl.face), r);
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
            Some(cl.face),
            r,
        )
    }

    /// Whether the world ball (`c`, `r`) touches the solid (the same
    /// answer as [`Convex::closest`], without the contact).
    pub fn touches(&self, place: &Placement, c: Vec3, r: f32) -> bool {
        if let Convex::Cuboid(b) = self
            && let Some(touching) = box_touches_f32(b, place, c, r)
        {
            return touching;
        }
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
        s: &crate::collider::Sweep,
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
        mirrored: crate::placement::determinant(&world) < 0.0,
        world,
        inv: place.local_matrix(),
    }
}

/// Whether box `b` placed by `place` holds `p`, decided in f32 where that
/// is certain: `None` within the bound of [`Placement::local_point_bounded`]
/// of a face (or for an affine placement), where the f64 test decides.
/// The f64 inverse is most of a box's point test.
fn box_contains_f32(b: &CuboidView, place: &Placement, p: Vec3) -> Option<bool> {
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

/// Whether the world ball (`p`, `r`) touches box `b` placed by `place`,
/// decided in f32 where that is certain: the centre in local space within
/// [`Placement::local_point_bounded`]'s bound (and the subtraction's
/// rounding), so the distance to the box is bounded above and below, and
/// the local radius within 1e-5 of the f64 test's. `None` within those
/// bounds of touching (or for an affine placement): the f64 test decides.
/// A sphere's yes/no test on a level of boxes had spent a quarter of its
/// time on the f64 inverse and the face-by-face test.
fn box_touches_f32(b: &CuboidView, place: &Placement, p: Vec3, r: f32) -> Option<bool> {
    let (lp, err) = place.local_point_bounded(p)?;
    let lr = r * place.local_scale_bounded()?;
    let (a, h) = (lp.abs(), b.0.as_vec3());
    let err = err + (a + h) * 1e-6;
    let out = a - h;
    // the distance from the box: at most `far`, at least `near`
    let far = (out + err).max(Vec3::ZERO).length() * (1.0 + 1e-5);
    let near = (out - err).max(Vec3::ZERO).length() * (1.0 - 1e-5);
    if far < lr * (1.0 - 1e-5) {
        return Some(true);
    }
    if near > lr * (1.0 + 1e-5) {
        return Some(false);
    }
    None
}

/// A polytope under any affine placement, known by its support function
/// and its face normals and edges in world space.
pub(crate) struct PlacedPolytope<'a> {
    p: &'a ArchivedPolytope,
    world: [f64; 12],
    inv: [f64; 12],
}

/// A placed polytope's vertices in world space, for its edges, and
/// where only some edges are kept ([`Near`]), each vertex's level along
/// the normal they are kept for.
#[derive(Default)]
struct World {
    points: Vec<DVec3>,
    levels: Vec<f64>,
}

thread_local! {
    /// A buffer for [`World`] reused by every call on a thread.
    static WORLD_VERTICES: std::cell::RefCell<World> = std::cell::RefCell::default();
}

/// `f` with the thread's buffer for a placed polytope's world vertices.
fn with_world<R>(f: impl FnOnce(&mut World) -> R) -> R {
    WORLD_VERTICES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut world) => f(&mut world),
        // not reached (nothing builds features while building them)
        Err(_) => f(&mut World::default()),
    })
}

/// An archived vertex in f64.
#[inline]
fn local_point(p: &[rkyv::rend::f32_le; 3]) -> DVec3 {
    DVec3::new(
        f64::from(p[0].to_native()),
        f64::from(p[1].to_native()),
        f64::from(p[2].to_native()),
    )
}

impl<'a> PlacedPolytope<'a> {
    /// `p` under `place`.
    pub(crate) fn new(p: LocalPolytope<'a>, place: &Frame) -> PlacedPolytope<'a> {
        PlacedPolytope {
            p: p.0,
            world: place.world_matrix(),
            inv: place.local_matrix(),
        }
    }
    fn local(&self, v: usize) -> DVec3 {
        local_point(&self.p.vertices[v])
    }

    /// Whether every point of the box `lo`–`hi` — or, given `corners`,
    /// every corner of a shape whose corners lie in it — lies inside the
    /// polytope off its surface, by its face planes in world space as
    /// `contact_point`'s wholly-inside test places them and asks of a
    /// shape's corners, proved without placing the faces; `false` where
    /// the proof fails.
    ///
    /// Face by face, as [`PlacedPolytope::push_faces`] places them but
    /// neither normalised nor searched: with `m = Lᵀ n` the face's world
    /// normal unnormalised, a world point `x` is `m · x − (h − n · t)`
    /// (times the normal's length) past the face, where `h`, the offset
    /// `push_faces` takes, is the greatest `n · v` over the face's
    /// vertices — at least `h₀`, that of its first vertex. The box's
    /// greatest `m · x` is `m · c + |m| · e` (middle `c`, half extents
    /// `e`), and the proof asks it below `h₀ − n · t` by a slack of 10⁻¹²
    /// of every magnitude either way of working it out rounds (the
    /// normal's length taken at most the inverse's Frobenius norm): each
    /// corner is then inside each face as `push_faces` places it, in the
    /// world test's own rounding. Placing every face (a root, a division
    /// and the face's vertices each) was most of settling a query hull
    /// wholly inside a hull.
    ///
    /// Where a face does not hold the box, each corner in turn: a corner
    /// is a box of no extent inside `lo`–`hi`, so the same proof and the
    /// same slack (taken for the whole box) hold for it. A query hull
    /// wholly inside a hull whose bounding box reaches out of it (2 in 5
    /// of those in the 2,000-hull bench) is then told here, not by
    /// placing every face.
    fn holds_within(&self, lo: DVec3, hi: DVec3, mut corners: Option<Corners<'_>>) -> bool {
        let p = self.p;
        if !self.is_solid() || !lo.cmple(hi).all() {
            return false;
        }
        let l = &self.inv;
        let (c, e) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
        let t = DVec3::new(l[3], l[7], l[11]);
        let norm = l
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 != 3)
            .map(|(_, x)| x * x)
            .sum::<f64>()
            .sqrt();
        let reach = |k: usize| {
            let (a, b) = (p.min[k].to_native(), p.max[k].to_native());
            f64::from(a.abs().max(b.abs()))
        };
        let r = DVec3::new(reach(0), reach(1), reach(2));
        let x_size = (c.abs() + e).element_sum() * norm * 1.01;
        if !(x_size.is_finite() && t.is_finite()) {
            return false;
        }
        (0..p.planes.len()).all(|k| {
            let (n, m) = self.world_normal(k);
            let Some(v0) = p.face(k).first() else {
                return false;
            };
            let h0 = n.dot(self.local(v0.to_native().into()));
            let na = n.abs();
            let slack = 1e-12 * (x_size + na.dot(t.abs()) + na.dot(r) + h0.abs());
            m.dot(c) + m.abs().dot(e) - h0 + n.dot(t) + slack < 0.0
                || corners.as_mut().is_some_and(|corners| {
                    corners(&mut |x| {
                        x.cmpge(lo).all()
                            && x.cmple(hi).all()
                            && m.dot(x) - h0 + n.dot(t) + slack < 0.0
                    })
                })
        })
    }

    /// Asks for the cache lines of every array of the polytope: a contact
    /// reads its vertices at once and, settling its point, its planes and
    /// face loops, which then arrive while the depth is worked out.
    pub(crate) fn prefetch(&self) {
        let p = self.p;
        crate::walk::prefetch_all(p.vertices.as_slice());
        crate::walk::prefetch_all(p.planes.as_slice());
        crate::walk::prefetch_all(p.face_starts.as_slice());
        crate::walk::prefetch_all(p.face_vertices.as_slice());
        crate::walk::prefetch_all(p.face_twins.as_slice());
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
                .map(|v| n.dot(self.local(v.to_native().into())))
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
    fn push_edges(&self, world: &mut World, faces: &[Face], edges: &mut Vec<Edge>) -> bool {
        self.push_edges_kept(world, faces, edges, None).is_some()
    }

    /// [`PlacedPolytope::push_edges`], appending only the edges `keep`
    /// keeps where it is given, and answering where all of them reach
    /// along its normal ([`Polyhedral::solid_edges_kept`]; nothing of
    /// worth without it). Each vertex's level along that normal is worked
    /// out once, not once for each of its edges (the same product, so the
    /// same bits).
    #[inline(always)]
    fn push_edges_kept(
        &self,
        world: &mut World,
        faces: &[Face],
        edges: &mut Vec<Edge>,
        keep: Option<&Near>,
    ) -> Option<Extent> {
        let e0 = edges.len();
        let mut reach = Extent::EMPTY;
        let World { points, levels } = world;
        points.clear();
        points.extend((0..self.p.vertices.len()).map(|v| apply(&self.world, self.local(v), 1.0)));
        levels.clear();
        if let Some(keep) = keep {
            levels.extend(points.iter().map(|p| p.dot(keep.n)));
        }
        for k in 0..self.p.planes.len() {
            let (lp, tw) = (self.p.face(k), self.p.twins(k));
            for j in 0..lp.len() {
                let (a, b) = (lp[j].to_native(), lp[(j + 1) % lp.len()].to_native());
                let twin = tw[j].to_native();
                if twin == NO_TWIN {
                    edges.truncate(e0);
                    return None;
                }
                // each edge is walked twice, once each way, and the way
                // with `a < b` builds it. The reach and the kept test run
                // on both ways (the same ends: the same extent; the test
                // shares the reach's minima and maxima), combined with
                // `a < b` without a branch: the two ways come at random,
                // and a branch on them mispredicted about half the time
                let (p, q) = (points[a as usize], points[b as usize]);
                let kept = (a < b)
                    & match keep {
                        Some(keep) => {
                            let (la, lb) = (levels[a as usize], levels[b as usize]);
                            reach.add_levels(p, q, la, lb);
                            keep.keeps_levels(p, q, la, lb)
                        }
                        None => true,
                    };
                if kept {
                    let (n1, n2) = (faces[k].n, faces[usize::from(twin)].n);
                    edges.push(Edge {
                        p,
                        q,
                        n1,
                        n2,
                        out: n1 + n2,
                    });
                }
            }
        }
        Some(reach)
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
        let best = farthest::first(self.p.vertices.as_slice(), ld);
        apply(w, self.local(best), 1.0)
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
    /// [`PlacedPolytope::holds_within`] with the corners.
    fn holds_corners(&self, lo: DVec3, hi: DVec3, corners: Corners<'_>) -> bool {
        self.holds_within(lo, hi, Some(corners))
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let f0 = faces.len();
        if !self.push_faces(faces) {
            return false;
        }
        let done = self.solid_edges(&faces[f0..], edges);
        if !done {
            faces.truncate(f0);
        }
        done
    }
    fn solid_edges(&self, faces: &[Face], edges: &mut Vec<Edge>) -> bool {
        with_world(|world| self.push_edges(world, faces, edges))
    }
    fn solid_edges_kept(
        &self,
        faces: &[Face],
        edges: &mut Vec<Edge>,
        keep: &Near,
    ) -> Option<Extent> {
        with_world(|world| self.push_edges_kept(world, faces, edges, Some(keep)))
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        for k in 0..self.p.planes.len() {
            let lp = self.p.face(k);
            for j in 0..lp.len() {
                let (a, b) = (lp[j].to_native(), lp[(j + 1) % lp.len()].to_native());
                if a < b {
                    f(apply(
                        &self.world,
                        self.local(b.into()) - self.local(a.into()),
                        0.0,
                    ));
                }
            }
        }
    }
}

/// A polytope's support: the first of its vertices farthest along a
/// local direction, by the f64 product `(x·dx + y·dy) + z·dz` of each
/// f32 vertex. Two implementations give the same index bit for bit:
/// [`farthest::portable`], the scalar search, and on x86-64 with AVX2
/// (found at run time) four vertices a step in f64 lanes, the same
/// products and sums in the same order, each lane keeping the first of
/// its largest and the lanes merged by value, then by index.
mod farthest {
    #[cfg(target_arch = "x86_64")]
    use crate::geom::gjk::FarLanes;
    use crate::geom::gjk::first_farthest;
    use glam::DVec3;
    use rkyv::rend::f32_le;

    /// The first index of `v` whose product with `d` is largest; 0 where
    /// none is larger than −∞ (an empty set, a NaN direction).
    #[inline]
    pub(super) fn first(v: &[[f32_le; 3]], d: DVec3) -> usize {
        #[cfg(target_arch = "x86_64")]
        if v.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was found on this CPU just above, the one
            // feature `avx2` is compiled for
            return unsafe { avx2(v, d) };
        }
        portable(v, d)
    }

    /// The product of vertex `p` with `d`.
    #[inline(always)]
    pub(super) fn along(p: &[f32_le; 3], d: DVec3) -> f64 {
        super::local_point(p).dot(d)
    }

    /// [`first`] on any CPU: the query hull's scalar search
    /// ([`first_farthest`]), which answers the same index.
    pub(super) fn portable(v: &[[f32_le; 3]], d: DVec3) -> usize {
        first_farthest(v.len(), |i| along(&v[i], d))
    }

    /// [`first`] four vertices a step in AVX2's f64 lanes: lane `k` sees
    /// vertices `4j + k`, keeps the first of its largest (a strict
    /// compare, as the scalar search's), and the lanes merge to the
    /// largest value, the lowest index among equals — the scalar answer.
    /// Indices ride in f64 lanes (exact below 2⁵³).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2(v: &[[f32_le; 3]], d: DVec3) -> usize {
        use std::arch::x86_64::*;
        // the layout the loads read: three little-endian f32s a vertex,
        // packed (x86-64 is little-endian, so `f32_le` is an `f32`)
        const _: () = assert!(
            std::mem::size_of::<[f32_le; 3]>() == 12 && std::mem::align_of::<f32_le>() <= 4
        );
        let whole = v.len() - v.len() % 4;
        let (dx, dy, dz) = (
            _mm256_set1_pd(d.x),
            _mm256_set1_pd(d.y),
            _mm256_set1_pd(d.z),
        );
        let mut lanes = FarLanes::new();
        let base = v.as_ptr().cast::<f32>();
        for j in (0..whole).step_by(4) {
            // SAFETY: vertices j..j + 4 exist (j + 4 <= whole <= len), so
            // the 48 bytes from vertex j's first are inside `v`, and
            // initialised f32s; the loads are unaligned forms
            let (a, b, c) = unsafe {
                let p = base.add(3 * j);
                (
                    _mm_loadu_ps(p),
                    _mm_loadu_ps(p.add(4)),
                    _mm_loadu_ps(p.add(8)),
                )
            };
            // a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3
            let t0 = _mm_shuffle_ps::<0b01_00_10_01>(a, b); // y0 z0 y1 z1
            let t1 = _mm_shuffle_ps::<0b01_01_10_10>(b, c); // x2 x2 x3 x3
            let t2 = _mm_shuffle_ps::<0b10_00_11_11>(b, c); // y2 y2 z2 y3
            let t3 = _mm_shuffle_ps::<0b11_00_11_00>(c, c); // z2 z3 z2 z3
            let x = _mm_shuffle_ps::<0b10_00_11_00>(a, t1); // x0 x1 x2 x3
            let y = _mm_shuffle_ps::<0b11_00_10_00>(t0, t2); // y0 y1 y2 y3
            let z = _mm_shuffle_ps::<0b01_00_11_01>(t0, t3); // z0 z1 z2 z3
            lanes.keep(_mm256_add_pd(
                _mm256_add_pd(
                    _mm256_mul_pd(_mm256_cvtps_pd(x), dx),
                    _mm256_mul_pd(_mm256_cvtps_pd(y), dy),
                ),
                _mm256_mul_pd(_mm256_cvtps_pd(z), dz),
            ));
        }
        lanes.finish(whole, v.len(), |i| along(&v[i], d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collider::testing::{placed_copies, turned_placements};
    use crate::collider::{At, Piece, placed};
    use glam::DAffine3;
    use kiln_baker::SceneMesh;
    use kiln_geometry::rng::Rng;
    use rkyv::rend::f32_le;

    /// The support's AVX2 lanes and its scalar search choose the same
    /// vertex on 40,000 sets of 0 to 80 vertices (every tail length),
    /// where most sets tie: vertices repeated, on a grid of few values so
    /// that products are equal, on one face whose normal is the
    /// direction, signed zeros, huge and tiny coordinates; directions
    /// random, along an axis, zero, infinite and NaN. The scalar search
    /// is checked against the plain search (largest product, then lowest
    /// index) too.
    /// Skips, saying so, where the CPU has no AVX2.
    #[test]
    fn support_lanes_choose_as_the_loop() {
        let mut rng = Rng::new(0x5_0771);
        let (mut ties, mut checked) = (0, 0);
        for round in 0..40_000 {
            let n = rng.below(81);
            let kind = round % 5;
            let mut v: Vec<[f32_le; 3]> = Vec::new();
            for _ in 0..n {
                let p: [f32; 3] = match kind {
                    // a grid of few values: many equal products
                    0 => [0, 1, 2].map(|_| rng.below(3) as f32 - 1.0),
                    // one face along z at 1, and points below it
                    1 if rng.below(2) == 0 => [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 1.0],
                    1 => [
                        rng.range(-1.0, 1.0),
                        rng.range(-1.0, 1.0),
                        rng.range(-1.0, 1.0),
                    ],
                    // repeats of earlier vertices
                    2 if !v.is_empty() && rng.below(2) == 0 => {
                        let q = v[rng.below(v.len())];
                        q.map(|c| c.to_native())
                    }
                    // signed zeros, huge and tiny
                    3 => [0, 1, 2]
                        .map(|_| [0.0, -0.0, 1e30, -1e30, 1e-30, f32::MAX, 1.0][rng.below(7)]),
                    _ => [
                        rng.range(-10.0, 10.0),
                        rng.range(-10.0, 10.0),
                        rng.range(-10.0, 10.0),
                    ],
                };
                v.push(p.map(f32_le::from_native));
            }
            let d = match rng.below(8) {
                0 => DVec3::Z,
                1 => DVec3::ZERO,
                2 => DVec3::new(f64::INFINITY, 0.0, 1.0),
                3 => DVec3::new(f64::NAN, 1.0, 0.0),
                4 => DVec3::new(1.0, 1.0, 0.0),
                _ => rng.unit(),
            };
            let scalar_says = farthest::portable(&v, d);
            // the plain search: the largest product, then the lowest index
            let values: Vec<f64> = v.iter().map(|p| farthest::along(p, d)).collect();
            let top = values
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
            let plain = values
                .iter()
                .position(|&x| x == top && x > f64::NEG_INFINITY)
                .unwrap_or(0);
            assert_eq!(scalar_says, plain, "round {round}: {v:?} along {d}");
            ties += usize::from(values.iter().filter(|&&x| x == top).count() > 1);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 found just above
                let lanes = unsafe { farthest::avx2(&v, d) };
                assert_eq!(lanes, scalar_says, "round {round}: {v:?} along {d}");
                checked += 1;
            }
        }
        assert!(ties > 10_000, "only {ties} sets tie");
        if checked == 0 {
            eprintln!("SKIPPED: this CPU has no AVX2; the support's AVX2 lanes were not checked");
        }
    }

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
        let transforms = turned_placements(&mut rng);
        let level = placed_copies(SceneMesh::new("knot", knot, &tris), &transforms, "box");
        let (mut inside, mut undecided) = (0, 0);
        let steps = [0.0, 1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3];
        for ii in 0..level.object_count() {
            let (shape, place) = placed(level.archive(), ii);
            let super::super::Family::Convex(Convex::Cuboid(view)) = shape.family() else {
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
                    Convex::Cuboid(CuboidView(h)).contains(&place, p),
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

    /// A ball's yes/no test on a box, decided in f32 where the ball is
    /// clearly touching or clear, answers exactly as the f64 test on 42,000
    /// balls of radius 10⁻⁴ to 2 box sizes whose surface is within 0 to
    /// 0.3 radii of the box (or anywhere near), beside faces, edges and corners,
    /// under turned placements scaled from 10⁻³ to 900 and moved up to
    /// 10⁵ away; `closest` finds a contact exactly where the test says
    /// touching. Both ways of deciding occur.
    #[test]
    fn box_balls_decided_in_f32_answer_as_in_f64() {
        let (knot, tris) = kiln_tests::torus_knot(24, 8, false);
        let mut rng = Rng(0xba11_0f32_0000_0001);
        let transforms = turned_placements(&mut rng);
        let level = placed_copies(SceneMesh::new("knot", knot, &tris), &transforms, "box");
        let (mut touching, mut undecided) = (0, 0);
        let mut decided = [0; 2]; // clear, touching
        let steps = [0.0, 1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.05, 0.3];
        for ii in 0..level.object_count() {
            let (shape, place) = placed(level.archive(), ii);
            let super::super::Family::Convex(Convex::Cuboid(view)) = shape.family() else {
                panic!("instance {ii} is not a box");
            };
            let (h, scale) = (view.0, place.world_scale());
            for k in 0..2000 {
                let radius = h.max_element() * [1e-4, 0.01, 0.3, 2.0][k % 4];
                // a point on the box's surface, pushed out along a face,
                // edge or corner direction by the radius, give or take
                let mut x = rng.v(1.0) * h;
                let mut dir = DVec3::ZERO;
                for axis in 0..=(k % 3) {
                    let a = (axis + k / 3) % 3;
                    let side = if rng.f() < 0.5 { -1.0 } else { 1.0 };
                    x[a] = side * h[a];
                    dir[a] = side;
                }
                let step = steps[(rng.f() * 9.0) as usize] * if rng.f() < 0.5 { -1.0 } else { 1.0 };
                let local = if k % 5 == 4 {
                    rng.v(1.5) * h + rng.v(radius)
                } else {
                    x + dir.normalize() * radius * (1.0 + step)
                };
                let c = place.world_point64(local).as_vec3();
                let r = (radius * scale) as f32;
                let lc = place.local_point64(c.as_dvec3());
                let exact = convex::touches(&view, lc, f64::from(r) / scale);
                let got = Convex::Cuboid(CuboidView(h)).touches(&place, c, r);
                assert_eq!(got, exact, "box {ii}, ball {c:?} radius {r}");
                let found = Convex::Cuboid(CuboidView(h))
                    .closest(&place, c, r)
                    .is_some();
                let slow = {
                    let cl = convex::closest(&view, lc);
                    cl.inside || cl.distance * scale <= f64::from(r)
                };
                assert_eq!(found, slow, "box {ii}, ball {c:?} radius {r}: closest");
                touching += usize::from(exact);
                match box_touches_f32(&view, &place, c, r) {
                    Some(t) => decided[usize::from(t)] += 1,
                    None => undecided += 1,
                }
            }
        }
        assert!(
            touching > 10_000 && undecided > 5_000 && decided.iter().all(|&d| d > 3_000),
            "{touching} touching, {undecided} left to f64, {decided:?} decided clear and touching in f32"
        );
    }

    /// A random rock (the hull of 40 points on an ellipsoid) baked as a
    /// polytope under each of the standard placements (turned, scaled 2
    /// and far; non-uniform), one both mirrored and sheared, and `more`:
    /// a level of one object for each.
    fn rock_levels(seed: u64, more: &[DAffine3]) -> Vec<(DAffine3, crate::Level)> {
        let mut rng = Rng(seed);
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
        transforms.extend_from_slice(more);
        transforms
            .into_iter()
            .map(|transform| {
                let mesh = SceneMesh::new("rock", verts.clone(), &tris);
                (transform, placed_copies(mesh, &[transform], "convex"))
            })
            .collect()
    }

    /// Calls `f` with each placement's index, its placed rock, the rock's
    /// faces as placed, the placement's size (the sum of its matrix's
    /// magnitudes) and `rng`, over [`rock_levels`] of `seed` with the
    /// turned placements drawn from `rng`.
    fn each_placed_rock(
        rng: &mut Rng,
        seed: u64,
        mut f: impl FnMut(usize, &PlacedPolytope, &[Face], f64, &mut Rng),
    ) {
        let more = turned_placements(rng);
        for (i, (transform, level)) in rock_levels(seed, &more).iter().enumerate() {
            let p = placed_rock(level);
            let mut faces = Vec::new();
            assert!(p.solid_faces(&mut faces), "placement {i}");
            let size = transform.matrix3.abs().to_cols_array().iter().sum::<f64>();
            f(i, &p, &faces, size, rng);
        }
    }

    /// The rock of a [`rock_levels`] level, placed.
    fn placed_rock(level: &crate::Level) -> PlacedPolytope<'_> {
        let a = level.archive();
        let shape = placed(a, 0).0;
        match shape.piece(&At::Instance(a, &a.instances[0])) {
            Some((Piece::Polytope(p), _)) => p,
            _ => panic!("the rock is a polytope"),
        }
    }

    /// A placed polytope's faces listed alone (from its local planes and
    /// vertices, nothing placed) are the faces its features list (from
    /// its vertices placed in world space), to rounding, under mirrored,
    /// sheared, non-uniform and far placements.
    #[test]
    fn placed_polytope_faces_alone_are_its_features_faces() {
        for (i, (transform, level)) in rock_levels(0x00fa_ce5a_10e0_0001, &[]).iter().enumerate() {
            let p = placed_rock(level);
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

    /// A placed polytope building only the edges near a box and a slab
    /// ([`Polyhedral::solid_edges_kept`]) builds exactly those of its
    /// edges, in order and bit for bit, and reports where all of them
    /// reach, under mirrored, sheared, non-uniform and far placements:
    /// 500 boxes and slabs a placement, from missing the rock to holding
    /// it whole. Some, none and every edge kept all occur.
    #[test]
    fn a_placed_polytope_keeps_exactly_the_near_edges() {
        let mut rng = Rng(0x0ed9_e5ce_a400_0001);
        let (mut none, mut some, mut all) = (0, 0, 0);
        for (i, (_, level)) in rock_levels(0x00fa_ce5a_10e0_0003, &[]).iter().enumerate() {
            let p = placed_rock(level);
            let (mut faces, mut every) = (Vec::new(), Vec::new());
            assert!(p.features(&mut faces, &mut every), "placement {i}");
            let (lo, hi) = every
                .iter()
                .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), e| {
                    (lo.min(e.p.min(e.q)), hi.max(e.p.max(e.q)))
                });
            let size = (hi - lo).max_element();
            for case in 0..500 {
                let n = rng.unit();
                let at = lo + (hi - lo) * DVec3::new(rng.f(), rng.f(), rng.f());
                // one in eight holds the rock whole
                let grow = if case % 8 == 0 { 4.0 } else { rng.f() };
                let half = DVec3::new(rng.f(), rng.f(), rng.f()) * size * grow;
                let level = at.dot(n);
                let thick = size * rng.f() * grow;
                let keep = Near {
                    n,
                    low: level - thick,
                    high: level + thick,
                    lo: at - half,
                    hi: at + half,
                };
                let mut kept = Vec::new();
                let reach = p
                    .solid_edges_kept(&faces, &mut kept, &keep)
                    .expect("a closed polytope");
                let expected: Vec<&Edge> = every.iter().filter(|e| keep.keeps(e.p, e.q)).collect();
                let bits = |e: &Edge| {
                    [e.p, e.q, e.n1, e.n2, e.out].map(|v| v.to_array().map(f64::to_bits))
                };
                assert_eq!(
                    kept.iter().map(bits).collect::<Vec<_>>(),
                    expected.iter().map(|e| bits(e)).collect::<Vec<_>>(),
                    "placement {i} case {case}"
                );
                let mut whole = Extent::EMPTY;
                for e in &every {
                    whole.add(e.p, e.q, n);
                }
                assert_eq!(
                    (
                        reach.lo,
                        reach.hi,
                        reach.low.to_bits(),
                        reach.high.to_bits()
                    ),
                    (
                        whole.lo,
                        whole.hi,
                        whole.low.to_bits(),
                        whole.high.to_bits()
                    ),
                    "placement {i} case {case}"
                );
                match kept.len() {
                    0 => none += 1,
                    k if k == every.len() => all += 1,
                    _ => some += 1,
                }
            }
        }
        assert!(
            none > 100 && some > 1000 && all > 100,
            "{none} none, {some} some, {all} all"
        );
    }

    /// Where a placed polytope proves a box inside it without placing its
    /// faces, every corner of the box is inside every face as the faces
    /// are placed (the wholly-inside test's own arithmetic), on 2,000
    /// boxes a placement in and around rocks under mirrored, sheared,
    /// non-uniform and far placements and turned ones scaled from 10⁻³ to
    /// 900 and moved up to 10⁵ away; and nine in ten boxes whose corners
    /// are all inside are proved.
    #[test]
    fn a_box_a_placed_polytope_proves_inside_is_inside_every_face() {
        let mut rng = Rng(0xb0c5_1a51_de00_0001);
        let (mut proved, mut inside) = (0usize, 0usize);
        each_placed_rock(&mut rng, 0x00fa_ce5a_10e0_0002, |i, p, faces, size, rng| {
            for case in 0..2000 {
                // about a point of the rock (an average of supports), of
                // any size from a hair to larger than the rock
                let mid = (0..3).map(|_| p.support(rng.unit())).sum::<DVec3>() / 3.0;
                let half = DVec3::new(rng.f(), rng.f(), rng.f())
                    * size
                    * [1e-9, 1e-4, 0.01, 0.1, 0.4][case % 5];
                let (lo, hi) = (mid - half, mid + half);
                let corners_in = (0..8).all(|c| {
                    let pick = |k: usize| if c & (1 << k) == 0 { lo[k] } else { hi[k] };
                    let x = DVec3::new(pick(0), pick(1), pick(2));
                    faces.iter().all(|f| f.n.dot(x) - f.h < 0.0)
                });
                let says = p.holds_within(lo, hi, None);
                assert!(!says || corners_in, "placement {i} case {case}: {lo} {hi}");
                proved += usize::from(says);
                inside += usize::from(corners_in);
            }
        });
        assert!(
            proved * 10 > inside * 9 && inside > 20_000,
            "{proved} proved of {inside} inside"
        );
    }

    /// Where a placed polytope proves a shape's corners inside it, face
    /// by face its box or else its corners, every corner is inside every
    /// face as the faces are placed, on 2,000 sets of 3 to 12 corners a
    /// placement (as the box test's placements), a third of them about a
    /// vertex moved in by 0 to 10⁻⁶ of the way; nine in ten sets whose
    /// corners are all inside are proved, and of those thousands whose
    /// box alone is not.
    #[test]
    fn corners_a_placed_polytope_proves_inside_are_inside_every_face() {
        let mut rng = Rng(0xc0e5_1a51_de00_0003);
        let (mut proved, mut inside, mut past_the_box) = (0usize, 0usize, 0usize);
        each_placed_rock(&mut rng, 0x00fa_ce5a_10e0_0004, |i, p, faces, size, rng| {
            let centre = (0..8).map(|_| p.support(rng.unit())).sum::<DVec3>() / 8.0;
            for case in 0..2000 {
                // corners about a point of the rock — a third of them about
                // a vertex, on its surface or moved in by a hair — spread
                // along a random long axis (a box around them reaches far
                // past them)
                let mid = if case % 3 == 0 {
                    let v = p.support(rng.unit());
                    v + (centre - v) * [0.0, 1e-12, 1e-9, 1e-6][case / 3 % 4]
                } else {
                    (0..3).map(|_| p.support(rng.unit())).sum::<DVec3>() / 3.0
                };
                let spread = size * [1e-9, 1e-4, 0.01, 0.1, 0.4][case % 5];
                let axis = rng.unit();
                let corners: Vec<DVec3> = (0..3 + case % 10)
                    .map(|_| mid + (axis * (2.0 * rng.f() - 1.0) + rng.unit() * 0.1) * spread)
                    .collect();
                let (lo, hi) = corners
                    .iter()
                    .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &x| {
                        (lo.min(x), hi.max(x))
                    });
                let all_in = corners
                    .iter()
                    .all(|&x| faces.iter().all(|f| f.n.dot(x) - f.h < 0.0));
                let says = p.holds_corners(lo, hi, &mut |f| corners.iter().all(|&x| f(x)));
                assert!(!says || all_in, "placement {i} case {case}: {corners:?}");
                proved += usize::from(says);
                inside += usize::from(all_in);
                past_the_box += usize::from(says && !p.holds_within(lo, hi, None));
            }
        });
        assert!(
            proved * 10 > inside * 9 && inside > 20_000 && past_the_box > 1_000,
            "{proved} proved of {inside} inside, {past_the_box} past the box"
        );
    }
}
