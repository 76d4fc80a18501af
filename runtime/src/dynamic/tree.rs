//! A bounding-volume tree updated online: the boxes of things that move.
//!
//! A binary tree of axis-aligned boxes whose leaves hold enlarged ("fat")
//! boxes, so a small move that stays inside its fat box touches nothing
//! (Catto, "Dynamic Bounding Volume Hierarchies", GDC 2019; Box2D's
//! `b2DynamicTree`). A leaf that steps out of its fat box by less than
//! the margin again keeps its place in the tree: it gets a fresh fat box
//! and the boxes above it are refitted, exactly, up to the first that
//! comes out unchanged (a leaf grown in place, as parry3d's `Bvh` grows
//! one, though parry3d defers the refit to the whole tree each frame).
//! The incremental optimisation repairs the structure such steps wear.
//! A leaf that jumps farther is taken out and inserted again:
//!
//! - **Insertion** picks the sibling that adds least surface area to the
//!   tree: the cost of making node `n` the sibling is the area of `n ∪ D`
//!   plus what every ancestor grows by. The search is the bounded greedy
//!   descent Catto uses in Box2D v3, which follows one path and stops once
//!   no child's lower bound (its growth plus the new parent's area) beats
//!   the best so far. The full branch and bound over the tree (Bittner,
//!   Mattausch and Wimmer, "Fast insertion-based optimization of bounding
//!   volume hierarchies", Computer Graphics Forum 2013) gave trees of the
//!   same quality after a million moves (within 2% at 10k bodies, better
//!   by 1.5% at 100k for the descent) at half the speed, and the online
//!   sphere-tree insertion Kiln's design grew from (a new leaf goes down
//!   to the child whose melded sphere is smaller) trees 25 to 110 times
//!   costlier: BENCHMARKS.md has the figures.
//! - **Rotations** on the way back up swap a child with a grandchild where
//!   that shrinks the node in between (Kopta et al., "Fast, effective BVH
//!   updates for animated scenes", I3D 2012; Box2D v3's `b2RotateNodes`).
//! - **Removal** lifts the sibling into its parent's place and refits.
//! - **Incremental optimisation** ([`DynamicTree::optimize`]) takes a few
//!   leaves out and inserts them again each step, round robin, so a tree
//!   under endless motion keeps its quality without a rebuild.
//! - **A full build** ([`DynamicTree::rebuild`]) by binned surface-area
//!   heuristic (Wald, "On fast construction of SAH-based bounding volume
//!   hierarchies", 2007), for bulk loads and as the yardstick the online
//!   tree is measured against ([`DynamicTree::sah_cost`]).
//!
//! Proxies (what [`DynamicTree::insert`] returns) are leaf node numbers:
//! rotations and removals move links, never leaves, so a proxy stays valid
//! until it is removed.

use crate::geom::ray_box::SlabRay;
use crate::walk::RayVisitor;
use glam::{Vec3, Vec3A};

/// Fewest leaves for which [`DynamicTree::optimize`] rebuilds a tree
/// grown by insertion (below it, the round robin soon reaches every
/// leaf).
const REBUILD_FROM: usize = 256;

/// "No node".
const NULL: u32 = u32::MAX;

/// [`Node::state`] of a node in the tree.
const LIVE: u32 = 0;
/// [`Node::state`] of a node on the free list.
const FREE: u32 = u32::MAX;

/// An axis-aligned box: lower and upper corners.
///
/// ```
/// use kiln_runtime::{internals::Aabb, Vec3};
/// let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
/// assert!(a.contains(&Aabb::new(Vec3::splat(0.25), Vec3::splat(0.5))));
/// assert_eq!(a.half_area(), 3.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub lo: Vec3,
    /// Upper corner.
    pub hi: Vec3,
}

impl Aabb {
    /// The empty box: it meets nothing, its area is zero, and a union
    /// with it changes nothing.
    pub const EMPTY: Aabb = Aabb {
        lo: Vec3::INFINITY,
        hi: Vec3::NEG_INFINITY,
    };

    /// The box from `lo` to `hi`.
    pub const fn new(lo: Vec3, hi: Vec3) -> Aabb {
        Aabb { lo, hi }
    }

    /// Whether `other` lies inside this box (faces included).
    #[inline]
    pub fn contains(&self, other: &Aabb) -> bool {
        self.lo.cmple(other.lo).all() && self.hi.cmpge(other.hi).all()
    }

    /// Half the surface area (the surface-area heuristic's measure; the
    /// factor 2 cancels in every ratio).
    #[inline]
    pub fn half_area(&self) -> f32 {
        let d = (self.hi - self.lo).max(Vec3::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    }

    /// The smallest box around both.
    #[inline]
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    /// Whether the two boxes meet (faces included).
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.lo.cmple(other.hi).all() && self.hi.cmpge(other.lo).all()
    }

    /// The box grown by `m` on every side.
    #[inline]
    pub fn grown(&self, m: f32) -> Aabb {
        Aabb {
            lo: self.lo - Vec3::splat(m),
            hi: self.hi + Vec3::splat(m),
        }
    }

    fn is_valid(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite() && self.lo.cmple(self.hi).all()
    }
}

/// One node: a leaf (`left == NULL`, `right` the payload) or an inner node
/// with two children. A free node's `parent` links the free list.
#[derive(Clone, Copy, Debug)]
struct Node {
    lo: Vec3A,
    hi: Vec3A,
    parent: u32,
    left: u32,
    right: u32,
    /// [`LIVE`] for a node in the tree, [`FREE`] for one on the free list.
    state: u32,
}

