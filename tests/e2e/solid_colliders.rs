//! Solid shapes (polytopes, boxes, spheres, capsules) against brute force:
//! every query kind on one object at a time, placed by identity, rotation
//! with uniform scale far from the origin, and non-uniform scale with
//! rotation. The oracle for polytopes and boxes uses only the exported
//! triangles (their planes for inside tests and ray clipping, the triangles
//! for distances and sweeps); spheres and capsules use closed forms on the
//! placed segment.

use glam::{DAffine3, DVec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::SphereQueries;
use kiln_tests::solid::Solid;
use kiln_tests::{Rng, placements};

/// A closed cube mesh of side 2 centred on `c`.
fn cube(c: [f32; 3]) -> SceneMesh {
    SceneMesh::cuboid("cube", c, [1.0; 3])
}

/// One object: the cube mesh, classified by `collider` (None: automatic),
/// placed by `xf`.
fn level(collider: Option<&str>, xf: DAffine3) -> Level {
    let scene = Scene {
        meshes: vec![cube([0.5, 0.0, -0.25])],
        instances: vec![SceneInstance {
            name: "obj".into(),
            mesh: 0,
            transform: xf,
            extras_collider: collider.map(str::to_owned),
            ..SceneInstance::default()
        }],
        ..kiln_baker::Scene::default()
    };
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

#[test]
fn polytopes_and_boxes_answer_every_query_like_brute_force() {
    let mut rng = Rng::new(77);
    let mut checked = 0;
    let (mut ray_hits, mut sweep_hits, mut insides, mut touches) = (0, 0, 0, 0);
    for (collider, kind) in [(Some("convex"), "polytope"), (None, "cuboid")] {
        for (what, xf) in placements() {
            let level = level(collider, xf);
            let a = level.archive();
            let got_kind = a.colliders[a.instances[0].collider.to_native() as usize].kind_name();
            // a box under a non-uniform placement becomes its hull
            let want = if kind == "cuboid" && what == "non-uniform" {
                "polytope"
            } else {
                kind
            };
            assert_eq!(got_kind, want, "{what}");
            let solid = Solid::of(&level, 0);
            let centre = xf.transform_point3(DVec3::new(0.5, 0.0, -0.25));
            let size = xf.matrix3.x_axis.length().max(3.0) * 2.0;
            let tol = 1e-4 * (1.0 + centre.abs().max_element() * 1e-2);
            for i in 0..2000 {
                let p = centre + rng.unit32().as_dvec3() * size * f64::from(rng.f32());
                let pf = p.as_vec3();
                let pd = pf.as_dvec3();
                // points
                let inside = !level.contains_point(pf, &Filter::ALL).is_empty();
                assert_eq!(
                    level.contains_point_any(pf, &Filter::ALL),
                    inside,
                    "{what} point {i}"
                );
                insides += usize::from(inside);
                let clear = solid.distance(pd);
                if clear > tol {
                    assert_eq!(inside, solid.inside(pd), "{what} point {i} {pd}");
                }
                // rays, aimed at the centre half the time
                let dir = if i % 2 == 0 {
                    (centre - pd).as_vec3().normalize()
                } else {
                    rng.unit32()
                };
                let want = solid.ray(pd, dir.as_dvec3(), 100.0);
                let got = level.raycast(&Ray::new(pf, dir, 100.0), &Filter::ALL);
                match (want, got) {
                    (Some(t), Some(h)) => {
                        ray_hits += 1;
                        assert!(
                            (f64::from(h.t) - t).abs() <= tol * 10.0,
                            "{what} ray {i}: {} vs {t}",
                            h.t
                        )
                    }
                    (None, None) => {}
                    (w, g) => assert!(clear <= tol, "{what} ray {i}: {w:?} vs {g:?}"),
                }
                // sphere overlap: closest point and depth
                let r = 0.2 + rng.f32() * 2.0;
                let ov = level.sphere_overlaps(pf, r);
                let inside_exact = solid.inside(pd);
                let want_touch = inside_exact || clear <= f64::from(r);
                if (clear - f64::from(r)).abs() > tol {
                    assert_eq!(!ov.is_empty(), want_touch, "{what} overlap {i}");
                    assert_eq!(level.sphere_touches(pf, r), want_touch);
                }
                touches += usize::from(!ov.is_empty());
                if let Some(o) = ov.first() {
                    // inside, the depth is the radius plus the way out to
                    // the surface (for a convex solid, the nearest plane)
                    let depth = if inside_exact {
                        f64::from(r) + clear
                    } else {
                        f64::from(r) - clear
                    };
                    assert!(
                        (f64::from(o.depth) - depth).abs() <= tol * 10.0,
                        "{what} overlap {i}: depth {} vs {depth}",
                        o.depth
                    );
                }
                // sweeps
                if i % 4 == 0 {
                    let d = (centre - pd).as_vec3().normalize() + rng.unit32() * 0.3;
                    let want = solid.sweep(pd, d.as_dvec3(), f64::from(r), 50.0);
                    let got = level.sphere_sweep(pf, r, d, 50.0);
                    match (want, got) {
                        (Some(t), Some(h)) => {
                            sweep_hits += 1;
                            assert!(
                                (f64::from(h.t) - t).abs() <= tol * 10.0,
                                "{what} sweep {i}: {} vs {t}",
                                h.t
                            )
                        }
                        (None, None) => {}
                        (w, g) => panic!("{what} sweep {i}: {w:?} vs {g:?}"),
                    }
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 12_000);
    // every outcome is exercised (not a test of empty answers)
    eprintln!(
        "shapes: {ray_hits} ray hits, {sweep_hits} sweep hits, {insides} points inside, {touches} overlaps of {checked}"
    );
    assert!(ray_hits > 3000 && sweep_hits > 1000 && insides > 300 && touches > 2000);
}

#[test]
fn spheres_and_capsules_answer_like_closed_forms() {
    let mut rng = Rng::new(5);
    for collider in ["sphere", "capsule"] {
        for (what, xf) in placements().into_iter().take(2) {
            let level = level(Some(collider), xf);
            let a = level.archive();
            assert_eq!(
                a.colliders[a.instances[0].collider.to_native() as usize].kind_name(),
                collider
            );
            // the placed segment and radius, from the archive
            let inst = &a.instances[0];
            let m: Vec<f64> = a.rows(inst).world_from_local.map(f64::from).to_vec();
            let w = |p: DVec3| {
                DVec3::new(
                    m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3],
                    m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
                    m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11],
                )
            };
            let scale = DVec3::new(m[0], m[4], m[8]).length();
            let (half, rad) = match &a.colliders[0] {
                kiln_formats::ArchivedCollider::Sphere(s) => (0.0, f64::from(s.radius.to_native())),
                kiln_formats::ArchivedCollider::Capsule(c) => (
                    f64::from(c.half_height.to_native()),
                    f64::from(c.radius.to_native()),
                ),
                _ => unreachable!(),
            };
            let (sa, sb) = (
                w(DVec3::new(0.0, -half, 0.0)),
                w(DVec3::new(0.0, half, 0.0)),
            );
            let rad = rad * scale;
            let seg = |p: DVec3| {
                let e = sb - sa;
                let t = if e.length_squared() > 0.0 {
                    ((p - sa).dot(e) / e.length_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                (p - (sa + e * t)).length()
            };
            // the fitted sphere holds every cube corner
            assert!(rad >= 3f64.sqrt() * scale * 0.999 || collider == "capsule");
            let centre = (sa + sb) * 0.5;
            let tol = 1e-4 * (1.0 + centre.abs().max_element() * 1e-2);
            for i in 0..1000 {
                let p = centre + rng.unit32().as_dvec3() * rad * 3.0 * f64::from(rng.f32());
                let (pf, pd) = (p.as_vec3(), p.as_vec3().as_dvec3());
                let dist = seg(pd) - rad;
                if dist.abs() > tol {
                    assert_eq!(
                        !level.contains_point(pf, &Filter::ALL).is_empty(),
                        dist < 0.0,
                        "{what} {i}"
                    );
                }
                let r = 0.1 + rng.f32();
                let ov = level.sphere_overlaps(pf, r);
                if (dist - f64::from(r)).abs() > tol {
                    assert_eq!(!ov.is_empty(), dist <= f64::from(r), "{what} {i}");
                }
                if let Some(o) = ov.first() {
                    assert!((f64::from(o.depth) - (f64::from(r) - dist)).abs() <= tol * 10.0);
                }
                // a sweep towards the centre: first time the distance reaches r
                let d = (centre - pd).as_vec3() + rng.unit32() * 0.5 * rad as f32;
                let got = level.sphere_sweep(pf, r, d, 2.0);
                let f = |t: f64| seg(pd + d.as_dvec3() * t) - rad - f64::from(r);
                let want = if f(0.0) <= 0.0 {
                    Some(0.0)
                } else {
                    // scan then bisect (the distance along a line to a
                    // segment is convex)
                    let steps = 4000;
                    (1..=steps)
                        .map(|k| 2.0 * k as f64 / steps as f64)
                        .find(|&t| f(t) <= 0.0)
                        .map(|hi| {
                            let (mut a, mut b) = (hi - 2.0 / steps as f64, hi);
                            for _ in 0..100 {
                                let m = 0.5 * (a + b);
                                if f(m) <= 0.0 { b = m } else { a = m }
                            }
                            b
                        })
                };
                match (want, got) {
                    (Some(t), Some(h)) => {
                        assert!((f64::from(h.t) - t).abs() <= tol * 10.0, "{what} sweep {i}")
                    }
                    (None, None) => {}
                    // grazes the scan cannot see
                    (None, Some(h)) => assert!(f(f64::from(h.t)) <= tol * 10.0),
                    (Some(t), None) => panic!("{what} sweep {i}: missed a contact at {t}"),
                }
            }
        }
    }
}

#[test]
fn the_bundled_shape_collection_classifies_object_by_object() {
    let path = kiln_tests::samples_dir().join("shape_collection.glb");
    let baked = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let a = level.archive();
    let mut seen = Vec::new();
    for (i, inst) in a.instances.iter().enumerate() {
        let kind = a.colliders[inst.collider.to_native() as usize].kind_name();
        let rule = a.instance_rule(i);
        seen.push(format!(
            "{} {kind}: {rule}",
            level
                .object_name(level.object(i as u32).unwrap())
                .unwrap_or_default()
        ));
    }
    seen.sort();
    let want = [
        "Cone polytope: auto: closed, 100.0% of its hull's volume",
        "Cube cuboid: auto: closed and convex, fills 100.0% of a fitted box (fit error 0.0000 m)",
        "Cylinder polytope: auto: closed, 100.0% of its hull's volume",
        // convex, more faces than the 64-plane cap, fills 87% of a sphere
        "Icosphere polytope: auto: closed, 100.0% of its hull's volume (hull of 80 faces capped to 62 planes, reaching up to 0.0613 m beyond it)",
        "Sphere sphere: auto: closed and convex, fills 98.4% of a fitted sphere (fit error 0.0000 m)",
        // closed and concave: simplified within 5 cm, a BSP tree
        "Torus bsp: auto: closed, concave (53.0% of its hull's volume) (collider 1152 → 368 faces, Hausdorff 0.0373 m (render → collider 0.0373, collider → render 0.0372), mean 0.0079 m, volume 99.6%; bsp of 699 nodes (0 bevel), depth 35; simplified to 368 faces)",
        "Torus.001 bsp: auto: closed, concave (53.0% of its hull's volume) (collider 1152 → 368 faces, Hausdorff 0.0373 m (render → collider 0.0373, collider → render 0.0372), mean 0.0079 m, volume 99.6%; bsp of 699 nodes (0 bevel), depth 35; simplified to 368 faces)",
    ];
    assert_eq!(seen, want);
}

#[test]
fn project_rules_set_settings_per_object() {
    use kiln_baker::config::{ColliderName, MaxPlanes, Overrides, Rule, VolumeFraction};
    use kiln_formats::level::ArchivedCollider;
    use kiln_formats::tri_mesh::ArchivedMeshTree;
    let path = kiln_tests::samples_dir().join("shape_collection.glb");
    let mut settings = BakeSettings::default();
    settings.rules = vec![
        // settings only: the automatic rule still chooses, with a cap of 16
        Rule {
            settings: Overrides {
                max_planes: Some(MaxPlanes::new(16).unwrap()),
                ..Overrides::default()
            },
            ..Rule::collider("Icosphere", ColliderName::Convex)
        },
        // a tighter convexity tolerance: the sphere no longer fills a
        // fitted sphere closely enough and stays its hull
        Rule {
            pattern: "Sphere".into(),
            collider: None,
            layer: None,
            motion: None,
            trigger: None,
            settings: Overrides {
                convex_tolerance: Some(VolumeFraction::new(0.001).unwrap()),
                ..Overrides::default()
            },
        },
        // the two tori share a mesh (named "Torus"): as triangle meshes,
        // one gets a sphere tree, the other keeps the default, so the mesh
        // bakes twice
        Rule {
            settings: Overrides {
                mesh_tree: Some(kiln_formats::TreeKind::Sphere),
                ..Overrides::default()
            },
            ..Rule::collider("Torus.001", ColliderName::Mesh)
        },
        Rule::collider("Torus", ColliderName::Mesh),
    ];
    let baked = kiln_baker::bake_file(&path, &settings).unwrap();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let a = level.archive();
    let find = |name: &str| {
        let i = level.find_object(name).expect(name).index() as usize;
        (
            &a.colliders[a.instances[i].collider.to_native() as usize],
            a.instance_rule(i),
        )
    };
    let (ico, rule) = find("Icosphere");
    match ico {
        ArchivedCollider::Polytope(p) => assert!(p.planes.len() <= 16, "{}", p.planes.len()),
        s => panic!("Icosphere: {}", s.kind_name()),
    }
    assert!(
        rule.starts_with(
            "project rule 1 (match = \"Icosphere\"): collider = convex, max_planes = 16"
        ),
        "{rule}"
    );
    let (sphere, rule) = find("Sphere");
    assert_eq!(sphere.kind_name(), "polytope", "{rule}");
    assert!(
        rule.starts_with("auto: closed, ")
            && rule.contains("; project rule 2 (match = \"Sphere\"): convex_tolerance = 0.001"),
        "{rule}"
    );
    let tree = |s: &ArchivedCollider| match s {
        ArchivedCollider::TriMesh(t) => match &t.tree {
            ArchivedMeshTree::Boxes(_) => "aabb",
            ArchivedMeshTree::Spheres(_) => "sphere",
        },
        s => panic!("{}", s.kind_name()),
    };
    let (torus, rule) = find("Torus.001");
    assert_eq!(tree(torus), "sphere", "{rule}");
    assert!(rule.ends_with("mesh_tree = sphere"), "{rule}");
    let (other, rule) = find("Torus");
    assert_eq!(tree(other), "aabb", "{rule}");
    // untouched objects bake exactly as without rules
    let plain = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
    let plain = Level::from_bytes(&plain.bytes).unwrap();
    let cone = |l: &Level| {
        let i = l.find_object("Cone").unwrap().index() as usize;
        let s = &l.archive().colliders[l.archive().instances[i].collider.to_native() as usize];
        match s {
            ArchivedCollider::Polytope(p) => p.planes.len(),
            s => panic!("{}", s.kind_name()),
        }
    };
    assert_eq!(cone(&level), cone(&plain));
    assert_eq!(
        a.colliders.len(),
        plain.archive().colliders.len() + 1,
        "the tori's shared mesh bakes twice (once per tree kind) where it was one BSP tree"
    );
}

/// A crate modelled rotated in its own mesh space becomes a box (not a
/// polytope) under every similarity placement, and points and rays answer
/// like the render mesh's own planes.
#[test]
fn a_crate_modelled_rotated_becomes_a_box() {
    let rot = glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -0.9, 0.25);
    let half = DVec3::new(0.5, 1.0, 1.5);
    let mut mesh = SceneMesh::cuboid("crate", [0.0; 3], half.as_vec3().to_array());
    for p in &mut mesh.positions {
        *p = (rot * DVec3::from(p.map(f64::from)) + DVec3::new(2.0, 1.0, -3.0))
            .as_vec3()
            .to_array();
    }
    for (name, xf) in placements() {
        let scene = Scene {
            meshes: vec![mesh.clone()],
            instances: vec![SceneInstance {
                name: "crate".into(),
                mesh: 0,
                transform: xf,
                ..SceneInstance::default()
            }],
            ..Scene::default()
        };
        let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap();
        let a = level.archive();
        let kind = a.colliders[a.instances[0].collider.to_native() as usize].kind_name();
        let similarity = {
            let m = xf.matrix3;
            let (x, y, z) = (m.x_axis.length(), m.y_axis.length(), m.z_axis.length());
            (x - y).abs() < 1e-9 * x
                && (x - z).abs() < 1e-9 * x
                && m.x_axis.dot(m.y_axis).abs() < 1e-9
        };
        let rule = a.instance_rule(0);
        if similarity {
            assert_eq!(kind, "cuboid", "{name}: {rule}");
            assert!(rule.contains("fills 100.0%"), "{name}: {rule}");
        } else {
            assert_eq!(kind, "polytope", "{name}: {rule}");
        }
        // the oracle: the render mesh's own faces, placed
        let solid = Solid::new(scene.world_triangles().iter().map(|t| t.v).collect());
        let (lo, hi) = kiln_tests::scene_bounds(&scene.world_triangles());
        let (lo, hi) = (lo.as_dvec3(), hi.as_dvec3());
        let size = (hi - lo).max_element();
        let mut rng = Rng::new(7);
        let (mut inside, mut hits, mut worst) = (0, 0, 0.0f64);
        for _ in 0..4000 {
            let p = lo - size * 0.2
                + (hi - lo + size * 0.4)
                    * DVec3::new(rng.f32().into(), rng.f32().into(), rng.f32().into());
            let eps = 1e-5 * (1.0 + p.abs().max_element());
            let got = !level.contains_point(p.as_vec3(), &Filter::ALL).is_empty();
            if solid.inside_by(p, eps) {
                assert!(got, "{name}: {p} is inside the crate");
                inside += 1;
            } else if solid.outside_by(p, eps) {
                assert!(!got, "{name}: {p} is outside the crate");
            }
            // the query as the runtime gets it: rounded to f32
            let d = rng.unit32().as_dvec3();
            let o = (p - d * size * 2.0).as_vec3().as_dvec3();
            let want = solid.ray(o, d, 4.0 * size);
            let hit = level.raycast(
                &Ray::new(o.as_vec3(), d.as_vec3(), (4.0 * size) as f32),
                &Filter::ALL,
            );
            match (want, hit) {
                (Some(t), Some(h)) => {
                    // the hit lies on the crate's surface within the f32
                    // bound (32 ulps of the coordinates, as the ray oracles
                    // allow), and t within that bound over the ray's slope
                    let at = o + d * f64::from(h.t);
                    let ulps = 32.0 * f64::from(f32::EPSILON) * (1.0 + at.abs().max_element());
                    let off = solid.distance(at);
                    worst = worst.max(off);
                    assert!(
                        off <= ulps,
                        "{name}: hit {} off the surface (t {} want {t})",
                        off,
                        h.t
                    );
                    hits += 1;
                }
                (None, None) => {}
                (w, h) => {
                    // grazing an edge within rounding: the distance from the
                    // ray to the crate is tiny either way
                    let closest = (0..=400)
                        .map(|k| solid.distance(o + d * (4.0 * size * k as f64 / 400.0)))
                        .fold(f64::INFINITY, f64::min);
                    assert!(closest < 1e-2 * size, "{name}: want {w:?} got {h:?}");
                }
            }
        }
        assert!(
            inside > 100 && hits > 100,
            "{name}: {inside} inside, {hits} hits"
        );
        println!("{name}: {hits} ray hits, farthest {worst:.2e} off the render mesh's faces");
    }
}
