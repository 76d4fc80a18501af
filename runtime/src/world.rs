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

mod tiles;

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
    /// Whether it is a trigger volume, which queries see only when they
    /// ask ([`Filter::triggers`]).
    pub trigger: bool,
}

impl<'a> Body<'a> {
    /// A body of a query shape (sphere, capsule, box or hull) at `pose`.
    pub fn shape(shape: QueryShape<'a>, pose: Pose) -> Body<'a> {
        Body {
            collider: BodyCollider::Shape(shape),
            pose,
            layers: 1,
            name: "",
            trigger: false,
        }
    }

    /// A copy of `object` of the archive `from` (a prefab), whose origin
    /// is put at `pose`; named as the object is, unless [`Body::named`]
    /// names it.
    pub fn copy(from: &'a Arc<Level>, object: ObjectId, pose: Pose) -> Body<'a> {
        Body {
            collider: BodyCollider::Copy { from, object },
            pose,
            layers: 1,
            name: "",
            trigger: false,
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

    /// The same body as a trigger volume.
    pub fn trigger(self) -> Body<'a> {
        Body {
            trigger: true,
            ..self
        }
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
/// let crate_box = QueryShape::Cuboid { half: Vec3::splat(0.5) };
/// let id = world.insert(Body::shape(crate_box, Pose::at(Vec3::new(12.0, 0.5, 10.0))).named("crate"))?;
/// let ray = Ray::new(Vec3::new(10.0, 0.5, 10.0), Vec3::X, 100.0);
/// let hit = world.raycast(&ray, &Filter::ALL).unwrap();
/// assert_eq!((hit.object, world.object_name(hit.object).as_deref()), (id, Some("crate")));
/// assert!((hit.t - 1.5).abs() < 1e-5);
/// // pushed aside, the ray goes on to the wall
/// world.set_pose(id, Pose::at(Vec3::new(12.0, 0.5, 14.0)))?;
/// let hit = world.raycast(&ray, &Filter::ALL).unwrap();
/// assert_eq!(world.object_name(hit.object).as_deref(), Some("wall"));
/// world.remove(id)?;
/// assert!(world.set_pose(id, Pose::IDENTITY).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct World {
    level: Arc<Level>,
    bodies: Bodies,
    /// (trigger, body) pairs in contact at the last step.
    inside: Vec<(ObjectId, ObjectId)>,
    /// What changed at the last step.
    events: Vec<TriggerEvent>,
    /// The tiles mounted beside the level, and the world's origin.
    tiles: tiles::Tiles,
}

/// A body that entered or left a trigger volume between two steps
/// ([`World::trigger_events`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerEvent {
    /// The trigger volume.
    pub trigger: ObjectId,
    /// The body (a body the game inserted, or one of the level's movers).
    pub body: ObjectId,
    /// Whether it entered (else it left, or was removed).
    pub entered: bool,
}

impl World {
    /// A world of `level`: its static objects, and its movers and
    /// triggers placed where they were baked.
    pub fn new(level: impl Into<Arc<Level>>) -> World {
        let level = level.into();
        let mut world = World {
            tiles: tiles::Tiles::new(&level),
            level,
            bodies: Bodies::default(),
            inside: Vec::new(),
            events: Vec::new(),
        };
        world.place_level(&std::collections::HashMap::new());
        world
    }

    /// Adds the level's movers and triggers, each at the pose `poses`
    /// gives its name, else where it was baked.
    fn place_level(&mut self, poses: &std::collections::HashMap<String, Pose>) {
        let level = self.level.clone();
        for object in level.movers_and_triggers() {
            let pose = level
                .object_name(object)
                .and_then(|n| poses.get(n.as_ref()).copied());
            // a verified archive's object: nothing to refuse
            let placed = self.bodies.insert_level(&level, object, pose);
            debug_assert!(placed.is_ok(), "{placed:?}");
        }
    }

    /// The level.
    pub fn level(&self) -> &Arc<Level> {
        &self.level
    }

    /// Replaces the level (a hot reload): the bodies the game inserted
    /// stay as they are, and the new level's movers and triggers take the
    /// poses the old level's had under the same names (new ones start
    /// where they were baked).
    pub fn set_level(&mut self, level: impl Into<Arc<Level>>) {
        let old = self.level.clone();
        let mut poses = std::collections::HashMap::new();
        for object in old.movers_and_triggers() {
            if let (Some(p), Some(name)) = (self.pose(object), old.object_name(object)) {
                poses.insert(name.into_owned(), p);
            }
            let _ = self.bodies.remove(object);
        }
        self.level = level.into();
        self.place_level(&poses);
        self.relayer();
    }

    /// The world's own level and bodies, unless both are empty (a world
    /// of tiles alone skips them).
    #[inline]
    fn own_scope(&self) -> Option<Scope<'_>> {
        (self.level.object_count() > 0 || self.bodies.len() > 0).then(|| self.scope())
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
        // a copy not named otherwise is named as the object it copies
        let name = match body.collider {
            BodyCollider::Copy { from, object } if body.name.is_empty() => {
                from.object_name(object).unwrap_or_default().into_owned()
            }
            _ => body.name.to_owned(),
        };
        self.bodies
            .insert(&body.collider, body.pose, body.layers, name, body.trigger)
    }

    /// Moves body or mover `id` to `pose` (a teleport: nothing is swept
    /// on the way). A mover's pose is its baked placement's rotation and
    /// translation ([`World::pose`] gives it before the first move), so a
    /// door turns about its own origin.
    ///
    /// # Errors
    /// The level's static objects ([`WorldError::Static`]), an id no body
    /// of this world has, or a bad pose.
    pub fn set_pose(&mut self, id: ObjectId, pose: Pose) -> Result<(), WorldError> {
        if self.is_static(id) {
            return Err(WorldError::Static(id));
        }
        self.bodies.set_pose(id, pose)
    }

    /// Takes body `id` out of the world (the level's own objects, movers
    /// included, stay).
    ///
    /// # Errors
    /// An id no body of this world has, or one of the level's objects.
    pub fn remove(&mut self, id: ObjectId) -> Result<(), WorldError> {
        if self.is_level_object(id) {
            return Err(WorldError::Static(id));
        }
        self.bodies.remove(id).map(|_| ())
    }

    /// Whether `id` names something in the world: one of its level's or a
    /// mounted tile's objects, or a body.
    pub fn has_object(&self, id: ObjectId) -> bool {
        self.is_level_object(id) || self.bodies.get(id).is_some()
    }

    /// Whether `id` is one of the level's or a mounted tile's objects.
    fn is_level_object(&self, id: ObjectId) -> bool {
        if id.tile().is_some() {
            self.tile_object(id).is_some()
        } else {
            !id.is_body() && id.index() < self.level.object_count()
        }
    }

    /// Whether `id` is one of the level's (or a tile's) objects that never
    /// move.
    fn is_static(&self, id: ObjectId) -> bool {
        self.is_level_object(id) && self.bodies.get(id).is_none()
    }

    /// The housekeeping of a sync point, once per frame after the moves:
    /// records how each body moved since the last step
    /// ([`World::frame_motion`]), finds which bodies entered and left each
    /// trigger volume since the last step ([`World::trigger_events`]), and
    /// re-inserts a few of the
    /// dynamic tree's leaves so it stays near the quality of a fresh build
    /// under endless motion (a hundredth of the bodies, at least 8), or
    /// rebuilds the tree when more than half the bodies were inserted or
    /// jumped since the last step (a bulk load).
    ///
    /// A character (or any query shape) that should set off triggers is
    /// a body: insert its shape, `set_pose` it every frame, and skip it
    /// in its own queries (`Filter::skip`).
    ///
    /// A body is in a trigger when it touches the trigger's collider:
    /// exactly for bodies made of spheres, capsules, boxes and hulls and
    /// for copies of baked primitives and polytopes; a copy of a triangle
    /// mesh or concave solid counts by the hull of its box's corners.
    pub fn step(&mut self) {
        self.bodies.close_frame();
        let budget = (self.bodies.len() / 100).max(8);
        self.bodies.optimize(budget);
        let mut now = Vec::with_capacity(self.inside.len());
        self.bodies.trigger_pairs(&mut now);
        self.events.clear();
        let (mut i, mut j) = (0, 0);
        while i < self.inside.len() || j < now.len() {
            let (old, new) = (self.inside.get(i), now.get(j));
            let event = match (old, new) {
                (Some(a), Some(b)) if a == b => {
                    i += 1;
                    j += 1;
                    continue;
                }
                (Some(a), Some(b)) if a < b => {
                    i += 1;
                    (*a, false)
                }
                (Some(a), None) => {
                    i += 1;
                    (*a, false)
                }
                (_, Some(b)) => {
                    j += 1;
                    (*b, true)
                }
                (None, None) => break,
            };
            self.events.push(TriggerEvent {
                trigger: event.0.0,
                body: event.0.1,
                entered: event.1,
            });
        }
        self.inside = now;
    }

    /// The bodies that entered and left each trigger volume at the last
    /// [`World::step`], by trigger, then body.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Body, Pose, QueryShape, TriggerEvent, Vec3, World};
    /// let mut world = World::new(level);
    /// let zone = world.insert(Body::shape(QueryShape::Cuboid { half: Vec3::splat(1.0) }, Pose::at(Vec3::new(5.0, 1.0, 5.0))).trigger())?;
    /// let ball = world.insert(Body::shape(QueryShape::Sphere { radius: 0.25 }, Pose::at(Vec3::new(8.0, 1.0, 5.0))))?;
    /// world.step();
    /// assert!(world.trigger_events().is_empty());
    /// world.set_pose(ball, Pose::at(Vec3::new(6.1, 1.0, 5.0)))?; // 0.15 m into the zone
    /// world.step();
    /// assert_eq!(world.trigger_events(), [TriggerEvent { trigger: zone, body: ball, entered: true }]);
    /// world.remove(ball)?;
    /// world.step();
    /// assert_eq!(world.trigger_events(), [TriggerEvent { trigger: zone, body: ball, entered: false }]);
    /// # Ok::<(), kiln_runtime::WorldError>(())
    /// ```
    pub fn trigger_events(&self) -> &[TriggerEvent] {
        &self.events
    }

    /// How body or mover `id` moved in the last frame: its pose at the
    /// step before the last and at the last ([`World::step`]); `None` if
    /// it did not move between them. A character standing on it is carried
    /// by `after ∘ before⁻¹` ([`crate::character::Character::ride`]).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Body, Pose, QueryShape, Vec3, World};
    /// let mut world = World::new(level);
    /// let raft = world.insert(Body::shape(QueryShape::Cuboid { half: Vec3::ONE }, Pose::at(Vec3::ZERO)))?;
    /// world.step();
    /// world.set_pose(raft, Pose::at(Vec3::X))?;
    /// world.step();
    /// assert_eq!(world.frame_motion(raft), Some((Pose::at(Vec3::ZERO), Pose::at(Vec3::X))));
    /// world.step(); // a frame without a move
    /// assert_eq!(world.frame_motion(raft), None);
    /// # Ok::<(), kiln_runtime::WorldError>(())
    /// ```
    pub fn frame_motion(&self, id: ObjectId) -> Option<(Pose, Pose)> {
        self.bodies.get(id).and_then(|b| b.moved)
    }

    /// Every (trigger, body) pair in contact at the last [`World::step`],
    /// sorted: what the trigger events so far add up to.
    pub fn trigger_contacts(&self) -> &[(ObjectId, ObjectId)] {
        &self.inside
    }

    /// Where body or mover `id` is (`None` for a static object or an id
    /// not in the world).
    pub fn pose(&self, id: ObjectId) -> Option<Pose> {
        self.bodies.get(id).map(|b| b.pose)
    }

    /// How many bodies the world holds, the level's movers and triggers
    /// included.
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }

    /// Every body's id, the level's movers and triggers included.
    pub fn bodies(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.bodies.iter().map(|b| b.id)
    }

    /// The name of a level's object or a body, `None` if neither.
    pub fn object_name(&self, id: ObjectId) -> Option<std::borrow::Cow<'_, str>> {
        match self.bodies.get(id) {
            Some(b) => Some(b.name.as_str().into()),
            None if id.tile().is_some() => {
                let (m, local) = self.tile_object(id)?;
                m.level.object_name(local)
            }
            None => self.level.object_name(id),
        }
    }

