//! Convex solids — polytopes and boxes — through one set of exact f64
//! routines over a [`ConvexView`]: point containment (plane signs), closest
//! point (the nearest plane from inside; from outside, the nearest point of
//! the faces whose plane faces the point), ray clipping (Cyrus and Beck,
//! "Generalized two- and three-dimensional clipping", 1978) and sphere
//! sweeps (clip against the planes pushed out by the radius, which contain
//! the exact swept shape; then the face, edge and vertex tests where the
//! pushed-out planes over-reach near edges).

use crate::geom::ray_round::{ray_cylinder, ray_sphere};
use crate::geom::sphere_triangle::Contact;
use glam::DVec3;
use kiln_formats::primitive::Cuboid;

/// A convex solid as planes (face `k` lies in plane `k`), face loops
/// (counter-clockwise seen from outside) and vertices, in one space.
pub(crate) trait ConvexView {
    /// Number of planes (and faces).
    fn plane_count(&self) -> usize;
    /// Plane `k`: unit outward normal and offset (`n · x ≤ d` inside).
    fn plane(&self, k: usize) -> (DVec3, f64);
    /// Number of vertices in face `k`'s loop.
    fn face_len(&self, k: usize) -> usize;
    /// Vertex index of corner `j` of face `k`.
    fn face_index(&self, k: usize, j: usize) -> u32;
    /// Number of vertices.
    fn vertex_count(&self) -> usize;
    /// Vertex `v`.
    fn vertex(&self, v: u32) -> DVec3;
    /// The planes as archived `[nx, ny, nz, d]` rows, where the view reads
    /// them unchanged from an archive: the clip's loop then runs over the
    /// slice (the same values as [`ConvexView::plane`]).
    #[inline]
    fn archived_planes(&self) -> Option<&[[rkyv::rend::f32_le; 4]]> {
        None
    }
}

/// Whether `p` is inside or on the solid.
pub(crate) fn contains(s: &impl ConvexView, p: DVec3) -> bool {
    (0..s.plane_count()).all(|k| {
        let (n, d) = s.plane(k);
        n.dot(p) <= d
    })
}

/// The closest point of the solid's surface to `p`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Closest {
    /// Point on the surface.
    pub point: DVec3,
    /// Unit normal from the surface towards `p` (outward when inside).
    pub normal: DVec3,
    /// Distance from `p` to `point`.
    pub distance: f64,
    /// `p` is inside the solid (or on its surface).
    pub inside: bool,
    /// Face of `point`.
    pub face: u32,
}

/// The closest surface point to `p`. Inside, the nearest plane's foot
/// (it lies on its face: the ball of that radius is inside every plane);
/// outside, the nearest point of the faces whose plane `p` is in front of.
pub(crate) fn closest(s: &impl ConvexView, p: DVec3) -> Closest {
    let mut best_in = (f64::NEG_INFINITY, 0usize);
    let mut any_out = false;
    for k in 0..s.plane_count() {
        let (n, d) = s.plane(k);
        let h = n.dot(p) - d;
        any_out |= h > 0.0;
        if h > best_in.0 {
            best_in = (h, k);
        }
    }
    if !any_out {
        let (h, k) = best_in;
        let (n, _) = s.plane(k);
        return Closest {
            point: p - n * h,
            normal: n,
            distance: -h,
            inside: true,
            face: k as u32,
        };
    }
    let mut best: Option<(f64, DVec3, usize)> = None; // squared distance, point, face
    for k in 0..s.plane_count() {
        let (n, d) = s.plane(k);
        let h = n.dot(p) - d;
        if h <= 0.0 {
            continue;
        }
        if best.is_some_and(|(b, _, _)| h * h >= b) {
            continue; // this face's plane is already farther than the best
        }
        let q = closest_on_face(s, k, n, p - n * h);
        let d2 = (p - q).length_squared();
        if best.is_none_or(|(b, _, _)| d2 < b) {
            best = Some((d2, q, k));
        }
    }
    let (d2, q, k) = best.expect("a point outside some plane is nearest to some face");
    let distance = d2.sqrt();
    // a point on the surface is outside by rounding alone, whose direction
    // is noise (along a face, say): face k's normal then, a way out of
    // every point of face k (as for a sphere centred on a triangle)
    let noise = 1e-12 * (1.0 + p.abs().max_element() + q.abs().max_element());
    let normal = if distance > noise {
        (p - q) / distance
    } else {
        s.plane(k).0
    };
    Closest {
        point: q,
        normal,
        distance,
        inside: false,
        face: k as u32,
    }
}

