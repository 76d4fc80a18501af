//! Kiln's colliders in Avian against Avian's own constructors, on the same
//! glTF, in one process: how long from the archive to a ready Avian world,
//! and what a physics frame costs on each set of colliders.
//!
//! ```text
//! cargo bench -p kiln-bevy --features avian --bench avian                 # every level, every constructor
//! cargo bench -p kiln-bevy --features avian --bench avian -- --quick      # small levels, no decomposition
//! cargo bench -p kiln-bevy --features avian --bench avian -- sauer_pandora.glb   # one level
//! cargo bench -p kiln-bevy --features avian --bench avian -- --kiln-only     # Kiln's side alone (to profile it)
//! ```
//!
//! **Ready.** Kiln: from spawning the `KilnLevel` entity (the archive,
//! baked beforehand, on disk) to the first physics step with every
//! object's collider in Avian's world; this includes the asset load, the
//! archive's validation and `KilnAvianPlugin` building the colliders.
//! Avian: building each render mesh's collider the way
//! `ColliderConstructorHierarchy` does (`TrimeshFromMesh` →
//! `Collider::trimesh_from_mesh`'s flags, `ConvexHullFromMesh` → `Collider::convex_hull`,
//! `ConvexDecompositionFromMesh` → `Collider::convex_decomposition` with
//! Avian's default V-HACD parameters), one per node, spawning them and the
//! first physics step. Avian's side is given its meshes already in memory
//! (Kiln's glTF reader), so Bevy's glTF load and scene spawn, which it
//! would also pay, are not counted.
//!
//! **Frame.** 200 dynamic balls and boxes dropped over the level, then the
//! mean wall time over 240 frames of an update (one fixed step of 1/60 s,
//! Avian's default solver and substeps, and every other system of the
//! app: Kiln's own in the Kiln app) and of the fixed step alone (Avian's
//! physics), on Kiln's colliders and on the render meshes' triangle meshes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use kiln_baker::BakeSettings;
use kiln_bevy::avian3d::prelude::*;
use kiln_bevy::{KilnAvianPlugin, KilnLevel, KilnPlugin, KilnStaticCollider, KilnWorld};

/// A headless app with Avian (and Kiln's plugins when `kiln`), one fixed
/// step an update.
fn app(assets: &Path, kiln: bool) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: assets.display().to_string(),
            watch_for_changes_override: Some(false),
            ..default()
        },
        TransformPlugin,
        PhysicsPlugins::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .insert_resource(Time::<Fixed>::from_hz(60.0));
    if kiln {
        app.add_plugins((KilnPlugin, KilnAvianPlugin::default()));
    }
    app.finish();
    app.cleanup();
    app
}

/// How the render meshes become Avian colliders.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constructor {
    Trimesh,
    ConvexHull,
    ConvexDecomposition,
}

/// The render meshes' colliders, one per instance, with their transforms.
fn render_colliders(scene: &kiln_baker::Scene, how: Constructor) -> Vec<(Transform, Collider)> {
    scene
        .instances
        .iter()
        .filter_map(|inst| {
            let mesh = &scene.meshes[inst.mesh];
            if mesh.proxy || mesh.triangles.is_empty() {
                return None;
            }
            let vertices: Vec<Vec3> = mesh.positions.iter().map(|&p| Vec3::from(p)).collect();
            let collider = match how {
                // as `Collider::trimesh_from_mesh` does
                Constructor::Trimesh => Collider::trimesh_with_config(
                    vertices,
                    mesh.triangles.clone(),
                    TrimeshFlags::MERGE_DUPLICATE_VERTICES,
                ),
                Constructor::ConvexHull => Collider::convex_hull(vertices)?,
                Constructor::ConvexDecomposition => {
                    Collider::convex_decomposition(vertices, mesh.triangles.clone())
                }
            };
            let (scale, rotation, translation) = inst.transform.to_scale_rotation_translation();
            let mut collider = collider;
            // as Avian does for a scaled entity
            collider.set_scale(scale.as_vec3(), 10);
            Some((
                Transform::from_translation(translation.as_vec3())
                    .with_rotation(rotation.as_quat()),
                collider,
            ))
        })
        .collect()
}

