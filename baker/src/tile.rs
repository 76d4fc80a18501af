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
//! A static triangle mesh over a border (terrain, a long floor) is cut
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

/// What a tile holds: an instance of the scene whole, or a piece.
#[derive(Clone, Copy)]
enum Member {
    Whole(usize),
    Piece(usize),
}

/// The pieces of instance `i`'s mesh (welded: `w`, edge flags: `flags`),
/// each triangle in the cell of its world centroid, by ascending cell.
fn cut(
    scene: &Scene,
    i: usize,
    size: f64,
    flags: &[u8],
    rule: &str,
) -> Result<Vec<([i32; 2], Piece)>, TileError> {
    let inst = &scene.instances[i];
    let mesh = &scene.meshes[inst.mesh];
    let mut by_cell: BTreeMap<[i32; 2], Vec<usize>> = BTreeMap::new();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        let centroid = tri
            .iter()
            .map(|&v| {
                inst.transform
                    .transform_point3(DVec3::from(mesh.positions[v as usize].map(f64::from)))
            })
            .sum::<DVec3>()
            / 3.0;
        by_cell
            .entry(cell_of(centroid, size, &inst.name)?)
            .or_default()
            .push(t);
    }
    // one vertex map for every piece, reset after each where it was used
    // (a fresh one per piece made cutting quadratic: cells × vertices)
    let mut index = vec![u32::MAX; mesh.positions.len()];
    Ok(by_cell
        .into_iter()
        .map(|(cell, tris)| {
            // the vertices the piece uses, numbered in order of first use
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
            let piece = SceneMesh {
                name: mesh.name.clone(),
                positions,
                triangles,
                source_ids: tris.iter().map(|&t| mesh.source_ids[t]).collect(),
                degenerate: 0,
                proxy: mesh.proxy,
            };
            (
                cell,
                Piece {
                    instance: i,
                    mesh: piece,
                    flags: tris.iter().map(|&t| flags[t]).collect(),
                    rule: rule.to_string(),
                },
            )
        })
        .collect())
}