/// Whether the ball of radius `r` around `p` touches the solid, with the
/// same answer as `closest(s, p).distance <= r` (or inside) but cheaper: a
/// plane with `p` more than `r` in front of it separates them; otherwise
/// the faces whose plane `p` is in front of are tried until one is within
/// `r` (the nearest surface point lies on one of them).
pub(crate) fn touches(s: &impl ConvexView, p: DVec3, r: f64) -> bool {
    let mut any_out = false;
    for k in 0..s.plane_count() {
        let (n, d) = s.plane(k);
        let h = n.dot(p) - d;
        if h > r {
            return false;
        }
        any_out |= h > 0.0;
    }
    if !any_out {
        return true;
    }
    let rr = r * r;
    (0..s.plane_count()).any(|k| {
        let (n, d) = s.plane(k);
        let h = n.dot(p) - d;
        h > 0.0 && (p - closest_on_face(s, k, n, p - n * h)).length_squared() <= rr
    })
}

/// Whether `q`, in the plane of face `k` (normal `n`), lies inside the
/// face (edges included).
fn inside_face(s: &impl ConvexView, k: usize, n: DVec3, q: DVec3) -> bool {
    let m = s.face_len(k);
    (0..m).all(|j| {
        let a = s.vertex(s.face_index(k, j));
        let b = s.vertex(s.face_index(k, (j + 1) % m));
        (b - a).cross(q - a).dot(n) >= 0.0
    })
}

/// The closest point of face `k` to `q`, a point in the face's plane.
fn closest_on_face(s: &impl ConvexView, k: usize, n: DVec3, q: DVec3) -> DVec3 {
    if inside_face(s, k, n, q) {
        return q;
    }
    let m = s.face_len(k);
    let mut best = (f64::INFINITY, q);
    for j in 0..m {
        let a = s.vertex(s.face_index(k, j));
        let b = s.vertex(s.face_index(k, (j + 1) % m));
        let e = b - a;
        let ee = e.length_squared();
        let t = if ee > 0.0 {
            ((q - a).dot(e) / ee).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = a + e * t;
        let d2 = (q - c).length_squared();
        if d2 < best.0 {
            best = (d2, c);
        }
    }
    best.1
}

/// A ray against the solid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RayAnswer {
    /// The ray enters through face `face` at `t`.
    Enter {
        /// Ray parameter.
        t: f64,
        /// Face entered.
        face: u32,
    },
    /// The origin is inside the solid or on its surface.
    Inside,
}

/// Clips `o + t·d`, `t ∈ [0, t_max]`, against every plane: the ray meets
/// the solid where it is behind all of them.
pub(crate) fn raycast(s: &impl ConvexView, o: DVec3, d: DVec3, t_max: f64) -> Option<RayAnswer> {
    clip(s, o, d, t_max, 0.0).map(|(t, face)| match face {
        Some(face) => RayAnswer::Enter { t, face },
        None => RayAnswer::Inside,
    })
}

/// The entry `(t, plane)` of `o + t·d` into the solid with every plane
/// pushed out by `grow`, within `[0, t_max]`; plane `None` when `o` is
/// already inside.
fn clip(
    s: &impl ConvexView,
    o: DVec3,
    d: DVec3,
    t_max: f64,
    grow: f64,
) -> Option<(f64, Option<u32>)> {
    clip_span(s, o, d, t_max, grow).map(|(t0, _, face)| (t0, face))
}

/// [`clip`] with the exit as well: `(entry, exit, entry plane)`, the exit
/// no later than `t_max`.
fn clip_span(
    s: &impl ConvexView,
    o: DVec3,
    d: DVec3,
    t_max: f64,
    grow: f64,
) -> Option<(f64, f64, Option<u32>)> {
    #[cfg(target_arch = "x86_64")]
    if let Some(planes) = s.archived_planes() {
        return clip_pairs(planes, o, d, t_max, grow);
    }
    let mut w = Window::new(t_max);
    for k in 0..s.plane_count() {
        let (n, off) = s.plane(k);
        let (h, dn) = (n.dot(o) - off - grow, n.dot(d));
        if w.misses(k, h, dn, -h / dn) {
            return None;
        }
    }
    Some(w.span())
}

