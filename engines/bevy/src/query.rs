//! The world's questions as a system parameter.

use std::borrow::Cow;

use bevy::ecs::prelude::*;
use bevy::ecs::system::SystemParam;
use bevy::math::{Dir3, Quat, Vec3};
use kiln_runtime::{CastOptions, Filter, ObjectId, Ray, ShapeCast, World};

use crate::body::KilnShape;
use crate::convert::pose;
use crate::world::KilnWorld;

/// Which objects a query sees: layers (a mask), entities to skip, and
/// whether trigger volumes count. The default sees every object but
/// triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct KilnFilter {
    /// Objects in none of these layers are skipped (default all).
    pub layers: u32,
    /// Bodies and movers (by entity) to skip; the level entity skips the
    /// level's static objects.
    pub excluded: Vec<Entity>,
    /// Trigger volumes are seen too (default false).
    pub triggers: bool,
}

impl Default for KilnFilter {
    fn default() -> Self {
        KilnFilter {
            layers: u32::MAX,
            excluded: Vec::new(),
            triggers: false,
        }
    }
}

impl KilnFilter {
    /// Only objects in these layers.
    pub fn layers(mut self, mask: u32) -> KilnFilter {
        self.layers = mask;
        self
    }

    /// Not these entities.
    pub fn exclude(mut self, entities: impl IntoIterator<Item = Entity>) -> KilnFilter {
        self.excluded.extend(entities);
        self
    }

    /// Triggers too.
    pub fn triggers(mut self) -> KilnFilter {
        self.triggers = true;
        self
    }
}

/// The closest hit of a ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnRayHit {
    /// The entity hit: a body's or mover's, or the level entity.
    pub entity: Entity,
    /// The object hit (its name: [`KilnQuery::name`]).
    pub object: ObjectId,
    /// How far along the ray, in units of the direction (metres).
    pub distance: f32,
    /// The hit point.
    pub point: Vec3,
    /// The unit surface normal, facing the ray's origin.
    pub normal: Vec3,
    /// Whether it hit a front face.
    pub front_face: bool,
    /// The triangle or face hit, if any.
    pub feature: Option<u32>,
}

/// What a shape touches, with the deepest contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnOverlap {
    /// The entity touched.
    pub entity: Entity,
    /// The object touched.
    pub object: ObjectId,
    /// The contact point, on the object's surface.
    pub point: Vec3,
    /// Unit normal from the object towards the shape.
    pub normal: Vec3,
    /// How far the shape must move along `normal` to clear it.
    pub depth: f32,
}

/// Where a moving shape first touches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnCastHit {
    /// The entity touched.
    pub entity: Entity,
    /// The object touched.
    pub object: ObjectId,
    /// How far the shape moved along the direction before touching, in
    /// metres, as [`KilnRayHit::distance`] (0 when touching at the start).
    pub distance: f32,
    /// The contact point.
    pub point: Vec3,
    /// Unit normal from the object towards the shape.
    pub normal: Vec3,
}

/// The Kiln world's questions, in the style of a spatial query parameter:
/// `fn system(kiln: KilnQuery) { kiln.raycast(…) }`. Before the level has
/// loaded every answer is "nothing".
#[derive(SystemParam)]
pub struct KilnQuery<'w> {
    kiln: Res<'w, KilnWorld>,
}

