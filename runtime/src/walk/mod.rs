//! The tree walkers, written once over the [`Tree`] trait: mesh trees
//! (eight children's quantised boxes in every inner node of a box tree,
//! decoded and tested in one SIMD pass, [`wide`]; four children's
//! quantised spheres in a sphere tree's) and the top-level tree (4-wide,
//! its children's boxes as plain floats for a level of up to a few
//! thousand objects, [`FloatTreeView`], else quantised against their
//! parent's box, [`BoxTreeView`]). A walk of the quantised top-level tree
//! carries each node's decoded [`Volume`]; a walk of a float tree or of a
//! mesh's self-framed box tree carries nothing ([`Unframed`]).
//!
//! - [`walk_ray`]: front to back, with a visitor for leaves that shrinks the
//!   ray's range as it finds hits (closest hit) or stops the walk (any hit).
//! - [`walk_overlap`]: every leaf whose volume passes a test (box or ball).
//!
//! Safety of the walk rests on `kiln_formats::verify`: child references are
//! in range and numbered breadth-first (so every step goes to a larger
//! node index, and the walk ends), and no tree is deeper than
//! `MAX_DEPTH`, so the fixed stacks (at most a node's width less one
//! entries per level of the current path) cannot overflow.

pub(crate) mod wide;

use crate::geom::ray_box::SlabRay;
use glam::{Vec3, Vec3A, Vec4};
use kiln_formats::level::{ArchivedLevel, ArchivedTopNodes, MAX_DEPTH};
use kiln_formats::tri_mesh::{
    ArchivedBoxNode, ArchivedFloatBoxNode, ArchivedMeshTree, ArchivedSphereNode, ArchivedTriMesh,
    BOX_STEPS, LEAF_BIT, Links, WIDE, WIDTH,
};
use kiln_geometry::cache::prefetch_line;
use std::cell::Cell;
use std::mem::MaybeUninit;
#[cfg(target_arch = "x86_64")]
use wide::Avx2;
use wide::{Portable, WideTreeView};

/// How much a query grows every volume before testing it (a sphere sweep
/// is a ray against volumes grown by the sphere: van den Bergen, GDC 2013). `ext` and
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

/// What an overlap walk looks for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Region {
    /// A ball.
    Ball {
        /// Centre.
        c: Vec3A,
        /// Radius.
        r: f32,
    },
    /// An axis-aligned box.
    Box {
        /// Lower corner.
        lo: Vec3A,
        /// Upper corner.
        hi: Vec3A,
    },
}

/// A bounding volume a walk can test.
pub(crate) trait Volume: Copy {
    /// Entry distance of `ray` into the volume grown by `grow`, if it meets
    /// it within `[0, t_max]`; never misses a volume the exact ray meets.
    fn ray_entry(&self, ray: &SlabRay, grow: &Grow, t_max: f32) -> Option<f32>;
    /// Whether the box `lo..=hi` may touch the volume (conservative).
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool;
    /// A lower bound of the squared distance from `c` to the volume.
    fn dist2(&self, c: Vec3A) -> f32;
    /// If `region` may touch the volume (conservative), its key for the
    /// walk: the squared distance from a ball region's centre, zero for a
    /// box region.
    #[inline]
    fn region_key(&self, region: &Region) -> Option<f32> {
        match *region {
            Region::Ball { c, r } => {
                let d2 = self.dist2(c);
                (d2 <= r * r).then_some(d2)
            }
            Region::Box { lo, hi } => self.touches_box(lo, hi).then_some(0.0),
        }
    }
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeBox {
    min: Vec3A,
    max: Vec3A,
}

impl Volume for NodeBox {
    #[inline]
    fn ray_entry(&self, ray: &SlabRay, grow: &Grow, t_max: f32) -> Option<f32> {
        ray.hit_a(self.min - grow.ext, self.max + grow.ext, t_max)
    }
    #[inline]
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool {
        self.min.cmple(hi).all() && self.max.cmpge(lo).all()
    }
    #[inline]
    fn dist2(&self, c: Vec3A) -> f32 {
        c.clamp(self.min, self.max).distance_squared(c)
    }
}

/// A sphere.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ball {
    c: Vec3A,
    r: f32,
}

impl Ball {
    /// A placeholder, for buffers filled before use.
    pub(crate) const EMPTY: Ball = Ball {
        c: Vec3A::ZERO,
        r: 0.0,
    };

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
    fn touches_box(&self, lo: Vec3A, hi: Vec3A) -> bool {
        let p = self.c.clamp(lo, hi);
        let s = self.slack(p, self.r);
        self.c.distance_squared(p) <= s * s
    }
    #[inline]
    fn dist2(&self, c: Vec3A) -> f32 {
        let d = (self.c.distance(c) - self.slack(c, self.r)).max(0.0);
        d * d
    }
}

/// Children found by a walk step: `(reference, entry distance, volume)`
/// in the first `n` slots (room for the widest node, a mesh box tree's).
pub(crate) type Found<V> = [(u32, f32, V); WIDE];

/// A fixed stack for walks of a tree of nodes up to `WIDTH` wide.
type Stack4<E> = Stack<E, { (WIDTH - 1) * MAX_DEPTH }>;

