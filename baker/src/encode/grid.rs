//! Vertex grids: which axes of a mesh's vertices can be stored as 16-bit
//! steps and still decode to exactly the same f32 (see
//! [`kiln_formats::vertices`]).
//!
//! The guess is cheap and the check is exact: the origin is the axis'
//! smallest coordinate and the step the smallest gap between distinct
//! coordinates in a sample (the list's first vertices, and some spread
//! over it); [`Vertices::pack`] then tests
//! every coordinate bitwise and keeps the axis in f32 if one would not
//! come back. A guessed step that is a multiple of the true one just
//! fails the check, so the guess can only cost bytes, never exactness.

use kiln_formats::vertices::{Axis, MAX_STEPS, Vertices};

/// Coordinates sampled per axis to guess its step.
const SAMPLE: usize = 4096;

/// `points` packed with every axis that fits a grid stored on it.
pub fn pack(points: &[[f32; 3]]) -> Vertices {
    // (`f32::min`/`max` skip a NaN, which then fails the exact check)
    let (lo, hi) = super::bounds(points);
    Vertices::pack(
        points,
        std::array::from_fn(|k| guess(points, k, lo[k], hi[k])),
    )
}

/// The grid axis `k` of `points` (coordinates from `lo` to `hi`) most
/// likely lies on, if its range is finite and spans at most
/// [`MAX_STEPS`] steps.
fn guess(points: &[[f32; 3]], k: usize, lo: f32, hi: f32) -> Option<Axis> {
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    // half the sample from the start of the list, where a mesh's vertices
    // are neighbours (numbered by first use), half spread over it: a
    // spread sample alone can miss every odd step of a grid whose rows its
    // stride divides
    let every = points.len().div_ceil(SAMPLE / 2).max(1);
    let mut sample: Vec<f32> = (points.iter().take(SAMPLE / 2))
        .chain(points.iter().step_by(every))
        .map(|p| p[k])
        .collect();
    sample.sort_unstable_by(f32::total_cmp);
    let gap = sample
        .windows(2)
        .map(|w| f64::from(w[1]) - f64::from(w[0]))
        .filter(|&d| d > 0.0)
        .fold(f64::INFINITY, f64::min);
    // a constant axis: any step gives back the origin
    let step = if gap.is_finite() { gap as f32 } else { 1.0 };
    let span = (f64::from(hi) - f64::from(lo)) / f64::from(step);
    (step > 0.0 && span <= f64::from(MAX_STEPS)).then_some(Axis { origin: lo, step })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heightfield: x and z whole metres, y arbitrary. The grid axes are
    /// found, y stays f32, and every coordinate comes back bit for bit.
    #[test]
    fn a_heightfield_stores_its_plan_axes_on_grids() {
        let n = 300u32;
        let points: Vec<[f32; 3]> = (0..n * n)
            .map(|i| {
                let (x, z) = (i % n, i / n);
                [
                    x as f32 - 150.0,
                    (x as f32 * 0.37).sin() * (z as f32 * 0.11).cos() * 12.5,
                    z as f32 * 0.5,
                ]
            })
            .collect();
        let v = pack(&points);
        assert!(v.axes[0].on_grid() && v.axes[2].on_grid() && !v.axes[1].on_grid());
        assert_eq!(v.stride(), 8);
        let back: Vec<_> = v.iter().collect();
        assert!(
            back.iter()
                .zip(&points)
                .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits))
        );
    }

    /// Axes a grid cannot hold keep their f32: too many steps, a constant
    /// negative zero, non-finite input, an empty list.
    #[test]
    fn axes_without_a_grid_keep_their_floats() {
        let wide: Vec<[f32; 3]> = (0..70_000).map(|i| [i as f32, -0.0, 1.0]).collect();
        let v = pack(&wide);
        assert!(!v.axes[0].on_grid() && !v.axes[1].on_grid() && v.axes[2].on_grid());
        assert!(
            v.iter()
                .zip(&wide)
                .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits))
        );
        let mut odd = wide[..10].to_vec();
        odd[4][2] = f32::INFINITY;
        assert!(!pack(&odd).axes[2].on_grid());
        assert!(pack(&[]).is_empty());
    }
}
