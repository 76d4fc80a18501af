//! The closed surface of a union of unit cubes (cells with integer
//! corners), for solids with inside corners, slots and steps in tests.

use std::collections::{BTreeSet, HashMap};

/// The surface of the union of the unit cells whose least corners are
/// `cells`: each cell face that no other cell shares, as two triangles
/// wound counter-clockwise seen from outside. Returns the corners
/// (integer coordinates, each once, in the order first used) and the
/// triangles. Coplanar neighbours share whole edges: no T-junctions.
pub fn surface(cells: &[[i32; 3]]) -> (Vec<[i32; 3]>, Vec<[u32; 3]>) {
    let filled: BTreeSet<[i32; 3]> = cells.iter().copied().collect();
    let mut index: HashMap<[i32; 3], u32> = HashMap::new();
    let mut corners: Vec<[i32; 3]> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    for &c in &filled {
        for axis in 0..3 {
            for side in [-1, 1] {
                let mut nb = c;
                nb[axis] += side;
                if filled.contains(&nb) {
                    continue;
                }
                // the face's corners, counter-clockwise seen from outside
                let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                let mut base = c;
                if side > 0 {
                    base[axis] += 1;
                }
                let at = |du: i32, dv: i32| {
                    let mut p = base;
                    p[u] += du;
                    p[v] += dv;
                    p
                };
                let mut q = [at(0, 0), at(1, 0), at(1, 1), at(0, 1)];
                if side < 0 {
                    q.reverse();
                }
                let q = q.map(|p| {
                    *index.entry(p).or_insert_with(|| {
                        corners.push(p);
                        (corners.len() - 1) as u32
                    })
                });
                tris.push([q[0], q[1], q[2]]);
                tris.push([q[0], q[2], q[3]]);
            }
        }
    }
    (corners, tris)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cells side by side: ten faces, each edge shared by exactly two
    /// triangles in opposite directions (closed and consistently wound),
    /// and the signed volume is two.
    #[test]
    fn two_cells_make_a_closed_box_of_volume_two() {
        let (corners, tris) = surface(&[[0, 0, 0], [1, 0, 0]]);
        assert_eq!(tris.len(), 20);
        let mut edges = std::collections::HashMap::new();
        for t in &tris {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "edge {a}-{b} given twice");
            assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}-{b} open");
        }
        let p = |i: u32| glam::DVec3::from_array(corners[i as usize].map(f64::from));
        let volume: f64 = tris
            .iter()
            .map(|t| p(t[0]).dot(p(t[1]).cross(p(t[2]))) / 6.0)
            .sum();
        assert!((volume - 2.0).abs() < 1e-12, "{volume}");
    }
}
