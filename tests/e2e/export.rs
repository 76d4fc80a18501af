//! `baker export` writes colliders as glTF physics (`KHR_physics_rigid_bodies`
//! with `KHR_implicit_shapes`); baking that file again gives the same objects,
//! the same kinds and the same answers: boxes, spheres and capsules as
//! analytic shapes, polytopes as convex hulls, triangle meshes as meshes,
//! concave solids as solids (re-simplified: within the deviation).

use glam::{DAffine3, DQuat, DVec3, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_file, bake_scene, export};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::{Rng, levels_dir, object_kinds, ray_mix};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// (name, kind) of every object, sorted.
fn kinds(level: &Level) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = object_kinds(level)
        .into_iter()
        .map(|(name, kind, _)| (name, kind))
        .collect();
    v.sort();
    v
}

/// (name, layer names) of every object, sorted.
fn layers(level: &Level) -> Vec<(String, Vec<String>)> {
    let names: Vec<&str> = level.layer_names().collect();
    let mut v: Vec<(String, Vec<String>)> = level
        .objects()
        .map(|i| {
            let mask = level.object_layers(i).unwrap_or(0);
            let mut mine: Vec<String> = (0..names.len())
                .filter(|&k| mask & (1 << k) != 0)
                .map(|k| names[k].to_string())
                .collect();
            mine.sort();
            (level.object_name(i).unwrap_or_default().to_string(), mine)
        })
        .collect();
    v.sort();
    v
}

