//! How well a set of convex pieces stands in for an object: the one
//! measure a convex decomposition is judged by, whoever made it (Kiln,
//! CoACD, V-HACD), on the same samples.
//!
//! - **Concavity**: the largest distance from a point of a piece's surface
//!   that lies outside the object to the object's surface — how far the
//!   pieces bulge beyond the object (a physics body resting on them floats
//!   that far off it).
//! - **Coverage**: the largest distance from a point of the object's
//!   surface to the union of the pieces — how much of the object they miss
//!   (a body sinks that far into it).
//!
//! Both are sampled: every vertex of each surface, then area-stratified
//! random points (`samples` per surface, drawn from the one seeded
//! generator), so a figure can only be less than the true supremum, by
//! at most the sample spacing. Distances to a piece are brute force over
//! its faces in f64; distances to the object through a box tree over its
//! triangles (`kiln_baker::geom::nearest`: each candidate's closest point
//! exact, the query point rounded to f32), and the object's winding
//! number (inside or not) is taken for the farthest samples first, until
//! one lies outside. Also here: generated objects whose least
//! piece count is known (an L needs 2, a U 3, stairs one a step).

use crate::Rng;
use crate::dist_point_triangle;
use crate::solid::Solid;
use glam::DVec3;
use kiln_baker::collider::{BuiltCollider, bsp, pieces};
use kiln_baker::geom::nearest::Nearest;
use kiln_baker::geom::weld::WeldedMesh;
use kiln_geometry::hull::{Hull, hull};
use rayon::prelude::*;

/// What [`measure`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    /// Largest distance from a piece's surface outside the object to the
    /// object (m).
    pub concavity: f64,
    /// Largest distance from the object's surface to the union of the
    /// pieces (m).
    pub coverage: f64,
    /// Number of pieces (flat ones included).
    pub pieces: usize,
    /// Pieces whose points have no solid hull (a peer's sliver): left
    /// out of the figures, counted here.
    pub flat: usize,
    /// Vertices over all pieces' hulls.
    pub vertices: usize,
}

/// One convex piece: its hull and the hull's faces as triangles.
struct Piece {
    hull: Hull,
    tris: Vec<[DVec3; 3]>,
}

impl Piece {
    fn of(points: &[DVec3]) -> Option<Piece> {
        let hull = hull(points)?;
        let tris = hull
            .faces
            .iter()
            .flat_map(|(lp, _, _)| {
                let v = |k: u32| hull.vertices[k as usize];
                lp[1..]
                    .windows(2)
                    .map(move |w| [v(lp[0]), v(w[0]), v(w[1])])
            })
            .collect();
        Some(Piece { hull, tris })
    }

    /// Distance from `p` to the piece: 0 inside.
    fn distance(&self, p: DVec3) -> f64 {
        if self.hull.faces.iter().all(|(_, n, d)| n.dot(p) <= *d) {
            return 0.0;
        }
        self.tris
            .iter()
            .map(|t| dist_point_triangle(p, *t))
            .fold(f64::INFINITY, f64::min)
    }
}

/// Every vertex of `tris`, then `n` points spread over them by area.
fn samples(tris: &[[DVec3; 3]], n: usize, rng: &mut Rng) -> Vec<DVec3> {
    let mut out: Vec<DVec3> = tris.iter().flatten().copied().collect();
    let mut cumulative = Vec::with_capacity(tris.len());
    let mut total = 0.0;
    for t in tris {
        total += 0.5 * (t[1] - t[0]).cross(t[2] - t[0]).length();
        cumulative.push(total);
    }
    if total <= 0.0 {
        return out;
    }
    for k in 0..n {
        // stratified: the k-th of n equal slices of the total area
        let at = (k as f64 + rng.f()) / n as f64 * total;
        let i = cumulative.partition_point(|&c| c < at).min(tris.len() - 1);
        let t = tris[i];
        let (r1, r2) = (rng.f().sqrt(), rng.f());
        out.push(t[0] * (1.0 - r1) + t[1] * (r1 * (1.0 - r2)) + t[2] * (r1 * r2));
    }
    out
}

