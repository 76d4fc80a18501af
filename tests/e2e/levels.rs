//! Every shared level bakes, its counts match the published ones, archives
//! are deterministic at any thread count, and instancing stores a mesh once.

use kiln_baker::{BakeSettings, bake_file};
use kiln_runtime::Filter;
use kiln_runtime::Level;
use kiln_tests::{levels_dir, readme_degenerates, readme_rows};

/// Positions (as bit patterns) and triangles (as position triples) of a
/// baked triangle mesh level, sorted: equal for two encodings of one mesh
/// whatever their point order.
fn geometry(bytes: &[u8]) -> (Vec<[u32; 3]>, Vec<[[u32; 3]; 3]>) {
    let level = Level::from_bytes(bytes).unwrap();
    let objs = kiln_baker::export::world_objects(level.archive());
    let key = |p: [f32; 3]| p.map(f32::to_bits);
    let mut pos: Vec<[u32; 3]> = objs
        .iter()
        .flat_map(|o| o.positions.iter().map(|p| key(*p)))
        .collect();
    pos.sort_unstable();
    pos.dedup();
    let tris = kiln_tests::sorted_triangles(objs.iter().flat_map(|o| {
        o.triangles
            .iter()
            .map(|t| t.map(|i| o.positions[i as usize]))
    }));
    (pos, tris)
}

#[test]
fn the_draco_box_bakes_to_the_same_triangles_as_the_plain_box() {
    let Some(dir) = levels_dir() else { return };
    let settings = BakeSettings::default().all_meshes();
    let plain = bake_file(&dir.join("khr_Box.glb"), &settings).unwrap();
    let draco = bake_file(&dir.join("khr_Box_draco.glb"), &settings).unwrap();
    assert_eq!(draco.report.baked_triangles, 12);
    let (pp, pt) = geometry(&plain.bytes);
    let (dp, dt) = geometry(&draco.bytes);
    assert_eq!(pp, dp, "positions");
    assert_eq!(pt, dt, "triangles");
    // and classified, both are the same unit box
    let a = bake_file(&dir.join("khr_Box.glb"), &BakeSettings::default()).unwrap();
    let b = bake_file(&dir.join("khr_Box_draco.glb"), &BakeSettings::default()).unwrap();
    let kinds = |x: &kiln_baker::Baked| x.report.collider_kinds.clone();
    assert_eq!(kinds(&a), kinds(&b));
    let top = |bytes: &[u8]| {
        let l = Level::from_bytes(bytes).unwrap();
        let n = &l.archive().top;
        (n.min.map(|v| v.to_native()), n.max.map(|v| v.to_native()))
    };
    assert_eq!(top(&a.bytes), top(&b.bytes));
}

#[test]
fn every_shared_level_bakes_and_counts_match_the_readme() {
    let Some(dir) = levels_dir() else { return };
    let rows = readme_rows(&dir);
    let degens = readme_degenerates(&dir);
    assert!(rows.len() >= 20, "README table parsed: {} rows", rows.len());
    let mut checked = 0;
    for row in rows.iter().filter(|r| !r.file.ends_with(".bin")) {
        let path = dir.join(&row.file);
        let result = bake_file(&path, &BakeSettings::default().all_meshes());
        let baked = result.unwrap_or_else(|e| panic!("{e}"));
        let r = &baked.report;
        assert_eq!(
            r.scene_triangles, row.instanced,
            "{}: instanced triangles",
            row.file
        );
        assert_eq!(
            r.baked_triangles + r.scene_degenerate,
            row.instanced,
            "{}",
            row.file
        );
        let all_meshes_drawn = !r.warnings.iter().any(|w| w.contains("used by no node"));
        if all_meshes_drawn {
            assert_eq!(
                r.unique_triangles, row.unique,
                "{}: unique triangles",
                row.file
            );
            // where the README knows the degenerate count (over unique meshes)
            if let Some((_, Some(d))) = degens.iter().find(|(f, _)| *f == row.file) {
                assert_eq!(
                    r.unique_degenerate, *d,
                    "{}: degenerate triangles",
                    row.file
                );
            }
        } else {
            assert!(r.unique_triangles < row.unique, "{}", row.file);
        }
        // the archive opens and holds what the report says
        let level = Level::from_bytes(&baked.bytes).unwrap();
        let a = level.archive();
        let world: usize = a
            .instances
            .iter()
            .map(|i| {
                a.colliders[i.collider.to_native() as usize]
                    .tri_mesh()
                    .map_or(0, |m| m.triangle_count())
            })
            .sum();
        assert_eq!(world, r.baked_triangles, "{}", row.file);
        checked += 1;
    }
    assert!(checked >= 19, "checked {checked} levels");
}