impl Node {
    #[inline]
    fn is_leaf(&self) -> bool {
        self.left == NULL
    }
    #[inline]
    fn is_live_leaf(&self) -> bool {
        self.left == NULL && self.state == LIVE
    }
    #[inline]
    fn aabb(&self) -> Aabb {
        Aabb {
            lo: self.lo.into(),
            hi: self.hi.into(),
        }
    }
    #[inline]
    fn set(&mut self, b: &Aabb) {
        self.lo = b.lo.into();
        self.hi = b.hi.into();
    }
}

/// What [`DynamicTree::set_box`] did with a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The new box lies inside the leaf's fat box: nothing changed.
    Unchanged,
    /// The leaf got a fresh fat box where it is, and the boxes above it
    /// were refitted.
    InPlace,
    /// The leaf was taken out and inserted again.
    Reinserted,
}

/// A leaf of a [`DynamicTree`]: what [`DynamicTree::insert`] returns and
/// the other methods take, valid until it is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Proxy(u32);

/// A bounding-volume tree of boxes that move: see the module's docs for the
/// methods it is built on.
///
/// ```
/// use kiln_runtime::{internals::{Aabb, DynamicTree, Update}, Vec3};
/// let mut tree = DynamicTree::new(0.1);
/// let unit = |c: Vec3| Aabb::new(c - 0.5, c + 0.5);
/// let a = tree.insert(unit(Vec3::ZERO), 7);
/// let b = tree.insert(unit(Vec3::new(5.0, 0.0, 0.0)), 8);
/// // a move of 5 cm stays inside the fat box: nothing changes
/// assert_eq!(tree.set_box(a, unit(Vec3::new(0.05, 0.0, 0.0))), Update::Unchanged);
/// // 15 cm in all: a fresh fat box where the leaf is
/// assert_eq!(tree.set_box(a, unit(Vec3::new(0.15, 0.0, 0.0))), Update::InPlace);
/// // a move of 3 m re-inserts the leaf
/// assert_eq!(tree.set_box(a, unit(Vec3::new(3.0, 0.0, 0.0))), Update::Reinserted);
/// let mut found = Vec::new();
/// tree.query(&Aabb::new(Vec3::new(2.0, -1.0, -1.0), Vec3::new(4.0, 1.0, 1.0)), |d| {
///     found.push(d);
///     false
/// });
/// assert_eq!(found, [7]);
/// tree.remove(b);
/// assert_eq!(tree.len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct DynamicTree {
    nodes: Vec<Node>,
    root: u32,
    free: u32,
    leaves: usize,
    margin: f32,
    /// Where [`DynamicTree::optimize`] goes on from.
    cursor: u32,
    /// Leaves inserted or re-inserted one at a time since the last
    /// [`DynamicTree::optimize`] or [`DynamicTree::rebuild`].
    placed: usize,
}

impl DynamicTree {
    /// An empty tree whose leaves' boxes are grown by `margin` on every
    /// side (how far a thing may move before its leaf is re-inserted).
    pub fn new(margin: f32) -> DynamicTree {
        DynamicTree {
            nodes: Vec::new(),
            root: NULL,
            free: NULL,
            leaves: 0,
            margin: if margin.is_finite() {
                margin.max(0.0)
            } else {
                0.0
            },
            cursor: 0,
            placed: 0,
        }
    }

    /// How many leaves the tree holds.
    pub fn len(&self) -> usize {
        self.leaves
    }

    /// Whether the tree holds no leaf.
    pub fn is_empty(&self) -> bool {
        self.leaves == 0
    }

    /// The tree's height (0 for one leaf or none), by a walk over it.
    pub fn height(&self) -> u32 {
        if self.root == NULL {
            return 0;
        }
        let mut deepest = 0;
        let mut stack = Stack::new((self.root, 0u32));
        while let Some((i, depth)) = stack.pop() {
            let n = &self.nodes[i as usize];
            deepest = deepest.max(depth);
            if !n.is_leaf() {
                stack.push((n.left, depth + 1));
                stack.push((n.right, depth + 1));
            }
        }
        deepest
    }

    /// The payload of `proxy`.
    ///
    /// # Panics
    /// If `proxy` is not one of this tree's leaves.
    pub fn data(&self, proxy: Proxy) -> u32 {
        let n = &self.nodes[proxy.0 as usize];
        assert!(n.is_leaf(), "not a leaf");
        n.right
    }

    /// The fat box `proxy`'s leaf holds.
    ///
    /// # Panics
    /// If `proxy` is not one of this tree's leaves.
    pub fn fat_box(&self, proxy: Proxy) -> Aabb {
        let n = &self.nodes[proxy.0 as usize];
        assert!(n.is_leaf(), "not a leaf");
        n.aabb()
    }

    fn node(&self, i: u32) -> Option<&Node> {
        self.nodes.get(i as usize)
    }

    fn alloc(&mut self) -> u32 {
        if self.free != NULL {
            let i = self.free;
            self.free = self.nodes[i as usize].parent;
            return i;
        }
        self.nodes.push(Node {
            lo: Vec3A::ZERO,
            hi: Vec3A::ZERO,
            parent: NULL,
            left: NULL,
            right: NULL,
            state: LIVE,
        });
        (self.nodes.len() - 1) as u32
    }

    fn release(&mut self, i: u32) {
        let n = &mut self.nodes[i as usize];
        n.parent = self.free;
        n.left = NULL;
        n.right = NULL;
        n.state = FREE;
        self.free = i;
    }

    /// Adds a leaf with payload `data` for `tight`; a non-finite or
    /// inverted box is stored as [`Aabb::EMPTY`], which no query meets.
    pub fn insert(&mut self, tight: Aabb, data: u32) -> Proxy {
        let leaf = self.alloc();
        let fat = self.fatten(&tight);
        let n = &mut self.nodes[leaf as usize];
        n.set(&fat);
        n.left = NULL;
        n.right = data;
        n.state = LIVE;
        self.insert_leaf(leaf);
        self.leaves += 1;
        self.placed += 1;
        Proxy(leaf)
    }

