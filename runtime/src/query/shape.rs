//! Convex query shapes — spheres, capsules, boxes and convex hulls, placed
//! by a [`Pose`] — against the whole level: overlaps (every object touched,
//! each with its deepest contact), yes/no tests and casts (first time of
//! impact along a motion).
//!
//! The top-level tree picks the instances the shape's world box may reach;
//! each instance's shape answers exactly for itself (`shape::probe`): GJK
//! distance between the query's core and each convex piece of the collider
//! (a triangle, a box, a polytope, a sphere's centre, a capsule's
//! segment), the separating-axis depth when the cores overlap, and casts
//! by conservative advancement, all in f64 world space.
//!
//! ```
//! # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
//! use kiln_runtime::{CastOptions, Filter, QueryShape, ShapeCast, Vec3};
//! let (capsule, pose) =
//!     QueryShape::capsule(Vec3::new(12.0, 0.2, 5.0), Vec3::new(12.0, 1.4, 5.0), 0.4);
//! for touch in level.overlap(&capsule, &pose, &Filter::ALL) {
//!     println!("{} deep in {}", touch.depth, level.object_name(touch.instance));
//! }
//! let slide = CastOptions { ignore_leaving: true };
//! let along_x = ShapeCast::new(capsule, pose, Vec3::X, 10.0).with(slide);
//! let hit = level.cast(&along_x, &Filter::ALL).unwrap();
//! assert_eq!(level.object_name(hit.instance), "wall");
//! ```

use super::filter::Filter;
use crate::geom::gjk::{OrientedBox, Point, Segment, Support};
use crate::geom::hull;
use crate::geom::probe::Touch;
use crate::geom::ray_box::SlabRay;
use crate::geom::sat::{Edge, Face, Polyhedral};
use crate::instance::Placement;
use crate::level::Level;
use crate::shape::ShapeRef;
use crate::walk::{Grow, RayVisitor, top_tree, walk_ray};
use glam::{DQuat, DVec3, Quat, Vec3};
use kiln_formats::level::ArchivedLevel;

/// Where a query shape is: a rotation, then a translation.
///
/// ```
/// use kiln_runtime::{Pose, Quat, Vec3};
/// // a pose turns the shape, then moves it
/// let p = Pose::new(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), Vec3::new(1.0, 2.0, 3.0));
/// let tip = p.rotation * Vec3::X + p.translation;
/// assert!((tip - Vec3::new(1.0, 3.0, 3.0)).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Translation (the shape's local origin in world space).
    pub translation: Vec3,
}

impl Pose {
    /// No rotation, at the origin.
    ///
    /// ```
    /// use kiln_runtime::{Pose, Vec3};
    /// assert_eq!(Pose::IDENTITY, Pose::at(Vec3::ZERO));
    /// ```
    pub const IDENTITY: Pose = Pose {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };

    /// No rotation, at `translation`.
    ///
    /// ```
    /// use kiln_runtime::{Pose, Quat, Vec3};
    /// assert_eq!(Pose::at(Vec3::Y), Pose::new(Quat::IDENTITY, Vec3::Y));
    /// ```
    pub fn at(translation: Vec3) -> Pose {
        Pose {
            rotation: Quat::IDENTITY,
            translation,
        }
    }

    /// `rotation`, then `translation`.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, Quat, QueryShape, Vec3};
    /// // a 2 x 0.2 x 0.2 m plank 0.9 m from the wall: upright, it misses the wall;
    /// // lying along x, it pokes 0.1 m into it
    /// let plank = QueryShape::Box { half: Vec3::new(0.1, 1.0, 0.1) };
    /// let at = Vec3::new(15.1, 1.5, 12.0);
    /// let wall = level.find_object("wall").unwrap();
    /// let hits = |pose: &Pose| level.overlap(&plank, pose, &Filter::ALL).iter().any(|o| o.instance == wall);
    /// assert!(!hits(&Pose::at(at)));
    /// assert!(hits(&Pose::new(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), at)));
    /// ```
    pub fn new(rotation: Quat, translation: Vec3) -> Pose {
        Pose {
            rotation,
            translation,
        }
    }
}

