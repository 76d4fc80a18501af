//! The things that move: a world's bodies ([`Bodies`]: each a collider, a
//! pose and layers, under a stable [`ObjectId`]) and the tree that finds
//! them ([`tree::DynamicTree`]). The level-wide queries walk these beside
//! the level's own top-level tree (`crate::query`).

pub(crate) mod body;
pub(crate) mod tree;

use crate::collider::At;
use crate::collider::{ColliderRef, ObjectVisitor};
use crate::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::object::ObjectId;
use crate::shape::Pose;
use crate::walk::RayVisitor;
use body::{BodyCollider, BodyState, WorldError, valid_pose};
use glam::{Vec3, Vec3A};
use tree::{Aabb, DynamicTree, Proxy};

/// How far a body may move before its leaf is re-inserted (Box2D's
/// `aabbMargin`, 0.1 m).
pub(crate) const MARGIN: f32 = 0.1;

/// One slot of [`Bodies`]: the body in it, if any, and how many bodies it
/// has held (a body's id carries the generation, so a stale id never names
/// a later body).
#[derive(Clone)]
struct Slot {
    generation: u32,
    body: Option<(BodyState, Proxy)>,
}

/// A world's bodies and their tree.
#[derive(Clone)]
pub(crate) struct Bodies {
    slots: Vec<Slot>,
    free: Vec<u32>,
    tree: DynamicTree,
    count: usize,
    /// The slot of each of the level's (and the mounted tiles') movers
    /// and triggers, by object id ([`ObjectId::to_bits`]).
    level_slots: std::collections::HashMap<u64, u32>,
    /// Bodies moved since the last step.
    dirty: Vec<ObjectId>,
    /// Bodies that moved between the two last steps.
    last_moved: Vec<ObjectId>,
}

impl Default for Bodies {
    fn default() -> Self {
        Bodies {
            slots: Vec::new(),
            free: Vec::new(),
            tree: DynamicTree::new(MARGIN),
            count: 0,
            level_slots: Default::default(),
            dirty: Vec::new(),
            last_moved: Vec::new(),
        }
    }
}

impl Bodies {
    /// How many bodies there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The body `id` names, if it is here.
    #[inline]
    pub fn get(&self, id: ObjectId) -> Option<&BodyState> {
        self.slot_of(id)
            .and_then(|k| self.slots[k as usize].body.as_ref())
            .map(|(b, _)| b)
    }

    /// The slot holding `id`, if it is here.
    #[inline]
    fn slot_of(&self, id: ObjectId) -> Option<u32> {
        let k = if id.is_body() {
            id.index()
        } else {
            *self.level_slots.get(&id.to_bits())?
        };
        let s = self.slots.get(k as usize)?;
        s.body
            .as_ref()
            .is_some_and(|(b, _)| b.id == id)
            .then_some(k)
    }

