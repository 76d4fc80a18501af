//! Valid glTF that real editors write and that the baker must take:
//! `EXT_mesh_gpu_instancing` (each accessor absent in turn, normalised
//! integer rotations), documents with nothing in them, required extensions
//! that do not touch geometry, and morph targets with default weights.
//! Each file is written here, small, with an embedded buffer.

use glam::Vec3;
use kiln_baker::{BakeSettings, bake_file};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use serde_json::{Value, json};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-ingest-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A document around one buffer: `blobs` are appended in order, each gets a
/// buffer view (4-byte aligned), and `doc` may refer to them by index.
pub(crate) fn document(blobs: &[Vec<u8>], mut doc: Value) -> Vec<u8> {
    use base64::Engine;
    let mut bin = Vec::new();
    let mut views = Vec::new();
    for b in blobs {
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": b.len()}));
        bin.extend_from_slice(b);
    }
    doc["asset"] = json!({"version": "2.0"});
    doc["bufferViews"] = Value::Array(views);
    doc["buffers"] = json!([{"byteLength": bin.len(), "uri": format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    )}]);
    serde_json::to_vec(&doc).unwrap()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A unit cube (corners ±0.5) as blobs 0 (positions) and 1 (u16 indices).
fn cube_blobs() -> Vec<Vec<u8>> {
    let m = kiln_baker::SceneMesh::cuboid("cube", [0.0; 3], [0.5; 3]);
    let idx: Vec<u8> = m
        .triangles
        .iter()
        .flatten()
        .flat_map(|&i| (i as u16).to_le_bytes())
        .collect();
    vec![f32s(m.positions.as_flattened()), idx]
}

