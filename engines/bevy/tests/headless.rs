//! The plugin in a headless Bevy app (no window, no GPU): an archive
//! loaded as an asset and asked from systems, bodies following their
//! transforms, baked movers and triggers as entities, trigger messages, a
//! character riding a lift in `FixedUpdate`, glTF processed into archives
//! with settings from `.meta` files, and an archive reloaded while the app
//! runs (a broken one reported, the last good level kept).

use std::path::Path;
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::asset::processor::{AssetProcessor, FileTransactionLogFactory};
use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use kiln_bevy::{
    KilnArchive, KilnBody, KilnBodyRejected, KilnCharacter, KilnFilter, KilnLevel, KilnLevelFailed,
    KilnMover, KilnPlugin, KilnQuery, KilnRayCaster, KilnRayCasterHit, KilnRayHit, KilnShape,
    KilnShapeCaster, KilnShapeCasterHit, KilnSystems, KilnTrigger, KilnTriggerContacts,
    KilnTriggerEvent, KilnWorld,
};
use std::f32::consts::FRAC_PI_2;

mod common;
use common::{assets, bake, bake_edited, root, until};

/// Worlds of tiles streamed around focus entities.
#[path = "headless/tiles.rs"]
mod tiles;

/// Replaces `path` at once, as the baker does (write aside, rename).
fn replace(path: &Path, bytes: &[u8]) {
    let aside = path.with_extension("part");
    std::fs::write(&aside, bytes).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

/// The messages Kiln wrote, collected as they come.
#[derive(Resource, Default)]
struct Seen {
    triggers: Vec<KilnTriggerEvent>,
    failures: Vec<KilnLevelFailed>,
    rejected: Vec<KilnBodyRejected>,
}

fn collect(
    mut seen: ResMut<Seen>,
    mut t: MessageReader<KilnTriggerEvent>,
    mut f: MessageReader<KilnLevelFailed>,
    mut r: MessageReader<KilnBodyRejected>,
) {
    seen.triggers.extend(t.read().copied());
    seen.failures.extend(f.read().cloned());
    seen.rejected.extend(r.read().cloned());
}

/// A headless app over `dir/assets`, time advancing 1/60 s an update.
fn app(dir: &Path, mode: AssetMode, watch: bool) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.join("assets").display().to_string(),
            processed_file_path: dir.join("imported").display().to_string(),
            mode,
            watch_for_changes_override: Some(watch),
            ..default()
        },
        TransformPlugin,
        KilnPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .init_resource::<Seen>()
    .add_systems(PostUpdate, collect.after(KilnSystems::Sync));
    app
}

/// A headless app whose asset processor bakes `dir/assets` into
/// `dir/imported`, its log beside the test's folders, not in the crate.
fn processed_app(dir: &Path) -> App {
    let app = app(dir, AssetMode::Processed, false);
    let log = FileTransactionLogFactory {
        file_path: dir.join("processor.log"),
    };
    app.world()
        .resource::<AssetProcessor>()
        .data()
        .set_log_factory(Box::new(log))
        .unwrap();
    app
}

/// A capsule character spawned at `at`, landed, then walking at `walk`.
fn walking_character(app: &mut App, at: Vec3, walk: Vec3) -> Entity {
    let player = app
        .world_mut()
        .spawn((
            KilnCharacter::capsule(0.3, 0.6),
            Transform::from_translation(at),
        ))
        .id();
    until(app, "the character lands", |app| {
        app.world().get::<KilnCharacter>(player).unwrap().grounded()
    });
    app.world_mut()
        .get_mut::<KilnCharacter>(player)
        .unwrap()
        .walk = walk;
    player
}

fn ready(app: &mut App) -> bool {
    app.world().resource::<KilnWorld>().world().is_some()
}

/// Asks `query` of the world from a system.
fn ask<R: 'static>(app: &mut App, query: impl Fn(KilnQuery) -> R + Send + Sync + 'static) -> R {
    app.world_mut()
        .run_system_once(move |q: KilnQuery| query(q))
        .expect("the system runs")
}

fn down_at(x: f32, z: f32) -> impl Fn(KilnQuery) -> Option<KilnRayHit> {
    move |q| {
        q.raycast(
            Vec3::new(x, 10.0, z),
            Dir3::NEG_Y,
            100.0,
            &KilnFilter::default(),
        )
    }
}

fn level_with(dir: &Path, file: &str, source: &str) -> (App, Entity) {
    std::fs::write(dir.join("assets").join(file), bake(source)).unwrap();
    let mut app = app(dir, AssetMode::Unprocessed, false);
    let handle = app.world().resource::<AssetServer>().load(file.to_string());
    let level = app.world_mut().spawn(KilnLevel(handle)).id();
    until(&mut app, "the level loads", ready);
    (app, level)
}

