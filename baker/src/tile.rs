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
//! A static triangle mesh at least half a tile across over a border
//! (terrain, a long floor) is cut
//! there, triangle by triangle, each piece keeping the whole mesh's edge
//! flags (see [`split`]).

use std::collections::BTreeMap;

use glam::{DAffine3, DVec3};
use kiln_formats::world::{Tile, WorldManifest, encode_world};
use thiserror::Error;

use crate::bake::{Baked, baker_version};
use crate::config::BakeSettings;
use crate::scene::{Scene, SceneMesh};

/// Why a scene could not be tiled.
#[derive(Debug, Error, PartialEq)]
pub enum TileError {
    /// The tile size is not a positive finite number.
    #[error("tile size {0} is not a positive number of metres")]
    Size(f64),
    /// A cut cache that disagrees with the scene it is keyed to (written
    /// by something else): delete it and bake again.
    #[error(
        "the cut cache has no piece for cell {0:?}: it does not match the scene; delete the .kilncut file"
    )]
    StaleCut([i32; 2]),
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
    use rayon::prelude::*;
    let inst = &scene.instances[i];
    let positions = &scene.meshes[inst.mesh].positions;
    if positions.is_empty() {
        return (inst.transform.translation, inst.transform.translation);
    }
    let empty = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    // min and max are exact: the same box whatever the chunks
    positions
        .par_chunks(1 << 16)
        .map(|chunk| {
            chunk.iter().fold(empty, |(lo, hi), p| {
                let w = inst
                    .transform
                    .transform_point3(DVec3::from(p.map(f64::from)));
                (lo.min(w), hi.max(w))
            })
        })
        .reduce(|| empty, |a, b| (a.0.min(b.0), a.1.max(b.1)))
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

/// The grid cell of world point `p` (x and z) on a grid of `size` m; an
/// error naming `object` past what a cell number holds.
fn cell_of(p: DVec3, size: f64, object: &str) -> Result<[i32; 2], TileError> {
    let c = [(p.x / size).floor(), (p.z / size).floor()];
    if c.iter()
        .all(|&x| x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX))
    {
        Ok([c[0] as i32, c[1] as i32])
    } else {
        Err(TileError::Cell {
            object: object.to_string(),
            cell: c,
            size,
        })
    }
}

/// One piece of a triangle mesh cut at tile borders: the instance it came
/// from, its own mesh, the whole mesh's edge flags of its triangles, and
/// the rule that made the whole a triangle mesh.
struct Piece {
    instance: usize,
    mesh: SceneMesh,
    flags: Vec<u8>,
    rule: String,
}

/// What a tile holds: an instance of the scene whole, a piece already cut
/// (an index into a list of pieces), or the tile's piece of a cut mesh not
/// cut yet (an index into [`Plan`]'s cut meshes).
#[derive(Clone, Copy)]
enum Member {
    Whole(usize),
    Piece(usize),
    Cut(usize),
}

/// The world centroid of triangle `tri` under `xf`: the local centroid
/// placed (one transform a triangle; every cut uses this one formula, so
/// a triangle falls in the same cell however the mesh is cut).
fn centroid(xf: &DAffine3, mesh: &SceneMesh, tri: [u32; 3]) -> DVec3 {
    let local = tri
        .iter()
        .map(|&v| DVec3::from(mesh.positions[v as usize].map(f64::from)))
        .sum::<DVec3>()
        / 3.0;
    xf.transform_point3(local)
}

/// Each triangle's cell, for instance `i` of `scene`.
fn triangle_cells(scene: &Scene, i: usize, size: f64) -> Result<Vec<[i32; 2]>, TileError> {
    use rayon::prelude::*;
    let inst = &scene.instances[i];
    let mesh = &scene.meshes[inst.mesh];
    mesh.triangles
        .par_iter()
        .map(|&tri| cell_of(centroid(&inst.transform, mesh, tri), size, &inst.name))
        .collect()
}

/// The piece of instance `i`'s mesh made of triangles `tris` (its edge
/// flags: `flags` of the whole), its vertices numbered in order of first
/// use. `index` maps the whole's vertices and is left all `u32::MAX`.
fn piece(
    scene: &Scene,
    i: usize,
    tris: &[usize],
    flags: &[u8],
    rule: &str,
    index: &mut [u32],
) -> Piece {
    let mesh = &scene.meshes[scene.instances[i].mesh];
    let mut positions = Vec::new();
    let mut used = Vec::new();
    let triangles = tris
        .iter()
        .map(|&t| {
            mesh.triangles[t].map(|v| {
                if index[v as usize] == u32::MAX {
                    index[v as usize] = positions.len() as u32;
                    positions.push(mesh.positions[v as usize]);
                    used.push(v);
                }
                index[v as usize]
            })
        })
        .collect();
    for v in used {
        index[v as usize] = u32::MAX;
    }
    Piece {
        instance: i,
        mesh: SceneMesh {
            name: mesh.name.clone(),
            positions,
            triangles,
            source_ids: tris.iter().map(|&t| mesh.source_ids[t]).collect(),
            degenerate: 0,
            proxy: mesh.proxy,
        },
        flags: tris.iter().map(|&t| flags[t]).collect(),
        rule: rule.to_string(),
    }
}

