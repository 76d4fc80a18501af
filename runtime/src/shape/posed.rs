//! A query shape placed in world space: its core in f64 and its radius,
//! the form every collider answers against.

use super::{ConvexHull, Pose, QueryShape};
use crate::geom::gjk::{OrientedBox, Point, Segment, Support};
use crate::geom::sat::{Edge, Face, Polyhedral};
use glam::{DQuat, DVec3};

/// A query shape in world space: its core in f64 and its radius.
#[derive(Clone)]
pub(crate) struct Posed<'a> {
    pub core: Core<'a>,
    pub radius: f64,
}

/// The core of a placed query shape.
#[derive(Clone)]
pub(crate) enum Core<'a> {
    Point(Point),
    Segment(Segment),
    Cuboid(OrientedBox),
    Hull(PosedHull<'a>),
}

/// A query hull under its pose, its vertices placed once per query.
#[derive(Clone)]
pub(crate) struct PosedHull<'a> {
    hull: &'a ConvexHull,
    rotation: DQuat,
    translation: DVec3,
    world: Vec<DVec3>,
    /// Its [`Polyhedral::body_key`], unique to this posed hull.
    key: u64,
}

/// The next [`PosedHull`]'s key.
static NEXT_HULL_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Support for PosedHull<'_> {
    fn support(&self, d: DVec3) -> DVec3 {
        crate::geom::gjk::Hull(&self.world).support(d)
    }
    fn any_point(&self) -> DVec3 {
        self.rotation * self.hull.points[0] + self.translation
    }
}

impl PosedHull<'_> {
    /// Appends the hull's faces in world space.
    fn push_faces(&self, faces: &mut Vec<Face>) {
        let (r, t) = (self.rotation, self.translation);
        for (&n, &h) in self.hull.normals.iter().zip(&self.hull.offsets) {
            let n = r * n;
            faces.push(Face { n, h: h + n.dot(t) });
        }
    }
}

impl crate::geom::convex_contact::FacePlanes for PosedHull<'_> {
    fn plane_excess(&self, x: DVec3) -> (f64, DVec3, f64) {
        // in the hull's own frame
        let local = self.rotation.inverse() * (x - self.translation);
        let (mut most, mut k, mut reach) = (f64::NEG_INFINITY, 0, 0.0f64);
        for (i, (n, &h)) in self.hull.normals.iter().zip(&self.hull.offsets).enumerate() {
            let s = n.dot(local) - h;
            reach = reach.max(h.abs());
            if s > most {
                (most, k) = (s, i);
            }
        }
        let n = self
            .hull
            .normals
            .get(k)
            .map_or(DVec3::ZERO, |&n| self.rotation * n);
        let tol = 1e-12 * (1.0 + reach + local.abs().max_element());
        (most, n, tol)
    }
}

impl Polyhedral for PosedHull<'_> {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        self.hull.normals.iter().for_each(|&n| f(self.rotation * n));
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        self.hull.edges.iter().for_each(|&e| f(self.rotation * e));
    }
    fn is_solid(&self) -> bool {
        self.hull.normals.len() > 2
    }
    fn holds_point(&self, x: DVec3, r: f64, tol: f64) -> Option<bool> {
        use crate::geom::convex_contact::FacePlanes;
        let (most, ..) = self.plane_excess(x);
        // outside the planes, a grown hull's corners are rounded: exact
        // only without a radius
        (most <= tol || r == 0.0).then_some(most <= r + tol)
    }
    fn body_key(&self) -> Option<u64> {
        Some(self.key)
    }
    fn all_corners(&self, f: &mut dyn FnMut(DVec3) -> bool) -> Option<bool> {
        Some(self.world.iter().all(|&p| f(p)))
    }
    fn solid_faces(&self, faces: &mut Vec<Face>) -> bool {
        self.is_solid() && {
            self.push_faces(faces);
            true
        }
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        let r = self.rotation;
        self.push_faces(faces);
        let at = |v: u32| self.world[v as usize];
        for &(p, q, n1, n2) in &self.hull.edge_faces {
            let (n1, n2) = (r * n1, r * n2);
            edges.push(Edge {
                p: at(p),
                q: at(q),
                n1,
                n2,
                out: n1 + n2,
            });
        }
        true
    }
}