    /// Takes `proxy`'s leaf out of the tree.
    ///
    /// # Panics
    /// If `proxy` is not one of this tree's leaves.
    pub fn remove(&mut self, proxy: Proxy) {
        assert!(
            self.node(proxy.0).is_some_and(|n| n.is_live_leaf()),
            "not a leaf"
        );
        self.remove_leaf(proxy.0);
        self.release(proxy.0);
        self.leaves -= 1;
    }

    /// Moves `proxy`'s thing to `tight`: nothing happens while `tight`
    /// stays inside the leaf's fat box (and that box is not more than
    /// four times the area a fresh one would have); otherwise the leaf
    /// gets a fresh fat box, in place with its ancestors refitted while
    /// `tight` lies within the old fat box grown by the margin (a step,
    /// the common case, which costs a few nodes), else by re-insertion (a
    /// jump, which costs a descent from the root). Returns which of the
    /// three it did.
    ///
    /// # Panics
    /// If `proxy` is not one of this tree's leaves.
    pub fn set_box(&mut self, proxy: Proxy, tight: Aabb) -> Update {
        let i = proxy.0;
        let n = &self.nodes[i as usize];
        assert!(n.is_live_leaf(), "not a leaf");
        // the common case first: still inside (false for NaN)
        if n.lo.cmple(tight.lo.into()).all() && n.hi.cmpge(tight.hi.into()).all() {
            let fresh = tight.grown(self.margin).half_area();
            if n.aabb().half_area() <= 4.0 * fresh {
                return Update::Unchanged;
            }
        }
        let fat = self.fatten(&tight);
        let old = n.aabb();
        if old == fat {
            return Update::Unchanged;
        }
        let parent = n.parent;
        if old.grown(self.margin).contains(&tight) {
            // a step past the fat box: the leaf keeps its place and the
            // boxes above it are refitted (rotations here measured mixed,
            // one run: moves 0.98 / 1.35 of parry3d's rate against 1.29 /
            // 1.12 at 10k / 100k bodies, the tree's cost after a million
            // moves no better at 10k, better at 100k)
            self.nodes[i as usize].set(&fat);
            self.refit_up(parent, false);
            return Update::InPlace;
        }
        self.remove_leaf(i);
        self.nodes[i as usize].set(&fat);
        self.insert_leaf(i);
        self.placed += 1;
        Update::Reinserted
    }

    /// Gives leaf `proxy` a fat box around `tight` and leaves the tree
    /// above it as it is: for moving every leaf at once, then
    /// [`DynamicTree::rebuild`] (which re-insertion one by one would only
    /// repeat).
    pub fn place_leaf(&mut self, proxy: Proxy, tight: Aabb) {
        assert!(self.nodes[proxy.0 as usize].is_live_leaf(), "not a leaf");
        let fat = self.fatten(&tight);
        self.nodes[proxy.0 as usize].set(&fat);
    }

    fn fatten(&self, tight: &Aabb) -> Aabb {
        if tight.is_valid() {
            tight.grown(self.margin)
        } else {
            Aabb::EMPTY
        }
    }

    /// Re-inserts up to `budget` leaves, round robin over the tree's
    /// nodes, so that under endless motion the tree stays near the
    /// quality of a fresh build; returns how many it placed again.
    ///
    /// When more than half the leaves were inserted or re-inserted one at
    /// a time since the last step (a bulk load, most bodies teleported
    /// at once), it rebuilds the whole tree instead
    /// ([`DynamicTree::rebuild`]), whatever the budget: a tree grown by
    /// insertion alone costs 15 to 18% more than a built one (10k and
    /// 100k boxes) and the round robin takes a hundred steps to win
    /// that back. A rebuild of 100k leaves takes tens of milliseconds;
    /// steady churn below half the leaves a step never causes one.
    pub fn optimize(&mut self, budget: usize) -> usize {
        let mut done = 0;
        let total = self.nodes.len() as u32;
        if total == 0 || self.leaves < 3 {
            return 0;
        }
        let placed = std::mem::take(&mut self.placed);
        if placed > self.leaves / 2 && self.leaves >= REBUILD_FROM {
            self.rebuild();
            return self.leaves;
        }
        let mut seen = 0;
        while done < budget && seen < total {
            let i = self.cursor % total;
            self.cursor = (i + 1) % total;
            seen += 1;
            let n = &self.nodes[i as usize];
            if n.is_live_leaf() {
                self.remove_leaf(i);
                self.insert_leaf(i);
                done += 1;
            }
        }
        done
    }

    /// Rebuilds the whole tree over its current fat boxes by binned
    /// surface-area heuristic; proxies stay valid.
    pub fn rebuild(&mut self) {
        self.placed = 0;
        let mut leaves: Vec<u32> = Vec::with_capacity(self.leaves);
        for (i, n) in self.nodes.iter().enumerate() {
            if n.is_live_leaf() {
                leaves.push(i as u32);
            }
        }
        // free every inner node
        let inner: Vec<u32> = (0..self.nodes.len() as u32)
            .filter(|&i| {
                let n = &self.nodes[i as usize];
                !n.is_leaf() && n.state == LIVE
            })
            .collect();
        for i in inner {
            self.release(i);
        }
        self.root = if leaves.is_empty() {
            NULL
        } else {
            let mut items: Vec<Item> = leaves
                .into_iter()
                .map(|l| {
                    let n = &self.nodes[l as usize];
                    let c = (n.lo + n.hi) * 0.5;
                    Item {
                        lo: n.lo,
                        hi: n.hi,
                        // an empty leaf's centre is NaN: put it anywhere
                        centre: if c.is_finite() { c } else { Vec3A::ZERO },
                        leaf: l,
                    }
                })
                .collect();
            self.build(&mut items).0
        };
        if let Some(r) = self.nodes.get_mut(self.root as usize) {
            r.parent = NULL;
        }
    }

