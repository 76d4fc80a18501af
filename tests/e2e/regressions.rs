//! Regression tests for wrong answers found on real levels, each named
//! after the bug it pins, each through the public API only.

use glam::{DAffine3, DVec3, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
use kiln_runtime::{CastOptions, Filter, Level, Pose, QueryShape};

/// The 12 triangles of the cube `-1..1`, wound outwards.
fn cube() -> SceneMesh {
    let mut pos = Vec::new();
    for i in 0..8u32 {
        let s = |b: u32| if i & b != 0 { 1.0 } else { -1.0 };
        pos.push([s(1), s(2), s(4)]);
    }
    let tris = [
        [0, 2, 3],
        [0, 3, 1], // z = −1
        [4, 5, 7],
        [4, 7, 6], // z = +1
        [0, 1, 5],
        [0, 5, 4], // y = −1
        [2, 6, 7],
        [2, 7, 3], // y = +1
        [0, 4, 6],
        [0, 6, 2], // x = −1
        [1, 3, 7],
        [1, 7, 5], // x = +1
    ];
    SceneMesh::new("cube", pos, &tris)
}

/// One object of `mesh` under `transform`, baked as `collider`.
fn one_object(mesh: SceneMesh, transform: DAffine3, collider: &str) -> Level {
    let scene = Scene {
        meshes: vec![mesh],
        instances: vec![SceneInstance {
            name: "it".into(),
            mesh: 0,
            transform,
            extras_collider: Some(collider.into()),
            ..SceneInstance::default()
        }],
        ..Scene::default()
    };
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

/// A polytope placed by a mirroring, non-uniform matrix (what an
/// editor's "mirror" makes) kept its face loops' order while its vertices
/// were mirrored, so the loops ran the wrong way round their normals and
/// a sphere 0.15 m into the face at x = 0.25 touched nothing, and swept
/// into it passed through. Every mirrored axis and both signs of the
/// offset are checked against the capsule (a = b) and ray answers.
#[test]
fn mirrored_polytope_sphere_contacts() {
    for scale in [
        DVec3::new(-0.25, -2.0, -8.0),
        DVec3::new(-0.25, 2.0, 8.0),
        DVec3::new(0.25, -2.0, 8.0),
        DVec3::new(0.25, 2.0, -8.0),
    ] {
        let level = one_object(cube(), DAffine3::from_scale(scale), "convex");
        assert_eq!(level.object_count(), 1);
        for side in [1.0f32, -1.0] {
            let at = Vec3::new(0.4 * side, 0.0, 0.0);
            let ball = QueryShape::Sphere { radius: 0.3 };
            let what = format!("scale {scale}, side {side}");
            // overlap: 0.15 m deep, pushed out along ±x
            let got = level.overlap(&ball, &Pose::at(at), &Filter::ALL);
            assert_eq!(got.len(), 1, "{what}: sphere overlap {got:?}");
            assert!((got[0].depth - 0.15).abs() < 1e-5, "{what}: {got:?}");
            assert!(
                got[0].normal.abs_diff_eq(Vec3::X * side, 1e-5),
                "{what}: {got:?}"
            );
            assert!(
                (got[0].point - Vec3::new(0.25 * side, 0.0, 0.0)).length() < 1e-5,
                "{what}: {got:?}"
            );
            assert!(
                level.intersects(&ball, &Pose::at(at), &Filter::ALL),
                "{what}"
            );
            // the same sphere as a capsule with a = b
            let (cap, pose) = QueryShape::capsule(at, at, 0.3);
            let c = level.overlap(&cap, &pose, &Filter::ALL);
            assert_eq!(c.len(), 1, "{what}: capsule {c:?}");
            assert!((c[0].depth - got[0].depth).abs() < 1e-5, "{what}: {c:?}");
            // swept from 1 m out towards the face: contact at x = 0.25 + 0.3
            let from = Pose::at(Vec3::new(side, 0.0, 0.0));
            let motion = Vec3::new(-side, 0.0, 0.0);
            for options in [
                CastOptions::default(),
                CastOptions {
                    ignore_leaving: true,
                },
            ] {
                let hit = level
                    .cast(&ball, &from, motion, 1.0, options, &Filter::ALL)
                    .unwrap_or_else(|| panic!("{what}: the sweep passed through"));
                assert!((hit.t - 0.45).abs() < 1e-5, "{what}: {hit:?}");
                assert!(hit.normal.abs_diff_eq(Vec3::X * side, 1e-5), "{what}");
            }
            // the ray agrees on where the face is
            let ray = kiln_runtime::Ray::new(Vec3::new(side, 0.0, 0.0), motion, 2.0);
            let hit = level.raycast(&ray, &Filter::ALL).expect("ray hits");
            assert!((hit.t - 0.75).abs() < 1e-5, "{what}: {hit:?}");
        }
    }
}
