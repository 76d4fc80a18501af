//! Collider gizmos (feature `gizmos`; CI runs `cargo test --release -p
//! kiln-bevy --features gizmos --test gizmos`): the level's colliders and
//! the bodies drawn in their kinds' colours, movers where they are now.

use std::path::Path;
use std::time::{Duration, Instant};

use bevy::asset::AssetPlugin;
use bevy::color::Alpha;
use bevy::gizmos::config::DefaultGizmoConfigGroup;
use bevy::gizmos::{AppGizmoBuilder, GizmoAsset, GizmoHandles};
use bevy::prelude::*;
use kiln_bevy::{KilnBody, KilnGizmos, KilnLevel, KilnMover, KilnPlugin, KilnWorld, kind_colour};

#[test]
fn colliders_and_bodies_are_drawn_by_kind() {
    let dir = std::env::temp_dir().join(format!("kiln-bevy-gizmos-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let baked = kiln_baker::bake_file(
        &root.join("samples/moving_course.gltf"),
        &Default::default(),
    )
    .unwrap();
    std::fs::write(dir.join("moving.kiln"), baked.bytes).unwrap();
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.display().to_string(),
            ..default()
        },
        TransformPlugin,
        KilnPlugin,
    ))
    // gizmos without a renderer (GizmoPlugin's own box and frustum gizmos
    // want a camera's resources)
    .init_asset::<GizmoAsset>()
    .init_resource::<GizmoHandles>()
    .init_gizmo_group::<DefaultGizmoConfigGroup>();
    app.world_mut().resource_mut::<KilnGizmos>().record = true;
    let handle = app.world().resource::<AssetServer>().load("moving.kiln");
    app.world_mut().spawn(KilnLevel(handle));
    let start = Instant::now();
    while app.world().resource::<KilnWorld>().world().is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "the level loads");
        app.update();
    }
    app.update();
    app.update();
    let lines = |app: &App| app.world().resource::<KilnGizmos>().recorded.clone();
    let level_lines = lines(&app);
    assert!(!level_lines.is_empty());
    // the lift (a box mover, 2 x 0.2 x 2 m at (12, 0.1, 17)): twelve edges in
    // its kind's colour (the course's boxes are one polytope, placed scaled)
    let kind = {
        let kiln = app.world().resource::<KilnWorld>();
        let level = kiln.level().unwrap();
        let lift = level.find_object("lift").unwrap();
        let a = level.archive();
        a.colliders[a.instances[lift.index() as usize].collider.to_native() as usize].kind_name()
    };
    assert_eq!(kind, "polytope");
    let on_lift = |l: &(Vec3, Vec3, Color)| {
        l.2 == kind_colour(kind)
            && [l.0, l.1]
                .iter()
                .all(|p| (p.x - 12.0).abs() <= 1.0 + 1e-4 && (p.z - 17.0).abs() <= 1.0 + 1e-4)
    };
    let lift_lines: Vec<_> = level_lines.iter().filter(|l| on_lift(l)).copied().collect();
    assert_eq!(lift_lines.len(), 12, "{lift_lines:?}");
    let top = |ls: &[(Vec3, Vec3, Color)]| {
        ls.iter()
            .flat_map(|l| [l.0.y, l.1.y])
            .fold(f32::MIN, f32::max)
    };
    assert!((top(&lift_lines) - 0.2).abs() < 1e-4);
    // the floor is a triangle mesh: teal
    assert!(
        level_lines
            .iter()
            .any(|l| l.2 == kind_colour("trimesh") && l.0.y.abs() < 1e-4)
    );
    // the lift raised 2 m: its edges follow
    let mut movers = app.world_mut().query::<(Entity, &Name, &KilnMover)>();
    let lift = movers
        .iter(app.world())
        .find(|m| m.1.as_str() == "lift")
        .unwrap()
        .0;
    app.world_mut()
        .get_mut::<Transform>(lift)
        .unwrap()
        .translation
        .y += 2.0;
    app.update();
    let raised: Vec<_> = lines(&app)
        .into_iter()
        .filter(|l| on_lift(l) && l.0.y > 1.0 && l.1.y > 1.0)
        .collect();
    assert_eq!(raised.len(), 12, "{raised:?}");
    assert!((top(&raised) - 2.2).abs() < 1e-4);
    // bodies: a box adds its twelve edges in the box colour, a sphere three circles
    let before = app.world().resource::<KilnGizmos>().drawn;
    app.world_mut().spawn((
        KilnBody::shape(Cuboid::new(1.0, 1.0, 1.0)),
        Transform::from_xyz(2.0, 3.0, 16.0),
    ));
    app.world_mut().spawn((
        KilnBody::shape(Sphere::new(0.5)).trigger(),
        Transform::from_xyz(4.0, 3.0, 16.0),
    ));
    app.update();
    let after = lines(&app);
    assert_eq!(after.len(), before + 12 + 96);
    let body_box: Vec<_> = after
        .iter()
        .filter(|l| {
            l.2 == kind_colour("cuboid")
                && (l.0.y - 3.0).abs() <= 0.5 + 1e-4
                && (l.0.x - 2.0).abs() <= 0.5 + 1e-4
        })
        .collect();
    assert_eq!(body_box.len(), 12);
    let faint_sphere = kind_colour("sphere").with_alpha(0.35);
    assert_eq!(
        after.iter().filter(|l| l.2 == faint_sphere).count(),
        96,
        "the trigger sphere, faint"
    );
    assert!(
        after
            .iter()
            .filter(|l| l.2 == faint_sphere)
            .all(|l| ((l.0 - Vec3::new(4.0, 3.0, 16.0)).length() - 0.5).abs() < 1e-4)
    );
    // the level turned off: the bodies alone
    app.world_mut().resource_mut::<KilnGizmos>().level = false;
    app.update();
    assert_eq!(app.world().resource::<KilnGizmos>().drawn, 12 + 96);
    std::fs::remove_dir_all(dir).ok();
}