#[test]
fn an_archive_answers_a_system() {
    let dir = assets("raycast");
    let (mut app, level) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    let hit = ask(&mut app, down_at(12.0, 5.0)).expect("the floor is there");
    assert!(
        hit.point.y.abs() < 1e-4 && (hit.normal - Vec3::Y).length() < 1e-5,
        "{hit:?}"
    );
    assert_eq!(hit.entity, level, "a static object is the level entity's");
    let name = ask(&mut app, move |q| {
        q.name(hit.object).unwrap_or_default().into_owned()
    });
    assert!(name.starts_with("floor"), "{name}");
    // every kind of question, asked from a system
    let ball = KilnShape::from(Sphere::new(0.5));
    let b = ball.clone();
    let (touching, resting) = ask(&mut app, move |q| {
        (
            q.overlap_any(
                &b,
                Vec3::new(12.0, 0.45, 5.0),
                Quat::IDENTITY,
                &KilnFilter::default(),
            ),
            q.overlap(
                &b,
                Vec3::new(12.0, 0.45, 5.0),
                Quat::IDENTITY,
                &KilnFilter::default(),
            ),
        )
    });
    assert!(
        touching && resting.len() == 1 && (resting[0].depth - 0.05).abs() < 1e-4,
        "{resting:?}"
    );
    let b = ball.clone();
    let landed = ask(&mut app, move |q| {
        q.cast(
            &b,
            Vec3::new(12.0, 2.0, 5.0),
            Quat::IDENTITY,
            Dir3::NEG_Y,
            10.0,
            &KilnFilter::default(),
        )
    })
    .expect("it lands");
    // metres, as a ray's distance
    assert!((landed.distance - 1.5).abs() < 1e-4, "1.5 m: {landed:?}");
    let b = ball.clone();
    let short = ask(&mut app, move |q| {
        q.cast(
            &b,
            Vec3::new(12.0, 2.0, 5.0),
            Quat::IDENTITY,
            Dir3::NEG_Y,
            1.0,
            &KilnFilter::default(),
        )
    });
    assert!(short.is_none(), "no floor within 1 m: {short:?}");
    let (inside, solid, wall_any) = ask(&mut app, |q| {
        (
            q.contains_point(Vec3::new(7.5, 0.5, 2.0), &KilnFilter::default()),
            q.contains_point_any(Vec3::new(7.5, 3.0, 2.0), &KilnFilter::default()),
            q.raycast_any(
                Vec3::new(15.0, 1.0, 12.0),
                Dir3::X,
                100.0,
                &KilnFilter::default(),
            ),
        )
    });
    assert_eq!(inside.len(), 1);
    assert!(!solid && wall_any);
    let top = ask(&mut app, move |q| {
        q.name(inside[0].1).unwrap_or_default().into_owned()
    });
    assert_eq!(top, "stair_top");
    // filters: no layer sees nothing; skipping the level entity skips its objects
    assert!(
        ask(&mut app, |q| q.raycast(
            Vec3::new(12.0, 10.0, 5.0),
            Dir3::NEG_Y,
            100.0,
            &KilnFilter::default().layers(0)
        ))
        .is_none()
    );
    assert!(
        ask(&mut app, move |q| {
            q.raycast(
                Vec3::new(12.0, 10.0, 5.0),
                Dir3::NEG_Y,
                100.0,
                &KilnFilter::default().exclude([level]),
            )
        })
        .is_none()
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bodies_follow_their_transforms() {
    let dir = assets("bodies");
    let (mut app, level) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    let crate_ = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
            Transform::from_xyz(2.0, 3.0, 16.0),
            Name::new("crate"),
        ))
        .id();
    app.update();
    let hit = ask(&mut app, down_at(2.0, 16.0)).unwrap();
    assert_eq!(hit.entity, crate_);
    assert!((hit.point.y - 3.5).abs() < 1e-4, "{hit:?}");
    assert_eq!(
        ask(&mut app, move |q| q
            .name(hit.object)
            .unwrap_or_default()
            .into_owned()),
        "crate"
    );
    // moved by its transform: the queries follow
    app.world_mut()
        .entity_mut(crate_)
        .get_mut::<Transform>()
        .unwrap()
        .translation
        .y = 5.0;
    app.update();
    let hit = ask(&mut app, down_at(2.0, 16.0)).unwrap();
    assert!(
        hit.entity == crate_ && (hit.point.y - 5.5).abs() < 1e-4,
        "{hit:?}"
    );
    app.world_mut()
        .entity_mut(crate_)
        .get_mut::<Transform>()
        .unwrap()
        .rotation = Quat::from_rotation_z(0.5);
    app.update();
    let hit = ask(&mut app, down_at(2.0, 16.0)).unwrap();
    // turned 0.5 rad about z: the ray meets the tilted top 0.5 / cos 0.5 above the centre
    assert!(
        (hit.point.y - (5.0 + 0.5 / 0.5f32.cos())).abs() < 1e-4,
        "{hit:?}"
    );
    assert!(
        (hit.normal - Vec3::new(-0.5f32.sin(), 0.5f32.cos(), 0.0)).length() < 1e-5,
        "{hit:?}"
    );
    // skipped by entity, the floor below
    let hit = ask(&mut app, move |q| {
        q.raycast(
            Vec3::new(2.0, 10.0, 16.0),
            Dir3::NEG_Y,
            100.0,
            &KilnFilter::default().exclude([crate_]),
        )
    })
    .unwrap();
    assert_eq!(hit.entity, level);
    // despawned: gone
    app.world_mut().despawn(crate_);
    app.update();
    let hit = ask(&mut app, down_at(2.0, 16.0)).unwrap();
    assert!(hit.entity == level && hit.point.y.abs() < 1e-4);
    assert_eq!(
        app.world()
            .resource::<KilnWorld>()
            .world()
            .unwrap()
            .body_count(),
        0
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn movers_and_triggers_are_entities_and_triggers_report() {
    let dir = assets("movers");
    let (mut app, _) = level_with(&dir, "movers.kiln", "tests/fixtures/colliders/movers.gltf");
    app.update(); // the mover entities spawned at the sync point are there
    let mut named = app.world_mut().query::<(
        Entity,
        &Name,
        Option<&KilnMover>,
        Option<&KilnTrigger>,
        &Transform,
    )>();
    let found: Vec<(Entity, String, bool, bool, Vec3)> = named
        .iter(app.world())
        .map(|(e, n, m, t, tr)| (e, n.to_string(), m.is_some(), t.is_some(), tr.translation))
        .collect();
    let by = |name: &str| {
        found
            .iter()
            .find(|f| f.1 == name)
            .unwrap_or_else(|| panic!("no entity {name}: {found:?}"))
            .clone()
    };
    let (lift, _, lift_moves, _, lift_at) = by("Lift");
    let (zone, _, _, zone_triggers, zone_at) = by("Zone");
    assert!(lift_moves && zone_triggers);
    assert!(by("Door").2 && by("CrateBall").2 && by("Pickup").3);
    // the lift, moved by its transform
    let top = ask(&mut app, down_at(lift_at.x, lift_at.z)).unwrap();
    assert_eq!(top.entity, lift);
    app.world_mut()
        .entity_mut(lift)
        .get_mut::<Transform>()
        .unwrap()
        .translation
        .y += 2.0;
    app.update();
    let raised = ask(&mut app, down_at(lift_at.x, lift_at.z)).unwrap();
    assert!(
        raised.entity == lift && (raised.point.y - top.point.y - 2.0).abs() < 1e-4,
        "{top:?} {raised:?}"
    );
    // a ball into the baked trigger zone and out again
    let ball = app
        .world_mut()
        .spawn((
            KilnBody::shape(Sphere::new(0.25)),
            Transform::from_translation(zone_at + Vec3::Y * 20.0),
        ))
        .id();
    app.update();
    app.world_mut()
        .entity_mut(ball)
        .get_mut::<Transform>()
        .unwrap()
        .translation = zone_at;
    app.update();
    app.world_mut()
        .entity_mut(ball)
        .get_mut::<Transform>()
        .unwrap()
        .translation = zone_at + Vec3::Y * 20.0;
    app.update();
    // (the baked crate ball sits in the zone from the start: its event came first)
    let seen: Vec<_> = app
        .world()
        .resource::<Seen>()
        .triggers
        .iter()
        .filter(|e| e.body == ball)
        .copied()
        .collect();
    assert_eq!(
        seen.as_slice(),
        [
            KilnTriggerEvent {
                trigger: zone,
                body: ball,
                entered: true
            },
            KilnTriggerEvent {
                trigger: zone,
                body: ball,
                entered: false
            }
        ],
        "{seen:?}"
    );
    // triggers are seen by filters that ask for them
    let through = ask(&mut app, move |q| {
        q.raycast(
            zone_at + Vec3::Y * 10.0,
            Dir3::NEG_Y,
            100.0,
            &KilnFilter::default().triggers(),
        )
    });
    assert_eq!(through.map(|h| h.entity), Some(zone));
    let past = ask(&mut app, move |q| {
        q.raycast(
            zone_at + Vec3::Y * 10.0,
            Dir3::NEG_Y,
            100.0,
            &KilnFilter::default(),
        )
    });
    assert_ne!(past.map(|h| h.entity), Some(zone));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_character_walks_onto_a_lift_and_rides_it() {
    let dir = assets("character");
    let (mut app, _) = level_with(&dir, "moving.kiln", "samples/moving_course.gltf");
    app.update();
    let mut movers = app.world_mut().query::<(Entity, &Name, &KilnMover)>();
    let lift = movers
        .iter(app.world())
        .find(|(_, n, _)| n.as_str() == "lift")
        .map(|(e, ..)| e)
        .expect("a lift entity");
    // standing on the floor at (12, 14), walking +z onto the lift (2 x 2 m at z = 17)
    let player = walking_character(
        &mut app,
        Vec3::new(12.0, 1.0, 14.0),
        Vec3::new(0.0, 0.0, 2.0),
    );
    let on_lift = |app: &mut App| {
        let c = app.world().get::<KilnCharacter>(player).unwrap();
        let kiln = app.world().resource::<KilnWorld>();
        c.ground_object().and_then(|o| kiln.entity(o)) == Some(lift)
    };
    until(&mut app, "the character walks onto the lift", on_lift);
    for _ in 0..30 {
        app.update(); // to the lift's middle
    }
    app.world_mut()
        .get_mut::<KilnCharacter>(player)
        .unwrap()
        .walk = Vec3::ZERO;
    for _ in 0..10 {
        app.update();
    }
    let before = app.world().get::<Transform>(player).unwrap().translation;
    assert!(on_lift(&mut app));
    // the lift goes up 1.5 m over 75 frames, moved by its transform
    for _ in 0..75 {
        app.world_mut()
            .get_mut::<Transform>(lift)
            .unwrap()
            .translation
            .y += 0.02;
        app.update();
    }
    for _ in 0..3 {
        app.update();
    }
    let after = app.world().get::<Transform>(player).unwrap().translation;
    assert!(on_lift(&mut app), "still on the lift");
    assert!(
        (after.y - before.y - 1.5).abs() < 0.02,
        "rode from {before} to {after}"
    );
    assert!(
        (after.x - before.x).abs() < 1e-3 && (after.z - before.z).abs() < 1e-3,
        "{before} {after}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A character's last move names what it met, as bevy_rapier's
/// controller output does; and the runtime's world takes Bevy's vectors
/// as they are (one glam version).
#[test]
fn a_character_reports_what_its_last_move_met() {
    let dir = assets("contacts");
    let (mut app, level) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    // beside the wall at x = 16, walking into it
    let player = walking_character(
        &mut app,
        Vec3::new(15.0, 1.0, 12.0),
        Vec3::new(3.0, 0.0, 0.0),
    );
    let against_wall = |app: &mut App| {
        let c = app.world().get::<KilnCharacter>(player).unwrap();
        c.contacts.iter().find(|h| h.normal.x < -0.99).copied()
    };
    until(&mut app, "the character meets the wall", |app| {
        against_wall(app).is_some()
    });
    let hit = against_wall(&mut app).unwrap();
    assert_eq!(hit.entity, Some(level), "{hit:?}");
    assert!((hit.point.x - 16.0).abs() < 0.02, "{hit:?}");
    let wall = app
        .world()
        .resource::<KilnWorld>()
        .level()
        .unwrap()
        .find_object("wall");
    assert_eq!(Some(hit.object), wall);
    // stopped at the wall: its centre a radius (and the skin) short of it
    let at = app.world().get::<Transform>(player).unwrap().translation;
    assert!(at.x < 16.0 - 0.29 && at.x > 16.0 - 0.35, "{at}");
    // the runtime's world, asked with Bevy's own Vec3
    let origin: bevy::math::Vec3 = Vec3::new(12.0, 10.0, 5.0);
    let kiln = app.world().resource::<KilnWorld>();
    let ray = kiln_bevy::kiln_runtime::Ray::new(origin, Vec3::NEG_Y, 100.0);
    let down = kiln
        .world()
        .unwrap()
        .raycast(&ray, &kiln_bevy::kiln_runtime::Filter::ALL);
    let point: bevy::math::Vec3 = down.unwrap().point;
    assert!(point.y.abs() < 1e-4, "{point}");
    std::fs::remove_dir_all(dir).ok();
}

/// Ray and shape casters answer from where their entity is, turning and
/// moving with it, never meeting the entity itself; a trigger's contacts
/// list who is inside it now.
#[test]
fn casters_follow_their_entities_and_triggers_know_who_is_inside() {
    let dir = assets("casters");
    let (mut app, level) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    // a ball body with a ray and a sphere swept straight down from its centre
    let probe = app
        .world_mut()
        .spawn((
            KilnBody::shape(Sphere::new(0.25)),
            KilnRayCaster::new(Vec3::ZERO, Dir3::NEG_Y).with_max_distance(50.0),
            Transform::from_xyz(12.0, 5.0, 5.0),
        ))
        .id();
    let sweeper = app
        .world_mut()
        .spawn((
            KilnShapeCaster::new(
                KilnShape::Sphere { radius: 0.5 },
                Vec3::new(0.0, 1.0, 0.0),
                Dir3::NEG_Y,
            ),
            Transform::from_xyz(10.0, 4.0, 5.0),
        ))
        .id();
    app.update();
    app.update();
    let ray = app.world().get::<KilnRayCasterHit>(probe).unwrap().0;
    let ray = ray.expect("the floor below");
    assert_eq!(ray.entity, level, "not the probe's own ball");
    assert!((ray.distance - 5.0).abs() < 1e-4, "{ray:?}");
    let swept = app.world().get::<KilnShapeCasterHit>(sweeper).unwrap().0;
    let swept = swept.expect("the floor below");
    // from y = 5 (the offset), a ball of 0.5 lands after 4.5 m
    assert!((swept.distance - 4.5).abs() < 1e-3, "{swept:?}");
    // turned a quarter about z, the probe's "down" points along +x: the wall
    // at x = 16 is 4 m from (12, 1, 12)
    *app.world_mut().get_mut::<Transform>(probe).unwrap() =
        Transform::from_xyz(12.0, 1.0, 12.0).with_rotation(Quat::from_rotation_z(FRAC_PI_2));
    app.update();
    let ray = app
        .world()
        .get::<KilnRayCasterHit>(probe)
        .unwrap()
        .0
        .unwrap();
    assert!(
        (ray.distance - 4.0).abs() < 1e-3 && ray.normal.x < -0.99,
        "{ray:?}"
    );
    // nothing within reach: no hit
    app.world_mut()
        .get_mut::<KilnRayCaster>(probe)
        .unwrap()
        .max_distance = 1.0;
    app.update();
    assert_eq!(app.world().get::<KilnRayCasterHit>(probe).unwrap().0, None);

    // a trigger zone and a ball that goes in and out
    let zone = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(2.0, 2.0, 2.0)).trigger(),
            Transform::from_xyz(3.0, 1.0, 15.0),
        ))
        .id();
    let ball = app
        .world_mut()
        .spawn((
            KilnBody::shape(Sphere::new(0.3)),
            Transform::from_xyz(3.0, 6.0, 15.0),
        ))
        .id();
    app.update();
    app.update();
    let inside = |app: &App| {
        app.world()
            .get::<KilnTriggerContacts>(zone)
            .map(|c| c.0.clone())
    };
    assert_eq!(inside(&app), Some(vec![]));
    app.world_mut()
        .get_mut::<Transform>(ball)
        .unwrap()
        .translation
        .y = 1.0;
    app.update();
    assert_eq!(inside(&app), Some(vec![ball]));
    app.world_mut()
        .get_mut::<Transform>(ball)
        .unwrap()
        .translation
        .y = 6.0;
    app.update();
    assert_eq!(inside(&app), Some(vec![]));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn gltf_is_processed_into_archives_with_meta_settings() {
    let dir = assets("process");
    let a = dir.join("assets");
    std::fs::copy(
        root().join("samples/shape_collection.glb"),
        a.join("shapes.kiln.glb"),
    )
    .unwrap();
    std::fs::copy(
        root().join("samples/moving_course.gltf"),
        a.join("course.kiln.gltf"),
    )
    .unwrap();
    // the course baked with every object a triangle mesh in sphere trees
    std::fs::write(
        a.join("course.kiln.gltf.meta"),
        r#"(
    meta_format_version: "1.0",
    asset: Process(
        processor: "kiln_bevy::bake::KilnBake",
        settings: (classify: false, mesh_tree: Sphere),
    ),
)"#,
    )
    .unwrap();
    let mut app = processed_app(&dir);
    let server = app.world().resource::<AssetServer>().clone();
    let shapes: Handle<kiln_bevy::KilnArchive> = server.load("shapes.kiln.glb");
    let course: Handle<kiln_bevy::KilnArchive> = server.load("course.kiln.gltf");
    until(&mut app, "both process and load", |app| {
        let archives = app.world().resource::<Assets<kiln_bevy::KilnArchive>>();
        archives.get(&shapes).is_some() && archives.get(&course).is_some()
    });
    // byte for byte what the baker makes of the same sources and settings
    let processed =
        |name: &str| std::fs::read(dir.join("imported").join(name)).expect("the processed archive");
    let body = kiln_formats::HEADER_LEN;
    assert_eq!(
        processed("shapes.kiln.glb")[body..],
        bake("samples/shape_collection.glb")[body..]
    );
    let mut settings = kiln_baker::BakeSettings::default().all_meshes();
    settings.mesh_tree = kiln_formats::tri_mesh::TreeKind::Sphere;
    let expected = kiln_baker::bake_file(&root().join("samples/moving_course.gltf"), &settings)
        .unwrap()
        .bytes;
    let got = processed("course.kiln.gltf");
    assert_eq!(got[body..], expected[body..], "the course's archive body");
    let archives = app.world().resource::<Assets<kiln_bevy::KilnArchive>>();
    let course = &archives.get(&course).unwrap().level;
    assert_eq!(course.object_count(), 17);
    assert!(course.find_object("lift").is_some());
    std::fs::remove_dir_all(dir).ok();
}

/// A source the processor cannot bake reaches the app with the baker's
/// reason (not Bevy's "Path not found"), and leaves a failure record, not
/// an empty file, where the archive would be.
#[test]
fn a_source_that_does_not_bake_tells_the_app_why() {
    let dir = assets("process-fail");
    let a = dir.join("assets");
    std::fs::write(a.join("broken.kiln.gltf"), "{ not json").unwrap();
    std::fs::copy(
        root().join("samples/moving_course.gltf"),
        a.join("strict.kiln.gltf"),
    )
    .unwrap();
    std::fs::write(
        a.join("strict.kiln.gltf.meta"),
        r#"(
    meta_format_version: "1.0",
    asset: Process(
        processor: "kiln_bevy::bake::KilnBake",
        settings: (max_faces: 2),
    ),
)"#,
    )
    .unwrap();
    let mut app = processed_app(&dir);
    let server = app.world().resource::<AssetServer>().clone();
    app.world_mut()
        .spawn(KilnLevel(server.load("broken.kiln.gltf")));
    let strict: Handle<KilnArchive> = server.load("strict.kiln.gltf");
    let broken = |app: &App| {
        let seen = app.world().resource::<Seen>();
        seen.failures
            .iter()
            .find(|f| f.path.contains("broken"))
            .cloned()
    };
    until(&mut app, "the failure is reported", |app| {
        broken(app).is_some()
    });
    let failure = broken(&app).unwrap();
    assert!(
        failure.error.contains("could not bake")
            && failure.error.contains("broken.kiln.gltf")
            && !failure.error.contains("not found"),
        "{failure:?}"
    );
    until(&mut app, "the strict source's failure", |_| {
        server.load_state(&strict).is_failed()
    });
    let why = match server.load_state(&strict) {
        bevy::asset::LoadState::Failed(e) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        why.contains("strict.kiln.gltf: bake settings") && why.contains('2'),
        "{why}"
    );
    // what lies where the archives would be: the reason, never an empty file
    for name in ["broken.kiln.gltf", "strict.kiln.gltf"] {
        let record = std::fs::read(dir.join("imported").join(name)).unwrap();
        assert!(
            record.starts_with(b"KILN BAKE FAILED\n") && record.len() > 40,
            "{name}: {:?}",
            String::from_utf8_lossy(&record)
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_replaced_archive_reaches_the_running_app_and_a_broken_one_is_refused() {
    let dir = assets("reload");
    let path = dir.join("assets/level.kiln");
    std::fs::write(&path, bake("samples/walk_course.gltf")).unwrap();
    let mut app = app(&dir, AssetMode::Unprocessed, true);
    let handle = app.world().resource::<AssetServer>().load("level.kiln");
    app.world_mut().spawn(KilnLevel(handle));
    until(&mut app, "the level loads", ready);
    let crate_ = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
            Transform::from_xyz(2.0, 3.0, 16.0),
        ))
        .id();
    app.update();
    assert!(ask(&mut app, |q| q
        .world()
        .level()
        .unwrap()
        .find_object("lift")
        .is_none()));
    // the moving course replaces it on disk, as `baker watch` would
    std::thread::sleep(Duration::from_millis(50));
    replace(&path, &bake("samples/moving_course.gltf"));
    until(&mut app, "the new level arrives", |app| {
        app.world()
            .resource::<KilnWorld>()
            .level()
            .is_some_and(|l| l.find_object("lift").is_some())
    });
    app.update();
    let mut movers = app.world_mut().query::<(&Name, &KilnMover)>();
    assert!(
        movers.iter(app.world()).any(|(n, _)| n.as_str() == "lift"),
        "the lift's entity"
    );
    let hit = ask(&mut app, down_at(2.0, 16.0)).unwrap();
    assert_eq!(hit.entity, crate_, "bodies stay across a reload");
    // a broken archive: reported, and the level stays
    let good = std::fs::read(&path).unwrap();
    replace(&path, &good[..good.len() / 2]);
    until(&mut app, "the failure is reported", |app| {
        !app.world().resource::<Seen>().failures.is_empty()
    });
    let failure = app.world().resource::<Seen>().failures[0].clone();
    assert!(
        failure.path.contains("level.kiln") && failure.error.contains("truncated"),
        "{failure:?}"
    );
    for _ in 0..10 {
        app.update();
    }
    assert!(
        app.world()
            .resource::<KilnWorld>()
            .level()
            .unwrap()
            .find_object("lift")
            .is_some()
    );
    let floor = ask(&mut app, down_at(12.0, 5.0)).unwrap();
    assert!(floor.point.y.abs() < 1e-4);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bodies_outlive_their_level_and_join_the_next() {
    let dir = assets("next_level");
    let (mut app, level) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    std::fs::write(
        dir.join("assets/moving.kiln"),
        bake("samples/moving_course.gltf"),
    )
    .unwrap();
    let ball = app
        .world_mut()
        .spawn((
            KilnBody::shape(Sphere::new(0.5)),
            Transform::from_xyz(1.0, 3.0, 1.0),
        ))
        .id();
    app.update();
    assert_eq!(
        ask(&mut app, down_at(1.0, 1.0)).map(|h| h.entity),
        Some(ball)
    );
    // the level despawned: no world, no answers
    app.world_mut().despawn(level);
    app.update();
    assert!(ask(&mut app, down_at(1.0, 1.0)).is_none());
    // a new level: the ball is in it, and its lift has an entity
    let handle = app.world().resource::<AssetServer>().load("moving.kiln");
    app.world_mut().spawn(KilnLevel(handle));
    until(&mut app, "the next level loads", ready);
    app.update();
    assert_eq!(
        ask(&mut app, down_at(1.0, 1.0)).map(|h| h.entity),
        Some(ball)
    );
    let mut movers = app.world_mut().query::<(&Name, &KilnMover)>();
    assert!(movers.iter(app.world()).any(|(n, _)| n.as_str() == "lift"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_level_replaced_in_one_frame_brings_its_own_movers() {
    let dir = assets("replaced");
    let (mut app, level) = level_with(&dir, "moving.kiln", "samples/moving_course.gltf");
    app.update();
    // the same course under another name: the same object numbers
    std::fs::write(
        dir.join("assets/moving_again.kiln"),
        bake("samples/moving_course.gltf"),
    )
    .unwrap();
    let handle = app
        .world()
        .resource::<AssetServer>()
        .load("moving_again.kiln");
    app.world_mut().despawn(level);
    let next = app.world_mut().spawn(KilnLevel(handle)).id();
    let lift_of = move |app: &mut App| {
        let mut movers = app.world_mut().query::<(Entity, &Name, &ChildOf)>();
        movers
            .iter(app.world())
            .find(|(_, n, parent)| n.as_str() == "lift" && parent.parent() == next)
            .map(|(e, ..)| e)
    };
    until(&mut app, "the new level's lift", |app| {
        lift_of(app).is_some()
    });
    // its lift answers by its own entity, where it was baked, in the
    // frame its entity appears
    let lift = lift_of(&mut app);
    let hit = ask(&mut app, down_at(12.0, 17.0)).unwrap();
    assert_eq!(Some(hit.entity), lift);
    assert!((hit.point.y - 0.2).abs() < 1e-4, "{hit:?}");
    std::fs::remove_dir_all(dir).ok();
}

/// An edit of a glTF's JSON.
type Edit = dyn Fn(&mut serde_json::Value);

/// The fixture the reload tests edit.
const MOVERS: &str = "tests/fixtures/colliders/movers.gltf";

/// Every mover and trigger of the current level has exactly one entity,
/// named as its object, mapped both ways, with the components of what it
/// is now; no other entity claims to be one.
fn one_entity_per_mover_and_trigger(app: &mut App, what: &str) {
    let mut q = app
        .world_mut()
        .query::<(Entity, &Name, Option<&KilnMover>, Option<&KilnTrigger>)>();
    let found: Vec<(Entity, String, Option<KilnMover>, Option<KilnTrigger>)> = q
        .iter(app.world())
        .filter(|(_, _, m, t)| m.is_some() || t.is_some())
        .map(|(e, n, m, t)| (e, n.to_string(), m.copied(), t.copied()))
        .collect();
    let kiln = app.world().resource::<KilnWorld>();
    let level = kiln.level().expect("a level").clone();
    let objects: Vec<_> = level.movers_and_triggers().collect();
    assert_eq!(
        found.len(),
        objects.len(),
        "{what}: entities {found:?} for {} movers and triggers",
        objects.len()
    );
    for o in objects {
        let name = level.object_name(o).unwrap_or_default().into_owned();
        let mine: Vec<_> = found.iter().filter(|f| f.1 == name).collect();
        assert_eq!(mine.len(), 1, "{what}: {name}: {mine:?}");
        let (e, _, mover, trigger) = mine[0];
        assert_eq!(kiln.entity(o), Some(*e), "{what}: {name}'s entity");
        assert_eq!(kiln.object(*e), Some(o), "{what}: {name}'s object");
        let moves = level.object_motion(o) != Some(kiln_bevy::kiln_runtime::Motion::Static);
        assert_eq!(
            mover.map(|m| m.object),
            moves.then_some(o),
            "{what}: {name}"
        );
        assert_eq!(
            trigger.map(|t| t.object),
            level.is_trigger(o).then_some(o),
            "{what}: {name}"
        );
    }
}

#[test]
fn every_reload_edit_leaves_one_entity_per_mover_and_trigger() {
    let dir = assets("edits");
    std::fs::write(
        dir.join("assets/edit0.kiln"),
        bake("tests/fixtures/colliders/movers.gltf"),
    )
    .unwrap();
    let mut app = app(&dir, AssetMode::Unprocessed, false);
    let handle = app.world().resource::<AssetServer>().load("edit0.kiln");
    let level = app.world_mut().spawn(KilnLevel(handle)).id();
    until(&mut app, "the level loads", ready);
    app.update();
    one_entity_per_mover_and_trigger(&mut app, "first load");
    let node = |g: &serde_json::Value, name: &str| {
        g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .position(|n| n["name"] == name)
            .unwrap()
    };
    let scene = |g: &mut serde_json::Value| -> Vec<serde_json::Value> {
        g["scenes"][0]["nodes"].as_array().unwrap().clone()
    };
    let edits: Vec<(&str, Box<Edit>)> = vec![
        (
            // a trigger deleted and a static wall added before the movers:
            // the movers after it take new numbers, one the deleted
            // trigger's
            "delete a trigger, add a wall",
            Box::new(move |g| {
                let zone = node(g, "Zone");
                let wall = g["nodes"].as_array().unwrap().len();
                g["nodes"].as_array_mut().unwrap().push(serde_json::json!({
                    "name": "Wall", "mesh": 2, "translation": [20, 0, 0],
                    "extensions": {"KHR_physics_rigid_bodies":
                        {"collider": {"geometry": {"node": wall}}}}
                }));
                let mut nodes = scene(g);
                nodes.retain(|n| n.as_u64() != Some(zone as u64));
                nodes.insert(0, wall.into());
                g["scenes"][0]["nodes"] = nodes.into();
            }),
        ),
        (
            "rename a mover",
            Box::new(move |g| {
                let door = node(g, "Door");
                g["nodes"][door]["name"] = "Gate".into();
            }),
        ),
        (
            "reverse the order",
            Box::new(move |g| {
                let mut nodes = scene(g);
                nodes.reverse();
                g["scenes"][0]["nodes"] = nodes.into();
            }),
        ),
        (
            // a trigger that becomes a mover and a mover that becomes a
            // trigger, keeping their names
            "swap what two are",
            Box::new(move |g| {
                let (zone, door) = (node(g, "Zone"), node(g, "Door"));
                let z = g["nodes"][zone]["extensions"].clone();
                g["nodes"][zone]["extensions"] = g["nodes"][door]["extensions"].clone();
                g["nodes"][door]["extensions"] = z;
            }),
        ),
        ("back to the first", Box::new(|_| {})),
    ];
    for (k, (what, edit)) in edits.iter().enumerate() {
        let file = format!("edit{}.kiln", k + 1);
        std::fs::write(
            dir.join("assets").join(&file),
            bake_edited(&dir, MOVERS, &format!("edit{}", k + 1), edit),
        )
        .unwrap();
        let handle = app.world().resource::<AssetServer>().load(file);
        let id = handle.id();
        app.world_mut().entity_mut(level).insert(KilnLevel(handle));
        until(&mut app, what, |app| {
            let archives = app.world().resource::<Assets<KilnArchive>>();
            let current = app.world().resource::<KilnWorld>().level().cloned();
            archives
                .get(id)
                .zip(current)
                .is_some_and(|(a, l)| std::sync::Arc::ptr_eq(&a.level, &l))
        });
        // despawns and spawns land at the next sync point
        app.update();
        one_entity_per_mover_and_trigger(&mut app, what);
    }
    std::fs::remove_dir_all(dir).ok();
}

/// `MinimalPlugins` has no `TransformPlugin`: without it bodies and movers
/// would never move, so the plugin says so at start-up.
#[test]
#[should_panic(expected = "KilnPlugin needs Bevy's TransformPlugin")]
fn an_app_without_transforms_is_refused_with_a_reason() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), KilnPlugin));
    app.finish();
}

/// A body whose transform scales it is refused with a message naming the
/// scale, never silently placed at another size than the mesh drawn; a
/// scale it takes on later leaves it where it was, with the message again.
#[test]
fn a_scaled_body_is_refused_with_a_reason() {
    let dir = assets("scaled");
    let (mut app, _) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    let scaled = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
            Transform::from_xyz(2.0, 3.0, 16.0).with_scale(Vec3::splat(2.0)),
        ))
        .id();
    let plain = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
            Transform::from_xyz(4.0, 3.0, 16.0),
        ))
        .id();
    app.update();
    app.update();
    let seen = &app.world().resource::<Seen>().rejected;
    assert!(
        seen.iter()
            .any(|r| r.entity == scaled && r.error.contains("scales it by")),
        "{seen:?}"
    );
    let kiln = app.world().resource::<KilnWorld>();
    assert!(kiln.object(scaled).is_none());
    assert!(kiln.object(plain).is_some());
    // scaled after it was placed: it stays where it was
    let before = ask(&mut app, down_at(4.0, 16.0)).expect("the plain box");
    assert_eq!(before.entity, plain);
    app.world_mut()
        .entity_mut(plain)
        .insert(Transform::from_xyz(4.0, 5.0, 16.0).with_scale(Vec3::splat(3.0)));
    app.update();
    app.update();
    let seen = &app.world().resource::<Seen>().rejected;
    assert!(seen.iter().any(|r| r.entity == plain), "{seen:?}");
    let after = ask(&mut app, down_at(4.0, 16.0)).expect("still there");
    assert_eq!((after.entity, after.point), (plain, before.point));
    std::fs::remove_dir_all(dir).ok();
}

