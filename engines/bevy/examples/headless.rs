//! Kiln in a headless Bevy app, printing what happens: the moving course
//! loads as an asset, its movers appear as entities, a character (a Kiln
//! body too, so it sets off triggers) walks onto the lift through a
//! trigger zone, and the lift carries it up.
//!
//! ```sh
//! cargo run --release -p kiln-bevy --example headless            # bakes samples/moving_course.gltf first
//! cargo run --release -p kiln-bevy --example headless -- my.kiln # any archive with a mover called "lift"
//! ```

use std::path::PathBuf;
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use kiln_bevy::{
    KilnBody, KilnCharacter, KilnFilter, KilnLevel, KilnLevelFailed, KilnMover, KilnPlugin,
    KilnQuery, KilnTriggerEvent, KilnWorld,
};

/// Where the story is.
#[derive(Resource, Default)]
struct Story {
    frame: u32,
    player: Option<Entity>,
    zone: Option<Entity>,
    lift: Option<Entity>,
    lift_from: f32,
    stood: Option<f32>,
    done: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let assets = root.join("target/kiln-bevy-example");
    std::fs::create_dir_all(&assets)?;
    let archive = match std::env::args().nth(1) {
        Some(path) => std::fs::canonicalize(path)?,
        None => {
            let baked = kiln_baker::bake_file(
                &root.join("samples/moving_course.gltf"),
                &Default::default(),
            )?;
            let path = assets.join("moving_course.kiln");
            std::fs::write(&path, baked.bytes)?;
            path
        }
    };
    let dir = archive.parent().unwrap_or(&assets).display().to_string();
    let file = archive.file_name().unwrap().to_string_lossy().into_owned();
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir,
            watch_for_changes_override: Some(false),
            ..default()
        },
        TransformPlugin,
        KilnPlugin,
    ))
    // a steady 60 Hz, whatever the machine
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .init_resource::<Story>()
    .add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>| {
            commands.spawn(KilnLevel(assets.load(file.clone())));
        },
    )
    .add_systems(Update, (begin, walk, report));
    for _ in 0..2000 {
        app.update();
        if app.world().resource::<Story>().done {
            return Ok(());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    Err("the story did not end within 2000 frames".into())
}

/// Once the level is there: name its movers, spawn the player and a zone.
fn begin(
    mut commands: Commands,
    mut story: ResMut<Story>,
    kiln: KilnQuery,
    movers: Query<(Entity, &Name, &Transform), With<KilnMover>>,
) {
    if story.player.is_some() || !kiln.is_ready() || movers.is_empty() {
        return;
    }
    let level = kiln.world().level().unwrap();
    let mut names: Vec<&str> = movers.iter().map(|(_, n, _)| n.as_str()).collect();
    names.sort_unstable();
    println!(
        "level loaded: {} objects; movers as entities: {}",
        level.object_count(),
        names.join(", ")
    );
    let Some((lift, _, at)) = movers.iter().find(|(_, n, _)| n.as_str() == "lift") else {
        println!("no mover called \"lift\": nothing to ride");
        story.done = true;
        return;
    };
    story.lift = Some(lift);
    story.lift_from = at.translation.y;
    if let Some(hit) = kiln.raycast(
        Vec3::new(12.0, 10.0, 14.0),
        Dir3::NEG_Y,
        100.0,
        &KilnFilter::default(),
    ) {
        println!(
            "ray down at (12, 14): {} at y = {:.3}",
            kiln.name(hit.object).unwrap_or_default(),
            hit.point.y
        );
    }
    // the player: a character, and a body so it sets off triggers
    story.player = Some(
        commands
            .spawn((
                Name::new("player"),
                KilnCharacter::capsule(0.3, 0.6),
                KilnBody::shape(Capsule3d::new(0.3, 1.2)),
                Transform::from_xyz(at.translation.x, 1.0, at.translation.z - 4.0),
            ))
            .id(),
    );
    // a trigger zone between the player and the lift
    story.zone = Some(
        commands
            .spawn((
                Name::new("zone"),
                KilnBody::shape(Cuboid::new(2.0, 2.0, 1.0)).trigger(),
                Transform::from_xyz(at.translation.x, 1.0, at.translation.z - 2.0),
            ))
            .id(),
    );
}

/// Walks the player onto the lift, then raises the lift 2 m.
fn walk(
    mut story: ResMut<Story>,
    kiln: Res<KilnWorld>,
    mut players: Query<(&mut KilnCharacter, &Transform), Without<KilnMover>>,
    mut lifts: Query<&mut Transform, With<KilnMover>>,
) {
    let (Some(player), Some(lift)) = (story.player, story.lift) else {
        return;
    };
    let Ok((mut c, at)) = players.get_mut(player) else {
        return;
    };
    story.frame += 1;
    let on_lift = c.ground_object().and_then(|o| kiln.entity(o)) == Some(lift);
    let Ok(mut lift_at) = lifts.get_mut(lift) else {
        return;
    };
    match story.stood {
        None if story.frame == 30 => c.walk = Vec3::new(0.0, 0.0, 2.0),
        None if on_lift && (at.translation.z - lift_at.translation.z).abs() < 0.1 => {
            c.walk = Vec3::ZERO;
            story.stood = Some(at.translation.y);
            println!(
                "frame {}: on the lift at y = {:.3}; it starts up",
                story.frame, at.translation.y
            );
        }
        Some(_) if lift_at.translation.y < story.lift_from + 2.0 => lift_at.translation.y += 0.02,
        Some(stood) if !story.done && story.frame.is_multiple_of(10) => {
            println!(
                "frame {}: rode the lift from y = {stood:.3} to y = {:.3} ({})",
                story.frame,
                at.translation.y,
                if on_lift { "still on it" } else { "fell off" }
            );
            story.done = true;
        }
        _ => {}
    }
}

/// Prints trigger events and load failures.
fn report(
    story: Res<Story>,
    names: Query<&Name>,
    mut triggers: MessageReader<KilnTriggerEvent>,
    mut failed: MessageReader<KilnLevelFailed>,
) {
    for e in triggers.read() {
        let name = |e: Entity| names.get(e).map_or("?".to_string(), |n| n.to_string());
        println!(
            "frame {}: {} {} {}",
            story.frame,
            name(e.body),
            if e.entered { "entered" } else { "left" },
            name(e.trigger)
        );
    }
    for f in failed.read() {
        println!("could not load {}: {}", f.path, f.error);
    }
}
