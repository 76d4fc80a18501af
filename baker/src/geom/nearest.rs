//! Distances to a triangle surface: a binned-SAH tree over the triangles
//! (the same builder as the archive's trees, [`super::sah`]) walked
//! depth-first, nearer child first, dropping subtrees whose box is farther
//! than the best distance so far (branch and bound). Exact: each candidate
//! triangle's closest point is computed in f64 (Ericson, *Real-Time
//! Collision Detection*, 2005, §5.1.5), as the runtime does.
//!
//! Used to measure a collider's fidelity to its render mesh; queries are
//! rounded to f32 as the runtime's query points are, so a measure taken
//! here is the one a query on the archive would give.

use super::sah::{self, BinNode};
use super::topology::is_degenerate;
use crate::geom::sah::leaf_range;
use glam::DVec3;
use kiln_geometry::sphere_triangle::closest_point;
use rayon::prelude::*;

/// A triangle surface prepared for nearest-point queries.
pub struct Nearest {
    /// Triangles in leaf order, f64 (leaf `j` of the tree holds `tris[j]`).
    tris: Vec<[DVec3; 3]>,
    /// The tree (depth-first, skip counts).
    nodes: Vec<BinNode>,
}

impl Nearest {
    /// The surface of `triangles` over `vertices`; degenerate triangles
    /// (repeated index or zero area) are left out, as a bake leaves them.
    pub fn new(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let corners = |t: &[u32; 3]| t.map(|k| DVec3::from(vertices[k as usize].map(f64::from)));
        let kept: Vec<[DVec3; 3]> = triangles
            .iter()
            .filter(|&&t| !is_degenerate(vertices, t))
            .map(corners)
            .collect();
        let (order, nodes) = sah::build_boxes(kept.par_iter().map(|t| {
            let (lo, hi) = (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
            // f32 corners in f64 are exact: the box rounds nothing
            (lo.as_vec3().to_array(), hi.as_vec3().to_array())
        }));
        let tris = order.iter().map(|&i| kept[i as usize]).collect();
        Nearest { tris, nodes }
    }

    /// Distance from `p` (rounded to f32 first, as a query point is) to the
    /// surface; infinite for an empty surface.
    pub fn distance(&self, p: DVec3) -> f64 {
        let c = p.as_vec3().as_dvec3();
        let mut best = f64::INFINITY;
        if self.nodes.is_empty() {
            return best;
        }
        let box_d2 = |n: &BinNode| {
            let lo = DVec3::from(n.min.map(f64::from));
            let hi = DVec3::from(n.max.map(f64::from));
            (lo - c).max(c - hi).max(DVec3::ZERO).length_squared()
        };
        // (node, squared distance to its box)
        let mut stack: Vec<(usize, f64)> = vec![(0, box_d2(&self.nodes[0]))];
        while let Some((i, d2)) = stack.pop() {
            if d2 >= best * best {
                continue;
            }
            let n = &self.nodes[i];
            if n.end as usize == i + 1 {
                let [a, b, t] = self.tris[leaf_range(n.data).0 as usize];
                // the closest point rounded to f32, as the runtime reports it
                let q = closest_point(c, a, b, t).as_vec3().as_dvec3();
                best = best.min(q.distance(c));
                continue;
            }
            let (l, r) = (i + 1, self.nodes[i + 1].end as usize);
            let (dl, dr) = (box_d2(&self.nodes[l]), box_d2(&self.nodes[r]));
            // the nearer child is popped first
            if dl <= dr {
                stack.push((r, dr));
                stack.push((l, dl));
            } else {
                stack.push((l, dl));
                stack.push((r, dr));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_match_brute_force() {
        // a bumpy grid of triangles
        let n = 12u32;
        let v: Vec<[f32; 3]> = (0..=n)
            .flat_map(|i| {
                (0..=n).map(move |j| [i as f32, ((i * 7 + j * 3) % 5) as f32 * 0.3, j as f32])
            })
            .collect();
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let a = i * (n + 1) + j;
                t.push([a, a + 1, a + n + 1]);
                t.push([a + 1, a + n + 2, a + n + 1]);
            }
        }
        let near = Nearest::new(&v, &t);
        let mut rng = kiln_geometry::rng::Rng::new(1);
        for _ in 0..500 {
            let mut r = || rng.f();
            let p = DVec3::new(r() * 16.0 - 2.0, r() * 6.0 - 3.0, r() * 16.0 - 2.0);
            let c = p.as_vec3().as_dvec3();
            let brute = t
                .iter()
                .map(|tri| {
                    let q = tri.map(|k| DVec3::from(v[k as usize].map(f64::from)));
                    closest_point(c, q[0], q[1], q[2])
                        .as_vec3()
                        .as_dvec3()
                        .distance(c)
                })
                .fold(f64::INFINITY, f64::min);
            assert_eq!(near.distance(p), brute, "at {p}");
        }
    }
}
