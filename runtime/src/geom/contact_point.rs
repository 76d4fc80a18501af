//! The point an overlap reports: a point of the collider piece's surface
//! that lies in or on the query shape, as far along the contact normal as
//! such points reach.
//!
//! Where the cores are apart the closest points give it directly
//! ([`super::convex_contact`]). Where they overlap, the witness of the depth — the
//! collider's point where the shape, moved out by the depth, last touches
//! it — lies up to the depth outside the shape as posed, so the point is
//! found here instead, from the vertices of the intersection of the two
//! convex bodies that lie on the collider's surface: the collider's edges
//! clipped to the shape, and the shape's edges clipped to the collider
//! (Cyrus and Beck, "Generalized two- and three-dimensional clipping",
//! 1978). Of those the ones farthest along the normal — the collider's
//! part deepest in the shape — are averaged, so a box resting on a floor
//! reports the middle of the patch it rests on.
//!
//! A rounded side (a sphere's or capsule's core) contributes its core
//! clipped to the other side, and its surface points around it.
//!
//! The features and half-spaces of both sides are built once per call
//! into per-thread buffers, so settling a contact allocates nothing once a
//! thread has warmed up.

use super::gjk::OrientedBox;
use super::sat::{Edge, Face, Near, Polyhedral};
use glam::DVec3;
use std::cell::RefCell;

/// A bounding half-space `m · x ≤ k`, with `|m|` kept so that growing it
/// by a distance costs no square root.
#[derive(Clone, Copy, Debug)]
struct Half {
    m: DVec3,
    k: f64,
    len: f64,
}

impl Half {
    fn new(m: DVec3, k: f64) -> Half {
        Half {
            m,
            k,
            len: m.length(),
        }
    }

    /// How far inside the half-space grown by `tol` the point `x` lies
    /// (scaled by `|m|`; negative: outside).
    #[inline]
    fn room(&self, x: DVec3, tol: f64) -> f64 {
        self.k + tol * self.len - self.m.dot(x)
    }

    /// Whether every point of the box of middle `c` and half extents `e`
    /// lies more than `2 tol` below the plane (`k − m · x > 2 tol`):
    /// then the half-space (grown by `tol`) cuts no segment in the box,
    /// and [`ends_on_surface`] finds every point of one clear of the
    /// plane, as it asks. The greatest `m · x` over the box is
    /// `m · c + |m| · e`; the slack of 10⁻¹² of every magnitude is far
    /// above the rounding of this test and of the point by point one, so
    /// where this says clear, each point's own test says so too.
    #[inline]
    fn holds_box_clear(&self, c: DVec3, e: DVec3, tol: f64) -> bool {
        let a = self.m.abs();
        let reach = a.dot(e);
        let slack = 1e-12 * (a.dot(c.abs()) + reach + self.k.abs() + tol * self.len);
        self.k - self.m.dot(c) - reach - slack > 2.0 * tol
    }
}

/// What [`deepest`] works in: the candidate points, and the collider's
/// half-spaces that may cut the shape's edges.
#[derive(Default)]
struct Work {
    found: Vec<DVec3>,
    hs: Vec<Half>,
}

/// A polyhedral piece's features, in buffers reused from call to call.
#[derive(Default)]
struct Buffers {
    faces: Vec<Face>,
    edges: Vec<Edge>,
    hs: Vec<Half>,
}

/// A body's features kept in [`Buffers`] from one settle to the next:
/// what the body is, its features aside.
#[derive(Clone, Copy)]
enum Kind {
    Poly {
        solid: bool,
        lo: DVec3,
        hi: DVec3,
        along: Option<(f64, f64)>,
    },
    Line(DVec3, DVec3),
}

impl Kind {
    fn of(b: &Body) -> Kind {
        match b {
            Body::Poly(p) => Kind::Poly {
                solid: p.solid,
                lo: p.lo,
                hi: p.hi,
                along: p.along,
            },
            Body::Line(a, b) => Kind::Line(*a, *b),
        }
    }

    /// The body, its features in `buf` (where [`Body::of`] built them;
    /// the one place a [`Poly`] is put together).
    fn body(self, buf: &Buffers) -> Body<'_> {
        match self {
            Kind::Poly {
                solid,
                lo,
                hi,
                along,
            } => Body::Poly(Poly {
                faces: &buf.faces,
                edges: &buf.edges,
                hs: &buf.hs,
                solid,
                lo,
                hi,
                along,
            }),
            Kind::Line(a, b) => Body::Line(a, b),
        }
    }
}

/// A polyhedron as the clipper sees it: its faces, its edges (with a flat
/// shape's in-plane outward normals), and the half-spaces bounding it
/// (its face planes, and for a flat one its rim's in-plane planes).
#[derive(Clone, Copy)]
struct Poly<'a> {
    faces: &'a [Face],
    edges: &'a [Edge],
    hs: &'a [Half],
    solid: bool,
    /// The corners of its bounding box.
    lo: DVec3,
    hi: DVec3,
    /// Where only its edges near a shape were built
    /// ([`Body::with_edges_near`]): the lowest and highest levels of all
    /// of them along the normal they were built for.
    along: Option<(f64, f64)>,
}

/// A convex piece as the clipper sees it.
#[derive(Clone, Copy)]
enum Body<'a> {
    /// A polyhedron.
    Poly(Poly<'a>),
    /// A point or a segment (grown by a radius outside this module).
    Line(DVec3, DVec3),
}

