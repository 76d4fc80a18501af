//! Broken glTF input: every failure is an error that names the file and the
//! cause, never a panic.

use kiln_baker::{BakeSettings, bake_file, ingest};
use kiln_tests::{Rng, levels_dir, samples_dir};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-broken-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn expect_error(path: &Path, cause: &str) {
    let e = bake_file(path, &BakeSettings::default())
        .err()
        .unwrap_or_else(|| panic!("{} baked", path.display()));
    let msg = e.to_string();
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(msg.contains(&*name), "error does not name the file: {msg}");
    assert!(
        msg.to_lowercase().contains(&cause.to_lowercase()),
        "error does not say {cause:?}: {msg}"
    );
}

/// A minimal one-triangle glTF with an embedded buffer; `patch` edits the JSON.
fn triangle_gltf(patch: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    use base64::Engine;
    let mut bin = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    for i in [0u16, 1, 2, 0] {
        bin.extend_from_slice(&i.to_le_bytes());
    }
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let mut doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": "tri"}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"},
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 6}
        ],
        "buffers": [{"byteLength": 44, "uri": uri}]
    });
    patch(&mut doc);
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn the_minimal_triangle_bakes() {
    let p = tmp("ok.gltf");
    std::fs::write(&p, triangle_gltf(|_| {})).unwrap();
    let b = bake_file(&p, &BakeSettings::default()).unwrap();
    assert_eq!(b.report.baked_triangles, 1);
}