/// A convex hull to query with: up to [`ConvexHull::MAX_POINTS`] points,
/// its faces and edges found once when it is made (not per query).
///
/// ```
/// use kiln_runtime::{ConvexHull, Vec3};
/// // a square pyramid: five vertices; the point inside is dropped
/// let hull = ConvexHull::new(&[
///     Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0),
///     Vec3::new(1.0, 0.0, 1.0), Vec3::new(-1.0, 0.0, 1.0),
///     Vec3::new(0.0, 1.5, 0.0), Vec3::new(0.0, 0.5, 0.0),
/// ])?;
/// assert_eq!(hull.vertices().count(), 5);
/// # Ok::<(), kiln_runtime::HullError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    points: Vec<DVec3>,
    /// The mean of the vertices: a point inside.
    centre: DVec3,
    normals: Vec<DVec3>,
    /// Each face's support value along its normal.
    offsets: Vec<f64>,
    edges: Vec<DVec3>,
    /// Each edge's two vertices (indices into `points`) and its two
    /// faces' normals.
    edge_faces: Vec<(u32, u32, DVec3, DVec3)>,
}

/// Why a [`ConvexHull`] could not be made.
///
/// ```
/// use kiln_runtime::{ConvexHull, HullError, Vec3};
/// let flat = [Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::ONE.with_y(0.0)];
/// assert_eq!(ConvexHull::new(&flat), Err(HullError::Flat));
/// let bad = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.0, 0.0, f32::NAN)];
/// assert_eq!(ConvexHull::new(&bad), Err(HullError::NotFinite(3)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HullError {
    /// More points than [`ConvexHull::MAX_POINTS`].
    #[error("{0} points, at most {max}", max = ConvexHull::MAX_POINTS)]
    TooManyPoints(usize),
    /// A point is NaN or infinite.
    #[error("point {0} is not finite")]
    NotFinite(usize),
    /// Fewer than four points, or all of them on a plane.
    #[error("the points are flat or fewer than four: no solid hull")]
    Flat,
}

impl ConvexHull {
    /// Most points a query hull may have.
    ///
    /// ```
    /// use kiln_runtime::{ConvexHull, HullError, Vec3};
    /// let many: Vec<Vec3> = (0..=ConvexHull::MAX_POINTS).map(|i| Vec3::splat(i as f32)).collect();
    /// assert_eq!(ConvexHull::new(&many), Err(HullError::TooManyPoints(257)));
    /// ```
    pub const MAX_POINTS: usize = 256;

    /// The hull of `points` in the shape's local frame.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{ConvexHull, Filter, Pose, QueryShape, Vec3};
    /// // a tetrahedron standing on its tip, 5 cm into the floor
    /// let tetra = ConvexHull::new(&[
    ///     Vec3::new(0.0, -0.5, 0.0), Vec3::new(-0.5, 0.5, -0.5),
    ///     Vec3::new(0.5, 0.5, -0.5), Vec3::new(0.0, 0.5, 0.5),
    /// ])?;
    /// let touched = level.overlap(&QueryShape::Hull(&tetra), &Pose::at(Vec3::new(12.0, 0.45, 5.0)), &Filter::ALL);
    /// assert_eq!(touched.len(), 1);
    /// assert!((touched[0].depth - 0.05).abs() < 1e-5);
    /// # Ok::<(), kiln_runtime::HullError>(())
    /// ```
    pub fn new(points: &[Vec3]) -> Result<ConvexHull, HullError> {
        if points.len() > Self::MAX_POINTS {
            return Err(HullError::TooManyPoints(points.len()));
        }
        if let Some(i) = points.iter().position(|p| !p.is_finite()) {
            return Err(HullError::NotFinite(i));
        }
        let pts: Vec<DVec3> = points.iter().map(|p| p.as_dvec3()).collect();
        let h = hull::hull(&pts).ok_or(HullError::Flat)?;
        let normals = h.faces.iter().map(|(_, n, _)| *n).collect();
        let offsets = h.faces.iter().map(|(_, _, d)| *d).collect();
        let mut edges = Vec::new();
        // (low, high, face) per walked edge: each edge is walked by its
        // two faces, which sorting puts side by side
        let mut walked = Vec::new();
        for (f, (lp, _, _)) in h.faces.iter().enumerate() {
            for j in 0..lp.len() {
                let (a, b) = (lp[j], lp[(j + 1) % lp.len()]);
                walked.push((a.min(b), a.max(b), f));
                if a < b {
                    edges.push(h.vertices[b as usize] - h.vertices[a as usize]);
                }
            }
        }
        walked.sort_unstable();
        let edge_faces = walked
            .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
            .filter_map(|g| match g {
                [x, y] => Some((x.0, x.1, h.faces[x.2].1, h.faces[y.2].1)),
                _ => None,
            })
            .collect();
        let centre = h.vertices.iter().sum::<DVec3>() / h.vertices.len() as f64;
        Ok(ConvexHull {
            centre,
            points: h.vertices,
            normals,
            offsets,
            edges,
            edge_faces,
        })
    }

