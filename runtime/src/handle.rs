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
///
/// ```
/// # let bake = |f: &str| kiln_baker::bake_file(f.as_ref(), &Default::default()).unwrap().bytes;
/// # let path = std::env::temp_dir().join("kiln-doc-handle-1.kiln");
/// # std::fs::write(&path, bake("../samples/walk_course.gltf")).unwrap();
/// use kiln_runtime::{Filter, LevelHandle, Ray, Vec3};
/// let handle = LevelHandle::open(&path)?;
/// let down = Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::NEG_Y, 10.0);
/// // each frame: take the level as it is now, query it
/// let level = handle.level();
/// assert!(level.raycast(&down, &Filter::ALL).is_some());
/// // the baker replaces the file (by rename); the next reload swaps it in,
/// // while `level` stays valid for whoever still holds it
/// let fresh = bake("../samples/shape_collection.glb");
/// std::fs::write(path.with_extension("new"), &fresh).unwrap();
/// std::fs::rename(path.with_extension("new"), &path).unwrap();
/// assert!(handle.reload()?);
/// assert_ne!(handle.level().object_count(), level.object_count());
/// assert!(level.find_object("wall").is_some());
/// # Ok::<(), kiln_runtime::OpenError>(())
/// ```
pub struct LevelHandle {
    path: PathBuf,
    current: ArcSwap<Level>,
}

impl LevelHandle {
    /// Opens (maps and validates) the archive at `path`.
    ///
    /// ```
    /// # let bake = |f: &str| kiln_baker::bake_file(f.as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-handle-2.kiln");
    /// # std::fs::write(&path, bake("../samples/walk_course.gltf")).unwrap();
    /// let handle = kiln_runtime::LevelHandle::open(&path)?;
    /// assert!(handle.level().find_object("wall").is_some());
    /// assert!(kiln_runtime::LevelHandle::open("no/such.kiln").is_err());
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
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
    ///
    /// ```
    /// # let bake = |f: &str| kiln_baker::bake_file(f.as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-handle-3.kiln");
    /// # std::fs::write(&path, bake("../samples/walk_course.gltf")).unwrap();
    /// let handle = kiln_runtime::LevelHandle::open(&path)?;
    /// let level = handle.level(); // hold it for a frame
    /// assert!(level.object_count() > 0);
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn level(&self) -> Arc<Level> {
        self.current.load_full()
    }

    /// Re-opens the archive. Returns `Ok(true)` if a different archive was
    /// swapped in, `Ok(false)` if the file holds the same bytes as the
    /// current level (same content hash and checksum). On error (a missing
    /// or invalid file) the current level stays.
    ///
    /// ```
    /// # let bake = |f: &str| kiln_baker::bake_file(f.as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-handle-4.kiln");
    /// # std::fs::write(&path, bake("../samples/walk_course.gltf")).unwrap();
    /// let handle = kiln_runtime::LevelHandle::open(&path)?;
    /// // the same bytes: nothing to swap
    /// assert!(!handle.reload()?);
    /// // a broken file (put in place by rename, never rewritten in place:
    /// // the open level maps the old one) is refused, and the current level stays
    /// std::fs::write(path.with_extension("new"), b"not an archive").unwrap();
    /// std::fs::rename(path.with_extension("new"), &path).unwrap();
    /// assert!(handle.reload().is_err());
    /// assert!(handle.level().find_object("wall").is_some());
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
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
    ///
    /// ```
    /// # let bake = |f: &str| kiln_baker::bake_file(f.as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-handle-5.kiln");
    /// # std::fs::write(&path, bake("../samples/walk_course.gltf")).unwrap();
    /// let handle = kiln_runtime::LevelHandle::open(&path)?;
    /// assert_eq!(handle.path(), path);
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
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
