//! Worlds in tiles: a scene split on a grid and baked tile by tile answers
//! as the whole bake does, its manifest lists what each tile holds, and a
//! tile's bytes depend on its own objects alone.

use glam::{DAffine3, DVec3, Vec3};
use kiln_baker::tile::bake_tiled;
use kiln_baker::{BakeSettings, Scene, bake_scene};
use kiln_runtime::character::Character;
use kiln_runtime::{Filter, Level, ObjectId, Pose, Quat, QueryShape, Ray, ShapeCast, World};
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

/// A world of every tile of `scene` cut at `size` m, mounted at the
/// tiles' origins, its f32 frame's zero at `origin`.
fn mounted(scene: &Scene, settings: &BakeSettings, size: f64, origin: DVec3) -> World {
    let baked = bake_tiled(scene, settings, size, "t").unwrap();
    let mut world = World::tiled(origin).unwrap();
    for (t, b) in baked.manifest.tiles.iter().zip(&baked.tiles) {
        let level = Level::from_bytes(&b.bytes).unwrap();
        world.mount(level, DVec3::from(t.origin)).unwrap();
    }
    world
}

/// The name of what an answer met, whichever side answered.
fn name(space: &dyn Fn(ObjectId) -> Option<String>, id: ObjectId) -> String {
    space(id).unwrap_or_else(|| panic!("{id} has no name"))
}

/// Counts of the answers [`same_answers`] compared: rays that hit,
/// overlap contacts, casts that hit, solids holding a point.
#[derive(Debug, Default)]
struct Compared {
    rays: usize,
    touches: usize,
    casts: usize,
    inside: usize,
}

