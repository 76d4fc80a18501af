//! Simplify: a closed mesh reduced by meshoptimizer within an absolute
//! error and a face budget, kept only while it stays closed and outward.

use crate::geom::topology::{closed_and_volume, compact, pinched_edges};

/// Simplifies a closed mesh within `target` (absolute) towards `max_faces`;
/// while the result is not closed, outward and free of pinched edges, the
/// budget doubles. The first pinch-free result within four times the
/// budget wins; past that, a closed result with pinches (the fewest) is
/// taken rather than growing the collider further (a pinch costs the BSP
/// tree nothing; thousands of faces cost every query); only when none
/// was closed does the budget keep doubling (up to 32 times). Returns the
/// mesh and its pinched edges; `None` if nothing was closed.
#[allow(clippy::type_complexity)]
pub fn simplify_closed(
    flat: &[u32],
    vertices: &[[f32; 3]],
    max_faces: usize,
    target: f64,
) -> Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, usize)> {
    let mut budget = max_faces.max(4);
    let mut best: Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, usize)> = None;
    for round in 0..6 {
        let idx = meshopt::simplify_decoder(
            flat,
            vertices,
            (budget * 3).min(flat.len()),
            target as f32,
            meshopt::SimplifyOptions::ErrorAbsolute,
            None,
        );
        let tris: Vec<[u32; 3]> = idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let (v, t) = compact(vertices, &tris);
        let (_, vol) = closed_and_volume(&v, &t);
        if vol > 0.0
            && let Some(p) = pinched_edges(&t)
        {
            if p == 0 {
                return Some((v, t, 0));
            }
            if best.as_ref().is_none_or(|b| p < b.2) {
                best = Some((v, t, p));
            }
        }
        if round >= 2 && best.is_some() {
            break;
        }
        budget *= 2;
    }
    best
}
