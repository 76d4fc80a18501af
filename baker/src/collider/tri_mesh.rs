//! The TriMesh collider: a mesh's triangles paired across shared edges into
//! two-triangle leaves (the terrain trick of the Pathfinder sphere-tree
//! "Scene Collision Detection" article), under a binned-SAH AABB tree (van
//! den Bergen, "Collision Detection", GDC 2013).
//!
//! Steps, on a mesh welded by position (`prepare`, so that edges shared
//! across UV/normal seams are found): pair triangles greedily across shared
//! edges, choosing the partner whose union box is smallest → one primitive
//! per pair (or lone triangle) → SAH tree → leaves laid out in tree order.

use crate::geom::sah::{self, BinNode};
use crate::geom::sah::{leaf_data, leaf_range};
use crate::geom::weld::WeldedMesh;
use kiln_formats::tri_mesh::{FLAT_EDGE_ANGLE, TreeKind};
use rayon::prelude::*;

/// A built TriMesh: welded vertices, leaves in tree order and the binary
/// SAH tree over them (one leaf per pair). `encode` collapses the tree to
/// wide quantised nodes of `kind` (8-wide boxes, 4-wide spheres).
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltTriMesh {
    /// Source mesh name.
    pub name: String,
    /// Welded vertex positions.
    pub vertices: Vec<[f32; 3]>,
    /// Leaves in tree order: quads `[a, b, c, d]` = (a, b, c) + (c, b, d),
    /// or a lone triangle with `d = c`.
    pub leaves: Vec<[u32; 4]>,
    /// Source triangle ids per leaf (`u32::MAX` for a missing second).
    pub source_ids: Vec<[u32; 2]>,
    /// Flat-edge mask per leaf (see `TriMesh::flat_edges`).
    pub flat_edges: Vec<u8>,
    /// The edges only one triangle has, as (leaf triangle, edge): where
    /// `seams` looks for other meshes continuing this one.
    pub borders: Vec<(usize, usize)>,
    /// Binary tree over the leaves (leaf `j` holds `leaves[j]`).
    pub nodes: Vec<BinNode>,
    /// Kind of volumes the archived tree will use.
    pub kind: TreeKind,
}

impl BuiltTriMesh {
    /// Triangles in the tree.
    pub fn triangle_count(&self) -> usize {
        self.source_ids
            .iter()
            .map(|s| if s[1] == u32::MAX { 1 } else { 2 })
            .sum()
    }

    /// The archived leaf payload of the builder leaf payload `data`
    /// (`leaf_data(position, 1)`): the archive counts triangles.
    pub fn leaf_payload(&self, data: u32) -> u32 {
        let (pos, _) = leaf_range(data);
        leaf_data(
            pos,
            1 + u32::from(self.source_ids[pos as usize][1] != u32::MAX),
        )
    }

    /// The vertices of the leaf with builder payload `data`.
    pub fn leaf_points(&self, data: u32) -> Vec<[f32; 3]> {
        let (pos, _) = leaf_range(data);
        let q = self.leaves[pos as usize];
        let n = if self.source_ids[pos as usize][1] == u32::MAX {
            3
        } else {
            4
        };
        q[..n].iter().map(|&v| self.vertices[v as usize]).collect()
    }
}

/// Each triangle's edge flags (bit `k`: edge `k` flat; bit `3 + k`: a
/// border), as [`build`] computes them for a welded mesh: what a piece cut
/// from the mesh keeps ([`build`]'s `flags`).
pub fn edge_flags(mesh: &WeldedMesh) -> Vec<u8> {
    mesh_edges(&mesh.vertices, &mesh.triangles).flags
}

/// Builds the tree of a welded mesh; `flags`, when given, stand for the
/// edge flags its own edges would give (a piece cut from a larger mesh
/// keeps the whole's: [`edge_flags`]).
///
/// # Panics
/// If `flags` is given with another length than the triangles'.
pub fn build(mesh: &WeldedMesh, kind: TreeKind, flags: Option<&[u8]>) -> BuiltTriMesh {
    let vertices = &mesh.vertices;
    let triangles = &mesh.triangles;
    // every edge's sides grouped once: pairing candidates, flat edges and
    // border edges all come from it
    let mut edges = mesh_edges(vertices, triangles);
    if let Some(f) = flags {
        assert_eq!(f.len(), triangles.len(), "one flag byte per triangle");
        edges.flags.copy_from_slice(f);
    }
    // pair across shared edges, as leaf quads
    let pairs = pair_triangles(vertices, triangles, &edges.across);
    // tree over pairs
    let (order, nodes) = sah::build_boxes(
        pairs
            .par_iter()
            .map(|pair| quad_bounds(vertices, &pair.quad, pair.second.is_some())),
    );
    // leaves in tree order
    let leaves: Vec<&Pair> = order.par_iter().map(|&i| &pairs[i as usize]).collect();
    let flat_edges: Vec<u8> = leaves
        .par_iter()
        .map(|p| p.on_leaf(&edges.flags, 0))
        .collect();
    // border edges are few: only leaves with a border bit are looked at twice
    let borders: Vec<(usize, usize)> = leaves
        .par_iter()
        .enumerate()
        .filter(|(_, p)| p.on_leaf(&edges.flags, 3) != 0)
        .flat_map_iter(|(l, p)| {
            let mask = p.on_leaf(&edges.flags, 3);
            (0..6)
                .filter(move |bit| mask >> bit & 1 != 0)
                .map(move |bit| (2 * l + bit / 3, bit % 3))
        })
        .collect();
    BuiltTriMesh {
        name: mesh.name.clone(),
        vertices: mesh.vertices.clone(),
        flat_edges,
        borders,
        leaves: leaves.par_iter().map(|p| p.quad).collect(),
        source_ids: leaves
            .par_iter()
            .map(|p| {
                [
                    mesh.source_ids[p.first as usize],
                    p.second.map_or(u32::MAX, |t| mesh.source_ids[t as usize]),
                ]
            })
            .collect(),
        nodes,
        kind,
    }
}

