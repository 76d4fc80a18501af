//! `KHR_draco_mesh_compression` with every method draco-core can decode:
//! sequential and EdgeBreaker connectivity (standard, valence and the
//! legacy predictive traversal), current and pre-2.2 bitstreams, lossless
//! and quantised positions. Each stream is written here with draco-core's
//! own encoder (the encoder reports which method it really used), put in a
//! glTF file, ingested, and compared triangle for triangle with the same
//! mesh stored plainly.

use draco_core::mesh_edgebreaker_encoder::EdgebreakerTraversal;
use draco_core::{
    DataType, EncoderBuffer, EncoderOptions, FaceIndex, GeometryAttributeType, Mesh, MeshEncoder,
    PointAttribute,
};
use kiln_baker::ingest;
use kiln_tests::{sorted_triangles, torus_knot};
use serde_json::json;
use std::path::PathBuf;

fn draco_mesh(pos: &[[f32; 3]], tris: &[[u32; 3]]) -> Mesh {
    let mut mesh = Mesh::new();
    let mut att = PointAttribute::new();
    att.init(
        GeometryAttributeType::Position,
        3,
        DataType::Float32,
        false,
        pos.len(),
    );
    for (i, p) in pos.iter().enumerate() {
        for (k, c) in p.iter().enumerate() {
            att.buffer_mut().write((i * 3 + k) * 4, &c.to_le_bytes());
        }
    }
    mesh.add_attribute(att);
    mesh.set_num_faces(tris.len());
    for (f, t) in tris.iter().enumerate() {
        mesh.set_face(FaceIndex(f as u32), t.map(Into::into));
    }
    mesh
}

/// One way to write the stream.
struct Method {
    name: &'static str,
    sequential: bool,
    speed: i32,
    version: Option<(u8, u8)>,
    predictive: bool,
    quantization: Option<i32>,
    /// What the encoder must report having written.
    traversal: Option<EdgebreakerTraversal>,
}

fn methods() -> Vec<Method> {
    use EdgebreakerTraversal::*;
    let m = |name, sequential, speed, version, traversal| Method {
        name,
        sequential,
        speed,
        version,
        predictive: false,
        quantization: None,
        traversal,
    };
    vec![
        m("sequential 2.2", true, 5, None, None),
        m("sequential 1.3 (legacy)", true, 5, Some((1, 3)), None),
        m("edgebreaker standard 2.2", false, 5, None, Some(Standard)),
        m("edgebreaker valence 2.2", false, 0, None, Some(Valence)),
        m(
            "edgebreaker standard 2.1",
            false,
            5,
            Some((2, 1)),
            Some(Standard),
        ),
        m(
            "edgebreaker valence 2.1",
            false,
            0,
            Some((2, 1)),
            Some(Valence),
        ),
        m(
            "edgebreaker standard 2.0",
            false,
            5,
            Some((2, 0)),
            Some(Standard),
        ),
        m(
            "edgebreaker valence 1.2 (legacy)",
            false,
            0,
            Some((1, 2)),
            Some(Valence),
        ),
        m(
            "edgebreaker standard 1.1 (legacy)",
            false,
            5,
            Some((1, 1)),
            Some(Standard),
        ),
        Method {
            predictive: true,
            ..m(
                "edgebreaker predictive 1.2 (legacy)",
                false,
                5,
                Some((1, 2)),
                Some(Predictive),
            )
        },
        Method {
            quantization: Some(14),
            ..m("sequential 2.2, 14-bit positions", true, 5, None, None)
        },
        Method {
            quantization: Some(14),
            ..m(
                "edgebreaker valence 2.2, 14-bit positions",
                false,
                0,
                None,
                Some(Valence),
            )
        },
    ]
}

fn encode(mesh: &Mesh, m: &Method) -> Vec<u8> {
    let mut o = EncoderOptions::new();
    o.set_global_int("encoding_speed", m.speed);
    o.set_global_int("decoding_speed", m.speed);
    o.set_encoding_method(if m.sequential { 0 } else { 1 });
    if let Some((major, minor)) = m.version {
        o.set_version(major, minor);
    }
    if m.predictive {
        o.set_global_int("force_predictive_traversal", 1);
    }
    if let Some(bits) = m.quantization {
        o.set_attribute_quantization(0, bits);
    }
    let mut enc = MeshEncoder::new();
    enc.set_mesh(mesh.clone());
    let mut buf = EncoderBuffer::new();
    let info = enc
        .encode_with_info(&o, &mut buf)
        .unwrap_or_else(|e| panic!("{}: {e}", m.name));
    assert_eq!(info.traversal, m.traversal, "{}: {info:?}", m.name);
    assert_eq!(info.encoding_method, i32::from(!m.sequential), "{}", m.name);
    if let Some(v) = m.version {
        assert_eq!(info.bitstream_version, v, "{}", m.name);
    }
    buf.data().to_vec()
}

