//! Primitive fits: the box, sphere or capsule that encloses a set of
//! points, with its frame and error. Classification asks how well a mesh
//! fills each; prepare fits the chosen one.

use crate::kind::ColliderKind;
use glam::{DAffine3, DMat3, DQuat, DVec2, DVec3};
use kiln_formats::primitive::Cuboid;
use kiln_geometry::hull::Hull;
use std::cell::OnceCell;

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

/// Whether `m` turns without scaling or mirroring, to `tol` (a
/// primitive's frame must: a box stays a box of its size).
pub fn is_rigid(m: &DMat3, tol: f64) -> bool {
    (m.transpose() * *m - DMat3::IDENTITY)
        .to_cols_array()
        .iter()
        .all(|x| x.abs() <= tol)
        && m.determinant() > 0.0
}

/// Fits a primitive of `kind` to `points` (mesh space): the primitive,
/// its frame in mesh space, and the fit error — the largest distance from
/// a point to the primitive's surface. Every point is enclosed.
///
/// Boxes are oriented: the smallest of the box along the mesh axes and,
/// for each of the hull's largest faces, the box with that face's normal
/// as one axis and the minimum-area rectangle of the hull's projection
/// for the other two (rotating calipers: Toussaint, "Solving geometric
/// problems with the rotating calipers", 1983). A box with a face flush
/// with a hull face — any rotated crate — is found exactly. The mesh axes
/// win ties, so a box that fits as well axis-aligned stays axis-aligned.
/// Capsules run along the axis (of the mesh frame or the best box's) that
/// gives the smallest capsule. Spheres are centred on the points' box.
pub fn fit(points: &[[f32; 3]], kind: ColliderKind) -> Option<(Primitive, DAffine3, f64)> {
    Fitting::new(points, None)?.fit(kind)
}

/// Fits of every primitive kind to one point set, sharing what they
/// share: the points in f64, their box, the convex hull (given, or made on
/// first need) and the best oriented box (boxes and capsules both use it).
pub struct Fitting {
    pts: Vec<DVec3>,
    centre: DVec3,
    floor: f64,
    hull: OnceCell<Option<Hull>>,
    best_box: OnceCell<(DAffine3, DVec3)>,
}

impl Fitting {
    /// The fits of `points` (mesh space), `None` when there are none;
    /// `hull` is their convex hull when the caller has it.
    pub fn new(points: &[[f32; 3]], hull: Option<Hull>) -> Option<Fitting> {
        let pts: Vec<DVec3> = points
            .iter()
            .map(|p| DVec3::from(p.map(f64::from)))
            .collect();
        let first = *pts.first()?;
        let (lo, hi) = pts
            .iter()
            .fold((first, first), |(l, h), &p| (l.min(p), h.max(p)));
        let half = (hi - lo) * 0.5;
        let given = OnceCell::new();
        if hull.is_some() {
            let _ = given.set(hull);
        }
        Some(Fitting {
            pts,
            centre: (lo + hi) * 0.5,
            // no flat primitives: a hair of thickness on empty axes
            floor: (half.max_element() * 1e-4).max(1e-6),
            hull: given,
            best_box: OnceCell::new(),
        })
    }

    /// The smallest box over the candidate orientations (see [`fit`]).
    fn best_box(&self) -> (DAffine3, DVec3) {
        *self.best_box.get_or_init(|| {
            let hull = self
                .hull
                .get_or_init(|| kiln_geometry::hull::hull(&self.pts))
                .as_ref();
            best_box(&self.pts, hull, self.floor)
        })
    }

    /// The fitted primitive a convex body of `volume` (the points' hull's)
    /// fills best, with the fraction of the primitive's volume it fills
    /// (the fit encloses every point, so the rest is space the primitive
    /// adds): the simplest kind within half a percent of the best fill (a
    /// sphere is a capsule with no segment).
    pub fn best_fill(&self, volume: f64) -> Option<(ColliderKind, f64)> {
        let fills: Vec<(ColliderKind, f64)> = [
            ColliderKind::Cuboid,
            ColliderKind::Sphere,
            ColliderKind::Capsule,
        ]
        .into_iter()
        .filter_map(|kind| {
            let (p, _, _) = self.fit(kind)?;
            Some((kind, volume / p.volume()))
        })
        .collect();
        let best = fills.iter().map(|f| f.1).fold(0.0, f64::max);
        fills.into_iter().find(|f| f.1 >= best - 0.005)
    }

