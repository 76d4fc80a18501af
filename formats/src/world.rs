//! The world manifest: a world too large for one archive is a set of tile
//! archives, each an ordinary level whose vertices are stored relative to
//! its tile's origin, and this small file listing them. A manifest file is
//! `[Header; 64 bytes][rkyv body]` like an archive, under its own magic
//! (`KILNWLD\0`) and version ([`WORLD`]); reading one is
//! [`access_world_file`]: the header, the checksum, rkyv's checked access
//! and [`verify_world`].
//!
//! Tiles sit on a horizontal grid (x and z, glTF's y up): tile `(i, k)`
//! covers `x ∈ [i·s, (i+1)·s)`, `z ∈ [k·s, (k+1)·s)` for the manifest's
//! tile size `s`, and its origin is `(i·s, 0, k·s)` in f64, so positions
//! far from the world's origin keep their precision in the tile's own f32
//! frame. Tiles authored apart (a folder of glTF files, each with its own
//! origin) have a tile size of 0: their cells only name them.

use rkyv::{Archive, Serialize};
use thiserror::Error;

use crate::ArchiveError;
use crate::header::{self, FileKind, HEADER_LEN, Header};

/// A world manifest file.
pub const WORLD: FileKind = FileKind {
    magic: *b"KILNWLD\0",
    version: WORLD_VERSION,
    flags: 0,
    what: "Kiln world manifest",
};

/// Version of the manifest's archived layout (its own, apart from the
/// archives' [`crate::FORMAT_VERSION`]).
pub const WORLD_VERSION: u32 = 1;

/// Most tiles a manifest may list.
pub const MAX_TILES: usize = 1 << 20;

/// Largest origin coordinate (m): a billion kilometres, far past any game
/// world, small enough that f64 keeps micrometres there.
pub const MAX_ORIGIN: f64 = 1e12;

/// The tiles of a world.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct WorldManifest {
    /// Edge of a grid cell (m), or 0 for tiles authored apart.
    pub tile_size: f64,
    /// The tiles, by ascending cell (x, then z), each cell once.
    pub tiles: Vec<Tile>,
}

/// One tile: where it is and which archive holds it.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Tile {
    /// Its grid cell `(i, k)` along x and z.
    pub cell: [i32; 2],
    /// Its origin in the world (f64): the tile archive's coordinates are
    /// relative to it.
    pub origin: [f64; 3],
    /// The box around its objects where they were baked, relative to the
    /// origin (lower corner, then upper).
    pub bounds: [[f32; 3]; 2],
    /// The archive's path relative to the manifest's folder, `/`
    /// separated, with no `..`, no root and no empty part.
    pub file: String,
    /// How many objects the archive holds.
    pub objects: u32,
    /// The archive header's content hash (what its up-to-date check and a
    /// build cache compare).
    pub content_hash: [u8; 16],
    /// The archive's size in bytes.
    pub bytes: u64,
}

impl Tile {
    /// The origin of grid cell `cell` for a tile size `size`.
    pub fn grid_origin(cell: [i32; 2], size: f64) -> [f64; 3] {
        [f64::from(cell[0]) * size, 0.0, f64::from(cell[1]) * size]
    }
}

impl ArchivedTile {
    /// The tile as a plain value.
    pub fn to_tile(&self) -> Tile {
        Tile {
            cell: self.cell.map(|c| c.to_native()),
            origin: self.origin.map(|x| x.to_native()),
            bounds: self.bounds.map(|c| c.map(|x| x.to_native())),
            file: self.file.as_str().to_owned(),
            objects: self.objects.to_native(),
            content_hash: self.content_hash,
            bytes: self.bytes.to_native(),
        }
    }
}

/// Why a manifest's content was rejected.
#[derive(Debug, Error, PartialEq)]
pub enum ManifestError {
    /// The tile size is negative or not finite.
    #[error("tile size {0} is not finite and non-negative")]
    TileSize(f64),
    /// More tiles than [`MAX_TILES`].
    #[error("{0} tiles (at most {MAX_TILES})")]
    TooMany(usize),
    /// A tile breaks an invariant.
    #[error("tile {tile}: {problem}")]
    Tile {
        /// Index of the tile.
        tile: usize,
        /// What is wrong.
        problem: String,
    },
}

/// Whether `file` is a path a manifest may name: relative, `/` separated,
/// no `..` or `.` part, no empty part, no backslash, colon or NUL, at most
/// 1,024 bytes.
pub fn safe_tile_path(file: &str) -> bool {
    !file.is_empty()
        && file.len() <= 1024
        && !file.contains(['\\', ':', '\0'])
        && file
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != ".")
}

