//! Any bytes as an archive, with the body checksum fixed up so the input
//! reaches rkyv's validation and our verify: open must fail cleanly or
//! every query (rays, sphere overlaps, yes/no tests, sweeps, points, and
//! capsule, box and hull overlaps, yes/no tests and casts) must run without
//! panicking.
#![no_main]

use kiln_formats::{HEADER_LEN, header::body_hash};
use kiln_runtime::{
    CastOptions, ConvexHull, Filter, Level, Pose, Quat, QueryShape, Ray, ShapeCast, Vec3,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= HEADER_LEN {
        let h = body_hash(&bytes[HEADER_LEN..]);
        bytes[48..56].copy_from_slice(&h.to_le_bytes());
    }
    let opened = Level::from_bytes(&bytes);
    if let Ok(level) = &opened {
        for d in [Vec3::X, Vec3::NEG_Y, Vec3::new(0.3, -0.5, 0.8)] {
            let _ = level.raycast(&Ray::new(Vec3::ZERO, d, f32::INFINITY), &Filter::ALL);
            let _ = level.raycast_any(&Ray::new(Vec3::new(1.0, 2.0, 3.0), d, 1e6), &Filter::ALL);
            let _ = level.cast(
                &ShapeCast::new(
                    QueryShape::Sphere { radius: 0.75 },
                    Pose::at(Vec3::new(0.5, 3.0, -0.5)),
                    d,
                    50.0,
                ),
                &Filter::ALL,
            );
        }
        let _ = level.overlap(
            &QueryShape::Sphere { radius: 2.0 },
            &Pose::at(Vec3::new(0.2, 0.1, -0.3)),
            &Filter::ALL,
        );
        let _ = level.overlap_any(
            &QueryShape::Sphere { radius: 0.5 },
            &Pose::at(Vec3::new(-1.0, 0.5, 0.0)),
            &Filter::ALL,
        );
        for p in [
            Vec3::ZERO,
            Vec3::new(5.0, 0.2, 0.1),
            Vec3::new(0.5, 0.5, 0.5),
        ] {
            let _ = level.contains_point(p, &Filter::ALL);
        }
        let hull = ConvexHull::new(&[
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::Z,
            Vec3::new(0.7, 0.8, 0.9),
        ])
        .expect("a solid hull");
        let (capsule, capsule_pose) =
            QueryShape::capsule(Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.4, 2.0, -0.3), 0.5);
        let tilted = Pose::new(Quat::from_rotation_z(0.7), Vec3::new(0.3, 0.6, 0.1));
        for (shape, pose) in [
            (capsule, capsule_pose),
            (
                QueryShape::Cuboid {
                    half: Vec3::new(1.0, 0.5, 0.25),
                },
                tilted,
            ),
            (QueryShape::Hull(&hull), tilted),
            (QueryShape::Sphere { radius: 1.0 }, Pose::IDENTITY),
        ] {
            let _ = level.overlap(&shape, &pose, &Filter::ALL);
            let _ = level.overlap_any(&shape, &pose, &Filter::ALL);
            for ignore_leaving in [false, true] {
                let o = CastOptions { ignore_leaving };
                let _ = level.cast(
                    &ShapeCast::new(shape, pose, Vec3::new(0.3, -1.0, 0.2), 40.0).with(o),
                    &Filter::ALL,
                );
            }
        }
        // filtered queries read the layer masks; a character walks
        let layered = Filter::ALL.layers(level.layer("walkable").unwrap_or(0b10));
        let _ = level.raycast(
            &Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, 50.0),
            &layered,
        );
        let mut found = Vec::new();
        level.overlap_into(
            &QueryShape::Sphere { radius: 1.0 },
            &Pose::IDENTITY,
            &layered,
            &mut found,
        );
        let player = kiln_runtime::character::Character::capsule(0.3, 0.6);
        let mut at = Vec3::new(0.0, 2.0, 0.0);
        for _ in 0..8 {
            at = player
                .move_and_slide(&level, at, Vec3::new(0.2, -0.3, 0.1), &Filter::ALL)
                .position;
        }
    }
    // the tools read archives through the schema crate: the same bytes
    // must be refused as the runtime refuses them, or inspected and
    // exported without panicking
    let aligned = kiln_formats::aligned(&bytes);
    let archive = kiln_formats::Archive::access(&aligned);
    assert_eq!(archive.is_ok(), opened.is_ok());
    // a world of the level: its movers and triggers placed, moved and
    // stepped, bodies inserted (a shape, a copy of every object), every
    // kind of question asked over both, and a character riding
    if let Ok(level) = opened {
        let level = std::sync::Arc::new(level);
        let mut world = kiln_runtime::World::new(level.clone());
        let ball = QueryShape::Sphere { radius: 0.5 };
        let _ = world.insert(kiln_runtime::Body::shape(
            ball,
            Pose::at(Vec3::new(0.0, 1.0, 0.0)),
        ));
        for o in level.objects().take(16) {
            let _ = world.insert(kiln_runtime::Body::copy(&level, o, Pose::at(Vec3::Y)));
        }
        let movers: Vec<_> = level.movers_and_triggers().collect();
        for (k, &o) in movers.iter().enumerate() {
            let _ = world.set_pose(
                o,
                Pose::new(Quat::from_rotation_y(k as f32), Vec3::X * k as f32),
            );
        }
        world.step();
        let _ = world.trigger_events();
        let all = Filter::ALL.triggers(true);
        let _ = world.raycast(&Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, 50.0), &all);
        let _ = world.overlap(&ball, &Pose::IDENTITY, &all);
        let _ = world.contains_point(Vec3::new(0.1, 0.2, 0.3), &all);
        let _ = world.cast(
            &ShapeCast::new(ball, Pose::at(Vec3::Y * 4.0), Vec3::NEG_Y, 10.0),
            &all,
        );
        let player = kiln_runtime::character::Character::capsule(0.3, 0.6);
        let (mut at, mut ground) = (
            Vec3::new(0.0, 2.0, 0.0),
            kiln_runtime::character::Ground::InAir,
        );
        for _ in 0..4 {
            world.step();
            (at, _) = player.ride(&world, at, &ground);
            let m = player.move_and_slide(&world, at, Vec3::new(0.2, -0.3, 0.1), &Filter::ALL);
            (at, ground) = (m.position, m.ground);
        }
        world.set_level(level.clone());
    }
    if let Ok(archive) = archive {
        let _ = baker_tools::inspect::inspect(&archive);
        let _ = kiln_baker::export::world_objects(archive.level);
        let _ = kiln_baker::export::to_physics_glb(archive.level);
    }
});
