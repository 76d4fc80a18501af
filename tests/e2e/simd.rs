//! The mesh box tree's two node passes (AVX2 where the CPU has it, and
//! the portable one every CPU runs) give the same answers, bit for bit,
//! to every query kind that walks the tree: so CI, whose CPU takes the
//! AVX2 pass, also tests the portable one.

use glam::{DAffine3, DQuat, DVec3, Quat, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene};
use kiln_runtime::internals::with_portable_lanes;
use kiln_runtime::{Filter, Level, Pose, QueryShape, Ray, ShapeCast};
use kiln_tests::Rng;

/// A bumpy grid and a turned, scaled torus knot, all triangle meshes.
fn level() -> Level {
    let n = 120;
    let mut pos = Vec::new();
    for z in 0..=n {
        for x in 0..=n {
            let (fx, fz) = (x as f32 * 0.5, z as f32 * 0.5);
            pos.push([fx, (fx * 0.37).sin() * (fz * 0.23).cos() * 3.0, fz]);
        }
    }
    let (knot, knot_tris) = kiln_tests::torus_knot(160, 12, false);
    let mut scene = Scene::from_meshes(vec![
        SceneMesh::new("ground", pos, &kiln_tests::grid_triangles(n)),
        SceneMesh::new("knot", knot, &knot_tris),
    ]);
    scene.instances[1].transform = DAffine3::from_scale_rotation_translation(
        DVec3::new(4.0, 3.0, 4.0),
        DQuat::from_rotation_y(0.7),
        DVec3::new(30.0, 8.0, 30.0),
    );
    let settings = BakeSettings::default().all_meshes();
    Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap()
}

/// Every answer to a fixed set of queries, written out with `{:?}` (which
/// prints each f32 so that it reads back to the same bits).
fn answers(level: &Level) -> Vec<String> {
    let mut rng = Rng::new(0x51_4d_d8);
    let point = |rng: &mut Rng| {
        Vec3::new(
            rng.range(-5.0, 65.0),
            rng.range(-4.0, 20.0),
            rng.range(-5.0, 65.0),
        )
    };
    let mut out = Vec::new();
    let f = Filter::ALL;
    for i in 0..4000 {
        let o = point(&mut rng);
        let mut dir = rng.unit32();
        // axis-parallel rays take the flat-axis branch of the slab test
        if i % 7 == 0 {
            dir = [Vec3::X, Vec3::NEG_Y, Vec3::Z][i % 3];
        }
        let ray = Ray::new(o, dir, rng.range(1.0, 120.0));
        out.push(format!("{:?}", level.raycast(&ray, &f)));
        out.push(format!("{:?}", level.raycast_any(&ray, &f)));
    }
    let rays: Vec<Ray> = (0..2000)
        .map(|_| Ray::new(point(&mut rng), rng.unit32(), 100.0))
        .collect();
    let mut batch = vec![None; rays.len()];
    level.raycast_many(&rays, &f, &mut batch);
    out.extend(batch.iter().map(|h| format!("{h:?}")));
    let shapes = [
        QueryShape::Sphere { radius: 0.6 },
        QueryShape::Capsule {
            half_height: 0.8,
            radius: 0.3,
        },
        QueryShape::Cuboid {
            half: Vec3::new(0.7, 0.3, 1.1),
        },
    ];
    for i in 0..1500 {
        let shape = &shapes[i % shapes.len()];
        let pose = Pose::new(
            Quat::from_axis_angle(rng.unit32(), rng.range(0.0, 3.0)),
            point(&mut rng),
        );
        out.push(format!("{:?}", level.overlap(shape, &pose, &f)));
        out.push(format!("{:?}", level.overlap_any(shape, &pose, &f)));
        let cast = ShapeCast::new(*shape, pose, rng.unit32(), rng.range(0.5, 40.0));
        out.push(format!("{:?}", level.cast(&cast, &f)));
    }
    out
}

#[test]
fn the_avx2_and_portable_node_passes_answer_alike() {
    let level = level();
    #[cfg(target_arch = "x86_64")]
    if !std::arch::is_x86_feature_detected!("avx2") {
        eprintln!("*** this CPU has no AVX2: both runs take the portable pass ***");
    }
    let fast = answers(&level);
    let portable = with_portable_lanes(|| answers(&level));
    assert_eq!(fast.len(), portable.len());
    let hits = fast.iter().filter(|a| a.starts_with("Some")).count();
    assert!(hits > 2000, "{hits} answers found something");
    for (k, (a, b)) in fast.iter().zip(&portable).enumerate() {
        assert_eq!(a, b, "answer {k}");
    }
}
