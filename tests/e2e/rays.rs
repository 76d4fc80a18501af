//! Ray casts against brute force on every shared level, and adversarial
//! rays through the shared edges and vertices of closed meshes.

use glam::Vec3;
use kiln_baker::{BakeSettings, bake_file, ingest};
use kiln_formats::TreeKind;
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::{
    Oracle, Rng, TestRay, both_kinds, levels_dir, ray_mix, scene_bounds, scene_order,
};
use std::path::Path;

/// Rays per level (at least 20k, so every level gets rays through shared
/// edges and vertices as well as through faces).
const RAYS: usize = 21_000;
/// Distance, in multiples of the coordinates' magnitude, that separates
/// "clearly inside/outside a triangle" from "on an edge within f32
/// rounding" (the archive is f32, the oracle f64): 32 ulps.
const SLACK_ULPS: f64 = 32.0 * f32::EPSILON as f64;

#[derive(Default, Debug)]
struct Tally {
    rays: usize,
    hits: usize,
    agree: usize,
    ambiguous: usize,
    failures: Vec<String>,
}

/// Both tree kinds of one level, each with its instances' scene order.
fn both_kinds_of(path: &Path) -> Vec<(TreeKind, Level, Vec<usize>)> {
    both_kinds(|s| bake_file(path, s).unwrap().bytes)
        .into_iter()
        .map(|(kind, level)| {
            let sources = scene_order(&level);
            (kind, level, sources)
        })
        .collect()
}

/// Checks every ray on both tree kinds against one brute-force answer.
fn check_level(path: &Path) -> Vec<(TreeKind, Tally)> {
    let scene = ingest::load(path).unwrap().scene;
    let levels = both_kinds_of(path);
    let oracle = Oracle::new(&scene);
    let (lo, hi) = scene_bounds(oracle.triangles());
    let scale = lo.abs().max(hi.abs()).max_element() as f64 + 1.0;
    let mut rays = ray_mix(lo, hi, RAYS, 0x5eed ^ path.to_string_lossy().len() as u64);
    // rays aimed at vertices and edge midpoints of the level itself
    let mut r = Rng::new(99);
    let tris = oracle.triangles();
    for i in 0..RAYS / 4 {
        let t = &tris[r.below(tris.len())];
        let target = if i % 2 == 0 {
            t.v[r.below(3)]
        } else {
            let k = r.below(3);
            (t.v[k] + t.v[(k + 1) % 3]) * 0.5
        }
        .as_vec3();
        let origin = target + r.unit32() * r.range(0.1, 50.0);
        rays.push(TestRay {
            origin,
            dir: target - origin,
            max_t: 2.0,
        });
    }
    let mut tallies: Vec<Tally> = levels.iter().map(|_| Tally::default()).collect();
    let mixed = rays.len().min(RAYS);
    // the same rays as one batch on one thread, closest and any hit (side
    // by side on archives large enough; the runtime's unit tests force it
    // on small ones): each answer must be the single ray's, bit for bit
    let queries: Vec<Ray> = rays
        .iter()
        .map(|r| Ray::new(r.origin, r.dir, r.max_t))
        .collect();
    let many: Vec<(Vec<Option<kiln_runtime::RayHit>>, Vec<bool>)> = levels
        .iter()
        .map(|(_, level, _)| {
            let mut hits = vec![None; queries.len()];
            level.raycast_many(&queries, &Filter::ALL, &mut hits);
            let mut any = vec![false; queries.len()];
            level.raycast_any_many(&queries, &Filter::ALL, &mut any);
            (hits, any)
        })
        .collect();
    for (ri, ray) in rays.iter().enumerate() {
        // positions carry f32 rounding of their magnitude; along a ray at
        // angle θ to a surface that is |Δt| = Δp / (|dir| cos θ)
        let magnitude = scale + ray.origin.abs().max_element() as f64;
        let slack = SLACK_ULPS * magnitude;
        let dir_len = ray.dir.length() as f64;
        let tol = |t: f64, cos: f64| 1e-4 * t.max(1.0) + slack / (dir_len * cos.max(1e-3));
        let max_t = ray.max_t as f64;
        let clear = oracle.closest(ray, -slack, max_t * (1.0 - 1e-6));
        let mut near_miss = None;
        if ri % 256 == 0 {
            // the oracle's boxes skip only what cannot answer
            let near = oracle.closest(ray, slack, max_t);
            assert_eq!(
                clear,
                oracle.closest_of_all(ray, -slack, max_t * (1.0 - 1e-6))
            );
            assert_eq!(near, oracle.closest_of_all(ray, slack, max_t), "{ray:?}");
            near_miss = Some(near);
        }
        for (((_, level, sources), tally), (many_hits, many_any)) in
            levels.iter().zip(&mut tallies).zip(&many)
        {
            // rays aimed exactly at edges and vertices are ambiguous for the
            // oracle by construction; only count ambiguity on the random mix
            let mut ambiguous = || {
                if ri < mixed {
                    tally.ambiguous += 1;
                }
            };
            tally.rays += 1;
            let kiln = level.raycast(&queries[ri], &Filter::ALL);
            if many_hits[ri] != kiln {
                tally.failures.push(format!(
                    "raycast_many answered {:?}, raycast {kiln:?} for {ray:?}",
                    many_hits[ri]
                ));
            }
            if many_any[ri] != level.raycast_any(&queries[ri], &Filter::ALL) {
                tally.failures.push(format!(
                    "raycast_any_many and raycast_any differ for {ray:?}"
                ));
            }
            match kiln {
                None => {
                    if let Some(c) = clear {
                        tally
                            .failures
                            .push(format!("missed a clear hit {c:?} for {ray:?}"));
                    } else if near_miss
                        .get_or_insert_with(|| oracle.closest(ray, slack, max_t))
                        .is_none()
                    {
                        tally.agree += 1;
                    } else {
                        ambiguous();
                    }
                }
                Some(h) => {
                    tally.hits += 1;
                    let inst = sources[h.object.index() as usize];
                    let t = h.t as f64;
                    // the reported triangle really is on the ray at t
                    let Some(feature) = h.feature else {
                        tally
                            .failures
                            .push(format!("hit with no feature (inside a solid?) {h:?}"));
                        continue;
                    };
                    match oracle.t_on(ray, inst, feature, slack) {
                        Some((ot, cos)) if (ot - t).abs() <= tol(ot, cos) => {}
                        other => tally.failures.push(format!(
                            "hit {h:?} (instance {inst}) is not on the ray (oracle t {other:?}) for {ray:?}"
                        )),
                    }
                    if (h.point - (ray.origin + ray.dir * h.t)).length()
                        > 1e-3 * ray.dir.length() * h.t.max(1.0)
                    {
                        tally.failures.push(format!("hit point off the ray: {h:?}"));
                    }
                    match clear {
                        Some(c) if t > c.t + tol(c.t, c.cos) => tally.failures.push(format!(
                            "hit at t={t} but a clear hit exists at t={} ({c:?}) for {ray:?}",
                            c.t
                        )),
                        Some(c) if c.instance == inst && c.source_id == feature => tally.agree += 1,
                        Some(c) if (c.t - t).abs() <= tol(c.t, c.cos) => tally.agree += 1, // exact tie
                        _ => ambiguous(),
                    }
                }
            }
        }
    }
    levels.iter().map(|l| l.0).zip(tallies).collect()
}

