//! Many rays on one thread, walked side by side: each of [`LANES`] rays in
//! flight advances by one tree node (or one shape) in turn, so while one
//! waits for a node or leaf that is not in cache (the walks ask for every
//! child they will enter as soon as they find it) the others compute.
//! This is "asynchronous memory access chaining" (Kocberber, Falsafi and
//! Grot, VLDB 2015) applied to tree walks: on a level larger than the
//! cache most of a single ray's time is spent waiting for memory.
//!
//! Every ray is answered exactly as [`Level::raycast`] answers it: each
//! lane runs the same walk (`walk::Ordered`, the stepwise form of the
//! single-ray walk), with the same visitors (`TopSearch`, `MeshSearch`),
//! and meets the same instances and leaves in the same order; only whose
//! turn it is differs. A lane spends one turn at a leaf asking for its
//! corners, which the leaf test reads through the leaf row, and tests it
//! on its next. Shapes other than triangle meshes (solids, concave solids)
//! answer in one turn, as in the single-ray walk. Archives small
//! enough to stay in cache are walked one ray at a time
//! ([`INTERLEAVE_BYTES`]).

use super::Scope;
use super::raycast::{Leaf, Ray, RayFound, TopSearch, WORLD_ROWS};
use crate::collider::tri_mesh::MeshSearch;
use crate::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::level::Level;
use crate::object::ObjectId;
use crate::placement::Mat3x4;
#[cfg(target_arch = "x86_64")]
use crate::walk::wide::{Avx2, with_avx2};
use crate::walk::wide::{Portable, WideTreeView};
use crate::walk::{
    Ball, Found, Grow, Ordered, RayVisitor, SphereTreeView, TopTreeView, Tree, TreeRef, Unframed,
    ray_root, top_tree,
};
use kiln_formats::tri_mesh::{LEAF_BIT, WIDE, WIDTH};

/// Rays in flight at once on one thread. On the 2.1M-triangle benchmark
/// terrain four, eight and sixteen measured the same (what limits a batch
/// there is how many misses the CPU keeps outstanding, not how many rays
/// wait); eight leaves room on CPUs that keep more.
pub(super) const LANES: usize = 8;

/// A walk's stack of waiting entries (node, entry distance, volume), on
/// the heap so that lanes can be kept side by side; reused ray after ray.
type Waiting<V> = Vec<(u32, f32, V)>;

/// The walk of the mesh an instance leaf led to, in its kind of tree.
enum MeshWalk<'a> {
    Boxes(
        WideTreeView<'a, Portable>,
        Ordered<Unframed, Waiting<Unframed>>,
    ),
    #[cfg(target_arch = "x86_64")]
    BoxesAvx2(WideTreeView<'a, Avx2>, Ordered<Unframed, Waiting<Unframed>>),
    Spheres(SphereTreeView<'a>, Ordered<Ball, Waiting<Ball>>),
}

/// A triangle mesh being walked for one lane's ray.
struct MeshLane<'a> {
    /// The instance whose mesh it is.
    instance: u32,
    /// The instance's local-from-world rows.
    local_from_world: Mat3x4,
    /// The ray in the mesh's local space (slab form, for the tree).
    ray: SlabRay,
    search: MeshSearch<'a>,
    walk: MeshWalk<'a>,
    /// The next node is a leaf whose corners were asked for last turn.
    primed: bool,
}

/// A lane's stacks between walks, kept so that each ray reuses them
/// (`V`: what the top-level tree's walk carries).
struct Spare<V> {
    top: Waiting<V>,
    boxes: Waiting<Unframed>,
    balls: Waiting<Ball>,
}

/// One ray in flight (`V`: what the top-level tree's walk carries).
struct Lane<'a, V: Copy> {
    /// Its index in the batch.
    index: usize,
    /// The ray in slab form, for the top-level tree.
    ray: SlabRay,
    search: TopSearch<'a>,
    top: Option<Ordered<V, Waiting<V>>>,
    mesh: Option<MeshLane<'a>>,
    spare: Spare<V>,
}

