//! The tiled-world scale bench: a generated open world (a terrain of
//! 1 m quads, rolling hills, plus instanced crates) of about `--triangles`
//! triangles cut into `--side`² tiles, measured for what a team with a
//! world that size pays:
//!
//! - the full tiled bake on 1 and 2 threads;
//! - the re-bake after one crate moved: the plan (with the terrain's cut
//!   kept from the full bake) whose keys find the one tile changed, its
//!   cut and its bake; and the plan without the kept cut;
//! - mounting a tile (open, map, validate, mount), before page faults;
//! - resident memory with a 3×3 window of tiles mounted;
//! - rays, sphere overlaps and a walking character over the window's
//!   inner borders, on the mounted tiles and on the same area baked as one
//!   archive (the ratio);
//! - precision: the same rays with the world 1, 10 and 100 km out, with
//!   the floating origin at the focus and without it.
//!
//! ```text
//! cargo run --release -p kiln-tests --example world_scale -- [--triangles N] [--side K] [--out DIR]
//! ```
//!
//! Defaults: 100,000,000 triangles, 16 × 16 tiles, `target/world_scale`
//! (about 2 GB of archives; 10 GB of memory while baking).

use glam::{DAffine3, DQuat, DVec3, Vec3};
use kiln_baker::tile::{CutCache, bake_tiled_cached, plan};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
use kiln_runtime::character::Character;
use kiln_runtime::{Filter, Level, Pose, QueryShape, Ray, World};
use kiln_tests::scenes::terrain_height;
use std::path::PathBuf;
use std::time::Instant;

/// The generated world: a terrain of `quads`² cells over `[x0, x0 + quads)`
/// × `[z0, z0 + quads)` (1 m), and the crates of the whole world of side
/// `extent` whose centres lie in it (one per `spacing`² m, placed by a hash
/// of their cell, so a window holds exactly the whole world's there).
fn world(x0: u32, z0: u32, quads: u32, extent: u32, spacing: u32) -> Scene {
    let n = quads + 1;
    let mut positions = Vec::with_capacity((n * n) as usize);
    for z in 0..n {
        for x in 0..n {
            let (fx, fz) = (f64::from(x0 + x), f64::from(z0 + z));
            positions.push([fx as f32, terrain_height(fx, fz) as f32, fz as f32]);
        }
    }
    let terrain = SceneMesh::new("terrain", positions, &kiln_tests::grid_triangles(quads));
    let crate_mesh = kiln_tests::scenes::terrain_world(1, 1.0, 1, 0).meshes[1].clone();
    let mut instances = vec![SceneInstance {
        name: "terrain".into(),
        mesh: 0,
        transform: DAffine3::IDENTITY,
        ..Default::default()
    }];
    let cells = extent / spacing;
    for cz in 0..cells {
        for cx in 0..cells {
            let h = ((u64::from(cx) * 0x9E37_79B9) ^ (u64::from(cz) * 0x85EB_CA6B))
                .wrapping_mul(0xC2B2_AE35);
            let (fx, fz) = (
                f64::from(cx * spacing) + 1.0 + (h % 1000) as f64 / 1000.0 * f64::from(spacing - 2),
                f64::from(cz * spacing)
                    + 1.0
                    + (h / 1000 % 1000) as f64 / 1000.0 * f64::from(spacing - 2),
            );
            let inside = fx >= f64::from(x0)
                && fx < f64::from(x0 + quads)
                && fz >= f64::from(z0)
                && fz < f64::from(z0 + quads);
            if !inside {
                continue;
            }
            let at = DVec3::new(fx, terrain_height(fx, fz) + 0.3, fz);
            let turn = DQuat::from_rotation_y((h % 628) as f64 / 100.0);
            instances.push(SceneInstance {
                name: format!("crate_{cx}_{cz}"),
                mesh: 1,
                transform: DAffine3::from_scale_rotation_translation(DVec3::splat(1.0), turn, at),
                ..Default::default()
            });
        }
    }
    Scene {
        meshes: vec![terrain, crate_mesh],
        instances,
        ..Default::default()
    }
}