    /// The primitive of `kind` (box, sphere or capsule), its frame and fit
    /// error, as [`fit`] describes.
    pub fn fit(&self, kind: ColliderKind) -> Option<(Primitive, DAffine3, f64)> {
        let (pts, centre, floor) = (&self.pts, self.centre, self.floor);
        match kind {
            ColliderKind::Cuboid => {
                let (frame, h) = self.best_box();
                let to_box = frame.inverse();
                let err = pts
                    .iter()
                    .map(|p| {
                        let q = to_box.transform_point3(*p).abs();
                        // distance to the box surface from inside
                        (h - q).min_element().abs()
                    })
                    .fold(0.0, f64::max);
                Some((Primitive::Cuboid(h.as_vec3().to_array()), frame, err))
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
                let (bframe, _) = self.best_box();
                let axes = [
                    DVec3::X,
                    DVec3::Y,
                    DVec3::Z,
                    bframe.matrix3.x_axis,
                    bframe.matrix3.y_axis,
                    bframe.matrix3.z_axis,
                ];
                let centres = [
                    centre,
                    centre,
                    centre,
                    bframe.translation,
                    bframe.translation,
                    bframe.translation,
                ];
                let mut best: Option<(f64, DVec3, DVec3, f64, f64)> = None; // volume, centre, dir, hh, r
                for (&dir, &c) in axes.iter().zip(&centres) {
                    let (c, hh, r) = capsule_along(pts, c, dir, floor);
                    let v = Primitive::Capsule(hh as f32, r as f32).volume();
                    if best.is_none_or(|b| v < b.0 * (1.0 - 1e-9)) {
                        best = Some((v, c, dir, hh, r));
                    }
                }
                let (_, c, dir, hh, r) = best?;
                let (a, b) = (c - dir * hh, c + dir * hh);
                let err = pts
                    .iter()
                    .map(|p| {
                        let t = ((*p - a).dot(b - a) / (b - a).length_squared().max(1e-300))
                            .clamp(0.0, 1.0);
                        (r - p.distance(a + (b - a) * t)).abs()
                    })
                    .fold(0.0, f64::max);
                let frame =
                    DAffine3::from_rotation_translation(DQuat::from_rotation_arc(DVec3::Y, dir), c);
                Some((Primitive::Capsule(hh as f32, r as f32), frame, err))
            }
            _ => None,
        }
    }
}

/// The smallest capsule along `dir` through the line `c + s·dir` that
/// encloses every point: its centre, segment half length and radius.
/// The radius is the largest distance from the line; each point then
/// bounds how short the segment may be (a point at axial `t` and distance
/// `ρ` needs an end within `t ∓ √(r² − ρ²)`).
fn capsule_along(pts: &[DVec3], c: DVec3, dir: DVec3, floor: f64) -> (DVec3, f64, f64) {
    let split = |p: DVec3| {
        let v = p - c;
        let t = v.dot(dir);
        (t, (v - dir * t).length())
    };
    let r = pts.iter().map(|&p| split(p).1).fold(floor, f64::max);
    let (mut top, mut bottom) = (f64::NEG_INFINITY, f64::INFINITY);
    for &p in pts {
        let (t, rho) = split(p);
        let reach = (r * r - rho * rho).max(0.0).sqrt();
        top = top.max(t - reach);
        bottom = bottom.min(t + reach);
    }
    // every point within r of the segment [bottom, top] (or of its middle
    // when the points fit in a sphere)
    let (lo, hi) = if top >= bottom {
        (bottom, top)
    } else {
        let m = (top + bottom) * 0.5;
        (m, m)
    };
    (c + dir * ((lo + hi) * 0.5), (hi - lo) * 0.5, r)
}

/// Hull faces tried as a box face, largest first.
const BOX_FACES: usize = 48;

/// The smallest box found over the candidate orientations (see [`fit`]):
/// its frame (rotation + centre, mesh space) and half extents.
fn best_box(pts: &[DVec3], hull: Option<&Hull>, floor: f64) -> (DAffine3, DVec3) {
    let mut best = box_in(pts, DMat3::IDENTITY, floor);
    for r in hull.map(box_orientations).unwrap_or_default() {
        let b = box_in(pts, r, floor);
        let vol = |b: &(DAffine3, DVec3)| b.1.x * b.1.y * b.1.z;
        // a clear gain only: the mesh axes win ties and rounding noise
        if vol(&b) < vol(&best) * (1.0 - 1e-6) {
            best = b;
        }
    }
    best
}