/// The pieces of instance `i`'s mesh (edge flags: `flags`), each triangle
/// in the cell of its world centroid, by ascending cell.
fn cut(
    scene: &Scene,
    i: usize,
    size: f64,
    how: &WideCut,
) -> Result<Vec<([i32; 2], Piece)>, TileError> {
    let (flags, rule) = (&how.flags, &how.rule);
    let triangles = scene.meshes[scene.instances[i].mesh].triangles.len();
    let mut by_cell: BTreeMap<[i32; 2], Vec<usize>> = BTreeMap::new();
    let runs_fit = !how.runs.is_empty()
        && how
            .runs
            .iter()
            .all(|r| r.1 < r.2 && r.2 as usize <= triangles)
        && how.runs.iter().map(|r| (r.2 - r.1) as usize).sum::<usize>() == triangles;
    if runs_fit {
        // the cells' runs, kept from working the cut out: no second pass
        // over every triangle's centroid
        for &(cell, first, end) in &how.runs {
            by_cell
                .entry(cell)
                .or_default()
                .extend(first as usize..end as usize);
        }
    } else {
        for (t, cell) in triangle_cells(scene, i, size)?.into_iter().enumerate() {
            by_cell.entry(cell).or_default().push(t);
        }
    }
    // one vertex map for every piece, reset after each where it was used
    // (a fresh one per piece made cutting quadratic: cells × vertices)
    let mesh = &scene.meshes[scene.instances[i].mesh];
    let mut index = vec![u32::MAX; mesh.positions.len()];
    Ok(by_cell
        .into_iter()
        .map(|(cell, tris)| (cell, piece(scene, i, &tris, flags, rule, &mut index)))
        .collect())
}