#[test]
fn rays_match_brute_force_on_every_shared_level() {
    let Some(dir) = levels_dir() else { return };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            (n.ends_with(".glb") || n.ends_with(".gltf")) && !n.contains("draco")
        })
        .collect();
    files.sort();
    // levels in parallel on a pool of this test's own: a level takes tens
    // of seconds, and on the global pool it would hold the workers that the
    // other tests' bakes wait for
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
        .build()
        .expect("a thread pool");
    let results: Vec<(String, TreeKind, Tally)> = pool.install(|| {
        use rayon::prelude::*;
        files
            .par_iter()
            .flat_map_iter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                check_level(p)
                    .into_iter()
                    .map(move |(kind, t)| (name.clone(), kind, t))
            })
            .collect()
    });
    let mut failed = false;
    for (name, kind, t) in &results {
        let name = format!("{name} ({})", kind.name());
        eprintln!(
            "{name:48} rays {:6} hits {:6} agree {:6} ambiguous {:4} failures {}",
            t.rays,
            t.hits,
            t.agree,
            t.ambiguous,
            t.failures.len()
        );
        for f in t.failures.iter().take(5) {
            eprintln!("    {f}");
        }
        failed |= !t.failures.is_empty();
        // cases within f32 rounding of an edge, which the oracle cannot
        // decide, stay rare (under 2% of the random mix; dense meshes such
        // as FlightHelmet have the most edges per ray)
        assert!(
            t.ambiguous * 50 <= t.rays,
            "{name}: {} ambiguous of {}",
            t.ambiguous,
            t.rays
        );
        assert!(t.rays >= 20_000);
    }
    assert!(!failed, "some rays disagree with brute force");
}

