//! The world the ECS keeps in step: the level an entity names, its movers
//! and triggers as entities, and the sync point once a frame.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::asset::{AssetEvent, AssetId, AssetLoadFailedEvent, Assets, Handle};
use bevy::ecs::prelude::*;
use bevy::transform::components::{GlobalTransform, Transform};
use kiln_runtime::{Level, ObjectId, World};

use crate::asset::KilnArchive;
use crate::body::Pending;
use crate::casters::KilnTriggerContacts;
use crate::convert::pose_of;

/// The level of the world: spawn one entity with this component (its
/// `Transform` must stay the identity: a level is baked in world space).
/// Its movers and triggers are spawned as its children. Replacing the
/// handle, or the archive behind it changing on disk, reloads the level;
/// bodies stay. With more than one such entity the first is the level.
#[derive(Component, Clone, Debug)]
#[require(Transform)]
pub struct KilnLevel(pub Handle<KilnArchive>);

/// A baked mover (kinematic or dynamic in the source) as an entity, named
/// as in the source: set its `Transform` and the world moves it. The
/// transform is the mover's pose: its baked placement's rotation and
/// translation (the scale stays baked in).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[require(Transform)]
pub struct KilnMover {
    /// Its object in the level.
    pub object: ObjectId,
}

/// A rigid body authored in glTF physics whose objects (two or more)
/// move as one, as an entity named as its node and placed at its pose:
/// its movers and triggers are its children, their `Transform`s relative
/// to it, so setting this entity's `Transform` moves them all (a gate of
/// three boxes, a dumbbell of three colliders). A body of one object is
/// that object's own entity.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[require(Transform)]
pub struct KilnAuthoredBody {
    /// Its index in [`Level::authored_bodies`].
    pub index: usize,
}

/// A baked trigger volume as an entity (with a [`KilnMover`] when it
/// moves too), and who is inside it ([`KilnTriggerContacts`]).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[require(KilnTriggerContacts)]
pub struct KilnTrigger {
    /// Its object in the level.
    pub object: ObjectId,
}

/// A body entering (`entered`) or leaving a trigger volume at the last
/// sync point.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct KilnTriggerEvent {
    /// The trigger's entity.
    pub trigger: Entity,
    /// The body's entity.
    pub body: Entity,
    /// True when it entered, false when it left.
    pub entered: bool,
}

/// An archive that failed to load or reload. The world keeps the last
/// good level.
#[derive(Message, Clone, Debug)]
pub struct KilnLevelFailed {
    /// The asset path.
    pub path: String,
    /// Why.
    pub error: String,
}

/// The systems Kiln adds.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KilnSystems {
    /// `PostUpdate`, after transform propagation: the level, bodies and
    /// movers brought up to date, then the world's step (trigger events
    /// and contacts), then the casters answered.
    Sync,
    /// `FixedUpdate`: characters move.
    Characters,
}

/// The Kiln world: the level and every body, and which entity each of
/// their objects is. Queries go through [`crate::KilnQuery`]; the runtime's
/// [`World`] is here for anything it offers beyond.
#[derive(Resource, Default)]
pub struct KilnWorld {
    world: Option<World>,
    level: Option<(Entity, AssetId<KilnArchive>)>,
    entities: HashMap<ObjectId, Entity>,
    objects: HashMap<Entity, ObjectId>,
    steps: u64,
    /// The tiles a [`crate::KilnTiles`] entity streams into the world.
    pub(crate) tiles: Option<crate::tiles::Stream>,
}

impl KilnWorld {
    /// The runtime's world (`None` until the level has loaded).
    pub fn world(&self) -> Option<&World> {
        self.world.as_ref()
    }

    /// The level (`None` until it has loaded).
    pub fn level(&self) -> Option<&Arc<Level>> {
        self.world.as_ref().map(|w| w.level())
    }

    /// The entity of an object: a body's or mover's own, the level
    /// entity for the level's static objects, the [`crate::KilnTiles`]
    /// entity for the objects of its tiles.
    pub fn entity(&self, object: ObjectId) -> Option<Entity> {
        self.own_entity(object).or_else(|| match object.tile() {
            Some(_) => self.tiles_entity(),
            None => self.level_entity().filter(|_| !object.is_body()),
        })
    }

    /// The [`crate::KilnTiles`] entity whose tiles are streamed into the
    /// world, if any.
    pub fn tiles_entity(&self) -> Option<Entity> {
        self.world
            .as_ref()
            .and(self.tiles.as_ref())
            .map(|s| s.entity)
    }

    /// A world of tiles alone, made by the tile stream (no level yet).
    pub(crate) fn set_tiled_world(&mut self, world: World) {
        self.world = Some(world);
        self.level = None;
    }