    /// The hull's vertices (a subset of the points it was made from).
    ///
    /// ```
    /// use kiln_runtime::{ConvexHull, Vec3};
    /// let corners: Vec<Vec3> = (0..8).map(|i| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32)).collect();
    /// let cube = ConvexHull::new(&corners)?;
    /// // a unit cube's hull is its eight corners, in some order
    /// assert_eq!(cube.vertices().count(), 8);
    /// assert!(cube.vertices().all(|v| corners.contains(&v)));
    /// # Ok::<(), kiln_runtime::HullError>(())
    /// ```
    pub fn vertices(&self) -> impl Iterator<Item = Vec3> + '_ {
        self.points.iter().map(|p| p.as_vec3())
    }
}

/// A convex shape to query with, in its own frame (a [`Pose`] places it).
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{ConvexHull, Filter, Pose, QueryShape, Vec3};
/// let wedge = ConvexHull::new(&[Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::Y])?;
/// let shapes = [
///     QueryShape::Sphere { radius: 0.5 },
///     QueryShape::Capsule { half_height: 0.6, radius: 0.3 },
///     QueryShape::Box { half: Vec3::new(0.5, 0.25, 0.5) },
///     QueryShape::Hull(&wedge),
/// ];
/// // each, placed well above the floor, touches nothing
/// for s in &shapes {
///     assert!(!level.intersects(s, &Pose::at(Vec3::new(12.0, 2.0, 5.0)), &Filter::ALL));
/// }
/// # Ok::<(), kiln_runtime::HullError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueryShape<'a> {
    /// A sphere around the origin.
    Sphere {
        /// Radius (≥ 0).
        radius: f32,
    },
    /// A capsule: the segment from `(0, −half_height, 0)` to `(0,
    /// half_height, 0)` grown by `radius` (see [`QueryShape::capsule`]
    /// for one between two world points).
    Capsule {
        /// Half the distance between the cap centres (≥ 0).
        half_height: f32,
        /// Radius (≥ 0).
        radius: f32,
    },
    /// A box around the origin.
    Box {
        /// Half extents along the local axes (each ≥ 0).
        half: Vec3,
    },
    /// A convex hull.
    Hull(&'a ConvexHull),
}

impl QueryShape<'_> {
    /// A capsule between the world points `a` and `b`, with its pose.
    ///
    /// ```
    /// use kiln_runtime::{QueryShape, Vec3};
    /// let (shape, pose) = QueryShape::capsule(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), 0.25);
    /// assert_eq!(shape, QueryShape::Capsule { half_height: 1.0, radius: 0.25 });
    /// assert_eq!(pose.translation, Vec3::new(1.0, 0.0, 0.0));
    /// // the pose turns the capsule's +Y axis onto the segment
    /// assert!((pose.rotation * Vec3::Y - Vec3::X).length() < 1e-6);
    /// ```
    pub fn capsule(a: Vec3, b: Vec3, radius: f32) -> (QueryShape<'static>, Pose) {
        let d = b - a;
        let len = d.length();
        let rotation = if len > 0.0 {
            Quat::from_rotation_arc(Vec3::Y, d / len)
        } else {
            Quat::IDENTITY
        };
        (
            QueryShape::Capsule {
                half_height: len * 0.5,
                radius,
            },
            Pose::new(rotation, (a + b) * 0.5),
        )
    }
}