/// The box of `pts` along the columns of the rotation `r`.
fn box_in(pts: &[DVec3], r: DMat3, floor: f64) -> (DAffine3, DVec3) {
    let rt = r.transpose();
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for &p in pts {
        let q = rt * p;
        (lo, hi) = (lo.min(q), hi.max(q));
    }
    let half = ((hi - lo) * 0.5).max(DVec3::splat(floor));
    (
        DAffine3::from_mat3_translation(r, r * ((lo + hi) * 0.5)),
        half,
    )
}

/// Candidate box orientations: for each of the hull's largest faces (by
/// area, distinct normals), its normal and the directions of the
/// minimum-area rectangle around the hull projected onto the face.
fn box_orientations(hull: &Hull) -> Vec<DMat3> {
    let area = |lp: &[u32], n: DVec3| {
        let a = hull.vertices[lp[0] as usize];
        lp[1..]
            .windows(2)
            .map(|w| {
                let (b, c) = (hull.vertices[w[0] as usize], hull.vertices[w[1] as usize]);
                (b - a).cross(c - a).dot(n)
            })
            .sum::<f64>()
    };
    let mut faces: Vec<(f64, DVec3)> = hull
        .faces
        .iter()
        .map(|(lp, n, _)| (area(lp, *n), *n))
        .collect();
    // largest first; equal areas in hull order (a stable sort)
    faces.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut used: Vec<DVec3> = Vec::new();
    let mut out = Vec::new();
    for (_, n) in faces {
        if used.len() == BOX_FACES {
            break;
        }
        if used.iter().any(|u| u.dot(n).abs() > 1.0 - 1e-9) {
            continue;
        }
        used.push(n);
        let (a, b) = n.any_orthonormal_pair();
        let flat: Vec<DVec2> = hull
            .vertices
            .iter()
            .map(|&p| DVec2::new(p.dot(a), p.dot(b)))
            .collect();
        if let Some(u) = min_area_direction(&flat) {
            let x = a * u.x + b * u.y;
            let y = n.cross(x);
            out.push(DMat3::from_cols(x, y, n));
        }
    }
    out
}

/// The edge direction of the 2D convex hull of `pts` whose bounding
/// rectangle has the least area (the minimum-area rectangle has a side
/// flush with a hull edge: Freeman and Shapira, 1975).
fn min_area_direction(pts: &[DVec2]) -> Option<DVec2> {
    let h = hull_2d(pts);
    if h.len() < 3 {
        return None;
    }
    let mut best: Option<(f64, DVec2)> = None;
    for i in 0..h.len() {
        let e = h[(i + 1) % h.len()] - h[i];
        let len = e.length();
        if len == 0.0 {
            continue;
        }
        let u = e / len;
        let v = u.perp();
        let (mut ulo, mut uhi, mut vlo, mut vhi) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &p in &h {
            let (s, t) = (p.dot(u), p.dot(v));
            (ulo, uhi, vlo, vhi) = (ulo.min(s), uhi.max(s), vlo.min(t), vhi.max(t));
        }
        let area = (uhi - ulo) * (vhi - vlo);
        if best.is_none_or(|b| area < b.0) {
            best = Some((area, u));
        }
    }
    best.map(|b| b.1)
}

/// The convex hull of 2D points, counter-clockwise, collinear points
/// dropped (Andrew's monotone chain, 1979).
fn hull_2d(pts: &[DVec2]) -> Vec<DVec2> {
    let mut p: Vec<DVec2> = pts.to_vec();
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: DVec2, a: DVec2, b: DVec2| (a - o).perp_dot(b - o);
    let mut h: Vec<DVec2> = Vec::with_capacity(2 * p.len());
    for pass in 0..2 {
        let start = h.len();
        let iter: Box<dyn Iterator<Item = &DVec2>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while h.len() >= start + 2 && cross(h[h.len() - 2], h[h.len() - 1], q) <= 0.0 {
                h.pop();
            }
            h.push(q);
        }
        h.pop();
    }
    h
}

