//! A built mesh's leaves as the archive stores them ([`Leaf`]): corners as
//! 16-bit offsets, and each run of [`LEAF_CHUNK`] leaves given the vertex
//! and source-id bases that place most of its leaves' corner `a` and first
//! id in a 16-bit window; the rest are listed.

use kiln_formats::tri_mesh::{A_LISTED, ID_LISTED, LEAF_CHUNK, Leaf};
use rayon::prelude::*;

/// A mesh's leaves and what places them.
#[derive(Debug, Default)]
pub struct Placed {
    /// The vertex list, with the copies some leaves' corners needed.
    pub vertices: Vec<[f32; 3]>,
    /// The leaves, in the order given.
    pub leaves: Vec<Leaf>,
    /// `[vertex base, id base]` per run of [`LEAF_CHUNK`] leaves.
    pub bases: Vec<[u32; 2]>,
    /// `[leaf, vertex]` of the corners `a` outside their run's window.
    pub listed_corners: Vec<[u32; 2]>,
    /// `[leaf, id]` of the first ids outside their run's window.
    pub listed_ids: Vec<[u32; 2]>,
    /// `[leaf, id]` of the second ids the delta byte cannot give.
    pub second_ids: Vec<[u32; 2]>,
}

/// The archived leaves of quads `quads` (corners `[a, b, c, d]`, `d == c`
/// for a lone triangle) with source ids `ids` (`[first, second]`, second
/// `u32::MAX` for a lone triangle) and flat-edge masks `flat`.
///
/// A leaf whose corners lie more than an `i16` from its first gets copies
/// of its corners at the end of the vertex list (the same positions, so
/// shared edges stay watertight); a second source id more than 255 above
/// the first's (or not above it) is listed. Each run's bases are the
/// starts of the 16-bit windows holding the most of its corners `a` and
/// of its first ids (the lowest such start, so the result depends on the
/// input alone). The leaves and the runs are placed on the rayon pool, the
/// corner copies in leaf order, so the result is the same at any thread
/// count.
pub fn place(
    mut vertices: Vec<[f32; 3]>,
    quads: &[[u32; 4]],
    ids: &[[u32; 2]],
    flat: &[u8],
) -> Placed {
    // the second id's delta: 0 for a lone triangle or a listed second id
    let delta = |[first, second]: [u32; 2]| {
        u8::try_from(second.wrapping_sub(first))
            .ok()
            .filter(|&d| d > 0 && second != u32::MAX)
    };
    let second_ids: Vec<[u32; 2]> = ids
        .par_iter()
        .enumerate()
        .filter(|&(_, &s)| s[1] != u32::MAX && delta(s).is_none())
        .map(|(l, s)| [l as u32, s[1]])
        .collect();
    // leaves whose corners lie within an i16 of `a`, on the pool; then, in
    // order, copies of the corners of the few that do not
    let mut leaves: Vec<Option<Leaf>> = quads
        .par_iter()
        .zip(ids)
        .zip(flat)
        .map(|((&q, &s), &flat)| Leaf::new(q, flat, delta(s).unwrap_or(0)))
        .collect();
    let mut corner_a: Vec<u32> = quads.par_iter().map(|q| q[0]).collect();
    // the few leaves to copy found on the pool, then copied in leaf order
    // (a pass over every leaf on one thread had been most of this step)
    let copied: Vec<usize> = leaves
        .par_iter()
        .enumerate()
        .filter(|(_, leaf)| leaf.is_none())
        .map(|(l, _)| l)
        .collect();
    for l in copied {
        let q = quads[l];
        let at = vertices.len() as u32;
        let pair = q[3] != q[2];
        let corners = if pair { &q[..] } else { &q[..3] };
        let copies: Vec<[f32; 3]> = corners.iter().map(|&v| vertices[v as usize]).collect();
        vertices.extend(copies);
        let d = if pair { at + 3 } else { at + 2 };
        corner_a[l] = at;
        leaves[l] = Leaf::new([at, at + 1, at + 2, d], flat[l], delta(ids[l]).unwrap_or(0));
    }
    let mut leaves: Vec<Leaf> = leaves
        .into_par_iter()
        .map(|l| l.expect("consecutive corners"))
        .collect();
    // each run's windows, in blocks of runs on the pool, joined in order
    let block = LEAF_CHUNK * RUNS_PER_TASK;
    let parts: Vec<Runs> = leaves
        .par_chunks_mut(block)
        .zip(corner_a.par_chunks(block))
        .zip(ids.par_chunks(block))
        .enumerate()
        .map(|(b, ((leaves, a), ids))| place_runs(b * block, leaves, a, ids))
        .collect();
    let mut placed = Placed {
        bases: Vec::with_capacity(leaves.len().div_ceil(LEAF_CHUNK)),
        second_ids,
        ..Placed::default()
    };
    for part in parts {
        placed.bases.extend(part.bases);
        placed.listed_corners.extend(part.listed_corners);
        placed.listed_ids.extend(part.listed_ids);
    }
    placed.vertices = vertices;
    placed.leaves = leaves;
    placed
}

