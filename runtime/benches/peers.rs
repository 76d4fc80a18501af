//! Kiln against its peer, parry3d, on the same meshes and the same rays, in
//! one process, on one thread.
//!
//! ```text
//! cargo bench -p kiln-runtime --bench peers            # full run (2.1M-triangle terrain; 1M rays, 200k overlaps, 100k sweeps)
//! cargo bench -p kiln-runtime --bench peers -- --quick # smoke run for CI
//! cargo bench -p kiln-runtime --bench peers -- --tree sphere  # one tree kind only (default: both)
//! cargo bench -p kiln-runtime --bench peers -- --solids        # only the solid-shape rows
//! cargo bench -p kiln-runtime --bench peers -- --meshes        # only the terrain, city and sauer_pandora rows
//! cargo bench -p kiln-runtime --bench peers -- --city          # only the city's rows
//! cargo bench -p kiln-runtime --bench peers -- --forest        # only the 1M-instance forest's rows
//! cargo bench -p kiln-runtime --bench peers -- --dynamic       # only the dynamic tree's rows (10k and 100k bodies)
//! cargo bench -p kiln-runtime --bench peers -- --quick --solids --profile "300 spheres rays/s"
//!     # Kiln's side of one row ("MESH FIGURE") alone for 5 s, its rate, then exit (for `perf record`)
//! cargo bench -p kiln-runtime --bench peers -- --quick --profile "terrain box overlaps"
//!     # the same for capsule, box and hull rows ("TARGET SHAPE QUERY", no "/s")
//! cargo bench -p kiln-runtime --bench peers -- --quick --solids --profile "300 spheres rays/s" --peer
//!     # the peer's side of that row instead (parry3d, or obvhs on a "vs obvhs CWBVH" row);
//!     # for a capsule, box or hull row, name it as printed, with "/s": "300 spheres box yes/no/s"
//! mkfifo /tmp/ctl && PERF_CTL_FIFO=/tmp/ctl perf record -D -1 --control fifo:/tmp/ctl -- \
//!     target/release/deps/peers-* --meshes --profile "sauer_pandora aabb rays/s"
//!     # perf enabled when the row starts: the profile holds that row alone
//! cargo bench -p kiln-runtime --bench peers -- --quick --meshes --profile "city 15k aabb build ms (1 thread)"
//!     # one mesh's bake (ingest to validated bytes) over and over; with --peer, parry3d's build;
//!     # with --stages, first the fastest of 40 bakes' stage times (weld, build, encode, ...)
//! ```
//!
//! Solid shapes: 2,000 convex hulls of random clouds of 8–256 points, and
//! 2,000 each of boxes, spheres and capsules, randomly rotated, against
//! parry3d's `Compound` of the same `ConvexPolyhedron`s / `Cuboid`s /
//! `Ball`s / `Capsule`s; a whole level (many-cubes) baked with
//! classification on against all triangle meshes; a forest of 1M instances; and
//! concave tori as BSP trees against parry3d `TriMesh`es and Kiln TriMeshes
//! of the same collider triangles.
//!
//! The meshes: an fBm terrain, a generated city (towers of stacked boxes
//! on a ground grid, about 240k triangles) and the real level
//! sauer_pandora, each one triangle mesh on both sides.
//!
//! On the terrain, the city and sauer_pandora, rays (closest and any hit) also run
//! against a second peer, obvhs' compressed wide BVH (`peers/cwbvh.rs`);
//! those rows say "vs obvhs CWBVH" and their peer column is obvhs'.
//!
//! Prints a table and writes the same figures to `target/peers.json`.
//! Memory for parry3d is measured with a counting allocator (bytes still
//! held by the built `TriMesh`, input vertices and indices included);
//! Kiln's is the archive size.

use glam::Vec3;
use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene};
use kiln_formats::TreeKind;
use kiln_runtime::Level;
use kiln_runtime::{Filter, Pose, Ray};
use kiln_tests::SphereQueries;
use parry3d::query::{Ray as PRay, RayCast};
use parry3d::shape::TriMesh;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

mod common;
use common::{Rng, city, flattened, rays, surface_points, terrain};
#[path = "peers/cwbvh.rs"]
mod cwbvh;
#[path = "peers/dynamic.rs"]
mod dynamic;
#[path = "peers/shapes.rs"]
mod shapes;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the only
// addition is a relaxed counter of live bytes, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

struct Row {
    mesh: String,
    query: String,
    kiln: f64,
    parry: f64,
    unit: &'static str,
}

/// The row `--profile "MESH QUERY"` asks for, if any.
fn profiled() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--profile")?;
    args.get(i + 1).cloned()
}

