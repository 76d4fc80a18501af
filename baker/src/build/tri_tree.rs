//! The TriTree shape: a mesh's triangles paired across shared edges into
//! two-triangle leaves (the terrain trick of the Pathfinder sphere-tree
//! article, seed 000), under a binned-SAH AABB tree (seed 002).
//!
//! Steps: weld vertices by exact position (meshopt's remap) so that edges
//! shared across UV/normal seams are found → pair triangles greedily across
//! shared edges, choosing the partner whose union box is smallest → one
//! primitive per pair (or lone triangle) → SAH tree → triangles laid out in
//! leaf order.

use super::sah::{self, PrimRef};
use crate::scene::SceneMesh;
use kiln_formats::level::{SphereFrame, TreeKind, TriMesh, leaf_data, leaf_range};

/// Builds the archived mesh for one scene mesh, with a tree of `kind`.
pub fn build(mesh: &SceneMesh, kind: TreeKind) -> TriMesh {
    // weld by position
    let (vertices, triangles) = weld(&mesh.positions, &mesh.triangles);
    // pair across shared edges, as leaf quads
    let pairs = pair_triangles(&vertices, &triangles);
    // tree over pairs
    let mut prims: Vec<PrimRef> = pairs
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let (min, max) = quad_bounds(&vertices, &pair.quad, pair.second.is_some());
            PrimRef {
                min,
                max,
                id: i as u32,
            }
        })
        .collect();
    let nodes = sah::build(&mut prims);
    // leaves in tree order
    let leaves: Vec<&Pair> = prims.iter().map(|p| &pairs[p.id as usize]).collect();
    // the builder's leaves say `leaf_data(position, 1)`; ours count triangles
    let payload = |data: u32| {
        let (pos, _) = leaf_range(data);
        leaf_data(pos, 1 + u32::from(leaves[pos as usize].second.is_some()))
    };
    let mut out = TriMesh {
        name: mesh.name.clone(),
        vertices,
        leaves: leaves.iter().map(|p| p.quad).collect(),
        source_ids: leaves
            .iter()
            .map(|p| {
                [
                    mesh.source_ids[p.first as usize],
                    p.second.map_or(u32::MAX, |t| mesh.source_ids[t as usize]),
                ]
            })
            .collect(),
        min: nodes.first().map_or([0.0; 3], |n| n.min),
        max: nodes.first().map_or([0.0; 3], |n| n.max),
        root: 0,
        kind: kind.tag(),
        boxes: Vec::new(),
        sphere_frame: SphereFrame::default(),
        spheres: Vec::new(),
    };
    match kind {
        TreeKind::Aabb => {
            (out.root, out.boxes) = super::quantize::encode_boxes(&nodes, payload);
        }
        TreeKind::Sphere => {
            let points = |data: u32| {
                let p = leaves[leaf_range(data).0 as usize];
                let n = if p.second.is_some() { 4 } else { 3 };
                p.quad[..n]
                    .iter()
                    .map(|&v| out.vertices[v as usize])
                    .collect()
            };
            let (root, frame, spheres) = super::quantize::encode_spheres(&nodes, payload, points);
            (out.root, out.sphere_frame, out.spheres) = (root, frame, spheres);
        }
    }
    out
}

/// A leaf before layout: its quad (see [`TriMesh`]) and the welded
/// triangle indices behind it.
struct Pair {
    quad: [u32; 4],
    first: u32,
    second: Option<u32>,
}

/// Merges vertices with bit-identical positions (after mapping -0.0 to 0.0)
/// and drops unused ones.
fn weld(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    if triangles.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let canon: Vec<[f32; 3]> = positions
        .iter()
        .map(|p| p.map(|c| if c == 0.0 { 0.0 } else { c }))
        .collect();
    let flat: Vec<u32> = triangles.iter().flatten().copied().collect();
    let (count, remap) = meshopt::generate_vertex_remap(&canon, Some(&flat));
    let vertices = meshopt::remap_vertex_buffer(&canon, count, &remap);
    let indices = meshopt::remap_index_buffer(Some(&flat), count, &remap);
    let tris = indices
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (vertices, tris)
}