/// The clip's entry and exit so far, taken plane by plane.
struct Window {
    t0: f64,
    t1: f64,
    face: Option<u32>,
}

impl Window {
    /// The whole of `[0, t_max]`, no plane entered yet.
    #[inline(always)]
    fn new(t_max: f64) -> Window {
        Window {
            t0: 0.0,
            t1: t_max,
            face: None,
        }
    }

    /// Takes plane `k`, which the ray's origin is `h` above (its normal
    /// `· d` being `dn`), crossed at `t = −h / dn`: a strictly later entry
    /// moves the entry, an earlier exit the exit. `true` when the plane
    /// rules the ray out (parallel and outside, or the entry past the exit).
    #[inline(always)]
    fn misses(&mut self, k: usize, h: f64, dn: f64, t: f64) -> bool {
        if dn == 0.0 {
            return h > 0.0;
        }
        if dn < 0.0 {
            if t > self.t0 {
                self.t0 = t;
                self.face = Some(k as u32);
            }
        } else if t < self.t1 {
            self.t1 = t;
        }
        self.t0 > self.t1
    }

    /// `(entry, exit, entry plane)`.
    #[inline(always)]
    fn span(&self) -> (f64, f64, Option<u32>) {
        (self.t0, self.t1, self.face)
    }
}