/// What the walkers need of a tree. References are inner-node indices, or
/// [`LEAF_BIT`] | leaf index (a mesh's leaf, or the top-level tree's
/// instance).
pub(crate) trait Tree {
    /// The tree's bounding volume.
    type Vol: Volume;
    /// A fixed stack deep enough for any walk of a verified tree of this
    /// kind (a node's width less one entries per level).
    type Stack<E: Copy>: Waiting<E> + Fresh;
    /// The root reference and volume; `None` for an empty tree.
    fn root(&self) -> Option<(u32, Self::Vol)>;
    /// The children of inner node `node` (volume `vol`) whose volume,
    /// grown by `grow`, the ray enters within `[0, t_max]`: written to
    /// `out`, their number returned.
    fn ray_children(
        &self,
        node: u32,
        vol: &Self::Vol,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
        out: &mut Found<Self::Vol>,
    ) -> usize;
    /// The children of inner node `node` whose volume may touch `region`,
    /// each with a lower bound of its squared distance from a ball region's
    /// centre (zero for box probes).
    fn children_in(
        &self,
        node: u32,
        vol: &Self::Vol,
        region: &Region,
        out: &mut Found<Self::Vol>,
    ) -> usize;
    /// Starts loading what a walk reads when it enters reference `r` (a
    /// hint; nothing by default).
    #[inline(always)]
    fn prefetch_ref(&self, _r: u32) {}
}

/// A level's top-level tree, in the form its archive stores
/// ([`kiln_formats::level::TopNodes`]). A walk matches once and runs the
/// walker for that form.
pub(crate) enum TopTreeView<'a> {
    /// Float nodes (a tree small enough to stay in cache).
    Floats(FloatTreeView<'a>),
    /// Quantised nodes.
    Boxes(BoxTreeView<'a>),
}

/// The top-level tree of `level`: 4-wide box nodes, float or quantised,
/// its leaves one static instance each.
#[inline]
pub(crate) fn top_tree(level: &ArchivedLevel) -> TopTreeView<'_> {
    let t = &level.top;
    let root = t.leaves.to_native() > 0;
    match &t.nodes {
        ArchivedTopNodes::Floats(n) => TopTreeView::Floats(FloatTreeView {
            nodes: n.as_slice(),
            root: root.then(|| t.root.to_native()),
            ahead: std::mem::size_of_val(n.as_slice()) > PREFETCH_FROM_BYTES,
        }),
        ArchivedTopNodes::Boxes(n) => TopTreeView::Boxes(BoxTreeView::new(
            n.as_slice(),
            root.then(|| {
                (
                    t.root.to_native(),
                    NodeBox {
                        min: vec3a(&t.min),
                        max: vec3a(&t.max),
                    },
                )
            }),
        )),
    }
}

/// What a walk of a float tree carries from a node to its children:
/// nothing, as float nodes hold their children's boxes whole. The root
/// passes every test (its children are the first volumes tested).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unframed;

impl Volume for Unframed {
    #[inline(always)]
    fn ray_entry(&self, _ray: &SlabRay, _grow: &Grow, _t_max: f32) -> Option<f32> {
        Some(0.0)
    }
    #[inline(always)]
    fn touches_box(&self, _lo: Vec3A, _hi: Vec3A) -> bool {
        true
    }
    #[inline(always)]
    fn dist2(&self, _c: Vec3A) -> f32 {
        0.0
    }
}

/// Writes the children of a node whose bit is set in `hit` (used slots
/// only; keys `key`, one per slot) to `out` in slot order, asks memory for
/// them, and returns how many: the gathering step of every tree whose
/// walk carries no volume (float nodes, self-framed nodes).
#[inline(always)]
pub(crate) fn found_unframed<T: Tree<Vol = Unframed> + ?Sized>(
    tree: &T,
    links: &Links,
    hit: u32,
    key: &[f32],
    out: &mut Found<Unframed>,
) -> usize {
    let mut bits = hit & ((1 << links.used) - 1);
    let mut n = 0;
    while bits != 0 {
        let c = bits.trailing_zeros() as usize & (WIDE - 1);
        bits &= bits - 1;
        // `n` counts the set bits before this one, below the node's width
        out[n & (WIDE - 1)] = (links.child(c), key[c], Unframed);
        n += 1;
    }
    for &(r, _, _) in &out[..n] {
        tree.prefetch_ref(r);
    }
    n
}

/// A box tree of float nodes (the top-level tree of a level of up to a few
/// thousand objects).
pub(crate) struct FloatTreeView<'a> {
    nodes: &'a [ArchivedFloatBoxNode],
    root: Option<u32>,
    /// Whether walks ask for children's lines ahead (as [`BoxTreeView`]'s).
    ahead: bool,
}

impl FloatTreeView<'_> {
    /// Node `node`'s four boxes, one SIMD lane per child, and its links.
    #[inline(always)]
    fn boxes(&self, node: u32) -> ([Vec4; 3], [Vec4; 3], Links) {
        let n = &self.nodes[node as usize];
        // written out: array `map`s here were not inlined (6% of a
        // sphere yes/no test on the 300 spheres)
        #[inline(always)]
        fn v(a: &[rkyv::rend::f32_le; WIDTH]) -> Vec4 {
            Vec4::new(
                a[0].to_native(),
                a[1].to_native(),
                a[2].to_native(),
                a[3].to_native(),
            )
        }
        (
            [v(&n.lo[0]), v(&n.lo[1]), v(&n.lo[2])],
            [v(&n.hi[0]), v(&n.hi[1]), v(&n.hi[2])],
            n.links(),
        )
    }

    /// Writes the children in `mask` (with keys `t`) to `out`, in slot
    /// order, asking memory for them.
    #[inline(always)]
    fn found(
        &self,
        links: &Links,
        mask: glam::BVec4A,
        t: Vec4,
        out: &mut Found<Unframed>,
    ) -> usize {
        found_unframed(self, links, mask.bitmask(), &<[f32; 4]>::from(t), out)
    }
}

