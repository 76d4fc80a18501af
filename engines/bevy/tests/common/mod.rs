//! What the headless test programs share: a fresh assets folder, the
//! samples baked, and updating an app until something holds.

#![allow(dead_code)] // each test program uses its own share of these

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::app::App;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder with an empty `assets/` for one test.
pub fn assets(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-bevy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    dir
}

/// `source` (relative to the repository) baked as an archive's bytes.
pub fn bake(source: &str) -> Vec<u8> {
    kiln_baker::bake_file(&root().join(source), &Default::default())
        .expect("the source bakes")
        .bytes
}

/// Updates `app` until `done` says so (at most 30 s).
pub fn until(app: &mut App, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        app.update();
        if done(app) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("{what}: not within 30 s");
}

/// `source` (relative to the repository) with `edit` applied to its glTF
/// JSON, written into `dir` as `name.gltf` and baked as an archive's bytes.
pub fn bake_edited(
    dir: &Path,
    source: &str,
    name: &str,
    edit: impl Fn(&mut serde_json::Value),
) -> Vec<u8> {
    let mut gltf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join(source)).unwrap()).unwrap();
    edit(&mut gltf);
    let path = dir.join(format!("{name}.gltf"));
    std::fs::write(&path, serde_json::to_vec(&gltf).unwrap()).unwrap();
    kiln_baker::bake_file(&path, &Default::default())
        .expect("the edited source bakes")
        .bytes
}