/// What a mesh's edges tell the builder, per triangle and edge `k`
/// (corner `k` to corner `k + 1`).
struct MeshEdges {
    /// The triangle across each edge that walks it the other way (the
    /// first in (triangle, edge) order where more than two share it), or
    /// `u32::MAX`: the pairing candidates.
    across: Vec<[u32; 3]>,
    /// Bit `k`: edge `k` is flat (see `TriMesh::flat_edges`): exactly two
    /// triangles share it and the second continues the first in its
    /// plane, within [`FLAT_EDGE_ANGLE`]; border edges, edges of three or
    /// more triangles (non-manifold), folds and real creases stay edges.
    /// Bit `3 + k`: edge `k` is a border (only this triangle has it).
    flags: Vec<u8>,
}

/// One pass over the grouped edges of a welded mesh (see [`MeshEdges`]).
/// Each side belongs to one group, so each slot (the triangle across it,
/// its flag bits) is written by one group only, with a plain store: the
/// result does not depend on the order the parallel runs take. Each
/// triangle's three sides' bits are joined after.
fn mesh_edges(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> MeshEdges {
    use std::sync::atomic::{AtomicU8, AtomicU32, Ordering::Relaxed};
    let across: Vec<AtomicU32> = (0..3 * triangles.len())
        .into_par_iter()
        .map(|_| AtomicU32::new(u32::MAX))
        .collect();
    // per side, not per triangle: or-ing into a triangle's byte from
    // parallel runs took a locked read-modify-write per bit
    let side_flags: Vec<AtomicU8> = (0..3 * triangles.len())
        .into_par_iter()
        .map(|_| AtomicU8::new(0))
        .collect();
    let set = |x: &EdgeSide, bit: u8| {
        side_flags[3 * x.tri as usize + usize::from(x.edge())].store(bit, Relaxed);
    };
    edge_groups(
        triangles.len(),
        vertices.len(),
        |t| triangles[t],
        |group| {
            if let [x] = group {
                set(x, 8);
                return;
            }
            if let [x, y] = group {
                let (t, u) = (x.tri as usize, y.tri as usize);
                let (k, j) = (x.edge().into(), y.edge().into());
                if t != u && continues(vertices, triangles[t], k, triangles[u], j) {
                    set(x, 1);
                    set(y, 1);
                }
            }
            for x in group {
                let other = group
                    .iter()
                    .find(|y| y.tri != x.tri && y.upward() != x.upward());
                if let Some(y) = other {
                    across[3 * x.tri as usize + usize::from(x.edge())].store(y.tri, Relaxed);
                }
            }
        },
    );
    MeshEdges {
        across: across
            .par_chunks_exact(3)
            .map(|c| [0, 1, 2].map(|k| c[k].load(Relaxed)))
            .collect(),
        flags: side_flags
            .par_chunks_exact(3)
            .map(|c| (0..3).fold(0, |f, k| f | c[k].load(Relaxed) << k))
            .collect(),
    }
}

/// One side of an edge, filed under its lower vertex: the higher vertex,
/// the triangle, and which of its edges with the edge's direction (bits
/// 0–1: `k`, from corner `k` to corner `k + 1`; bit 7: the edge runs from
/// the lower vertex up). Ordered by those fields, so the sides of one edge
/// sort together and by triangle.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct EdgeSide {
    hi: u32,
    tri: u32,
    edge: u8,
}

impl EdgeSide {
    /// Which edge of its triangle (`k`: corner `k` to corner `k + 1`).
    fn edge(&self) -> u8 {
        self.edge & 3
    }

    /// Whether the triangle walks the edge from its lower vertex up.
    fn upward(&self) -> bool {
        self.edge & 0x80 != 0
    }
}

/// Calls `f(lower vertex, side)` for every side of every non-degenerate
/// edge of the triangles `tri(0..count)`, in (triangle, edge) order.
#[inline(always)]
fn for_each_side(count: usize, tri: &impl Fn(usize) -> [u32; 3], mut f: impl FnMut(u32, EdgeSide)) {
    for t in 0..count {
        let v = tri(t);
        for k in 0..3 {
            let (a, b) = (v[k], v[(k + 1) % 3]);
            if a != b {
                let side = EdgeSide {
                    hi: a.max(b),
                    tri: t as u32,
                    edge: k as u8 | if a < b { 0x80 } else { 0 },
                };
                f(a.min(b), side);
            }
        }
    }
}