/// Greedy pairing across shared edges that the two triangles walk in
/// opposite directions (so the pair keeps both windings as a quad). Every
/// triangle appears in exactly one pair, in an order that depends only on
/// the input.
fn pair_triangles(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<Pair> {
    let n = triangles.len();
    // directed edges bucketed by their lower vertex (a counting sort,
    // O(n)): each bucket is tiny, so matching edges are found by a short scan
    let nv = vertices.len();
    let mut start = vec![0u32; nv + 1];
    for tri in triangles {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            start[a.min(b) as usize + 1] += 1;
        }
    }
    for v in 0..nv {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    // (other vertex, triangle, edge runs upward)
    let mut bucket = vec![(0u32, 0u32, false); 3 * n];
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let slot = &mut fill[a.min(b) as usize];
            bucket[*slot as usize] = (a.max(b), t as u32, a < b);
            *slot += 1;
        }
    }
    // up to three neighbour candidates per triangle
    let mut neighbours = vec![[u32::MAX; 3]; n];
    let mut add = |t: u32, other: u32| {
        let slots = &mut neighbours[t as usize];
        if let Some(s) = slots.iter_mut().find(|s| **s == u32::MAX || **s == other) {
            *s = other;
        }
    };
    for v in 0..nv {
        let edges = &bucket[start[v] as usize..start[v + 1] as usize];
        for (i, x) in edges.iter().enumerate() {
            for y in &edges[i + 1..] {
                if x.0 == y.0 && x.1 != y.1 && x.2 != y.2 {
                    add(x.1, y.1);
                    add(y.1, x.1);
                }
            }
        }
    }
    let mut paired = vec![false; n];
    let mut out = Vec::with_capacity(n.div_ceil(2));
    for t in 0..n as u32 {
        if paired[t as usize] {
            continue;
        }
        paired[t as usize] = true;
        let mut best: Option<(f32, u32)> = None;
        for &o in &neighbours[t as usize] {
            if o == u32::MAX || paired[o as usize] {
                continue;
            }
            let quad = make_quad(triangles[t as usize], Some(triangles[o as usize]));
            let (min, max) = quad_bounds(vertices, &quad, true);
            let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
            let area = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
            if best.is_none_or(|(a, b)| area < a || (area == a && o < b)) {
                best = Some((area, o));
            }
        }
        if let Some((_, o)) = best {
            paired[o as usize] = true;
        }
        let second = best.map(|(_, o)| o);
        out.push(Pair {
            quad: make_quad(triangles[t as usize], second.map(|o| triangles[o as usize])),
            first: t,
            second,
        });
    }
    out
}

/// The quad `[a, b, c, d]` of a triangle and, if given, a neighbour that
/// walks one of its edges backwards: the first triangle is rotated so the
/// shared edge is `b → c`, and the neighbour is then `(c, b, d)`. A lone
/// triangle repeats `c`.
fn make_quad(t: [u32; 3], other: Option<[u32; 3]>) -> [u32; 4] {
    let Some(o) = other else {
        return [t[0], t[1], t[2], t[2]];
    };
    for k in 0..3 {
        let (b, c) = (t[k], t[(k + 1) % 3]);
        for j in 0..3 {
            if o[j] == c && o[(j + 1) % 3] == b {
                return [t[(k + 2) % 3], b, c, o[(j + 2) % 3]];
            }
        }
    }
    unreachable!("paired triangles share an edge walked both ways")
}

