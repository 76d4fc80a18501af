//! Level shells stay hollow: a closed mesh around other objects (a world
//! box, a sky sphere, a room, a hollow building with thick walls) is baked
//! as its surface whichever way its faces point, while a crate on its own
//! stays a solid. Each case checks the kinds and rules chosen, then asks
//! the runtime: no point of the playable space is inside anything but the
//! props, and a ray from inside reaches the shell at its true distance.

use glam::Vec3;
use kiln_baker::{BakeSettings, Scene, SceneMesh, bake_scene};
use kiln_runtime::Level;
use kiln_runtime::{Filter, Ray};
use kiln_tests::{object_kinds, torus_knot};

/// A closed axis-aligned box from `lo` to `hi`, faces outwards (or
/// inwards).
fn cube(name: &str, lo: Vec3, hi: Vec3, inward: bool) -> SceneMesh {
    let mut m = SceneMesh::cuboid(
        name,
        ((lo + hi) * 0.5).to_array(),
        ((hi - lo) * 0.5).to_array(),
    );
    if inward {
        for t in &mut m.triangles {
            t.swap(1, 2);
        }
    }
    m
}

/// A closed UV sphere (32 × 16), faces outwards or inwards.
fn sphere(name: &str, c: Vec3, r: f32, inward: bool) -> SceneMesh {
    let (seg, rings) = (32u32, 16u32);
    let mut pos = vec![(c + Vec3::Y * r).to_array()];
    for j in 1..rings {
        let th = std::f32::consts::PI * j as f32 / rings as f32;
        for i in 0..seg {
            let ph = std::f32::consts::TAU * i as f32 / seg as f32;
            let d = Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin());
            pos.push((c + d * r).to_array());
        }
    }
    pos.push((c - Vec3::Y * r).to_array());
    let bottom = pos.len() as u32 - 1;
    let at = |j: u32, i: u32| 1 + (j - 1) * seg + i % seg;
    let mut tris = Vec::new();
    for i in 0..seg {
        tris.push([0, at(1, i + 1), at(1, i)]);
        tris.push([bottom, at(rings - 1, i), at(rings - 1, i + 1)]);
        for j in 1..rings - 1 {
            let (a, b, c2, d) = (at(j, i), at(j, i + 1), at(j + 1, i + 1), at(j + 1, i));
            tris.push([a, b, c2]);
            tris.push([a, c2, d]);
        }
    }
    if inward {
        for t in &mut tris {
            t.swap(1, 2);
        }
    }
    SceneMesh::new(name, pos, &tris)
}

/// Props standing in the middle of a level whose playable space is the
/// box ±`half` around the origin.
fn props() -> Vec<SceneMesh> {
    vec![
        cube(
            "Crate",
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(2.0, 1.0, 2.0),
            false,
        ),
        cube(
            "Crate2",
            Vec3::new(-3.0, 0.0, 2.0),
            Vec3::new(-2.0, 0.5, 2.5),
            false,
        ),
        sphere("Ball", Vec3::new(0.0, 0.5, -2.0), 0.5, false),
    ]
}

/// The level baked from `meshes` (identity-placed), and its objects as
/// (name, kind, rule).
fn bake(meshes: Vec<SceneMesh>) -> (Level, Vec<(String, String, String)>) {
    let scene = Scene::from_meshes(meshes);
    let baked = bake_scene(&scene, &BakeSettings::default());
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let seen = object_kinds(&level);
    (level, seen)
}

fn kind_of<'a>(seen: &'a [(String, String, String)], name: &str) -> (&'a str, &'a str) {
    let o = seen
        .iter()
        .find(|o| o.0 == name)
        .unwrap_or_else(|| panic!("{name} not in {seen:?}"));
    (&o.1, &o.2)
}

/// Every point of a grid over the playable box that lies outside the
/// props is inside nothing, and rays from the middle of the level reach
/// the shell `shell` at the distance `expect(dir)`.
fn playable(level: &Level, half: f32, shell: &str, expect: impl Fn(Vec3) -> f32) {
    let in_prop = |p: Vec3| {
        let inside = |lo: Vec3, hi: Vec3| p.cmpge(lo - 0.05).all() && p.cmple(hi + 0.05).all();
        inside(Vec3::new(1.0, 0.0, 1.0), Vec3::new(2.0, 1.0, 2.0))
            || inside(Vec3::new(-3.0, 0.0, 2.0), Vec3::new(-2.0, 0.5, 2.5))
            || p.distance(Vec3::new(0.0, 0.5, -2.0)) < 0.55
    };
    let n = 12;
    let mut checked = 0;
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let f = |x: usize| -0.9 * half + 1.8 * half * (x as f32 + 0.5) / n as f32;
                let p = Vec3::new(f(i), f(j), f(k));
                if in_prop(p) {
                    continue;
                }
                checked += 1;
                let inside: Vec<_> = level
                    .contains_point(p, &Filter::ALL)
                    .into_iter()
                    .map(|o| level.object_name(o).unwrap_or_default())
                    .collect();
                assert!(inside.is_empty(), "{p} reported inside {inside:?}");
            }
        }
    }
    assert!(checked > n * n * n / 2);
    let from = Vec3::new(0.0, 3.0, 0.0);
    for dir in [Vec3::Y, Vec3::NEG_Y, Vec3::X, Vec3::NEG_Z] {
        let hit = level
            .raycast(&Ray::new(from, dir, 1e6), &Filter::ALL)
            .unwrap_or_else(|| panic!("ray {dir} from {from} hit nothing"));
        let want = expect(dir);
        if dir == Vec3::NEG_Y {
            // the floor of the props' level is the shell too; nothing
            // stands under (0, 3, 0)
            assert!(hit.t > 0.0, "ray down reported t = 0");
        }
        assert_eq!(
            level.object_name(hit.object).unwrap_or_default(),
            shell,
            "ray {dir}"
        );
        assert!(
            (hit.t - want).abs() < 1e-3,
            "ray {dir}: t {} want {want}",
            hit.t
        );
    }
}