/// Concavity and coverage of the convex hulls of `pieces` (each a point
/// set) standing in for `object`, on `samples_per_surface` points per
/// surface drawn from `seed`. A piece with no solid hull is counted in
/// [`Measure::flat`] and left out.
pub fn measure(
    object: &Solid,
    pieces: &[Vec<DVec3>],
    samples_per_surface: usize,
    seed: u64,
) -> Measure {
    let mut rng = Rng::new(seed);
    let made: Vec<Piece> = pieces.iter().filter_map(|p| Piece::of(p)).collect();
    // the samples drawn in order (the same on any thread count), then
    // judged on the rayon pool
    let on_pieces: Vec<DVec3> = made
        .iter()
        .flat_map(|piece| samples(&piece.tris, samples_per_surface, &mut rng))
        .collect();
    let on_object = samples(object.triangles(), samples_per_surface, &mut rng);
    // every piece sample's distance to the object's surface (a box tree
    // over its triangles, each candidate's closest point exact), then the
    // winding number only for the farthest ones, farthest first, until one
    // lies outside: no nearer point can raise the figure
    let verts: Vec<[f32; 3]> = object
        .triangles()
        .iter()
        .flatten()
        .map(|v| v.as_vec3().to_array())
        .collect();
    let tris: Vec<[u32; 3]> = (0..object.triangles().len() as u32)
        .map(|k| [3 * k, 3 * k + 1, 3 * k + 2])
        .collect();
    let near = Nearest::new(&verts, &tris);
    let mut far: Vec<(f64, DVec3)> = on_pieces
        .par_iter()
        .map(|p| (near.distance(*p), *p))
        .collect();
    far.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut concavity = 0.0;
    for chunk in far.chunks(64) {
        let outside: Vec<bool> = chunk.par_iter().map(|(_, p)| !object.inside(*p)).collect();
        if let Some(k) = outside.iter().position(|&o| o) {
            concavity = chunk[k].0;
            break;
        }
    }
    let coverage = on_object
        .par_iter()
        .map(|p| {
            made.iter()
                .map(|pc| pc.distance(*p))
                .fold(f64::INFINITY, f64::min)
        })
        .reduce(|| 0.0, f64::max);
    Measure {
        concavity,
        coverage,
        pieces: pieces.len(),
        flat: pieces.len() - made.len(),
        vertices: made.iter().map(|p| p.hull.vertices.len()).sum(),
    }
}

/// Triangles welded by exact position: the vertices (f64) and the
/// triangles over them, as the peers take them.
pub fn indexed(tris: &[[DVec3; 3]]) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let mut index: std::collections::HashMap<[u64; 3], u32> = Default::default();
    let mut vertices = Vec::new();
    let faces = tris
        .iter()
        .map(|t| {
            t.map(|v| {
                let key = v.to_array().map(f64::to_bits);
                *index.entry(key).or_insert_with(|| {
                    vertices.push(v.to_array());
                    vertices.len() as u32 - 1
                })
            })
        })
        .collect();
    (vertices, faces)
}

/// [`indexed`] as the baker's welded mesh (f32 vertices).
pub fn welded(tris: &[[DVec3; 3]]) -> WeldedMesh {
    let (vertices, triangles) = indexed(tris);
    WeldedMesh {
        name: "decomposed".into(),
        vertices: vertices.iter().map(|v| v.map(|x| x as f32)).collect(),
        source_ids: (0..triangles.len() as u32).collect(),
        triangles,
    }
}

/// Kiln's concave collider of a mesh at the default settings (its
/// low-poly surface and BSP tree), as a bake builds it.
pub fn kiln_solid(tris: &[[DVec3; 3]]) -> Result<BuiltCollider, String> {
    let settings = kiln_baker::BakeSettings::default();
    bsp::build(&welded(tris), settings.shape_settings(), 1.0).map(|(c, _)| c)
}

