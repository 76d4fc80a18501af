//! A level that moves: a baked [`Level`] (shared, mapped) and a dynamic
//! set of bodies beside it — spheres, capsules, boxes and hulls, and copies
//! of baked props — each with a rigid pose and collision layers, under
//! stable ids. Every question a `Level` answers, a [`World`] answers over
//! the level and its bodies together, with the same names, result types
//! and exactness: the level-wide operations of `crate::query` are written
//! once over a scope of both.
//!
//! # Threads
//!
//! Queries take `&World`, moves take `&mut World`: between two moves any
//! number of threads may query one world (it is `Sync`), and the owner
//! applies the frame's moves alone at a sync point, as the borrow checker
//! already insists. No lock is taken on the query path. [`World::step`]
//! is that sync point's housekeeping.

use crate::dynamic::Bodies;
use crate::dynamic::body::{BodyCollider, WorldError};
use crate::filter::Filter;
use crate::level::Level;
use crate::object::ObjectId;
use crate::query::{Ray, RayHit, Scope, ShapeCast, ShapeHit, ShapeOverlap, batch, batch_chunks};
use crate::shape::{Pose, QueryShape};
use glam::Vec3;
use std::sync::Arc;

/// A body to add to a [`World`]: its collider, where it starts, its
/// collision layers (a mask over the level's layer names; the level's
/// default layer unless set) and a name (empty unless set).
///
/// ```
/// use kiln_runtime::{Body, Pose, QueryShape, Vec3};
/// let ball = Body::shape(QueryShape::Sphere { radius: 0.3 }, Pose::at(Vec3::Y))
///     .layers(0b10)
///     .named("ball");
/// assert_eq!((ball.layers, ball.name), (0b10, "ball"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Body<'a> {
    /// What it is made of.
    pub collider: BodyCollider<'a>,
    /// Where it starts.
    pub pose: Pose,
    /// Its collision layers.
    pub layers: u32,
    /// Its name ([`World::object_name`]).
    pub name: &'a str,
}

impl<'a> Body<'a> {
    /// A body of a query shape (sphere, capsule, box or hull) at `pose`.
    pub fn shape(shape: QueryShape<'a>, pose: Pose) -> Body<'a> {
        Body {
            collider: BodyCollider::Shape(shape),
            pose,
            layers: 1,
            name: "",
        }
    }

    /// A copy of `object` of the archive `from` (a prefab), whose origin
    /// is put at `pose`; named as the object is.
    pub fn copy(from: &'a Arc<Level>, object: ObjectId, pose: Pose) -> Body<'a> {
        Body {
            collider: BodyCollider::Copy { from, object },
            pose,
            layers: 1,
            name: "",
        }
    }

    /// The same body in the layers of `mask`.
    pub fn layers(self, mask: u32) -> Body<'a> {
        Body {
            layers: mask,
            ..self
        }
    }

    /// The same body named `name`.
    pub fn named(self, name: &'a str) -> Body<'a> {
        Body { name, ..self }
    }
}

/// A baked level and the bodies that move beside it, answering every
/// query a [`Level`] answers over both (see the module's docs for the
/// threading model).
///
/// ```
/// # let baked = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap();
/// use kiln_runtime::{Body, Filter, Level, Pose, QueryShape, Ray, Vec3, World};
/// let level = Level::from_bytes(&baked.bytes)?;
/// let mut world = World::new(level);
/// // a crate dropped on the floor, in front of the wall
/// let crate_box = QueryShape::Box { half: Vec3::splat(0.5) };
/// let id = world.insert(Body::shape(crate_box, Pose::at(Vec3::new(12.0, 0.5, 10.0))).named("crate"))?;
/// let ray = Ray::new(Vec3::new(10.0, 0.5, 10.0), Vec3::X, 100.0);
/// let hit = world.raycast(&ray, &Filter::ALL).unwrap();
/// assert_eq!((hit.object, world.object_name(hit.object).as_ref()), (id, "crate"));
/// assert!((hit.t - 1.5).abs() < 1e-5);
/// // pushed aside, the ray goes on to the wall
/// world.set_pose(id, Pose::at(Vec3::new(12.0, 0.5, 14.0)))?;
/// let hit = world.raycast(&ray, &Filter::ALL).unwrap();
/// assert_eq!(world.object_name(hit.object), "wall");
/// world.remove(id)?;
/// assert!(world.set_pose(id, Pose::IDENTITY).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct World {
    level: Arc<Level>,
    bodies: Bodies,
}

impl World {
    /// A world of `level` and no bodies yet.
    pub fn new(level: impl Into<Arc<Level>>) -> World {
        World {
            level: level.into(),
            bodies: Bodies::default(),
        }
    }