/// One object a query shape touches.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
/// // a ball sunk 0.2 m into the floor: push it out by `depth` along `normal`
/// let ball = QueryShape::Sphere { radius: 0.5 };
/// let mut at = Vec3::new(12.0, 0.3, 5.0);
/// let touch = level.overlap(&ball, &Pose::at(at), &Filter::ALL)[0];
/// at += touch.normal * touch.depth;
/// assert!((at.y - 0.5).abs() < 1e-5);
/// assert!((touch.point - Vec3::new(12.0, 0.0, 5.0)).length() < 1e-5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeOverlap {
    /// Instance index (see [`Level::object_name`]).
    pub instance: u32,
    /// The deepest contact's point: on the object's surface and in or on
    /// the shape as posed — the object's point the shape touches when
    /// moved out by `depth`, where that lies in the shape, else the surface
    /// inside the shape farthest along `normal`; only a shape wholly
    /// inside a solid, reaching no surface, gets the surface point it
    /// leaves by (the contact rules in the README).
    pub point: Vec3,
    /// Unit normal from the object towards the query shape: the direction
    /// that separates them fastest. Over a flat region of a mesh
    /// (triangles continuing each other in one plane, marked at bake) — every
    /// corner of the shape that reaches through the plane lying over it —
    /// capsules, boxes and hulls answer with the face's normal, so a
    /// tessellated floor pushes straight up; past the region's border they
    /// answer the exact contact. For a concave solid, the way out of the
    /// solid (see the README's contact rules).
    pub normal: Vec3,
    /// Penetration depth: how far the shape must move along `normal` to
    /// clear that contact — the triangle, the flat region's plane, or the
    /// whole solid (0 when just touching).
    pub depth: f32,
    /// Feature: source triangle id for triangle meshes and concave solids
    /// (the collider's triangle); for boxes and polytopes, the face a
    /// sphere touches, and 0 for other query shapes (their deepest
    /// contact may be an edge or a corner); 0 for sphere and capsule
    /// colliders.
    pub feature: u32,
}

/// The first contact of a cast.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Pose, QueryShape, ShapeCast, Vec3};
/// // a box pushed 10 m along +x meets the wall's face at x = 16
/// let crate_box = QueryShape::Box { half: Vec3::splat(0.5) };
/// let motion = Vec3::new(10.0, 0.0, 0.0);
/// let from = Pose::at(Vec3::new(12.0, 1.0, 12.0));
/// let hit = level.cast(&ShapeCast::new(crate_box, from, motion, 1.0), &Filter::ALL).unwrap();
/// let stop = from.translation + motion * hit.t;
/// assert!((stop.x - 15.5).abs() < 1e-4 && (hit.point.x - 16.0).abs() < 1e-4);
/// assert_eq!(level.object_name(hit.instance), "wall");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit {
    /// Time of impact: the shape is at `translation + t·motion`. Zero when
    /// it starts in contact.
    pub t: f32,
    /// Contact point on the object.
    pub point: Vec3,
    /// Unit normal from the object towards the shape (for a start in
    /// contact, the separating direction).
    pub normal: Vec3,
    /// Instance index.
    pub instance: u32,
    /// Feature, as in [`ShapeOverlap::feature`].
    pub feature: u32,
}

/// How a cast treats what it starts touching.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{CastOptions, Filter, Pose, QueryShape, ShapeCast, Vec3};
/// // a ball resting against the wall: moving along it or away is free when
/// // leaving contacts are ignored; moving into it still stops at once
/// let ball = QueryShape::Sphere { radius: 0.5 };
/// let at = Pose::at(Vec3::new(15.5, 1.0, 12.0));
/// let slide = CastOptions { ignore_leaving: true };
/// let cast = |m: Vec3, o| level.cast(&ShapeCast::new(ball, at, m, 1.0).with(o), &Filter::ALL);
/// assert!(cast(Vec3::Z, slide).is_none() && cast(Vec3::NEG_X, slide).is_none());
/// assert_eq!(cast(Vec3::X, slide).map(|h| h.t), Some(0.0));
/// assert_eq!(cast(Vec3::Z, CastOptions::default()).map(|h| h.t), Some(0.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CastOptions {
    /// Skip contacts the motion does not close in on (`motion · normal ≥
    /// 0`, allowing 0.1 mm of closing over the whole motion): those present at the start that it moves away from or along,
    /// so a shape resting on a floor or against a wall can slide — and the
    /// edges inside a flat floor (a contact on a mesh's flat edges is
    /// judged by the floor's normal), so a shape sliding along a
    /// tessellated floor is not stopped where its triangles or objects
    /// meet. Contacts it moves into still answer (`t = 0` when present at
    /// the start: of those, the deepest).
    pub ignore_leaving: bool,
}