/// The piece of instance `i`'s mesh in cell `cell` alone (as [`cut`]
/// makes it: the triangles whose centroid lies there, in order).
fn cut_cell(
    scene: &Scene,
    i: usize,
    size: f64,
    cell: [i32; 2],
    how: &WideCut,
) -> Result<Piece, TileError> {
    use rayon::prelude::*;
    let (flags, rule) = (&how.flags, &how.rule);
    let inst = &scene.instances[i];
    let mesh = &scene.meshes[inst.mesh];
    let mut index = vec![u32::MAX; mesh.positions.len()];
    // the cell's runs, when kept and in range
    let first = how.runs.partition_point(|r| r.0 < cell);
    let runs = &how.runs[first..first + how.runs[first..].partition_point(|r| r.0 == cell)];
    if !runs.is_empty()
        && runs
            .iter()
            .all(|r| r.1 < r.2 && r.2 as usize <= mesh.triangles.len())
    {
        let tris: Vec<usize> = runs
            .iter()
            .flat_map(|r| r.1 as usize..r.2 as usize)
            .collect();
        return Ok(piece(scene, i, &tris, flags, rule, &mut index));
    }
    // in order (rayon's collect keeps it), the first error if any
    let tris: Vec<usize> = mesh
        .triangles
        .par_iter()
        .enumerate()
        .filter_map(|(t, &tri)| {
            match cell_of(centroid(&inst.transform, mesh, tri), size, &inst.name) {
                Ok(c) => (c == cell).then_some(Ok(t)),
                Err(e) => Some(Err(e)),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(piece(scene, i, &tris, flags, rule, &mut index))
}

/// The part of `scene` that decides how instances `wide` are classified:
/// them, and every object named with an Unreal collider prefix (by
/// index into `scene`).
fn classified_indices(scene: &Scene, wide: &[usize]) -> Vec<usize> {
    (0..scene.instances.len())
        .filter(|&i| {
            wide.binary_search(&i).is_ok()
                || crate::classify::unreal_prefix(&scene.instances[i].name).is_some()
        })
        .collect()
}

/// The instances `of` of `scene` as a scene of their own (each mesh once).
fn classified_part(scene: &Scene, of: &[usize]) -> Scene {
    let mut mesh_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut sub = Scene {
        authored_physics: scene.authored_physics.clone(),
        ..Scene::default()
    };
    for &i in of {
        let mut inst = scene.instances[i].clone();
        let next = sub.meshes.len();
        let m = *mesh_of.entry(inst.mesh).or_insert(next);
        if m == next {
            sub.meshes.push(scene.meshes[inst.mesh].clone());
        }
        inst.mesh = m;
        inst.body = None;
        sub.instances.push(inst);
    }
    sub
}

/// A digest of a mesh's positions and triangles, its chunks hashed side by
/// side (the same digest at any thread count).
fn mesh_digest(mesh: &SceneMesh) -> [u8; 16] {
    use rayon::prelude::*;
    const WORDS: usize = 1 << 18;
    /// The little-endian bytes of each chunk of `words`, hashed: read in
    /// place where the machine is little-endian, else copied out.
    fn chunks<W: bytemuck::Pod + Sync>(words: &[W], bytes: fn(W) -> [u8; 4]) -> Vec<u64> {
        words
            .par_chunks(WORDS)
            .map(|c| {
                if cfg!(target_endian = "little") {
                    xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(c))
                } else {
                    let mut buf = vec![0u8; 4 * c.len()];
                    for (b, &w) in buf.chunks_exact_mut(4).zip(c) {
                        b.copy_from_slice(&bytes(w));
                    }
                    xxhash_rust::xxh3::xxh3_64(&buf)
                }
            })
            .collect()
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&(mesh.positions.len() as u64).to_le_bytes());
    for d in chunks(mesh.positions.as_flattened(), f32::to_le_bytes) {
        h.update(&d.to_le_bytes());
    }
    h.update(&(mesh.triangles.len() as u64).to_le_bytes());
    for d in chunks(mesh.triangles.as_flattened(), u32::to_le_bytes) {
        h.update(&d.to_le_bytes());
    }
    h.digest128().to_le_bytes()
}

/// The key of cutting instances `wide` of `scene` on a `size` m grid: the
/// settings, and every instance their classification reads (`of`), with
/// its mesh's digest; and those digests, by mesh.
fn cut_key(
    scene: &Scene,
    of: &[usize],
    wide: &[usize],
    settings: &BakeSettings,
    size: f64,
) -> ([u8; 16], BTreeMap<usize, [u8; 16]>) {
    let mut digests: BTreeMap<usize, [u8; 16]> = BTreeMap::new();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(b"kiln cut 1|");
    h.update(settings.fingerprint().as_bytes());
    h.update(&size.to_bits().to_le_bytes());
    for &i in of {
        let inst = &scene.instances[i];
        let d = *digests
            .entry(inst.mesh)
            .or_insert_with(|| mesh_digest(&scene.meshes[inst.mesh]));
        h.update(&d);
        crate::bake::hash_instance(&mut h, inst);
        h.update(&[u8::from(wide.binary_search(&i).is_ok())]);
    }
    if let Some(ext) = &scene.authored_physics {
        h.update(ext.as_bytes());
    }
    (h.digest128().to_le_bytes(), digests)
}

/// Each wide instance's own key: the settings, the grid, the instance
/// and its mesh's digest (`digests`), and the instances among `of` whose
/// names may speak for it (Unreal's collider prefixes).
fn local_keys(
    scene: &Scene,
    of: &[usize],
    wide: &[usize],
    digests: &BTreeMap<usize, [u8; 16]>,
    settings: &BakeSettings,
    size: f64,
) -> Vec<[u8; 16]> {
    // every instance named with an Unreal collider prefix, wide or not:
    // any of them may name another's render mesh
    let mut named = xxhash_rust::xxh3::Xxh3::new();
    for &i in of {
        if crate::classify::unreal_prefix(&scene.instances[i].name).is_some() {
            let inst = &scene.instances[i];
            named.update(&digests[&inst.mesh]);
            crate::bake::hash_instance(&mut named, inst);
        }
    }
    let named = named.digest128().to_le_bytes();
    wide.iter()
        .map(|&i| {
            let inst = &scene.instances[i];
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            h.update(b"kiln cut 2|");
            h.update(settings.fingerprint().as_bytes());
            h.update(&size.to_bits().to_le_bytes());
            h.update(&digests[&inst.mesh]);
            crate::bake::hash_instance(&mut h, inst);
            h.update(&named);
            if let Some(ext) = &scene.authored_physics {
                h.update(ext.as_bytes());
            }
            h.digest128().to_le_bytes()
        })
        .collect()
}

/// What decides the pieces of wide instance `i` (mesh digest `digest`)
/// cut as `how`: its mesh, placement, rule and edge flags (not the other
/// instances its classification read: a tile's key changes only when its
/// own pieces do).
fn piece_key(scene: &Scene, i: usize, digest: &[u8; 16], how: &WideCut) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(b"kiln piece 1|");
    h.update(digest);
    crate::bake::hash_instance(&mut h, &scene.instances[i]);
    h.update(&(how.rule.len() as u64).to_le_bytes());
    h.update(how.rule.as_bytes());
    h.update(&xxhash_rust::xxh3::xxh3_128(&how.flags).to_le_bytes());
    h.digest128().to_le_bytes()
}

/// How one wide instance is cut: whether it is a triangle mesh (else it
/// goes whole to one tile), and if so the rule that made it one, each
/// triangle's edge flags in the whole mesh, and the cells its triangles
/// fall in.
#[derive(Clone, Debug, PartialEq)]
struct WideCut {
    trimesh: bool,
    rule: String,
    flags: Vec<u8>,
    cells: Vec<[i32; 2]>,
    /// Where each cell's triangles are, as runs of consecutive triangles
    /// `(cell, first, past the last)` by cell, then first: a cell's piece
    /// gathered without looking at every triangle. Empty when the runs
    /// would be many (a mesh whose triangles are not in spatial order).
    runs: Vec<([i32; 2], u32, u32)>,
}

/// The runs of consecutive triangles in one cell, by cell then first,
/// for triangles in `cells` (each triangle's cell); none when there would
/// be more than one run per 4 triangles.
fn runs_of(cells: &[[i32; 2]]) -> Vec<([i32; 2], u32, u32)> {
    let mut runs: Vec<([i32; 2], u32, u32)> = Vec::new();
    for (t, &cell) in cells.iter().enumerate() {
        match runs.last_mut() {
            Some((c, _, end)) if *c == cell && *end as usize == t => *end += 1,
            _ => {
                if runs.len() > cells.len() / 4 + 16 {
                    return Vec::new();
                }
                runs.push((cell, t as u32, t as u32 + 1));
            }
        }
    }
    runs.sort_unstable();
    runs
}

/// What cutting a scene's wide static meshes at tile borders takes from
/// the whole of them — how they are classified, each triangle's edge
/// flags, the cells their triangles fall in — kept from one bake of a
/// world to the next and keyed by everything that decides it (the meshes'
/// contents, placements, names, the settings and the grid). With it a
/// re-bake after an edit elsewhere does not classify, weld and flag the
/// terrain again, and cuts only the tiles that changed; the bytes are the
/// same as a full bake's. [`bake_tiled_to_dir`] keeps it beside the
/// manifest (`.STEM.kilncut`).
#[derive(Clone, Debug, Default)]
pub struct CutCache {
    /// Each cut mesh's cut by its own key ([`local_keys`]).
    entries: BTreeMap<[u8; 16], std::sync::Arc<CutEntry>>,
    /// How many times a plan worked the cut out (not found here).
    worked: u64,
}

/// One wide instance's cut as the cache keeps it. An open mesh's kind
/// depends on it alone (and the names that may speak for it); a closed
/// one's also on the objects it may enclose (the shell test), so it holds
/// only while every wide instance is as it was (`joint`).
#[derive(Clone, Debug, PartialEq)]
struct CutEntry {
    cut: WideCut,
    closed: bool,
    joint: [u8; 16],
}

/// The first bytes of a cut cache file.
const CUT_MAGIC: &[u8; 12] = b"KILNCUT\0\x03\0\0\0";

impl CutCache {
    /// An empty cache.
    pub fn new() -> CutCache {
        CutCache::default()
    }

    /// How many times a plan has had to work the cut out since this
    /// cache was made or read (0: every plan found it here).
    pub fn misses(&self) -> u64 {
        self.worked
    }

    /// Whether it holds the cut of a world.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads a cache file; anything missing, damaged or of another
    /// version is an empty cache (the cut is made again).
    pub fn read(path: &std::path::Path) -> CutCache {
        std::fs::read(path)
            .ok()
            .and_then(|b| CutCache::from_bytes(&b))
            .unwrap_or_default()
    }

    /// Writes it to `path` atomically (nothing if it is empty).
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        match self.to_bytes() {
            Some(bytes) => crate::write::write_atomic(path, &bytes),
            None => Ok(()),
        }
    }

    /// The cache file's bytes (`None` if it is empty): a magic and
    /// version, the key, each cut mesh's kind, rule, edge flags, cells and
    /// runs, and an xxh3 checksum of all of it.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        if self.entries.is_empty() {
            return None;
        }
        let mut b = CUT_MAGIC.to_vec();
        b.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        for (key, e) in &self.entries {
            b.extend_from_slice(key);
            b.push(u8::from(e.closed));
            b.extend_from_slice(&e.joint);
            let c = &e.cut;
            b.push(u8::from(c.trimesh));
            b.extend_from_slice(&(c.rule.len() as u64).to_le_bytes());
            b.extend_from_slice(c.rule.as_bytes());
            b.extend_from_slice(&(c.flags.len() as u64).to_le_bytes());
            b.extend_from_slice(&c.flags);
            b.extend_from_slice(&(c.cells.len() as u64).to_le_bytes());
            for cell in &c.cells {
                b.extend_from_slice(&cell[0].to_le_bytes());
                b.extend_from_slice(&cell[1].to_le_bytes());
            }
            b.extend_from_slice(&(c.runs.len() as u64).to_le_bytes());
            for (cell, first, end) in &c.runs {
                for w in [cell[0].to_le_bytes(), cell[1].to_le_bytes()] {
                    b.extend_from_slice(&w);
                }
                b.extend_from_slice(&first.to_le_bytes());
                b.extend_from_slice(&end.to_le_bytes());
            }
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        Some(b)
    }

    /// A cache from a file's bytes; `None` for anything but what
    /// [`CutCache::to_bytes`] writes (another version, a bad checksum, a
    /// length past the end, bytes left over).
    pub fn from_bytes(bytes: &[u8]) -> Option<CutCache> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
        if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
            return None;
        }
        let mut r = Reader(body.strip_prefix(CUT_MAGIC.as_slice())?);
        let mut entries = BTreeMap::new();
        let flag = |b: u8| match b {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        };
        for _ in 0..r.len()? {
            let key: [u8; 16] = r.take(16)?.try_into().ok()?;
            let closed = flag(r.take(1)?[0])?;
            let joint: [u8; 16] = r.take(16)?.try_into().ok()?;
            let trimesh = flag(r.take(1)?[0])?;
            let k = r.len()?;
            let rule = String::from_utf8(r.take(k)?.to_vec()).ok()?;
            let k = r.len()?;
            let flags = r.take(k)?.to_vec();
            let k = r.len()?;
            let cells = r
                .take(k.checked_mul(8)?)?
                .chunks_exact(8)
                .map(|c| {
                    let word = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    [word(&c[..4]), word(&c[4..])]
                })
                .collect();
            let k = r.len()?;
            let runs = r
                .take(k.checked_mul(16)?)?
                .chunks_exact(16)
                .map(|c| {
                    let i = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    let u = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    ([i(&c[..4]), i(&c[4..8])], u(&c[8..12]), u(&c[12..]))
                })
                .collect();
            let cut = WideCut {
                trimesh,
                rule,
                flags,
                cells,
                runs,
            };
            let e = CutEntry { cut, closed, joint };
            // keys strictly ascending, as written
            if entries.last_key_value().is_some_and(|(k, _)| *k >= key) {
                return None;
            }
            entries.insert(key, std::sync::Arc::new(e));
        }
        if !r.0.is_empty() {
            return None;
        }
        Some(CutCache { entries, worked: 0 })
    }
}