impl<'a> Body<'a> {
    /// The piece `s`, its features built into `buf`; a solid's faces
    /// only, where `edges` is false and it can list them alone (its edges
    /// and bounding box are then left empty).
    fn of(s: &impl Polyhedral, buf: &'a mut Buffers, edges: bool) -> Option<Body<'a>> {
        buf.faces.clear();
        buf.edges.clear();
        buf.hs.clear();
        if !edges && s.solid_faces(&mut buf.faces) {
            buf.hs.extend(buf.faces.iter().map(|f| Half::new(f.n, f.h)));
            let (lo, hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
            let buf: &'a Buffers = buf;
            return Some(
                Kind::Poly {
                    solid: true,
                    lo,
                    hi,
                    along: None,
                }
                .body(buf),
            );
        }
        let built = match s.as_box() {
            Some(b) if b.half.min_element() <= 0.0 => match flat_box(&b, buf)? {
                Some(line) => return Some(line),
                None => true,
            },
            _ => s.features(&mut buf.faces, &mut buf.edges),
        };
        if !built {
            return s.ends().map(|(a, b)| Body::Line(a, b));
        }
        let solid = buf.faces.len() > 2;
        buf.hs.extend(buf.faces.iter().map(|f| Half::new(f.n, f.h)));
        if !solid {
            let rim = buf.edges.iter().map(|e| Half::new(e.out, e.out.dot(e.p)));
            buf.hs.extend(rim);
        }
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for e in &buf.edges {
            lo = lo.min(e.p.min(e.q));
            hi = hi.max(e.p.max(e.q));
        }
        let buf: &'a Buffers = buf;
        Some(
            Kind::Poly {
                solid,
                lo,
                hi,
                along: None,
            }
            .body(buf),
        )
    }

    /// The piece `s` with its edges, where `buf` holds the faces alone of
    /// a solid that [`Body::of`] built, for [`deepest`] against the
    /// polyhedron `q` along `n`: its edges added to them where the piece
    /// can ([`Polyhedral::solid_edges_kept`]), else built whole again.
    /// Only the edges that can reach into `q`'s bounding box and its slab
    /// along `n` (to `tol`) are built — the edges `deepest` would pass
    /// over for lying outside either are not — with the bounding box and
    /// the levels along `n` of all of them, which `deepest` asks for.
    /// What `deepest` finds is the same as with every edge.
    fn with_edges_near(
        s: &impl Polyhedral,
        buf: &'a mut Buffers,
        q: &Poly,
        n: DVec3,
        tol: f64,
    ) -> Option<Body<'a>> {
        buf.edges.clear();
        let (q_low, q_high) = levels(q.edges, n);
        // `deepest`'s test of an edge, less what every edge of `s` passes
        // (lying within the collider's own box and levels)
        let keep = Near {
            n,
            low: q_low - tol,
            high: q_high + tol,
            lo: q.lo - tol,
            hi: q.hi + tol,
        };
        let Some(reach) = s.solid_edges_kept(&buf.faces, &mut buf.edges, &keep) else {
            return Body::of(s, buf, true);
        };
        let buf: &'a Buffers = buf;
        Some(
            Kind::Poly {
                solid: true,
                lo: reach.lo,
                hi: reach.hi,
                along: Some((reach.low, reach.high)),
            }
            .body(buf),
        )
    }

    /// Whether the body is a solid's faces alone, built without its
    /// edges.
    fn faces_alone(&self) -> bool {
        matches!(self, Body::Poly(p) if p.solid && p.edges.is_empty())
    }

    /// Whether `x` lies in the body grown by `r` (to `tol`).
    fn holds(&self, r: f64, x: DVec3, tol: f64) -> bool {
        match self {
            Body::Poly(p) => within(x, p.hs, tol + r),
            Body::Line(a, b) => (x - on_segment(*a, *b, x)).length() <= r + tol,
        }
    }

    /// Whether the body has no inside (every point of it is on its
    /// surface).
    fn flat(&self) -> bool {
        matches!(self, Body::Poly(Poly { solid: false, .. }))
    }
}

/// A box with a zero extent (a query box may have one): a rectangle, built
/// into `buf` (`Some(None)`), or a segment or a point (`Some(Some(line))`).
fn flat_box<'a>(b: &OrientedBox, buf: &mut Buffers) -> Option<Option<Body<'a>>> {
    let c = b.center;
    let wide = |k: usize| b.half[k] > 0.0;
    let axis = |k: usize| b.axes[k].try_normalize();
    let mut w = (0..3).filter(|&k| wide(k));
    let (i, j) = (w.next(), w.next());
    match (i, j) {
        (None, _) => Some(Some(Body::Line(c, c))),
        (Some(i), None) => {
            let e = b.axes[i] * b.half[i];
            Some(Some(Body::Line(c - e, c + e)))
        }
        (Some(i), Some(j)) => {
            let flat = 3 - i - j;
            let n = axis(flat)?;
            let (ai, aj) = (axis(i)?, axis(j)?);
            let (ei, ej) = (ai * b.half[i], aj * b.half[j]);
            buf.faces.push(Face { n, h: n.dot(c) });
            buf.faces.push(Face {
                n: -n,
                h: -n.dot(c),
            });
            for (along, across, a) in [(ei, ej, aj), (ej, ei, ai)] {
                for s in [-1.0, 1.0] {
                    let mid = c + across * s;
                    buf.edges.push(Edge {
                        p: mid - along,
                        q: mid + along,
                        n1: n,
                        n2: -n,
                        out: a * s,
                    });
                }
            }
            Some(None)
        }
    }
}

/// The part `[t0, t1]` of the segment `a + t (b − a)`, `t ∈ [0, 1]`, inside
/// the half-spaces grown by `tol` (Cyrus and Beck).
fn clip(a: DVec3, b: DVec3, hs: &[Half], tol: f64) -> Option<(f64, f64)> {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for h in hs {
        if !cut(&mut t0, &mut t1, h.room(a, tol), h.m.dot(d)) {
            return None;
        }
    }
    Some((t0, t1))
}

/// Narrows the part `[t0, t1]` of a segment to one half-space, where
/// `room` is how far inside it the segment's start lies and `rate` how
/// fast the segment leaves it (both scaled alike); `false` where nothing
/// is left. A bound moves to `room / rate`, worked out only where it can
/// move: a quotient clear of the bound by a millionth of a millionth is
/// told by one product, far beyond either's rounding (most half-spaces
/// leave a segment's part as it is, and the division was most of the
/// clipper's time).
///
/// Whether anything moves is told first without a branch on the sign of
/// `rate`: that sign is a coin toss from one half-space to the next, so
/// a branch on it went wrong about half the time (without it, hull
/// overlaps on 2,000 hulls ran 8–11% faster). Where nothing moves (most
/// half-spaces) the part is left as it is and stays non-empty, as
/// [`cut_moving`] would leave it.
#[inline(always)]
fn cut(t0: &mut f64, t1: &mut f64, room: f64, rate: f64) -> bool {
    let up_stays = room > *t1 * rate * (1.0 + 1e-12);
    let down_stays = room > *t0 * rate * (1.0 - 1e-12);
    // `&` and `|`, not `&&` and `||`: no branch until the rare one
    let moves =
        (rate > 0.0) & !up_stays | (rate < 0.0) & !down_stays | (rate == 0.0) & (room < 0.0);
    if !moves {
        return true;
    }
    cut_moving(t0, t1, room, rate)
}

/// [`cut`] where a bound may move (or a parallel segment lies outside).
#[inline(never)]
fn cut_moving(t0: &mut f64, t1: &mut f64, room: f64, rate: f64) -> bool {
    if rate == 0.0 {
        if room < 0.0 {
            return false;
        }
    } else if rate > 0.0 {
        // `room / rate > t1`, with `t1 ≥ 0`: the upper bound stays
        let stays = room > *t1 * rate * (1.0 + 1e-12);
        if !stays {
            *t1 = t1.min(room / rate);
        }
    } else {
        // `room / rate < t0`, with `t0 ≥ 0`: the lower bound stays
        let stays = room > *t0 * rate * (1.0 - 1e-12);
        if !stays {
            *t0 = t0.max(room / rate);
        }
    }
    // (`min` and `max` pass over a NaN quotient: the bounds stay numbers)
    *t0 <= *t1
}

/// Calls `f` with each end of the part of the segment `a`–`b` in `c`
/// (clipped to its half-spaces grown by `tol`) that lies on its surface.
///
/// An end of the segment itself, left unclipped, lies on a solid's
/// surface where it is within `tol` of a face plane; the clipping works
/// out how far below every plane each end lies on the way, so an end
/// clear of them all by twice that (far beyond the rounding of either
/// way of working it out) is passed over without testing each face
/// again — most ends of a shape's edges inside the collider are.
fn ends_on_surface(a: DVec3, b: DVec3, c: &Poly, tol: f64, mut f: impl FnMut(DVec3)) {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let (mut clear_a, mut clear_b) = (f64::INFINITY, f64::INFINITY);
    for h in c.hs {
        let room = h.room(a, tol);
        let rate = h.m.dot(d);
        let clear = room - tol * h.len;
        clear_a = clear_a.min(clear);
        clear_b = clear_b.min(clear - rate);
        if !cut(&mut t0, &mut t1, room, rate) {
            return;
        }
    }
    for t in [t0, t1] {
        // `lerp` gives `a` itself at 0 and `b` itself at 1
        let clear = match t {
            0.0 => clear_a,
            1.0 => clear_b,
            _ => f64::NEG_INFINITY,
        };
        if c.solid && tol > 0.0 && clear > 2.0 * tol {
            continue;
        }
        let x = a.lerp(b, t);
        if on_surface(x, c, tol) {
            f(x);
        }
    }
}

/// Whether `x` lies within `tol` of a face of the solid `faces` (which it
/// is inside).
fn on_boundary(x: DVec3, faces: &[Face], tol: f64) -> bool {
    faces.iter().any(|f| f.n.dot(x) - f.h >= -tol)
}

/// Whether `x` lies in the half-spaces grown by `tol`.
fn within(x: DVec3, hs: &[Half], tol: f64) -> bool {
    hs.iter().all(|h| h.room(x, tol) >= 0.0)
}

/// Whether `x`, in the polyhedron `p` (to `tol`), is on its surface.
fn on_surface(x: DVec3, p: &Poly, tol: f64) -> bool {
    !p.solid || on_boundary(x, p.faces, tol)
}

/// The closest point of the segment `a`–`b` to `p`.
pub(crate) fn on_segment(a: DVec3, b: DVec3, p: DVec3) -> DVec3 {
    let e = b - a;
    let ee = e.length_squared();
    if ee == 0.0 {
        return a;
    }
    a + e * ((p - a).dot(e) / ee).clamp(0.0, 1.0)
}

/// The unit direction from the closest point of the segment `a`–`b` to
/// `x`, and the distance. Where that point lies inside the segment the
/// direction is across the axis: the part of `x − a` across `e = b − a`,
/// taken as `(e × w) × e`, which is square to `e` to the rounding of its
/// own size (a subtracted projection keeps a rounding residue along the
/// axis, which sent a centre on the axis out along it). Where `x` is on
/// the segment, any direction across it is as short a way out (`Y` for a
/// segment that is a point).
pub(crate) fn from_segment(a: DVec3, b: DVec3, x: DVec3) -> (DVec3, f64) {
    let (e, w) = (b - a, x - a);
    let ee = e.length_squared();
    let along = w.dot(e);
    let (v, len) = if along > 0.0 && along < ee {
        let c = e.cross(w);
        (c.cross(e), c.length() / ee.sqrt())
    } else {
        let v = x - on_segment(a, b, x);
        (v, v.length())
    };
    let n = if len > 0.0 && v.length_squared() > 0.0 {
        v.normalize()
    } else {
        // glam's orthonormal vector asks for a unit axis
        e.normalize_or(DVec3::X).any_orthonormal_vector()
    };
    (if n.is_finite() { n } else { DVec3::Y }, len)
}

/// The point of the second segment closest to the first (Ericson,
/// "Real-Time Collision Detection", 2004, §5.1.9).
fn segments_closest_on_second(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> DVec3 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    if a == 0.0 {
        return on_segment(p2, q2, p1);
    }
    if e == 0.0 {
        return p2;
    }
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = a * e - b * b;
    let s = if denom > 0.0 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p2 + d2 * ((b * s + f) / e).clamp(0.0, 1.0)
}

/// The surface points of the rounded piece (`a`–`b` grown by `r`) around
/// its core point `y`: out from the axis towards `n` and away from it,
/// and, at an end, out along the axis.
fn around(a: DVec3, b: DVec3, r: f64, y: DVec3, n: DVec3, out: &mut impl FnMut(DVec3)) {
    let axis = b - a;
    let len = axis.length();
    let u = if len > 0.0 {
        let ax = axis / len;
        let across = n - ax * n.dot(ax);
        if (y - a).length() <= 1e-12 * len {
            out(y - ax * r);
        }
        if (y - b).length() <= 1e-12 * len {
            out(y + ax * r);
        }
        across.try_normalize()
    } else {
        Some(n)
    };
    if let Some(u) = u {
        out(y + u * r);
        out(y - u * r);
    }
}

/// The candidate points, in a buffer reused from call to call, and what
/// is farthest along a normal among them.
struct Candidates<'a>(&'a mut Vec<DVec3>);

impl Candidates<'_> {
    fn offer(&mut self, x: DVec3) {
        self.0.push(x);
    }

    fn found(&self) -> bool {
        !self.0.is_empty()
    }

    /// The first candidate farthest along `n`, and the average of those
    /// within `tol` of it; `None` where there are none.
    fn farthest(&self, n: DVec3, tol: f64) -> Option<(DVec3, DVec3)> {
        let best = self
            .0
            .iter()
            .map(|x| x.dot(n))
            .fold(f64::NEG_INFINITY, f64::max);
        let first = *self.0.iter().find(|x| x.dot(n) == best)?;
        let (mut sum, mut count) = (DVec3::ZERO, 0u32);
        for &x in self.0.iter().filter(|x| x.dot(n) >= best - tol) {
            sum += x;
            count += 1;
        }
        Some((first, sum / count as f64))
    }
}

