//! Walks a capsule character through a level along a path of waypoints,
//! printing its position and ground state every tenth of a second.
//!
//! ```text
//! cargo run --release --bin baker -- bake samples/walk_course.gltf -o target/walk.kiln
//! cargo run --release -p kiln-runtime --example walk -- target/walk.kiln
//! ```
//!
//! The default path is for the bundled walk course: up the stairs onto
//! the platform and off its end, across the floor tiles' seams, into the
//! wall and along it, then up the 20° ramp. Other levels: pass waypoints
//! as `x,z` pairs after the archive (`-- level.kiln 0,0 10,0 10,10`); the
//! character starts 2 m above the first.
//!
//! On the bundled moving course, whose lift, turntable and door move, the
//! character rides instead: onto the lift, up 2 m and down again, onto
//! the turning table and round with it, then against the sliding door
//! until it opens and through.
//!
//! ```text
//! cargo run --release --bin baker -- bake samples/moving_course.gltf -o target/moving.kiln
//! cargo run --release -p kiln-runtime --example walk -- target/moving.kiln
//! ```

use kiln_runtime::character::{Character, Ground};
use kiln_runtime::{Filter, Level, Pose, Quat, Vec3, World};

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
    if let (Some(lift), Some(table), Some(door)) = (
        level.find_object("lift"),
        level.find_object("turntable"),
        level.find_object("door"),
    ) && args.len() == 1
    {
        ride(World::new(level), [lift, table, door]);
        return;
    }
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
            if matches!(step.ground, Ground::OnGround(_)) {
                fall_speed = 0.0;
            }
            let ground = describe(&step.ground, |o| {
                level.object_name(o).unwrap_or_default().into_owned()
            });
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

/// The moving course's tour: the world animates its three movers by the
/// clock, the character walks a script of legs and rides what is under it.
fn ride(mut world: World, [lift, table, door]: [kiln_runtime::ObjectId; 3]) {
    let player = Character::capsule(0.3, 0.6);
    let baked = |id| world.pose(id).expect("a mover");
    let (lift0, table0, door0) = (baked(lift), baked(table), baked(door));
    // (where to walk, seconds to stand there after arriving)
    let legs = [
        ((12.0, 17.0), 6.5),
        ((12.0, 9.0), 0.0),
        ((13.0, 7.0), 3.0),
        ((13.0, 10.0), 0.0),
        ((15.5, 10.0), 0.0),
    ];
    let mut at = Vec3::new(12.0, 1.0, 14.5);
    let mut ground = Ground::InAir;
    let mut fall_speed = 0.0f32;
    let mut frame = 0usize;
    let (mut lift_low, mut lift_high) = (f32::INFINITY, f32::NEG_INFINITY);
    let mut turned = 0.0f32;
    let mut door_blocked = 0usize;
    println!("{:>6} {:>26}  ground", "time", "position");
    for (leg, &((x, z), stay)) in legs.iter().enumerate() {
        let mut arrived_at = None;
        for _ in 0..MAX_FRAMES {
            let t = frame as f32 / HZ;
            // the movers by the clock: the lift up 2 m and down over 6 s
            // from t = 1 s; the table turning at 0.6 rad/s; the door
            // sliding open (2.2 m along +z) from t = 16 s
            let rise = if (1.0..=7.0).contains(&t) {
                1.0 - (std::f32::consts::TAU * (t - 1.0) / 6.0).cos()
            } else {
                0.0
            };
            let moves = [
                (
                    lift,
                    Pose::new(lift0.rotation, lift0.translation + Vec3::Y * rise),
                ),
                (
                    table,
                    Pose::new(
                        Quat::from_rotation_y(0.6 * t) * table0.rotation,
                        table0.translation,
                    ),
                ),
                (
                    door,
                    Pose::new(
                        door0.rotation,
                        door0.translation + Vec3::Z * (2.2 * (t - 16.0).clamp(0.0, 1.0)),
                    ),
                ),
            ];
            for (id, pose) in moves {
                world.set_pose(id, pose).expect("movers move");
            }
            world.step();
            let (carried, turn) = player.ride(&world, at, &ground);
            if let Ground::OnGround(g) = ground
                && g.object == table
            {
                turned += turn.to_axis_angle().1 * turn.to_axis_angle().0.y.signum();
            }
            let to = Vec3::new(x - carried.x, 0.0, z - carried.z);
            let dist = to.length();
            let walk = if arrived_at.is_some() || dist < 0.02 {
                Vec3::ZERO
            } else {
                to / dist * (SPEED / HZ).min(dist)
            };
            fall_speed += GRAVITY / HZ;
            let m = player.move_and_slide(
                &world,
                carried,
                walk + Vec3::NEG_Y * (fall_speed / HZ),
                &Filter::ALL,
            );
            if walk != Vec3::ZERO && (m.position - carried).length() < walk.length() * 0.1 {
                door_blocked += usize::from(m.hits.iter().any(|h| h.object == door));
            }
            (at, ground) = (m.position, m.ground);
            if let Ground::OnGround(g) = ground {
                fall_speed = 0.0;
                if g.object == lift {
                    lift_low = lift_low.min(at.y);
                    lift_high = lift_high.max(at.y);
                }
            }
            let on = describe(&ground, |o| {
                world.object_name(o).unwrap_or_default().into_owned()
            });
            frame += 1;
            if frame.is_multiple_of(30) {
                println!(
                    "{:>5.1}s {:>26}  {on}",
                    frame as f32 / HZ,
                    format!("{at:.3}")
                );
            }
            if arrived_at.is_none() && Vec3::new(x - at.x, 0.0, z - at.z).length() < 0.05 {
                arrived_at = Some(frame);
            }
            if arrived_at.is_some_and(|f| (frame - f) as f32 >= stay * HZ) {
                break;
            }
        }
        println!(
            "-- leg {} to ({x}, {z}): {}",
            leg + 1,
            if arrived_at.is_some() {
                "arrived"
            } else {
                "blocked"
            }
        );
    }
    println!("rode the lift from y = {lift_low:.3} to y = {lift_high:.3} and back");
    println!(
        "turned with the turntable by {:.0} degrees",
        turned.to_degrees()
    );
    println!(
        "held by the closed door for {:.1} s, then through",
        door_blocked as f32 / HZ
    );
}

/// The ground state in words: what the character stands or slides on,
/// named by `name`, with the surface's normal.
fn describe(ground: &Ground, name: impl Fn(kiln_runtime::ObjectId) -> String) -> String {
    match ground {
        Ground::InAir => "in the air".to_string(),
        Ground::OnGround(g) => format!("on {} (normal {:.2})", name(g.object), g.normal),
        Ground::OnSteepGround(g) => {
            format!("sliding on {} (normal {:.2})", name(g.object), g.normal)
        }
    }
}
