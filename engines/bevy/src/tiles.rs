//! Worlds of tiles: a `.kilnworld` manifest as an asset, and its tiles
//! streamed into the Kiln world around the entities marked as focus points.
//!
//! Each frame, at the sync point, the tiles whose bounds come within
//! `radius + ahead` of a [`KilnFocus`] entity are asked of the asset
//! server (which loads and validates them on its own tasks, off the
//! frame); those within `radius` are mounted at their origins once loaded;
//! those past `radius + ahead` of every focus point are unmounted and
//! their handles dropped, so memory holds only the tiles near the focus
//! points. A tile's archive replaced on disk (hot reload) is mounted again
//! in place. [`KilnTileEvent`] messages say what happened.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{
    Asset, AssetEvent, AssetId, AssetLoadFailedEvent, AssetLoader, AssetPath, AssetServer, Assets,
    Handle, LoadContext,
};
use bevy::ecs::prelude::*;
use bevy::math::DVec3;
use bevy::reflect::TypePath;
use bevy::transform::components::{GlobalTransform, Transform};
use kiln_runtime::{TileId, World, WorldManifest};

use crate::asset::{KilnArchive, KilnLoadError};
use crate::world::{KilnLevelFailed, KilnWorld};

/// A world manifest (`.kilnworld`): which tile archives make the world and
/// where each sits. Its tiles are not loaded with it: a [`KilnTiles`]
/// entity streams them.
#[derive(Asset, TypePath, Clone, Debug)]
pub struct KilnWorldManifest {
    /// The manifest, validated.
    pub manifest: Arc<WorldManifest>,
    /// Its asset path: tile paths are relative to its folder.
    pub path: AssetPath<'static>,
}

impl KilnWorldManifest {
    /// The asset path of tile `k`'s archive.
    pub fn tile_path(&self, k: usize) -> Option<AssetPath<'static>> {
        let tile = self.manifest.tiles().get(k)?;
        Some(self.path.resolve_embed(&AssetPath::parse(&tile.file)))
    }
}

/// Loads `.kilnworld` manifests.
#[derive(Default, TypePath)]
pub struct KilnWorldManifestLoader;