/// Scratch space for one step's children.
struct Scratch<V> {
    top: Found<V>,
    boxes: Found<Unframed>,
    balls: Found<Ball>,
}

impl<'a, V: Copy> Lane<'a, V> {
    /// Advances the ray by one node, leaf or shape. Returns `false` once
    /// its answer is in `search.hit`.
    #[inline(always)]
    fn step<T: Tree<Vol = V>>(&mut self, top: &T, scratch: &mut Scratch<V>) -> bool {
        if let Some(m) = &mut self.mesh {
            if m.step(scratch) {
                return true;
            }
            let m = self.mesh.take().expect("just walked");
            let h = m.search.answer();
            match m.walk {
                MeshWalk::Boxes(_, w) => recycle(w, &mut self.spare.boxes),
                #[cfg(target_arch = "x86_64")]
                MeshWalk::BoxesAvx2(_, w) => recycle(w, &mut self.spare.boxes),
                MeshWalk::Spheres(_, w) => recycle(w, &mut self.spare.balls),
            }
            if self
                .search
                .offer(h, ObjectId::level(m.instance), &m.local_from_world)
            {
                return false;
            }
            return self.settle_top(top);
        }
        let Some(walk) = &mut self.top else {
            return false;
        };
        let (ray, t_max) = (&self.ray, self.search.t_max);
        let leaf = walk.step(top, &mut scratch.top, true, |t, node, vol, found| {
            t.ray_children(node, vol, ray, &Grow::NONE, t_max, found)
        });
        if let Some(inst) = leaf {
            // the instance's answer as `TopSearch::leaf` gives it, except
            // that a mesh is walked over the next turns, after which the
            // top-level walk goes on (the mesh's hit may shrink the range)
            if let Some(found) = self.search.local(inst) {
                let (shape, lo, ld, local) = match found {
                    Leaf::Local(shape, lo, ld, local) => (shape, lo, ld, local),
                    Leaf::World(h) => {
                        if self.search.offer(h, ObjectId::level(inst), &WORLD_ROWS) {
                            return false;
                        }
                        return self.settle_top(top);
                    }
                };
                let h = match shape.tri_mesh() {
                    Some(mesh) => {
                        if self.start_mesh(inst, mesh, lo, ld, local) {
                            return true;
                        }
                        None // the ray misses the mesh's root
                    }
                    None => shape.raycast_local(lo, ld, self.search.t_max, self.search.any),
                };
                if self.search.offer(h, ObjectId::level(inst), &local) {
                    return false;
                }
            }
        }
        self.settle_top(top)
    }

    /// After a top-level step: the next node to enter, asked for from
    /// memory now; `false` when the top-level walk is over.
    #[inline(always)]
    fn settle_top<T: Tree<Vol = V>>(&mut self, top: &T) -> bool {
        let t_max = self.search.t_max;
        self.top
            .as_mut()
            .is_some_and(|w| w.settle_ahead(top, t_max))
    }

    /// Starts the walk of `mesh` for the local ray `lo + t·ld`; `false`
    /// when the ray misses its root (nothing to walk).
    fn start_mesh(
        &mut self,
        instance: u32,
        mesh: &'a kiln_formats::tri_mesh::ArchivedTriMesh,
        lo: glam::Vec3,
        ld: glam::Vec3,
        local_from_world: Mat3x4,
    ) -> bool {
        let ray = SlabRay::new(lo, ld);
        let t_max = self.search.t_max;
        let walk = match TreeRef::of(mesh) {
            TreeRef::Boxes(t) => {
                let Some(w) = start_walk(&t, &ray, t_max, &mut self.spare.boxes) else {
                    return false;
                };
                MeshWalk::Boxes(t, w)
            }
            #[cfg(target_arch = "x86_64")]
            TreeRef::BoxesAvx2(t) => {
                let Some(w) = start_walk(&t, &ray, t_max, &mut self.spare.boxes) else {
                    return false;
                };
                MeshWalk::BoxesAvx2(t, w)
            }
            TreeRef::Spheres(t) => {
                let Some(w) = start_walk(&t, &ray, t_max, &mut self.spare.balls) else {
                    return false;
                };
                MeshWalk::Spheres(t, w)
            }
        };
        self.mesh = Some(MeshLane {
            instance,
            local_from_world,
            ray,
            search: MeshSearch::new(mesh, lo, ld, t_max, self.search.any),
            walk,
            primed: false,
        });
        true
    }