/// Runs of leaves per task when placing a large mesh's runs.
const RUNS_PER_TASK: usize = 512;

/// The bases and listed values of a block of runs.
#[derive(Default)]
struct Runs {
    bases: Vec<[u32; 2]>,
    listed_corners: Vec<[u32; 2]>,
    listed_ids: Vec<[u32; 2]>,
}

/// Places the runs of `leaves` (leaf `first` onwards, corners `a` and
/// source ids `ids` beside them): their bases and listed values.
fn place_runs(first: usize, leaves: &mut [Leaf], a: &[u32], ids: &[[u32; 2]]) -> Runs {
    let mut placed = Runs::default();
    for (r, run) in leaves.chunks_mut(LEAF_CHUNK).enumerate() {
        let start = r * LEAF_CHUNK;
        let a = &a[start..start + run.len()];
        let mut id = [0u32; LEAF_CHUNK];
        for (k, s) in ids[start..start + run.len()].iter().enumerate() {
            id[k] = s[0];
        }
        let id = &id[..run.len()];
        let base = [window(a), window(id)];
        placed.bases.push(base);
        for (k, leaf) in run.iter_mut().enumerate() {
            let l = (first + start + k) as u32;
            match u16::try_from(a[k].wrapping_sub(base[0])) {
                Ok(off) => leaf.a = off,
                Err(_) => {
                    leaf.bits |= A_LISTED;
                    placed.listed_corners.push([l, a[k]]);
                }
            }
            match u16::try_from(id[k].wrapping_sub(base[1])) {
                Ok(off) => leaf.id = off,
                Err(_) => {
                    leaf.bits |= ID_LISTED;
                    placed.listed_ids.push([l, id[k]]);
                }
            }
        }
    }
    placed
}

