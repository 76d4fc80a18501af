//! A world's manifest opened and validated: which tile archives make the
//! world, where each sits (an f64 origin), and which lie near a point (what
//! a streamer keeps mounted). The manifest is small and read whole; each
//! tile is an ordinary archive, opened with [`Level::open`] and queried in
//! its own frame: a world position minus the tile's origin, in f64, and
//! mounted into a [`crate::World`] at that origin ([`crate::World::mount`]).

use std::path::{Path, PathBuf};

use glam::DVec3;
use kiln_formats::world::{Tile, access_world_file};

use crate::level::{Level, OpenError};

/// A world manifest, validated, with the folder its tile paths are
/// relative to.
#[derive(Clone, Debug)]
pub struct WorldManifest {
    tile_size: f64,
    tiles: Vec<Tile>,
    folder: PathBuf,
}

impl WorldManifest {
    /// Reads and validates the manifest at `path` (header, checksum,
    /// structure, and every tile's cell, origin, bounds and path).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("kiln-doc-manifest-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let scene = kiln_baker::ingest::load("../samples/walk_course.gltf".as_ref()).unwrap().scene;
    /// # let world = kiln_baker::tile::bake_tiled(&scene, &Default::default(), 10.0, "course").unwrap();
    /// # std::fs::write(dir.join("course.kilnworld"), &world.manifest_bytes).unwrap();
    /// # for (t, b) in world.manifest.tiles.iter().zip(&world.tiles) { std::fs::write(dir.join(&t.file), &b.bytes).unwrap(); }
    /// use kiln_runtime::WorldManifest;
    /// let m = WorldManifest::open(dir.join("course.kilnworld"))?;
    /// // the tiles within 3 m of a point on the course
    /// let near = m.tiles_near(glam::DVec3::new(9.0, 0.0, 9.0), 3.0);
    /// assert_eq!(near.len(), 4); // the corner where four 10 m tiles meet
    /// let tile = m.open_tile(near[0])?;
    /// assert!(tile.object_count() > 0);
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<WorldManifest, OpenError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|error| OpenError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        WorldManifest::from_bytes(&bytes, folder).map_err(|error| OpenError::Invalid {
            path: path.to_path_buf(),
            error,
        })
    }

    /// Validates a manifest read elsewhere (an engine's asset system), its
    /// tile paths relative to `folder`.
    pub fn from_bytes(
        bytes: &[u8],
        folder: impl Into<PathBuf>,
    ) -> Result<WorldManifest, kiln_formats::ArchiveError> {
        let aligned = kiln_formats::aligned(bytes);
        let (_, m) = access_world_file(&aligned)?;
        Ok(WorldManifest {
            tile_size: m.tile_size.to_native(),
            tiles: m.tiles.iter().map(|t| t.to_tile()).collect(),
            folder: folder.into(),
        })
    }

    /// The grid's cell size (m), 0 for tiles authored apart.
    pub fn tile_size(&self) -> f64 {
        self.tile_size
    }

    /// The tiles, by ascending cell.
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }

    /// Where tile `k`'s archive is (its path joined to the manifest's
    /// folder; the manifest's validation keeps it inside that folder).
    pub fn tile_path(&self, k: usize) -> Option<PathBuf> {
        self.tiles.get(k).map(|t| self.folder.join(&t.file))
    }

    /// Opens tile `k`'s archive ([`Level::open`]): its coordinates are
    /// relative to [`Tile::origin`].
    pub fn open_tile(&self, k: usize) -> Result<Level, OpenError> {
        let path = self.tile_path(k).ok_or_else(|| OpenError::Io {
            path: self.folder.clone(),
            error: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("tile {k}: the manifest lists {}", self.tiles.len()),
            ),
        })?;
        Level::open(path)
    }

    /// The tiles whose bounds come within `radius` of world point `p`
    /// (f64), by ascending cell: what a streamer around a focus point
    /// keeps mounted.
    pub fn tiles_near(&self, p: DVec3, radius: f64) -> Vec<usize> {
        self.tiles
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                let o = DVec3::from(t.origin);
                let lo = o + DVec3::from(t.bounds[0].map(f64::from));
                let hi = o + DVec3::from(t.bounds[1].map(f64::from));
                p.clamp(lo, hi).distance_squared(p) <= radius * radius
            })
            .map(|(k, _)| k)
            .collect()
    }
}
