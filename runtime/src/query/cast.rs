//! Casts: where a query shape moving along a straight line first touches
//! the level ([`Level::cast`]), by conservative advancement on the exact
//! distance to each collider the top-level tree finds along the way.

use super::Scope;
use super::overlap::as_sphere;
use crate::collider::{At, ColliderRef, ObjectVisitor};
use crate::filter::Filter;
use crate::geom::convex_contact::Touch;
use crate::geom::ray_box::SlabRay;
use crate::level::Level;
use crate::object::ObjectId;
use crate::shape::{Pose, Posed, QueryShape};
use crate::walk::Grow;
use glam::{DVec3, Vec3};

/// The first contact of a cast.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Pose, QueryShape, ShapeCast, Vec3};
/// // a box pushed 10 m along +x meets the wall's face at x = 16
/// let crate_box = QueryShape::Cuboid { half: Vec3::splat(0.5) };
/// let motion = Vec3::new(10.0, 0.0, 0.0);
/// let from = Pose::at(Vec3::new(12.0, 1.0, 12.0));
/// let hit = level.cast(&ShapeCast::new(crate_box, from, motion, 1.0), &Filter::ALL).unwrap();
/// let stop = from.translation + motion * hit.t;
/// assert!((stop.x - 15.5).abs() < 1e-4 && (hit.point.x - 16.0).abs() < 1e-4);
/// assert_eq!(level.object_name(hit.object).as_deref(), Some("wall"));
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
    /// The object hit (see [`Level::object_name`]).
    pub object: ObjectId,
    /// Feature, as in [`ShapeOverlap::feature`](super::ShapeOverlap::feature).
    pub feature: Option<u32>,
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

    /// True when the cast can be made: a motion that
    /// [`is_direction`](crate::is_direction) (a zero motion is refused, as
    /// a zero ray direction is: ask [`Level::overlap`] what touches a
    /// shape standing still) and `max_t >= 0` (NaN is not). Every query
    /// answers an invalid cast with no hit (the C API and `baker query`
    /// refuse it with an error); the shape and pose are checked as every
    /// shape query checks them.
    ///
    /// ```
    /// use kiln_runtime::{Pose, QueryShape, ShapeCast, Vec3};
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// assert!(ShapeCast::new(ball, Pose::IDENTITY, Vec3::NEG_Y, 1.0).is_valid());
    /// assert!(!ShapeCast::new(ball, Pose::IDENTITY, Vec3::ZERO, 1.0).is_valid());
    /// assert!(!ShapeCast::new(ball, Pose::IDENTITY, Vec3::NEG_Y, f32::NAN).is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        crate::is_direction(self.motion) && self.max_t >= 0.0
    }
}

impl Level {
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
    /// let crate_box = QueryShape::Cuboid { half: Vec3::splat(0.5) };
    /// let on_floor = Pose::at(Vec3::new(12.0, 0.5, 5.0));
    /// let slide = CastOptions { ignore_leaving: true };
    /// let along = ShapeCast::new(crate_box, on_floor, Vec3::Z, 3.0);
    /// assert!(level.cast(&along.with(slide), &Filter::ALL).is_none());
    /// let stuck = level.cast(&along, &Filter::ALL);
    /// assert_eq!(stuck.map(|h| h.t), Some(0.0));
    /// ```
    pub fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit> {
        Scope::of(self).cast(cast, filter)
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

impl Scope<'_> {
    /// [`Level::cast`] over the scope.
    #[inline]
    pub(crate) fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit> {
        self.cast_ranked(cast, filter).map(|(hit, _)| hit)
    }

    /// [`Scope::cast`], with what ranks the hit against another scope's
    /// ([`Ranked::beats`]): its exact time, and its depth when it is a
    /// contact at the start.
    pub(crate) fn cast_ranked(
        &self,
        cast: &ShapeCast,
        filter: &Filter,
    ) -> Option<(ShapeHit, Ranked)> {
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
            // a sphere's first contact is the first the walk finds, the
            // deepest at the start or not
            return self.sphere_cast(c, r, motion, max_t, filter).map(|hit| {
                let t = f64::from(hit.t);
                (hit, Ranked { t, depth: None })
            });
        }
        let posed = Posed::new(shape, pose)?;
        if !cast.is_valid() {
            return None;
        }
        let (c, h) = posed.bounds();
        let mut v = CastTop {
            posed,
            motion: motion.as_dvec3(),
            whole: motion.as_dvec3() * f64::from(max_t),
            options,
            t_cull: max_t,
            limit: f64::from(max_t),
            best: None,
        };
        let grow = Grow::by_extent((h * (1.0 + 1e-5) + 1e-6).as_vec3());
        self.walk_ray(&SlabRay::new(c.as_vec3(), motion), &grow, filter, &mut v);
        v.best.map(|(t, hit, object, feature)| {
            let shape_hit = ShapeHit {
                t: t as f32,
                point: hit.point.as_vec3(),
                normal: hit.normal.as_vec3(),
                object,
                feature,
            };
            (
                shape_hit,
                Ranked {
                    t,
                    depth: Some(hit.depth),
                },
            )
        })
    }
}

/// What ranks one scope's cast hit against another's: the first contact
/// wins; of two at the start, the deeper (as within one scope,
/// [`CastTop`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ranked {
    /// The exact time of contact.
    pub t: f64,
    /// The depth of a contact (none for a sphere's sweep, whose first
    /// contact found stands).
    pub depth: Option<f64>,
}

impl Ranked {
    /// Whether this hit is to be taken over `other`, found before it.
    pub(crate) fn beats(&self, other: &Ranked) -> bool {
        self.t < other.t
            || (self.t == 0.0
                && other.t == 0.0
                && matches!((self.depth, other.depth), (Some(a), Some(b)) if a > b))
    }
}

/// Cast visitor over the scope's objects: `t_cull` (f32) culls boxes,
/// `limit` is the exact time of the best contact so far.
struct CastTop<'a> {
    posed: Posed<'a>,
    motion: DVec3,
    /// The whole motion, `motion · max_t`, that leaving is judged by.
    whole: DVec3,
    options: CastOptions,
    t_cull: f32,
    limit: f64,
    best: Option<(f64, Touch, ObjectId, Option<u32>)>,
}

impl ObjectVisitor for CastTop<'_> {
    fn t_max(&self) -> f32 {
        self.t_cull
    }

    fn object(&mut self, id: ObjectId, s: ColliderRef<'_>, at: At<'_>) -> bool {
        if let Some((t, hit, feature)) = s.shape_cast(
            at,
            &self.posed,
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
            self.t_cull = crate::collider::tri_mesh::next_up(t as f32);
            self.best = Some((t, hit, id, feature));
        }
        false
    }
}