/// Runs `f` (`n` queries) for five seconds, prints the rate and exits:
/// the rest of the run would only dilute a profile.
fn soak(label: &str, n: usize, f: &mut dyn FnMut()) -> ! {
    // `PERF_CTL_FIFO=ctl perf record -D -1 --control fifo:ctl ...`: perf
    // starts disabled and is enabled here, so the profile holds the row
    // alone, not the builds and rows before it
    if let Some(fifo) = std::env::var_os("PERF_CTL_FIFO") {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .and_then(|mut ctl| ctl.write_all(b"enable\n"))
            .expect("PERF_CTL_FIFO names perf's control fifo");
    }
    let t0 = Instant::now();
    let mut times = Vec::new();
    while t0.elapsed().as_secs_f64() < 5.0 {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let runs = times.len();
    times.sort_by(f64::total_cmp);
    // a build's row is its best of a few; the median run says more than
    // the rate where a run takes a large part of the five seconds
    eprintln!(
        "  profiled {label}: {runs} runs of {n} queries in 5 s ({:.0}/s; a run {:.2} ms best, {:.2} median)",
        (runs * n) as f64 / t0.elapsed().as_secs_f64(),
        times[0],
        times[runs / 2],
    );
    std::process::exit(0)
}

/// Times `kiln` and `parry` over the same `n` queries (each returns how
/// many queries found something), prints both counts (of the first pass)
/// and adds a rate row.
///
/// Each side's time is its fastest pass, over interleaved passes of both
/// sides: at least [`MIN_PASSES`], more until each side has run
/// [`PASS_BUDGET_S`] in all (a tenth of that with `--quick`), so cold
/// caches, first-touch page faults and the timer's grain do not decide a
/// ratio. (Closures that record answers clear them first, so the last
/// pass's are kept.)
fn compare(
    rows: &mut Vec<Row>,
    mesh: &str,
    query: &str,
    what: &str,
    n: usize,
    mut kiln: impl FnMut() -> usize,
    mut parry: impl FnMut() -> usize,
) {
    // `--profile "MESH QUERY"` (a row's two first columns, e.g. "300
    // spheres rays/s"): Kiln's side of that row alone for five seconds,
    // its rate, then exit (for `perf record`); with `--peer`, the peer's
    // side, so both sides of a short row can be profiled the same way
    if profiled().is_some_and(|w| *w == format!("{mesh} {query}")) {
        let label = format!("{mesh} {query}");
        if std::env::args().any(|a| a == "--peer") {
            soak(&format!("{label} (peer)"), n, &mut || {
                std::hint::black_box(parry());
            });
        }
        soak(&label, n, &mut || {
            std::hint::black_box(kiln());
        });
    }
    // profiling another row: one pass of each side (their answers are
    // still checked), none timed further
    let budget = if profiled().is_some() {
        0.0
    } else if std::env::args().any(|a| a == "--quick") {
        PASS_BUDGET_S / 10.0
    } else {
        PASS_BUDGET_S
    };
    let min_passes = if profiled().is_some() { 1 } else { MIN_PASSES };
    let timed = |f: &mut dyn FnMut() -> usize| {
        let t0 = Instant::now();
        let found = f();
        (found, t0.elapsed().as_secs_f64())
    };
    let (mut k, mut p) = (None, None);
    let (mut kiln_s, mut parry_s) = (f64::INFINITY, f64::INFINITY);
    let (mut kiln_all, mut parry_all) = (0.0f64, 0.0f64);
    let mut passes = 0;
    while passes < min_passes || (kiln_all.min(parry_all) < budget && passes < MAX_PASSES) {
        let (found, s) = timed(&mut kiln);
        k.get_or_insert(found);
        (kiln_s, kiln_all) = (kiln_s.min(s), kiln_all + s);
        let (found, s) = timed(&mut parry);
        p.get_or_insert(found);
        (parry_s, parry_all) = (parry_s.min(s), parry_all + s);
        passes += 1;
    }
    let (k, p) = (k.unwrap_or(0), p.unwrap_or(0));
    let peer = if query.contains("obvhs") {
        "obvhs"
    } else {
        "parry"
    };
    eprintln!("  {query}: kiln {k} {what}, {peer} {p} {what} of {n}");
    rows.push(Row {
        mesh: mesh.into(),
        query: query.into(),
        kiln: n as f64 / kiln_s,
        parry: n as f64 / parry_s,
        unit: "/s",
    });
}

/// Passes [`compare`] times each side at least.
const MIN_PASSES: usize = 2;

/// Passes [`compare`] times each side at most.
const MAX_PASSES: usize = 20;

/// Seconds each side of a row runs in all before [`compare`] stops
/// adding passes (a tenth with `--quick`).
const PASS_BUDGET_S: f64 = 0.3;

/// Point rows: which solids hold each point (Kiln lists them all) and
/// whether any does (Kiln's `contains_point_any`, the question parry3d's
/// `contains_point` answers, stopping at the first).
fn point_rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    points: &[Vec3],
    target: &dyn parry3d::shape::Shape,
) {
    let identity = parry3d::math::Pose::IDENTITY;
    let parry = || {
        points
            .iter()
            .filter(|p| target.contains_point(&identity, pv(**p)))
            .count()
    };
    let mut inside = Vec::new();
    compare(
        rows,
        name,
        "points/s",
        "inside",
        points.len(),
        || {
            points
                .iter()
                .filter(|p| {
                    // the allocation-free form, as the sphere rows use
                    level.contains_point_into(**p, &Filter::ALL, &mut inside);
                    !inside.is_empty()
                })
                .count()
        },
        parry,
    );
    compare(
        rows,
        name,
        "point yes/no/s",
        "inside",
        points.len(),
        || {
            points
                .iter()
                .filter(|p| level.contains_point_any(**p, &Filter::ALL))
                .count()
        },
        parry,
    );
}

/// Sphere overlaps (Kiln: every object's closest point; parry: the deepest
/// contact) and yes/no tests against the same `target`, same spheres.
fn sphere_rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    balls: &[(Vec3, f32)],
    target: &dyn parry3d::shape::Shape,
) {
    let identity = parry3d::math::Pose::IDENTITY;
    let at = |p: Vec3| parry3d::math::Pose::translation(p.x, p.y, p.z);
    let mut buf = Vec::new();
    compare(
        rows,
        name,
        "sphere overlaps/s",
        "touching",
        balls.len(),
        || {
            balls
                .iter()
                .filter(|&&(c, r)| {
                    level.sphere_overlaps_into(c, r, &mut buf);
                    !buf.is_empty()
                })
                .count()
        },
        || {
            balls
                .iter()
                .filter(|&&(c, r)| {
                    let ball = parry3d::shape::Ball::new(r);
                    parry3d::query::contact(&at(c), &ball, &identity, target, 0.0)
                        .unwrap()
                        .is_some()
                })
                .count()
        },
    );
    compare(
        rows,
        name,
        "sphere yes/no tests/s",
        "touching",
        balls.len(),
        || {
            balls
                .iter()
                .filter(|&&(c, r)| level.sphere_touches(c, r))
                .count()
        },
        || {
            balls
                .iter()
                .filter(|&&(c, r)| {
                    let ball = parry3d::shape::Ball::new(r);
                    parry3d::query::intersection_test(&at(c), &ball, &identity, target)
                        .unwrap()
                        .intersecting
                })
                .count()
        },
    );
}

/// Sphere sweeps of `radius` up to `max_t` against the same `target`; the
/// times of impact of each side, for the callers' agreement checks.
#[allow(clippy::type_complexity)]
fn sweep_rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    sweeps: &[(Vec3, Vec3)],
    (radius, max_t): (f32, f32),
    target: &dyn parry3d::shape::Shape,
) -> (Vec<Option<f32>>, Vec<Option<f32>>) {
    let identity = parry3d::math::Pose::IDENTITY;
    let at = |p: Vec3| parry3d::math::Pose::translation(p.x, p.y, p.z);
    let ball = parry3d::shape::Ball::new(radius);
    let opts = parry3d::query::ShapeCastOptions::with_max_time_of_impact(max_t);
    let mut kiln_toi = Vec::with_capacity(sweeps.len());
    let mut parry_toi = Vec::with_capacity(sweeps.len());
    compare(
        rows,
        name,
        "sphere sweeps/s",
        "hits",
        sweeps.len(),
        || {
            kiln_toi.clear();
            kiln_toi.extend(
                sweeps
                    .iter()
                    .map(|&(c, d)| level.sphere_sweep(c, radius, d, max_t).map(|h| h.t)),
            );
            kiln_toi.iter().flatten().count()
        },
        || {
            parry_toi.clear();
            parry_toi.extend(sweeps.iter().map(|&(c, d)| {
                let zero = parry3d::math::Vector::ZERO;
                parry3d::query::cast_shapes(&at(c), pv(d), &ball, &identity, zero, target, opts)
                    .unwrap()
                    .map(|h| h.time_of_impact)
            }));
            parry_toi.iter().flatten().count()
        },
    );
    (kiln_toi, parry_toi)
}

fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

struct Counts {
    rays: usize,
    overlaps: usize,
    sweeps: usize,
}

/// Kiln's side of the mesh ray rows: how many of `qs` hit (closest hit,
/// or with `any` the any-hit test).
fn kiln_rays(level: &Level, qs: &[common::Q], any: bool) -> usize {
    qs.iter()
        .filter(|q| {
            let ray = Ray::new(q.o, q.d, q.t);
            if any {
                level.raycast_any(&ray, &Filter::ALL)
            } else {
                level.raycast(&ray, &Filter::ALL).is_some()
            }
        })
        .count()
}