    /// Ends the world (its level or tiles gone): every body's entity
    /// waits for the next one.
    pub(crate) fn retire_world(&mut self, pending: &mut Pending) {
        self.world = None;
        self.level = None;
        let mapped: Vec<Entity> = self.objects.keys().copied().collect();
        for e in mapped {
            self.unmap(e);
            pending.0.push(e);
        }
    }

    /// The level entity (`None` until the level has loaded).
    pub fn level_entity(&self) -> Option<Entity> {
        self.world.as_ref().and(self.level).map(|(e, _)| e)
    }

    /// The entity of a body, mover or trigger (not the level entity).
    pub(crate) fn own_entity(&self, object: ObjectId) -> Option<Entity> {
        self.entities.get(&object).copied()
    }

    /// The object of a body's or mover's entity.
    pub fn object(&self, entity: Entity) -> Option<ObjectId> {
        self.objects.get(&entity).copied()
    }

    /// How many sync points the world has passed (characters ride once per
    /// step).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub(crate) fn world_mut(&mut self) -> Option<&mut World> {
        self.world.as_mut()
    }

    pub(crate) fn map(&mut self, object: ObjectId, entity: Entity) {
        self.entities.insert(object, entity);
        self.objects.insert(entity, object);
    }

    pub(crate) fn unmap(&mut self, entity: Entity) -> Option<ObjectId> {
        let object = self.objects.remove(&entity)?;
        // the object may have been given to another entity since
        if self.entities.get(&object) == Some(&entity) {
            self.entities.remove(&object);
        }
        Some(object)
    }
}

/// Brings the level up to date: the first load, a new handle, a reload
/// of the archive; reports archives that failed.
#[allow(clippy::too_many_arguments, clippy::type_complexity)] // a system: its parameters are what it touches
pub(crate) fn sync_level(
    mut commands: Commands,
    mut kiln: ResMut<KilnWorld>,
    levels: Query<(Entity, &KilnLevel)>,
    archives: Res<Assets<KilnArchive>>,
    mut changed: MessageReader<AssetEvent<KilnArchive>>,
    mut failed: MessageReader<AssetLoadFailedEvent<KilnArchive>>,
    mut failures: MessageWriter<KilnLevelFailed>,
    mut pending: ResMut<Pending>,
    mut spawned: Query<
        (
            Entity,
            &Name,
            Option<&mut KilnMover>,
            Option<&mut KilnTrigger>,
            Option<&ChildOf>,
        ),
        Or<(With<KilnMover>, With<KilnTrigger>)>,
    >,
    groups: Query<(Entity, &Name), With<KilnAuthoredBody>>,
) {
    for f in failed.read() {
        failures.write(KilnLevelFailed {
            path: f.path.to_string(),
            error: f.error.to_string(),
        });
    }
    let modified: Vec<AssetId<KilnArchive>> = changed
        .read()
        .filter_map(|e| match e {
            AssetEvent::Modified { id } | AssetEvent::LoadedWithDependencies { id } => Some(*id),
            _ => None,
        })
        .collect();
    let Some((entity, wanted)) = levels.iter().next() else {
        if kiln.level.is_some() && kiln.tiles.is_some() {
            // the level entity is gone but tiles stream on: an empty level
            // (its movers and their entities went with it)
            let mapped: Vec<Entity> = kiln.objects.keys().copied().collect();
            for e in mapped {
                if !spawned.contains(e) && !kiln.objects[&e].is_body() {
                    kiln.unmap(e);
                }
            }
            if let Some(world) = kiln.world.as_mut() {
                world.set_level(Level::empty());
            }
            kiln.level = None;
        } else if kiln.level.is_some() && kiln.world.take().is_some() {
            // the level entity is gone (its mover children with it): the
            // bodies wait for the next level
            let mapped: Vec<Entity> = kiln.objects.keys().copied().collect();
            for e in mapped {
                kiln.unmap(e);
                if !spawned.contains(e) {
                    pending.0.push(e);
                }
            }
            kiln.level = None;
        }
        return;
    };
    let id = wanted.0.id();
    let current = kiln.level.map(|(_, id)| id);
    if current == Some(id) && !modified.contains(&id) {
        return;
    }
    let Some(archive) = archives.get(id) else {
        return; // still loading (or failed: the last good level stays)
    };
    let level = archive.level.clone();
    let first = kiln.world.is_none();
    match kiln.world.as_mut() {
        Some(world) => world.set_level(level.clone()),
        None => kiln.world = Some(World::new(level.clone())),
    }
    kiln.level = Some((entity, id));
    // the authored bodies of several objects: kept by name, or new
    let (group_of, unwanted) = sync_groups(&mut commands, &level, entity, &groups);
    if !first {
        // mover and trigger entities despawned since (with a level entity
        // replaced in the same frame) name nothing now
        let gone: Vec<Entity> = kiln
            .objects
            .iter()
            .filter(|&(&e, o)| !o.is_body() && !spawned.contains(e))
            .map(|(&e, _)| e)
            .collect();
        for e in gone {
            kiln.unmap(e);
        }
        // a reload: re-find each mover and trigger entity's object by
        // name, all unmapped first (an object's new id may be the old id
        // of one being dropped), one entity an object (the first found)
        let mut kept: Vec<(ObjectId, Entity)> = Vec::new();
        for (e, name, mover, trigger, parent) in spawned.iter_mut() {
            kiln.unmap(e);
            let found = level
                .find_object(name.as_str())
                .filter(|&o| level.movers_and_triggers().any(|m| m == o))
                .filter(|&o| kept.iter().all(|&(k, _)| k != o));
            let Some(o) = found else {
                commands.entity(e).despawn();
                continue;
            };
            // what the object is now: a mover, a trigger, or both
            let (moves, triggers) = kinds(&level, o);
            keep(&mut commands, e, mover, moves);
            keep(&mut commands, e, trigger, triggers);
            // into its body's entity, or out of one it has left
            match group_of(&level, o) {
                Some((g, relative)) => {
                    commands.entity(e).insert((ChildOf(g), relative));
                }
                None if parent.is_some_and(|p| p.parent() != entity) => {
                    let pose = world_pose(&kiln, o);
                    commands.entity(e).insert((ChildOf(entity), pose));
                }
                None => {}
            }
            kept.push((o, e));
        }
        for (o, e) in kept {
            kiln.map(o, e);
        }
    }
    spawn_movers(&mut commands, &mut kiln, entity, &level, &group_of);
    // after its members have moved out
    for g in unwanted {
        commands.entity(g).despawn();
    }
}