/// Checks a manifest's invariants: a finite, non-negative tile size;
/// tiles by strictly ascending cell; finite origins within
/// [`MAX_ORIGIN`], on the grid when the tile size is not 0; finite,
/// ordered bounds; safe, distinct archive paths ([`safe_tile_path`]).
pub fn verify_world(world: &ArchivedWorldManifest) -> Result<(), ManifestError> {
    let size = world.tile_size.to_native();
    if !(size.is_finite() && size >= 0.0) {
        return Err(ManifestError::TileSize(size));
    }
    if world.tiles.len() > MAX_TILES {
        return Err(ManifestError::TooMany(world.tiles.len()));
    }
    let mut files: Vec<&str> = Vec::with_capacity(world.tiles.len());
    let mut last: Option<[i32; 2]> = None;
    for (k, t) in world.tiles.iter().enumerate() {
        let bad = |problem: String| ManifestError::Tile { tile: k, problem };
        let cell = t.cell.map(|c| c.to_native());
        if last.is_some_and(|l| (l[0], l[1]) >= (cell[0], cell[1])) {
            return Err(bad(format!(
                "cell {cell:?} after {last:?}: cells ascend, each once"
            )));
        }
        last = Some(cell);
        let origin = t.origin.map(|x| x.to_native());
        if !origin
            .iter()
            .all(|x| x.is_finite() && x.abs() <= MAX_ORIGIN)
        {
            return Err(bad(format!(
                "origin {origin:?} is not finite within {MAX_ORIGIN} m"
            )));
        }
        if size > 0.0 && origin != Tile::grid_origin(cell, size) {
            return Err(bad(format!(
                "origin {origin:?} is not cell {cell:?}'s on a {size} m grid"
            )));
        }
        let [lo, hi] = t.bounds.map(|c| c.map(|x| x.to_native()));
        if !(0..3).all(|a| lo[a].is_finite() && hi[a].is_finite() && lo[a] <= hi[a]) {
            return Err(bad(format!(
                "bounds {lo:?} .. {hi:?} are not finite and ordered"
            )));
        }
        let file = t.file.as_str();
        if !safe_tile_path(file) {
            return Err(bad(format!(
                "archive path {file:?} is not a relative path inside the manifest's folder"
            )));
        }
        files.push(file);
    }
    files.sort_unstable();
    if let Some(w) = files.windows(2).find(|w| w[0] == w[1]) {
        return Err(ManifestError::Tile {
            tile: world
                .tiles
                .iter()
                .rposition(|t| t.file.as_str() == w[0])
                .unwrap_or(0),
            problem: format!("archive path {:?} is named twice", w[0]),
        });
    }
    Ok(())
}

/// Serialises a manifest into a whole file (header + body); deterministic.
/// `content_hash` should cover the tiles' own (the baker hashes their
/// content hashes in order).
pub fn encode_world(
    world: &WorldManifest,
    content_hash: [u8; 16],
    baker_version: [u16; 3],
) -> Vec<u8> {
    let body = rkyv::to_bytes::<rkyv::rancor::Error>(world)
        .expect("serialising plain vectors into memory cannot fail");
    let h = Header {
        format_version: WORLD_VERSION,
        flags: 0,
        baker_version,
        content_hash,
        body_len: body.len() as u64,
        body_hash: header::body_hash(&body),
    };
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&h.to_bytes_of(&WORLD));
    out.extend_from_slice(&body);
    out
}

