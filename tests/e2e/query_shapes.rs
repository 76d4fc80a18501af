//! Spheres, capsules, boxes and convex hulls as query shapes — overlaps,
//! yes/no tests and casts — against the brute-force oracle of
//! `kiln_tests::convex` (closed-form distances between boundary
//! primitives, Minkowski-difference hulls for depths, ternary search and
//! bisection for times of impact, the winding number for inside a concave
//! solid), on every collider kind, on shared levels and on adversarial
//! cases (`cargo test --release -p kiln-tests --test e2e query_shapes --
//! --nocapture` prints the worst errors).
//!
//! The judge — what is checked, per answer — is `kiln_tests::judge`,
//! shared with the differential scene generator.

use glam::{DAffine3, DQuat, DVec3, Quat, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_file, bake_scene};
use kiln_runtime::{CastOptions, ConvexHull, Filter, Level, Pose, QueryShape, ShapeCast};
use kiln_tests::Rng;
use kiln_tests::judge::*;

/// One object of every collider kind side by side, placed by `xf`.
fn every_kind(xf: DAffine3) -> Level {
    let scene = kiln_tests::every_kind_scene(xf);
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

#[test]
fn query_shapes_against_every_collider_kind() {
    // the rigid and scaled placements, 10 km out (before the mirror and
    // the shear, so each keeps its seed)
    let mut placements = kiln_tests::affine_placements();
    placements.insert(
        3,
        (
            "10 km out",
            DAffine3::from_rotation_translation(
                DQuat::from_rotation_y(0.4),
                DVec3::new(-10_000.0, 30.0, 9_000.0),
            ),
        ),
    );
    let mut total = Stats::default();
    for (k, (what, xf)) in placements.into_iter().enumerate() {
        let level = every_kind(xf);
        let kinds: Vec<&str> = objects(&level).iter().map(|o| o.kind).collect();
        for want in ["cuboid", "sphere", "capsule", "bsp", "trimesh", "polytope"] {
            if !matches!(what, "non-uniform" | "mirrored" | "sheared") {
                assert!(kinds.contains(&want), "{what}: no {want} in {kinds:?}");
            }
        }
        let s = random_queries(&level, 300, 11 + k as u64, what);
        report(what, &s);
        total.add(&s);
    }
    assert!(
        total.touching > 600 && total.hits > 500,
        "too few contacts to mean anything"
    );
}

#[test]
fn batched_shape_queries_answer_as_single_ones() {
    let level = every_kind(DAffine3::IDENTITY);
    let objs = objects(&level);
    let mut rng = Rng::new(3);
    let qs: Vec<Query> = (0..400)
        .map(|i| {
            let (c, size) = near_surface(&objs, &mut rng);
            let at = (c + rng.unit32().as_dvec3() * size * 0.3).as_vec3();
            Query::random(i % 4, (size * 0.3) as f32, at, &mut rng)
        })
        .collect();
    let shapes: Vec<(QueryShape, Pose)> = qs.iter().map(|q| (q.shape(), q.pose)).collect();
    let mut overlaps = vec![Vec::new(); qs.len()];
    level.overlap_batch(&shapes, &Filter::ALL, &mut overlaps);
    let mut yes = vec![false; qs.len()];
    level.overlap_any_batch(&shapes, &Filter::ALL, &mut yes);
    // every other cast slides (ignores what it leaves)
    let slide = CastOptions {
        ignore_leaving: true,
    };
    let casts: Vec<ShapeCast> = shapes
        .iter()
        .enumerate()
        .map(|(i, (s, p))| {
            let c = ShapeCast::new(*s, *p, rng.unit32(), 2.0);
            if i % 2 == 0 { c } else { c.with(slide) }
        })
        .collect();
    let mut hits = vec![None; qs.len()];
    level.cast_batch(&casts, &Filter::ALL, &mut hits);
    let mut touching = 0;
    for (i, (s, p)) in shapes.iter().enumerate() {
        assert_eq!(
            overlaps[i],
            level.overlap(s, p, &Filter::ALL),
            "overlap {i}"
        );
        assert_eq!(
            yes[i],
            level.overlap_any(s, p, &Filter::ALL),
            "overlap_any {i}"
        );
        assert_eq!(
            yes[i],
            !overlaps[i].is_empty(),
            "overlap_any {i} vs overlap"
        );
        assert_eq!(hits[i], level.cast(&casts[i], &Filter::ALL), "cast {i}");
        touching += usize::from(yes[i]);
    }
    assert!(
        touching > 100 && touching < 390,
        "{touching} of 400 touching"
    );
}

#[test]
fn query_shapes_on_shared_levels() {
    let Some(dir) = kiln_tests::levels_dir() else {
        eprintln!("SKIPPED: no shared levels");
        return;
    };
    let mut total = Stats::default();
    for (k, file) in [
        "shape_collection.glb",
        "many-cubes.gltf",
        "khr_Duck.glb",
        "bevy_terrain.glb",
        "sauer_pandora.glb",
    ]
    .into_iter()
    .enumerate()
    {
        let baked = bake_file(&dir.join(file), &BakeSettings::default()).unwrap();
        let level = Level::from_bytes(&baked.bytes).unwrap();
        let s = random_queries(&level, 120, 100 + k as u64, file);
        report(file, &s);
        total.add(&s);
    }
    assert!(
        total.touching > 250 && total.hits > 200,
        "too few contacts to mean anything"
    );
}

/// A flat floor of `n × n` unit quads at y = 0 from the origin, plus a
/// wall (a second object) standing on its far edge: a seam between two
/// objects.
fn flat_level() -> Level {
    let n = 8u32;
    let mut pos = Vec::new();
    for z in 0..=n {
        for x in 0..=n {
            pos.push([x as f32, 0.0, z as f32]);
        }
    }
    let tris = kiln_tests::grid_triangles(n);
    let wall = SceneMesh::cuboid("wall", [4.0, 1.0, 8.5], [4.0, 1.0, 0.5]);
    let scene = Scene {
        meshes: vec![SceneMesh::new("floor", pos, &tris), wall],
        instances: [("floor", 0, "mesh"), ("wall", 1, "box")]
            .iter()
            .map(|&(name, mesh, collider)| SceneInstance {
                name: name.into(),
                mesh,
                transform: DAffine3::IDENTITY,
                extras_collider: Some(collider.into()),
                ..SceneInstance::default()
            })
            .collect(),
        ..Scene::default()
    };
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

#[test]
fn adversarial_query_shapes_on_faces_edges_and_vertices() {
    let level = flat_level();
    let floor = level.find_object("floor").expect("a floor");
    let objs = objects(&level);
    let mut stats = Stats::default();
    let up = Vec3::Y;
    let tilt = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let corner_down = Quat::from_rotation_arc(Vec3::new(1.0, 1.0, 1.0).normalize(), -Vec3::Y);
    let cube_hull = ConvexHull::new(
        &(0..8)
            .map(|i| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32) - 0.5)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let kinds = |h: f32| {
        vec![
            (Kind::Cuboid(Vec3::new(0.5, h, 0.5)), Quat::IDENTITY),
            (Kind::Cuboid(Vec3::new(0.5, 0.0, 0.5)), Quat::IDENTITY),
            (Kind::Cuboid(Vec3::splat(h)), corner_down),
            // a capsule lying along the floor's diagonal edge (x = z)
            (
                Kind::Capsule(0.7, h),
                Quat::from_rotation_arc(Vec3::Y, Vec3::new(1.0, 0.0, 1.0).normalize()),
            ),
            (Kind::Capsule(0.0, h), Quat::IDENTITY),
            (Kind::Capsule(0.5, h), tilt),
            (Kind::Sphere(h), Quat::IDENTITY),
            (Kind::Hull(cube_hull.clone()), Quat::IDENTITY),
            (Kind::Cuboid(Vec3::splat(0.0005)), Quat::IDENTITY),
            (Kind::Cuboid(Vec3::new(25.0, 0.5, 25.0)), Quat::IDENTITY),
        ]
    };
    let mut rest = 0;
    for (k, h) in [0.5f32, 0.25].into_iter().enumerate() {
        for (j, (kind, rot)) in kinds(h).into_iter().enumerate() {
            // the shape's lowest point, for resting heights
            let q0 = Query::new(kind, Pose::new(rot, Vec3::ZERO));
            let low = q0.bounds().0.y as f32;
            // a flat box below a floor surface does not touch it
            let thick = q0.bounds().1.y as f32 - low > 1e-2;
            // over a vertex (3, 3), an edge (3.5, 3.5) on the diagonal, a
            // face, and at the seam with the wall
            for (x, z) in [(3.0, 3.0), (3.5, 3.5), (2.3, 5.6), (4.2, 7.9)] {
                for dy in [-1e-3f32, 0.0, 1e-3] {
                    let at = Vec3::new(x, -low + dy, z);
                    let q = Query::new(clone_kind(&q0.kind), Pose::new(rot, at));
                    let what = format!("{} {k}/{j} at {at} ({dy:+})", q.name());
                    check_overlap(&level, &objs, &q, &mut stats, &what);
                    // resting on the open floor — over an inner vertex, an
                    // inner edge or a face — the contact pushes straight
                    // up (the floor's inner edges are flat)
                    if thick && dy < 0.0 && z < 7.0 {
                        let got = level.overlap(&q.shape(), &q.pose, &Filter::ALL);
                        let f = got
                            .iter()
                            .find(|o| o.object == floor)
                            .unwrap_or_else(|| panic!("{what}: not resting on the floor: {got:?}"));
                        rest += 1;
                        assert!(
                            f.normal.dot(up) > 1.0 - 1e-5,
                            "{what}: normal {} depth {}",
                            f.normal,
                            f.depth
                        );
                        assert!((f.depth - 1e-3).abs() < 1e-5, "{what}: depth {}", f.depth);
                    }
                    // casts: down onto the floor, along it, up away from it
                    for (motion, max_t) in [
                        (-up, 2.0),
                        (Vec3::new(1.0, 0.0, 0.3), 3.0),
                        (up, 1.0),
                        (Vec3::new(0.0, -0.01, 1.0), 4.0),
                    ] {
                        let lifted = Query::new(clone_kind(&q.kind), Pose::new(rot, at + up * 0.5));
                        let start = if motion == -up { &lifted } else { &q };
                        check_cast(&level, &objs, start, motion, max_t, &mut stats, &what);
                    }
                    // a cast that starts touching answers t = 0, unless
                    // told to ignore what the motion leaves
                    let only_floor = level
                        .overlap(&q.shape(), &q.pose, &Filter::ALL)
                        .iter()
                        .all(|o| o.object == floor);
                    if thick && dy < 0.0 && z < 7.0 && only_floor {
                        let sh = q.shape();
                        let along = level
                            .cast(&ShapeCast::new(sh, q.pose, Vec3::X, 1.0), &Filter::ALL)
                            .expect("touching at the start");
                        assert_eq!(along.t, 0.0, "{what}");
                        let slide = CastOptions {
                            ignore_leaving: true,
                        };
                        let away = level.cast(
                            &ShapeCast::new(sh, q.pose, up, 1.0).with(slide),
                            &Filter::ALL,
                        );
                        assert!(away.is_none(), "{what}: lifting off hit {away:?}");
                        let into = level.cast(
                            &ShapeCast::new(sh, q.pose, -up, 1.0).with(slide),
                            &Filter::ALL,
                        );
                        assert_eq!(into.map(|h| h.t), Some(0.0), "{what}: pressing in");
                    }
                }
            }
        }
    }
    report("adversarial", &stats);
    // every shape of both sizes rested at the three places, but for the
    // flat box and the 1 mm box (1 mm under, it is wholly below the floor)
    assert_eq!(rest, 48);
}

fn clone_kind(k: &Kind) -> Kind {
    match k {
        Kind::Sphere(r) => Kind::Sphere(*r),
        Kind::Capsule(h, r) => Kind::Capsule(*h, *r),
        Kind::Cuboid(h) => Kind::Cuboid(*h),
        Kind::Hull(h) => Kind::Hull(h.clone()),
    }
}

/// A floor of 3 × 3 objects, each a 4 m square tessellated 4 × 4, meeting
/// along shared edges, tilted by `slope` radians about x.
fn tiled_floor(slope: f64) -> (Level, DAffine3) {
    let n = 4u32;
    let mut pos = Vec::new();
    let mut tris = Vec::new();
    for z in 0..=n {
        for x in 0..=n {
            pos.push([x as f32, 0.0, z as f32]);
        }
    }
    for z in 0..n {
        for x in 0..n {
            let i = z * (n + 1) + x;
            // alternate the diagonals, as exporters do
            if (x + z) % 2 == 0 {
                tris.push([i, i + n + 1, i + 1]);
                tris.push([i + 1, i + n + 1, i + n + 2]);
            } else {
                tris.push([i, i + n + 1, i + n + 2]);
                tris.push([i, i + n + 2, i + 1]);
            }
        }
    }
    let tilt = DAffine3::from_rotation_x(slope);
    let meshes: Vec<SceneMesh> = (0..9)
        .map(|k| SceneMesh::new(format!("tile{k}"), pos.clone(), &tris))
        .collect();
    let scene = Scene {
        meshes,
        instances: (0..9)
            .map(|k| SceneInstance {
                name: format!("tile{k}"),
                mesh: k,
                transform: tilt
                    * DAffine3::from_translation(DVec3::new(
                        4.0 * (k % 3) as f64,
                        0.0,
                        4.0 * (k / 3) as f64,
                    )),
                extras_collider: Some("mesh".into()),
                ..SceneInstance::default()
            })
            .collect(),
        ..Scene::default()
    };
    let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap();
    (level, tilt)
}

#[test]
fn shapes_slide_across_tessellated_floors_and_seams_without_ghost_contacts() {
    let mut rng = Rng::new(2024);
    let (mut slides, mut contacts, mut worst) = (0, 0, 0.0f64);
    for slope in [0.0, 0.35] {
        let (level, tilt) = tiled_floor(slope);
        let up = tilt.transform_vector3(DVec3::Y);
        let mut here = 0;
        for i in 0.. {
            if here == 5000 {
                break;
            }
            // a capsule upright or lying, or a box, turned about the floor's up
            let yaw = DQuat::from_rotation_y(f64::from(rng.range(0.0, std::f32::consts::TAU)));
            let size = f64::from(rng.range(0.2, 1.0));
            let (kind, local_rot, low) = match i % 3 {
                0 => (
                    Kind::Capsule((size * 0.6) as f32, (size * 0.3) as f32),
                    DQuat::IDENTITY,
                    size * 0.9,
                ),
                1 => (
                    Kind::Capsule((size * 0.6) as f32, (size * 0.3) as f32),
                    DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2),
                    size * 0.3,
                ),
                _ => {
                    let half = DVec3::new(size * 0.5, size * 0.3, size * 0.4);
                    (Kind::Cuboid(half.as_vec3()), DQuat::IDENTITY, half.y)
                }
            };
            let rot = tilt.matrix3 * glam::DMat3::from_quat(yaw * local_rot);
            let rotation = DQuat::from_mat3(&rot);
            // resting on the floor, 1 mm into it, or 1 mm above it
            let dy = [0.0, -1e-3, 1e-3][rng.below(3)];
            let (x, z) = (rng.range(2.0, 10.0), rng.range(2.0, 10.0));
            let at = tilt.transform_point3(DVec3::new(f64::from(x), 0.0, f64::from(z)))
                + up * (low + dy);
            let pose = Pose::new(rotation.as_quat(), at.as_vec3());
            let q = Query::new(kind, pose);
            // across several seams, within the floor
            let a = f64::from(rng.range(0.0, std::f32::consts::TAU));
            let len = f64::from(rng.range(1.0, 6.0));
            let dir = tilt.transform_vector3(DVec3::new(a.cos(), 0.0, a.sin()));
            let end = DVec3::new(f64::from(x), 0.0, f64::from(z))
                + DVec3::new(a.cos(), 0.0, a.sin()) * len;
            if !(1.5..=10.5).contains(&end.x) || !(1.5..=10.5).contains(&end.z) {
                continue;
            }
            slides += 1;
            here += 1;
            let what = format!("slope {slope} slide {i} ({}, {dy:+})", q.name());
            let slide = CastOptions {
                ignore_leaving: true,
            };
            let motion = (dir * len).as_vec3();
            let stop = level.cast(
                &ShapeCast::new(q.shape(), q.pose, motion, 1.0).with(slide),
                &Filter::ALL,
            );
            assert!(stop.is_none(), "{what}: stopped by {stop:?}");
            // wherever it is along the way, the floor pushes along its
            // normal: the deepest contact over the tiles (a tile whose
            // border the shape hangs over answers that edge, a real edge
            // of its mesh, less deep)
            for f in [0.0, 0.37, 1.0] {
                let p = Pose::new(q.pose.rotation, q.pose.translation + motion * f);
                let deepest = level
                    .overlap(&q.shape(), &p, &Filter::ALL)
                    .into_iter()
                    .max_by(|a, b| a.depth.total_cmp(&b.depth));
                if let Some(o) = deepest {
                    contacts += 1;
                    let dev = (o.normal.as_dvec3() - up).length();
                    worst = worst.max(dev);
                    assert!(dev <= 1e-3, "{what} at {f}: normal {} (up {up})", o.normal);
                    if dy < 0.0 {
                        assert!(
                            (f64::from(o.depth) - 1e-3).abs() < 2e-5,
                            "{what}: depth {}",
                            o.depth
                        );
                    }
                }
            }
            // pressing down into the floor meets it with its normal
            let down = (dir * len * 0.2 - up * 0.05).as_vec3();
            let hit = level
                .cast(
                    &ShapeCast::new(q.shape(), q.pose, down, 1.0).with(slide),
                    &Filter::ALL,
                )
                .unwrap_or_else(|| panic!("{what}: fell through"));
            assert!(
                (hit.normal.as_dvec3() - up).length() <= 1e-3,
                "{what}: pressed into {hit:?}"
            );
        }
    }
    eprintln!("seams: {slides} slides, {contacts} contacts, worst normal deviation {worst:.2e}");
    assert!(
        slides > 8000 && contacts > 10_000,
        "{slides} slides, {contacts} contacts"
    );
}

/// Every answer names the feature it touched the same way, as
/// `RayHit::feature` documents: a triangle of a mesh (the floor's source
/// triangle, which the contact point lies on) or of a concave solid's
/// collider, the face of a box or polytope where a ray or a sphere meets
/// it, and `None` where no one index stands for the contact — sphere and
/// capsule colliders, and capsules, boxes and hulls against a box or a
/// polytope. Checked for rays, sphere and box overlaps and casts dropped
/// onto every collider kind, plain and mirrored.
#[test]
fn every_answer_names_its_feature_the_same_way() {
    let floor_mesh = kiln_tests::floor(12, 0.5);
    let mirrored = DAffine3::from_scale_rotation_translation(
        DVec3::new(-0.8, 1.3, 1.1),
        DQuat::from_rotation_y(-0.3),
        DVec3::new(2.0, 0.5, -1.0),
    );
    let mut checked = [0usize; 5];
    for xf in [DAffine3::IDENTITY, mirrored] {
        let level = every_kind(xf);
        let kinds = objects(&level);
        // the floor's source triangles in world space
        let floor_at = xf * DAffine3::from_translation(DVec3::new(-1.0, 0.0, -1.0));
        let floor_tri = |f: u32| {
            floor_mesh.triangles[f as usize].map(|k| {
                floor_at
                    .transform_point3(DVec3::from(floor_mesh.positions[k as usize].map(f64::from)))
            })
        };
        for (i, obj) in kinds.iter().enumerate() {
            let o = level.object(i as u32).unwrap();
            let only = [o];
            let keep = |x: kiln_runtime::ObjectId| x == only[0];
            let filter = Filter::ALL.keep(&keep);
            let tris = kiln_tests::object_triangles(&level, i);
            let (lo, hi) = tris
                .iter()
                .flatten()
                .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &p| {
                    (lo.min(p), hi.max(p))
                });
            let mesh_like = matches!(obj.kind, "trimesh" | "bsp");
            let faced = matches!(obj.kind, "cuboid" | "polytope");
            let mut rng = Rng::new(0x00fe_a7ee + i as u64);
            for _ in 0..40 {
                let x = lo.x + (hi.x - lo.x) * f64::from(0.2 + 0.6 * rng.f32());
                let z = lo.z + (hi.z - lo.z) * f64::from(0.2 + 0.6 * rng.f32());
                let top = Vec3::new(x as f32, (hi.y + 2.0) as f32, z as f32);
                let what = format!(
                    "{} ({}) from {top}",
                    obj.kind,
                    level.object_name(o).unwrap_or_default()
                );
                let Some(h) =
                    level.raycast(&kiln_runtime::Ray::new(top, Vec3::NEG_Y, 10.0), &filter)
                else {
                    continue;
                };
                assert_eq!(h.feature.is_some(), mesh_like || faced, "ray on {what}");
                checked[0] += 1;
                // a mesh's feature is its source triangle, a concave
                // solid's the triangle of its collider: the point is on it
                let on_floor = |f: Option<u32>, p: Vec3, what: &str| {
                    let tri = match obj.kind {
                        "trimesh" => floor_tri(f.unwrap()),
                        "bsp" => tris[f.unwrap() as usize],
                        _ => return,
                    };
                    let d = kiln_tests::dist_point_triangle(p.as_dvec3(), tri);
                    assert!(d < 1e-4, "{what}: {p} is {d} off triangle {f:?}");
                };
                on_floor(h.feature, h.point, &format!("ray on {what}"));
                // a sphere and a box sunk 5 cm into the surface there, and
                // the same dropped onto it from above
                let sunk = h.point + h.normal * 0.15;
                let shapes = [
                    (QueryShape::Sphere { radius: 0.2 }, mesh_like || faced),
                    (
                        QueryShape::Cuboid {
                            half: Vec3::splat(0.2),
                        },
                        mesh_like,
                    ),
                ];
                for (k, (shape, named)) in shapes.into_iter().enumerate() {
                    for t in level.overlap(&shape, &Pose::at(sunk), &filter) {
                        assert_eq!(t.feature.is_some(), named, "overlap {k} on {what}");
                        on_floor(t.feature, t.point, &format!("overlap {k} on {what}"));
                        checked[1 + k] += 1;
                    }
                    let drop =
                        ShapeCast::new(shape, Pose::at(sunk + Vec3::Y * 2.0), Vec3::NEG_Y, 4.0);
                    if let Some(c) = level.cast(&drop, &filter) {
                        assert_eq!(c.feature.is_some(), named, "cast {k} on {what}");
                        on_floor(c.feature, c.point, &format!("cast {k} on {what}"));
                        checked[3 + k] += 1;
                        // the general path (what sliding takes) names the
                        // same feature as a sphere's closed form
                        let slide = drop.with(CastOptions {
                            ignore_leaving: true,
                        });
                        let s = level.cast(&slide, &filter).expect("the same contact");
                        assert!((s.t - c.t).abs() < 1e-4, "slide {k} on {what}");
                        if mesh_like {
                            // a tie between the triangles at an edge may
                            // go either way: the point is on the one named
                            on_floor(s.feature, s.point, &format!("slide {k} on {what}"));
                        } else {
                            assert_eq!(s.feature, c.feature, "slide {k} on {what}");
                        }
                    }
                }
            }
        }
    }
    assert!(checked.iter().all(|&n| n > 100), "{checked:?}");
}
