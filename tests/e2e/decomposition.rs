//! Convex pieces (`kiln_baker::collider::pieces`) judged by the one
//! measure every decomposer is judged by
//! ([`kiln_tests::decomposition::measure`]): shapes of known least piece
//! counts get exactly them; every concave prop of the shared levels, baked
//! with pieces, gets pieces whose archived concavity and coverage bound
//! what the measure finds; the pieces are the same bytes on one thread and
//! on two; random and broken meshes get pieces or an error, never a panic.

use glam::DVec3;
use kiln_baker::collider::pieces::{self, PieceSettings};
use kiln_baker::collider::{BuiltCollider, bsp};
use kiln_baker::{BakeSettings, bake_scene};
use kiln_baker::{Motion, Scene, SceneInstance, SceneMesh};
use kiln_runtime::Level;
use kiln_tests::Rng;
use kiln_tests::decomposition::{
    cells_surface, indexed, kiln_pieces, kiln_solid, known_shapes, measure, piece_points, welded,
};
use kiln_tests::solid::Solid;
use std::collections::HashMap;
use std::path::Path;

/// Kiln's pieces of a closed mesh at the default settings but
/// `concavity` (mesh units).
fn pieces_of(tris: &[[DVec3; 3]], concavity: f64) -> Result<pieces::Decomposition, String> {
    kiln_pieces(&kiln_solid(tris)?, concavity, 64)
}

/// The closed surface of unit cells as a scene mesh.
fn cells_mesh(name: &str, cells: &[[i32; 3]]) -> SceneMesh {
    let (v, t) = indexed(&cells_surface(cells));
    let v: Vec<[f32; 3]> = v.iter().map(|p| p.map(|x| x as f32)).collect();
    SceneMesh::new(name, v, &t)
}

#[test]
fn shapes_of_known_least_piece_counts_get_them_and_fit_exactly() {
    for (name, cells, least) in known_shapes() {
        let tris = cells_surface(&cells);
        let d = pieces_of(&tris, 0.05).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.pieces.len(), least, "{name}: {} cells", d.cells);
        let m = measure(&Solid::new(tris), &piece_points(&d), 2000, 1);
        assert!(m.concavity < 1e-5 && m.coverage < 1e-5, "{name}: {m:?}");
    }
}

#[test]
fn a_torus_needs_eight_pieces_below_its_tube_radius_and_gets_eight() {
    // a torus of radius 1 and tube 0.25: with a bound below the tube's
    // radius no piece may span the hole, and a convex piece of a ring
    // bulging less than the tube covers at most an eighth of it
    let (r, t, n, m) = (1.0f64, 0.25f64, 32usize, 12usize);
    let at = |i: usize, j: usize| {
        let (u, v) = (
            i as f64 / n as f64 * std::f64::consts::TAU,
            j as f64 / m as f64 * std::f64::consts::TAU,
        );
        DVec3::new(
            (r + t * v.cos()) * u.cos(),
            t * v.sin(),
            (r + t * v.cos()) * u.sin(),
        )
    };
    let mut tris = Vec::new();
    for i in 0..n {
        for j in 0..m {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            tris.push([a, c, b]);
            tris.push([a, d, c]);
        }
    }
    let solid = Solid::new(tris.clone());
    assert!(solid.inside(DVec3::new(1.0, 0.0, 0.0)) && !solid.inside(DVec3::ZERO));
    let d = pieces_of(&tris, 0.1).expect("a torus has pieces");
    // and eight do: the top-down search finds the ring's segments, where
    // greedy merging alone left 18 pieces that met at odd angles
    assert_eq!(d.pieces.len(), 8, "{} pieces", d.pieces.len());
    let measured = measure(&solid, &piece_points(&d), 4000, 2);
    assert!(measured.concavity <= 0.1 + 0.06, "{measured:?}");
}