/// Asks `whole` (a level baked whole) and `world` (its tiles mounted)
/// `n` random queries of every kind from points `at` gives — rays, ray
/// yes/no, overlaps and yes/no of a sphere, a box and a capsule, casts of
/// them, points — and asserts the same answers: what was met (by name),
/// `t`, point, normal and depth.
fn same_answers(
    whole: &Level,
    world: &World,
    seed: u64,
    n: usize,
    at: impl Fn(&mut kiln_tests::Rng) -> Vec3,
) -> Compared {
    let whole_name = |id: ObjectId| whole.object_name(id).map(|n| n.into_owned());
    let world_name = |id: ObjectId| world.object_name(id).map(|n| n.into_owned());
    let mut rng = kiln_tests::Rng::new(seed);
    let mut c = Compared::default();
    for i in 0..n {
        let from = at(&mut rng);
        let dir = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 0.3),
            rng.range(-1.0, 1.0),
        )
        .normalize();
        // rays
        let ray = Ray::new(from, dir, 30.0);
        let (w, g) = (
            whole.raycast(&ray, &Filter::ALL),
            world.raycast(&ray, &Filter::ALL),
        );
        assert_eq!(w.is_some(), g.is_some(), "ray {ray:?}: {w:?} {g:?}");
        assert_eq!(
            whole.raycast_any(&ray, &Filter::ALL),
            world.raycast_any(&ray, &Filter::ALL)
        );
        if let (Some(w), Some(g)) = (w, g) {
            c.rays += 1;
            assert!(g.object.tile().is_some());
            assert!(
                (w.t - g.t).abs() < 2e-5 * w.t.max(1.0),
                "{ray:?}: {w:?} {g:?}"
            );
            assert!((w.point - g.point).length() < 1e-4, "{ray:?}: {w:?} {g:?}");
            if name(&whole_name, w.object) == name(&world_name, g.object) {
                assert!((w.normal - g.normal).length() < 1e-4, "{w:?} {g:?}");
                assert_eq!(w.front_face, g.front_face);
            }
        }
        // overlaps of a sphere, a box and a capsule
        let turn = Quat::from_rotation_y(rng.range(0.0, 3.0)) * Quat::from_rotation_x(0.3);
        let shapes = [
            QueryShape::Sphere { radius: 0.4 },
            QueryShape::Cuboid {
                half: Vec3::new(0.5, 0.3, 0.4),
            },
            QueryShape::Capsule {
                half_height: 0.5,
                radius: 0.3,
            },
        ];
        let shape = shapes[i % 3];
        let pose = Pose::new(turn, from);
        let mut w = whole.overlap(&shape, &pose, &Filter::ALL);
        let mut g = world.overlap(&shape, &pose, &Filter::ALL);
        assert_eq!(
            whole.overlap_any(&shape, &pose, &Filter::ALL),
            world.overlap_any(&shape, &pose, &Filter::ALL)
        );
        // by name: a mesh cut into pieces answers once, as the whole does
        w.sort_by_key(|o| name(&whole_name, o.object));
        g.sort_by_key(|o| name(&world_name, o.object));
        let names = |v: &[kiln_runtime::ShapeOverlap], n: &dyn Fn(ObjectId) -> Option<String>| {
            v.iter().map(|o| name(n, o.object)).collect::<Vec<_>>()
        };
        assert_eq!(
            names(&w, &whole_name),
            names(&g, &world_name),
            "{shape:?} at {from}"
        );
        for (a, b) in w.iter().zip(&g) {
            c.touches += 1;
            assert!(
                (a.depth - b.depth).abs() < 1e-4,
                "{shape:?} at {from}: {a:?} {b:?}"
            );
            if i % 3 == 0 {
                // a sphere's contact is its centre's closest point
                assert!((a.point - b.point).length() < 1e-4, "{a:?} {b:?}");
                assert!((a.normal - b.normal).length() < 1e-3, "{a:?} {b:?}");
            }
        }
        // casts of the same shape along the ray's direction
        let cast = ShapeCast::new(shape, pose, dir, 5.0);
        let (w, g) = (
            whole.cast(&cast, &Filter::ALL),
            world.cast(&cast, &Filter::ALL),
        );
        assert_eq!(w.is_some(), g.is_some(), "{cast:?}: {w:?} {g:?}");
        if let (Some(w), Some(g)) = (w, g) {
            c.casts += 1;
            assert!((w.t - g.t).abs() < 1e-4, "{cast:?}: {w:?} {g:?}");
            if name(&whole_name, w.object) == name(&world_name, g.object) && w.t > 0.0 {
                assert!(
                    (w.normal - g.normal).length() < 1e-3,
                    "{cast:?}: {w:?} {g:?}"
                );
            }
        }
        // points
        let mut w: Vec<String> = whole
            .contains_point(from, &Filter::ALL)
            .into_iter()
            .map(|o| name(&whole_name, o))
            .collect();
        let mut g: Vec<String> = world
            .contains_point(from, &Filter::ALL)
            .into_iter()
            .map(|o| name(&world_name, o))
            .collect();
        w.sort();
        g.sort();
        g.dedup();
        assert_eq!(w, g, "point {from}");
        assert_eq!(
            whole.contains_point_any(from, &Filter::ALL),
            world.contains_point_any(from, &Filter::ALL)
        );
        c.inside += w.len();
    }
    c
}

/// Every query kind near the course's tile borders (x or z within 1.5 m
/// of 10), asked of the whole bake and of the world of its tiles mounted
/// at their origins: the same answers, at the origin and 100 km out (the
/// world's origin there, the floating origin a game keeps near its focus).
#[test]
fn a_world_of_mounted_tiles_answers_every_query_as_the_whole_bake() {
    let scene = walk_course();
    let settings = BakeSettings::default();
    let whole = Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap();
    for offset in [DVec3::ZERO, DVec3::new(100_000.0, 0.0, -100_000.0)] {
        let world = mounted(&moved(scene.clone(), offset), &settings, 10.0, offset);
        assert_eq!(world.tiles().count(), 4);
        let c = same_answers(&whole, &world, 7070, 1500, |rng| {
            let mut p = Vec3::new(
                rng.range(-1.0, 21.0),
                rng.range(0.05, 3.0),
                rng.range(-1.0, 21.0),
            );
            if rng.range(0.0, 1.0) < 0.5 {
                p.x = 10.0 + rng.range(-1.5, 1.5);
            } else {
                p.z = 10.0 + rng.range(-1.5, 1.5);
            }
            p
        });
        assert!(
            c.rays > 600 && c.touches > 300 && c.casts > 500 && c.inside > 20,
            "{c:?}"
        );
    }
}