/// A glTF file holding `pos`/`tris` either plainly or as a Draco stream.
fn gltf(pos: &[[f32; 3]], tris: &[[u32; 3]], draco: Option<&[u8]>) -> Vec<u8> {
    let (lo, hi) = pos
        .iter()
        .fold(([f32::MAX; 3], [f32::MIN; 3]), |(l, h), p| {
            (
                [0, 1, 2].map(|k| l[k].min(p[k])),
                [0, 1, 2].map(|k| h[k].max(p[k])),
            )
        });
    let mut position =
        json!({"componentType": 5126, "count": pos.len(), "type": "VEC3", "min": lo, "max": hi});
    let mut indices = json!({"componentType": 5125, "count": tris.len() * 3, "type": "SCALAR"});
    let mut prim = json!({"attributes": {"POSITION": 0}, "indices": 1});
    let mut doc = json!({
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Knot", "mesh": 0}],
    });
    let blobs = match draco {
        // the accessors say what the stream decodes to; they have no views
        Some(stream) => {
            prim["extensions"] = json!({"KHR_draco_mesh_compression":
                {"bufferView": 0, "attributes": {"POSITION": 0}}});
            doc["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
            doc["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
            vec![stream.to_vec()]
        }
        None => {
            position["bufferView"] = json!(0);
            indices["bufferView"] = json!(1);
            let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            let floats: Vec<u32> = pos.as_flattened().iter().map(|x| x.to_bits()).collect();
            vec![bytes(&floats), bytes(tris.as_flattened())]
        }
    };
    doc["meshes"] = json!([{"primitives": [prim]}]);
    doc["accessors"] = json!([position, indices]);
    crate::ingest::document(&blobs, doc)
}

/// The ingested triangles as position triples, each from its smallest
/// corner, sorted: equal for two encodings of one mesh whatever their point
/// and face order.
fn triangles(file: &[u8], name: &str) -> Vec<[[u32; 3]; 3]> {
    let dir = std::env::temp_dir().join(format!("kiln-draco-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(format!("{}.gltf", name.replace([' ', ',', '(', ')'], "_")));
    std::fs::write(&path, file).unwrap();
    let scene = ingest::load(&path)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .scene;
    sorted_triangles(
        scene
            .world_triangles()
            .iter()
            .map(|t| t.v.map(|p| p.as_vec3().to_array())),
    )
}

#[test]
fn every_draco_method_decodes_to_the_plain_twin() {
    let (pos, tris) = torus_knot(100, 12, false); // 2,400 faces: valence needs 1,000+
    let plain = triangles(&gltf(&pos, &tris, None), "plain");
    assert_eq!(plain.len(), tris.len());
    let mesh = draco_mesh(&pos, &tris);
    // the largest side of the knot's box: what a quantisation step divides
    let extent = (0..3)
        .map(|k| {
            let (lo, hi) = pos
                .iter()
                .fold((f32::MAX, f32::MIN), |(l, h), p| (l.min(p[k]), h.max(p[k])));
            hi - lo
        })
        .fold(0.0, f32::max);
    for m in methods() {
        let stream = encode(&mesh, &m);
        let got = triangles(&gltf(&pos, &tris, Some(&stream)), m.name);
        assert_eq!(got.len(), plain.len(), "{}: triangle count", m.name);
        match m.quantization {
            None => assert!(got == plain, "{}: triangles differ", m.name),
            Some(bits) => {
                // quantised: every triangle of the twin has a decoded one
                // whose centroid is within a quantisation step per axis
                let step = extent / ((1u32 << bits) - 1) as f32;
                let centroid = |t: &[[u32; 3]; 3]| {
                    [0, 1, 2].map(|k| t.iter().map(|p| f32::from_bits(p[k])).sum::<f32>() / 3.0)
                };
                let want: Vec<[f32; 3]> = plain.iter().map(centroid).collect();
                let have: Vec<[f32; 3]> = got.iter().map(centroid).collect();
                for w in &want {
                    let near = have
                        .iter()
                        .any(|h| (0..3).all(|k| (h[k] - w[k]).abs() <= step));
                    assert!(near, "{}: no decoded triangle near {w:?}", m.name);
                }
            }
        }
    }
}
