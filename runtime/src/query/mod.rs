//! Level-wide queries, one file per operation: the top-level tree picks
//! the instances, their colliders answer (`collider`).

mod cast;
mod filter;
mod overlap;
mod point;
mod ray_batch;
mod raycast;
mod sphere;

pub use cast::{CastOptions, ShapeCast, ShapeHit};
pub use filter::Filter;
pub use overlap::ShapeOverlap;
pub use raycast::{Ray, RayHit};

use crate::collider::{ColliderRef, placed};
use crate::instance::Placement;
use crate::level::Level;
use crate::walk::{top_tree, walk_box};
use glam::Vec3;
use rayon::prelude::*;

impl Level {
    /// Calls `visit` with every object `filter` accepts whose box in the
    /// top-level tree meets `lo..=hi` (its index, shape and placement),
    /// until it answers `true`: the walk every overlap, yes/no and point
    /// query shares.
    pub(crate) fn near(
        &self,
        lo: Vec3,
        hi: Vec3,
        filter: &Filter,
        mut visit: impl FnMut(u32, ColliderRef, &Placement) -> bool,
    ) {
        let level = self.archive();
        walk_box(&top_tree(level), lo, hi, |data| {
            let ii = data;
            if !filter.sees(level, ii) {
                return false;
            }
            let (shape, place) = placed(level, ii);
            visit(ii, shape, &place)
        });
    }
}

/// Answers `queries[i]` into `out[i]` on the rayon pool, at least
/// `min_len` queries per task: the shared body of every `*_batch` method
/// that answers one query at a time.
///
/// # Panics
/// If the slices differ in length.
pub(crate) fn batch<Q: Sync, R: Send>(
    queries: &[Q],
    out: &mut [R],
    min_len: usize,
    answer: impl Fn(&Q, &mut R) + Sync + Send,
) {
    batch_chunks(queries, out, min_len, |q, o| {
        q.iter().zip(o).for_each(|(q, o)| answer(q, o))
    });
}

/// Answers `queries` into `out` on the rayon pool, a chunk of `chunk`
/// queries (the last may be shorter) per call of `answer`: for batch
/// methods that answer a chunk together, and [`batch`].
///
/// # Panics
/// If the slices differ in length.
pub(crate) fn batch_chunks<Q: Sync, R: Send>(
    queries: &[Q],
    out: &mut [R],
    chunk: usize,
    answer: impl Fn(&[Q], &mut [R]) + Sync + Send,
) {
    assert_eq!(queries.len(), out.len(), "one output slot per query");
    queries
        .par_chunks(chunk)
        .zip(out.par_chunks_mut(chunk))
        .for_each(|(q, o)| answer(q, o));
}
