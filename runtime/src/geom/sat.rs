//! Penetration depth of two overlapping convex polyhedra by the separating
//! axis test, in f64: the shortest translation that separates them is
//! normal to a face of their Minkowski difference, and every such face is
//! a face of one shape or spanned by an edge of each (Gottschalk, Lin and
//! Manocha, "OBBTree", SIGGRAPH 1996; Ericson, "Real-Time Collision
//! Detection", 2004, §4.4 and §5.2.1). So the smallest overlap over the
//! face normals of both shapes and the cross products of their edge
//! directions is the exact depth, with its axis. Degenerate shapes
//! (points, segments, triangles) are polyhedra with fewer faces: a
//! triangle's face normal serves both of its sides.
//!
//! This is what a query shape reports when its core crosses a collider's
//! (the distance between cores is then zero and GJK has no direction); a
//! radius on either side adds to the depth.

use super::gjk::{Moved, OrientedBox, Point, Segment, Support, Triangle};
use glam::DVec3;

/// A face of a polyhedron: its unit outward normal and the support value
/// along it (the plane `n · x = h` holds the face, the shape lies below).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Face {
    pub n: DVec3,
    pub h: f64,
}

/// Where a polyhedron's edges reach: the bounding box of their ends, and
/// their lowest and highest levels along a direction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extent {
    pub lo: DVec3,
    pub hi: DVec3,
    pub low: f64,
    pub high: f64,
}

impl Extent {
    /// Nothing yet.
    pub const EMPTY: Extent = Extent {
        lo: DVec3::INFINITY,
        hi: DVec3::NEG_INFINITY,
        low: f64::INFINITY,
        high: f64::NEG_INFINITY,
    };

    /// Adds the edge `p`–`q`, its levels along `n`.
    #[inline]
    pub fn add(&mut self, p: DVec3, q: DVec3, n: DVec3) {
        self.add_levels(p, q, p.dot(n), q.dot(n));
    }

    /// [`Extent::add`] with the ends' levels `a = p · n` and `b = q · n`
    /// worked out already.
    #[inline]
    pub fn add_levels(&mut self, p: DVec3, q: DVec3, a: f64, b: f64) {
        self.lo = self.lo.min(p.min(q));
        self.hi = self.hi.max(p.max(q));
        self.low = self.low.min(a.min(b));
        self.high = self.high.max(a.max(b));
    }
}

/// Which edges to build ([`Polyhedral::solid_edges_kept`]): those whose
/// levels along `n` reach into `low`–`high` and whose bounding box
/// meets `lo`–`hi`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Near {
    pub n: DVec3,
    pub low: f64,
    pub high: f64,
    pub lo: DVec3,
    pub hi: DVec3,
}

impl Near {
    /// Whether the edge `p`–`q` is kept.
    #[inline]
    pub fn keeps(&self, p: DVec3, q: DVec3) -> bool {
        self.keeps_levels(p, q, p.dot(self.n), q.dot(self.n))
    }

    /// [`Near::keeps`] with the ends' levels `a = p · n` and `b = q · n`
    /// worked out already.
    #[inline]
    pub fn keeps_levels(&self, p: DVec3, q: DVec3, a: f64, b: f64) -> bool {
        // `&`, not `&&`: every test is a few instructions, and which one
        // fails varies from edge to edge, so one branch at the end beats
        // a chain of mispredicted ones
        (a.min(b) <= self.high)
            & (a.max(b) >= self.low)
            & p.min(q).cmple(self.hi).all()
            & p.max(q).cmpge(self.lo).all()
    }
}

/// An edge of a polyhedron from `p` to `q` with the unit outward normals
/// of the faces either side (its arc on the Gauss map runs from `n1` to
/// `n2`) and a direction `out` inside that arc: for a solid, `n1 + n2`;
/// for the rim of a flat shape (whose two faces are `±n`, the arc a half
/// circle), the outward normal of the edge in the shape's plane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub p: DVec3,
    pub q: DVec3,
    pub n1: DVec3,
    pub n2: DVec3,
    pub out: DVec3,
}

/// A shape's corners, each handed to a test until one fails: whether
/// all passed ([`Polyhedral::holds_corners`]).
pub(crate) type Corners<'a> = &'a mut dyn FnMut(&mut dyn FnMut(DVec3) -> bool) -> bool;