/// A prefab copy follows its archive's reload: made again from the new
/// archive, where it now places the object.
#[test]
fn prefab_copies_follow_their_archive_s_reload() {
    let dir = assets("prefab");
    let (mut app, _) = level_with(&dir, "walk.kiln", "samples/walk_course.gltf");
    std::fs::write(
        dir.join("assets/prefab.kiln"),
        bake("tests/fixtures/colliders/movers.gltf"),
    )
    .unwrap();
    let prefab: Handle<KilnArchive> = app.world().resource::<AssetServer>().load("prefab.kiln");
    let copy = app
        .world_mut()
        .spawn((
            KilnBody::copy(prefab.clone(), "Floor"),
            Transform::from_xyz(100.0, 0.0, 100.0),
        ))
        .id();
    until(&mut app, "the copy is placed", |app| {
        app.world().resource::<KilnWorld>().object(copy).is_some()
    });
    let before = ask(&mut app, down_at(100.0, 100.0)).expect("the copied floor");
    assert_eq!(before.entity, copy);
    // the prefab re-baked with its floor 2 m higher, swapped in as a
    // reload swaps it
    let raised = bake_edited(&dir, MOVERS, "raised", |g| {
        g["nodes"][0]["translation"] = serde_json::json!([0, 2, 0]);
    });
    let level = std::sync::Arc::new(kiln_bevy::kiln_runtime::Level::from_bytes(&raised).unwrap());
    let _ = app
        .world_mut()
        .resource_mut::<Assets<KilnArchive>>()
        .insert(prefab.id(), KilnArchive { level });
    app.update();
    app.update();
    let after = ask(&mut app, down_at(100.0, 100.0)).expect("the copied floor");
    assert_eq!(after.entity, copy);
    assert!(
        (after.point.y - before.point.y - 2.0).abs() < 1e-4,
        "{before:?} then {after:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}