/// A point of the surface of `cb` grown by `rc` in or on `qb` grown by
/// `rq` (to `tol`), from the vertices of their intersection, as far
/// along `n` as those reach (the farthest averaged where they tie, for a
/// polyhedral collider); `None` where none is found (a rounded side the
/// clipping does not reach, or a shape wholly inside).
fn deepest(
    qb: &Body,
    rq: f64,
    cb: &Body,
    rc: f64,
    n: DVec3,
    tol: f64,
    work: &mut Work,
) -> Option<DVec3> {
    let Work { found, hs } = work;
    found.clear();
    let mut far = Candidates(found);
    match (qb, cb) {
        (Body::Poly(q), Body::Poly(c)) => {
            // every vertex of the intersection lies in both bounding boxes:
            // an edge that misses their common box adds none
            let (lo, hi) = (q.lo.max(c.lo) - tol, q.hi.min(c.hi) + tol);
            // and both slabs along the normal, which for a shallow contact
            // is thin; an edge reaching no higher along it than a
            // candidate found less the tie tolerance adds none that counts
            let (bottom, top) = {
                let (q_low, q_high) = levels(q.edges, n);
                let (c_low, c_high) = c.along.unwrap_or_else(|| levels(c.edges, n));
                (q_low.max(c_low) - tol, q_high.min(c_high) + tol)
            };
            let mut best = f64::NEG_INFINITY;
            // `&`, not `&&`: each test is a few instructions, and which
            // one fails varies from edge to edge, so one branch at the end
            // beats a chain of mispredicted ones
            let near = |e: &Edge, best: f64| {
                let (a, b) = (e.p.dot(n), e.q.dot(n));
                let (low, high) = (a.min(b), a.max(b));
                (low <= top)
                    & (high >= bottom)
                    & (high >= best - tol)
                    & e.p.min(e.q).cmple(hi).all()
                    & e.p.max(e.q).cmpge(lo).all()
            };
            // the collider's edges in the shape: on its surface throughout
            for e in c.edges {
                if near(e, best)
                    && let Some((t0, t1)) = clip(e.p, e.q, q.hs, tol)
                {
                    for t in [t0, t1] {
                        let x = e.p.lerp(e.q, t);
                        best = best.max(x.dot(n));
                        far.offer(x);
                    }
                }
            }
            // the shape's edges in the collider, where they meet its
            // surface: clipped to the collider's half-spaces less those
            // that hold the shape's bounding box clear of their planes,
            // which cut none of them and hold no end on the surface
            let c_near = match middle(q.lo, q.hi) {
                Some((m, e)) => {
                    // kept in order without a branch on each test (they
                    // pass and fail at random): every half-space is
                    // written, the count moves past the kept ones
                    hs.clear();
                    hs.resize(c.hs.len(), Half::new(DVec3::ZERO, 0.0));
                    let mut kept = 0;
                    for h in c.hs {
                        hs[kept] = *h;
                        kept += usize::from(!h.holds_box_clear(m, e, tol));
                    }
                    hs.truncate(kept);
                    Poly { hs, ..*c }
                }
                None => *c,
            };
            for e in q.edges {
                if near(e, best) {
                    ends_on_surface(e.p, e.q, &c_near, tol, |x| {
                        best = best.max(x.dot(n));
                        far.offer(x);
                    });
                }
            }
            // the farthest, averaged where they tie: a point of their face
            // of the intersection, which lies on the collider's surface
            // where every tie does on one face; else the first
            let (first, mid) = far.farthest(n, tol)?;
            let fits = within(mid, c.hs, tol) && on_surface(mid, c, tol) && within(mid, q.hs, tol);
            return Some(if fits { mid } else { first });
        }
        (Body::Line(a, b), Body::Poly(c)) => {
            // the shape's core where it meets the collider's surface
            ends_on_surface(*a, *b, c, tol, |x| far.offer(x));
            if !far.found() && c.solid {
                // the core wholly inside: the surface point nearest it,
                // the projection of an end onto the nearest face plane,
                // if the radius reaches it
                for end in [*a, *b] {
                    if let Some((f, gap)) = c
                        .faces
                        .iter()
                        .map(|f| (f, f.h - f.n.dot(end)))
                        .min_by(|x, y| x.1.total_cmp(&y.1))
                        && gap <= rq + tol
                    {
                        far.offer(end + f.n * gap);
                    }
                }
            }
        }
        (Body::Poly(q), Body::Line(a, b)) => {
            // the collider's core in the shape, and its surface around it
            if let Some((t0, t1)) = clip(*a, *b, q.hs, tol) {
                for t in [t0, t1] {
                    around(*a, *b, rc, a.lerp(*b, t), n, &mut |x| {
                        if within(x, q.hs, tol) {
                            far.offer(x);
                        }
                    });
                }
            }
        }
        (Body::Line(qa, qb), Body::Line(a, b)) => {
            let y = segments_closest_on_second(*qa, *qb, *a, *b);
            let in_q = |x: DVec3| (x - on_segment(*qa, *qb, x)).length() <= rq + tol;
            around(*a, *b, rc, y, n, &mut |x| {
                if in_q(x) {
                    far.offer(x);
                }
            });
            if !far.found() {
                // the collider's surface out from its core through an end
                // of the shape's core: in the shape where the end lies
                // within the shape's radius of that surface
                for e in [*qa, *qb] {
                    let ye = on_segment(*a, *b, e);
                    let Some(u) = (e - ye).try_normalize() else {
                        continue;
                    };
                    let x = ye + u * rc;
                    if in_q(x) {
                        far.offer(x);
                    }
                }
            }
        }
    }
    far.farthest(n, tol).map(|(first, _)| first)
}

/// The lowest and the highest level along `n` of the edges' ends.
fn levels(edges: &[Edge], n: DVec3) -> (f64, f64) {
    edges
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), e| {
            let (a, b) = (e.p.dot(n), e.q.dot(n));
            (low.min(a.min(b)), high.max(a.max(b)))
        })
}

/// A point of both cores, where they overlap and one is a point or a
/// segment: that core clipped to the other, or the segments' closest
/// points.
fn common_core_point(qb: &Body, cb: &Body, tol: f64) -> Option<DVec3> {
    match (qb, cb) {
        (Body::Line(a, b), Body::Poly(p)) | (Body::Poly(p), Body::Line(a, b)) => {
            clip(*a, *b, p.hs, tol).map(|(t0, t1)| a.lerp(*b, 0.5 * (t0 + t1)))
        }
        (Body::Line(qa, qb), Body::Line(a, b)) => {
            Some(segments_closest_on_second(*qa, *qb, *a, *b))
        }
        _ => None,
    }
}

/// What [`settle`] works in on each thread: the shape's and the
/// collider's features, and the candidate points.
#[derive(Default)]
struct Scratch {
    q: Buffers,
    /// The key of the shape whose body `q` holds, where it has one
    /// ([`Polyhedral::body_key`]), whether its edges were built, and the
    /// body: a query hull settled against many pieces is built once.
    q_key: Option<(u64, bool, Option<Kind>)>,
    c: Buffers,
    work: Work,
}

thread_local! {
    /// [`settle`]'s buffers, reused on each thread.
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// The point an overlap of `q` grown by `rq` with `c` grown by `rc`
/// reports, given its contact (`witness`, `normal`, `depth`): a point of
/// the collider's surface in or on the shape.
///
/// - The witness, where it lies in the shape: it is the collider's point
///   where the shape, moved out by the depth, touches it, so its farthest
///   point along the normal, and `witness − depth · normal` is on the
///   shape's surface — the point agrees with the normal and the depth.
/// - Else the intersection's vertices on the collider's surface, deepest
///   along the normal ([`deepest`]).
/// - Else (a rounded side whose core the other does not reach) where the
///   segment from a point of both to a point of the shape outside the
///   collider crosses the collider's surface, found by bisection.
///
/// `None`: no such point was found — a shape wholly inside the
/// collider, which then keeps the witness. (Returning `None` or the
/// witness reports the same point; the tests for a shape wholly inside
/// run in whichever order is cheapest: the collider proving the shape
/// inside without placing its faces, face by face its bounding box or
/// else its corners ([`Polyhedral::holds_corners`]), then its faces,
/// then face by face the shape's box or corners ([`wholly_inside`]), its
/// edges built only for a shape that is not.)
pub(crate) fn settle(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    contact: (DVec3, DVec3, f64),
    tol: f64,
) -> Option<DVec3> {
    // a box reaching into a ball (the ball's centre may be in it): the
    // three cases below in closed form, in the box's frame, without
    // building either body
    if rq == 0.0
        && let (Some(b), Some((a, e))) = (q.as_box(), c.ends())
        && a == e
    {
        match box_in_ball(&b, a, rc, contact, tol) {
            InBall::Point(x) => return Some(x),
            InBall::Wholly => return None,
            InBall::Open => {}
        }
    }
    // the witness, the collider's farthest point along the normal, where
    // it lies in the shape, told without building the bodies where the
    // shape is a sphere, a capsule or a box (the common cases)
    let witness = contact.0;
    if q.holds_point(witness, rq, tol) == Some(true) {
        return Some(witness);
    }
    // a shape wholly inside a rounded collider (a small box in a big
    // ball): no point of the surface in it, told without the bodies
    if let Some((a, b)) = c.ends()
        && quickly_all_corners(q, |x| (x - on_segment(a, b, x)).length() + rq < rc) == Some(true)
    {
        return None;
    }
    // a ball reaching through a capsule, across its side: in closed form
    if let (Some((a, b)), Some((p, e))) = (q.ends(), c.ends())
        && p == e
        && let Some(x) = ball_through_capsule(a, b, rq, p, rc, contact.1)
    {
        return Some(x);
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => settle_in(q, rq, c, rc, contact, tol, &mut scratch),
        // not reached (settling never settles another contact), but safe
        Err(_) => settle_in(q, rq, c, rc, contact, tol, &mut Scratch::default()),
    })
}