/// Drops 200 balls and boxes over the level's box and returns the mean
/// wall time of an update over 240 frames once they are falling.
fn frame_cost(app: &mut App, lo: Vec3, hi: Vec3) -> (Duration, Duration) {
    let mut rng = kiln_tests::Rng::new(5);
    let size = (hi - lo).max_element();
    let r = (size * 0.01).clamp(0.05, 0.5);
    for i in 0..200 {
        let p = Vec3::new(
            rng.range(lo.x, hi.x),
            hi.y + r * 2.0 + rng.range(0.0, 2.0),
            rng.range(lo.z, hi.z),
        );
        let collider = if i % 2 == 0 {
            Collider::sphere(r)
        } else {
            Collider::cuboid(2.0 * r, 2.0 * r, 2.0 * r)
        };
        app.world_mut()
            .spawn((RigidBody::Dynamic, collider, Transform::from_translation(p)));
    }
    for _ in 0..30 {
        app.update();
    }
    let start = Instant::now();
    for _ in 0..240 {
        app.update();
    }
    let whole = start.elapsed() / 240;
    // the fixed step alone (Avian's physics; no Kiln system runs there
    // without characters): what the colliders cost, apart from each
    // app's other systems
    let start = Instant::now();
    for _ in 0..240 {
        app.world_mut().run_schedule(bevy::app::FixedMain);
    }
    (whole, start.elapsed() / 240)
}

