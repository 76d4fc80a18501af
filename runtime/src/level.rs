//! Opening an archive: map (or read) the file, check the fixed header and the
//! body checksum, then rkyv's checked access plus `kiln_formats::verify`.
//! After that, queries run on the mapped bytes without re-checking.

use kiln_formats::{ArchiveError, ArchivedLevel, HEADER_LEN, Header};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why an archive could not be opened.
#[derive(Debug, Error)]
pub enum OpenError {
    /// The file could not be read or mapped.
    #[error("{}: {error}", path.display())]
    Io {
        /// The archive path.
        path: PathBuf,
        /// The I/O error (part of the message, so not repeated as a source).
        error: std::io::Error,
    },
    /// The file is not a valid archive.
    #[error("{}: {error}", path.display())]
    Invalid {
        /// The archive path (`<memory>` for in-memory archives).
        path: PathBuf,
        /// What is wrong.
        error: ArchiveError,
    },
}

enum Storage {
    Mapped(memmap2::Mmap),
    Owned(rkyv::util::AlignedVec<{ kiln_formats::header::BODY_ALIGN }>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// A validated, immutable baked level. Cheap to share between threads
/// (`&Level` is `Sync`); every query takes `&self`.
pub struct Level {
    storage: Storage,
    header: Header,
}

impl Level {
    /// Memory-maps and validates an archive. Loading does no parsing and no
    /// allocation proportional to the file: the body is used in place.
    ///
    /// The file must not be modified in place while it is open (replacing it
    /// by rename, as `baker` always does, is fine: this mapping keeps the old
    /// file).
    pub fn open(path: impl AsRef<Path>) -> Result<Level, OpenError> {
        let path = path.as_ref();
        let io = |error| OpenError::Io {
            path: path.to_path_buf(),
            error,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only and private to this Level. The
        // one hazard of file mappings, another process truncating or
        // rewriting the file in place while it is mapped, is excluded by the
        // documented contract above (Kiln tools replace archives by atomic
        // rename, which leaves this mapping's inode untouched).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Level::validate(Storage::Mapped(map), path)
    }

    /// Reads an archive fully into memory and validates it (no mapping).
    pub fn read(path: impl AsRef<Path>) -> Result<Level, OpenError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|error| OpenError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Level::from_bytes_named(&bytes, path)
    }

    /// Validates an archive held in memory (copied to aligned storage).
    pub fn from_bytes(bytes: &[u8]) -> Result<Level, OpenError> {
        Level::from_bytes_named(bytes, Path::new("<memory>"))
    }

    fn from_bytes_named(bytes: &[u8], path: &Path) -> Result<Level, OpenError> {
        let mut v = rkyv::util::AlignedVec::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        Level::validate(Storage::Owned(v), path)
    }

    fn validate(storage: Storage, path: &Path) -> Result<Level, OpenError> {
        let header = kiln_formats::access_file(storage.bytes())
            .map(|(h, _)| h)
            .map_err(|error| OpenError::Invalid {
                path: path.to_path_buf(),
                error,
            })?;
        Ok(Level { storage, header })
    }

    /// The archive's fixed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Size of the archive in bytes.
    pub fn byte_len(&self) -> usize {
        self.storage.bytes().len()
    }

    /// The archived level, for inspection tools.
    #[inline]
    pub fn archive(&self) -> &ArchivedLevel {
        let body = &self.storage.bytes()[HEADER_LEN..];
        // SAFETY: `validate` ran rkyv's checked access and our semantic
        // verification on exactly these bytes, which are immutable for the
        // life of `self` (owned buffer, or a read-only mapping under the
        // contract of `Level::open`), and the body is 16-byte aligned (page
        // or AlignedVec start + 64).
        unsafe { rkyv::access_unchecked::<ArchivedLevel>(body) }
    }

    /// The first instance of the object called `name`. Object names are
    /// the identity that survives a re-bake (instance numbers may not).
    pub fn find_object(&self, name: &str) -> Option<u32> {
        self.archive()
            .instance_names
            .iter()
            .position(|n| n.as_str() == name)
            .map(|i| i as u32)
    }

    /// Name of the object behind instance `instance` (empty if out of range).
    pub fn object_name(&self, instance: u32) -> &str {
        self.archive()
            .instance_names
            .get(instance as usize)
            .map_or("", |s| s.as_str())
    }

    /// The level's collision layer names; bit `k` of a layer mask is the
    /// `k`-th (the first is always `"default"`, where objects no rule puts
    /// in a layer go).
    pub fn layer_names(&self) -> impl Iterator<Item = &str> {
        self.archive().layer_names.iter().map(|s| s.as_str())
    }

    /// The mask bit of the layer called `name`, if the level has one (to
    /// build a [`crate::Filter::layers`] mask).
    pub fn layer(&self, name: &str) -> Option<u32> {
        self.layer_names().position(|n| n == name).map(|k| 1 << k)
    }

    /// The layers of instance `instance` as a mask (0 if out of range).
    pub fn object_layers(&self, instance: u32) -> u32 {
        self.archive()
            .instance_layers
            .get(instance as usize)
            .map_or(0, |m| m.to_native())
    }
}

impl std::fmt::Debug for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Level")
            .field("bytes", &self.byte_len())
            .field("header", &self.header)
            .finish()
    }
}
