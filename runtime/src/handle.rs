//! Hot reload: a [`LevelHandle`] re-opens its archive after the file is
//! replaced (the baker always replaces archives by atomic rename) and
//! swaps the new [`Level`] in without blocking readers.
//!
//! Readers take an `Arc<Level>` with [`LevelHandle::level`] and query it
//! as long as they like: the old mapping stays valid after a reload (the
//! old file's inode lives while it is mapped), and it is unmapped when the
//! last reader drops it. Object names are the stable identity across
//! reloads ([`Level::find_object`]); instance numbers may change.

use crate::level::{Level, OpenError};
use arc_swap::ArcSwap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An archive path and the level currently open from it.
pub struct LevelHandle {
    path: PathBuf,
    current: ArcSwap<Level>,
}

impl LevelHandle {
    /// Opens (maps and validates) the archive at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<LevelHandle, OpenError> {
        let path = path.as_ref().to_path_buf();
        let level = Level::open(&path)?;
        Ok(LevelHandle {
            path,
            current: ArcSwap::from_pointee(level),
        })
    }

    /// The level as it is now. Cheap (an atomic load and a reference
    /// count); keep it for the duration of a frame or a batch of queries.
    pub fn level(&self) -> Arc<Level> {
        self.current.load_full()
    }

    /// Re-opens the archive. Returns `Ok(true)` if a different archive was
    /// swapped in, `Ok(false)` if the file holds the same bytes as the
    /// current level (same content hash and checksum). On error (a missing
    /// or invalid file) the current level stays.
    pub fn reload(&self) -> Result<bool, OpenError> {
        let fresh = Level::open(&self.path)?;
        let old = self.current.load();
        let same = fresh.header().content_hash == old.header().content_hash
            && fresh.header().body_hash == old.header().body_hash;
        if same {
            return Ok(false);
        }
        self.current.store(Arc::new(fresh));
        Ok(true)
    }

    /// The archive's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for LevelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelHandle")
            .field("path", &self.path)
            .field("level", &self.current.load())
            .finish()
    }
}