/// A shape moving through the level, what [`Level::cast`] asks as one
/// value (as Jolt's `RShapeCast` is): `shape` at `pose` moving by
/// `t · motion` for `t` in `[0, max_t]`, with `options`.
///
/// ```
/// use kiln_runtime::{CastOptions, Pose, QueryShape, ShapeCast, Vec3};
/// let ball = QueryShape::Sphere { radius: 0.5 };
/// let fall = ShapeCast::new(ball, Pose::at(Vec3::new(0.0, 5.0, 0.0)), Vec3::NEG_Y, 10.0);
/// assert_eq!(fall.options, CastOptions::default());
/// let slide = fall.with(CastOptions { ignore_leaving: true });
/// assert!(slide.options.ignore_leaving && slide.max_t == 10.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeCast<'a> {
    /// The shape.
    pub shape: QueryShape<'a>,
    /// Where it starts.
    pub pose: Pose,
    /// Its motion per unit of `t` (any length but zero).
    pub motion: Vec3,
    /// How far along `motion` it goes: `t` in `[0, max_t]`.
    pub max_t: f32,
    /// How it treats what it starts touching.
    pub options: CastOptions,
}

impl<'a> ShapeCast<'a> {
    /// `shape` at `pose` moving by `t · motion`, `t` in `[0, max_t]`, every
    /// contact kept ([`CastOptions::default`]).
    pub fn new(shape: QueryShape<'a>, pose: Pose, motion: Vec3, max_t: f32) -> ShapeCast<'a> {
        ShapeCast {
            shape,
            pose,
            motion,
            max_t,
            options: CastOptions::default(),
        }
    }

    /// The same cast with `options`.
    pub fn with(self, options: CastOptions) -> ShapeCast<'a> {
        ShapeCast { options, ..self }
    }
}

/// A query shape in world space: its core in f64 and its radius.
#[derive(Clone)]
pub(crate) struct Probe<'a> {
    pub core: Core<'a>,
    pub radius: f64,
}

/// The core of a placed query shape.
#[derive(Clone)]
pub(crate) enum Core<'a> {
    Point(Point),
    Segment(Segment),
    Box(OrientedBox),
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
        // in the hull's own frame: the most a face plane is exceeded by
        let local = self.rotation.inverse() * (x - self.translation);
        let most = self
            .hull
            .normals
            .iter()
            .zip(&self.hull.offsets)
            .map(|(n, h)| n.dot(local) - h)
            .fold(f64::NEG_INFINITY, f64::max);
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
            Core::Box($v) => $body,
            Core::Hull($v) => $body,
        }
    };
}

