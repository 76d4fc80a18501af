//! Rays against the round pieces of swept spheres and capsules: a ball
//! and a cylinder around a segment, each entered from outside. The sphere
//! sweep against a triangle (`sphere_triangle`) and the runtime's rounded
//! and convex colliders meet their vertices and edges through these
//! (Ericson, "Real-Time Collision Detection", 2005, §5.3.2 and §5.3.7).
//! Both solve their quadratic in the cancellation-free form `c / (−b + √disc)`.

use glam::DVec3;

/// Entry time of the ray `o + t·d` into the sphere at `v`, radius `r`,
/// for an origin outside it.
pub fn ray_sphere(o: DVec3, d: DVec3, v: DVec3, r: f64) -> Option<f64> {
    let m = o - v;
    let a = d.length_squared();
    let b = m.dot(d);
    let c = m.length_squared() - r * r;
    if c <= 0.0 || b >= 0.0 || a == 0.0 {
        return None; // inside already (handled as contact) or moving away
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    Some(c / (-b + disc.sqrt())) // = (-b - √disc) / a, without cancellation
}

/// Entry time into the cylinder of radius `r` around segment `p..q`, and
/// the segment parameter of the contact, if that parameter is in `[0, 1]`.
pub fn ray_cylinder(o: DVec3, d: DVec3, p: DVec3, q: DVec3, r: f64) -> Option<(f64, f64)> {
    let e = q - p;
    let ee = e.length_squared();
    if ee == 0.0 {
        return None;
    }
    let m = o - p;
    let m_perp = m - e * (m.dot(e) / ee);
    let d_perp = d - e * (d.dot(e) / ee);
    let a = d_perp.length_squared();
    let b = m_perp.dot(d_perp);
    let c = m_perp.length_squared() - r * r;
    if a == 0.0 || c <= 0.0 || b >= 0.0 {
        // parallel to the edge, inside the infinite cylinder (the caps
        // decide), or moving away from the axis
        return None;
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = c / (-b + disc.sqrt());
    let s = (m + d * t).dot(e) / ee;
    (0.0..=1.0).contains(&s).then_some((t, s))
}
