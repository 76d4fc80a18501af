//! The decomposition bench: convex pieces made by Kiln (on one thread and
//! on two, with the concavity bound set to CoACD's default threshold in
//! metres) and by the peers — CoACD (Wei et al., SIGGRAPH 2022) and
//! V-HACD 4 — for every concave prop of the shared levels and samples and
//! for shapes whose least piece count is known, judged by one measure
//! ([`kiln_tests::decomposition::measure`]): concavity, coverage, piece
//! count, hull vertices, wall time (Kiln's from the render mesh: its
//! low-poly surface and BSP tree, then the pieces).
//!
//! ```text
//! python3 -m venv target/decomp-venv && target/decomp-venv/bin/pip install coacd vhacdx numpy
//! cargo run --release -p kiln-tests --example decomposition [-- FILTER]
//! ```
//!
//! The peers run through `tests/tools/decompose_peers.py` in the Python of
//! `$KILN_DECOMP_PYTHON` (default `target/decomp-venv/bin/python`); a peer
//! that cannot be had is skipped with a line saying so. `FILTER` keeps the
//! objects whose name contains it.

use glam::DVec3;
use kiln_baker::{BakeSettings, bake_scene};
use kiln_runtime::Level;
use kiln_tests::decomposition::{
    bake_pieces, cells_surface, indexed, known_shapes, measure, piece_points,
};
use kiln_tests::solid::Solid;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Samples per surface for the measure (every vertex is taken too): the
/// judging is brute force, samples × triangles.
const SAMPLES: usize = 4_000;

/// The concave props (the objects baked as BSP trees) of a level file, as
/// (name, world triangles of the render mesh).
fn concave_props(path: &Path) -> Vec<(String, Vec<[DVec3; 3]>)> {
    let Ok(scene) = kiln_baker::ingest::load(path).map(|i| i.scene) else {
        return Vec::new();
    };
    let baked = bake_scene(&scene, &BakeSettings::default());
    let Ok(level) = Level::from_bytes(&baked.bytes) else {
        return Vec::new();
    };
    let a = level.archive();
    let concave: Vec<String> = level
        .objects()
        .filter(|&o| {
            let i = o.index() as usize;
            a.colliders[a.instances[i].collider.to_native() as usize].kind_name() == "bsp"
        })
        .filter_map(|o| level.object_name(o).map(|n| n.into_owned()))
        .collect();
    let mut by_instance: HashMap<usize, Vec<[DVec3; 3]>> = HashMap::new();
    for t in scene.world_triangles() {
        by_instance.entry(t.instance).or_default().push(t.v);
    }
    let mut out: Vec<(String, Vec<[DVec3; 3]>)> = by_instance
        .into_iter()
        .filter(|(i, _)| concave.contains(&scene.instances[*i].name))
        .map(|(i, tris)| {
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            (format!("{file} {}", scene.instances[i].name), tris)
        })
        .collect();
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

/// A peer's pieces and wall time, or why not.
fn peer(python: &Path, tool: &str, tris: &[[DVec3; 3]]) -> Result<(Vec<Vec<DVec3>>, f64), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/decompose_peers.py");
    let (vertices, triangles) = indexed(tris);
    let input = serde_json::json!({"vertices": vertices, "triangles": triangles}).to_string();
    // a peer may take many minutes on a large mesh: coreutils' `timeout`
    // stops it after `$KILN_DECOMP_PEER_SECONDS` (default 600)
    let limit = std::env::var("KILN_DECOMP_PEER_SECONDS").unwrap_or_else(|_| "600".into());
    let mut child = Command::new("timeout")
        .arg(&limit)
        .arg(python)
        .arg(&script)
        .arg(tool)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(input.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.code() == Some(124) {
        return Err(format!("{tool} ran past {limit} s"));
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("failed").to_string());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let pieces = v["pieces"]
        .as_array()
        .ok_or("no pieces")?
        .iter()
        .map(|p| {
            p.as_array()
                .into_iter()
                .flatten()
                .map(|q| {
                    let c = |k: usize| q[k].as_f64().unwrap_or(f64::NAN);
                    DVec3::new(c(0), c(1), c(2))
                })
                .collect()
        })
        .collect();
    Ok((pieces, v["seconds"].as_f64().unwrap_or(f64::NAN)))
}

/// Kiln's pieces of a render mesh as a bake makes them ([`bake_pieces`])
/// and the wall time on `threads` threads, with the concavity bound
/// `bound` (m).
fn kiln(tris: &[[DVec3; 3]], bound: f64, threads: usize) -> Result<(Vec<Vec<DVec3>>, f64), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let b = pool.install(|| bake_pieces(tris, bound, 256))?;
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "  kiln on {threads} thread(s), bound {bound:.4}: {} cells merged; {} pieces given as a box, sphere or capsule; stated concavity {:.4}, coverage {:.4}",
        b.decomposition.cells,
        b.decomposition.primitives.iter().flatten().count(),
        b.concavity,
        b.coverage
    );
    Ok((piece_points(&b.decomposition), seconds))
}