#[test]
fn a_mesh_used_by_two_nodes_is_stored_once() {
    let Some(dir) = levels_dir() else { return };
    // shape_collection: one mesh is used by two nodes (README)
    let baked = bake_file(
        &dir.join("shape_collection.glb"),
        &BakeSettings::default().all_meshes(),
    )
    .unwrap();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let a = level.archive();
    assert_eq!(a.colliders.len(), 6);
    assert_eq!(a.instances.len(), 7);
    assert_eq!(baked.report.stored_triangles, 2390);
    assert_eq!(baked.report.baked_triangles, 3542);
}

#[test]
fn archives_are_byte_identical_at_one_and_two_threads() {
    let Some(dir) = levels_dir() else { return };
    // every shared level (the README's table), with both tree kinds on the
    // largest ones
    let files: Vec<String> = readme_rows(&dir)
        .into_iter()
        .map(|r| r.file)
        .filter(|f| !f.ends_with(".bin"))
        .collect();
    assert!(files.len() >= 19, "{files:?}");
    for file in &files {
        let bake = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    bake_file(&dir.join(file), &BakeSettings::default())
                        .unwrap()
                        .bytes
                })
        };
        let one = bake(1);
        let two = bake(2);
        assert!(
            one == two,
            "{file}: archives differ between 1 and 2 threads"
        );
    }
}

#[test]
fn quantized_and_meshopt_variants_match_the_plain_level() {
    let Some(dir) = levels_dir() else { return };
    let plain = bake_file(&dir.join("sauer_pandora.glb"), &BakeSettings::default()).unwrap();
    let bounds = |bytes: &[u8]| {
        let l = Level::from_bytes(bytes).unwrap();
        let n = &l.archive().top;
        (n.min.map(|v| v.to_native()), n.max.map(|v| v.to_native()))
    };
    let (plo, phi) = bounds(&plain.bytes);
    for file in ["sauer_pandora_quantized.glb", "sauer_pandora_meshopt.glb"] {
        let b = bake_file(&dir.join(file), &BakeSettings::default()).unwrap();
        assert_eq!(
            b.report.baked_triangles, plain.report.baked_triangles,
            "{file}"
        );
        let (lo, hi) = bounds(&b.bytes);
        for k in 0..3 {
            // the README: world bbox within quantisation error (~0.05 units here)
            assert!(
                (lo[k] - plo[k]).abs() < 0.1 && (hi[k] - phi[k]).abs() < 0.1,
                "{file}: {lo:?}..{hi:?} vs {plo:?}..{phi:?}"
            );
        }
    }
}