/// Walks a capsule from `start` by `walk` a step (and a constant fall)
/// for `steps` steps on the whole bake and on the world of its tiles, side
/// by side: the same position (to 1e-4 m) and ground kind at every step;
/// `each` sees every step's world move. Returns how many steps crossed a
/// border of the `size` m grid.
fn same_walk(
    whole: &Level,
    world: &World,
    (start, walk): (Vec3, Vec3),
    steps: usize,
    size: f32,
    mut each: impl FnMut(usize, Vec3, &kiln_runtime::character::Move),
) -> usize {
    let player = Character::capsule(0.3, 0.6);
    let cell = |p: Vec3| ((p.x / size).floor(), (p.z / size).floor());
    let (mut a, mut b) = (start, start);
    let mut crossed = 0;
    for step in 0..steps {
        let motion = walk + Vec3::new(0.0, -0.1, 0.0);
        let ma = player.move_and_slide(whole, a, motion, &Filter::ALL);
        let mb = player.move_and_slide(world, b, motion, &Filter::ALL);
        assert!(
            (ma.position - mb.position).length() < 1e-4,
            "step {step} from {start}: {} whole, {} tiled",
            ma.position,
            mb.position
        );
        assert_eq!(
            std::mem::discriminant(&ma.ground),
            std::mem::discriminant(&mb.ground),
            "step {step} from {start}: {:?} {:?}",
            ma.ground,
            mb.ground
        );
        each(step, b, &mb);
        crossed += usize::from(cell(a) != cell(ma.position));
        (a, b) = (ma.position, mb.position);
    }
    crossed
}

/// A character walks across the course's tile borders (up the ramp that
/// crosses z = 10, along the wall that does too) in the world of tiles as
/// in the whole bake: the same path, step by step, at the origin and 100
/// km out.
#[test]
fn a_character_crosses_tile_borders_on_the_whole_bake_s_path() {
    let scene = walk_course();
    let settings = BakeSettings::default();
    let whole = Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap();
    for offset in [DVec3::ZERO, DVec3::new(-100_000.0, 0.0, 100_000.0)] {
        let world = mounted(&moved(scene.clone(), offset), &settings, 10.0, offset);
        for walk in [
            (Vec3::new(2.0, 0.9, 9.0), Vec3::new(0.05, 0.0, 0.0)),
            (Vec3::new(8.0, 0.9, 12.0), Vec3::new(0.0, 0.0, -0.04)),
            (Vec3::new(15.0, 0.9, 7.0), Vec3::new(0.02, 0.0, 0.05)),
            (Vec3::new(9.0, 0.9, 9.5), Vec3::new(0.03, 0.0, 0.03)),
        ] {
            let crossed = same_walk(&whole, &world, walk, 240, 10.0, |_, _, _| {});
            assert!(crossed >= 1, "the walk from {} crossed no border", walk.0);
        }
    }
}