macro_rules! on_core {
    ($c:expr, $v:ident => $body:expr) => {
        match $c {
            Core::Point($v) => $body,
            Core::Segment($v) => $body,
            Core::Cuboid($v) => $body,
            Core::Hull($v) => $body,
        }
    };
}

impl Core<'_> {
    /// The core as the closed forms of [`crate::geom::convex_contact`] see it.
    pub fn closed(&self) -> crate::geom::convex_contact::CoreRef<'_> {
        use crate::geom::convex_contact::CoreRef;
        match self {
            Core::Point(p) => CoreRef::Point(p),
            Core::Segment(s) => CoreRef::Segment(s),
            Core::Cuboid(b) => CoreRef::Cuboid(b),
            Core::Hull(h) => CoreRef::Hull(h),
        }
    }
}

impl Core<'_> {
    /// Calls `f` with each corner of the core: a sphere's centre, a
    /// capsule's ends, a box's eight corners, a hull's points.
    pub(crate) fn for_each_vertex(&self, f: &mut dyn FnMut(DVec3)) {
        match self {
            Core::Point(p) => f(p.0),
            Core::Segment(s) => {
                f(s.0);
                f(s.1);
            }
            Core::Cuboid(b) => {
                for k in 0..8 {
                    let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
                    f(b.center
                        + b.axes[0] * (b.half.x * s(1))
                        + b.axes[1] * (b.half.y * s(2))
                        + b.axes[2] * (b.half.z * s(4)));
                }
            }
            Core::Hull(h) => h.world.iter().for_each(|&p| f(p)),
        }
    }

    /// Calls `f` with the ends of each edge of the core: a capsule's
    /// segment, a box's twelve edges, a hull's edges (a sphere has none).
    pub(crate) fn for_each_edge(&self, f: &mut dyn FnMut(DVec3, DVec3)) {
        match self {
            Core::Point(_) => {}
            Core::Segment(s) => f(s.0, s.1),
            Core::Cuboid(b) => {
                let corner = |k: usize| {
                    let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
                    b.center
                        + b.axes[0] * (b.half.x * s(1))
                        + b.axes[1] * (b.half.y * s(2))
                        + b.axes[2] * (b.half.z * s(4))
                };
                // corners k and k with one bit set more differ along one axis
                for k in 0..8 {
                    for bit in [1, 2, 4] {
                        if k & bit == 0 {
                            f(corner(k), corner(k | bit));
                        }
                    }
                }
            }
            Core::Hull(h) => {
                for &(p, q, ..) in &h.hull.edge_faces {
                    f(h.world[p as usize], h.world[q as usize]);
                }
            }
        }
    }
}

impl Support for Core<'_> {
    fn support(&self, d: DVec3) -> DVec3 {
        on_core!(self, v => v.support(d))
    }
    fn any_point(&self) -> DVec3 {
        on_core!(self, v => v.any_point())
    }
}