    /// Takes ray `index` into the lane; `false` (with the lane idle) when
    /// the ray misses the level's box, so its answer is already known: none.
    fn start<T: Tree<Vol = V>>(&mut self, top: &T, index: usize, ray: &Ray) -> bool {
        if let Some(w) = self.top.take() {
            recycle(w, &mut self.spare.top);
        }
        self.index = index;
        self.ray = SlabRay::new(ray.origin, ray.dir);
        self.search.ray = *ray;
        self.search.t_max = ray.max_t;
        self.search.hit = None;
        self.top = start_walk(top, &self.ray, ray.max_t, &mut self.spare.top);
        self.top.is_some()
    }
}

/// The walk of `tree` for `ray` within `t_max`, its root asked for from
/// memory and its stack taken from `spare`; `None` (nothing taken) when
/// the ray misses the root.
#[inline(always)]
fn start_walk<T: Tree>(
    tree: &T,
    ray: &SlabRay,
    t_max: f32,
    spare: &mut Waiting<T::Vol>,
) -> Option<Ordered<T::Vol, Waiting<T::Vol>>> {
    let root = ray_root(tree, ray, &Grow::NONE, t_max)?;
    tree.prefetch_ref(root.0);
    Some(Ordered::new(root, std::mem::take(spare)))
}

/// Gives a finished (or stopped) walk's stack back to `spare`, emptied.
fn recycle<V: Copy>(walk: Ordered<V, Waiting<V>>, spare: &mut Waiting<V>) {
    let mut stack = walk.into_waiting();
    stack.clear();
    *spare = stack;
}

impl MeshLane<'_> {
    /// One turn of the mesh's walk; `false` once it is over.
    #[inline(always)]
    fn step<V>(&mut self, scratch: &mut Scratch<V>) -> bool {
        let (ray, search, primed) = (&self.ray, &mut self.search, &mut self.primed);
        match &mut self.walk {
            MeshWalk::Boxes(t, w) => step_mesh(t, w, ray, search, primed, &mut scratch.boxes),
            #[cfg(target_arch = "x86_64")]
            MeshWalk::BoxesAvx2(t, w) => step_mesh(t, w, ray, search, primed, &mut scratch.boxes),
            MeshWalk::Spheres(t, w) => step_mesh(t, w, ray, search, primed, &mut scratch.balls),
        }
    }
}

/// One turn of a mesh walk: at a leaf not yet `primed`, ask for its
/// corners (its test reads them through the leaf row) and test it next
/// turn; else the body of `walk::walk_ray`'s loop. `false` once the walk
/// is over.
#[inline(always)]
fn step_mesh<T: Tree>(
    tree: &T,
    walk: &mut Ordered<T::Vol, Waiting<T::Vol>>,
    ray: &SlabRay,
    search: &mut MeshSearch<'_>,
    primed: &mut bool,
    found: &mut Found<T::Vol>,
) -> bool {
    if let Some(r) = walk.next_ref()
        && r & LEAF_BIT != 0
        && !*primed
    {
        search.prefetch_leaf(r & !LEAF_BIT);
        *primed = true;
        return true;
    }
    *primed = false;
    let t_max = search.t_max();
    let sorted = search.sorted();
    if let Some(leaf) = walk.step(
        tree,
        found,
        sorted,
        #[inline(always)]
        |t, node, vol, found| t.ray_children(node, vol, ray, &Grow::NONE, t_max, found),
    ) && search.leaf(leaf)
    {
        return false;
    }
    walk.settle_ahead(tree, search.t_max())
}

