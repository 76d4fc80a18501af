//! `KHR_draco_mesh_compression`: a primitive's positions and triangles
//! decoded from its Draco stream with `draco-core` (pure Rust, Apache-2.0;
//! every method it decodes: sequential and EdgeBreaker connectivity —
//! standard, valence and the legacy predictive traversal —, bitstreams
//! from 1.1 to 2.2, lossless or quantised positions; the crate's features
//! are set in the workspace manifest).
//!
//! Draco encoders drop degenerate triangles and may split or reorder
//! points, so a Draco primitive matches its uncompressed original in
//! positions and non-degenerate triangles, not index for index.

use draco_core::{DecodeLimits, DecoderBuffer, FaceIndex, Mesh, MeshDecoder};

/// Most points or faces one Draco stream may decode to (the same ceiling
/// the accessor reader puts on element counts).
const MAX_DECODED: u64 = super::accessor::MAX_ELEMENTS;

/// Decodes `stream` and returns the positions of the attribute whose
/// unique id is `position_id`, and the triangles as point indices.
pub(super) fn decode(stream: &[u8], position_id: u32) -> Result<(Vec<[f32; 3]>, Vec<u32>), String> {
    let limits = DecodeLimits::default()
        .with_max_points(MAX_DECODED)
        .with_max_faces(MAX_DECODED);
    let mut mesh = Mesh::new();
    // The decoder returns errors for malformed streams; a panic inside it
    // would be a bug there, and must not take the bake down with it.
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut buf = DecoderBuffer::new(stream).with_limits(limits);
        MeshDecoder::new().decode(&mut buf, &mut mesh)
    }));
    match decoded {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("the Draco stream does not decode: {e}")),
        Err(_) => return Err("the Draco stream does not decode (decoder panicked)".into()),
    }
    let att = mesh
        .attribute_by_unique_id(position_id)
        .ok_or_else(|| format!("the Draco stream has no attribute {position_id} (POSITION)"))?;
    if att.num_components() != 3 {
        return Err(format!(
            "Draco POSITION has {} components, expected 3",
            att.num_components()
        ));
    }
    let n = mesh.num_points();
    let flat = att.read_f32s(n, 3);
    let positions: Vec<[f32; 3]> = flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    let mut indices = Vec::with_capacity(mesh.num_faces() * 3);
    for f in 0..mesh.num_faces() {
        let face = mesh.face(FaceIndex(f as u32));
        for p in face {
            if p.0 as usize >= n {
                return Err(format!("a Draco face uses point {} of {n}", p.0));
            }
            indices.push(p.0);
        }
    }
    Ok((positions, indices))
}
