//! The one tree walker: front-to-back ray traversal of a depth-first node
//! array, with a visitor for leaves. The visitor shrinks the ray's range as
//! it finds hits (closest hit) or stops the walk (any hit).
//!
//! Safety of the walk rests on `kiln_formats::verify`: every `end` is after
//! its node and inside its parent's range, and no tree is deeper than
//! `MAX_DEPTH`, so indices stay in bounds, every step moves forward, and the
//! fixed stack cannot overflow.

use crate::query::ray_box::SlabRay;
use glam::{Vec3, Vec3A};
use kiln_formats::level::{ArchivedNode, MAX_DEPTH};

/// What the walker asks of a visitor.
pub(crate) trait RayVisitor {
    /// Current far end of the ray (shrinks as hits are found).
    fn t_max(&self) -> f32;
    /// Visits a leaf's payload; returns `true` to stop the walk.
    fn leaf(&mut self, data: u32) -> bool;
}

#[inline]
fn vec(v: &[rkyv::rend::f32_le; 3]) -> Vec3 {
    Vec3::new(v[0].to_native(), v[1].to_native(), v[2].to_native())
}

/// Walks `nodes` along `ray`, front to back: at each inner node both
/// children are tested and the nearer hit (by entry distance) is entered
/// first while the farther waits on the stack with its entry distance, so
/// it is dropped unseen once a closer hit shrinks the range. Every box is
/// grown by `inflate` on each side first: zero for rays, a sphere's extent
/// for sweeps (a ray cast against the Minkowski sum, seed 002).
#[inline]
pub(crate) fn walk_ray<V: RayVisitor>(
    nodes: &[ArchivedNode],
    ray: &SlabRay,
    inflate: Vec3,
    v: &mut V,
) {
    let hit =
        |n: &ArchivedNode, t_max: f32| ray.hit(vec(&n.min) - inflate, vec(&n.max) + inflate, t_max);
    let Some(root) = nodes.first() else { return };
    if hit(root, v.t_max()).is_none() {
        return;
    }
    let mut stack = [(0u32, 0f32); MAX_DEPTH];
    let mut sp = 0usize;
    let mut i = 0usize;
    loop {
        let node = &nodes[i];
        let end = node.end.to_native() as usize;
        if end == i + 1 {
            if v.leaf(node.data.to_native()) {
                return;
            }
        } else {
            let left = i + 1;
            let right = nodes[left].end.to_native() as usize;
            let t_max = v.t_max();
            match (hit(&nodes[left], t_max), hit(&nodes[right], t_max)) {
                (Some(tl), Some(tr)) => {
                    let (near, far, t_far) = if tl <= tr {
                        (left, right, tr)
                    } else {
                        (right, left, tl)
                    };
                    if sp < MAX_DEPTH {
                        stack[sp] = (far as u32, t_far);
                        sp += 1;
                    }
                    i = near;
                    continue;
                }
                (Some(_), None) => {
                    i = left;
                    continue;
                }
                (None, Some(_)) => {
                    i = right;
                    continue;
                }
                (None, None) => {}
            }
        }
        // next waiting subtree still in range
        loop {
            if sp == 0 {
                return;
            }
            sp -= 1;
            let (next, t_entry) = stack[sp];
            if t_entry <= v.t_max() {
                i = next as usize;
                break;
            }
        }
    }
}

/// Visits, in array order, every leaf whose box passes `overlaps`,
/// skipping whole subtrees whose box does not (the sequential skip-count
/// traversal of the source slides). The leaf visitor returns `true` to stop.
#[inline]
pub(crate) fn walk_boxes(
    nodes: &[ArchivedNode],
    overlaps: impl Fn(Vec3A, Vec3A) -> bool,
    mut leaf: impl FnMut(u32) -> bool,
) {
    let mut i = 0usize;
    while i < nodes.len() {
        let node = &nodes[i];
        let end = node.end.to_native() as usize;
        if overlaps(vec3a(&node.min), vec3a(&node.max)) {
            if end == i + 1 && leaf(node.data.to_native()) {
                return;
            }
            i += 1;
        } else {
            i = end;
        }
    }
}

/// [`walk_boxes`] against the box `lo..=hi`.
#[inline]
pub(crate) fn walk_box(nodes: &[ArchivedNode], lo: Vec3, hi: Vec3, leaf: impl FnMut(u32) -> bool) {
    let (lo, hi) = (Vec3A::from(lo), Vec3A::from(hi));
    walk_boxes(
        nodes,
        |min, max| min.cmple(hi).all() && max.cmpge(lo).all(),
        leaf,
    )
}

/// [`walk_boxes`] against the ball of radius `r` around `c` (exact
/// distance from the centre to each box).
#[inline]
pub(crate) fn walk_ball(nodes: &[ArchivedNode], c: Vec3, r: f32, leaf: impl FnMut(u32) -> bool) {
    let c = Vec3A::from(c);
    let r2 = r * r;
    walk_boxes(
        nodes,
        |min, max| c.clamp(min, max).distance_squared(c) <= r2,
        leaf,
    )
}

#[inline]
fn vec3a(v: &[rkyv::rend::f32_le; 3]) -> Vec3A {
    Vec3A::new(v[0].to_native(), v[1].to_native(), v[2].to_native())
}
