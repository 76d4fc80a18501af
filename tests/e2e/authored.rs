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

/// The bodies sample (`samples/bodies.gltf`).
fn bodies_sample() -> Level {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/bodies.gltf");
    Level::from_bytes(&bake_file(&path, &BakeSettings::default()).unwrap().bytes).unwrap()
}

#[test]
fn gltf_physics_bodies_group_their_colliders_and_keep_authored_masses() {
    use kiln_runtime::Motion;
    let level = bodies_sample();
    let bodies: Vec<_> = level.authored_bodies().collect();
    let summary: Vec<(&str, Motion, Vec<String>)> = bodies
        .iter()
        .map(|b| {
            let mut names: Vec<String> = b
                .members
                .iter()
                .map(|&m| level.object_name(m).unwrap().into_owned())
                .collect();
            names.sort();
            (b.name, b.motion, names)
        })
        .collect();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        summary,
        vec![
            (
                "dumbbell",
                Motion::Dynamic,
                names(&["dumbbell_bar", "dumbbell_left", "dumbbell_right"])
            ),
            (
                "gate",
                Motion::Kinematic,
                names(&["gate_beam", "gate_post_a", "gate_post_b"])
            ),
            ("barrel", Motion::Dynamic, names(&["barrel_shell"])),
        ]
    );
    // the static floor is in no body; every member says which body it is in
    let floor = level.find_object("floor").unwrap();
    assert_eq!(level.authored_body_of(floor), None);
    for (k, b) in bodies.iter().enumerate() {
        for &m in &b.members {
            assert_eq!(level.authored_body_of(m), Some(k));
            assert_eq!(level.object_motion(m), Some(b.motion));
        }
    }
    // the dumbbell: as authored, in its frame (the node at (2, 1, 5), unturned)
    let d = &bodies[0];
    assert_eq!(d.pose.translation, Vec3::new(2.0, 1.0, 5.0));
    assert_eq!(d.mass, Some(12.0));
    assert_eq!(d.centre_of_mass, Some(Vec3::new(0.05, 0.0, 0.0)));
    let (moments, axes) = d.inertia.unwrap();
    assert_eq!(moments, Vec3::new(0.05, 0.6, 0.6));
    assert!(axes.angle_between(glam::Quat::IDENTITY) < 1e-6);
    let m = level.authored_body_mass(0, 1000.0).unwrap();
    assert_eq!(m.mass, 12.0);
    assert!((m.centre - glam::DVec3::new(2.05, 1.0, 5.0)).length() < 1e-6);
    let want = glam::DMat3::from_diagonal(glam::DVec3::new(0.05, 0.6, 0.6));
    assert!(
        (m.inertia - want)
            .to_cols_array()
            .iter()
            .all(|x| x.abs() < 1e-6)
    );
    // the gate: nothing authored, so its three boxes' solids at the density
    assert_eq!(
        (bodies[1].mass, bodies[1].centre_of_mass, bodies[1].inertia),
        (None, None, None)
    );
    let g = level.authored_body_mass(1, 1000.0).unwrap();
    let volume = 2.0 * 0.2 * 2.0 * 0.2 + 2.2 * 0.2 * 0.2;
    assert!((g.volume - volume).abs() < 1e-5 && (g.mass - 1000.0 * volume).abs() < 1e-2);
    // the posts balance in x and z; in y the beam lifts the centre
    let cy = (2.0 * 0.08 * 1.0 + 0.088 * 2.1) / volume;
    assert!(
        (g.centre - glam::DVec3::new(6.0, cy, 5.0)).length() < 1e-5,
        "{:?}",
        g.centre
    );
    // about the vertical: each post's own (m (0.2² + 0.2²)/12) and 1 m off-axis, the beam's own
    let (post, beam) = (80.0, 88.0);
    let iyy = 2.0 * (post * 0.08 / 12.0 + post * 1.0) + beam * (2.2f64 * 2.2 + 0.04) / 12.0;
    assert!(
        (g.inertia.y_axis.y - iyy).abs() < 1e-3,
        "{} {iyy}",
        g.inertia.y_axis.y
    );
    // the barrel: its mass authored, its centre and inertia its cylinder's scaled to it
    let b = level.authored_body_mass(2, 1000.0).unwrap();
    let shell = level
        .object_mass_properties(level.find_object("barrel_shell").unwrap(), 1000.0)
        .unwrap();
    assert_eq!(b.mass, 30.0);
    assert!((b.centre - glam::DVec3::new(8.0, 1.45, 2.0)).length() < 1e-5);
    assert!((b.centre - shell.centre).length() < 1e-9);
    let scaled = shell.inertia * (30.0 / shell.mass);
    assert!(
        (b.inertia - scaled)
            .to_cols_array()
            .iter()
            .all(|x| x.abs() < 1e-9)
    );
    // and the density changes nothing authored
    assert_eq!(level.authored_body_mass(2, 10.0).unwrap().mass, 30.0);
    assert!(level.authored_body_mass(2, 0.0).is_none());
    assert!(level.authored_body_mass(3, 1000.0).is_none());
}

