//! Export: the baked collision triangles, in world space, as a mesh any
//! viewer opens (`.glb`) or any tool reads (`.obj`). One glTF node / OBJ
//! object per instance, named after the source node, so a collider can be
//! traced back to what made it.

use kiln_formats::level::ArchivedShape;
use kiln_runtime::Level;
use serde_json::json;
use std::fmt::Write as _;

/// One instance's triangles in world space.
pub struct ExportObject {
    /// Object (node) name.
    pub name: String,
    /// World-space vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Triangles as indices into `positions`.
    pub triangles: Vec<[u32; 3]>,
}

/// Collects every instance of `level` in world space, in archive order.
pub fn world_objects(level: &Level) -> Vec<ExportObject> {
    let a = level.archive();
    a.instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let (local_positions, triangles) =
                shape_mesh(&a.shapes[inst.shape.to_native() as usize]);
            let m: Vec<f32> = inst
                .world_from_local
                .iter()
                .map(|v| v.to_native())
                .collect();
            let positions = local_positions
                .iter()
                .map(|p| {
                    [0, 4, 8].map(|r| m[r] * p[0] + m[r + 1] * p[1] + m[r + 2] * p[2] + m[r + 3])
                })
                .collect();
            ExportObject {
                name: level.object_name(i as u32).to_string(),
                positions,
                triangles,
            }
        })
        .collect()
}

/// A shape as a triangle mesh in its local space.
fn shape_mesh(shape: &ArchivedShape) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    match shape {
        ArchivedShape::TriMesh(mesh) => (
            mesh.vertices
                .iter()
                .map(|v| v.map(|c| c.to_native()))
                .collect(),
            mesh.triangles().map(|(t, _)| t).collect(),
        ),
    }
}

/// Wavefront OBJ text.
pub fn to_obj(objects: &[ExportObject]) -> String {
    let mut s = String::from("# Kiln collision export (world space)\n");
    let mut base = 1u64;
    for o in objects {
        let _ = writeln!(s, "o {}", o.name.replace(['\n', '\r'], " "));
        for p in &o.positions {
            let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
        }
        for t in &o.triangles {
            let _ = writeln!(
                s,
                "f {} {} {}",
                base + u64::from(t[0]),
                base + u64::from(t[1]),
                base + u64::from(t[2])
            );
        }
        base += o.positions.len() as u64;
    }
    s
}

/// A binary glTF 2.0 file with one mesh and one node per object.
pub fn to_glb(objects: &[ExportObject]) -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let mut meshes = Vec::new();
    let mut nodes = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        if o.triangles.is_empty() {
            continue;
        }
        let mut min = [f32::INFINITY; 3];
        let mut max = [f32::NEG_INFINITY; 3];
        let pos_offset = bin.len();
        for p in &o.positions {
            for k in 0..3 {
                min[k] = min[k].min(p[k]);
                max[k] = max[k].max(p[k]);
                bin.extend_from_slice(&p[k].to_le_bytes());
            }
        }
        views.push(json!({"buffer": 0, "byteOffset": pos_offset, "byteLength": bin.len() - pos_offset, "target": 34962}));
        accessors.push(json!({"bufferView": views.len() - 1, "componentType": 5126, "count": o.positions.len(), "type": "VEC3", "min": min, "max": max}));
        let idx_offset = bin.len();
        for t in &o.triangles {
            for v in t {
                bin.extend_from_slice(&v.to_le_bytes());
            }
        }
        views.push(json!({"buffer": 0, "byteOffset": idx_offset, "byteLength": bin.len() - idx_offset, "target": 34963}));
        accessors.push(json!({"bufferView": views.len() - 1, "componentType": 5125, "count": o.triangles.len() * 3, "type": "SCALAR"}));
        meshes.push(json!({"name": o.name, "primitives": [{"attributes": {"POSITION": accessors.len() - 2}, "indices": accessors.len() - 1}]}));
        nodes.push(
            json!({"name": o.name, "mesh": meshes.len() - 1, "extras": {"kiln_instance": i}}),
        );
    }
    let doc = json!({
        "asset": {"version": "2.0", "generator": concat!("kiln baker ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{"nodes": (0..nodes.len()).collect::<Vec<_>>()}],
        "nodes": nodes,
        "meshes": meshes,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}],
    });
    let mut json_bytes = serde_json::to_vec(&doc).expect("JSON values serialise");
    while json_bytes.len() % 4 != 0 {
        json_bytes.push(b' ');
    }
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}