    /// The level.
    pub fn level(&self) -> &Arc<Level> {
        &self.level
    }

    /// Replaces the level (a hot reload): the bodies stay as they are.
    pub fn set_level(&mut self, level: impl Into<Arc<Level>>) {
        self.level = level.into();
    }

    #[inline]
    fn scope(&self) -> Scope<'_> {
        Scope {
            level: &self.level,
            bodies: Some(&self.bodies),
        }
    }

    /// Adds a body and returns its id, which names it in every answer
    /// until it is removed (a removed body's id never names another).
    ///
    /// # Errors
    /// A pose that is not finite or has a zero rotation; a shape that is
    /// no valid collider (a non-positive or non-finite size, a hull of
    /// more than 256 faces); a copy of an object its level does not have.
    pub fn insert(&mut self, body: Body) -> Result<ObjectId, WorldError> {
        self.bodies
            .insert(&body.collider, body.pose, body.layers, body.name.to_owned())
    }

    /// Moves body `id` to `pose` (a teleport: nothing is swept on the way).
    ///
    /// # Errors
    /// An id no body of this world has ([`WorldError::Static`] for the
    /// level's own objects), or a bad pose.
    pub fn set_pose(&mut self, id: ObjectId, pose: Pose) -> Result<(), WorldError> {
        if id
            .level_index()
            .is_some_and(|i| i < self.level.object_count())
        {
            return Err(WorldError::Static(id));
        }
        self.bodies.set_pose(id, pose)
    }

    /// Takes body `id` out of the world.
    ///
    /// # Errors
    /// An id no body of this world has.
    pub fn remove(&mut self, id: ObjectId) -> Result<(), WorldError> {
        if id
            .level_index()
            .is_some_and(|i| i < self.level.object_count())
        {
            return Err(WorldError::Static(id));
        }
        self.bodies.remove(id).map(|_| ())
    }

    /// The housekeeping of a sync point, once per frame after the moves:
    /// re-inserts a few of the dynamic tree's leaves so it stays near the
    /// quality of a fresh build under endless motion (a hundredth of the
    /// bodies, at least 8).
    pub fn step(&mut self) {
        let budget = (self.bodies.len() / 100).max(8);
        self.bodies.optimize(budget);
    }

    /// Where body `id` is (`None` if it is not one of this world's bodies).
    pub fn pose(&self, id: ObjectId) -> Option<Pose> {
        self.bodies.get(id).map(|b| b.pose)
    }

    /// How many bodies the world holds.
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }

    /// Every body's id.
    pub fn bodies(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.bodies.iter().map(|b| b.id)
    }

    /// The name of a level's object or a body (empty if neither).
    pub fn object_name(&self, id: ObjectId) -> std::borrow::Cow<'_, str> {
        match self.bodies.get(id) {
            Some(b) => b.name.as_str().into(),
            None => self.level.object_name(id),
        }
    }

    /// The layers of a level's object or a body (0 if neither).
    pub fn object_layers(&self, id: ObjectId) -> u32 {
        match self.bodies.get(id) {
            Some(b) => b.layers,
            None => self.level.object_layers(id),
        }
    }

    /// The level's first object called `name`, else the first body so
    /// named (in slot order).
    pub fn find_object(&self, name: &str) -> Option<ObjectId> {
        self.level
            .find_object(name)
            .or_else(|| self.bodies.iter().find(|b| b.name == name).map(|b| b.id))
    }

    /// The dynamic tree's surface-area cost (see
    /// [`crate::DynamicTree::sah_cost`]), to watch its quality.
    pub fn tree_cost(&self) -> f64 {
        self.bodies.tree().sah_cost()
    }
}

