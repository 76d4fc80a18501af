//! Convex pieces of a concave solid: what a physics engine simulates a
//! moving body with (Rapier, Avian, Jolt and PhysX collide moving bodies
//! only as convex shapes). Kiln's own queries keep the exact solid; the
//! pieces ride beside it in the archive.
//!
//! The method: a solid BSP tree's solid leaves are convex cells that
//! together are exactly the solid ([`tree::solid_cells`]), so they already
//! are a convex decomposition, only a fine one. Neighbouring pieces are
//! merged, the merge that bulges least first, for as long as the convex
//! hull of the merged pair stays within the concavity bound of the solid —
//! the bottom-up merging of HACD (Mamou and Ghorbel, "A simple and
//! efficient approach for 3D mesh approximate convex decomposition", ICIP
//! 2009), on volume cells instead of surface patches. The concavity of a
//! hull is the one CoACD judges by (Wei et al., "Approximate convex
//! decomposition for 3D meshes with collision-aware concavity and tree
//! search", SIGGRAPH 2022), here taken on the hull's surface only: the
//! farthest a point of the hull's surface outside the solid lies from the
//! solid's surface. A hull reaching across a gap of the object wider than
//! twice the bound is refused by it, as the collision-aware measure means.
//!
//! The concavity is sampled: a regular grid on each hull face, spaced at
//! half the bound, its coarse points first (a bad merge is refused after a
//! few samples), tested against the stored tree (inside or not) and, when
//! outside, measured against the collider's surface ([`Nearest`]).
//!
//! Deterministic: pieces have ids in creation order, candidate merges are
//! judged in parallel but collected in order, and the queue breaks ties by
//! ids, so the same solid gives the same pieces on any thread count.

use super::BuiltCollider;
use super::bsp::{BuiltBsp, tree};
use super::polytope::{self, BuiltPolytope, capped};
use crate::geom::nearest::Nearest;
use glam::DVec3;
use kiln_geometry::hull::hull;
use kiln_geometry::sphere_triangle::closest_point;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, HashSet};

/// Most vertices a piece may have (physics engines take convex hulls of up
/// to 256 vertices: PhysX's cooking limit, Jolt's default).
pub const MAX_PIECE_VERTICES: usize = 256;

/// What a decomposition is asked for, in the mesh's own units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieceSettings {
    /// Farthest a piece may bulge out of the solid.
    pub concavity: f64,
    /// Most pieces: past it, the least-bulging merges go on over the
    /// bound (and [`Decomposition::over_bound`] says so).
    pub max_pieces: usize,
    /// Most faces a piece may have.
    pub max_planes: usize,
}

/// The convex pieces of a solid.
#[derive(Clone, Debug, PartialEq)]
pub struct Decomposition {
    /// The pieces, each a polytope.
    pub pieces: Vec<BuiltPolytope>,
    /// The largest sampled concavity of any piece against the solid.
    pub concavity: f64,
    /// Solid cells the merging started from.
    pub cells: usize,
    /// Whether the piece cap made merges past the bound.
    pub over_bound: bool,
}

/// Why a solid has no pieces.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PiecesError {
    /// The tree has no solid cell with volume.
    #[error("the solid has no cell with volume")]
    Empty,
    /// A piece could not be made a polytope.
    #[error("a piece has no polytope: {0}")]
    Polytope(String),
}

/// A convex piece while merging: its hull's corners.
#[derive(Clone, Debug)]
struct Part {
    points: Vec<DVec3>,
    lo: DVec3,
    hi: DVec3,
    volume: f64,
    concavity: f64,
}

