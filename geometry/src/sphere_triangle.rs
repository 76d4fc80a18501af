//! Sphere against one triangle: closest point (overlaps) and first time of
//! impact of a moving sphere (sweeps).
//!
//! Both work in f64 on f32 inputs: the answers must be good to 1e-4 m on
//! kilometre-sized levels, and f64 costs almost nothing in scalar code.
//!
//! A sweep is a ray cast against the Minkowski sum of the triangle and the
//! sphere (Ericson, "Real-Time Collision Detection", 2005, §5.5.7; the
//! shape casting of van den Bergen, "Collision Detection in Interactive 3D
//! Environments", 2003): the triangle's face
//! pushed out by `r` on the side the sphere starts, a capsule (cylinder of
//! radius `r`) around each edge, and a sphere of radius `r` at each vertex.
//! The earliest of those is the time of impact.
//!
//! ```text
//!        ( v )───────────( v )      face slab: plane offset by r, point inside the triangle
//!        (   )===========(   )      edges:     cylinder of radius r, segment parameter in [0, 1]
//!                                   vertices:  sphere of radius r
//! ```

use crate::ray_round::{ray_cylinder, ray_sphere};
use glam::DVec3;

/// Where on triangle `(a, b, c)` the point closest to some `p` lies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TriangleRegion {
    /// A vertex: 0, 1, 2 for a, b, c.
    Vertex(usize),
    /// The edge from vertex `i` to vertex `j`, at `v_i + (v_j − v_i)·t`.
    Edge(usize, usize, f64),
    /// The face, at `a + (b − a)·v + (c − a)·w`.
    Face(f64, f64),
}

impl TriangleRegion {
    /// The point it stands for on the triangle `v`.
    #[inline]
    pub fn point(self, v: [DVec3; 3]) -> DVec3 {
        match self {
            TriangleRegion::Vertex(k) => v[k],
            TriangleRegion::Edge(i, j, t) => v[i] + (v[j] - v[i]) * t,
            TriangleRegion::Face(s, t) => v[0] + (v[1] - v[0]) * s + (v[2] - v[0]) * t,
        }
    }
}

