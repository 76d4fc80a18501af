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
                level.object_name(o).into_owned(),
                level.object_motion(o),
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
    assert_eq!(level.object_name(hit.object), "Floor");
    assert_eq!(level.movers_and_triggers().count(), 5);
    // inspect says what moves
    let report = kiln_baker::inspect::inspect(&level.as_archive());
    let lift = report.objects.iter().find(|o| o.name == "Lift").unwrap();
    assert_eq!((lift.motion, lift.trigger), ("kinematic", false));
    let text = kiln_baker::inspect::to_text(&report);
    assert!(
        text.contains("kinematic") && text.contains("trigger"),
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
                    Quat::from_axis_angle(rng.unit(), rng.range(0.0, std::f32::consts::TAU)),
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
                    (p + rng.unit().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5)))
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
