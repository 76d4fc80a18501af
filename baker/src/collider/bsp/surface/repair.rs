//! Repair: a render mesh made into a closed surface where it nearly is
//! one — positions welded within a tolerance, internal twin faces
//! cancelled, pinched edges split.

use crate::geom::topology::{Mesh, compact};
use crate::geom::weld::WeldedMesh;
use glam::DVec3;

/// Welds positions closer than `eps` (snapped to a grid of that size),
/// drops degenerate triangles and cancels coincident opposite pairs.
pub fn weld_close(vertices: &[[f32; 3]], triangles: &[[u32; 3]], eps: f64) -> WeldedMesh {
    let mut map = std::collections::HashMap::new();
    let mut out_v: Vec<[f32; 3]> = Vec::new();
    let remap: Vec<u32> = vertices
        .iter()
        .map(|v| {
            let key = v.map(|c| (f64::from(c) / eps).round() as i64);
            *map.entry(key).or_insert_with(|| {
                out_v.push(*v);
                (out_v.len() - 1) as u32
            })
        })
        .collect();
    // a triangle keyed by its sorted corners: an opposite twin cancels it
    let mut seen: std::collections::HashMap<[u32; 3], Vec<usize>> = Default::default();
    let mut tris: Vec<Option<[u32; 3]>> = Vec::new();
    for t in triangles {
        let t = t.map(|i| remap[i as usize]);
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
            continue;
        }
        let mut key = t;
        key.sort_unstable();
        let twins = seen.entry(key).or_default();
        let opposite = twins
            .iter()
            .position(|&j| tris[j].is_some_and(|u| !same_winding(u, t)));
        match opposite {
            Some(k) => {
                let j = twins.swap_remove(k);
                tris[j] = None;
            }
            None if twins.iter().any(|&j| tris[j].is_some()) => {} // a duplicate
            None => {
                twins.push(tris.len());
                tris.push(Some(t));
            }
        }
    }
    let triangles: Vec<[u32; 3]> = tris.into_iter().flatten().collect();
    let (vertices, triangles) = compact(&out_v, &triangles);
    WeldedMesh {
        name: String::new(),
        source_ids: (0..triangles.len() as u32).collect(),
        vertices,
        triangles,
    }
}

/// Whether two triangles over the same three vertices wind the same way.
fn same_winding(a: [u32; 3], b: [u32; 3]) -> bool {
    let rot = |t: [u32; 3], k: usize| [t[k], t[(k + 1) % 3], t[(k + 2) % 3]];
    (0..3).any(|k| rot(a, k) == b)
}