/// A candidate merge in the queue, keyed by the volume its hull adds to
/// the two pieces (least first, then the lowest ids): judged against the
/// bound only when it comes out, so the many candidates a merge makes
/// stale are never sampled.
struct Candidate {
    added: f64,
    a: usize,
    b: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Candidate {
    // reversed: the heap pops the least key
    fn cmp(&self, o: &Self) -> Ordering {
        o.added
            .total_cmp(&self.added)
            .then(o.a.cmp(&self.a))
            .then(o.b.cmp(&self.b))
    }
}

/// Candidate merges judged together: the next ones out of the queue whose
/// pieces are all different (a fixed number, so the pieces do not depend
/// on the thread count).
const BATCH: usize = 16;

/// Judges hulls against the solid.
struct Judge<'a> {
    bsp: &'a BuiltBsp,
    near: Nearest,
    max_planes: usize,
    /// Sample spacing on hull faces: half the bound.
    spacing: f64,
}

impl Judge<'_> {
    /// The convex piece of `points`, or `None` when it has no volume, more
    /// than [`MAX_PIECE_VERTICES`] corners, or bulges past `limit`. A hull
    /// with more faces than the cap is judged twice: as it is (a hull that
    /// bulges too far is refused before it is capped, which costs more),
    /// then capped (what is stored: it only grows the hull).
    fn part(&self, points: &[DVec3], limit: f64, from: Option<(&Part, &Part)>) -> Option<Part> {
        let h = hull(points)?;
        // a face of the merged hull whose corners are all one piece's lies
        // on that piece's hull (the plane holding the whole hull holds the
        // piece, so the face is the piece's face or edge), which was judged
        // when the piece was made: only the faces bridging the two are new
        let key = |p: &DVec3| p.to_array().map(f64::to_bits);
        let sides: Option<[HashSet<[u64; 3]>; 2]> =
            from.map(|(a, b)| [a, b].map(|x| x.points.iter().map(key).collect()));
        let faces: Vec<Vec<u32>> = h
            .faces
            .iter()
            .map(|(lp, _, _)| lp)
            .filter(|lp| {
                sides.as_ref().is_none_or(|sides| {
                    !sides.iter().any(|side| {
                        lp.iter()
                            .all(|&k| side.contains(&key(&h.vertices[k as usize])))
                    })
                })
            })
            .cloned()
            .collect();
        // a cell lies in the solid: nothing of it to judge
        let mut concavity = match from {
            Some((a, b)) => self
                .concavity(&h.vertices, &faces, limit)?
                .max(a.concavity)
                .max(b.concavity),
            None => 0.0,
        };
        let (vertices, volume) = if h.faces.len() > self.max_planes {
            let c = capped(&h, self.max_planes);
            let faces: Vec<Vec<u32>> = c.faces.iter().map(|(lp, _)| lp.clone()).collect();
            concavity = concavity.max(self.concavity(&c.vertices, &faces, limit)?);
            let v = hull(&c.vertices).map_or(h.volume(), |c| c.volume());
            (c.vertices, v)
        } else {
            let v = h.volume();
            (h.vertices, v)
        };
        if vertices.len() > MAX_PIECE_VERTICES {
            return None;
        }
        let (lo, hi) = vertices.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        Some(Part {
            points: vertices,
            lo,
            hi,
            volume,
            concavity,
        })
    }

    /// The farthest sampled point of the polytope's surface outside the
    /// solid from the solid's surface, or `None` past `limit`. Samples: a
    /// grid on each face's fan triangles spaced at half the bound, the
    /// coarse grid (corners, edge midpoints, centre) of every triangle
    /// first.
    fn concavity(&self, vertices: &[DVec3], faces: &[Vec<u32>], limit: f64) -> Option<f64> {
        let spacing = self.spacing;
        let tris: Vec<[DVec3; 3]> = faces
            .iter()
            .flat_map(|lp| {
                lp[1..].windows(2).map(|w| {
                    [
                        vertices[lp[0] as usize],
                        vertices[w[0] as usize],
                        vertices[w[1] as usize],
                    ]
                })
            })
            .collect();
        let mut worst = 0.0f64;
        let mut test = |p: DVec3| -> bool {
            if tree::inside(self.bsp, p) {
                return true;
            }
            let d = self.near.distance(p);
            worst = worst.max(d);
            d <= limit
        };
        for t in &tris {
            for p in [
                (t[0] + t[1]) * 0.5,
                (t[1] + t[2]) * 0.5,
                (t[2] + t[0]) * 0.5,
                (t[0] + t[1] + t[2]) / 3.0,
            ] {
                if !test(p) {
                    return None;
                }
            }
        }
        for t in &tris {
            let longest = (t[1] - t[0])
                .length()
                .max((t[2] - t[1]).length())
                .max((t[0] - t[2]).length());
            let n = ((longest / spacing).ceil() as usize).clamp(1, 64);
            let step = 1.0 / n as f64;
            for i in 0..=n {
                for j in 0..=n - i {
                    let (u, v) = (i as f64 * step, j as f64 * step);
                    if !test(t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v) {
                        return None;
                    }
                }
            }
        }
        Some(worst)
    }
}