#[test]
fn the_pieces_are_the_same_on_one_thread_and_on_two() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/levels/khr_Duck.glb");
    let scene = kiln_baker::ingest::load(&path)
        .expect("the Duck loads")
        .scene;
    let tris: Vec<[DVec3; 3]> = scene.world_triangles().iter().map(|t| t.v).collect();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool")
            .install(|| pieces_of(&tris, 0.04))
            .expect("the Duck has pieces")
    };
    let (one, two) = (run(1), run(2));
    assert!(one.pieces.len() > 1);
    assert_eq!(one, two);
    // and a bake with pieces gives the same bytes on both
    let mut settings = BakeSettings::default();
    settings.decompose = true;
    let bake = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool")
            .install(|| bake_scene(&scene, &settings).bytes)
    };
    assert_eq!(bake(1), bake(2));
}

/// Every concave prop of the shared levels, baked with pieces: the archive
/// holds them, and the measure finds the pieces within the concavity and
/// coverage the archive states for them (both are sampled bounds: the
/// measure may find up to a tenth more, plus 1 mm).
#[test]
fn every_shared_prop_gets_pieces_within_their_stated_figures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/levels");
    let mut settings = BakeSettings::default();
    settings.decompose = true;
    let mut judged = 0;
    let mut report = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("shared levels")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "glb" || x == "gltf"))
        .collect();
    names.sort();
    for path in names {
        let Ok(scene) = kiln_baker::ingest::load(&path).map(|i| i.scene) else {
            continue;
        };
        let bytes = bake_scene(&scene, &settings).bytes;
        let level = Level::from_bytes(&bytes).expect("the bake opens");
        let a = level.archive();
        let mut by_source: HashMap<usize, Vec<[DVec3; 3]>> = HashMap::new();
        for t in scene.world_triangles() {
            by_source.entry(t.instance).or_default().push(t.v);
        }
        for inst in a.instances.iter() {
            let k = inst.collider.to_native();
            let is_bsp = a.colliders[k as usize].kind_name() == "bsp";
            let d = a.decomposition(k);
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            let name = format!(
                "{file} {}",
                scene.instances[inst.source.to_native() as usize].name
            );
            assert_eq!(
                is_bsp,
                d.is_some(),
                "{name}: a concave solid and only it has pieces"
            );
            let Some(d) = d else { continue };
            let m = a.rows(inst).world_from_local.map(f64::from);
            let place = |v: [f32; 3]| {
                let v = v.map(f64::from);
                DVec3::new(
                    m[0] * v[0] + m[1] * v[1] + m[2] * v[2] + m[3],
                    m[4] * v[0] + m[5] * v[1] + m[6] * v[2] + m[7],
                    m[8] * v[0] + m[9] * v[1] + m[10] * v[2] + m[11],
                )
            };
            let scale = (0..3)
                .map(|c| DVec3::new(m[c], m[4 + c], m[8 + c]).length())
                .fold(0.0, f64::max);
            let pieces: Vec<Vec<DVec3>> = d
                .pieces
                .iter()
                .map(|p| {
                    p.vertices
                        .iter()
                        .map(|v| place(v.map(|x| x.to_native())))
                        .collect()
                })
                .collect();
            let render = &by_source[&(inst.source.to_native() as usize)];
            let measured = measure(&Solid::new(render.clone()), &pieces, 400, 7);
            let stated = (
                f64::from(d.concavity.to_native()) * scale,
                f64::from(d.coverage.to_native()) * scale,
            );
            report.push(format!("{name}: {measured:?}, stated {stated:?}"));
            assert_eq!(measured.flat, 0, "{name}: a flat piece");
            assert!(
                measured.concavity <= 1.1 * stated.0 + 1e-3,
                "{name}: the pieces bulge {} beyond the render mesh, the archive says at most {}",
                measured.concavity,
                stated.0
            );
            assert!(
                measured.coverage <= 1.1 * stated.1 + 1e-3,
                "{name}: the pieces miss the render mesh by {}, the archive says at most {}",
                measured.coverage,
                stated.1
            );
            judged += 1;
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(judged >= 8, "only {judged} props judged");
}

/// A triangle soup from the generator: a closed box with some faces
/// dropped, flipped, duplicated or collapsed, scaled from tiny to huge.
fn broken_mesh(rng: &mut Rng) -> Vec<[DVec3; 3]> {
    let cells: Vec<[i32; 3]> = (0..1 + rng.below(6))
        .map(|_| {
            [
                rng.below(3) as i32,
                rng.below(3) as i32,
                rng.below(2) as i32,
            ]
        })
        .collect();
    let scale = 10f64.powi(rng.below(13) as i32 - 6);
    let mut tris: Vec<[DVec3; 3]> = cells_surface(&cells)
        .into_iter()
        .map(|t| t.map(|v| v * scale))
        .collect();
    for _ in 0..rng.below(6) {
        if tris.is_empty() {
            break;
        }
        let k = rng.below(tris.len());
        match rng.below(5) {
            0 => {
                tris.remove(k);
            }
            1 => tris[k].swap(0, 1),
            2 => tris.push(tris[k]),
            3 => tris[k][1] = tris[k][0],
            _ => tris.push([rng.v(3.0) * scale, rng.v(3.0) * scale, rng.v(3.0) * scale]),
        }
    }
    tris
}

#[test]
fn random_and_broken_meshes_get_pieces_or_an_error_never_a_panic() {
    let mut rng = Rng::new(68);
    let (mut made, mut baked) = (0, 0);
    for case in 0..60 {
        let tris = broken_mesh(&mut rng);
        let w = welded(&tris);
        // the whole bake, as a dynamic body (pieces for any collider that
        // is not convex, a triangle mesh's from a solid made for them):
        // an archive that opens, whatever the mesh
        let (v, t) = indexed(&tris);
        let mesh = SceneMesh::new(
            "broken",
            v.iter().map(|p| p.map(|x| x as f32)).collect(),
            &t,
        );
        let scene = Scene {
            instances: vec![SceneInstance {
                name: "broken".into(),
                mesh: 0,
                motion: Motion::Dynamic,
                ..SceneInstance::default()
            }],
            meshes: vec![mesh],
            ..Scene::default()
        };
        let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes)
            .unwrap_or_else(|e| panic!("case {case}: {e}"));
        baked += usize::from(level.archive().decompositions.len() == 1);
        let settings = BakeSettings::default();
        let Ok((collider, _)) = bsp::build(&w, settings.shape_settings(), 1.0) else {
            continue;
        };
        let size = w
            .vertices
            .iter()
            .flatten()
            .fold(0.0f64, |m, c| m.max(f64::from(*c).abs()));
        let got = pieces::of_collider(
            &collider,
            &PieceSettings {
                concavity: 0.02 * size.max(1e-30),
                max_pieces: 1 + rng.below(8),
                max_planes: 6 + rng.below(60),
            },
            Some(&w),
        );
        match (&collider, got) {
            (BuiltCollider::Bsp(_) | BuiltCollider::Polytope(_), Some(Ok(d))) => {
                assert!(!d.pieces.is_empty(), "case {case}");
                made += 1;
            }
            (BuiltCollider::Bsp(_) | BuiltCollider::Polytope(_), Some(Err(_))) => {}
            (_, None) => {}
            (c, r) => panic!("case {case}: {r:?} for {c:?}"),
        }
    }
    assert!(made >= 20, "only {made} of 60 meshes decomposed");
    assert!(
        baked >= 20,
        "only {baked} of 60 dynamic bodies baked with pieces"
    );
}

