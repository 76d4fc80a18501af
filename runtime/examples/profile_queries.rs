//! One query kind in a loop on the benchmark's 2.1M-triangle terrain, for
//! profilers (the figures in ARCHITECTURE.md's "Measured" section come from
//! `valgrind --tool=cachegrind --cache-sim=no` over this program).
//!
//! ```text
//! cargo build --release -p kiln-runtime --example profile_queries
//! target/release/examples/profile_queries bake            # writes the archive once
//! target/release/examples/profile_queries bake 5          # five bakes in one process, stages of each
//! target/release/examples/profile_queries probes 3000     # 20 passes over 1,000 probe rays
//! target/release/examples/profile_queries none            # the same run without queries
//! ```
//!
//! Kinds: `open` (the time `Level::open` takes on a warm page cache, and
//! each stage of validation alone: checksum, rkyv's structure check, Kiln's
//! verification), `bake`, `none`, `probes`, `random`, `visibility` (the benchmark's
//! three ray classes; `probes-many` and so on answer each class as one batch
//! through `Level::raycast_many`, `any-probes` and so on ask
//! `Level::raycast_any`), `overlaps`, `yes-no`, `sweeps`, `characters` (a
//! capsule character's `move_and_slide`, which prints its time per update).
//! The second argument is the number of rays generated (a third of them per
//! class) or spheres, or for `bake` the number of bakes.
//! The difference between a kind and `none` divided by 20 × the queries
//! run is the cost per query. `KILN_PROFILE_N=128` takes a smaller terrain,
//! `KILN_PROFILE_CITY=102` the benchmark's generated city (about 240k
//! triangles), `KILN_PROFILE_GLB=level.glb` a real level's world triangles
//! (as the benchmark flattens sauer_pandora) instead.
//!
//! `obvhs-probes`, `obvhs-random` and `obvhs-visibility` cast the same rays
//! through obvhs' compressed wide BVH (the benchmark's second ray peer,
//! built from the same triangles before the clock starts), for profiles
//! side by side. Instructions per ray, each side's query function alone:
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null '--toggle-collect=*Level*raycast' \
//!     target/release/examples/profile_queries random 60000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null '--toggle-collect=*ray_traverse*' \
//!     target/release/examples/profile_queries obvhs-random 60000
//! ```
//!
//! (`I refs` over 20 passes × the class's rays; add `--branch-sim=yes` for
//! mispredicted branches).

#[allow(dead_code)] // shared with the benchmark, which uses all of it
#[path = "../benches/common/mod.rs"]
mod common;

use common::{Rng, city, flattened, rays, surface_points, terrain};
use glam::Vec3;
use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::SphereQueries;