/// Kiln's side of the batch rows: the same rays through
/// `Level::raycast_many` / `raycast_any_many` (on this thread, several
/// walked side by side), answers into `hits` / `any`; the hit count.
fn kiln_rays_many(
    level: &Level,
    rays: &[Ray],
    any: bool,
    hits: &mut [Option<kiln_runtime::RayHit>],
    anys: &mut [bool],
) -> usize {
    if any {
        level.raycast_any_many(rays, &Filter::ALL, anys);
        anys.iter().filter(|a| **a).count()
    } else {
        level.raycast_many(rays, &Filter::ALL, hits);
        hits.iter().filter(|h| h.is_some()).count()
    }
}

/// Builds of each kind per mesh, interleaved; the build rows keep the best.
const BUILD_ROUNDS: usize = 3;

fn run(
    name: &str,
    pos: Vec<[f32; 3]>,
    tris: Vec<[u32; 3]>,
    kind: TreeKind,
    n: &Counts,
    rows: &mut Vec<Row>,
) {
    if profiled().is_some_and(|w| !w.starts_with(name)) {
        return; // profiling another mesh's row
    }
    let nrays = n.rays;
    let ntri = tris.len();
    eprintln!("{name}: {ntri} triangles, {} vertices", pos.len());
    let scene = Scene::from_meshes(vec![SceneMesh::new(name, pos.clone(), &tris)]);

    // build: Kiln at 1 and 2 threads (bake + encode + validate) and parry,
    // interleaved, best of BUILD_ROUNDS each: on a shared machine one build
    // can take half as long again as the next
    let settings = BakeSettings::default().all_meshes().with_tree(kind);
    let (mut kiln_ms, mut parry_ms) = ([f64::INFINITY; 2], f64::INFINITY);
    let mut baked = None;
    let mut mesh = None;
    let mut parry_bytes = 0.0;
    // the pools are made before the clock starts: a build is timed, not a
    // pool's start-up (60-150 µs a pool, measured: under 0.5% of
    // sauer_pandora's build, but not the build's)
    let pools = [pool(1), pool(2)];
    // `--profile "MESH build ms (1 thread)"` (or 2 threads): that bake alone
    for (slot, threads) in [1, 2].into_iter().enumerate() {
        let label = format!("{name} build ms ({threads} thread{})", ["", "s"][slot]);
        if profiled().is_some_and(|w| *w == label) {
            if std::env::args().any(|a| a == "--peer") {
                soak(&format!("{label} (peer)"), 1, &mut || {
                    let verts: Vec<parry3d::math::Vector> = pos
                        .iter()
                        .map(|p| parry3d::math::Vector::new(p[0], p[1], p[2]))
                        .collect();
                    std::hint::black_box(TriMesh::new(verts, tris.clone()).expect("a mesh"));
                });
            }
            if std::env::args().any(|a| a == "--stages") {
                // the fastest of 40 bakes, stage by stage (the bake's own
                // report), before the row
                let fastest = (0..40)
                    .map(|_| {
                        pools[slot]
                            .install(|| bake_scene(&scene, &settings))
                            .report
                            .stages
                    })
                    .min_by(|a, b| a.building_ms().total_cmp(&b.building_ms()));
                eprintln!("  stages of the fastest of 40 bakes: {fastest:?}");
            }
            soak(&label, 1, &mut || {
                std::hint::black_box(pools[slot].install(|| bake_scene(&scene, &settings)));
            });
        }
    }
    for _ in 0..BUILD_ROUNDS {
        for (slot, threads) in [1, 2].into_iter().enumerate() {
            debug_assert_eq!(pools[slot].current_num_threads(), threads);
            let t0 = Instant::now();
            let b = pools[slot].install(|| bake_scene(&scene, &settings));
            kiln_ms[slot] = kiln_ms[slot].min(t0.elapsed().as_secs_f64() * 1e3);
            baked = Some(b);
        }
        let before = LIVE.load(Ordering::Relaxed);
        let t0 = Instant::now();
        let verts: Vec<parry3d::math::Vector> = pos
            .iter()
            .map(|p| parry3d::math::Vector::new(p[0], p[1], p[2]))
            .collect();
        let m = TriMesh::new(verts, tris.clone()).expect("parry builds the mesh");
        parry_ms = parry_ms.min(t0.elapsed().as_secs_f64() * 1e3);
        parry_bytes = (LIVE.load(Ordering::Relaxed) - before) as f64;
        mesh = Some(m);
    }
    let (baked, mesh) = (baked.unwrap(), mesh.unwrap());
    for (slot, threads) in [1, 2].into_iter().enumerate() {
        rows.push(Row {
            mesh: name.into(),
            query: format!(
                "build ms ({threads} thread{})",
                if threads == 1 { "" } else { "s" }
            ),
            kiln: kiln_ms[slot],
            parry: parry_ms,
            unit: "ms",
        });
    }
    rows.push(Row {
        mesh: name.into(),
        query: "bytes/triangle".into(),
        kiln: baked.bytes.len() as f64 / ntri as f64,
        parry: parry_bytes / ntri as f64,
        unit: "B",
    });

    // load: write, then map + validate
    let path = std::env::temp_dir().join(format!("kiln-peers-{}.kiln", std::process::id()));
    std::fs::write(&path, &baked.bytes).unwrap();
    let t0 = Instant::now();
    let level = Level::open(&path).unwrap();
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    rows.push(Row {
        mesh: name.into(),
        query: "load ms (map + validate)".into(),
        kiln: load_ms,
        parry: f64::NAN,
        unit: "ms",
    });

    let (lo, hi) = pos.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(a, b), p| (a.min(Vec3::from(*p)), b.max(Vec3::from(*p))),
    );
    let qs = rays(lo, hi, nrays);

    // one thread, same queries, same order: one call per ray, then the
    // same rays as one batch on this thread (Kiln walks several side by
    // side; parry answers them one by one either way)
    let parry_rays = |any: bool| {
        qs.iter()
            .filter(|q| {
                let r = PRay::new(pv(q.o), pv(q.d));
                if any {
                    mesh.intersects_local_ray(&r, q.t)
                } else {
                    mesh.cast_local_ray(&r, q.t, true).is_some()
                }
            })
            .count()
    };
    let batch: Vec<Ray> = qs.iter().map(|q| Ray::new(q.o, q.d, q.t)).collect();
    let (mut hits, mut anys) = (vec![None; batch.len()], vec![false; batch.len()]);
    for any in [false, true] {
        let kind = if any { "any-hit rays/s" } else { "rays/s" };
        compare(
            rows,
            name,
            kind,
            "hits",
            qs.len(),
            || kiln_rays(&level, &qs, any),
            || parry_rays(any),
        );
        compare(
            rows,
            name,
            &format!("{kind}, batch on one thread"),
            "hits",
            qs.len(),
            || kiln_rays_many(&level, &batch, any, &mut hits, &mut anys),
            || parry_rays(any),
        );
    }
    cwbvh::rows(rows, name, &level, (&pos, &tris), &qs, &batch);

    // sphere overlaps near the surface, r 0.5–2 m
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let spheres: Vec<(Vec3, f32)> = surface_points(&pos, &tris, n.overlaps, 7)
        .into_iter()
        .map(|p| {
            let r = rng.range(0.5, 2.0);
            (p + rng.unit32() * r * rng.range(0.0, 1.5), r)
        })
        .collect();
    sphere_rows(rows, name, &level, &spheres, &mesh);

    // sphere sweeps, r 0.5 m, 10 m, starting 1–3 m above the surface
    let sweeps: Vec<(Vec3, Vec3)> = surface_points(&pos, &tris, n.sweeps, 11)
        .into_iter()
        .map(|p| {
            let mut d = rng.unit32();
            d.y = -d.y.abs() * 0.5;
            (p + Vec3::Y * rng.range(1.0, 3.0), d.normalize())
        })
        .collect();
    let (kiln_toi, parry_toi) = sweep_rows(rows, name, &level, &sweeps, (0.5, 10.0), &mesh);
    // where both hit, how far apart are the times of impact (metres: |dir| = 1)?
    let pairs: Vec<(f32, f32)> = kiln_toi
        .iter()
        .zip(&parry_toi)
        .filter_map(|(k, p)| Some(((*k)?, (*p)?)))
        .collect();
    let max = pairs
        .iter()
        .map(|(k, p)| (k - p).abs())
        .fold(0.0f32, f32::max);
    let early = pairs.iter().filter(|(k, p)| p + 1e-4 < *k).count();
    eprintln!(
        "  sweep TOI |kiln - parry|: max {max:.2e} m; parry earlier by > 0.1 mm in {early} of {}",
        pairs.len()
    );
    // the worst disagreement, against Kiln's exact sphere/triangle test run
    // over every triangle (no tree): which side is off?
    let worst = (0..sweeps.len())
        .filter_map(|i| Some((i, (kiln_toi[i]? - parry_toi[i]?).abs())))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((i, _)) = worst {
        let (c, d) = sweeps[i];
        let brute = tris
            .iter()
            .filter_map(|t| {
                let p = |k: usize| Vec3::from(pos[t[k] as usize]).as_dvec3();
                kiln_geometry::sphere_triangle::sweep(
                    c.as_dvec3(),
                    0.5,
                    d.as_dvec3(),
                    10.0,
                    p(0),
                    p(1),
                    p(2),
                )
            })
            .map(|h| h.t)
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "  worst sweep {i}: kiln t {:?}, parry t {:?}, every triangle without a tree {brute}",
            kiln_toi[i], parry_toi[i]
        );
    }
    // capsule, box and hull queries, about 1 m across, within 1.5 m of the
    // surface; casts from the same poses, downwards and sideways, up to 10 m
    let oracle = shapes::Oracle::new(
        tris.iter()
            .map(|t| shapes::Piece::triangle(t.map(|k| Vec3::from(pos[k as usize]).as_dvec3())))
            .collect(),
        4.0,
    );
    let qs = shapes::Shape::set(1.0, &mut rng);
    let poses = shapes::poses_near(
        &surface_points(&pos, &tris, n.sweeps / 10, 13),
        1.0,
        &mut rng,
    );
    let motions: Vec<(Vec3, f32)> = poses
        .iter()
        .map(|_| {
            let mut d = rng.unit32();
            d.y = -d.y.abs();
            (d, 10.0)
        })
        .collect();
    let checked = (n.sweeps / 100).max(40);
    shapes::rows(
        rows, name, &level, &mesh, &oracle, &qs, &poses, &motions, checked,
    );
    shapes::character_rows(rows, name, &level, (&pos, &tris), n.rays < 100_000);
    let _ = std::fs::remove_file(&path);
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (n, counts) = if quick {
        (
            128,
            Counts {
                rays: 20_000,
                overlaps: 5_000,
                sweeps: 2_000,
            },
        )
    } else {
        (
            1024,
            Counts {
                rays: 1_000_000,
                overlaps: 200_000,
                sweeps: 100_000,
            },
        )
    };
    // `--tree aabb|sphere` measures one tree kind; both by default
    let args: Vec<String> = std::env::args().collect();
    let kinds: Vec<TreeKind> = match args.iter().position(|a| a == "--tree") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("aabb") => vec![TreeKind::Aabb],
            Some("sphere") => vec![TreeKind::Sphere],
            other => panic!("--tree takes aabb or sphere, not {other:?}"),
        },
        None => vec![TreeKind::Aabb, TreeKind::Sphere],
    };
    let mut rows = Vec::new();
    // `--dynamic`: the dynamic tree's rows alone (beside parry3d's `Bvh`)
    let dynamic_only = args.iter().any(|a| a == "--dynamic");
    if dynamic_only {
        dynamic::dynamic_rows(quick, &mut rows);
    }
    let forest_only = dynamic_only || args.iter().any(|a| a == "--forest");
    if forest_only && !dynamic_only {
        forest_rows(quick, &mut rows);
    }
    let solids_only = forest_only || args.iter().any(|a| a == "--solids");
    // `--city`: the city's rows alone
    let city_only = args.iter().any(|a| a == "--city");
    if !forest_only && !city_only && !args.iter().any(|a| a == "--meshes") {
        solid_rows(quick, &mut rows);
    }
    let (pos, tris) = if solids_only || city_only {
        (Vec::new(), Vec::new())
    } else {
        terrain(n)
    };
    for &kind in kinds.iter().filter(|_| !solids_only && !city_only) {
        let name = format!("terrain {n}x{n} {}", kind.name());
        run(&name, pos.clone(), tris.clone(), kind, &counts, &mut rows);
    }

    // a city: tall boxes over a flat ground, large empty volumes between
    // them (about 240k triangles; 16k in the quick run)
    if !solids_only {
        let (pos, tris) = city(if quick { 26 } else { 102 });
        for &kind in &kinds {
            let name = format!("city {}k {}", tris.len() / 1000, kind.name());
            run(&name, pos.clone(), tris.clone(), kind, &counts, &mut rows);
        }
    }

    let pandora = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/levels/sauer_pandora.glb");
    if city_only {
        // the city alone: no pandora rows
    } else if pandora.is_file() && !solids_only {
        // the whole level flattened to world space, so both sides see the same triangles
        let (pos, tris) = flattened(&pandora);
        for &kind in &kinds {
            let name = format!("sauer_pandora {}", kind.name());
            run(&name, pos.clone(), tris.clone(), kind, &counts, &mut rows);
        }
    } else if !solids_only {
        eprintln!("*** sauer_pandora.glb not found beside the repository: skipped ***");
    }

    println!(
        "{:<26} {:<26} {:>14} {:>14} {:>10}",
        "mesh", "figure", "kiln", "parry3d", "kiln/parry"
    );
    let cell = |v: f64, unit: &str| {
        if v.is_finite() {
            format!("{v:.1}{unit}")
        } else {
            "-".into()
        }
    };
    for r in &rows {
        let ratio = r.kiln / r.parry;
        println!(
            "{:<26} {:<26} {:>14} {:>14} {:>10}",
            r.mesh,
            r.query,
            cell(r.kiln, r.unit),
            cell(r.parry, r.unit),
            if ratio.is_finite() {
                format!("{ratio:.2}")
            } else {
                "-".into()
            }
        );
    }
    let json: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let num = |v: f64| if v.is_finite() { serde_json::json!(v) } else { serde_json::Value::Null };
            serde_json::json!({"mesh": r.mesh, "query": r.query, "kiln_per_s": num(r.kiln), "parry_per_s": num(r.parry), "ratio": num(r.kiln / r.parry), "unit": r.unit})
        })
        .collect();
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers.json");
    if let Some(parent) = out.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(&out, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    eprintln!("figures written to {}", out.display());
}

