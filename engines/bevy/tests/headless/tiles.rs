//! A world of tiles in a headless Bevy app (a module of the headless test
//! program: one Bevy link, not two): a `.kilnworld` manifest as an
//! asset, its tiles streamed around a focus entity 100 km out (Bevy's zero
//! moved there), a tile replaced on disk reloaded in place, tiles dropped
//! and their archives freed when the focus leaves, and a missing tile
//! reported while the rest mount.

use std::path::Path;
use std::time::Duration;

use bevy::asset::AssetMode;
use bevy::math::DVec3;
use bevy::prelude::*;
use kiln_bevy::{
    KilnArchive, KilnBody, KilnFilter, KilnFocus, KilnQuery, KilnRayHit, KilnSystems,
    KilnTileChange, KilnTileEvent, KilnTiles, KilnWorld,
};

use super::{ask, replace};
use crate::common::{assets, root, until};

/// Where the course's tiles sit in the world: Bevy's zero is put there.
const OUT: DVec3 = DVec3::new(100_000.0, 0.0, -30_000.0);

/// The tile events Kiln wrote, collected as they come (its other
/// messages: the headless program's `Seen`).
#[derive(Resource, Default)]
struct TileEvents(Vec<KilnTileEvent>);

fn collect_tiles(mut seen: ResMut<TileEvents>, mut t: MessageReader<KilnTileEvent>) {
    seen.0.extend(t.read().cloned());
}

/// The headless program's app over `dir/assets`, collecting tile events.
fn app(dir: &Path, watch: bool) -> App {
    let mut app = super::app(dir, AssetMode::Unprocessed, watch);
    app.init_resource::<TileEvents>()
        .add_systems(PostUpdate, collect_tiles.after(KilnSystems::Sync));
    app
}

fn events(app: &App) -> &[KilnTileEvent] {
    &app.world().resource::<TileEvents>().0
}

/// The course's manifest loaded and streamed by a `KilnTiles` entity, its
/// zero at [`OUT`], 2 m around every focus.
fn spawn_tiles(app: &mut App) -> Entity {
    let manifest = app
        .world()
        .resource::<AssetServer>()
        .load("course.kilnworld");
    app.world_mut()
        .spawn(KilnTiles::new(manifest, 2.0).with_origin(OUT))
        .id()
}

/// The walk course cut into 10 m tiles (with `edit` applied to its glTF
/// first): each tile's file name and bytes, at its grid origin.
fn course_tiles(
    dir: &Path,
    edit: impl Fn(&mut serde_json::Value),
) -> Vec<(String, Vec<u8>, [f64; 3])> {
    let mut gltf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("samples/walk_course.gltf")).unwrap())
            .unwrap();
    edit(&mut gltf);
    let path = dir.join("course.gltf");
    std::fs::write(&path, serde_json::to_vec(&gltf).unwrap()).unwrap();
    let scene = kiln_baker::ingest::load(&path).unwrap().scene;
    let world = kiln_baker::tile::bake_tiled(&scene, &Default::default(), 10.0, "course").unwrap();
    world
        .manifest
        .tiles
        .iter()
        .zip(world.tiles)
        .map(|(t, b)| (t.file.clone(), b.bytes, t.origin))
        .collect()
}

/// Writes the tiles into `assets/` and a manifest listing them `OUT` away.
fn write_world(dir: &Path, tiles: &[(String, Vec<u8>, [f64; 3])]) {
    let folder = dir.join("assets");
    let mut listed = Vec::new();
    for (file, bytes, origin) in tiles {
        std::fs::write(folder.join(file), bytes).unwrap();
        let at = DVec3::from(*origin) + OUT;
        listed.push((file.clone(), at.to_array()));
    }
    let (_, bytes) = kiln_baker::tile::world_of_archives(&folder, &listed).unwrap();
    std::fs::write(folder.join("course.kilnworld"), bytes).unwrap();
}

fn down_at(x: f32, z: f32, f: KilnFilter) -> impl Fn(KilnQuery) -> Option<(KilnRayHit, String)> {
    move |q| {
        let hit = q.raycast(Vec3::new(x, 10.0, z), Dir3::NEG_Y, 100.0, &f)?;
        let name = q.name(hit.object).unwrap_or_default().into_owned();
        Some((hit, name))
    }
}

fn count(app: &App, change: &KilnTileChange) -> usize {
    events(app).iter().filter(|e| &e.change == change).count()
}

fn mounted(app: &App) -> usize {
    app.world()
        .resource::<KilnWorld>()
        .world()
        .map_or(0, |w| w.tiles().count())
}

fn set_focus(app: &mut App, focus: Entity, at: Vec3) {
    app.world_mut()
        .get_mut::<Transform>(focus)
        .unwrap()
        .translation = at;
}

