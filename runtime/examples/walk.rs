//! Walks a capsule character through a level along a path of waypoints,
//! printing its position and ground state every tenth of a second.
//!
//! ```text
//! cargo run --release -p kiln-baker -- bake samples/walk_course.gltf -o target/walk.kiln
//! cargo run --release -p kiln-runtime --example walk -- target/walk.kiln
//! ```
//!
//! The default path is for the bundled walk course: up the stairs onto
//! the platform and off its end, across the floor tiles' seams, into the
//! wall and along it, then up the 20° ramp. Other levels: pass waypoints
//! as `x,z` pairs after the archive (`-- level.kiln 0,0 10,0 10,10`); the
//! character starts 2 m above the first.

use kiln_runtime::character::{Character, Ground};
use kiln_runtime::{Filter, Level, Vec3};

/// Frames per second.
const HZ: f32 = 60.0;
/// Walking speed, m/s.
const SPEED: f32 = 4.0;
/// Gravity, m/s².
const GRAVITY: f32 = 9.81;
/// Frames a leg may take before it counts as blocked.
const MAX_FRAMES: usize = 900;
/// A leg is blocked when half a second moves the character less than this.
const STUCK: f32 = 0.05;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: walk ARCHIVE [x,z ...]");
        std::process::exit(2);
    };
    let level = match Level::open(path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("walk: {path}: {e}");
            std::process::exit(1);
        }
    };
    let mut waypoints: Vec<(f32, f32)> = Vec::new();
    for a in &args[1..] {
        let parsed = a
            .split_once(',')
            .and_then(|(x, z)| Some((x.trim().parse().ok()?, z.trim().parse().ok()?)));
        match parsed {
            Some(p) => waypoints.push(p),
            None => {
                eprintln!("walk: waypoint {a:?} is not x,z");
                std::process::exit(2);
            }
        }
    }
    let start = if waypoints.is_empty() {
        waypoints = vec![
            (8.5, 2.0),
            (12.0, 2.0),
            (12.0, 12.0),
            (17.0, 12.0),
            (15.5, 18.0),
            (2.0, 10.0),
            (9.0, 10.0),
        ];
        Vec3::new(2.0, 1.0, 2.0)
    } else {
        let (x, z) = waypoints.remove(0);
        Vec3::new(x, 2.0, z)
    };

    let player = Character::capsule(0.3, 0.6);
    let mut at = start;
    let mut fall_speed = 0.0f32;
    let mut frame = 0usize;
    println!("{:>6} {:>26}  ground", "time", "position");
    for (leg, &(x, z)) in waypoints.iter().enumerate() {
        let mut arrived = false;
        let mut recent = std::collections::VecDeque::new();
        for _ in 0..MAX_FRAMES {
            recent.push_back(at);
            if recent.len() > 30 {
                let then = recent.pop_front().unwrap_or(at);
                if then.distance(at) < STUCK {
                    break;
                }
            }
            let to = Vec3::new(x - at.x, 0.0, z - at.z);
            let dist = to.length();
            if dist < 0.02 {
                arrived = true;
                break;
            }
            let walk = to / dist * (SPEED / HZ).min(dist);
            fall_speed += GRAVITY / HZ;
            let step = player.move_and_slide(
                &level,
                at,
                walk + Vec3::NEG_Y * (fall_speed / HZ),
                &Filter::ALL,
            );
            at = step.position;
            let ground = match step.ground {
                Ground::InAir => "in the air".to_string(),
                Ground::OnGround(g) => {
                    fall_speed = 0.0;
                    format!(
                        "on {} (normal {:.2})",
                        level.object_name(g.object),
                        g.normal
                    )
                }
                Ground::OnSteepGround(g) => {
                    format!(
                        "sliding on {} (normal {:.2})",
                        level.object_name(g.object),
                        g.normal
                    )
                }
            };
            frame += 1;
            if frame.is_multiple_of(6) {
                println!(
                    "{:>5.1}s {:>26}  {ground}",
                    frame as f32 / HZ,
                    format!("{at:.3}")
                );
            }
        }
        println!(
            "-- leg {} to ({x}, {z}): {}",
            leg + 1,
            if arrived { "arrived" } else { "blocked" }
        );
    }
}