/// Kiln's convex pieces of `collider` within `concavity` (mesh units), at
/// most `max_pieces`, with the default plane cap.
pub fn kiln_pieces(
    collider: &BuiltCollider,
    concavity: f64,
    max_pieces: usize,
) -> Result<pieces::Decomposition, String> {
    let max_planes = kiln_baker::BakeSettings::default().max_planes.get();
    pieces::of_collider(
        collider,
        &pieces::PieceSettings {
            concavity,
            max_pieces,
            max_planes,
        },
        None,
    )
    .ok_or("no solid")?
    .map_err(|e| e.to_string())
}

/// The convex pieces a bake gives a concave render mesh (welded by exact
/// position, placed at scale 1): the collider, then the pieces within
/// `concavity` metres of the render mesh, at most `max_pieces`, the other
/// settings the defaults'.
pub fn bake_pieces(
    tris: &[[DVec3; 3]],
    concavity: f64,
    max_pieces: usize,
) -> Result<kiln_baker::collider::BuiltPieces, String> {
    use kiln_baker::config::{Concavity, MaxPieces};
    let settings = kiln_baker::config::ColliderSettings {
        decompose_concavity: Concavity::Metres(concavity),
        max_pieces: MaxPieces::new(max_pieces as i64)?,
        ..kiln_baker::BakeSettings::default().shape_settings()
    };
    kiln_baker::collider::concave_pieces(&welded(tris), settings)
}

/// Each piece as a physics engine gets it, for [`measure`]: its
/// polytope's vertices, or points of the box, sphere or capsule it is
/// given as (a box's corners; a sphere's or capsule's rings every 5°, a
/// point every 5° along each: the measure takes their hull).
pub fn piece_points(d: &pieces::Decomposition) -> Vec<Vec<DVec3>> {
    use kiln_baker::geom::fit::Primitive;
    d.pieces
        .iter()
        .zip(&d.primitives)
        .map(|(p, prim)| match *prim {
            None => p
                .vertices
                .iter()
                .map(|v| DVec3::from(v.map(f64::from)))
                .collect(),
            Some((Primitive::Cuboid(h), frame)) => (0..8)
                .map(|i| {
                    let s = |k: u32| if i & (1 << k) != 0 { 1.0 } else { -1.0 };
                    let c = DVec3::new(s(0), s(1), s(2)) * DVec3::from(h.map(f64::from));
                    frame.transform_point3(c)
                })
                .collect(),
            Some((round, frame)) => {
                let (hh, r) = match round {
                    Primitive::Capsule(hh, r) => (f64::from(hh), f64::from(r)),
                    Primitive::Sphere(r) => (0.0, f64::from(r)),
                    Primitive::Cuboid(_) => unreachable!("boxes above"),
                };
                let mut out = Vec::new();
                for i in 0..=36 {
                    let lat = std::f64::consts::PI * (i as f64 / 36.0 - 0.5);
                    for j in 0..72 {
                        let lon = std::f64::consts::TAU * j as f64 / 72.0;
                        let dir =
                            DVec3::new(lat.cos() * lon.cos(), lat.sin(), lat.cos() * lon.sin());
                        for end in [-hh, hh] {
                            out.push(frame.transform_point3(dir * r + DVec3::Y * end));
                        }
                    }
                }
                out
            }
        })
        .collect()
}

/// The surface of the union of unit cells (least corners `cells`), as
/// world triangles.
pub fn cells_surface(cells: &[[i32; 3]]) -> Vec<[DVec3; 3]> {
    let (corners, tris) = kiln_geometry::voxels::surface(cells);
    let v = |k: u32| DVec3::from(corners[k as usize].map(f64::from));
    tris.iter().map(|t| [v(t[0]), v(t[1]), v(t[2])]).collect()
}

