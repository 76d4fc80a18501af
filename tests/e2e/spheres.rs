//! Sphere overlaps and sweeps against brute force over every triangle, on
//! shared levels and generated terrain, with adversarial cases: sweeps that
//! start in contact, graze along surfaces, aim at vertices and edges, and
//! cross thin slabs.

use glam::{DVec3, Vec3};
use kiln_baker::{Scene, SceneMesh, bake_file, bake_scene, ingest};
use kiln_formats::TreeKind;
use kiln_runtime::Level;
use kiln_runtime::{Filter, Pose, QueryShape, Ray, RayHit, ShapeCast};
use kiln_tests::SphereQueries;
use kiln_tests::{
    Rng, both_kinds, dist_point_triangle, levels_dir, scene_bounds, scene_order, sweep_oracle,
    sweep_toi,
};

/// Required agreement, in metres (scene units).
const TOL: f64 = 1e-4;

struct Case {
    name: String,
    scene: Scene,
    /// The scene baked with each tree kind; every query is checked on both
    /// against one brute-force answer.
    levels: Vec<(TreeKind, Level)>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    // generated terrain (always available), with a thin slab floating above it
    let n = 48u32;
    let mut pos = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let h = ((x as f32 * 0.37).sin() + (y as f32 * 0.23).cos()) * 1.5;
            pos.push([x as f32, h, y as f32]);
        }
    }
    let mut tris = kiln_tests::grid_triangles(n);
    // two facing quads 2 mm apart: a thin closed slab
    for (yy, facing_up) in [(6.0f32, false), (6.002, true)] {
        pos.extend_from_slice(&[
            [10.0, yy, 10.0],
            [20.0, yy, 10.0],
            [20.0, yy, 20.0],
            [10.0, yy, 20.0],
        ]);
        let o = pos.len() as u32 - 4;
        if facing_up {
            tris.extend_from_slice(&[[o, o + 2, o + 1], [o, o + 3, o + 2]]);
        } else {
            tris.extend_from_slice(&[[o, o + 1, o + 2], [o, o + 2, o + 3]]);
        }
    }
    let scene = Scene::from_meshes(vec![SceneMesh::new("terrain", pos, &tris)]);
    let levels = both_kinds(|s| bake_scene(&scene, s).bytes);
    out.push(Case {
        name: "generated terrain + slab".into(),
        scene,
        levels,
    });
    if let Some(dir) = levels_dir() {
        for f in [
            "bevy_terrain.glb",
            "vk_terrain.gltf",
            "godot_truck_town.gltf",
            "shape_collection.glb",
            "many-cubes.gltf",
            "sauer_pandora.glb",
        ] {
            let path = dir.join(f);
            let scene = ingest::load(&path).unwrap().scene;
            let levels = both_kinds(|s| bake_file(&path, s).unwrap().bytes);
            out.push(Case {
                name: f.into(),
                scene,
                levels,
            });
        }
    }
    out
}

/// Per-instance minimum distance from `c`, brute force.
fn instance_distances(
    scene: &Scene,
    tris: &[kiln_baker::scene::WorldTriangle],
    c: DVec3,
) -> Vec<f64> {
    let mut d = vec![f64::INFINITY; scene.instances.len()];
    for t in tris {
        let x = dist_point_triangle(c, t.v);
        if x < d[t.instance] {
            d[t.instance] = x;
        }
    }
    d
}