impl Polyhedral for Core<'_> {
    fn face_normals(&self, f: &mut dyn FnMut(DVec3)) {
        on_core!(self, v => v.face_normals(f))
    }
    fn edge_directions(&self, f: &mut dyn FnMut(DVec3)) {
        on_core!(self, v => v.edge_directions(f))
    }
    fn features(&self, faces: &mut Vec<Face>, edges: &mut Vec<Edge>) -> bool {
        on_core!(self, v => v.features(faces, edges))
    }
    fn solid_faces(&self, faces: &mut Vec<Face>) -> bool {
        on_core!(self, v => v.solid_faces(faces))
    }
    fn is_solid(&self) -> bool {
        on_core!(self, v => v.is_solid())
    }
    fn as_box(&self) -> Option<OrientedBox> {
        match self {
            Core::Cuboid(b) => Some(*b),
            _ => None,
        }
    }
    fn ends(&self) -> Option<(DVec3, DVec3)> {
        on_core!(self, v => v.ends())
    }
    fn holds_point(&self, x: DVec3, r: f64, tol: f64) -> Option<bool> {
        on_core!(self, v => v.holds_point(x, r, tol))
    }
    fn body_key(&self) -> Option<u64> {
        on_core!(self, v => v.body_key())
    }
    fn all_corners(&self, f: &mut dyn FnMut(DVec3) -> bool) -> Option<bool> {
        on_core!(self, v => v.all_corners(f))
    }
}

/// Column `k` of the rotation matrix of the pose's quaternion, normalised
/// on the way: the matrix of a quaternion `q` of any length is the unit
/// one's times `|q|²`, so one division by `|q|²` stands for normalising
/// (a root and a division) and the three quaternion products a box's axes
/// took (together a sixth of a box's yes/no test on a field of balls).
/// The entries are `kiln_formats::placement::similarity_world64`'s, written
/// out for the one column asked for: taking that whole matrix per column
/// cost capsule and box yes/no tests 15% (measured).
#[inline(always)]
fn rotation_column(pose: &Pose, k: usize) -> DVec3 {
    let q = pose.rotation.as_dquat();
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    let n = 1.0 / q.length_squared();
    let column = match k {
        0 => DVec3::new(
            w * w + x * x - y * y - z * z,
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ),
        1 => DVec3::new(
            2.0 * (x * y - w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z + w * x),
        ),
        _ => DVec3::new(
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            w * w - x * x - y * y + z * z,
        ),
    };
    column * n
}