#[test]
fn tiles_stream_around_a_focus_entity_far_out_and_reload_in_place() {
    let dir = assets("tiles-stream");
    let tiles = course_tiles(&dir, |_| {});
    assert_eq!(tiles.len(), 4);
    write_world(&dir, &tiles);
    let mut app = app(&dir, true);
    let world = spawn_tiles(&mut app);
    let focus = app
        .world_mut()
        .spawn((KilnFocus, Transform::from_xyz(3.0, 1.0, 3.0)))
        .id();
    // in the middle of the first tile: that tile alone
    until(&mut app, "the first tile mounts", |app| mounted(app) == 1);
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(mounted(&app), 1);
    assert_eq!(count(&app, &KilnTileChange::Mounted), 1);
    assert_eq!(events(&app)[0].file, "course.0.0.kiln");
    let (hit, name) = ask(&mut app, down_at(3.0, 3.0, KilnFilter::default())).unwrap();
    assert_eq!((hit.entity, name.as_str()), (world, "floor_0"));
    assert!(hit.point.y.abs() < 1e-5, "{hit:?}");
    // a body in a world of tiles alone; the tiles entity can be excluded
    let crate_ = app
        .world_mut()
        .spawn((
            KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
            Transform::from_xyz(3.0, 0.5, 3.0),
        ))
        .id();
    app.update();
    let (hit, _) = ask(&mut app, down_at(3.0, 3.0, KilnFilter::default())).unwrap();
    assert_eq!(hit.entity, crate_);
    assert!((hit.point.y - 1.0).abs() < 1e-5);
    let past = ask(
        &mut app,
        down_at(2.0, 2.0, KilnFilter::default().exclude([world])),
    );
    assert!(past.is_none(), "{past:?}");
    // where four tiles meet: the other three join
    set_focus(&mut app, focus, Vec3::new(9.5, 1.0, 9.5));
    until(&mut app, "four tiles", |app| mounted(app) == 4);
    let (hit, name) = ask(&mut app, down_at(12.0, 5.0, KilnFilter::default())).unwrap();
    assert_eq!((hit.entity, name.as_str()), (world, "floor_1"));
    // the step's tile re-baked with the step 0.3 m higher, replaced on disk
    let step = |app: &mut App| ask(app, down_at(5.0, 6.0, KilnFilter::default())).unwrap();
    let (before, name) = step(&mut app);
    assert_eq!(name, "high_step");
    let raised = course_tiles(&dir, |g| {
        for node in g["nodes"].as_array_mut().unwrap() {
            if node["name"] == "high_step" {
                let y = node["translation"][1].as_f64().unwrap();
                node["translation"][1] = (y + 0.3).into();
            }
        }
    });
    let (file, bytes, _) = raised
        .iter()
        .zip(&tiles)
        .find(|(new, old)| new.1 != old.1)
        .map(|(new, _)| new)
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    replace(&dir.join("assets").join(file), bytes);
    until(&mut app, "the tile reloads", |app| {
        count(app, &KilnTileChange::Reloaded) == 1
    });
    let reloaded = events(&app)
        .iter()
        .find(|e| e.change == KilnTileChange::Reloaded)
        .unwrap()
        .file
        .clone();
    assert_eq!(&reloaded, file);
    assert_eq!(mounted(&app), 4);
    let (after, _) = step(&mut app);
    assert!(
        (after.point.y - before.point.y - 0.3).abs() < 1e-4,
        "{before:?} {after:?}"
    );
    // far away: every tile dropped, and the archives let go of
    set_focus(&mut app, focus, Vec3::new(500.0, 1.0, 500.0));
    until(&mut app, "the tiles drop", |app| mounted(app) == 0);
    assert_eq!(count(&app, &KilnTileChange::Dropped), 4);
    until(&mut app, "the archives are freed", |app| {
        app.world().resource::<Assets<KilnArchive>>().is_empty()
    });
    // the crate is still a body of the world
    let (hit, _) = ask(&mut app, down_at(3.0, 3.0, KilnFilter::default())).unwrap();
    assert_eq!(hit.entity, crate_);
    assert!(app.world().resource::<super::Seen>().failures.is_empty());
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_missing_tile_is_reported_and_the_others_mount() {
    let dir = assets("tiles-missing");
    let tiles = course_tiles(&dir, |_| {});
    write_world(&dir, &tiles);
    std::fs::remove_file(dir.join("assets").join(&tiles[3].0)).unwrap();
    let mut app = app(&dir, false);
    let world = spawn_tiles(&mut app);
    app.world_mut()
        .spawn((KilnFocus, Transform::from_xyz(9.5, 1.0, 9.5)));
    until(&mut app, "three tiles and a failure", |app| {
        mounted(app) == 3
            && events(app)
                .iter()
                .any(|e| matches!(e.change, KilnTileChange::Failed(_)))
    });
    for _ in 0..10 {
        app.update();
    }
    let failed: Vec<KilnTileEvent> = events(&app)
        .iter()
        .filter(|e| matches!(e.change, KilnTileChange::Failed(_)))
        .cloned()
        .collect();
    assert_eq!(failed.len(), 1, "reported once: {failed:?}");
    assert_eq!(
        (failed[0].tile, failed[0].file.as_str()),
        (3, tiles[3].0.as_str())
    );
    // the tiles entity gone: the world goes with it
    app.world_mut().entity_mut(world).despawn();
    until(&mut app, "the world ends", |app| {
        app.world().resource::<KilnWorld>().world().is_none()
    });
    std::fs::remove_dir_all(dir).ok();
}
