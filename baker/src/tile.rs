//! Tiles: a scene too large for one archive split on a horizontal grid
//! (x and z) into tiles baked one by one, each an ordinary archive whose
//! coordinates are relative to its tile's origin, and the world manifest
//! that lists them (`kiln_formats::world`).
//!
//! An object goes to the cell of its world box's centre; the objects of an
//! authored rigid body go together, to the cell of the body's origin, so a
//! body is never split. Each tile's placements are moved by minus its
//! origin in f64 before anything is rounded to f32, so a tile 100 km out
//! keeps the precision of one at the world's origin.
//!
//! Not yet: large triangle meshes (terrain) are not cut at tile borders;
//! an object stays whole in the tile of its centre, however far it
//! reaches.

use std::collections::BTreeMap;

use glam::{DAffine3, DVec3};
use kiln_formats::world::{Tile, WorldManifest, encode_world};
use thiserror::Error;

use crate::bake::{Baked, baker_version};
use crate::config::BakeSettings;
use crate::scene::Scene;

/// Why a scene could not be tiled.
#[derive(Debug, Error, PartialEq)]
pub enum TileError {
    /// The tile size is not a positive finite number.
    #[error("tile size {0} is not a positive number of metres")]
    Size(f64),
    /// An object lies in a cell past what the manifest can number.
    #[error("object {object:?} lies in cell {cell:?}, past ±2³¹ tiles of {size} m")]
    Cell {
        /// Its name.
        object: String,
        /// Its cell, as far as it goes.
        cell: [f64; 2],
        /// The tile size.
        size: f64,
    },
}

/// A tiled bake: the manifest, its file, and each tile's archive in
/// manifest order.
pub struct TiledWorld {
    /// The manifest.
    pub manifest: WorldManifest,
    /// The manifest file (header + body).
    pub manifest_bytes: Vec<u8>,
    /// Each tile's bake, in the manifest's order.
    pub tiles: Vec<Baked>,
}

/// The world box of instance `i` of `scene` (its translation alone for an
/// empty mesh).
fn world_box(scene: &Scene, i: usize) -> (DVec3, DVec3) {
    let inst = &scene.instances[i];
    let positions = &scene.meshes[inst.mesh].positions;
    if positions.is_empty() {
        return (inst.transform.translation, inst.transform.translation);
    }
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for p in positions {
        let w = inst
            .transform
            .transform_point3(DVec3::from(p.map(f64::from)));
        lo = lo.min(w);
        hi = hi.max(w);
    }
    (lo, hi)
}

/// The box around every object of `scene`, rounded outward to f32.
fn bounds(scene: &Scene) -> [[f32; 3]; 2] {
    let (lo, hi) = (0..scene.instances.len())
        .map(|i| world_box(scene, i))
        .fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(l, h), (a, b)| (l.min(a), h.max(b)),
        );
    if lo.x > hi.x {
        return [[0.0; 3]; 2];
    }
    let down = |x: f64| {
        let f = x as f32;
        if f64::from(f) > x { f.next_down() } else { f }
    };
    let up = |x: f64| {
        let f = x as f32;
        if f64::from(f) < x { f.next_up() } else { f }
    };
    [lo.to_array().map(down), hi.to_array().map(up)]
}

/// Splits `scene` on a grid of `size` m: each cell's scene, its
/// placements moved by minus the cell's origin, by ascending cell.
pub fn split(scene: &Scene, size: f64) -> Result<Vec<([i32; 2], Scene)>, TileError> {
    if !(size.is_finite() && size > 0.0) {
        return Err(TileError::Size(size));
    }
    let cell_of = |p: DVec3, name: &str| -> Result<[i32; 2], TileError> {
        let c = [(p.x / size).floor(), (p.z / size).floor()];
        if c.iter()
            .all(|&x| x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX))
        {
            Ok([c[0] as i32, c[1] as i32])
        } else {
            Err(TileError::Cell {
                object: name.to_string(),
                cell: c,
                size,
            })
        }
    };
    // each instance's cell: its body's origin's, else its own centre's
    let mut cells: BTreeMap<[i32; 2], Vec<usize>> = BTreeMap::new();
    for (i, inst) in scene.instances.iter().enumerate() {
        let at = match inst.body {
            Some(b) => scene.bodies[b].transform.translation,
            None => {
                let (lo, hi) = world_box(scene, i);
                (lo + hi) * 0.5
            }
        };
        cells.entry(cell_of(at, &inst.name)?).or_default().push(i);
    }
    Ok(cells
        .into_iter()
        .map(|(cell, members)| {
            let o = Tile::grid_origin(cell, size);
            (cell, tile_scene(scene, &members, DVec3::from(o)))
        })
        .collect())
}