/// This process's resident memory (bytes).
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn on_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
        .install(f)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let triangles: f64 = arg("--triangles").map_or(1e8, |v| v.parse().expect("--triangles N"));
    let side: u32 = arg("--side").map_or(16, |v| v.parse().expect("--side K"));
    let out = arg("--out").map_or_else(|| PathBuf::from("target/world_scale"), PathBuf::from);
    std::fs::create_dir_all(&out).unwrap();
    let spacing = 16; // a crate per 16 × 16 m
    // the terrain's side in quads, a multiple of the tile count
    let quads = ((triangles / 2.0).sqrt() as u32 / side).max(4) * side;
    let tile = f64::from(quads / side);
    let settings = BakeSettings::default();
    if args.iter().any(|a| a == "--window-only") {
        // the tiles a full run left in --out: the window's part alone
        return window_part(&out, quads, side, tile, spacing, &settings);
    }
    let t = Instant::now();
    let scene = world(0, 0, quads, quads, spacing);
    let tris: usize = scene
        .instances
        .iter()
        .map(|i| scene.meshes[i.mesh].triangles.len())
        .sum();
    println!(
        "world: {quads} × {quads} m, {tris} triangles ({} crates), {} tiles of {tile} m; generated in {:.1} s",
        scene.instances.len() - 1,
        side * side,
        t.elapsed().as_secs_f64()
    );

    // the full bake, on 1 and 2 threads
    let mut baked = None;
    let mut cache = CutCache::new();
    for threads in [1, 2] {
        let t = Instant::now();
        cache = CutCache::new();
        let b = on_threads(threads, || {
            bake_tiled_cached(&scene, &settings, tile, "world", &mut cache).unwrap()
        });
        println!(
            "full tiled bake, {threads} thread(s): {:.1} s ({} tiles, {:.1} MB of archives)",
            t.elapsed().as_secs_f64(),
            b.tiles.len(),
            b.tiles.iter().map(|t| t.bytes.len()).sum::<usize>() as f64 / 1e6
        );
        baked = Some(b);
    }
    let baked = baked.unwrap();
    std::fs::write(out.join("world.kilnworld"), &baked.manifest_bytes).unwrap();
    for (t, b) in baked.manifest.tiles.iter().zip(&baked.tiles) {
        std::fs::write(out.join(&t.file), &b.bytes).unwrap();
    }
    let hashes: Vec<[u8; 16]> = baked
        .manifest
        .tiles
        .iter()
        .map(|t| t.content_hash)
        .collect();
    drop(baked);

    // one crate moved: plan (the terrain's cut kept from the full bake) to
    // find the tile by its key, cut and bake it alone
    let mut edited = scene.clone();
    let moved = edited.instances.len() / 2;
    edited.instances[moved].transform =
        DAffine3::from_translation(DVec3::new(0.5, 0.0, 0.0)) * edited.instances[moved].transform;
    let t = Instant::now();
    let parts = on_threads(2, || plan(&edited, &settings, tile, &mut cache).unwrap());
    let plan_s = t.elapsed().as_secs_f64();
    let changed: Vec<usize> = (0..parts.len())
        .filter(|&k| parts.key(k) != hashes[k])
        .collect();
    let t = Instant::now();
    let scenes = on_threads(2, || parts.scenes_of(&changed).unwrap());
    let cut_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for (&k, part) in changed.iter().zip(&scenes) {
        on_threads(2, || {
            kiln_baker::bake::bake_scene_hashed(part, &settings, parts.key(k))
        });
    }
    let bake_s = t.elapsed().as_secs_f64();
    println!(
        "re-bake after moving one crate: {} tile(s) changed; plan {plan_s:.2} s (the cut kept), its cut {cut_s:.2} s, its bake {bake_s:.3} s: {:.2} s in all",
        changed.len(),
        plan_s + cut_s + bake_s
    );
    // the same without the kept cut: classify, weld and flag the terrain
    let t = Instant::now();
    let cold = on_threads(2, || {
        plan(&edited, &settings, tile, &mut CutCache::new()).unwrap()
    });
    println!(
        "  planning without the kept cut (what a first bake does): {:.2} s",
        t.elapsed().as_secs_f64()
    );
    drop(cold);
    drop(scenes);
    drop(parts);
    drop(edited);

    drop(scene);
    window_part(&out, quads, side, tile, spacing, &settings);
}