/// The part of `scene` that decides how instances `wide` are classified:
/// them, and every object named with an Unreal collider prefix; with, for
/// each of its instances, its index in `scene`.
fn classified_part(scene: &Scene, wide: &[usize]) -> (Scene, Vec<usize>) {
    let of: Vec<usize> = (0..scene.instances.len())
        .filter(|&i| {
            wide.binary_search(&i).is_ok()
                || crate::classify::unreal_prefix(&scene.instances[i].name).is_some()
        })
        .collect();
    let mut mesh_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut sub = Scene {
        authored_physics: scene.authored_physics.clone(),
        ..Scene::default()
    };
    for &i in &of {
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
    (sub, of)
}

/// Splits `scene` on a grid of `size` m: each cell's scene, its
/// placements moved by minus the cell's origin, by ascending cell.
///
/// A static triangle mesh (as `settings` classify it: terrain, floors)
/// whose box reaches over a cell border is cut there: each triangle goes
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
    if !(size.is_finite() && size > 0.0) {
        return Err(TileError::Size(size));
    }
    // which instances are static triangle meshes over a border
    let boxes: Vec<(DVec3, DVec3)> = (0..scene.instances.len())
        .map(|i| world_box(scene, i))
        .collect();
    let spans = |i: usize| -> Result<bool, TileError> {
        let (lo, hi) = boxes[i];
        let name = &scene.instances[i].name;
        Ok(cell_of(lo, size, name)? != cell_of(hi, size, name)?)
    };
    let mut wide = Vec::new();
    for (i, inst) in scene.instances.iter().enumerate() {
        let still = inst.motion == crate::scene::Motion::Static && !inst.trigger;
        if still && inst.body.is_none() && spans(i)? {
            wide.push(i);
        }
    }
    let mut cut_pieces: BTreeMap<usize, Vec<([i32; 2], Piece)>> = BTreeMap::new();
    if !wide.is_empty() {
        // classified among themselves and the objects whose names may
        // speak for them (Unreal's UCX_ colliders name their render
        // meshes): the whole scene's shell test over every closed prop
        // is what a tile's own bake does, and would cost far more here
        let (sub, of) = classified_part(scene, &wide);
        let welded = crate::geom::weld::weld_all(&sub);
        let (choices, _) = crate::classify::classify(&sub, &welded, settings);
        let mut flags_of: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
        for (j, &i) in of.iter().enumerate() {
            if !wide.contains(&i) || choices[j].kind != crate::kind::ColliderKind::TriMesh {
                continue;
            }
            let m = sub.instances[j].mesh;
            let flags = flags_of
                .entry(m)
                .or_insert_with(|| crate::collider::tri_mesh::edge_flags(&welded[m]));
            cut_pieces.insert(i, cut(scene, i, size, flags, &choices[j].rule)?);
        }
    }
    // each instance's cell: its body's origin's, else its own centre's;
    // a cut one's pieces, each in its own
    let mut cells: BTreeMap<[i32; 2], Vec<Member>> = BTreeMap::new();
    let mut pieces: Vec<Piece> = Vec::new();
    for (i, inst) in scene.instances.iter().enumerate() {
        if let Some(cut) = cut_pieces.remove(&i) {
            for (cell, piece) in cut {
                cells
                    .entry(cell)
                    .or_default()
                    .push(Member::Piece(pieces.len()));
                pieces.push(piece);
            }
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
    Ok(cells
        .into_iter()
        .map(|(cell, members)| {
            let o = Tile::grid_origin(cell, size);
            (cell, tile_scene(scene, &members, &pieces, DVec3::from(o)))
        })
        .collect())
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
        let i = match member {
            Member::Whole(i) => i,
            Member::Piece(k) => pieces[k].instance,
        };
        let mut inst = scene.instances[i].clone();
        match member {
            Member::Whole(_) => {
                let next = out.meshes.len();
                let m = *mesh_map.entry(inst.mesh).or_insert(next);
                if m == out.meshes.len() {
                    out.meshes.push(scene.meshes[inst.mesh].clone());
                    if let Some(p) = scene.pieces.get(&inst.mesh) {
                        out.pieces.insert(m, p.clone());
                    }
                }
                inst.mesh = m;
            }
            Member::Piece(k) => {
                let p = &pieces[k];
                inst.mesh = out.meshes.len();
                out.meshes.push(p.mesh.clone());
                out.edge_flags.insert(inst.mesh, p.flags.clone());
                out.cut_from.insert(out.instances.len(), p.rule.clone());
            }
        }
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
    use rayon::prelude::*;
    // tiles bake side by side (each its own bake, the same bytes at any
    // thread count), each bake's own steps parallel within it too
    let (tiles, baked): (Vec<Tile>, Vec<Baked>) = split(scene, settings, size)?
        .into_par_iter()
        .map(|(cell, part)| {
            let hash = crate::bake::scene_hash(&part, settings);
            let b = crate::bake::bake_scene_hashed(&part, settings, hash);
            let objects = b.report.instances as u32;
            let bytes = b.bytes.len() as u64;
            (
                tile_entry(cell, size, &part, stem, hash, (objects, bytes)),
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
    let parts = split(&scene, settings, size).map_err(|source| TiledError::Tile {
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
        files: source.files(),
        ..TiledReport::default()
    };
    // each tile: kept if up to date, else baked and written, side by side
    use rayon::prelude::*;
    let done: Vec<Result<(Tile, bool, std::path::PathBuf), TiledError>> = parts
        .par_iter()
        .map(|(cell, part)| {
            let hash = crate::bake::scene_hash(part, settings);
            let file = tile_file(&stem, *cell);
            let path = out_dir.join(&file);
            let kept = old
                .get(cell)
                .filter(|t| !force && t.content_hash == hash && t.file == file)
                .and_then(|t| crate::bake::up_to_date_size(&path, hash).map(|bytes| (t, bytes)));
            let (objects, bytes, fresh) = match kept {
                Some((t, bytes)) => (t.objects, bytes, false),
                None => {
                    let b = crate::bake::bake_scene_hashed(part, settings, hash);
                    write(&path, &b.bytes)?;
                    (b.report.instances as u32, b.bytes.len() as u64, true)
                }
            };
            let entry = tile_entry(*cell, size, part, &stem, hash, (objects, bytes));
            Ok((entry, fresh, path))
        })
        .collect();
    let mut tiles = Vec::with_capacity(parts.len());
    for d in done {
        let (entry, fresh, path) = d?;
        if fresh {
            report.baked += 1;
        } else {
            report.up_to_date += 1;
        }
        report.objects += entry.objects as usize;
        report.bytes += entry.bytes;
        report.archives.push(path);
        tiles.push(entry);
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
