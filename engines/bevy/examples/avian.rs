//! Avian physics on Kiln's colliders in a headless Bevy app: the moving
//! course loads, every object becomes an Avian body built from the
//! archive (`KilnAvianPlugin`), then a crate is dropped on the lift and a
//! ball is dropped on the floor and rolled at the wall. The lift carries
//! the crate up; the ball stops against the wall. Both are Kiln bodies too, so Kiln's queries
//! see them where Avian moved them.
//!
//! ```sh
//! cargo run --release -p kiln-bevy --features avian --example avian
//! ```

use std::path::PathBuf;
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use kiln_bevy::avian3d::prelude::*;
use kiln_bevy::{
    KilnAvianPlugin, KilnBody, KilnFilter, KilnLevel, KilnMover, KilnPlugin, KilnQuery,
    KilnStaticCollider,
};

/// Where the story is.
#[derive(Resource, Default)]
struct Story {
    frame: u32,
    crate_: Option<Entity>,
    ball: Option<Entity>,
    lift: Option<Entity>,
    lift_from: f32,
    crate_landed: Option<f32>,
    done: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let assets = root.join("target/kiln-bevy-avian-example");
    std::fs::create_dir_all(&assets)?;
    let baked = kiln_baker::bake_file(
        &root.join("samples/moving_course.gltf"),
        &Default::default(),
    )?;
    std::fs::write(assets.join("moving_course.kiln"), baked.bytes)?;
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: assets.display().to_string(),
            watch_for_changes_override: Some(false),
            ..default()
        },
        TransformPlugin,
        KilnPlugin,
        PhysicsPlugins::default(),
        KilnAvianPlugin::default(),
    ))
    // a steady 60 Hz, whatever the machine
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .init_resource::<Story>()
    .add_systems(
        Startup,
        |mut commands: Commands, assets: Res<AssetServer>| {
            commands.spawn(KilnLevel(assets.load("moving_course.kiln")));
        },
    )
    .add_systems(Update, (begin, play));
    // as `App::run` does before its first update (Avian finishes setting
    // itself up there)
    app.finish();
    app.cleanup();
    for _ in 0..1200 {
        app.update();
        if app.world().resource::<Story>().done {
            return Ok(());
        }
    }
    Err("the story did not end within 1200 frames".into())
}

/// Once Avian has the level: the crate over the lift, the ball near the
/// wall.
fn begin(
    mut commands: Commands,
    mut story: ResMut<Story>,
    statics: Query<&KilnStaticCollider>,
    movers: Query<(Entity, &Name, &Transform, &RigidBody), With<KilnMover>>,
) {
    if story.crate_.is_some() || statics.is_empty() {
        return;
    }
    let Some((lift, _, at, kind)) = movers.iter().find(|m| m.1.as_str() == "lift") else {
        println!("no mover called \"lift\"");
        story.done = true;
        return;
    };
    println!(
        "level in Avian: {} static colliders, {} movers (the lift {kind:?})",
        statics.iter().count(),
        movers.iter().count()
    );
    story.lift = Some(lift);
    story.lift_from = at.translation.y;
    // Avian simulates them; KilnBody puts them in Kiln's world as well
    story.crate_ = Some(
        commands
            .spawn((
                Name::new("crate"),
                RigidBody::Dynamic,
                Collider::cuboid(0.5, 0.5, 0.5),
                KilnBody::shape(Cuboid::new(0.5, 0.5, 0.5)),
                Transform::from_translation(at.translation + Vec3::Y * 1.5),
            ))
            .id(),
    );
    story.ball = Some(
        commands
            .spawn((
                Name::new("ball"),
                RigidBody::Dynamic,
                Collider::sphere(0.2),
                // rolled at the wall, with some rolling resistance
                LinearVelocity(Vec3::new(3.0, 0.0, 0.0)),
                AngularDamping(1.5),
                KilnBody::shape(Sphere::new(0.2)),
                Transform::from_xyz(13.0, 0.5, 5.0),
            ))
            .id(),
    );
}

/// Raises the lift once the crate has landed on it; reports where the
/// crate and the ball came to rest.
fn play(
    mut story: ResMut<Story>,
    kiln: KilnQuery,
    mut lifts: Query<&mut Transform, With<KilnMover>>,
    bodies: Query<(&Transform, &LinearVelocity), Without<KilnMover>>,
) {
    let (Some(crate_), Some(ball), Some(lift)) = (story.crate_, story.ball, story.lift) else {
        return;
    };
    story.frame += 1;
    let (Ok((c, cv)), Ok((b, bv)), Ok(mut lift_at)) =
        (bodies.get(crate_), bodies.get(ball), lifts.get_mut(lift))
    else {
        return;
    };
    let resting = |v: &LinearVelocity| v.length() < 0.01;

    match story.crate_landed {
        None if story.frame > 30 && resting(cv) => {
            story.crate_landed = Some(c.translation.y);
            println!(
                "frame {}: the crate landed on the lift at y = {:.3}; the lift starts up",
                story.frame, c.translation.y
            );
        }
        Some(_) if lift_at.translation.y < story.lift_from + 2.0 => {
            lift_at.translation.y += 0.02;
        }
        Some(from) if resting(cv) && resting(bv) && !story.done => {
            let under = |p: Vec3, skip: Entity| {
                kiln.raycast(p, Dir3::NEG_Y, 10.0, &KilnFilter::default().exclude([skip]))
                    .map(|h| {
                        (
                            kiln.name(h.object).unwrap_or_default().into_owned(),
                            h.point.y,
                        )
                    })
            };
            let (on, y) = under(c.translation, crate_).unwrap_or_default();
            println!(
                "frame {}: the crate came to rest at ({:.2}, {:.3}, {:.2}) on {on} (whose top is at \
                 y = {y:.3} by Kiln's ray): it rode the lift from y = {from:.3}",
                story.frame, c.translation.x, c.translation.y, c.translation.z
            );
            let (on, y) = under(b.translation, ball).unwrap_or_default();
            println!(
                "frame {}: the ball came to rest at ({:.2}, {:.3}, {:.2}) on {on} (y = {y:.3} by \
                 Kiln's ray)",
                story.frame, b.translation.x, b.translation.y, b.translation.z
            );
            story.done = true;
        }
        _ => {}
    }
}
