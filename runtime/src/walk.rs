//! The tree walkers, over float (top-level) and quantised (mesh) node
//! arrays alike through the [`Tree`] trait: a front-to-back ray walk with a
//! visitor for leaves, which shrinks the ray's range as it finds hits
//! (closest hit) or stops the walk (any hit); and a skip-count walk over
//! the nodes a box or ball touches.
//!
//! Safety of the walk rests on `kiln_formats::verify`: every `end` is after
//! its node and inside its parent's range, and no tree is deeper than
//! `MAX_DEPTH`, so indices stay in bounds, every step moves forward, and the
//! fixed stack cannot overflow.

use crate::query::ray_box::SlabRay;
use glam::{Vec3, Vec3A};
use kiln_formats::level::{ArchivedNode, ArchivedQNode, ArchivedTriMesh, MAX_DEPTH};

/// What the walkers need of a tree: float nodes (the top-level tree) and
/// quantised mesh nodes (decoded on the fly) alike.
pub(crate) trait Tree {
    /// Number of nodes.
    fn len(&self) -> usize;
    /// End of node `i`'s subtree.
    fn end(&self, i: usize) -> usize;
    /// Payload of node `i`.
    fn data(&self, i: usize) -> u32;
    /// Box of node `i`.
    fn bounds(&self, i: usize) -> (Vec3A, Vec3A);
}

impl Tree for [ArchivedNode] {
    #[inline]
    fn len(&self) -> usize {
        <[ArchivedNode]>::len(self)
    }
    #[inline]
    fn end(&self, i: usize) -> usize {
        self[i].end.to_native() as usize
    }
    #[inline]
    fn data(&self, i: usize) -> u32 {
        self[i].data.to_native()
    }
    #[inline]
    fn bounds(&self, i: usize) -> (Vec3A, Vec3A) {
        (vec3a(&self[i].min), vec3a(&self[i].max))
    }
}

/// A mesh's quantised tree with its decoding frame.
pub(crate) struct QTree<'a> {
    nodes: &'a [ArchivedQNode],
    origin: Vec3A,
    scale: Vec3A,
}

impl<'a> QTree<'a> {
    /// The tree of `mesh`.
    #[inline]
    pub(crate) fn of(mesh: &'a ArchivedTriMesh) -> Self {
        QTree {
            nodes: mesh.nodes.as_slice(),
            origin: vec3a(&mesh.origin),
            scale: vec3a(&mesh.scale),
        }
    }
}

impl Tree for QTree<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.nodes.len()
    }
    #[inline]
    fn end(&self, i: usize) -> usize {
        self.nodes[i].end.to_native() as usize
    }
    #[inline]
    fn data(&self, i: usize) -> u32 {
        self.nodes[i].data.to_native()
    }
    #[inline]
    fn bounds(&self, i: usize) -> (Vec3A, Vec3A) {
        // origin + q · scale per lane: the same IEEE operations as
        // `kiln_formats::level::dequantize`, which the baker rounded against
        let n = &self.nodes[i];
        let q = |v: &[rkyv::rend::u16_le; 3]| {
            Vec3A::new(
                f32::from(v[0].to_native()),
                f32::from(v[1].to_native()),
                f32::from(v[2].to_native()),
            )
        };
        (
            self.origin + q(&n.min) * self.scale,
            self.origin + q(&n.max) * self.scale,
        )
    }
}

/// What the walker asks of a visitor.
pub(crate) trait RayVisitor {
    /// Current far end of the ray (shrinks as hits are found).
    fn t_max(&self) -> f32;
    /// Visits a leaf's payload; returns `true` to stop the walk.
    fn leaf(&mut self, data: u32) -> bool;
}

/// Walks `nodes` along `ray`, front to back: at each inner node both
/// children are tested and the nearer hit (by entry distance) is entered
/// first while the farther waits on the stack with its entry distance, so
/// it is dropped unseen once a closer hit shrinks the range. Every box is
/// grown by `inflate` on each side first: zero for rays, a sphere's extent
/// for sweeps (a ray cast against the Minkowski sum, seed 002).
#[inline]
pub(crate) fn walk_ray<T: Tree + ?Sized, V: RayVisitor>(
    nodes: &T,
    ray: &SlabRay,
    inflate: Vec3,
    v: &mut V,
) {
    let inflate = Vec3A::from(inflate);
    let hit = |i: usize, t_max: f32| {
        let (min, max) = nodes.bounds(i);
        ray.hit_a(min - inflate, max + inflate, t_max)
    };
    if nodes.len() == 0 || hit(0, v.t_max()).is_none() {
        return;
    }
    let mut stack = [(0u32, 0f32); MAX_DEPTH];
    let mut sp = 0usize;
    let mut i = 0usize;
    loop {
        let end = nodes.end(i);
        if end == i + 1 {
            if v.leaf(nodes.data(i)) {
                return;
            }
        } else {
            let left = i + 1;
            let right = nodes.end(left);
            let t_max = v.t_max();
            match (hit(left, t_max), hit(right, t_max)) {
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
pub(crate) fn walk_boxes<T: Tree + ?Sized>(
    nodes: &T,
    overlaps: impl Fn(Vec3A, Vec3A) -> bool,
    mut leaf: impl FnMut(u32) -> bool,
) {
    let mut i = 0usize;
    while i < nodes.len() {
        let end = nodes.end(i);
        let (min, max) = nodes.bounds(i);
        if overlaps(min, max) {
            if end == i + 1 && leaf(nodes.data(i)) {
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
pub(crate) fn walk_box<T: Tree + ?Sized>(
    nodes: &T,
    lo: Vec3,
    hi: Vec3,
    leaf: impl FnMut(u32) -> bool,
) {
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
pub(crate) fn walk_ball<T: Tree + ?Sized>(
    nodes: &T,
    c: Vec3,
    r: f32,
    leaf: impl FnMut(u32) -> bool,
) {
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