/// Calls `group` once per distinct edge of the triangles `tri(0..count)`
/// with the sides that share it, ordered by (triangle, edge). Degenerate
/// edges (one vertex twice) are left out. The sides are filed by their
/// lower vertex with a counting sort, so each vertex's few sides are
/// sorted alone (sorting every edge of a large mesh at once was a third of
/// its bake), and runs of vertices are handled in parallel: `group` must
/// give the same result whatever order the runs take.
fn edge_groups(
    count: usize,
    vertex_count: usize,
    tri: impl Fn(usize) -> [u32; 3] + Sync,
    group: impl Fn(&[EdgeSide]) + Sync,
) {
    let each_side_in = |vs: std::ops::Range<usize>, f: &mut dyn FnMut(usize, EdgeSide)| {
        for_each_side(count, &tri, |lo, side| {
            let i = lo.wrapping_sub(vs.start as u32) as usize;
            if i < vs.len() {
                f(i, side);
            }
        })
    };
    // bucket starts by lower vertex, then the sides filed, each in
    // parallel over ranges of lower vertices: every range scans all the
    // triangles but counts and files only its own vertices' sides, into
    // its own slices, so each bucket is in triangle order whatever the
    // number of ranges (the scans are cheap; the scattered writes are not)
    let ranges = rayon::current_num_threads().clamp(1, 16);
    let per = vertex_count.div_ceil(ranges).max(1);
    let mut start = vec![0u32; vertex_count + 1];
    start[1..]
        .par_chunks_mut(per)
        .enumerate()
        .for_each(|(r, counts)| {
            let v0 = r * per;
            each_side_in(v0..v0 + counts.len(), &mut |i, _| counts[i] += 1);
        });
    for v in 0..vertex_count {
        start[v + 1] += start[v];
    }
    // left uninitialised: the fill below writes every slot once (zeroing
    // tens of megabytes first was a fifth of the grouping's time), and its
    // fresh pages are faulted in by every thread that fills
    let mut sides = Box::<[EdgeSide]>::new_uninit_slice(start[vertex_count] as usize);
    let filled = by_vertices(&mut sides, &start, per)
        .into_par_iter()
        .all(|(vs, piece)| {
            let base = start[vs.start];
            let mut fill: Vec<u32> = start[vs.clone()].iter().map(|s| s - base).collect();
            let ends = start[vs.start + 1..=vs.end].iter().map(|s| s - base);
            each_side_in(vs.clone(), &mut |i, side| {
                piece[fill[i] as usize].write(side);
                fill[i] += 1;
            });
            fill.iter().copied().eq(ends)
        });
    // every bucket got as many sides as were counted for it (more would
    // have indexed past its slice and panicked), so every slot is written
    assert!(filled, "edge sides counted and filed differently");
    // SAFETY: the buckets tile `sides` (bucket `v` is `start[v]..start[v +
    // 1]`), and each bucket's fill pointer went from its start to its end
    // writing one slot per step (checked just above), so every element is
    // initialised.
    let mut sides = unsafe { sides.assume_init() };
    // runs of vertices, each with its slice of sides
    const RUN: usize = 1 << 14;
    by_vertices(&mut sides, &start, RUN)
        .into_par_iter()
        .for_each(|(vs, run)| {
            let base = start[vs.start];
            for v in vs {
                let bucket = &mut run[(start[v] - base) as usize..(start[v + 1] - base) as usize];
                bucket.sort_unstable();
                bucket.chunk_by(|x, y| x.hi == y.hi).for_each(&group);
            }
        });
}

/// `sides` (filed by lower vertex, vertex `v`'s from `start[v]`) cut into
/// runs of `per` vertices, each with its own slice.
fn by_vertices<'a, T>(
    sides: &'a mut [T],
    start: &[u32],
    per: usize,
) -> Vec<(std::ops::Range<usize>, &'a mut [T])> {
    let vertex_count = start.len() - 1;
    let mut runs = Vec::with_capacity(vertex_count / per + 1);
    let mut rest = sides;
    for v0 in (0..vertex_count).step_by(per) {
        let v1 = (v0 + per).min(vertex_count);
        let (run, tail) = rest.split_at_mut((start[v1] - start[v0]) as usize);
        runs.push((v0..v1, run));
        rest = tail;
    }
    runs
}

/// Whether triangle `u` (through its edge `j`) continues triangle `t`
/// across `t`'s edge `k` in `t`'s plane: the two third corners lie on
/// opposite sides of the edge, and the planes through the edge and each
/// of them are within [`FLAT_EDGE_ANGLE`] — whatever either winding.
pub fn continues(vertices: &[[f32; 3]], t: [u32; 3], k: usize, u: [u32; 3], j: usize) -> bool {
    let p = |i: u32| glam::DVec3::from(vertices[i as usize].map(f64::from));
    continues_at(
        [p(t[k]), p(t[(k + 1) % 3])],
        p(t[(k + 2) % 3]),
        p(u[(j + 2) % 3]),
    )
}

/// [`continues`] on positions: the edge, the first triangle's third corner
/// and the second's.
pub fn continues_at(edge: [glam::DVec3; 2], wt: glam::DVec3, wu: glam::DVec3) -> bool {
    let e = edge[1] - edge[0];
    let (a, b) = (e.cross(wt - edge[0]), e.cross(wu - edge[0]));
    let (la, lb) = (a.length_squared(), b.length_squared());
    if !(la > 0.0 && lb > 0.0) {
        // a corner on the edge's line: no plane
        return false;
    }
    // continuing in the plane, the second normal (taken with the same
    // edge direction) points the opposite way: â·b̂ ≤ -cos, that is
    // a·b ≤ -cos·|a||b|, with one square root and no division (this test
    // runs once per edge of every mesh: normalising both normals had been
    // a twentieth of a large mesh's bake)
    let lengths = (la * lb).sqrt();
    if !lengths.is_finite() {
        // coordinates near f32's limit overflow the product: the long way
        return a.normalize().dot(b.normalize()) <= -FLAT_EDGE_ANGLE.cos();
    }
    a.dot(b) <= -FLAT_EDGE_ANGLE.cos() * lengths
}

/// A leaf before layout: its quad (see [`kiln_formats::tri_mesh::TriMesh`]), the welded
/// triangle indices behind it, and each triangle's rotation in it (leaf
/// corner `i` is the triangle's corner `i + r`).
struct Pair {
    quad: [u32; 4],
    first: u32,
    second: Option<u32>,
    rotation: [usize; 2],
}

impl Pair {
    /// The leaf's mask of one kind of edge bit: bit `3 · j + i` is the bit
    /// `shift + k` of triangle `j`'s `flags` (see [`MeshEdges`]) for the
    /// leaf edge `i` that is its edge `k` (leaf corner `i` is the
    /// triangle's corner `i + r`, so leaf edge `i` is its edge `i + r`).
    fn on_leaf(&self, flags: &[u8], shift: usize) -> u8 {
        let mut mask = 0;
        for (j, t) in [Some(self.first), self.second].into_iter().enumerate() {
            let Some(t) = t else { continue };
            let (f, r) = (flags[t as usize] >> shift & 7, self.rotation[j]);
            // bit `k` to bit `(k - r) mod 3`: the three bits rotated right
            // by `r` (bit by bit with `% 3` had been a fiftieth of
            // sauer_pandora's bake)
            let turned = (f >> r | f << (3 - r)) & 7;
            mask |= turned << (3 * j);
        }
        mask
    }
}