/// Filters and layers over tiles: a skipped tile object is skipped, a
/// tile's own layer names join the world's table (whatever their order in
/// the tile) and masks read in it, movers of a tile are bodies under tile
/// ids, and unmounting takes a tile's objects away.
#[test]
fn tiles_keep_filters_layers_movers_and_ids() {
    use kiln_baker::config::{Overrides, Rule};
    let rule = |pattern: &str, layer: &str| Rule {
        pattern: pattern.into(),
        collider: None,
        layer: Some(layer.into()),
        motion: None,
        trigger: None,
        settings: Overrides::default(),
    };
    let mut settings = BakeSettings::default();
    settings.rules = vec![rule("wall", "walls"), rule("floor_*", "floors")];
    let world = mounted(&walk_course(), &settings, 10.0, DVec3::ZERO);
    let names: Vec<&str> = world.layer_names().collect();
    let bit = |n: &str| 1u32 << names.iter().position(|m| *m == n).unwrap();
    // toward the wall (x 16.25) from the floor's middle
    let ray = Ray::new(Vec3::new(12.0, 1.0, 10.5), Vec3::X, 20.0);
    let hit = world.raycast(&ray, &Filter::ALL).unwrap();
    assert_eq!(world.object_name(hit.object).as_deref(), Some("wall"));
    assert_eq!(world.object_layers(hit.object), Some(bit("walls")));
    assert!(
        world
            .raycast(&ray, &Filter::ALL.layers(bit("floors")))
            .is_none()
    );
    assert_eq!(
        world
            .raycast(&ray, &Filter::ALL.layers(bit("walls")))
            .map(|h| h.object),
        Some(hit.object)
    );
    let skip = [hit.object];
    assert!(world.raycast(&ray, &Filter::skip(&skip)).is_none());
    let not_wall = |o: ObjectId| o != hit.object;
    assert!(world.raycast(&ray, &Filter::ALL.keep(&not_wall)).is_none());
    // down onto a floor: in the floors layer, and never the default one
    let down = Ray::new(Vec3::new(12.0, 1.0, 18.0), Vec3::NEG_Y, 5.0);
    let floor = world
        .raycast(&down, &Filter::ALL.layers(bit("floors")))
        .unwrap();
    assert_eq!(world.object_layers(floor.object), Some(bit("floors")));
    assert!(
        world
            .raycast(&down, &Filter::ALL.layers(bit("default")))
            .is_none()
    );
    // a tile's static object is not a body: it neither moves nor leaves
    let mut world = world;
    assert!(world.set_pose(hit.object, Pose::IDENTITY).is_err());
    assert!(world.remove(hit.object).is_err());
    assert_eq!(world.find_object("wall"), Some(hit.object));
    // unmounted, its tile's objects are gone, and its id names nothing
    let tile = hit.object.tile().unwrap();
    world.unmount(tile).unwrap();
    assert!(world.object_name(hit.object).is_none());
    assert!(
        world
            .raycast(&ray, &Filter::ALL)
            .is_none_or(|h| h.object != hit.object)
    );
    assert!(world.unmount(tile).is_err());
    assert!(world.find_object("wall").is_none());

    // the bodies sample: the gate's boxes (kinematic) are movers of the
    // tile that holds them, bodies under that tile's ids
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/bodies.gltf");
    let scene = kiln_baker::ingest::load(&path).unwrap().scene;
    let far = DVec3::new(3000.0, 0.0, 4000.0);
    let mut world = mounted(&moved(scene, far), &BakeSettings::default(), 8.0, far);
    let movers: Vec<ObjectId> = world.bodies().collect();
    assert!(!movers.is_empty());
    assert!(movers.iter().all(|o| o.tile().is_some() && !o.is_body()));
    let gate = movers[0];
    let pose = world.pose(gate).unwrap();
    let lifted = Pose::new(pose.rotation, pose.translation + Vec3::new(0.0, 10.0, 0.0));
    world.set_pose(gate, lifted).unwrap();
    assert_eq!(world.pose(gate), Some(lifted));
    // moving the origin keeps every mover where it is in the world
    let before = world.to_global(world.pose(gate).unwrap().translation);
    let shift = world.set_origin(far + DVec3::new(500.0, 0.0, 0.0)).unwrap();
    assert_eq!(shift, Vec3::new(-500.0, 0.0, 0.0));
    let after = world.to_global(world.pose(gate).unwrap().translation);
    assert!((before - after).length() < 1e-3, "{before} {after}");
    // and the bodies' tree moved with them: a ray down through it meets it
    let above = world.pose(gate).unwrap().translation + Vec3::new(0.0, 20.0, 0.0);
    let hit = world
        .raycast(&Ray::new(above, Vec3::NEG_Y, 40.0), &Filter::ALL)
        .unwrap();
    assert_eq!(hit.object, gate);
    // its tile unmounted, the gate leaves the bodies
    world.unmount(gate.tile().unwrap()).unwrap();
    assert!(world.pose(gate).is_none());
    // a world with its own level keeps its origin
    let mut own =
        World::new(Level::from_bytes(&bake_scene(&walk_course(), &settings).bytes).unwrap());
    assert!(own.set_origin(DVec3::X).is_err());
    assert!(World::tiled(DVec3::new(f64::NAN, 0.0, 0.0)).is_err());
}

