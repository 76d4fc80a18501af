//! Worlds in tiles: a scene split on a grid and baked tile by tile answers
//! as the whole bake does, its manifest lists what each tile holds, and a
//! tile's bytes depend on its own objects alone.

use glam::{DAffine3, DVec3, Vec3};
use kiln_baker::tile::bake_tiled;
use kiln_baker::{BakeSettings, Scene, bake_scene};
use kiln_runtime::{Filter, Level, Ray};
use std::path::PathBuf;

fn walk_course() -> Scene {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/walk_course.gltf");
    kiln_baker::ingest::load(&path).unwrap().scene
}

/// The scene moved by `by` (f64).
fn moved(mut scene: Scene, by: DVec3) -> Scene {
    for i in &mut scene.instances {
        i.transform = DAffine3::from_translation(by) * i.transform;
    }
    scene
}

/// The closest hit over the tiles of a world ray `(origin, dir)` with the
/// origin in f64: each tile asked in its own frame. (t, object name, normal).
fn tiled_hit(tiles: &[(DVec3, Level)], origin: DVec3, dir: Vec3) -> Option<(f32, String, Vec3)> {
    tiles
        .iter()
        .filter_map(|(o, level)| {
            let ray = Ray::new((origin - *o).as_vec3(), dir, 100.0);
            let h = level.raycast(&ray, &Filter::ALL)?;
            Some((
                h.t,
                level.object_name(h.object).unwrap().into_owned(),
                h.normal,
            ))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

#[test]
fn a_tiled_bake_answers_rays_as_the_whole_bake_even_100_km_out() {
    let scene = walk_course();
    let settings = BakeSettings::default();
    let whole = Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap();
    for offset in [DVec3::ZERO, DVec3::new(100_000.0, 0.0, -100_000.0)] {
        let world = bake_tiled(&moved(scene.clone(), offset), &settings, 10.0, "course").unwrap();
        // the manifest checks out and lists every object once
        let manifest = kiln_formats::aligned(&world.manifest_bytes);
        let (_, m) = kiln_formats::world::access_world_file(&manifest).unwrap();
        assert_eq!(m.tiles.len(), world.tiles.len());
        let listed: u32 = m.tiles.iter().map(|t| t.objects.to_native()).sum();
        assert_eq!(listed, whole.object_count());
        let tiles: Vec<(DVec3, Level)> = world
            .manifest
            .tiles
            .iter()
            .zip(&world.tiles)
            .map(|(t, b)| {
                assert_eq!(t.file, format!("course.{}.{}.kiln", t.cell[0], t.cell[1]));
                (DVec3::from(t.origin), Level::from_bytes(&b.bytes).unwrap())
            })
            .collect();
        // at the origin: the four floor tiles' cells
        if offset == DVec3::ZERO {
            let cells: Vec<[i32; 2]> = world.manifest.tiles.iter().map(|t| t.cell).collect();
            assert_eq!(cells, vec![[0, 0], [0, 1], [1, 0], [1, 1]]);
        }
        // each tile's bounds hold its objects, relative to its origin
        for ((_, level), t) in tiles.iter().zip(&world.manifest.tiles) {
            let (lo, hi) = level.bounds().unwrap();
            for a in 0..3 {
                assert!(t.bounds[0][a] <= lo[a] + 1e-4 && hi[a] <= t.bounds[1][a] + 1e-4);
            }
        }
        // random rays from above and from the side, in world coordinates
        let mut rng = kiln_tests::Rng::new(70);
        let mut hits = 0;
        for _ in 0..3000 {
            let from = Vec3::new(
                rng.range(-2.0, 22.0),
                rng.range(0.1, 4.0),
                rng.range(-2.0, 22.0),
            );
            let dir = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 0.3),
                rng.range(-1.0, 1.0),
            )
            .normalize();
            let want = whole
                .raycast(&Ray::new(from, dir, 100.0), &Filter::ALL)
                .map(|h| {
                    (
                        h.t,
                        whole.object_name(h.object).unwrap().into_owned(),
                        h.normal,
                    )
                });
            let got = tiled_hit(&tiles, from.as_dvec3() + offset, dir);
            match (&want, &got) {
                (None, None) => {}
                (Some(w), Some(g)) => {
                    hits += 1;
                    assert!(
                        (w.0 - g.0).abs() < 2e-5 * w.0.max(1.0),
                        "offset {offset}: ray from {from} along {dir}: t {} whole, {} tiled",
                        w.0,
                        g.0
                    );
                    // the same object, unless two meet at that distance
                    assert!(w.1 == g.1 || (w.0 - g.0).abs() < 1e-5, "{w:?} {g:?}");
                    assert!((w.2 - g.2).length() < 1e-4 || w.1 != g.1, "{w:?} {g:?}");
                }
                _ => panic!(
                    "offset {offset}: ray from {from} along {dir}: {want:?} whole, {got:?} tiled"
                ),
            }
        }
        assert!(hits > 1200, "{hits}");
    }
}

#[test]
fn a_tile_s_bytes_depend_on_its_own_objects_alone() {
    let scene = walk_course();
    let settings = BakeSettings::default();
    let first = bake_tiled(&scene, &settings, 10.0, "course").unwrap();
    // the same scene again: the same bytes, manifest and tiles
    let again = bake_tiled(&scene, &settings, 10.0, "course").unwrap();
    assert_eq!(first.manifest_bytes, again.manifest_bytes);
    // the wall (x 16.25, in cell (1, 1)) moved 0.5 m: that tile alone changes
    let mut edited = scene.clone();
    let wall = edited
        .instances
        .iter_mut()
        .find(|i| i.name == "wall")
        .unwrap();
    wall.transform = DAffine3::from_translation(DVec3::new(-0.5, 0.0, 0.0)) * wall.transform;
    let after = bake_tiled(&edited, &settings, 10.0, "course").unwrap();
    assert_ne!(first.manifest_bytes, after.manifest_bytes);
    for ((t, a), b) in first
        .manifest
        .tiles
        .iter()
        .zip(&first.tiles)
        .zip(&after.tiles)
    {
        assert_eq!(a.bytes == b.bytes, t.cell != [1, 1], "cell {:?}", t.cell);
    }
    // a bad tile size is an error, not a panic
    for size in [0.0, -1.0, f64::NAN] {
        assert!(bake_tiled(&scene, &settings, size, "x").is_err());
    }
}

#[test]
fn a_world_baked_to_a_folder_opens_by_its_manifest_and_finds_the_tiles_near_a_point() {
    let dir = std::env::temp_dir().join(format!("kiln-tiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/walk_course.gltf");
    let r = kiln_baker::tile::bake_tiled_to_dir(&src, &dir, 10.0, false, &BakeSettings::default())
        .unwrap();
    assert_eq!((r.tiles, r.baked, r.objects), (4, 4, 14));
    let m = kiln_runtime::WorldManifest::open(dir.join("walk_course.kilnworld")).unwrap();
    assert_eq!(m.tile_size(), 10.0);
    // inside tile (0, 0) far from its borders: that tile alone; at the
    // course's middle: all four; far away: none
    assert_eq!(m.tiles_near(DVec3::new(3.0, 0.0, 3.0), 1.0), vec![0]);
    assert_eq!(m.tiles_near(DVec3::new(10.0, 0.0, 10.0), 0.5).len(), 4);
    assert!(m.tiles_near(DVec3::new(1e5, 0.0, 1e5), 100.0).is_empty());
    // each tile opens, and answers in its own frame
    let whole =
        Level::from_bytes(&bake_scene(&walk_course(), &BakeSettings::default()).bytes).unwrap();
    let down = |level: &Level, at: Vec3| {
        level
            .raycast(&Ray::new(at, Vec3::NEG_Y, 10.0), &Filter::ALL)
            .map(|h| h.t)
    };
    for (k, t) in m.tiles().iter().enumerate() {
        let level = m.open_tile(k).unwrap();
        let centre = DVec3::from(t.origin) + DVec3::new(5.0, 3.0, 5.0);
        let tile_t = down(&level, (centre - DVec3::from(t.origin)).as_vec3());
        assert_eq!(tile_t, down(&whole, centre.as_vec3()), "tile {:?}", t.cell);
    }
    // a tile gone from the folder is an error naming its file
    std::fs::remove_file(dir.join("walk_course.1.1.kiln")).unwrap();
    let e = m.open_tile(3).unwrap_err().to_string();
    assert!(e.contains("walk_course.1.1.kiln"), "{e}");
    // a damaged manifest is refused, naming the file
    let path = dir.join("walk_course.kilnworld");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let e = kiln_runtime::WorldManifest::open(&path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("walk_course.kilnworld") && e.contains("checksum"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).ok();
}
