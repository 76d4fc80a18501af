//! The second ray peer: obvhs' compressed wide BVH (CWBVH: Ylitie, Karras
//! and Laine, "Efficient Incoherent Ray Traversal on GPUs Through
//! Compressed Wide BVHs", HPG 2017), the fastest pure-Rust ray BVH we know
//! of (avian3d's). Rays only: obvhs answers no shape queries.
//!
//! Built with `BvhBuildParams::medium_build()` (PLOC + reinsertion, no
//! spatial splits, so every triangle is in exactly one leaf) on one thread
//! (the crate's `parallel` feature is off), with the triangles reordered to
//! the leaves' order as obvhs' own examples do, so the leaf test reads them
//! in order. The triangle test is obvhs' `Triangle::intersect` (Möller and
//! Trumbore 1997, not watertight), so a ray through a shared edge may count
//! differently from Kiln's; the bench prints both counts.

use super::common::{Peer, Q};
use super::{BUILD_ROUNDS, LIVE, Row, compare, kiln_rays, kiln_rays_many};
use kiln_runtime::Level;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Build rows (time, bytes per triangle) and the closest-hit and any-hit
/// ray rows against obvhs, on the same rays the parry rows use (`batch`:
/// those rays as Kiln's batch rows take them).
pub fn rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    (pos, tris): (&[[f32; 3]], &[[u32; 3]]),
    qs: &[Q],
    batch: &[kiln_runtime::Ray],
) {
    // best of BUILD_ROUNDS builds, as Kiln's and parry's build rows are
    let (mut ms, mut built) = (f64::INFINITY, None);
    for _ in 0..BUILD_ROUNDS {
        let before = LIVE.load(Ordering::Relaxed);
        let t0 = Instant::now();
        let peer = Peer::build(pos, tris);
        let bytes = (LIVE.load(Ordering::Relaxed) - before) as f64;
        ms = ms.min(t0.elapsed().as_secs_f64() * 1e3);
        built = Some((peer, bytes));
    }
    let (peer, bytes) = built.expect("BUILD_ROUNDS is at least 1");
    // Kiln's 1-thread build (bake + encode + validate) against obvhs'
    let kiln_ms = rows
        .iter()
        .find(|r| r.mesh == name && r.query == "build ms (1 thread)")
        .map_or(f64::NAN, |r| r.kiln);
    rows.push(Row {
        mesh: name.into(),
        query: "build ms (1 thread) vs obvhs CWBVH".into(),
        kiln: kiln_ms,
        parry: ms,
        unit: "ms",
    });
    let kiln_bytes = level.byte_len() as f64 / tris.len() as f64;
    rows.push(Row {
        mesh: name.into(),
        query: "bytes/triangle vs obvhs CWBVH".into(),
        kiln: kiln_bytes,
        parry: bytes / tris.len() as f64,
        unit: "B",
    });
    let obvhs_rays = || qs.iter().filter(|q| peer.hits(q)).count();
    compare(
        rows,
        name,
        "rays/s vs obvhs CWBVH",
        "hits",
        qs.len(),
        || kiln_rays(level, qs, false),
        obvhs_rays,
    );
    let (mut hits, mut anys) = (vec![None; batch.len()], vec![false; batch.len()]);
    compare(
        rows,
        name,
        "rays/s, batch on one thread vs obvhs CWBVH",
        "hits",
        qs.len(),
        || kiln_rays_many(level, batch, false, &mut hits, &mut anys),
        obvhs_rays,
    );
    compare(
        rows,
        name,
        "any-hit rays/s vs obvhs CWBVH",
        "hits",
        qs.len(),
        || kiln_rays(level, qs, true),
        || qs.iter().filter(|q| peer.any(q)).count(),
    );
}