/// The solid families of the solid-shape rows.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    Hull,
    Cuboid,
    Sphere,
    Capsule,
}

/// One generated solid: Kiln's mesh (and the collider it asks for) and
/// parry's shape, both centred on the origin; placed by `rot` then `at`.
struct Solid {
    mesh: SceneMesh,
    collider: &'static str,
    parry: parry3d::shape::SharedShape,
    rot: glam::Quat,
    at: Vec3,
    size: f32,
    /// The same solid for the oracle.
    local: shapes::Local,
}

fn pv(p: Vec3) -> parry3d::math::Vector {
    parry3d::math::Vector::new(p.x, p.y, p.z)
}

fn solid(family: Family, rng: &mut Rng, at: Vec3) -> Solid {
    use parry3d::shape::SharedShape;
    // the octahedron's faces over six points (any closed mesh will do: the
    // fit uses the points)
    const OCTA: [[u32; 3]; 8] = [
        [0, 2, 4],
        [2, 1, 4],
        [1, 3, 4],
        [3, 0, 4],
        [2, 0, 5],
        [1, 2, 5],
        [3, 1, 5],
        [0, 3, 5],
    ];
    let octa = |x: f32, y: f32, z: f32| {
        vec![
            [x, 0.0, 0.0],
            [-x, 0.0, 0.0],
            [0.0, y, 0.0],
            [0.0, -y, 0.0],
            [0.0, 0.0, z],
            [0.0, 0.0, -z],
        ]
    };
    let (mesh, collider, parry, size, local) = match family {
        Family::Hull => {
            let n = 8 + (rng.f32() * 249.0) as usize;
            let scale = Vec3::new(
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
            );
            let pts: Vec<parry3d::math::Vector> = (0..n)
                .map(|_| pv(rng.unit32() * rng.f32().cbrt() * scale))
                .collect();
            let (v, t) = parry3d::transformation::convex_hull(&pts);
            let pos: Vec<[f32; 3]> = v.iter().map(|p| [p.x, p.y, p.z]).collect();
            let local =
                shapes::Local::Hull(pos.iter().map(|p| Vec3::from(*p).as_dvec3()).collect());
            let shape = SharedShape::convex_mesh(v, &t).expect("a hull");
            (
                SceneMesh::new("hull", pos, &t),
                "convex",
                shape,
                scale.max_element(),
                local,
            )
        }
        Family::Cuboid => {
            let h = Vec3::new(
                rng.range(0.2, 2.0),
                rng.range(0.2, 2.0),
                rng.range(0.2, 2.0),
            );
            (
                SceneMesh::cuboid("box", [0.0; 3], h.to_array()),
                "box",
                SharedShape::cuboid(h.x, h.y, h.z),
                h.max_element(),
                shapes::Local::Cuboid(h.as_dvec3()),
            )
        }
        Family::Sphere => {
            let r = rng.range(0.2, 2.0);
            (
                SceneMesh::new("ball", octa(r, r, r), &OCTA),
                "sphere",
                SharedShape::ball(r),
                r,
                shapes::Local::Ball(f64::from(r)),
            )
        }
        Family::Capsule => {
            let (hh, r) = (rng.range(0.2, 2.0), rng.range(0.2, 1.0));
            let mesh = SceneMesh::new("capsule", octa(r, hh + r, r), &OCTA);
            (
                mesh,
                "capsule",
                SharedShape::capsule_y(hh, r),
                hh + r,
                shapes::Local::Capsule(f64::from(hh), f64::from(r)),
            )
        }
    };
    let rot = glam::Quat::from_euler(
        glam::EulerRot::XYZ,
        rng.range(0.0, 6.3),
        rng.range(0.0, 6.3),
        rng.range(0.0, 6.3),
    );
    Solid {
        mesh,
        collider,
        parry,
        rot,
        at,
        size,
        local,
    }
}