/// Reads a cut cache file's fields, refusing to read past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(a)
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(u64::from_le_bytes(self.take(8)?.try_into().ok()?)).ok()
    }
}

/// A scene's tiles on a grid, planned ([`plan`]): which objects each tile
/// holds and its content key, known before any mesh is cut, so a re-bake
/// cuts and bakes only the tiles whose key changed.
pub struct Plan<'a> {
    scene: &'a Scene,
    size: f64,
    /// Each tile's cell, members and content key, by ascending cell.
    tiles: Vec<([i32; 2], Vec<Member>, [u8; 16])>,
    /// The meshes cut at borders: instance, and its cut in `wide`.
    cuts: Vec<(usize, usize)>,
    wide: std::sync::Arc<Vec<WideCut>>,
}

impl Plan<'_> {
    /// How many tiles.
    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    /// Whether the world has no tile (an empty scene).
    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }

    /// Tile `k`'s cell.
    pub fn cell(&self, k: usize) -> [i32; 2] {
        self.tiles[k].0
    }

    /// Tile `k`'s content key: its archive's content hash, covering the
    /// settings, its whole objects and the cut meshes its pieces come
    /// from.
    pub fn key(&self, k: usize) -> [u8; 16] {
        self.tiles[k].2
    }

    /// Tile `k`'s scene, its placements moved by minus its origin (only
    /// its own pieces cut).
    pub fn scene(&self, k: usize) -> Result<Scene, TileError> {
        let (cell, members, _) = &self.tiles[k];
        let mut pieces = Vec::new();
        let mut own = Vec::with_capacity(members.len());
        for &m in members {
            own.push(match m {
                Member::Cut(c) => {
                    let (i, w) = self.cuts[c];
                    pieces.push(cut_cell(self.scene, i, self.size, *cell, &self.wide[w])?);
                    Member::Piece(pieces.len() - 1)
                }
                m => m,
            });
        }
        let origin = DVec3::from(Tile::grid_origin(*cell, self.size));
        Ok(tile_scene(self.scene, &own, &pieces, origin))
    }

    /// Every tile's scene, each cut mesh cut once.
    pub fn scenes(&self) -> Result<Vec<Scene>, TileError> {
        let all: Vec<usize> = (0..self.tiles.len()).collect();
        self.scenes_of(&all)
    }

    /// The scenes of tiles `ks`: each cut on its own when they are few,
    /// else every cut mesh cut once.
    pub fn scenes_of(&self, ks: &[usize]) -> Result<Vec<Scene>, TileError> {
        use rayon::prelude::*;
        if ks.len() <= 2 || self.cuts.is_empty() {
            return ks.iter().map(|&k| self.scene(k)).collect();
        }
        let mut pieces = Vec::new();
        let mut piece_of: BTreeMap<(usize, [i32; 2]), usize> = BTreeMap::new();
        for (c, &(i, w)) in self.cuts.iter().enumerate() {
            let how = &self.wide[w];
            for (cell, p) in cut(self.scene, i, self.size, how)? {
                piece_of.insert((c, cell), pieces.len());
                pieces.push(p);
            }
        }
        ks.par_iter()
            .map(|&k| {
                let (cell, members, _) = &self.tiles[k];
                let own = members
                    .iter()
                    .map(|&m| match m {
                        Member::Cut(c) => piece_of
                            .get(&(c, *cell))
                            .map(|&p| Member::Piece(p))
                            .ok_or(TileError::StaleCut(*cell)),
                        m => Ok(m),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let origin = DVec3::from(Tile::grid_origin(*cell, self.size));
                Ok(tile_scene(self.scene, &own, &pieces, origin))
            })
            .collect()
    }
}

/// Plans the tiles of `scene` on a grid of `size` m (see [`split`]):
/// which objects go whole to which tile, which static triangle meshes are
/// cut at borders and into which tiles, and each tile's content key.
/// What cutting needs from a whole mesh comes from `cache` when the cut
/// meshes, their placements and the settings are as it holds; else it is
/// worked out and `cache` keeps it.
pub fn plan<'a>(
    scene: &'a Scene,
    settings: &BakeSettings,
    size: f64,
    cache: &mut CutCache,
) -> Result<Plan<'a>, TileError> {
    use rayon::prelude::*;
    if !(size.is_finite() && size > 0.0) {
        return Err(TileError::Size(size));
    }
    // which instances are static triangle meshes over a border
    let boxes: Vec<(DVec3, DVec3)> = (0..scene.instances.len())
        .into_par_iter()
        .map(|i| world_box(scene, i))
        .collect();
    // over a border and at least half a tile across: a smaller object
    // goes whole to the tile of its centre, whatever its kind (cutting it
    // would gain nothing, and would tie the terrain's cut to every prop
    // that happens to straddle a border)
    let spans = |i: usize| -> Result<bool, TileError> {
        let (lo, hi) = boxes[i];
        let name = &scene.instances[i].name;
        let across = (hi - lo).x.max((hi - lo).z);
        Ok(across >= 0.5 * size && cell_of(lo, size, name)? != cell_of(hi, size, name)?)
    };
    let mut wide = Vec::new();
    for (i, inst) in scene.instances.iter().enumerate() {
        let still = inst.motion == crate::scene::Motion::Static && !inst.trigger;
        if still && inst.body.is_none() && spans(i)? {
            wide.push(i);
        }
    }
    let (wide_cuts, piece_keys) = if wide.is_empty() {
        (std::sync::Arc::new(Vec::new()), Vec::new())
    } else {
        let of = classified_indices(scene, &wide);
        let (joint, digests) = cut_key(scene, &of, &wide, settings, size);
        let local = local_keys(scene, &of, &wide, &digests, settings, size);
        // each wide instance's cut from the cache, if it holds there
        let fits = |i: usize, e: &CutEntry| {
            (!e.closed || e.joint == joint)
                && (!e.cut.trimesh
                    || e.cut.flags.len() == scene.meshes[scene.instances[i].mesh].triangles.len())
        };
        let kept: Option<Vec<WideCut>> = wide
            .iter()
            .zip(&local)
            .map(|(&i, k)| {
                let e = cache.entries.get(k)?;
                fits(i, e).then(|| e.cut.clone())
            })
            .collect();
        let cuts = match kept {
            Some(cuts) => std::sync::Arc::new(cuts),
            None => {
                let worked = work_out_cuts(scene, &of, &wide, settings, size)?;
                cache.worked += 1;
                cache.entries = local
                    .iter()
                    .zip(&worked)
                    .map(|(k, (cut, closed))| {
                        let e = CutEntry {
                            cut: cut.clone(),
                            closed: *closed,
                            joint,
                        };
                        (*k, std::sync::Arc::new(e))
                    })
                    .collect();
                std::sync::Arc::new(worked.into_iter().map(|(c, _)| c).collect())
            }
        };
        let piece_keys = wide
            .iter()
            .zip(cuts.iter())
            .map(|(&i, how)| {
                let digest = &digests[&scene.instances[i].mesh];
                piece_key(scene, i, digest, how)
            })
            .collect();
        (cuts, piece_keys)
    };
    // each instance's cell: its body's origin's, else its own centre's;
    // a cut one's pieces, each in its own
    let mut cells: BTreeMap<[i32; 2], Vec<Member>> = BTreeMap::new();
    let mut cuts = Vec::new();
    for (i, inst) in scene.instances.iter().enumerate() {
        if let Ok(w) = wide.binary_search(&i)
            && wide_cuts[w].trimesh
        {
            for &cell in &wide_cuts[w].cells {
                cells.entry(cell).or_default().push(Member::Cut(cuts.len()));
            }
            cuts.push((i, w));
            continue;
        }
        let at = match inst.body {
            Some(b) => scene.bodies[b].transform.translation,
            None => (boxes[i].0 + boxes[i].1) * 0.5,
        };
        cells
            .entry(cell_of(at, size, &inst.name)?)
            .or_default()
            .push(Member::Whole(i));
    }
    // each tile's key: its whole objects as a tile scene of their own, and
    // which cut meshes' pieces it holds where
    let tiles = cells
        .into_par_iter()
        .map(|(cell, members)| {
            let whole: Vec<Member> = members
                .iter()
                .copied()
                .filter(|m| matches!(m, Member::Whole(_)))
                .collect();
            let origin = DVec3::from(Tile::grid_origin(cell, size));
            let part = tile_scene(scene, &whole, &[], origin);
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            h.update(b"kiln tile 2|");
            h.update(&size.to_bits().to_le_bytes());
            h.update(&cell[0].to_le_bytes());
            h.update(&cell[1].to_le_bytes());
            h.update(&crate::bake::scene_hash(&part, settings));
            for m in &members {
                match *m {
                    Member::Cut(c) => {
                        h.update(b"C");
                        h.update(&piece_keys[cuts[c].1]);
                    }
                    _ => h.update(b"W"),
                }
            }
            (cell, members, h.digest128().to_le_bytes())
        })
        .collect();
    Ok(Plan {
        scene,
        size,
        tiles,
        cuts,
        wide: wide_cuts,
    })
}