/// The measures on a 3×3 window of the tiles in `out`: mounting, memory,
/// speed against the same area as one archive, precision far out.
fn window_part(
    out: &std::path::Path,
    quads: u32,
    side: u32,
    tile: f64,
    spacing: u32,
    settings: &BakeSettings,
) {
    // a 3×3 window around the world's middle, and the same area as one archive
    let mid = side / 2;
    let (wx, wz) = ((mid - 1) * (quads / side), (mid - 1) * (quads / side));
    let window = world(wx, wz, 3 * (quads / side), quads, spacing);
    let one = Level::from_bytes(&bake_scene(&window, settings).bytes).unwrap();
    drop(window);
    let manifest = kiln_runtime::WorldManifest::open(out.join("world.kilnworld")).unwrap();
    let centre = DVec3::new(f64::from(wx) + 1.5 * tile, 0.0, f64::from(wz) + 1.5 * tile);
    let picked: Vec<usize> = manifest
        .tiles()
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            (f64::from(t.cell[0]) - (centre.x / tile - 0.5)).abs() < 1.01
                && (f64::from(t.cell[1]) - (centre.z / tile - 0.5)).abs() < 1.01
        })
        .map(|(k, _)| k)
        .collect();
    assert_eq!(picked.len(), 9);
    let before = resident();
    let mut world = World::tiled(DVec3::ZERO).unwrap();
    let mut mount_ms = Vec::new();
    for &k in &picked {
        let t = Instant::now();
        let level = manifest.open_tile(k).unwrap();
        world
            .mount(level, DVec3::from(manifest.tiles()[k].origin))
            .unwrap();
        mount_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    mount_ms.sort_by(f64::total_cmp);
    let mapped = resident();

    // queries over the window's inner borders
    let mut rng = kiln_tests::Rng::new(256);
    let lo = (f64::from(wx) + 0.5 * tile) as f32;
    let hi = (f64::from(wx) + 2.5 * tile) as f32;
    let rays: Vec<Ray> = (0..200_000)
        .map(|i| {
            let border = (f64::from(wx) + tile * if i % 2 == 0 { 1.0 } else { 2.0 }) as f32;
            let along = rng.range(lo, hi);
            let off = rng.range(-3.0, 3.0);
            let (x, z) = if i % 4 < 2 {
                (border + off, along)
            } else {
                (along, border + off)
            };
            let dir = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, -0.2),
                rng.range(-1.0, 1.0),
            )
            .normalize();
            Ray::new(
                Vec3::new(
                    x,
                    terrain_height(f64::from(x), f64::from(z)) as f32 + 3.0,
                    z,
                ),
                dir,
                50.0,
            )
        })
        .collect();
    let time = |f: &dyn Fn() -> usize| {
        let mut best = f64::INFINITY;
        let mut n = 0;
        for _ in 0..3 {
            let t = Instant::now();
            n = f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        (best, n)
    };
    let (t_one, hits_one) = time(&|| {
        rays.iter()
            .filter(|r| one.raycast(r, &Filter::ALL).is_some())
            .count()
    });
    let (t_world, hits_world) = time(&|| {
        rays.iter()
            .filter(|r| world.raycast(r, &Filter::ALL).is_some())
            .count()
    });
    let ball = QueryShape::Sphere { radius: 0.5 };
    let (s_one, _) = time(&|| {
        rays.iter()
            .map(|r| {
                one.overlap(&ball, &Pose::at(r.origin - Vec3::Y * 2.8), &Filter::ALL)
                    .len()
            })
            .sum()
    });
    let (s_world, _) = time(&|| {
        rays.iter()
            .map(|r| {
                world
                    .overlap(&ball, &Pose::at(r.origin - Vec3::Y * 2.8), &Filter::ALL)
                    .len()
            })
            .sum()
    });
    // a character zigzags over the corner where four of the window's
    // tiles meet: 8,000 steps of 6 cm, turning every 400
    let player = Character::capsule(0.3, 0.6);
    let corner = (f64::from(wx) + tile) as f32;
    let walk = |space: &dyn Fn(Vec3, Vec3) -> Vec3| {
        let mut at = Vec3::new(corner - 8.0, 0.0, corner - 8.0);
        at.y = terrain_height(f64::from(at.x), f64::from(at.z)) as f32 + 1.0;
        let turns = [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0)];
        for i in 0..8_000 {
            let (dx, dz) = turns[i / 400 % 4];
            at = space(at, Vec3::new(0.06 * dx, -0.1, 0.06 * dz));
        }
        at
    };
    let mut ends = [Vec3::ZERO; 2];
    let (c_one, _) = time(&|| {
        walk(&|p, m| player.move_and_slide(&one, p, m, &Filter::ALL).position);
        0
    });
    let (c_world, _) = time(&|| {
        walk(&|p, m| player.move_and_slide(&world, p, m, &Filter::ALL).position);
        0
    });
    ends[0] = walk(&|p, m| player.move_and_slide(&one, p, m, &Filter::ALL).position);
    ends[1] = walk(&|p, m| player.move_and_slide(&world, p, m, &Filter::ALL).position);
    // the two walks in step: the first step where they part by a millimetre
    let mut parted = None;
    {
        let mut a = Vec3::new(corner - 8.0, 0.0, corner - 8.0);
        a.y = terrain_height(f64::from(a.x), f64::from(a.z)) as f32 + 1.0;
        let mut b = a;
        let turns = [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0)];
        let mut widest = 0.0f32;
        for i in 0..8_000 {
            let (dx, dz) = turns[i / 400 % 4];
            let m = Vec3::new(0.06 * dx, -0.1, 0.06 * dz);
            a = player.move_and_slide(&one, a, m, &Filter::ALL).position;
            b = player.move_and_slide(&world, b, m, &Filter::ALL).position;
            let d = (a - b).length();
            if d > 1e-3 {
                parted = Some((i, widest));
                break;
            }
            widest = widest.max(d);
        }
    }
    let queried = resident();
    println!(
        "mount a tile (open, map, validate, mount): median {:.3} ms, max {:.3} ms",
        mount_ms[4], mount_ms[8]
    );
    println!(
        "resident with 3×3 tiles mounted: {:.1} MB mapped, {:.1} MB after the queries (the process before: {:.1} MB)",
        (mapped.saturating_sub(before)) as f64 / 1e6,
        (queried.saturating_sub(before)) as f64 / 1e6,
        before as f64 / 1e6
    );
    println!(
        "rays over borders: {:.2} M/s tiles, {:.2} M/s one archive ({:.2}×); hits {hits_world} / {hits_one}",
        rays.len() as f64 / t_world / 1e6,
        rays.len() as f64 / t_one / 1e6,
        t_one / t_world
    );
    println!(
        "sphere overlaps over borders: {:.2} M/s tiles, {:.2} M/s one archive ({:.2}×)",
        rays.len() as f64 / s_world / 1e6,
        rays.len() as f64 / s_one / 1e6,
        s_one / s_world
    );
    println!(
        "character, 8,000 steps over a corner of four tiles: {:.1} k steps/s tiles, {:.1} k/s one archive ({:.2}×); ends {:.2e} m apart; {}",
        8.0 / c_world,
        8.0 / c_one,
        c_one / c_world,
        (ends[0] - ends[1]).length(),
        match parted {
            None => "the paths agree to 1 mm at every step".to_string(),
            Some((i, w)) => format!("the paths agree to {w:.1e} m for {i} steps, then part"),
        }
    );

    // precision: the window's tiles mounted 1, 10 and 100 km further out
    let sample: Vec<Ray> = rays.iter().step_by(200).copied().collect();
    let base: Vec<Option<f32>> = sample
        .iter()
        .map(|r| world.raycast(r, &Filter::ALL).map(|h| h.t))
        .collect();
    for km in [1.0, 10.0, 100.0] {
        let shift = DVec3::new(km * 1000.0, 0.0, km * 1000.0);
        for floating in [true, false] {
            let mut far = World::tiled(if floating { shift } else { DVec3::ZERO }).unwrap();
            for &k in &picked {
                far.mount(
                    manifest.open_tile(k).unwrap(),
                    DVec3::from(manifest.tiles()[k].origin) + shift,
                )
                .unwrap();
            }
            let mut worst = 0.0f64;
            for (r, b) in sample.iter().zip(&base) {
                let origin = far.to_local(r.origin.as_dvec3() + shift);
                let got = far
                    .raycast(&Ray::new(origin, r.dir, r.max_t), &Filter::ALL)
                    .map(|h| h.t);
                worst = worst.max(match (b, got) {
                    (Some(a), Some(g)) => f64::from((a - g).abs()),
                    (None, None) => 0.0,
                    _ => f64::INFINITY,
                });
            }
            println!(
                "precision {km:>5} km out, {}: worst |Δt| over {} rays {:.2e} m",
                if floating {
                    "floating origin at the focus"
                } else {
                    "origin at the world's zero"
                },
                sample.len(),
                worst
            );
        }
    }
}