/// Distance from (0, 3, 0) to the box ±h along an axis.
fn to_box(h: f32) -> impl Fn(Vec3) -> f32 {
    move |d: Vec3| {
        if d.y > 0.0 {
            h - 3.0
        } else if d.y < 0.0 {
            h + 3.0
        } else {
            h
        }
    }
}

#[test]
fn a_closed_world_box_around_the_level_is_its_surface_whichever_way_it_faces() {
    for inward in [false, true] {
        let h = 100.0;
        let mut meshes = props();
        meshes.push(cube("World", Vec3::splat(-h), Vec3::splat(h), inward));
        let (level, seen) = bake(meshes);
        let (kind, rule) = kind_of(&seen, "World");
        assert_eq!(kind, "trimesh", "inward {inward}: {rule}");
        if inward {
            assert!(rule.contains("inwards"), "{rule}");
        } else {
            assert!(rule.contains("level shell"), "{rule}");
        }
        assert_eq!(kind_of(&seen, "Crate").0, "cuboid", "{seen:?}");
        assert_eq!(kind_of(&seen, "Crate2").0, "cuboid", "{seen:?}");
        assert_eq!(kind_of(&seen, "Ball").0, "sphere", "{seen:?}");
        playable(&level, h, "World", to_box(h));
    }
}

#[test]
fn a_sky_sphere_around_the_level_is_its_surface() {
    for inward in [false, true] {
        let r = 150.0;
        let mut meshes = props();
        meshes.push(sphere("Sky", Vec3::ZERO, r, inward));
        let (level, seen) = bake(meshes);
        let (kind, rule) = kind_of(&seen, "Sky");
        assert_eq!(kind, "trimesh", "inward {inward}: {rule}");
        // the playable box well inside the (faceted) sphere; rays along
        // the axes meet it at a pole or on the equator's facets, within
        // the facets' sag of r
        let level = &level;
        let from = Vec3::new(0.0, 3.0, 0.0);
        let hit = level
            .raycast(&Ray::new(from, Vec3::X, 1e6), &Filter::ALL)
            .unwrap();
        assert_eq!(level.object_name(hit.object).unwrap_or_default(), "Sky");
        assert!(
            hit.t > r * 0.97 && hit.t <= r,
            "ray +x from inside the sky: t {}",
            hit.t
        );
        playable(level, 60.0, "Sky", |d| {
            // exact distance to the pole vertices along ±y
            if d.y > 0.0 {
                r - 3.0
            } else if d.y < 0.0 {
                r + 3.0
            } else {
                hit.t
            }
        });
    }
}

#[test]
fn a_room_around_its_props_is_its_surface_whichever_way_it_faces() {
    for inward in [false, true] {
        let h = 6.0;
        let mut meshes = props();
        meshes.push(cube("Room", Vec3::splat(-h), Vec3::splat(h), inward));
        // a crate outside the room, beside it, stays a solid
        meshes.push(cube(
            "Outside",
            Vec3::new(10.0, -6.0, 0.0),
            Vec3::new(11.0, -5.0, 1.0),
            false,
        ));
        let (level, seen) = bake(meshes);
        let (kind, rule) = kind_of(&seen, "Room");
        assert_eq!(kind, "trimesh", "inward {inward}: {rule}");
        assert_eq!(kind_of(&seen, "Outside").0, "cuboid", "{seen:?}");
        playable(&level, h, "Room", to_box(h));
    }
}

