//! Bodies: entities with a [`KilnBody`] kept in the world's dynamic set.

use std::sync::Arc;

use bevy::asset::{AssetEvent, AssetId, Assets, Handle};
use bevy::ecs::prelude::*;
use bevy::math::Vec3;
use bevy::math::primitives::{Capsule3d, Cuboid, Sphere};
use bevy::transform::components::{GlobalTransform, Transform};
use std::collections::HashSet;

use kiln_runtime::{Body, ConvexHull, QueryShape};

use crate::asset::KilnArchive;
use crate::convert::pose;
use crate::world::KilnWorld;

/// A convex shape: what a body is made of, and what overlaps, yes/no
/// tests and casts ask with. Bevy's `Sphere`, `Capsule3d` and `Cuboid`
/// convert into it.
#[derive(Clone, Debug, PartialEq)]
pub enum KilnShape {
    /// A sphere around the origin.
    Sphere {
        /// Radius.
        radius: f32,
    },
    /// A capsule along the local Y axis: cap centres `half_height` above
    /// and below the origin, grown by `radius`.
    Capsule {
        /// Half the distance between the cap centres.
        half_height: f32,
        /// Radius.
        radius: f32,
    },
    /// A box around the origin.
    Cuboid {
        /// Half extents.
        half: Vec3,
    },
    /// A convex hull (`ConvexHull::new` of points).
    Hull(Arc<ConvexHull>),
}

impl KilnShape {
    /// The runtime's shape.
    pub fn query(&self) -> QueryShape<'_> {
        match self {
            KilnShape::Sphere { radius } => QueryShape::Sphere { radius: *radius },
            KilnShape::Capsule {
                half_height,
                radius,
            } => QueryShape::Capsule {
                half_height: *half_height,
                radius: *radius,
            },
            KilnShape::Cuboid { half } => QueryShape::Cuboid { half: *half },
            KilnShape::Hull(h) => QueryShape::Hull(h),
        }
    }
}

impl From<Sphere> for KilnShape {
    fn from(s: Sphere) -> Self {
        KilnShape::Sphere { radius: s.radius }
    }
}

impl From<Capsule3d> for KilnShape {
    fn from(c: Capsule3d) -> Self {
        KilnShape::Capsule {
            half_height: c.half_length,
            radius: c.radius,
        }
    }
}

impl From<Cuboid> for KilnShape {
    fn from(c: Cuboid) -> Self {
        KilnShape::Cuboid { half: c.half_size }
    }
}

/// What a body is made of.
#[derive(Clone, Debug)]
pub enum KilnBodyCollider {
    /// A convex shape.
    Shape(KilnShape),
    /// A copy of a baked object (a prefab): the object called `object` in
    /// `archive`, placed relative to the entity as that archive places it
    /// relative to its origin. Inserted once the archive has loaded.
    Copy {
        /// The archive.
        archive: Handle<KilnArchive>,
        /// The object's name in it.
        object: String,
    },
}

/// A body of the Kiln world: the entity's `GlobalTransform` (rotation and
/// translation; scale is not applied) places it, every frame it changes.
/// Spawning the entity inserts the body, despawning it (or removing the
/// component) removes it, and changing the component replaces it. The
/// entity's `Name`, if any, is the body's name.
#[derive(Component, Clone, Debug)]
#[require(Transform)]
pub struct KilnBody {
    /// What it is made of.
    pub collider: KilnBodyCollider,
    /// Its layers (a mask; default 1: the level's first layer, "default").
    pub layers: u32,
    /// A trigger volume: seen only by filters that ask, reporting the
    /// bodies that enter and leave it.
    pub trigger: bool,
}

impl KilnBody {
    /// A body made of `shape` (a Bevy `Sphere`, `Capsule3d`, `Cuboid`, or a
    /// [`KilnShape`]).
    pub fn shape(shape: impl Into<KilnShape>) -> KilnBody {
        KilnBody {
            collider: KilnBodyCollider::Shape(shape.into()),
            layers: 1,
            trigger: false,
        }
    }

    /// A copy of the object called `object` in `archive`.
    pub fn copy(archive: Handle<KilnArchive>, object: impl Into<String>) -> KilnBody {
        KilnBody {
            collider: KilnBodyCollider::Copy {
                archive,
                object: object.into(),
            },
            layers: 1,
            trigger: false,
        }
    }

    /// In these layers.
    pub fn layers(mut self, mask: u32) -> KilnBody {
        self.layers = mask;
        self
    }

    /// A trigger volume.
    pub fn trigger(mut self) -> KilnBody {
        self.trigger = true;
        self
    }
}

/// A body the world refused (a shape that is no valid collider, a copy of
/// an object its archive does not have, a transform that scales it).
#[derive(Message, Clone, Debug)]
pub struct KilnBodyRejected {
    /// The body's entity.
    pub entity: Entity,
    /// Why.
    pub error: String,
}