#[test]
fn sphere_overlaps_match_brute_force() {
    for case in cases() {
        let tris = case.scene.world_triangles();
        let (lo, hi) = scene_bounds(&tris);
        let mut rng = Rng::new(17);
        let (mut queries, mut touching, mut reported) = (0, 0, 0);
        for i in 0..600 {
            let r = rng.range(0.5, 2.0);
            // half the spheres centred near a random surface point (touching is likely)
            let c = if i % 2 == 0 {
                let t = &tris[rng.below(tris.len())];
                let (u, v) = (rng.f32() as f64, rng.f32() as f64);
                let (u, v) = if u + v > 1.0 {
                    (1.0 - u, 1.0 - v)
                } else {
                    (u, v)
                };
                let p = t.v[0] + (t.v[1] - t.v[0]) * u + (t.v[2] - t.v[0]) * v;
                (p + rng.unit32().as_dvec3() * (rng.f32() as f64 * 2.5)).as_vec3()
            } else {
                Vec3::new(
                    rng.range(lo.x, hi.x),
                    rng.range(lo.y, hi.y),
                    rng.range(lo.z, hi.z),
                )
            };
            let dist = instance_distances(&case.scene, &tris, c.as_dvec3());
            queries += 1;
            for (kind, level) in &case.levels {
                let name = format!("{} ({})", case.name, kind.name());
                let sources = scene_order(level);
                let got = level.sphere_overlaps(c, r);
                let r = r as f64;
                for (si, &d) in dist.iter().enumerate() {
                    if d <= r - TOL {
                        touching += 1;
                        assert!(
                            got.iter().any(|o| sources[o.object.index() as usize] == si),
                            "{name}: sphere {c} r {r} touches instance {si} (distance {d}) but it was not reported",
                        );
                    }
                }
                for o in &got {
                    let si = sources[o.object.index() as usize];
                    reported += 1;
                    assert!(
                        dist[si] <= r + TOL,
                        "{name}: reported instance {si} at distance {}",
                        dist[si]
                    );
                    assert!(
                        ((r - dist[si]) - o.depth as f64).abs() <= TOL * 10.0,
                        "{name}: depth {} vs {}",
                        o.depth,
                        r - dist[si]
                    );
                    let pd = (o.point.as_dvec3() - c.as_dvec3()).length();
                    assert!(
                        (pd - dist[si]).abs() <= TOL * 10.0,
                        "{name}: point distance {pd} vs {}",
                        dist[si]
                    );
                }
                assert_eq!(level.sphere_touches(c, r as f32), !got.is_empty(), "{name}");
            }
        }
        eprintln!(
            "{:28} overlaps: {queries} spheres, both tree kinds: {touching} touching pairs, {reported} reported",
            case.name
        );
    }
}