/// A convex polyhedron's separating-axis candidates: its face normals and
/// edge directions (any length, either sign, repeats allowed), and, where
/// known, its faces and edges with their Gauss map.
pub(crate) trait Polyhedral: Support {
    /// Calls `f` with every face normal.
    fn face_normals(&self, f: &mut dyn FnMut(DVec3));
    /// Calls `f` with every edge direction.
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3));
    /// Appends every face and every edge and answers `true` — if the
    /// shape is a polyhedron that knows them (solids, and triangles as
    /// flat ones); points, segments and degenerate shapes answer `false`
    /// and append nothing.
    fn features(&self, _faces: &mut Vec<Face>, _edges: &mut Vec<Edge>) -> bool {
        false
    }
    /// Appends every face of a solid and answers `true`, where the shape
    /// can list its faces without its edges; answers `false` (appending
    /// nothing) otherwise, and [`Polyhedral::features`] is asked instead.
    /// (A segment clipped to a solid needs only its face planes.)
    fn solid_faces(&self, _faces: &mut Vec<Face>) -> bool {
        false
    }
    /// Appends every edge of a solid whose faces
    /// [`Polyhedral::solid_faces`] listed (`faces`, as it listed them) and
    /// answers `true`: what [`Polyhedral::features`] would have built,
    /// without building the faces again. `false` (appending nothing) where
    /// the shape cannot, and [`Polyhedral::features`] is asked instead.
    fn solid_edges(&self, _faces: &[Face], _edges: &mut Vec<Edge>) -> bool {
        false
    }
    /// [`Polyhedral::solid_edges`], appending only the edges `keep`
    /// keeps (in the order `solid_edges` lists them), and answering where
    /// all of them reach, their levels along `keep.n` ([`Extent`]);
    /// `None` (appending nothing) where `solid_edges` answers `false`. A
    /// shape with many edges, few of them near a contact, keeps the rest
    /// from being built at all.
    fn solid_edges_kept(
        &self,
        faces: &[Face],
        edges: &mut Vec<Edge>,
        keep: &Near,
    ) -> Option<Extent> {
        let e0 = edges.len();
        if !self.solid_edges(faces, edges) {
            return None;
        }
        let mut reach = Extent::EMPTY;
        for e in &edges[e0..] {
            reach.add(e.p, e.q, keep.n);
        }
        let mut k = e0;
        for i in e0..edges.len() {
            if keep.keeps(edges[i].p, edges[i].q) {
                edges[k] = edges[i];
                k += 1;
            }
        }
        edges.truncate(k);
        Some(reach)
    }
    /// Whether every corner of a shape whose corners lie in the box
    /// `lo`–`hi` lies inside the solid off its surface — by its own face
    /// planes in world space, as `contact_point`'s wholly-inside test
    /// asks of a shape's corners — where the shape can prove it without
    /// placing its faces: face by face the box, and where a face does not
    /// hold the box, the corners. `false` where it cannot, or the proof
    /// fails. The corners must lie in the box: one that a face's test
    /// finds outside it fails the proof.
    fn holds_corners(&self, _lo: DVec3, _hi: DVec3, _corners: Corners<'_>) -> bool {
        false
    }
    /// Whether the shape is a solid — more faces than a flat shape's two
    /// — known without building its features: chooses the way to the
    /// depth ([`expanding_first`]).
    fn is_solid(&self) -> bool {
        false
    }
    /// The shape as an oriented box, if it is one (for the closed-form
    /// box–triangle test).
    fn as_box(&self) -> Option<OrientedBox> {
        None
    }
    /// The shape as a triangle, if it is one.
    fn as_triangle(&self) -> Option<[DVec3; 3]> {
        None
    }
    /// The shape's two ends, if it is a segment (a point: both ends the
    /// same).
    fn ends(&self) -> Option<(DVec3, DVec3)> {
        None
    }
    /// Calls `f` with each corner of the shape until one answers `false`,
    /// and answers whether all answered `true` — where the shape lists its
    /// corners without building its features (a query hull's placed
    /// points); `None` where it does not (segments and boxes are asked
    /// through [`Polyhedral::ends`] and [`Polyhedral::as_box`]).
    fn all_corners(&self, _f: &mut dyn FnMut(DVec3) -> bool) -> Option<bool> {
        None
    }
    /// An identity the shape keeps, with its features, for its whole life
    /// and shares with no other shape — a query hull's, drawn once per
    /// query — so a contact point settled against many pieces builds the
    /// shape's features once; `None`: built on every settle.
    fn body_key(&self) -> Option<u64> {
        None
    }
    /// Whether `x` lies in the shape grown by `r` (to `tol`), where that
    /// is cheap to tell without its features: by default for a point, a
    /// segment or a box; `None` where not known.
    fn holds_point(&self, x: DVec3, r: f64, tol: f64) -> Option<bool> {
        if let Some((a, b)) = self.ends() {
            let on = super::contact_point::on_segment(a, b, x);
            return Some((x - on).length() <= r + tol);
        }
        let b = self.as_box()?;
        let d = x - b.center;
        let mut outside = 0.0f64;
        for k in 0..3 {
            // axes from f32 placements are unit only to rounding
            let len = b.axes[k].length();
            if !len.is_finite() || len <= 0.0 {
                return None;
            }
            let along = (d.dot(b.axes[k]) / len).abs() - b.half[k] * len;
            outside += along.max(0.0).powi(2);
        }
        Some(outside.sqrt() <= r + tol)
    }
}

/// Whether an edge of one polyhedron (Gauss-map arc from `a` to `b`,
/// `bxa = b × a`) and an edge of another (arc from `c` to `d`, `dxc = d ×
/// c`) can span a face of the Minkowski difference of the first minus the
/// second: their arcs, the second negated, cross (Gregorius, "The
/// Separating Axis Test between Convex Polyhedra", GDC 2013). Borderline
/// cases count as crossing: an extra axis never spoils the minimum, a
/// missing one would. Antipodal ends (a flat shape's rim) always cross.
#[inline]
fn minkowski_face(a: DVec3, b: DVec3, bxa: DVec3, c: DVec3, d: DVec3, dxc: DVec3) -> bool {
    // the second solid enters the difference negated: −c, −d (and the
    // cross product of the negated pair is the same)
    let (cba, dba) = (-c.dot(bxa), -d.dot(bxa));
    let (adc, bdc) = (a.dot(dxc), b.dot(dxc));
    const EPS: f64 = 1e-12;
    cba * dba <= EPS && adc * bdc <= EPS && cba * bdc >= -EPS
}

impl Polyhedral for Point {
    fn ends(&self) -> Option<(DVec3, DVec3)> {
        Some((self.0, self.0))
    }
    fn face_normals(&self, _: &mut dyn FnMut(DVec3)) {}
    fn edge_directions(&self, _: &mut dyn FnMut(DVec3)) {}
}

impl Polyhedral for Segment {
    fn ends(&self) -> Option<(DVec3, DVec3)> {
        Some((self.0, self.1))
    }
    fn face_normals(&self, _: &mut dyn FnMut(DVec3)) {}
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        f(self.1 - self.0);
    }
}