    /// Builds a subtree over `items` and returns its root and box (carried
    /// up, so joining reads no child node).
    fn build(&mut self, items: &mut [Item]) -> (u32, Vec3A, Vec3A) {
        if let [it] = items {
            return (it.leaf, it.lo, it.hi);
        }
        let split = split(items);
        let (a, b) = items.split_at_mut(split);
        let (l, llo, lhi) = self.build(a);
        let (r, rlo, rhi) = self.build(b);
        let p = self.alloc();
        let (lo, hi) = (llo.min(rlo), lhi.max(rhi));
        let n = &mut self.nodes[p as usize];
        n.lo = lo;
        n.hi = hi;
        n.left = l;
        n.right = r;
        n.state = LIVE;
        self.nodes[l as usize].parent = p;
        self.nodes[r as usize].parent = p;
        (p, lo, hi)
    }

    /// Makes `p` the parent of `l` and `r`, with their union.
    fn join(&mut self, p: u32, l: u32, r: u32) {
        let (bl, br) = (self.nodes[l as usize], self.nodes[r as usize]);
        let n = &mut self.nodes[p as usize];
        n.lo = bl.lo.min(br.lo);
        n.hi = bl.hi.max(br.hi);
        n.left = l;
        n.right = r;
        n.state = LIVE;
        self.nodes[l as usize].parent = p;
        self.nodes[r as usize].parent = p;
    }

    /// The sibling for box `d` by one greedy descent: at each inner node
    /// the cost of making it the sibling is weighed, then the descent goes
    /// into the child with the lower bound on what any placement below it
    /// costs (the child's growth plus the new parent's area, at least
    /// `d`'s), and stops when neither bound beats the best so far (Catto's
    /// simplification of the branch and bound for Box2D v3); equal bounds
    /// go to the nearer child's centre.
    fn best_sibling(&self, d: &Aabb) -> u32 {
        let nodes = &self.nodes;
        let area_d = d.half_area();
        let centre_d = Vec3A::from(d.lo + d.hi);
        let mut i = self.root;
        let root = &nodes[i as usize];
        let mut area_i = root.aabb().half_area();
        let mut direct = d.union(&root.aabb()).half_area();
        let mut inherited = 0.0f32;
        let (mut best, mut best_cost) = (i, direct);
        loop {
            let n = &nodes[i as usize];
            if n.is_leaf() {
                return best;
            }
            let cost = direct + inherited;
            if cost < best_cost {
                best = i;
                best_cost = cost;
            }
            inherited += direct - area_i;
            // per child: its direct cost, its area, and the lower bound of
            // descending into it (infinite for a leaf, weighed here)
            let mut look = |c: u32| {
                let cn = &nodes[c as usize];
                let cb = cn.aabb();
                let direct_c = d.union(&cb).half_area();
                if cn.is_leaf() {
                    let cost_c = direct_c + inherited;
                    if cost_c < best_cost {
                        best = c;
                        best_cost = cost_c;
                    }
                    (direct_c, 0.0, f32::INFINITY)
                } else {
                    let area_c = cb.half_area();
                    (direct_c, area_c, inherited + direct_c - area_c + area_d)
                }
            };
            let (dl, al, ll) = look(n.left);
            let (dr, ar, lr) = look(n.right);
            if best_cost <= ll && best_cost <= lr {
                return best;
            }
            let left = if ll == lr {
                let dist = |c: u32| {
                    let m = &nodes[c as usize];
                    (m.lo + m.hi - centre_d).length_squared()
                };
                dist(n.left) <= dist(n.right)
            } else {
                ll < lr
            };
            (i, area_i, direct) = if left {
                (n.left, al, dl)
            } else {
                (n.right, ar, dr)
            };
        }
    }