/// Greedy pairing across shared edges that the two triangles walk in
/// opposite directions (so the pair keeps both windings as a quad), the
/// candidates being the triangles `across` each edge (see [`MeshEdges`]).
/// Every triangle appears in exactly one pair, in an order that depends
/// only on the input.
///
/// The greedy pass takes the triangles in order: each one not yet taken
/// takes the free neighbour whose quad has the least box (the lowest index
/// on ties). A triangle's choice depends only on which of its neighbours
/// after it are already taken, so on more than one thread a large mesh is
/// paired a wave of blocks at a time (one a thread), each as if nothing
/// before it took any of its triangles, and then, block by block in
/// order, checked: a block that an earlier one reached into, or that
/// looked at a triangle an earlier one took, is paired again on one thread
/// from its start until its choices and the first pass's agree on
/// everything still ahead ([`Chooser::repair_block`]). Once a repair
/// redoes half its block, the rest of the mesh is paired in order, a block
/// at a time; on one thread, in one pass. The pairs are those of the one pass over
/// the whole mesh (the tests hold the two to each other); on one thread
/// that pass had been 29 ms of the 2.1M terrain's bake on two.
fn pair_triangles(
    vertices: &[[f32; 3]],
    triangles: &[[u32; 3]],
    neighbours: &[[u32; 3]],
) -> Vec<Pair> {
    pair_in_blocks(vertices, triangles, neighbours, PAIR_BLOCK)
}

/// [`pair_triangles`] in blocks of `size` triangles (the tests try small
/// ones).
fn pair_in_blocks(
    vertices: &[[f32; 3]],
    triangles: &[[u32; 3]],
    neighbours: &[[u32; 3]],
    size: usize,
) -> Vec<Pair> {
    let n = triangles.len();
    let chooser = Chooser {
        vertices,
        triangles,
        neighbours,
    };
    let threads = rayon::current_num_threads();
    let choices: Vec<u32> = if n < 2 * size || threads == 1 {
        chooser.first_pass(0..n).choices
    } else {
        let blocks: Vec<std::ops::Range<usize>> =
            (0..n).step_by(size).map(|s| s..(s + size).min(n)).collect();
        // the triangles the final choices of the blocks so far took
        // beyond their own block
        let mut taken = vec![false; n];
        let mut reached = vec![false; blocks.len()];
        let mut choices = Vec::with_capacity(n);
        // a wave of blocks (one a thread) at a time, while the first passes
        // hold: in a mesh whose pairs shift all along a strip once one
        // triangle is taken from outside (sauer_pandora), a repair redoes
        // most of its block, and the rest is paired on one thread
        let mut speculate = true;
        let mut k = 0;
        while k < blocks.len() {
            let wave = k..(k + if speculate { threads } else { 1 }).min(blocks.len());
            let mut passes: Vec<Pass> = if speculate {
                blocks[wave.clone()]
                    .par_iter()
                    .map(|b| chooser.first_pass(b.clone()))
                    .collect()
            } else {
                vec![chooser.true_pass(blocks[k].clone(), &taken)]
            };
            // guesses, to be checked (the flag may drop within the wave)
            let guessed = speculate;
            for (b, pass) in wave.clone().zip(&mut passes) {
                let block = blocks[b].clone();
                if guessed && (reached[b] || pass.looked.iter().any(|&o| taken[o as usize])) {
                    let redone = chooser.repair_block(block.clone(), &taken, pass) - block.start;
                    speculate = 2 * redone < block.len();
                }
                for &o in &pass.took {
                    taken[o as usize] = true;
                    reached[o as usize / size] = true;
                }
            }
            choices.extend(passes.into_iter().flat_map(|p| p.choices));
            k = wave.end;
        }
        choices
    };
    // the pairs' first triangles, then the pairs, each written in its place
    // (collecting the pairs through a filter had cost their copy twice)
    let firsts: Vec<u32> = choices
        .par_iter()
        .enumerate()
        .filter(|&(_, &c)| c != TAKEN)
        .map(|(t, _)| t as u32)
        .collect();
    firsts
        .par_iter()
        .map(|&t| {
            let (t, c) = (t as usize, choices[t as usize]);
            let second = (c != LONE).then_some(c);
            let (quad, rotation) = make_quad(triangles[t], second.map(|o| triangles[o as usize]));
            Pair {
                quad,
                first: t as u32,
                second,
                rotation,
            }
        })
        .collect()
}

/// Triangles a block of the greedy pairing takes on the pool.
const PAIR_BLOCK: usize = 1 << 14;

/// A triangle's choice: taken by an earlier one (no pair of its own).
const TAKEN: u32 = u32::MAX;
/// A triangle's choice: a pair of its own with no second triangle.
const LONE: u32 = u32::MAX - 1;

/// The greedy pass over one block (see [`pair_triangles`]).
struct Pass {
    /// Each triangle's choice: the triangle it takes, [`LONE`] or [`TAKEN`].
    choices: Vec<u32>,
    /// The triangles past the block it took, in order of choice.
    took: Vec<u32>,
    /// The triangles past the block it looked at, free or not.
    looked: Vec<u32>,
}

impl Pass {
    /// A pass about to start on `block`, its triangles taken from outside
    /// where `taken` says.
    fn starting(block: std::ops::Range<usize>, taken: impl Fn(usize) -> bool) -> Pass {
        Pass {
            choices: block.map(|t| if taken(t) { TAKEN } else { 0 }).collect(),
            took: Vec::new(),
            looked: Vec::new(),
        }
    }
}