impl Polyhedral for Triangle {
    fn as_triangle(&self) -> Option<[DVec3; 3]> {
        Some(self.0)
    }
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        let v = &self.0;
        f((v[1] - v[0]).cross(v[2] - v[0]));
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        let v = &self.0;
        f(v[1] - v[0]);
        f(v[2] - v[1]);
        f(v[0] - v[2]);
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let v = &self.0;
        let n = (v[1] - v[0]).cross(v[2] - v[0]);
        let len = n.length();
        if !(len > 1e-300 && len.is_finite()) {
            return false;
        }
        let n = n / len;
        let h = n.dot(v[0]);
        faces.push(Face { n, h });
        faces.push(Face { n: -n, h: -h });
        for k in 0..3 {
            let (p, q) = (v[k], v[(k + 1) % 3]);
            edges.push(Edge {
                p,
                q,
                n1: n,
                n2: -n,
                // counter-clockwise about n: (q − p) × n points outwards
                out: (q - p).cross(n),
            });
        }
        true
    }
}

impl Polyhedral for OrientedBox {
    fn as_box(&self) -> Option<OrientedBox> {
        Some(*self)
    }
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.axes.iter().for_each(|&a| f(a));
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.axes.iter().for_each(|&a| f(a));
    }
    fn is_solid(&self) -> bool {
        true
    }
    fn solid_faces(&self, faces: &mut Vec<Face>) -> bool {
        if self.half.min_element() <= 0.0 {
            return false;
        }
        let (c, f0) = (self.center, faces.len());
        for i in 0..3 {
            // axes from f32 placements are unit only to rounding
            let len = self.axes[i].length();
            if !(len > 0.0 && len.is_finite()) {
                faces.truncate(f0);
                return false;
            }
            let a = self.axes[i] / len;
            let (m, h) = (c.dot(a), self.half[i] * len);
            faces.push(Face { n: a, h: m + h });
            faces.push(Face { n: -a, h: -m + h });
        }
        true
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        self.solid_faces(faces) && self.solid_edges(faces, edges)
    }
    fn solid_edges(&self, _faces: &[Face], edges: &mut Vec<Edge>) -> bool {
        let c = self.center;
        // the four edges along axis i lie between faces ±j and ±k
        for i in 0..3 {
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            let e = self.axes[i] * self.half[i];
            for sj in [-1.0, 1.0] {
                for sk in [-1.0, 1.0] {
                    let (nj, nk) = (self.axes[j] * sj, self.axes[k] * sk);
                    let mid = c + nj * self.half[j] + nk * self.half[k];
                    edges.push(Edge {
                        p: mid - e,
                        q: mid + e,
                        n1: nj,
                        n2: nk,
                        out: nj + nk,
                    });
                }
            }
        }
        true
    }
}

impl<S: Polyhedral> Polyhedral for Moved<'_, S> {
    fn holds_point(&self, x: DVec3, r: f64, tol: f64) -> Option<bool> {
        self.0.holds_point(x - self.1, r, tol)
    }
    fn as_box(&self) -> Option<OrientedBox> {
        self.0.as_box().map(|b| OrientedBox {
            center: b.center + self.1,
            ..b
        })
    }
    fn as_triangle(&self) -> Option<[DVec3; 3]> {
        self.0.as_triangle().map(|t| t.map(|v| v + self.1))
    }
    fn ends(&self) -> Option<(DVec3, DVec3)> {
        self.0.ends().map(|(a, b)| (a + self.1, b + self.1))
    }
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.face_normals(f);
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.0.edge_directions(f);
    }
    fn is_solid(&self) -> bool {
        self.0.is_solid()
    }
    fn solid_faces(&self, faces: &mut Vec<Face>) -> bool {
        let f0 = faces.len();
        if !self.0.solid_faces(faces) {
            return false;
        }
        let m = self.1;
        faces[f0..].iter_mut().for_each(|f| f.h += f.n.dot(m));
        true
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let (f0, e0) = (faces.len(), edges.len());
        if !self.0.features(faces, edges) {
            return false;
        }
        let m = self.1;
        faces[f0..].iter_mut().for_each(|f| f.h += f.n.dot(m));
        edges[e0..].iter_mut().for_each(|e| {
            e.p += m;
            e.q += m;
        });
        true
    }
}

/// Scratch space for [`penetration`]'s faces and edges, reused by every
/// call on a thread (a query meets many pieces).
#[derive(Default)]
struct Scratch {
    faces_a: Vec<Face>,
    edges_a: Vec<Edge>,
    faces_b: Vec<Face>,
    edges_b: Vec<Edge>,
    /// `n2 × n1` of every edge of b, for the Gauss-map test.
    cross_b: Vec<DVec3>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Penetration of `a` into `b`: the smallest distance `a` must move to be
/// separated from `b` (0 when they only touch), and the unit direction of
/// that move (from `b` towards `a`). For shapes that do not overlap the
/// depth is 0 or less (minus a lower bound of the gap along the best axis).
pub(crate) fn penetration(a: &impl Polyhedral, b: &impl Polyhedral) -> (f64, DVec3) {
    if let Some((_, u)) = closed_form(a, b, super::gjk::contact_eps(a, b)) {
        return along(a, b, u);
    }
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => general(a, b, &mut s),
        // a nested call (none today) finds the scratch taken: it uses its own
        Err(_) => general(a, b, &mut Scratch::default()),
    })
}