/// Exports `original` as glTF physics, bakes the file and compares.
fn round_trip(what: &str, original: &[u8]) {
    let level = Level::from_bytes(original).unwrap();
    let glb = export::to_physics_glb(level.archive());
    let dir = std::env::temp_dir().join(format!("kiln-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.glb", what.replace(['/', ' '], "_")));
    std::fs::write(&path, &glb).unwrap();
    let again =
        bake_file(&path, &BakeSettings::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = Level::from_bytes(&again.bytes).unwrap();
    assert_eq!(kinds(&back), kinds(&level), "{what}: objects and kinds");
    assert_eq!(
        layers(&back),
        layers(&level),
        "{what}: collision layers by object"
    );
    let a = level.archive();
    let n = &a.top;
    let (lo, hi) = (
        Vec3::from(n.min.map(|v| v.to_native())),
        Vec3::from(n.max.map(|v| v.to_native())),
    );
    let size = (hi - lo).max_element();
    let concave = |l: &Level, o: kiln_runtime::ObjectId| {
        let a = l.archive();
        a.colliders[a.instances[o.index() as usize].collider.to_native() as usize].kind_name()
            == "bsp"
    };
    // the concave pipeline simplifies the exported collider again, so a
    // concave solid may move by up to its deviation
    let deviation = 2.0 * BakeSettings::default().max_deviation.get() as f32;
    // rays that meet no concave solid in either archive answer the same;
    // those that do, within the deviation almost always (a ray grazing a
    // re-simplified torus may pass on to what is behind it)
    let (mut exact, mut near, mut near_off) = (0, 0, 0);
    for ray in ray_mix(lo, hi, 3000, 11) {
        let h0 = level.raycast(&Ray::new(ray.origin, ray.dir, ray.max_t), &Filter::ALL);
        let h1 = back.raycast(&Ray::new(ray.origin, ray.dir, ray.max_t), &Filter::ALL);
        let near_bsp = h0.is_some_and(|h| concave(&level, h.object))
            || h1.is_some_and(|h| concave(&back, h.object));
        if near_bsp {
            near += 1;
            let agree = matches!((h0, h1), (Some(a0), Some(a1))
                if (a0.t - a1.t).abs() <= deviation / ray.dir.length());
            near_off += usize::from(!agree);
            continue;
        }
        match (h0, h1) {
            (Some(a0), Some(a1)) => {
                exact += 1;
                assert!(
                    (a0.t - a1.t).abs() <= 1e-4 * (1.0 + size) / ray.dir.length(),
                    "{what}: ray {ray:?}: {} ({}) vs {} ({})",
                    a0.t,
                    level.object_name(a0.object).unwrap_or_default(),
                    a1.t,
                    back.object_name(a1.object).unwrap_or_default()
                );
                assert_eq!(
                    level.object_name(a0.object).unwrap_or_default(),
                    back.object_name(a1.object).unwrap_or_default(),
                    "{what}: {ray:?}"
                );
            }
            (None, None) => {}
            (h0, h1) => panic!("{what}: {ray:?}: {h0:?} vs {h1:?}"),
        }
    }
    assert!(
        near_off * 20 <= near,
        "{what}: {near_off} of {near} rays at concave solids off by more than {deviation}"
    );
    if near > 0 {
        println!(
            "{what}: {near_off} of {near} rays at concave solids off by more than {deviation} m"
        );
    }
    // points: the same objects contain them (away from concave solids'
    // surfaces)
    let mut rng = Rng::new(5);
    for _ in 0..3000 {
        let p = lo + (hi - lo) * Vec3::new(rng.f32(), rng.f32(), rng.f32());
        let holders = |l: &Level| {
            let mut names: Vec<String> = l
                .contains_point(p, &Filter::ALL)
                .into_iter()
                .filter(|&i| !concave(l, i))
                .map(|i| l.object_name(i).unwrap_or_default().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(holders(&level), holders(&back), "{what}: point {p}");
    }
    let only_concave = level.objects().all(|o| concave(&level, o));
    assert!(
        exact > 50 || only_concave && near > 50,
        "{what}: {exact} exact ray hits, {near} at concave solids"
    );
}

#[test]
fn exported_physics_bakes_back_to_the_same_colliders() {
    // every automatic kind, and shared meshes
    let sample = fixture("../samples/shape_collection.glb");
    round_trip(
        "shape_collection",
        &bake_file(&sample, &BakeSettings::default()).unwrap().bytes,
    );
    // authored colliders of every extension and convention
    for f in [
        "khr_physics.gltf",
        "omi_physics.gltf",
        "unreal_names.gltf",
        "godot_names.gltf",
    ] {
        let p = fixture("fixtures/colliders").join(f);
        let baked = bake_file(&p, &BakeSettings::default()).unwrap().bytes;
        if f == "khr_physics.gltf" {
            // the fixture puts objects in layers, so the round trip checks them
            let level = Level::from_bytes(&baked).unwrap();
            assert!(layers(&level).iter().any(|(_, l)| l.len() > 1), "{f}");
        }
        round_trip(f, &baked);
    }
    // oriented primitives under rotated, scaled placements
    let rot = DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -0.9, 0.25);
    let mut crate_mesh = SceneMesh::cuboid("crate", [0.0; 3], [0.5, 1.0, 1.5]);
    for p in &mut crate_mesh.positions {
        *p = (rot * DVec3::from(p.map(f64::from))).as_vec3().to_array();
    }
    let place = |name: &str, mesh, xf| SceneInstance {
        name: name.into(),
        mesh,
        transform: xf,
        ..SceneInstance::default()
    };
    let scene = Scene {
        meshes: vec![crate_mesh],
        instances: vec![
            place("Crate", 0, DAffine3::IDENTITY),
            place(
                "FarCrate",
                0,
                DAffine3::from_scale_rotation_translation(
                    DVec3::splat(2.0),
                    DQuat::from_rotation_y(0.7),
                    DVec3::new(30.0, 2.0, -10.0),
                ),
            ),
            // non-uniform: the hull stands in, exported as a convex mesh
            place(
                "Squashed",
                0,
                DAffine3::from_scale_rotation_translation(
                    DVec3::new(1.0, 0.5, 2.0),
                    DQuat::IDENTITY,
                    DVec3::new(-8.0, 0.0, 0.0),
                ),
            ),
        ],
        ..Scene::default()
    };
    let baked = bake_scene(&scene, &BakeSettings::default());
    let kinds0 = kinds(&Level::from_bytes(&baked.bytes).unwrap());
    assert_eq!(
        kinds0,
        [
            ("Crate".to_string(), "cuboid".to_string()),
            ("FarCrate".into(), "cuboid".into()),
            ("Squashed".into(), "polytope".into())
        ]
    );
    round_trip("oriented crates", &baked.bytes);
    // triangle meshes and boxes of a real level
    if let Some(dir) = levels_dir() {
        for f in ["godot_truck_town.gltf", "khr_Duck.glb"] {
            round_trip(
                f,
                &bake_file(&dir.join(f), &BakeSettings::default())
                    .unwrap()
                    .bytes,
            );
        }
    }
}

#[test]
fn the_export_declares_analytic_shapes_and_static_colliders() {
    let sample = fixture("../samples/shape_collection.glb");
    let level =
        Level::from_bytes(&bake_file(&sample, &BakeSettings::default()).unwrap().bytes).unwrap();
    let glb = export::to_physics_glb(level.archive());
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let doc: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let shapes = doc["extensions"]["KHR_implicit_shapes"]["shapes"]
        .as_array()
        .unwrap();
    // one of each, in the order the instances meet them
    let mut types: Vec<&str> = shapes.iter().map(|s| s["type"].as_str().unwrap()).collect();
    types.sort_unstable();
    assert_eq!(types, ["box", "sphere"], "{doc}");
    let cube = shapes.iter().find(|s| s["type"] == "box").unwrap();
    assert_eq!(cube["box"]["size"], serde_json::json!([2.0, 2.0, 2.0]));
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 7);
    for n in nodes {
        let c = &n["extensions"]["KHR_physics_rigid_bodies"]["collider"]["geometry"];
        assert!(c.is_object(), "{n}");
        // static: no motion
        assert!(n["extensions"]["KHR_physics_rigid_bodies"]["motion"].is_null());
        // every collider has a preview mesh for plain viewers
        assert!(n["mesh"].is_u64(), "{n}");
        match n["name"].as_str().unwrap() {
            "Cube" | "Sphere" => assert!(c["shape"].is_u64(), "{n}"),
            "Cone" | "Cylinder" | "Icosphere" => assert_eq!(c["convexHull"], true, "{n}"),
            "Torus" | "Torus.001" => {
                assert_eq!(n["extras"]["kiln_collider"], "concave", "{n}");
                assert!(c["convexHull"].is_null(), "{n}");
            }
            other => panic!("{other}"),
        }
    }
    // the two tori share one mesh
    let torus_meshes: Vec<&serde_json::Value> = nodes
        .iter()
        .filter(|n| n["name"].as_str().unwrap().starts_with("Torus"))
        .map(|n| &n["mesh"])
        .collect();
    assert_eq!(torus_meshes[0], torus_meshes[1]);
}

/// A piece's shape as [`world_piece_shapes`] lists it: its kind's name,
/// its sizes and centre.
type PieceShape = (String, Vec<f32>);

/// Every decomposed object's piece shapes, by object name: each as its
/// kind's name and its parameters with its centre in world space (a box's
/// half extents, a sphere's radius, a capsule's half height and radius, all
/// times the placement's scale), sorted; a hull is its kind alone.
fn world_piece_shapes(level: &Level) -> Vec<(String, Vec<PieceShape>)> {
    use kiln_formats::level::ArchivedPieceKind as K;
    let a = level.archive();
    let mut v: Vec<(String, Vec<PieceShape>)> = (0..a.instances.len())
        .filter_map(|i| {
            let inst = &a.instances[i];
            let d = a.decomposition(inst.collider.to_native())?;
            let m = a.rows(inst).world_from_local;
            let scale = Vec3::new(m[0], m[4], m[8]).length();
            let mut shapes: Vec<PieceShape> = d
                .shapes
                .iter()
                .map(|s| {
                    let sizes: Vec<f32> = match &s.kind {
                        K::Hull => return ("hull".to_string(), Vec::new()),
                        K::Cuboid(c) => c.half_extents.iter().map(|x| x.to_native()).collect(),
                        K::Sphere(b) => vec![b.radius.to_native()],
                        K::Capsule(c) => vec![c.half_height.to_native(), c.radius.to_native()],
                    };
                    let c = place(&m, s.centre.map(|x| x.to_native()));
                    let mut p: Vec<f32> = sizes.iter().map(|x| x * scale).collect();
                    // a box's sides in order: its frame may name them otherwise
                    p.sort_by(|x, y| x.total_cmp(y));
                    p.extend(c);
                    (s.kind.name().to_string(), p)
                })
                .collect();
            shapes.sort_by(|x, y| x.partial_cmp(y).unwrap());
            Some((a.instance_name(i).to_string(), shapes))
        })
        .collect();
    v.sort_by(|x, y| x.0.cmp(&y.0));
    v
}

/// `p` placed by the row-major 3×4 matrix `m`.
fn place(m: &[f32; 12], p: [f32; 3]) -> [f32; 3] {
    [0, 1, 2].map(|r| m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3])
}