impl Core<'_> {
    /// The core as the closed forms of [`crate::geom::probe`] see it.
    pub fn closed(&self) -> crate::geom::probe::CoreRef<'_> {
        use crate::geom::probe::CoreRef;
        match self {
            Core::Point(p) => CoreRef::Point(p),
            Core::Segment(s) => CoreRef::Segment(s),
            Core::Box(b) => CoreRef::Box(b),
            Core::Hull(_) => CoreRef::Other,
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
            Core::Box(b) => {
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
            Core::Box(b) => Some(*b),
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

impl<'a> Probe<'a> {
    /// The shape under `pose`, or `None` for non-finite or negative input.
    pub(crate) fn new(shape: &QueryShape<'a>, pose: &Pose) -> Option<Probe<'a>> {
        if !pose.rotation.is_finite() || !pose.translation.is_finite() {
            return None;
        }
        let rot = pose.rotation.as_dquat().normalize();
        let t = pose.translation.as_dvec3();
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        Some(match *shape {
            QueryShape::Sphere { radius } if ok(radius) => Probe {
                core: Core::Point(Point(t)),
                radius: f64::from(radius),
            },
            QueryShape::Capsule {
                half_height,
                radius,
            } if ok(half_height) && ok(radius) => {
                let h = rot * DVec3::new(0.0, f64::from(half_height), 0.0);
                Probe {
                    core: Core::Segment(Segment(t - h, t + h)),
                    radius: f64::from(radius),
                }
            }
            QueryShape::Box { half } if half.is_finite() && half.min_element() >= 0.0 => Probe {
                core: Core::Box(OrientedBox {
                    center: t,
                    axes: [rot * DVec3::X, rot * DVec3::Y, rot * DVec3::Z],
                    half: half.as_dvec3(),
                }),
                radius: 0.0,
            },
            QueryShape::Hull(h) => Probe {
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
            Core::Box(b) => b.center,
            Core::Hull(h) => h.rotation * h.hull.centre + h.translation,
        }
    }

    /// The world box around the shape (centre and half extents): in
    /// closed form, or for a hull the extremes of its world points.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        let (c, h) = match &self.core {
            Core::Point(p) => (p.0, DVec3::ZERO),
            Core::Segment(s) => ((s.0 + s.1) * 0.5, (s.1 - s.0).abs() * 0.5),
            Core::Box(b) => (
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

/// The f32 box around a world box, grown by a hair for rounding.
fn cull_box(centre: DVec3, half: DVec3) -> (Vec3, Vec3) {
    let pad = half * 1e-5 + centre.abs() * 1e-6 + 1e-6;
    (
        (centre - half - pad).as_vec3(),
        (centre + half + pad).as_vec3(),
    )
}

/// A sphere's centre and radius when `shape` at `pose` is a valid
/// sphere (the pose's rotation, irrelevant to it, still finite): spheres
/// take their own closed-form path.
fn as_sphere(shape: &QueryShape, pose: &Pose) -> Option<(Vec3, f32)> {
    match *shape {
        QueryShape::Sphere { radius } if pose.rotation.is_finite() => {
            Some((pose.translation, radius))
        }
        _ => None,
    }
}

impl Level {
    /// Every object `filter` accepts that `shape` at `pose` touches, each
    /// once with its deepest contact, in the order the tree finds them.
    /// Invalid input (non-finite, negative sizes) touches nothing.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// // a 1 m box sunk 0.1 m into the floor, its side 0.2 m into the wall
    /// let crate_box = QueryShape::Box { half: Vec3::splat(0.5) };
    /// let at = Pose::at(Vec3::new(15.7, 0.4, 12.0));
    /// let mut touched = level.overlap(&crate_box, &at, &Filter::ALL);
    /// touched.sort_by(|a, b| b.depth.total_cmp(&a.depth));
    /// assert_eq!(level.object_name(touched[0].instance), "wall");
    /// assert!((touched[0].depth - 0.2).abs() < 1e-5 && touched[0].normal.abs_diff_eq(Vec3::NEG_X, 1e-6));
    /// assert_eq!(level.object_name(touched[1].instance), "floor_3");
    /// assert!((touched[1].depth - 0.1).abs() < 1e-5 && touched[1].normal.abs_diff_eq(Vec3::Y, 1e-6));
    /// ```
    pub fn overlap(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> Vec<ShapeOverlap> {
        let mut out = Vec::new();
        self.overlap_into(shape, pose, filter, &mut out);
        out
    }

    /// [`Level::overlap`] into `out`, which it clears first, so a caller
    /// can reuse one buffer and never allocate.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let mut touched = Vec::new();
    /// for y in [0.25, 0.5, 0.75] {
    ///     level.overlap_into(&ball, &Pose::at(Vec3::new(12.0, y, 5.0)), &Filter::ALL, &mut touched);
    ///     assert_eq!(touched.len(), usize::from(y <= 0.5));
    /// }
    /// ```
    pub fn overlap_into(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        if let Some((c, r)) = as_sphere(shape, pose) {
            return self.sphere_overlap_into(c, r, filter, out);
        }
        out.clear();
        // by reference: taken out of the `Option`, the probe was copied
        // (136 bytes for a box, a memcpy per query)
        if let Some(probe) = &Probe::new(shape, pose) {
            self.near_probe(probe, filter, |ii, s, place| {
                if let Some((t, feature)) = s.probe_touch(place, probe) {
                    out.push(overlap(ii, t, feature));
                }
                false
            });
        }
    }

    /// Whether `shape` at `pose` touches any object `filter` accepts
    /// (stops at the first contact).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// // a standing capsule 1.8 m tall: 1 cm into the floor it touches, 1 cm above it does not
    /// let (body, _) = QueryShape::capsule(Vec3::new(0.0, 0.3, 0.0), Vec3::new(0.0, 1.5, 0.0), 0.3);
    /// assert!(level.intersects(&body, &Pose::at(Vec3::new(12.0, 0.89, 5.0)), &Filter::ALL));
    /// assert!(!level.intersects(&body, &Pose::at(Vec3::new(12.0, 0.91, 5.0)), &Filter::ALL));
    /// ```
    pub fn intersects(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool {
        if let Some((c, r)) = as_sphere(shape, pose) {
            return self.sphere_intersects(c, r, filter);
        }
        // by reference, as in `overlap_into`
        let Some(probe) = &Probe::new(shape, pose) else {
            return false;
        };
        let mut found = false;
        self.near_probe(probe, filter, |_, s, place| {
            found = s.probe_touches(place, probe);
            found
        });
        found
    }

    /// Calls `visit` with every object `filter` accepts whose box meets
    /// the probe's, until it answers `true`: the walk overlaps and yes/no
    /// tests share.
    fn near_probe(
        &self,
        probe: &Probe,
        filter: &Filter,
        visit: impl FnMut(u32, ShapeRef, &Placement) -> bool,
    ) {
        let (c, h) = probe.bounds();
        let (lo, hi) = cull_box(c, h);
        self.near(lo, hi, filter, visit);
    }

    /// The first contact of the cast's shape moving from its pose by
    /// `t · motion`, `t` in `[0, max_t]` ([`ShapeCast`]), with the objects
    /// `filter` accepts; no tunnelling at any speed. A shape that starts in contact answers
    /// `t = 0` with the separating normal (see
    /// [`CastOptions::ignore_leaving`] for sliding along what it
    /// touches).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{CastOptions, Filter, Pose, QueryShape, ShapeCast, Vec3};
    /// // a 0.5 m ball rolled along +x at z = 10 meets the wall at x = 16
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let from = Pose::at(Vec3::new(12.0, 1.0, 10.0));
    /// let hit = level.cast(&ShapeCast::new(ball, from, Vec3::X, 10.0), &Filter::ALL).unwrap();
    /// assert!((hit.t - 3.5).abs() < 1e-5 && hit.normal.abs_diff_eq(Vec3::NEG_X, 1e-6));
    /// // resting on the floor, a box slides along it when it ignores what it leaves
    /// let crate_box = QueryShape::Box { half: Vec3::splat(0.5) };
    /// let on_floor = Pose::at(Vec3::new(12.0, 0.5, 5.0));
    /// let slide = CastOptions { ignore_leaving: true };
    /// let along = ShapeCast::new(crate_box, on_floor, Vec3::Z, 3.0);
    /// assert!(level.cast(&along.with(slide), &Filter::ALL).is_none());
    /// let stuck = level.cast(&along, &Filter::ALL);
    /// assert_eq!(stuck.map(|h| h.t), Some(0.0));
    /// ```
    pub fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit> {
        let ShapeCast {
            ref shape,
            ref pose,
            motion,
            max_t,
            options,
        } = *cast;
        if !options.ignore_leaving
            && let Some((c, r)) = as_sphere(shape, pose)
        {
            return self.sphere_cast(c, r, motion, max_t, filter);
        }
        let probe = Probe::new(shape, pose)?;
        if !motion.is_finite() || motion == Vec3::ZERO || max_t.is_nan() || max_t < 0.0 {
            return None;
        }
        let level = self.archive();
        let (c, h) = probe.bounds();
        let mut v = CastTop {
            level,
            filter,
            probe,
            motion: motion.as_dvec3(),
            whole: motion.as_dvec3() * f64::from(max_t),
            options,
            t_cull: max_t,
            limit: f64::from(max_t),
            best: None,
        };
        let grow = Grow::by_extent((h * (1.0 + 1e-5) + 1e-6).as_vec3());
        walk_ray(
            &top_tree(level),
            &SlabRay::new(c.as_vec3(), motion),
            &grow,
            &mut v,
        );
        v.best.map(|(t, hit, ii, feature)| ShapeHit {
            t: t as f32,
            point: hit.point.as_vec3(),
            normal: hit.normal.as_vec3(),
            instance: ii,
            feature,
        })
    }

    /// [`Level::overlap`] for many shapes on the rayon pool: `out[i]`
    /// answers `queries[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let queries: Vec<_> = (0..8).map(|i| (ball, Pose::at(Vec3::new(12.0, 0.05 + 0.1 * i as f32, 5.0)))).collect();
    /// let mut out = vec![Vec::new(); queries.len()];
    /// level.overlap_batch(&queries, &Filter::ALL, &mut out);
    /// // centres at y = 0.05 to 0.45 touch the floor, 0.55 and up do not
    /// assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 1, 1, 1, 0, 0, 0]);
    /// ```
    pub fn overlap_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [Vec<ShapeOverlap>],
    ) {
        super::batch(queries, out, 32, |(s, p), o| {
            self.overlap_into(s, p, filter, o)
        });
    }

    /// [`Level::intersects`] for many shapes on the rayon pool: `out[i]`
    /// answers `queries[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let crate_box = QueryShape::Box { half: Vec3::splat(0.5) };
    /// let queries = [0.4, 0.6].map(|y| (crate_box, Pose::at(Vec3::new(12.0, y, 5.0))));
    /// let mut out = [false; 2];
    /// level.intersects_batch(&queries, &Filter::ALL, &mut out);
    /// assert_eq!(out, [true, false]);
    /// ```
    pub fn intersects_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [bool],
    ) {
        super::batch(queries, out, 32, |(s, p), o| {
            *o = self.intersects(s, p, filter)
        });
    }

    /// [`Level::cast`] for many casts on the rayon pool: `out[i]` answers
    /// `casts[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, ShapeCast, Vec3};
    /// // balls dropped from 5 m: onto the floor, and onto the 3 m wall's top
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let casts = [12.0, 16.25].map(|x| ShapeCast::new(ball, Pose::at(Vec3::new(x, 5.0, 10.0)), Vec3::NEG_Y, 10.0));
    /// let mut out = [None; 2];
    /// level.cast_batch(&casts, &Filter::ALL, &mut out);
    /// assert!((out[0].unwrap().t - 4.5).abs() < 1e-5 && (out[1].unwrap().t - 1.5).abs() < 1e-5);
    /// ```
    pub fn cast_batch(&self, casts: &[ShapeCast], filter: &Filter, out: &mut [Option<ShapeHit>]) {
        super::batch(casts, out, 32, |c, o| *o = self.cast(c, filter));
    }
}

fn overlap(ii: u32, t: Touch, feature: u32) -> ShapeOverlap {
    ShapeOverlap {
        instance: ii,
        point: t.point.as_vec3(),
        normal: t.normal.as_vec3(),
        depth: t.depth as f32,
        feature,
    }
}

/// Cast visitor over the top-level tree: `t_cull` (f32) culls boxes,
/// `limit` is the exact time of the best contact so far.
struct CastTop<'a> {
    level: &'a ArchivedLevel,
    filter: &'a Filter<'a>,
    probe: Probe<'a>,
    motion: DVec3,
    /// The whole motion, `motion · max_t`, that leaving is judged by.
    whole: DVec3,
    options: CastOptions,
    t_cull: f32,
    limit: f64,
    best: Option<(f64, Touch, u32, u32)>,
}

impl RayVisitor for CastTop<'_> {
    fn t_max(&self) -> f32 {
        self.t_cull
    }

    fn leaf(&mut self, data: u32) -> bool {
        let ii = data;
        if !self.filter.sees(self.level, ii) {
            return false;
        }
        let (s, place) = super::placed(self.level, ii);
        if let Some((t, hit, feature)) = s.probe_cast(
            &place,
            &self.probe,
            self.motion,
            self.limit,
            self.options.ignore_leaving.then_some(self.whole),
        ) && self.best.as_ref().is_none_or(|(bt, bh, _, _)| {
            // the first contact; of those at the start, the deepest (as an
            // overlap answers), so an edge merely touched at the start
            // does not stand for a face the shape is pressed into
            t < *bt || (t == 0.0 && *bt == 0.0 && hit.depth > bh.depth)
        }) {
            self.limit = t;
            self.t_cull = crate::shape::tri_mesh::next_up(t as f32);
            self.best = Some((t, hit, ii, feature));
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::epa;
    use crate::geom::gjk::{Gap, Moved, Triangle, distance, search_enclosing};
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
        Probe::new(&QueryShape::Hull(h), &pose)
            .expect("a valid pose")
            .core
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