/// The point of the ball of centre `p` and radius `r` on its surface,
/// inside the capsule `a`–`b` grown by `rq`, farthest along `n` — where
/// `n` runs from the centre square across the capsule's axis, towards the
/// axis point `y` closest to the centre, and the ball reaches past the
/// capsule's far side (`r` beyond `|p − y| + rq`). No point of the capsule
/// lies farther along `n` than its far side's line `y + n·rq + s·axis`;
/// the ball's surface meets that line at `s = ±√(r² − (|p − y| + rq)²)`,
/// and a meeting within the segment is the answer. `None` (the general
/// path): the centre beside an end, `n` not square to the axis, or both
/// meetings past the ends.
fn ball_through_capsule(a: DVec3, b: DVec3, rq: f64, p: DVec3, r: f64, n: DVec3) -> Option<DVec3> {
    let e = b - a;
    let len = e.length();
    if len == 0.0 || !len.is_finite() {
        return None;
    }
    let u = e / len;
    let t = (p - a).dot(u);
    if t <= 0.0 || t >= len || n.dot(u).abs() > 1e-9 {
        return None;
    }
    let y = a + u * t;
    // the centre's distance from the axis, along n
    let d = (y - p).dot(n);
    let s2 = r * r - (d + rq) * (d + rq);
    if d < 0.0 || s2 < 0.0 {
        return None;
    }
    let s = s2.sqrt();
    // the meeting nearer the segment's middle, if within it
    let toward = if t < 0.5 * len { 1.0 } else { -1.0 };
    [t + toward * s, t - toward * s]
        .into_iter()
        .find(|&k| (0.0..=len).contains(&k))
        .map(|k| p + n * (d + rq) + u * (k - t))
}

/// What [`box_in_ball`] found.
#[derive(Debug, PartialEq)]
pub(crate) enum InBall {
    /// The contact point.
    Point(DVec3),
    /// The box lies wholly inside the ball: no point of the ball's
    /// surface in it.
    Wholly,
    /// Nothing found in closed form (a flat box): the general path.
    Open,
}

/// [`settle`] for a box `b` reaching into the ball of centre `p` and
/// radius `r`, with the contact `(witness, normal, depth)`, in the box's
/// frame: the witness where the box holds it; else [`InBall::Wholly`]
/// where every corner is inside the ball (the farthest corner from the
/// centre is the one on the far side on every axis); else the ball's
/// surface point in the box farthest along the normal
/// ([`ball_surface_in_box`]). The same three cases, in the same order,
/// as `settle`'s general tests (`holds_point`, the corners one by one),
/// which took a third of a box overlap on a field of balls.
fn box_in_ball(
    b: &OrientedBox,
    p: DVec3,
    r: f64,
    contact: (DVec3, DVec3, f64),
    tol: f64,
) -> InBall {
    let d = p - b.center;
    let c = DVec3::new(d.dot(b.axes[0]), d.dot(b.axes[1]), d.dot(b.axes[2]));
    box_in_ball_from(b, p, c, r, contact, tol)
}

/// [`box_in_ball`] with the centre's box coordinates `c` already found
/// (`(p − centre) · axis`, as a box's closest point finds them).
pub(crate) fn box_in_ball_from(
    b: &OrientedBox,
    p: DVec3,
    c: DVec3,
    r: f64,
    (witness, n, _): (DVec3, DVec3, f64),
    tol: f64,
) -> InBall {
    let h = b.half;
    if h.min_element() <= 0.0 {
        return InBall::Open;
    }
    let ax = b.axes;
    let w = witness - b.center;
    // the witness and the normal in the box's frame
    let local = |v: DVec3| DVec3::new(v.dot(ax[0]), v.dot(ax[1]), v.dot(ax[2]));
    let m = local(n);
    if local(w).abs().cmple(h + tol).all() {
        return InBall::Point(witness);
    }
    let far = c.abs() + h;
    if far.length() < r {
        return InBall::Wholly;
    }
    ball_surface_in_box(b, p, r, (c, m, n), tol).map_or(InBall::Open, InBall::Point)
}

/// The point of the sphere of centre `p` and radius `r` that lies in the
/// box `b` (to `tol`) farthest along the normal `m` (the centre `c` and
/// the normal in the box's frame), where the sphere's own farthest point
/// along it is outside the box (`n`: the normal in world space): then it
/// lies on the rim where the sphere
/// leaves the box — on a face's circle, at the circle's point farthest
/// along the normal where that is in the face, or where an edge pierces
/// the sphere. Those candidates are all the extremes a linear function
/// has on the sphere's surface within the box. `None`: none found (the
/// box wholly in the ball, or a flat box), for the general path.
fn ball_surface_in_box(
    b: &OrientedBox,
    p: DVec3,
    r: f64,
    (c, m, n): (DVec3, DVec3, DVec3),
    tol: f64,
) -> Option<DVec3> {
    let h = b.half;
    if h.min_element() <= 0.0 {
        return None;
    }
    let ax = b.axes;
    let inside = |x: DVec3, skip: usize| (0..3).all(|j| j == skip || x[j].abs() <= h[j] + tol);
    // the sphere's own farthest point, where the box holds it
    if inside(c + m * r, 3) {
        return Some(p + n * r);
    }
    let mut best: Option<(f64, DVec3)> = None;
    let mut offer = |x: DVec3| {
        let along = x.dot(m);
        if best.is_none_or(|(b, _)| along > b) {
            best = Some((along, x));
        }
    };
    for k in 0..3 {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        for side in [-1.0, 1.0] {
            // face k on this side: the circle where the sphere cuts it
            let gap = side * h[k] - c[k];
            if gap.abs() <= r {
                let rho = (r * r - gap * gap).max(0.0).sqrt();
                let mut centre = c;
                centre[k] = side * h[k];
                let mut t = m;
                t[k] = 0.0;
                let dirs = match t.try_normalize() {
                    Some(u) => [u, u, u, u],
                    // the normal square to the face: every point of the
                    // circle as far along it; any one in the face will do
                    None => {
                        let (ei, ej) = (DVec3::AXES[i], DVec3::AXES[j]);
                        [ei, -ei, ej, -ej]
                    }
                };
                if let Some(x) = dirs
                    .iter()
                    .map(|&u| centre + u * rho)
                    .find(|&x| inside(x, k))
                {
                    offer(x);
                }
            }
            // the four edges along axis k: where each pierces the sphere
            for sj in [-1.0, 1.0] {
                let (yi, yj) = (side * h[i], sj * h[j]);
                let d2 = (c[i] - yi).powi(2) + (c[j] - yj).powi(2);
                if d2 <= r * r {
                    let w = (r * r - d2).sqrt();
                    for along in [c[k] - w, c[k] + w] {
                        if along.abs() <= h[k] + tol {
                            let mut x = DVec3::ZERO;
                            (x[i], x[j], x[k]) = (yi, yj, along);
                            offer(x);
                        }
                    }
                }
            }
        }
    }
    let (_, x) = best?;
    Some(b.center + ax[0] * x.x + ax[1] * x.y + ax[2] * x.z)
}

/// Whether `f` holds at every corner of `q` (the ends of a segment, a
/// hull's points, the corners of a box), where those are cheap to list;
/// `None` otherwise.
fn quickly_all_corners(q: &impl Polyhedral, mut f: impl FnMut(DVec3) -> bool) -> Option<bool> {
    if let Some((a, b)) = q.ends() {
        return Some(f(a) && f(b));
    }
    if let Some(all) = q.all_corners(&mut f) {
        return Some(all);
    }
    let b = q.as_box()?;
    let [x, y, z] = [0, 1, 2].map(|k| b.axes[k] * b.half[k]);
    Some((0..8).all(|i| {
        let s = |bit: usize| if i & bit == 0 { -1.0 } else { 1.0 };
        f(b.center + x * s(1) + y * s(2) + z * s(4))
    }))
}

