//! Level-wide queries, one file per operation: the top-level tree picks
//! the instances, their shapes answer (`shape`).

mod filter;
mod point;
mod raycast;
mod shape;
mod sphere;

pub use filter::Filter;
pub use raycast::{Ray, RayHit};
pub(crate) use shape::Probe;
pub use shape::{CastOptions, ConvexHull, HullError, Pose, QueryShape, ShapeHit, ShapeOverlap};
pub(crate) use sphere::Sweep;

use rayon::prelude::*;

/// Answers `queries[i]` into `out[i]` on the rayon pool: the shared body of
/// every `*_batch` method.
///
/// # Panics
/// If the slices differ in length.
pub(crate) fn batch<Q: Sync, R: Send>(
    queries: &[Q],
    out: &mut [R],
    min_len: usize,
    answer: impl Fn(&Q, &mut R) + Sync + Send,
) {
    assert_eq!(queries.len(), out.len(), "one output slot per query");
    queries
        .par_iter()
        .zip(out.par_iter_mut())
        .with_min_len(min_len)
        .for_each(|(q, o)| answer(q, o));
}