/// Solid-shape rows: Kiln's level of solids against parry's `Compound` of
/// the same shapes, rays, points, sphere tests and sweeps aimed at them.
fn solid_rows(quick: bool, rows: &mut Vec<Row>) {
    let shapes = if quick { 300 } else { 2_000 };
    let nq = if quick { 10_000 } else { 200_000 };
    for family in [
        Family::Hull,
        Family::Cuboid,
        Family::Sphere,
        Family::Capsule,
    ] {
        let name = match family {
            Family::Hull => format!("{shapes} hulls (8-256 pts)"),
            Family::Cuboid => format!("{shapes} boxes"),
            Family::Sphere => format!("{shapes} spheres"),
            Family::Capsule => format!("{shapes} capsules"),
        };
        if profiled().is_some_and(|w| !w.starts_with(&name)) {
            continue; // profiling another family's row
        }
        // on a grid 8 m apart
        let side = (shapes as f32).cbrt().ceil() as usize;
        let mut rng = Rng(0x5EED_0000 + family as u64);
        let solids: Vec<Solid> = (0..shapes)
            .map(|i| {
                let g = Vec3::new(
                    (i % side) as f32,
                    ((i / side) % side) as f32,
                    (i / side / side) as f32,
                );
                solid(family, &mut rng, g * 8.0)
            })
            .collect();
        let mut scene = Scene::from_meshes(solids.iter().map(|s| s.mesh.clone()).collect());
        for (inst, s) in scene.instances.iter_mut().zip(&solids) {
            inst.transform =
                glam::DAffine3::from_rotation_translation(s.rot.as_dquat(), s.at.as_dvec3());
            inst.extras_collider = Some(s.collider.to_string());
        }
        // every hull whole (parry keeps every face)
        let mut settings = BakeSettings::default();
        settings.max_planes =
            kiln_baker::config::MaxPlanes::new(kiln_formats::polytope::MAX_PLANES as i64)
                .expect("in range");
        let t0 = Instant::now();
        let baked = bake_scene(&scene, &settings);
        let kiln_ms = t0.elapsed().as_secs_f64() * 1e3;
        let kinds = &baked.report.collider_kinds;
        eprintln!("{name}: Kiln shapes {kinds:?}");
        let level = Level::from_bytes(&baked.bytes).unwrap();
        let before = LIVE.load(Ordering::Relaxed);
        let t0 = Instant::now();
        let parts: Vec<(parry3d::math::Pose, parry3d::shape::SharedShape)> = solids
            .iter()
            .map(|s| {
                let q = parry3d::math::Rotation::from_xyzw(s.rot.x, s.rot.y, s.rot.z, s.rot.w);
                // a deep copy, so the shapes' bytes are counted with the tree
                let shape = parry3d::shape::SharedShape(s.parry.0.clone_dyn().into());
                (parry3d::math::Pose::from_parts(pv(s.at), q), shape)
            })
            .collect();
        let compound = parry3d::shape::Compound::new(parts);
        let parry_ms = t0.elapsed().as_secs_f64() * 1e3;
        let parry_bytes = (LIVE.load(Ordering::Relaxed) - before) as f64;
        rows.push(Row {
            mesh: name.clone(),
            query: "build ms".into(),
            kiln: kiln_ms,
            parry: parry_ms,
            unit: "ms",
        });
        rows.push(Row {
            mesh: name.clone(),
            query: "bytes/shape".into(),
            kiln: baked.bytes.len() as f64 / shapes as f64,
            parry: parry_bytes / shapes as f64,
            unit: "B",
        });

        // queries aimed at random shapes
        let mut rng = Rng(0xA11_5EED + family as u64);
        let near = |rng: &mut Rng, k: f32| {
            let s = &solids[(rng.f32() * shapes as f32) as usize % shapes];
            (s.at + rng.unit32() * s.size * k * rng.f32(), s.at)
        };
        let identity = parry3d::math::Pose::IDENTITY;
        let at = |p: Vec3| parry3d::math::Pose::translation(p.x, p.y, p.z);
        let rays: Vec<(Vec3, Vec3)> = (0..nq)
            .map(|_| {
                let (o, _) = near(&mut rng, 4.0);
                let (t, _) = near(&mut rng, 0.5);
                (o, (t - o).normalize_or(Vec3::X))
            })
            .collect();
        compare(
            rows,
            &name,
            "rays/s",
            "hits",
            nq,
            || {
                rays.iter()
                    .filter(|(o, d)| {
                        level
                            .raycast(&Ray::new(*o, *d, 100.0), &Filter::ALL)
                            .is_some()
                    })
                    .count()
            },
            || {
                rays.iter()
                    .filter(|(o, d)| {
                        use parry3d::query::RayCast;
                        compound
                            .cast_ray(&identity, &PRay::new(pv(*o), pv(*d)), 100.0, true)
                            .is_some()
                    })
                    .count()
            },
        );
        let points: Vec<Vec3> = (0..nq).map(|_| near(&mut rng, 1.2).0).collect();
        point_rows(rows, &name, &level, &points, &compound);
        let balls: Vec<(Vec3, f32)> = (0..nq)
            .map(|_| {
                let r = rng.range(0.1, 1.0);
                (near(&mut rng, 1.5).0, r)
            })
            .collect();
        sphere_rows(rows, &name, &level, &balls, &compound);
        let sweeps: Vec<(Vec3, Vec3)> = (0..nq / 2)
            .map(|_| {
                let (t, centre) = near(&mut rng, 0.5);
                let d = rng.unit32();
                (
                    centre + d * 6.0,
                    (t - (centre + d * 6.0)).normalize_or(Vec3::X),
                )
            })
            .collect();
        let (kiln_toi, parry_toi) =
            sweep_rows(rows, &name, &level, &sweeps, (0.3, 20.0), &compound);
        let max = kiln_toi
            .iter()
            .zip(&parry_toi)
            .filter_map(|(k, p)| Some(((*k)? - (*p)?).abs()))
            .fold(0.0f32, f32::max);
        eprintln!("  sweep TOI |kiln - parry| where both hit: max {max:.2e} m");
        // the worst disagreement: is the ball touching just after the
        // earlier time, by each library's own yes/no test?
        let worst = (0..sweeps.len())
            .filter_map(|i| Some((i, (kiln_toi[i]? - parry_toi[i]?).abs())))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, gap)) = worst.filter(|w| w.1 > 1e-3) {
            let (c, d) = sweeps[i];
            let (k, p) = (kiln_toi[i].unwrap(), parry_toi[i].unwrap());
            let ball = parry3d::shape::Ball::new(0.3);
            let probe = |t: f32| {
                let q = c + d * t;
                let pr = parry3d::query::intersection_test(&at(q), &ball, &identity, &compound)
                    .unwrap()
                    .intersecting;
                (level.sphere_touches(q, 0.3), pr)
            };
            eprintln!(
                "  worst sweep {i} (gap {gap:.3} m): kiln t {k}, parry t {p}; touching (kiln, parry) at kiln t+1mm {:?}, at parry t+1mm {:?}, at kiln t-1mm {:?}, at parry t-1mm {:?}",
                probe(k + 1e-3),
                probe(p + 1e-3),
                probe(k - 1e-3),
                probe(p - 1e-3)
            );
        }
        // capsule, box and hull queries aimed at the solids
        let oracle = shapes::Oracle::new(
            solids.iter().map(|s| s.local.placed(s.rot, s.at)).collect(),
            8.0,
        );
        let qs = shapes::Shape::set(1.0, &mut rng);
        let nshape = if quick { 150 } else { nq / 5 };
        let poses: Vec<Pose> = (0..nshape)
            .map(|_| Pose::new(shapes::rotation(&mut rng), near(&mut rng, 1.5).0))
            .collect();
        let motions: Vec<(Vec3, f32)> = poses
            .iter()
            .map(|p| {
                let (t, _) = near(&mut rng, 0.5);
                ((t - p.translation).normalize_or(Vec3::X), 20.0)
            })
            .collect();
        let checked = if quick { 40 } else { 1_000 };
        shapes::rows(
            rows, &name, &level, &compound, &oracle, &qs, &poses, &motions, checked,
        );
    }
    whole_level_rows(quick, rows);
    forest_rows(quick, rows);
    concave_rows(quick, rows);
}