const PASSES: usize = 20;

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "probes".into());
    let count: Option<usize> = args.next().and_then(|v| v.parse().ok());
    let n = count.unwrap_or(3000);
    // `KILN_PROFILE_N=128` for a terrain that fits in cache (default 1024)
    let side: u32 = std::env::var("KILN_PROFILE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    // `KILN_PROFILE_CITY=102` for the benchmark's generated city instead
    // (102 lots a side: about 240k triangles)
    let city_lots: Option<u32> = std::env::var("KILN_PROFILE_CITY")
        .ok()
        .and_then(|v| v.parse().ok());
    // `KILN_PROFILE_GLB=path.glb` for a real level, flattened to one
    // mesh of world triangles as the benchmark does with sauer_pandora
    let glb = std::env::var_os("KILN_PROFILE_GLB").map(std::path::PathBuf::from);
    let (path, (pos, tris)) = match (glb, city_lots) {
        (Some(glb), _) => (
            std::env::temp_dir().join(format!(
                "kiln-profile-{}.kiln",
                glb.file_stem().unwrap_or_default().to_string_lossy()
            )),
            flattened(&glb),
        ),
        (None, Some(lots)) => (
            std::env::temp_dir().join(format!("kiln-profile-city{lots}.kiln")),
            city(lots),
        ),
        (None, None) => (
            std::env::temp_dir().join(format!("kiln-profile-terrain{side}.kiln")),
            terrain(side),
        ),
    };
    if kind == "bake" || !path.exists() {
        let scene = Scene::from_meshes(vec![SceneMesh::new("level", pos.clone(), &tris)]);
        // `bake N`: N bakes in one process (the later ones on a warm heap,
        // as the benchmark's best-of rounds are), each one's stages printed
        let rounds = if kind == "bake" {
            count.unwrap_or(1).clamp(1, 100)
        } else {
            1
        };
        let mut baked = None;
        let pool = rayon::ThreadPoolBuilder::new()
            .build()
            .expect("a thread pool");
        for _ in 0..rounds {
            let t0 = std::time::Instant::now();
            // on a pool's worker thread, as the benchmark bakes: all of the
            // bake's work then runs under one call on one thread (one thread by
            // `RAYON_NUM_THREADS=1`), where `valgrind --toggle-collect` on a
            // baker function sees it whole
            let b = pool.install(|| bake_scene(&scene, &BakeSettings::default().all_meshes()));
            let baked = baked.insert(b);
            eprintln!(
                "baked {} triangles in {:.0} ms ({} bytes)",
                tris.len(),
                t0.elapsed().as_secs_f64() * 1e3,
                baked.bytes.len()
            );
            let s = &baked.report.stages;
            eprintln!(
                "  stages, ms: hash {:.0}, weld {:.0}, classify {:.0}, prepare {:.0}, shapes {:.0}, \
             encode {:.0}, serialize {:.0}, check {:.0}",
                s.hash_ms,
                s.weld_ms,
                s.classify_ms,
                s.prepare_ms,
                s.build_colliders_ms,
                s.encode_ms,
                s.serialize_ms,
                s.check_ms
            );
        }
        let baked = baked.expect("one round at least");
        std::fs::write(&path, &baked.bytes).expect("write the archive");
        if kind == "bake" {
            return;
        }
    }
    if kind == "open" {
        open_stages(&path);
        return;
    }
    let level = Level::open(&path).expect("open the archive");
    let (lo, hi) = pos.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(a, b), p| (a.min(Vec3::from(*p)), b.max(Vec3::from(*p))),
    );
    let qs = rays(lo, hi, n);
    let class = |c: usize| qs.iter().skip(c).step_by(3).collect::<Vec<_>>();
    // the ray class a kind names, with or without `obvhs-` or `-many`
    let class_of = |kind: &str| {
        ["probes", "random", "visibility"]
            .iter()
            .position(|c| kind.contains(c))
            .unwrap_or(0)
    };
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let spheres: Vec<(Vec3, f32)> = surface_points(&pos, &tris, n, 7)
        .into_iter()
        .map(|p| {
            let r = rng.range(0.5, 2.0);
            (p + rng.unit32() * r * rng.range(0.0, 1.5), r)
        })
        .collect();
    // the peer's tree for the `obvhs-` kinds, built before the clock starts
    let peer = kind
        .starts_with("obvhs-")
        .then(|| common::Peer::build(&pos, &tris));
    let mut found = 0usize;
    let t0 = std::time::Instant::now();
    let mut buf = Vec::new();
    for _ in 0..PASSES {
        found += match kind.as_str() {
            "none" => 0,
            "obvhs-probes" | "obvhs-random" | "obvhs-visibility" => {
                let peer = peer.as_ref().expect("built for obvhs- kinds");
                class(class_of(&kind))
                    .iter()
                    .filter(|q| peer.hits(q))
                    .count()
            }
            "probes" | "random" | "visibility" => class(class_of(&kind))
                .iter()
                .filter(|q| {
                    level
                        .raycast(&Ray::new(q.o, q.d, q.t), &Filter::ALL)
                        .is_some()
                })
                .count(),
            "any-probes" | "any-random" | "any-visibility" => class(class_of(&kind))
                .iter()
                .filter(|q| level.raycast_any(&Ray::new(q.o, q.d, q.t), &Filter::ALL))
                .count(),
            "probes-many" | "random-many" | "visibility-many" => {
                let batch: Vec<Ray> = class(class_of(&kind))
                    .iter()
                    .map(|q| Ray::new(q.o, q.d, q.t))
                    .collect();
                let mut hits = vec![None; batch.len()];
                level.raycast_many(&batch, &Filter::ALL, &mut hits);
                hits.iter().filter(|h| h.is_some()).count()
            }
            "overlaps" => spheres
                .iter()
                .map(|&(c, r)| {
                    level.sphere_overlaps_into(c, r, &mut buf);
                    buf.len()
                })
                .sum(),
            "yes-no" => spheres
                .iter()
                .filter(|&&(c, r)| level.sphere_touches(c, r))
                .count(),
            "sweeps" => spheres
                .iter()
                .filter(|&&(c, _)| {
                    let d = Vec3::new(0.6, -0.3, 0.2).normalize();
                    level
                        .sphere_sweep(c + Vec3::Y * 2.0, 0.5, d, 10.0)
                        .is_some()
                })
                .count(),
            "characters" => {
                // a 1.8 m capsule walking 3 m/s at 60 Hz under a constant
                // fall, from each of the first n/30 surface points, 100
                // frames each on a square path; the time per update printed
                use Filter;
                use kiln_runtime::character::Character;
                let c = Character::capsule(0.3, 0.6);
                let starts: Vec<Vec3> = spheres
                    .iter()
                    .take((n / 30).max(1))
                    .filter_map(|&(p, _)| {
                        let top = Vec3::new(p.x, hi.y + 1.0, p.z);
                        let h = level.raycast(
                            &Ray::new(top, Vec3::NEG_Y, hi.y - lo.y + 2.0),
                            &Filter::ALL,
                        )?;
                        Some(h.point + Vec3::Y * 0.92)
                    })
                    .collect();
                let t0 = std::time::Instant::now();
                let (mut updates, mut grounded) = (0usize, 0usize);
                for &s in &starts {
                    let mut at = s;
                    for f in 0..100 {
                        let heading = [Vec3::X, Vec3::Z, Vec3::NEG_X, Vec3::NEG_Z][(f / 25) % 4];
                        let m = c.move_and_slide(
                            &level,
                            at,
                            heading * 0.05 - Vec3::Y * 0.1,
                            &Filter::ALL,
                        );
                        at = m.position;
                        updates += 1;
                        grounded += usize::from(matches!(
                            m.ground,
                            kiln_runtime::character::Ground::OnGround(_)
                        ));
                    }
                }
                eprintln!(
                    "characters: {} x 100 updates, {:.1} µs per update, {:.0}% on the ground",
                    starts.len(),
                    t0.elapsed().as_secs_f64() * 1e6 / updates.max(1) as f64,
                    100.0 * grounded as f64 / updates.max(1) as f64
                );
                updates
            }
            other => {
                eprintln!("unknown kind {other}");
                std::process::exit(2);
            }
        };
    }
    let s = t0.elapsed().as_secs_f64();
    println!("{kind}: {found} found over {PASSES} passes in {s:.3} s");
}