#[test]
fn sphere_sweeps_match_brute_force() {
    for case in cases() {
        let tris = case.scene.world_triangles();
        let (lo, hi) = scene_bounds(&tris);
        let mut rng = Rng::new(23);
        let (mut hits, mut starts, mut n) = (0, 0, 0);
        for i in 0..400 {
            let r = if i % 5 == 0 {
                rng.range(0.05, 2.0)
            } else {
                0.5
            };
            let t = &tris[rng.below(tris.len())];
            let target = match i % 4 {
                0 => t.v[rng.below(3)],                // a vertex
                1 => (t.v[0] + t.v[1]) * 0.5,          // an edge
                _ => (t.v[0] + t.v[1] + t.v[2]) / 3.0, // a face
            };
            let n_face = (t.v[1] - t.v[0]).cross(t.v[2] - t.v[0]).normalize_or_zero();
            let (c, d, max_t) = match i % 8 {
                // starts in contact
                0 => (
                    target + n_face * (r as f64 * 0.5),
                    rng.unit32().as_dvec3(),
                    10.0,
                ),
                // grazes along the surface, just clear of it
                1 => {
                    let along = n_face.any_orthonormal_vector();
                    (
                        target + n_face * (r as f64 + 1e-3) - along * 5.0,
                        along,
                        10.0,
                    )
                }
                // random, 10 m
                2 | 3 => (
                    DVec3::new(
                        rng.range(lo.x, hi.x) as f64,
                        rng.range(lo.y, hi.y) as f64,
                        rng.range(lo.z, hi.z) as f64,
                    ),
                    rng.unit32().as_dvec3(),
                    10.0,
                ),
                // aimed at the target from a few metres away
                _ => {
                    let from =
                        target + rng.unit32().as_dvec3() * (r as f64 + rng.range(0.5, 8.0) as f64);
                    (from, (target - from).normalize(), 10.0)
                }
            };
            let (cf, df) = (c.as_vec3(), d.as_vec3());
            // the oracle sees the same f32 inputs the runtime does
            let (c, d) = (cf.as_dvec3(), df.as_dvec3());
            let rr = r as f64;
            // cull by the swept box, as any brute force would
            let (a, b) = (
                c.min(c + d * max_t as f64) - rr - 1e-3,
                c.max(c + d * max_t as f64) + rr + 1e-3,
            );
            let near: Vec<_> = tris
                .iter()
                .filter(|tri| {
                    let tl = tri.v[0].min(tri.v[1]).min(tri.v[2]);
                    let th = tri.v[0].max(tri.v[1]).max(tri.v[2]);
                    !(th.cmplt(a).any() || tl.cmpgt(b).any())
                })
                .collect();
            let want = near
                .iter()
                .filter_map(|tri| sweep_toi(c, d, rr, max_t as f64, tri.v))
                .min_by(f64::total_cmp);
            // the closest approach, asked only where the answers differ
            let closest = || {
                near.iter()
                    .map(|tri| sweep_oracle(c, d, rr, max_t as f64, tri.v).1)
                    .fold(f64::INFINITY, f64::min)
            };
            n += 1;
            for (kind, level) in &case.levels {
                let name = format!("{} ({})", case.name, kind.name());
                let got = level.sphere_sweep(cf, r, df, max_t);
                match (got, want) {
                    (Some(g), Some(w)) => {
                        hits += 1;
                        starts += (w == 0.0) as usize;
                        assert!(
                            ((g.t as f64 - w) * d.length()).abs() <= TOL,
                            "{}: sweep {i} from {c} dir {d} r {r}: t {} vs oracle {w}",
                            name,
                            g.t
                        );
                        let at = c + d * g.t as f64;
                        let sep = (at - g.point.as_dvec3()).length();
                        assert!(
                            (sep - rr).abs() <= 10.0 * TOL || w == 0.0,
                            "{}: contact point {sep} from the centre, r {r}",
                            name
                        );
                        assert!(
                            (g.normal.length() - 1.0).abs() < 1e-3,
                            "{}: normal {:?}",
                            name,
                            g.normal
                        );
                    }
                    (Some(g), None) => {
                        let closest = closest();
                        assert!(
                            closest <= rr + TOL,
                            "{}: sweep {i} reports contact at t {} but passes {} clear (r {r})",
                            name,
                            g.t,
                            closest - rr
                        )
                    }
                    (None, Some(w)) => {
                        let closest = closest();
                        assert!(
                            closest >= rr - TOL,
                            "{}: sweep {i} from {c} dir {d} r {r} missed a contact at t {w} (closest approach {closest})",
                            name
                        )
                    }
                    (None, None) => {}
                }
            }
        }
        eprintln!(
            "{:28} sweeps: {n}, both tree kinds: {hits} hits, {starts} starting in contact",
            case.name
        );
    }
}

#[test]
fn a_fast_sphere_never_tunnels_through_the_thin_slab() {
    let case = cases().into_iter().next().unwrap();
    // straight down through the two slab faces 2 mm apart, very fast
    for (kind, level) in &case.levels {
        for k in 0..50 {
            let x = 10.5 + k as f32 * 0.18;
            let hit = level
                .sphere_sweep(
                    Vec3::new(x, 500.0, 15.0),
                    0.05,
                    Vec3::new(0.0, -1e5, 0.0),
                    1.0,
                )
                .unwrap();
            let y: f32 = 500.0 - hit.t * 1e5;
            assert!(
                (y - 6.052).abs() < 1e-3,
                "{}: stopped at y {y}",
                kind.name()
            );
            assert!(hit.normal.y > 0.99);
        }
    }
}

