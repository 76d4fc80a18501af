//! Mesh topology and measures: closedness (every edge used exactly twice,
//! in opposite directions), pinched edges, signed volume, compaction and
//! bounds. Used by classification and by the concave collider pipeline.

use glam::DVec3;

/// Vertices and triangles.
pub type Mesh = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// Whether every edge is used exactly twice in opposite directions, and
/// the signed volume.
pub fn closed_and_volume(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> (bool, f64) {
    let p = |i: u32| DVec3::from(vertices[i as usize].map(f64::from));
    let volume = triangles
        .iter()
        .map(|t| p(t[0]).dot(p(t[1]).cross(p(t[2]))))
        .sum::<f64>()
        / 6.0;
    (pinched_edges(triangles) == Some(0), volume)
}

/// Directed edges `(a, b)` as sorted `a << 32 | b` keys.
pub fn directed_edges(triangles: &[[u32; 3]]) -> Vec<u64> {
    let mut e: Vec<u64> = triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (u64::from(t[k]) << 32) | u64::from(t[(k + 1) % 3])))
        .collect();
    e.sort_unstable();
    e
}

/// Only the vertices `triangles` use, renumbered in first-use order.
pub fn compact(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Mesh {
    let mut map = vec![u32::MAX; vertices.len()];
    let mut out = Vec::new();
    let tris = triangles
        .iter()
        .map(|t| {
            t.map(|i| {
                let m = &mut map[i as usize];
                if *m == u32::MAX {
                    out.push(vertices[i as usize]);
                    *m = (out.len() - 1) as u32;
                }
                *m
            })
        })
        .collect();
    (out, tris)
}

/// Box of the vertices.
pub fn bounds(vertices: &[[f32; 3]]) -> (DVec3, DVec3) {
    vertices.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| {
            let p = DVec3::from(p.map(f64::from));
            (lo.min(p), hi.max(p))
        },
    )
}

/// The number of edges used by more than two faces, if every directed edge
/// is used exactly as often as its reverse (the surface bounds a solid:
/// no boundary, consistently oriented); `None` if some is not (a hole or
/// a flipped face).
pub fn pinched_edges(triangles: &[[u32; 3]]) -> Option<usize> {
    if triangles.is_empty() {
        return None;
    }
    let edges = directed_edges(triangles);
    // runs of equal keys: (edge, count)
    let mut runs: Vec<(u64, u32)> = Vec::with_capacity(edges.len());
    for e in edges {
        match runs.last_mut() {
            Some((k, n)) if *k == e => *n += 1,
            _ => runs.push((e, 1)),
        }
    }
    let mut pinched = 0;
    for &(e, n) in &runs {
        let (a, b) = (e >> 32, e & 0xffff_ffff);
        let reverse = (b << 32) | a;
        let back = runs
            .binary_search_by_key(&reverse, |r| r.0)
            .map_or(0, |i| runs[i].1);
        if back != n {
            return None;
        }
        pinched += usize::from(n > 1 && a < b);
    }
    Some(pinched)
}

/// A triangle is degenerate when two of its indices repeat or its area is
/// exactly zero (cross product computed in f64 from the f32 positions, the
/// rule the shared levels' statistics use).
pub fn is_degenerate(positions: &[[f32; 3]], t: [u32; 3]) -> bool {
    if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
        return true;
    }
    let p = |i: u32| DVec3::from(positions[i as usize].map(f64::from));
    let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
    (b - a).cross(c - a).length_squared() == 0.0
}