/// Object `object`'s pose in the Kiln world as a `Transform`.
fn world_pose(kiln: &KilnWorld, object: ObjectId) -> Transform {
    let pose = kiln
        .world
        .as_ref()
        .and_then(|w| w.pose(object))
        .unwrap_or(kiln_runtime::Pose::IDENTITY);
    Transform::from_translation(pose.translation).with_rotation(pose.rotation)
}

/// The entity of an object's authored body and the object's `Transform`
/// relative to it, for an object in a body of several.
type GroupOf<'a> = Box<dyn Fn(&Level, ObjectId) -> Option<(Entity, Transform)> + 'a>;

/// Gives each authored body of two or more objects in `level` its entity:
/// the entity of the same name kept, else a new child of the level
/// entity at the body's baked pose. Returns how to find an object's body
/// entity, and the body entities no body wants any more (to despawn once
/// their members have moved out).
fn sync_groups<'a>(
    commands: &mut Commands,
    level: &Level,
    level_entity: Entity,
    groups: &Query<(Entity, &Name), With<KilnAuthoredBody>>,
) -> (GroupOf<'a>, Vec<Entity>) {
    let mut free: Vec<(Entity, String)> = groups
        .iter()
        .map(|(e, n)| (e, n.as_str().to_owned()))
        .collect();
    let mut entities: HashMap<usize, (Entity, kiln_runtime::Pose)> = HashMap::new();
    for (k, b) in level.authored_bodies().enumerate() {
        if b.members.len() < 2 {
            continue;
        }
        let e = match free.iter().position(|(_, n)| n == b.name) {
            Some(i) => {
                let (e, _) = free.swap_remove(i);
                commands.entity(e).insert(KilnAuthoredBody { index: k });
                e
            }
            None => {
                let t =
                    Transform::from_translation(b.pose.translation).with_rotation(b.pose.rotation);
                commands
                    .spawn((
                        Name::new(b.name.to_owned()),
                        KilnAuthoredBody { index: k },
                        t,
                        GlobalTransform::from(t),
                        ChildOf(level_entity),
                    ))
                    .id()
            }
        };
        entities.insert(k, (e, b.pose));
    }
    let group_of: GroupOf<'a> = Box::new(move |level: &Level, o: ObjectId| {
        let k = level.authored_body_of(o)?;
        let &(e, body) = entities.get(&k)?;
        let (rest, _) = level.object_rest(o)?;
        // the object's baked pose in its body's baked frame
        let inv = body.rotation.inverse();
        let relative = Transform::from_translation(inv * (rest.translation - body.translation))
            .with_rotation(inv * rest.rotation);
        Some((e, relative))
    });
    (group_of, free.into_iter().map(|(e, _)| e).collect())
}

