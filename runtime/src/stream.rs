//! [`Streamer`]: keeps the tiles of a world manifest near one or more focus
//! points mounted in a [`World`], loading ahead on a background thread.
//!
//! Each call of [`Streamer::update`] (once a frame, at the sync point)
//! looks at the focus points and
//! - asks the loader thread for every tile within `radius + ahead` of one
//!   that is neither loaded nor on its way (opening a tile maps and
//!   validates its archive: the work kept off the frame);
//! - mounts every loaded tile within `radius` of a focus point;
//! - unmounts every mounted tile past `radius + ahead` of all of them, and
//!   lets go of loaded ones there (the band between the two radii keeps a
//!   tile from being mounted and dropped again as a focus point wavers on
//!   a border).
//!
//! So what is held is the tiles within `radius + ahead` of the focus
//! points, whatever the world's size. The report says what was mounted
//! and dropped, and which tiles failed to load (a missing or damaged
//! archive: tried again once it has left the loading radius and come
//! back).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use glam::DVec3;

use crate::dynamic::body::WorldError;
use crate::level::{Level, OpenError};
use crate::manifest::WorldManifest;
use crate::object::TileId;
use crate::world::World;

/// What one [`Streamer::update`] did: the manifest's tile numbers (its
/// [`WorldManifest::tiles`] index) it mounted and dropped, with the
/// [`TileId`] each had in the world, and the tiles that could not be
/// loaded or mounted.
#[derive(Debug, Default)]
pub struct StreamReport {
    /// Tiles mounted by this update.
    pub mounted: Vec<(usize, TileId)>,
    /// Tiles unmounted by this update.
    pub dropped: Vec<(usize, TileId)>,
    /// Tiles that failed to load (the file's error) or to mount.
    pub failed: Vec<(usize, StreamError)>,
}

/// Why a tile could not be streamed in.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Its archive could not be opened (missing, unreadable, damaged).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The world refused it (its layers, or its position).
    #[error(transparent)]
    Mount(#[from] WorldError),
}

/// Keeps the tiles of a manifest near focus points mounted in a world
/// (see the module's docs).
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("kiln-doc-stream-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let scene = kiln_baker::ingest::load("../samples/walk_course.gltf".as_ref()).unwrap().scene;
/// # let baked = kiln_baker::tile::bake_tiled(&scene, &Default::default(), 10.0, "course").unwrap();
/// # std::fs::write(dir.join("course.kilnworld"), &baked.manifest_bytes).unwrap();
/// # for (t, b) in baked.manifest.tiles.iter().zip(&baked.tiles) { std::fs::write(dir.join(&t.file), &b.bytes).unwrap(); }
/// use kiln_runtime::{Streamer, World, WorldManifest};
/// use glam::DVec3;
/// let manifest = WorldManifest::open(dir.join("course.kilnworld"))?;
/// let mut world = World::tiled(DVec3::ZERO)?;
/// let mut streamer = Streamer::new(manifest, 2.0);
/// // in the middle of tile (0, 0): that tile alone
/// let report = streamer.update_blocking(&mut world, &[DVec3::new(3.0, 0.0, 3.0)]);
/// assert_eq!(report.mounted.len(), 1);
/// // where four tiles meet: the other three join
/// let report = streamer.update_blocking(&mut world, &[DVec3::new(9.5, 0.0, 9.5)]);
/// assert_eq!((report.mounted.len(), world.tiles().count()), (3, 4));
/// // far away: all four dropped
/// let report = streamer.update_blocking(&mut world, &[DVec3::new(500.0, 0.0, 500.0)]);
/// assert_eq!((report.dropped.len(), world.tiles().count()), (4, 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Streamer {
    manifest: Arc<WorldManifest>,
    radius: f64,
    ahead: f64,
    /// Mounted tiles: manifest index → the world's id.
    mounted: BTreeMap<usize, TileId>,
    /// Loaded, not mounted.
    loaded: BTreeMap<usize, Arc<Level>>,
    /// Asked of the loader, not back yet.
    pending: BTreeSet<usize>,
    /// Failed, not asked again until they leave the loading radius.
    failed: BTreeSet<usize>,
    ask: Option<Sender<usize>>,
    answers: Receiver<(usize, Result<Level, OpenError>)>,
    loader: Option<JoinHandle<()>>,
}