/// Archives at least this large are walked side by side; smaller ones one
/// ray after another. Interleaving pays where rays wait for memory and
/// costs its bookkeeping where they do not: on the benchmark terrain
/// (`profile_queries *-many`, best of three) a 2 MB archive answered
/// batches about 10% slower side by side, an 8 MB one about 10% faster,
/// the 33 MB one 1.3–1.5× faster.
pub(super) const INTERLEAVE_BYTES: usize = 4 << 20;

impl Level {
    /// Whether batches on this archive are walked side by side.
    pub(super) fn interleaves(&self) -> bool {
        self.byte_len() >= INTERLEAVE_BYTES
    }

    /// Answers every ray of `rays` on the calling thread, calling
    /// `answer(i, found)` for ray `i` (in the order they finish): side by
    /// side when `interleave` (see [`INTERLEAVE_BYTES`]), else one by one.
    pub(super) fn search_many(
        &self,
        rays: &[Ray],
        filter: &Filter,
        any: bool,
        interleave: bool,
        mut answer: impl FnMut(usize, Option<RayFound>),
    ) {
        if !interleave {
            for (i, ray) in rays.iter().enumerate() {
                answer(
                    i,
                    ray.is_valid()
                        .then(|| Scope::of(self).search(ray, any, filter))
                        .flatten(),
                );
            }
            return;
        }
        // compiled for AVX2 where the CPU has it, so that the meshes'
        // AVX2 node pass inlines into the lanes' steps
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = Avx2::detect() {
            return with_avx2(
                cpu,
                #[inline(always)]
                || self.interleave_top(rays, filter, any, answer),
            );
        }
        self.interleave_top(rays, filter, any, answer)
    }

    /// [`Level::search_many`]'s rays side by side, in the level's form of
    /// top-level tree.
    #[inline(always)]
    fn interleave_top(
        &self,
        rays: &[Ray],
        filter: &Filter,
        any: bool,
        answer: impl FnMut(usize, Option<RayFound>),
    ) {
        match top_tree(self.archive()) {
            TopTreeView::Floats(t) => self.interleave(&t, rays, filter, any, answer),
            TopTreeView::Boxes(t) => self.interleave(&t, rays, filter, any, answer),
        }
    }