/// What the greedy pairing chooses from.
struct Chooser<'a> {
    vertices: &'a [[f32; 3]],
    triangles: &'a [[u32; 3]],
    neighbours: &'a [[u32; 3]],
}

impl Chooser<'_> {
    /// The choice of triangle `t`, not taken, whose neighbours after it are
    /// taken where `taken` says: the free one whose quad has the least box
    /// (the lowest on ties), or [`LONE`].
    fn choose(&self, t: usize, mut taken: impl FnMut(u32) -> bool) -> u32 {
        let mut best: Option<(f32, u32)> = None;
        for &o in &self.neighbours[t] {
            // a neighbour before `t` made its own choice already
            if o == u32::MAX || (o as usize) <= t || taken(o) {
                continue;
            }
            let (quad, _) = make_quad(self.triangles[t], Some(self.triangles[o as usize]));
            let (min, max) = quad_bounds(self.vertices, &quad, true);
            let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
            let area = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
            if best.is_none_or(|(a, b)| area < a || (area == a && o < b)) {
                best = Some((area, o));
            }
        }
        best.map_or(LONE, |(_, o)| o)
    }

    /// The greedy pass over `block`, where `taken` says which triangles
    /// past the block earlier blocks took and `pass.choices` marks the
    /// block's own triangles taken from outside ([`TAKEN`]; the rest 0).
    /// Given a [`Differ`] (a repair), it stops at the first triangle from
    /// which nothing ahead differs from the first pass and takes the first
    /// pass's choices from there. Returns where it stopped.
    fn pass(
        &self,
        block: std::ops::Range<usize>,
        taken: impl Fn(usize) -> bool,
        pass: &mut Pass,
        mut differ: Option<Differ>,
    ) -> usize {
        let start = block.start;
        let mut ahead = std::collections::HashSet::new();
        for t in block.clone() {
            if let Some(Differ { first, reach, .. }) = &differ
                && reach.is_none_or(|r| (r as usize) < t)
            {
                // nothing ahead differs: the first pass holds from here,
                // with what it took past the block
                pass.choices[t - start..].copy_from_slice(&first[t - start..]);
                let rest = first[t - start..].iter().copied();
                pass.took
                    .extend(rest.filter(|&c| c < LONE && c as usize >= block.end));
                return t;
            }
            let mut c = TAKEN;
            if pass.choices[t - start] != TAKEN {
                c = self.choose(t, |o| {
                    let o = o as usize;
                    if o < block.end {
                        pass.choices[o - start] == TAKEN
                    } else {
                        pass.looked.push(o as u32);
                        taken(o) || ahead.contains(&o)
                    }
                });
                pass.choices[t - start] = c;
                if c != LONE {
                    if (c as usize) < block.end {
                        pass.choices[c as usize - start] = TAKEN;
                    } else {
                        pass.took.push(c);
                        ahead.insert(c as usize);
                    }
                }
            }
            if let Some(d) = &mut differ {
                let was = d.first[t - start];
                if c != was {
                    // the partners of a choice that came out differently
                    // are taken in one pass and free in the other
                    for p in [c, was] {
                        if p < LONE {
                            d.mark(p);
                        }
                    }
                }
            }
        }
        block.end
    }

    /// The greedy pass over `block` alone, as if no earlier block took
    /// any triangle.
    fn first_pass(&self, block: std::ops::Range<usize>) -> Pass {
        let mut pass = Pass::starting(block.clone(), |_| false);
        self.pass(block, |_| false, &mut pass, None);
        pass
    }

    /// Pairs `block` again, on one thread, where earlier blocks took the
    /// triangles `taken` says: `pass` is its first pass, put right. The
    /// two passes differ only where a triangle's own state or that of a
    /// neighbour ahead of it differs: the triangles taken from outside,
    /// those past the block it looked at that were taken, and the partners
    /// of every choice that came out differently. Once none of those lies
    /// ahead, the rest of the first pass stands.
    fn repair_block(
        &self,
        block: std::ops::Range<usize>,
        taken: &[bool],
        pass: &mut Pass,
    ) -> usize {
        let first = std::mem::take(&mut pass.choices);
        let looked = std::mem::take(&mut pass.looked);
        // a triangle past the block matters up to the last of the block's
        // triangles that has it for a neighbour
        let mut last_look = std::collections::HashMap::new();
        for t in block.clone() {
            for &o in &self.neighbours[t] {
                if o != u32::MAX && o as usize >= block.end {
                    last_look.insert(o, t as u32);
                }
            }
        }
        let mut differ = Differ {
            first: &first,
            end: block.end as u32,
            last_look,
            reach: None,
        };
        for t in block.clone().filter(|&t| taken[t]) {
            differ.mark(t as u32);
        }
        for &o in looked.iter().filter(|&&o| taken[o as usize]) {
            differ.mark(o);
        }
        *pass = Pass::starting(block.clone(), |t| taken[t]);
        self.pass(block, |o| taken[o], pass, Some(differ))
    }

    /// The greedy pass over `block` where earlier blocks took the
    /// triangles `taken` says: its share of the one pass over the mesh.
    fn true_pass(&self, block: std::ops::Range<usize>, taken: &[bool]) -> Pass {
        let mut pass = Pass::starting(block.clone(), |t| taken[t]);
        self.pass(block, |o| taken[o], &mut pass, None);
        pass
    }
}

/// Where a block's repair and its first pass differ (see
/// [`Chooser::repair_block`]).
struct Differ<'a> {
    /// The first pass's choices.
    first: &'a [u32],
    /// One past the block.
    end: u32,
    /// For each triangle past the block, the last of the block's that has
    /// it for a neighbour.
    last_look: std::collections::HashMap<u32, u32>,
    /// The last triangle of the block the repair must reach: up to it, a
    /// choice may come out differently.
    reach: Option<u32>,
}

