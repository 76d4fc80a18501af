//! The tree walkers, written once over the [`Tree`] trait: the top-level
//! tree (float boxes, skip-count array) and mesh trees (both children's
//! quantised boxes or spheres in every inner node, decoded on the fly).
//! A walk carries each node's decoded [`Volume`], because box children are
//! quantised against their parent's box.
//!
//! - [`walk_ray`]: front to back, with a visitor for leaves that shrinks the
//!   ray's range as it finds hits (closest hit) or stops the walk (any hit).
//! - [`walk_overlap`]: every leaf whose volume passes a test (box or ball).
//!
//! Safety of the walk rests on `kiln_formats::verify`: child references are
//! in range and in depth-first order (so every step goes deeper, and the
//! walk ends), and no tree is deeper than `MAX_DEPTH`, so the fixed stacks
//! (one entry per level at most) cannot overflow.

use crate::query::ray_box::SlabRay;
use glam::{Vec3, Vec3A};
use kiln_formats::level::{
    ArchivedBoxNode, ArchivedNode, ArchivedSphereNode, ArchivedTriMesh, BOX_STEPS, LEAF_BIT,
    MAX_DEPTH, TreeKind,
};
use std::mem::MaybeUninit;

/// How much a query grows every volume before testing it (a sphere sweep
/// is a ray against volumes grown by the sphere, seed 002). `ext` and
/// `radius` bound the same shape: per-axis half-extents for boxes, a radius
/// for spheres.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grow {
    /// Per-axis growth of boxes.
    pub ext: Vec3A,
    /// Growth of spheres' radii.
    pub radius: f32,
}

impl Grow {
    /// No growth (rays).
    pub const NONE: Grow = Grow {
        ext: Vec3A::ZERO,
        radius: 0.0,
    };

    /// Growth by a shape inside the box `±ext` (radius: the box's half-diagonal).
    pub fn by_extent(ext: Vec3) -> Grow {
        Grow {
            ext: ext.into(),
            radius: ext.length() * (1.0 + 1e-6),
        }
    }
}

/// A bounding volume a walk can test.
pub(crate) trait Volume: Copy {
    /// Entry distance of `ray` into the volume grown by `grow`, if it meets
    /// it within `[0, t_max]`; never misses a volume the exact ray meets.
    fn ray_entry(&self, ray: &SlabRay, grow: &Grow, t_max: f32) -> Option<f32>;
    /// Whether the ball `c`, `r` may touch the volume (conservative).
    fn touches_ball(&self, c: Vec3A, r: f32) -> bool;
    /// Whether the box `lo..=hi` may touch the volume (conservative).
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool;
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Aabb {
    min: Vec3A,
    max: Vec3A,
}

impl Volume for Aabb {
    #[inline]
    fn ray_entry(&self, ray: &SlabRay, grow: &Grow, t_max: f32) -> Option<f32> {
        ray.hit_a(self.min - grow.ext, self.max + grow.ext, t_max)
    }
    #[inline]
    fn touches_ball(&self, c: Vec3A, r: f32) -> bool {
        c.clamp(self.min, self.max).distance_squared(c) <= r * r
    }
    #[inline]
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool {
        self.min.cmple(hi).all() && self.max.cmpge(lo).all()
    }
}

/// A sphere.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ball {
    c: Vec3A,
    r: f32,
}

impl Ball {
    /// The radius grown by a bound on the f32 rounding of a distance
    /// between this centre and `p` (a few ulps of the coordinates involved).
    #[inline]
    fn slack(&self, p: Vec3A, r: f32) -> f32 {
        r * (1.0 + 1e-6) + 1e-6 * (self.c.abs().max_element() + p.abs().max_element())
    }
}

impl Volume for Ball {
    #[inline]
    fn ray_entry(&self, ray: &SlabRay, grow: &Grow, t_max: f32) -> Option<f32> {
        ray.hit_ball(self.c, self.r + grow.radius, t_max)
    }
    #[inline]
    fn touches_ball(&self, c: Vec3A, r: f32) -> bool {
        let s = self.slack(c, self.r + r);
        self.c.distance_squared(c) <= s * s
    }
    #[inline]
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool {
        let p = self.c.clamp(lo, hi);
        let s = self.slack(p, self.r);
        self.c.distance_squared(p) <= s * s
    }
}