/// Whether the expanding polytope ([`super::epa`]) should go before
/// [`penetration`]: one of the shapes is a solid
/// ([`Polyhedral::is_solid`], no feature built). Flat pairs (triangles,
/// segments, points against each other) keep the separating axes: their
/// Minkowski difference may be flat, where the polytope cannot start.
///
/// Measured with the `peers` bench (`--profile`, queries per second,
/// separating axes first → polytope first): a 12-point hull on terrain
/// triangles 124k → 537k, on boxes 414k → 903k; boxes on boxes 602k →
/// 909k; capsules on boxes 914k → 1.27M. The separating axes rebuild both
/// shapes' faces and edges and try every edge pair with support calls;
/// the polytope, warm from GJK's last tetrahedron, needs a handful of
/// support points and gives the contact point with the depth.
pub(crate) fn expanding_first(a: &impl Polyhedral, b: &impl Polyhedral) -> bool {
    a.is_solid() || b.is_solid()
}

/// [`penetration`] without a closed form: each shape's features are
/// gathered once, into `s`; two shapes that know theirs (not both flat)
/// take [`by_features`], the others [`by_axes`] with what was gathered.
fn general(a: &impl Polyhedral, b: &impl Polyhedral, s: &mut Scratch) -> (f64, DVec3) {
    s.faces_a.clear();
    s.edges_a.clear();
    s.faces_b.clear();
    s.edges_b.clear();
    let a_known = a.features(&mut s.faces_a, &mut s.edges_a);
    let b_known = b.features(&mut s.faces_b, &mut s.edges_b);
    // two flat shapes: their difference may be flat too
    if a_known && b_known && (s.faces_a.len() > 2 || s.faces_b.len() > 2) {
        return by_features(a, b, s);
    }
    by_axes(
        a,
        b,
        a_known.then_some(&s.edges_a[..]),
        b_known.then_some(&s.edges_b[..]),
    )
}

/// The separating-axis depth of `a` and `b` and the unit direction `a`
/// moves, in closed form where there is one (two boxes; a box and a
/// triangle, either way round); below `−eps` when they are apart by more
/// than `eps` (found at the first axis that parts them so). `None`: no
/// closed form for these shapes.
pub(crate) fn closed_form(
    a: &impl Polyhedral,
    b: &impl Polyhedral,
    eps: f64,
) -> Option<(f64, DVec3)> {
    if let Some(ba) = &a.as_box() {
        if let Some(t) = b.as_triangle() {
            return least_overlap(&BoxTriangle::new(ba, &t)?, eps);
        }
        if let Some(bb) = b.as_box() {
            return least_overlap(&BoxBox::new(ba, &bb)?, eps);
        }
    }
    if let (Some(t), Some(bx)) = (a.as_triangle(), b.as_box()) {
        return least_overlap(&BoxTriangle::new(&bx, &t)?, eps).map(|(d, u)| (d, -u));
    }
    None
}

/// How far `a` must move along unit `u` to clear `b`, from support
/// values, with `u`.
pub(crate) fn along(a: &impl Support, b: &impl Support, u: DVec3) -> (f64, DVec3) {
    (b.support(u).dot(u) - a.support(-u).dot(u), u)
}

/// Candidate separating axes of two shapes, each visited with how far
/// `a` must move along `u` and along `−u` to clear the other shape, in
/// units of `|u|` (not normalised: `u` may be any length). `true` from
/// the visitor stops the scan.
trait Axes {
    fn scan(&self, visit: impl FnMut(DVec3, f64, f64) -> bool);
    /// `u` in world space, from the frame [`Axes::scan`] gives it in.
    fn world(&self, u: DVec3) -> DVec3;
}

/// Two boxes' candidate axes (Gottschalk, Lin and Manocha, "OBBTree",
/// SIGGRAPH 1996; Ericson, "Real-Time Collision Detection", 2004,
/// §4.4.1): the three face normals of each and the nine crosses of their
/// edge directions hold every face normal of the Minkowski difference.
/// Each axis is projected as the support function does — with the boxes'
/// own axes, orthonormal only to the rounding of f32 placements — so the
/// answers are the ones the general path's support values give. In
/// world space.
struct BoxBox<'a>(&'a OrientedBox, &'a OrientedBox);

impl<'a> BoxBox<'a> {
    /// `None` for a degenerate box (the general path takes those).
    fn new(a: &'a OrientedBox, b: &'a OrientedBox) -> Option<Self> {
        (a.half.min_element() > 0.0 && b.half.min_element() > 0.0).then_some(BoxBox(a, b))
    }
}

impl Axes for BoxBox<'_> {
    fn scan(&self, mut visit: impl FnMut(DVec3, f64, f64) -> bool) {
        // through a `dyn` visitor: the fifteen projections inlined with
        // the visitor into each caller measured 10% slower on box–box
        // yes/no tests (`peers --profile "300 boxes box yes/no"`), where
        // the triangle's scan gains 20% from it
        self.scan_dyn(&mut visit)
    }
    fn world(&self, u: DVec3) -> DVec3 {
        u
    }
}

impl BoxBox<'_> {
    /// [`Axes::scan`] for two boxes.
    fn scan_dyn(&self, visit: &mut dyn FnMut(DVec3, f64, f64) -> bool) {
        let (a, b) = (self.0, self.1);
        let t = b.center - a.center;
        let mut axis = |u: DVec3| {
            let radius = |bx: &OrientedBox| {
                bx.half.x * u.dot(bx.axes[0]).abs()
                    + bx.half.y * u.dot(bx.axes[1]).abs()
                    + bx.half.z * u.dot(bx.axes[2]).abs()
            };
            let (reach, dist) = (radius(a) + radius(b), u.dot(t));
            // a moves along +u until its bottom clears b's top, or along −u
            visit(u, reach + dist, reach - dist)
        };
        let _stopped = a.axes.iter().any(|&u| axis(u))
            || b.axes.iter().any(|&u| axis(u))
            || a.axes
                .iter()
                .any(|&ea| b.axes.iter().any(|&eb| axis(ea.cross(eb))));
    }
}