    fn insert_leaf(&mut self, leaf: u32) {
        if self.root == NULL {
            self.root = leaf;
            self.nodes[leaf as usize].parent = NULL;
            return;
        }
        let d = self.nodes[leaf as usize].aabb();
        let sibling = self.best_sibling(&d);
        let old_parent = self.nodes[sibling as usize].parent;
        let p = self.alloc();
        self.join(p, sibling, leaf);
        self.nodes[p as usize].parent = old_parent;
        if old_parent == NULL {
            self.root = p;
        } else {
            self.replace_child(old_parent, sibling, p);
        }
        self.refit_up(old_parent, true);
    }

    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        let n = &mut self.nodes[parent as usize];
        if n.left == old {
            n.left = new;
        } else {
            n.right = new;
        }
    }

    /// Refits boxes from `i` towards the root, rotating on the way when
    /// `rotate`, until a box comes out as it was: a rotation never changes
    /// the box of the node it is made at, so nothing above changes either.
    fn refit_up(&mut self, mut i: u32, rotate: bool) {
        while i != NULL {
            if rotate {
                self.rotate(i);
            }
            let n = self.nodes[i as usize];
            self.join(i, n.left, n.right);
            let m = &self.nodes[i as usize];
            if m.lo == n.lo && m.hi == n.hi {
                return;
            }
            i = n.parent;
        }
    }

    fn remove_leaf(&mut self, leaf: u32) {
        if leaf == self.root {
            self.root = NULL;
            return;
        }
        let parent = self.nodes[leaf as usize].parent;
        let p = self.nodes[parent as usize];
        let sibling = if p.left == leaf { p.right } else { p.left };
        let grand = p.parent;
        self.nodes[sibling as usize].parent = grand;
        if grand == NULL {
            self.root = sibling;
        } else {
            self.replace_child(grand, parent, sibling);
        }
        self.release(parent);
        self.refit_up(grand, false);
    }

    /// Swaps a child of `a` with a grandchild on the other side where that
    /// shrinks the node between them most.
    fn rotate(&mut self, a: u32) {
        let na = self.nodes[a as usize];
        let (b, c) = (na.left, na.right);
        let (nb, nc) = (self.nodes[b as usize], self.nodes[c as usize]);
        // (area saved, the child moved down, the grandchild moved up, the
        // node between them)
        let mut best: Option<(f32, u32, u32, u32)> = None;
        let mut consider = |child: u32, other: &Node, other_i: u32| {
            if other.is_leaf() {
                return;
            }
            // swap `child` with one of `other`'s children; `other` then
            // holds `child` and the grandchild that stays
            for (up, stays) in [(other.left, other.right), (other.right, other.left)] {
                let nb = self.nodes[child as usize].aabb();
                let ns = self.nodes[stays as usize].aabb();
                let saved = other.aabb().half_area() - nb.union(&ns).half_area();
                if saved > 0.0 && best.is_none_or(|(s, ..)| saved > s) {
                    best = Some((saved, child, up, other_i));
                }
            }
        };
        consider(b, &nc, c);
        consider(c, &nb, b);
        let Some((_, child, up, mid)) = best else {
            return;
        };
        // `child` (a child of `a`) trades places with `up` (a child of `mid`)
        self.replace_child(a, child, up);
        self.nodes[up as usize].parent = a;
        self.replace_child(mid, up, child);
        self.nodes[child as usize].parent = mid;
        let m = self.nodes[mid as usize];
        self.join(mid, m.left, m.right);
    }

    /// Calls `hit` with the payload of every leaf whose fat box meets
    /// `region`, until it answers `true`; returns whether it did.
    pub fn query(&self, region: &Aabb, mut hit: impl FnMut(u32) -> bool) -> bool {
        if self.root == NULL {
            return false;
        }
        let (lo, hi) = (Vec3A::from(region.lo), Vec3A::from(region.hi));
        let nodes = &self.nodes;
        let meets = |i: u32| {
            let n = &nodes[i as usize];
            n.lo.cmple(hi).all() && n.hi.cmpge(lo).all()
        };
        if !meets(self.root) {
            return false;
        }
        // children are tested before they are entered: a node on the
        // stack is known to meet the region
        let mut stack = Stack::new(NULL);
        let _ = stack.pop();
        let mut i = self.root;
        loop {
            let n = &nodes[i as usize];
            if n.is_leaf() {
                if hit(n.right) {
                    return true;
                }
            } else {
                match (meets(n.left), meets(n.right)) {
                    (true, true) => {
                        stack.push(n.right);
                        i = n.left;
                        continue;
                    }
                    (true, false) => {
                        i = n.left;
                        continue;
                    }
                    (false, true) => {
                        i = n.right;
                        continue;
                    }
                    (false, false) => {}
                }
            }
            match stack.pop() {
                Some(j) => i = j,
                None => return false,
            }
        }
    }

    /// Walks the leaves whose fat boxes, grown by `grow` per axis, the ray
    /// meets within the visitor's range, nearest first.
    pub(crate) fn walk_ray<V: RayVisitor>(&self, ray: &SlabRay, grow: Vec3A, v: &mut V) {
        if self.root == NULL {
            return;
        }
        let r = &self.nodes[self.root as usize];
        let Some(t) = ray.hit_a(r.lo - grow, r.hi + grow, v.t_max()) else {
            return;
        };
        let mut stack = Stack::new((self.root, t));
        while let Some((i, t)) = stack.pop() {
            if t > v.t_max() {
                continue;
            }
            let n = &self.nodes[i as usize];
            if n.is_leaf() {
                if v.leaf(n.right) {
                    return;
                }
                continue;
            }
            let entry = |c: u32| {
                let m = &self.nodes[c as usize];
                ray.hit_a(m.lo - grow, m.hi + grow, v.t_max())
                    .map(|t| (c, t))
            };
            match (entry(n.left), entry(n.right)) {
                (Some(a), Some(b)) => {
                    // the nearer on top
                    let (near, far) = if a.1 <= b.1 { (a, b) } else { (b, a) };
                    stack.push(far);
                    stack.push(near);
                }
                (Some(a), None) | (None, Some(a)) => stack.push(a),
                (None, None) => {}
            }
        }
    }

    /// Calls `leaf` with the payload of every leaf whose fat box the ray
    /// `origin + t·dir` meets for `t` in `[0, max_t]`, nearest box first;
    /// `leaf` may shorten the range (a closer hit found) by lowering the
    /// `max_t` it is given, or answer `true` to stop.
    pub fn raycast(
        &self,
        origin: Vec3,
        dir: Vec3,
        max_t: f32,
        leaf: impl FnMut(u32, &mut f32) -> bool,
    ) {
        struct V<F>(f32, F);
        impl<F: FnMut(u32, &mut f32) -> bool> RayVisitor for V<F> {
            fn t_max(&self) -> f32 {
                self.0
            }
            fn leaf(&mut self, data: u32) -> bool {
                (self.1)(data, &mut self.0)
            }
        }
        self.walk_ray(&SlabRay::new(origin, dir), Vec3A::ZERO, &mut V(max_t, leaf));
    }

    /// The tree's surface-area cost: the summed half areas of its inner
    /// nodes over the root's, the expected number of inner nodes a random
    /// ray through the root visits (MacDonald and Booth, "Heuristics for
    /// ray tracing using space subdivision", 1990). Compare with a
    /// [`DynamicTree::rebuild`] of a clone to judge the online tree.
    pub fn sah_cost(&self) -> f64 {
        let Some(r) = self.node(self.root) else {
            return 0.0;
        };
        let root = f64::from(r.aabb().half_area());
        if root <= 0.0 {
            return 0.0;
        }
        let mut sum = 0.0;
        let mut stack = vec![self.root];
        while let Some(i) = stack.pop() {
            let n = &self.nodes[i as usize];
            if !n.is_leaf() {
                sum += f64::from(n.aabb().half_area());
                stack.push(n.left);
                stack.push(n.right);
            }
        }
        sum / root
    }

    /// Checks every invariant (links, boxes, counts); for tests.
    #[cfg(test)]
    fn check(&self) {
        let mut leaves = 0;
        if self.root != NULL {
            assert_eq!(self.nodes[self.root as usize].parent, NULL);
            let mut stack = vec![self.root];
            while let Some(i) = stack.pop() {
                let n = self.nodes[i as usize];
                assert_eq!(n.state, LIVE);
                if n.is_leaf() {
                    leaves += 1;
                    continue;
                }
                let (l, r) = (self.nodes[n.left as usize], self.nodes[n.right as usize]);
                assert_eq!(l.parent, i);
                assert_eq!(r.parent, i);
                assert!(n.aabb().contains(&l.aabb()) && n.aabb().contains(&r.aabb()));
                assert_eq!(n.aabb(), l.aabb().union(&r.aabb()), "tight inner boxes");
                stack.push(n.left);
                stack.push(n.right);
            }
        }
        assert_eq!(leaves, self.leaves);
        let mut free = 0;
        let mut f = self.free;
        while f != NULL {
            free += 1;
            f = self.nodes[f as usize].parent;
        }
        let live = if self.leaves == 0 {
            0
        } else {
            2 * self.leaves - 1
        };
        assert_eq!(free + live, self.nodes.len(), "every node live or free");
    }
}

