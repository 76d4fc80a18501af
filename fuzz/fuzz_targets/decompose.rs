//! Any bytes as a triangle soup (each 36 bytes a triangle of f32 corners):
//! the concave solid and its convex pieces must be made or refused with an
//! error, never a panic, and every piece made must be a polytope the
//! archive's verification accepts.
#![no_main]

use kiln_baker::collider::{bsp, pieces};
use kiln_baker::geom::weld::WeldedMesh;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let floats: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let vertices: Vec<[f32; 3]> = floats.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    if vertices.iter().flatten().any(|x| !x.is_finite()) || vertices.len() < 3 {
        return;
    }
    let n = vertices.len() as u32 / 3;
    let welded = WeldedMesh {
        name: "fuzz".into(),
        triangles: (0..n).map(|k| [3 * k, 3 * k + 1, 3 * k + 2]).collect(),
        source_ids: (0..n).collect(),
        vertices,
    };
    let settings = kiln_baker::BakeSettings::default();
    let Ok((collider, _)) = bsp::build(&welded, settings.shape_settings(), 1.0) else {
        return;
    };
    let asked = pieces::PieceSettings {
        concavity: 0.05,
        max_pieces: 16,
        max_planes: 32,
    };
    if let Some(Ok(d)) = pieces::of_collider(&collider, &asked, Some(&welded)) {
        assert!(!d.pieces.is_empty());
    }
    // and the bake's whole path (a finer solid where the collider stands off)
    if let Ok(b) = kiln_baker::collider::concave_pieces(&welded, settings.shape_settings()) {
        assert!(!b.decomposition.pieces.is_empty());
    }
});