/// Objects with a known least number of convex pieces, as unit cells in
/// one layer: (name, cells, pieces). Each also parts into exactly that
/// many boxes of its cells ([`known_parts`]).
pub fn known_shapes() -> Vec<(&'static str, Vec<[i32; 3]>, usize)> {
    let l = vec![[0, 0, 0], [1, 0, 0], [0, 1, 0]];
    let u = vec![[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]];
    let stairs = vec![
        [0, 0, 0],
        [1, 0, 0],
        [2, 0, 0],
        [1, 1, 0],
        [2, 1, 0],
        [2, 2, 0],
    ];
    vec![("L", l, 2), ("U", u, 3), ("stairs of 3", stairs, 3)]
}

/// The boxes (as the corner points of their cells) that part a known
/// shape into its least number of convex pieces.
pub fn known_parts(name: &str) -> Vec<Vec<DVec3>> {
    let boxes: &[([i32; 3], [i32; 3])] = match name {
        "L" => &[([0, 0, 0], [2, 1, 1]), ([0, 1, 0], [1, 2, 1])],
        "U" => &[
            ([0, 0, 0], [3, 1, 1]),
            ([0, 1, 0], [1, 2, 1]),
            ([2, 1, 0], [3, 2, 1]),
        ],
        "stairs of 3" => &[
            ([0, 0, 0], [3, 1, 1]),
            ([1, 1, 0], [3, 2, 1]),
            ([2, 2, 0], [3, 3, 1]),
        ],
        _ => &[],
    };
    boxes
        .iter()
        .map(|(lo, hi)| {
            (0..8)
                .map(|i| {
                    let pick = |k: usize| if i >> k & 1 == 0 { lo[k] } else { hi[k] };
                    DVec3::new(pick(0).into(), pick(1).into(), pick(2).into())
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str) -> Solid {
        let (_, cells, _) = known_shapes().into_iter().find(|s| s.0 == name).unwrap();
        Solid::new(cells_surface(&cells))
    }

    #[test]
    fn the_known_parts_fit_their_shapes_exactly() {
        for (name, cells, n) in known_shapes() {
            let parts = known_parts(name);
            assert_eq!(parts.len(), n, "{name}");
            let m = measure(&Solid::new(cells_surface(&cells)), &parts, 4000, 1);
            assert!(m.concavity < 1e-9 && m.coverage < 1e-9, "{name}: {m:?}");
            assert_eq!((m.pieces, m.vertices), (n, 8 * n), "{name}");
        }
    }

    #[test]
    fn a_hull_over_the_inside_corner_bulges_and_a_missing_part_is_missed() {
        let l = object("L");
        // the L's hull bulges out to the middle of its edge from (2, 1)
        // to (1, 2), half a cell from the L's two inner faces
        let corners: Vec<DVec3> = known_parts("L").concat();
        let m = measure(&l, &[corners], 20_000, 2);
        assert!(m.concavity > 0.49 && m.concavity <= 0.5 + 1e-9, "{m:?}");
        assert!(m.coverage < 1e-9, "{m:?}");
        // the lower box alone misses the upper cell, whose top is 1 off it
        let lower = vec![known_parts("L")[0].clone()];
        let m = measure(&l, &lower, 20_000, 3);
        assert!(m.concavity < 1e-9, "{m:?}");
        assert!(m.coverage > 0.95 && m.coverage <= 1.0 + 1e-9, "{m:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_figures_and_a_flat_piece_is_counted_apart() {
        let u = object("U");
        let hull: Vec<DVec3> = known_parts("U").concat();
        let a = measure(&u, std::slice::from_ref(&hull), 2000, 9);
        assert_eq!(a, measure(&u, std::slice::from_ref(&hull), 2000, 9));
        let flat = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::ONE.with_z(0.0)];
        let b = measure(&u, &[hull, flat], 2000, 9);
        assert_eq!((b.pieces, b.flat), (2, 1));
        assert_eq!((b.concavity, b.coverage), (a.concavity, a.coverage));
    }
}