/// An app with Kiln's plugins brought from nothing to a ready Avian world
/// on the archive `assets/level.kiln`: the app, how long that took, and
/// how much of it was waiting for Bevy's asset server before the update
/// in which the level arrived (loaded, validated, its colliders built).
fn kiln_ready(assets: &Path, file: &str) -> (App, Duration, Duration) {
    let mut kiln_app = app(assets, true);
    let start = Instant::now();
    let handle = kiln_app
        .world()
        .resource::<AssetServer>()
        .load("level.kiln");
    kiln_app.world_mut().spawn(KilnLevel(handle));
    let waited;
    loop {
        let before = start.elapsed();
        kiln_app.update();
        let built = kiln_app
            .world_mut()
            .query::<&KilnStaticCollider>()
            .iter(kiln_app.world())
            .count();
        if built > 0 {
            waited = before;
            // the colliders are in Avian's world at this step
            kiln_app.update();
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{file}: no colliders"
        );
    }
    (kiln_app, start.elapsed(), waited)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let kiln_only = args.iter().any(|a| a == "--kiln-only");
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(levels) = kiln_tests::levels_dir() else {
        return;
    };
    let all = if quick {
        vec!["many-cubes.gltf", "godot_occlusion_room.glb"]
    } else {
        vec![
            "sauer_pandora.glb",
            "godot_occlusion_room.glb",
            "many-cubes.gltf",
        ]
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let assets = root.join("target/kiln-avian-bench");
    std::fs::create_dir_all(&assets).unwrap();
    println!(
        "ready (ms, best of five): Kiln from the archive (of it, frames waiting on the asset \
         server); Avian's constructors on the render meshes"
    );
    println!(
        "{:<26} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8}",
        "level", "Kiln", "(waiting)", "trimesh", "hulls", "decompose", "objects"
    );
    let mut frames = Vec::new();
    for file in all {
        if !only.is_empty() && !only.iter().any(|o| o.as_str() == file) {
            continue;
        }
        let path = levels.join(file);
        let baked = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
        std::fs::write(assets.join("level.kiln"), &baked.bytes).unwrap();
        let scene = kiln_baker::ingest::load(&path).unwrap().scene;

        // Kiln: the archive to a ready Avian world, best of five (this
        // machine's runs of either side spread over ±15%)
        let (mut kiln_app, kiln_ready, kiln_loaded) = (0..5)
            .map(|_| kiln_ready(&assets, file))
            .min_by_key(|r| r.1)
            .unwrap();
        let level = kiln_app
            .world()
            .resource::<KilnWorld>()
            .level()
            .unwrap()
            .clone();
        let objects = level.object_count();
        let (lo, hi) = level.bounds().unwrap();

        // Avian's constructors on the render meshes
        let mut ready = Vec::new();
        let mut trimesh_app = None;
        for how in [
            Constructor::Trimesh,
            Constructor::ConvexHull,
            Constructor::ConvexDecomposition,
        ] {
            if kiln_only || (quick && how == Constructor::ConvexDecomposition) {
                ready.push(None);
                continue;
            }
            // best of five, but one run of the decomposition
            let runs = if how == Constructor::ConvexDecomposition {
                1
            } else {
                5
            };
            let (a, took) = (0..runs)
                .map(|_| {
                    let mut a = app(&assets, false);
                    let start = Instant::now();
                    for (t, c) in render_colliders(&scene, how) {
                        a.world_mut().spawn((RigidBody::Static, c, t));
                    }
                    a.update();
                    (a, start.elapsed())
                })
                .min_by_key(|r| r.1)
                .unwrap();
            ready.push(Some(took));
            if how == Constructor::Trimesh {
                trimesh_app = Some(a);
            }
        }
        let cell = |d: Option<Duration>| d.map_or("-".to_string(), |d| format!("{:.1}", ms(d)));
        println!(
            "{file:<26} {:>10.1} {:>10.1} {:>10} {:>10} {:>12} {:>8}",
            ms(kiln_ready),
            ms(kiln_loaded),
            cell(ready[0]),
            cell(ready[1]),
            cell(ready[2]),
            objects
        );
        if kiln_only {
            continue;
        }
        let on_kiln = frame_cost(&mut kiln_app, lo, hi);
        let on_render = frame_cost(trimesh_app.as_mut().unwrap(), lo, hi);
        frames.push((
            file,
            on_kiln,
            on_render,
            kiln_triangles(&level),
            scene_triangles(&scene),
        ));
    }
    println!();
    println!(
        "frames (ms, mean of 240): the whole update, and the physics step alone, on Kiln's \
         colliders and on the render meshes' triangles"
    );
    println!(
        "{:<26} {:>12} {:>12} {:>8} {:>12} {:>12} {:>8} {:>11} {:>11}",
        "level",
        "Kiln frame",
        "render",
        "ratio",
        "Kiln step",
        "render",
        "ratio",
        "Kiln tris",
        "render tris"
    );
    for (file, (k, kp), (r, rp), kt, rt) in frames {
        println!(
            "{file:<26} {:>12.3} {:>12.3} {:>7.2}× {:>12.3} {:>12.3} {:>7.2}× {:>11} {:>11}",
            ms(k),
            ms(r),
            r.as_secs_f64() / k.as_secs_f64(),
            ms(kp),
            ms(rp),
            rp.as_secs_f64() / kp.as_secs_f64(),
            kt,
            rt
        );
    }
}

/// Triangles over every instance of the render meshes.
fn scene_triangles(scene: &kiln_baker::Scene) -> usize {
    scene
        .instances
        .iter()
        .map(|i| &scene.meshes[i.mesh])
        .filter(|m| !m.proxy)
        .map(|m| m.triangles.len())
        .sum()
}

/// Triangles of Kiln's colliders over every instance (a triangle mesh's,
/// a concave solid's surface; primitives and polytopes have none).
fn kiln_triangles(level: &kiln_bevy::kiln_runtime::Level) -> usize {
    use kiln_formats::level::ArchivedCollider as C;
    let a = level.archive();
    a.instances
        .iter()
        .map(|i| match &a.colliders[i.collider.to_native() as usize] {
            C::TriMesh(m) => m.triangle_count(),
            C::Bsp(b) => b.surface.triangle_count(),
            _ => 0,
        })
        .sum()
}