/// The scene of instances `members` of `scene`, moved by `-origin`, with
/// only the meshes and bodies they use.
fn tile_scene(scene: &Scene, members: &[usize], origin: DVec3) -> Scene {
    let shift = DAffine3::from_translation(-origin);
    let mut mesh_map: BTreeMap<usize, usize> = BTreeMap::new();
    let mut body_map: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out = Scene {
        warnings: scene.warnings.clone(),
        notes: scene.notes.clone(),
        authored_physics: scene.authored_physics.clone(),
        ..Scene::default()
    };
    for &i in members {
        let mut inst = scene.instances[i].clone();
        let next = mesh_map.len();
        let m = *mesh_map.entry(inst.mesh).or_insert(next);
        if m == out.meshes.len() {
            out.meshes.push(scene.meshes[inst.mesh].clone());
            if let Some(p) = scene.pieces.get(&inst.mesh) {
                out.pieces.insert(m, p.clone());
            }
        }
        inst.mesh = m;
        inst.transform = shift * inst.transform;
        inst.body = inst.body.map(|b| {
            let next = body_map.len();
            let k = *body_map.entry(b).or_insert(next);
            if k == out.bodies.len() {
                let mut body = scene.bodies[b].clone();
                body.transform = shift * body.transform;
                out.bodies.push(body);
            }
            k
        });
        out.instances.push(inst);
    }
    out
}

/// Bakes `scene` as tiles of `size` m named `{stem}.{i}.{k}.kiln` (the
/// manifest's paths, beside it), each as
/// [`bake_scene`](crate::bake::bake_scene) would: the same
/// bytes whatever else is in the world.
pub fn bake_tiled(
    scene: &Scene,
    settings: &BakeSettings,
    size: f64,
    stem: &str,
) -> Result<TiledWorld, TileError> {
    let mut tiles = Vec::new();
    let mut baked = Vec::new();
    for (cell, part) in split(scene, size)? {
        let hash = crate::bake::scene_hash(&part, settings);
        let b = crate::bake::bake_scene_hashed(&part, settings, hash);
        let objects = b.report.instances as u32;
        let bytes = b.bytes.len() as u64;
        tiles.push(tile_entry(cell, size, &part, stem, hash, (objects, bytes)));
        baked.push(b);
    }
    let manifest = WorldManifest {
        tile_size: size,
        tiles,
    };
    let manifest_bytes = encode_manifest(&manifest);
    Ok(TiledWorld {
        manifest,
        manifest_bytes,
        tiles: baked,
    })
}

/// The name of cell `cell`'s archive for a world named `stem`.
fn tile_file(stem: &str, cell: [i32; 2]) -> String {
    format!("{stem}.{}.{}.kiln", cell[0], cell[1])
}

/// The manifest's entry for cell `cell` of a `size` m grid holding scene
/// `part`, baked with content hash `hash` into an archive of
/// `(objects, bytes)`.
fn tile_entry(
    cell: [i32; 2],
    size: f64,
    part: &Scene,
    stem: &str,
    hash: [u8; 16],
    (objects, bytes): (u32, u64),
) -> Tile {
    Tile {
        cell,
        origin: Tile::grid_origin(cell, size),
        bounds: bounds(part),
        file: tile_file(stem, cell),
        objects,
        content_hash: hash,
        bytes,
    }
}

/// The manifest file: its content hash covers every tile's cell and
/// content hash, in order.
fn encode_manifest(manifest: &WorldManifest) -> Vec<u8> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for t in &manifest.tiles {
        hasher.update(&t.cell[0].to_le_bytes());
        hasher.update(&t.cell[1].to_le_bytes());
        hasher.update(&t.content_hash);
    }
    encode_world(manifest, hasher.digest128().to_le_bytes(), baker_version())
}