#[test]
fn batched_queries_answer_like_single_ones() {
    let case = cases().into_iter().next().unwrap();
    let mut rng = Rng::new(31);
    let point = |rng: &mut Rng| {
        Vec3::new(
            rng.range(-2.0, 50.0),
            rng.range(-3.0, 8.0),
            rng.range(-2.0, 50.0),
        )
    };
    let rays: Vec<Ray> = (0..3000)
        .map(|_| Ray::new(point(&mut rng), rng.unit32(), rng.range(0.0, 40.0)))
        .collect();
    let spheres: Vec<(QueryShape, Pose)> = (0..3000)
        .map(|_| {
            let radius = rng.range(0.1, 2.0);
            (QueryShape::Sphere { radius }, Pose::at(point(&mut rng)))
        })
        .collect();
    let sweeps: Vec<ShapeCast> = (0..3000)
        .map(|_| {
            let radius = rng.range(0.1, 1.0);
            let at = Pose::at(point(&mut rng));
            ShapeCast::new(QueryShape::Sphere { radius }, at, rng.unit32(), 10.0)
        })
        .collect();
    let points: Vec<Vec3> = (0..3000).map(|_| point(&mut rng)).collect();

    for (_, level) in &case.levels {
        // every object, and every object but the first two
        let skipped: Vec<_> = level.objects().take(2).collect();
        for filter in [Filter::ALL, Filter::skip(&skipped)] {
            // on the pool, and on this thread alone as the archive's size
            // chooses (the runtime's unit tests walk small archives side
            // by side too)
            type Closest = fn(&Level, &[Ray], &Filter, &mut [Option<RayHit>]);
            type Any = fn(&Level, &[Ray], &Filter, &mut [bool]);
            let closest: [Closest; 2] = [Level::raycast_batch, Level::raycast_many];
            let any: [Any; 2] = [Level::raycast_any_batch, Level::raycast_any_many];
            let mut hits = vec![None; rays.len()];
            for (batched, any_batched) in closest.into_iter().zip(any) {
                batched(level, &rays, &filter, &mut hits);
                let mut blocked = vec![false; rays.len()];
                any_batched(level, &rays, &filter, &mut blocked);
                for (i, r) in rays.iter().enumerate() {
                    assert_eq!(hits[i], level.raycast(r, &filter));
                    assert_eq!(blocked[i], level.raycast_any(r, &filter));
                }
            }
            let mut overlaps = vec![Vec::new(); spheres.len()];
            level.overlap_batch(&spheres, &filter, &mut overlaps);
            let mut touch = vec![false; spheres.len()];
            level.overlap_any_batch(&spheres, &filter, &mut touch);
            for (((s, p), o), t) in spheres.iter().zip(&overlaps).zip(&touch) {
                assert_eq!(*o, level.overlap(s, p, &filter));
                assert_eq!(*t, level.overlap_any(s, p, &filter));
                assert!(
                    o.iter().all(|o| !skipped.contains(&o.object)) || filter.accepts(skipped[0], 1)
                );
            }
            let mut swept = vec![None; sweeps.len()];
            level.cast_batch(&sweeps, &filter, &mut swept);
            for (c, h) in sweeps.iter().zip(&swept) {
                assert_eq!(*h, level.cast(c, &filter));
            }
            let mut inside = vec![Vec::new(); points.len()];
            level.contains_point_batch(&points, &filter, &mut inside);
            for (p, i) in points.iter().zip(&inside) {
                assert_eq!(*i, level.contains_point(*p, &filter));
                assert_eq!(level.contains_point_any(*p, &filter), !i.is_empty());
            }
            let mut any = vec![false; points.len()];
            level.contains_point_any_batch(&points, &filter, &mut any);
            for (a, i) in any.iter().zip(&inside) {
                assert_eq!(*a, !i.is_empty());
            }
            // the level's first objects are in reach of many queries
            // (every query sees nothing only through a broken filter)
            if filter.accepts(skipped[0], u32::MAX) {
                assert!(
                    hits.iter().any(Option::is_some)
                        && swept.iter().any(Option::is_some)
                        && touch.iter().any(|t| *t)
                );
            }
        }
    }
}
