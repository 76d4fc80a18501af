//! Colliders the level author chose: glTF physics extensions (KHR and OMI),
//! Unreal name prefixes and Godot name suffixes, on the hand-written
//! fixtures in `tests/fixtures/colliders` (made by `make.py` there) and on
//! the shared Godot level that authors OMI physics. Each test pins the
//! shape and the rule per object, and checks with point and ray queries
//! that the shapes sit where and as large as the file says.

use glam::Vec3;
use kiln_baker::config::{Overrides, Rule};
use kiln_baker::{BakeSettings, bake_file};
use kiln_runtime::Ray;
use kiln_runtime::{Filter, Level};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/colliders")
        .join(name)
}

/// "name kind: rule" per object in the archive, sorted, and the bake's warnings.
fn objects(path: &std::path::Path, settings: &BakeSettings) -> (Level, Vec<String>, Vec<String>) {
    let baked = bake_file(path, settings).unwrap_or_else(|e| panic!("{e}"));
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let mut seen: Vec<String> = kiln_tests::object_kinds(&level)
        .into_iter()
        .map(|(name, kind, rule)| format!("{name} {kind}: {rule}"))
        .collect();
    seen.sort();
    (level, seen, baked.report.warnings)
}

/// Names of the objects containing `p`.
fn inside(level: &Level, p: [f32; 3]) -> Vec<std::borrow::Cow<'_, str>> {
    let mut v: Vec<_> = level
        .contains_point(Vec3::from(p), &Filter::ALL)
        .into_iter()
        .map(|i| level.object_name(i).unwrap_or_default())
        .collect();
    v.sort();
    v
}

#[test]
fn khr_physics_colliders_replace_the_render_meshes() {
    let (level, seen, warnings) = objects(&fixture("khr_physics.gltf"), &BakeSettings::default());
    assert_eq!(
        seen,
        [
            "Ball sphere: glTF physics: KHR_implicit_shapes 1: sphere r 0.5 (fit error 0.0000 m)",
            "Can polytope: glTF physics: KHR_implicit_shapes 3: cylinder r 0.5/0.5, height 1: 32-gon prism",
            "Crate cuboid: glTF physics: KHR_implicit_shapes 0: box 1 × 2 × 3 (fit error 0.0000 m)",
            "Ground trimesh: glTF physics: KHR_physics_rigid_bodies: triangles of node 7's mesh 2",
            "Pill capsule: glTF physics: KHR_implicit_shapes 2: capsule r 0.25, segment 1 (fit error 0.0000 m)",
            "RockCollider polytope: glTF physics: KHR_physics_rigid_bodies: convex hull of node 5's mesh 3",
            // a trigger volume: baked, seen by no query that does not ask
            "Zone cuboid: glTF physics: KHR_implicit_shapes 0: box 1 × 2 × 3 (fit error 0.0000 m)",
        ]
    );
    let zone = level.find_object("Zone").unwrap();
    assert!(level.is_trigger(zone));
    assert!(
        !warnings.iter().any(|w| w.contains("trigger")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("\"plane\" shape")),
        "{warnings:?}"
    );
    // sizes and places, just inside and just outside each surface
    assert_eq!(inside(&level, [0.0, 0.99, 1.49]), ["Crate"]);
    assert!(inside(&level, [0.51, 0.0, 0.0]).is_empty());
    assert_eq!(inside(&level, [5.0, 0.49, 0.0]), ["Ball"]);
    assert!(inside(&level, [5.0, 0.51, 0.0]).is_empty());
    assert_eq!(inside(&level, [10.0, 0.74, 0.0]), ["Pill"]);
    assert!(inside(&level, [10.0, 0.76, 0.0]).is_empty());
    assert_eq!(inside(&level, [15.49, 0.0, 0.0]), ["Can"]);
    assert!(inside(&level, [15.0, 0.51, 0.0]).is_empty());
    // the hull of the L-shaped rock fills its notch
    assert_eq!(inside(&level, [21.5, 1.5, 0.5]), ["RockCollider"]);
    // the render-only octahedron at y = 5 is not there: the ray meets the crate
    let hit = level
        .raycast(
            &Ray::new(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, 100.0),
            &Filter::ALL,
        )
        .unwrap();
    assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Crate");
    assert!((hit.t - 9.0).abs() < 1e-4, "{}", hit.t);
    // the ground is node 7's quad where node 7 puts it (y = -2)
    let hit = level
        .raycast(
            &Ray::new(Vec3::new(3.0, 10.0, 3.0), Vec3::NEG_Y, 100.0),
            &Filter::ALL,
        )
        .unwrap();
    assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Ground");
    assert!((hit.t - 12.0).abs() < 1e-4, "{}", hit.t);

    // asked to, the render meshes are baked too, classified automatically
    // — but not the mesh of a node that carries its own collider (the
    // crate's): that collider is the node's
    let mut all = BakeSettings::default();
    all.render_meshes = true;
    let (_, seen, _) = objects(&fixture("khr_physics.gltf"), &all);
    assert_eq!(seen.len(), 7 + 3, "{seen:?}");
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("Crate ")).count(),
        1,
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|s| s.starts_with("Decor polytope: auto")),
        "{seen:?}"
    );
}

