//! Hot reload: a `LevelHandle` swaps in a re-baked archive while readers
//! keep querying, and readers that open the file while it is replaced 200
//! times never see an error or a partial archive.

use glam::Vec3;
use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene, write::write_atomic};
use kiln_runtime::{Filter, Ray};
use kiln_runtime::{Level, LevelHandle};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A level with one closed cube named `crate` at height `y` (a box
/// collider): a ray straight down from y = 100 meets its top at `y + 1`.
fn level_at(y: f32) -> Vec<u8> {
    let mesh = SceneMesh::cuboid("crate", [0.0, y, 0.0], [1.0; 3]);
    bake_scene(&Scene::from_meshes(vec![mesh]), &BakeSettings::default()).bytes
}

fn top_of(level: &Level) -> Option<f32> {
    level
        .raycast(
            &Ray::new(Vec3::new(0.0, 100.0, 0.0), Vec3::NEG_Y, 1000.0),
            &Filter::ALL,
        )
        .map(|h| 100.0 - h.t)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-reload-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn a_handle_swaps_in_the_new_archive_and_old_readers_keep_theirs() {
    let path = tmp("swap.kiln");
    write_atomic(&path, &level_at(0.0)).unwrap();
    let handle = LevelHandle::open(&path).unwrap();
    let old = handle.level();
    assert_eq!(top_of(&old), Some(1.0));
    assert_eq!(old.find_object("crate").map(|o| o.index()), Some(0));
    assert!(!handle.reload().unwrap(), "same bytes: nothing swapped");
    write_atomic(&path, &level_at(5.0)).unwrap();
    assert!(handle.reload().unwrap());
    assert_eq!(top_of(&handle.level()), Some(6.0));
    // the reader that held the old level still sees the old archive
    assert_eq!(top_of(&old), Some(1.0));
    // a broken replacement is refused and the current level stays
    write_atomic(&path, b"not an archive").unwrap();
    let e = handle.reload().unwrap_err().to_string();
    assert!(e.contains("swap.kiln"), "{e}");
    assert_eq!(top_of(&handle.level()), Some(6.0));
    // the name finds the object in every version
    assert_eq!(
        handle.level().find_object("crate").map(|o| o.index()),
        Some(0)
    );
    assert_eq!(handle.level().find_object("nothing"), None);
}

#[test]
fn readers_never_see_a_partial_archive_while_it_is_replaced_200_times() {
    let path = tmp("busy.kiln");
    let versions = [level_at(0.0), level_at(10.0)];
    write_atomic(&path, &versions[0]).unwrap();
    let handle = LevelHandle::open(&path).unwrap();
    let stop = AtomicBool::new(false);
    let (opened, errors, queries) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    std::thread::scope(|s| {
        // two readers open the file afresh in a loop, one queries the handle
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    match Level::open(&path) {
                        Ok(l) => {
                            let top = top_of(&l);
                            assert!(top == Some(1.0) || top == Some(11.0), "{top:?}");
                            opened.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let top = top_of(&handle.level());
                assert!(top == Some(1.0) || top == Some(11.0), "{top:?}");
                queries.fetch_add(1, Ordering::Relaxed);
            }
        });
        for k in 0..200 {
            write_atomic(&path, &versions[(k + 1) % 2]).unwrap();
            handle.reload().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    eprintln!(
        "200 replacements: {} opens and {} handle queries, {} errors",
        opened.load(Ordering::Relaxed),
        queries.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed)
    );
    assert_eq!(errors.load(Ordering::Relaxed), 0);
    assert!(opened.load(Ordering::Relaxed) > 0);
    // an even number of replacements ends on the first version
    assert_eq!(top_of(&handle.level()), Some(1.0));
}