/// Fastest of `runs` timings of `f`, in ms (this machine's neighbours
/// only ever add time; the bench keeps each side's fastest pass too).
fn fastest_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let t: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = std::time::Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.into_iter().fold(f64::INFINITY, f64::min)
}

/// `Level::open` and its stages, each the fastest of 21 runs.
fn open_stages(path: &std::path::Path) {
    use kiln_formats::{HEADER_LEN, header::body_hash};
    let bytes = std::fs::read(path).expect("read the archive");
    let mut aligned = rkyv::util::AlignedVec::<16>::with_capacity(bytes.len());
    aligned.extend_from_slice(&bytes);
    let body = &aligned[HEADER_LEN..];
    // the level is dropped outside the timing: unmapping is not opening
    let mut opened = Vec::with_capacity(21);
    let open = fastest_ms(21, || {
        opened.push(Level::open(path).expect("open"));
    });
    drop(opened);
    let hash = fastest_ms(21, || {
        std::hint::black_box(body_hash(body));
    });
    let structure = fastest_ms(21, || {
        rkyv::access::<kiln_formats::ArchivedLevel, rkyv::rancor::Error>(body).expect("access");
    });
    let level = rkyv::access::<kiln_formats::ArchivedLevel, rkyv::rancor::Error>(body).unwrap();
    let verify = fastest_ms(21, || {
        kiln_formats::verify::verify_level(level).expect("verify");
    });
    let tree = fastest_ms(21, || {
        for shape in level.colliders.iter() {
            if let kiln_formats::level::ArchivedCollider::TriMesh(m) = shape {
                kiln_formats::verify::verify_mesh_tree(m).expect("tree");
            }
        }
    });
    println!(
        "open: {:.1} MB, Level::open {open:.2} ms; checksum {hash:.2} ms, rkyv structure check {structure:.2} ms, verify {verify:.2} ms (mesh trees {tree:.2} ms of it)",
        bytes.len() as f64 / 1e6
    );
}