#[test]
fn omi_physics_shapes_bake_with_their_sizes_and_physics_only_meshes() {
    let (level, seen, warnings) = objects(&fixture("omi_physics.gltf"), &BakeSettings::default());
    assert_eq!(
        seen,
        [
            "Boulder sphere: glTF physics: OMI_physics_shape 1: sphere r 1.5 (fit error 0.0000 m)",
            "Drum polytope: glTF physics: OMI_physics_shape 3: cylinder r 1/1, height 2: 32-gon prism",
            "Gem polytope: glTF physics: OMI_physics_shape 4: convex hull of mesh 1",
            "Post capsule: glTF physics: OMI_physics_shape 2: capsule r 0.5, segment 2 (fit error 0.0000 m)",
            "Stairs trimesh: glTF physics: OMI_physics_shape 5: triangles of mesh 3",
            "TableCollider cuboid: glTF physics: OMI_physics_shape 0: box 2 × 1 × 2 (fit error 0.0000 m)",
        ]
    );
    // mesh 1 is used only by the Gem's shape: baked, so not counted as
    // unused (meshes 2 and 4 of the shared fixture set are)
    assert!(
        warnings.iter().any(|w| w.contains("2 of 5 meshes")),
        "{warnings:?}"
    );
    assert_eq!(inside(&level, [0.99, 0.49, -0.99]), ["TableCollider"]);
    // radius 1.5 under scale 2
    assert_eq!(inside(&level, [7.9, 0.0, 0.0]), ["Boulder"]);
    assert!(inside(&level, [8.1, 0.0, 0.0]).is_empty());
    // height 3 includes the caps
    assert_eq!(inside(&level, [10.0, 1.45, 0.0]), ["Post"]);
    assert!(inside(&level, [10.0, 1.55, 0.0]).is_empty());
    assert_eq!(inside(&level, [15.0, 0.99, 0.99 * 0.7]), ["Drum"]);
    assert!(inside(&level, [15.0, 1.01, 0.0]).is_empty());
    assert_eq!(inside(&level, [20.9, 0.0, 0.0]), ["Gem"]);
    assert!(inside(&level, [20.5, 0.5, 0.5]).is_empty());
    // a triangle mesh has no inside, but rays meet it (scaled 2 in y)
    assert!(inside(&level, [25.5, 0.5, 0.5]).is_empty());
    // the L's tall leg (top at y = 2 · 2) and its short one (2 · 1)
    for (x, t) in [(25.5, 6.0), (26.5, 8.0)] {
        let hit = level
            .raycast(
                &Ray::new(Vec3::new(x, 10.0, 0.5), Vec3::NEG_Y, 100.0),
                &Filter::ALL,
            )
            .unwrap();
        assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Stairs");
        assert!((hit.t - t).abs() < 1e-4, "{}", hit.t);
    }
}