/// Concave solids: a grid of rotated tori (the bundled shape collection's,
/// simplified within the default 5 cm) as BSP trees, against a parry3d
/// `TriMesh` of the same collider triangles placed in world space, and against
/// Kiln's own BuiltTriMesh of them (a second table row; its "parry3d" column
/// holds the BuiltTriMesh figure). Rays and sphere queries from outside run on
/// the BSP's own surface tree, so hit counts match the triangle mesh's.
fn concave_rows(quick: bool, rows: &mut Vec<Row>) {
    use kiln_baker::config::{ColliderName, Rule};
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/shape_collection.glb");
    let torus = kiln_baker::ingest::load(&path)
        .unwrap()
        .scene
        .meshes
        .into_iter()
        .find(|m| m.name == "Torus")
        .unwrap();
    // the collider the BSP is built from, to give parry and the BuiltTriMesh
    let mut one = Scene::from_meshes(vec![torus.clone()]);
    one.instances[0].extras_collider = Some("concave".into());
    let t0 = Instant::now();
    let single = bake_scene(&one, &BakeSettings::default());
    let per_object_ms = t0.elapsed().as_secs_f64() * 1e3;
    let single = Level::from_bytes(&single.bytes).unwrap();
    let shape = &single.archive().colliders[0];
    assert_eq!(shape.kind_name(), "bsp", "the torus is concave");
    let (cv, ct) = kiln_baker::export::shape_mesh(shape);
    let shapes = if quick { 100 } else { 1000 };
    let nq = if quick { 10_000 } else { 200_000 };
    let name = format!("{shapes} tori ({} faces each)", ct.len());
    let side = (shapes as f32).cbrt().ceil() as usize;
    let mut rng = Rng(0x0C07_CA7E);
    let placed: Vec<(Vec3, glam::Quat)> = (0..shapes)
        .map(|i| {
            let g = Vec3::new(
                (i % side) as f32,
                ((i / side) % side) as f32,
                (i / side / side) as f32,
            );
            let q = glam::Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.f32() * 6.3,
                rng.f32() * 6.3,
                rng.f32() * 6.3,
            );
            (g * 6.0, q)
        })
        .collect();
    let bake_as = |collider: ColliderName| {
        let mut scene = Scene::from_meshes(vec![SceneMesh::new("collider", cv.clone(), &ct)]);
        scene.instances = placed
            .iter()
            .enumerate()
            .map(|(i, (at, q))| kiln_baker::SceneInstance {
                name: format!("torus{i}"),
                mesh: 0,
                transform: glam::DAffine3::from_rotation_translation(q.as_dquat(), at.as_dvec3()),
                ..Default::default()
            })
            .collect();
        let mut settings = BakeSettings::default();
        settings.rules = vec![Rule::collider("*", collider)];
        bake_scene(&scene, &settings)
    };
    let bsp = bake_as(ColliderName::Concave);
    let tri = bake_as(ColliderName::Mesh);
    eprintln!(
        "{name}: Kiln {:?} vs {:?}; one torus prepared + built in {per_object_ms:.1} ms",
        bsp.report.collider_kinds, tri.report.collider_kinds
    );
    let bsp_level = Level::from_bytes(&bsp.bytes).unwrap();
    let tri_level = Level::from_bytes(&tri.bytes).unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    let t0 = Instant::now();
    // parry composes no triangle meshes into a Compound: one world-space
    // TriMesh of every torus, as a static level would be
    let mut verts: Vec<parry3d::math::Vector> = Vec::with_capacity(cv.len() * shapes);
    let mut indices: Vec<[u32; 3]> = Vec::with_capacity(ct.len() * shapes);
    for (at, q) in &placed {
        let base = verts.len() as u32;
        verts.extend(cv.iter().map(|v| pv(*q * Vec3::from(*v) + *at)));
        indices.extend(ct.iter().map(|t| t.map(|i| i + base)));
    }
    let compound =
        parry3d::shape::TriMesh::with_flags(verts, indices, parry3d::shape::TriMeshFlags::ORIENTED)
            .unwrap();
    let parry_ms = t0.elapsed().as_secs_f64() * 1e3;
    let parry_bytes = (LIVE.load(Ordering::Relaxed) - before) as f64;
    rows.push(Row {
        mesh: name.clone(),
        query: "bytes/shape".into(),
        kiln: bsp.bytes.len() as f64 / shapes as f64,
        parry: parry_bytes / shapes as f64,
        unit: "B",
    });
    rows.push(Row {
        mesh: name.clone(),
        query: "build ms (instances + top tree)".into(),
        kiln: bsp.report.build_ms,
        parry: parry_ms,
        unit: "ms",
    });
    let mut rng = Rng(0xB5_B5);
    let near = |rng: &mut Rng, k: f32| {
        let (at, _) = placed[(rng.f32() * shapes as f32) as usize % shapes];
        (at + rng.unit32() * 1.4 * k * rng.f32(), at)
    };
    let identity = parry3d::math::Pose::IDENTITY;
    let rays: Vec<(Vec3, Vec3)> = (0..nq)
        .map(|_| {
            let (o, _) = near(&mut rng, 4.0);
            let (t, _) = near(&mut rng, 0.7);
            (o, (t - o).normalize_or(Vec3::X))
        })
        .collect();
    let points: Vec<Vec3> = (0..nq).map(|_| near(&mut rng, 1.2).0).collect();
    let balls: Vec<(Vec3, f32)> = (0..nq)
        .map(|_| {
            let r = rng.range(0.05, 0.5);
            (near(&mut rng, 1.5).0, r)
        })
        .collect();
    let sweeps: Vec<(Vec3, Vec3)> = (0..nq / 2)
        .map(|_| {
            let (t, centre) = near(&mut rng, 0.7);
            let d = rng.unit32();
            let o = centre + d * 4.0;
            (o, (t - o).normalize_or(Vec3::X))
        })
        .collect();
    for (label, other) in [
        ("vs parry3d TriMesh", None),
        ("vs Kiln BuiltTriMesh", Some(&tri_level)),
    ] {
        let row = format!("{name}, BSP {label}");
        compare(
            rows,
            &row,
            "rays/s",
            "hits",
            nq,
            || {
                rays.iter()
                    .filter(|(o, d)| {
                        bsp_level
                            .raycast(&Ray::new(*o, *d, 100.0), &Filter::ALL)
                            .is_some()
                    })
                    .count()
            },
            || match other {
                Some(l) => rays
                    .iter()
                    .filter(|(o, d)| l.raycast(&Ray::new(*o, *d, 100.0), &Filter::ALL).is_some())
                    .count(),
                None => rays
                    .iter()
                    .filter(|(o, d)| {
                        compound
                            .cast_ray(&identity, &PRay::new(pv(*o), pv(*d)), 100.0, true)
                            .is_some()
                    })
                    .count(),
            },
        );
        if let Some(l) = other {
            compare(
                rows,
                &row,
                "sphere yes/no tests/s",
                "touching",
                nq,
                || {
                    balls
                        .iter()
                        .filter(|&&(c, r)| bsp_level.sphere_touches(c, r))
                        .count()
                },
                || {
                    balls
                        .iter()
                        .filter(|&&(c, r)| l.sphere_touches(c, r))
                        .count()
                },
            );
            compare(
                rows,
                &row,
                "sphere sweeps/s",
                "hits",
                nq / 2,
                || {
                    sweeps
                        .iter()
                        .filter(|&&(c, d)| bsp_level.sphere_sweep(c, 0.2, d, 10.0).is_some())
                        .count()
                },
                || {
                    sweeps
                        .iter()
                        .filter(|&&(c, d)| l.sphere_sweep(c, 0.2, d, 10.0).is_some())
                        .count()
                },
            );
        } else {
            point_rows(rows, &row, &bsp_level, &points, &compound);
            sphere_rows(rows, &row, &bsp_level, &balls, &compound);
            sweep_rows(rows, &row, &bsp_level, &sweeps, (0.2, 10.0), &compound);
        }
    }
}