#[test]
fn broken_documents_name_the_file_and_the_cause() {
    type Patch = Box<dyn FnOnce(&mut serde_json::Value)>;
    let cases: Vec<(&str, Patch, &str)> = vec![
        (
            "bad_index.gltf",
            Box::new(|d| {
                // index 7 of 3 vertices: rewrite the index bytes through a new buffer
                use base64::Engine;
                let mut bin = Vec::new();
                for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
                    bin.extend_from_slice(&v.to_le_bytes());
                }
                for i in [0u16, 1, 7, 0] {
                    bin.extend_from_slice(&i.to_le_bytes());
                }
                d["buffers"][0]["uri"] = format!(
                    "data:application/octet-stream;base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(&bin)
                )
                .into();
            }),
            "out of range",
        ),
        (
            "missing_buffer.gltf",
            Box::new(|d| d["buffers"][0]["uri"] = "nowhere.bin".into()),
            "nowhere.bin",
        ),
        (
            "view_past_buffer.gltf",
            Box::new(|d| d["bufferViews"][1]["byteLength"] = 400.into()),
            "run past",
        ),
        (
            "accessor_past_view.gltf",
            Box::new(|d| d["accessors"][0]["count"] = 30.into()),
            "run past",
        ),
        (
            "bad_component.gltf",
            Box::new(|d| d["accessors"][0]["componentType"] = 1234.into()),
            "componentType",
        ),
        (
            "no_such_accessor.gltf",
            Box::new(|d| d["meshes"][0]["primitives"][0]["indices"] = 9.into()),
            "accessor 9",
        ),
        (
            "no_such_mesh.gltf",
            Box::new(|d| d["nodes"][0]["mesh"] = 5.into()),
            "mesh 5",
        ),
        (
            "cycle.gltf",
            Box::new(|d| d["nodes"][0]["children"] = serde_json::json!([0])),
            "reached twice",
        ),
        (
            "draco_no_view.gltf",
            Box::new(|d| {
                d["extensionsRequired"] = serde_json::json!(["KHR_draco_mesh_compression"]);
                d["meshes"][0]["primitives"][0]["extensions"] = serde_json::json!(
                    {"KHR_draco_mesh_compression": {"attributes": {"POSITION": 0}}});
            }),
            "KHR_draco_mesh_compression has no bufferView",
        ),
        (
            "draco_garbage.gltf",
            Box::new(|d| {
                d["extensionsRequired"] = serde_json::json!(["KHR_draco_mesh_compression"]);
                d["meshes"][0]["primitives"][0]["extensions"] = serde_json::json!(
                    {"KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}});
            }),
            "mesh 0 primitive 0: the Draco stream does not decode",
        ),
        (
            "unknown_ext.gltf",
            Box::new(|d| d["extensionsRequired"] = serde_json::json!(["EXT_future"])),
            "requires the extension EXT_future, which this baker does not implement",
        ),
        (
            "nan_matrix.gltf",
            Box::new(|d| d["nodes"][0]["scale"] = serde_json::json!([1e39, 1.0, 1.0])),
            "not finite",
        ),
        (
            "huge_count.gltf",
            Box::new(|d| {
                d["accessors"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("bufferView");
                d["accessors"][0]["count"] = 4_000_000_000u64.into();
            }),
            "count",
        ),
        (
            "omi_no_such_shape.gltf",
            Box::new(|d| {
                d["extensions"] = serde_json::json!({"OMI_physics_shape": {"shapes": []}});
                d["nodes"][0]["extensions"] =
                    serde_json::json!({"OMI_physics_body": {"collider": {"shape": 3}}});
            }),
            "collider shape 3 does not exist",
        ),
        (
            "omi_shapes_not_array.gltf",
            Box::new(|d| {
                d["extensions"] = serde_json::json!({"OMI_physics_shape": {"shapes": 1}});
            }),
            "`shapes` is missing or not an array",
        ),
        (
            "khr_negative_radius.gltf",
            Box::new(|d| {
                d["extensions"] = serde_json::json!({"KHR_implicit_shapes": {"shapes": [
                    {"type": "sphere", "sphere": {"radius": -1.0}}]}});
            }),
            "KHR_implicit_shapes shape 0: `radius` must be a positive number",
        ),
        (
            "khr_collider_without_geometry.gltf",
            Box::new(|d| {
                d["nodes"][0]["extensions"] = serde_json::json!({"KHR_physics_rigid_bodies": {"collider": {"geometry": {"node": "x"}}}});
            }),
            "`node` is missing or not an index",
        ),
        (
            "khr_no_such_geometry_node.gltf",
            Box::new(|d| {
                d["nodes"][0]["extensions"] = serde_json::json!({"KHR_physics_rigid_bodies": {"collider": {"geometry": {"node": 9}}}});
            }),
            "geometry node 9 does not exist",
        ),
    ];
    for (name, patch, cause) in cases {
        let p = tmp(name);
        std::fs::write(&p, triangle_gltf(patch)).unwrap();
        expect_error(&p, cause);
    }
    let p = tmp("not_json.gltf");
    std::fs::write(&p, b"this is not glTF").unwrap();
    expect_error(&p, "glTF");
    expect_error(&tmp("does_not_exist.glb"), "cannot read");
}

#[test]
fn truncated_and_scrambled_glbs_are_errors_not_panics() {
    let src = levels_dir()
        .map(|d| d.join("khr_Box.glb"))
        .unwrap_or_else(|| samples_dir().join("khr_Box.glb"));
    let good = std::fs::read(&src).unwrap();
    let name = Path::new("box.glb");
    for cut in (0..good.len()).step_by(7) {
        let r = ingest::load_bytes(good[..cut].to_vec(), Path::new("."), name);
        let e = r
            .err()
            .unwrap_or_else(|| panic!("truncated at {cut} parsed"));
        assert!(e.to_string().starts_with("box.glb: "), "{e}");
    }
    let mut rng = Rng::new(5);
    for _ in 0..3000 {
        let mut bytes = good.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len());
            bytes[at] = rng.below(256) as u8;
        }
        // either bakes or fails cleanly; never panics
        if let Ok(i) = ingest::load_bytes(bytes, Path::new("."), name) {
            let _ = kiln_baker::bake_scene(&i.scene, &BakeSettings::default());
        }
    }
}