/// Parses a whole manifest file's header, checks its checksum and
/// validates its body. The file must start at a 16-byte aligned address
/// ([`crate::aligned`] copies it there).
pub fn access_world_file(file: &[u8]) -> Result<(Header, &ArchivedWorldManifest), ArchiveError> {
    let header = Header::parse_of(file, &WORLD)?;
    let body = &file[HEADER_LEN..];
    header.check_body(body)?;
    if !(body.as_ptr() as usize).is_multiple_of(header::BODY_ALIGN) {
        return Err(ArchiveError::Misaligned {
            align: header::BODY_ALIGN,
        });
    }
    let world = rkyv::access::<ArchivedWorldManifest, rkyv::rancor::Error>(body)
        .map_err(|e| ArchiveError::Structure(e.to_string()))?;
    verify_world(world)?;
    Ok((header, world))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(cell: [i32; 2], file: &str) -> Tile {
        Tile {
            cell,
            origin: Tile::grid_origin(cell, 100.0),
            bounds: [[0.0; 3], [100.0, 5.0, 100.0]],
            file: file.into(),
            objects: 3,
            content_hash: [1; 16],
            bytes: 1000,
        }
    }

    fn world() -> WorldManifest {
        WorldManifest {
            tile_size: 100.0,
            tiles: vec![tile([-1, 0], "t/a.kiln"), tile([0, 0], "t/b.kiln")],
        }
    }

    fn check(w: &WorldManifest) -> Result<(), ArchiveError> {
        let file = encode_world(w, [9; 16], [0, 3, 0]);
        let bytes = crate::aligned(&file);
        access_world_file(&bytes).map(|_| ())
    }

    #[test]
    fn a_manifest_round_trips_and_says_what_it_is() {
        let w = world();
        let file = encode_world(&w, [9; 16], [0, 3, 0]);
        let bytes = crate::aligned(&file);
        let (h, back) = access_world_file(&bytes).unwrap();
        assert_eq!(h.content_hash, [9; 16]);
        assert_eq!(back.tiles.len(), 2);
        assert_eq!(back.tiles[0].origin[0].to_native(), -100.0);
        assert_eq!(back.tiles[1].file.as_str(), "t/b.kiln");
        // the same manifest, the same bytes
        assert_eq!(file, encode_world(&w, [9; 16], [0, 3, 0]));
        // an archive is not a manifest, nor the other way round
        let e = crate::check_file(&file).unwrap_err().to_string();
        assert!(e.contains("not a Kiln archive"), "{e}");
        let mut other = file.clone();
        other[8] = 7;
        let Err(e) = access_world_file(&crate::aligned(&other)) else {
            panic!("another version was read");
        };
        let e = e.to_string();
        assert!(e.contains("Kiln world manifest format version 7"), "{e}");
    }

    #[test]
    fn hostile_manifests_are_rejected_with_their_reason() {
        type Edit = Box<dyn Fn(&mut WorldManifest)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|w| w.tile_size = -1.0), "tile size -1"),
            (Box::new(|w| w.tile_size = f64::NAN), "tile size NaN"),
            (Box::new(|w| w.tiles.swap(0, 1)), "cells ascend"),
            (
                Box::new(|w| w.tiles[1].cell = [-1, 0]),
                "cells ascend, each once",
            ),
            (
                Box::new(|w| w.tiles[0].origin[1] = f64::INFINITY),
                "is not finite",
            ),
            (Box::new(|w| w.tiles[0].origin[0] = 3.0), "on a 100 m grid"),
            (
                Box::new(|w| w.tiles[0].bounds[0][2] = 200.0),
                "not finite and ordered",
            ),
            (
                Box::new(|w| w.tiles[0].file = "../x.kiln".into()),
                "not a relative path",
            ),
            (
                Box::new(|w| w.tiles[0].file = "/etc/x".into()),
                "not a relative path",
            ),
            (
                Box::new(|w| w.tiles[0].file = "a\\b".into()),
                "not a relative path",
            ),
            (
                Box::new(|w| w.tiles[0].file = "".into()),
                "not a relative path",
            ),
            (
                Box::new(|w| w.tiles[0].file = "t/b.kiln".into()),
                "named twice",
            ),
        ];
        check(&world()).unwrap();
        for (edit, want) in cases {
            let mut w = world();
            edit(&mut w);
            let e = check(&w).expect_err(want).to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        // tiles authored apart: any finite origin
        let mut w = world();
        w.tile_size = 0.0;
        w.tiles[0].origin = [12345.5, -3.0, 7.25];
        check(&w).unwrap();
    }

    #[test]
    fn truncated_or_flipped_manifests_are_errors_not_panics() {
        let file = encode_world(&world(), [9; 16], [0, 3, 0]);
        for cut in [0, 10, HEADER_LEN, file.len() - 1] {
            assert!(access_world_file(&crate::aligned(&file[..cut])).is_err());
        }
        for i in (0..file.len()).step_by(7) {
            let mut bad = file.clone();
            bad[i] ^= 0x55;
            // any answer but a panic; a flip the checksum sees is an error
            if i >= HEADER_LEN {
                assert!(
                    access_world_file(&crate::aligned(&bad)).is_err(),
                    "byte {i}"
                );
            } else {
                let _ = access_world_file(&crate::aligned(&bad));
            }
        }
    }
}
