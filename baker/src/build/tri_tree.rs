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
use kiln_formats::level::{TriMesh, leaf_data, leaf_range};

/// Builds the archived mesh for one scene mesh.
pub fn build(mesh: &SceneMesh) -> TriMesh {
    // weld by position
    let (vertices, triangles) = weld(&mesh.positions, &mesh.triangles);
    // pair across shared edges
    let pairs = pair_triangles(&vertices, &triangles);
    // tree over pairs
    let mut prims: Vec<PrimRef> = pairs
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let (min, max) = tri_bounds(&vertices, &triangles, pair);
            PrimRef {
                min,
                max,
                id: i as u32,
            }
        })
        .collect();
    let mut nodes = sah::build(&mut prims);
    // lay triangles out in leaf order and point leaves at them
    let mut out_tris = Vec::with_capacity(triangles.len());
    let mut out_ids = Vec::with_capacity(triangles.len());
    let mut leaf_tri_start = Vec::with_capacity(prims.len());
    for p in &prims {
        leaf_tri_start.push(out_tris.len() as u32);
        for &t in pairs[p.id as usize].iter().flatten() {
            out_tris.push(triangles[t as usize]);
            out_ids.push(mesh.source_ids[t as usize]);
        }
    }
    for (i, n) in nodes.iter_mut().enumerate() {
        if n.end as usize == i + 1 {
            let (leaf, _) = leaf_range(n.data);
            let p = &prims[leaf as usize];
            let count = pairs[p.id as usize].iter().flatten().count() as u32;
            n.data = leaf_data(leaf_tri_start[leaf as usize], count);
        }
    }
    let (origin, scale, nodes) = super::quantize::quantize(&nodes);
    TriMesh {
        name: mesh.name.clone(),
        vertices,
        triangles: out_tris,
        source_ids: out_ids,
        origin,
        scale,
        nodes,
    }
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

/// Greedy pairing across shared edges. Returns the leaves' triangle lists:
/// `[a, Some(b)]` for a pair, `[a, None]` for a lone triangle, in an order
/// that depends only on the input.
fn pair_triangles(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<[Option<u32>; 2]> {
    let n = triangles.len();
    // edges bucketed by their lower vertex (a counting sort, O(n)): each
    // bucket is tiny, so matching edges are found by a short scan
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
    let mut bucket = vec![(0u32, 0u32); 3 * n]; // (other vertex, triangle)
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let (lo, hi) = (a.min(b), a.max(b));
            let slot = &mut fill[lo as usize];
            bucket[*slot as usize] = (hi, t as u32);
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
                if x.0 == y.0 && x.1 != y.1 {
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
            let (min, max) = tri_bounds(vertices, triangles, &[Some(t), Some(o)]);
            let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
            let area = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
            if best.is_none_or(|(a, b)| area < a || (area == a && o < b)) {
                best = Some((area, o));
            }
        }
        if let Some((_, o)) = best {
            paired[o as usize] = true;
        }
        out.push([Some(t), best.map(|(_, o)| o)]);
    }
    out
}

fn tri_bounds(
    vertices: &[[f32; 3]],
    triangles: &[[u32; 3]],
    tris: &[Option<u32>],
) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for &t in tris.iter().flatten() {
        for &v in &triangles[t as usize] {
            let p = vertices[v as usize];
            for k in 0..3 {
                min[k] = min[k].min(p[k]);
                max[k] = max[k].max(p[k]);
            }
        }
    }
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::verify::{TreeView, verify_tree};

    /// A mesh's quantised tree, decoded, for the shared verifier.
    struct Decoded<'a>(&'a TriMesh);

    impl TreeView for Decoded<'_> {
        fn len(&self) -> usize {
            self.0.nodes.len()
        }
        fn end(&self, i: usize) -> u32 {
            self.0.nodes[i].end
        }
        fn data(&self, i: usize) -> u32 {
            self.0.nodes[i].data
        }
        fn bounds(&self, i: usize) -> ([f32; 3], [f32; 3]) {
            self.0.node_box(i)
        }
    }

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

    #[test]
    fn grid_triangles_pair_up_and_welding_shares_vertices() {
        let m = build(&grid(8));
        assert_eq!(m.vertices.len(), 81);
        assert_eq!(m.triangles.len(), 128);
        let stats = verify_tree(&Decoded(&m), m.triangles.len(), 2).unwrap();
        assert_eq!(stats.leaves, 64, "every leaf holds a pair");
        // every source triangle appears once
        let mut ids = m.source_ids.clone();
        ids.sort();
        assert_eq!(ids, (0..128).collect::<Vec<u32>>());
    }

    #[test]
    fn paired_triangles_share_an_edge() {
        let m = build(&grid(5));
        for (i, n) in m.nodes.iter().enumerate() {
            if n.end as usize != i + 1 {
                continue;
            }
            let (first, count) = leaf_range(n.data);
            if count == 2 {
                let a = m.triangles[first as usize];
                let b = m.triangles[first as usize + 1];
                let shared = a.iter().filter(|v| b.contains(v)).count();
                assert_eq!(shared, 2);
            }
        }
    }

    #[test]
    fn a_lone_triangle_makes_a_one_triangle_leaf() {
        let m = SceneMesh::new(
            "t",
            vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            &[[0, 1, 2]],
        );
        let t = build(&m);
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(leaf_range(t.nodes[0].data), (0, 1));
    }
}