/// The principal axes of weighted points (the eigenvectors of their
/// covariance about the weighted centre, by cyclic Jacobi rotations:
/// Golub and Van Loan, "Matrix Computations", §8.5), the axis of the
/// largest spread first, with each spread (the weighted sum of squared
/// distances along it); `None` without positive weight. Deterministic:
/// a fixed sweep order and count.
pub fn principal_axes(
    points: impl Iterator<Item = (DVec3, f64)> + Clone,
) -> Option<([DVec3; 3], [f64; 3])> {
    let total: f64 = points.clone().map(|(_, w)| w).sum();
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let c = points.clone().map(|(p, w)| p * w).sum::<DVec3>() / total;
    let mut a = [[0.0f64; 3]; 3];
    for (p, w) in points {
        let d = (p - c).to_array();
        for (i, row) in a.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x += w * d[i] * d[j];
            }
        }
    }
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0f64]];
    for _ in 0..32 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off <= 1e-30 * (a[0][0].abs() + a[1][1].abs() + a[2][2].abs()) {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            // the rotation that zeroes a[p][q]
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let (cs, sn) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
            for row in a.iter_mut() {
                let (akp, akq) = (row[p], row[q]);
                row[p] = cs * akp - sn * akq;
                row[q] = sn * akp + cs * akq;
            }
            let (rp, rq) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| cs * rp[k] - sn * rq[k]);
            a[q] = std::array::from_fn(|k| sn * rp[k] + cs * rq[k]);
            for row in v.iter_mut() {
                let (vp, vq) = (row[p], row[q]);
                row[p] = cs * vp - sn * vq;
                row[q] = sn * vp + cs * vq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    Some((
        order.map(|k| DVec3::new(v[0][k], v[1][k], v[2][k]).normalize()),
        order.map(|k| a[k][k]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_axes_follow_the_longest_spread() {
        let rot = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
        // a grid 4 × 2 × 1 long, turned
        let pts: Vec<(DVec3, f64)> = (0..5)
            .flat_map(|i| (0..5).flat_map(move |j| (0..5).map(move |k| (i, j, k))))
            .map(|(i, j, k)| {
                let p = DVec3::new(i as f64, j as f64 * 0.5, k as f64 * 0.25);
                (rot * p + DVec3::new(3.0, -2.0, 1.0), 1.0)
            })
            .collect();
        let (axes, spread) = principal_axes(pts.iter().copied()).unwrap();
        for (axis, want) in axes.iter().zip([DVec3::X, DVec3::Y, DVec3::Z]) {
            assert!(axis.dot(rot * want).abs() > 1.0 - 1e-9, "{axis} {want}");
        }
        // 125 points on 5 levels of spacing 1, 0.5, 0.25: each level
        // (-2..=2 steps from the middle) 25 times
        for (s, step) in spread.iter().zip([1.0, 0.5, 0.25f64]) {
            let want = 25.0 * 10.0 * step * step;
            assert!((s - want).abs() < 1e-9 * want, "{s} {want}");
        }
        assert!(principal_axes(std::iter::empty()).is_none());
    }

    #[test]
    fn primitive_volumes() {
        use std::f64::consts::PI;
        assert_eq!(Primitive::Cuboid([1.0, 2.0, 3.0]).volume(), 48.0);
        assert!((Primitive::Sphere(1.0).volume() - 4.0 / 3.0 * PI).abs() < 1e-12);
        let cap = Primitive::Capsule(1.0, 1.0).volume();
        assert!((cap - (2.0 * PI + 4.0 / 3.0 * PI)).abs() < 1e-12);
    }

    fn cuboid_points(h: DVec3, rot: DQuat, at: DVec3) -> Vec<[f32; 3]> {
        (0..8)
            .map(|i| {
                let c = DVec3::new(
                    if i & 1 == 1 { h.x } else { -h.x },
                    if i & 2 == 2 { h.y } else { -h.y },
                    if i & 4 == 4 { h.z } else { -h.z },
                );
                (rot * c + at).as_vec3().to_array()
            })
            .collect()
    }

    /// Latitude rings of a capsule along `dir` (poles included).
    fn capsule_points(hh: f64, r: f64, rot: DQuat, at: DVec3) -> Vec<[f32; 3]> {
        let mut out = Vec::new();
        for j in 0..=16 {
            let th = std::f64::consts::PI * j as f64 / 16.0;
            let (y, rho) = (r * th.cos(), r * th.sin());
            let y = if j <= 8 { y + hh } else { y - hh };
            for i in 0..24 {
                let ph = std::f64::consts::TAU * i as f64 / 24.0;
                let p = DVec3::new(rho * ph.cos(), y, rho * ph.sin());
                out.push((rot * p + at).as_vec3().to_array());
                if j == 8 {
                    let q = DVec3::new(rho * ph.cos(), -hh, rho * ph.sin());
                    out.push((rot * q + at).as_vec3().to_array());
                }
            }
        }
        out
    }

    #[test]
    fn rotated_boxes_are_fitted_at_their_orientation() {
        let rots = [
            DQuat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, -1.1),
            DQuat::from_axis_angle(DVec3::new(1.0, 1.0, 1.0).normalize(), 0.9),
            DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
            DQuat::from_rotation_y(1e-3),
        ];
        for rot in rots {
            for h in [
                DVec3::ONE,
                DVec3::new(0.5, 1.0, 2.5),
                DVec3::new(3.0, 0.01, 3.0),
            ] {
                let at = DVec3::new(10.0, -4.0, 2.0);
                let pts = cuboid_points(h, rot, at);
                let (p, frame, err) = fit(&pts, ColliderKind::Cuboid).unwrap();
                let Primitive::Cuboid(got) = p else { panic!() };
                let mut got = got.map(f64::from);
                got.sort_by(f64::total_cmp);
                let mut want = h.to_array();
                want.sort_by(f64::total_cmp);
                for k in 0..3 {
                    assert!(
                        (got[k] - want[k]).abs() < 1e-5 * (1.0 + want[k]),
                        "{rot} {h}: {got:?}"
                    );
                }
                assert!(err < 1e-5, "{rot} {h}: error {err}");
                assert!(frame.translation.distance(at) < 1e-5);
                // a similarity: a rotation, not a mirror
                assert!((frame.matrix3.determinant() - 1.0).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn an_axis_aligned_box_keeps_the_mesh_axes() {
        let pts = cuboid_points(DVec3::new(1.0, 2.0, 3.0), DQuat::IDENTITY, DVec3::ZERO);
        let (p, frame, _) = fit(&pts, ColliderKind::Cuboid).unwrap();
        assert_eq!(frame.matrix3, DMat3::IDENTITY);
        assert_eq!(p, Primitive::Cuboid([1.0, 2.0, 3.0]));
    }

    #[test]
    fn tilted_capsules_are_fitted_along_their_axis() {
        for rot in [
            DQuat::IDENTITY,
            DQuat::from_rotation_z(0.6),
            DQuat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, -1.1),
        ] {
            let (hh, r) = (1.5, 0.4);
            let at = DVec3::new(-3.0, 1.0, 7.0);
            let pts = capsule_points(hh, r, rot, at);
            let (p, frame, err) = fit(&pts, ColliderKind::Capsule).unwrap();
            let Primitive::Capsule(ghh, gr) = p else {
                panic!()
            };
            assert!((f64::from(gr) - r).abs() < 1e-5, "{rot}: r {gr}");
            assert!((f64::from(ghh) - hh).abs() < 1e-5, "{rot}: hh {ghh}");
            assert!(err < 1e-5, "{rot}: {err}");
            let axis = frame.matrix3 * DVec3::Y;
            assert!(
                axis.dot(rot * DVec3::Y).abs() > 1.0 - 1e-9,
                "{rot}: axis {axis}"
            );
            assert!(frame.translation.distance(at) < 1e-5);
        }
    }

    #[test]
    fn every_point_is_inside_the_fitted_capsule() {
        // a lumpy cloud: the capsule must still enclose every point
        let mut pts = Vec::new();
        let mut x = 0.12345f64;
        for _ in 0..500 {
            let mut r = || {
                x = (x * 9301.0 + 0.49297).fract();
                x * 2.0 - 1.0
            };
            pts.push([r() as f32 * 3.0, r() as f32, r() as f32 * 0.5]);
        }
        let (p, frame, _) = fit(&pts, ColliderKind::Capsule).unwrap();
        let Primitive::Capsule(hh, r) = p else {
            panic!()
        };
        let inv = frame.inverse();
        for q in &pts {
            let l = inv.transform_point3(DVec3::from(q.map(f64::from)));
            let on = DVec3::new(0.0, l.y.clamp(-f64::from(hh), f64::from(hh)), 0.0);
            assert!(
                l.distance(on) <= f64::from(r) * (1.0 + 1e-6),
                "{q:?} outside"
            );
        }
    }
}