/// A box's and a triangle's candidate axes (Akenine-Möller, "Fast 3D
/// triangle-box overlap testing", 2001): the box's three axes, the
/// triangle's normal and the nine crosses of box axes with triangle
/// edges (a superset of the faces of their Minkowski difference), in the
/// box's frame.
struct BoxTriangle<'a> {
    b: &'a OrientedBox,
    /// The triangle's corners in the box's frame.
    p: [DVec3; 3],
}

impl<'a> BoxTriangle<'a> {
    /// `None` for a degenerate box or triangle (the general path takes
    /// those).
    fn new(b: &'a OrientedBox, t: &[DVec3; 3]) -> Option<Self> {
        if b.half.min_element() <= 0.0 {
            return None;
        }
        let ax = b.axes;
        let local = |v: DVec3| {
            let d = v - b.center;
            DVec3::new(d.dot(ax[0]), d.dot(ax[1]), d.dot(ax[2]))
        };
        let p = t.map(local);
        let n = (p[1] - p[0]).cross(p[2] - p[1]);
        (n.length_squared() > 1e-300).then_some(BoxTriangle { b, p })
    }
}

impl Axes for BoxTriangle<'_> {
    fn scan(&self, mut visit: impl FnMut(DVec3, f64, f64) -> bool) {
        let (p, h) = (&self.p, self.b.half);
        let f = [p[1] - p[0], p[2] - p[1], p[0] - p[2]];
        let mut axis = |u: DVec3| {
            let r = h.x * u.x.abs() + h.y * u.y.abs() + h.z * u.z.abs();
            let (d0, d1, d2) = (p[0].dot(u), p[1].dot(u), p[2].dot(u));
            let (lo, hi) = (d0.min(d1).min(d2), d0.max(d1).max(d2));
            // the box moves along +u: the triangle's top minus the box's
            // bottom; along −u: the box's top minus the triangle's bottom
            visit(u, hi + r, r - lo)
        };
        let _stopped = axis(DVec3::X)
            || axis(DVec3::Y)
            || axis(DVec3::Z)
            || axis(f[0].cross(f[1]))
            || f.iter().any(|e| {
                // (1, 0, 0) × e, (0, 1, 0) × e, (0, 0, 1) × e
                axis(DVec3::new(0.0, -e.z, e.y))
                    || axis(DVec3::new(e.z, 0.0, -e.x))
                    || axis(DVec3::new(-e.y, e.x, 0.0))
            });
    }
    fn world(&self, u: DVec3) -> DVec3 {
        let ax = self.b.axes;
        ax[0] * u.x + ax[1] * u.y + ax[2] * u.z
    }
}

/// Axes shorter than this (squared) are skipped: parallel edges, whose
/// faces' normals are among the axes anyway.
const SHORT_AXIS2: f64 = 1e-24;

/// The least overlap over `axes`, both ways each, and the unit world
/// direction `a` moves — or, at the first axis that parts the shapes by
/// more than `eps` (contact's tolerance), a depth below `−eps`. An axis a
/// hair apart does not stop the scan: that is touching, and another axis
/// may part them more. Overlaps are compared without roots while they are
/// not negative.
fn least_overlap(axes: &impl Axes, eps: f64) -> Option<(f64, DVec3)> {
    // the least overlap so far as m / √len2, along u / √len2
    let (mut best_m, mut best_len2, mut best_u) = (f64::INFINITY, 1.0f64, DVec3::Y);
    axes.scan(|u, plus, minus| {
        let len2 = u.length_squared();
        if len2 <= SHORT_AXIS2 || !len2.is_finite() {
            return false;
        }
        let (m, v) = if minus < plus { (minus, -u) } else { (plus, u) };
        let better = if m < 0.0 || best_m < 0.0 {
            m * best_len2.sqrt() < best_m * len2.sqrt()
        } else {
            m * m * best_len2 < best_m * best_m * len2
        };
        if better {
            (best_m, best_len2, best_u) = (m, len2, v);
        }
        m < 0.0 && m < -eps * len2.sqrt()
    });
    let world = axes.world(best_u);
    let len = world.length();
    (len > 0.0 && best_m.is_finite()).then(|| (best_m / best_len2.sqrt(), world / len))
}

/// Whether no axis of `axes` parts the shapes by more than `eps`: the
/// yes/no of [`least_overlap`] (its depth `≥ −eps`) without its roots
/// and divisions on the axes that overlap.
fn within(axes: &impl Axes, eps: f64) -> bool {
    let mut apart = false;
    axes.scan(|u, plus, minus| {
        let m = plus.min(minus);
        if m >= 0.0 {
            return false;
        }
        let len2 = u.length_squared();
        if len2 <= SHORT_AXIS2 || !len2.is_finite() {
            return false;
        }
        apart = m < -eps * len2.sqrt();
        apart
    });
    !apart
}

/// Whether `a` and `b` touch — no axis parts them by more than `eps` —
/// in closed form where [`closed_form`] has one; `None` otherwise.
pub(crate) fn closed_form_touches(
    a: &impl Polyhedral,
    b: &impl Polyhedral,
    eps: f64,
) -> Option<bool> {
    match (a.as_box(), b.as_box()) {
        (Some(ba), Some(bb)) => Some(within(&BoxBox::new(&ba, &bb)?, eps)),
        (Some(bx), None) => Some(within(&BoxTriangle::new(&bx, &b.as_triangle()?)?, eps)),
        (None, Some(bx)) => Some(within(&BoxTriangle::new(&bx, &a.as_triangle()?)?, eps)),
        (None, None) => None,
    }
}