/// Classifies the wide instances among the instances `of` that decide
/// it and, for each that is a triangle mesh, works out its edge flags in
/// the whole mesh and the cells its triangles fall in.
fn work_out_cuts(
    scene: &Scene,
    of: &[usize],
    wide: &[usize],
    settings: &BakeSettings,
    size: f64,
) -> Result<Vec<(WideCut, bool)>, TileError> {
    // classified among themselves and the objects whose names may speak
    // for them (Unreal's UCX_ colliders name their render meshes): the
    // whole scene's shell test over every closed prop is what a tile's
    // own bake does, and would cost far more here
    let sub = classified_part(scene, of);
    let welded = crate::geom::weld::weld_all(&sub);
    let (choices, _) = crate::classify::classify(&sub, &welded, settings);
    let mut flags_of: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut out = Vec::with_capacity(wide.len());
    for &i in wide {
        let j = of.binary_search(&i).expect("a wide instance is classified");
        let m = sub.instances[j].mesh;
        if choices[j].kind != crate::kind::ColliderKind::TriMesh {
            // taken as closed (its cut holds only while every wide object
            // is as it was): finding out would cost a pass over its edges
            let closed = true;
            let cut = WideCut {
                trimesh: false,
                rule: String::new(),
                flags: Vec::new(),
                cells: Vec::new(),
                runs: Vec::new(),
            };
            out.push((cut, closed));
            continue;
        }
        let flags = flags_of
            .entry(m)
            .or_insert_with(|| crate::collider::tri_mesh::edge_flags(&welded[m]))
            .clone();
        // a border edge (one triangle's alone) makes it open for sure; with
        // none it is taken as closed
        let closed = !flags.iter().any(|f| f & 0b11_1000 != 0);
        let each = triangle_cells(scene, i, size)?;
        let runs = if u32::try_from(each.len()).is_ok() {
            runs_of(&each)
        } else {
            Vec::new()
        };
        let mut cells = each;
        cells.sort_unstable();
        cells.dedup();
        let cut = WideCut {
            trimesh: true,
            rule: choices[j].rule.clone(),
            flags,
            cells,
            runs,
        };
        out.push((cut, closed));
    }
    Ok(out)
}

