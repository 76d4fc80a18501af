//! The things that move: a world's bodies ([`Bodies`]: each a collider, a
//! pose and layers, under a stable [`ObjectId`]) and the tree that finds
//! them ([`tree::DynamicTree`]). The level-wide queries walk these beside
//! the level's own top-level tree (`crate::query`).

pub(crate) mod body;
pub(crate) mod tree;

use crate::collider::{ColliderRef, ObjectVisitor};
use crate::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::instance::Placement;
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
}

impl Default for Bodies {
    fn default() -> Self {
        Bodies {
            slots: Vec::new(),
            free: Vec::new(),
            tree: DynamicTree::new(MARGIN),
            count: 0,
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
        if !id.is_body() {
            return None;
        }
        let s = self.slots.get(id.index() as usize)?;
        s.body
            .as_ref()
            .filter(|_| s.generation == id.generation())
            .map(|(b, _)| b)
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
    ) -> Result<ObjectId, WorldError> {
        if !valid_pose(&pose) {
            return Err(WorldError::BadPose(pose));
        }
        let slot = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        let generation = self
            .slots
            .get(slot as usize)
            .map_or(1, |s| s.generation.wrapping_add(1).max(1));
        let id = ObjectId::body(slot, generation);
        let mut body = BodyState::new(id, collider, layers, name)?;
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
        Ok(id)
    }

    /// Moves body `id` to `pose`.
    pub fn set_pose(&mut self, id: ObjectId, pose: Pose) -> Result<(), WorldError> {
        if !valid_pose(&pose) {
            return Err(WorldError::BadPose(pose));
        }
        self.get(id).ok_or(WorldError::Unknown(id))?;
        let Some((body, proxy)) = self.slots[id.index() as usize].body.as_mut() else {
            return Err(WorldError::Unknown(id));
        };
        let b = body.place(pose);
        self.tree.set_box(*proxy, b);
        Ok(())
    }

    /// Takes body `id` out.
    pub fn remove(&mut self, id: ObjectId) -> Result<BodyState, WorldError> {
        self.get(id).ok_or(WorldError::Unknown(id))?;
        let slot = &mut self.slots[id.index() as usize];
        let Some((body, proxy)) = slot.body.take() else {
            return Err(WorldError::Unknown(id));
        };
        self.tree.remove(proxy);
        self.free.push(id.index());
        self.count -= 1;
        Ok(body)
    }

    /// Re-inserts up to `budget` of the tree's leaves (see
    /// [`DynamicTree::optimize`]).
    pub fn optimize(&mut self, budget: usize) -> usize {
        self.tree.optimize(budget)
    }

    /// The tree itself (for measuring it).
    pub fn tree(&self) -> &DynamicTree {
        &self.tree
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
        mut visit: impl FnMut(ObjectId, ColliderRef, &Placement) -> bool,
    ) -> bool {
        if self.count == 0 {
            return false;
        }
        self.tree.query(&Aabb::new(lo, hi), |slot| {
            let Some(b) = self.slot(slot) else {
                return false;
            };
            if !filter.accepts(b.id, b.layers) {
                return false;
            }
            visit(b.id, b.collider(), &b.at().placement())
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
                if !self.filter.accepts(b.id, b.layers) {
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