/// A leaf as [`DynamicTree::rebuild`] sorts it: its box and centre beside
/// it, so binning reads items in order rather than nodes at random.
#[derive(Clone, Copy)]
struct Item {
    lo: Vec3A,
    hi: Vec3A,
    centre: Vec3A,
    leaf: u32,
}

/// Sorts `items` so the binned-SAH split is at the returned index
/// (neither side empty).
fn split(items: &mut [Item]) -> usize {
    const BINS: usize = 16;
    let (mut clo, mut chi) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    for it in items.iter() {
        clo = clo.min(it.centre);
        chi = chi.max(it.centre);
    }
    let ext = chi - clo;
    let axis = if ext.x >= ext.y && ext.x >= ext.z {
        0
    } else if ext.y >= ext.z {
        1
    } else {
        2
    };
    let half = items.len() / 2;
    if items.len() == 2 || ext[axis] <= 0.0 {
        return half;
    }
    if items.len() <= SMALL {
        return split_small(items, axis);
    }
    let scale = BINS as f32 / ext[axis];
    let bin = |c: Vec3A| (((c[axis] - clo[axis]) * scale) as usize).min(BINS - 1);
    let mut lo = [Vec3A::INFINITY; BINS];
    let mut hi = [Vec3A::NEG_INFINITY; BINS];
    let mut counts = [0usize; BINS];
    for it in items.iter() {
        let k = bin(it.centre);
        lo[k] = lo[k].min(it.lo);
        hi[k] = hi[k].max(it.hi);
        counts[k] += 1;
    }
    let area = |lo: Vec3A, hi: Vec3A| {
        let d = (hi - lo).max(Vec3A::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    };
    // sweep from the right: area and count of bins k..
    let mut right = [(0.0f32, 0usize); BINS];
    let (mut alo, mut ahi, mut n) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY, 0);
    for k in (1..BINS).rev() {
        alo = alo.min(lo[k]);
        ahi = ahi.max(hi[k]);
        n += counts[k];
        right[k] = (area(alo, ahi), n);
    }
    let (mut best, mut best_k) = (f32::INFINITY, 0);
    let (mut alo, mut ahi, mut n) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY, 0);
    for k in 0..BINS - 1 {
        alo = alo.min(lo[k]);
        ahi = ahi.max(hi[k]);
        n += counts[k];
        let (ra, rn) = right[k + 1];
        if n == 0 || rn == 0 {
            continue;
        }
        let cost = area(alo, ahi) * n as f32 + ra * rn as f32;
        if cost < best {
            best = cost;
            best_k = k;
        }
    }
    if best == f32::INFINITY {
        return half;
    }
    // partition: bins ..= best_k to the left
    let mut i = 0;
    for j in 0..items.len() {
        if bin(items[j].centre) <= best_k {
            items.swap(i, j);
            i += 1;
        }
    }
    if i == 0 || i == items.len() { half } else { i }
}

/// Ranges up to this many items are split by an exact sweep over them
/// sorted, not by bins (whose fixed cost dominated the build's lower
/// levels: 100k leaves rebuilt in 54 ms, most of it in ranges of a few).
const SMALL: usize = 16;