/// many-cubes baked with classification on (boxes, polytopes) against the
/// same level as triangle meshes: bytes and queries per second, Kiln only
/// (the "parry3d" column holds the all-BuiltTriMesh figure).
fn whole_level_rows(quick: bool, rows: &mut Vec<Row>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/levels/many-cubes.gltf");
    if !path.is_file() {
        eprintln!(
            "*** many-cubes.gltf not found beside the repository: whole-level row skipped ***"
        );
        return;
    }
    let n = if quick { 10_000 } else { 200_000 };
    let on = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
    let off = kiln_baker::bake_file(&path, &BakeSettings::default().all_meshes()).unwrap();
    eprintln!("many-cubes classified: {:?}", on.report.collider_kinds);
    let (a, b) = (
        Level::from_bytes(&on.bytes).unwrap(),
        Level::from_bytes(&off.bytes).unwrap(),
    );
    let name = "many-cubes: classified (parry col.: all BuiltTriMesh)";
    rows.push(Row {
        mesh: name.into(),
        query: "bytes".into(),
        kiln: on.bytes.len() as f64,
        parry: off.bytes.len() as f64,
        unit: "B",
    });
    let lo = Vec3::from(a.archive().top.min.map(|x| x.to_native()));
    let hi = Vec3::from(a.archive().top.max.map(|x| x.to_native()));
    let qs = rays(lo, hi, n);
    compare(
        rows,
        name,
        "rays/s",
        "hits",
        qs.len(),
        || {
            qs.iter()
                .filter(|q| a.raycast(&Ray::new(q.o, q.d, q.t), &Filter::ALL).is_some())
                .count()
        },
        || {
            qs.iter()
                .filter(|q| b.raycast(&Ray::new(q.o, q.d, q.t), &Filter::ALL).is_some())
                .count()
        },
    );
    let mut rng = Rng(77);
    let balls: Vec<(Vec3, f32)> = (0..n)
        .map(|_| {
            (
                lo + (hi - lo) * Vec3::new(rng.f32(), rng.f32(), rng.f32()),
                rng.range(0.1, 1.0),
            )
        })
        .collect();
    compare(
        rows,
        name,
        "sphere yes/no tests/s",
        "touching",
        n,
        || {
            balls
                .iter()
                .filter(|&&(c, r)| a.sphere_touches(c, r))
                .count()
        },
        || {
            balls
                .iter()
                .filter(|&&(c, r)| b.sphere_touches(c, r))
                .count()
        },
    );
}