impl Tree for FloatTreeView<'_> {
    type Vol = Unframed;
    type Stack<E: Copy> = Stack4<E>;
    #[inline]
    fn root(&self) -> Option<(u32, Unframed)> {
        self.root.map(|r| (r, Unframed))
    }
    #[inline(always)]
    fn prefetch_ref(&self, r: u32) {
        if self.ahead && r & LEAF_BIT == 0 {
            prefetch(self.nodes.get(r as usize));
        }
    }
    #[inline(always)]
    fn ray_children(
        &self,
        node: u32,
        _vol: &Unframed,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
        out: &mut Found<Unframed>,
    ) -> usize {
        let (lo, hi, links) = self.boxes(node);
        let (near, far) = slab4_grown(&lo, &hi, ray, grow, t_max);
        let hit = near.cmple(far * crate::geom::ray_box::EXIT_SCALE);
        self.found(&links, hit, near, out)
    }
    #[inline(always)]
    fn children_in(
        &self,
        node: u32,
        _vol: &Unframed,
        region: &Region,
        out: &mut Found<Unframed>,
    ) -> usize {
        let (lo, hi, links) = self.boxes(node);
        let (hit, key) = region4(&lo, &hi, region);
        self.found(&links, hit, key, out)
    }
}

/// A 4-wide box tree of quantised nodes (a large level's top-level tree).
pub(crate) struct BoxTreeView<'a> {
    nodes: &'a [ArchivedBoxNode],
    root: Option<(u32, NodeBox)>,
    /// Whether walks ask for children's lines ahead ([`prefetch`]): not
    /// for a tree that lives in the L1 cache, such as a small level's
    /// top-level tree, where a hint is only an instruction.
    ahead: bool,
}

/// Trees up to this size (nodes and leaf rows) are walked without
/// prefetching: they stay in a core's L1 data cache (32 KiB or more on
/// x86-64 CPUs of the last decade).
const PREFETCH_FROM_BYTES: usize = 32 << 10;

impl<'a> BoxTreeView<'a> {
    /// A tree over `nodes`, with `root` (its leaves are instances: a
    /// walk asks memory for nodes alone).
    #[inline]
    fn new(nodes: &'a [ArchivedBoxNode], root: Option<(u32, NodeBox)>) -> Self {
        BoxTreeView {
            nodes,
            root,
            ahead: std::mem::size_of_val(nodes) > PREFETCH_FROM_BYTES,
        }
    }
}

/// The four children's boxes of a box node, one SIMD lane per child.
struct Boxes4 {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
    /// Where the children are.
    links: Links,
}

impl Boxes4 {
    /// Writes the children in `mask` (with keys `t`) to `out`, one by
    /// one, in slot order. Walks find few of a node's four children:
    /// building all four boxes with two 4×4 transposes and writing every
    /// lane was a third of a point query on the 300 boxes, and measured
    /// the same as this on the terrain's rays.
    #[inline(always)]
    fn gather(&self, mask: glam::BVec4A, t: Vec4, out: &mut Found<NodeBox>) -> usize {
        // used slots come first
        let mut bits = mask.bitmask() & ((1 << self.links.used) - 1);
        let t = <[f32; 4]>::from(t);
        let lo = self.lo.map(<[f32; 4]>::from);
        let hi = self.hi.map(<[f32; 4]>::from);
        let mut n = 0;
        while bits != 0 {
            let c = bits.trailing_zeros() as usize & (WIDTH - 1);
            bits &= bits - 1;
            // `n` counts the set bits before this one, so it is below 4
            out[n & (WIDTH - 1)] = (
                self.links.child(c),
                t[c],
                NodeBox {
                    min: Vec3A::new(lo[0][c], lo[1][c], lo[2][c]),
                    max: Vec3A::new(hi[0][c], hi[1][c], hi[2][c]),
                },
            );
            n += 1;
        }
        n
    }
}

impl BoxTreeView<'_> {
    /// Starts loading what a walk reads next: the found children's nodes,
    /// so the misses overlap instead of coming one after another (on the
    /// 2.1M terrain's rays, 10–20% faster when children were stored
    /// apart).
    #[inline(always)]
    fn prefetch_found(&self, found: &[(u32, f32, NodeBox)]) {
        for &(c, _, _) in found {
            self.prefetch_ref(c);
        }
    }

    /// Decodes node `node`'s children inside `vol`: the same IEEE
    /// operations, lane by lane, as `kiln_formats::level::{box_step,
    /// decode_lo, decode_hi}`, which the baker rounded against. Written out
    /// per axis: array `map`s here cost more than the tests themselves.
    #[inline(always)]
    fn decode(&self, node: u32, vol: &NodeBox) -> Boxes4 {
        let n = &self.nodes[node as usize];
        let step = (vol.max - vol.min) * (1.0 / BOX_STEPS);
        let (min, max) = (vol.min, vol.max);
        let (cl, ch) = node_codes(n);
        let lo = [
            Vec4::splat(min.x) + cl[0] * Vec4::splat(step.x),
            Vec4::splat(min.y) + cl[1] * Vec4::splat(step.y),
            Vec4::splat(min.z) + cl[2] * Vec4::splat(step.z),
        ];
        let hi = [
            Vec4::splat(max.x) - ch[0] * Vec4::splat(step.x),
            Vec4::splat(max.y) - ch[1] * Vec4::splat(step.y),
            Vec4::splat(max.z) - ch[2] * Vec4::splat(step.z),
        ];
        Boxes4 {
            lo,
            hi,
            links: n.links(),
        }
    }
}