/// What the walkers need of a tree. References are inner-node indices, or
/// [`LEAF_BIT`] | leaf payload.
pub(crate) trait Tree {
    /// The tree's bounding volume.
    type Vol: Volume;
    /// The root reference and volume; `None` for an empty tree.
    fn root(&self) -> Option<(u32, Self::Vol)>;
    /// The children of inner node `node`, whose volume is `vol`.
    fn children(&self, node: u32, vol: &Self::Vol) -> [(u32, Self::Vol); 2];
}

impl Tree for [ArchivedNode] {
    type Vol = Aabb;
    #[inline]
    fn root(&self) -> Option<(u32, Aabb)> {
        (!self.is_empty()).then(|| (top_ref(self, 0), top_box(&self[0])))
    }
    #[inline]
    fn children(&self, node: u32, _: &Aabb) -> [(u32, Aabb); 2] {
        let l = node as usize + 1;
        let r = self[l].end.to_native() as usize;
        [l, r].map(|i| (top_ref(self, i), top_box(&self[i])))
    }
}

#[inline]
fn top_ref(nodes: &[ArchivedNode], i: usize) -> u32 {
    let n = &nodes[i];
    if n.end.to_native() as usize == i + 1 {
        LEAF_BIT | n.data.to_native()
    } else {
        i as u32
    }
}

#[inline]
fn top_box(n: &ArchivedNode) -> Aabb {
    Aabb {
        min: vec3a(&n.min),
        max: vec3a(&n.max),
    }
}

/// A mesh's box tree.
pub(crate) struct BoxTree<'a> {
    nodes: &'a [ArchivedBoxNode],
    root: Option<(u32, Aabb)>,
}

impl Tree for BoxTree<'_> {
    type Vol = Aabb;
    #[inline]
    fn root(&self) -> Option<(u32, Aabb)> {
        self.root
    }
    #[inline]
    fn children(&self, node: u32, vol: &Aabb) -> [(u32, Aabb); 2] {
        // the same IEEE operations, lane by lane, as
        // `kiln_formats::level::{box_step, decode_lo, decode_hi}`, which the
        // baker rounded against
        let n = &self.nodes[node as usize];
        let step = (vol.max - vol.min) * (1.0 / BOX_STEPS);
        let q = |v: &[u8; 3]| Vec3A::new(f32::from(v[0]), f32::from(v[1]), f32::from(v[2]));
        [0, 1].map(|c| {
            (
                n.child[c].to_native(),
                Aabb {
                    min: vol.min + q(&n.lo[c]) * step,
                    max: vol.max - q(&n.hi[c]) * step,
                },
            )
        })
    }
}

/// A mesh's sphere tree with its decoding frame.
pub(crate) struct SphereTree<'a> {
    nodes: &'a [ArchivedSphereNode],
    origin: Vec3A,
    scale: Vec3A,
    radius_scale: f32,
    root: Option<(u32, Ball)>,
}

impl SphereTree<'_> {
    #[inline]
    fn decode(&self, q: &[rkyv::rend::u16_le; 4]) -> Ball {
        // origin + q · scale and q · radius_scale: as
        // `kiln_formats::level::SphereFrame::decode`
        let f = |k: usize| f32::from(q[k].to_native());
        Ball {
            c: self.origin + Vec3A::new(f(0), f(1), f(2)) * self.scale,
            r: f(3) * self.radius_scale,
        }
    }
}

impl Tree for SphereTree<'_> {
    type Vol = Ball;
    #[inline]
    fn root(&self) -> Option<(u32, Ball)> {
        self.root
    }
    #[inline]
    fn children(&self, node: u32, _: &Ball) -> [(u32, Ball); 2] {
        let n = &self.nodes[node as usize];
        [0, 1].map(|c| (n.child[c].to_native(), self.decode(&n.sphere[c])))
    }
}