/// The lowest `base` such that `base..=base + 65535` holds as many of
/// `values` (at most [`LEAF_CHUNK`]) as any such window; 0 for none.
fn window(values: &[u32]) -> u32 {
    let mut v = [0u32; LEAF_CHUNK];
    let v = &mut v[..values.len()];
    v.copy_from_slice(values);
    v.sort_unstable();
    let (mut best, mut base, mut j) = (0, v.first().copied().unwrap_or(0), 0);
    for i in 0..v.len() {
        while j < v.len() && v[j] - v[i] <= u32::from(u16::MAX) {
            j += 1;
        }
        if j - i > best {
            (best, base) = (j - i, v[i]);
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_formats::tri_mesh::{MeshTree, TriMesh};
    use kiln_formats::vertices::Vertices;

    #[test]
    fn a_window_holds_the_most_values_and_starts_at_the_lowest() {
        // the three high values outnumber the two low ones
        assert_eq!(window(&[0, 10, 70_000, 70_001, 135_535]), 70_000);
        // a window spans 65,536 values: 5 and 65,540 fit one
        assert_eq!(window(&[65_540, 5]), 5);
        // one apart too many: one each, the lowest start wins
        assert_eq!(window(&[65_541, 5]), 5);
        assert_eq!(window(&[u32::MAX, 7, u32::MAX - 1]), u32::MAX - 1);
        assert_eq!(window(&[]), 0);
    }

    /// The native mesh of placed leaves (no tree: only the leaf readers
    /// are asked).
    fn mesh(p: Placed) -> TriMesh {
        TriMesh {
            name: String::new(),
            vertices: Vertices::plain(&p.vertices),
            leaves: p.leaves,
            bases: p.bases,
            listed_corners: p.listed_corners,
            listed_ids: p.listed_ids,
            second_ids: p.second_ids,
            min: [0.0; 3],
            max: [0.0; 3],
            root: 0,
            tree: MeshTree::Boxes(Vec::new()),
        }
    }

    /// 100 leaves (four runs, the last short) whose corners and ids mostly
    /// lie close, but a few of each run lie beyond a 16-bit window: in
    /// either direction, at the very ends of u32, in the short last run.
    /// Every corner and id reads back; exactly the stragglers are listed.
    #[test]
    fn corners_and_ids_beyond_their_runs_window_are_listed_and_read_back() {
        let vertices = vec![[0.0f32; 3]; 300_004];
        let far_a = |l: u32| matches!(l, 3 | 40 | 41 | 99);
        let far_id = |l: u32| matches!(l, 0 | 31 | 64 | 98);
        let mut quads = Vec::new();
        let mut ids = Vec::new();
        for l in 0..100u32 {
            let a = if far_a(l) { 200_000 + l } else { 1_000 + 2 * l };
            // lone triangles and pairs, pairs with a delta and listed
            let d = if l % 3 == 0 { a + 2 } else { a + 3 };
            quads.push([a, a + 1, a + 2, d]);
            let first = if far_id(l) {
                if l == 0 { u32::MAX - 1 } else { 5_000_000 + l }
            } else {
                100_000 + 7 * l
            };
            let second = match l % 3 {
                0 => u32::MAX,
                1 => first.wrapping_add(200),
                _ => first.wrapping_sub(1),
            };
            ids.push([first, second]);
        }
        let flat = vec![0u8; 100];
        let p = place(vertices, &quads, &ids, &flat);
        assert_eq!(p.bases.len(), 4);
        let listed: Vec<u32> = p.listed_corners.iter().map(|e| e[0]).collect();
        assert_eq!(listed, [3, 40, 41, 99]);
        let listed: Vec<u32> = p.listed_ids.iter().map(|e| e[0]).collect();
        assert_eq!(listed, [0, 31, 64, 98]);
        // the pairs whose second id is below the first are listed
        assert!(p.second_ids.iter().all(|e| e[0] % 3 == 2));
        assert_eq!(p.second_ids.len(), 33);
        let m = mesh(p);
        for l in 0..100usize {
            assert_eq!(m.corners(l), quads[l], "leaf {l}");
            assert_eq!(m.source_id(l, 0), ids[l][0], "leaf {l}");
            if quads[l][3] != quads[l][2] {
                assert_eq!(m.source_id(l, 1), ids[l][1], "leaf {l}");
            }
            let flags = m.leaves[l].bits & (A_LISTED | ID_LISTED);
            let want = if far_a(l as u32) { A_LISTED } else { 0 }
                | if far_id(l as u32) { ID_LISTED } else { 0 };
            assert_eq!(flags, want, "leaf {l}");
        }
        // the archived mesh reads the same
        let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&m).unwrap();
        let a =
            rkyv::access::<kiln_formats::tri_mesh::ArchivedTriMesh, rkyv::rancor::Error>(&bytes)
                .unwrap();
        for l in 0..100usize {
            assert_eq!(a.corners(l), quads[l], "leaf {l}");
            assert_eq!(a.source_id(l, 0), ids[l][0], "leaf {l}");
        }
    }

    /// Corners more than an `i16` apart get copies at the end of the list;
    /// a copy far from its run's other corners is listed.
    #[test]
    fn a_leaf_with_far_corners_gets_copies_and_is_listed_when_out_of_its_window() {
        let mut vertices = vec![[0.0f32; 3]; 80_000];
        vertices[70_000] = [1.0, 2.0, 3.0];
        let quads = [[10, 11, 12, 13], [20, 21, 70_000, 22]];
        let p = place(vertices, &quads, &[[0, 1], [2, 3]], &[0, 0]);
        assert_eq!(p.vertices.len(), 80_004);
        assert_eq!(p.vertices[80_002], [1.0, 2.0, 3.0]);
        assert_eq!(p.listed_corners, vec![[1, 80_000]]);
        let m = mesh(p);
        assert_eq!(m.corners(1), [80_000, 80_001, 80_002, 80_003]);
        assert_eq!(m.corners(0), quads[0]);
    }
}
