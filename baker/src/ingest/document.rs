//! Loading a glTF document: the container (`.gltf` JSON or `.glb`), the JSON
//! itself (gltf-json types, our own validation), and every buffer's bytes
//! (GLB binary chunk, external files, base64 data URIs).
//!
//! The GLB container is split by our own checked code: the `gltf` crate's
//! splitter subtracted the header size from an untrusted length (found by
//! the `gltf_ingest` fuzz target). The JSON is read as a
//! `serde_json::Value` first, because glTF makes `scene.nodes` optional
//! and gltf-json does not, and patched before it is typed.

use super::IngestErrorKind as E;
use gltf::json;
use std::path::Path;

/// Required extensions the baker implements.
pub const IMPLEMENTED: &[&str] = &[
    "KHR_mesh_quantization",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
    "KHR_draco_mesh_compression",
    "EXT_mesh_gpu_instancing",
    "KHR_physics_rigid_bodies",
    "KHR_implicit_shapes",
    "KHR_collision_shapes",
    "OMI_physics_body",
    "OMI_physics_shape",
];

/// Required extensions that do not change collision geometry: accepted
/// with a note (materials, textures, lights, animation, metadata,
/// visibility, variants, interactivity).
pub const IGNORED: &[&str] = &[
    "KHR_lights_punctual",
    "KHR_materials_anisotropy",
    "KHR_materials_clearcoat",
    "KHR_materials_diffuse_transmission",
    "KHR_materials_dispersion",
    "KHR_materials_emissive_strength",
    "KHR_materials_ior",
    "KHR_materials_iridescence",
    "KHR_materials_pbrSpecularGlossiness",
    "KHR_materials_sheen",
    "KHR_materials_specular",
    "KHR_materials_transmission",
    "KHR_materials_unlit",
    "KHR_materials_variants",
    "KHR_materials_volume",
    "KHR_texture_basisu",
    "KHR_texture_transform",
    "KHR_animation_pointer",
    "KHR_xmp_json_ld",
    "KHR_node_visibility",
    "KHR_interactivity",
    "KHR_audio_emitter",
    "EXT_texture_webp",
    "EXT_texture_avif",
    "EXT_lights_image_based",
    "EXT_lights_ies",
    "MSFT_texture_dds",
    "MSFT_lod",
    "MSFT_packing_normalRoughnessMetallic",
    "MSFT_packing_occlusionRoughnessMetallic",
];

/// A parsed document with its buffers loaded.
pub struct Document {
    /// The glTF JSON.
    pub root: json::Root,
    /// Bytes of each buffer; `None` for a meshopt fallback buffer that has
    /// no data of its own.
    pub buffers: Vec<Option<Vec<u8>>>,
    /// xxh3-128 of every input file read (the document, then external
    /// buffers, each prefixed by its length), for the content hash.
    pub input_hash: u128,
    /// Things worth saying that are not problems (required extensions
    /// that do not touch geometry, leniencies).
    pub notes: Vec<String>,
    /// External files read besides the document (buffers), as joined to
    /// the document's directory: with the document, everything the bake
    /// depends on.
    pub files: Vec<std::path::PathBuf>,
}

/// Reads and parses a `.gltf` or `.glb` file and all the buffers it uses.
pub fn load(path: &Path) -> Result<Document, E> {
    let bytes = std::fs::read(path).map_err(|e| E::Io(format!("cannot read the file: {e}")))?;
    let base_dir = path.parent().unwrap_or(Path::new("."));
    parse(bytes, base_dir)
}