/// Which objects get pieces: those that ask (node extras `collider =
/// "decompose"` in any of its spellings; a project rule's `collider =
/// "decompose"` or `decompose = true`), dynamic bodies whose collider is a
/// concave solid, and every concave solid with `decompose` on; never a
/// static concave solid that does not ask, nor a convex object.
#[test]
fn pieces_go_to_the_objects_that_ask_and_to_dynamic_bodies() {
    use kiln_baker::config::{ColliderName, Overrides, Rule};
    let (l, cube) = (
        |name: &str| cells_mesh(name, &[[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
        cells_mesh("cube", &[[0, 0, 0]]),
    );
    let at = |x: f64| glam::DAffine3::from_translation(DVec3::new(4.0 * x, 0.0, 0.0));
    let object =
        |name: &str, mesh: usize, x: f64, extras: Option<&str>, motion: Motion| SceneInstance {
            name: name.into(),
            mesh,
            transform: at(x),
            extras_collider: extras.map(Into::into),
            motion,
            ..SceneInstance::default()
        };
    // an L with a face missing: open, so its collider is its triangles
    let mut open = l("open_l");
    open.triangles.remove(0);
    open.source_ids.remove(0);
    let scene = Scene {
        meshes: vec![l("l"), cube, open],
        instances: vec![
            object("open_static", 2, 7.0, None, Motion::Static),
            object("open_dynamic", 2, 8.0, None, Motion::Dynamic),
            object("static", 0, 0.0, None, Motion::Static),
            object("asks", 0, 1.0, Some("decompose"), Motion::Static),
            object(
                "asks_too",
                0,
                2.0,
                Some("convex_decomposition"),
                Motion::Static,
            ),
            object("dynamic", 0, 3.0, None, Motion::Dynamic),
            object("ruled", 0, 4.0, None, Motion::Static),
            object("ruled_kind", 0, 5.0, None, Motion::Static),
            object("convex_dynamic", 1, 6.0, None, Motion::Dynamic),
        ],
        ..Scene::default()
    };
    let pieces_of = |settings: &BakeSettings| {
        let level = Level::from_bytes(&bake_scene(&scene, settings).bytes).expect("opens");
        let a = level.archive();
        // the open L's collider is its triangles; its pieces are cut from
        // a solid made for them (the hole filled): the closed L's two,
        // within the bound of the render mesh (2% of the diagonal) and
        // covering it
        for i in 0..a.instances.len() {
            let c = a.instances[i].collider.to_native();
            if a.instance_name(i).starts_with("open") {
                assert_eq!(a.colliders[c as usize].kind_name(), "trimesh");
                if let Some(d) = a.decomposition(c) {
                    let n = d.pieces.len();
                    assert_eq!(n, 2, "{}", a.instance_rule(i));
                    let bound = 0.02 * DVec3::new(2.0, 2.0, 1.0).length() as f32;
                    assert!(
                        d.concavity.to_native() <= 1.1 * bound,
                        "{}",
                        a.instance_rule(i)
                    );
                    assert!(d.coverage.to_native() <= bound, "{}", a.instance_rule(i));
                }
            }
        }
        let mut out: Vec<(String, usize)> = (0..a.instances.len())
            .map(|i| {
                let inst = &a.instances[i];
                let n = a
                    .decomposition(inst.collider.to_native())
                    .map_or(0, |d| d.pieces.len());
                // the open L: whether it has pieces (counted above)
                let n = if a.instance_name(i).starts_with("open") {
                    n.min(1)
                } else {
                    n
                };
                (a.instance_name(i).to_string(), n)
            })
            .collect();
        out.sort();
        out
    };
    let mut settings = BakeSettings::default();
    let mut ruled = Rule::collider("ruled", ColliderName::Concave);
    ruled.settings = Overrides {
        decompose: Some(true),
        ..Overrides::default()
    };
    settings.rules = vec![ruled, Rule::collider("ruled_kind", ColliderName::Decompose)];
    let expect = |names: &[(&str, usize)]| {
        let mut v: Vec<(String, usize)> = names.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        v.sort();
        v
    };
    assert_eq!(
        pieces_of(&settings),
        expect(&[
            ("static", 0),
            ("asks", 2),
            ("asks_too", 2),
            ("dynamic", 2),
            ("ruled", 2),
            ("ruled_kind", 2),
            ("convex_dynamic", 0),
            ("open_static", 0),
            ("open_dynamic", 1),
        ])
    );
    // `--decompose`: every concave solid (a static triangle mesh stays
    // without: its pieces would need a solid made for them)
    settings.rules.clear();
    settings.decompose = true;
    assert_eq!(
        pieces_of(&settings),
        expect(&[
            ("static", 2),
            ("asks", 2),
            ("asks_too", 2),
            ("dynamic", 2),
            ("ruled", 2),
            ("ruled_kind", 2),
            ("convex_dynamic", 0),
            ("open_static", 0),
            ("open_dynamic", 1),
        ])
    );
}