/// [`clip_span`] over archived planes, two planes at a time: each pair's
/// heights and crossing times in SSE2 lanes, with the same IEEE operations
/// in the same order as the scalar loop (`n · o` as `(x·ox + y·oy) + z·oz`,
/// then `− d − grow`, the time `−h / dn` with the sign flipped exactly),
/// then the scalar loop's decisions lane by lane in plane order, so the
/// answer is the scalar loop's, bit for bit (a test compares them).
#[cfg(target_arch = "x86_64")]
fn clip_pairs(
    planes: &[[rkyv::rend::f32_le; 4]],
    o: DVec3,
    d: DVec3,
    t_max: f64,
    grow: f64,
) -> Option<(f64, f64, Option<u32>)> {
    use std::arch::x86_64::{
        __m128, __m128d, _mm_add_pd, _mm_cvtps_pd, _mm_cvtsd_f64, _mm_div_pd, _mm_movehl_ps,
        _mm_mul_pd, _mm_set1_pd, _mm_sub_pd, _mm_unpackhi_pd, _mm_unpackhi_ps, _mm_unpacklo_ps,
        _mm_xor_pd,
    };
    let mut win = Window::new(t_max);
    let rest = planes.chunks_exact(2).remainder();
    // SAFETY: every intrinsic below is an SSE2 operation on registers (no
    // memory is read or written through a pointer), and SSE2 is in
    // x86-64's baseline, so each is available wherever this compiles.
    unsafe {
        let lanes = |v: __m128d| (_mm_cvtsd_f64(v), _mm_cvtsd_f64(_mm_unpackhi_pd(v, v)));
        let splat = |v: DVec3| (_mm_set1_pd(v.x), _mm_set1_pd(v.y), _mm_set1_pd(v.z));
        let ((ox, oy, oz), (dx, dy, dz)) = (splat(o), splat(d));
        let (g, sign) = (_mm_set1_pd(grow), _mm_set1_pd(-0.0));
        let pairs = planes.chunks_exact(2);
        for (i, pair) in pairs.enumerate() {
            let row = |p: &[rkyv::rend::f32_le; 4]| {
                __m128::from(glam::Vec4::from(p.map(|x| x.to_native())))
            };
            let (a, b) = (row(&pair[0]), row(&pair[1]));
            // [ax bx ay by] and [az bz aw bw], widened lane pair by lane pair
            let (lo, hi) = (_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
            let (x, y) = (_mm_cvtps_pd(lo), _mm_cvtps_pd(_mm_movehl_ps(lo, lo)));
            let (z, w) = (_mm_cvtps_pd(hi), _mm_cvtps_pd(_mm_movehl_ps(hi, hi)));
            let dot = |vx, vy, vz| {
                _mm_add_pd(
                    _mm_add_pd(_mm_mul_pd(x, vx), _mm_mul_pd(y, vy)),
                    _mm_mul_pd(z, vz),
                )
            };
            let h = _mm_sub_pd(_mm_sub_pd(dot(ox, oy, oz), w), g);
            let dn = dot(dx, dy, dz);
            let t = _mm_div_pd(_mm_xor_pd(h, sign), dn);
            let ((h0, h1), (d0, d1), (t0_, t1_)) = (lanes(h), lanes(dn), lanes(t));
            if win.misses(2 * i, h0, d0, t0_) || win.misses(2 * i + 1, h1, d1, t1_) {
                return None;
            }
        }
    }
    if let [p] = rest {
        let f = |i: usize| f64::from(p[i].to_native());
        let n = DVec3::new(f(0), f(1), f(2));
        let h = n.dot(o) - f(3) - grow;
        let dn = n.dot(d);
        if win.misses(planes.len() - 1, h, dn, -h / dn) {
            return None;
        }
    }
    Some(win.span())
}

/// The first contact, at a time `≤ limit`, of the sphere `c + t·d`,
/// radius `r`, with the solid; `t = 0` with the shortest way out when it
/// starts in contact (or inside). Returns the contact and its face (or,
/// for edge and vertex contacts, a face through that edge or vertex).
pub(crate) fn sweep(
    s: &impl ConvexView,
    c: DVec3,
    r: f64,
    d: DVec3,
    limit: f64,
) -> Option<(Contact, u32)> {
    sweep_scan(s, c, r, d, limit, true)
}

/// [`sweep`], its edge, corner and face tests skipped outside the span's
/// box when `prune` (always, but in the tests that hold the pruned scan to
/// the full one).
fn sweep_scan(
    s: &impl ConvexView,
    c: DVec3,
    r: f64,
    d: DVec3,
    limit: f64,
    prune: bool,
) -> Option<(Contact, u32)> {
    // in contact at the start: the closest point, sought only where the
    // cheap test (a plane more than r from c rules it out) allows it
    if touches(s, c, r) {
        let start = closest(s, c);
        if start.inside || start.distance <= r {
            let contact = Contact {
                t: 0.0,
                point: start.point,
                normal: start.normal,
            };
            return Some((contact, start.face));
        }
    }
    // the planes pushed out by r contain the swept shape: a miss is a miss
    let (t, t_out, face) = clip_span(s, c, d, limit, r)?;
    if let Some(k) = face {
        let (n, _) = s.plane(k as usize);
        let q = c + d * t - n * r;
        if inside_face(s, k as usize, n, q) {
            // the pushed-out face itself: the exact first contact
            return Some((
                Contact {
                    t,
                    point: q,
                    normal: n,
                },
                k,
            ));
        }
    }
    // near an edge or a vertex the pushed-out planes over-reach: the exact
    // swept shape is the faces pushed out, the edges' cylinders and the
    // vertices' spheres
    // the face of a vertex contact is found once, for the first one
    enum Face {
        Of(usize),
        NearestTo,
    }
    let mut best: Option<(Contact, Face)> = None;
    // the latest time still worth a test
    let lim = |best: &Option<(Contact, Face)>| best.as_ref().map_or(limit, |(h, _)| h.t);
    // Every contact comes while the centre is inside the pushed-out planes,
    // in [t, t_out]; and no later than the first contact with an edge or
    // corner of the entry face, where the planes over-reached (nearly
    // always the answer itself). Over that span the centre stays in a
    // small box: an edge or corner more than r from it cannot be touched,
    // and is skipped without its cylinder or sphere test, as is a face
    // whose plane the centre reaches outside the box, and a whole face
    // loop whose plane the centre stays more than r from. The features
    // tested, and the order they are taken in, are the full scan's, so the
    // answer is the same (the box is grown by a margin far above rounding).
    let span = if prune {
        let end = face.map_or(t_out, |k| {
            first_corner_contact(s, k as usize, c, r, d).min(t_out)
        });
        Span::new(c, d, t, end.max(t), r)
    } else {
        Span::EVERYWHERE
    };
    let take = |t: f64, point: DVec3, face: Face, best: &mut Option<(Contact, Face)>| {
        if (0.0..=lim(best)).contains(&t) {
            let normal = (c + d * t - point).normalize_or_zero();
            *best = Some((Contact { t, point, normal }, face));
        }
    };
    for k in 0..s.plane_count() {
        let (n, off) = s.plane(k);
        let dn = n.dot(d);
        if !span.meets_plane(n.dot(c) - off, dn) {
            continue; // neither the face nor its edges and corners can be touched
        }
        if dn < 0.0 {
            let t = (n.dot(c) - off - r) / -dn;
            let x = c + d * t;
            let q = x - n * r;
            // in range, and the centre inside the span, before the
            // (costlier) face test
            if (0.0..=lim(&best)).contains(&t) && span.reaches(x, x) && inside_face(s, k, n, q) {
                take(t, q, Face::Of(k), &mut best);
            }
        }
        let m = s.face_len(k);
        for j in 0..m {
            let (ia, ib) = (s.face_index(k, j), s.face_index(k, (j + 1) % m));
            if ia > ib {
                continue; // each edge once: it is walked both ways by its two faces
            }
            let (a, b) = (s.vertex(ia), s.vertex(ib));
            if !span.reaches(a.min(b), a.max(b)) {
                continue;
            }
            if let Some((t, u)) = ray_cylinder(c, d, a, b, r) {
                take(t, a + (b - a) * u, Face::Of(k), &mut best);
            }
        }
    }
    for v in 0..s.vertex_count() as u32 {
        let p = s.vertex(v);
        if !span.reaches(p, p) {
            continue;
        }
        if let Some(t) = ray_sphere(c, d, p, r) {
            take(t, p, Face::NearestTo, &mut best);
        }
    }
    best.map(|(h, face)| {
        let face = match face {
            Face::Of(k) => k,
            // the face reported for a vertex contact: one whose plane is nearest
            Face::NearestTo => nearest_plane(s, h.point),
        };
        (h, face as u32)
    })
}

/// The earliest contact of the sphere `c + t·d`, radius `r`, with an edge
/// or corner of face `k` (infinite when none): a bound on a sweep's first
/// contact, since each of these is a contact.
fn first_corner_contact(s: &impl ConvexView, k: usize, c: DVec3, r: f64, d: DVec3) -> f64 {
    let (m, mut first) = (s.face_len(k), f64::INFINITY);
    for j in 0..m {
        let a = s.vertex(s.face_index(k, j));
        let b = s.vertex(s.face_index(k, (j + 1) % m));
        if let Some((u, _)) = ray_cylinder(c, d, a, b, r) {
            first = first.min(u);
        }
        if let Some(u) = ray_sphere(c, d, a, r) {
            first = first.min(u);
        }
    }
    first
}

/// The box a sweep's centre stays in over a span of time, grown by the
/// sphere's radius and a margin: what a feature must reach to be touched.
struct Span {
    lo: DVec3,
    hi: DVec3,
    /// The span's first and last times.
    t0: f64,
    t1: f64,
    /// The radius with the margin.
    grow: f64,
}

impl Span {
    /// The span that reaches everything (no pruning).
    const EVERYWHERE: Span = Span {
        lo: DVec3::NEG_INFINITY,
        hi: DVec3::INFINITY,
        t0: 0.0,
        t1: 0.0,
        grow: f64::INFINITY,
    };

    /// The centre `c + t·d` over `t0..t1`: its box grown by `r` plus a
    /// margin of 1e-9 of the coordinates' size. The contact tests' rounding
    /// is about 1e-16 of it, so the span only ever keeps too much.
    fn new(c: DVec3, d: DVec3, t0: f64, t1: f64, r: f64) -> Span {
        let (p, q) = (c + d * t0, c + d * t1);
        let size = p.abs().max(q.abs()).max_element() + r;
        let grow = r + size * 1e-9;
        Span {
            lo: p.min(q) - DVec3::splat(grow),
            hi: p.max(q) + DVec3::splat(grow),
            t0,
            t1,
            grow,
        }
    }

    /// Whether the centre comes within the radius of a plane over the span,
    /// given its height `h` above the plane at `t = 0` and `dn`, the
    /// direction's component along the normal. Everything in the plane (a
    /// face, its edges and corners) is out of reach otherwise.
    #[inline]
    fn meets_plane(&self, h: f64, dn: f64) -> bool {
        let (h0, h1) = (h + dn * self.t0, h + dn * self.t1);
        h0.min(h1) <= self.grow && h0.max(h1) >= -self.grow
    }

    /// Whether the box `lo..hi` overlaps the span's box.
    #[inline]
    fn reaches(&self, lo: DVec3, hi: DVec3) -> bool {
        lo.cmple(self.hi).all() && hi.cmpge(self.lo).all()
    }
}

/// The plane nearest to `p` (a face through a vertex `p`).
fn nearest_plane(s: &impl ConvexView, p: DVec3) -> usize {
    let mut best = (f64::INFINITY, 0);
    for k in 0..s.plane_count() {
        let (n, d) = s.plane(k);
        let h = (n.dot(p) - d).abs();
        if h < best.0 {
            best = (h, k);
        }
    }
    best.1
}

/// A box centred on the origin as a convex view: planes, faces and corners
/// numbered as [`Cuboid::FACES`] and [`Cuboid::corner`] say.
pub(crate) struct CuboidView(pub DVec3);

impl ConvexView for CuboidView {
    fn plane_count(&self) -> usize {
        6
    }
    fn plane(&self, k: usize) -> (DVec3, f64) {
        let axis = k / 2;
        let sign = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        let mut n = DVec3::ZERO;
        n[axis] = sign;
        (n, self.0[axis])
    }
    fn face_len(&self, _: usize) -> usize {
        4
    }
    fn face_index(&self, k: usize, j: usize) -> u32 {
        Cuboid::FACES[k][j]
    }
    fn vertex_count(&self) -> usize {
        8
    }
    fn vertex(&self, v: u32) -> DVec3 {
        let s = |k: u32| if v & (1 << k) != 0 { 1.0 } else { -1.0 };
        DVec3::new(s(0), s(1), s(2)) * self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> CuboidView {
        CuboidView(DVec3::ONE)
    }

    #[test]
    fn box_faces_wind_outward() {
        let b = unit();
        for k in 0..6 {
            let (n, d) = b.plane(k);
            let p = |j| b.vertex(b.face_index(k, j));
            assert!((p(1) - p(0)).cross(p(2) - p(0)).dot(n) > 0.0, "face {k}");
            for j in 0..4 {
                assert_eq!(n.dot(p(j)), d);
            }
        }
    }

    #[test]
    fn closest_points_inside_on_faces_edges_and_corners() {
        let b = unit();
        let c = closest(&b, DVec3::new(0.5, 0.2, 0.0));
        assert!(c.inside);
        assert_eq!((c.distance, c.normal, c.face), (0.5, DVec3::X, 0));
        let c = closest(&b, DVec3::new(3.0, 0.5, 0.0));
        assert_eq!(
            (c.point, c.distance, c.inside),
            (DVec3::new(1.0, 0.5, 0.0), 2.0, false)
        );
        let c = closest(&b, DVec3::new(2.0, 2.0, 0.0));
        assert_eq!(c.point, DVec3::new(1.0, 1.0, 0.0));
        let c = closest(&b, DVec3::new(2.0, 3.0, -4.0));
        assert_eq!(c.point, DVec3::new(1.0, 1.0, -1.0));
        assert!((c.distance - 14f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn rays_enter_start_inside_and_miss() {
        let b = unit();
        assert_eq!(
            raycast(&b, DVec3::new(-5.0, 0.0, 0.0), DVec3::X, 10.0),
            Some(RayAnswer::Enter { t: 4.0, face: 1 })
        );
        assert_eq!(
            raycast(&b, DVec3::ZERO, DVec3::X, 10.0),
            Some(RayAnswer::Inside)
        );
        // along the face y = 1 (grazing): touches
        assert!(raycast(&b, DVec3::new(-5.0, 1.0, 0.0), DVec3::X, 10.0).is_some());
        assert_eq!(
            raycast(&b, DVec3::new(-5.0, 1.001, 0.0), DVec3::X, 10.0),
            None
        );
        assert_eq!(raycast(&b, DVec3::new(-5.0, 0.0, 0.0), DVec3::X, 3.9), None);
    }

    #[test]
    fn sweeps_hit_faces_edges_and_corners_exactly() {
        let b = unit();
        let (h, f) = sweep(&b, DVec3::new(-5.0, 0.0, 0.0), 0.5, DVec3::X, 10.0).unwrap();
        assert_eq!((h.t, f, h.normal), (3.5, 1, DVec3::NEG_X));
        // towards the edge x = -1, y = 1 diagonally: contact at the edge
        let dir = DVec3::new(1.0, -1.0, 0.0).normalize();
        let start = DVec3::new(-1.0, 1.0, 0.0) - dir * 3.0;
        let (h, _) = sweep(&b, start, 0.5, dir, 10.0).unwrap();
        assert!((h.t - 2.5).abs() < 1e-12, "{h:?}");
        assert!((h.point - DVec3::new(-1.0, 1.0, 0.0)).length() < 1e-12);
        // passing the corner 1 mm clear
        let start = DVec3::new(-5.0, 1.501, 1.0);
        assert!(sweep(&b, start, 0.5, DVec3::X, 10.0).is_none());
        // starting in contact
        let (h, _) = sweep(&b, DVec3::new(1.3, 0.0, 0.0), 0.5, DVec3::Y, 10.0).unwrap();
        assert_eq!((h.t, h.normal), (0.0, DVec3::X));
    }

    /// A hull as a convex view.
    struct HullView(crate::geom::hull::Hull);

    impl ConvexView for HullView {
        fn plane_count(&self) -> usize {
            self.0.faces.len()
        }
        fn plane(&self, k: usize) -> (DVec3, f64) {
            (self.0.faces[k].1, self.0.faces[k].2)
        }
        fn face_len(&self, k: usize) -> usize {
            self.0.faces[k].0.len()
        }
        fn face_index(&self, k: usize, j: usize) -> u32 {
            self.0.faces[k].0[j]
        }
        fn vertex_count(&self) -> usize {
            self.0.vertices.len()
        }
        fn vertex(&self, v: u32) -> DVec3 {
            self.0.vertices[v as usize]
        }
    }

    /// The hull of `n` random points in a 4 m cube, snapped to a half-metre
    /// grid when `grid` (many exactly coplanar and duplicated points).
    fn cloud_hull(
        rng: &mut kiln_geometry::rng::Rng,
        n: usize,
        grid: bool,
    ) -> Option<crate::geom::hull::Hull> {
        let pts: Vec<DVec3> = (0..n)
            .map(|_| {
                let p = rng.v(2.0);
                if grid { (p * 2.0).round() * 0.5 } else { p }
            })
            .collect();
        crate::geom::hull::hull(&pts)
    }

    /// A point on a corner or an edge, off it only by rounding (as a
    /// placed corner is): its closest point is that corner or edge, a
    /// rounding away, and the normal must still be a way out (in the
    /// corner's cone of face normals), not the rounding's direction.
    #[test]
    fn a_point_a_rounding_off_a_corner_goes_out_through_the_corner() {
        let mut rng = kiln_geometry::rng::Rng(0x0c0f_fee5_c0e4);
        let mut checked = 0;
        for _ in 0..200 {
            let n = 4 + (rng.f() * 8.0) as usize;
            let Some(h) = cloud_hull(&mut rng, n, false) else {
                continue;
            };
            let v = HullView(h);
            for i in 0..v.vertex_count() {
                for _ in 0..20 {
                    // a corner, or a point of an edge from it, nudged by a
                    // few ulps in a random direction
                    let a = v.vertex(i as u32);
                    let b = v.vertex(((i + 1) % v.vertex_count()) as u32);
                    let on = if rng.f() < 0.5 { a } else { a + (b - a) * 1e-3 };
                    let p = on + rng.unit() * (rng.f() * 8.0 * f64::EPSILON * (1.0 + on.length()));
                    let c = closest(&v, p);
                    assert!((c.normal.length() - 1.0).abs() < 1e-9);
                    // moved 0.01 along the normal, it is 0.01 away
                    let moved = closest(&v, c.point + c.normal * 0.01);
                    assert!(
                        !moved.inside && moved.distance > 0.01 - 1e-9,
                        "{p} (near {a}): normal {} leaves it {} away",
                        c.normal,
                        moved.distance
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }

    /// Archived-style plane rows, read one by one through
    /// [`ConvexView::plane`] (the scalar clip; no faces needed).
    struct PlaneRows(Vec<[rkyv::rend::f32_le; 4]>);

    impl ConvexView for PlaneRows {
        fn plane_count(&self) -> usize {
            self.0.len()
        }
        fn plane(&self, k: usize) -> (DVec3, f64) {
            let f = |i: usize| f64::from(self.0[k][i].to_native());
            (DVec3::new(f(0), f(1), f(2)), f(3))
        }
        fn face_len(&self, _: usize) -> usize {
            0
        }
        fn face_index(&self, _: usize, _: usize) -> u32 {
            0
        }
        fn vertex_count(&self) -> usize {
            0
        }
        fn vertex(&self, _: u32) -> DVec3 {
            DVec3::ZERO
        }
    }

    /// The two-planes-at-a-time clip gives the scalar clip's entry, exit and
    /// plane, bit for bit: random hulls' planes (odd and even counts), rays
    /// from outside, inside and along axis-aligned planes (a zero `n · d`),
    /// grown and not.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_paired_clip_is_the_scalar_clip() {
        let mut rng = kiln_geometry::rng::Rng(0xC11F_9A12);
        let (mut entered, mut parallel) = (0, 0);
        for cloud in 0..300 {
            let n = 4 + (rng.f() * 60.0) as usize;
            let grid = cloud % 3 == 0;
            let Some(h) = cloud_hull(&mut rng, n, grid) else {
                continue;
            };
            let rows = PlaneRows(
                h.faces
                    .iter()
                    .map(|(_, n, d)| {
                        [n.x, n.y, n.z, *d].map(|x| rkyv::rend::f32_le::from_native(x as f32))
                    })
                    .collect(),
            );
            for _ in 0..100 {
                let o = rng.v(4.0);
                let d = if grid && rng.f() < 0.3 {
                    // along an axis: some grid faces are parallel to it
                    [DVec3::X, DVec3::Y, DVec3::Z][(rng.f() * 3.0) as usize]
                } else {
                    rng.unit() * (0.5 + rng.f() * 4.0)
                };
                let (t_max, grow) = (rng.f() * 10.0, if rng.f() < 0.5 { 0.0 } else { rng.f() });
                let scalar = clip_span(&rows, o, d, t_max, grow);
                let paired = clip_pairs(&rows.0, o, d, t_max, grow);
                assert_eq!(
                    format!("{paired:?}"),
                    format!("{scalar:?}"),
                    "origin {o}, direction {d}, t_max {t_max}, grow {grow}"
                );
                entered += usize::from(matches!(scalar, Some((_, _, Some(_)))));
                parallel += usize::from(rows.0.iter().any(|p| {
                    let (nx, ny, nz) = (p[0].to_native(), p[1].to_native(), p[2].to_native());
                    f64::from(nx) * d.x + f64::from(ny) * d.y + f64::from(nz) * d.z == 0.0
                }));
            }
        }
        assert!(
            entered > 2_000 && parallel > 1_000,
            "{entered} entries, {parallel} with a parallel plane"
        );
    }

    /// The sweep's span pruning skips only features that cannot be touched
    /// first: on random hulls (clouds of 8–200 points, some snapped to a
    /// grid so faces have many corners and many sweeps graze edges), every
    /// answer is bit for bit the full scan's. Sweeps aim at a hull vertex
    /// or edge point, offset by up to the radius, so most take the edge
    /// and corner path.
    #[test]
    fn span_pruning_gives_the_full_scans_answers() {
        let mut rng = kiln_geometry::rng::Rng(0x5A11_0F5E);
        let (mut edge_path, mut hits) = (0, 0);
        for _ in 0..200 {
            let n = 8 + (rng.f() * 192.0) as usize;
            let grid = rng.f() < 0.5;
            let Some(h) = cloud_hull(&mut rng, n, grid) else {
                continue;
            };
            let v = HullView(h);
            for _ in 0..100 {
                let r = 0.05 + rng.f() * 0.5;
                let a = v.vertex((rng.f() * v.vertex_count() as f64) as u32);
                let b = v.vertex((rng.f() * v.vertex_count() as f64) as u32);
                let target = a + (b - a) * if rng.f() < 0.3 { 0.0 } else { rng.f() };
                let dir = rng.unit();
                let aim = target + rng.unit() * r * rng.f() * 1.2;
                let c = aim - dir * (1.0 + rng.f() * 4.0);
                let limit = 1.0 + rng.f() * 5.0;
                let full = sweep_scan(&v, c, r, dir, limit, false);
                let pruned = sweep_scan(&v, c, r, dir, limit, true);
                assert_eq!(
                    format!("{pruned:?}"),
                    format!("{full:?}"),
                    "centre {c}, radius {r}, direction {dir}, limit {limit}"
                );
                if let Some((hit, f)) = full {
                    hits += 1;
                    let (n, _) = v.plane(f as usize);
                    if hit.t > 0.0 && hit.normal.dot(n) < 1.0 - 1e-9 {
                        edge_path += 1;
                    }
                }
            }
        }
        // the cases the pruning could get wrong were asked many times
        assert!(
            hits > 5_000 && edge_path > 2_000,
            "{hits} hits, {edge_path} at edges or corners"
        );
    }
}
