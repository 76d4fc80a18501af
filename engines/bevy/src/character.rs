//! A kinematic character moved by `move_and_slide` in `FixedUpdate`.

use bevy::ecs::prelude::*;
use bevy::math::Vec3;
use bevy::time::Time;
use bevy::transform::components::Transform;
use kiln_runtime::character::{Character, CharacterSettings, Ground};
use kiln_runtime::{Filter, ObjectId, QueryShape};

use crate::world::KilnWorld;

/// An upright capsule character. Every fixed step it rides what it stands
/// on (a lift, a turntable: its `Transform` turns with a turntable too),
/// then moves by `walk` (metres a second, the game's input) and its
/// vertical speed, falling under `gravity`, sliding along walls, stepping
/// up steps and following the ground down. Its `Transform`'s translation
/// is its position (the capsule's centre). A character that should set off
/// triggers carries a [`crate::KilnBody`] too; it never meets its own.
#[derive(Component, Clone, Debug)]
#[require(Transform)]
pub struct KilnCharacter {
    /// The capsule's radius.
    pub radius: f32,
    /// Half the distance between its cap centres.
    pub half_height: f32,
    /// How it moves (slopes, steps, skin, up).
    pub settings: CharacterSettings,
    /// Where the game wants it to go, in metres a second (along the
    /// ground: the up part is ignored; jump through `vertical_speed`).
    pub walk: Vec3,
    /// Its speed along up (positive: rising), kept by the controller; set
    /// it to jump.
    pub vertical_speed: f32,
    /// Acceleration down, metres a second squared (default 9.81).
    pub gravity: f32,
    /// Which layers it collides with (default all).
    pub layers: u32,
    /// What it stood on after its last move.
    pub ground: Ground,
    /// What its last move met, in order: each wall, floor, ceiling or
    /// body that stopped or turned it (pushes out of geometry included),
    /// as bevy_rapier's controller output lists its collisions. Cleared
    /// and refilled every fixed step.
    pub contacts: Vec<KilnContact>,
    rode: u64,
}

/// One contact of a character's move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnContact {
    /// The entity met (the level entity for the level's static objects;
    /// `None` for an object no entity stands for).
    pub entity: Option<Entity>,
    /// The object met.
    pub object: ObjectId,
    /// The contact point, on the object.
    pub point: Vec3,
    /// Unit normal from the object towards the character.
    pub normal: Vec3,
}

impl KilnCharacter {
    /// A capsule of `radius` and `half_height` (0.3 and 0.6 make one 1.8 m
    /// tall), default settings, standing still.
    pub fn capsule(radius: f32, half_height: f32) -> KilnCharacter {
        KilnCharacter {
            radius,
            half_height,
            settings: CharacterSettings::default(),
            walk: Vec3::ZERO,
            vertical_speed: 0.0,
            gravity: 9.81,
            layers: u32::MAX,
            ground: Ground::InAir,
            contacts: Vec::new(),
            rode: 0,
        }
    }

    /// Whether it stands on walkable ground.
    pub fn grounded(&self) -> bool {
        matches!(self.ground, Ground::OnGround(_))
    }

    /// The object it stands on, walkable or steep.
    pub fn ground_object(&self) -> Option<ObjectId> {
        match self.ground {
            Ground::InAir => None,
            Ground::OnGround(s) | Ground::OnSteepGround(s) => Some(s.object),
        }
    }
}

/// Moves every character one fixed step.
pub(crate) fn move_characters(
    time: Res<Time>,
    kiln: Res<KilnWorld>,
    mut characters: Query<(Entity, &mut KilnCharacter, &mut Transform)>,
) {
    let Some(world) = kiln.world() else { return };
    let dt = time.delta_secs();
    if dt <= 0.0 {
        return;
    }
    for (entity, mut c, mut t) in &mut characters {
        let c = &mut *c;
        let character = Character {
            shape: QueryShape::Capsule {
                half_height: c.half_height,
                radius: c.radius,
            },
            rotation: kiln_runtime::Quat::IDENTITY,
            settings: c.settings,
        };
        let up = c.settings.up;
        let mut at = t.translation;
        // ride once per world step: the ground's motion is a frame's
        if kiln.steps() > c.rode {
            c.rode = kiln.steps();
            let (carried, turn) = character.ride(world, at, &c.ground);
            at = carried;
            t.rotation = turn * t.rotation;
        }
        let grounded = matches!(c.ground, Ground::OnGround(_));
        c.vertical_speed = if grounded && c.vertical_speed <= 0.0 {
            // pressed to the ground, as gravity does in a frame
            -c.gravity * dt
        } else {
            c.vertical_speed - c.gravity * dt
        };
        let walk = c.walk;
        let along = walk - up * walk.dot(up);
        let motion = (along + up * c.vertical_speed) * dt;
        let own = kiln.object(entity);
        let filter = Filter::skip(own.as_slice()).layers(c.layers);
        let m = character.move_and_slide(world, at, motion, &filter);
        // a ceiling or the ground stops vertical speed
        let moved_up = (m.position - at).dot(up);
        if c.vertical_speed > 0.0 && moved_up < 0.5 * c.vertical_speed * dt {
            c.vertical_speed = 0.0;
        }
        c.ground = m.ground;
        c.contacts.clear();
        c.contacts.extend(m.hits.iter().map(|h| KilnContact {
            entity: kiln.entity(h.object),
            object: h.object,
            point: h.point,
            normal: h.normal,
        }));
        t.translation = m.position;
    }
}