impl AssetLoader for KilnWorldManifestLoader {
    type Asset = KilnWorldManifest;
    type Settings = ();
    type Error = KilnLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<KilnWorldManifest, KilnLoadError> {
        let path = load_context.path().clone_owned();
        let bytes = crate::asset::read_all(reader, &path.to_string()).await?;
        let folder = path.path().parent().map(|p| p.to_path_buf());
        let manifest =
            WorldManifest::from_bytes(&bytes, folder.unwrap_or_default()).map_err(|error| {
                KilnLoadError::Invalid {
                    path: path.to_string(),
                    error,
                }
            })?;
        Ok(KilnWorldManifest {
            manifest: Arc::new(manifest),
            path,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["kilnworld"]
    }
}

/// A world of tiles streamed around the [`KilnFocus`] entities: spawn one
/// entity with this component. Without a [`crate::KilnLevel`] the world is
/// the tiles alone; with one, the tiles are mounted beside its level.
///
/// Bevy's frame is the Kiln world's: a `Transform` at `t` is the world
/// point `origin + t` (f64). Move `origin` with your own floating origin
/// (shifting your entities by the same amount) and the world's tiles keep
/// their f32 precision near the focus points however far out they are
/// (a world with a level of its own cannot move its origin: the change is
/// refused with a [`KilnLevelFailed`]).
#[derive(Component, Clone, Debug)]
#[require(Transform)]
pub struct KilnTiles {
    /// The manifest.
    pub manifest: Handle<KilnWorldManifest>,
    /// Tiles whose bounds come within this many metres of a focus point
    /// are mounted.
    pub radius: f64,
    /// How much further tiles are loaded ahead, and kept before being
    /// dropped (so a focus point wavering on a border does not mount and
    /// drop a tile again and again).
    pub ahead: f64,
    /// The world point of Bevy's zero (f64 metres).
    pub origin: DVec3,
}

impl KilnTiles {
    /// The tiles of `manifest` within `radius` metres of a focus point,
    /// loaded half as far again ahead, with the origin at the world's zero.
    pub fn new(manifest: Handle<KilnWorldManifest>, radius: f64) -> KilnTiles {
        let radius = radius.max(0.0);
        KilnTiles {
            manifest,
            radius,
            ahead: radius * 0.5,
            origin: DVec3::ZERO,
        }
    }

    /// The same, loading `metres` ahead.
    pub fn ahead(mut self, metres: f64) -> KilnTiles {
        self.ahead = metres.max(0.0);
        self
    }

    /// The same, with Bevy's zero at world point `origin`.
    pub fn with_origin(mut self, origin: DVec3) -> KilnTiles {
        self.origin = origin;
        self
    }
}

/// Marks an entity whose position keeps the tiles around it mounted (a
/// player, a camera, an AI far away).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnFocus;

/// What happened to a tile at the last sync point.
#[derive(Message, Clone, Debug, PartialEq)]
pub struct KilnTileEvent {
    /// The tile's index in the manifest's [`WorldManifest::tiles`].
    pub tile: usize,
    /// Its file, as the manifest names it.
    pub file: String,
    /// What happened.
    pub change: KilnTileChange,
}

/// The change a [`KilnTileEvent`] reports.
#[derive(Clone, Debug, PartialEq)]
pub enum KilnTileChange {
    /// Mounted: its objects answer queries now.
    Mounted,
    /// Its archive changed on disk and the new one is mounted in its place.
    Reloaded,
    /// Unmounted (every focus point moved away).
    Dropped,
    /// Its archive could not be loaded (why); a tile mounted before keeps
    /// its last good archive.
    Failed(String),
}

/// One tile the stream holds: its archive's handle, and its mount.
struct Entry {
    handle: Handle<KilnArchive>,
    mounted: Option<TileId>,
}

/// The tiles a [`KilnTiles`] entity streams, kept in [`KilnWorld`].
pub(crate) struct Stream {
    /// The [`KilnTiles`] entity.
    pub(crate) entity: Entity,
    manifest: AssetId<KilnWorldManifest>,
    /// The manifest as last read.
    tiles: Option<KilnWorldManifest>,
    held: BTreeMap<usize, Entry>,
    /// Failed to load: not asked again until they leave the loading radius.
    failed: BTreeSet<usize>,
}

impl Stream {
    /// Unmounts every tile from `world` and lets go of every handle.
    fn clear(&mut self, world: Option<&mut World>, events: &mut MessageWriter<KilnTileEvent>) {
        let held = std::mem::take(&mut self.held);
        if let (Some(world), Some(m)) = (world, &self.tiles) {
            for (k, e) in held {
                if let Some(id) = e.mounted
                    && world.unmount(id).is_ok()
                {
                    events.write(event(m, k, KilnTileChange::Dropped));
                }
            }
        }
        self.failed.clear();
    }
}

fn event(m: &KilnWorldManifest, k: usize, change: KilnTileChange) -> KilnTileEvent {
    KilnTileEvent {
        tile: k,
        file: m
            .manifest
            .tiles()
            .get(k)
            .map(|t| t.file.clone())
            .unwrap_or_default(),
        change,
    }
}

/// Streams the tiles of the [`KilnTiles`] entity (the first, if several)
/// around the focus points; see the module's docs.
#[allow(clippy::too_many_arguments)] // a system: its parameters are what it touches
pub(crate) fn sync_tiles(
    mut kiln: ResMut<KilnWorld>,
    worlds: Query<(Entity, &KilnTiles)>,
    focus: Query<&GlobalTransform, With<KilnFocus>>,
    manifests: Res<Assets<KilnWorldManifest>>,
    archives: Res<Assets<KilnArchive>>,
    server: Res<AssetServer>,
    mut changed: MessageReader<AssetEvent<KilnArchive>>,
    mut failed: MessageReader<AssetLoadFailedEvent<KilnArchive>>,
    mut manifest_failed: MessageReader<AssetLoadFailedEvent<KilnWorldManifest>>,
    mut events: MessageWriter<KilnTileEvent>,
    mut failures: MessageWriter<KilnLevelFailed>,
    mut pending: ResMut<crate::body::Pending>,
) {
    for f in manifest_failed.read() {
        failures.write(KilnLevelFailed {
            path: f.path.to_string(),
            error: f.error.to_string(),
        });
    }
    let modified: BTreeSet<AssetId<KilnArchive>> = changed
        .read()
        .filter_map(|e| match e {
            AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    let failed_now: Vec<(AssetId<KilnArchive>, String)> =
        failed.read().map(|f| (f.id, f.error.to_string())).collect();
    let wanted = worlds.iter().next();
    // the entity gone, or another manifest: let go of the old stream
    let stale = match (&kiln.tiles, wanted) {
        (Some(s), Some((e, t))) => s.entity != e || s.manifest != t.manifest.id(),
        (Some(_), None) => true,
        (None, _) => false,
    };
    if stale {
        let mut stream = kiln.tiles.take().expect("a stream");
        stream.clear(kiln.world_mut(), &mut events);
        if kiln.level_entity().is_none() {
            // a world of tiles alone ends with them; its bodies wait
            kiln.retire_world(&mut pending);
        }
    }
    let Some((entity, settings)) = wanted else {
        return;
    };
    let Some(manifest) = manifests.get(&settings.manifest) else {
        return; // still loading (or failed: reported above)
    };
    if kiln.world().is_none() {
        match World::tiled(settings.origin) {
            Ok(w) => kiln.set_tiled_world(w),
            Err(e) => {
                failures.write(KilnLevelFailed {
                    path: manifest.path.to_string(),
                    error: e.to_string(),
                });
                return;
            }
        }
    }
    let mut stream = kiln.tiles.take().unwrap_or_else(|| Stream {
        entity,
        manifest: settings.manifest.id(),
        tiles: None,
        held: BTreeMap::new(),
        failed: BTreeSet::new(),
    });
    let world = kiln.world_mut().expect("the world made above");
    // the manifest replaced on disk: tiles that kept their file and origin
    // stay, the rest go
    if let Some(old) = stream
        .tiles
        .take_if(|old| !Arc::ptr_eq(&old.manifest, &manifest.manifest))
    {
        let held = std::mem::take(&mut stream.held);
        for (k, e) in held {
            let t = &old.manifest.tiles()[k];
            let same = manifest
                .manifest
                .tiles()
                .iter()
                .position(|n| n.file == t.file && n.origin == t.origin);
            match same {
                Some(n) => {
                    stream.held.insert(n, e);
                }
                None => {
                    if let Some(id) = e.mounted
                        && world.unmount(id).is_ok()
                    {
                        events.write(event(&old, k, KilnTileChange::Dropped));
                    }
                }
            }
        }
        stream.failed.clear();
    }
    if stream.tiles.is_none() {
        stream.tiles = Some(manifest.clone());
    }
    let m = manifest;
    // the floating origin
    if world.origin() != settings.origin
        && let Err(e) = world.set_origin(settings.origin)
    {
        failures.write(KilnLevelFailed {
            path: m.path.to_string(),
            error: format!("cannot move the origin: {e}"),
        });
    }
    let points: Vec<DVec3> = focus
        .iter()
        .map(|t| settings.origin + t.translation().as_dvec3())
        .collect();
    let near = |radius: f64| -> BTreeSet<usize> {
        points
            .iter()
            .flat_map(|&p| m.manifest.tiles_near(p, radius))
            .collect()
    };
    let load = near(settings.radius + settings.ahead);
    let mount = near(settings.radius);
    // failures: reported once, not asked again while in the loading radius
    for (id, why) in failed_now {
        let found = stream
            .held
            .iter()
            .find(|(_, e)| e.handle.id() == id)
            .map(|(&k, e)| (k, e.mounted.is_some()));
        if let Some((k, was_mounted)) = found {
            events.write(event(m, k, KilnTileChange::Failed(why)));
            if !was_mounted {
                stream.held.remove(&k);
                stream.failed.insert(k);
            }
        }
    }
    stream.failed.retain(|k| load.contains(k));
    // past the band: dropped
    let gone: Vec<usize> = stream
        .held
        .keys()
        .copied()
        .filter(|k| !load.contains(k))
        .collect();
    for k in gone {
        let e = stream.held.remove(&k).expect("held");
        if let Some(id) = e.mounted
            && world.unmount(id).is_ok()
        {
            events.write(event(m, k, KilnTileChange::Dropped));
        }
    }
    // ahead: asked of the asset server
    for &k in &load {
        if stream.held.contains_key(&k) || stream.failed.contains(&k) {
            continue;
        }
        if let Some(path) = m.tile_path(k) {
            stream.held.insert(
                k,
                Entry {
                    handle: server.load(path),
                    mounted: None,
                },
            );
        }
    }
    // loaded and near, or replaced on disk: mounted
    let at = |k: usize| DVec3::from(m.manifest.tiles()[k].origin);
    let mut refused = Vec::new();
    for (&k, e) in stream.held.iter_mut() {
        let Some(archive) = archives.get(&e.handle) else {
            continue;
        };
        let reload = e.mounted.is_some() && modified.contains(&e.handle.id());
        let wanted = mount.contains(&k) && e.mounted.is_none();
        if !(reload || wanted) {
            continue;
        }
        if let Some(old) = e.mounted.take() {
            let _ = world.unmount(old);
        }
        match world.mount(archive.level.clone(), at(k)) {
            Ok(id) => {
                e.mounted = Some(id);
                let change = if reload {
                    KilnTileChange::Reloaded
                } else {
                    KilnTileChange::Mounted
                };
                events.write(event(m, k, change));
            }
            Err(err) => {
                // refused (its layers): not tried again while it is near
                events.write(event(m, k, KilnTileChange::Failed(err.to_string())));
                refused.push(k);
            }
        }
    }
    for k in refused {
        stream.held.remove(&k);
        stream.failed.insert(k);
    }
    kiln.tiles = Some(stream);
}
