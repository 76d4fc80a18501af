//! Primitive fits: the box, sphere or capsule that encloses a set of
//! points, with its frame and error. Classification asks how well a mesh
//! fills each; prepare fits the chosen one.

use crate::kind::ColliderKind;
use glam::{DAffine3, DQuat, DVec3};
use kiln_formats::primitive::Cuboid;

/// A fitted primitive, centred on the origin of its frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Primitive {
    /// Box half extents.
    Cuboid([f32; 3]),
    /// Sphere radius.
    Sphere(f32),
    /// Capsule along local y: half height of the segment, radius.
    Capsule(f32, f32),
}

impl Primitive {
    /// Enclosed volume.
    pub fn volume(&self) -> f64 {
        use std::f64::consts::PI;
        match *self {
            Primitive::Cuboid(h) => 8.0 * h.iter().map(|&x| f64::from(x)).product::<f64>(),
            Primitive::Sphere(r) => 4.0 / 3.0 * PI * f64::from(r).powi(3),
            Primitive::Capsule(hh, r) => {
                let (hh, r) = (f64::from(hh), f64::from(r));
                PI * r * r * (2.0 * hh + 4.0 / 3.0 * r)
            }
        }
    }

    /// Corners of the primitive's local box.
    pub fn box_corners(&self) -> Vec<[f32; 3]> {
        let h = match *self {
            Primitive::Cuboid(h) => h,
            Primitive::Sphere(r) => [r; 3],
            Primitive::Capsule(hh, r) => [r, hh + r, r],
        };
        (0..8).map(|i| Cuboid::corner(h, i)).collect()
    }
}

/// Fits a primitive of `kind` to `points` (mesh space): the primitive,
/// its frame in mesh space, and the fit error — the largest distance from
/// a point to the primitive's surface. Boxes and spheres are fitted to the
/// points' axis-aligned box; capsules run along its longest axis.
pub fn fit(points: &[[f32; 3]], kind: ColliderKind) -> Option<(Primitive, DAffine3, f64)> {
    let pts: Vec<DVec3> = points
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    let first = *pts.first()?;
    let (lo, hi) = pts
        .iter()
        .fold((first, first), |(l, h), &p| (l.min(p), h.max(p)));
    let centre = (lo + hi) * 0.5;
    let half = (hi - lo) * 0.5;
    // no flat primitives: a hair of thickness on empty axes
    let floor = (half.max_element() * 1e-4).max(1e-6);
    match kind {
        ColliderKind::Box => {
            let h = half.max(DVec3::splat(floor));
            let err = pts
                .iter()
                .map(|p| {
                    let q = (*p - centre).abs();
                    // distance to the box surface from inside
                    (h - q).min_element().abs()
                })
                .fold(0.0, f64::max);
            let h = h.as_vec3().to_array();
            Some((
                Primitive::Cuboid(h),
                DAffine3::from_translation(centre),
                err,
            ))
        }
        ColliderKind::Sphere => {
            let r = pts.iter().map(|p| p.distance(centre)).fold(floor, f64::max);
            let err = pts
                .iter()
                .map(|p| (r - p.distance(centre)).abs())
                .fold(0.0, f64::max);
            Some((
                Primitive::Sphere(r as f32),
                DAffine3::from_translation(centre),
                err,
            ))
        }
        ColliderKind::Capsule => {
            let axis = if half.x >= half.y && half.x >= half.z {
                0
            } else if half.y >= half.z {
                1
            } else {
                2
            };
            let mut dir = DVec3::ZERO;
            dir[axis] = 1.0;
            let radial = |p: DVec3| {
                let v = p - centre;
                (v - dir * v.dot(dir)).length()
            };
            let r = pts.iter().map(|p| radial(*p)).fold(floor, f64::max);
            let hh = (half[axis] - r).max(0.0);
            let (a, b) = (centre - dir * hh, centre + dir * hh);
            let err = pts
                .iter()
                .map(|p| {
                    let t = ((*p - a).dot(b - a) / (b - a).length_squared().max(1e-300))
                        .clamp(0.0, 1.0);
                    (r - p.distance(a + (b - a) * t)).abs()
                })
                .fold(0.0, f64::max);
            let frame = DAffine3::from_rotation_translation(
                DQuat::from_rotation_arc(DVec3::Y, dir),
                centre,
            );
            Some((Primitive::Capsule(hh as f32, r as f32), frame, err))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_volumes() {
        use std::f64::consts::PI;
        assert_eq!(Primitive::Cuboid([1.0, 2.0, 3.0]).volume(), 48.0);
        assert!((Primitive::Sphere(1.0).volume() - 4.0 / 3.0 * PI).abs() < 1e-12);
        let cap = Primitive::Capsule(1.0, 1.0).volume();
        assert!((cap - (2.0 * PI + 4.0 / 3.0 * PI)).abs() < 1e-12);
    }
}