/// The questions, each as [`Level`] asks it, over the level and the bodies.
impl World {
    /// [`Level::raycast`] over the level and the bodies.
    pub fn raycast(&self, ray: &Ray, filter: &Filter) -> Option<RayHit> {
        self.scope().raycast(ray, filter)
    }

    /// [`Level::raycast_any`] over the level and the bodies.
    pub fn raycast_any(&self, ray: &Ray, filter: &Filter) -> bool {
        self.scope().raycast_any(ray, filter)
    }

    /// [`Level::raycast_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]) {
        batch_chunks(rays, out, 256, |r, o| {
            r.iter()
                .zip(o)
                .for_each(|(r, o)| *o = self.raycast(r, filter))
        });
    }

    /// [`Level::raycast_any_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_any_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]) {
        batch(rays, out, 256, |r, o| *o = self.raycast_any(r, filter));
    }

    /// [`Level::overlap`] over the level and the bodies (the level's
    /// objects first).
    pub fn overlap(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> Vec<ShapeOverlap> {
        let mut out = Vec::new();
        self.overlap_into(shape, pose, filter, &mut out);
        out
    }

    /// [`Level::overlap_into`] over the level and the bodies.
    pub fn overlap_into(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        self.scope().overlap_into(shape, pose, filter, out)
    }

    /// [`Level::overlap_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn overlap_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [Vec<ShapeOverlap>],
    ) {
        batch(queries, out, 32, |(s, p), o| {
            self.overlap_into(s, p, filter, o)
        });
    }

    /// [`Level::intersects`] over the level and the bodies.
    pub fn intersects(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool {
        self.scope().intersects(shape, pose, filter)
    }

    /// [`Level::intersects_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn intersects_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [bool],
    ) {
        batch(queries, out, 32, |(s, p), o| {
            *o = self.intersects(s, p, filter)
        });
    }

    /// [`Level::cast`] over the level and the bodies.
    pub fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit> {
        self.scope().cast(cast, filter)
    }

    /// [`Level::cast_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn cast_batch(&self, casts: &[ShapeCast], filter: &Filter, out: &mut [Option<ShapeHit>]) {
        batch(casts, out, 32, |c, o| *o = self.cast(c, filter));
    }

    /// [`Level::contains_point`] over the level and the bodies.
    pub fn contains_point(&self, p: Vec3, filter: &Filter) -> Vec<ObjectId> {
        let mut out = Vec::new();
        self.contains_point_into(p, filter, &mut out);
        out
    }

    /// [`Level::contains_point_into`] over the level and the bodies.
    pub fn contains_point_into(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>) {
        self.scope().contains_point_into(p, filter, out)
    }

    /// [`Level::contains_point_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn contains_point_batch(
        &self,
        points: &[Vec3],
        filter: &Filter,
        out: &mut [Vec<ObjectId>],
    ) {
        batch(points, out, 256, |p, o| {
            self.contains_point_into(*p, filter, o)
        });
    }

    /// [`Level::point_in_solid`] over the level and the bodies.
    pub fn point_in_solid(&self, p: Vec3, filter: &Filter) -> bool {
        self.scope().point_in_solid(p, filter)
    }

    /// [`Level::point_in_solid_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn point_in_solid_batch(&self, points: &[Vec3], filter: &Filter, out: &mut [bool]) {
        batch(points, out, 256, |p, o| {
            *o = self.point_in_solid(*p, filter)
        });
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("level", &self.level)
            .field("bodies", &self.bodies.len())
            .finish()
    }
}