/// Every shared level baked with default settings gets the colliders a
/// level designer would expect: props (the duck, the fox, the pirate, the
/// helmets' parts, the torus) become low-poly solids with their fidelity
/// reported, cubes boxes and balls spheres; terrain, a level's wall and
/// floor pieces and the room around the occlusion test's spheres stay
/// triangle meshes; authored colliders stay as authored.
#[test]
fn every_shared_level_gets_the_collider_kinds_a_level_designer_expects() {
    let Some(dir) = levels_dir() else { return };
    let expected: &[(&str, &[(&str, usize)])] = &[
        ("23_multi_prim_vertex_attribute.gltf", &[("trimesh", 1)]),
        ("bevy_terrain.glb", &[("trimesh", 1)]),
        (
            "godot_occlusion_room.glb",
            &[("sphere", 16), ("trimesh", 1)],
        ),
        ("godot_truck_town.gltf", &[("cuboid", 1), ("trimesh", 15)]),
        ("khr_Box.glb", &[("cuboid", 1)]),
        ("khr_Box_draco.glb", &[("cuboid", 1)]),
        ("khr_Box_meshopt.glb", &[("cuboid", 1)]),
        ("khr_DamagedHelmet.glb", &[("bsp", 1)]),
        ("khr_Duck.glb", &[("bsp", 1)]),
        ("khr_FlightHelmet.glb", &[("bsp", 6)]),
        ("khr_Fox.glb", &[("bsp", 1)]),
        ("many-cubes.gltf", &[("cuboid", 498), ("polytope", 3)]),
        ("meshopt_pirate.glb", &[("bsp", 1)]),
        ("re_fortitude.glb", &[("trimesh", 119)]),
        ("sauer_pandora.glb", &[("trimesh", 206)]),
        ("sauer_pandora_meshopt.glb", &[("trimesh", 206)]),
        ("sauer_pandora_quantized.glb", &[("trimesh", 206)]),
        (
            "shape_collection.glb",
            &[("bsp", 1), ("cuboid", 1), ("polytope", 3), ("sphere", 1)],
        ),
        ("tess_steelribs.glb", &[("trimesh", 38)]),
        ("vk_terrain.gltf", &[("trimesh", 1)]),
    ];
    let files: Vec<String> = readme_rows(&dir)
        .into_iter()
        .map(|r| r.file)
        .filter(|f| !f.ends_with(".bin"))
        .collect();
    assert_eq!(files.len(), expected.len(), "{files:?}");
    for (file, kinds) in expected {
        assert!(files.iter().any(|f| f == file), "{file} not in the README");
        let baked = bake_file(&dir.join(file), &BakeSettings::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let got: Vec<(&str, usize)> = baked
            .report
            .collider_kinds
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(&got, kinds, "{file}");
        // every concave solid is low-poly, with its fidelity reported
        for c in &baked.report.surfaces {
            let f = &c.fidelity;
            assert!(
                f.faces_out < f.faces_in,
                "{file}: {} has {} faces from {}",
                c.object,
                f.faces_out,
                f.faces_in
            );
            assert!(
                f.hausdorff() <= 10.0 * c.tolerance,
                "{file}: {} deviates {}",
                c.object,
                f.hausdorff()
            );
        }
        let solids = kinds
            .iter()
            .filter(|(k, _)| *k == "bsp")
            .map(|(_, n)| n)
            .sum::<usize>();
        assert!(baked.report.surfaces.len() >= solids, "{file}");
    }
}

/// The occlusion test room is a closed box around sixteen spheres: no
/// point in the room is inside it, only inside the spheres.
#[test]
fn no_point_in_the_occlusion_room_is_inside_its_walls() {
    let Some(dir) = levels_dir() else { return };
    let baked = bake_file(
        &dir.join("godot_occlusion_room.glb"),
        &BakeSettings::default(),
    )
    .unwrap();
    let level = Level::from_bytes(&baked.bytes).unwrap();
    let a = level.archive();
    let n = &a.top;
    let (lo, hi) = (
        glam::Vec3::from(n.min.map(|v| v.to_native())),
        glam::Vec3::from(n.max.map(|v| v.to_native())),
    );
    let mut inside_spheres = 0;
    let steps = 24;
    for i in 0..steps {
        for j in 0..steps {
            for k in 0..steps {
                let t = |x: usize| (x as f32 + 0.5) / steps as f32;
                let p = lo + (hi - lo) * glam::Vec3::new(t(i), t(j), t(k));
                for o in level.contains_point(p, &Filter::ALL) {
                    let kind = a.colliders
                        [a.instances[o.index() as usize].collider.to_native() as usize]
                        .kind_name();
                    assert_eq!(
                        kind,
                        "sphere",
                        "{p} inside {}",
                        level.object_name(o).unwrap_or_default()
                    );
                    inside_spheres += 1;
                }
            }
        }
    }
    assert!(inside_spheres > 0, "the grid found no sphere at all");
}