    /// [`Level::search_many`]'s rays side by side, with `top` the level's
    /// top-level tree.
    #[inline(always)]
    fn interleave<T: Tree>(
        &self,
        top: &T,
        rays: &[Ray],
        filter: &Filter,
        any: bool,
        mut answer: impl FnMut(usize, Option<RayFound>),
    ) {
        let level = self.archive();
        let new_lane = || Lane {
            index: 0,
            ray: SlabRay::new(glam::Vec3::ZERO, glam::Vec3::X),
            search: TopSearch {
                level,
                filter,
                ray: Ray::new(glam::Vec3::ZERO, glam::Vec3::X, 0.0),
                t_max: 0.0,
                any,
                hit: None,
            },
            top: None,
            mesh: None,
            spare: Spare {
                top: Vec::with_capacity(4 * WIDTH),
                boxes: Vec::with_capacity(8 * WIDE),
                balls: Vec::new(),
            },
        };
        let mut lanes: Vec<Lane<T::Vol>> = (0..LANES.min(rays.len())).map(|_| new_lane()).collect();
        let Some((_, root_vol)) = top.root() else {
            // an empty level: no ray meets anything
            (0..rays.len()).for_each(|i| answer(i, None));
            return;
        };
        let mut scratch = Scratch {
            top: [(0, 0.0, root_vol); WIDE],
            boxes: [(0, 0.0, Unframed); WIDE],
            balls: [(0, 0.0, Ball::EMPTY); WIDE],
        };
        let mut next = 0;
        // the next ray that needs a walk, into `lane`; rays answered
        // without one (invalid, or missing the level) are answered here
        fn feed<'a, T: Tree>(
            lane: &mut Lane<'a, T::Vol>,
            top: &T,
            rays: &[Ray],
            next: &mut usize,
            answer: &mut impl FnMut(usize, Option<RayFound>),
        ) -> bool {
            while *next < rays.len() {
                let i = *next;
                *next += 1;
                if rays[i].is_valid() && lane.start(top, i, &rays[i]) {
                    return true;
                }
                answer(i, None);
            }
            false
        }
        let mut active = 0;
        let mut live = [false; LANES];
        for (k, lane) in lanes.iter_mut().enumerate() {
            live[k] = feed(lane, top, rays, &mut next, &mut answer);
            active += usize::from(live[k]);
        }
        while active > 0 {
            for (k, lane) in lanes.iter_mut().enumerate() {
                if !live[k] || lane.step(top, &mut scratch) {
                    continue;
                }
                answer(lane.index, lane.search.hit.take());
                if !feed(lane, top, rays, &mut next, &mut answer) {
                    live[k] = false;
                    active -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::INTERLEAVE_BYTES;
    use crate::{Filter, Level, Ray};
    use glam::Vec3;
    use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene};
    use kiln_tests::Rng;

    /// A bumpy grid of `n`² quads with two boxes standing on it, one
    /// turned and scaled (so the batch meets a mesh, solids, a similarity
    /// and the top-level tree).
    fn level(n: u32) -> Level {
        let mut pos = Vec::new();
        for z in 0..=n {
            for x in 0..=n {
                let (fx, fz) = (x as f32 * 0.25, z as f32 * 0.25);
                pos.push([fx, (fx * 0.7).sin() * (fz * 0.3).cos() * 2.0, fz]);
            }
        }
        let mut scene = Scene::from_meshes(vec![
            SceneMesh::new("ground", pos, &kiln_tests::grid_triangles(n)),
            SceneMesh::cuboid("crate", [0.0; 3], [1.0, 1.0, 1.0]),
        ]);
        let mut second = scene.instances[1].clone();
        second.transform = glam::DAffine3::from_scale_rotation_translation(
            glam::DVec3::splat(1.5),
            glam::DQuat::from_rotation_y(0.6),
            glam::DVec3::new(30.0, 3.0, 20.0),
        );
        scene.instances[1].transform =
            glam::DAffine3::from_translation(glam::DVec3::new(10.0, 3.0, 12.0));
        scene.instances.push(second);
        let settings = BakeSettings::default().all_meshes();
        Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap()
    }

    /// On an archive large enough to be walked side by side, every ray of
    /// a batch — closest and any hit, hits and misses, rays outside the
    /// level, zero-length and invalid rays, under a filter that skips an
    /// object — gets exactly the single-ray answer.
    #[test]
    fn a_large_archive_walks_its_batches_side_by_side_with_the_single_ray_answers() {
        let level = level(380);
        assert!(
            level.byte_len() >= INTERLEAVE_BYTES,
            "{} bytes",
            level.byte_len()
        );
        assert!(level.interleaves());
        let mut rng = Rng::new(7);
        let mut rays: Vec<Ray> = (0..6000)
            .map(|_| {
                let o = Vec3::new(
                    rng.range(-10.0, 105.0),
                    rng.range(-4.0, 12.0),
                    rng.range(-10.0, 105.0),
                );
                let d = Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 0.3),
                    rng.range(-1.0, 1.0),
                );
                Ray::new(o, d, rng.range(0.0, 150.0))
            })
            .collect();
        rays.push(Ray::new(Vec3::new(10.0, 20.0, 12.0), Vec3::NEG_Y, 100.0)); // onto the crate
        rays.push(Ray::new(Vec3::new(10.0, 3.0, 12.0), Vec3::X, 100.0)); // from inside it
        rays.push(Ray::new(Vec3::ZERO, Vec3::ZERO, 1.0)); // invalid
        rays.push(Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, 1.0)); // invalid
        rays.push(Ray::new(Vec3::splat(500.0), Vec3::X, 10.0)); // outside the level
        let skipped = [level.object(1).unwrap()];
        for filter in [Filter::ALL, Filter::skip(&skipped)] {
            let mut hits = vec![None; rays.len()];
            level.raycast_many(&rays, &filter, &mut hits);
            let mut any = vec![false; rays.len()];
            level.raycast_any_many(&rays, &filter, &mut any);
            for (i, r) in rays.iter().enumerate() {
                assert_eq!(hits[i], level.raycast(r, &filter), "ray {i}: {r:?}");
                assert_eq!(any[i], level.raycast_any(r, &filter), "ray {i}: {r:?}");
            }
            let found = hits.iter().filter(|h| h.is_some()).count();
            assert!(found > 1000 && found < rays.len() - 1000, "{found} hits");
            // the object the filter skips is never hit; unfiltered, it is
            let skipped_hits = hits
                .iter()
                .flatten()
                .filter(|h| h.object == skipped[0])
                .count();
            assert_eq!(skipped_hits == 0, !filter.accepts(skipped[0], u32::MAX));
        }
    }

    /// Small archives are walked one ray at a time by the public batch
    /// methods; walked side by side anyway, every bundled sample under
    /// both tree kinds answers rays through its own vertices and edge
    /// midpoints (shared edges, grazing) and a mix of rays at random bit
    /// for bit as single rays do.
    #[test]
    fn small_archives_walked_side_by_side_give_the_single_ray_answers() {
        use kiln_formats::TreeKind;
        let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples");
        for name in ["walk_course.gltf", "shape_collection.glb", "khr_Box.glb"] {
            let path = std::path::Path::new(samples).join(name);
            let scene = kiln_baker::ingest::load(&path).unwrap().scene;
            let oracle = kiln_tests::Oracle::new(&scene);
            let tris = oracle.triangles();
            let (lo, hi) = kiln_tests::scene_bounds(tris);
            let mut rng = Rng::new(11);
            let mut rays: Vec<Ray> = kiln_tests::ray_mix(lo, hi, 3000, 5)
                .iter()
                .map(|r| Ray::new(r.origin, r.dir, r.max_t))
                .collect();
            for i in 0..3000 {
                let t = &tris[rng.below(tris.len())];
                let k = rng.below(3);
                let target = if i % 2 == 0 {
                    t.v[k]
                } else {
                    (t.v[k] + t.v[(k + 1) % 3]) * 0.5
                }
                .as_vec3();
                let origin = target + rng.unit32() * rng.range(0.1, 20.0);
                rays.push(Ray::new(origin, target - origin, 2.0));
            }
            for kind in [TreeKind::Aabb, TreeKind::Sphere] {
                let settings = BakeSettings::default().all_meshes().with_tree(kind);
                let baked = kiln_baker::bake_file(&path, &settings).unwrap();
                let level = Level::from_bytes(&baked.bytes).unwrap();
                assert!(!level.interleaves(), "{name} is small");
                let mut hits = vec![None; rays.len()];
                level.raycast_many_as(&rays, &Filter::ALL, &mut hits, true);
                let mut any = vec![false; rays.len()];
                level.raycast_any_many_as(&rays, &Filter::ALL, &mut any, true);
                let found = hits.iter().flatten().count();
                assert!(found > rays.len() / 4, "{name}: {found} hits");
                for (i, r) in rays.iter().enumerate() {
                    assert_eq!(hits[i], level.raycast(r, &Filter::ALL), "{name} ray {i}");
                    assert_eq!(any[i], level.raycast_any(r, &Filter::ALL), "{name} ray {i}");
                }
            }
        }
    }
}
