//! The character controller on the bundled walk course
//! (`samples/walk_course.gltf`, made by `samples/make_walk_course.py`):
//! standing still, slopes, stairs, walls, seams and starting inside.

use glam::Vec3;
use kiln_baker::{BakeSettings, bake_scene};
use kiln_runtime::Ray;
use kiln_runtime::character::{Character, Ground};
use kiln_runtime::{Filter, Level, Pose};

/// The course, baked.
fn course() -> Level {
    let path = kiln_tests::samples_dir().join("walk_course.gltf");
    let scene = kiln_baker::ingest::load(&path)
        .expect("the walk course")
        .scene;
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).expect("opens")
}

/// The player: radius 0.3, 1.8 m tall; standing on the floor its centre
/// is 0.9 m up.
fn player() -> Character<'static> {
    Character::capsule(0.3, 0.6)
}

const STAND: f32 = 0.9;
/// Gravity's part of one 60 Hz frame, a constant fall (metres).
const FALL: Vec3 = Vec3::new(0.0, -0.1, 0.0);

/// Walks `frames` frames of `walk` (metres per frame, horizontal) plus
/// the fall from `from`; the positions after each frame.
fn walk(
    level: &Level,
    c: &Character,
    from: Vec3,
    walk: Vec3,
    frames: usize,
) -> Vec<(Vec3, Ground)> {
    let mut at = from;
    let mut out = Vec::with_capacity(frames);
    for _ in 0..frames {
        let m = c.move_and_slide(level, at, walk + FALL, &Filter::ALL);
        at = m.position;
        out.push((at, m.ground));
    }
    out
}

/// Where a walk ends.
fn end_of(steps: Vec<(Vec3, Ground)>) -> Vec3 {
    steps.last().expect("a walk of at least one frame").0
}

/// The deepest the character is inside anything at `at`.
fn depth(level: &Level, c: &Character, at: Vec3) -> f32 {
    level
        .overlap(&c.shape, &Pose::new(c.rotation, at), &Filter::ALL)
        .iter()
        .map(|o| o.depth)
        .fold(0.0, f32::max)
}

#[test]
fn standing_still_on_flat_ground_and_a_walkable_slope_does_not_drift() {
    let level = course();
    let c = player();
    // on the floor, dropped from a little above
    let start = Vec3::new(2.0, STAND + 0.05, 8.0);
    let steps = walk(&level, &c, start, Vec3::ZERO, 1000);
    let rest = steps[10].0;
    assert!((rest.y - STAND).abs() < 1e-3, "rests at {rest}");
    let drift = steps[10..]
        .iter()
        .map(|s| s.0.distance(rest))
        .fold(0.0, f32::max);
    assert!(drift < 1e-4, "drifts {drift} m on flat ground");
    assert!(
        steps[10..]
            .iter()
            .all(|s| matches!(s.1, Ground::OnGround(_)))
    );
    // on the 20° ramp, halfway up
    let a = 20f32.to_radians();
    let x = 4.0 + 2.0 * a.cos();
    let y = 2.0 * a.sin() + STAND / a.cos();
    let steps = walk(&level, &c, Vec3::new(x, y + 0.05, 10.0), Vec3::ZERO, 1000);
    let rest = steps[10].0;
    let drift = steps[10..]
        .iter()
        .map(|s| s.0.distance(rest))
        .fold(0.0, f32::max);
    assert!(
        drift < 1e-4,
        "drifts {drift} m on the 20° ramp (rests at {rest})"
    );
    match steps[999].1 {
        Ground::OnGround(g) => {
            assert_eq!(level.object_name(g.object).unwrap_or_default(), "ramp_20");
            assert!((g.normal.y - a.cos()).abs() < 1e-3, "{}", g.normal);
        }
        other => panic!("on the ramp: {other:?}"),
    }
}

#[test]
fn stairs_no_higher_than_the_step_height_are_climbed() {
    let level = course();
    let c = player();
    // 6.5 m: up the stairs (x 4 to 6) and onto the platform (6 to 9)
    let steps = walk(
        &level,
        &c,
        Vec3::new(2.0, STAND, 2.0),
        Vec3::new(0.05, 0.0, 0.0),
        130,
    );
    let (end, ground) = steps[129];
    assert!((end.x - 8.5).abs() < 1e-3, "stopped at {end}");
    assert!((end.y - (1.0 + STAND)).abs() < 1e-3, "at {end}");
    assert!(matches!(ground, Ground::OnGround(_)), "{ground:?}");
    // never rose more than a step in one frame, never sank into a step
    for w in steps.windows(2) {
        assert!(
            w[1].0.y - w[0].0.y <= 0.3 + 1e-4,
            "{} -> {}",
            w[0].0,
            w[1].0
        );
    }
    for (at, _) in &steps {
        assert!(depth(&level, &c, *at) <= c.settings.skin, "inside at {at}");
    }
}