/// A forest: one tree mesh (a trunk box under a pyramid crown, 10
/// triangles) placed by `EXT_mesh_gpu_instancing` at 1M (quick: 10k)
/// jittered grid points, turned about y and scaled 0.8–1.2. Written as a
/// real .glb and baked through ingest; Kiln only (bake time, bytes per
/// instance, rays and sphere tests per second).
fn forest_rows(quick: bool, rows: &mut Vec<Row>) {
    let n: usize = if quick { 10_000 } else { 1_000_000 };
    let side = (n as f64).sqrt().ceil() as usize;
    let mut rng = Rng(0xF0_4E57);
    let mut t = Vec::with_capacity(n * 12);
    let mut r = Vec::with_capacity(n * 16);
    let mut sc = Vec::with_capacity(n * 12);
    for i in 0..n {
        let p = [
            (i % side) as f32 * 4.0 + rng.range(-1.0, 1.0),
            0.0,
            (i / side) as f32 * 4.0 + rng.range(-1.0, 1.0),
        ];
        let q = glam::Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU));
        let s = rng.range(0.8, 1.2);
        t.extend(p.iter().flat_map(|v| v.to_le_bytes()));
        r.extend(q.to_array().iter().flat_map(|v| v.to_le_bytes()));
        sc.extend([s; 3].iter().flat_map(|v| v.to_le_bytes()));
    }
    // trunk: a 0.3 × 2 × 0.3 box; crown: a pyramid from y 1.5 to 5
    let pos: Vec<f32> = vec![
        -0.15, 0.0, -0.15, 0.15, 0.0, -0.15, 0.15, 0.0, 0.15, -0.15, 0.0, 0.15, //
        -1.5, 1.5, -1.5, 1.5, 1.5, -1.5, 1.5, 1.5, 1.5, -1.5, 1.5, 1.5, 0.0, 5.0, 0.0,
    ];
    let idx: Vec<u16> = vec![
        0, 1, 5, 0, 5, 4, 1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4,
        7, // trunk sides up to the crown
        4, 5, 8, 5, 6, 8, 6, 7, 8, 7, 4, 8, // crown
        0, 3, 2, 0, 2, 1, 4, 6, 5, 4, 7, 6, // bottoms
    ];
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    for b in [
        pos.iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
        idx.iter().flat_map(|v| v.to_le_bytes()).collect(),
        t,
        r,
        sc,
    ] {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views
            .push(serde_json::json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": b.len()}));
        bin.extend_from_slice(&b);
    }
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": ["EXT_mesh_gpu_instancing"],
        "extensionsRequired": ["EXT_mesh_gpu_instancing"],
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Tree", "mesh": 0, "extensions": {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": 2, "ROTATION": 3, "SCALE": 4}}}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 9, "type": "VEC3", "min": [-1.5, 0, -1.5], "max": [1.5, 5, 1.5]},
            {"bufferView": 1, "componentType": 5123, "count": idx.len(), "type": "SCALAR"},
            {"bufferView": 2, "componentType": 5126, "count": n, "type": "VEC3"},
            {"bufferView": 3, "componentType": 5126, "count": n, "type": "VEC4"},
            {"bufferView": 4, "componentType": 5126, "count": n, "type": "VEC3"}
        ],
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}]
    });
    let glb = kiln_baker::export::glb(&doc, bin);
    let path = std::env::temp_dir().join(format!("kiln-forest-{}.glb", std::process::id()));
    std::fs::write(&path, &glb).unwrap();
    let name = format!("forest, {n} instances");
    let t0 = Instant::now();
    let baked = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
    let bake_ms = t0.elapsed().as_secs_f64() * 1e3;
    let _ = std::fs::remove_file(&path);
    eprintln!(
        "{name}: {} shapes {:?}, {} bytes",
        baked.report.colliders,
        baked.report.collider_kinds,
        baked.bytes.len()
    );
    let nan = f64::NAN;
    rows.push(Row {
        mesh: name.clone(),
        query: "bake ms (ingest + build)".into(),
        kiln: bake_ms,
        parry: nan,
        unit: "ms",
    });
    rows.push(Row {
        mesh: name.clone(),
        query: "bytes/instance".into(),
        kiln: baked.bytes.len() as f64 / n as f64,
        parry: nan,
        unit: "B",
    });
    let t0 = Instant::now();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    rows.push(Row {
        mesh: name.clone(),
        query: "load ms (validate)".into(),
        kiln: t0.elapsed().as_secs_f64() * 1e3,
        parry: nan,
        unit: "ms",
    });
    let extent = side as f32 * 4.0;
    let nq = if quick { 10_000 } else { 200_000 };
    // rays from eye height into the forest, and straight down
    let qs: Vec<(Vec3, Vec3)> = (0..nq)
        .map(|i| {
            let o = Vec3::new(rng.range(0.0, extent), 1.7, rng.range(0.0, extent));
            if i % 2 == 0 {
                let a = rng.range(0.0, std::f32::consts::TAU);
                (o, Vec3::new(a.cos(), rng.range(-0.05, 0.05), a.sin()))
            } else {
                (o + Vec3::Y * 20.0, Vec3::NEG_Y)
            }
        })
        .collect();
    let t0 = Instant::now();
    let hits = qs
        .iter()
        .filter(|(o, d)| {
            level
                .raycast(&Ray::new(*o, *d, 100.0), &Filter::ALL)
                .is_some()
        })
        .count();
    let s = t0.elapsed().as_secs_f64();
    eprintln!("  rays: {hits} hits of {nq}");
    rows.push(Row {
        mesh: name.clone(),
        query: "rays/s".into(),
        kiln: nq as f64 / s,
        parry: nan,
        unit: "/s",
    });
    let t0 = Instant::now();
    let touching = qs
        .iter()
        .filter(|(o, _)| level.sphere_touches(*o, 0.5))
        .count();
    let s = t0.elapsed().as_secs_f64();
    eprintln!("  sphere yes/no: {touching} touching of {nq}");
    rows.push(Row {
        mesh: name,
        query: "sphere yes/no tests/s".into(),
        kiln: nq as f64 / s,
        parry: nan,
        unit: "/s",
    });
}