/// Spawns an entity for each mover and trigger of `level` that has none.
fn spawn_movers(
    commands: &mut Commands,
    kiln: &mut KilnWorld,
    level_entity: Entity,
    level: &Level,
    group_of: &GroupOf<'_>,
) {
    let Some(world) = kiln.world.as_ref() else {
        return;
    };
    let mut spawned = Vec::new();
    for object in level.movers_and_triggers() {
        if kiln.entities.contains_key(&object) {
            continue;
        }
        let pose = world.pose(object).unwrap_or(kiln_runtime::Pose::IDENTITY);
        let transform = Transform::from_translation(pose.translation).with_rotation(pose.rotation);
        let name = Name::new(level.object_name(object).unwrap_or_default().into_owned());
        // with its global transform already where it is: the movers'
        // sync later in this frame, before transforms propagate again,
        // must not take a default one for a move to the origin
        // a member of a body of several objects is its body's child
        let (parent, local) = group_of(level, object).unwrap_or((level_entity, transform));
        let mut e = commands.spawn((
            name,
            local,
            GlobalTransform::from(transform),
            ChildOf(parent),
        ));
        let (moves, triggers) = kinds(level, object);
        if let Some(m) = moves {
            e.insert(m);
        }
        if let Some(t) = triggers {
            e.insert(t);
        }
        spawned.push((object, e.id()));
    }
    for (object, e) in spawned {
        kiln.map(object, e);
    }
}

/// The components `object` of `level` gets: [`KilnMover`] if it moves,
/// [`KilnTrigger`] if it is a trigger.
fn kinds(level: &Level, object: ObjectId) -> (Option<KilnMover>, Option<KilnTrigger>) {
    let moves = level
        .object_motion(object)
        .is_some_and(|m| m != kiln_runtime::Motion::Static);
    (
        moves.then_some(KilnMover { object }),
        level.is_trigger(object).then_some(KilnTrigger { object }),
    )
}

/// Brings entity `e`'s component `C` (as it `has` it) to what it `wants`:
/// set in place, inserted or removed.
fn keep<C: Component<Mutability = bevy::ecs::component::Mutable>>(
    commands: &mut Commands,
    e: Entity,
    has: Option<Mut<C>>,
    wants: Option<C>,
) {
    match (has, wants) {
        (Some(mut c), Some(w)) => *c = w,
        (None, Some(w)) => {
            commands.entity(e).insert(w);
        }
        (Some(_), None) => {
            commands.entity(e).remove::<C>();
        }
        (None, None) => {}
    }
}

/// Moves the movers whose transforms changed.
pub(crate) fn sync_movers(
    mut kiln: ResMut<KilnWorld>,
    movers: Query<(&KilnMover, &GlobalTransform), Changed<GlobalTransform>>,
) {
    let Some(world) = kiln.world_mut() else {
        return;
    };
    for (mover, t) in &movers {
        // an id the reload dropped is not an error to report each frame
        let _ = world.set_pose(mover.object, pose_of(t));
    }
}

/// The sync point: the world's step, its trigger events as messages, and
/// each trigger's [`KilnTriggerContacts`].
pub(crate) fn step(
    mut kiln: ResMut<KilnWorld>,
    mut events: MessageWriter<KilnTriggerEvent>,
    mut commands: Commands,
    mut contacts: Query<(Entity, &mut KilnTriggerContacts)>,
    new_trigger_bodies: Query<(Entity, &crate::KilnBody), Without<KilnTriggerContacts>>,
) {
    let Some(world) = kiln.world.as_mut() else {
        return;
    };
    world.step();
    let happened: Vec<_> = world.trigger_events().to_vec();
    let inside: Vec<_> = world.trigger_contacts().to_vec();
    kiln.steps += 1;
    let mut now: std::collections::BTreeMap<Entity, Vec<Entity>> = Default::default();
    for (trigger, body) in inside {
        if let (Some(t), Some(b)) = (kiln.entity(trigger), kiln.entity(body)) {
            now.entry(t).or_default().push(b);
        }
    }
    for bodies in now.values_mut() {
        bodies.sort_unstable();
    }
    for (e, mut c) in &mut contacts {
        c.set_if_neq(KilnTriggerContacts(now.remove(&e).unwrap_or_default()));
    }
    // trigger bodies get the component at their first sync
    for (e, body) in &new_trigger_bodies {
        if body.trigger {
            let bodies = now.remove(&e).unwrap_or_default();
            commands.entity(e).try_insert(KilnTriggerContacts(bodies));
        }
    }
    for e in happened {
        if let (Some(trigger), Some(body)) = (kiln.entity(e.trigger), kiln.entity(e.body)) {
            events.write(KilnTriggerEvent {
                trigger,
                body,
                entered: e.entered,
            });
        }
    }
}