#[test]
fn a_step_higher_than_the_step_height_and_a_wall_stop_the_character() {
    let level = course();
    let c = player();
    // the 0.5 m step begins at x = 4
    let end = end_of(walk(
        &level,
        &c,
        Vec3::new(2.0, STAND, 6.0),
        Vec3::new(0.05, 0.0, 0.0),
        200,
    ));
    assert!(end.x <= 4.0 - 0.3 + 1e-3 && end.x > 3.6, "at {end}");
    assert!((end.y - STAND).abs() < 1e-3, "at {end}");
    // the wall's face is at x = 16
    let end = end_of(walk(
        &level,
        &c,
        Vec3::new(12.0, STAND, 18.0),
        Vec3::new(0.05, 0.0, 0.0),
        200,
    ));
    assert!(end.x <= 16.0 - 0.3 + 1e-3 && end.x > 15.6, "at {end}");
    // walking diagonally into the wall slides along it
    let end = end_of(walk(
        &level,
        &c,
        Vec3::new(15.0, STAND, 12.0),
        Vec3::new(0.05, 0.0, 0.05),
        40,
    ));
    assert!(end.z > 13.9 && end.x <= 16.0 - 0.3 + 1e-3, "at {end}");
}

#[test]
fn walkable_slopes_are_climbed_and_steep_ones_slid_down() {
    let level = course();
    let c = player();
    // up the 20° ramp
    let steps = walk(
        &level,
        &c,
        Vec3::new(2.0, STAND, 10.0),
        Vec3::new(0.05, 0.0, 0.0),
        80,
    );
    let (end, ground) = steps[79];
    assert!(end.x > 5.5 && end.y > STAND + 0.5, "at {end}");
    assert!(matches!(ground, Ground::OnGround(_)), "{ground:?}");
    // into the 60° ramp: no higher than the rounded foot lets it touch
    let steps = walk(
        &level,
        &c,
        Vec3::new(2.0, STAND, 14.0),
        Vec3::new(0.05, 0.0, 0.0),
        120,
    );
    let top = steps.iter().map(|s| s.0.y).fold(f32::MIN, f32::max);
    assert!(top < STAND + 0.3, "climbed to {top}");
    // dropped onto the 60° ramp, it slides down and ends on the floor
    let a = 60f32.to_radians();
    let at = Vec3::new(4.0 + 1.5 * a.cos() - 0.4, 1.5 * a.sin() + STAND, 14.0);
    let steps = walk(&level, &c, at, Vec3::ZERO, 300);
    let slid = steps
        .iter()
        .any(|s| matches!(s.1, Ground::OnSteepGround(_)));
    let end = steps[299].0;
    assert!(slid, "never on steep ground");
    assert!((end.y - STAND).abs() < 1e-3 && end.x < 4.0, "ends at {end}");
}

#[test]
fn walking_across_seams_keeps_the_height() {
    let level = course();
    let c = player();
    let mut worst = 0.0f32;
    let mut crossings = 0;
    // back and forth over a seam, 0.2 m each way: over x = 10, over
    // z = 10, and diagonally over the corner where four tiles meet
    let places = [
        (Vec3::new(9.9, STAND, 16.0), Vec3::new(0.05, 0.0, 0.0)),
        (Vec3::new(14.0, STAND, 9.9), Vec3::new(0.0, 0.0, 0.05)),
        (Vec3::new(9.9, STAND, 9.9), Vec3::new(0.05, 0.0, 0.05)),
    ];
    let mut at = places[0].0;
    for frame in 0..40_000usize {
        let (origin, dir) = places[(frame / 1000) % 3];
        if frame % 1000 == 0 {
            at = Vec3::new(origin.x, at.y, origin.z);
        }
        let dir = if (frame / 4) % 2 == 0 { dir } else { -dir };
        let before = at;
        let m = c.move_and_slide(&level, at, dir + FALL, &Filter::ALL);
        at = m.position;
        crossings += usize::from(
            (before.x - 10.0).signum() != (at.x - 10.0).signum()
                || (before.z - 10.0).signum() != (at.z - 10.0).signum(),
        );
        worst = worst.max((at.y - STAND).abs());
        let moved = (at - before) * Vec3::new(1.0, 0.0, 1.0);
        assert!(
            (moved - dir).length() < 1e-4,
            "frame {frame}: stopped or turned at {before} -> {at}"
        );
        assert!(
            matches!(m.ground, Ground::OnGround(_)),
            "frame {frame}: {:?}",
            m.ground
        );
    }
    assert!(crossings >= 10_000, "{crossings} crossings");
    assert!(worst < 1e-3, "height strays {worst} m");
}

#[test]
fn a_character_inside_geometry_is_pushed_out_the_shortest_way() {
    let level = course();
    let c = player();
    // half sunk into the floor
    let m = c.move_and_slide(
        &level,
        Vec3::new(3.0, STAND - 0.2, 8.0),
        Vec3::ZERO,
        &Filter::ALL,
    );
    assert!((m.position.y - STAND).abs() < 0.011, "at {}", m.position);
    assert!(depth(&level, &c, m.position) <= c.settings.skin);
    // 0.1 m into the wall's face at x = 16
    let m = c.move_and_slide(
        &level,
        Vec3::new(15.8, STAND + 0.5, 5.0),
        Vec3::ZERO,
        &Filter::ALL,
    );
    assert!(
        m.position.x <= 16.0 - 0.3 + 0.011 && (m.position.z - 5.0).abs() < 1e-3,
        "at {}",
        m.position
    );
}