/// CoACD's default threshold (0.05 of a mesh scaled to a longest side of
/// 2) in metres for these triangles.
fn coacd_bound(tris: &[[DVec3; 3]]) -> f64 {
    let (lo, hi) = tris.iter().flatten().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    0.05 * 0.5 * (hi - lo).max_element()
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var_os("KILN_DECOMP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/decomp-venv/bin/python"));
    let mut objects: Vec<(String, Vec<[DVec3; 3]>, Option<usize>)> = known_shapes()
        .into_iter()
        .map(|(name, cells, n)| (format!("known: {name}"), cells_surface(&cells), Some(n)))
        .collect();
    let mut files: Vec<PathBuf> = ["../shared/levels", "samples"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "glb" || x == "gltf"))
        .collect();
    // a sample also among the shared levels is measured once
    files.sort_by_key(|p| p.file_name().map(|n| n.to_owned()));
    files.dedup_by_key(|p| p.file_name().map(|n| n.to_owned()));
    for f in &files {
        objects.extend(concave_props(f).into_iter().map(|(n, t)| (n, t, None)));
    }
    objects.retain(|o| o.0.contains(&filter));
    println!(
        "{:<44} {:>9} {:<7} {:>6} {:>5} {:>9} {:>9} {:>9}",
        "object", "triangles", "peer", "pieces", "verts", "concavity", "coverage", "seconds"
    );
    let mut skipped = Vec::new();
    // (object, tool) -> (pieces, concavity, seconds), for the summary
    let mut rows: HashMap<(String, &str), (usize, f64, f64)> = HashMap::new();
    for (name, tris, known) in &objects {
        let solid = Solid::new(tris.clone());
        let bound = coacd_bound(tris);
        for tool in ["kiln", "kiln-2t", "coacd", "vhacd"] {
            let run = match tool {
                "kiln" => kiln(tris, bound, 1),
                "kiln-2t" => kiln(tris, bound, 2),
                _ => peer(&python, tool, tris),
            };
            match run {
                Ok((pieces, seconds)) => {
                    let m = measure(&solid, &pieces, SAMPLES, 1);
                    rows.insert((name.clone(), tool), (m.pieces, m.concavity, seconds));
                    let mut notes = Vec::new();
                    if m.flat > 0 {
                        notes.push(format!("{} flat, left out", m.flat));
                    }
                    if let Some(n) = known {
                        notes.push(format!("least: {n}"));
                    }
                    println!(
                        "{:<44} {:>9} {:<7} {:>6} {:>5} {:>9.4} {:>9.4} {:>9.2}  {}",
                        name,
                        tris.len(),
                        tool,
                        m.pieces,
                        m.vertices,
                        m.concavity,
                        m.coverage,
                        seconds,
                        notes.join("; ")
                    );
                }
                Err(e) if e.contains("ran past") => {
                    println!("{:<44} {:>9} {:<7} {e}", name, tris.len(), tool);
                }
                Err(e) => {
                    if !skipped.iter().any(|(t, _)| *t == tool) {
                        skipped.push((tool, e));
                    }
                }
            }
        }
    }
    summary(
        &objects.iter().map(|o| o.0.clone()).collect::<Vec<_>>(),
        &rows,
    );
    for (tool, why) in skipped {
        println!("SKIPPED {tool}: {why} (see this example's header to install it)");
    }
}

/// A tool's figures for one object: pieces, concavity, seconds.
type Row = (usize, f64, f64);

/// The issue's targets over the objects every tool ran on: Kiln's
/// concavity no worse than CoACD's, the median piece counts, at least 20×
/// CoACD's speed, faster than V-HACD (one thread each).
fn summary(names: &[String], rows: &HashMap<(String, &str), (usize, f64, f64)>) {
    let both: Vec<(&Row, &Row, Option<&Row>)> = names
        .iter()
        .filter_map(|n| {
            let k = rows.get(&(n.clone(), "kiln"))?;
            let c = rows.get(&(n.clone(), "coacd"))?;
            Some((k, c, rows.get(&(n.clone(), "vhacd"))))
        })
        .collect();
    if both.is_empty() {
        println!("summary: no object has both Kiln's and CoACD's row");
        return;
    }
    let n = both.len();
    let median = |mut v: Vec<usize>| {
        v.sort_unstable();
        let m = v.len() / 2;
        if v.len().is_multiple_of(2) {
            (v[m - 1] + v[m]) as f64 / 2.0
        } else {
            v[m] as f64
        }
    };
    let no_worse = both.iter().filter(|(k, c, _)| k.1 <= c.1).count();
    let fast = both.iter().filter(|(k, c, _)| 20.0 * k.2 <= c.2).count();
    let with_v: Vec<_> = both
        .iter()
        .filter_map(|(k, _, v)| Some((k, (*v)?)))
        .collect();
    let beats_v = with_v.iter().filter(|(k, v)| k.2 < v.2).count();
    println!(
        "summary over {n} objects: concavity no worse than CoACD's on {no_worse}; median pieces {} (Kiln) against {} (CoACD); at least 20x CoACD on {fast}; faster than V-HACD on {beats_v} of {}",
        median(both.iter().map(|b| b.0.0).collect()),
        median(both.iter().map(|b| b.1.0).collect()),
        with_v.len()
    );
}