/// [`penetration`] for two polyhedra that know their faces and edges, at
/// least one a solid: every face of the Minkowski difference `a − b` is a
/// face of `a`, a face of `−b`, or spanned by an edge of each whose
/// Gauss-map arcs cross, so the smallest support value over those is the
/// depth. A face needs one support call for a first bound (its own
/// vertices bound its shape's support value from below), an edge pair
/// none: the two edges' points give a lower bound of the support value
/// along their common normal (exact when they do span a face). Only a
/// bound below the best so far is checked with support calls, so every
/// answer is a true support value. Both shapes' features are in `s`.
fn by_features(a: &impl Polyhedral, b: &impl Polyhedral, s: &mut Scratch) -> (f64, DVec3) {
    let Scratch {
        faces_a,
        edges_a,
        faces_b,
        edges_b,
        cross_b,
    } = s;
    let mut best = (f64::INFINITY, DVec3::Y);
    // a face of a (normal n): a moves along −n, by h_a(n) − min over b;
    // the face's own support value is a lower bound of h_a(n) (equal to
    // it but for rounding: f32 planes and vertices, face vertices only),
    // checked with a support call when it would win
    for f in faces_a.iter() {
        let lo_b = b.support(-f.n).dot(f.n);
        if f.h - lo_b < best.0 {
            let d = a.support(f.n).dot(f.n) - lo_b;
            if d < best.0 {
                best = (d, -f.n);
            }
        }
    }
    // a face of b: a moves along n, by h_b(n) − min over a
    for f in faces_b.iter() {
        let lo_a = a.support(-f.n).dot(f.n);
        if f.h - lo_a < best.0 {
            let d = b.support(f.n).dot(f.n) - lo_a;
            if d < best.0 {
                best = (d, f.n);
            }
        }
    }
    cross_b.clear();
    cross_b.extend(edges_b.iter().map(|e| e.n2.cross(e.n1)));
    let mut try_pair = |m: DVec3, ea: &Edge, eb: &Edge| {
        // a lower bound: a's edge and b's edge along m
        let bound = m.dot(ea.p) - m.dot(eb.p);
        if bound < best.0 {
            // the true support values (equal to the bound for a real
            // face of the difference)
            let d = a.support(m).dot(m) - b.support(-m).dot(m);
            if d < best.0 {
                best = (d, -m);
            }
        }
    };
    for ea in edges_a.iter() {
        let bxa = ea.n2.cross(ea.n1);
        let da = ea.q - ea.p;
        for (eb, &dxc) in edges_b.iter().zip(cross_b.iter()) {
            if !minkowski_face(ea.n1, ea.n2, bxa, eb.n1, eb.n2, dxc) {
                continue;
            }
            let m = da.cross(eb.q - eb.p);
            let len2 = m.length_squared();
            // parallel edges span no face of the difference (their
            // faces' normals do)
            let floor = 1e-24 * da.length_squared() * (eb.q - eb.p).length_squared();
            if len2.is_nan() || len2 <= floor {
                continue;
            }
            let m = m / len2.sqrt();
            // the face's outward normal lies in a's arc
            let side = m.dot(ea.out);
            let tiny = 1e-9 * ea.out.length();
            if side >= -tiny {
                try_pair(m, ea, eb);
            }
            if side <= tiny {
                try_pair(-m, ea, eb);
            }
        }
    }
    best
}