impl Streamer {
    /// A streamer of `manifest`'s tiles that keeps those within `radius`
    /// metres of a focus point mounted (a tile's distance is its bounds'),
    /// and loads ahead half as far again (see [`Streamer::ahead`]).
    pub fn new(manifest: WorldManifest, radius: f64) -> Streamer {
        let manifest = Arc::new(manifest);
        let (ask, asked) = channel::<usize>();
        let (answer, answers) = channel();
        let m = manifest.clone();
        let loader = std::thread::Builder::new()
            .name("kiln-tile-loader".into())
            .spawn(move || {
                for k in asked {
                    if answer.send((k, m.open_tile(k))).is_err() {
                        break;
                    }
                }
            })
            .expect("a thread for the tile loader");
        let radius = radius.max(0.0);
        Streamer {
            manifest,
            radius,
            ahead: radius * 0.5,
            mounted: BTreeMap::new(),
            loaded: BTreeMap::new(),
            pending: BTreeSet::new(),
            failed: BTreeSet::new(),
            ask: Some(ask),
            answers,
            loader: Some(loader),
        }
    }

    /// The same streamer loading `metres` further than it mounts (and
    /// dropping tiles only past that band).
    pub fn ahead(mut self, metres: f64) -> Streamer {
        self.ahead = metres.max(0.0);
        self
    }

    /// The manifest it streams.
    pub fn manifest(&self) -> &WorldManifest {
        &self.manifest
    }

    /// The tiles it has mounted: manifest index and the world's id, by
    /// index.
    pub fn mounted(&self) -> impl Iterator<Item = (usize, TileId)> + '_ {
        self.mounted.iter().map(|(&k, &id)| (k, id))
    }

    /// How many tiles it holds loaded and not mounted (loaded ahead).
    pub fn loaded_ahead(&self) -> usize {
        self.loaded.len()
    }

    /// One frame's streaming around `focus` (f64 world points): mounts
    /// the loaded tiles within the radius, drops those past the band, and
    /// asks for the rest in the background. Never waits for a load.
    pub fn update(&mut self, world: &mut World, focus: &[DVec3]) -> StreamReport {
        self.step(world, focus, false)
    }

    /// [`Streamer::update`], waiting until every tile within the radius
    /// is loaded and mounted (or failed): for a first frame, a teleport,
    /// or a test.
    pub fn update_blocking(&mut self, world: &mut World, focus: &[DVec3]) -> StreamReport {
        self.step(world, focus, true)
    }

    fn near(&self, focus: &[DVec3], radius: f64) -> BTreeSet<usize> {
        focus
            .iter()
            .flat_map(|&p| self.manifest.tiles_near(p, radius))
            .collect()
    }

    fn step(&mut self, world: &mut World, focus: &[DVec3], wait: bool) -> StreamReport {
        let mut report = StreamReport::default();
        let wanted = self.near(focus, self.radius);
        let kept = self.near(focus, self.radius + self.ahead);
        // drop what is past the band
        let gone: Vec<usize> = self
            .mounted
            .keys()
            .copied()
            .filter(|k| !kept.contains(k))
            .collect();
        for k in gone {
            let id = self.mounted.remove(&k).expect("listed as mounted");
            // mounted by this streamer; gone already if the game unmounted it
            let _ = world.unmount(id);
            report.dropped.push((k, id));
        }
        self.loaded.retain(|k, _| kept.contains(k));
        self.failed.retain(|k| kept.contains(k));
        // ask for what is missing
        for &k in &kept {
            if !self.mounted.contains_key(&k)
                && !self.loaded.contains_key(&k)
                && !self.pending.contains(&k)
                && !self.failed.contains(&k)
                && let Some(ask) = &self.ask
                && ask.send(k).is_ok()
            {
                self.pending.insert(k);
            }
        }
        // take what came back, waiting for the wanted ones if asked to
        loop {
            let waiting = wait && wanted.iter().any(|k| self.pending.contains(k));
            let next = if waiting {
                self.answers.recv().ok()
            } else {
                self.answers.try_recv().ok()
            };
            let Some((k, level)) = next else { break };
            self.pending.remove(&k);
            match level {
                Ok(level) if kept.contains(&k) => {
                    self.loaded.insert(k, Arc::new(level));
                }
                Ok(_) => {}
                Err(e) => {
                    self.failed.insert(k);
                    report.failed.push((k, e.into()));
                }
            }
        }
        // mount what is loaded and wanted
        for k in wanted {
            let Some(level) = self.loaded.remove(&k) else {
                continue;
            };
            let at = DVec3::from(self.manifest.tiles()[k].origin);
            match world.mount(level, at) {
                Ok(id) => {
                    self.mounted.insert(k, id);
                    report.mounted.push((k, id));
                }
                Err(e) => {
                    self.failed.insert(k);
                    report.failed.push((k, e.into()));
                }
            }
        }
        report
    }
}

impl Drop for Streamer {
    /// Stops the loader thread (after the tile it is opening, if any).
    fn drop(&mut self) {
        self.ask = None;
        if let Some(t) = self.loader.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for Streamer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamer")
            .field("tiles", &self.manifest.tiles().len())
            .field("radius", &self.radius)
            .field("ahead", &self.ahead)
            .field("mounted", &self.mounted.len())
            .field("loaded", &self.loaded.len())
            .field("pending", &self.pending.len())
            .finish()
    }
}
