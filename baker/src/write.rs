//! Atomic archive writes: the bytes go to a temporary file in the target's
//! directory, are flushed to disk, then renamed over the target. A reader
//! that has the old file mapped keeps a valid view (the old inode lives on),
//! and a failed bake never leaves a half-written or clobbered archive.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (temp file + fsync + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "output path has no file name",
        )
    })?;
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    remove_stale(&dir, &prefix);
    let tmp = dir.join(format!("{prefix}{}-{}", std::process::id(), unique()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes temporaries of this output left by a baker that was killed
/// mid-write: those whose process no longer runs (on Linux, no
/// `/proc/<pid>`; elsewhere, only this process's own). A live baker's
/// temporary is never touched.
fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let dead = if cfg!(target_os = "linux") {
            !Path::new(&format!("/proc/{pid}")).exists()
        } else {
            false
        };
        if dead {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_of_dead_bakers_are_removed_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("kiln-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("level.kiln");
        // pid 4194305 is above Linux's pid_max: no such process
        let dead = dir.join(".level.kiln.tmp-4194305-0");
        let live = dir.join(format!(".level.kiln.tmp-{}-99", std::process::id()));
        std::fs::write(&dead, b"half").unwrap();
        std::fs::write(&live, b"busy").unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(dead.exists(), !cfg!(target_os = "linux"));
        assert!(live.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporaries() {
        let dir = std::env::temp_dir().join(format!("kiln-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.kiln");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = std::env::temp_dir().join(format!("kiln-write-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.kiln");
        write_atomic(&p, b"good").unwrap();
        // renaming a file over a directory fails
        let target_dir = dir.join("sub");
        std::fs::create_dir_all(target_dir.join("x")).unwrap();
        assert!(write_atomic(&target_dir, b"bad").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"good");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
