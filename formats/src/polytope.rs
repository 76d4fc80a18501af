//! The Polytope collider: a convex solid as the planes bounding it, its
//! vertices (support mapping, closest points) and its faces as vertex
//! loops (face `k` lies in plane `k`).
//!
//! ```text
//! planes[k] = [nx, ny, nz, d]     inside: n · x ≤ d   (n unit, outward)
//! face k    = vertices[face_vertices[face_starts[k] .. face_starts[k + 1]]]
//!             counter-clockwise seen from outside
//! face_twins[i] = the face across the edge from face_vertices[i] to the
//!             next vertex of its loop (NO_TWIN: none)
//! ```

use rkyv::{Archive, Serialize};

/// Most planes (and faces) a polytope may have.
pub const MAX_PLANES: usize = 256;

/// Most vertices a polytope may have (a convex polytope with `P` faces has
/// at most `2P - 4` vertices).
pub const MAX_VERTICES: usize = 2 * MAX_PLANES;

/// `face_twins` entry of an edge with no face across it (a polytope that
/// is not closed).
pub const NO_TWIN: u16 = u16::MAX;
/// How far a vertex may lie outside a plane, relative to the polytope's
/// size (the largest absolute coordinate of its box, at least 1): f32
/// rounding of planes and vertices computed in f64.
pub const PLANE_TOLERANCE: f32 = 1e-4;

/// A convex polytope in its local space.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Polytope {
    /// Face planes: unit outward normal and offset, `n · x ≤ d` inside.
    pub planes: Vec<[f32; 4]>,
    /// Vertices.
    pub vertices: Vec<[f32; 3]>,
    /// Start of each face's loop in `face_vertices`, one more entry than
    /// there are faces (the last is `face_vertices.len()`). 16 bits hold
    /// every start: a polytope within [`MAX_VERTICES`] has at most
    /// `3 · MAX_VERTICES - 6` edges, so its loops at most twice that many
    /// entries.
    pub face_starts: Vec<u16>,
    /// Face loops: vertex indices (below [`MAX_VERTICES`]),
    /// counter-clockwise seen from outside.
    pub face_vertices: Vec<u16>,
    /// For each loop entry, the face across the edge that starts there
    /// (from that vertex to the next of the loop), or [`NO_TWIN`]: the
    /// edges' two faces, so queries walk the edges and their Gauss map
    /// without searching.
    pub face_twins: Vec<u16>,
    /// Lower corner of the vertices' box.
    pub min: [f32; 3],
    /// Upper corner of the vertices' box.
    pub max: [f32; 3],
}

impl Polytope {
    /// A polytope from its faces: each face's unit outward normal (f64),
    /// the vertices, and each face's loop (counter-clockwise seen from
    /// outside). Each offset is the largest `n · v` over the f32 vertices,
    /// rounded up, and each normal rounded to f32, so no vertex ends up
    /// outside a plane; the edges' twins and the box are derived.
    pub fn from_faces(
        normals: &[[f64; 3]],
        vertices: Vec<[f32; 3]>,
        faces: &[Vec<u32>],
    ) -> Polytope {
        let planes: Vec<[f32; 4]> = normals
            .iter()
            .map(|n| {
                let d = vertices
                    .iter()
                    .map(|v| {
                        n[0] * f64::from(v[0]) + n[1] * f64::from(v[1]) + n[2] * f64::from(v[2])
                    })
                    .fold(f64::NEG_INFINITY, f64::max);
                [n[0] as f32, n[1] as f32, n[2] as f32, round_up(d)]
            })
            .collect();
        let mut face_starts = vec![0u16];
        let mut face_vertices = Vec::new();
        for f in faces {
            face_vertices.extend(f.iter().map(|&v| narrow(v as usize, "vertex index")));
            face_starts.push(narrow(face_vertices.len(), "face loop entries"));
        }
        // the face across each edge: the one that walks it the other way
        let mut walks = std::collections::HashMap::new();
        for (k, f) in faces.iter().enumerate() {
            for j in 0..f.len() {
                walks.insert((f[j], f[(j + 1) % f.len()]), k);
            }
        }
        let face_twins = faces
            .iter()
            .flat_map(|f| (0..f.len()).map(move |j| (f[j], f[(j + 1) % f.len()])))
            .map(|(a, b)| walks.get(&(b, a)).map_or(NO_TWIN, |&k| k as u16))
            .collect();
        let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for v in &vertices {
            for k in 0..3 {
                min[k] = min[k].min(v[k]);
                max[k] = max[k].max(v[k]);
            }
        }
        Polytope {
            planes,
            vertices,
            face_starts,
            face_vertices,
            face_twins,
            min,
            max,
        }
    }
}

/// `x` as a 16-bit index. The baker keeps a polytope within
/// [`MAX_PLANES`] and [`MAX_VERTICES`], so its indices and loop lengths
/// stay far below 2¹⁶ (a wider one is a bug upstream, not input).
fn narrow(x: usize, what: &str) -> u16 {
    u16::try_from(x).unwrap_or_else(|_| panic!("polytope {what} {x} past 16 bits"))
}

/// The smallest f32 at or above `x` (finite `x`).
pub fn round_up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) >= x {
        f
    } else if f == 0.0 {
        f32::from_bits(1) // the smallest positive f32 (also for -0.0)
    } else if f > 0.0 {
        f32::from_bits(f.to_bits() + 1)
    } else {
        f32::from_bits(f.to_bits() - 1) // towards zero
    }
}

impl ArchivedPolytope {
    /// The vertex loop of face `k` (verified: in range).
    #[inline]
    pub fn face(&self, k: usize) -> &[rkyv::rend::u16_le] {
        let a = self.face_starts[k].to_native() as usize;
        let b = self.face_starts[k + 1].to_native() as usize;
        &self.face_vertices[a..b]
    }

    /// Every face fanned into triangles from its loop's first vertex, as
    /// vertex indices wound as the loops are (counter-clockwise seen from
    /// outside): the closed surface a physics engine or a volume integral
    /// takes.
    pub fn fan_triangles(&self) -> impl Iterator<Item = [u32; 3]> + '_ {
        (0..self.planes.len()).flat_map(move |k| {
            let lp = self.face(k);
            lp.windows(2)
                .skip(1)
                .map(move |e| [lp[0], e[0], e[1]].map(|v| u32::from(v.to_native())))
        })
    }

    /// The faces across the edges of face `k`'s loop, entry for entry
    /// (verified: as long as the loop, each in range or [`NO_TWIN`]).
    #[inline]
    pub fn twins(&self, k: usize) -> &[rkyv::rend::u16_le] {
        let a = self.face_starts[k].to_native() as usize;
        let b = self.face_starts[k + 1].to_native() as usize;
        &self.face_twins[a..b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_round_up_on_both_sides_of_zero() {
        for x in [
            1.0f64 / 3.0,
            -1.0 / 3.0,
            1e-50,
            -1e-50,
            0.0,
            2.5,
            -2.5,
            1e30,
        ] {
            let f = round_up(x);
            assert!(f64::from(f) >= x, "{x} -> {f}");
            assert!(f64::from(f) - x <= x.abs() * 1.2e-7 + 1.5e-45, "{x} -> {f}");
        }
    }
}
