//! Welding by exact position: every step that looks for shared edges
//! (classification's closedness test, the concave collider, the triangle
//! tree's quad pairing) starts from a welded mesh.

use crate::scene::SceneMesh;
use kiln_geometry::cache::prefetch;
use rayon::prelude::*;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

/// A mesh welded by exact position, unused vertices dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeldedMesh {
    /// Source mesh name.
    pub name: String,
    /// Unique vertex positions.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as indices into `vertices` (source order).
    pub triangles: Vec<[u32; 3]>,
    /// Source triangle id of each triangle.
    pub source_ids: Vec<u32>,
}

/// Every mesh of a scene welded, in parallel (one result per mesh, in order).
pub fn weld_all(scene: &crate::scene::Scene) -> Vec<WeldedMesh> {
    scene.meshes.par_iter().map(weld).collect()
}

/// Welds `mesh` by position.
pub fn weld(mesh: &SceneMesh) -> WeldedMesh {
    let (vertices, triangles) = weld_positions(&mesh.positions, &mesh.triangles);
    WeldedMesh {
        name: mesh.name.clone(),
        vertices,
        triangles,
        source_ids: mesh.source_ids.clone(),
    }
}

/// Welded vertices and the triangles over them.
type Welded = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// Merges vertices with bit-identical positions (after mapping -0.0 to 0.0)
/// and drops unused ones. Welded vertices are numbered in order of first
/// use by the triangles: the numbering meshoptimizer's
/// `generateVertexRemap` gives (the tests hold this to it). That call is
/// one serial hash pass, a tenth of a large mesh's bake, so the same
/// numbering is found here mostly on the thread pool: equal positions
/// meet in a radix sort by hash ([`representatives`]), and first uses are
/// found chunk by chunk of the index buffer in parallel, then merged in
/// chunk order. A small triangle soup on few threads takes one hash pass
/// instead ([`one_pass_pays`]): the same numbering either way.
fn weld_positions(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Welded {
    if triangles.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let canon = |p: &[f32; 3]| p.map(|c| if c == 0.0 { 0.0 } else { c });
    if one_pass_pays(
        positions.len(),
        triangles.len(),
        rayon::current_num_threads(),
    ) && let Some(welded) = weld_in_one_pass(positions, triangles, canon, table_hash)
    {
        return welded;
    }
    weld_sorted(positions, triangles, canon)
}

/// [`weld_positions`] by the radix sort: equal positions found by
/// [`representatives`], their first uses chunk by chunk of the index
/// buffer on the pool, merged in chunk order.
fn weld_sorted(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    canon: impl Fn(&[f32; 3]) -> [f32; 3] + Sync,
) -> Welded {
    let rep = representatives(positions, &canon);
    // the first uses of representatives, chunk by chunk, in index order
    let indices = triangles.as_flattened();
    const CHUNK: usize = 1 << 16;
    let firsts: Vec<Vec<u32>> = indices
        .par_chunks(CHUNK)
        .map_init(
            // one bitmap per worker, cleared after each chunk by the bits
            // it set (not zeroed whole: a chunk meets few vertices)
            || vec![0u64; rep.len().div_ceil(64)],
            |seen, chunk| {
                let mut firsts = Vec::new();
                for &i in chunk {
                    let r = rep[i as usize];
                    let (word, bit) = (r as usize / 64, 1u64 << (r % 64));
                    if seen[word] & bit == 0 {
                        seen[word] |= bit;
                        firsts.push(r);
                    }
                }
                for &r in &firsts {
                    seen[r as usize / 64] = 0;
                }
                firsts
            },
        )
        .collect();
    // numbered in chunk order: a representative's number is its first
    // use over the whole buffer
    let mut number = vec![u32::MAX; positions.len()];
    let mut vertices = Vec::new();
    for &r in firsts.iter().flatten() {
        if number[r as usize] == u32::MAX {
            number[r as usize] = vertices.len() as u32;
            vertices.push(canon(&positions[r as usize]));
        }
    }
    let tris = triangles
        .par_iter()
        .map(|t| t.map(|v| number[rep[v as usize] as usize]))
        .collect();
    (vertices, tris)
}

/// Whether [`weld_in_one_pass`] beats the sort on `threads` threads: for
/// a triangle soup (about a position a corner: the sort then sorts every
/// corner) whose table stays in a core's cache, where the sort runs on one
/// thread anyway (below [`PARALLEL_SORT`] positions) or on two at most.
/// Measured on sauer_pandora (182k corners, each its own position; 35,780
/// welded): the sort 5.3 ms on one thread and 3.4 on two, the one pass
/// 2.2–3.0. Where positions are shared (the 240k-triangle city, 718k
/// corners over 182k positions) the one pass took 12.8 ms against the
/// sort's 7.2 on one thread, and on the 2.1M-triangle terrain, its table
/// past the cache, 165 ms against 57.
fn one_pass_pays(positions: usize, triangles: usize, threads: usize) -> bool {
    let corners = 3 * triangles;
    corners <= 2 * positions
        && positions.min(corners) <= ONE_PASS_MOST
        && (threads <= 2 || positions < PARALLEL_SORT)
}

/// Most corners (or positions) [`weld_in_one_pass`] is used for.
const ONE_PASS_MOST: usize = 1 << 18;

/// [`weld_positions`] in one pass over the index buffer in order, each
/// position looked up in an open-addressing table (linear probing, Knuth,
/// TAOCP vol. 3, 6.4) of the welded vertices so far, and numbered when
/// first met: meshoptimizer's own method, and the same numbering as the
/// sort-based weld (the tests hold the two to each other); see
/// [`one_pass_pays`] for where it beats the sort. `None` when the probes
/// pass a budget linear in the corners: positions crafted to collide on
/// the hash then go to the sort, which stays linear (see
/// [`SCAN_DISTINCT`]).
fn weld_in_one_pass(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    canon: impl Fn(&[f32; 3]) -> [f32; 3],
    hash: impl Fn(&[u32; 3]) -> u32,
) -> Option<Welded> {
    let corners = 3 * triangles.len();
    // kept at most half full, doubled when it would fill past that: it
    // starts at a quarter of the corners (a closed mesh has about half as
    // many vertices as triangles), so its probes stay in cache
    let mut slots = (positions.len().min(corners) / 4)
        .next_power_of_two()
        .max(16);
    // a slot holds a welded vertex's number plus one (zero: empty), so
    // the table starts as zeroed pages
    let mut table = vec![0u32; slots];
    let mut vertices: Vec<[f32; 3]> = Vec::new();
    let mut budget = 8 * corners + 64;
    let bits = |p: &[f32; 3]| p.map(f32::to_bits);
    let indices = triangles.as_flattened();
    let mut out: Vec<u32> = Vec::with_capacity(corners);
    // each corner's hash taken AHEAD corners early, and its slot's line
    // asked for then: the table's and the vertices' lines are the wait
    const AHEAD: usize = 16;
    let key = |v: u32| bits(&canon(&positions[v as usize]));
    let mut ring = [0u32; AHEAD];
    for (k, &v) in indices.iter().enumerate().take(AHEAD) {
        ring[k] = hash(&key(v));
    }
    for k in 0..corners {
        let b = key(indices[k]);
        let h = ring[k % AHEAD];
        if let Some(&w) = indices.get(k + AHEAD) {
            let hw = hash(&key(w));
            ring[k % AHEAD] = hw;
            prefetch(&table[hw as usize & (slots - 1)]);
        }
        let mut s = h as usize & (slots - 1);
        let found = loop {
            let e = table[s];
            if e == 0 {
                break None;
            }
            if bits(&vertices[e as usize - 1]) == b {
                break Some(e - 1);
            }
            budget = budget.checked_sub(1)?;
            s = (s + 1) & (slots - 1);
        };
        if let Some(n) = found {
            out.push(n);
            continue;
        }
        let n = vertices.len() as u32;
        out.push(n);
        vertices.push(canon(&positions[indices[k] as usize]));
        if 2 * vertices.len() <= slots {
            table[s] = n + 1;
            continue;
        }
        // twice the slots, every vertex placed again (this one too)
        slots *= 2;
        table = vec![0u32; slots];
        for (n, w) in vertices.iter().enumerate() {
            let mut s = hash(&bits(w)) as usize & (slots - 1);
            while table[s] != 0 {
                budget = budget.checked_sub(1)?;
                s = (s + 1) & (slots - 1);
            }
            table[s] = n as u32 + 1;
        }
    }
    let tris = out.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    Some((vertices, tris))
}

/// For each vertex, the lowest index of a vertex with bit-identical
/// canonical position. Positions are grouped by a 32-bit hash of their
/// bits: `(hash << 32) | index` keys are sorted by hash with a stable
/// radix sort (so each run of equal hashes stays in index order), and in
/// each run the first vertex of every distinct position is its lowest
/// index. A comparison sort of `(x, y, z, index)` as `u128`s did the same
/// at 120 instructions a vertex, a seventh of sauer_pandora's bake.
fn representatives(
    positions: &[[f32; 3]],
    canon: impl Fn(&[f32; 3]) -> [f32; 3] + Sync,
) -> Vec<u32> {
    representatives_by(positions, canon, hash)
}

/// [`representatives`] with the hash given (the tests give one that
/// collides).
fn representatives_by(
    positions: &[[f32; 3]],
    canon: impl Fn(&[f32; 3]) -> [f32; 3] + Sync,
    hash: impl Fn(&[u32; 3]) -> u32 + Sync,
) -> Vec<u32> {
    let bits: Vec<[u32; 3]> = positions
        .par_iter()
        .map(|p| canon(p).map(f32::to_bits))
        .collect();
    let mut keys: Vec<u64> = bits
        .par_iter()
        .enumerate()
        .map(|(i, b)| u64::from(hash(b)) << 32 | i as u64)
        .collect();
    sort_by_high_half(&mut keys);
    // each vertex its own representative, until a run says otherwise: a
    // run of one (every vertex of an indexed mesh) is then not touched, and
    // its scattered reads and writes are not made. Every vertex lies in one
    // run and each run's answers depend on that run alone, so the runs are
    // scanned on the pool, in pieces cut between runs: the stores are
    // relaxed atomics only so that the pieces can share the list (each
    // entry is written by one piece; on one thread the scan had been a
    // tenth of sauer_pandora's bake on two).
    let rep: Vec<AtomicU32> = (0..positions.len() as u32)
        .into_par_iter()
        .map(AtomicU32::new)
        .collect();
    let scan = |keys: &[u64]| {
        // the distinct positions met so far in the current run (almost
        // always one: a collision of the hash adds a second)
        let mut distinct: Vec<u32> = Vec::new();
        for run in keys.chunk_by(|a, b| a >> 32 == b >> 32) {
            if run.len() == 1 {
                continue;
            }
            distinct.clear();
            let mut scanned = true;
            for &k in run {
                let i = k as u32;
                let b = &bits[i as usize];
                let r = match distinct.iter().find(|&&d| bits[d as usize] == *b) {
                    Some(&d) => d,
                    None if distinct.len() == SCAN_DISTINCT => {
                        scanned = false;
                        break;
                    }
                    None => {
                        distinct.push(i);
                        i
                    }
                };
                rep[i as usize].store(r, Relaxed);
            }
            if !scanned {
                represent_sorted(run, &bits, &rep);
            }
        }
    };
    if keys.len() < PARALLEL_SORT {
        scan(&keys);
    } else {
        between_runs(&keys, rayon::current_num_threads() * 4)
            .par_iter()
            .for_each(|piece| scan(piece));
    }
    // in place (the standard library's collect of a mapped `into_iter`
    // keeps the allocation): a new list, and the old one's release, had
    // cost the 2.1M terrain's bake 25-50 ms on one thread in page faults
    rep.into_iter().map(AtomicU32::into_inner).collect()
}

/// `keys` (sorted by their high halves) cut into about `pieces` pieces,
/// each cut between two runs of equal high halves.
fn between_runs(keys: &[u64], pieces: usize) -> Vec<&[u64]> {
    let per = keys.len().div_ceil(pieces.max(1)).max(1);
    let mut out = Vec::with_capacity(pieces + 1);
    let mut rest = keys;
    while rest.len() > per {
        // the first cut at or past `per` that starts a new run
        let high = rest[per - 1] >> 32;
        let cut = per + rest[per..].iter().take_while(|&&k| k >> 32 == high).count();
        let (piece, tail) = rest.split_at(cut);
        out.push(piece);
        rest = tail;
    }
    out.push(rest);
    out
}

/// Most distinct positions a run of equal hashes is scanned for: a run
/// with more (colliding positions: rare by chance, but a crafted input
/// can collide on purpose) is sorted instead, so no input makes the weld
/// quadratic.
const SCAN_DISTINCT: usize = 16;

/// The representatives of a run of keys, by a sort of its positions' bits
/// then indices: each run of equal bits starts at its lowest index.
fn represent_sorted(run: &[u64], bits: &[[u32; 3]], rep: &[AtomicU32]) {
    let mut keyed: Vec<u128> = run
        .iter()
        .map(|&k| {
            let i = k as u32;
            let [x, y, z] = bits[i as usize];
            u128::from(x) << 96 | u128::from(y) << 64 | u128::from(z) << 32 | u128::from(i)
        })
        .collect();
    keyed.sort_unstable();
    for same in keyed.chunk_by(|a, b| a >> 32 == b >> 32) {
        let first = same[0] as u32;
        for &k in same {
            rep[k as u32 as usize].store(first, Relaxed);
        }
    }
}

/// A 32-bit hash of a position's bits (the multiply-xorshift finaliser of
/// MurmurHash3, Appleby 2008, over a multiplicative mix of the three
/// words). Equal bits hash equal; a collision only costs a comparison.
#[inline]
fn hash(b: &[u32; 3]) -> u32 {
    let mut h = b[0].wrapping_mul(0x9E37_79B1)
        ^ b[1].wrapping_mul(0x85EB_CA77)
        ^ b[2].wrapping_mul(0xC2B2_AE3D);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// The one-pass weld's hash of a position's bits: the three words mixed
/// through 64-bit multiplies, then the MurmurHash3 64-bit finaliser
/// (Appleby 2008). [`hash`]'s 32-bit mix let grid-aligned positions
/// crowd together in a linear-probing table (two extra probes a corner on
/// sauer_pandora, a quarter-full table); this one spreads them.
#[inline]
fn table_hash(b: &[u32; 3]) -> u32 {
    let mut h = (u64::from(b[0]) << 32 | u64::from(b[1])).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(b[2]).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    (h ^ h >> 33) as u32
}

/// Sorts `keys` by their high 32 bits, stably: a least-significant-digit
/// radix sort in three passes of 11, 11 and 10 bits, each a count, then a
/// scatter into the other buffer. A large input is cut into one piece per
/// thread: each piece counts its digits, and then scatters into its own
/// stretch of each digit's bucket (the pieces' stretches follow in piece
/// order, so equal digits keep their order and the result is the one
/// stable sort, on any number of threads). The 2.1M terrain's sort: 19–38
/// ms on one thread (a noisy VM), 13–18 on two.
fn sort_by_high_half(keys: &mut Vec<u64>) {
    let pieces = if keys.len() >= PARALLEL_SORT {
        rayon::current_num_threads().clamp(1, 64)
    } else {
        1
    };
    let per = keys.len().div_ceil(pieces).max(1);
    let mut other = vec![0u64; keys.len()];
    for (shift, width) in [(32, 11), (43, 11), (54, 10)] {
        let mask = (1u64 << width) - 1;
        let digit = |k: u64| ((k >> shift) & mask) as usize;
        let count = |piece: &[u64]| {
            let mut n = vec![0usize; 1 << width];
            for &k in piece {
                n[digit(k)] += 1;
            }
            n
        };
        if pieces == 1 {
            // one piece: the bucket starts index the whole buffer (the
            // pieces' form below, run as one piece, took 6% more of the
            // weld's instructions: a stretch's slice is read before each
            // store)
            let mut start = count(keys);
            let mut sum = 0;
            for s in start.iter_mut() {
                (*s, sum) = (sum, sum + *s);
            }
            for &k in keys.iter() {
                let d = digit(k);
                other[start[d]] = k;
                start[d] += 1;
            }
            std::mem::swap(keys, &mut other);
            continue;
        }
        let counts: Vec<Vec<usize>> = keys.par_chunks(per).map(count).collect();
        // each piece's stretch of each bucket: buckets in digit order,
        // within a bucket the pieces in order
        let mut stretches: Vec<Vec<&mut [u64]>> = counts
            .iter()
            .map(|_| Vec::with_capacity(1 << width))
            .collect();
        let mut rest = other.as_mut_slice();
        for d in 0..1 << width {
            for (piece, n) in counts.iter().enumerate() {
                let (stretch, tail) = std::mem::take(&mut rest).split_at_mut(n[d]);
                stretches[piece].push(stretch);
                rest = tail;
            }
        }
        keys.par_chunks(per)
            .zip(stretches)
            .for_each(|(piece, mut to)| {
                let mut at = vec![0usize; 1 << width];
                for &k in piece {
                    let d = digit(k);
                    to[d][at[d]] = k;
                    at[d] += 1;
                }
            });
        std::mem::swap(keys, &mut other);
    }
}

/// From this many keys, [`sort_by_high_half`] runs on the pool.
const PARALLEL_SORT: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    /// meshoptimizer's weld, which this one must match exactly.
    fn meshopt_weld(
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
    ) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        let canon: Vec<[f32; 3]> = positions
            .iter()
            .map(|p| p.map(|c| if c == 0.0 { 0.0 } else { c }))
            .collect();
        let (count, remap) = meshopt::generate_vertex_remap(&canon, Some(triangles.as_flattened()));
        let vertices = meshopt::remap_vertex_buffer(&canon, count, &remap);
        let tris = triangles
            .iter()
            .map(|t| t.map(|v| remap[v as usize]))
            .collect();
        (vertices, tris)
    }

    /// `n_pos` positions from a few values a coordinate (so positions
    /// repeat): -0.0 beside 0.0, NaNs with two payloads, an infinity, a
    /// denormal; `n_tri` triangles over the first 90% of them (the rest
    /// stay unused).
    fn random_mesh(
        next: &mut impl FnMut() -> u64,
        n_pos: usize,
        n_tri: usize,
    ) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        let values = [
            0.0,
            -0.0,
            1.0,
            -2.5,
            f32::NAN,
            f32::from_bits(0x7fc0_0001),
            f32::INFINITY,
            1e-40,
        ];
        let positions = (0..n_pos)
            .map(|_| [0; 3].map(|_| values[(next() % values.len() as u64) as usize]))
            .collect();
        let used = (n_pos * 9 / 10).max(1) as u64;
        let triangles = (0..n_tri)
            .map(|_| [0; 3].map(|_| (next() % used) as u32))
            .collect();
        (positions, triangles)
    }

    fn bits(v: &[[f32; 3]]) -> Vec<[u32; 3]> {
        v.iter().map(|p| p.map(f32::to_bits)).collect()
    }

    #[test]
    fn hash_collisions_keep_distinct_positions_apart() {
        // positions from five values a coordinate (four once -0.0 is 0.0:
        // 64 positions), many repeated; with hashes that collide, the
        // representatives must still be each position's lowest index,
        // whether a run is scanned (at most 16 positions) or sorted, and
        // whether the runs are scanned on one thread or in pieces on the
        // pool (past `PARALLEL_SORT` vertices)
        let values = [0.0f32, 1.0, -0.0, 2.0, -3.5];
        let positions: Vec<[f32; 3]> = (0..70_000usize)
            .map(|i| [i % 5, i / 5 % 5, i * 7 % 5].map(|k| values[k]))
            .collect();
        let canon = |p: &[f32; 3]| p.map(|c| if c == 0.0 { 0.0 } else { c });
        let plain: Vec<u32> = (0..positions.len())
            .map(|i| {
                let b = canon(&positions[i]).map(f32::to_bits);
                (0..=i)
                    .find(|&j| canon(&positions[j]).map(f32::to_bits) == b)
                    .unwrap() as u32
            })
            .collect();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            pool.unwrap().install(|| {
                for n in [2_000, positions.len()] {
                    let (positions, plain) = (&positions[..n], &plain[..n]);
                    let on = format!("{n} positions, {threads} threads");
                    assert_eq!(representatives(positions, canon), plain, "{on}");
                    // one run of 64 positions: sorted
                    assert_eq!(representatives_by(positions, canon, |_| 0), plain, "{on}");
                    // a run per x value, 16 positions each: scanned
                    assert_eq!(
                        representatives_by(positions, canon, |b| b[0]),
                        plain,
                        "{on}"
                    );
                    // two runs of 32 positions: sorted, in two pieces
                    let two = representatives_by(positions, canon, |b| b[0] & 1);
                    assert_eq!(two, plain, "{on}");
                    // and more than one radix digit's worth of hashes
                    let mixed = |b: &[u32; 3]| b[1].wrapping_mul(0x0101_0101) ^ b[2];
                    assert_eq!(representatives_by(positions, canon, mixed), plain, "{on}");
                }
            });
        }
    }

    #[test]
    fn pieces_are_cut_between_runs_and_cover_the_keys() {
        // runs of 1 to 40 equal high halves
        let mut keys = Vec::new();
        for run in 0..500u64 {
            keys.extend((0..1 + run * 7 % 40).map(|i| run << 32 | i));
        }
        for pieces in [1, 2, 3, 8, 64, 10_000] {
            let cut = between_runs(&keys, pieces);
            assert_eq!(cut.concat(), keys, "{pieces} pieces");
            for w in cut.windows(2) {
                if let (Some(a), Some(b)) = (w[0].last(), w[1].first()) {
                    assert_ne!(a >> 32, b >> 32, "a run cut in two ({pieces} pieces)");
                }
            }
            assert!(cut.len() <= pieces + 1, "{} pieces for {pieces}", cut.len());
        }
    }

    #[test]
    fn the_radix_sort_is_the_stable_sort_on_any_thread_count() {
        // high halves from a few thousand values, so many keys tie and
        // only a stable sort keeps their low halves in input order
        let mut rng = kiln_geometry::rng::Rng::new(0x2545_F491);
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| (rng.next_u64() % 5_000).wrapping_mul(0x9E37_79B9) << 32 | i)
            .collect();
        let mut want = keys.clone();
        want.sort_by_key(|k| k >> 32);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            let mut got = keys.clone();
            pool.unwrap().install(|| sort_by_high_half(&mut got));
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn the_one_pass_weld_numbers_vertices_as_meshoptimizer_does() {
        let mut rng = kiln_geometry::rng::Rng::new(0x2545_F491);
        let mut next = move || rng.next_u64();
        let canon = |p: &[f32; 3]| p.map(|c| if c == 0.0 { 0.0 } else { c });
        // -0.0 against 0.0, two NaN payloads, infinities, a denormal; a
        // soup (a position a corner) and shared positions, unused ones,
        // tables that must grow
        for (n_pos, n_tri) in [(3, 1), (300, 100), (30_000, 10_000), (9_000, 20_000)] {
            let (positions, triangles) = random_mesh(&mut next, n_pos, n_tri);
            let on = format!("{n_pos} positions, {n_tri} triangles");
            let want = meshopt_weld(&positions, &triangles);
            let (v, t) = weld_in_one_pass(&positions, &triangles, canon, table_hash).expect(&on);
            assert_eq!((bits(&v), t), (bits(&want.0), want.1.clone()), "{on}");
            // hashes that collide: still the same numbering, or, past the
            // probe budget, no answer (the sort then welds)
            for collide in [|b: &[u32; 3]| b[0], |_: &[u32; 3]| 7] {
                if let Some((v, t)) = weld_in_one_pass(&positions, &triangles, canon, collide) {
                    assert_eq!((bits(&v), t), (bits(&want.0), want.1.clone()), "{on}");
                }
            }
        }
        // many distinct positions on one hash: over the budget, not
        // quadratic
        let positions: Vec<[f32; 3]> = (0..30_000).map(|i| [i as f32, 0.5, 2.0]).collect();
        let triangles: Vec<[u32; 3]> = (0..10_000).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect();
        assert!(weld_in_one_pass(&positions, &triangles, canon, |_| 7).is_none());
        let (v, t) = weld_in_one_pass(&positions, &triangles, canon, table_hash).unwrap();
        assert_eq!((v.len(), t.len()), (30_000, 10_000));
        // and the weld itself, on one thread, where the one pass is taken
        assert!(one_pass_pays(positions.len(), triangles.len(), 1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let one = pool.install(|| weld_positions(&positions, &triangles));
        assert_eq!(one, meshopt_weld(&positions, &triangles));
    }

    #[test]
    fn the_parallel_weld_numbers_vertices_as_meshoptimizer_does() {
        let mut rng = kiln_geometry::rng::Rng::new(0x9E37_79B9);
        let mut next = move || rng.next_u64();
        let canon = |p: &[f32; 3]| p.map(|c| if c == 0.0 { 0.0 } else { c });
        // few distinct values, so positions repeat; unused vertices; more
        // triangles than one chunk of the index buffer. The sort itself on
        // 1 to 3 threads (the weld takes the one pass for some of these:
        // the soups on few threads), and the weld whichever way it goes
        for (n_pos, n_tri) in [(3, 1), (50, 40), (2_000, 30_000), (70_000, 25_000)] {
            let (positions, triangles) = random_mesh(&mut next, n_pos, n_tri);
            let (mv, mt) = meshopt_weld(&positions, &triangles);
            let want = (bits(&mv), mt);
            for threads in [1, 2, 3] {
                let on = format!("{n_pos} positions, {n_tri} triangles, {threads} threads");
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                pool.unwrap().install(|| {
                    let (v, t) = weld_sorted(&positions, &triangles, canon);
                    assert_eq!((bits(&v), t), want, "the sort, {on}");
                    let (v, t) = weld_positions(&positions, &triangles);
                    assert_eq!((bits(&v), t), want, "the weld, {on}");
                });
            }
        }
    }
}