#[test]
fn damaged_meshopt_payloads_fail_cleanly_or_decode() {
    let Some(dir) = levels_dir() else { return };
    let good = std::fs::read(dir.join("meshopt_pirate.glb")).unwrap();
    let mut rng = Rng::new(11);
    let (mut errors, mut decoded, mut baked) = (0, 0, 0);
    for _ in 0..500 {
        let mut bytes = good.clone();
        // damage the binary chunk (after the JSON), where the compressed streams live
        let at = good.len() / 2 + rng.below(good.len() / 2);
        bytes[at] = rng.below(256) as u8;
        match ingest::load_bytes(bytes, &dir, Path::new("pirate.glb")) {
            // every damaged file is decoded or rejected; the first of every
            // four that decode is also baked (a bake of the pirate is a
            // sixth of a second, and all 500 made this the test suite's
            // longest test, 89 s; the fuzz targets bake many more)
            Ok(i) => {
                decoded += 1;
                if decoded % 4 == 1 {
                    let _ = kiln_baker::bake_scene(&i.scene, &BakeSettings::default());
                    baked += 1;
                }
            }
            Err(e) => {
                assert!(e.to_string().starts_with("pirate.glb: "));
                errors += 1;
            }
        }
    }
    assert!(baked > 0, "no damaged payload decoded");
    eprintln!(
        "damaged meshopt payloads: {errors} of 500 rejected, the rest decoded to other geometry \
         ({baked} of them baked)"
    );
}

#[test]
fn fuzzer_findings_stay_fixed() {
    // every file in tests/fuzz_regressions once crashed a fuzz target
    // (the query_judge target's inputs, in their own folder, are replayed
    // by the differential tests)
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz_regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap();
        if let Ok(i) = ingest::load_bytes(bytes, Path::new("."), Path::new(name)) {
            let _ = kiln_baker::bake_scene(&i.scene, &BakeSettings::default());
        }
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn the_content_hash_covers_external_buffers() {
    let dir = tmp("hash");
    std::fs::create_dir_all(&dir).unwrap();
    let gltf = dir.join("tri.gltf");
    let bin = dir.join("tri.bin");
    // the minimal triangle, with its buffer moved to a file
    std::fs::write(
        &gltf,
        triangle_gltf(|d| d["buffers"][0]["uri"] = "tri.bin".into()),
    )
    .unwrap();
    let write_bin = |y: f32| {
        let mut b = Vec::new();
        for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, y, 0.0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for i in [0u16, 1, 2, 0] {
            b.extend_from_slice(&i.to_le_bytes());
        }
        std::fs::write(&bin, b).unwrap();
    };
    let hash = || {
        let bytes = bake_file(&gltf, &BakeSettings::default()).unwrap().bytes;
        kiln_formats::Header::parse(&bytes).unwrap().content_hash
    };
    write_bin(1.0);
    let first = hash();
    assert_eq!(first, hash(), "same input, same hash");
    write_bin(2.0);
    assert_ne!(first, hash(), "a changed .bin changes the hash");
}

#[test]
fn damaged_draco_streams_fail_cleanly_or_decode() {
    let Some(dir) = levels_dir() else { return };
    let good = std::fs::read(dir.join("khr_Box_draco.glb")).unwrap();
    let mut rng = Rng::new(13);
    let (mut errors, mut draco_errors) = (0, 0);
    for i in 0..2000 {
        let mut bytes = good.clone();
        // the binary chunk (the Draco stream) is the file's tail
        let tail = good.len() - 120;
        if i % 2 == 0 {
            let at = tail + rng.below(120);
            bytes[at] ^= 1 << rng.below(8);
        } else {
            bytes.truncate(tail + rng.below(120));
        }
        match ingest::load_bytes(bytes, &dir, Path::new("box_draco.glb")) {
            Ok(i) => {
                let _ = kiln_baker::bake_scene(&i.scene, &BakeSettings::default());
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("box_draco.glb: "), "{msg}");
                errors += 1;
                draco_errors += usize::from(msg.contains("Draco"));
            }
        }
    }
    eprintln!("2000 damaged Draco boxes: {errors} errors ({draco_errors} from the decoder)");
    assert!(draco_errors > 0, "the decoder's errors are reached");
}
