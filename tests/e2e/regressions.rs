//! Regression tests for wrong answers found on real levels, each named
//! after the bug it pins, each through the public API only.

use glam::{DAffine3, DVec3, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
use kiln_runtime::{CastOptions, Filter, Level, Pose, QueryShape, ShapeCast};

/// The 12 triangles of the cube `-1..1`, wound outwards.
fn cube() -> SceneMesh {
    let mut pos = Vec::new();
    for i in 0..8u32 {
        let s = |b: u32| if i & b != 0 { 1.0 } else { -1.0 };
        pos.push([s(1), s(2), s(4)]);
    }
    let tris = [
        [0, 2, 3],
        [0, 3, 1], // z = −1
        [4, 5, 7],
        [4, 7, 6], // z = +1
        [0, 1, 5],
        [0, 5, 4], // y = −1
        [2, 6, 7],
        [2, 7, 3], // y = +1
        [0, 4, 6],
        [0, 6, 2], // x = −1
        [1, 3, 7],
        [1, 7, 5], // x = +1
    ];
    SceneMesh::new("cube", pos, &tris)
}

/// One object of `mesh` under `transform`, baked as `collider`.
fn one_object(mesh: SceneMesh, transform: DAffine3, collider: &str) -> Level {
    let scene = Scene {
        meshes: vec![mesh],
        instances: vec![SceneInstance {
            name: "it".into(),
            mesh: 0,
            transform,
            extras_collider: Some(collider.into()),
            ..SceneInstance::default()
        }],
        ..Scene::default()
    };
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

/// A polytope placed by a mirroring, non-uniform matrix (what an
/// editor's "mirror" makes) kept its face loops' order while its vertices
/// were mirrored, so the loops ran the wrong way round their normals and
/// a sphere 0.15 m into the face at x = 0.25 touched nothing, and swept
/// into it passed through. Every mirrored axis and both signs of the
/// offset are checked against the capsule (a = b) and ray answers.
#[test]
fn mirrored_polytope_sphere_contacts() {
    for scale in [
        DVec3::new(-0.25, -2.0, -8.0),
        DVec3::new(-0.25, 2.0, 8.0),
        DVec3::new(0.25, -2.0, 8.0),
        DVec3::new(0.25, 2.0, -8.0),
    ] {
        let level = one_object(cube(), DAffine3::from_scale(scale), "convex");
        assert_eq!(level.object_count(), 1);
        for side in [1.0f32, -1.0] {
            let at = Vec3::new(0.4 * side, 0.0, 0.0);
            let ball = QueryShape::Sphere { radius: 0.3 };
            let what = format!("scale {scale}, side {side}");
            // overlap: 0.15 m deep, pushed out along ±x
            let got = level.overlap(&ball, &Pose::at(at), &Filter::ALL);
            assert_eq!(got.len(), 1, "{what}: sphere overlap {got:?}");
            assert!((got[0].depth - 0.15).abs() < 1e-5, "{what}: {got:?}");
            assert!(
                got[0].normal.abs_diff_eq(Vec3::X * side, 1e-5),
                "{what}: {got:?}"
            );
            assert!(
                (got[0].point - Vec3::new(0.25 * side, 0.0, 0.0)).length() < 1e-5,
                "{what}: {got:?}"
            );
            assert!(
                level.overlap_any(&ball, &Pose::at(at), &Filter::ALL),
                "{what}"
            );
            // the same sphere as a capsule with a = b
            let (cap, pose) = QueryShape::capsule(at, at, 0.3);
            let c = level.overlap(&cap, &pose, &Filter::ALL);
            assert_eq!(c.len(), 1, "{what}: capsule {c:?}");
            assert!((c[0].depth - got[0].depth).abs() < 1e-5, "{what}: {c:?}");
            // swept from 1 m out towards the face: contact at x = 0.25 + 0.3
            let from = Pose::at(Vec3::new(side, 0.0, 0.0));
            let motion = Vec3::new(-side, 0.0, 0.0);
            for options in [
                CastOptions::default(),
                CastOptions {
                    ignore_leaving: true,
                },
            ] {
                let hit = level
                    .cast(
                        &ShapeCast::new(ball, from, motion, 1.0).with(options),
                        &Filter::ALL,
                    )
                    .unwrap_or_else(|| panic!("{what}: the sweep passed through"));
                assert!((hit.t - 0.45).abs() < 1e-5, "{what}: {hit:?}");
                assert!(hit.normal.abs_diff_eq(Vec3::X * side, 1e-5), "{what}");
            }
            // the ray agrees on where the face is
            let ray = kiln_runtime::Ray::new(Vec3::new(side, 0.0, 0.0), motion, 2.0);
            let hit = level.raycast(&ray, &Filter::ALL).expect("ray hits");
            assert!((hit.t - 0.75).abs() < 1e-5, "{what}: {hit:?}");
        }
    }
}

/// A two-triangle floor, `-1..1` in x and z at y = 0: its diagonal is a
/// flat edge, its four sides are borders.
fn floor_quad() -> SceneMesh {
    let pos = vec![
        [-1.0, 0.0, -1.0],
        [1.0, 0.0, -1.0],
        [-1.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
    ];
    SceneMesh::new("floor", pos, &[[0, 2, 1], [1, 2, 3]])
}

/// The floor's two triangles in f64 world space.
fn floor_triangles() -> Vec<[DVec3; 3]> {
    let p = |x: f64, z: f64| DVec3::new(x, 0.0, z);
    vec![
        [p(-1.0, -1.0), p(-1.0, 1.0), p(1.0, -1.0)],
        [p(1.0, -1.0), p(-1.0, 1.0), p(1.0, 1.0)],
    ]
}

/// The oracle's depth of `core` grown by `r` against triangle `t`
/// (negative: apart by that much).
fn oracle_depth(core: &kiln_tests::convex::Core, r: f64, t: [DVec3; 3]) -> f64 {
    use kiln_tests::convex::{Core, distance, penetration};
    let tri = Core::Triangle(t);
    let d = distance(core, &tri);
    if d > 0.0 {
        r - d
    } else {
        r + penetration(core, &tri).0
    }
}

/// The flat-edge rule replaced a contact's direction with the face's
/// normal and its depth with the distance that clears the face's
/// infinite plane, on the side of the shape's centre, wherever the
/// contact point lay on a flat edge. A capsule leaning over the floor's
/// border, its segment crossing the floor near the diagonal, was told to
/// move 0.9 m down through the floor where the least way out of the
/// floor was 0.54 m. The depth must be the deepest triangle's, and moving
/// by it along the normal must free the shape from the triangle the
/// contact names.
#[test]
fn flat_edge_rule_made_up_depths() {
    use kiln_tests::convex::{Core, distance, query_core};
    let level = one_object(floor_quad(), DAffine3::IDENTITY, "mesh");
    let tris = floor_triangles();
    let mut rng = kiln_tests::Rng::new(0xf1a7_ed9e_0000_0001);
    let mut past_border = 0;
    for case in 0..3000 {
        // a capsule's ends: one over the floor near the diagonal, one
        // past a border and below, or anywhere near
        let near_diagonal = {
            let s = rng.range(-0.9, 0.9);
            Vec3::new(s, rng.range(-0.4, 0.4), -s) + Vec3::new(rng.range(-0.1, 0.1), 0.0, 0.0)
        };
        let a = near_diagonal;
        let b = if case % 3 == 2 {
            Vec3::new(
                rng.range(-1.6, 1.6),
                rng.range(-0.8, 0.8),
                rng.range(-1.6, 1.6),
            )
        } else {
            Vec3::new(
                rng.range(1.05, 1.8),
                rng.range(-1.0, 0.3),
                rng.range(-0.5, 0.5),
            )
        };
        let r = rng.range(0.05, 0.4);
        let (shape, pose) = QueryShape::capsule(a, b, r);
        let (core, radius) = query_core(&shape, &pose);
        let deepest = tris
            .iter()
            .map(|&t| oracle_depth(&core, radius, t))
            .fold(f64::NEG_INFINITY, f64::max);
        let got = level.overlap(&shape, &pose, &Filter::ALL);
        if deepest < -1e-4 {
            assert!(
                got.is_empty(),
                "case {case}: {got:?} but apart by {deepest}"
            );
            continue;
        }
        if deepest <= 1e-4 {
            continue; // touching: either answer
        }
        past_border += usize::from(b.x > 1.0);
        assert_eq!(got.len(), 1, "case {case}: missed, depth {deepest}");
        let o = got[0];
        let depth = f64::from(o.depth);
        // exact, or over the floor: its normal and the depth clearing it,
        // only where every end whose sphere reaches through the floor's
        // plane lies over the floor
        let (core_a, core_b) = (a.as_dvec3(), b.as_dvec3());
        let through = |v: DVec3, up: f64| v.y * up - radius < 0.0;
        let over_floor = |v: DVec3| v.x.abs() <= 1.0 && v.z.abs() <= 1.0;
        let flat = o.normal.abs_diff_eq(Vec3::Y, 1e-6) || o.normal.abs_diff_eq(Vec3::NEG_Y, 1e-6);
        if flat && (depth - deepest).abs() > 1e-4 {
            let up = f64::from(o.normal.y);
            // the end deepest along −normal sets how far clearing takes
            let clear = radius - (core_a.y * up).min(core_b.y * up);
            assert!(
                [core_a, core_b]
                    .iter()
                    .all(|&v| !through(v, up) || over_floor(v)),
                "case {case}: capsule {a} {b} r {r}: the floor's normal past its border (depth {depth}, the deepest triangle's {deepest})"
            );
            assert!(
                (depth - clear).abs() <= 1e-4 && depth >= deepest - 1e-4,
                "case {case}: capsule {a} {b} r {r}: depth {depth}, clearing the floor takes {clear}"
            );
        } else {
            assert!(
                (depth - deepest).abs() <= 1e-4,
                "case {case}: capsule {a} {b} r {r}: depth {depth}, the deepest triangle's is {deepest} (normal {})",
                o.normal
            );
        }
        // moved by the depth along the normal, it clears the triangle the
        // contact lies on
        let moved = core.moved(o.normal.as_dvec3() * (depth + 1e-4));
        let p = o.point.as_dvec3();
        let named = tris
            .iter()
            .filter(|t| kiln_tests::dist_point_triangle(p, **t) <= 1e-5)
            .collect::<Vec<_>>();
        assert!(!named.is_empty(), "case {case}: point {p} off the floor");
        assert!(
            named
                .iter()
                .any(|t| distance(&moved, &Core::Triangle(**t)) >= radius),
            "case {case}: moving by {depth} along {} does not free it",
            o.normal
        );
    }
    assert!(past_border > 500, "{past_border} cases past the border");
}

/// A capsule whose ends coincide is a sphere, and answers as the sphere
/// does: over a two-triangle floor and its diagonal, past its borders and
/// below it.
#[test]
fn capsule_with_equal_ends_answers_as_a_sphere() {
    let level = one_object(floor_quad(), DAffine3::IDENTITY, "mesh");
    let mut rng = kiln_tests::Rng::new(0xca95_0001_5fe7_0001);
    let mut touching = 0;
    for case in 0..4000 {
        let at = Vec3::new(
            rng.range(-1.4, 1.4),
            rng.range(-0.5, 0.5),
            rng.range(-1.4, 1.4),
        );
        let at = if case % 4 == 0 {
            // on the diagonal
            Vec3::new(at.x, at.y, -at.x)
        } else {
            at
        };
        let r = rng.range(0.05, 0.6);
        let sphere = level.overlap(
            &QueryShape::Sphere { radius: r },
            &Pose::at(at),
            &Filter::ALL,
        );
        let (cap, pose) = QueryShape::capsule(at, at, r);
        let capsule = level.overlap(&cap, &pose, &Filter::ALL);
        match (sphere.first(), capsule.first()) {
            (None, None) => {}
            (Some(s), Some(c)) => {
                touching += 1;
                assert!(
                    (s.depth - c.depth).abs() <= 1e-4,
                    "case {case} at {at} r {r}: sphere {s:?}, capsule {c:?}"
                );
                assert!(
                    (s.point - c.point).length() <= 1e-3 || s.depth < 1e-4,
                    "case {case} at {at} r {r}: sphere {s:?}, capsule {c:?}"
                );
            }
            (s, c) => {
                let d = s.or(c).unwrap().depth;
                assert!(
                    d <= 1e-4,
                    "case {case} at {at} r {r}: sphere {s:?}, capsule {c:?}"
                );
            }
        }
    }
    assert!(touching > 1000, "{touching}");
}

/// An L-shaped prism: the L `(0,0) (2,0) (2,1) (1,1) (1,2) (0,2)` in x
/// and y, from z = 0 to z = 1, wound outwards.
fn l_prism() -> SceneMesh {
    let l = [
        [0.0, 0.0],
        [2.0, 0.0],
        [2.0, 1.0],
        [1.0, 1.0],
        [1.0, 2.0],
        [0.0, 2.0],
    ];
    let mut pos = Vec::new();
    for z in [0.0f32, 1.0] {
        for p in l {
            pos.push([p[0], p[1], z]);
        }
    }
    let mut tris = Vec::new();
    // caps: a fan from (0, 0), which sees every corner
    for k in 1..5u32 {
        tris.push([0, k + 1, k]); // z = 0, facing −z
        tris.push([6, 6 + k, 6 + k + 1]); // z = 1, facing +z
    }
    for k in 0..6u32 {
        let j = (k + 1) % 6;
        tris.push([k, j, 6 + j]);
        tris.push([k, 6 + j, 6 + k]);
    }
    SceneMesh::new("L", pos, &tris)
}

/// Whether `core` grown by `r` is free of the closed surface `tris`:
/// it overlaps no triangle and its first vertex is outside.
fn free_of(core: &kiln_tests::convex::Core, r: f64, tris: &[[DVec3; 3]]) -> bool {
    free_within(core, r, tris, 1e-7)
}

/// [`free_of`], overlapping no triangle by more than `slack`.
fn free_within(core: &kiln_tests::convex::Core, r: f64, tris: &[[DVec3; 3]], slack: f64) -> bool {
    tris.iter().all(|t| oracle_depth(core, r, *t) <= slack)
        && kiln_tests::convex::winding_number(tris, core.vertices()[0]) < 0.5
}

/// A capsule, box or hull inside a concave solid was answered on the
/// surface triangles it touched: 0.2 m into an L-shaped solid near its
/// wall, a box was told depth 0.1 with the normal pointing into the
/// solid. A shape whose centre is inside must get the way out of the
/// solid: moving by the depth along the normal frees it, and no shorter
/// move along that normal does.
#[test]
fn shapes_inside_concave_solids_pushed_further_in() {
    use kiln_runtime::ConvexHull;
    use kiln_tests::convex::query_core;
    for (name, transform) in kiln_tests::placements()
        .into_iter()
        .chain([("mirrored", DAffine3::from_scale(DVec3::new(-1.0, 1.0, 1.5)))])
    {
        let level = one_object(l_prism(), transform, "concave");
        let kinds = kiln_tests::object_kinds(&level);
        assert_eq!(kinds[0].1, "bsp", "{name}: {kinds:?}");
        let tris = kiln_tests::object_triangles(&level, 0);
        let hull = ConvexHull::new(&[
            Vec3::new(-0.15, -0.1, -0.1),
            Vec3::new(0.15, -0.1, -0.1),
            Vec3::new(0.0, 0.2, -0.1),
            Vec3::new(0.0, 0.0, 0.15),
        ])
        .unwrap();
        let shapes = [
            QueryShape::Cuboid {
                half: Vec3::new(0.3, 0.2, 0.15),
            },
            QueryShape::Capsule {
                half_height: 0.25,
                radius: 0.1,
            },
            QueryShape::Hull(&hull),
            QueryShape::Sphere { radius: 0.2 },
        ];
        let mut rng = kiln_tests::Rng::new(0x1_5ba9_e000_0001);
        let mut checked = 0;
        for case in 0..400 {
            // a local point inside the L, near its walls and its inner corner
            let local = loop {
                let p = DVec3::new(
                    f64::from(rng.range(0.05, 1.95)),
                    f64::from(rng.range(0.05, 1.95)),
                    f64::from(rng.range(0.1, 0.9)),
                );
                if p.x < 1.0 || p.y < 1.0 {
                    break p;
                }
            };
            let at = transform.transform_point3(local).as_vec3();
            let shape = &shapes[case % shapes.len()];
            let pose = Pose::new(
                glam::Quat::from_axis_angle(rng.unit32(), rng.range(0.0, 6.2)),
                at,
            );
            let (core, radius) = query_core(shape, &pose);
            let got = level.overlap(shape, &pose, &Filter::ALL);
            let what = format!("{name}, case {case}, {shape:?} at {at}");
            assert_eq!(got.len(), 1, "{what}: {got:?}");
            assert!(level.overlap_any(shape, &pose, &Filter::ALL), "{what}");
            let o = got[0];
            let (n, depth) = (o.normal.as_dvec3(), f64::from(o.depth));
            assert!(depth > 0.0, "{what}: {o:?}");
            // moved by the depth it is free; a little less, it is not
            // (the oracle's triangles and the runtime's differ by the f32
            // rounding of far world coordinates: a shape moved out of a
            // corner clears a wall nearly along it by less than that)
            let slack = 1e-7 + f64::from(at.abs().max_element()) * 2.0 * f64::from(f32::EPSILON);
            assert!(
                free_within(&core.moved(n * (depth + 1e-4)), radius, &tris, slack),
                "{what}: moving by {depth} along {n} does not free it"
            );
            assert!(
                !free_of(&core.moved(n * (depth - 1e-3)), radius, &tris),
                "{what}: {depth} along {n} is more than it takes"
            );
            // the point lies on the surface
            let on = tris
                .iter()
                .map(|t| kiln_tests::dist_point_triangle(o.point.as_dvec3(), *t))
                .fold(f64::INFINITY, f64::min);
            assert!(
                on < 1e-4,
                "{what}: point {} is {on} off the surface",
                o.point
            );
            // a cast from there starts in contact, with that normal
            let hit = level
                .cast(&ShapeCast::new(*shape, pose, Vec3::X, 1.0), &Filter::ALL)
                .unwrap_or_else(|| panic!("{what}: the cast missed"));
            assert_eq!(hit.t, 0.0, "{what}: {hit:?}");
            assert!(hit.normal.abs_diff_eq(o.normal, 1e-5), "{what}: {hit:?}");
            checked += 1;
        }
        assert_eq!(checked, 400);
    }
}

/// A random rotation.
fn turn(rng: &mut kiln_tests::Rng) -> glam::DQuat {
    glam::DQuat::from_axis_angle(
        rng.unit32().as_dvec3(),
        f64::from(rng.range(0.0, std::f32::consts::TAU)),
    )
}

/// Far from the origin an f32 ulp is a quarter of a millimetre, and the
/// mesh walk culled in local space from the sphere's centre taken there
/// in f32, with a margin of a micrometre: a sphere 2999 m out that
/// overlapped a triangle by 0.2 mm was told it touched nothing. Spheres
/// grazing a rotated cube there, each judged against the oracle (every
/// triangle, f64), must all be found, and swept ones must hit.
#[test]
fn far_from_origin_spheres_culled_by_rounding() {
    use kiln_tests::judge::{self, Kind, Query, Stats};
    let mut rng = kiln_tests::Rng::new(5432);
    let mut stats = Stats::default();
    for k in 0..20 {
        let rotation = turn(&mut rng);
        let transform = DAffine3::from_rotation_translation(
            rotation,
            DVec3::new(2999.7146903276443, -200.22294241189957, 1501.0067913532257),
        ) * DAffine3::from_scale(DVec3::splat(0.5));
        let level = one_object(cube(), transform, "mesh");
        let objs = judge::objects(&level);
        for i in 0..50 {
            // a point on a face, and a sphere just over it
            let face = transform.transform_vector3(DVec3::Z).normalize();
            let along = transform.transform_vector3(DVec3::new(
                f64::from(rng.range(-0.9, 0.9)),
                f64::from(rng.range(-0.9, 0.9)),
                1.0,
            ));
            let on = transform.translation + along;
            let r = rng.range(0.02, 0.2);
            let at = (on + face * (f64::from(r) - f64::from(rng.range(0.0, 6e-4)))).as_vec3();
            let q = Query::new(Kind::Sphere(r), Pose::at(at));
            let what = format!("rotation {k}, sphere {i}");
            judge::check_overlap(&level, &objs, &q, &mut stats, &what);
            judge::check_cast(&level, &objs, &q, -face.as_vec3(), 1.0, &mut stats, &what);
        }
    }
    assert!(stats.touching > 500, "{}", stats.touching);
}

/// A sphere outside a concave solid, in the reflex corner of an L far
/// from the origin: moving it out of the wall it touches deepest slides
/// it along the other wall, which it still grazed. The check that the
/// deepest triangle's way out frees the sphere moved its centre in f32
/// and by a hair of a millionth of its distance from the origin (3 mm
/// there), so it passed a sphere still 0.2 mm into the other wall.
/// Spheres in that corner, under a rotation and a non-uniform scale, are
/// judged against the oracle (every surface triangle and the winding
/// number, f64).
#[test]
fn far_from_origin_concave_corner_spheres_left_touching() {
    use kiln_tests::judge::{self, Kind, Query, Stats};
    let mut rng = kiln_tests::Rng::new(636);
    let mut stats = Stats::default();
    for k in 0..10 {
        let rotation = turn(&mut rng);
        let scale = DVec3::new(0.8, 1.6, 1.0) * f64::from(rng.range(0.5, 1.5));
        let transform = DAffine3::from_scale_rotation_translation(
            scale,
            rotation,
            DVec3::new(2998.9226, -199.8395, 1499.7842),
        );
        let level = one_object(l_prism(), transform, "concave");
        let objs = judge::objects(&level);
        for i in 0..40 {
            // in the reflex corner at (1, 1): into the wall x = 1, just
            // grazing the wall y = 1 (world distances)
            let r = rng.range(0.05, 0.3);
            let wx = transform.transform_vector3(DVec3::X).length();
            let wy = transform.transform_vector3(DVec3::Y).length();
            let a = f64::from(r * rng.range(0.3, 0.95)) / wx;
            let b = (f64::from(r) - f64::from(rng.range(0.0, 6e-4))) / wy;
            let local = DVec3::new(1.0 + a, 1.0 + b, f64::from(rng.range(0.3, 0.7)));
            let at = transform.transform_point3(local).as_vec3();
            let q = Query::new(Kind::Sphere(r), Pose::at(at));
            let what = format!("placement {k}, sphere {i}");
            judge::check_overlap(&level, &objs, &q, &mut stats, &what);
        }
    }
    assert!(stats.touching > 300, "{}", stats.touching);
}

/// A box or hull pushed into an object reported the object's point where
/// the shape would leave it after moving out by the depth: up to the
/// depth outside the shape as posed (8 units on a real level), so a
/// contact point did not lie where the two meet. Every overlap's point
/// must lie on the object's surface and in or on the shape, for boxes
/// (flat ones too) and hulls into a floor, a convex cube, a capsule, a
/// sphere and an L-shaped concave solid, under every placement class —
/// judged by the oracle, which exempts only a shape wholly inside a
/// solid.
#[test]
fn box_contact_points_outside_the_shape() {
    use kiln_runtime::ConvexHull;
    use kiln_tests::judge::{self, Kind, Query, Stats};
    let mut rng = kiln_tests::Rng::new(46);
    let mut stats = Stats::default();
    let objects: [(SceneMesh, &str); 5] = [
        (floor_quad(), "mesh"),
        (cube(), "convex"),
        (cube(), "capsule"),
        (cube(), "sphere"),
        (l_prism(), "concave"),
    ];
    for (mesh, collider) in objects {
        for (name, transform) in kiln_tests::placements() {
            let level = one_object(mesh.clone(), transform, collider);
            let objs = judge::objects(&level);
            for i in 0..60 {
                let piece = &objs[0].pieces[i % objs[0].pieces.len()];
                let v = piece.core.vertices();
                let at = (v.iter().sum::<DVec3>() / v.len() as f64).as_vec3()
                    + rng.unit32() * rng.range(0.0, 0.6);
                let rotation = glam::Quat::from_axis_angle(
                    rng.unit32(),
                    rng.range(0.0, std::f32::consts::TAU),
                );
                let kind = match i % 3 {
                    0 => Kind::Cuboid(Vec3::new(
                        rng.range(0.05, 0.8),
                        rng.range(0.05, 0.8),
                        rng.range(0.0, 0.8),
                    )),
                    1 => Kind::Cuboid(Vec3::new(rng.range(0.05, 0.8), rng.range(0.05, 0.8), 0.0)),
                    _ => Kind::Hull(
                        ConvexHull::new(
                            &(0..8)
                                .map(|_| rng.unit32() * rng.range(0.1, 0.7))
                                .collect::<Vec<_>>(),
                        )
                        .expect("a solid hull"),
                    ),
                };
                let q = Query::new(kind, Pose::new(rotation, at));
                let what = format!("{collider} {name}, query {i}");
                judge::check_overlap(&level, &objs, &q, &mut stats, &what);
            }
        }
    }
    assert!(stats.touching > 600, "{}", stats.touching);
}