/// Every decomposed object's pieces in world space, by object name: each
/// piece's corners, sorted, the pieces sorted.
fn world_pieces(level: &Level) -> Vec<(String, Vec<Vec<[f32; 3]>>)> {
    let a = level.archive();
    let mut v: Vec<(String, Vec<Vec<[f32; 3]>>)> = (0..a.instances.len())
        .filter_map(|i| {
            let pieces = export::piece_objects(a, i);
            (!pieces.is_empty()).then(|| {
                let mut ps: Vec<Vec<[f32; 3]>> = pieces
                    .into_iter()
                    .map(|p| {
                        let mut c = p.positions;
                        c.sort_by(|x, y| x.partial_cmp(y).unwrap());
                        c
                    })
                    .collect();
                ps.sort_by(|x, y| x.partial_cmp(y).unwrap());
                (a.instance_name(i).to_string(), ps)
            })
        })
        .collect();
    v.sort_by(|x, y| x.0.cmp(&y.0));
    v
}

/// The farthest a corner of `a` lies from the corners of `b`.
fn corners_apart(a: &[[f32; 3]], b: &[[f32; 3]]) -> f32 {
    a.iter()
        .map(|x| {
            b.iter()
                .map(|y| Vec3::from(*x).distance(Vec3::from(*y)))
                .fold(f32::INFINITY, f32::min)
        })
        .fold(0.0, f32::max)
}