/// A mesh's tree, whichever kind it is.
pub(crate) enum MeshTree<'a> {
    /// Box nodes.
    Boxes(BoxTree<'a>),
    /// Sphere nodes.
    Spheres(SphereTree<'a>),
}

impl<'a> MeshTree<'a> {
    /// The tree of `mesh` (verified: its kind tag is known).
    #[inline]
    pub(crate) fn of(mesh: &'a ArchivedTriMesh) -> Self {
        let root = mesh.root.to_native();
        let empty = mesh.leaves.is_empty();
        if mesh.kind.to_native() == TreeKind::Sphere.tag() {
            let fr = &mesh.sphere_frame;
            let mut t = SphereTree {
                nodes: mesh.spheres.as_slice(),
                origin: vec3a(&fr.origin),
                scale: vec3a(&fr.scale),
                radius_scale: fr.radius_scale.to_native(),
                root: None,
            };
            if !empty {
                t.root = Some((root, t.decode(&fr.root)));
            }
            MeshTree::Spheres(t)
        } else {
            let vol = Aabb {
                min: vec3a(&mesh.min),
                max: vec3a(&mesh.max),
            };
            MeshTree::Boxes(BoxTree {
                nodes: mesh.boxes.as_slice(),
                root: (!empty).then_some((root, vol)),
            })
        }
    }

    /// [`walk_ray`] on this tree.
    #[inline]
    pub(crate) fn walk_ray<V: RayVisitor>(&self, ray: &SlabRay, grow: &Grow, v: &mut V) {
        match self {
            MeshTree::Boxes(t) => walk_ray(t, ray, grow, v),
            MeshTree::Spheres(t) => walk_ray(t, ray, grow, v),
        }
    }

    /// The leaves whose volume may touch the ball `c`, `r`.
    #[inline]
    pub(crate) fn walk_ball(&self, c: Vec3, r: f32, leaf: impl FnMut(u32) -> bool) {
        let c = Vec3A::from(c);
        match self {
            MeshTree::Boxes(t) => walk_overlap(t, |v| v.touches_ball(c, r), leaf),
            MeshTree::Spheres(t) => walk_overlap(t, |v| v.touches_ball(c, r), leaf),
        }
    }

    /// The leaves whose volume may touch the box `lo..=hi`.
    #[inline]
    pub(crate) fn walk_box(&self, lo: Vec3, hi: Vec3, leaf: impl FnMut(u32) -> bool) {
        let (lo, hi) = (Vec3A::from(lo), Vec3A::from(hi));
        match self {
            MeshTree::Boxes(t) => walk_overlap(t, |v| v.touches_box(lo, hi), leaf),
            MeshTree::Spheres(t) => walk_overlap(t, |v| v.touches_box(lo, hi), leaf),
        }
    }
}

/// What the ray walker asks of a visitor.
pub(crate) trait RayVisitor {
    /// Current far end of the ray (shrinks as hits are found).
    fn t_max(&self) -> f32;
    /// Visits a leaf's payload; returns `true` to stop the walk.
    fn leaf(&mut self, data: u32) -> bool;
}

/// A fixed stack of at most [`MAX_DEPTH`] entries that is never
/// initialised as a whole (a walk is short; clearing kilobytes per query
/// would cost more than the walk).
struct Stack<E: Copy> {
    slots: [MaybeUninit<E>; MAX_DEPTH],
    len: usize,
}

impl<E: Copy> Stack<E> {
    #[inline]
    fn new() -> Self {
        Stack {
            slots: [const { MaybeUninit::uninit() }; MAX_DEPTH],
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, e: E) {
        // bounds-checked: a verified tree never needs more than MAX_DEPTH
        // entries (one per level of the current path), so this cannot panic
        self.slots[self.len] = MaybeUninit::new(e);
        self.len += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<E> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: slots `0..len` were each written by `push` (which
        // increments `len` only after writing), and `pop` only shrinks
        // `len`, so slot `len` (after the decrement) holds a value written
        // by `push`. `E: Copy`, so reading it out cannot double-drop.
        Some(unsafe { self.slots[self.len].assume_init() })
    }
}

/// Walks `tree` along `ray`, front to back: at each inner node both
/// children are tested and the nearer hit (by entry distance) is entered
/// first while the farther waits on the stack with its entry distance, so
/// it is dropped unseen once a closer hit shrinks the range. Every volume
/// is grown by `grow` first: nothing for rays, the sphere for sweeps.
#[inline]
pub(crate) fn walk_ray<T: Tree + ?Sized, V: RayVisitor>(
    tree: &T,
    ray: &SlabRay,
    grow: &Grow,
    v: &mut V,
) {
    let Some((mut r, mut vol)) = tree.root() else {
        return;
    };
    if vol.ray_entry(ray, grow, v.t_max()).is_none() {
        return;
    }
    let mut stack = Stack::<(u32, f32, T::Vol)>::new();
    loop {
        if r & LEAF_BIT != 0 {
            if v.leaf(r & !LEAF_BIT) {
                return;
            }
        } else {
            let [(lr, lv), (rr, rv)] = tree.children(r, &vol);
            let t_max = v.t_max();
            match (
                lv.ray_entry(ray, grow, t_max),
                rv.ray_entry(ray, grow, t_max),
            ) {
                (Some(tl), Some(tr)) => {
                    if tl <= tr {
                        stack.push((rr, tr, rv));
                        (r, vol) = (lr, lv);
                    } else {
                        stack.push((lr, tl, lv));
                        (r, vol) = (rr, rv);
                    }
                    continue;
                }
                (Some(_), None) => {
                    (r, vol) = (lr, lv);
                    continue;
                }
                (None, Some(_)) => {
                    (r, vol) = (rr, rv);
                    continue;
                }
                (None, None) => {}
            }
        }
        // next waiting subtree still in range
        loop {
            let Some((next, t_entry, next_vol)) = stack.pop() else {
                return;
            };
            if t_entry <= v.t_max() {
                (r, vol) = (next, next_vol);
                break;
            }
        }
    }
}

/// Visits, depth first, every leaf whose volume passes `test`, skipping
/// whole subtrees whose volume does not. The leaf visitor returns `true` to
/// stop.
#[inline]
pub(crate) fn walk_overlap<T: Tree + ?Sized>(
    tree: &T,
    test: impl Fn(&T::Vol) -> bool,
    mut leaf: impl FnMut(u32) -> bool,
) {
    let Some((mut r, mut vol)) = tree.root() else {
        return;
    };
    if !test(&vol) {
        return;
    }
    let mut stack = Stack::<(u32, T::Vol)>::new();
    loop {
        if r & LEAF_BIT != 0 {
            if leaf(r & !LEAF_BIT) {
                return;
            }
        } else {
            let [(lr, lv), (rr, rv)] = tree.children(r, &vol);
            match (test(&lv), test(&rv)) {
                (true, true) => {
                    stack.push((rr, rv));
                    (r, vol) = (lr, lv);
                    continue;
                }
                (true, false) => {
                    (r, vol) = (lr, lv);
                    continue;
                }
                (false, true) => {
                    (r, vol) = (rr, rv);
                    continue;
                }
                (false, false) => {}
            }
        }
        let Some((next, next_vol)) = stack.pop() else {
            return;
        };
        (r, vol) = (next, next_vol);
    }
}

/// [`walk_overlap`] against the box `lo..=hi`.
#[inline]
pub(crate) fn walk_box<T: Tree + ?Sized>(
    tree: &T,
    lo: Vec3,
    hi: Vec3,
    leaf: impl FnMut(u32) -> bool,
) {
    let (lo, hi) = (Vec3A::from(lo), Vec3A::from(hi));
    walk_overlap(tree, |v| v.touches_box(lo, hi), leaf)
}

#[inline]
fn vec3a(v: &[rkyv::rend::f32_le; 3]) -> Vec3A {
    Vec3A::new(v[0].to_native(), v[1].to_native(), v[2].to_native())
}
