//! A kinematic character moved by `move_and_slide` in `FixedUpdate`.

use bevy::ecs::prelude::*;
use bevy::math::Vec3;
use bevy::time::Time;
use bevy::transform::components::Transform;
use kiln_runtime::character::{Character, CharacterSettings, Ground};
use kiln_runtime::{Filter, ObjectId, QueryShape};

use crate::convert::{quat_out, vec_in, vec_out};
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
    rode: u64,
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
        let mut at = vec_in(t.translation);
        // ride once per world step: the ground's motion is a frame's
        if kiln.steps() > c.rode {
            c.rode = kiln.steps();
            let (carried, turn) = character.ride(world, at, &c.ground);
            at = carried;
            t.rotation = quat_out(turn) * t.rotation;
        }
        let grounded = matches!(c.ground, Ground::OnGround(_));
        c.vertical_speed = if grounded && c.vertical_speed <= 0.0 {
            // pressed to the ground, as gravity does in a frame
            -c.gravity * dt
        } else {
            c.vertical_speed - c.gravity * dt
        };
        let walk = vec_in(c.walk);
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
        t.translation = vec_out(m.position);
    }
}
