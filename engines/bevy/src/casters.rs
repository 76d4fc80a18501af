//! Queries that live on entities, as avian's `RayCaster` and
//! `ShapeCaster` do: a caster component asks its question from where its
//! entity is, once a frame after the sync point, and keeps the answer in
//! a hit component beside it. Trigger volumes keep who is inside them in
//! [`KilnTriggerContacts`].

use bevy::ecs::prelude::*;
use bevy::math::{Dir3, Quat, Vec3};
use bevy::transform::components::{GlobalTransform, Transform};

use crate::body::KilnShape;
use crate::query::{KilnCastHit, KilnFilter, KilnQuery, KilnRayHit};

/// A ray cast from its entity every frame: from `origin` along
/// `direction` (both in the entity's frame, turned and moved with it) for
/// at most `max_distance` metres. The closest hit goes to the
/// [`KilnRayCasterHit`] beside it. The entity itself (a body or mover) is
/// never hit.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform, KilnRayCasterHit)]
pub struct KilnRayCaster {
    /// Where the ray starts, in the entity's frame.
    pub origin: Vec3,
    /// Which way it goes, in the entity's frame.
    pub direction: Dir3,
    /// How far it reaches (metres; default: without end).
    pub max_distance: f32,
    /// What it sees (default: every object but triggers).
    pub filter: KilnFilter,
}

impl KilnRayCaster {
    /// A ray from `origin` along `direction` (the entity's frame), without
    /// end, seeing every object but triggers.
    pub fn new(origin: Vec3, direction: Dir3) -> KilnRayCaster {
        KilnRayCaster {
            origin,
            direction,
            max_distance: f32::INFINITY,
            filter: KilnFilter::default(),
        }
    }

    /// Reaching at most `max_distance` metres.
    pub fn with_max_distance(mut self, max_distance: f32) -> KilnRayCaster {
        self.max_distance = max_distance;
        self
    }

    /// Seeing what `filter` lets through.
    pub fn with_filter(mut self, filter: KilnFilter) -> KilnRayCaster {
        self.filter = filter;
        self
    }
}

/// What a [`KilnRayCaster`] hit at the last frame's sync point (`None`:
/// nothing, or the level has not loaded).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnRayCasterHit(pub Option<KilnRayHit>);

/// A shape swept from its entity every frame: `shape`, placed at `origin`
/// with `rotation` in the entity's frame, moved along `direction` (also
/// the entity's frame) for at most `max_distance` metres. Where it first
/// touches goes to the [`KilnShapeCasterHit`] beside it; the entity itself
/// is never met, and contacts at the start that the move leaves are
/// skipped (as [`KilnQuery::cast`]).
#[derive(Component, Clone, Debug)]
#[require(Transform, KilnShapeCasterHit)]
pub struct KilnShapeCaster {
    /// The shape swept.
    pub shape: KilnShape,
    /// Where it starts, in the entity's frame.
    pub origin: Vec3,
    /// Its rotation, in the entity's frame.
    pub rotation: Quat,
    /// Which way it moves, in the entity's frame.
    pub direction: Dir3,
    /// How far it moves (metres; default: without end).
    pub max_distance: f32,
    /// What it meets (default: every object but triggers).
    pub filter: KilnFilter,
}

impl KilnShapeCaster {
    /// `shape` from `origin` along `direction` (the entity's frame),
    /// unturned, without end, meeting every object but triggers.
    pub fn new(shape: KilnShape, origin: Vec3, direction: Dir3) -> KilnShapeCaster {
        KilnShapeCaster {
            shape,
            origin,
            rotation: Quat::IDENTITY,
            direction,
            max_distance: f32::INFINITY,
            filter: KilnFilter::default(),
        }
    }

    /// Moving at most `max_distance` metres.
    pub fn with_max_distance(mut self, max_distance: f32) -> KilnShapeCaster {
        self.max_distance = max_distance;
        self
    }

    /// Meeting what `filter` lets through.
    pub fn with_filter(mut self, filter: KilnFilter) -> KilnShapeCaster {
        self.filter = filter;
        self
    }
}

/// What a [`KilnShapeCaster`] met at the last frame's sync point.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnShapeCasterHit(pub Option<KilnCastHit>);

/// On a trigger volume's entity (a baked trigger, or a body made a
/// trigger): the bodies inside it at the last sync point, in entity
/// order. [`crate::KilnTriggerEvent`] messages say when this changes.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub struct KilnTriggerContacts(pub Vec<Entity>);

/// `filter` with `entity` excluded too.
fn without(filter: &KilnFilter, entity: Entity) -> KilnFilter {
    filter.clone().exclude([entity])
}

/// Answers every caster from where its entity is now.
pub(crate) fn cast(
    kiln: KilnQuery,
    mut rays: Query<(
        Entity,
        &KilnRayCaster,
        &GlobalTransform,
        &mut KilnRayCasterHit,
    )>,
    mut shapes: Query<(
        Entity,
        &KilnShapeCaster,
        &GlobalTransform,
        &mut KilnShapeCasterHit,
    )>,
) {
    for (e, caster, at, mut hit) in &mut rays {
        let (_, rotation, _) = at.to_scale_rotation_translation();
        let answer = Dir3::new(rotation * *caster.direction)
            .ok()
            .and_then(|direction| {
                kiln.raycast(
                    at.transform_point(caster.origin),
                    direction,
                    caster.max_distance,
                    &without(&caster.filter, e),
                )
            });
        hit.set_if_neq(KilnRayCasterHit(answer));
    }
    for (e, caster, at, mut hit) in &mut shapes {
        let (_, rotation, _) = at.to_scale_rotation_translation();
        let answer = Dir3::new(rotation * *caster.direction)
            .ok()
            .and_then(|direction| {
                kiln.cast(
                    &caster.shape,
                    at.transform_point(caster.origin),
                    rotation * caster.rotation,
                    direction,
                    caster.max_distance,
                    &without(&caster.filter, e),
                )
            });
        hit.set_if_neq(KilnShapeCasterHit(answer));
    }
}