#[test]
fn omi_bodies_and_a_scaled_body_node_keep_their_frames() {
    // an OMI body scaled 2x with a box child offset 1 along x: the centre of
    // mass moves with the scale, the moments stay as written
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let gltf = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "cart", "translation": [0, 3, 0], "rotation": [0, h, 0, h], "scale": [2, 2, 2],
             "children": [1],
             "extensions": {"OMI_physics_body": {"motion": {"type": "dynamic", "mass": 5,
                 "centerOfMass": [0.5, 0, 0], "inertiaDiagonal": [1, 2, 3],
                 "inertiaOrientation": [0, 0, h, h]}}}},
            {"name": "cart_box", "translation": [1, 0, 0],
             "extensions": {"OMI_physics_body": {"collider": {"shape": 0}}}}
        ],
        "extensionsUsed": ["OMI_physics_body", "OMI_physics_shape"],
        "extensions": {"OMI_physics_shape": {"shapes": [{"type": "box", "box": {"size": [1, 1, 1]}}]}}
    });
    let dir = std::env::temp_dir().join(format!("kiln-bodies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cart.gltf");
    std::fs::write(&path, gltf.to_string()).unwrap();
    let level =
        Level::from_bytes(&bake_file(&path, &BakeSettings::default()).unwrap().bytes).unwrap();
    let b = level.authored_body(0).unwrap();
    assert_eq!((b.name, b.members.len(), b.mass), ("cart", 1, Some(5.0)));
    // the frame drops the scale: the centre (0.5, 0, 0) is 1 m out in it
    assert!((b.centre_of_mass.unwrap() - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
    assert_eq!(b.inertia.unwrap().0, Vec3::new(1.0, 2.0, 3.0));
    // in the world: turned 90° about y, so +x goes to −z
    let m = level.authored_body_mass(0, 1000.0).unwrap();
    assert!(
        (m.centre - glam::DVec3::new(0.0, 3.0, -1.0)).length() < 1e-5,
        "{:?}",
        m.centre
    );
    // the principal axes: about z by 90° in the body, then the body's turn;
    // the tensor's trace is the moments' sum whatever the axes
    let trace = m.inertia.x_axis.x + m.inertia.y_axis.y + m.inertia.z_axis.z;
    assert!((trace - 6.0).abs() < 1e-5);
    // the principal axes turned by 90° about z keep the third (moment 3)
    // on the body's z, which the body's turn about y lays on world x
    assert!((m.inertia.x_axis.x - 3.0).abs() < 1e-5, "{}", m.inertia);
}

#[test]
fn malformed_authored_masses_are_errors_naming_the_node() {
    for (motion, want) in [
        (
            serde_json::json!({"mass": -1}),
            "mass -1 is not a number, finite and not negative",
        ),
        (
            serde_json::json!({"centerOfMass": [0, 1]}),
            "centerOfMass [0,1] is not 3 numbers",
        ),
        (
            serde_json::json!({"inertiaDiagonal": [1, 1, 1], "inertiaOrientation": [0, 0, 0, 0]}),
            "inertiaOrientation is not a rotation",
        ),
    ] {
        let gltf = serde_json::json!({
            "asset": {"version": "2.0"},
            "scenes": [{"nodes": [0]}],
            "nodes": [{"name": "b", "extensions": {"KHR_physics_rigid_bodies": {"motion": motion}}}],
        });
        let dir = std::env::temp_dir().join(format!("kiln-bad-mass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.gltf");
        std::fs::write(&path, gltf.to_string()).unwrap();
        let Err(e) = bake_file(&path, &BakeSettings::default()) else {
            panic!("a malformed mass ({want}) baked");
        };
        let e = e.to_string();
        assert!(
            e.contains("bad.gltf") && e.contains("node 0") && e.contains(want),
            "{e}"
        );
    }
}