impl<'a> Posed<'a> {
    /// The shape under `pose`, or `None` for non-finite or negative input.
    pub(crate) fn new(shape: &QueryShape<'a>, pose: &Pose) -> Option<Posed<'a>> {
        if !pose.rotation.is_finite() || !pose.translation.is_finite() {
            return None;
        }
        let rot = pose.rotation.as_dquat().normalize();
        let t = pose.translation.as_dvec3();
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        Some(match *shape {
            QueryShape::Sphere { radius } if ok(radius) => Posed {
                core: Core::Point(Point(t)),
                radius: f64::from(radius),
            },
            QueryShape::Capsule {
                half_height,
                radius,
            } if ok(half_height) && ok(radius) => {
                let h = rotation_column(pose, 1) * f64::from(half_height);
                Posed {
                    core: Core::Segment(Segment(t - h, t + h)),
                    radius: f64::from(radius),
                }
            }
            QueryShape::Cuboid { half } if half.is_finite() && half.min_element() >= 0.0 => Posed {
                core: Core::Cuboid(OrientedBox {
                    center: t,
                    // written out: `map`'s closure was left out of line
                    // (3% of a box's yes/no test on a field of balls)
                    axes: [
                        rotation_column(pose, 0),
                        rotation_column(pose, 1),
                        rotation_column(pose, 2),
                    ],
                    half: half.as_dvec3(),
                }),
                radius: 0.0,
            },
            QueryShape::Hull(h) => Posed {
                core: Core::Hull(PosedHull {
                    hull: h,
                    rotation: rot,
                    translation: t,
                    world: h.points.iter().map(|&p| rot * p + t).collect(),
                    key: NEXT_HULL_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                }),
                radius: 0.0,
            },
            _ => return None,
        })
    }

    /// A point inside the shape: its pose's translation, or for a hull
    /// the mean of its vertices.
    pub fn centre(&self) -> DVec3 {
        match &self.core {
            Core::Point(p) => p.0,
            Core::Segment(s) => (s.0 + s.1) * 0.5,
            Core::Cuboid(b) => b.center,
            Core::Hull(h) => h.rotation * h.hull.centre + h.translation,
        }
    }

    /// The world box around the shape (centre and half extents): in
    /// closed form, or for a hull the extremes of its world points.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        let (c, h) = match &self.core {
            Core::Point(p) => (p.0, DVec3::ZERO),
            Core::Segment(s) => ((s.0 + s.1) * 0.5, (s.1 - s.0).abs() * 0.5),
            Core::Cuboid(b) => (
                b.center,
                b.axes[0].abs() * b.half.x
                    + b.axes[1].abs() * b.half.y
                    + b.axes[2].abs() * b.half.z,
            ),
            Core::Hull(h) => {
                // one pass over its world points (the six axis supports)
                let (lo, hi) = h
                    .world
                    .iter()
                    .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &p| {
                        (lo.min(p), hi.max(p))
                    });
                ((lo + hi) * 0.5, (hi - lo) * 0.5)
            }
        };
        (c, h + self.radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::epa;
    use crate::geom::gjk::{
        Gap, Moved, OrientedBox, Point, Segment, Triangle, distance, search_enclosing,
    };
    use crate::geom::sat::Polyhedral;
    use glam::Vec3;
    use kiln_geometry::rng::Rng;

    /// A random hull of `n` points in an ellipsoid (flat and needle-like
    /// ones included), posed at random near `at`.
    fn random_hull(rng: &mut Rng, n: usize) -> ConvexHull {
        let axes = DVec3::new(0.05 + rng.f(), 0.05 + rng.f(), 0.002 + rng.f() * rng.f());
        let pts: Vec<Vec3> = (0..n)
            .map(|_| (rng.unit() * axes * rng.f().cbrt()).as_vec3())
            .collect();
        ConvexHull::new(&pts).expect("a hull of random points")
    }

    fn posed<'a>(h: &'a ConvexHull, rng: &mut Rng, at: DVec3) -> Core<'a> {
        let r = rng.rotation();
        let rot = glam::DQuat::from_mat3(&glam::DMat3::from_cols(r[0], r[1], r[2])).as_quat();
        let pose = Pose::new(rot, at.as_vec3());
        Posed::new(&QueryShape::Hull(h), &pose)
            .expect("a valid pose")
            .core
    }

    /// The rotation's columns, normalised by one division, are the unit
    /// quaternion's images of the axes, for quaternions of any length.
    #[test]
    fn rotation_columns_are_the_normalised_quaternions_axes() {
        let mut rng = Rng(0x0c01_0a11_0000_0001);
        for _ in 0..2000 {
            let mut c = || (rng.f() * 2.0 - 1.0) as f32;
            let q = glam::Quat::from_xyzw(c(), c(), c(), c()) * (1e-3 + 1e3 * rng.f() as f32);
            let pose = Pose::new(q, Vec3::ZERO);
            let unit = q.as_dquat().normalize();
            for (k, axis) in [DVec3::X, DVec3::Y, DVec3::Z].into_iter().enumerate() {
                let (got, want) = (rotation_column(&pose, k), unit * axis);
                assert!(
                    (got - want).length() < 1e-12,
                    "{q:?} axis {k}: {got} against {want}"
                );
            }
        }
    }

    /// One case: where the expanding polytope answers, the same depth as
    /// the separating axes along a move that separates the shapes (never
    /// deeper; up to 1e-6 of the size shallower, as hulls' face normals
    /// are f32, so the axes' faces are a hair off the true ones), and
    /// where it gives its contact, a point of `b` farthest along the way
    /// out that `a`, moved out, touches. Counts overlapping cases,
    /// answers, the worst gap and contacts given.
    fn check_epa(
        a: &impl Polyhedral,
        b: &impl Polyhedral,
        tally: &mut (u32, u32, f64, u32),
        what: &str,
    ) {
        let (d_sat, _) = crate::geom::sat::penetration(a, b);
        let (Gap::Overlap, Some(t)) = search_enclosing(a, b, f64::INFINITY, -1.0, None) else {
            return;
        };
        tally.0 += 1;
        let Some(epa::Depth {
            depth: d,
            normal: n,
            on_b,
        }) = epa::penetration(a, b, t)
        else {
            return;
        };
        tally.1 += 1;
        let size = 1.0 + d_sat.abs();
        assert!(
            d <= d_sat + 1e-9 * size && d >= d_sat - 1e-6 * size,
            "{what}: polytope {d}, axes {d_sat}"
        );
        tally.2 = tally.2.max((d_sat - d) / size);
        assert!((n.length() - 1.0).abs() < 1e-9, "{what}");
        let apart = distance(&Moved(a, n * (d + 1e-7)), b);
        assert!(
            apart.is_some_and(|s| s.distance > 0.0),
            "{what}: {d} along {n}"
        );
        // the contact: a point of b's surface farthest along the way out,
        // where a, moved out by the depth, touches it
        let tol = 1e-9 * size;
        let Some(on_b) = on_b else {
            return;
        };
        tally.3 += 1;
        let lead = (b.support(n) - on_b).dot(n);
        assert!(lead.abs() <= tol, "{what}: contact {lead:e} under b's face");
        let gap = distance(&Moved(a, n * d), &Point(on_b)).map_or(0.0, |s| s.distance);
        assert!(gap <= tol, "{what}: contact {gap:e} from a moved out");
    }

    /// The expanding polytope against the separating axes on overlapping
    /// hulls of 8 to 200 points (flat and needle-like ones included), and
    /// points, segments, boxes and triangles against them; it must answer most cases
    /// (a test that cannot fail if it always bailed out proves nothing).
    #[test]
    fn expanding_polytope_matches_the_separating_axes_on_hulls() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut tallies = [(0u32, 0u32, 0.0f64, 0u32); 5];
        for i in 0..1500 {
            let (h1, h2) = (
                random_hull(&mut rng, 8 + (i % 7) * 30),
                random_hull(&mut rng, 8 + (i % 5) * 40),
            );
            let a = posed(&h1, &mut rng, DVec3::ZERO);
            let at = rng.unit() * rng.f() * 1.2;
            let b = posed(&h2, &mut rng, at);
            check_epa(&a, &b, &mut tallies[0], &format!("hulls {i}"));
            let c = at + rng.unit() * rng.f() * 0.3;
            check_epa(&Point(c), &b, &mut tallies[1], &format!("point {i}"));
            let h = rng.unit() * rng.f() * 0.8;
            check_epa(
                &Segment(c - h, c + h),
                &b,
                &mut tallies[2],
                &format!("segment {i}"),
            );
            let bx = OrientedBox {
                center: c,
                axes: rng.rotation(),
                half: DVec3::new(rng.f(), rng.f(), rng.f()) * 0.4 + 0.01,
            };
            check_epa(&bx, &b, &mut tallies[3], &format!("box {i}"));
            // a hull sunk into a mesh triangle (the solid query shape on
            // a mesh): the polytope goes first there too
            let s = 0.3 + rng.f();
            let tri = Triangle([0, 1, 2].map(|_| c + rng.unit() * s));
            check_epa(&b, &tri, &mut tallies[4], &format!("triangle {i}"));
        }
        for ((overlapping, answered, worst, placed), what) in tallies
            .iter()
            .zip(["hull", "point", "segment", "box", "triangle"])
        {
            eprintln!(
                "{what}: {answered} of {overlapping} answered, {placed} with their contact; axes deeper by up to {worst:.1e}"
            );
            assert!(*overlapping > 300, "{what}: {overlapping}");
            assert!(
                answered * 10 >= overlapping * 9,
                "{what}: {answered} of {overlapping}"
            );
            assert!(
                placed * 10 >= answered * 9,
                "{what}: {placed} of {answered}"
            );
        }
    }
}