/// Parses an in-memory `.gltf`/`.glb`; external buffers resolve against `base_dir`.
pub fn parse(bytes: Vec<u8>, base_dir: &Path) -> Result<Document, E> {
    // hash inputs as they are read rather than keeping copies for later
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hash_input(&mut hasher, &bytes);
    let (json_bytes, bin): (&[u8], Option<Vec<u8>>) = if bytes.starts_with(b"glTF") {
        let (json, bin) = split_glb(&bytes).map_err(E::Container)?;
        (json, bin.map(<[u8]>::to_vec))
    } else {
        (&bytes, None)
    };
    let mut value: serde_json::Value = serde_json::from_slice(json_bytes).map_err(|e| {
        if bytes
            .first()
            .is_some_and(|&b| b != b'{' && !b.is_ascii_whitespace())
        {
            E::Container(format!("neither a GLB nor glTF JSON ({e})"))
        } else {
            E::Json(e.to_string())
        }
    })?;
    let mut notes = Vec::new();
    // glTF 2.0 makes `scene.nodes` optional; gltf-json insists on it
    if let Some(scenes) = value.get_mut("scenes").and_then(|s| s.as_array_mut()) {
        for sc in scenes.iter_mut().filter_map(|s| s.as_object_mut()) {
            sc.entry("nodes").or_insert_with(|| serde_json::json!([]));
        }
    }
    let root: json::Root = serde_json::from_value(value).map_err(|e| E::Json(e.to_string()))?;
    for ext in &root.extensions_required {
        if IGNORED.contains(&ext.as_str()) {
            notes.push(format!(
                "requires {ext}, which does not change collision geometry; ignored"
            ));
        } else if !IMPLEMENTED.contains(&ext.as_str()) {
            return Err(E::UnsupportedExtension(ext.clone()));
        }
    }
    let mut buffers = Vec::with_capacity(root.buffers.len());
    let mut files = Vec::new();
    let mut bin = bin;
    for (i, b) in root.buffers.iter().enumerate() {
        let is_fallback = b.extensions.as_ref().is_some_and(|x| {
            ["EXT_meshopt_compression", "KHR_meshopt_compression"]
                .iter()
                .any(|k| x.others.get(*k).is_some_and(|v| v["fallback"] == true))
        });
        let data = match &b.uri {
            None if i == 0 && bin.is_some() => bin.take(),
            None if is_fallback => None,
            None => {
                return Err(E::Buffer {
                    index: i,
                    problem: "has no uri and there is no GLB binary chunk".into(),
                });
            }
            Some(uri) if uri.starts_with("data:") => {
                Some(decode_data_uri(uri).map_err(|problem| E::Buffer { index: i, problem })?)
            }
            Some(uri) if is_fallback && uri.is_empty() => None,
            Some(uri) => {
                let file = base_dir.join(percent_decode(uri));
                match std::fs::read(&file) {
                    Ok(data) => {
                        hash_input(&mut hasher, &data);
                        files.push(file);
                        Some(data)
                    }
                    Err(e) if is_fallback => {
                        // The spec lets loaders that decode the extension skip the fallback.
                        let _ = e;
                        None
                    }
                    Err(e) => {
                        return Err(E::Buffer {
                            index: i,
                            problem: format!("cannot read {}: {e}", file.display()),
                        });
                    }
                }
            }
        };
        if let Some(d) = &data {
            let declared = b.byte_length.0;
            if (d.len() as u64) < declared {
                return Err(E::Buffer {
                    index: i,
                    problem: format!("declares {declared} bytes but holds {}", d.len()),
                });
            }
        }
        buffers.push(data);
    }
    Ok(Document {
        root,
        buffers,
        input_hash: hasher.digest128(),
        notes,
        files,
    })
}

/// Feeds one input file to the content hash, length first so that file
/// boundaries are part of it.
fn hash_input(hasher: &mut xxhash_rust::xxh3::Xxh3, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// Splits a GLB container into its JSON chunk and optional BIN chunk
/// (glTF 2.0 §4.4), with every length checked. (The gltf crate's splitter
/// subtracts the header size from an untrusted length unchecked.)
fn split_glb(data: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let u32_at = |o: usize| -> Result<u32, String> {
        data.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format!("GLB truncated at byte {o} (file is {} bytes)", data.len()))
    };
    let version = u32_at(4)?;
    if version != 2 {
        return Err(format!(
            "GLB version {version}, only version 2 is supported"
        ));
    }
    let length = u32_at(8)? as usize;
    if length > data.len() {
        return Err(format!(
            "GLB header says {length} bytes but the file has {}",
            data.len()
        ));
    }
    let data = &data[..length];
    let mut offset = 12usize;
    let mut chunks = Vec::new();
    while offset < data.len() {
        let len = u32_at(offset)? as usize;
        let kind = u32_at(offset + 4)?;
        let start = offset + 8;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| format!("GLB chunk at byte {offset} ({len} bytes) runs past the end"))?;
        chunks.push((kind, &data[start..end]));
        offset = end.next_multiple_of(4);
    }
    const JSON: u32 = 0x4E4F_534A;
    const BIN: u32 = 0x004E_4942;
    match chunks.as_slice() {
        [(JSON, json), rest @ ..] => {
            Ok((json, rest.iter().find(|(k, _)| *k == BIN).map(|(_, b)| *b)))
        }
        _ => Err("GLB does not start with a JSON chunk".into()),
    }
}

fn decode_data_uri(uri: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    let comma = uri.find(',').ok_or("data URI has no comma")?;
    let (head, data) = (&uri[..comma], &uri[comma + 1..]);
    if !head.ends_with(";base64") {
        return Err("data URI is not base64-encoded".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("data URI is not valid base64: {e}"))
}

/// Decodes `%XX` escapes in a relative URI (glTF URIs are RFC 3986).
fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode() {
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("x%zzy"), "x%zzy");
    }

    #[test]
    fn glb_lengths_are_checked() {
        // regression: a fuzzed header length of 11 made the gltf crate's
        // splitter underflow
        let mut glb = b"glTF\x02\0\0\0\x0b\0\0\0".to_vec();
        assert!(split_glb(&glb).is_err());
        glb[8] = 0xff;
        assert!(split_glb(&glb).unwrap_err().contains("header says"));
        let mut ok = b"glTF\x02\0\0\0\x20\0\0\0\x04\0\0\0JSON{}  \x00\0\0\0BIN\0".to_vec();
        assert_eq!(split_glb(&ok).unwrap(), (&b"{}  "[..], Some(&b""[..])));
        ok[12] = 0xff; // chunk longer than the file
        assert!(split_glb(&ok).unwrap_err().contains("runs past"));
    }

    #[test]
    fn data_uris_decode() {
        assert_eq!(
            decode_data_uri("data:application/octet-stream;base64,AAEC").unwrap(),
            vec![0, 1, 2]
        );
        assert!(decode_data_uri("data:text/plain,hello").is_err());
    }
}