/// Splits `scene` on a grid of `size` m: each cell's scene, its
/// placements moved by minus the cell's origin, by ascending cell.
///
/// A static triangle mesh (as `settings` classify it: terrain, floors)
/// at least half a cell across whose box reaches over a cell border is cut
/// there: each triangle goes
/// to the cell of its centroid, whole (the tiles hold exactly the whole
/// mesh's triangles, so they answer as the whole does), and keeps the
/// edge flags the whole mesh gave it, so an edge the cut made a border is
/// still a flat seam inside a floor (nothing catches on it) or the crease
/// it was. Every other object goes whole to the cell of its box's centre,
/// an authored body's objects to the cell of its origin.
pub fn split(
    scene: &Scene,
    settings: &BakeSettings,
    size: f64,
) -> Result<Vec<([i32; 2], Scene)>, TileError> {
    let plan = plan(scene, settings, size, &mut CutCache::new())?;
    let scenes = plan.scenes()?;
    Ok((0..plan.len()).map(|k| plan.cell(k)).zip(scenes).collect())
}

/// `positions` placed by `xf`, if every coordinate comes out exactly an
/// f32 (so the placed mesh is the same mesh, its transform the identity).
fn placed_exactly(positions: &[[f32; 3]], xf: &DAffine3) -> Option<Vec<[f32; 3]>> {
    positions
        .iter()
        .map(|p| {
            let w = xf.transform_point3(DVec3::from(p.map(f64::from)));
            let f = w.as_vec3();
            (f.as_dvec3() == w).then_some(f.to_array())
        })
        .collect()
}