/// A mesh instance is convex if every vertex lies on the inner side of every face plane.
fn convex_instances(scene: &kiln_baker::Scene) -> Vec<usize> {
    (0..scene.instances.len())
        .filter(|&i| {
            let m = &scene.meshes[scene.instances[i].mesh];
            let p = |k: u32| Vec3::from(m.positions[k as usize]).as_dvec3();
            let size = m.positions.iter().fold(0.0f64, |a, v| {
                a.max(Vec3::from(*v).abs().max_element() as f64)
            });
            m.triangles.iter().all(|t| {
                let n = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])).normalize();
                m.positions
                    .iter()
                    .all(|v| n.dot(Vec3::from(*v).as_dvec3() - p(t[0])) <= 1e-4 * size.max(1.0))
            })
        })
        .collect()
}

#[test]
fn rays_through_shared_edges_and_vertices_of_closed_meshes_never_slip_through() {
    let Some(dir) = levels_dir() else { return };
    for file in ["khr_Box.glb", "many-cubes.gltf", "shape_collection.glb"] {
        let path = dir.join(file);
        let scene = ingest::load(&path).unwrap().scene;
        let levels = both_kinds_of(&path);
        let convex = convex_instances(&scene);
        assert!(!convex.is_empty(), "{file}: some convex closed meshes");
        let mut rng = Rng::new(7);
        let mut rays = 0;
        for &ii in &convex {
            let inst = &scene.instances[ii];
            let m = &scene.meshes[inst.mesh];
            let world = |k: u32| {
                inst.transform
                    .transform_point3(Vec3::from(m.positions[k as usize]).as_dvec3())
            };
            let n = m.positions.len() as f64;
            let centre = m
                .positions
                .iter()
                .fold(glam::DVec3::ZERO, |a, v| a + Vec3::from(*v).as_dvec3())
                / n;
            let centre = inst.transform.transform_point3(centre);
            for t in &m.triangles {
                for k in 0..3 {
                    for target in [world(t[k]), (world(t[k]) + world(t[(k + 1) % 3])) * 0.5] {
                        // from outside, through the target, towards the inside
                        let away = target - centre;
                        let origin = target + away * (0.5 + 4.0 * rng.f32() as f64);
                        let (o, tg) = (origin.as_vec3(), target.as_vec3());
                        for (kind, level, _) in &levels {
                            let hit = level.raycast(&Ray::new(o, tg - o, 2.0), &Filter::ALL);
                            rays += 1;
                            // the f32 direction carries a few ulps of the
                            // coordinates' magnitude; a slip-through would
                            // hit the far side, a whole cube or sphere later
                            let slack = 1e-4
                                + 16.0 * f32::EPSILON * tg.abs().max_element().max(1.0)
                                    / (tg - o).length();
                            let ok = hit.is_some_and(|h| h.t <= 1.0 + slack);
                            assert!(
                                ok,
                                "{file} ({}): ray {o} -> {tg} slipped through ({hit:?})",
                                kind.name()
                            );
                        }
                    }
                }
            }
        }
        eprintln!(
            "{file}: {rays} rays (both tree kinds) at shared edges and vertices, none slipped through"
        );
    }
}

#[test]
fn mirrored_instances_keep_the_gltf_front_face_and_any_hit_agrees() {
    use glam::{DAffine3, DQuat, DVec3};
    use kiln_baker::{SceneInstance, SceneMesh, bake_scene};
    // normal (v1-v0)×(v2-v0) = X×Z = -Y: the front face looks down
    let tri = SceneMesh::new(
        "t",
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        &[[0, 1, 2]],
    );
    let mirror = DAffine3::from_scale_rotation_translation(
        DVec3::new(-1.0, 1.0, 1.0),
        DQuat::IDENTITY,
        DVec3::new(5.0, 0.0, 0.0),
    );
    let scene = kiln_baker::Scene {
        meshes: vec![tri],
        instances: vec![
            SceneInstance {
                name: "plain".into(),
                mesh: 0,
                transform: DAffine3::IDENTITY,
                ..SceneInstance::default()
            },
            SceneInstance {
                name: "mirrored".into(),
                mesh: 0,
                transform: mirror,
                ..SceneInstance::default()
            },
        ],
        ..kiln_baker::Scene::default()
    };
    let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default().all_meshes()).bytes)
        .unwrap();
    for (x, name) in [(0.25f32, "plain"), (4.75, "mirrored")] {
        let up = level
            .raycast(
                &Ray::new(Vec3::new(x, -1.0, 0.25), Vec3::Y, 10.0),
                &Filter::ALL,
            )
            .unwrap();
        assert_eq!(level.object_name(up.object).unwrap_or_default(), name);
        assert!(up.front_face, "{name}: from below is the front");
        assert_eq!(up.normal, Vec3::NEG_Y);
        let down = level
            .raycast(
                &Ray::new(Vec3::new(x, 1.0, 0.25), Vec3::NEG_Y, 10.0),
                &Filter::ALL,
            )
            .unwrap();
        assert!(!down.front_face, "{name}: from above is the back");
        assert_eq!(down.normal, Vec3::Y, "normals face the ray origin");
        assert_eq!(down.t, 1.0);
    }
    // occlusion agrees with closest hit on random rays
    let mut r = Rng::new(4);
    for _ in 0..2000 {
        let o = Vec3::new(r.range(-2.0, 7.0), r.range(-2.0, 2.0), r.range(-2.0, 3.0));
        let d = r.unit32();
        let t = r.range(0.0, 5.0);
        assert_eq!(
            level.raycast(&Ray::new(o, d, t), &Filter::ALL).is_some(),
            level.raycast_any(&Ray::new(o, d, t), &Filter::ALL)
        );
    }
    // invalid rays hit nothing
    assert!(
        level
            .raycast(&Ray::new(Vec3::NAN, Vec3::Y, 1.0), &Filter::ALL)
            .is_none()
    );
    assert!(
        level
            .raycast(&Ray::new(Vec3::ZERO, Vec3::ZERO, 1.0), &Filter::ALL)
            .is_none()
    );
    assert!(!level.raycast_any(&Ray::new(Vec3::ZERO, Vec3::Y, f32::NAN), &Filter::ALL));
}