/// A box node's 24 codes as floats, `([lo; 3], [hi; 3])` by axis, one lane
/// per child: on x86-64 two loads for all of them, then three byte and six
/// word unpacks and six conversions (one load and three operations per
/// axis and side before).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn node_codes(n: &ArchivedBoxNode) -> ([Vec4; 3], [Vec4; 3]) {
    use std::arch::x86_64::{
        __m128i, _mm_cvtepi32_ps, _mm_loadl_epi64, _mm_loadu_si128, _mm_setzero_si128,
        _mm_unpackhi_epi8, _mm_unpackhi_epi16, _mm_unpacklo_epi8, _mm_unpacklo_epi16,
    };
    // the layout the two loads read: `lo` then `hi`, 12 bytes each, from
    // the node's first byte, inside its 32
    const _: () = assert!(
        std::mem::offset_of!(ArchivedBoxNode, lo) == 0
            && std::mem::offset_of!(ArchivedBoxNode, hi) == 3 * WIDTH
            && WIDTH == 4
            && std::mem::size_of::<ArchivedBoxNode>() == 32
    );
    let p = (n as *const ArchivedBoxNode).cast::<u8>();
    // SAFETY: `p` points at a live `ArchivedBoxNode` of 32 bytes (borrowed
    // for this call; asserted above), so bytes `p..p + 16` and `p + 16..p
    // + 24` are inside it and initialised (every byte of `lo` and `hi` is a
    // `u8`; the assert puts them at 0..24, with no padding between). Both
    // loads are unaligned forms, so the node's 4-byte alignment is enough.
    // The rest are SSE2 register operations, in x86-64's baseline.
    unsafe {
        let a = _mm_loadu_si128(p.cast::<__m128i>()); // lo x, y, z; hi x
        let b = _mm_loadl_epi64(p.add(16).cast::<__m128i>()); // hi y, z
        let z = _mm_setzero_si128();
        let (a0, a1, b0) = (
            _mm_unpacklo_epi8(a, z),
            _mm_unpackhi_epi8(a, z),
            _mm_unpacklo_epi8(b, z),
        );
        let lo4 = |w| Vec4::from(_mm_cvtepi32_ps(_mm_unpacklo_epi16(w, z)));
        let hi4 = |w| Vec4::from(_mm_cvtepi32_ps(_mm_unpackhi_epi16(w, z)));
        ([lo4(a0), hi4(a0), lo4(a1)], [hi4(a1), lo4(b0), hi4(b0)])
    }
}

/// A box node's 24 codes as floats, `([lo; 3], [hi; 3])`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn node_codes(n: &ArchivedBoxNode) -> ([Vec4; 3], [Vec4; 3]) {
    let four = |v: [u8; WIDTH]| Vec4::from(v.map(f32::from));
    (n.lo.map(four), n.hi.map(four))
}

/// Asks the CPU to start loading `v`'s cache lines (a hint: nothing is
/// read, and a `None` does nothing).
#[inline(always)]
pub(crate) fn prefetch<T>(v: Option<&T>) {
    if let Some(v) = v {
        prefetch_span((v as *const T).cast::<i8>(), std::mem::size_of::<T>());
    }
}

/// [`prefetch`] for a run of bytes.
#[inline(always)]
pub(crate) fn prefetch_bytes(v: Option<&[u8]>) {
    if let Some(v) = v {
        prefetch_span(v.as_ptr().cast::<i8>(), v.len());
    }
}

/// Asks for the cache lines of the `len` bytes at `p` (at most two
/// lines): its first and its last byte's, the same line or not (asking
/// only when they differ cost more in mispredicted branches than the
/// second prefetch does).
#[inline(always)]
pub(crate) fn prefetch_span(p: *const i8, len: usize) {
    prefetch_line(p);
    prefetch_line(p.wrapping_add(len.max(1) - 1));
}

/// Asks for every cache line of `s`'s elements, once a line: one
/// address every 64 bytes from the first, and the last byte's (the line
/// the stride may step past when `s` does not start on one).
#[inline(always)]
pub(crate) fn prefetch_all<T>(s: &[T]) {
    let (p, len) = (s.as_ptr().cast::<i8>(), std::mem::size_of_val(s));
    for at in (0..len).step_by(64) {
        prefetch_line(p.wrapping_add(at));
    }
    if len > 0 {
        prefetch_line(p.wrapping_add(len - 1));
    }
}

/// One axis of the four-box slab test: narrows `near`/`far`.
#[inline(always)]
fn slab4(near: &mut Vec4, far: &mut Vec4, l: Vec4, h: Vec4, o: f32, inv: f32) {
    let o = Vec4::splat(o);
    if inv == 0.0 {
        // the ray does not move along this axis: inside the slab or not
        let inside = o.cmpge(l) & o.cmple(h);
        *far = Vec4::select(inside, *far, Vec4::splat(f32::NEG_INFINITY));
    } else {
        let inv = Vec4::splat(inv);
        let t0 = (l - o) * inv;
        let t1 = (h - o) * inv;
        *near = near.max(t0.min(t1));
        *far = far.min(t0.max(t1));
    }
}

impl Tree for BoxTreeView<'_> {
    type Vol = NodeBox;
    type Stack<E: Copy> = Stack4<E>;
    #[inline]
    fn root(&self) -> Option<(u32, NodeBox)> {
        self.root
    }
    #[inline(always)]
    fn prefetch_ref(&self, r: u32) {
        if !self.ahead {
            return;
        }
        if r & LEAF_BIT == 0 {
            prefetch(self.nodes.get(r as usize));
        }
    }
    #[inline(always)]
    fn ray_children(
        &self,
        node: u32,
        vol: &NodeBox,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
        out: &mut Found<NodeBox>,
    ) -> usize {
        let b = self.decode(node, vol);
        let (near, far) = slab4_grown(&b.lo, &b.hi, ray, grow, t_max);
        let hit = near.cmple(far * crate::geom::ray_box::EXIT_SCALE);
        let n = b.gather(hit, near, out);
        self.prefetch_found(&out[..n]);
        n
    }
    #[inline(always)]
    fn children_in(
        &self,
        node: u32,
        vol: &NodeBox,
        region: &Region,
        out: &mut Found<NodeBox>,
    ) -> usize {
        let b = self.decode(node, vol);
        let (hit, key) = region4(&b.lo, &b.hi, region);
        let n = b.gather(hit, key, out);
        self.prefetch_found(&out[..n]);
        n
    }
}