/// The scene of `members` of `scene` (its instances and `pieces`), moved
/// by `-origin`, with only the meshes and bodies they use.
fn tile_scene(scene: &Scene, members: &[Member], pieces: &[Piece], origin: DVec3) -> Scene {
    let shift = DAffine3::from_translation(-origin);
    let mut mesh_map: BTreeMap<usize, usize> = BTreeMap::new();
    let mut body_map: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out = Scene {
        warnings: scene.warnings.clone(),
        notes: scene.notes.clone(),
        authored_physics: scene.authored_physics.clone(),
        ..Scene::default()
    };
    for &member in members {
        let mut inst = match member {
            Member::Whole(i) => {
                let mut inst = scene.instances[i].clone();
                let next = out.meshes.len();
                let m = *mesh_map.entry(inst.mesh).or_insert(next);
                if m == out.meshes.len() {
                    out.meshes.push(scene.meshes[inst.mesh].clone());
                    if let Some(p) = scene.pieces.get(&inst.mesh) {
                        out.pieces.insert(m, p.clone());
                    }
                }
                inst.mesh = m;
                inst.transform = shift * inst.transform;
                inst
            }
            Member::Piece(k) => {
                let p = &pieces[k];
                let mut inst = scene.instances[p.instance].clone();
                inst.mesh = out.meshes.len();
                let mut mesh = p.mesh.clone();
                inst.transform = shift * inst.transform;
                // a piece is its own mesh: placed in the tile's frame by
                // its vertices where f32 holds them exactly (a query on an
                // unplaced mesh skips moving into its frame), else by its
                // placement
                if let Some(placed) = placed_exactly(&mesh.positions, &inst.transform) {
                    mesh.positions = placed;
                    inst.transform = DAffine3::IDENTITY;
                }
                out.meshes.push(mesh);
                out.edge_flags.insert(inst.mesh, p.flags.clone());
                out.cut_from.insert(out.instances.len(), p.rule.clone());
                inst
            }
            // a plan's uncut piece: cut before a scene is made of it
            Member::Cut(_) => continue,
        };
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
/// [`bake_scene_hashed`](crate::bake::bake_scene_hashed) bakes its part
/// with its [`Plan::key`]: the same bytes whatever else is in the world.
pub fn bake_tiled(
    scene: &Scene,
    settings: &BakeSettings,
    size: f64,
    stem: &str,
) -> Result<TiledWorld, TileError> {
    bake_tiled_cached(scene, settings, size, stem, &mut CutCache::new())
}

/// [`bake_tiled`], taking what cutting needs from `cache` (and leaving
/// this world's cut in it for the next bake).
pub fn bake_tiled_cached(
    scene: &Scene,
    settings: &BakeSettings,
    size: f64,
    stem: &str,
    cache: &mut CutCache,
) -> Result<TiledWorld, TileError> {
    use rayon::prelude::*;
    let plan = plan(scene, settings, size, cache)?;
    // tiles bake side by side (each its own bake, the same bytes at any
    // thread count), each bake's own steps parallel within it too
    let (tiles, baked): (Vec<Tile>, Vec<Baked>) = plan
        .scenes()?
        .into_par_iter()
        .enumerate()
        .map(|(k, part)| {
            let (cell, hash) = (plan.cell(k), plan.key(k));
            let b = crate::bake::bake_scene_hashed(&part, settings, hash);
            let objects = b.report.instances as u32;
            let bytes = b.bytes.len() as u64;
            (
                tile_entry(cell, size, bounds(&part), stem, hash, (objects, bytes)),
                b,
            )
        })
        .unzip();
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

/// The manifest's entry for cell `cell` of a `size` m grid whose objects
/// lie in `bounds`, baked with content hash `hash` into an archive of
/// `(objects, bytes)`.
fn tile_entry(
    cell: [i32; 2],
    size: f64,
    bounds: [[f32; 3]; 2],
    stem: &str,
    hash: [u8; 16],
    (objects, bytes): (u32, u64),
) -> Tile {
    Tile {
        cell,
        origin: Tile::grid_origin(cell, size),
        bounds,
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
    /// Every file the bake read (the document and its buffers): what each
    /// tile depends on, for a depfile.
    pub files: Vec<std::path::PathBuf>,
    /// Each tile's archive, in the manifest's order.
    pub archives: Vec<std::path::PathBuf>,
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
    /// A tile's archive could not be read, or is no valid archive.
    #[error("{}: {why}", path.display())]
    Archive {
        /// The archive.
        path: std::path::PathBuf,
        /// Why.
        why: String,
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
    let source = crate::ingest::Source::read(input)?;
    let scene = source.scene()?;
    let stem = input
        .file_stem()
        .map_or("world".into(), |s| s.to_string_lossy().into_owned());
    let tiled = |source| TiledError::Tile {
        input: input.display().to_string(),
        source,
    };
    // what cutting the terrain takes, kept from the last bake
    let cache_path = out_dir.join(format!(".{stem}.kilncut"));
    let mut cache = CutCache::read(&cache_path);
    let before = cache.worked;
    let plan = plan(&scene, settings, size, &mut cache).map_err(tiled)?;
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
        tiles: plan.len(),
        files: source.files(),
        ..TiledReport::default()
    };
    // each tile kept if its archive is what its bake would write
    use rayon::prelude::*;
    let kept: Vec<Option<Tile>> = (0..plan.len())
        .into_par_iter()
        .map(|k| {
            let (cell, hash) = (plan.cell(k), plan.key(k));
            let file = tile_file(&stem, cell);
            let t = old
                .get(&cell)
                .filter(|t| !force && t.content_hash == hash && t.file == file)?;
            let bytes = crate::bake::up_to_date_size(&out_dir.join(&file), hash)?;
            Some(Tile { bytes, ..t.clone() })
        })
        .collect();
    // the others cut (only their own pieces when few), baked and written
    let todo: Vec<usize> = (0..plan.len()).filter(|&k| kept[k].is_none()).collect();
    let scenes = plan.scenes_of(&todo).map_err(tiled)?;
    let fresh: Vec<Result<Tile, TiledError>> = todo
        .par_iter()
        .zip(scenes)
        .map(|(&k, part)| {
            let (cell, hash) = (plan.cell(k), plan.key(k));
            let b = crate::bake::bake_scene_hashed(&part, settings, hash);
            write(&out_dir.join(tile_file(&stem, cell)), &b.bytes)?;
            let sizes = (b.report.instances as u32, b.bytes.len() as u64);
            Ok(tile_entry(cell, size, bounds(&part), &stem, hash, sizes))
        })
        .collect();
    let mut fresh = fresh.into_iter();
    let mut tiles = Vec::with_capacity(plan.len());
    for kept in &kept {
        let entry = match kept {
            Some(t) => {
                report.up_to_date += 1;
                t.clone()
            }
            None => {
                report.baked += 1;
                fresh.next().expect("a bake per tile to do")?
            }
        };
        report.objects += entry.objects as usize;
        report.bytes += entry.bytes;
        report.archives.push(out_dir.join(&entry.file));
        tiles.push(entry);
    }
    let manifest = WorldManifest {
        tile_size: size,
        tiles,
    };
    write(&manifest_path, &encode_manifest(&manifest))?;
    // the cut for the next bake (a cache: a failed write costs only time)
    if cache.worked != before {
        let _ = cache.write(&cache_path);
    }
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

/// A world of tiles authored apart: the archives `tiles` names (each a
/// path relative to `dir`, the manifest's folder, baked on its own as
/// any level is) at their f64 origins, in that order. The manifest's
/// tile size is 0 (no grid); tile `k` is cell `[k, 0]`; each tile's
/// bounds, objects, content hash and size are read from its archive's
/// header and top-level tree. Returns the manifest and its file.
///
/// # Errors
/// A path outside `dir`, a bad origin, or an archive that cannot be read
/// or is not valid, naming the file.
pub fn world_of_archives(
    dir: &std::path::Path,
    tiles: &[(String, [f64; 3])],
) -> Result<(WorldManifest, Vec<u8>), TiledError> {
    let bad = |file: &str, why: String| TiledError::Archive {
        path: dir.join(file),
        why,
    };
    let mut out = Vec::with_capacity(tiles.len());
    for (k, (file, origin)) in tiles.iter().enumerate() {
        if !kiln_formats::world::safe_tile_path(file) {
            return Err(bad(
                file,
                "a tile's archive must lie in the manifest's folder (a relative path without ..)"
                    .into(),
            ));
        }
        if !origin
            .iter()
            .all(|x| x.is_finite() && x.abs() <= kiln_formats::world::MAX_ORIGIN)
        {
            return Err(bad(
                file,
                format!("origin {origin:?} is not a finite point within 1e12 m"),
            ));
        }
        let bytes = std::fs::read(dir.join(file)).map_err(|e| bad(file, e.to_string()))?;
        let aligned = kiln_formats::aligned(&bytes);
        let (header, level) =
            kiln_formats::access_file(&aligned).map_err(|e| bad(file, e.to_string()))?;
        let top = &level.top;
        let bounds = if top.leaves.to_native() == 0 {
            [[0.0; 3]; 2]
        } else {
            [
                top.min.map(|x| x.to_native()),
                top.max.map(|x| x.to_native()),
            ]
        };
        let cell = i32::try_from(k).map_err(|_| bad(file, "too many tiles".into()))?;
        out.push(Tile {
            cell: [cell, 0],
            origin: *origin,
            bounds,
            file: file.clone(),
            objects: level.instances.len() as u32,
            content_hash: header.content_hash,
            bytes: bytes.len() as u64,
        });
    }
    let manifest = WorldManifest {
        tile_size: 0.0,
        tiles: out,
    };
    let bytes = encode_manifest(&manifest);
    Ok((manifest, bytes))
}