/// Splits pinches: where a closed surface touches itself along an edge
/// (four faces on one edge, as marching cubes makes where two voxels meet
/// diagonally) or at a vertex, the sheets are separated by giving each its
/// own copies of the shared vertices, so every edge ends up used exactly
/// twice. Faces around a shared edge are paired by angle around it, each
/// with its neighbour of opposite direction. `None` if some directed edge
/// is used a different number of times than its reverse (the surface has
/// a hole, not a pinch).
pub fn make_manifold(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Option<Mesh> {
    // which way to pair is local guesswork: two solids touching along the
    // edge want their faces kept apart, two holes touching along it want
    // the opposite; the vertices at the edge's ends tell which was right
    // (their fans split only then), so edges still shared after a round
    // are paired the other way in the next
    let mut flipped = std::collections::HashSet::new();
    let mut last = None;
    for _ in 0..4 {
        let (v, t, orig) = split_pinches(vertices, triangles, &flipped)?;
        let mut count: std::collections::HashMap<(u32, u32), u32> = Default::default();
        for tri in &t {
            for k in 0..3 {
                *count.entry((tri[k], tri[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        let shared: Vec<(u32, u32)> = count
            .iter()
            .filter(|&(_, &n)| n > 1)
            .map(|(&(a, b), _)| {
                let (a, b) = (orig[a as usize], orig[b as usize]);
                (a.min(b), a.max(b))
            })
            .collect();
        if shared.is_empty() {
            return Some((v, t));
        }
        for e in shared {
            if !flipped.insert(e) {
                flipped.remove(&e);
            }
        }
        last = Some((v, t));
    }
    last
}

/// One round of [`make_manifold`]: pinches paired as `flipped` says,
/// vertices split by fan. Also returns each vertex's original index.
#[allow(clippy::type_complexity)]
fn split_pinches(
    vertices: &[[f32; 3]],
    triangles: &[[u32; 3]],
    flipped: &std::collections::HashSet<(u32, u32)>,
) -> Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, Vec<u32>)> {
    use std::collections::HashMap;
    // faces on each undirected edge: (face, corner k of the edge k→k+1)
    let mut on_edge: HashMap<(u32, u32), Vec<(usize, usize)>> = HashMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            on_edge
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push((f, k));
        }
    }
    let p = |i: u32| DVec3::from(vertices[i as usize].map(f64::from));
    // partner[f][k]: the face across edge k of face f
    let mut partner = vec![[usize::MAX; 3]; triangles.len()];
    for (&(a, b), faces) in &on_edge {
        let forward: Vec<_> = faces
            .iter()
            .filter(|&&(f, k)| triangles[f][k] == a)
            .collect();
        if forward.len() * 2 != faces.len() {
            return None;
        }
        if faces.len() == 2 {
            let ((f0, k0), (f1, k1)) = (faces[0], faces[1]);
            partner[f0][k0] = f1;
            partner[f1][k1] = f0;
            continue;
        }
        // order the faces by the angle of their third corner around a→b
        let axis = (p(b) - p(a)).normalize_or_zero();
        let u = axis.any_orthonormal_vector();
        let w = axis.cross(u);
        let mut sorted: Vec<(f64, usize, usize)> = faces
            .iter()
            .map(|&(f, k)| {
                let c = p(triangles[f][(k + 2) % 3]) - p(a);
                (c.dot(w).atan2(c.dot(u)), f, k)
            })
            .collect();
        sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        // around a clean pinch the directions alternate. A forward face's
        // solid side is at lower angles: pairing each reverse face with the
        // next forward face going around keeps the solids on either side
        // apart; flipped, each forward face goes with the next reverse one
        // (folds from the remesher's position solve can break the
        // alternation; the pairing still closes the surface)
        let n = sorted.len();
        let first_fwd = !flipped.contains(&(a, b));
        let start = (0..n).find(|&i| (triangles[sorted[i].1][sorted[i].2] == a) != first_fwd)?;
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut pairs = Vec::new();
        for j in 0..n {
            let (_, f, k) = sorted[(start + j) % n];
            let fwd = triangles[f][k] == a;
            match open.last() {
                Some(&(g, l)) if (triangles[g][l] == a) != fwd => {
                    open.pop();
                    pairs.push(((g, l), (f, k)));
                }
                _ => open.push((f, k)),
            }
        }
        if !open.is_empty() {
            return None;
        }
        for ((f0, k0), (f1, k1)) in pairs {
            partner[f0][k0] = f1;
            partner[f1][k1] = f0;
        }
    }
    // each vertex: its faces grouped into fans joined through partners;
    // every fan after the first gets a copy of the vertex
    let mut out_v = vertices.to_vec();
    let mut orig: Vec<u32> = (0..vertices.len() as u32).collect();
    let mut out_t = triangles.to_vec();
    let mut around: HashMap<u32, Vec<usize>> = HashMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for &v in t {
            around.entry(v).or_default().push(f);
        }
    }
    let mut keys: Vec<u32> = around.keys().copied().collect();
    keys.sort_unstable();
    for v in keys {
        let faces = &around[&v];
        if faces.len() < 3 {
            continue;
        }
        let mut fan_of: HashMap<usize, usize> = HashMap::new();
        let mut fans = 0;
        for &f0 in faces {
            if fan_of.contains_key(&f0) {
                continue;
            }
            let mut stack = vec![f0];
            fan_of.insert(f0, fans);
            while let Some(f) = stack.pop() {
                let t = triangles[f];
                let c = t.iter().position(|&x| x == v)?;
                // the two edges of f at v: edge c (v→next) and edge c+2 (prev→v)
                for k in [c, (c + 2) % 3] {
                    let g = partner[f][k];
                    if g != usize::MAX && !fan_of.contains_key(&g) && triangles[g].contains(&v) {
                        fan_of.insert(g, fans);
                        stack.push(g);
                    }
                }
            }
            fans += 1;
        }
        if fans > 1 {
            let copies: Vec<u32> = (1..fans)
                .map(|_| {
                    out_v.push(vertices[v as usize]);
                    orig.push(v);
                    (out_v.len() - 1) as u32
                })
                .collect();
            for (&f, &fan) in &fan_of {
                if fan > 0 {
                    for x in out_t[f].iter_mut() {
                        if *x == v {
                            *x = copies[fan - 1];
                        }
                    }
                }
            }
        }
    }
    Some((out_v, out_t, orig))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_twin_faces_cancel() {
        let v = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let w = weld_close(&v, &[[0, 1, 2], [0, 2, 1], [1, 2, 0]], 1e-6);
        assert_eq!(
            w.triangles.len(),
            1,
            "one pair cancelled, the rotation kept"
        );
    }
}
