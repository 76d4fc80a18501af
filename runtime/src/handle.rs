//! Hot reload: a [`LevelHandle`] re-reads its archive after the file is
//! replaced and swaps the new [`Level`] in without blocking readers.
//!
//! A handle reads its archive into memory ([`Level::read`]) rather than
//! mapping it: a file being reloaded is one that changes, and a tool that
//! rewrites it in place (`cp new.kiln live.kiln` truncates and rewrites the
//! same file) would pull the pages from under a mapping, which the kernel
//! answers with SIGBUS. Readers take an `Arc<Level>` with
//! [`LevelHandle::level`] and query it as long as they like, whatever
//! happens to the file; it is freed when the last reader drops it. Object
//! names are the stable identity across reloads ([`Level::find_object`]);
//! instance numbers may change.

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
    /// Opens (reads and validates) the archive at `path`.
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
        let level = Level::read(&path)?;
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

    /// Re-reads the archive. Returns `Ok(true)` if a different archive was
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
    /// // a broken file (here written over the old one in place) is refused,
    /// // and the current level stays
    /// std::fs::write(&path, b"not an archive").unwrap();
    /// assert!(handle.reload().is_err());
    /// assert!(handle.level().find_object("wall").is_some());
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn reload(&self) -> Result<bool, OpenError> {
        let fresh = Level::read(&self.path)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Filter, Ray, Vec3};

    /// An archive rewritten in place (truncated, then written: what `cp`
    /// does) while a level read from it is held: the level still answers,
    /// and a reload brings the new one. A mapping would take SIGBUS here.
    #[test]
    fn an_archive_rewritten_in_place_does_not_pull_the_level_away() {
        let bake = |f: &str| {
            kiln_baker::bake_file(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(f),
                &Default::default(),
            )
            .unwrap()
            .bytes
        };
        let (first, other) = (
            bake("samples/walk_course.gltf"),
            bake("samples/shape_collection.glb"),
        );
        let path = std::env::temp_dir().join(format!("kiln-in-place-{}.kiln", std::process::id()));
        std::fs::write(&path, &first).unwrap();
        let handle = LevelHandle::open(&path).unwrap();
        let held = handle.level();
        // in place: the same inode, cut to 100 bytes, far shorter than the
        // pages the level reads
        std::fs::write(&path, &first[..100]).unwrap();
        let mut hits = 0;
        for x in 0..200 {
            let ray = Ray::new(Vec3::new(x as f32 * 0.2, 5.0, 5.0), Vec3::NEG_Y, 10.0);
            hits += usize::from(held.raycast(&ray, &Filter::ALL).is_some());
        }
        assert!(hits > 100, "{hits}");
        // the cut file is refused, the level stays; a whole one comes in
        assert!(handle.reload().is_err());
        assert_eq!(handle.level().byte_len(), first.len());
        std::fs::write(&path, &other).unwrap();
        assert!(handle.reload().unwrap());
        assert_eq!(handle.level().byte_len(), other.len());
        std::fs::remove_file(&path).ok();
    }
}