/// The slab test of `SlabRay::hit_a` on four boxes at once (one lane
/// each), every box grown by `grow`: each lane's entry and exit
/// distances within `[0, t_max]`.
#[inline(always)]
fn slab4_grown(
    lo: &[Vec4; 3],
    hi: &[Vec4; 3],
    ray: &SlabRay,
    grow: &Grow,
    t_max: f32,
) -> (Vec4, Vec4) {
    let mut near = Vec4::ZERO;
    let mut far = Vec4::splat(t_max);
    let (g, o, inv) = (grow.ext, ray.origin, ray.inv_dir);
    let gx = Vec4::splat(g.x);
    let gy = Vec4::splat(g.y);
    let gz = Vec4::splat(g.z);
    slab4(&mut near, &mut far, lo[0] - gx, hi[0] + gx, o.x, inv.x);
    slab4(&mut near, &mut far, lo[1] - gy, hi[1] + gy, o.y, inv.y);
    slab4(&mut near, &mut far, lo[2] - gz, hi[2] + gz, o.z, inv.z);
    (near, far)
}

/// Which of four boxes (one lane each) may touch `region`, and each one's
/// key: the squared distance from a ball region's centre, zero for a box
/// region.
#[inline(always)]
fn region4(lo: &[Vec4; 3], hi: &[Vec4; 3], region: &Region) -> (glam::BVec4A, Vec4) {
    match *region {
        Region::Ball { c, r } => {
            // squared distance from the centre to each box
            let d = |l: Vec4, h: Vec4, c: f32| {
                let c = Vec4::splat(c);
                (l - c).max(c - h).max(Vec4::ZERO)
            };
            let (dx, dy, dz) = (
                d(lo[0], hi[0], c.x),
                d(lo[1], hi[1], c.y),
                d(lo[2], hi[2], c.z),
            );
            let d2 = dx * dx + dy * dy + dz * dz;
            (d2.cmple(Vec4::splat(r * r)), d2)
        }
        Region::Box { lo: a, hi: b } => {
            let o = |l: Vec4, h: Vec4, a: f32, b: f32| {
                l.cmple(Vec4::splat(b)) & h.cmpge(Vec4::splat(a))
            };
            let hit =
                o(lo[0], hi[0], a.x, b.x) & o(lo[1], hi[1], a.y, b.y) & o(lo[2], hi[2], a.z, b.z);
            (hit, Vec4::ZERO)
        }
    }
}

/// A mesh's sphere tree with its decoding frame.
pub(crate) struct SphereTreeView<'a> {
    nodes: &'a [ArchivedSphereNode],
    origin: Vec3A,
    scale: Vec3A,
    radius_scale: f32,
    root: Option<(u32, Ball)>,
}

impl SphereTreeView<'_> {
    /// Decodes `[x, y, z, r]` codes: origin + q · scale and q ·
    /// radius_scale, as `kiln_formats::level::SphereFrame::decode`.
    #[inline]
    fn decode(&self, q: [u16; 4]) -> Ball {
        let f = |k: usize| f32::from(q[k]);
        Ball {
            c: self.origin + Vec3A::new(f(0), f(1), f(2)) * self.scale,
            r: f(3) * self.radius_scale,
        }
    }

    /// Child `c` of node `n` (links `l`), if the slot is used.
    #[inline]
    fn child(&self, n: &ArchivedSphereNode, l: &Links, c: usize) -> Option<(u32, Ball)> {
        ((c as u32) < l.used).then(|| {
            (
                l.child(c),
                self.decode(n.sphere.each_ref().map(|v| v[c].to_native())),
            )
        })
    }
}

impl Tree for SphereTreeView<'_> {
    type Vol = Ball;
    type Stack<E: Copy> = Stack4<E>;
    #[inline]
    fn root(&self) -> Option<(u32, Ball)> {
        self.root
    }
    #[inline]
    fn ray_children(
        &self,
        node: u32,
        _: &Ball,
        ray: &SlabRay,
        grow: &Grow,
        t_max: f32,
        out: &mut Found<Ball>,
    ) -> usize {
        let n = &self.nodes[node as usize];
        let l = n.links();
        let mut k = 0;
        for c in 0..WIDTH {
            if let Some((r, b)) = self.child(n, &l, c)
                && let Some(t) = b.ray_entry(ray, grow, t_max)
            {
                out[k] = (r, t, b);
                k += 1;
            }
        }
        k
    }
    #[inline]
    fn children_in(&self, node: u32, _: &Ball, region: &Region, out: &mut Found<Ball>) -> usize {
        let n = &self.nodes[node as usize];
        let l = n.links();
        let mut k = 0;
        for c in 0..WIDTH {
            if let Some((r, b)) = self.child(n, &l, c)
                && let Some(key) = b.region_key(region)
            {
                out[k] = (r, key, b);
                k += 1;
            }
        }
        k
    }
}

/// A mesh's tree, whichever kind it is.
pub(crate) enum TreeRef<'a> {
    /// Box nodes, tested lane by lane.
    Boxes(WideTreeView<'a, Portable>),
    /// Box nodes, tested with AVX2.
    #[cfg(target_arch = "x86_64")]
    BoxesAvx2(WideTreeView<'a, Avx2>),
    /// Sphere nodes.
    Spheres(SphereTreeView<'a>),
}

thread_local! {
    /// Set while [`with_portable_lanes`] runs on this thread.
    static PORTABLE_LANES: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every mesh box tree this thread walks tested by the
/// portable pass (written lane by lane) even where the CPU has AVX2: for
/// tests that compare the two passes' answers.
pub fn with_portable_lanes<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            PORTABLE_LANES.set(self.0);
        }
    }
    let _reset = Reset(PORTABLE_LANES.replace(true));
    f()
}