/// Entities whose bodies wait for the world or for the archive they copy.
#[derive(Resource, Default)]
pub(crate) struct Pending(pub(crate) Vec<Entity>);

/// Inserts, replaces, moves and removes bodies as their entities changed.
#[allow(clippy::too_many_arguments, clippy::type_complexity)] // a system: its parameters are what it touches
pub(crate) fn sync_bodies(
    mut kiln: ResMut<KilnWorld>,
    mut pending: ResMut<Pending>,
    archives: Res<Assets<KilnArchive>>,
    mut removed: RemovedComponents<KilnBody>,
    changed: Query<Entity, Changed<KilnBody>>,
    bodies: Query<(&KilnBody, &GlobalTransform, Option<&Name>)>,
    moved: Query<(Entity, &GlobalTransform), (With<KilnBody>, Changed<GlobalTransform>)>,
    mut rejected: MessageWriter<KilnBodyRejected>,
    mut reloaded: MessageReader<AssetEvent<KilnArchive>>,
    copies: Query<(Entity, &KilnBody)>,
) {
    for e in removed.read() {
        if let Some(object) = kiln.unmap(e)
            && let Some(world) = kiln.world_mut()
        {
            let _ = world.remove(object);
        }
    }
    let mut todo = std::mem::take(&mut pending.0);
    todo.extend(changed.iter());
    // copies of an archive that was reloaded are made again from it
    let modified: Vec<AssetId<KilnArchive>> = reloaded
        .read()
        .filter_map(|e| match e {
            AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    if !modified.is_empty() {
        todo.extend(copies.iter().filter_map(|(e, b)| match &b.collider {
            KilnBodyCollider::Copy { archive, .. } if modified.contains(&archive.id()) => Some(e),
            _ => None,
        }));
    }
    todo.sort_unstable();
    todo.dedup();
    let mut placed = HashSet::new();
    for e in todo {
        let Ok((body, at, name)) = bodies.get(e) else {
            continue;
        };
        if let Some(old) = kiln.unmap(e)
            && let Some(world) = kiln.world_mut()
        {
            let _ = world.remove(old);
        }
        let Some(world) = kiln.world_mut() else {
            pending.0.push(e);
            continue;
        };
        let pose = match unscaled(at) {
            Ok(pose) => pose,
            Err(error) => {
                rejected.write(KilnBodyRejected { entity: e, error });
                continue;
            }
        };
        let name = name.map_or("", |n| n.as_str());
        let inserted = match &body.collider {
            KilnBodyCollider::Shape(shape) => {
                let mut b = Body::shape(shape.query(), pose)
                    .layers(body.layers)
                    .named(name);
                if body.trigger {
                    b = b.trigger();
                }
                world.insert(b)
            }
            KilnBodyCollider::Copy { archive, object } => {
                let Some(archive) = archives.get(archive) else {
                    pending.0.push(e);
                    continue;
                };
                let Some(id) = archive.level.find_object(object) else {
                    rejected.write(KilnBodyRejected {
                        entity: e,
                        error: format!("the archive has no object {object:?}"),
                    });
                    continue;
                };
                let mut b = Body::copy(&archive.level, id, pose)
                    .layers(body.layers)
                    .named(name);
                if body.trigger {
                    b = b.trigger();
                }
                world.insert(b)
            }
        };
        match inserted {
            Ok(id) => {
                kiln.map(id, e);
                placed.insert(e);
            }
            Err(error) => {
                rejected.write(KilnBodyRejected {
                    entity: e,
                    error: error.to_string(),
                });
            }
        }
    }
    for (e, at) in &moved {
        if !placed.contains(&e)
            && let Some(object) = kiln.object(e)
            && let Some(world) = kiln.world_mut()
        {
            // a scaled or non-finite transform is refused: the body stays
            // put
            match unscaled(at) {
                Ok(pose) => {
                    let _ = world.set_pose(object, pose);
                }
                Err(error) => {
                    rejected.write(KilnBodyRejected { entity: e, error });
                }
            }
        }
    }
}

/// A body's pose from its transform, which must not scale it: Kiln's
/// bodies are placed by a rotation and a translation, and a scale dropped
/// silently would leave the collider another size than the mesh drawn.
fn unscaled(at: &GlobalTransform) -> Result<kiln_runtime::Pose, String> {
    let (scale, rotation, translation) = at.to_scale_rotation_translation();
    if (scale - Vec3::ONE).abs().max_element() <= 1e-4 {
        Ok(pose(rotation.normalize(), translation))
    } else {
        Err(format!(
            "its transform scales it by {scale}: Kiln bodies are not scaled; size the \
             KilnBody's shape instead (or bake the prop at the size it is used)"
        ))
    }
}