/// [`settle`] past its first case, with the features built into the
/// given buffers.
fn settle_in(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    (witness, normal, _): (DVec3, DVec3, f64),
    tol: f64,
    scratch: &mut Scratch,
) -> Option<DVec3> {
    let Scratch {
        q: qbuf,
        q_key,
        c: cbuf,
        work,
    } = scratch;
    // against a rounded collider (a point or a segment grown by a
    // radius) a solid shape that lists its corners needs its faces alone
    // (asked whether it lists them: the first corner stops the listing)
    let edges = c.ends().is_none() || quickly_all_corners(q, |_| false).is_none();
    let qb = match q.body_key() {
        Some(key) => {
            if q_key.is_none_or(|(k, built, _)| k != key || (edges && !built)) {
                let kind = Body::of(q, qbuf, edges).map(|b| Kind::of(&b));
                *q_key = Some((key, edges, kind));
            }
            q_key.and_then(|(_, _, kind)| kind)?.body(qbuf)
        }
        None => {
            *q_key = None;
            Body::of(q, qbuf, edges)?
        }
    };
    // a shape the collider proves inside it without placing its faces,
    // face by face its bounding box or else its corners: wholly inside
    // (below, by its corners)
    if rq == 0.0
        && rc == 0.0
        && let Body::Poly(qp) = &qb
        && c.holds_corners(qp.lo, qp.hi, &mut |f| {
            quickly_all_corners(q, &mut *f).unwrap_or(false)
        })
    {
        return None;
    }
    // a solid collider's faces first, where it lists them alone: they
    // tell a shape wholly inside, and against a point or a segment they
    // are enough. (Where its edges then fail to build, the answer — no
    // point — keeps the witness, as the witness kept here does.)
    let cb = Body::of(c, cbuf, false)?;
    if qb.holds(rq, witness, tol) {
        return Some(witness);
    }
    if wholly_inside(q, &qb, rq, &cb, rc, normal) {
        return None;
    }
    let cb = match &qb {
        Body::Poly(qp) if cb.faces_alone() => Body::with_edges_near(c, cbuf, qp, normal, tol)?,
        _ => cb,
    };
    if let Some(p) = deepest(&qb, rq, &cb, rc, normal, tol, work) {
        return Some(p);
    }
    // a point of both: the shape's core point nearest the collider's
    // core, moved towards it by up to the shape's radius
    let common = match super::gjk::search(q, c, f64::INFINITY, -1.0, Some(normal)) {
        super::gjk::Gap::Apart(s) => {
            let d = s.on_b - s.on_a;
            s.on_a + d * (rq.min(s.distance) / s.distance)
        }
        _ => common_core_point(&qb, &cb, tol)?,
    };
    if !cb.holds(rc, common, tol) || !qb.holds(rq, common, tol) {
        return None;
    }
    if cb.flat() {
        return Some(common);
    }
    // a point of the shape outside the collider: its farthest along the
    // normal or against it, or a corner
    let mut outside = None;
    let mut try_point = |x: DVec3| {
        if outside.is_none() && !cb.holds(rc, x, tol) {
            outside = Some(x);
        }
    };
    try_point(q.support(normal) + normal * rq);
    try_point(q.support(-normal) - normal * rq);
    match &qb {
        Body::Line(a, b) => {
            // each end's point farthest from the collider's core
            for e in [*a, *b] {
                let from = match &cb {
                    Body::Line(ca, cb) => on_segment(*ca, *cb, e),
                    Body::Poly(_) => common,
                };
                try_point(e + (e - from).normalize_or_zero() * rq);
            }
        }
        // its faces alone: its corners
        Body::Poly(p) if p.edges.is_empty() => {
            quickly_all_corners(q, |x| {
                try_point(x);
                true
            });
        }
        Body::Poly(p) => p.edges.iter().for_each(|e| {
            try_point(e.p);
            try_point(e.q);
        }),
    }
    let far = outside?;
    Some(crossing(&cb, rc, common, far, tol))
}

/// Whether the shape `q` (as `qb`) grown by `rq` lies inside the
/// collider `cb` grown by `rc`, off its surface: in a rounded collider,
/// its extreme points (a core's ends grown by the radius, a
/// polyhedron's vertices) are; in a solid polyhedron, its support along
/// each face normal is inside that face. A flat collider holds nothing.
///
/// `toward` is any direction; the shape's support along it is tried
/// first. Every answer below is "no" when that one point of the shape is
/// out, so trying it first changes none; along the contact normal (out of
/// the collider, where the shape came from) it is out of all but shapes
/// that are in, and a hull's many points need not be tried one by one.
fn wholly_inside(
    q: &impl Polyhedral,
    qb: &Body,
    rq: f64,
    cb: &Body,
    rc: f64,
    toward: DVec3,
) -> bool {
    match cb {
        Body::Line(a, b) => {
            let inside = |x: DVec3| (x - on_segment(*a, *b, x)).length() + rq < rc;
            match qb {
                Body::Line(qa, qb) => inside(*qa) && inside(*qb),
                // its faces alone: its corners
                Body::Poly(p) if p.edges.is_empty() => {
                    quickly_all_corners(q, inside).unwrap_or(false)
                }
                Body::Poly(p) => p.edges.iter().all(|e| inside(e.p) && inside(e.q)),
            }
        }
        // inside the core, deeper than the shape's radius reaches
        Body::Poly(p) => {
            if !p.solid {
                return false;
            }
            let inside = |out: f64| out <= 0.0 && out + rq < rc;
            let point_inside = |x: DVec3| p.faces.iter().all(|f| inside(f.n.dot(x) - f.h));
            if !point_inside(q.support(toward)) {
                return false;
            }
            // a shape that lists its corners: face by face, its bounding
            // box below the face, or else each corner in turn until one
            // is out (a support along a face normal is a corner) — the
            // corners are tried only against the faces the box reaches,
            // the few near where the shape lies close under the surface
            if quickly_all_corners(q, |_| false).is_some() {
                let span = match qb {
                    Body::Poly(qp) => middle(qp.lo, qp.hi),
                    Body::Line(..) => None,
                };
                return p.faces.iter().all(|f| {
                    span.is_some_and(|(m, e)| box_below(m, e, f, rq, rc))
                        || quickly_all_corners(q, |x| inside(f.n.dot(x) - f.h)) == Some(true)
                });
            }
            // a few of the shape's points first: most shapes that are not
            // inside have one of them outside
            let first_ok = match qb {
                Body::Line(a, b) => point_inside(*a) && point_inside(*b),
                Body::Poly(qp) => qp.edges.iter().take(4).all(|e| point_inside(e.p)),
            };
            first_ok
                && p.faces
                    .iter()
                    .all(|f| inside(q.support(f.n).dot(f.n) - f.h))
        }
    }
}

/// The middle and half extents of the box `lo`–`hi`; `None` for an empty
/// box (a body built without its edges) or one not finite.
fn middle(lo: DVec3, hi: DVec3) -> Option<(DVec3, DVec3)> {
    (lo.cmple(hi).all() && (hi - lo).is_finite()).then(|| ((lo + hi) * 0.5, (hi - lo) * 0.5))
}

/// Whether every point of the box of middle `m` and half extents `e`,
/// grown by `rq`, lies below the face `f` and within `rc` of it, as
/// [`wholly_inside`] asks of each of a shape's corners: a point of the
/// box is at most `n · m + |n| · e` along the face normal `n`. Allowed a
/// slack far above the rounding of either way of working it out, so
/// that where this says below, every corner's own test says so too — one
/// test for the face where the corners take one each.
fn box_below(m: DVec3, e: DVec3, f: &Face, rq: f64, rc: f64) -> bool {
    let a = f.n.abs();
    let reach = a.dot(e);
    let slack = 1e-12 * (a.dot(m.abs()) + reach + f.h.abs());
    let out = f.n.dot(m) + reach - f.h + slack;
    out <= 0.0 && out + rq < rc
}

