//! Convex pieces of a concave solid: what a physics engine simulates a
//! moving body with (Rapier, Avian, Jolt and PhysX collide moving bodies
//! only as convex shapes). Kiln's own queries keep the exact solid; the
//! pieces ride beside it in the archive.
//!
//! The method: a solid BSP tree's solid leaves are convex cells that
//! together are exactly the solid ([`tree::solid_cells`]), so they already
//! are a convex decomposition, only a fine one. Neighbouring pieces (cells
//! sharing a face of positive area, and the pieces made of them) are
//! merged, the merge that adds the least volume first, for as long as the
//! convex hull of the merged pair stays within the concavity bound — the
//! bottom-up merging of HACD (Mamou and Ghorbel, "A simple and efficient
//! approach for 3D mesh approximate convex decomposition", ICIP 2009), on
//! volume cells instead of surface patches. The concavity of a hull is the
//! one CoACD judges by (Wei et al., "Approximate convex decomposition for
//! 3D meshes with collision-aware concavity and tree search", SIGGRAPH
//! 2022), here taken on the hull's surface only: the farthest a point of
//! the hull's surface outside the solid lies from the object's surface —
//! the render mesh itself when the caller gives it, so pieces of a
//! collider that stands off the render mesh are held to the render mesh.
//! A hull reaching across a gap of the object wider than twice the bound
//! is refused by it, as the collision-aware measure means.
//!
//! The concavity is sampled: a regular grid on each hull face, spaced at
//! half the bound, its coarse points first (a bad merge is refused after a
//! few samples), tested against the stored tree (inside or not) and, when
//! outside, measured against the object's surface ([`Nearest`]). Only the
//! faces that bridge the two pieces are sampled.
//!
//! The keys of the candidates a merge makes are estimated from the keys
//! its parts had with the same neighbour, and taken exactly (a hull) only
//! when a candidate comes out of the queue (lazy evaluation: most go stale
//! first, and hulls are most of the time).
//!
//! Greedy merging can end in more pieces than needed: on a ring, pieces
//! grown everywhere at once meet at odd angles and leave slivers (a torus:
//! 22 where 8 segments hold the bound). Where the merging leaves few
//! pieces (at most 32) of a solid of few cells (at most 1,024), a
//! top-down search over cuts is run too (after CoACD's): the cells, while
//! a connected group's hull bulges past the bound, are cut by the axis or
//! diagonal plane that wastes least, then the groups are merged as above;
//! the fewest pieces (then the least concavity) are kept.
//!
//! A piece that fills a box, sphere or capsule is also given as it
//! ([`filled`]), for physics engines.
//!
//! Deterministic: pieces have ids in creation order, candidate merges are
//! judged in parallel but collected in order, and the queue breaks ties by
//! ids, so the same solid gives the same pieces on any thread count.

use super::BuiltCollider;
use super::bsp::{BuiltBsp, tree};
use super::polytope::{self, BuiltPolytope, capped};
use crate::geom::fit::{Fitting, Primitive, principal_axes};
use crate::geom::nearest::Nearest;
use crate::geom::topology::bounds;
use crate::geom::weld::WeldedMesh;
use crate::scene::{AuthoredPiece, PieceFaces};
use glam::{DAffine3, DVec3};
use kiln_geometry::hull::{Hull, hull};
use kiln_geometry::sphere_triangle::closest_point;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};