    /// Every body, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &BodyState> {
        self.slots
            .iter()
            .filter_map(|s| s.body.as_ref().map(|(b, _)| b))
    }

    /// Adds a body of `collider` at `pose`.
    pub fn insert(
        &mut self,
        collider: &BodyCollider,
        pose: Pose,
        layers: u32,
        name: String,
        trigger: bool,
    ) -> Result<ObjectId, WorldError> {
        if !valid_pose(&pose) {
            return Err(WorldError::BadPose(pose));
        }
        let slot = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        let generation = self.slots.get(slot as usize).map_or(1, |s| {
            if s.generation >= crate::object::MAX_TAG {
                1
            } else {
                s.generation + 1
            }
        });
        let id = ObjectId::body(slot, generation);
        let mut body = BodyState::new(id, collider, layers, name)?;
        body.trigger = trigger;
        self.fill(slot, generation, body, pose);
        Ok(id)
    }

    /// Adds a level's own mover or trigger at the pose it was baked at
    /// (or `pose`, if given), under its level id.
    pub fn insert_level(
        &mut self,
        level: &std::sync::Arc<crate::level::Level>,
        object: ObjectId,
        pose: Option<Pose>,
    ) -> Result<(), WorldError> {
        self.insert_level_as(
            level,
            object,
            object,
            |baked| pose.filter(valid_pose).unwrap_or(baked),
            |layers| layers,
        )
    }

    /// Adds `level`'s mover or trigger `object` under id `id` (a mounted
    /// tile's object id), at the pose `pose` makes of the one it was baked
    /// at, in the layers `layers` makes of its own.
    pub fn insert_level_as(
        &mut self,
        level: &std::sync::Arc<crate::level::Level>,
        object: ObjectId,
        id: ObjectId,
        pose: impl FnOnce(Pose) -> Pose,
        layers: impl FnOnce(u32) -> u32,
    ) -> Result<(), WorldError> {
        debug_assert!(!id.is_body());
        let (mut body, baked) = BodyState::of_level(level, object)?;
        body.id = id;
        body.layers = layers(body.layers);
        let pose = pose(baked);
        if !valid_pose(&pose) {
            return Err(WorldError::BadPose(pose));
        }
        if self.get(id).is_some() {
            // a second insert of the same object replaces the first
            self.remove(id)?;
        }
        let slot = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        let generation = self.slots.get(slot as usize).map_or(1, |s| s.generation);
        self.level_slots.insert(id.to_bits(), slot);
        self.fill(slot, generation, body, pose);
        Ok(())
    }

    /// Puts `body` at `pose` into `slot` (the last free one, or a new one).
    fn fill(&mut self, slot: u32, generation: u32, mut body: BodyState, pose: Pose) {
        let b = body.place(pose);
        let proxy = self.tree.insert(b, slot);
        let filled = Slot {
            generation,
            body: Some((body, proxy)),
        };
        if (slot as usize) < self.slots.len() {
            self.free.pop();
            self.slots[slot as usize] = filled;
        } else {
            self.slots.push(filled);
        }
        self.count += 1;
    }

    /// Moves body `id` to `pose`.
    pub fn set_pose(&mut self, id: ObjectId, pose: Pose) -> Result<(), WorldError> {
        if !valid_pose(&pose) {
            return Err(WorldError::BadPose(pose));
        }
        let k = self.slot_of(id).ok_or(WorldError::Unknown(id))?;
        let Some((body, proxy)) = self.slots[k as usize].body.as_mut() else {
            return Err(WorldError::Unknown(id));
        };
        if body.before.is_none() {
            body.before = Some(body.pose);
            self.dirty.push(id);
        }
        let b = body.place(pose);
        self.tree.set_box(*proxy, b);
        Ok(())
    }

    /// Moves every body by `delta` (a world's new origin), adding in f64
    /// and rounding once; the poses they had at the last steps move with
    /// them, so the shift is no motion.
    pub fn shift(&mut self, delta: glam::DVec3) {
        let by = |p: Pose| Pose {
            rotation: p.rotation,
            translation: (p.translation.as_dvec3() + delta).as_vec3(),
        };
        for s in &mut self.slots {
            let Some((body, proxy)) = s.body.as_mut() else {
                continue;
            };
            body.before = body.before.map(by);
            body.moved = body.moved.map(|(a, b)| (by(a), by(b)));
            let b = body.place(by(body.pose));
            self.tree.place_leaf(*proxy, b);
        }
        self.tree.rebuild();
    }

    /// Gives body `id` the layers `layers` (nothing if it is not here).
    pub fn set_layers(&mut self, id: ObjectId, layers: u32) {
        if let Some(k) = self.slot_of(id)
            && let Some((b, _)) = self.slots[k as usize].body.as_mut()
        {
            b.layers = layers;
        }
    }

    /// Takes body `id` out.
    pub fn remove(&mut self, id: ObjectId) -> Result<BodyState, WorldError> {
        let k = self.slot_of(id).ok_or(WorldError::Unknown(id))?;
        let Some((body, proxy)) = self.slots[k as usize].body.take() else {
            return Err(WorldError::Unknown(id));
        };
        if !id.is_body() {
            self.level_slots.remove(&id.to_bits());
        }
        self.tree.remove(proxy);
        self.free.push(k);
        self.count -= 1;
        Ok(body)
    }

    /// Every (trigger, body) pair where a body that is not a trigger
    /// touches a trigger volume, sorted: the trigger's collider against
    /// the body as a query shape ([`body::Probe`]).
    pub fn trigger_pairs(&self, out: &mut Vec<(ObjectId, ObjectId)>) {
        out.clear();
        for s in &self.slots {
            let Some((t, proxy)) = &s.body else { continue };
            if !t.trigger {
                continue;
            }
            let place = t.at();
            self.tree.query(&self.tree.fat_box(*proxy), |slot| {
                if let Some(b) = self.slot(slot).filter(|b| !b.trigger) {
                    let (shape, pose) = b.probe().placed(&b.pose);
                    if let Some(posed) = crate::shape::Posed::new(&shape, &pose)
                        && t.collider().shape_touches(place, &posed)
                    {
                        out.push((t.id, b.id));
                    }
                }
                false
            });
        }
        out.sort_unstable();
    }

    /// Closes a frame: what moved since the last step becomes the
    /// frame's motion ([`body::BodyState::moved`]), and what moved the
    /// frame before has none now.
    pub fn close_frame(&mut self) {
        for id in std::mem::take(&mut self.last_moved) {
            if let Some(k) = self.slot_of(id)
                && let Some((b, _)) = self.slots[k as usize].body.as_mut()
            {
                b.moved = None;
            }
        }
        for id in std::mem::take(&mut self.dirty) {
            if let Some(k) = self.slot_of(id)
                && let Some((b, _)) = self.slots[k as usize].body.as_mut()
                && let Some(before) = b.before.take()
            {
                b.moved = Some((before, b.pose));
                self.last_moved.push(id);
            }
        }
    }

    /// Re-inserts up to `budget` of the tree's leaves (see
    /// [`DynamicTree::optimize`]).
    pub fn optimize(&mut self, budget: usize) -> usize {
        self.tree.optimize(budget)
    }

    /// The body in `slot` (a payload of the tree: always filled).
    #[inline]
    fn slot(&self, slot: u32) -> Option<&BodyState> {
        self.slots[slot as usize].body.as_ref().map(|(b, _)| b)
    }

    /// Calls `visit` with every body `filter` accepts whose box meets
    /// `lo..=hi`, until it answers `true`; returns whether it did.
    #[inline]
    pub fn near(
        &self,
        lo: Vec3,
        hi: Vec3,
        filter: &Filter,
        mut visit: impl FnMut(ObjectId, ColliderRef, At) -> bool,
    ) -> bool {
        if self.count == 0 {
            return false;
        }
        self.tree.query(&Aabb::new(lo, hi), |slot| {
            let Some(b) = self.slot(slot) else {
                return false;
            };
            if (b.trigger && !filter.sees_triggers()) || !filter.accepts(b.id, b.layers) {
                return false;
            }
            visit(b.id, b.collider(), b.at())
        })
    }

    /// Walks the bodies `filter` accepts along `ray`, their boxes grown by
    /// `grow`, nearest box first.
    #[inline]
    pub fn walk_ray<V: ObjectVisitor>(
        &self,
        ray: &SlabRay,
        grow: Vec3A,
        filter: &Filter,
        v: &mut V,
    ) {
        if self.count == 0 {
            return;
        }
        struct Leaves<'a, V> {
            bodies: &'a Bodies,
            filter: &'a Filter<'a>,
            v: &'a mut V,
        }
        impl<V: ObjectVisitor> RayVisitor for Leaves<'_, V> {
            #[inline]
            fn t_max(&self) -> f32 {
                self.v.t_max()
            }
            #[inline]
            fn leaf(&mut self, slot: u32) -> bool {
                let Some(b) = self.bodies.slot(slot) else {
                    return false;
                };
                if (b.trigger && !self.filter.sees_triggers())
                    || !self.filter.accepts(b.id, b.layers)
                {
                    return false;
                }
                self.v.object(b.id, b.collider(), b.at())
            }
        }
        self.tree.walk_ray(
            ray,
            grow,
            &mut Leaves {
                bodies: self,
                filter,
                v,
            },
        );
    }
}