/// Runs `$body` with `$t` bound to the box or sphere tree of `$tree` (a
/// [`TreeRef`]), an AVX2 tree's walk compiled for AVX2.
macro_rules! each_tree {
    ($tree:expr, $t:ident => $body:expr) => {
        match $tree {
            TreeRef::Boxes($t) => $body,
            #[cfg(target_arch = "x86_64")]
            // the walks are always inlined, so the whole walk is compiled
            // for AVX2 here
            TreeRef::BoxesAvx2($t) => wide::with_avx2(
                $t.lanes,
                #[inline(always)]
                || $body,
            ),
            TreeRef::Spheres($t) => $body,
        }
    };
}

impl<'a> TreeRef<'a> {
    /// The tree of `mesh`.
    #[inline]
    pub(crate) fn of(mesh: &'a ArchivedTriMesh) -> Self {
        let root = mesh.root.to_native();
        let empty = mesh.leaves.is_empty();
        match &mesh.tree {
            ArchivedMeshTree::Spheres(st) => {
                let fr = &st.frame;
                let mut t = SphereTreeView {
                    nodes: st.nodes.as_slice(),
                    origin: vec3a(&fr.origin),
                    scale: vec3a(&fr.scale),
                    radius_scale: fr.radius_scale.to_native(),
                    root: None,
                };
                if !empty {
                    t.root = Some((root, t.decode(fr.root.each_ref().map(|v| v.to_native()))));
                }
                TreeRef::Spheres(t)
            }
            ArchivedMeshTree::Boxes(nodes) => {
                let t = WideTreeView::new(
                    nodes.as_slice(),
                    mesh.leaves.as_slice(),
                    (!empty).then_some(root),
                    Portable,
                );
                #[cfg(target_arch = "x86_64")]
                if !PORTABLE_LANES.get()
                    && let Some(cpu) = Avx2::detect()
                {
                    return TreeRef::BoxesAvx2(t.with_lanes(cpu));
                }
                TreeRef::Boxes(t)
            }
        }
    }

    /// [`walk_ray`] on this tree.
    #[inline(always)]
    pub(crate) fn walk_ray<V: RayVisitor>(&self, ray: &SlabRay, grow: &Grow, v: &mut V) {
        each_tree!(self, t => walk_ray(t, ray, grow, v))
    }

    /// [`walk_nearest`] on this tree.
    #[inline]
    pub(crate) fn walk_nearest<V: NearVisitor>(&self, c: Vec3, v: &mut V) {
        each_tree!(self, t => walk_nearest(t, c.into(), v))
    }

    /// The leaves whose volume may touch the box `lo..=hi`.
    #[inline]
    pub(crate) fn walk_box(&self, lo: Vec3, hi: Vec3, leaf: impl FnMut(u32) -> bool) {
        let region = Region::Box {
            lo: lo.into(),
            hi: hi.into(),
        };
        each_tree!(self, t => walk_overlap(t, &region, leaf))
    }
}

/// What the ray walker asks of a visitor.
pub(crate) trait RayVisitor {
    /// Current far end of the ray (shrinks as hits are found).
    fn t_max(&self) -> f32;
    /// Visits a leaf's payload; returns `true` to stop the walk.
    fn leaf(&mut self, data: u32) -> bool;
    /// Whether a node's children are entered nearest first (the default);
    /// `false` where any hit will do.
    #[inline(always)]
    fn sorted(&self) -> bool {
        true
    }
}

/// A fixed stack of at most `N` entries (a tree's width less one per
/// level of [`MAX_DEPTH`]) that is never initialised as a whole (a walk
/// is short; clearing kilobytes per query would cost more than the walk).
pub(crate) struct Stack<E: Copy, const N: usize> {
    slots: [MaybeUninit<E>; N],
    len: usize,
}

/// A walk's stack, made empty.
pub(crate) trait Fresh {
    /// An empty stack.
    fn fresh() -> Self;
}