#[test]
fn unreal_prefixes_take_the_render_meshes_place() {
    let (level, seen, _) = objects(&fixture("unreal_names.gltf"), &BakeSettings::default());
    assert_eq!(
        seen,
        [
            "Lamp bsp: auto: closed, concave (85.7% of its hull's volume) (collider 20 → 20 faces, Hausdorff 0.0000 m (render → collider 0.0000, collider → render 0.0000), mean 0.0000 m, volume 100.0%; bsp of 9 nodes (0 bevel), depth 6)",
            "UBX_Crate cuboid: name prefix UBX_ (Unreal): box collider of Crate (fit error 0.0000 m)",
            "UBX_Stretched polytope: name prefix UBX_ (Unreal): box collider of Stretched (placed with non-uniform scale or shear: the mesh's convex hull instead)",
            "UCP_Pill capsule: name prefix UCP_ (Unreal): capsule collider of Pill (fit error 0.0000 m)",
            "UCX_Rock_01 polytope: name prefix UCX_ (Unreal): convex collider of Rock",
            "UCX_Rock_02 polytope: name prefix UCX_ (Unreal): convex collider of Rock",
            "USP_Ball sphere: name prefix USP_ (Unreal): sphere collider of Ball (fit error 0.0000 m)",
        ]
    );
    // each UCX_ part is its own hull: the rock's two unit cubes
    assert_eq!(inside(&level, [0.5, 0.5, 0.5]), ["UCX_Rock_01"]);
    assert_eq!(inside(&level, [1.5, 0.5, 0.5]), ["UCX_Rock_02"]);
    // the capsule is fitted along the pillar's long axis (y, 4 long) and
    // encloses its corners: radius √(0.25² + 0.25²), caps reaching that
    // far beyond the pillar's ends
    let r = 0.25f32 * 2f32.sqrt();
    assert_eq!(inside(&level, [15.0, 1.99 + r, 0.0]), ["UCP_Pill"]);
    assert!(inside(&level, [15.0, 2.01 + r, 0.0]).is_empty());
    assert_eq!(inside(&level, [15.0 + r - 0.01, 0.0, 0.0]), ["UCP_Pill"]);
    assert!(inside(&level, [15.0 + r + 0.01, 0.0, 0.0]).is_empty());
}

#[test]
fn godot_suffixes_choose_the_shape() {
    let (_, seen, _) = objects(&fixture("godot_names.gltf"), &BakeSettings::default());
    assert_eq!(
        seen,
        [
            "Barrel$ConvColOnly2 polytope: name suffix $ConvColOnly (Godot): convex",
            "Crate-convcol polytope: name suffix -convcol (Godot): convex",
            "Floor_colonly trimesh: name suffix _colonly (Godot): concave (open and flat (a floor or terrain); kept as a triangle mesh)",
            "Protocol polytope: auto: closed, 100.0% of its hull's volume",
            "Statue bsp: auto: closed, concave (85.7% of its hull's volume) (collider 20 → 20 faces, Hausdorff 0.0000 m (render → collider 0.0000, collider → render 0.0000), mean 0.0000 m, volume 100.0%; bsp of 9 nodes (0 bevel), depth 6)",
            "Wall-col bsp: name suffix -col (Godot): concave (collider 20 → 20 faces, Hausdorff 0.0000 m (render → collider 0.0000, collider → render 0.0000), mean 0.0000 m, volume 100.0%; bsp of 9 nodes (0 bevel), depth 6)",
        ]
    );
}

#[test]
fn godot_truck_town_bakes_its_omi_colliders_not_its_render_meshes() {
    let Some(dir) = kiln_tests::levels_dir() else {
        return;
    };
    let (level, seen, _) = objects(&dir.join("godot_truck_town.gltf"), &BakeSettings::default());
    assert_eq!(seen.len(), 20, "{seen:#?}");
    assert!(seen.iter().all(|s| s.contains("Collider ")), "{seen:#?}");
    let boxes: Vec<_> = seen.iter().filter(|s| s.contains(" cuboid: ")).collect();
    assert_eq!(
        boxes,
        [
            "OuterGroundCollider cuboid: glTF physics: OMI_physics_shape 2: box 2048 × 10 × 2048 (fit error 0.0000 m)"
        ]
    );
    assert_eq!(seen.iter().filter(|s| s.contains(" trimesh: ")).count(), 19);
    // the 2048 m ground box, 10 m thick, its top at y = 0
    assert_eq!(
        inside(&level, [1000.0, -0.01, -1000.0]),
        ["OuterGroundCollider"]
    );
    assert!(inside(&level, [1000.0, 0.01, -1000.0]).is_empty());
    assert!(inside(&level, [1025.0, -5.0, 0.0]).is_empty());
}