/// Least share of a fitted box, sphere or capsule a piece must fill to be
/// given to physics engines as that primitive (with the primitive's
/// bulge past the piece within what the bound leaves it, see [`filled`]).
/// Lower than the classifier's 98% for whole meshes: a piece has at most
/// [`MAX_PIECE_VERTICES`] corners and the plane cap's faces, and a ball of
/// 256 points fills 96% of its sphere. A wedge fills half its box, a
/// cylinder 79%: they stay hulls.
pub const PRIMITIVE_FILL: f64 = 0.9;

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
    /// The primitive that fills each piece, where one does (see
    /// [`filled`]), with its frame in the collider's space.
    pub primitives: Vec<Option<(Primitive, DAffine3)>>,
    /// The largest sampled concavity of any piece against the solid.
    pub concavity: f64,
    /// Solid cells the merging started from (authored pieces: their
    /// count).
    pub cells: usize,
    /// Whether the piece cap made merges past the bound.
    pub over_bound: bool,
    /// Whether the pieces are the file's own (a compound), not made here.
    pub authored: bool,
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
    /// More pieces than an archive holds.
    #[error("{0} pieces, over the {max} an archive holds", max = kiln_formats::level::MAX_PIECES)]
    TooMany(usize),
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
/// stale are never sampled. A candidate a merge makes is queued with an
/// estimate (the least key its new piece's parts had with the same
/// neighbour) and its hull is taken only when it comes out, then queued
/// again with its exact key when that is no longer the least: most go
/// stale before that, and their hulls are never taken.
struct Candidate {
    added: f64,
    a: usize,
    b: usize,
    exact: bool,
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
        self.part_of(hull(points)?, limit, from)
    }

    /// [`Judge::part`] of a hull already taken.
    fn part_of(&self, h: Hull, limit: f64, from: Option<(&Part, &Part)>) -> Option<Part> {
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

    /// The piece of a group of cells with corners `points` (each once):
    /// its hull judged whole (no face of it is known to lie on a judged
    /// piece), or `None` past `limit`.
    fn whole(&self, points: &[DVec3], limit: f64) -> Option<Part> {
        let h = hull(points)?;
        let faces: Vec<Vec<u32>> = h.faces.iter().map(|f| f.0.clone()).collect();
        let bulge = self.concavity(&h.vertices, &faces, limit)?;
        let mut part = self.part_of(h, limit, None)?;
        part.concavity = part.concavity.max(bulge);
        Some(part)
    }

    /// The farthest sampled point of the polytope's surface outside the
    /// solid from the object's surface (the judge's `near`: the render
    /// mesh, or the solid's own surface), or `None` past `limit`. Samples: a
    /// grid on each face's fan triangles spaced at half the bound, the
    /// coarse grid (corners, edge midpoints, centre) of every triangle
    /// first.
    fn concavity(&self, vertices: &[DVec3], faces: &[Vec<u32>], limit: f64) -> Option<f64> {
        self.sampled(vertices, faces, limit, false)
    }

    /// Whether the hull of `points` holds `limit` on the coarse grid of
    /// [`Judge::concavity`]'s samples (a quick test that can pass where the
    /// full one fails).
    fn rough(&self, points: &[DVec3], limit: f64) -> bool {
        hull(points).is_some_and(|h| {
            let faces: Vec<Vec<u32>> = h.faces.iter().map(|f| f.0.clone()).collect();
            self.sampled(&h.vertices, &faces, limit, true).is_some()
        })
    }

    /// [`Judge::concavity`], or with `coarse` on the coarse grid only.
    fn sampled(
        &self,
        vertices: &[DVec3],
        faces: &[Vec<u32>],
        limit: f64,
        coarse: bool,
    ) -> Option<f64> {
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
        if coarse {
            return Some(worst);
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

/// The pairs of cells (ascending) that share a face of positive area:
/// faces in one plane, facing opposite ways, whose loops overlap by more
/// than `eps`. Cells meeting only at an edge or a corner are not
/// neighbours (their merge could only be reached through a third).
fn face_neighbours(cells: &[&tree::SolidCell], eps: f64) -> Vec<(usize, usize)> {
    // faces by plane, in one orientation: exactly opposite (n, d) meet
    type Side = Vec<(usize, usize)>;
    let mut planes: HashMap<[u64; 4], (Side, Side)> = HashMap::new();
    for (c, cell) in cells.iter().enumerate() {
        for (f, (n, d, _)) in cell.faces.iter().enumerate() {
            let first = if n.x != 0.0 {
                n.x
            } else if n.y != 0.0 {
                n.y
            } else {
                n.z
            };
            let s = if first > 0.0 { 1.0 } else { -1.0 };
            // + 0.0 turns a negative zero into zero
            let key = [n.x * s + 0.0, n.y * s + 0.0, n.z * s + 0.0, d * s + 0.0].map(f64::to_bits);
            let e = planes.entry(key).or_default();
            if s > 0.0 { &mut e.0 } else { &mut e.1 }.push((c, f));
        }
    }
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (plus, minus) in planes.values() {
        for &(a, fa) in plus {
            for &(b, fb) in minus {
                let (n, _, la) = &cells[a].faces[fa];
                let lb = &cells[b].faces[fb].2;
                if a != b && loops_overlap(la, lb, *n, eps) {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Whether two convex loops in a plane with normal `n` overlap by more
/// than `eps` (no edge of either separates them: Gottschalk's separating
/// axes, in the plane).
fn loops_overlap(a: &[DVec3], b: &[DVec3], n: DVec3, eps: f64) -> bool {
    let u = n.any_orthonormal_vector();
    let w = n.cross(u);
    let flat = |l: &[DVec3]| -> Vec<glam::DVec2> {
        l.iter()
            .map(|p| glam::DVec2::new(p.dot(u), p.dot(w)))
            .collect()
    };
    let (pa, pb) = (flat(a), flat(b));
    for (p, q) in [(&pa, &pb), (&pb, &pa)] {
        let c = p.iter().copied().sum::<glam::DVec2>() / p.len().max(1) as f64;
        for i in 0..p.len() {
            let (e0, e1) = (p[i], p[(i + 1) % p.len()]);
            let d = e1 - e0;
            let mut m = glam::DVec2::new(d.y, -d.x);
            let len = m.length();
            if len <= 0.0 {
                continue;
            }
            m /= len;
            if m.dot(c - e0) > 0.0 {
                m = -m;
            }
            let off = m.dot(e0);
            if q.iter().all(|x| m.dot(*x) >= off - eps) {
                return false;
            }
        }
    }
    true
}

/// The convex pieces of the solid `bsp`. A hull's points outside the
/// solid are measured against `reference` (the render mesh the solid was
/// made from, in the same units) when given, else against the solid's
/// own surface: the pieces then bulge past the object itself by at most
/// the bound, wherever the solid stands off it.
pub fn decompose(
    bsp: &BuiltBsp,
    settings: &PieceSettings,
    reference: Option<&WeldedMesh>,
) -> Result<Decomposition, PiecesError> {
    decompose_in(bsp, settings, reference, true)
}

/// [`decompose`], with or without the regrouping ([`regroup`]; without
/// it only to test what it saves).
fn decompose_in(
    bsp: &BuiltBsp,
    settings: &PieceSettings,
    reference: Option<&WeldedMesh>,
    regrouped: bool,
) -> Result<Decomposition, PiecesError> {
    let near = match reference {
        Some(r) if !r.triangles.is_empty() => Nearest::new(&r.vertices, &r.triangles),
        _ => {
            let tris: Vec<[u32; 3]> = bsp
                .surface
                .leaves
                .iter()
                .flat_map(|l| {
                    let second = (l[3] != l[2]).then_some([l[2], l[1], l[3]]);
                    std::iter::once([l[0], l[1], l[2]]).chain(second)
                })
                .collect();
            Nearest::new(&bsp.surface.vertices, &tris)
        }
    };
    let bound = settings.concavity.max(0.0);
    let judge = Judge {
        bsp,
        near,
        max_planes: settings.max_planes.max(6),
        spacing: 0.5 * bound,
    };
    let cells = tree::solid_cells(bsp);
    // a cell is inside the solid: it is not judged
    let made: Vec<Option<Part>> = cells
        .par_iter()
        .map(|c| judge.part(&c.points, f64::INFINITY, None))
        .collect();
    let (cells, parts): (Vec<&tree::SolidCell>, Vec<Option<Part>>) =
        cells.iter().zip(made).filter(|(_, p)| p.is_some()).unzip();
    let n_cells = parts.len();
    if n_cells == 0 {
        return Err(PiecesError::Empty);
    }
    let size = parts
        .iter()
        .flatten()
        .fold(0.0f64, |m, p| m.max((p.hi - p.lo).max_element()));
    let eps = 1e-6 * size.max(1e-9);
    // neighbours: cells sharing a face (a merged piece has its parts')
    let mut neighbours: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n_cells];
    for (i, j) in face_neighbours(&cells, eps) {
        neighbours[i].insert(j);
        neighbours[j].insert(i);
    }
    let merged = |parts: Vec<Option<Part>>, neighbours: Vec<BTreeSet<usize>>| {
        merge(&judge, parts, neighbours, settings, bound.max(eps))
    };
    // groups of cut cells merged: each piece with its cells' indices
    let merged_groups = |cut: &[tree::SolidCell], groups: Vec<Group>| {
        let members: Vec<Vec<usize>> = groups.iter().map(|g| g.0.clone()).collect();
        let (parts, neighbours) = grouped(cut, groups, eps);
        let (merged, over) = merged(parts, neighbours);
        let pieces: Vec<Group> = merged
            .into_iter()
            .map(|(gs, p)| {
                (
                    gs.iter()
                        .flat_map(|&g| members[g].iter().copied())
                        .collect(),
                    p,
                )
            })
            .collect();
        (pieces, over)
    };
    let (pieces, mut over_bound) = merged(parts, neighbours);
    let worst = |p: &[Group]| p.iter().fold(0.0f64, |w, p| w.max(p.1.concavity));
    // the answer so far: its pieces, and their cells when cut (`None`:
    // the solid's cells)
    let mut best: (Vec<Group>, Option<Vec<tree::SolidCell>>) = (pieces, None);
    // where few pieces do, the top-down search over cuts too: the fewer
    // pieces (then the least concavity) win
    let searched = best.0.len() <= SEARCH_PIECES && n_cells <= SEARCH_CELLS && !over_bound;
    if searched {
        for search in [Search::Diagonals, Search::Axes] {
            // a search past twice the pieces of the best answer so far
            // stops: the merging after it has not halved its groups
            let most = 2 * best.0.len();
            let Some((cut, groups)) =
                split_down(&judge, &cells, (bound.max(eps), eps), search, most)
            else {
                continue;
            };
            let (other, over) = merged_groups(&cut, groups);
            if (other.len(), worst(&other)) < (best.0.len(), worst(&best.0)) && !over {
                best = (other, Some(cut));
            }
        }
        // then chains of three or four pieces cut again into fewer along
        // their length, while one is (and what that leaves merged)
        if best.0.len() >= 3 && regrouped {
            let cut: Vec<Cut> = match best.1.take() {
                Some(cut) => cut
                    .into_iter()
                    .map(|c| {
                        let v = cell_volume(&c);
                        (c, v)
                    })
                    .collect(),
                None => cells
                    .iter()
                    .map(|c| ((*c).clone(), cell_volume(c)))
                    .collect(),
            };
            // no piece bulging more than the answer's worst already does
            let limit = worst(&best.0).min(bound).max(eps);
            let (cut, pieces) = regroup(&judge, cut, std::mem::take(&mut best.0), (limit, eps));
            let (other, over) = merged_groups(&cut, pieces);
            over_bound |= over;
            best.0 = other;
        }
    }
    let kept: Vec<&Part> = best.0.iter().map(|p| &p.1).collect();
    // a piece the polytope builder caps grows by at most its reach
    // a piece that fills a box, sphere or capsule is given as it where
    // the primitive's bulge past the piece keeps it within the bound
    let made = kept
        .par_iter()
        .map(|p| {
            let pts: Vec<[f32; 3]> = p.points.iter().map(|v| v.as_vec3().to_array()).collect();
            let (poly, cap) =
                polytope::polytope(&pts, settings.max_planes).map_err(PiecesError::Polytope)?;
            let c = p.concavity + cap.map_or(0.0, |c| c.reach);
            Ok(match filled(&poly, bound - c) {
                Some((prim, frame, bulge)) => (poly, Some((prim, frame)), c + bulge),
                None => (poly, None, c),
            })
        })
        .collect::<Result<Vec<_>, PiecesError>>()?;
    let concavity = made.iter().fold(0.0f64, |m, p| m.max(p.2));
    let (pieces, primitives) = made.into_iter().map(|p| (p.0, p.1)).unzip();
    Ok(Decomposition {
        pieces,
        primitives,
        concavity,
        cells: n_cells,
        over_bound,
        authored: false,
    })
}

/// Pieces a file authors for the solid `bsp`: each as written where its
/// faces are given and hold together (see `exact`), else the hull of its
/// points capped at `max_planes` faces; with their concavity judged as
/// merged pieces are (sampled on every face at 1/64 of the solid's size; a
/// cap's reach counted), against `reference` (the render mesh).
pub fn authored(
    bsp: &BuiltBsp,
    pieces: &[AuthoredPiece],
    max_planes: usize,
    reference: &WeldedMesh,
) -> Result<Decomposition, PiecesError> {
    if pieces.is_empty() {
        return Err(PiecesError::Empty);
    }
    if pieces.len() > kiln_formats::level::MAX_PIECES {
        return Err(PiecesError::TooMany(pieces.len()));
    }
    let (lo, hi) = bounds(&bsp.surface.vertices);
    let size = (hi - lo).max_element();
    let judge = Judge {
        bsp,
        near: Nearest::new(&reference.vertices, &reference.triangles),
        max_planes: max_planes.max(6),
        spacing: (size / 64.0).max(f64::MIN_POSITIVE),
    };
    let made = pieces
        .par_iter()
        .map(|a| {
            let (poly, cap) = match exact(a, max_planes) {
                Some(p) => (p, None),
                None => polytope::polytope(&a.points, max_planes).map_err(PiecesError::Polytope)?,
            };
            if poly.vertices.len() > MAX_PIECE_VERTICES {
                return Err(PiecesError::Polytope(format!(
                    "{} corners, over {MAX_PIECE_VERTICES}",
                    poly.vertices.len()
                )));
            }
            let corners: Vec<DVec3> = poly
                .vertices
                .iter()
                .map(|v| DVec3::from(v.map(f64::from)))
                .collect();
            let bulge = judge
                .concavity(&corners, &poly.faces, f64::INFINITY)
                .unwrap_or(f64::INFINITY);
            let c = bulge + cap.map_or(0.0, |c| c.reach);
            // the file's primitive where it holds the whole piece, its
            // reach past the piece counted
            let prim = a
                .primitive
                .and_then(|(prim, frame)| Some((prim, frame, standing_out(&poly, prim, frame)?)));
            Ok(match prim {
                Some((prim, frame, out)) => (poly, Some((prim, frame)), c + out),
                None => (poly, None, c),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let concavity = made.iter().fold(0.0f64, |m, p| m.max(p.2));
    let (pieces, primitives): (Vec<_>, Vec<_>) = made.into_iter().map(|p| (p.0, p.1)).unzip();
    Ok(Decomposition {
        cells: pieces.len(),
        pieces,
        primitives,
        concavity,
        over_bound: false,
        authored: true,
    })
}

/// An authored piece as written: its faces' unit normals and loops over
/// its points, when they hold together — at most `max_planes` (and the
/// archive's) faces and at most [`MAX_PIECE_VERTICES`] points, finite,
/// every loop of three or more points in range and on its plane (the
/// plane's offset is its farthest point, as the polytope builder sets it,
/// so every point is on or behind every plane). `None`: take the hull.
fn exact(a: &AuthoredPiece, max_planes: usize) -> Option<BuiltPolytope> {
    let PieceFaces { normals, loops } = a.faces.as_ref()?;
    let cap = max_planes.min(kiln_formats::polytope::MAX_PLANES);
    let n = a.points.len();
    if normals.len() != loops.len()
        || !(4..=cap).contains(&normals.len())
        || !(4..=MAX_PIECE_VERTICES).contains(&n)
    {
        return None;
    }
    let pts: Vec<DVec3> = a
        .points
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    if pts.iter().any(|p| !p.is_finite()) {
        return None;
    }
    let size = pts.iter().fold(1.0f64, |m, p| m.max(p.abs().max_element()));
    let tol = f64::from(kiln_formats::polytope::PLANE_TOLERANCE) * size;
    let mut planes = Vec::with_capacity(normals.len());
    for (nv, lp) in normals.iter().zip(loops) {
        let nm = DVec3::from(*nv);
        if !nm.is_finite() || (nm.length() - 1.0).abs() > 1e-4 || lp.len() < 3 {
            return None;
        }
        let d = pts
            .iter()
            .map(|p| nm.dot(*p))
            .fold(f64::NEG_INFINITY, f64::max);
        if lp
            .iter()
            .any(|&i| (i as usize) >= n || nm.dot(pts[i as usize]) < d - tol)
        {
            return None;
        }
        planes.push((nm, d));
    }
    Some(BuiltPolytope {
        planes,
        vertices: a.points.clone(),
        faces: loops.clone(),
    })
}

/// The convex pieces of a built collider: a BSP solid's merged cells; a
/// polytope is its own one piece. `reference` as for [`decompose`]. A triangle mesh or a primitive has none
/// here (`None`): a mesh bounds no solid, a primitive is already convex.
pub fn of_collider(
    collider: &BuiltCollider,
    settings: &PieceSettings,
    reference: Option<&WeldedMesh>,
) -> Option<Result<Decomposition, PiecesError>> {
    match collider {
        BuiltCollider::Bsp(b) => Some(decompose(b, settings, reference)),
        BuiltCollider::Polytope(p) => Some(Ok(Decomposition {
            pieces: vec![p.clone()],
            primitives: vec![None],
            concavity: 0.0,
            cells: 1,
            over_bound: false,
            authored: false,
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
            let (lo, hi) = bounds(&p.vertices);
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

/// The box, sphere or capsule a piece fills — the simplest fitted one
/// within half a percent of the best fill, filled to at least
/// [`PRIMITIVE_FILL`] — with its frame and how far its surface lies
/// outside the piece, when that is within `budget` (what the bound leaves
/// the piece: the primitive then bulges past the object no more than the
/// bound allows, and holds all of the piece). A box's farthest point from the piece is one of its corners
/// (the distance to a convex body is convex); a sphere's or capsule's is
/// sampled (a ring every 7.5° of latitude, a point every 7.5° of
/// longitude).
pub fn filled(poly: &BuiltPolytope, budget: f64) -> Option<(Primitive, DAffine3, f64)> {
    let pts: Vec<DVec3> = poly
        .vertices
        .iter()
        .map(|v| DVec3::from(v.map(f64::from)))
        .collect();
    let h = hull(&pts)?;
    let volume = h.volume();
    let fitting = Fitting::new(&poly.vertices, Some(h.clone()))?;
    let (kind, fill) = fitting.best_fill(volume)?;
    if fill < PRIMITIVE_FILL {
        return None;
    }
    let (prim, frame, _) = fitting.fit(kind)?;
    let (lo, hi) = bounds(&poly.vertices);
    let slack = 1e-6 * (hi - lo).max_element().max(1e-9);
    let bulge = bulge(&h, prim, frame);
    (bulge <= budget.max(0.0) + slack).then_some((prim, frame, bulge))
}

/// How far the surface of `prim` (placed by `frame`) lies outside the
/// hull `h`, at most (sampled as [`filled`] says).
fn bulge(h: &Hull, prim: Primitive, frame: DAffine3) -> f64 {
    surface_points(prim)
        .into_iter()
        .map(|p| polytope::distance_to_hull(h, frame.transform_point3(p)))
        .fold(0.0f64, f64::max)
}

/// How far an authored primitive's surface lies outside the piece it
/// stands in for, or `None` when it does not hold every corner of the
/// piece (within a millionth of its size) or is not a rigid placement.
fn standing_out(poly: &BuiltPolytope, prim: Primitive, frame: DAffine3) -> Option<f64> {
    let rigid = crate::geom::fit::is_rigid(&frame.matrix3, 1e-6);
    let (lo, hi) = bounds(&poly.vertices);
    let slack = 1e-6 * (hi - lo).max_element().max(1e-9);
    let to_local = frame.inverse();
    let holds = poly.vertices.iter().all(|v| {
        let q = to_local.transform_point3(DVec3::from(v.map(f64::from)));
        let out = match prim {
            Primitive::Cuboid(h) => (q.abs() - DVec3::from(h.map(f64::from))).max_element(),
            Primitive::Sphere(r) => q.length() - f64::from(r),
            Primitive::Capsule(hh, r) => {
                let y = (q.y.abs() - f64::from(hh)).max(0.0);
                DVec3::new(q.x, y, q.z).length() - f64::from(r)
            }
        };
        out <= slack
    });
    let pts: Vec<DVec3> = poly
        .vertices
        .iter()
        .map(|v| DVec3::from(v.map(f64::from)))
        .collect();
    (rigid && holds).then(|| hull(&pts).map(|h| bulge(&h, prim, frame)))?
}

/// Points of a primitive's surface in its own frame: a box's corners; a
/// sphere's or capsule's rings every 7.5° of latitude (each hemisphere
/// moved to its end of a capsule's segment), a point every 7.5° along
/// each.
fn surface_points(prim: Primitive) -> Vec<DVec3> {
    let (hh, r) = match prim {
        Primitive::Cuboid(h) => {
            return (0..8)
                .map(|i| DVec3::from(kiln_formats::primitive::Cuboid::corner(h, i).map(f64::from)))
                .collect();
        }
        Primitive::Sphere(r) => (0.0, f64::from(r)),
        Primitive::Capsule(hh, r) => (f64::from(hh), f64::from(r)),
    };
    const STEPS: usize = 24; // per quarter turn: 7.5°
    let mut out = Vec::new();
    for i in 0..=2 * STEPS {
        let lat = std::f64::consts::PI * (i as f64 / (2 * STEPS) as f64 - 0.5);
        let y = r * lat.sin();
        let ring = r * lat.cos();
        let shift = if lat > 0.0 {
            hh
        } else if lat < 0.0 {
            -hh
        } else {
            0.0
        };
        for j in 0..4 * STEPS {
            let lon = std::f64::consts::TAU * j as f64 / (4 * STEPS) as f64;
            let p = DVec3::new(ring * lon.cos(), 0.0, ring * lon.sin());
            // the equator on both ends of the segment
            if lat == 0.0 {
                out.push(p + DVec3::Y * hh);
                out.push(p - DVec3::Y * hh);
            } else {
                out.push(p + DVec3::Y * (y + shift));
            }
        }
    }
    out
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
                exact: true,
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

    #[test]
    fn written_faces_are_taken_when_they_hold_together_else_the_hull() {
        let (poly, _) = polytope::polytope(
            &(0..8)
                .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32])
                .collect::<Vec<_>>(),
            64,
        )
        .unwrap();
        let written = |normals: Vec<[f64; 3]>, loops: Vec<Vec<u32>>| AuthoredPiece {
            points: poly.vertices.clone(),
            faces: Some(PieceFaces { normals, loops }),
            primitive: None,
        };
        let normals: Vec<[f64; 3]> = poly.planes.iter().map(|(n, _)| n.to_array()).collect();
        let got = exact(&written(normals.clone(), poly.faces.clone()), 64).unwrap();
        assert_eq!(got.faces, poly.faces);
        assert_eq!(got.vertices, poly.vertices);
        for ((n0, d0), (n1, d1)) in got.planes.iter().zip(&poly.planes) {
            assert!((*n0 - *n1).length() < 1e-12 && (d0 - d1).abs() < 1e-9);
        }
        // over the plane cap, a loop off its plane, an index out of range,
        // a normal not of unit length, counts that disagree: the hull
        assert!(exact(&written(normals.clone(), poly.faces.clone()), 5).is_none());
        let mut off = poly.faces.clone();
        off[0] = poly.faces[1].clone();
        assert!(exact(&written(normals.clone(), off), 64).is_none());
        let mut far = poly.faces.clone();
        far[2][0] = 99;
        assert!(exact(&written(normals.clone(), far), 64).is_none());
        let mut long = normals.clone();
        long[3] = [2.0, 0.0, 0.0];
        assert!(exact(&written(long, poly.faces.clone()), 64).is_none());
        assert!(exact(&written(normals[1..].to_vec(), poly.faces.clone()), 64).is_none());
        let plain = AuthoredPiece {
            points: poly.vertices.clone(),
            faces: None,
            primitive: None,
        };
        assert!(exact(&plain, 64).is_none());
    }

    fn poly(points: &[[f32; 3]]) -> BuiltPolytope {
        polytope::polytope(points, 256).expect("a polytope").0
    }

    #[test]
    fn a_piece_that_fills_a_box_or_sphere_is_given_as_one_within_its_budget() {
        let cube: Vec<[f32; 3]> = (0..8)
            .map(|i| {
                [
                    (i & 1) as f32,
                    ((i >> 1) & 1) as f32 * 2.0,
                    ((i >> 2) & 1) as f32,
                ]
            })
            .collect();
        let (prim, frame, bulge) = filled(&poly(&cube), 0.0).expect("a box");
        assert_eq!(prim, Primitive::Cuboid([0.5, 1.0, 0.5]), "{prim:?}");
        assert!(frame.translation.distance(DVec3::new(0.5, 1.0, 0.5)) < 1e-6);
        assert!(bulge < 1e-6, "{bulge}");
        // a corner cut off by 0.1 along each edge: 99.9% of the box, whose
        // corner stands 0.1/√3 off the cut
        let mut cut: Vec<[f32; 3]> = cube[1..].to_vec();
        cut.extend([[0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]]);
        let p = poly(&cut);
        assert!(filled(&p, 0.05).is_none());
        let (prim, _, bulge) = filled(&p, 0.06).expect("a box");
        assert!(matches!(prim, Primitive::Cuboid(_)), "{prim:?}");
        assert!((bulge - 0.1 / 3f64.sqrt()).abs() < 1e-4, "{bulge}");
        // a tetrahedron fills a sixth of its box: its hull
        let tet = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ];
        assert!(filled(&poly(&tet), 1.0).is_none());
        // a fine ball of points: a sphere whose surface stands off the
        // facets by the sampled bulge
        let n = 250;
        let ball: Vec<[f32; 3]> = (0..n)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
                let r = (1.0 - y * y).sqrt();
                let a = i as f64 * std::f64::consts::PI * (3.0 - 5f64.sqrt());
                [(r * a.cos()) as f32, y as f32, (r * a.sin()) as f32]
            })
            .collect();
        let p = poly(&ball);
        let (prim, frame, bulge) = filled(&p, 0.2).expect("a sphere");
        let Primitive::Sphere(r) = prim else {
            panic!("{prim:?}")
        };
        assert!(
            (r - 1.0).abs() < 0.01 && frame.translation.length() < 0.01,
            "{r}"
        );
        assert!(bulge > 0.0 && bulge < 0.05, "{bulge}");
        assert!(filled(&p, 0.5 * bulge).is_none());
    }

    fn settings(concavity: f64) -> PieceSettings {
        PieceSettings {
            concavity,
            max_pieces: 64,
            max_planes: 64,
        }
    }

    #[test]
    fn three_or_four_pieces_of_a_ring_are_cut_again_into_fewer() {
        // a torus (ring radius 1, tube 0.25, 32 × 12 quads): the merging and
        // the search leave ring segments that stop short of the bound; cut
        // again along the ring, chains of them become fewer pieces that
        // bulge no more than the worst already did
        let (r, t, n, m) = (1.0f64, 0.25f64, 32usize, 12usize);
        let at = |i: usize, j: usize| ((i % n) * m + j % m) as u32;
        let v: Vec<[f32; 3]> = (0..n)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .map(|(i, j)| {
                let (u, v) = (
                    i as f64 / n as f64 * std::f64::consts::TAU,
                    j as f64 / m as f64 * std::f64::consts::TAU,
                );
                [
                    ((r + t * v.cos()) * u.cos()) as f32,
                    (t * v.sin()) as f32,
                    ((r + t * v.cos()) * u.sin()) as f32,
                ]
            })
            .collect();
        let tris: Vec<[u32; 3]> = (0..n)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .flat_map(|(i, j)| {
                let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
                [[a, c, b], [a, d, c]]
            })
            .collect();
        let bsp = build(&v, &tris, BspOptions::default()).expect("a closed torus");
        let s = settings(0.05);
        let once = decompose_in(&bsp, &s, None, false).unwrap();
        let again = decompose_in(&bsp, &s, None, true).unwrap();
        assert!(
            again.pieces.len() < once.pieces.len(),
            "{} pieces, {} before",
            again.pieces.len(),
            once.pieces.len()
        );
        assert!(!again.over_bound && again.concavity <= once.concavity + 1e-9);
        // the pieces still fill the ring: their volumes add up to the
        // solid's (they meet only on their faces)
        let volume = |d: &Decomposition| {
            d.pieces
                .iter()
                .map(|p| {
                    let pts: Vec<DVec3> = p
                        .vertices
                        .iter()
                        .map(|v| DVec3::from(v.map(f64::from)))
                        .collect();
                    hull(&pts).map_or(0.0, |h| h.volume())
                })
                .sum::<f64>()
        };
        let ring = std::f64::consts::TAU * r * std::f64::consts::PI * t * t;
        assert!(
            (volume(&again) - volume(&once)).abs() < 0.02 * ring,
            "{} {}",
            volume(&again),
            volume(&once)
        );
    }

    #[test]
    fn a_looser_bound_merges_across_the_inside_corner() {
        // the L's hull bulges half a cell over its inside corner: within
        // a bound of 0.6 one piece does
        let l = vec![[0, 0, 0], [1, 0, 0], [0, 1, 0]];
        let d = decompose(&cells_bsp(&l), &settings(0.6), None).unwrap();
        assert_eq!(d.pieces.len(), 1, "{d:?}");
        assert!(d.concavity > 0.45 && d.concavity <= 0.6, "{d:?}");
    }

    #[test]
    fn the_piece_cap_merges_past_the_bound_and_says_so() {
        let u = vec![[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]];
        let mut s = settings(0.05);
        s.max_pieces = 2;
        let d = decompose(&cells_bsp(&u), &s, None).unwrap();
        assert_eq!(d.pieces.len(), 2, "{d:?}");
        assert!(d.over_bound && d.concavity > 0.05, "{d:?}");
    }
}

/// Most pieces the bottom-up merging may leave for the top-down search to
/// be tried too (its cost grows with the pieces and the cells).
const SEARCH_PIECES: usize = 32;
/// Most cells a solid may have for the top-down search.
const SEARCH_CELLS: usize = 1024;
/// Most cells the top-down search may cut a solid into, and most cuts it
/// may make, before it gives up.
const SEARCH_CUT_CELLS: usize = 4 * SEARCH_CELLS;
/// See [`SEARCH_CUT_CELLS`].
const SEARCH_CUTS: usize = 4 * SEARCH_PIECES;
/// Offsets tried along each cutting direction: planes at the eighths of
/// a piece's extent along it (1/8 to 7/8).
const CUT_STEPS: usize = 8;

/// The cutting planes the top-down search tries, and how it scores a cut.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Search {
    /// The three axes and the six face diagonals; a cut scored by the
    /// larger of its two sides' waste (hull volume past the solid's).
    Diagonals,
    /// The three axes; a cut scored by the two sides' waste together.
    Axes,
}

/// A cell while cutting: the cell and its volume.
type Cut = (tree::SolidCell, f64);

/// A group the top-down search keeps: its cells' indices and its piece.
type Group = (Vec<usize>, Part);

/// The top-down search over cuts (after CoACD's, Wei et al. 2022, with
/// the solid's cells standing in for its mesh: cutting convex cells by a
/// plane is exact and needs no capping): the cells, while a connected
/// group's hull bulges past the bound, cut by the candidate plane that
/// wastes least (see [`Search`]), each side split into its connected
/// groups. Returns the cut cells and the groups (their cells' indices and
/// piece), or `None` past [`SEARCH_CUT_CELLS`], [`SEARCH_CUTS`] or
/// `most_groups` groups. Deterministic:
/// candidates are scored in parallel, chosen in order.
fn split_down(
    judge: &Judge,
    cells: &[&tree::SolidCell],
    (bound, eps): (f64, f64),
    search: Search,
    most_groups: usize,
) -> Option<(Vec<tree::SolidCell>, Vec<Group>)> {
    let r = std::f64::consts::FRAC_1_SQRT_2;
    let mut dirs = vec![DVec3::X, DVec3::Y, DVec3::Z];
    if search == Search::Diagonals {
        dirs.extend([
            DVec3::new(r, r, 0.0),
            DVec3::new(r, -r, 0.0),
            DVec3::new(r, 0.0, r),
            DVec3::new(r, 0.0, -r),
            DVec3::new(0.0, r, r),
            DVec3::new(0.0, r, -r),
        ]);
    }
    let all: Vec<Cut> = cells
        .iter()
        .map(|c| ((*c).clone(), cell_volume(c)))
        .collect();
    let mut stack: Vec<Vec<Cut>> = components(all, eps);
    let (mut cuts, mut kept) = (0, 0);
    let (mut out, mut groups) = (Vec::new(), Vec::new());
    let mut keep = |g: Vec<Cut>, part: Part, out: &mut Vec<tree::SolidCell>| {
        let start = out.len();
        out.extend(g.into_iter().map(|c| c.0));
        groups.push(((start..out.len()).collect(), part));
    };
    while let Some(g) = stack.pop() {
        let mut pts: Vec<DVec3> = g.iter().flat_map(|c| c.0.points.iter().copied()).collect();
        distinct(&mut pts);
        let within = judge.whole(&pts, bound);
        // a single cell is convex: a piece whatever its capped hull
        // bulges (as it starts the merging)
        let within = match within {
            None if g.len() == 1 => judge.part(&g[0].0.points, f64::INFINITY, None),
            w => w,
        };
        if let Some(part) = within {
            keep(g, part, &mut out);
            kept += 1;
            if kept > most_groups {
                return None;
            }
            continue;
        }
        // past its budget the search gives up (the merging's pieces stand)
        cuts += 1;
        if cuts > SEARCH_CUTS
            || out.len() + g.len() + stack.iter().map(Vec::len).sum::<usize>() > SEARCH_CUT_CELLS
        {
            return None;
        }
        let planes: Vec<(DVec3, f64)> = dirs
            .iter()
            .flat_map(|&n| {
                let (lo, hi) = pts
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                        (a.min(n.dot(*p)), b.max(n.dot(*p)))
                    });
                (1..CUT_STEPS).map(move |k| (n, lo + (hi - lo) * k as f64 / CUT_STEPS as f64))
            })
            .collect();
        // scored without copying a cell: the sides' points and volumes
        // only (a cell the plane crosses is cut for them)
        let scored: Vec<Option<f64>> = planes
            .par_iter()
            .map(|&(n, d)| {
                // per side: points, volume, cells
                let mut sides: [(Vec<DVec3>, f64, usize); 2] = Default::default();
                split_group(&g, (n, d), eps, |front, c| {
                    let s = &mut sides[usize::from(!front)];
                    let (cell, v) = c.cell();
                    s.0.extend_from_slice(&cell.points);
                    s.1 += v;
                    s.2 += 1;
                });
                if sides.iter().any(|s| s.2 == 0) {
                    return None;
                }
                let [wf, wb] = sides
                    .each_mut()
                    .map(|s| hull(distinct(&mut s.0)).map_or(0.0, |h| h.volume()) - s.1);
                Some(match search {
                    Search::Diagonals => wf.max(wb),
                    Search::Axes => wf + wb,
                })
            })
            .collect();
        let mut best: Option<(f64, usize)> = None;
        for (k, s) in scored.into_iter().enumerate() {
            if let Some(s) = s
                && best.is_none_or(|b| s < b.0)
            {
                best = Some((s, k));
            }
        }
        let cut = best.map(|(_, k)| {
            let (n, d) = planes[k];
            let (mut front, mut back) = (Vec::new(), Vec::new());
            split_group(&g, (n, d), eps, |f, c| {
                if f {
                    front.push(c.owned())
                } else {
                    back.push(c.owned())
                }
            });
            (front, back)
        });
        match cut {
            Some((front, back)) => {
                stack.extend(components(front, eps));
                stack.extend(components(back, eps));
            }
            // nothing cuts it: each cell a piece of its own
            None => {
                for c in g {
                    if let Some(part) = judge.part(&c.0.points, f64::INFINITY, None) {
                        keep(vec![c], part, &mut out);
                    }
                }
            }
        }
    }
    Some((out, groups))
}

/// Rounds of [`regroup`] at most.
const REGROUP_ROUNDS: usize = 16;
/// Most chains of pieces [`regroup`] judges in a round.
const REGROUP_CHAINS: usize = 256;

/// Fewer pieces by cutting again: a chain of three or four neighbouring
/// pieces whose cells [`reslice`] cuts into fewer slabs, each one
/// connected group within `bound`, becomes those slabs. Each round judges
/// every chain not judged before with the same pieces (in parallel), then
/// takes the successes on distinct pieces, the most pieces saved first
/// (then the first chain). Returns the cells (the ones cut added, the ones
/// no piece holds dropped) and the pieces (their cells' indices and
/// piece).
fn regroup(
    judge: &Judge,
    mut cells: Vec<Cut>,
    mut pieces: Vec<Group>,
    (bound, eps): (f64, f64),
) -> (Vec<tree::SolidCell>, Vec<Group>) {
    // each piece's lasting id, and the chains (of ids) that did not
    // reslice: their cells are the same next round
    let mut ids: Vec<usize> = (0..pieces.len()).collect();
    let mut failed: HashSet<Vec<usize>> = HashSet::new();
    for _ in 0..REGROUP_ROUNDS {
        let mut piece_of = vec![usize::MAX; cells.len()];
        for (k, (m, _)) in pieces.iter().enumerate() {
            for &c in m {
                piece_of[c] = k;
            }
        }
        let live: Vec<usize> = (0..cells.len())
            .filter(|&c| piece_of[c] != usize::MAX)
            .collect();
        let refs: Vec<&tree::SolidCell> = live.iter().map(|&c| &cells[c].0).collect();
        let mut nb = vec![BTreeSet::new(); pieces.len()];
        for (i, j) in face_neighbours(&refs, eps) {
            let (a, b) = (piece_of[live[i]], piece_of[live[j]]);
            if a != b {
                nb[a].insert(b);
                nb[b].insert(a);
            }
        }
        // paths of three and four pieces, each set once
        let mut chains: Vec<Vec<usize>> = Vec::new();
        for (b, nbs) in nb.iter().enumerate() {
            for &a in nbs {
                for &c in nbs.range(a + 1..) {
                    chains.push(vec![a, b, c]);
                }
                for &c in nbs {
                    if c == a {
                        continue;
                    }
                    for &d in nb[c].iter().filter(|&&d| d != a && d != b) {
                        if (a, b) < (d, c) {
                            chains.push(vec![a, b, c, d]);
                        }
                    }
                }
            }
        }
        for c in chains.iter_mut() {
            c.sort_unstable();
        }
        chains.sort_unstable();
        chains.dedup();
        let key = |c: &[usize]| -> Vec<usize> {
            let mut k: Vec<usize> = c.iter().map(|&p| ids[p]).collect();
            k.sort_unstable();
            k
        };
        chains.retain(|c| !failed.contains(&key(c)));
        chains.truncate(REGROUP_CHAINS);
        let mut judged: Vec<Option<(Vec<Group>, Vec<Cut>)>> = chains
            .par_iter()
            .map(|t| {
                let g: Vec<Cut> = t
                    .iter()
                    .flat_map(|&k| pieces[k].0.iter().map(|&c| cells[c].clone()))
                    .collect();
                reslice(judge, g, t.len(), (bound, eps))
            })
            .collect();
        for (c, j) in chains.iter().zip(&judged) {
            if j.is_none() {
                failed.insert(key(c));
            }
        }
        // the most pieces saved first, then the first chain
        let mut order: Vec<usize> = (0..chains.len()).filter(|&i| judged[i].is_some()).collect();
        order.sort_by_key(|&i| {
            let saved = chains[i].len() - judged[i].as_ref().map_or(chains[i].len(), |j| j.0.len());
            (std::cmp::Reverse(saved), i)
        });
        let mut used = vec![false; pieces.len()];
        let mut made: Vec<Group> = Vec::new();
        for i in order {
            if chains[i].iter().any(|&k| used[k]) {
                continue;
            }
            let Some((sides, cut)) = judged[i].take() else {
                continue;
            };
            for &k in &chains[i] {
                used[k] = true;
            }
            let start = cells.len();
            cells.extend(cut);
            for (members, part) in sides {
                made.push((members.into_iter().map(|m| start + m).collect(), part));
            }
        }
        if made.is_empty() {
            break;
        }
        let next = ids.iter().max().map_or(0, |m| m + 1);
        ids = ids
            .into_iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(i, _)| i)
            .chain(next..next + made.len())
            .collect();
        pieces = pieces
            .into_iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(p, _)| p)
            .chain(made)
            .collect();
    }
    // the cells the pieces hold, in the pieces' order
    let mut out = Vec::new();
    let mut cells: Vec<Option<Cut>> = cells.into_iter().map(Some).collect();
    let groups = pieces
        .into_iter()
        .map(|(members, part)| {
            let start = out.len();
            out.extend(
                members
                    .into_iter()
                    .filter_map(|m| cells[m].take().map(|c| c.0)),
            );
            ((start..out.len()).collect(), part)
        })
        .collect();
    (out, groups)
}

/// Steps of the search for each slab's far plane in [`reslice`].
const SLAB_STEPS: usize = 6;

/// The cells `g` of `k` neighbouring pieces cut again into fewer slabs
/// across their principal axis, if that holds: from the low end, each
/// slab as long as it stays one connected group within `bound` (its far
/// plane found by bisection: greedy covering, which is optimal along a
/// line where a shorter slab holds whenever a longer one does). Returns
/// the slabs (their indices into the cut cells, and piece) and the cut
/// cells, or `None` when it takes `k` slabs or more.
fn reslice(
    judge: &Judge,
    g: Vec<Cut>,
    k: usize,
    (bound, eps): (f64, f64),
) -> Option<(Vec<Group>, Vec<Cut>)> {
    let centres = g.iter().map(|c| {
        let n = c.0.points.len().max(1) as f64;
        (c.0.points.iter().copied().sum::<DVec3>() / n, c.1)
    });
    let (axes, spread) = principal_axes(centres)?;
    let n = axes[0];
    // slabs only across a chain at least k − 1 times as long as it is
    // wide (spread along its principal axes): each slab then no thinner
    // than the chain is wide, where a rounder chain's slabs would be flat
    // and bulge
    if spread[0] < ((k - 1) as f64).powi(2) * spread[1] {
        return None;
    }
    let hi = g
        .iter()
        .flat_map(|c| c.0.points.iter())
        .fold(f64::NEG_INFINITY, |m, p| m.max(n.dot(*p)));
    // the cells behind the plane `n·x = d`, and those in front when asked
    let behind = |cells: &[Cut], d: f64, front_too: bool| {
        let (mut front, mut back) = (Vec::new(), Vec::new());
        split_group(cells, (n, d), eps, |f, c| match f {
            false => back.push(c.owned()),
            true if front_too => front.push(c.owned()),
            true => {}
        });
        (back, front)
    };
    let corners = |cells: &[Cut]| {
        let mut pts: Vec<DVec3> = cells
            .iter()
            .flat_map(|c| c.0.points.iter().copied())
            .collect();
        distinct(&mut pts);
        pts
    };
    // the slab behind `d` as one connected piece within the bound, and the
    // rest
    let slab = |cells: &[Cut], d: f64| -> Option<(Vec<Cut>, Part, Vec<Cut>)> {
        let (back, front) = behind(cells, d, true);
        let mut parts = components(back, eps);
        if parts.len() != 1 {
            return None;
        }
        let back = parts.pop()?;
        let part = judge.whole(&corners(&back), bound)?;
        Some((back, part, front))
    };
    // its quick test: the coarse samples of its hull (first: cheaper than
    // the connection) within the bound, and one connected group
    let rough = |cells: &[Cut], d: f64| -> bool {
        let (back, _) = behind(cells, d, false);
        judge.rough(&corners(&back), bound) && components(back, eps).len() == 1
    };
    let (mut rest, mut out, mut groups) = (g, Vec::new(), Vec::new());
    while !rest.is_empty() {
        if groups.len() + 1 >= k {
            return None;
        }
        let lo = rest
            .iter()
            .flat_map(|c| c.0.points.iter())
            .fold(f64::INFINITY, |m, p| m.min(n.dot(*p)));
        // the whole rest (not all k pieces: they did not merge), else the
        // longest slab found
        let whole = if groups.is_empty() {
            None
        } else {
            slab(&rest, hi + eps)
        };
        let (back, part, front) = match whole {
            Some(s) => s,
            None => {
                // bisection on the coarse test, then the full one at the
                // slab found, stepping back while it fails
                let (mut a, mut b) = (lo, hi);
                for _ in 0..SLAB_STEPS {
                    let d = 0.5 * (a + b);
                    if rough(&rest, d) {
                        a = d;
                    } else {
                        b = d;
                    }
                }
                let mut found = None;
                for _ in 0..SLAB_STEPS {
                    if a <= lo {
                        break;
                    }
                    if let Some(s) = slab(&rest, a) {
                        found = Some(s);
                        break;
                    }
                    a = lo + 0.75 * (a - lo);
                }
                found?
            }
        };
        let start = out.len();
        out.extend(back);
        groups.push(((start..out.len()).collect(), part));
        rest = front;
    }
    Some((groups, out))
}

/// A convex cell's volume: pyramids from its centre over its faces.
fn cell_volume(c: &tree::SolidCell) -> f64 {
    let centre = c.points.iter().copied().sum::<DVec3>() / c.points.len().max(1) as f64;
    c.faces
        .iter()
        .map(|(_, _, l)| {
            let a = l[1..]
                .windows(2)
                .map(|w| (w[0] - l[0]).cross(w[1] - l[0]))
                .sum::<DVec3>();
            let len = a.length();
            if len <= 0.0 {
                return 0.0;
            }
            (a / len).dot(l[0] - centre).abs() * len / 6.0
        })
        .sum()
}

/// A cell on one side of a cutting plane: a whole cell of the group, or
/// the part of one the plane crosses.
enum Sided<'a> {
    Whole(&'a Cut),
    Part(Cut),
}

impl Sided<'_> {
    fn cell(&self) -> &Cut {
        match self {
            Sided::Whole(c) => c,
            Sided::Part(c) => c,
        }
    }

    fn owned(self) -> Cut {
        match self {
            Sided::Whole(c) => c.clone(),
            Sided::Part(c) => c,
        }
    }
}

/// Hands each cell of `g` to `take` with its side of the plane `n·p = d`
/// (true: in front), cutting the cells the plane crosses by more than
/// `eps`.
fn split_group<'a>(
    g: &'a [Cut],
    (n, d): (DVec3, f64),
    eps: f64,
    mut take: impl FnMut(bool, Sided<'a>),
) {
    for c in g {
        let (lo, hi) =
            c.0.points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(n.dot(*p) - d), b.max(n.dot(*p) - d))
                });
        if lo >= -eps {
            take(true, Sided::Whole(c));
        } else if hi <= eps {
            take(false, Sided::Whole(c));
        } else {
            let [f, b] = tree::cut_cell(&c.0, n, d, eps);
            for (side, part) in [(true, f), (false, b)] {
                if let Some(x) = part {
                    let v = cell_volume(&x);
                    take(side, Sided::Part((x, v)));
                }
            }
        }
    }
}

/// `points` with each position once (cells share their corners), in a
/// fixed order.
fn distinct(points: &mut Vec<DVec3>) -> &[DVec3] {
    let key = |p: &DVec3| p.to_array().map(|x| (x + 0.0).to_bits());
    points.sort_unstable_by_key(key);
    points.dedup_by_key(|p| key(p));
    points
}

/// The groups of cut cells as pieces to merge: each group's piece, and
/// the groups whose cells share a face as neighbours.
fn grouped(
    cells: &[tree::SolidCell],
    groups: Vec<Group>,
    eps: f64,
) -> (Vec<Option<Part>>, Vec<BTreeSet<usize>>) {
    let refs: Vec<&tree::SolidCell> = cells.iter().collect();
    let mut group_of = vec![0usize; cells.len()];
    let mut parts = Vec::with_capacity(groups.len());
    for (g, (members, part)) in groups.into_iter().enumerate() {
        for m in members {
            group_of[m] = g;
        }
        parts.push(Some(part));
    }
    let mut neighbours = vec![BTreeSet::new(); parts.len()];
    for (i, j) in face_neighbours(&refs, eps) {
        let (a, b) = (group_of[i], group_of[j]);
        if a != b {
            neighbours[a].insert(b);
            neighbours[b].insert(a);
        }
    }
    (parts, neighbours)
}

/// The connected groups of `cells` (cells sharing a face of positive
/// area), in the order of their first cells.
fn components(cells: Vec<Cut>, eps: f64) -> Vec<Vec<Cut>> {
    let refs: Vec<&tree::SolidCell> = cells.iter().map(|c| &c.0).collect();
    let mut root: Vec<usize> = (0..cells.len()).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    for (a, b) in face_neighbours(&refs, eps) {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        if ra != rb {
            root[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<Cut>> = Default::default();
    for (i, c) in cells.into_iter().enumerate() {
        let r = find(&mut root, i);
        groups.entry(r).or_default().push(c);
    }
    groups.into_values().collect()
}

/// The bottom-up merging: neighbouring pieces merged, the one adding the
/// least volume first, while the hull stays within `bound` (then past it
/// while over the piece cap). The pieces left, each with the indices of
/// the parts it was merged from, and whether the cap made merges past
/// the bound.
fn merge(
    judge: &Judge,
    mut parts: Vec<Option<Part>>,
    mut neighbours: Vec<BTreeSet<usize>>,
    settings: &PieceSettings,
    bound: f64,
) -> (Vec<Group>, bool) {
    let mut members: Vec<Vec<usize>> = (0..parts.len()).map(|i| vec![i]).collect();
    let mut alive = parts.iter().flatten().count();
    let mut limit = bound;
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
        let first = candidates(&parts, &pairs);
        // the last exact key of each pair, for the estimates
        let mut known: HashMap<(usize, usize), f64> =
            first.iter().map(|c| ((c.a, c.b), c.added)).collect();
        let mut heap: BinaryHeap<Candidate> = first.into_iter().collect();
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
            // an estimate whose exact key is no longer the least goes back
            let next = heap.peek().map_or(f64::INFINITY, |c| c.added);
            let judged: Vec<Result<Option<Part>, f64>> = batch
                .par_iter()
                .map(|c| {
                    let (Some(pa), Some(pb)) = (parts[c.a].as_ref(), parts[c.b].as_ref()) else {
                        return Ok(None);
                    };
                    let points: Vec<DVec3> = pa.points.iter().chain(&pb.points).copied().collect();
                    let Some(h) = hull(&points) else {
                        return Ok(None);
                    };
                    let added = h.volume() - pa.volume - pb.volume;
                    if !c.exact && added > next {
                        return Err(added);
                    }
                    Ok(judge.part_of(h, limit, Some((pa, pb))))
                })
                .collect();
            for (c, part) in batch.into_iter().zip(judged) {
                let part = match part {
                    Ok(p) => p,
                    Err(added) => {
                        known.insert((c.a, c.b), added);
                        heap.push(Candidate {
                            added,
                            exact: true,
                            ..c
                        });
                        continue;
                    }
                };
                let Some(part) = part else { continue };
                if over_bound && alive <= settings.max_pieces {
                    break;
                }
                let m = parts.len();
                parts[c.a] = None;
                parts[c.b] = None;
                parts.push(Some(part));
                let joined = [
                    std::mem::take(&mut members[c.a]),
                    std::mem::take(&mut members[c.b]),
                ]
                .concat();
                members.push(joined);
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
                // the new piece's candidates, estimated from its parts'
                for &n in &ns {
                    let key = |x: usize| known.get(&(n.min(x), n.max(x))).copied();
                    let added = match (key(c.a), key(c.b)) {
                        (Some(x), Some(y)) => x.min(y),
                        (Some(x), None) | (None, Some(x)) => x,
                        (None, None) => f64::NEG_INFINITY,
                    };
                    heap.push(Candidate {
                        added,
                        a: n,
                        b: m,
                        exact: false,
                    });
                }
                neighbours.push(ns);
                alive -= 1;
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
    let kept = parts
        .into_iter()
        .zip(members)
        .filter_map(|(p, m)| Some((m, p?)))
        .collect();
    (kept, over_bound)
}