/// [`penetration`] over explicit axes: the face normals of both shapes,
/// both ways, and the cross products of their edge directions (pruned by
/// the Gauss map where one side is a segment and the other a solid).
/// `ea`, `eb`: each shape's edges where it knows its features.
fn by_axes(
    a: &impl Polyhedral,
    b: &impl Polyhedral,
    ea: Option<&[Edge]>,
    eb: Option<&[Edge]>,
) -> (f64, DVec3) {
    let mut best = (f64::INFINITY, DVec3::Y);
    let mut try_axis = |u: DVec3| {
        let len = u.length();
        if len.is_nan() || len <= 1e-12 || len.is_infinite() {
            return;
        }
        let u = u / len;
        // a moved along +u: max over b minus min over a; along −u: the mirror
        let lo_a = a.support(-u).dot(u);
        let hi_a = a.support(u).dot(u);
        let lo_b = b.support(-u).dot(u);
        let hi_b = b.support(u).dot(u);
        let plus = hi_b - lo_a;
        let minus = hi_a - lo_b;
        if plus < best.0 {
            best = (plus, u);
        }
        if minus < best.0 {
            best = (minus, -u);
        }
    };
    let (mut fa, mut fb) = (0usize, 0usize);
    a.face_normals(&mut |n| {
        fa += 1;
        try_axis(n)
    });
    b.face_normals(&mut |n| {
        fb += 1;
        try_axis(n)
    });
    // a point or segment against a solid: the segment's Gauss map is the
    // great circle square to it, which a solid edge's arc must cross
    let crosses = |e: DVec3, c: DVec3, d: DVec3| c.dot(e) * d.dot(e) <= 1e-12 * e.length_squared();
    if let Some(eb) = eb.filter(|_| fb > 1 && fa == 0) {
        a.edge_directions(&mut |e| {
            for x in eb {
                if crosses(e, x.n1, x.n2) {
                    try_axis(e.cross(x.q - x.p));
                }
            }
        });
        return best;
    }
    if let Some(ea) = ea.filter(|_| fa > 1 && fb == 0) {
        b.edge_directions(&mut |e| {
            for x in ea {
                if crosses(e, x.n1, x.n2) {
                    try_axis((x.q - x.p).cross(e));
                }
            }
        });
        return best;
    }
    // edge pairs; the axes too, so shapes without faces (points,
    // segments) always have candidates (any direction is a valid upper
    // bound, so extra axes never spoil the minimum)
    for u in [DVec3::X, DVec3::Y, DVec3::Z] {
        try_axis(u);
    }
    // square to each edge: a point on a segment, or two segments on one
    // line, overlap by no more than along these (no edge pair's cross
    // product gives them, and the coordinate axes may all run along the
    // segment's length)
    let mut square_to = |e: DVec3| {
        if let Some(u) = e.try_normalize() {
            let (p, q) = u.any_orthonormal_pair();
            try_axis(p);
            try_axis(q);
        }
    };
    a.edge_directions(&mut square_to);
    b.edge_directions(&mut square_to);
    a.edge_directions(&mut |ea| {
        b.edge_directions(&mut |eb| {
            let c = ea.cross(eb);
            // parallel edges: no face of the difference from this pair
            if c.length_squared() > 1e-24 * ea.length_squared() * eb.length_squared() {
                try_axis(c);
            }
        });
        // a segment against a point or a flat shape in its plane: the
        // directions perpendicular to the edge within that plane
        b.face_normals(&mut |n| try_axis(ea.cross(n)));
    });
    b.edge_directions(&mut |eb| a.face_normals(&mut |n| try_axis(eb.cross(n))));
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::gjk::distance;
    use kiln_geometry::rng::Rng;

    /// A shape without its own [`Polyhedral::solid_edges_kept`] (a box)
    /// keeps exactly the edges of [`Polyhedral::solid_edges`] that `keep`
    /// takes, in order, after edges already in the list, and reports
    /// where all of them reach: on 4,000 turned boxes against boxes and
    /// slabs from missing them to holding them whole. Some, none and
    /// every edge kept all occur.
    #[test]
    fn a_box_keeps_exactly_the_near_edges() {
        let mut rng = Rng(0x0ed9_e5ce_a400_0002);
        let (mut none, mut some, mut all) = (0, 0, 0);
        for case in 0..4000 {
            let b = OrientedBox::random(&mut rng, 10.0);
            let mut faces = Vec::new();
            assert!(b.solid_faces(&mut faces), "case {case}");
            let mut every = Vec::new();
            assert!(b.solid_edges(&faces, &mut every), "case {case}");
            let n = rng.unit();
            let grow = if case % 8 == 0 { 8.0 } else { rng.f() * 2.0 };
            let at = b.center + rng.v(2.0);
            let half = DVec3::new(rng.f(), rng.f(), rng.f()) * grow;
            let keep = Near {
                n,
                low: at.dot(n) - grow * rng.f(),
                high: at.dot(n) + grow * rng.f(),
                lo: at - half,
                hi: at + half,
            };
            // one edge already there stays first
            let mut kept = vec![every[0]];
            let reach = b
                .solid_edges_kept(&faces, &mut kept, &keep)
                .expect("a solid box");
            let want: Vec<_> = std::iter::once(&every[0])
                .chain(every.iter().filter(|e| keep.keeps(e.p, e.q)))
                .map(|e| (e.p, e.q, e.n1, e.n2, e.out))
                .collect();
            let got: Vec<_> = kept.iter().map(|e| (e.p, e.q, e.n1, e.n2, e.out)).collect();
            assert_eq!(got, want, "case {case}");
            let mut whole = Extent::EMPTY;
            every.iter().for_each(|e| whole.add(e.p, e.q, n));
            assert_eq!(
                (reach.lo, reach.hi, reach.low, reach.high),
                (whole.lo, whole.hi, whole.low, whole.high),
                "case {case}"
            );
            match got.len() - 1 {
                0 => none += 1,
                k if k == every.len() => all += 1,
                _ => some += 1,
            }
        }
        assert!(
            none > 200 && some > 1000 && all > 100,
            "{none} none, {some} some, {all} all"
        );
    }

    #[test]
    fn a_point_on_a_segment_is_not_inside_it() {
        // a sphere's centre on a capsule collider's axis, 3 km out (a
        // fuzzer's case): the cores only touch, so their penetration is 0,
        // not the segment's overlap along a coordinate axis (it was 1 mm
        // along z, added to the contact's depth)
        let seg = Segment(
            DVec3::new(2998.731764793396, -200.4084127182141, 1499.7944820437115),
            DVec3::new(2999.731614112854, -200.39117834623903, 1499.7924320187885),
        );
        let on = seg.0.lerp(seg.1, 0.49987);
        let (depth, _) = penetration(&Segment(on, on), &seg);
        assert!(depth.abs() <= 1e-9, "depth {depth}");
        let (depth, _) = penetration(&Point(on), &seg);
        assert!(depth.abs() <= 1e-9, "depth {depth}");
        // two segments on one line, overlapping: no depth either
        let along = Segment(seg.0.lerp(seg.1, 0.3), seg.0.lerp(seg.1, 1.4));
        let (depth, _) = penetration(&along, &seg);
        assert!(depth.abs() <= 1e-9, "depth {depth}");
    }

    /// Brute force over many directions: every direction gives a valid
    /// separating move, so the true depth is at most their minimum.
    fn sampled(a: &impl Support, b: &impl Support, rng: &mut Rng) -> f64 {
        (0..20_000)
            .map(|_| {
                let u = rng.unit();
                b.support(u).dot(u) - a.support(-u).dot(u)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// The answer is a real separating move (moved by the depth plus a
    /// hair the shapes are apart; by the depth minus a hair they still
    /// overlap along that axis) and no sampled direction beats it.
    fn check(a: &impl Polyhedral, b: &impl Polyhedral, rng: &mut Rng, what: &str) {
        let (depth, n) = penetration(a, b);
        assert!((n.length() - 1.0).abs() < 1e-9, "{what}");
        if depth <= 0.0 {
            return;
        }
        let apart = distance(&Moved(a, n * (depth + 1e-6)), b);
        assert!(
            apart.is_some_and(|s| s.distance > 0.0),
            "{what}: moved by {depth} along {n} still overlapping"
        );
        let best = sampled(a, b, rng);
        assert!(
            depth <= best + 1e-9,
            "{what}: depth {depth} but a direction needs only {best}"
        );
        // sampling is within a few mm of the true minimum at these sizes
        assert!(
            depth >= best - 0.05,
            "{what}: depth {depth} vs sampled {best}"
        );
    }

    #[test]
    fn boxes_segments_points_and_triangles_against_sampled_directions() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..300 {
            let b1 = OrientedBox {
                center: DVec3::ZERO,
                axes: rng.rotation(),
                half: DVec3::new(0.2 + rng.f(), 0.2 + rng.f(), 0.01 + rng.f()),
            };
            let b2 = OrientedBox {
                center: rng.unit() * rng.f(),
                axes: rng.rotation(),
                half: DVec3::new(0.2 + rng.f(), 0.05 + rng.f(), 0.3 + rng.f()),
            };
            check(&b1, &b2, &mut rng, &format!("box/box {i}"));
            let tri = Triangle([rng.unit(), rng.unit(), rng.unit()]);
            check(&b1, &tri, &mut rng, &format!("box/triangle {i}"));
            let c = rng.unit() * 0.3;
            let seg = Segment(c - rng.unit(), c + rng.unit());
            check(&seg, &b2, &mut rng, &format!("segment/box {i}"));
            check(&seg, &tri, &mut rng, &format!("segment/triangle {i}"));
            let p = Point(rng.unit() * 0.3 * rng.f());
            check(&p, &b2, &mut rng, &format!("point/box {i}"));
        }
    }

    /// A solid with its Gauss map hidden: every edge pair is tried.
    struct AllPairs<'a, T>(&'a T);
    impl<T: Support> Support for AllPairs<'_, T> {
        fn support(&self, d: DVec3) -> DVec3 {
            self.0.support(d)
        }
        fn any_point(&self) -> DVec3 {
            self.0.any_point()
        }
    }
    impl<T: Polyhedral> Polyhedral for AllPairs<'_, T> {
        fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
            self.0.face_normals(f)
        }
        fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
            self.0.edge_directions(f)
        }
    }

    #[test]
    fn gauss_map_pruning_finds_the_same_depth_as_every_edge_pair() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut overlapping = 0;
        for i in 0..2000 {
            let b1 = OrientedBox {
                center: DVec3::ZERO,
                axes: rng.rotation(),
                half: DVec3::new(0.1 + rng.f(), 0.1 + rng.f(), 0.01 + rng.f()),
            };
            let b2 = OrientedBox {
                center: rng.unit() * rng.f() * 1.5,
                axes: rng.rotation(),
                half: DVec3::new(0.1 + rng.f(), 0.05 + rng.f(), 0.2 + rng.f()),
            };
            let (d, n) = penetration(&b1, &b2);
            let (all, _) = penetration(&AllPairs(&b1), &AllPairs(&b2));
            // (apart, the value is only some bound below zero)
            let same =
                |x: f64, y: f64| (x <= 0.0 && y <= 0.0) || (x - y).abs() <= 1e-12 * (1.0 + y.abs());
            assert!(same(d, all), "case {i}: {d} vs {all}");
            let c = rng.unit() * 0.3;
            let seg = Segment(c - rng.unit(), c + rng.unit());
            let (ds, _) = penetration(&seg, &b2);
            let (all_s, _) = penetration(&AllPairs(&seg), &AllPairs(&b2));
            assert!(same(ds, all_s), "segment {i}: {ds} vs {all_s}");
            overlapping += usize::from(ds > 0.0);
            let (dp, _) = penetration(&b1, &seg);
            let (all_p, _) = penetration(&AllPairs(&b1), &AllPairs(&seg));
            assert!(same(dp, all_p), "segment {i}: {dp} vs {all_p}");
            // a triangle is a flat polyhedron: faces ±n, rim edges
            let tri = Triangle([rng.unit() * 1.2, rng.unit() * 1.2, rng.unit() * 1.2]);
            let (dt, nt) = penetration(&b1, &tri);
            let (all_t, _) = penetration(&AllPairs(&b1), &AllPairs(&tri));
            assert!(same(dt, all_t), "box/triangle {i}: {dt} vs {all_t}");
            // the general path on the same pair (features, no closed form)
            let mut sc = Scratch::default();
            let (ft, _) = general(&b1, &tri, &mut sc);
            assert!(same(dt, ft), "box/triangle {i}: {dt} vs features {ft}");
            let (dr, _) = penetration(&tri, &b2);
            let (all_r, _) = penetration(&AllPairs(&tri), &AllPairs(&b2));
            assert!(same(dr, all_r), "triangle/box {i}: {dr} vs {all_r}");
            if dt > 0.0 {
                overlapping += 1;
                let apart = distance(&Moved(&b1, nt * (dt + 1e-9)), &tri);
                assert!(apart.is_some_and(|s| s.distance > 0.0), "box/triangle {i}");
            }
            if d > 0.0 {
                overlapping += 1;
                // the pruned axis separates
                let apart = distance(&Moved(&b1, n * (d + 1e-9)), &b2);
                assert!(apart.is_some_and(|s| s.distance > 0.0), "case {i}");
            }
        }
        assert!(overlapping > 500, "{overlapping}");
    }

    #[test]
    fn a_box_resting_into_a_floor_triangle_leaves_straight_up() {
        let floor = Triangle([
            DVec3::new(-10.0, 0.0, -10.0),
            DVec3::new(0.0, 0.0, 10.0),
            DVec3::new(10.0, 0.0, -10.0),
        ]);
        let b = OrientedBox {
            center: DVec3::new(0.0, 0.4, 0.0),
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
            half: DVec3::splat(0.5),
        };
        let (depth, n) = penetration(&b, &floor);
        assert!((depth - 0.1).abs() < 1e-12, "{depth}");
        assert!((n - DVec3::Y).length() < 1e-12, "{n}");
    }
}