/// The export of `baked` as a glTF document, and that file baked again.
fn export_and_bake(what: &str, baked: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let level = Level::from_bytes(baked).unwrap();
    let glb = export::to_physics_glb(level.archive());
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let doc: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let dir = std::env::temp_dir().join(format!("kiln-export-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{what}.glb"));
    std::fs::write(&path, &glb).unwrap();
    let again =
        bake_file(&path, &BakeSettings::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    (doc, again.bytes)
}

#[test]
fn a_decomposed_object_exports_as_a_physics_compound_and_bakes_back_with_its_pieces() {
    // the props sample's dynamic L and U get pieces by default; the shape
    // collection's static tori when asked (`--decompose`); a dynamic open
    // box, whose collider is its triangles
    let mut decompose = BakeSettings::default();
    decompose.decompose = true;
    let mut open = SceneMesh::cuboid("open_box", [0.0; 3], [1.0, 0.5, 2.0]);
    open.triangles.remove(0);
    open.source_ids.remove(0);
    let open_box = Scene {
        meshes: vec![open],
        instances: vec![SceneInstance {
            name: "open_box".into(),
            mesh: 0,
            transform: DAffine3::from_translation(DVec3::new(1.0, 2.0, 3.0)),
            motion: kiln_baker::Motion::Dynamic,
            ..SceneInstance::default()
        }],
        ..Scene::default()
    };
    for (what, baked, objects) in [
        (
            "props",
            bake_file(&fixture("../samples/props.gltf"), &BakeSettings::default())
                .unwrap()
                .bytes,
            2,
        ),
        (
            "shapes",
            bake_file(&fixture("../samples/shape_collection.glb"), &decompose)
                .unwrap()
                .bytes,
            2,
        ),
        (
            "open_box",
            bake_scene(&open_box, &BakeSettings::default()).bytes,
            1,
        ),
    ] {
        let level = Level::from_bytes(&baked).unwrap();
        let before = world_pieces(&level);
        assert_eq!(before.len(), objects, "{what}: decomposed objects");
        // the props' pieces are boxes of cells, given as boxes; the tori's
        // hulls
        let shapes = world_piece_shapes(&level);
        let boxes = shapes
            .iter()
            .flat_map(|(_, s)| s)
            .filter(|s| s.0 == "cuboid")
            .count();
        let all = shapes.iter().map(|(_, s)| s.len()).sum::<usize>();
        match what {
            "props" => assert_eq!(boxes, all, "{what}: {shapes:?}"),
            "shapes" => assert_eq!(boxes, 0, "{what}: {shapes:?}"),
            _ => {}
        }
        let (doc, again) = export_and_bake(what, &baked);
        // the compound as glTF physics says it: the object's node holds the
        // body (its motion) and no collider; each child one convex piece
        let nodes = doc["nodes"].as_array().unwrap();
        for (name, pieces) in &before {
            let n = nodes.iter().find(|n| n["name"] == name.as_str()).unwrap();
            let body = &n["extensions"]["KHR_physics_rigid_bodies"];
            assert!(body["collider"].is_null(), "{what}: {n}");
            let dynamic = what != "shapes";
            assert_eq!(body["motion"].is_object(), dynamic, "{what}: {n}");
            assert_eq!(n["extras"]["kiln_pieces"], pieces.len(), "{what}: {n}");
            // a solid says so; triangles say nothing
            let solid = what != "open_box";
            assert_eq!(
                n["extras"]["kiln_collider"] == "concave",
                solid,
                "{what}: {n}"
            );
            let children = n["children"].as_array().unwrap();
            assert_eq!(children.len(), pieces.len(), "{what}: {n}");
            for (k, c) in children.iter().enumerate() {
                let ci = c.as_u64().unwrap();
                let child = &nodes[ci as usize];
                let geometry =
                    &child["extensions"]["KHR_physics_rigid_bodies"]["collider"]["geometry"];
                // a hull names the piece's own mesh; a box is an implicit
                // shape at the node's frame
                match geometry["shape"].as_u64() {
                    Some(si) => {
                        let shape =
                            &doc["extensions"]["KHR_implicit_shapes"]["shapes"][si as usize];
                        assert_eq!(shape["type"], "box", "{what}: {shape}");
                        assert!(child["rotation"].is_array(), "{what}: {child}");
                        assert!(child["translation"].is_array(), "{what}: {child}");
                    }
                    None => {
                        assert_eq!(geometry["node"], ci, "{what}: {child}");
                        assert_eq!(geometry["convexHull"], true, "{what}: {child}");
                    }
                }
                assert_eq!(child["extras"]["kiln_piece"], k, "{what}: {child}");
                assert!(child["mesh"].is_u64(), "{what}: {child}");
            }
        }
        // baked back: the same solids (judged by the round trip of every
        // query) with the same pieces, taken from the file
        let back = Level::from_bytes(&again).unwrap();
        let after = world_pieces(&back);
        assert_eq!(after.len(), before.len(), "{what}");
        for ((n0, p0), (n1, p1)) in before.iter().zip(&after) {
            assert_eq!(n0, n1, "{what}");
            assert_eq!(p0.len(), p1.len(), "{what}: {n0}: piece count");
            // each piece comes back as itself: its corners within 1e-6 of
            // the size of the other's (the faces are written beside the
            // corners: a hull rebuilt from f32 corners could come out
            // with other faces)
            for a in p0 {
                let off = p1
                    .iter()
                    .map(|b| corners_apart(a, b).max(corners_apart(b, a)))
                    .fold(f32::INFINITY, f32::min);
                let size = a.iter().fold(1.0f32, |m, x| m.max(Vec3::from(*x).length()));
                assert!(
                    off <= 1e-4 * size,
                    "{what}: {n0}: a piece came back {off} off"
                );
            }
        }
        // and as the same shapes: each primitive's sizes and centre within
        // 1e-5 of the object's size
        let again_shapes = world_piece_shapes(&back);
        assert_eq!(again_shapes.len(), shapes.len(), "{what}");
        for ((n0, s0), (_, s1)) in shapes.iter().zip(&again_shapes) {
            assert_eq!(s0.len(), s1.len(), "{what}: {n0}");
            for (x, y) in s0.iter().zip(s1) {
                assert_eq!(x.0, y.0, "{what}: {n0}: {s0:?} against {s1:?}");
                for (a, b) in x.1.iter().zip(&y.1) {
                    assert!((a - b).abs() <= 1e-4, "{what}: {n0}: {s0:?} against {s1:?}");
                }
            }
        }
        let a = back.archive();
        let rules: Vec<&str> = (0..a.instances.len())
            .filter(|&i| before.iter().any(|(n, _)| *n == a.instance_name(i)))
            .map(|i| a.instance_rule(i))
            .collect();
        assert_eq!(rules.len(), objects, "{what}");
        for r in rules {
            assert!(r.contains("convex pieces from the file"), "{what}: {r}");
        }
        assert_eq!(kinds(&back), kinds(&level), "{what}");
        // every query the same (the helper's rays span the static objects)
        if what != "open_box" {
            round_trip(what, &baked);
        }
    }
}