fn quad_bounds(vertices: &[[f32; 3]], quad: &[u32; 4], pair: bool) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    let n = if pair { 4 } else { 3 };
    for &v in &quad[..n] {
        let p = vertices[v as usize];
        for k in 0..3 {
            min[k] = min[k].min(p[k]);
            max[k] = max[k].max(p[k]);
        }
    }
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::level::{LEAF_BIT, leaf_triangle};

    /// A grid of `n × n` quads, two triangles each, with split vertices
    /// (every triangle has its own three vertices, like a seam-heavy export).
    fn grid(n: u32) -> SceneMesh {
        let mut pos = Vec::new();
        let mut tris = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let (fx, fy) = (x as f32, y as f32);
                for t in [
                    [
                        [fx, 0.0, fy],
                        [fx + 1.0, 0.0, fy],
                        [fx + 1.0, 0.0, fy + 1.0],
                    ],
                    [
                        [fx, 0.0, fy],
                        [fx + 1.0, 0.0, fy + 1.0],
                        [fx, 0.0, fy + 1.0],
                    ],
                ] {
                    let b = pos.len() as u32;
                    pos.extend_from_slice(&t);
                    tris.push([b, b + 1, b + 2]);
                }
            }
        }
        SceneMesh::new("grid", pos, &tris)
    }

    /// The triangle's vertex positions, rotated to start at its smallest
    /// vertex position (winding kept), for order-free comparison.
    fn canonical(m: &TriMesh, t: [u32; 3]) -> [[u32; 3]; 3] {
        let p = t.map(|v| m.vertices[v as usize].map(f32::to_bits));
        let k = (0..3).min_by_key(|&k| p[k]).unwrap();
        [p[k], p[(k + 1) % 3], p[(k + 2) % 3]]
    }

    #[test]
    fn grid_triangles_pair_up_and_welding_shares_vertices() {
        for kind in [TreeKind::Aabb, TreeKind::Sphere] {
            let src = grid(8);
            let m = build(&src, kind);
            assert_eq!(m.vertices.len(), 81);
            assert_eq!(m.leaves.len(), 64, "every leaf holds a pair");
            assert_eq!(m.triangle_count(), 128);
            let inner = m.boxes.len() + m.spheres.len();
            assert!(
                (21..63).contains(&inner),
                "4-wide: {inner} nodes for 64 leaves"
            );
            // every source triangle appears once, with its winding
            let mut ids: Vec<u32> = m.triangles().map(|(_, id)| id).collect();
            ids.sort();
            assert_eq!(ids, (0..128).collect::<Vec<u32>>());
            for (t, id) in m.triangles() {
                let s = src.triangles[id as usize];
                let want = s.map(|v| src.positions[v as usize].map(f32::to_bits));
                let k = (0..3).min_by_key(|&k| want[k]).unwrap();
                let want = [want[k], want[(k + 1) % 3], want[(k + 2) % 3]];
                assert_eq!(canonical(&m, t), want, "triangle {id} changed");
            }
        }
    }

    #[test]
    fn paired_triangles_share_an_edge_walked_both_ways() {
        let m = build(&grid(5), TreeKind::Aabb);
        for q in &m.leaves {
            let (a, b) = (leaf_triangle(*q, 0), leaf_triangle(*q, 1));
            assert_eq!((a[1], a[2]), (b[1], b[0]));
        }
    }

    #[test]
    fn triangles_with_clashing_winding_stay_apart() {
        // two triangles over the edge (1, 2), both walking it 1 → 2
        let m = SceneMesh::new(
            "t",
            vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            &[[0, 1, 2], [3, 1, 2]],
        );
        let t = build(&m, TreeKind::Aabb);
        assert_eq!(t.leaves.len(), 2);
        assert_eq!(t.triangle_count(), 2);
    }

    #[test]
    fn a_lone_triangle_makes_a_one_triangle_leaf_root() {
        let m = SceneMesh::new(
            "t",
            vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            &[[0, 1, 2]],
        );
        for kind in [TreeKind::Aabb, TreeKind::Sphere] {
            let t = build(&m, kind);
            assert!(t.boxes.is_empty() && t.spheres.is_empty());
            assert_eq!(t.root, LEAF_BIT | leaf_data(0, 1));
            assert_eq!(t.source_ids, vec![[0, u32::MAX]]);
        }
    }
}