/// The cheapest split of a few items by their centres along `axis`,
/// every split weighed (neither side empty).
fn split_small(items: &mut [Item], axis: usize) -> usize {
    items.sort_unstable_by(|a, b| a.centre[axis].total_cmp(&b.centre[axis]));
    let n = items.len();
    let area = |lo: Vec3A, hi: Vec3A| {
        let d = (hi - lo).max(Vec3A::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    };
    let mut right = [0.0f32; SMALL];
    let (mut lo, mut hi) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    for k in (1..n).rev() {
        lo = lo.min(items[k].lo);
        hi = hi.max(items[k].hi);
        right[k] = area(lo, hi) * (n - k) as f32;
    }
    let (mut best, mut best_k) = (f32::INFINITY, n / 2);
    let (mut lo, mut hi) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    for k in 1..n {
        lo = lo.min(items[k - 1].lo);
        hi = hi.max(items[k - 1].hi);
        let cost = area(lo, hi) * k as f32 + right[k];
        if cost < best {
            best = cost;
            best_k = k;
        }
    }
    best_k
}

/// A walk's stack: 64 entries in place (a balanced tree of 2⁶⁴ leaves),
/// never initialised as a whole (clearing 64 entries per ray cost more
/// than a short walk), spilling to the heap only for a degenerate tree
/// deeper than that.
struct Stack<T: Copy> {
    slots: [std::mem::MaybeUninit<T>; 64],
    len: usize,
    spill: Vec<T>,
}

impl<T: Copy> Stack<T> {
    #[inline]
    fn new(first: T) -> Self {
        let mut s = Stack {
            slots: [const { std::mem::MaybeUninit::uninit() }; 64],
            len: 0,
            spill: Vec::new(),
        };
        s.push(first);
        s
    }
    #[inline]
    fn push(&mut self, e: T) {
        if self.len < self.slots.len() {
            self.slots[self.len] = std::mem::MaybeUninit::new(e);
            self.len += 1;
        } else {
            self.spill.push(e);
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<T> {
        if let Some(e) = self.spill.pop() {
            return Some(e);
        }
        self.len = self.len.checked_sub(1)?;
        // SAFETY: slots `0..len` were each written by `push` (which
        // raises `len` only after writing), and `pop` only lowers `len`,
        // so slot `len` (after the decrement) holds a value `push` wrote;
        // `T: Copy`, so reading it out cannot drop anything twice.
        Some(unsafe { self.slots[self.len].assume_init() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_geometry::rng::Rng;

    /// Uniform in the cube [−s, s]³.
    fn offset(rng: &mut Rng, s: f32) -> Vec3 {
        Vec3::new(rng.range(-s, s), rng.range(-s, s), rng.range(-s, s))
    }

    /// The tree's invariants hold and its cost is within 10% of a fresh
    /// binned-SAH build over the same boxes.
    fn assert_near_a_fresh_build(tree: &DynamicTree) {
        tree.check();
        let mut fresh = tree.clone();
        fresh.rebuild();
        fresh.check();
        let (online, built) = (tree.sah_cost(), fresh.sah_cost());
        assert!(
            online < built * 1.10,
            "online {online:.2}, fresh build {built:.2}"
        );
    }

    fn rand_box(rng: &mut Rng, span: f32) -> Aabb {
        let c = offset(rng, span);
        let h = Vec3::new(
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
        );
        Aabb::new(c - h, c + h)
    }

    /// Random inserts, moves (small and large) and removes; after each
    /// batch the invariants hold and box and ray queries find exactly the
    /// leaves brute force finds.
    #[test]
    fn churn_keeps_every_invariant_and_finds_what_brute_force_finds() {
        let mut rng = Rng(48);
        let mut tree = DynamicTree::new(0.2);
        let mut live: Vec<(Proxy, Aabb, u32)> = Vec::new();
        let mut next = 0u32;
        for round in 0..60 {
            for _ in 0..200 {
                let op = rng.below(10);
                if op < 3 || live.len() < 20 {
                    let b = rand_box(&mut rng, 50.0);
                    live.push((tree.insert(b, next), b, next));
                    next += 1;
                } else if op < 5 {
                    let k = rng.below(live.len());
                    tree.remove(live.swap_remove(k).0);
                } else {
                    let k = rng.below(live.len());
                    let step = if op < 8 { 0.1 } else { 30.0 };
                    let d = offset(&mut rng, step);
                    let b = Aabb::new(live[k].1.lo + d, live[k].1.hi + d);
                    tree.set_box(live[k].0, b);
                    live[k].1 = b;
                }
            }
            if round % 10 == 9 {
                tree.optimize(50);
            }
            if round == 30 {
                tree.rebuild();
            }
            tree.check();
            for (p, b, d) in &live {
                assert!(tree.fat_box(*p).contains(b));
                assert_eq!(tree.data(*p), *d);
            }
            // box queries: every leaf whose fat box meets; that includes
            // every tight box that meets
            for _ in 0..20 {
                let q = rand_box(&mut rng, 50.0).grown(3.0);
                let mut got = Vec::new();
                tree.query(&q, |d| {
                    got.push(d);
                    false
                });
                got.sort_unstable();
                let mut want: Vec<u32> = live
                    .iter()
                    .filter(|(p, ..)| tree.fat_box(*p).overlaps(&q))
                    .map(|l| l.2)
                    .collect();
                want.sort_unstable();
                assert_eq!(got, want);
            }
            // rays: the nearest tight box a ray enters, found through the walk
            for _ in 0..20 {
                let o = offset(&mut rng, 60.0);
                let dir = offset(&mut rng, 1.0);
                let ray = SlabRay::new(o, dir);
                let tight = |d: u32| live.iter().find(|l| l.2 == d).unwrap().1;
                let mut best: Option<(f32, u32)> = None;
                tree.raycast(o, dir, 1e3, |d, t_max| {
                    let b = tight(d);
                    if let Some(t) = ray.hit_a(b.lo.into(), b.hi.into(), *t_max)
                        && best.is_none_or(|(bt, _)| t < bt)
                    {
                        best = Some((t, d));
                        *t_max = t;
                    }
                    false
                });
                let want = live
                    .iter()
                    .filter_map(|l| {
                        ray.hit_a(l.1.lo.into(), l.1.hi.into(), 1e3)
                            .map(|t| (t, l.2))
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                assert_eq!(best.map(|b| b.0), want.map(|w| w.0));
            }
        }
    }

    /// Online insertion with rotations and incremental optimisation keeps
    /// the tree's cost near a fresh binned-SAH build under random motion.
    #[test]
    fn online_tree_stays_near_a_fresh_build_under_motion() {
        let mut rng = Rng(7);
        let mut tree = DynamicTree::new(0.1);
        let mut live: Vec<(Proxy, Aabb)> = (0..2000)
            .map(|i| {
                let b = rand_box(&mut rng, 100.0);
                (tree.insert(b, i), b)
            })
            .collect();
        assert_eq!(tree.optimize(20), 2000, "the bulk load rebuilt");
        // a third of the leaves jump each step (most re-inserted, too
        // few for a rebuild), the others stay
        for step in 0..150 {
            for (p, b) in live.iter_mut().skip(step % 3).step_by(3) {
                let d = offset(&mut rng, 1.0);
                *b = Aabb::new(b.lo + d, b.hi + d);
                tree.set_box(*p, *b);
            }
            assert_eq!(tree.optimize(20), 20, "no rebuild");
        }
        assert_near_a_fresh_build(&tree);
    }

    /// A step just past the fat box keeps the leaf under its parent, with
    /// every box above it exact; a jump re-inserts it elsewhere.
    #[test]
    fn a_step_grows_the_leaf_in_place_and_a_jump_reinserts_it() {
        let mut tree = DynamicTree::new(0.1);
        let unit = |c: Vec3| Aabb::new(c - 0.5, c + 0.5);
        let far = Vec3::new(40.0, 0.0, 0.0);
        let a = tree.insert(unit(Vec3::ZERO), 0);
        let _b = tree.insert(unit(Vec3::new(1.0, 0.0, 0.0)), 1);
        let _c = tree.insert(unit(far), 2);
        let _d = tree.insert(unit(far + Vec3::X), 3);
        let parent = |t: &DynamicTree| t.nodes[a.0 as usize].parent;
        let sibling = |t: &DynamicTree| {
            let p = t.nodes[parent(t) as usize];
            if p.left == a.0 { p.right } else { p.left }
        };
        let (p0, s0) = (parent(&tree), sibling(&tree));
        // 15 cm: past the 10 cm margin, within twice it
        assert_eq!(
            tree.set_box(a, unit(Vec3::new(-0.15, 0.0, 0.0))),
            Update::InPlace
        );
        assert_eq!((parent(&tree), sibling(&tree)), (p0, s0), "kept its place");
        tree.check();
        assert_eq!(
            tree.fat_box(a),
            unit(Vec3::new(-0.15, 0.0, 0.0)).grown(0.1),
            "a fresh fat box"
        );
        // a jump next to the far pair: re-inserted beside them
        assert_eq!(
            tree.set_box(a, unit(far + Vec3::new(0.5, 1.0, 0.0))),
            Update::Reinserted
        );
        assert_ne!(sibling(&tree), s0, "re-inserted");
        tree.check();
        let mut got = Vec::new();
        tree.query(&unit(far + Vec3::Y), |d| {
            got.push(d);
            false
        });
        got.sort_unstable();
        assert_eq!(got, [0, 2, 3]);
    }

    /// Endless small steps (every leaf grown in place again and again)
    /// with the frame's incremental optimisation keep the tree near a
    /// fresh build.
    #[test]
    fn leaves_grown_in_place_stay_near_a_fresh_build() {
        let mut rng = Rng(9);
        let mut tree = DynamicTree::new(0.1);
        let mut live: Vec<(Proxy, Aabb)> = (0..2000)
            .map(|i| {
                let b = rand_box(&mut rng, 25.0);
                (tree.insert(b, i), b)
            })
            .collect();
        let mut in_place = 0;
        for _ in 0..300 {
            for (p, b) in live.iter_mut() {
                let d = offset(&mut rng, 0.05);
                *b = Aabb::new(b.lo + d, b.hi + d);
                in_place += usize::from(tree.set_box(*p, *b) == Update::InPlace);
            }
            tree.optimize(20);
        }
        assert!(in_place > 10_000, "{in_place} leaves grown in place");
        assert_near_a_fresh_build(&tree);
    }

    /// A tree grown by inserting every leaf is rebuilt by the next
    /// optimisation step, whatever its budget; one with few fresh leaves
    /// is not.
    #[test]
    fn a_bulk_load_is_rebuilt_at_the_next_optimisation() {
        let mut rng = Rng(5);
        let mut tree = DynamicTree::new(0.1);
        let proxies: Vec<Proxy> = (0..3000)
            .map(|i| tree.insert(rand_box(&mut rng, 30.0), i))
            .collect();
        let grown = tree.sah_cost();
        let mut fresh = tree.clone();
        fresh.rebuild();
        assert!(
            grown > fresh.sah_cost() * 1.05,
            "insertion alone is costlier"
        );
        assert_eq!(tree.optimize(8), 3000, "rebuilt");
        tree.check();
        assert_eq!(tree.sah_cost(), fresh.sah_cost());
        // a few jumps later, the round robin again
        for p in &proxies[..100] {
            let b = rand_box(&mut rng, 30.0);
            assert_eq!(tree.set_box(*p, b), Update::Reinserted);
        }
        assert_eq!(tree.optimize(8), 8);
        tree.check();
    }

    #[test]
    fn bad_boxes_meet_nothing_and_empty_trees_answer_nothing() {
        let mut tree = DynamicTree::new(0.1);
        assert!(!tree.query(&Aabb::new(Vec3::splat(-1e9), Vec3::splat(1e9)), |_| true));
        let p = tree.insert(Aabb::new(Vec3::NAN, Vec3::ONE), 1);
        let q = tree.insert(Aabb::new(Vec3::ONE, Vec3::ZERO), 2);
        assert!(!tree.query(&Aabb::new(Vec3::splat(-1e9), Vec3::splat(1e9)), |_| true));
        tree.remove(p);
        tree.remove(q);
        tree.check();
        assert!(tree.is_empty() && tree.height() == 0);
    }
}