    /// The layers of a level's or tile's object or a body, `None` if
    /// none ([`World::layer_names`] numbers them).
    pub fn object_layers(&self, id: ObjectId) -> Option<u32> {
        match self.bodies.get(id) {
            Some(b) => Some(b.layers),
            None if id.tile().is_some() => self.tile_object_layers(id),
            None => self.level.object_layers(id),
        }
    }

    /// The level's first object called `name`, else the first mounted
    /// tile's (in mount order), else the first body so named (in slot
    /// order).
    pub fn find_object(&self, name: &str) -> Option<ObjectId> {
        self.level
            .find_object(name)
            .or_else(|| self.find_tile_object(name))
            .or_else(|| self.bodies.iter().find(|b| b.name == name).map(|b| b.id))
    }
}

/// The questions, each as [`Level`] asks it, over the level and the bodies.
impl World {
    /// [`Level::raycast`] over the level and the bodies.
    pub fn raycast(&self, ray: &Ray, filter: &Filter) -> Option<RayHit> {
        if self.tiles.mounted.is_empty() {
            return self.scope().raycast(ray, filter);
        }
        let hit = self.own_scope().and_then(|s| s.raycast(ray, filter));
        self.tiles_raycast(ray, filter, hit)
    }

    /// [`Level::raycast_any`] over the level and the bodies.
    pub fn raycast_any(&self, ray: &Ray, filter: &Filter) -> bool {
        self.scope().raycast_any(ray, filter) || self.tiles_raycast_any(ray, filter)
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

    /// [`Level::raycast_many`] over the level and the bodies: on the
    /// calling thread, each ray asked as [`World::raycast`] asks it.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_many(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]) {
        assert_eq!(rays.len(), out.len(), "one output slot per query");
        for (r, o) in rays.iter().zip(out) {
            *o = self.raycast(r, filter);
        }
    }