/// Whether two parts' boxes touch (within `eps`).
fn touch(a: &Part, b: &Part, eps: f64) -> bool {
    (a.lo - b.hi).max_element() <= eps && (b.lo - a.hi).max_element() <= eps
}

/// The convex pieces of the solid `bsp`.
pub fn decompose(bsp: &BuiltBsp, settings: &PieceSettings) -> Result<Decomposition, PiecesError> {
    let tris: Vec<[u32; 3]> = bsp
        .surface
        .leaves
        .iter()
        .flat_map(|l| {
            let second = (l[3] != l[2]).then_some([l[2], l[1], l[3]]);
            std::iter::once([l[0], l[1], l[2]]).chain(second)
        })
        .collect();
    let bound = settings.concavity.max(0.0);
    let judge = Judge {
        bsp,
        near: Nearest::new(&bsp.surface.vertices, &tris),
        max_planes: settings.max_planes.max(6),
        spacing: 0.5 * bound,
    };
    let cells = tree::solid_cells(bsp);
    // a cell is inside the solid: it is not judged
    let mut parts: Vec<Option<Part>> = cells
        .par_iter()
        .map(|c| judge.part(c, f64::INFINITY, None))
        .collect();
    parts.retain(Option::is_some);
    let n_cells = parts.len();
    if n_cells == 0 {
        return Err(PiecesError::Empty);
    }
    let size = parts
        .iter()
        .flatten()
        .fold(0.0f64, |m, p| m.max((p.hi - p.lo).max_element()));
    let eps = 1e-6 * size.max(1e-9);
    // neighbours: parts whose boxes touch (sweep along x)
    let mut neighbours: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n_cells];
    let lo_x = |i: usize| parts[i].as_ref().map_or(f64::INFINITY, |p| p.lo.x);
    let mut order: Vec<usize> = (0..n_cells).collect();
    order.sort_by(|&i, &j| lo_x(i).total_cmp(&lo_x(j)).then(i.cmp(&j)));
    for (k, &i) in order.iter().enumerate() {
        let a = parts[i].as_ref().expect("alive");
        for &j in &order[k + 1..] {
            let b = parts[j].as_ref().expect("alive");
            if b.lo.x > a.hi.x + eps {
                break;
            }
            if touch(a, b, eps) {
                neighbours[i].insert(j);
                neighbours[j].insert(i);
            }
        }
    }
    let mut alive = n_cells;
    let mut limit = bound.max(eps);
    let mut over_bound = false;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let alive_before = alive;
        let pairs: Vec<(usize, usize)> = neighbours
            .iter()
            .enumerate()
            .filter(|(i, _)| parts[*i].is_some())
            .flat_map(|(i, ns)| ns.range(i + 1..).map(move |&j| (i, j)))
            .collect();
        let mut heap: BinaryHeap<Candidate> = candidates(&parts, &pairs).into_iter().collect();
        while alive > 1 && !(over_bound && alive <= settings.max_pieces) {
            // the next candidates on distinct live pieces
            let mut batch: Vec<Candidate> = Vec::new();
            let mut later: Vec<Candidate> = Vec::new();
            while batch.len() < BATCH {
                let Some(c) = heap.pop() else { break };
                if parts[c.a].is_none() || parts[c.b].is_none() {
                    continue;
                }
                if batch
                    .iter()
                    .any(|o| [o.a, o.b].iter().any(|x| *x == c.a || *x == c.b))
                {
                    later.push(c);
                } else {
                    batch.push(c);
                }
            }
            heap.extend(later);
            if batch.is_empty() {
                break;
            }
            let judged: Vec<Option<Part>> = batch
                .par_iter()
                .map(|c| {
                    let (pa, pb) = (parts[c.a].as_ref()?, parts[c.b].as_ref()?);
                    let points: Vec<DVec3> = pa.points.iter().chain(&pb.points).copied().collect();
                    judge.part(&points, limit, Some((pa, pb)))
                })
                .collect();
            for (c, part) in batch.into_iter().zip(judged) {
                let Some(part) = part else { continue };
                if over_bound && alive <= settings.max_pieces {
                    break;
                }
                let m = parts.len();
                parts[c.a] = None;
                parts[c.b] = None;
                parts.push(Some(part));
                let mut ns: BTreeSet<usize> = &neighbours[c.a] | &neighbours[c.b];
                ns.remove(&c.a);
                ns.remove(&c.b);
                for &n in &ns {
                    neighbours[n].remove(&c.a);
                    neighbours[n].remove(&c.b);
                    neighbours[n].insert(m);
                }
                neighbours[c.a].clear();
                neighbours[c.b].clear();
                let new_pairs: Vec<(usize, usize)> = ns.iter().map(|&n| (n, m)).collect();
                neighbours.push(ns);
                alive -= 1;
                heap.extend(candidates(&parts, &new_pairs));
            }
        }
        if alive <= settings.max_pieces.max(1) || alive == 1 {
            break;
        }
        // nothing merges even with no bound (pieces too flat or with too
        // many corners to join): the cap cannot be met
        if !limit.is_finite() && alive == alive_before {
            break;
        }
        // over the cap: the least-bulging merges go on past the bound,
        // which grows until something merges (then without one)
        over_bound = true;
        limit = if rounds >= 40 {
            f64::INFINITY
        } else {
            limit * 1.5
        };
    }
    let kept: Vec<&Part> = parts.iter().flatten().collect();
    // a piece the polytope builder caps grows by at most its reach
    let made = kept
        .par_iter()
        .map(|p| {
            let pts: Vec<[f32; 3]> = p.points.iter().map(|v| v.as_vec3().to_array()).collect();
            polytope::polytope(&pts, settings.max_planes)
                .map(|(poly, cap)| (poly, p.concavity + cap.map_or(0.0, |c| c.reach)))
                .map_err(PiecesError::Polytope)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let concavity = made.iter().fold(0.0f64, |m, p| m.max(p.1));
    let pieces = made.into_iter().map(|p| p.0).collect();
    Ok(Decomposition {
        pieces,
        concavity,
        cells: n_cells,
        over_bound,
    })
}

/// The convex pieces of a built collider: a BSP solid's merged cells; a
/// polytope is its own one piece. A triangle mesh or a primitive has none
/// here (`None`): a mesh bounds no solid, a primitive is already convex.
pub fn of_collider(
    collider: &BuiltCollider,
    settings: &PieceSettings,
) -> Option<Result<Decomposition, PiecesError>> {
    match collider {
        BuiltCollider::Bsp(b) => Some(decompose(b, settings)),
        BuiltCollider::Polytope(p) => Some(Ok(Decomposition {
            pieces: vec![p.clone()],
            concavity: 0.0,
            cells: 1,
            over_bound: false,
        })),
        BuiltCollider::TriMesh(_) | BuiltCollider::Primitive(_) => None,
    }
}

/// The farthest of `points` from the union of `pieces` (0 inside one):
/// how much of an object the pieces miss, brute force over every piece's
/// faces (a piece's box bounds its distance from below, so far pieces are
/// skipped).
pub fn coverage(pieces: &[BuiltPolytope], points: &[DVec3]) -> f64 {
    struct Piece {
        planes: Vec<(DVec3, f64)>,
        tris: Vec<[DVec3; 3]>,
        lo: DVec3,
        hi: DVec3,
    }
    let made: Vec<Piece> = pieces
        .iter()
        .map(|p| {
            let v: Vec<DVec3> = p
                .vertices
                .iter()
                .map(|x| DVec3::from(x.map(f64::from)))
                .collect();
            let mut tris = Vec::new();
            for lp in &p.faces {
                for w in lp[1..].windows(2) {
                    tris.push([v[lp[0] as usize], v[w[0] as usize], v[w[1] as usize]]);
                }
            }
            let (lo, hi) = v.iter().fold(
                (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
                |(lo, hi), x| (lo.min(*x), hi.max(*x)),
            );
            Piece {
                planes: p.planes.clone(),
                tris,
                lo,
                hi,
            }
        })
        .collect();
    points
        .par_iter()
        .map(|&p| {
            if made
                .iter()
                .any(|m| m.planes.iter().all(|(n, d)| n.dot(p) <= *d))
            {
                return 0.0;
            }
            let mut best = f64::INFINITY;
            for m in &made {
                if (m.lo - p).max(p - m.hi).max(DVec3::ZERO).length() >= best {
                    continue;
                }
                for t in &m.tris {
                    best = best.min(closest_point(p, t[0], t[1], t[2]).distance(p));
                }
            }
            best
        })
        .reduce(|| 0.0, f64::max)
}

/// The candidate merges of `pairs`, in the pairs' order: each keyed by
/// the volume of the two pieces' hull beyond theirs.
fn candidates(parts: &[Option<Part>], pairs: &[(usize, usize)]) -> Vec<Candidate> {
    pairs
        .par_iter()
        .filter_map(|&(a, b)| {
            let (pa, pb) = (parts[a].as_ref()?, parts[b].as_ref()?);
            let points: Vec<DVec3> = pa.points.iter().chain(&pb.points).copied().collect();
            let h = hull(&points)?;
            Some(Candidate {
                added: h.volume() - pa.volume - pb.volume,
                a: a.min(b),
                b: a.max(b),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collider::bsp::tree::{BspOptions, build};

    /// The closed surface of a union of unit cells.
    fn cells_bsp(cells: &[[i32; 3]]) -> BuiltBsp {
        let (corners, tris) = kiln_geometry::voxels::surface(cells);
        let v: Vec<[f32; 3]> = corners.iter().map(|c| c.map(|x| x as f32)).collect();
        build(&v, &tris, BspOptions::default()).expect("a closed surface")
    }

    fn settings(concavity: f64) -> PieceSettings {
        PieceSettings {
            concavity,
            max_pieces: 64,
            max_planes: 64,
        }
    }

    #[test]
    fn a_looser_bound_merges_across_the_inside_corner() {
        // the L's hull bulges half a cell over its inside corner: within
        // a bound of 0.6 one piece does
        let l = vec![[0, 0, 0], [1, 0, 0], [0, 1, 0]];
        let d = decompose(&cells_bsp(&l), &settings(0.6)).unwrap();
        assert_eq!(d.pieces.len(), 1, "{d:?}");
        assert!(d.concavity > 0.45 && d.concavity <= 0.6, "{d:?}");
    }

    #[test]
    fn the_piece_cap_merges_past_the_bound_and_says_so() {
        let u = vec![[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]];
        let mut s = settings(0.05);
        s.max_pieces = 2;
        let d = decompose(&cells_bsp(&u), &s).unwrap();
        assert_eq!(d.pieces.len(), 2, "{d:?}");
        assert!(d.over_bound && d.concavity > 0.05, "{d:?}");
    }
}