/// The bake's count of objects is of objects, not of placed meshes: the
/// drawn half of an object whose collider the file gives apart is that
/// object, counted once and reported as a render mesh.
#[test]
fn bake_reports_count_objects_not_their_render_meshes() {
    let count = |file: &str, settings: &BakeSettings| {
        let r = bake_file(&fixture(file), settings).unwrap().report;
        (r.instances, r.objects, r.render_meshes)
    };
    // KHR: seven colliders; the crate's own mesh, the rock's, the
    // ground's and the decor are drawn only
    assert_eq!(
        count("khr_physics.gltf", &BakeSettings::default()),
        (7, 7, 4)
    );
    // asked to bake render meshes, the rock, ground and decor meshes
    // become objects; the crate's mesh is still the crate
    let mut all = BakeSettings::default();
    all.render_meshes = true;
    assert_eq!(count("khr_physics.gltf", &all), (10, 10, 1));
    // Unreal: six UBX_/UCP_/UCX_/USP_ colliders and the lamp; the four
    // meshes they name (rock, crate, ball, pill) are drawn only
    assert_eq!(
        count("unreal_names.gltf", &BakeSettings::default()),
        (7, 7, 4)
    );
}

/// Collision layers by name: the objects a level puts in `layer`.
fn in_layer(level: &Level, layer: &str) -> Vec<String> {
    let Some(bit) = level.layer(layer) else {
        return Vec::new();
    };
    let mut v: Vec<String> = level
        .objects()
        .filter(|&o| level.object_layers(o).unwrap_or(0) & bit != 0)
        .map(|o| level.object_name(o).unwrap_or_default().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn collision_layers_come_from_physics_filters_extras_and_project_rules() {
    let path = fixture("khr_physics.gltf");
    let level =
        Level::from_bytes(&bake_file(&path, &BakeSettings::default()).unwrap().bytes).unwrap();
    // a physics collider's filter names its layers (collisionSystems);
    // else the node's extras; else the default layer
    assert_eq!(in_layer(&level, "ground"), ["Ground"]);
    assert_eq!(in_layer(&level, "props"), ["Ball"]);
    assert_eq!(in_layer(&level, "pickups"), ["Ball"]);
    assert_eq!(in_layer(&level, "crates"), ["Crate"]);
    assert_eq!(
        in_layer(&level, "default"),
        ["Can", "Pill", "RockCollider", "Zone"]
    );
    // a project rule's layer replaces what the file says
    let mut ruled = BakeSettings::default();
    ruled.rules = vec![
        Rule {
            pattern: "Crate".into(),
            collider: None,
            layer: Some("props".into()),
            motion: None,
            trigger: None,
            settings: Overrides::default(),
        },
        Rule {
            pattern: "Pill".into(),
            collider: None,
            layer: Some("pills".into()),
            motion: None,
            trigger: None,
            settings: Overrides::default(),
        },
    ];
    let baked = bake_file(&path, &ruled).unwrap();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    assert_eq!(in_layer(&level, "props"), ["Ball", "Crate"]);
    assert_eq!(in_layer(&level, "pills"), ["Pill"]);
    assert!(level.layer("crates").is_none());
    // a layer-only rule leaves the collider choice alone
    assert_eq!(
        level.archive().colliders[level.archive().instances
            [level.find_object("Pill").unwrap().index() as usize]
            .collider
            .to_native() as usize]
            .kind_name(),
        "capsule"
    );
    // queries see only the layers asked for
    let ground = level.layer("ground").unwrap();
    let from = Vec3::new(0.0, 10.0, 0.0);
    let ray = Ray::new(from, Vec3::NEG_Y, 100.0);
    let hit = level.raycast(&ray, &Filter::ALL.layers(ground)).unwrap();
    assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Ground");
    let not_ground = !ground;
    let hit = level
        .raycast(&ray, &Filter::ALL.layers(not_ground))
        .unwrap();
    assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Crate");
    // inspect lists them
    let report = baker_tools::inspect::inspect_level(&level);
    assert!(
        report.layers.iter().any(|l| l == "pills"),
        "{:?}",
        report.layers
    );
    let pill = report.objects.iter().find(|o| o.name == "Pill").unwrap();
    assert_eq!(pill.layers, ["pills"]);
    // the rule's layer is part of the settings' fingerprint: a different
    // layer is a different bake
    assert_ne!(
        kiln_baker::bake::plan(&path, &ruled).unwrap().content_hash,
        kiln_baker::bake::plan(&path, &BakeSettings::default())
            .unwrap()
            .content_hash
    );
}