    /// [`Level::raycast_any_many`] over the level and the bodies, on the
    /// calling thread.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_any_many(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]) {
        assert_eq!(rays.len(), out.len(), "one output slot per query");
        for (r, o) in rays.iter().zip(out) {
            *o = self.raycast_any(r, filter);
        }
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
        if self.tiles.mounted.is_empty() {
            return self.scope().overlap_into(shape, pose, filter, out);
        }
        out.clear();
        if let Some(s) = self.own_scope() {
            s.overlap_into(shape, pose, filter, out);
        }
        self.tiles_overlap(shape, pose, filter, out);
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

    /// [`Level::overlap_any`] over the level and the bodies.
    pub fn overlap_any(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool {
        self.scope().overlap_any(shape, pose, filter)
            || (!self.tiles.mounted.is_empty() && self.tiles_overlap_any(shape, pose, filter))
    }

    /// [`Level::overlap_any_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn overlap_any_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [bool],
    ) {
        batch(queries, out, 32, |(s, p), o| {
            *o = self.overlap_any(s, p, filter)
        });
    }

    /// [`Level::cast`] over the level and the bodies.
    pub fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit> {
        if self.tiles.mounted.is_empty() {
            return self.scope().cast(cast, filter);
        }
        let best = self.scope().cast_ranked(cast, filter);
        self.tiles_cast(cast, filter, best).map(|(hit, _)| hit)
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
        self.scope().contains_point_into(p, filter, out);
        if !self.tiles.mounted.is_empty() {
            self.tiles_contains_point(p, filter, out);
            out.sort_unstable();
        }
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

    /// [`Level::contains_point_any`] over the level and the bodies.
    pub fn contains_point_any(&self, p: Vec3, filter: &Filter) -> bool {
        self.scope().contains_point_any(p, filter) || self.tiles_contains_point_any(p, filter)
    }

    /// [`Level::contains_point_any_batch`] over the level and the bodies.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn contains_point_any_batch(&self, points: &[Vec3], filter: &Filter, out: &mut [bool]) {
        batch(points, out, 256, |p, o| {
            *o = self.contains_point_any(*p, filter)
        });
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("level", &self.level)
            .field("bodies", &self.bodies.len())
            .field("tiles", &self.tiles.mounted.len())
            .field("origin", &self.tiles.origin)
            .finish()
    }
}