fn cube_accessors() -> Value {
    json!([
        {"bufferView": 0, "componentType": 5126, "count": 8, "type": "VEC3",
         "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]},
        {"bufferView": 1, "componentType": 5123, "count": 36, "type": "SCALAR"}
    ])
}

fn bake(name: &str, bytes: Vec<u8>) -> (Level, kiln_baker::Baked) {
    let p = tmp(name);
    std::fs::write(&p, bytes).unwrap();
    let baked = bake_file(&p, &BakeSettings::default()).unwrap_or_else(|e| panic!("{e}"));
    (Level::from_bytes(&baked.bytes).unwrap(), baked)
}

fn inside(level: &Level, p: [f32; 3]) -> Vec<String> {
    level
        .contains_point(Vec3::from(p), &Filter::ALL)
        .into_iter()
        .map(|i| level.object_name(i).unwrap_or_default().to_string())
        .collect()
}

#[test]
fn gpu_instancing_places_every_instance_with_any_attribute_missing() {
    let t = f32s(&[0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 10.0]);
    // a quarter turn about z as normalised i16 (x, y, z, w) for instance 1
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let q: Vec<u8> = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, s, s, 0.0, 0.0, 0.0, 1.0]
        .iter()
        .flat_map(|&x: &f32| ((x * 32767.0).round() as i16).to_le_bytes())
        .collect();
    let sc = f32s(&[1.0, 1.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0, 2.0]);
    let attrs = |with: &[&str]| {
        let mut a = serde_json::Map::new();
        for (k, i) in [("TRANSLATION", 2), ("ROTATION", 3), ("SCALE", 4)] {
            if with.contains(&k) {
                a.insert(k.into(), json!(i));
            }
        }
        Value::Object(a)
    };
    let file = |with: &[&str]| {
        let mut acc = cube_accessors();
        let a = acc.as_array_mut().unwrap();
        a.push(json!({"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC3"}));
        a.push(json!({"bufferView": 3, "componentType": 5122, "normalized": true, "count": 3, "type": "VEC4"}));
        a.push(json!({"bufferView": 4, "componentType": 5126, "count": 3, "type": "VEC3"}));
        let mut blobs = cube_blobs();
        blobs.extend([t.clone(), q.clone(), sc.clone()]);
        document(
            &blobs,
            json!({
                "extensionsUsed": ["EXT_mesh_gpu_instancing"],
                "extensionsRequired": ["EXT_mesh_gpu_instancing"],
                "scene": 0, "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "Crate", "mesh": 0, "translation": [0, 100, 0],
                           "extensions": {"EXT_mesh_gpu_instancing": {"attributes": attrs(with)}}}],
                "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
                "accessors": acc,
            }),
        )
    };
    // all three: instance 1 is stretched 4× along x then turned to lie along y
    let (level, baked) = bake("inst_all.gltf", file(&["TRANSLATION", "ROTATION", "SCALE"]));
    assert_eq!(baked.report.instances, 3);
    assert_eq!(inside(&level, [0.0, 100.0, 0.0]), ["Crate#0"]);
    assert_eq!(inside(&level, [10.0, 101.9, 0.0]), ["Crate#1"]);
    assert!(inside(&level, [11.9, 100.0, 0.0]).is_empty());
    assert_eq!(inside(&level, [0.0, 100.0, 10.9]), ["Crate#2"]);
    // numbered names are found by name; the two stretched crates keep both
    // matrices, the first is stored as a similarity
    for k in 0..3 {
        let name = format!("Crate#{k}");
        let i = level.find_object(&name).unwrap();
        assert_eq!(level.object_name(i).unwrap_or_default(), name.as_str());
    }
    assert_eq!(level.find_object("Crate#3"), None);
    assert_eq!(level.find_object("Crate"), None);
    assert_eq!(level.archive().affines.len(), 2);
    // each attribute missing in turn
    let (level, _) = bake("inst_t.gltf", file(&["TRANSLATION"]));
    assert_eq!(inside(&level, [10.4, 100.0, 0.0]), ["Crate#1"]);
    assert!(inside(&level, [10.6, 100.0, 0.0]).is_empty());
    let (level, baked) = bake("inst_r.gltf", file(&["ROTATION"]));
    assert_eq!(baked.report.instances, 3);
    assert_eq!(inside(&level, [0.0, 100.0, 0.0]).len(), 3);
    let (level, _) = bake("inst_s.gltf", file(&["SCALE"]));
    assert_eq!(inside(&level, [1.9, 100.0, 0.0]), ["Crate#1"]);
    assert_eq!(inside(&level, [0.0, 100.0, 0.9]), ["Crate#2"]);
    let (level, _) = bake("inst_tr.gltf", file(&["TRANSLATION", "ROTATION"]));
    assert_eq!(inside(&level, [10.4, 100.4, 0.0]), ["Crate#1"]);
    // no attribute at all is an error naming the node
    let p = tmp("inst_none.gltf");
    std::fs::write(&p, file(&[])).unwrap();
    let e = bake_file(&p, &BakeSettings::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("node 0: EXT_mesh_gpu_instancing"), "{e}");
}

#[test]
fn valid_documents_with_nothing_in_them_bake_to_empty_archives() {
    for (name, doc) in [
        ("no_scene_nodes.gltf", json!({"scene": 0, "scenes": [{}]})),
        ("no_scenes.gltf", json!({})),
        (
            "empty_nodes.gltf",
            json!({"scenes": [{"nodes": [0, 1]}], "nodes": [{"name": "a"}, {}]}),
        ),
    ] {
        let (level, baked) = bake(name, document(&[], doc));
        assert_eq!(level.archive().instances.len(), 0, "{name}");
        assert!(
            baked
                .report
                .warnings
                .iter()
                .any(|w| w.contains("no collision geometry")),
            "{name}: {:?}",
            baked.report.warnings
        );
        assert!(
            level
                .raycast(&Ray::new(Vec3::ZERO, Vec3::X, 10.0), &Filter::ALL)
                .is_none()
        );
    }
}

#[test]
fn required_extensions_that_do_not_touch_geometry_are_noted_not_refused() {
    let (level, baked) = bake(
        "lights.gltf",
        document(
            &cube_blobs(),
            json!({
                "extensionsUsed": ["KHR_lights_punctual", "KHR_materials_emissive_strength"],
                "extensionsRequired": ["KHR_lights_punctual", "KHR_materials_emissive_strength"],
                "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "Lamp", "mesh": 0}],
                "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
                "accessors": cube_accessors(),
            }),
        ),
    );
    assert_eq!(inside(&level, [0.0, 0.0, 0.0]), ["Lamp"]);
    let notes = baked.report.notes.join("\n");
    assert!(
        notes.contains("requires KHR_lights_punctual, which does not change collision geometry"),
        "{notes}"
    );
    assert!(notes.contains("KHR_materials_emissive_strength"), "{notes}");
}

