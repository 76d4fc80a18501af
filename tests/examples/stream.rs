//! A world streamed around a walking character: a generated open world
//! (a 256 m terrain of 131,072 triangles, flat then hilly, with crates
//! over it, placed 10 km from the world's zero) baked as 64 tiles of 32
//! m, then walked across by a character while a [`Streamer`] keeps the
//! tiles within 40 m mounted and the world's floating origin follows the
//! walk. Prints every tile mounted and dropped, and where the walk ended.
//!
//! ```text
//! cargo run --release -p kiln-tests --example stream [-- OUT_DIR]
//! ```
//!
//! The tiles and manifest go to `OUT_DIR` (default `target/stream`).

use glam::{DAffine3, DVec3, Vec3};
use kiln_baker::BakeSettings;
use kiln_runtime::character::{Character, Ground};
use kiln_runtime::{Filter, Streamer, World, WorldManifest};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/stream"), PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    // the world, 10 km out, baked as tiles of 32 m
    let far = DVec3::new(10_240.0, 0.0, 10_240.0);
    let mut scene = kiln_tests::scenes::terrain_world(256, 1.0, 200, 7);
    for i in &mut scene.instances {
        i.transform = DAffine3::from_translation(far) * i.transform;
    }
    let started = std::time::Instant::now();
    let baked = kiln_baker::tile::bake_tiled(&scene, &BakeSettings::default(), 32.0, "world")?;
    std::fs::write(dir.join("world.kilnworld"), &baked.manifest_bytes)?;
    for (t, b) in baked.manifest.tiles.iter().zip(&baked.tiles) {
        std::fs::write(dir.join(&t.file), &b.bytes)?;
    }
    println!(
        "baked {} tiles of 32 m into {} in {:.1} s",
        baked.tiles.len(),
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    // stream it around a character walking corner to corner
    let manifest = WorldManifest::open(dir.join("world.kilnworld"))?;
    let cell = |k: usize| manifest.tiles()[k].cell;
    let mut streamer = Streamer::new(manifest.clone(), 40.0).ahead(16.0);
    let start = far + DVec3::new(6.0, 1.5, 10.0);
    let mut world = World::tiled(start)?;
    let player = Character::capsule(0.3, 0.6);
    let mut at = world.to_local(start);
    let step = Vec3::new(0.05, 0.0, 0.045); // 4 m/s at 60 Hz, over flat and hills
    let (mut mounts, mut drops, mut most) = (0, 0, 0);
    let mut ground = Ground::InAir;
    let frames = 4800;
    for frame in 0..frames {
        let focus = world.to_global(at);
        // the first frame waits for the tiles under the character
        let report = if frame == 0 {
            streamer.update_blocking(&mut world, &[focus])
        } else {
            streamer.update(&mut world, &[focus])
        };
        for (k, _) in &report.mounted {
            println!("frame {frame:>4}: mounted tile {:?}", cell(*k));
        }
        for (k, _) in &report.dropped {
            println!("frame {frame:>4}: dropped tile {:?}", cell(*k));
        }
        for (k, e) in &report.failed {
            println!("frame {frame:>4}: tile {:?} failed: {e}", cell(*k));
        }
        (mounts, drops) = (mounts + report.mounted.len(), drops + report.dropped.len());
        most = most.max(world.tiles().count());
        // keep the world's zero near the character (a floating origin)
        if at.length() > 64.0 {
            at += world.set_origin(focus)?;
        }
        let m = player.move_and_slide(&world, at, step + Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
        (at, ground) = (m.position, m.ground);
    }
    let end = world.to_global(at) - far;
    println!(
        "walked {frames} frames to ({:.1}, {:.2}, {:.1}) of the world, {}: mounted {mounts}, dropped {drops}, at most {most} of {} tiles mounted",
        end.x,
        end.y,
        end.z,
        match ground {
            Ground::InAir => "in the air",
            Ground::OnGround(_) => "on the ground",
            Ground::OnSteepGround(_) => "on steep ground",
        },
        manifest.tiles().len()
    );
    Ok(())
}