/// Where the segment from `from` (in `cb` grown by `rc`) to `to` (outside
/// it) crosses the surface: in closed form for a ball, else by bisection
/// to within `tol`.
fn crossing(cb: &Body, rc: f64, from: DVec3, to: DVec3, tol: f64) -> DVec3 {
    let d = to - from;
    if let Body::Line(a, b) = cb
        && a == b
    {
        // |from + s d − a|² = rc², the root in [0, 1]: from is inside
        let (m, dd) = (from - *a, d.length_squared());
        if dd > 0.0 {
            let (half_b, c) = (m.dot(d), m.length_squared() - rc * rc);
            let disc = half_b * half_b - dd * c;
            if disc >= 0.0 {
                let s = ((-half_b + disc.sqrt()) / dd).clamp(0.0, 1.0);
                return from + d * s;
            }
        }
    }
    let len = d.length();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        if (hi - lo) * len <= 0.25 * tol {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if cb.holds(rc, from.lerp(to, mid), 0.0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    from.lerp(to, lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::gjk::{Point, Segment, Triangle};

    /// The clipper as it was written first: a division for every
    /// half-space.
    fn clip_dividing(a: DVec3, b: DVec3, hs: &[Half], tol: f64) -> Option<(f64, f64)> {
        let d = b - a;
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for h in hs {
            let (room, rate) = (h.room(a, tol), h.m.dot(d));
            if rate == 0.0 {
                if room < 0.0 {
                    return None;
                }
            } else if rate > 0.0 {
                t1 = t1.min(room / rate);
            } else {
                t0 = t0.max(room / rate);
            }
            if t0 > t1 {
                return None;
            }
        }
        Some((t0, t1))
    }

    /// A segment near a box: its ends on a face, an edge or a corner,
    /// just in or out of it (by 0 to 10⁻⁶ of its size), anywhere in it, or
    /// anywhere near; sometimes square to a face, so that a half-space
    /// leaves it alone.
    fn segment_near(rng: &mut kiln_geometry::rng::Rng, c: &OrientedBox) -> (DVec3, DVec3) {
        let steps = [0.0, 1e-12, 1e-10, 1e-9, 1e-8, 1e-6];
        let end = |rng: &mut kiln_geometry::rng::Rng| {
            let mut u = rng.v(1.0);
            match rng.f() {
                f if f < 0.5 => {
                    for k in 0..=((f * 6.0) as usize) {
                        let side = if rng.f() < 0.5 { -1.0 } else { 1.0 };
                        let step = steps[(rng.f() * 6.0) as usize];
                        u[k] = side * (1.0 + if rng.f() < 0.5 { -step } else { step });
                    }
                }
                f if f < 0.8 => u *= 0.9,
                _ => u *= 2.0,
            }
            c.center
                + (0..3)
                    .map(|k| c.axes[k] * (c.half[k] * u[k]))
                    .sum::<DVec3>()
        };
        let a = end(rng);
        let b = if rng.f() < 0.2 {
            // along a box axis: square to four faces
            a + c.axes[(rng.f() * 3.0) as usize] * (rng.f() * 2.0 - 1.0)
        } else {
            end(rng)
        };
        (a, b)
    }

    /// Narrowing a bound only where it can move clips every segment
    /// exactly as dividing at every half-space did, bit for bit, on
    /// 40,000 segments ending on, just in and just out of the faces,
    /// edges and corners of turned boxes; and the ends that
    /// [`ends_on_surface`] passes over without testing them are the ones
    /// the surface test refuses, so it offers what the clipped ends on the
    /// surface are. Ends passed over, ends offered and segments missing
    /// all occur.
    #[test]
    fn clipping_without_dividing_and_passing_over_clear_ends_change_nothing() {
        let mut rng = kiln_geometry::rng::Rng(0xc11b_0000_0000_0001);
        let (mut offered, mut missed, mut passed_over) = (0, 0, 0);
        for case in 0..40_000 {
            let c = OrientedBox::random(&mut rng, 100.0);
            let mut buf = Buffers::default();
            let Some(Body::Poly(p)) = Body::of(&c, &mut buf, false) else {
                panic!("case {case}: a box is a solid");
            };
            let (a, b) = segment_near(&mut rng, &c);
            let tol = 1e-9 * (c.center.abs().max_element() + c.half.max_element());
            let plain = clip_dividing(a, b, p.hs, tol);
            let clipped = clip(a, b, p.hs, tol);
            assert_eq!(
                plain.map(|(t0, t1)| (t0.to_bits(), t1.to_bits())),
                clipped.map(|(t0, t1)| (t0.to_bits(), t1.to_bits())),
                "case {case}"
            );
            let mut expected = Vec::new();
            if let Some((t0, t1)) = plain {
                for t in [t0, t1] {
                    let x = a.lerp(b, t);
                    if on_surface(x, &p, tol) {
                        expected.push(x);
                    } else if t == 0.0 || t == 1.0 {
                        passed_over += 1;
                    }
                }
            } else {
                missed += 1;
            }
            let mut got = Vec::new();
            ends_on_surface(a, b, &p, tol, |x| got.push(x));
            assert_eq!(got, expected, "case {case}");
            offered += got.len();
        }
        assert!(
            offered > 10_000 && missed > 1_000 && passed_over > 10_000,
            "{offered} offered, {missed} missed, {passed_over} passed over"
        );
    }

    /// Leaving out the half-spaces that hold a box clear of their planes
    /// ([`Half::holds_box_clear`]) changes nothing [`ends_on_surface`]
    /// offers for a segment in that box, bit for bit, on 40,000 segments
    /// in boxes placed under a face of a turned box at 0 to 10 times the
    /// tolerance (around the twice the test asks), or across it. Faces
    /// left out, faces kept at the threshold, and points offered all occur.
    #[test]
    fn half_spaces_holding_the_box_clear_clip_nothing_in_it() {
        let mut rng = kiln_geometry::rng::Rng(0xc11b_0000_0000_0002);
        let (mut left_out, mut kept_near, mut offered) = (0, 0, 0);
        let gaps = [
            0.0, 1.0, 1.9, 1.999_999, 2.0, 2.000_001, 2.1, 3.0, 10.0, -1.0,
        ];
        for case in 0..40_000 {
            let c = OrientedBox::random(&mut rng, 100.0);
            let mut buf = Buffers::default();
            let Some(Body::Poly(p)) = Body::of(&c, &mut buf, false) else {
                panic!("case {case}: a box is a solid");
            };
            let tol = 1e-9 * (c.center.abs().max_element() + c.half.max_element());
            // an axis-aligned box of side up to 0.4 whose highest point along
            // a face normal lies `gap` tolerances below that face
            let f = p.faces[(rng.f() * p.faces.len() as f64) as usize % p.faces.len()];
            let e = DVec3::new(rng.f(), rng.f(), rng.f()) * 0.2;
            let gap = gaps[(rng.f() * gaps.len() as f64) as usize % gaps.len()] * tol;
            let slide = c.center + c.axes[0] * (rng.f() - 0.5) * c.half.x;
            let mut m = slide + f.n * (f.h - f.n.dot(slide));
            m -= f.n * (f.n.abs().dot(e) + gap);
            let hs: Vec<Half> =
                p.hs.iter()
                    .copied()
                    .filter(|h| !h.holds_box_clear(m, e, tol))
                    .collect();
            left_out += p.hs.len() - hs.len();
            let face_kept = hs.iter().any(|h| h.m == f.n && h.k == f.h);
            kept_near += usize::from(gap > 1.9 * tol && gap <= 2.0 * tol && face_kept);
            let culled = Poly { hs: &hs, ..p };
            let corner = |rng: &mut kiln_geometry::rng::Rng| {
                let s = |rng: &mut kiln_geometry::rng::Rng| match rng.f() {
                    x if x < 0.3 => 1.0,
                    x if x < 0.4 => -1.0,
                    x => x * 2.0 - 1.0,
                };
                m + e * DVec3::new(s(rng), s(rng), s(rng))
            };
            let (a, b) = (corner(&mut rng), corner(&mut rng));
            let (mut all, mut some) = (Vec::new(), Vec::new());
            ends_on_surface(a, b, &p, tol, |x| all.push(x.to_array().map(f64::to_bits)));
            ends_on_surface(a, b, &culled, tol, |x| {
                some.push(x.to_array().map(f64::to_bits))
            });
            assert_eq!(
                all,
                some,
                "case {case}: gap {gap}, {} of {} kept",
                hs.len(),
                p.hs.len()
            );
            offered += all.len();
        }
        assert!(
            left_out > 100_000 && kept_near > 5_000 && offered > 2_000,
            "{left_out} left out, {kept_near} kept at the threshold, {offered} offered"
        );
    }

    /// A box is wholly inside a turned box exactly where each of its eight
    /// corners is inside each face (the plain test, corner by corner), on
    /// 40,000 boxes in, across and just under the surface of turned
    /// boxes, whichever way the first point tried is taken: the faces
    /// its bounding box stays below skip the corners without changing
    /// the answer. Inside and not, and inside with corners tried, occur.
    #[test]
    fn a_box_is_wholly_inside_exactly_where_its_corners_are() {
        let mut rng = kiln_geometry::rng::Rng(0xb0c5_1115_1de0_0001);
        let (mut inside, mut outside, mut tried) = (0, 0, 0);
        for case in 0..40_000 {
            let c = OrientedBox::random(&mut rng, 100.0);
            // a corner of the shape on, just under or across a face
            let at = segment_near(&mut rng, &c).0;
            let q = OrientedBox {
                center: c.center + (at - c.center) * (0.3 + 0.7 * rng.f()),
                axes: rng.rotation(),
                half: DVec3::new(rng.f(), rng.f(), rng.f()) * c.half.min_element() * 0.5,
            };
            let (mut qbuf, mut cbuf) = (Buffers::default(), Buffers::default());
            let qb = Body::of(&q, &mut qbuf, true).unwrap();
            let cb = Body::of(&c, &mut cbuf, false).unwrap();
            let Body::Poly(cp) = cb else {
                panic!("case {case}: a box is a polyhedron");
            };
            let corners =
                quickly_all_corners(&q, |x| cp.faces.iter().all(|f| f.n.dot(x) - f.h < 0.0));
            let plain = corners == Some(true);
            let says = wholly_inside(&q, &qb, 0.0, &cb, 0.0, rng.unit());
            assert_eq!(says, plain, "case {case}");
            let Body::Poly(qp) = qb else {
                panic!("case {case}: a box is a polyhedron");
            };
            let (m, e) = middle(qp.lo, qp.hi).unwrap();
            inside += usize::from(plain);
            outside += usize::from(!plain);
            tried += usize::from(plain && !cp.faces.iter().all(|f| box_below(m, e, f, 0.0, 0.0)));
        }
        assert!(
            inside > 5_000 && outside > 5_000 && tried > 1_000,
            "{inside} inside ({tried} with corners tried), {outside} not"
        );
    }

    /// The one-test-a-face proof that a box lies inside a solid never
    /// says so where a corner's own test does not, on 40,000 boxes (as
    /// a shape's bounding box) in and around turned boxes, some touching
    /// a face from inside; and it proves most of those wholly inside.
    #[test]
    fn a_bounding_box_proved_inside_has_every_corner_inside() {
        let mut rng = kiln_geometry::rng::Rng(0xb0ed_0000_0000_0001);
        let (mut proved, mut inside) = (0, 0);
        for case in 0..40_000 {
            let c = OrientedBox::random(&mut rng, 100.0);
            let mut buf = Buffers::default();
            let Some(Body::Poly(p)) = Body::of(&c, &mut buf, false) else {
                panic!("case {case}: a box is a solid");
            };
            // a few points near the box; their bounding box is the shape's
            let n = 1 + (rng.f() * 6.0) as usize;
            let pts: Vec<DVec3> = (0..n)
                .map(|_| {
                    let x = segment_near(&mut rng, &c).0;
                    if rng.f() < 0.8 {
                        c.center + (x - c.center) * 0.6
                    } else {
                        x
                    }
                })
                .collect();
            let lo = pts.iter().fold(DVec3::INFINITY, |m, &x| m.min(x));
            let hi = pts.iter().fold(DVec3::NEG_INFINITY, |m, &x| m.max(x));
            let corners_in = (0..8).all(|i| {
                let bit = |k: usize| if i & (1 << k) == 0 { lo[k] } else { hi[k] };
                let x = DVec3::new(bit(0), bit(1), bit(2));
                p.faces.iter().all(|f| f.n.dot(x) - f.h < 0.0)
            });
            let points_in = pts
                .iter()
                .all(|&x| p.faces.iter().all(|f| f.n.dot(x) - f.h < 0.0));
            let says = middle(lo, hi)
                .is_some_and(|(m, e)| p.faces.iter().all(|f| box_below(m, e, f, 0.0, 0.0)));
            assert!(!says || (corners_in && points_in), "case {case}");
            proved += usize::from(says);
            inside += usize::from(points_in);
        }
        assert!(
            proved > 5_000 && inside > proved + 2_000 && inside < 35_000,
            "{proved} proved of {inside} inside"
        );
    }

    /// The closed form of a ball's surface in a box against a dense sampling
    /// of the sphere: its point is on the sphere and in the box, and no
    /// sampled point of the sphere in the box lies farther along the
    /// normal.
    #[test]
    fn a_balls_surface_in_a_box_is_its_farthest_point_there() {
        let mut rng = kiln_geometry::rng::Rng(0x5eed_ba11_b0c5_0001);
        let (mut found, mut cases) = (0, 0);
        for _ in 0..400 {
            let b = OrientedBox::random(&mut rng, 2.0);
            let p = b.center + rng.unit() * rng.f() * 2.5;
            let r = 0.1 + rng.f() * 2.0;
            let n = rng.unit();
            let tol = 1e-9;
            if b.holds_point(p + n * r, 0.0, tol) == Some(true) {
                continue;
            }
            cases += 1;
            // the sphere sampled on a fine grid of directions
            let mut sampled: Option<f64> = None;
            let steps = 160;
            for a in 0..steps {
                let z = -1.0 + 2.0 * (a as f64 + 0.5) / steps as f64;
                let ring = (1.0 - z * z).sqrt();
                for k in 0..2 * steps {
                    let phi = std::f64::consts::PI * k as f64 / steps as f64;
                    let x = p + DVec3::new(ring * phi.cos(), ring * phi.sin(), z) * r;
                    if b.holds_point(x, 0.0, tol) == Some(true) {
                        sampled = Some(sampled.map_or(x.dot(n), |s: f64| s.max(x.dot(n))));
                    }
                }
            }
            let d = p - b.center;
            let local = |v: DVec3| DVec3::new(v.dot(b.axes[0]), v.dot(b.axes[1]), v.dot(b.axes[2]));
            let got = ball_surface_in_box(&b, p, r, (local(d), local(n), n), tol);
            let Some(x) = got else {
                assert!(sampled.is_none(), "no point found, one sampled");
                continue;
            };
            found += 1;
            assert!(((x - p).length() - r).abs() <= 1e-9, "off the sphere");
            assert_eq!(b.holds_point(x, 0.0, 1e-9), Some(true), "outside the box");
            // a point of the set as high as any sampled one is its highest
            if let Some(s) = sampled {
                assert!(x.dot(n) >= s - 1e-12, "{} below a sampled {s}", x.dot(n));
            }
        }
        assert!(cases > 200 && found > 150, "{found} of {cases}");
    }

    #[test]
    fn a_box_in_a_ball_is_settled_as_the_general_tests_settle_it() {
        // the closed form against settle's general tests in their order:
        // the witness in the box, every corner in the ball, the surface
        let mut rng = kiln_geometry::rng::Rng(0x5eed_ba11_b0c5_0002);
        let mut seen = [0; 3];
        for _ in 0..20_000 {
            let b = OrientedBox::random(&mut rng, 2.0);
            let p = b.center + rng.unit() * rng.f() * 2.5;
            let r = 0.1 + rng.f() * 3.0;
            let n = rng.unit();
            let (witness, tol) = (p + n * r, 1e-9);
            let d = p - b.center;
            let local = |v: DVec3| DVec3::new(v.dot(b.axes[0]), v.dot(b.axes[1]), v.dot(b.axes[2]));
            let want = if b.holds_point(witness, 0.0, tol) == Some(true) {
                InBall::Point(witness)
            } else if quickly_all_corners(&b, |x| (x - p).length() < r) == Some(true) {
                InBall::Wholly
            } else {
                ball_surface_in_box(&b, p, r, (local(d), local(n), n), tol)
                    .map_or(InBall::Open, InBall::Point)
            };
            let got = box_in_ball(&b, p, r, (witness, n, 0.0), tol);
            match (&got, &want) {
                (InBall::Point(x), InBall::Point(y)) => {
                    assert!((*x - *y).length() <= 1e-12, "{x} against {y}");
                    seen[0] += 1;
                }
                _ => {
                    assert_eq!(got, want, "{b:?} {p} {r} {n}");
                    seen[if got == InBall::Wholly { 1 } else { 2 }] += 1;
                }
            }
        }
        // points and wholly inside both met many times
        assert!(seen[0] > 5_000 && seen[1] > 500, "{seen:?}");
    }

    #[test]
    fn a_ball_through_a_capsule_meets_its_far_side_as_the_general_path_finds() {
        // balls reaching past a capsule's far side, their centres beside
        // the axis: the closed form's point is on the sphere, in the
        // capsule and as far along the normal as the general path's
        let mut rng = kiln_geometry::rng::Rng(0x5eed_ca75_0001);
        let (mut closed, mut cases) = (0, 0);
        for _ in 0..3_000 {
            let a = rng.unit() * rng.f() * 3.0;
            let b = a + rng.unit() * (0.05 + rng.f() * 3.0);
            let rq = 0.02 + rng.f() * 0.6;
            let t = rng.f();
            let y = a + (b - a) * t;
            let across = (b - a).cross(rng.unit()).normalize();
            let d = rng.f() * 1.5;
            let p = y + across * d;
            let rc = d + rq + rng.f() * 2.0;
            let n = -across;
            let (q, c) = (Segment(a, b), Point(p));
            let Some(x) = ball_through_capsule(a, b, rq, p, rc, n) else {
                continue;
            };
            closed += 1;
            assert!(((x - p).length() - rc).abs() <= 1e-9, "off the sphere");
            assert!(
                (x - on_segment(a, b, x)).length() <= rq + 1e-9,
                "outside the capsule"
            );
            if let Some(g) = surface_point_in(&q, rq, &c, rc, n, 1e-9) {
                cases += 1;
                assert!(
                    x.dot(n) >= g.dot(n) - 1e-9,
                    "{} below the general {}",
                    x.dot(n),
                    g.dot(n)
                );
            }
        }
        assert!(
            closed > 600 && cases > 500,
            "{closed} closed, {cases} compared"
        );
        // the centre beside an end, or the normal along the axis: the
        // general path's
        let (a, b) = (DVec3::ZERO, DVec3::X);
        assert_eq!(
            ball_through_capsule(a, b, 0.1, DVec3::new(-0.5, 0.2, 0.0), 2.0, DVec3::NEG_Y),
            None
        );
        assert_eq!(
            ball_through_capsule(a, b, 0.1, DVec3::new(0.5, 0.2, 0.0), 2.0, DVec3::X),
            None
        );
    }

    fn surface_point_in(
        q: &impl Polyhedral,
        rq: f64,
        c: &impl Polyhedral,
        rc: f64,
        n: DVec3,
        tol: f64,
    ) -> Option<DVec3> {
        let (mut qbuf, mut cbuf) = (Buffers::default(), Buffers::default());
        let (qb, cb) = (Body::of(q, &mut qbuf, true)?, Body::of(c, &mut cbuf, true)?);
        deepest(&qb, rq, &cb, rc, n, tol, &mut Work::default())
    }

    #[test]
    fn a_point_on_a_segment_goes_out_across_it_wherever_it_lies() {
        // points on the axis, made as the placement makes them (rounded
        // f64 sums), at many places along segments of many directions: the
        // way out is across the axis, never along it, and the distance 0
        let mut rng = kiln_geometry::rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.f() * 2.0 - 1.0;
        let mut axes = vec![DVec3::X, DVec3::Y, DVec3::Z];
        for _ in 0..40 {
            axes.push(DVec3::new(next(), next(), next()));
        }
        for e in axes {
            for _ in 0..200 {
                let a = DVec3::new(next(), next(), next()) * 1.0e3_f64.powf(next());
                let b = a + e * 0.4 * next().abs();
                let x = a + (b - a) * (0.01 + 0.98 * next().abs());
                let (n, len) = from_segment(a, b, x);
                let u = (b - a).normalize();
                assert!((n.length() - 1.0).abs() < 1e-12, "{n}");
                assert!(n.dot(u).abs() < 1e-6, "{a} {b} {x}: out along the axis {n}");
                assert!(len <= 1e-12 * (1.0 + a.length()), "{len}");
            }
        }
        // as a fuzzed capsule collider met it
        let a = DVec3::new(
            -0.337_500_035_762_786_87,
            -0.167_938_231_393_635_28,
            0.003_112_792_968_75,
        );
        let b = DVec3::new(a.x, -0.013_360_963_299_930_084, a.z);
        let x = DVec3::new(a.x, -0.014_132_140_204_310_417, a.z);
        assert_eq!(from_segment(a, b, x).0.y, 0.0);
    }

    fn unit_box(center: DVec3, half: DVec3) -> OrientedBox {
        OrientedBox {
            center,
            axes: [DVec3::X, DVec3::Y, DVec3::Z],
            half,
        }
    }

    #[test]
    fn a_box_on_a_floor_triangle_reports_the_middle_of_its_footprint() {
        let floor = Triangle([
            DVec3::new(-10.0, 0.0, -10.0),
            DVec3::new(10.0, 0.0, -10.0),
            DVec3::new(0.0, 0.0, 10.0),
        ]);
        // a box 0.1 into the floor, seen along +y
        let b = unit_box(DVec3::new(1.0, 0.4, 2.0), DVec3::splat(0.5));
        let p = surface_point_in(&b, 0.0, &floor, 0.0, DVec3::Y, 1e-9).unwrap();
        assert!(p.abs_diff_eq(DVec3::new(1.0, 0.0, 2.0), 1e-9), "{p}");
    }

    #[test]
    fn a_box_corner_in_a_box_reports_a_point_of_the_collider_in_the_shape() {
        // the query's corner at (0.9, 0.9, 0.9) pokes into the collider's
        // corner region: the collider's surface inside the query
        let c = unit_box(DVec3::ZERO, DVec3::ONE);
        let q = unit_box(DVec3::splat(1.4), DVec3::splat(0.5));
        let n = DVec3::X;
        let p = surface_point_in(&q, 0.0, &c, 0.0, n, 1e-9).unwrap();
        let inside = |b: &OrientedBox, x: DVec3| ((x - b.center).abs() - b.half).max_element();
        assert!(inside(&q, p) <= 1e-9, "{p} outside the shape");
        assert!(
            inside(&c, p).abs() <= 1e-9,
            "{p} off the collider's surface"
        );
        assert!((p.x - 1.0).abs() <= 1e-9, "{p} not the farthest along x");
    }

    #[test]
    fn a_capsule_through_a_triangle_reports_where_its_axis_crosses() {
        let tri = Triangle([
            DVec3::new(-1.0, 0.0, -1.0),
            DVec3::new(1.0, 0.0, -1.0),
            DVec3::new(0.0, 0.0, 1.0),
        ]);
        let s = Segment(DVec3::new(0.1, -0.3, 0.0), DVec3::new(0.3, 0.5, 0.2));
        let p = surface_point_in(&s, 0.2, &tri, 0.0, DVec3::Y, 1e-9).unwrap();
        let t = 0.3 / 0.8;
        let want = s.0.lerp(s.1, t);
        assert!(p.abs_diff_eq(want, 1e-8), "{p} {want}");
    }

    #[test]
    fn a_sphere_inside_a_box_near_a_face_reports_the_face_point() {
        let c = unit_box(DVec3::ZERO, DVec3::ONE);
        let p = surface_point_in(
            &Point(DVec3::new(0.0, 0.9, 0.0)),
            0.3,
            &c,
            0.0,
            DVec3::Y,
            1e-9,
        );
        assert!(p.unwrap().abs_diff_eq(DVec3::new(0.0, 1.0, 0.0), 1e-9));
        // wholly inside: none
        let p = surface_point_in(&Point(DVec3::ZERO), 0.3, &c, 0.0, DVec3::Y, 1e-9);
        assert!(p.is_none());
    }

    #[test]
    fn a_box_holding_a_sphere_collider_reports_its_surface_towards_the_normal() {
        let q = unit_box(DVec3::ZERO, DVec3::ONE);
        let p = surface_point_in(
            &q,
            0.0,
            &Point(DVec3::new(0.0, 0.8, 0.0)),
            0.5,
            DVec3::Y,
            1e-9,
        )
        .unwrap();
        // up would leave the box; down stays in it
        assert!(p.abs_diff_eq(DVec3::new(0.0, 0.3, 0.0), 1e-9), "{p}");
    }

    #[test]
    fn cheap_containment_agrees_with_the_clipper_s() {
        // boxes with axes unit only to rounding (and scaled, as a
        // placement's may be), segments and points, grown or not
        let mut rng = kiln_geometry::rng::Rng(0x0C0F_FEE5);
        for case in 0..400 {
            let r = if case % 2 == 0 { 0.0 } else { rng.f() };
            let stretch = 1.0 + 1e-7 * (rng.f() - 0.5);
            let axes = rng.rotation().map(|a| a * stretch);
            let b = OrientedBox {
                center: rng.v(2.0),
                axes,
                half: rng.v(1.0).abs() + 0.05,
            };
            let s = Segment(rng.v(2.0), rng.v(2.0));
            for _ in 0..20 {
                let x = rng.v(3.0);
                let mut buf = Buffers::default();
                let body = Body::of(&b, &mut buf, true).unwrap();
                // the distance to the box grown by `grown` (negative inside)
                let near = |grown: f64| {
                    let d = x - b.center;
                    (0..3)
                        .map(|k| (d.dot(axes[k].normalize()).abs() - b.half[k] * stretch).max(0.0))
                        .map(|e| e * e)
                        .sum::<f64>()
                        .sqrt()
                        - grown
                };
                // away from the boundary, where rounding could go either way
                if near(r).abs() > 1e-6 {
                    let cheap = b.holds_point(x, r, 0.0).unwrap();
                    assert_eq!(cheap, near(r) <= 0.0, "box case {case}: {x}");
                    if r == 0.0 {
                        assert_eq!(cheap, body.holds(0.0, x, 0.0), "box case {case}: {x}");
                    }
                }
                let mut sbuf = Buffers::default();
                let seg = Body::of(&s, &mut sbuf, true).unwrap();
                assert_eq!(s.holds_point(x, r, 0.0), Some(seg.holds(r, x, 0.0)));
            }
        }
    }

    /// A solid's faces alone give a segment or a point the same point,
    /// containment and crossing as its whole body (edges and all).
    #[test]
    fn faces_alone_settle_a_segment_as_the_whole_body() {
        let mut rng = kiln_geometry::rng::Rng(0x0fac_e5a1_0e00_0002);
        let (mut found, mut inside) = (0, 0);
        for case in 0..2000 {
            let c = OrientedBox {
                center: rng.v(1.0),
                axes: rng.rotation(),
                half: rng.v(1.0).abs() + 0.1,
            };
            // every other one near the middle: often wholly inside
            let (a, reach) = if case % 2 == 0 {
                (c.center + rng.v(0.1), 0.1)
            } else {
                (rng.v(2.0), 1.0)
            };
            let s = if case % 3 == 0 {
                Segment(a, a)
            } else {
                Segment(a, a + rng.v(reach))
            };
            let r = rng.f() * 0.5 * reach;
            let n = rng.v(1.0).normalize();
            let (mut sbuf, mut whole, mut alone) = Default::default();
            let qb = Body::of(&s, &mut sbuf, true).unwrap();
            let cw = Body::of(&c, &mut whole, true).unwrap();
            let ca = Body::of(&c, &mut alone, false).unwrap();
            let Body::Poly(p) = ca else {
                panic!("case {case}: a box is a polyhedron");
            };
            assert!(p.edges.is_empty() && p.solid, "case {case}: faces only");
            let (mut f1, mut f2) = (Work::default(), Work::default());
            let pw = deepest(&qb, r, &cw, 0.0, n, 1e-9, &mut f1);
            let pa = deepest(&qb, r, &ca, 0.0, n, 1e-9, &mut f2);
            assert_eq!(pw, pa, "case {case}");
            found += usize::from(pw.is_some());
            let held = wholly_inside(&s, &qb, r, &cw, 0.0, n);
            assert_eq!(held, wholly_inside(&s, &qb, r, &ca, 0.0, n), "case {case}");
            // the support tried first changes no answer, whichever way
            assert_eq!(held, wholly_inside(&s, &qb, r, &cw, 0.0, -n), "case {case}");
            inside += usize::from(held);
            let (from, to) = (c.center, c.center + n * 4.0);
            assert_eq!(
                crossing(&cw, 0.0, from, to, 1e-9),
                crossing(&ca, 0.0, from, to, 1e-9)
            );
        }
        assert!(found > 200 && inside > 20, "{found} found, {inside} inside");
    }

    #[test]
    fn the_witness_in_the_shape_is_the_point() {
        // a box sunk 0.3 into a bigger box's top face: the witness (on the
        // top face, under the box) lies in it and is kept
        let c = unit_box(DVec3::ZERO, DVec3::ONE);
        let q = unit_box(DVec3::new(0.2, 1.2, -0.1), DVec3::splat(0.5));
        let witness = DVec3::new(0.6, 1.0, 0.3);
        let p = settle(&q, 0.0, &c, 0.0, (witness, DVec3::Y, 0.3), 1e-9);
        assert_eq!(p, Some(witness));
        // one outside the shape is replaced by the surface inside it
        let away = DVec3::new(0.9, 1.0, 0.9);
        let p = settle(&q, 0.0, &c, 0.0, (away, DVec3::Y, 0.3), 1e-9).unwrap();
        assert!(
            q.holds_point(p, 0.0, 1e-9).unwrap(),
            "{p} outside the shape"
        );
        assert!((p.y - 1.0).abs() <= 1e-8, "{p} off the top face");
    }

    #[test]
    fn rounded_pairs_settle_in_closed_form() {
        let ball = Point(DVec3::ZERO);
        // a capsule whose core lies in a ball of radius 2, one end grown
        // out through its surface: a point of the ball's surface in it
        let cap = Segment(DVec3::new(0.0, 0.5, 0.0), DVec3::new(0.0, 1.8, 0.0));
        let witness = DVec3::new(0.0, 2.0, 0.0);
        let p = settle(&cap, 0.3, &ball, 2.0, (witness, DVec3::Y, 0.0), 1e-9).unwrap();
        assert!((p.length() - 2.0).abs() <= 1e-9, "{p} off the ball");
        assert!(
            cap.holds_point(p, 0.3, 1e-9).unwrap(),
            "{p} outside the capsule"
        );
        // a crossing solved on a ball, not by bisection: on its surface
        let body = Body::Line(DVec3::ZERO, DVec3::ZERO);
        let x = crossing(
            &body,
            2.0,
            DVec3::new(0.3, 0.1, 0.0),
            DVec3::new(3.0, 1.0, 0.5),
            1e-9,
        );
        assert!((x.length() - 2.0).abs() <= 1e-12, "{x}");
        // a box and a capsule wholly inside the ball: none
        let small = unit_box(DVec3::new(0.2, 0.0, 0.1), DVec3::splat(0.4));
        let witness = DVec3::new(2.0, 0.0, 0.0);
        assert_eq!(
            settle(&small, 0.0, &ball, 2.0, (witness, DVec3::X, 2.0), 1e-9),
            None
        );
        let short = Segment(DVec3::new(0.0, -0.2, 0.0), DVec3::new(0.0, 0.2, 0.0));
        assert_eq!(
            settle(&short, 0.5, &ball, 2.0, (witness, DVec3::X, 2.0), 1e-9),
            None
        );
    }
}