impl Differ<'_> {
    /// Triangle `p` is taken in one pass and free in the other.
    fn mark(&mut self, p: u32) {
        let t = if p < self.end {
            Some(p)
        } else {
            self.last_look.get(&p).copied()
        };
        self.reach = self.reach.max(t);
    }
}

/// The quad `[a, b, c, d]` of a triangle and, if given, a neighbour that
/// walks one of its edges backwards: the first triangle is rotated so the
/// shared edge is `b → c`, and the neighbour is then `(c, b, d)`. A lone
/// triangle repeats `c`. Also each triangle's rotation (see [`Pair`]).
fn make_quad(t: [u32; 3], other: Option<[u32; 3]>) -> ([u32; 4], [usize; 2]) {
    let Some(o) = other else {
        return ([t[0], t[1], t[2], t[2]], [0, 0]);
    };
    for k in 0..3 {
        let (b, c) = (t[k], t[(k + 1) % 3]);
        for j in 0..3 {
            if o[j] == c && o[(j + 1) % 3] == b {
                // (a, b, c) = t from corner k + 2; (c, b, d) = o from corner j
                return ([t[(k + 2) % 3], b, c, o[(j + 2) % 3]], [(k + 2) % 3, j]);
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
    use crate::scene::SceneMesh;
    use kiln_formats::tri_mesh::{FLAT_BITS, LEAF_BIT, TriMesh, leaf_triangle};

    /// Weld, build and encode: the archived mesh a scene mesh becomes.
    fn build(src: &SceneMesh, kind: TreeKind) -> TriMesh {
        crate::encode::tri_mesh(super::build(&crate::geom::weld::weld(src), kind, None))
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

    /// The triangle's vertex positions, rotated to start at its smallest
    /// vertex position (winding kept), for order-free comparison.
    fn canonical(m: &TriMesh, t: [u32; 3]) -> [[u32; 3]; 3] {
        let p = t.map(|v| m.vertices.get(v).map(f32::to_bits));
        let k = (0..3).min_by_key(|&k| p[k]).unwrap();
        [p[k], p[(k + 1) % 3], p[(k + 2) % 3]]
    }

    fn flat_bits(m: &TriMesh) -> u32 {
        m.leaves
            .iter()
            .map(|l| (l.bits & FLAT_BITS).count_ones())
            .sum()
    }

    /// A shared-vertex heightfield of `n × n` quads with folds, creases
    /// and flat stretches (large enough, at `n` ≥ 260, for the builders'
    /// parallel paths: binning split in halves, edge runs, subtree encoding).
    fn heightfield(n: u32) -> SceneMesh {
        let h = |x: u32, y: u32| -> f32 {
            match (x / 16 + y / 16) % 3 {
                0 => 0.0,
                1 => ((x * 7 + y * 13) % 5) as f32 * 0.25,
                _ => (x as f32 * 0.3).sin() * (y as f32 * 0.2).cos(),
            }
        };
        let mut pos = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                pos.push([x as f32, h(x, y), y as f32]);
            }
        }
        let v = |x: u32, y: u32| y * (n + 1) + x;
        let mut tris = Vec::new();
        for y in 0..n {
            for x in 0..n {
                tris.push([v(x, y), v(x, y + 1), v(x + 1, y)]);
                tris.push([v(x + 1, y), v(x, y + 1), v(x + 1, y + 1)]);
            }
        }
        SceneMesh::new("heightfield", pos, &tris)
    }

    /// A pair's quad, first and second triangles and rotations.
    type PairFields = ([u32; 4], u32, Option<u32>, [usize; 2]);

    /// The greedy pairing as one pass over the whole mesh on one thread:
    /// what the blocked pairing must give.
    fn pair_in_one_pass(
        vertices: &[[f32; 3]],
        triangles: &[[u32; 3]],
        neighbours: &[[u32; 3]],
    ) -> Vec<PairFields> {
        let mut paired = vec![false; triangles.len()];
        let mut out = Vec::new();
        for t in 0..triangles.len() {
            if paired[t] {
                continue;
            }
            paired[t] = true;
            let mut best: Option<(f32, u32)> = None;
            for &o in &neighbours[t] {
                if o == u32::MAX || paired[o as usize] {
                    continue;
                }
                let (quad, _) = make_quad(triangles[t], Some(triangles[o as usize]));
                let (min, max) = quad_bounds(vertices, &quad, true);
                let d = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
                let area = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
                if best.is_none_or(|(a, b)| area < a || (area == a && o < b)) {
                    best = Some((area, o));
                }
            }
            let second = best.map(|(_, o)| o);
            if let Some(o) = second {
                paired[o as usize] = true;
            }
            let (quad, rotation) = make_quad(triangles[t], second.map(|o| triangles[o as usize]));
            out.push((quad, t as u32, second, rotation));
        }
        out
    }

    #[test]
    fn blocked_pairing_gives_the_one_pass_pairs_on_any_thread_count() {
        let field = heightfield(130);
        let n = field.triangles.len();
        assert!(n > 2 * PAIR_BLOCK, "{n} triangles");
        // a triangle far off first, so that quads straddle every block's
        // start (an earlier block takes a triangle: a partial repair)
        let mut shifted_pos = vec![
            [-50.0, 0.0, -50.0],
            [-49.0, 0.0, -50.0],
            [-50.0, 0.0, -49.0],
        ];
        let base = shifted_pos.len() as u32;
        shifted_pos.extend_from_slice(&field.positions);
        let mut shifted_tris = vec![[0, 2, 1]];
        shifted_tris.extend(field.triangles.iter().map(|t| t.map(|v| v + base)));
        // the triangles shuffled: neighbours in every block (whole blocks
        // paired again)
        let mut shuffled_tris = field.triangles.clone();
        let mut rng = kiln_geometry::rng::Rng::new(0x9E37_79B9);
        for i in (1..shuffled_tris.len()).rev() {
            shuffled_tris.swap(i, rng.below(i + 1));
        }
        let meshes = [
            field.clone(),
            SceneMesh::new("shifted", shifted_pos, &shifted_tris),
            SceneMesh::new("shuffled", field.positions.clone(), &shuffled_tris),
        ];
        for mesh in &meshes {
            let w = crate::geom::weld::weld(mesh);
            let edges = mesh_edges(&w.vertices, &w.triangles);
            let want = pair_in_one_pass(&w.vertices, &w.triangles, &edges.across);
            // small blocks as well: most blocks reached into, or looking at
            // triangles an earlier block took
            for (size, threads) in [
                (PAIR_BLOCK, 1),
                (PAIR_BLOCK, 2),
                (PAIR_BLOCK, 3),
                (7, 2),
                (64, 2),
                (1000, 3),
            ] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                let got: Vec<_> = pool
                    .unwrap()
                    .install(|| pair_in_blocks(&w.vertices, &w.triangles, &edges.across, size))
                    .into_iter()
                    .map(|p| (p.quad, p.first, p.second, p.rotation))
                    .collect();
                assert!(
                    got == want,
                    "{}, blocks of {size}, {threads} threads",
                    mesh.name
                );
            }
        }
    }

    #[test]
    fn edge_flags_match_a_brute_force_grouping_of_every_edge() {
        let t = super::build(
            &crate::geom::weld::weld(&heightfield(300)),
            TreeKind::Aabb,
            None,
        );
        let second = |l: usize| t.source_ids[l][1] != u32::MAX;
        // every side of every edge, grouped by a global map
        let mut groups: std::collections::BTreeMap<(u32, u32), Vec<(usize, usize)>> =
            Default::default();
        for (l, q) in t.leaves.iter().enumerate() {
            for j in 0..1 + usize::from(second(l)) {
                let tri = leaf_triangle(*q, j as u32);
                for k in 0..3 {
                    let (a, b) = (tri[k], tri[(k + 1) % 3]);
                    if a != b {
                        groups
                            .entry((a.min(b), a.max(b)))
                            .or_default()
                            .push((2 * l + j, k));
                    }
                }
            }
        }
        let tri = |i: usize| leaf_triangle(t.leaves[i / 2], (i % 2) as u32);
        let mut masks = vec![0u8; t.leaves.len()];
        let mut borders = Vec::new();
        for sides in groups.values() {
            match sides[..] {
                [x] => borders.push(x),
                [(a, k), (b, j)] if a != b && continues(&t.vertices, tri(a), k, tri(b), j) => {
                    masks[a / 2] |= 1 << (3 * (a % 2) + k);
                    masks[b / 2] |= 1 << (3 * (b % 2) + j);
                }
                _ => {}
            }
        }
        assert_eq!(t.flat_edges, masks);
        let mut found = t.borders.clone();
        found.sort_unstable();
        borders.sort_unstable();
        assert_eq!(found, borders);
        // the field's outline: 4 · 300 edges; and it has flat and
        // creased inner edges both
        assert_eq!(borders.len(), 1200);
        let flat: u32 = masks.iter().map(|m| m.count_ones()).sum();
        assert!(
            flat > 100_000 && (flat as usize) < 3 * 180_000 - 1200,
            "{flat}"
        );
    }

    #[test]
    fn a_large_mesh_bakes_to_the_same_archive_on_one_and_two_threads() {
        let scene = crate::Scene::from_meshes(vec![heightfield(300)]);
        let settings = crate::BakeSettings::default().all_meshes();
        let bake = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| crate::bake_scene(&scene, &settings).bytes)
        };
        let one = bake(1);
        assert!(one == bake(2), "archives differ between 1 and 2 threads");
        // the tree is one the runtime accepts
        kiln_formats::check_file(&one).unwrap();
    }

    #[test]
    fn inner_edges_of_a_flat_grid_are_flat_and_its_border_is_not() {
        // 4 × 4 quads: 40 inner edges (two triangles each), 16 border
        let m = build(&grid(4), TreeKind::Aabb);
        assert_eq!(flat_bits(&m), 80);
        assert!(m.leaves.iter().all(|l| l.bits & !FLAT_BITS == 0));
        // every border edge keeps its bit clear
        for l in 0..m.leaves.len() {
            for j in 0..2u32 {
                let t = leaf_triangle(m.corners(l), j);
                for k in 0..3 {
                    let (a, b) = (m.vertices.get(t[k]), m.vertices.get(t[(k + 1) % 3]));
                    let border = [0, 2]
                        .iter()
                        .any(|&c| (a[c] == 0.0 && b[c] == 0.0) || (a[c] == 4.0 && b[c] == 4.0));
                    let bit = m.leaves[l].bits >> (3 * j as usize + k) & 1;
                    assert_eq!(bit == 1, !border, "leaf {l} triangle {j} edge {k}");
                }
            }
        }
    }

    #[test]
    fn a_hinge_is_flat_only_when_nearly_coplanar_and_unfolded() {
        // two triangles on the edge (0,0,0)–(0,0,1), the second raised by
        // an angle about it
        let hinge = |deg: f64| {
            let (s, c) = deg.to_radians().sin_cos();
            let p = vec![
                [0.0, 0.0, 0.0],
                [0.0, 0.0, 1.0],
                [-1.0, 0.0, 0.5],
                [c as f32, s as f32, 0.5],
            ];
            let m = build(
                &SceneMesh::new("hinge", p, &[[0, 1, 2], [1, 0, 3]]),
                TreeKind::Aabb,
            );
            flat_bits(&m)
        };
        assert_eq!(hinge(0.0), 2);
        assert_eq!(hinge(0.1), 2, "0.1° is within the flat angle");
        assert_eq!(hinge(1.0), 0, "a 1° crease is an edge");
        assert_eq!(hinge(90.0), 0);
        assert_eq!(hinge(180.0), 0, "folded back onto itself: a knife edge");
        // the same two triangles wound inconsistently are as flat
        let p = vec![
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
            [-1.0, 0.0, 0.5],
            [1.0, 0.0, 0.5],
        ];
        let m = build(
            &SceneMesh::new("flipped", p, &[[0, 1, 2], [0, 1, 3]]),
            TreeKind::Aabb,
        );
        assert_eq!(flat_bits(&m), 2);
    }

    #[test]
    fn the_flat_test_holds_at_the_edge_of_f32s_range() {
        // |a|²·|b|² overflows f64 here: the test falls back to unit normals
        use glam::DVec3;
        let big = f64::from(f32::MAX) * 0.9;
        let edge = [DVec3::new(0.0, 0.0, -big), DVec3::new(0.0, 0.0, big)];
        let (e, w) = (edge[1] - edge[0], DVec3::new(-big, 0.0, 0.0) - edge[0]);
        assert!(!(e.cross(w).length_squared().powi(2)).is_finite());
        let flat = DVec3::new(big, 0.0, 0.0);
        let raised = DVec3::new(big, big * 0.1, 0.0);
        assert!(continues_at(edge, DVec3::new(-big, 0.0, 0.0), flat));
        assert!(!continues_at(edge, DVec3::new(-big, 0.0, 0.0), raised));
        // a corner on the edge's line: no plane, not flat
        assert!(!continues_at(edge, DVec3::ZERO, flat));
    }

    #[test]
    fn grid_triangles_pair_up_and_welding_shares_vertices() {
        for kind in [TreeKind::Aabb, TreeKind::Sphere] {
            let src = grid(8);
            let m = build(&src, kind);
            assert_eq!(m.vertices.len(), 81);
            assert_eq!(m.leaves.len(), 64, "every leaf holds a pair");
            assert_eq!(m.triangle_count(), 128);
            let inner = m.tree.len();
            // 2 to 8 children a box node, 2 to 4 a sphere node
            let fewest = if kind == TreeKind::Aabb { 9 } else { 21 };
            assert!(
                (fewest..63).contains(&inner),
                "{kind:?}: {inner} nodes for 64 leaves"
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
        for l in 0..m.leaves.len() {
            let (a, b) = (
                leaf_triangle(m.corners(l), 0),
                leaf_triangle(m.corners(l), 1),
            );
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

    /// A pair whose corners were first used 40,000 vertices apart: its
    /// leaf gets copies of its corners at the end of the vertex list, and
    /// the pair's ids (0 and the last) are listed; the archive verifies and
    /// a ray through each triangle reports its own source id.
    #[test]
    fn a_pair_of_far_apart_corners_gets_copies_and_its_second_id_is_listed() {
        // triangle 0 and the last share the edge 0–1 (walked both ways);
        // between them, 13,400 disjoint triangles of fresh vertices far away
        let mut pos = vec![[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 0.0, 4.0]];
        let mut tris = vec![[0u32, 2, 1]];
        for i in 0..13_400u32 {
            let (x, b) = (100.0 + 3.0 * i as f32, pos.len() as u32);
            pos.extend([[x, 0.0, 100.0], [x + 1.0, 0.0, 100.0], [x, 0.0, 101.0]]);
            tris.push([b, b + 2, b + 1]);
        }
        let far = pos.len() as u32;
        pos.push([4.0, 0.0, -4.0]);
        tris.push([1, far, 0]);
        let src = SceneMesh::new("far", pos.clone(), &tris);
        let m = build(&src, TreeKind::Aabb);
        assert_eq!(m.triangle_count(), tris.len());
        // the first pair's leaf: four consecutive copies, at the end
        let l = (0..m.leaves.len())
            .find(|&l| m.source_id(l, 0) == 0)
            .unwrap();
        let leaf = m.leaves[l];
        assert!(leaf.is_pair());
        assert_eq!(m.corners(l)[0] as usize, m.vertices.len() - 4);
        assert_eq!(leaf.offset, [1, 2, 3]);
        assert_eq!(m.vertices.len(), pos.len() + 4);
        assert_eq!(leaf.delta, 0, "a pair whose second id is listed");
        assert_eq!(m.second_ids, vec![[l as u32, tris.len() as u32 - 1]]);
        // every stored triangle is its source triangle, by positions
        let mut n = 0;
        for (t, id) in m.triangles() {
            let got = t.map(|v| m.vertices.get(v));
            let want = tris[id as usize].map(|v| pos[v as usize]);
            let rot = |p: [[f32; 3]; 3]| {
                let k = (0..3)
                    .min_by(|&a, &b| p[a].partial_cmp(&p[b]).unwrap())
                    .unwrap();
                [p[k], p[(k + 1) % 3], p[(k + 2) % 3]]
            };
            assert_eq!(rot(got), rot(want), "triangle {id}");
            n += 1;
        }
        assert_eq!(n, tris.len());
        // the runtime reads the same ids back
        let scene = crate::Scene::from_meshes(vec![src]);
        let bytes = crate::bake_scene(&scene, &crate::BakeSettings::default().all_meshes()).bytes;
        let level = kiln_runtime::Level::from_bytes(&bytes).unwrap();
        for (id, t) in [
            (0usize, tris[0]),
            (tris.len() - 1, tris[tris.len() - 1]),
            (7, tris[7]),
        ] {
            let c = t.map(|v| glam::Vec3::from(pos[v as usize]));
            let at = (c[0] + c[1] + c[2]) / 3.0;
            let ray = kiln_runtime::Ray::new(at + glam::Vec3::Y, -glam::Vec3::Y, 2.0);
            let hit = level
                .raycast(&ray, &kiln_runtime::Filter::default())
                .unwrap();
            assert_eq!(hit.feature, Some(id as u32));
        }
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
            assert!(t.tree.is_empty());
            assert_eq!(t.root, LEAF_BIT);
            assert_eq!(t.source_id(0, 0), 0);
            assert!(!t.leaves[0].is_pair());
        }
    }
}