impl KilnQuery<'_> {
    /// The world and its entity map.
    pub fn world(&self) -> &KilnWorld {
        &self.kiln
    }

    /// Whether the level has loaded.
    pub fn is_ready(&self) -> bool {
        self.kiln.world().is_some()
    }

    /// The name of an object or body; `None` before the level has loaded
    /// or for an id the world does not know.
    pub fn name(&self, object: ObjectId) -> Option<Cow<'_, str>> {
        self.kiln.world()?.object_name(object)
    }

    /// The mask bit of the world's layer called `name` (its level's
    /// layers, then those its tiles added).
    pub fn layer(&self, name: &str) -> Option<u32> {
        self.kiln
            .world()?
            .layer_names()
            .position(|n| n == name)
            .filter(|&k| k < 32)
            .map(|k| 1 << k)
    }

    fn entity(&self, object: ObjectId) -> Entity {
        self.kiln.entity(object).unwrap_or(Entity::PLACEHOLDER)
    }

    /// Runs `ask` on the world with the runtime's filter for `f` (`None`
    /// before the level has loaded).
    fn ask<R>(&self, f: &KilnFilter, ask: impl FnOnce(&World, &Filter) -> R) -> Option<R> {
        let world = self.kiln.world()?;
        let mut skip = Vec::new();
        let (mut no_level, mut no_tiles) = (false, false);
        for &e in &f.excluded {
            match self.kiln.object(e) {
                Some(o) => skip.push(o),
                None => {
                    no_level |= Some(e) == self.kiln.level_entity();
                    no_tiles |= Some(e) == self.kiln.tiles_entity();
                }
            }
        }
        // the level entity stands for the level's static objects (those
        // with no entity of their own), the tiles entity for its tiles'
        let keep = |o: ObjectId| {
            if o.tile().is_some() {
                !no_tiles
            } else {
                !no_level || o.is_body() || self.kiln.own_entity(o).is_some()
            }
        };
        let mut filter = Filter::skip(&skip).layers(f.layers).triggers(f.triggers);
        if no_level || no_tiles {
            filter = filter.keep(&keep);
        }
        Some(ask(world, &filter))
    }

    /// The closest hit of the ray from `origin` along `direction`, within
    /// `max_distance`.
    pub fn raycast(
        &self,
        origin: Vec3,
        direction: Dir3,
        max_distance: f32,
        f: &KilnFilter,
    ) -> Option<KilnRayHit> {
        let ray = Ray::new(origin, *direction, max_distance);
        let h = self.ask(f, |w, f| w.raycast(&ray, f))??;
        Some(KilnRayHit {
            entity: self.entity(h.object),
            object: h.object,
            distance: h.t,
            point: h.point,
            normal: h.normal,
            front_face: h.front_face,
            feature: h.feature,
        })
    }

    /// Whether the ray hits anything.
    pub fn raycast_any(
        &self,
        origin: Vec3,
        direction: Dir3,
        max_distance: f32,
        f: &KilnFilter,
    ) -> bool {
        let ray = Ray::new(origin, *direction, max_distance);
        self.ask(f, |w, f| w.raycast_any(&ray, f)).unwrap_or(false)
    }

    /// Everything `shape`, at `translation` turned by `rotation`, touches.
    pub fn overlap(
        &self,
        shape: &KilnShape,
        translation: Vec3,
        rotation: Quat,
        f: &KilnFilter,
    ) -> Vec<KilnOverlap> {
        let found = self.ask(f, |w, f| {
            w.overlap(&shape.query(), &pose(rotation, translation), f)
        });
        found
            .unwrap_or_default()
            .into_iter()
            .map(|o| KilnOverlap {
                entity: self.entity(o.object),
                object: o.object,
                point: o.point,
                normal: o.normal,
                depth: o.depth,
            })
            .collect()
    }

    /// Whether `shape` there touches anything.
    pub fn overlap_any(
        &self,
        shape: &KilnShape,
        translation: Vec3,
        rotation: Quat,
        f: &KilnFilter,
    ) -> bool {
        self.ask(f, |w, f| {
            w.overlap_any(&shape.query(), &pose(rotation, translation), f)
        })
        .unwrap_or(false)
    }

    /// Where `shape`, moved from there along `direction` for at most
    /// `max_distance` metres, first touches, and how far it moved (metres,
    /// as a ray's distance; avian's `cast_shape` reads the same). Contacts
    /// at the start that the move leaves are skipped, so a shape resting
    /// on a floor can slide along it. A negative or NaN `max_distance`
    /// answers `None`; a shape standing still is asked with `overlap`.
    pub fn cast(
        &self,
        shape: &KilnShape,
        translation: Vec3,
        rotation: Quat,
        direction: Dir3,
        max_distance: f32,
        f: &KilnFilter,
    ) -> Option<KilnCastHit> {
        let cast = ShapeCast::new(
            shape.query(),
            pose(rotation, translation),
            *direction,
            max_distance,
        )
        .with(CastOptions {
            ignore_leaving: true,
        });
        let h = self.ask(f, |w, f| w.cast(&cast, f))??;
        Some(KilnCastHit {
            entity: self.entity(h.object),
            object: h.object,
            distance: h.t,
            point: h.point,
            normal: h.normal,
        })
    }

    /// The entities of the solids that contain `point` (boxes, spheres,
    /// capsules, polytopes, concave solids), with their objects.
    pub fn contains_point(&self, point: Vec3, f: &KilnFilter) -> Vec<(Entity, ObjectId)> {
        let found = self.ask(f, |w, f| w.contains_point(point, f));
        found
            .unwrap_or_default()
            .into_iter()
            .map(|o| (self.entity(o), o))
            .collect()
    }

    /// Whether any solid contains `point`.
    pub fn contains_point_any(&self, point: Vec3, f: &KilnFilter) -> bool {
        self.ask(f, |w, f| w.contains_point_any(point, f))
            .unwrap_or(false)
    }
}