#[test]
fn a_hollow_building_with_thick_walls_around_a_prop_is_its_surface() {
    // outer walls ±8, inner ±6: 2 m thick, one closed mesh of two shells
    let outer = cube("", Vec3::splat(-8.0), Vec3::splat(8.0), false);
    let inner = cube("", Vec3::splat(-6.0), Vec3::splat(6.0), true);
    let mut pos = outer.positions.clone();
    pos.extend(&inner.positions);
    let mut tris = outer.triangles.clone();
    tris.extend(inner.triangles.iter().map(|t| t.map(|i| i + 8)));
    let building = SceneMesh::new("Building", pos, &tris);
    let mut meshes = props();
    meshes.push(building.clone());
    let (level, seen) = bake(meshes);
    let (kind, rule) = kind_of(&seen, "Building");
    assert_eq!(kind, "trimesh", "{rule}");
    assert!(rule.contains("level shell"), "{rule}");
    playable(&level, 6.0, "Building", to_box(6.0));
    // inside the walls is still "inside" nothing (a surface), but a ray
    // from the room meets the inner wall first
    let hit = level
        .raycast(&Ray::new(Vec3::ZERO, Vec3::X, 100.0), &Filter::ALL)
        .unwrap();
    assert!((hit.t - 6.0).abs() < 1e-4, "{}", hit.t);

    // the same building with nothing inside is a solid: its walls hold
    // points, its hollow does not
    let (level, seen) = bake(vec![building]);
    let (kind, rule) = kind_of(&seen, "Building");
    assert_ne!(kind, "trimesh", "{rule}");
    assert_eq!(
        level.contains_point(Vec3::new(7.0, 0.0, 0.0), &Filter::ALL),
        vec![level.object(0).unwrap()]
    );
    assert!(
        level
            .contains_point(Vec3::new(0.0, 0.0, 0.0), &Filter::ALL)
            .is_empty()
    );
}

#[test]
fn a_crate_on_its_own_or_beside_others_stays_a_solid() {
    let (level, seen) = bake(vec![cube("Crate", Vec3::ZERO, Vec3::ONE, false)]);
    assert_eq!(kind_of(&seen, "Crate").0, "cuboid");
    assert_eq!(
        level.contains_point(Vec3::splat(0.5), &Filter::ALL),
        vec![level.object(0).unwrap()]
    );
    // a crate with a smaller crate on top and one beside it: no shells
    let (_, seen) = bake(vec![
        cube("Crate", Vec3::ZERO, Vec3::splat(2.0), false),
        cube(
            "Top",
            Vec3::new(0.5, 2.0, 0.5),
            Vec3::new(1.5, 3.0, 1.5),
            false,
        ),
        cube(
            "Beside",
            Vec3::new(3.0, 0.0, 0.0),
            Vec3::new(4.0, 1.0, 1.0),
            false,
        ),
    ]);
    for o in ["Crate", "Top", "Beside"] {
        assert_eq!(kind_of(&seen, o).0, "cuboid", "{seen:?}");
    }
    // a convex crate around one small thing (a box in a box) is a solid:
    // a convex shell must hold half the level
    let (_, seen) = bake(vec![
        cube("Big", Vec3::ZERO, Vec3::splat(4.0), false),
        cube("Small", Vec3::ONE, Vec3::splat(2.0), false),
        cube("Far1", Vec3::splat(10.0), Vec3::splat(11.0), false),
        cube("Far2", Vec3::splat(20.0), Vec3::splat(21.0), false),
    ]);
    assert_eq!(kind_of(&seen, "Big").0, "cuboid", "{seen:?}");
    // crates that overlap or share faces (a long beam through a crate)
    // do not enclose each other
    let (_, seen) = bake(vec![
        cube("Unit", Vec3::splat(-0.5), Vec3::splat(0.5), false),
        cube(
            "Beam",
            Vec3::new(-2.0, -0.5, -0.5),
            Vec3::new(2.0, 0.5, 0.5),
            false,
        ),
        cube(
            "Fat",
            Vec3::new(-0.4, -1.0, -1.0),
            Vec3::new(0.4, 1.0, 1.0),
            false,
        ),
    ]);
    for o in ["Unit", "Beam", "Fat"] {
        assert_eq!(kind_of(&seen, o).0, "cuboid", "{seen:?}");
    }
}

/// A 100,000-triangle prop, closed or open, becomes a low-poly solid by
/// default, within its deviation (the bake time is printed: measured, not
/// asserted).
#[test]
fn a_100k_triangle_prop_becomes_a_low_poly_solid() {
    for open in [false, true] {
        let (pos, tris) = torus_knot(500, 100, open);
        let knot = SceneMesh::new("Knot", pos, &tris);
        assert!(knot.triangles.len() >= 99_000);
        let scene = Scene::from_meshes(vec![knot]);
        let baked = bake_scene(&scene, &BakeSettings::default());
        let r = &baked.report;
        assert_eq!(
            r.collider_kinds.keys().collect::<Vec<_>>(),
            ["bsp"],
            "open {open}: {:?}",
            Level::from_bytes(&baked.bytes).unwrap().archive().rules
        );
        let c = &r.surfaces[0];
        assert!(c.fidelity.faces_out <= 1024, "{}", c.fidelity.faces_out);
        assert!(c.within_tolerance(), "{:?}", c.fidelity);
        println!(
            "100k-triangle knot (open {open}): {} → {} faces, Hausdorff {:.4} m, build {:.0} ms",
            c.fidelity.faces_in,
            c.fidelity.faces_out,
            c.fidelity.hausdorff(),
            r.build_ms
        );
    }
}