#[test]
fn a_filtered_out_object_is_not_there() {
    let level = course();
    let c = player();
    let wall = level.find_object("wall").expect("a wall");
    let skip = [wall];
    let f = Filter::skip(&skip);
    let mut at = Vec3::new(15.0, STAND, 18.0);
    for _ in 0..60 {
        at = c
            .move_and_slide(&level, at, Vec3::new(0.05, 0.0, 0.0) + FALL, &f)
            .position;
    }
    assert!(at.x > 17.5, "the skipped wall stopped it at {at}");
}

/// One character's walk on a real level: how it went.
#[derive(Default)]
struct Walked {
    characters: usize,
    frames: usize,
    grounded: usize,
    deepest: f32,
}

/// Drops characters on a grid over `level` (wherever a ray from above
/// meets walkable ground with room to stand) and walks each 1,000 frames
/// along a square path, checking every frame: never deeper than the skin
/// in anything (overlap query), the centre never inside a solid (point
/// query), and the centre's path never crossing a surface (a ray from the
/// last position to the new one: the character never passes through).
fn walk_level(level: &Level, lo: Vec3, hi: Vec3, name: &str) -> Walked {
    let c = player();
    let mut out = Walked::default();
    let n = 6;
    for gx in 0..n {
        for gz in 0..n {
            let x = lo.x + (hi.x - lo.x) * (gx as f32 + 0.5) / n as f32;
            let z = lo.z + (hi.z - lo.z) * (gz as f32 + 0.5) / n as f32;
            let top = Vec3::new(x, hi.y + 1.0, z);
            let Some(floor) =
                level.raycast(&Ray::new(top, Vec3::NEG_Y, hi.y - lo.y + 2.0), &Filter::ALL)
            else {
                continue;
            };
            if !floor.front_face || floor.normal.y < c.settings.max_slope.cos() {
                continue;
            }
            let start = floor.point + Vec3::Y * (STAND + 0.02);
            if level.overlap_any(&c.shape, &Pose::new(c.rotation, start), &Filter::ALL) {
                continue; // no room to stand
            }
            out.characters += 1;
            let mut at = start;
            for frame in 0..1000 {
                let heading = [Vec3::X, Vec3::Z, Vec3::NEG_X, Vec3::NEG_Z][(frame / 100) % 4];
                let m = c.move_and_slide(level, at, heading * 0.05 + FALL, &Filter::ALL);
                let (before, after) = (at, m.position);
                at = after;
                out.frames += 1;
                out.grounded += usize::from(matches!(m.ground, Ground::OnGround(_)));
                let d = depth(level, &c, at);
                out.deepest = out.deepest.max(d);
                assert!(
                    d <= c.settings.skin + 1e-4,
                    "{name}: character from {start} is {d} m deep at frame {frame} ({before} -> {after})"
                );
                assert!(
                    level.contains_point(at, &Filter::ALL).is_empty(),
                    "{name}: character from {start} has its centre inside a solid at frame {frame}: {at}"
                );
                let step = after - before;
                if step.length() > 1e-6 {
                    let crossed = level.raycast(&Ray::new(before, step, 1.0), &Filter::ALL);
                    assert!(
                        crossed.is_none(),
                        "{name}: character from {start} passed through {:?} at frame {frame} ({before} -> {after})",
                        crossed
                            .map(|h| level.object_name(h.object).unwrap_or_default().to_string())
                    );
                }
                if at.y < lo.y - 10.0 {
                    break; // walked off the level's edge
                }
            }
        }
    }
    out
}

#[test]
fn characters_walk_real_levels_without_entering_or_passing_through_anything() {
    let Some(dir) = kiln_tests::levels_dir() else {
        return;
    };
    let mut total = Walked::default();
    let mut levels = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("levels")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "glb" || x == "gltf"))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(loaded) = kiln_baker::ingest::load(&path) else {
            continue;
        };
        let (lo, hi) = kiln_tests::scene_bounds(&loaded.scene.world_triangles());
        let level = Level::from_bytes(&bake_scene(&loaded.scene, &BakeSettings::default()).bytes)
            .expect("opens");
        let w = walk_level(&level, lo, hi, &name);
        eprintln!(
            "{name}: {} characters, {} frames, {:.0}% on the ground, deepest {:.2e} m",
            w.characters,
            w.frames,
            100.0 * w.grounded as f64 / w.frames.max(1) as f64,
            w.deepest
        );
        if w.characters > 0 {
            levels += 1;
        }
        total.characters += w.characters;
        total.frames += w.frames;
        total.grounded += w.grounded;
    }
    assert!(
        levels >= 8 && total.characters >= 100,
        "{levels} levels, {} characters",
        total.characters
    );
    assert!(
        total.grounded * 2 > total.frames,
        "mostly in the air: the walk checks nothing"
    );
}