impl<E: Copy, const N: usize> Fresh for Stack<E, N> {
    #[inline]
    fn fresh() -> Self {
        Stack {
            slots: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }
}

impl<E: Copy, const N: usize> Waiting<E> for Stack<E, N> {
    #[inline(always)]
    fn push(&mut self, e: E) {
        // bounds-checked: a verified tree never needs more than N entries
        // (the tree's width less one per level of the current path), so
        // this cannot panic
        self.slots[self.len] = MaybeUninit::new(e);
        self.len += 1;
    }
    #[inline(always)]
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

/// Walks `tree` along `ray`, front to back: at each inner node every child
/// is tested and the nearest hit (by entry distance) is entered first while
/// the others wait on the stack with their entry distances, nearer ones on
/// top, so they are dropped unseen once a closer hit shrinks the range.
/// Every volume is grown by `grow` first: nothing for rays, the sphere for
/// sweeps. A visitor whose `sorted` says `false` (any hit will do) has
/// the children entered in the order found instead.
#[inline(always)]
pub(crate) fn walk_ray<T: Tree + ?Sized, V: RayVisitor>(
    tree: &T,
    ray: &SlabRay,
    grow: &Grow,
    v: &mut V,
) {
    let Some(root) = ray_root(tree, ray, grow, v.t_max()) else {
        return;
    };
    if root.0 & LEAF_BIT != 0 {
        // a tree of one leaf (the top-level tree of a level of one object):
        // the leaf alone, without setting up the walk's stack (74 of 2,131
        // instructions a ray on sauer_pandora's random rays)
        v.leaf(root.0 & !LEAF_BIT);
        return;
    }
    let sorted = v.sorted();
    ordered_walk(
        tree,
        root,
        v,
        sorted,
        |v, data| v.leaf(data),
        #[inline(always)]
        |tree, node, vol, v, found| tree.ray_children(node, vol, ray, grow, v.t_max(), found),
        // a waiting subtree is entered only while still in range
        |v, t_entry| t_entry <= v.t_max(),
    );
}

/// The root of `tree` if `ray` (against volumes grown by `grow`) enters it
/// within `[0, t_max]`: where a ray walk starts.
#[inline(always)]
pub(crate) fn ray_root<T: Tree + ?Sized>(
    tree: &T,
    ray: &SlabRay,
    grow: &Grow,
    t_max: f32,
) -> Option<(u32, T::Vol)> {
    let (r, vol) = tree.root()?;
    vol.ray_entry(ray, grow, t_max)?;
    Some((r, vol))
}

/// Orders a node's children by distance (n ≤ 8), leaves all but the
/// nearest waiting on the stack, nearer ones on top, and returns the
/// nearest to enter. Unless `sorted`: then they wait in the order found
/// and the last is entered (an any-hit walk, which the first hit ends:
/// on sauer_pandora's rays sorting saved 2% of the nodes visited and cost
/// 3–4% of the time).
#[inline(always)]
fn nearest_first<V: Copy>(
    found: &mut [(u32, f32, V)],
    sorted: bool,
    stack: &mut impl Waiting<(u32, f32, V)>,
) -> (u32, V) {
    let n = found.len();
    if sorted {
        // insertion sort, farthest first: the nearest ends last
        for i in 1..n {
            let mut j = i;
            while j > 0 && found[j - 1].1 < found[j].1 {
                found.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    for &e in &found[..n - 1] {
        stack.push(e);
    }
    (found[n - 1].0, found[n - 1].2)
}

/// Where a walk keeps the entries waiting to be entered.
pub(crate) trait Waiting<E: Copy> {
    /// Leaves `e` waiting (on top).
    fn push(&mut self, e: E);
    /// The entry on top, taken off.
    fn pop(&mut self) -> Option<E>;
}

impl<E: Copy, W: Waiting<E>> Waiting<E> for &mut W {
    #[inline(always)]
    fn push(&mut self, e: E) {
        W::push(self, e)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<E> {
        W::pop(self)
    }
}

/// A heap stack, for walks kept side by side (a batch's lanes): it grows
/// to the deepest path met, never past a fixed stack's entries on a verified
/// tree.
impl<E: Copy> Waiting<E> for Vec<E> {
    #[inline(always)]
    fn push(&mut self, e: E) {
        Vec::push(self, e)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<E> {
        Vec::pop(self)
    }
}

/// A nearest-first walk that advances one node at a time: [`ordered_walk`]
/// runs one to its end; a batch of rays runs several in turn, so that one
/// ray's wait for memory overlaps the others' work (Kocberber et al.,
/// "Asynchronous Memory Access Chaining", VLDB 2015).
pub(crate) struct Ordered<V: Copy, S> {
    /// The node to enter next, or [`Ordered::NONE`] when the walk must
    /// take a waiting entry (or is over). Kept apart from its volume, not
    /// as an `Option` of both: moving that through memory as a whole
    /// stalled on store forwarding in batch walks.
    node: u32,
    /// The next node's volume.
    vol: V,
    waiting: S,
}

impl<V: Copy, S: Waiting<(u32, f32, V)>> Ordered<V, S> {
    /// No next node: not a reference a verified tree can hold (leaf
    /// indices stay below `MAX_LEAVES`, 2^30).
    const NONE: u32 = u32::MAX;

    /// A walk from `root`, keeping waiting entries in `waiting` (empty).
    #[inline(always)]
    pub(crate) fn new(root: (u32, V), waiting: S) -> Self {
        Ordered {
            node: root.0,
            vol: root.1,
            waiting,
        }
    }

    /// Enters the next node (none: nothing happens). A leaf's payload is
    /// returned for the caller to visit; an inner node's children that
    /// `children` finds (each with a distance key) are ordered, the nearest
    /// becomes the next node and the others wait, nearer ones on top (with
    /// `sorted` false, in the order found: see `nearest_first`).
    #[inline(always)]
    pub(crate) fn step<T: Tree<Vol = V> + ?Sized>(
        &mut self,
        tree: &T,
        found: &mut Found<V>,
        sorted: bool,
        children: impl FnOnce(&T, u32, &V, &mut Found<V>) -> usize,
    ) -> Option<u32> {
        let r = self.node;
        if r == Self::NONE {
            return None;
        }
        self.node = Self::NONE;
        if r & LEAF_BIT != 0 {
            return Some(r & !LEAF_BIT);
        }
        let n = children(tree, r, &self.vol, found);
        if n > 0 {
            (self.node, self.vol) = nearest_first(&mut found[..n], sorted, &mut self.waiting);
        }
        None
    }

    /// Makes sure there is a next node: when there is none, takes waiting
    /// entries off the stack until `keep` accepts one's key (the rest are
    /// dropped unseen). Returns `false` when the walk is over.
    #[inline(always)]
    pub(crate) fn settle(&mut self, keep: impl Fn(f32) -> bool) -> bool {
        if self.node != Self::NONE {
            return true;
        }
        while let Some((next, key, vol)) = self.waiting.pop() {
            if keep(key) {
                (self.node, self.vol) = (next, vol);
                return true;
            }
        }
        false
    }

    /// [`Ordered::settle`] for a ray with range `t_max` (a waiting subtree
    /// is entered only while its entry distance is in range), then asks
    /// memory for the next node: a batch's lane reads it on its next turn.
    #[inline(always)]
    pub(crate) fn settle_ahead<T: Tree<Vol = V> + ?Sized>(&mut self, tree: &T, t_max: f32) -> bool {
        if !self.settle(|t_entry| t_entry <= t_max) {
            return false;
        }
        tree.prefetch_ref(self.node);
        true
    }

    /// The node the walk enters next.
    #[inline(always)]
    pub(crate) fn next_ref(&self) -> Option<u32> {
        (self.node != Self::NONE).then_some(self.node)
    }

    /// The walk's stack, for reuse by another walk (empty once the walk is
    /// over).
    #[inline(always)]
    pub(crate) fn into_waiting(self) -> S {
        self.waiting
    }
}

/// The walk shared by [`walk_ray`] and [`walk_nearest`]: from `root`,
/// visit leaves with `leaf` (true stops), enter the nearest of the
/// children `children` finds (each with a distance key) while the others
/// wait, and on the way back enter a waiting subtree only if `keep` still
/// accepts its key.
#[inline(always)]
fn ordered_walk<T: Tree + ?Sized, V>(
    tree: &T,
    root: (u32, T::Vol),
    v: &mut V,
    sorted: bool,
    leaf: impl Fn(&mut V, u32) -> bool,
    children: impl Fn(&T, u32, &T::Vol, &V, &mut Found<T::Vol>) -> usize,
    keep: impl Fn(&V, f32) -> bool,
) {
    let mut stack = T::Stack::<(u32, f32, T::Vol)>::fresh();
    let mut found: Found<T::Vol> = [(0, 0.0, root.1); WIDE];
    let mut w = Ordered::new(root, &mut stack);
    loop {
        if let Some(data) = w.step(
            tree,
            &mut found,
            sorted,
            #[inline(always)]
            |t, node, vol, found| children(t, node, vol, v, found),
        ) && leaf(v, data)
        {
            return;
        }
        if !w.settle(|key| keep(v, key)) {
            return;
        }
    }
}

/// Visits, depth first, every leaf whose volume may touch `region`,
/// skipping whole subtrees whose volume does not. The leaf visitor returns
/// `true` to stop.
#[inline(always)]
pub(crate) fn walk_overlap<T: Tree + ?Sized>(
    tree: &T,
    region: &Region,
    mut leaf: impl FnMut(u32) -> bool,
) {
    let Some((mut r, mut vol)) = tree.root() else {
        return;
    };
    if vol.region_key(region).is_none() {
        return;
    }
    let mut stack = T::Stack::<(u32, T::Vol)>::fresh();
    let mut found: Found<T::Vol> = [(0, 0.0, vol); WIDE];
    loop {
        if r & LEAF_BIT != 0 {
            if leaf(r & !LEAF_BIT) {
                return;
            }
        } else {
            let n = tree.children_in(r, &vol, region, &mut found);
            if n > 0 {
                for &(nr, _, nv) in found[1..n].iter().rev() {
                    stack.push((nr, nv));
                }
                (r, vol) = (found[0].0, found[0].2);
                continue;
            }
        }
        let Some((next, next_vol)) = stack.pop() else {
            return;
        };
        (r, vol) = (next, next_vol);
    }
}

/// What the nearest-first walker asks of a visitor.
pub(crate) trait NearVisitor {
    /// Distance from the centre beyond which nothing is of interest
    /// (shrinks as closer leaves are found).
    fn radius(&self) -> f32;
    /// Visits a leaf's payload; returns `true` to stop the walk.
    fn leaf(&mut self, data: u32) -> bool;
}

/// Visits the leaves within the visitor's radius of `c`, nearest volume
/// first, dropping every waiting subtree that lies beyond the radius once
/// it shrinks (branch and bound: a closest-point search visits the few
/// leaves near the answer, not every leaf in the first radius).
#[inline(always)]
pub(crate) fn walk_nearest<T: Tree + ?Sized, V: NearVisitor>(tree: &T, c: Vec3A, v: &mut V) {
    let Some((r, vol)) = tree.root() else {
        return;
    };
    let rad = v.radius();
    if vol.dist2(c) > rad * rad {
        return;
    }
    ordered_walk(
        tree,
        (r, vol),
        v,
        true,
        |v, data| v.leaf(data),
        #[inline(always)]
        |tree, node, vol, v, found| {
            tree.children_in(node, vol, &Region::Ball { c, r: v.radius() }, found)
        },
        // a waiting subtree is entered only while within the shrunk radius
        |v, d2| {
            let rad = v.radius();
            d2 <= rad * rad
        },
    );
}

/// [`walk_overlap`] against the box `lo..=hi`.
#[inline]
pub(crate) fn walk_box<T: Tree + ?Sized>(
    tree: &T,
    lo: Vec3,
    hi: Vec3,
    leaf: impl FnMut(u32) -> bool,
) {
    let region = Region::Box {
        lo: lo.into(),
        hi: hi.into(),
    };
    walk_overlap(tree, &region, leaf)
}

/// An archived `[f32; 3]` as a vector.
#[inline]
pub(crate) fn vec3a(v: &[rkyv::rend::f32_le; 3]) -> Vec3A {
    Vec3A::new(v[0].to_native(), v[1].to_native(), v[2].to_native())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_codes_convert_lane_by_lane() {
        // every byte value in every position, and the lanes kept apart
        let mut rng = kiln_geometry::rng::Rng::new(0x2545_f491);
        for round in 0..2000u32 {
            let mut byte = |k: u32| {
                let x = rng.next_u64();
                if round < 256 {
                    ((round + 7 * k) & 255) as u8
                } else {
                    x as u8
                }
            };
            let mut codes3 = |base: u32| {
                std::array::from_fn::<[u8; WIDTH], 3, _>(|a| {
                    std::array::from_fn(|c| byte(base + 4 * a as u32 + c as u32))
                })
            };
            let (lo, hi) = (codes3(0), codes3(12));
            let node = ArchivedBoxNode {
                lo,
                hi,
                links: [rkyv::rend::u32_le::from_native(0x1234_5678); 2],
            };
            let (cl, ch) = node_codes(&node);
            for a in 0..3 {
                for c in 0..WIDTH {
                    assert_eq!(cl[a][c], f32::from(lo[a][c]), "{lo:?}");
                    assert_eq!(ch[a][c], f32::from(hi[a][c]), "{hi:?}");
                }
            }
        }
    }
}