#[test]
fn morph_targets_bake_with_their_default_weights() {
    // one target moving every corner up by 2: mesh weight 0.5 lifts the
    // cube by 1; a node's own weight 1.0 overrides it and lifts by 2
    let d = f32s(&[0.0, 2.0, 0.0].repeat(8));
    let mut blobs = cube_blobs();
    blobs.push(d);
    let mut acc = cube_accessors();
    acc.as_array_mut()
        .unwrap()
        .push(json!({"bufferView": 2, "componentType": 5126, "count": 8, "type": "VEC3"}));
    let (level, baked) = bake(
        "morph.gltf",
        document(
            &blobs,
            json!({
                "scenes": [{"nodes": [0, 1, 2]}],
                "nodes": [
                    {"name": "Mesh weights", "mesh": 0},
                    {"name": "Node weights", "mesh": 0, "translation": [5, 0, 0], "weights": [1.0]},
                    {"name": "Zero weights", "mesh": 0, "translation": [10, 0, 0], "weights": [0.0]}
                ],
                "meshes": [{"weights": [0.5], "primitives": [{
                    "attributes": {"POSITION": 0}, "indices": 1,
                    "targets": [{"POSITION": 2}]}]}],
                "accessors": acc,
            }),
        ),
    );
    assert_eq!(baked.report.instances, 3);
    assert_eq!(inside(&level, [0.0, 1.4, 0.0]), ["Mesh weights"]);
    assert!(inside(&level, [0.0, 0.0, 0.0]).is_empty());
    assert_eq!(inside(&level, [5.0, 2.4, 0.0]), ["Node weights"]);
    assert!(inside(&level, [5.0, 1.4, 0.0]).is_empty());
    assert_eq!(inside(&level, [10.0, 0.0, 0.0]), ["Zero weights"]);
    // three weightings of one mesh: three shapes
    assert_eq!(baked.report.colliders, 3);
}

#[test]
fn quantized_positions_without_the_required_extension_are_read_with_a_warning() {
    // the cube's corners as i16 (±1 → ±1 unit, not normalised)
    let p: Vec<u8> = (0..8)
        .flat_map(|i| kiln_formats::primitive::Cuboid::corner([1.0; 3], i))
        .flat_map(|c| (c as i16).to_le_bytes())
        .collect();
    let blobs = vec![p, cube_blobs().remove(1)];
    let (level, baked) = bake(
        "quantized.gltf",
        document(
            &blobs,
            json!({
                "extensionsUsed": ["KHR_mesh_quantization"],
                "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "Q", "mesh": 0}],
                "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
                "accessors": [
                    {"bufferView": 0, "componentType": 5122, "count": 8, "type": "VEC3"},
                    {"bufferView": 1, "componentType": 5123, "count": 36, "type": "SCALAR"}
                ],
            }),
        ),
    );
    assert_eq!(inside(&level, [0.9, 0.9, 0.9]), ["Q"]);
    assert!(
        baked
            .report
            .warnings
            .iter()
            .any(|w| w.contains("without requiring KHR_mesh_quantization")),
        "{:?}",
        baked.report.warnings
    );
}

#[test]
fn a_draco_stream_without_position_leaves_the_accessors_to_speak() {
    // the extension names only NORMAL: POSITION and indices come from the
    // accessors (the extension's fallback rule); the "stream" is never read
    let (level, baked) = bake(
        "draco_fallback.gltf",
        document(
            &cube_blobs(),
            json!({
                "extensionsUsed": ["KHR_draco_mesh_compression"],
                "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "Box", "mesh": 0}],
                "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1,
                    "extensions": {"KHR_draco_mesh_compression": {"bufferView": 1, "attributes": {"NORMAL": 0}}}}]}],
                "accessors": cube_accessors(),
            }),
        ),
    );
    assert_eq!(baked.report.scene_triangles, 12);
    assert_eq!(inside(&level, [0.4, -0.4, 0.4]), ["Box"]);
}
