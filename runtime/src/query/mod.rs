//! Level-wide queries, one file per operation: the top-level tree picks
//! the instances, their colliders answer (`collider`).

mod cast;
mod overlap;
mod point;
mod ray_batch;
mod raycast;
mod sphere;

pub(crate) use cast::Ranked;
pub use cast::{CastOptions, ShapeCast, ShapeHit};
pub use overlap::ShapeOverlap;
pub(crate) use overlap::cull_box;
pub use raycast::{Ray, RayHit, is_direction};

use crate::collider::{At, ColliderRef, ObjectVisitor};
use crate::dynamic::Bodies;
use crate::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::level::Level;
use crate::object::ObjectId;
use crate::walk::{Grow, RayVisitor, TopTreeView, Tree, top_tree, walk_box, walk_ray};
use glam::Vec3;
use kiln_formats::level::ArchivedLevel;
use rayon::prelude::*;

/// What a query looks at: a level's objects, and a world's bodies beside
/// them. Every level-wide operation is written once, over a scope: a
/// [`Level`] asks its own, a [`crate::World`] adds its bodies.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// The level.
    pub level: &'a Level,
    /// The bodies, if a world asks.
    pub bodies: Option<&'a Bodies>,
}

impl<'a> Scope<'a> {
    /// The level's objects alone.
    #[inline]
    pub fn of(level: &'a Level) -> Scope<'a> {
        Scope {
            level,
            bodies: None,
        }
    }

    /// Calls `visit` with every object `filter` accepts whose box meets
    /// `lo..=hi` (its id, collider and where it is placed), until it answers
    /// `true`: the walk every overlap, yes/no and point query shares.
    #[inline]
    pub(crate) fn near(
        &self,
        lo: Vec3,
        hi: Vec3,
        filter: &Filter,
        mut visit: impl FnMut(ObjectId, ColliderRef, At) -> bool,
    ) {
        let level = self.level.archive();
        let stopped = match top_tree(level) {
            TopTreeView::Floats(t) => near_in(&t, level, lo, hi, filter, &mut visit),
            TopTreeView::Boxes(t) => near_in(&t, level, lo, hi, filter, &mut visit),
        };
        if !stopped && let Some(b) = self.bodies {
            near_bodies(b, lo, hi, filter, visit);
        }
    }

    /// Walks every object `filter` accepts along `ray`, its box grown by
    /// `grow`, nearest box first: the level's top-level tree, then the
    /// bodies (with the range the level left).
    #[inline]
    pub(crate) fn walk_ray<V: ObjectVisitor>(
        &self,
        ray: &SlabRay,
        grow: &Grow,
        filter: &Filter,
        v: &mut V,
    ) {
        let level = self.level.archive();
        let mut leaves = LevelLeaves {
            level,
            filter,
            v,
            stopped: false,
        };
        match top_tree(level) {
            TopTreeView::Floats(t) => walk_ray(&t, ray, grow, &mut leaves),
            TopTreeView::Boxes(t) => walk_ray(&t, ray, grow, &mut leaves),
        }
        if !leaves.stopped
            && let Some(b) = self.bodies
        {
            ray_bodies(b, ray, grow, filter, v);
        }
    }
}

/// [`Scope::near`]'s walk of the level's top-level tree `tree`; whether
/// `visit` stopped it. Always inlined, so that each form of the tree gets
/// its own copy of the leaf visit (one shared copy, called from both,
/// was not inlined into either: 16% of a sphere yes/no test on the 300
/// spheres).
#[inline(always)]
fn near_in<T: Tree>(
    tree: &T,
    level: &ArchivedLevel,
    lo: Vec3,
    hi: Vec3,
    filter: &Filter,
    visit: &mut impl FnMut(ObjectId, ColliderRef, At) -> bool,
) -> bool {
    let mut stopped = false;
    walk_box(tree, lo, hi, |ii| {
        if !filter.sees(level, ii) {
            return false;
        }
        let inst = &level.instances[ii as usize];
        let shape = ColliderRef(&level.colliders[inst.collider.to_native() as usize]);
        stopped = visit(ObjectId::level(ii), shape, At::Instance(level, inst));
        stopped
    });
    stopped
}

/// [`Bodies::near`] kept out of line, so the level's own walk is laid
/// out as it was before worlds (inlined, it cost a level's sphere yes/no
/// tests 15% of their speed for 2% more instructions).
#[inline(never)]
fn near_bodies(
    b: &Bodies,
    lo: Vec3,
    hi: Vec3,
    filter: &Filter,
    visit: impl FnMut(ObjectId, ColliderRef, At) -> bool,
) {
    b.near(lo, hi, filter, visit);
}

/// [`Bodies::walk_ray`] kept out of line, as [`near_bodies`] is.
#[inline(never)]
fn ray_bodies<V: ObjectVisitor>(
    b: &Bodies,
    ray: &SlabRay,
    grow: &Grow,
    filter: &Filter,
    v: &mut V,
) {
    b.walk_ray(ray, grow.ext, filter, v);
}

/// A level's top-level tree leaves handed to an [`ObjectVisitor`].
struct LevelLeaves<'a, 'f, V> {
    level: &'a ArchivedLevel,
    filter: &'a Filter<'f>,
    v: &'a mut V,
    stopped: bool,
}

impl<V: ObjectVisitor> RayVisitor for LevelLeaves<'_, '_, V> {
    #[inline]
    fn t_max(&self) -> f32 {
        self.v.t_max()
    }
    /// Always inlined, into each form of the top-level tree's walk (as
    /// [`near_in`]).
    #[inline(always)]
    fn leaf(&mut self, ii: u32) -> bool {
        if !self.filter.sees(self.level, ii) {
            return false;
        }
        let inst = &self.level.instances[ii as usize];
        let shape = ColliderRef(&self.level.colliders[inst.collider.to_native() as usize]);
        self.stopped = self
            .v
            .object(ObjectId::level(ii), shape, At::Instance(self.level, inst));
        self.stopped
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