/// A streamer keeps the tiles near a walking character mounted: the walk
/// takes the whole bake's path, every tile within the radius is mounted
/// when asked, none past the band stays, and a tile whose archive is gone
/// is reported, naming its file, without stopping the rest.
#[test]
fn a_streamer_keeps_the_tiles_around_a_walking_character_mounted() {
    use kiln_runtime::{Streamer, WorldManifest};
    let dir = std::env::temp_dir().join(format!("kiln-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/walk_course.gltf");
    let settings = BakeSettings::default();
    kiln_baker::tile::bake_tiled_to_dir(&src, &dir, 5.0, false, &settings).unwrap();
    let whole = Level::from_bytes(&bake_scene(&walk_course(), &settings).bytes).unwrap();
    let manifest = WorldManifest::open(dir.join("walk_course.kilnworld")).unwrap();
    assert!(manifest.tiles().len() >= 6, "{}", manifest.tiles().len());
    let (radius, ahead) = (3.0, 2.0);
    let mut streamer = Streamer::new(manifest.clone(), radius).ahead(ahead);
    let mut world = World::tiled(DVec3::ZERO).unwrap();
    let player = Character::capsule(0.3, 0.6);
    let (mut a, mut b) = (Vec3::new(1.0, 0.9, 1.0), Vec3::new(1.0, 0.9, 1.0));
    let (mut mounts, mut drops) = (0, 0);
    for step in 0..300 {
        let focus = b.as_dvec3();
        let report = streamer.update_blocking(&mut world, &[focus]);
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        mounts += report.mounted.len();
        drops += report.dropped.len();
        // every tile within the radius is mounted, none past the band
        let mounted: Vec<usize> = streamer.mounted().map(|(k, _)| k).collect();
        for k in manifest.tiles_near(focus, radius) {
            assert!(mounted.contains(&k), "step {step}: tile {k} not mounted");
        }
        let band = manifest.tiles_near(focus, radius + ahead);
        assert!(mounted.iter().all(|k| band.contains(k)), "step {step}");
        assert_eq!(world.tiles().count(), mounted.len());
        let motion = Vec3::new(0.06, -0.1, 0.05);
        let ma = player.move_and_slide(&whole, a, motion, &Filter::ALL);
        let mb = player.move_and_slide(&world, b, motion, &Filter::ALL);
        assert!(
            (ma.position - mb.position).length() < 1e-4,
            "step {step}: {} whole, {} streamed",
            ma.position,
            mb.position
        );
        (a, b) = (ma.position, mb.position);
    }
    assert!(
        mounts >= 6 && drops >= 3,
        "{mounts} mounted, {drops} dropped"
    );
    // a background update mounts what it has loaded, never waiting
    let mut quick = Streamer::new(manifest.clone(), radius);
    let mut world = World::tiled(DVec3::ZERO).unwrap();
    let target = DVec3::new(10.0, 0.0, 10.0);
    let want = manifest.tiles_near(target, radius).len();
    let mut frames = 0;
    while world.tiles().count() < want {
        quick.update(&mut world, &[target]);
        frames += 1;
        assert!(frames < 100_000, "the loader never answered");
        std::thread::yield_now();
    }
    // a tile gone from the folder fails, naming its file; the rest mount
    let gone = &manifest.tiles()[manifest.tiles_near(DVec3::new(17.0, 0.0, 17.0), 0.0)[0]].file;
    std::fs::remove_file(dir.join(gone)).unwrap();
    let mut world = World::tiled(DVec3::ZERO).unwrap();
    let mut streamer = Streamer::new(manifest.clone(), 4.0);
    let report = streamer.update_blocking(&mut world, &[DVec3::new(17.0, 0.0, 17.0)]);
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(report.failed[0].1.to_string().contains(gone.as_str()));
    assert!(!report.mounted.is_empty());
    // tried once, not again every frame while it stays near
    let report = streamer.update_blocking(&mut world, &[DVec3::new(17.0, 0.0, 17.0)]);
    assert!(report.failed.is_empty() && report.mounted.is_empty());
    std::fs::remove_dir_all(dir).ok();
}

/// A generated terrain (64 m, flat then hilly, with crates over it) baked
/// whole and as 16 tiles of 16 m: the terrain is cut at every border
/// (each tile holds its own piece of it), the ground heights along every
/// border agree to 1e-5 m, every query kind near a border answers as the
/// whole does, and characters walking over borders, flat and hilly, take
/// the whole bake's path, with no bump at a flat seam.
#[test]
fn a_terrain_cut_into_16_tiles_answers_as_the_whole_along_every_border() {
    let scene = kiln_tests::scenes::terrain_world(64, 1.0, 40, 16);
    let settings = BakeSettings::default();
    let whole = Level::from_bytes(&bake_scene(&scene, &settings).bytes).unwrap();
    let world = mounted(&scene, &settings, 16.0, DVec3::ZERO);
    assert_eq!(world.tiles().count(), 16);
    // every tile holds its own 16 × 16 quads of the terrain, and nothing
    // of it past its cell
    for (cell, part) in kiln_baker::tile::split(&scene, &settings, 16.0).unwrap() {
        let i = part
            .instances
            .iter()
            .position(|i| i.name == "terrain")
            .unwrap();
        let piece = &part.meshes[part.instances[i].mesh];
        assert_eq!(piece.triangles.len(), 512, "{cell:?}");
        let t = part.instances[i].transform;
        // placed by its vertices (f32 holds them exactly), so queries on it
        // need not move into a frame of its own
        assert_eq!(t, DAffine3::IDENTITY, "{cell:?}");
        for p in &piece.positions {
            let w = t.transform_point3(DVec3::from(p.map(f64::from)));
            assert!(w.x >= -1e-9 && w.x <= 16.0 + 1e-9 && w.z >= -1e-9 && w.z <= 16.0 + 1e-9);
        }
        assert_eq!(part.edge_flags[&part.instances[i].mesh].len(), 512);
    }
    for (_, level, _) in world.tiles() {
        let piece = level
            .find_object("terrain")
            .expect("a piece of the terrain");
        let rule = level.archive().instance_rule(piece.index() as usize);
        assert!(rule.contains("cut at tile borders"), "{rule}");
    }
    // ground heights along every border, and just either side of it
    let ground = |space: &dyn Fn(&Ray) -> Option<f32>, x: f32, z: f32| {
        space(&Ray::new(Vec3::new(x, 20.0, z), Vec3::NEG_Y, 40.0)).map(|t| 20.0 - t)
    };
    let on_whole = |r: &Ray| whole.raycast(r, &Filter::ALL).map(|h| h.t);
    let on_world = |r: &Ray| world.raycast(r, &Filter::ALL).map(|h| h.t);
    let mut samples = 0;
    for border in [16.0f32, 32.0, 48.0] {
        for step in 0..=640 {
            let along = step as f32 * 0.1;
            for side in [-1e-3f32, 0.0, 1e-3] {
                for (x, z) in [(border + side, along), (along, border + side)] {
                    let (a, b) = (ground(&on_whole, x, z), ground(&on_world, x, z));
                    match (a, b) {
                        (Some(a), Some(b)) => {
                            assert!((a - b).abs() <= 1e-5, "({x}, {z}): {a} whole, {b} tiled")
                        }
                        _ => assert_eq!(a, b, "({x}, {z})"),
                    }
                    samples += 1;
                }
            }
        }
    }
    assert!(samples > 11_000);
    // every query kind near a border
    let c = same_answers(&whole, &world, 1616, 2000, |rng| {
        let border = [16.0, 32.0, 48.0][rng.below(3)];
        let (mut x, mut z) = (rng.range(0.5, 63.5), rng.range(0.5, 63.5));
        if rng.range(0.0, 1.0) < 0.5 {
            x = border + rng.range(-1.0, 1.0);
        } else {
            z = border + rng.range(-1.0, 1.0);
        }
        let h = kiln_tests::scenes::terrain_height(f64::from(x), f64::from(z)) as f32;
        Vec3::new(x, h + rng.range(-0.2, 1.5), z)
    });
    assert!(c.rays > 1000 && c.touches > 800 && c.casts > 800, "{c:?}");
    // characters over borders: on the flat (x < 24) and over the hills
    for walk in [
        (Vec3::new(10.0, 0.9, 3.0), Vec3::new(0.04, 0.0, 0.03)),
        (Vec3::new(14.0, 0.9, 14.0), Vec3::new(0.03, 0.0, 0.04)),
        (Vec3::new(30.0, 3.0, 10.0), Vec3::new(0.05, 0.0, 0.04)),
        (Vec3::new(60.0, 3.0, 60.0), Vec3::new(-0.05, 0.0, -0.03)),
    ] {
        let crossed = same_walk(&whole, &world, walk, 400, 16.0, |step, from, m| {
            if from.x < 23.5 && m.position.x < 23.5 {
                // on the flat: the ground never pushes up or aside at a seam
                let ground = m
                    .hits
                    .iter()
                    .filter(|h| world.object_name(h.object).as_deref() == Some("terrain"));
                for h in ground {
                    assert!(h.normal.y > 0.9999, "step {step}: {h:?}");
                }
            }
        });
        assert!(crossed >= 1, "the walk from {} crossed no border", walk.0);
    }
}

/// A re-bake with the cut kept from the last bake (`CutCache`, a file
/// beside the manifest) gives the full bake's bytes: each tile cut on its
/// own as each cut together, a cache read back from its file as one just
/// made, an edit to one crate changing that tile's key alone, a terrain
/// edit re-cutting; a damaged cache file reads as empty.
#[test]
fn a_re_bake_from_the_kept_cut_gives_the_full_bake_s_bytes() {
    use kiln_baker::tile::{CutCache, bake_tiled, bake_tiled_cached, plan};
    let scene = kiln_tests::scenes::terrain_world(64, 1.0, 40, 16);
    let settings = BakeSettings::default();
    let full = bake_tiled(&scene, &settings, 16.0, "t").unwrap();
    let mut cache = CutCache::new();
    let cached = bake_tiled_cached(&scene, &settings, 16.0, "t", &mut cache).unwrap();
    assert_eq!(full.manifest_bytes, cached.manifest_bytes);
    assert!(!cache.is_empty());
    // each tile cut alone (what a re-bake of one tile does) = cut together
    let p = plan(&scene, &settings, 16.0, &mut cache).unwrap();
    let together = p.scenes().unwrap();
    for (k, cut_together) in together.iter().enumerate() {
        let alone = p.scene(k).unwrap();
        let bake = |s: &Scene| kiln_baker::bake::bake_scene_hashed(s, &settings, p.key(k)).bytes;
        assert!(bake(&alone) == bake(cut_together), "tile {k}");
        assert!(bake(&alone) == full.tiles[k].bytes, "tile {k}");
        assert_eq!(p.key(k), full.manifest.tiles[k].content_hash);
    }
    // through a file
    let dir = std::env::temp_dir().join(format!("kiln-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(".t.kilncut");
    cache.write(&file).unwrap();
    let mut read = CutCache::read(&file);
    assert!(!read.is_empty());
    let again = bake_tiled_cached(&scene, &settings, 16.0, "t", &mut read).unwrap();
    assert_eq!(full.manifest_bytes, again.manifest_bytes);
    // damaged: empty, and the bake still right
    let bytes = std::fs::read(&file).unwrap();
    for bad in [
        bytes[..bytes.len() / 2].to_vec(),
        {
            let mut b = bytes.clone();
            b[40] ^= 1;
            b
        },
        Vec::new(),
        b"KILNCUT".to_vec(),
    ] {
        std::fs::write(&file, &bad).unwrap();
        assert!(CutCache::read(&file).is_empty());
    }
    // one crate moved: its tile's key alone changes, from the kept cut
    let mut edited = scene.clone();
    let c = edited
        .instances
        .iter()
        .position(|i| i.name != "terrain")
        .unwrap();
    edited.instances[c].transform =
        DAffine3::from_translation(DVec3::new(0.25, 0.0, 0.0)) * edited.instances[c].transform;
    let misses = cache.misses();
    let p2 = plan(&edited, &settings, 16.0, &mut cache).unwrap();
    let changed: Vec<usize> = (0..p2.len()).filter(|&k| p2.key(k) != p.key(k)).collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    // a crate moved onto a border: whole in the tile of its centre, and
    // the terrain's cut still found in the cache
    let mut straddling = edited.clone();
    let at = &mut straddling.instances[c].transform.translation;
    (at.x, at.z) = (16.0, 40.0);
    let p5 = plan(&straddling, &settings, 16.0, &mut cache).unwrap();
    assert_eq!(
        cache.misses(),
        misses,
        "the terrain's cut was worked out again"
    );
    let fresh = bake_tiled(&straddling, &settings, 16.0, "t").unwrap();
    let changed: Vec<usize> = (0..p5.len()).filter(|&k| p5.key(k) != p2.key(k)).collect();
    for &k in &changed {
        let alone = p5.scene(k).unwrap();
        assert!(
            kiln_baker::bake::bake_scene_hashed(&alone, &settings, p5.key(k)).bytes
                == fresh.tiles[k].bytes
        );
    }
    let fresh = bake_tiled(&edited, &settings, 16.0, "t").unwrap();
    let k = changed[0];
    let alone = p2.scene(k).unwrap();
    assert!(
        kiln_baker::bake::bake_scene_hashed(&alone, &settings, p2.key(k)).bytes
            == fresh.tiles[k].bytes
    );
    // the terrain raised: every tile's key changes, and the cut is made again
    let mut raised = scene.clone();
    let t = raised
        .instances
        .iter()
        .position(|i| i.name == "terrain")
        .unwrap();
    let m = raised.instances[t].mesh;
    for v in &mut raised.meshes[m].positions {
        v[1] += 0.5;
    }
    let p3 = plan(&raised, &settings, 16.0, &mut cache).unwrap();
    assert_eq!(cache.misses(), misses + 1);
    assert!((0..p3.len()).all(|k| p3.key(k) != p.key(k)));
    let fresh = bake_tiled(&raised, &settings, 16.0, "t").unwrap();
    assert!(
        kiln_baker::bake::bake_scene_hashed(&p3.scene(5).unwrap(), &settings, p3.key(5)).bytes
            == fresh.tiles[5].bytes
    );
    // triangles in no spatial order (no runs kept): a cell's piece is
    // found by looking at every triangle, with the same result
    let mut shuffled = scene.clone();
    let mesh = &mut shuffled.meshes[m];
    let n = mesh.triangles.len();
    let order: Vec<usize> = (0..n).map(|t| t * 7919 % n).collect();
    mesh.triangles = order.iter().map(|&t| mesh.triangles[t]).collect();
    mesh.source_ids = order.iter().map(|&t| mesh.source_ids[t]).collect();
    let mut fresh_cache = CutCache::new();
    let p4 = plan(&shuffled, &settings, 16.0, &mut fresh_cache).unwrap();
    let together = p4.scenes().unwrap();
    for k in [0, 5, 15] {
        let bake = |s: &Scene| kiln_baker::bake::bake_scene_hashed(s, &settings, p4.key(k)).bytes;
        assert!(
            bake(&p4.scene(k).unwrap()) == bake(&together[k]),
            "tile {k}"
        );
    }
    std::fs::remove_dir_all(dir).ok();
}
