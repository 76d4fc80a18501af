//! Convex solids — polytopes and boxes — through one set of exact f64
//! routines over a [`ConvexView`]: point containment (plane signs), closest
//! point (the nearest plane from inside; from outside, the nearest point of
//! the faces whose plane faces the point), ray clipping (Cyrus and Beck,
//! "Generalized two- and three-dimensional clipping", 1978) and sphere
//! sweeps (clip against the planes pushed out by the radius, which contain
//! the exact swept shape; then the face, edge and vertex tests where the
//! pushed-out planes over-reach near edges).

use crate::geom::sphere_triangle::{Contact, ray_cylinder, ray_sphere};
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
    let normal = if distance > 0.0 {
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
    let (mut t0, mut t1, mut face) = (0.0f64, t_max, None);
    for k in 0..s.plane_count() {
        let (n, off) = s.plane(k);
        let h = n.dot(o) - off - grow;
        let dn = n.dot(d);
        if dn == 0.0 {
            if h > 0.0 {
                return None; // parallel and outside
            }
            continue;
        }
        let t = -h / dn;
        if dn < 0.0 {
            if t > t0 {
                t0 = t;
                face = Some(k as u32);
            }
        } else if t < t1 {
            t1 = t;
        }
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, face))
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
    let (t, face) = clip(s, c, d, limit, r)?;
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
    let take = |t: f64, point: DVec3, face: Face, best: &mut Option<(Contact, Face)>| {
        if (0.0..=lim(best)).contains(&t) {
            let normal = (c + d * t - point).normalize_or_zero();
            *best = Some((Contact { t, point, normal }, face));
        }
    };
    for k in 0..s.plane_count() {
        let (n, off) = s.plane(k);
        let dn = n.dot(d);
        if dn < 0.0 {
            let t = (n.dot(c) - off - r) / -dn;
            let q = c + d * t - n * r;
            // in range before the (costlier) face test
            if (0.0..=lim(&best)).contains(&t) && inside_face(s, k, n, q) {
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
            if let Some((t, u)) = ray_cylinder(c, d, a, b, r) {
                take(t, a + (b - a) * u, Face::Of(k), &mut best);
            }
        }
    }
    for v in 0..s.vertex_count() as u32 {
        let p = s.vertex(v);
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
pub(crate) struct BoxView(pub DVec3);

impl ConvexView for BoxView {
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

    fn unit() -> BoxView {
        BoxView(DVec3::ONE)
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
}