/// What [`bake_tiled_to_dir`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TiledReport {
    /// The manifest written.
    pub manifest: std::path::PathBuf,
    /// Tiles in the world.
    pub tiles: usize,
    /// Tiles baked and written this time.
    pub baked: usize,
    /// Tiles whose archive was already what the bake would write.
    pub up_to_date: usize,
    /// Tile archives of cells that are empty now, removed.
    pub removed: usize,
    /// Objects over every tile.
    pub objects: usize,
    /// Bytes over every tile archive.
    pub bytes: u64,
}

/// Why [`bake_tiled_to_dir`] stopped. Tiles written before the error stay
/// (each is whole and correct); the manifest is written last, so the old
/// one still lists the old tiles' content until a bake finishes.
#[derive(Debug, Error)]
pub enum TiledError {
    /// The input could not be read or decoded.
    #[error(transparent)]
    Ingest(#[from] crate::IngestError),
    /// The scene could not be tiled.
    #[error("{input}: {source}")]
    Tile {
        /// The input file.
        input: String,
        /// Why.
        source: TileError,
    },
    /// A file could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Bakes glTF file `input` as tiles of `size` m into `out_dir`:
/// `STEM.kilnworld` and `STEM.i.k.kiln` per tile. A tile whose archive is
/// already what its bake would write (its content hash: its own objects
/// and the settings) is not baked again unless `force`; the bytes are the
/// same as a full bake's either way. Archives of cells the old manifest
/// listed and the new one does not are removed. Each file is written
/// atomically, the manifest last.
pub fn bake_tiled_to_dir(
    input: &std::path::Path,
    out_dir: &std::path::Path,
    size: f64,
    force: bool,
    settings: &BakeSettings,
) -> Result<TiledReport, TiledError> {
    let scene = crate::ingest::load(input)?.scene;
    let parts = split(&scene, size).map_err(|source| TiledError::Tile {
        input: input.display().to_string(),
        source,
    })?;
    let stem = input
        .file_stem()
        .map_or("world".into(), |s| s.to_string_lossy().into_owned());
    let manifest_path = out_dir.join(format!("{stem}.kilnworld"));
    // the old manifest's tiles, by cell
    let old: BTreeMap<[i32; 2], Tile> = std::fs::read(&manifest_path)
        .ok()
        .and_then(|bytes| {
            let aligned = kiln_formats::aligned(&bytes);
            let (_, m) = kiln_formats::world::access_world_file(&aligned).ok()?;
            Some(
                m.tiles
                    .iter()
                    .map(|t| (t.cell.map(|c| c.to_native()), t.to_tile()))
                    .collect(),
            )
        })
        .unwrap_or_default();
    let write = |path: &std::path::Path, bytes: &[u8]| {
        crate::write::write_atomic(path, bytes).map_err(|source| TiledError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut report = TiledReport {
        manifest: manifest_path.clone(),
        tiles: parts.len(),
        ..TiledReport::default()
    };
    let mut tiles = Vec::with_capacity(parts.len());
    for (cell, part) in &parts {
        let hash = crate::bake::scene_hash(part, settings);
        let file = tile_file(&stem, *cell);
        let path = out_dir.join(&file);
        let kept = old
            .get(cell)
            .filter(|t| !force && t.content_hash == hash && t.file == file)
            .and_then(|t| crate::bake::up_to_date_size(&path, hash).map(|bytes| (t, bytes)));
        let (objects, bytes) = match kept {
            Some((t, bytes)) => {
                report.up_to_date += 1;
                (t.objects, bytes)
            }
            None => {
                let b = crate::bake::bake_scene_hashed(part, settings, hash);
                write(&path, &b.bytes)?;
                report.baked += 1;
                (b.report.instances as u32, b.bytes.len() as u64)
            }
        };
        report.objects += objects as usize;
        report.bytes += bytes;
        tiles.push(tile_entry(*cell, size, part, &stem, hash, (objects, bytes)));
    }
    let manifest = WorldManifest {
        tile_size: size,
        tiles,
    };
    write(&manifest_path, &encode_manifest(&manifest))?;
    // the archives of cells that are empty now
    for (cell, t) in &old {
        if manifest.tiles.iter().all(|n| n.cell != *cell)
            && kiln_formats::world::safe_tile_path(&t.file)
            && std::fs::remove_file(out_dir.join(&t.file)).is_ok()
        {
            report.removed += 1;
        }
    }
    Ok(report)
}
