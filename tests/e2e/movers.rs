//! Movers and triggers: authored in glTF physics (KHR and OMI), node
//! extras and project rules; baked outside the level's own tree; placed,
//! moved and judged against brute force by a world.

use glam::{Quat, Vec3};
use kiln_baker::Motion as Said;
use kiln_baker::config::{Overrides, Rule};
use kiln_baker::{BakeSettings, bake_file};
use kiln_runtime::{Filter, Level, Motion, ObjectId, Pose, Ray, World, WorldError};
use kiln_tests::Rng;
use kiln_tests::judge::{self, Query, Stats};
use std::sync::Arc;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/colliders")
        .join(name)
}

fn bake(name: &str, settings: &BakeSettings) -> (Arc<Level>, Vec<String>) {
    let baked = bake_file(&fixture(name), settings).unwrap_or_else(|e| panic!("{e}"));
    (
        Arc::new(Level::from_bytes(&baked.bytes).unwrap()),
        baked.report.warnings,
    )
}

/// (name, motion, trigger) of every object, sorted by name.
fn roles(level: &Level) -> Vec<(String, Motion, bool)> {
    let mut v: Vec<_> = level
        .objects()
        .map(|o| {
            (
                level.object_name(o).unwrap_or_default().into_owned(),
                level.object_motion(o).expect("a level object"),
                level.is_trigger(o),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn down(x: f32, z: f32) -> Ray {
    Ray::new(Vec3::new(x, 10.0, z), Vec3::NEG_Y, 100.0)
}

#[test]
fn movers_and_triggers_bake_from_gltf_physics_extras_and_rules() {
    let (level, warnings) = bake("movers.gltf", &BakeSettings::default());
    use Motion::*;
    let r = |n: &str, m, t| (n.to_string(), m, t);
    assert_eq!(
        roles(&level),
        [
            r("CrateBall", Dynamic, false),
            r("Door", Kinematic, false),
            r("Floor", Static, false),
            r("Lift", Kinematic, false),
            r("Pickup", Static, true),
            r("Zone", Static, true),
        ]
    );
    assert!(
        !warnings.iter().any(|w| w.contains("trigger")),
        "{warnings:?}"
    );
    // the level alone is its static part: a ray down through the lift
    // meets the floor
    let hit = level.raycast(&down(0.0, 0.0), &Filter::ALL).unwrap();
    assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Floor");
    assert_eq!(level.movers_and_triggers().count(), 5);
    // inspect says what moves
    let report = baker_tools::inspect::inspect_level(&level);
    let lift = report.objects.iter().find(|o| o.name == "Lift").unwrap();
    assert_eq!((lift.motion, lift.trigger), ("kinematic", false));
    let text = baker_tools::inspect::to_text(&report);
    assert!(
        text.contains("kinematic") && text.contains("trigger"),
        "{text}"
    );
    // its bounds say which objects they cover: the floor's alone is flat,
    // the movers' and triggers' reach 4 m up
    let ([lo, hi], [all_lo, all_hi]) = (report.bounds.unwrap(), report.bounds_all.unwrap());
    assert!(hi[1] < 1e-3 && lo[1] > -1e-3, "{lo:?} .. {hi:?}");
    assert!(
        (all_hi[1] - 4.0).abs() < 1e-3 && all_lo == lo,
        "{all_lo:?} .. {all_hi:?}"
    );
    assert!(
        text.contains("bounds of the static objects:")
            && text.contains("bounds with the 5 movers and triggers where baked:"),
        "{text}"
    );

    // node extras on plain meshes, and project rules over them
    let (level, _) = bake("extras_movers.gltf", &BakeSettings::default());
    assert_eq!(
        roles(&level),
        [
            r("Barrel", Dynamic, false),
            r("Floor", Static, false),
            r("Gate", Static, false),
            r("Goal", Static, true),
            r("Platform", Kinematic, false),
        ]
    );
    let rule = |pattern: &str, motion, trigger| Rule {
        pattern: pattern.into(),
        collider: None,
        layer: None,
        motion,
        trigger,
        settings: Overrides::default(),
    };
    let mut ruled = BakeSettings::default();
    ruled.rules = vec![
        rule("Gate", Some(Said::Kinematic), None),
        rule("Goal", None, Some(false)),
        rule("Barrel", Some(Said::Static), None),
    ];
    let (level, _) = bake("extras_movers.gltf", &ruled);
    assert_eq!(
        roles(&level),
        [
            r("Barrel", Static, false),
            r("Floor", Static, false),
            r("Gate", Kinematic, false),
            r("Goal", Static, false),
            r("Platform", Kinematic, false),
        ]
    );
}

#[test]
fn exported_physics_keeps_motion_and_triggers() {
    let (level, _) = bake("movers.gltf", &BakeSettings::default());
    let glb = kiln_baker::export::to_physics_glb(level.archive());
    let path = std::env::temp_dir().join(format!("kiln-movers-{}.glb", std::process::id()));
    std::fs::write(&path, glb).unwrap();
    let again =
        Level::from_bytes(&bake_file(&path, &BakeSettings::default()).unwrap().bytes).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(roles(&again), roles(&level));
}

#[test]
fn a_world_places_movers_moves_them_and_sees_triggers_only_when_asked() {
    let (level, _) = bake("movers.gltf", &BakeSettings::default());
    let mut world = World::new(level.clone());
    let find = |n: &str| level.find_object(n).unwrap();
    let (lift, door, zone, floor) = (find("Lift"), find("Door"), find("Zone"), find("Floor"));
    assert_eq!(world.body_count(), 5);
    // the lift where it was baked: its top at y = 1.25
    let hit = world.raycast(&down(0.0, 0.0), &Filter::ALL).unwrap();
    assert_eq!(hit.object, lift);
    assert!((hit.point.y - 1.25).abs() < 1e-5, "{}", hit.point);
    assert_eq!(world.pose(lift), Some(Pose::at(Vec3::Y)));
    // up it goes; the level alone still sees the floor
    world
        .set_pose(lift, Pose::at(Vec3::new(0.0, 3.0, 0.0)))
        .unwrap();
    let hit = world.raycast(&down(0.0, 0.0), &Filter::ALL).unwrap();
    assert!((hit.point.y - 3.25).abs() < 1e-5, "{}", hit.point);
    assert_eq!(
        level.raycast(&down(0.0, 0.0), &Filter::ALL).unwrap().object,
        floor
    );
    // the door turns about its own origin: a ray 0.4 m beside its hinge
    // passes it closed and meets it open
    let beside = Ray::new(Vec3::new(5.0, 1.0, 3.4), Vec3::NEG_X, 10.0);
    assert_ne!(
        world.raycast(&beside, &Filter::ALL).map(|h| h.object),
        Some(door)
    );
    let open = Pose::new(
        Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 1.0, 3.0),
    );
    world.set_pose(door, open).unwrap();
    let hit = world.raycast(&beside, &Filter::ALL).unwrap();
    assert_eq!(hit.object, door);
    assert!((hit.point.x - 0.1).abs() < 1e-4, "{}", hit.point);
    // triggers: seen only when asked
    let inside = Vec3::new(-3.0, 2.0, 0.0);
    assert!(world.contains_point(inside, &Filter::ALL).is_empty());
    assert_eq!(
        world.contains_point(inside, &Filter::ALL.triggers(true)),
        [zone]
    );
    assert!(!world.raycast_any(&down(-3.0, 0.0), &Filter::ALL.layers(0)));
    // the level's objects stay: static ones never move, none is removed
    assert_eq!(
        world.set_pose(floor, Pose::IDENTITY),
        Err(WorldError::Static(floor))
    );
    assert_eq!(world.remove(lift), Err(WorldError::Static(lift)));
    // a reload keeps the movers where the game put them, by name
    let (reloaded, _) = bake("movers.gltf", &BakeSettings::default());
    world.set_level(reloaded.clone());
    let lift2 = reloaded.find_object("Lift").unwrap();
    assert_eq!(world.pose(lift2), Some(Pose::at(Vec3::new(0.0, 3.0, 0.0))));
    let hit = world.raycast(&down(0.0, 0.0), &Filter::ALL).unwrap();
    assert!((hit.point.y - 3.25).abs() < 1e-5, "{}", hit.point);
    // a mover that enters a baked trigger is reported at the next step
    let zone2 = reloaded.find_object("Zone").unwrap();
    world
        .set_pose(lift2, Pose::at(Vec3::new(3.0, 3.0, 0.0)))
        .unwrap();
    world.step();
    assert!(!world.trigger_contacts().iter().any(|&(_, b)| b == lift2));
    world
        .set_pose(lift2, Pose::at(Vec3::new(-3.0, 2.0, 0.0)))
        .unwrap();
    world.step();
    assert_eq!(
        world.trigger_events(),
        [kiln_runtime::TriggerEvent {
            trigger: zone2,
            body: lift2,
            entered: true
        }]
    );
    world
        .set_pose(lift2, Pose::at(Vec3::new(3.0, 3.0, 0.0)))
        .unwrap();
    world.step();
    assert_eq!(world.trigger_events().len(), 1);
    assert!(!world.trigger_events()[0].entered);
}

/// Movers at random poses (scaled, turned, moved), judged against brute
/// force: every query kind, over the level's static objects and every
/// mover where the world has it.
#[test]
fn moved_movers_answer_every_query_like_brute_force() {
    let (level, _) = bake("movers.gltf", &BakeSettings::default());
    let (extras, _) = bake("extras_movers.gltf", &BakeSettings::default());
    let mut stats = Stats::default();
    for level in [level, extras] {
        let mut world = World::new(level.clone());
        let movers: Vec<ObjectId> = level
            .movers_and_triggers()
            .filter(|&o| !level.is_trigger(o))
            .collect();
        let baked: Vec<Pose> = movers.iter().map(|&o| world.pose(o).unwrap()).collect();
        let mut rng = Rng::new(17);
        for round in 0..30 {
            let mut objs = judge::objects(&level);
            for (k, &o) in movers.iter().enumerate() {
                let pose = Pose::new(
                    Quat::from_axis_angle(rng.unit32(), rng.range(0.0, std::f32::consts::TAU)),
                    Vec3::new(
                        rng.range(-3.0, 3.0),
                        rng.range(0.0, 3.0),
                        rng.range(-3.0, 3.0),
                    ),
                );
                world.set_pose(o, pose).unwrap();
                // where the body's frame went: pose ∘ baked⁻¹, applied to
                // the object's baked placement
                let turn = pose.rotation * baked[k].rotation.inverse();
                let moved = Pose::new(turn, pose.translation - turn * baked[k].translation);
                objs[o.index() as usize] = judge::copy_object(&level, o, &moved);
            }
            world.step();
            for i in 0..20 {
                let tag = format!("round {round} query {i}");
                let (p, size) = judge::near_surface(&objs, &mut rng);
                let s = (size * f64::from(rng.range(0.1, 0.6))) as f32;
                let at =
                    (p + rng.unit32().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5)))
                        .as_vec3();
                let q = Query::random(i % 4, s, at, &mut rng);
                judge::check_overlap(&world, &objs, &q, &mut stats, &tag);
                let (target, _) = judge::near_surface(&objs, &mut rng);
                let motion = (target - at.as_dvec3()).as_vec3();
                if motion.length() > 1e-3 {
                    judge::check_cast(&world, &objs, &q, motion, 1.5, &mut stats, &tag);
                }
                judge::check_point(&world, &objs, at, &tag);
                let from = Vec3::new(
                    rng.range(-8.0, 8.0),
                    rng.range(-1.0, 6.0),
                    rng.range(-8.0, 8.0),
                );
                let ray = Ray::new(from, target.as_vec3() - from, 1.5);
                judge::check_ray(&world, &objs, &ray, &tag);
            }
        }
    }
    judge::report("moved movers", &stats);
    assert!(
        stats.touching > 200 && stats.hits > 200,
        "{} touching, {} hits",
        stats.touching,
        stats.hits
    );
}

/// The character on things that move: the baked lift, a turning
/// platform, the baked door, and the lift's edge.
mod riding {
    use super::*;
    use kiln_runtime::character::{Character, Ground};
    use kiln_runtime::{Body, QueryShape};

    const FALL: Vec3 = Vec3::new(0.0, -0.1, 0.0);

    /// One frame: the world steps, the ground carries the player, the
    /// player moves.
    fn frame(
        world: &mut World,
        player: &Character,
        at: &mut Vec3,
        ground: &mut Ground,
        walk: Vec3,
    ) -> Quat {
        world.step();
        let (carried, turn) = player.ride(world, *at, ground);
        let m = player.move_and_slide(world, carried, walk + FALL, &Filter::ALL);
        (*at, *ground) = (m.position, m.ground);
        turn
    }

    #[test]
    fn a_lift_carries_the_character_up_and_down_without_sinking_or_leaving() {
        let (level, _) = bake("movers.gltf", &BakeSettings::default());
        let mut world = World::new(level.clone());
        let lift = level.find_object("Lift").unwrap();
        let player = Character::capsule(0.3, 0.6);
        // standing on the lift's top (y = 1.25)
        let (mut at, mut ground) = (Vec3::new(0.0, 2.2, 0.0), Ground::InAir);
        frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
        let mut worst = (0.0f32, 0.0f32);
        for f in 0..240 {
            // up 3 m and down again, fastest in the middle (up to 4 cm a frame)
            let y = 1.0 + 1.5 * (1.0 - (f as f32 / 240.0 * std::f32::consts::TAU).cos());
            world
                .set_pose(lift, Pose::at(Vec3::new(0.0, y, 0.0)))
                .unwrap();
            frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
            let Ground::OnGround(g) = ground else {
                panic!("frame {f}: off the lift at {at}: {ground:?}");
            };
            assert_eq!(g.object, lift, "frame {f}");
            let above = at.y - (y + 0.25 + 0.9);
            worst = (worst.0.min(above), worst.1.max(above));
            assert!(
                at.x.abs() < 1e-3 && at.z.abs() < 1e-3,
                "frame {f}: drifted to {at}"
            );
        }
        // never sunk into it, never left behind by more than the skin
        assert!(worst.0 > -1e-3 && worst.1 < 0.011, "{worst:?}");
    }

    #[test]
    fn a_turning_platform_carries_the_character_round_with_it() {
        let (level, _) = bake("movers.gltf", &BakeSettings::default());
        let mut world = World::new(level);
        let centre = Vec3::new(0.0, 3.0, -20.0);
        let disc = world
            .insert(Body::shape(
                QueryShape::Cuboid {
                    half: Vec3::new(3.0, 0.25, 3.0),
                },
                Pose::at(centre),
            ))
            .unwrap();
        let player = Character::capsule(0.3, 0.6);
        let start = centre + Vec3::new(2.0, 0.25 + 0.9, 0.0);
        let (mut at, mut ground) = (start, Ground::InAir);
        frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
        let mut turned = Quat::IDENTITY;
        for f in 1..=60 {
            let angle = std::f32::consts::FRAC_PI_2 * f as f32 / 60.0;
            world
                .set_pose(disc, Pose::new(Quat::from_rotation_y(angle), centre))
                .unwrap();
            turned = frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO) * turned;
            assert!(
                matches!(ground, Ground::OnGround(g) if g.object == disc),
                "frame {f}"
            );
        }
        // a quarter turn about y takes +x to -z
        let want = centre + Vec3::new(0.0, 0.25 + 0.9, -2.0);
        assert!((at - want).length() < 2e-3, "{at} against {want}");
        let (axis, angle) = turned.to_axis_angle();
        assert!(
            (angle - std::f32::consts::FRAC_PI_2).abs() < 1e-3 && axis.y > 0.99,
            "{axis} {angle}"
        );
    }

    #[test]
    fn a_door_that_swings_into_the_character_pushes_it_and_never_leaves_it_inside() {
        let (level, _) = bake("movers.gltf", &BakeSettings::default());
        let mut world = World::new(level.clone());
        let door = level.find_object("Door").unwrap();
        let player = Character::capsule(0.3, 0.6);
        // beside the door's far end (the door: 1 m along x at z = 3, hinged at its centre)
        let (mut at, mut ground) = (Vec3::new(0.3, 0.9, 3.5), Ground::InAir);
        frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
        let mut moved = 0.0f32;
        for f in 1..=45 {
            let angle = std::f32::consts::FRAC_PI_2 * f as f32 / 45.0;
            world
                .set_pose(
                    door,
                    Pose::new(Quat::from_rotation_y(-angle), Vec3::new(0.0, 1.0, 3.0)),
                )
                .unwrap();
            let before = at;
            frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
            moved += (at - before).length();
            // pressed by the door, it still stands on the floor
            assert!(
                matches!(ground, Ground::OnGround(g) if g.normal.y > 0.99),
                "frame {f}: {ground:?}"
            );
            let deepest = world
                .overlap(&player.shape, &Pose::at(at), &Filter::ALL)
                .iter()
                .filter(|o| o.object == door)
                .map(|o| o.depth)
                .fold(0.0f32, f32::max);
            // pushed out before the frame ends: no deeper than the skin and
            // the door's turn within one frame
            assert!(
                deepest <= player.settings.skin + 1e-3,
                "frame {f}: {deepest} m inside the door at {at}"
            );
        }
        assert!(
            moved > 0.1,
            "the door never reached the character ({moved} m)"
        );
    }

    /// A character that should set off triggers is a body the game moves
    /// each frame (and skips in its own moves): walking through the
    /// baked zone reports it entering and leaving.
    #[test]
    fn a_character_body_sets_off_triggers() {
        let (level, _) = bake("movers.gltf", &BakeSettings::default());
        let zone = level.find_object("Zone").unwrap();
        let mut world = World::new(level);
        let player = Character::capsule(0.3, 0.6);
        let mut at = Vec3::new(-3.0, 0.9, 4.5);
        let me = world
            .insert(Body::shape(player.shape, Pose::at(at)).named("player"))
            .unwrap();
        let own = [me];
        let mut ground = Ground::InAir;
        let mut events = Vec::new();
        // along x = -3 from z = 4.5 to z = -4.5: through the 4 m zone there
        for _ in 0..240 {
            world.set_pose(me, Pose::at(at)).unwrap();
            world.step();
            events.extend(world.trigger_events().iter().copied());
            let walk = Vec3::new(-3.0 - at.x, 0.0, -4.5 - at.z).clamp_length_max(0.05);
            let m = player.move_and_slide(&world, at, walk + FALL, &Filter::skip(&own));
            (at, ground) = (m.position, m.ground);
        }
        assert!(matches!(ground, Ground::OnGround(_)) && at.z < -4.4, "{at}");
        let mine: Vec<bool> = events
            .iter()
            .filter(|e| e.body == me && e.trigger == zone)
            .map(|e| e.entered)
            .collect();
        assert_eq!(mine, [true, false], "{events:?}");
    }

    #[test]
    fn walking_off_a_lift_falls_to_the_floor() {
        let (level, _) = bake("movers.gltf", &BakeSettings::default());
        let mut world = World::new(level.clone());
        let (lift, floor) = (
            level.find_object("Lift").unwrap(),
            level.find_object("Floor").unwrap(),
        );
        let player = Character::capsule(0.3, 0.6);
        let (mut at, mut ground) = (Vec3::new(0.0, 2.2, 0.0), Ground::InAir);
        frame(&mut world, &player, &mut at, &mut ground, Vec3::ZERO);
        assert!(matches!(ground, Ground::OnGround(g) if g.object == lift));
        // 4 m towards -x, where nothing stands in the way (the zone there
        // is a trigger), still over the 10 m floor
        for _ in 0..80 {
            frame(
                &mut world,
                &player,
                &mut at,
                &mut ground,
                Vec3::new(-0.05, 0.0, 0.0),
            );
        }
        assert!(at.x < -3.9, "{at}");
        assert!(
            matches!(ground, Ground::OnGround(g) if g.object == floor),
            "{ground:?} at {at}"
        );
        assert!((at.y - 0.9).abs() < 1e-3, "{at}");
    }
}