/// The region of triangle `(a, b, c)` holding its closest point to `p`
/// (Ericson, Real-Time Collision Detection, 5.1.5: Voronoi regions of
/// vertices, edges, face). Shared by the sphere tests and GJK's simplex.
pub fn closest_region(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> TriangleRegion {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return TriangleRegion::Vertex(0);
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return TriangleRegion::Vertex(1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return TriangleRegion::Edge(0, 1, d1 / (d1 - d3));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return TriangleRegion::Vertex(2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return TriangleRegion::Edge(0, 2, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return TriangleRegion::Edge(1, 2, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    TriangleRegion::Face(vb * denom, vc * denom)
}

/// Closest point of triangle `(a, b, c)` to `p` (Ericson, Real-Time
/// Collision Detection, 5.1.5: Voronoi regions of vertices, edges, face).
pub fn closest_point(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    closest_region(p, a, b, c).point([a, b, c])
}

/// A contact of a sphere with a triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Time of impact (0 when the sphere starts in contact).
    pub t: f64,
    /// Contact point on the triangle.
    pub point: DVec3,
    /// Unit normal from the triangle towards the sphere's centre at `t`.
    pub normal: DVec3,
}

/// Unit normal of the triangle on the side of `p` (any unit vector for a
/// point in the plane of a degenerate triangle).
fn face_normal_towards(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let n = (b - a).cross(c - a).normalize_or_zero();
    if n == DVec3::ZERO {
        return DVec3::Y;
    }
    if n.dot(p - a) < 0.0 { -n } else { n }
}

/// Contact of a resting sphere, if it touches the triangle (distance ≤ r).
pub fn overlap(center: DVec3, r: f64, a: DVec3, b: DVec3, c: DVec3) -> Option<Contact> {
    let q = closest_point(center, a, b, c);
    let v = center - q;
    let d2 = v.length_squared();
    if d2 > r * r {
        return None;
    }
    let d = d2.sqrt();
    // a centre on the triangle is a closest point away only by rounding,
    // whose direction is noise (in the plane, say): the face's normal
    // then, the way out of it
    let noise = 1e-12
        * (1.0
            + center.abs().max_element()
            + (b - a).abs().max_element()
            + (c - a).abs().max_element());
    let normal = if d > noise {
        v / d
    } else {
        face_normal_towards(center, a, b, c)
    };
    Some(Contact {
        t: 0.0,
        point: q,
        normal,
    })
}

/// Earliest `t` in `[0, t_max]` where the sphere `center + t·dir`, radius
/// `r`, touches the triangle; a sphere already touching it reports `t = 0`
/// with the separating normal.
pub fn sweep(
    center: DVec3,
    r: f64,
    dir: DVec3,
    t_max: f64,
    a: DVec3,
    b: DVec3,
    c: DVec3,
) -> Option<Contact> {
    // starts in contact
    if let Some(hit) = overlap(center, r, a, b, c) {
        return Some(hit);
    }
    let mut best: Option<Contact> = None;
    let mut limit = t_max;
    let take = |t: f64, point: DVec3, best: &mut Option<Contact>, limit: &mut f64| {
        if t >= 0.0 && t <= *limit {
            let at = center + dir * t;
            let normal = (at - point).normalize_or_zero();
            *limit = t;
            *best = Some(Contact { t, point, normal });
        }
    };
    // face: the plane pushed out by r towards the sphere
    let n0 = (b - a).cross(c - a).normalize_or_zero();
    if n0 != DVec3::ZERO {
        let side = n0.dot(center - a);
        let n = if side < 0.0 { -n0 } else { n0 };
        let s = side.abs();
        let dn = dir.dot(n);
        if dn < 0.0 {
            let t = (s - r) / -dn;
            let p = center + dir * t - n * r;
            if inside(p, a, b, c, n0) {
                take(t, p, &mut best, &mut limit);
            }
        }
    }
    // edges: cylinders of radius r, clamped to the segment
    for (p, q) in [(a, b), (b, c), (c, a)] {
        if let Some((t, s)) = ray_cylinder(center, dir, p, q, r) {
            take(t, p + (q - p) * s, &mut best, &mut limit);
        }
    }
    // vertices: spheres of radius r
    for v in [a, b, c] {
        if let Some(t) = ray_sphere(center, dir, v, r) {
            take(t, v, &mut best, &mut limit);
        }
    }
    best
}

/// Whether `p`, in the plane of the triangle whose winding normal is `n`,
/// lies inside it (edges included).
fn inside(p: DVec3, a: DVec3, b: DVec3, c: DVec3, n: DVec3) -> bool {
    (b - a).cross(p - a).dot(n) >= 0.0
        && (c - b).cross(p - b).dot(n) >= 0.0
        && (a - c).cross(p - c).dot(n) >= 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> [DVec3; 3] {
        [DVec3::ZERO, DVec3::X * 2.0, DVec3::Z * 2.0]
    }

    #[test]
    fn closest_points_in_each_region() {
        let [a, b, c] = tri();
        assert_eq!(
            closest_point(DVec3::new(0.5, 3.0, 0.5), a, b, c),
            DVec3::new(0.5, 0.0, 0.5)
        );
        assert_eq!(closest_point(DVec3::new(-1.0, 0.0, -1.0), a, b, c), a);
        assert_eq!(
            closest_point(DVec3::new(1.0, 1.0, -1.0), a, b, c),
            DVec3::new(1.0, 0.0, 0.0)
        );
        assert_eq!(
            closest_point(DVec3::new(3.0, 0.0, 3.0), a, b, c),
            DVec3::new(1.0, 0.0, 1.0)
        );
    }

    #[test]
    fn sweeps_hit_face_edge_and_vertex_at_the_right_time() {
        let [a, b, c] = tri();
        // straight down onto the face
        let h = sweep(DVec3::new(0.5, 5.0, 0.5), 1.0, DVec3::NEG_Y, 10.0, a, b, c).unwrap();
        assert!((h.t - 4.0).abs() < 1e-12);
        assert_eq!(h.normal, DVec3::Y);
        // sideways into the edge a..b (along z = 0) from z < 0
        let h = sweep(DVec3::new(1.0, 0.0, -3.0), 0.5, DVec3::Z, 10.0, a, b, c).unwrap();
        assert!((h.t - 2.5).abs() < 1e-12);
        assert!((h.point - DVec3::new(1.0, 0.0, 0.0)).length() < 1e-12);
        // at the vertex a from the far corner
        let dir = DVec3::new(1.0, 0.0, 1.0).normalize();
        let h = sweep(DVec3::new(-3.0, 0.0, -3.0), 1.0, dir, 10.0, a, b, c).unwrap();
        assert!((h.t - (18f64.sqrt() - 1.0)).abs() < 1e-12);
        assert_eq!(h.point, a);
        // passing 1 mm clear of the vertex: no contact
        let miss = sweep(DVec3::new(-3.0, 1.001, 0.0), 1.0, DVec3::X, 10.0, a, b, c);
        assert!(miss.is_none());
        // grazing exactly: contact
        let graze = sweep(DVec3::new(-3.0, 1.0, 0.0), 1.0, DVec3::X, 10.0, a, b, c);
        assert!(graze.is_some());
    }

    #[test]
    fn starting_in_contact_reports_zero_and_the_separating_direction() {
        let [a, b, c] = tri();
        let h = sweep(DVec3::new(0.5, 0.3, 0.5), 0.5, DVec3::NEG_Y, 10.0, a, b, c).unwrap();
        assert_eq!(h.t, 0.0);
        assert_eq!(h.normal, DVec3::Y);
        let h = sweep(DVec3::new(0.5, -0.3, 0.5), 0.5, DVec3::Y, 10.0, a, b, c).unwrap();
        assert_eq!(h.normal, DVec3::NEG_Y);
    }

    #[test]
    fn a_fast_sphere_does_not_tunnel_through_a_thin_triangle() {
        let [a, b, c] = tri();
        let h = sweep(
            DVec3::new(0.5, 1000.0, 0.5),
            0.01,
            DVec3::NEG_Y * 1e4,
            1.0,
            a,
            b,
            c,
        )
        .unwrap();
        assert!((h.t * 1e4 - (1000.0 - 0.01)).abs() < 1e-9);
    }
}