/// Leaves whose corner `a` and first source id lie beyond a 16-bit window
/// from the rest of their run of leaves are listed, and answer exactly.
/// At each of 70,000 sites 10 m apart sit two small triangles 1.5 m apart,
/// one from each of two layers: the first layer's triangles are the
/// mesh's first 70,000 (vertices 0–209,999), the second's the next (ids
/// 70,000 and vertices 210,000 further on). The tree keeps a site's two
/// triangles together, so every run of leaves mixes both layers and one
/// layer's corners and ids must be listed. Every stored triangle is its
/// source triangle, and a ray onto each of a spread of triangles reports
/// its own id at the right distance.
#[test]
fn leaves_far_from_their_run_in_vertices_and_ids_answer_exactly() {
    use kiln_baker::{SceneMesh, bake_scene};
    let n = 70_000u32;
    let site = |k: u32| ((k % 300) as f32 * 10.0, (k / 300) as f32 * 10.0);
    let (mut pos, mut tris) = (Vec::new(), Vec::new());
    for layer in 0..2u32 {
        for k in 0..n {
            let (x, z) = site(k);
            let (x, y) = (x + 1.5 * layer as f32, 0.25 * layer as f32);
            let b = pos.len() as u32;
            pos.extend([[x, y, z], [x + 1.0, y, z], [x, y, z + 1.0]]);
            tris.push([b, b + 2, b + 1]);
        }
    }
    let scene = kiln_baker::Scene::from_meshes(vec![SceneMesh::new("layers", pos.clone(), &tris)]);
    let bytes = bake_scene(&scene, &BakeSettings::default().all_meshes()).bytes;
    let level = Level::from_bytes(&bytes).unwrap();
    let m = level.archive().colliders[0].tri_mesh().expect("a mesh");
    // a run lists its smaller layer (or, tied, the upper one); as the
    // tree is built, every run splits 16/16, so half the leaves list their
    // corner and their id
    let (corners, ids) = (m.listed_corners.len(), m.listed_ids.len());
    assert!(corners >= n as usize / 2, "{corners} corners listed");
    assert!(ids >= n as usize / 2, "{ids} ids listed");
    // every stored triangle is its source triangle, by positions
    let mut seen = vec![false; tris.len()];
    for (t, id) in m.triangles() {
        let got = t.map(|v| m.vertices.get(v));
        let want = tris[id as usize].map(|v| pos[v as usize]);
        assert_eq!(got, want, "triangle {id}");
        assert!(
            !std::mem::replace(&mut seen[id as usize], true),
            "{id} twice"
        );
    }
    assert!(seen.iter().all(|&s| s));
    // rays onto a spread of triangles of both layers
    for id in (0..2 * n).step_by(97) {
        let c = tris[id as usize].map(|v| Vec3::from(pos[v as usize]));
        let at = c[0] + (c[1] - c[0]) * 0.25 + (c[2] - c[0]) * 0.25;
        let hit = level
            .raycast(
                &Ray::new(at + Vec3::Y, Vec3::NEG_Y, 2.0),
                &Filter::default(),
            )
            .expect("a hit");
        assert_eq!(hit.feature, Some(id), "triangle {id}");
        assert_eq!(hit.t, 1.0, "triangle {id}");
    }
}
