//! The top-level tree over placed colliders' world boxes.

use super::{BuiltCollider, Placed};
use crate::geom::sah::{self, BinNode};
use glam::{DAffine3, DVec3};
use rayon::prelude::*;

/// Builds the tree over `placed`; returns the placements' leaf order
/// (indices into `placed`) and the nodes.
pub fn build(placed: &[Placed], colliders: &[BuiltCollider]) -> (Vec<usize>, Vec<BinNode>) {
    let (order, nodes) = sah::build_boxes(
        placed
            .par_iter()
            .map(|p| world_box(&colliders[p.collider].hull_points(), &p.transform)),
    );
    (order.iter().map(|&i| i as usize).collect(), nodes)
}

/// The world box of points under a transform, from every point (tight even
/// under rotation), widened by a few ulps of its magnitude so that the f32
/// transforms the runtime uses can never put geometry outside it.
fn world_box(points: &[[f32; 3]], xf: &DAffine3) -> ([f32; 3], [f32; 3]) {
    let mut min = DVec3::splat(f64::INFINITY);
    let mut max = DVec3::splat(f64::NEG_INFINITY);
    for v in points {
        let p = xf.transform_point3(DVec3::from(v.map(f64::from)));
        min = min.min(p);
        max = max.max(p);
    }
    let pad = (min.abs().max(max.abs()).max_element() + (max - min).max_element()) * 1e-6;
    let lo = (min - DVec3::splat(pad)).to_array().map(|v| v as f32);
    let hi = (max + DVec3::splat(pad)).to_array().map(|v| v as f32);
    (lo, hi)
}
