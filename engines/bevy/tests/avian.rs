//! Avian on Kiln's colliders (feature `avian`), in headless apps with a
//! fixed step: every object becomes the Avian body of the shape Kiln baked,
//! under every placement; Kiln's rays and Avian's spatial query agree on
//! every shared level; and bodies simulated by Avian land, rest, ride and
//! trigger where Kiln says the level is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use kiln_baker::BakeSettings;
use kiln_bevy::avian3d::prelude::*;
use kiln_bevy::{
    KilnAuthoredBody, KilnAvianPlugin, KilnFilter, KilnLevel, KilnMover, KilnPlugin, KilnQuery,
    KilnShape, KilnStaticCollider, KilnWorld,
};
use kiln_tests::Rng;

mod common;
use common::{assets, bake, bake_edited, root, until};

/// A headless app over `dir/assets` with Kiln and Avian, one fixed step of
/// 1/60 s an update.
fn app(dir: &Path) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.join("assets").display().to_string(),
            ..default()
        },
        TransformPlugin,
        KilnPlugin,
        PhysicsPlugins::default(),
        KilnAvianPlugin::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )))
    .insert_resource(Time::<Fixed>::from_hz(60.0));
    // as `App::run` would (Avian sets up parts of itself there)
    app.finish();
    app.cleanup();
    app
}

/// An app with archive `bytes` loaded as its level, its Avian colliders
/// built and Avian's spatial query up to date.
fn level_app(dir: &Path, bytes: &[u8]) -> App {
    std::fs::write(dir.join("assets/level.kiln"), bytes).unwrap();
    let mut app = app(dir);
    let handle = app.world().resource::<AssetServer>().load("level.kiln");
    app.world_mut().spawn(KilnLevel(handle));
    until(&mut app, "the level loads", |app| {
        app.world().resource::<KilnWorld>().world().is_some()
    });
    // the colliders are built after the sync point, Avian takes them at its
    // next step
    for _ in 0..3 {
        app.update();
    }
    app
}

/// A ray both sides are asked.
#[derive(Clone, Copy, Debug)]
struct Probe {
    origin: Vec3,
    dir: Dir3,
    max: f32,
}

/// How the two sides' answers to a set of rays compare.
#[derive(Default, Debug)]
struct Agreement {
    rays: usize,
    hits: usize,
    /// Rays whose first hits differ by more than 1 mm in `t`, the nearer
    /// lying within 1 mm of the other side's surface.
    grazes: usize,
    worst: f32,
    disagreements: Vec<String>,
}

/// Asks every probe of Kiln's level query and of Avian's spatial query,
/// neither seeing triggers, sensors or dynamic bodies (those Avian moves
/// or that Avian gives its convex pieces); rays that start inside
/// something are skipped (a solid answers 0 there, a triangle mesh does
/// not).
fn compare(app: &mut App, probes: Vec<Probe>) -> Agreement {
    compare_with(app, probes, false)
}

/// [`compare`], seeing dynamic bodies too when `dynamic`.
fn compare_with(app: &mut App, probes: Vec<Probe>, dynamic: bool) -> Agreement {
    app.world_mut()
        .run_system_once(
            move |kiln: KilnQuery,
                  avian: SpatialQuery,
                  skip: Query<(Entity, &RigidBody, Has<Sensor>)>| {
                let skipped: Vec<Entity> = skip
                    .iter()
                    .filter(|(_, r, sensor)| *sensor || (!dynamic && **r == RigidBody::Dynamic))
                    .map(|(e, _, _)| e)
                    .collect();
                let kf = KilnFilter::default().exclude(skipped.iter().copied());
                let af = SpatialQueryFilter::default().with_excluded_entities(skipped);
                let mut out = Agreement::default();
                // whether `p` lies within 1 mm of each side's surface
                let near_kiln = |p: Vec3| {
                    kiln.overlap_any(&KilnShape::from(Sphere::new(1e-3)), p, Quat::IDENTITY, &kf)
                };
                let near_avian = |p: Vec3| {
                    avian
                        .project_point(p, false, &af)
                        .is_some_and(|q| q.point.distance(p) <= 1e-3)
                };
                for p in &probes {
                    if kiln.contains_point_any(p.origin, &kf) {
                        continue;
                    }
                    out.rays += 1;
                    let k = kiln
                        .raycast(p.origin, p.dir, p.max, &kf)
                        .map(|k| k.distance);
                    let a = avian
                        .cast_ray(p.origin, p.dir, p.max, true, &af)
                        .map(|a| a.distance);
                    if let (Some(k), Some(a)) = (k, a) {
                        out.hits += 1;
                        out.worst = out.worst.max((k - a).abs());
                        if (k - a).abs() <= 1e-3 {
                            continue;
                        }
                    } else if k.is_none() && a.is_none() {
                        continue;
                    }
                    // one side's first hit is nearer (or the other has
                    // none): the same first hit within 1 mm when that
                    // point lies within 1 mm of the other side's surface
                    // (a ray grazing an edge)
                    let at = |t: f32| p.origin + *p.dir * t;
                    let grazes = match (k, a) {
                        (Some(k), a) if a.is_none_or(|a| k < a) => near_avian(at(k)),
                        (_, Some(a)) => near_kiln(at(a)),
                        _ => false,
                    };
                    if grazes {
                        out.grazes += 1;
                    } else {
                        out.disagreements
                            .push(format!("{p:?}: Kiln t {k:?}, Avian t {a:?}"));
                    }
                }
                out
            },
        )
        .expect("the system runs")
}

/// The tests' ray mix over the level's bounds, as probes.
fn mixed_probes(app: &mut App, n: usize, seed: u64) -> Vec<Probe> {
    let (lo, hi) = app
        .world_mut()
        .run_system_once(|kiln: Res<KilnWorld>| kiln.level().unwrap().bounds())
        .unwrap()
        .expect("the level has bounds");
    kiln_tests::ray_mix(lo, hi, n, seed)
        .into_iter()
        .filter_map(|r| {
            let len = r.dir.length();
            Some(Probe {
                origin: r.origin,
                dir: Dir3::new(r.dir).ok()?,
                max: r.max_t * len,
            })
        })
        .collect()
}

/// About `total` rays from all round aimed at the objects' middles, as
/// many at each.
fn aimed_probes(app: &mut App, total: usize, seed: u64) -> Vec<Probe> {
    let centres: Vec<Vec3> = app
        .world_mut()
        .run_system_once(|kiln: Res<KilnWorld>| {
            let level = kiln.level().unwrap();
            level
                .objects()
                .filter_map(|o| Some(level.object_rest(o)?.0.translation))
                .collect::<Vec<Vec3>>()
        })
        .unwrap();
    let per_object = total.div_ceil(centres.len().max(1));
    let mut r = Rng::new(seed);
    let mut out = Vec::new();
    for c in centres {
        for _ in 0..per_object {
            let from = c + r.unit32() * 6.0;
            let to = c + r.unit32() * r.range(0.0, 0.4);
            out.push(Probe {
                origin: from,
                dir: Dir3::new(to - from).unwrap(),
                max: 20.0,
            });
        }
    }
    out.truncate(total);
    out
}

/// Every Avian body the plugin made: name, kind, parry's shape type.
fn colliders(app: &mut App) -> Vec<(String, RigidBody, String)> {
    let mut q = app.world_mut().query::<(
        &Name,
        &RigidBody,
        &Collider,
        Option<&KilnStaticCollider>,
        Option<&KilnMover>,
    )>();
    let mut out: Vec<(String, RigidBody, String)> = q
        .iter(app.world())
        .filter(|(_, _, _, s, m)| s.is_some() || m.is_some())
        .map(|(n, r, c, _, _)| (n.to_string(), *r, format!("{:?}", c.shape().shape_type())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_kind_becomes_the_avian_shape_kiln_baked_under_every_placement() {
    for (name, xf) in kiln_tests::affine_placements() {
        let dir = assets(&format!("kinds-{}", name.replace([' ', ','], "-")));
        let scene = kiln_tests::every_kind_scene(xf);
        let bytes = kiln_baker::bake_scene(&scene, &BakeSettings::default()).bytes;
        let mut app = level_app(&dir, &bytes);
        let found = colliders(&mut app);
        let similar = !matches!(name, "non-uniform" | "mirrored" | "sheared");
        let kind = |n: &str| {
            found
                .iter()
                .find(|f| f.0 == n)
                .unwrap_or_else(|| panic!("{name}: no collider named {n}: {found:?}"))
                .2
                .clone()
        };
        assert_eq!(found.len(), 6, "{name}: {found:?}");
        assert!(
            found.iter().all(|f| f.1 == RigidBody::Static),
            "{name}: {found:?}"
        );
        assert_eq!(kind("polytope"), "ConvexPolyhedron", "{name}");
        assert_eq!(kind("floor"), "TriMesh", "{name}");
        assert_eq!(kind("bsp"), "TriMesh", "{name}");
        if similar {
            // the primitives keep their kind (turned or moved by a compound
            // of one only where the placement's rest needs it)
            for (n, want) in [
                ("cuboid", "Cuboid"),
                ("sphere", "Ball"),
                ("capsule", "Capsule"),
            ] {
                assert_eq!(kind(n), want, "{name}: {n}");
            }
        }
        let probes = aimed_probes(&mut app, 1_200, 7);
        let agreed = compare(&mut app, probes);
        assert!(
            agreed.disagreements.is_empty() && agreed.hits > 600,
            "{name}: {} of {} rays disagree (hits {}), first: {:?}",
            agreed.disagreements.len(),
            agreed.rays,
            agreed.hits,
            &agreed.disagreements[..agreed.disagreements.len().min(5)]
        );
        println!(
            "{name}: {} rays, {} hits, {} grazing, worst |Δt| of both hitting {:.2e}",
            agreed.rays, agreed.hits, agreed.grazes, agreed.worst
        );
    }
}

#[test]
fn a_dynamic_solid_becomes_its_convex_pieces_under_every_placement() {
    let props = kiln_baker::ingest::load(&root().join("samples/props.gltf"))
        .unwrap()
        .scene;
    let l = props
        .meshes
        .iter()
        .position(|m| m.name == "l_crate")
        .unwrap();
    // and a mirror that keeps every length: still a similarity, so the
    // pieces stay boxes, turned a half-turn round every axis
    let mut placements = kiln_tests::affine_placements();
    placements.push((
        "mirrored uniformly",
        bevy::math::DAffine3::from_scale_rotation_translation(
            bevy::math::DVec3::new(-1.5, 1.5, 1.5),
            bevy::math::DQuat::from_rotation_z(0.4),
            bevy::math::DVec3::new(1.0, 2.0, -3.0),
        ),
    ));
    for (name, xf) in placements {
        let scene = kiln_baker::Scene {
            meshes: vec![props.meshes[l].clone()],
            instances: vec![kiln_baker::SceneInstance {
                name: "l".into(),
                mesh: 0,
                transform: xf,
                motion: kiln_baker::scene::Motion::Dynamic,
                ..kiln_baker::SceneInstance::default()
            }],
            ..kiln_baker::Scene::default()
        };
        let bytes = kiln_baker::bake_scene(&scene, &BakeSettings::default()).bytes;
        let dir = assets(&format!("pieces-{}", name.replace([' ', ','], "-")));
        std::fs::write(dir.join("assets/level.kiln"), &bytes).unwrap();
        // no gravity: the body stays where it was baked while rays are asked
        let mut app = app(&dir);
        app.insert_resource(Gravity(Vec3::ZERO));
        let handle = app.world().resource::<AssetServer>().load("level.kiln");
        app.world_mut().spawn(KilnLevel(handle));
        until(&mut app, "the level loads", |app| {
            app.world().resource::<KilnWorld>().world().is_some()
        });
        run(&mut app, 3);
        let body = named(&mut app, "l");
        let collider = app.world().get::<Collider>(body).unwrap();
        let parts = collider
            .shape()
            .as_compound()
            .unwrap_or_else(|| panic!("{name}: not a compound"))
            .shapes()
            .iter()
            .map(|(_, s)| format!("{:?}", s.shape_type()))
            .collect::<Vec<_>>();
        let similar = !matches!(name, "non-uniform" | "mirrored" | "sheared");
        let want = if similar {
            "Cuboid"
        } else {
            "ConvexPolyhedron"
        };
        assert!(
            parts.len() == 2 && parts.iter().all(|p| p == want),
            "{name}: {parts:?}"
        );
        // the pieces part the solid exactly, so Avian's rays on them meet
        // Kiln's on the solid
        let probes = aimed_probes(&mut app, 600, 17);
        let agreed = compare_with(&mut app, probes, true);
        assert!(
            agreed.disagreements.is_empty() && agreed.hits > agreed.rays / 4,
            "{name}: {} of {} rays disagree (hits {}), first: {:?}",
            agreed.disagreements.len(),
            agreed.rays,
            agreed.hits,
            &agreed.disagreements[..agreed.disagreements.len().min(5)]
        );
        // its mass is Kiln's solid's at the plugin's density
        let level = app.world().resource::<KilnWorld>().level().unwrap().clone();
        let object = level.find_object("l").unwrap();
        let kiln_mass = level.object_mass_properties(object, 1000.0).unwrap();
        let mass = app.world().get::<Mass>(body).unwrap().0;
        assert!(
            (f64::from(mass) - kiln_mass.mass).abs() <= 1e-5 * kiln_mass.mass,
            "{name}: {mass} against {}",
            kiln_mass.mass
        );
    }
}

/// Every shared level's glTF, sorted.
fn shared_levels() -> Vec<PathBuf> {
    let Some(dir) = kiln_tests::levels_dir() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .collect();
    files.sort();
    files
}

#[test]
fn kiln_and_avian_rays_agree_on_every_shared_level() {
    let mut checked = 0;
    for path in shared_levels() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let baked = kiln_baker::bake_file(&path, &BakeSettings::default())
            .unwrap_or_else(|e| panic!("{file} does not bake: {e}"));
        let dir = assets(&format!("rays-{file}"));
        let mut app = level_app(&dir, &baked.bytes);
        let mut probes = mixed_probes(&mut app, 9_000, 11);
        probes.extend(aimed_probes(&mut app, 1_000, 13));
        let agreed = compare(&mut app, probes);
        assert!(
            agreed.disagreements.is_empty(),
            "{file}: {} of {} rays disagree (hits {}), first: {:#?}",
            agreed.disagreements.len(),
            agreed.rays,
            agreed.hits,
            &agreed.disagreements[..agreed.disagreements.len().min(5)]
        );
        println!(
            "{file}: {} rays, {} hits, {} grazing, worst |Δt| of both hitting {:.2e}",
            agreed.rays, agreed.hits, agreed.grazes, agreed.worst
        );
        checked += 1;
        let _ = std::fs::remove_dir_all(&dir);
    }
    if kiln_tests::levels_dir().is_some() {
        assert!(checked >= 20, "only {checked} shared levels checked");
    }
}

/// The entity named `name`.
fn named(app: &mut App, name: &str) -> Entity {
    let mut q = app.world_mut().query::<(Entity, &Name)>();
    q.iter(app.world())
        .find(|(_, n)| n.as_str() == name)
        .unwrap_or_else(|| panic!("no entity named {name}"))
        .0
}

fn at(app: &App, e: Entity) -> Vec3 {
    app.world().get::<Transform>(e).unwrap().translation
}

/// Where Kiln's world has entity `e`'s body or mover.
fn kiln_pose(app: &App, e: Entity) -> kiln_bevy::kiln_runtime::Pose {
    let kiln = app.world().resource::<KilnWorld>();
    kiln.world().unwrap().pose(kiln.object(e).unwrap()).unwrap()
}

/// Runs `frames` updates (one fixed step each).
fn run(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.update();
    }
}

/// A dynamic Avian ball of radius `r` at `p`.
fn ball(app: &mut App, r: f32, p: Vec3) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(r),
            Transform::from_translation(p),
        ))
        .id()
}

/// Points where a ball of radius `r` can land: the first hits of rays
/// straight down from above the level on faces turned up, where a ball
/// dropped from 0.3 m above lands near that point; those where the level is flat to 0.1 mm at eight points `r` and
/// `4r` away first, else those on faces within 25° of level.
fn landing_spots(app: &mut App, r: f32, want: usize) -> Vec<Vec3> {
    app.world_mut()
        .run_system_once(move |kiln: KilnQuery, world: Res<KilnWorld>| {
            let (lo, hi) = world.level().unwrap().bounds().unwrap();
            let f = KilnFilter::default();
            let top = hi.y + 1.0;
            let down = |x: f32, z: f32| {
                kiln.raycast(Vec3::new(x, top, z), Dir3::NEG_Y, top - lo.y + 1.0, &f)
            };
            let (mut flat, mut level) = (Vec::new(), Vec::new());
            let n = 40;
            for i in 0..n * n {
                // a spread-out order: every cell of the grid once
                let k = (i * 769) % (n * n);
                let x = lo.x + (hi.x - lo.x) * ((k % n) as f32 + 0.5) / n as f32;
                let z = lo.z + (hi.z - lo.z) * ((k / n) as f32 + 0.5) / n as f32;
                let Some(h) = down(x, z) else { continue };
                // dropped from 0.3 m above it from a clear start, the ball
                // lands near it (by Kiln's own sphere cast)
                let ball = KilnShape::from(Sphere::new(r));
                let from = h.point + Vec3::Y * (r + 0.3);
                let room = !kiln.overlap_any(&ball, from, Quat::IDENTITY, &f)
                    && kiln
                        .cast(&ball, from, Quat::IDENTITY, Dir3::NEG_Y, 1.0, &f)
                        .is_some_and(|c| c.distance > 0.1 && c.point.distance(h.point) < r);
                if h.normal.y < 0.9 || !room {
                    continue;
                }
                let mut around = [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)]
                    .into_iter()
                    .flat_map(|(dx, dz)| [r, 4.0 * r].map(|d| (dx * d, dz * d)));
                let is_flat = h.normal.y >= 0.9999
                    && around.all(|(dx, dz)| {
                        down(x + dx, z + dz).is_some_and(|o| (o.point.y - h.point.y).abs() < 1e-4)
                    });
                if is_flat {
                    flat.push(h.point);
                    if flat.len() == want {
                        break;
                    }
                } else if level.len() < want {
                    level.push(h.point);
                }
            }
            if flat.is_empty() { level } else { flat }
        })
        .unwrap()
}

#[test]
fn a_ball_dropped_on_each_shared_level_rests_where_kiln_says_the_ground_is() {
    let mut checked = 0;
    for path in shared_levels() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let baked = kiln_baker::bake_file(&path, &BakeSettings::default()).unwrap();
        let dir = assets(&format!("drop-{file}"));
        let mut app = level_app(&dir, &baked.bytes);
        let (lo, hi) = app
            .world()
            .resource::<KilnWorld>()
            .level()
            .unwrap()
            .bounds()
            .unwrap();
        let r = (0.05 * (hi - lo).min_element().max(0.2)).min(0.25);
        let spots = landing_spots(&mut app, r, 3);
        assert!(!spots.is_empty(), "{file}: nowhere for a ball to land");
        // a ball that cannot turn, with a grip, so one landing on a slope
        // stays where it lands
        let balls: Vec<Entity> = spots
            .iter()
            .map(|&s| {
                let b = ball(&mut app, r, s + Vec3::Y * (r + 0.3));
                app.world_mut()
                    .entity_mut(b)
                    .insert((LockedAxes::ROTATION_LOCKED, Friction::new(1.0)));
                b
            })
            .collect();
        run(&mut app, 180);
        for (&spot, &b) in spots.iter().zip(&balls) {
            let rest = at(&app, b);
            let v = app.world().get::<LinearVelocity>(b).unwrap().0;
            // resting on Kiln's surface to 1 cm: a ball 1 cm larger touches
            // it, one 1 cm smaller does not
            let (touches, sinks) = app
                .world_mut()
                .run_system_once(move |kiln: KilnQuery| {
                    let f = KilnFilter::default();
                    let ask = |radius: f32| {
                        let s = KilnShape::from(Sphere::new(radius));
                        kiln.overlap_any(&s, rest, Quat::IDENTITY, &f)
                    };
                    (ask(r + 0.01), ask(r - 0.01))
                })
                .unwrap();
            assert!(
                touches && !sinks && v.length() < 0.01,
                "{file}: a ball of radius {r} dropped over {spot} is at {rest} moving at {v}: \
                 within 1 cm of Kiln's surface {touches}, more than 1 cm into it {sinks}"
            );
            println!(
                "{file}: ball dropped over {spot} rests on Kiln's surface, {:.3} m from where it landed",
                rest.xz().distance(spot.xz())
            );
        }
        checked += 1;
        let _ = std::fs::remove_dir_all(&dir);
    }
    if kiln_tests::levels_dir().is_some() {
        assert!(
            checked >= 20,
            "only {checked} shared levels had a ball dropped"
        );
    }
}

#[test]
fn a_crate_authored_dynamic_falls_onto_the_table_and_stays() {
    let dir = assets("table");
    let mut app = level_app(&dir, &bake("samples/props.gltf"));
    let crate_ = named(&mut app, "crate");
    let table = named(&mut app, "table");
    assert_eq!(
        app.world().get::<RigidBody>(crate_),
        Some(&RigidBody::Dynamic)
    );
    assert_eq!(
        app.world().get::<RigidBody>(table),
        Some(&RigidBody::Static)
    );
    // the solid's own mass at the default density: a 0.4 m cube of water
    let mass = app.world().get::<Mass>(crate_).unwrap().0;
    assert!((mass - 64.0).abs() < 0.01, "{mass}");
    let start = at(&app, crate_);
    run(&mut app, 120);
    let rest = at(&app, crate_);
    assert!(
        (rest.y - 1.0).abs() < 0.01 && rest.xz().distance(start.xz()) < 0.02,
        "the crate fell from {start} to {rest}, not onto the table top at 0.8 m"
    );
    // and Kiln's world follows it: its ray meets the crate's top
    let top = app
        .world_mut()
        .run_system_once(move |kiln: KilnQuery| {
            kiln.raycast(
                rest + Vec3::Y * 2.0,
                Dir3::NEG_Y,
                5.0,
                &KilnFilter::default(),
            )
        })
        .unwrap()
        .expect("Kiln sees the crate");
    assert_eq!(top.entity, crate_);
    assert!((top.point.y - (rest.y + 0.2)).abs() < 1e-3, "{top:?}");
}

#[test]
fn a_ball_rolled_into_the_tub_stays_inside() {
    let dir = assets("tub");
    let mut app = level_app(&dir, &bake("samples/props.gltf"));
    // the tub's pit: x and z from 6 to 7 (the tub spans 5..8 and 6..9), its floor at 0.1
    let b = ball(&mut app, 0.15, Vec3::new(6.5, 0.4, 7.5));
    app.world_mut()
        .entity_mut(b)
        .insert(LinearVelocity(Vec3::new(3.0, 0.0, 2.0)));
    for _ in 0..240 {
        app.update();
        let p = at(&app, b);
        assert!(
            (6.0..=7.0).contains(&p.x) && (7.0..=8.0).contains(&p.z) && p.y > 0.1,
            "the ball left the pit: {p}"
        );
    }
    let rest = at(&app, b);
    assert!((rest.y - 0.25).abs() < 0.01, "{rest}");
}

#[test]
fn a_kinematic_lift_carries_an_avian_box_up() {
    let dir = assets("lift");
    let mut app = level_app(&dir, &bake("samples/moving_course.gltf"));
    let lift = named(&mut app, "lift");
    assert_eq!(
        app.world().get::<RigidBody>(lift),
        Some(&RigidBody::Kinematic)
    );
    let base = at(&app, lift);
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.4, 0.4, 0.4),
            Transform::from_translation(base + Vec3::Y * 0.35),
        ))
        .id();
    run(&mut app, 60);
    let before = at(&app, b);
    assert!((before.y - (base.y + 0.3)).abs() < 0.01, "{before}");
    // up 1.5 m over 3 s, by its transform, as a game moves a mover
    for _ in 0..180 {
        app.world_mut()
            .get_mut::<Transform>(lift)
            .unwrap()
            .translation
            .y += 1.5 / 180.0;
        app.update();
    }
    run(&mut app, 30);
    let after = at(&app, b);
    assert!(
        (after.y - (base.y + 1.5 + 0.3)).abs() < 0.02 && after.xz().distance(before.xz()) < 0.05,
        "the box went from {before} to {after}; the lift from {base} to {}",
        at(&app, lift)
    );
}

/// Avian's collision starts and Kiln's trigger entries, by frame.
#[derive(Resource, Default)]
struct Entries {
    frame: u32,
    avian: Vec<(u32, Entity, Entity)>,
    kiln: Vec<(u32, Entity, Entity)>,
}

fn count_entries(
    mut seen: ResMut<Entries>,
    mut avian: MessageReader<CollisionStart>,
    mut kiln: MessageReader<kiln_bevy::KilnTriggerEvent>,
) {
    seen.frame += 1;
    let frame = seen.frame;
    let a: Vec<_> = avian
        .read()
        .map(|c| (frame, c.collider1, c.collider2))
        .collect();
    seen.avian.extend(a);
    let k: Vec<_> = kiln
        .read()
        .filter(|e| e.entered)
        .map(|e| (frame, e.trigger, e.body))
        .collect();
    seen.kiln.extend(k);
}

#[test]
fn a_body_entering_a_trigger_is_seen_by_avian_and_kiln_in_the_same_frame() {
    let dir = assets("trigger");
    let mut app = level_app(&dir, &bake("tests/fixtures/colliders/movers.gltf"));
    app.init_resource::<Entries>().add_systems(
        PostUpdate,
        count_entries.after(kiln_bevy::KilnSystems::Sync),
    );
    let zone = named(&mut app, "Zone");
    assert!(app.world().get::<Sensor>(zone).is_some());
    let over = at(&app, zone) + Vec3::new(0.3, 3.0, -0.2);
    let b = ball(&mut app, 0.2, over);
    app.world_mut()
        .entity_mut(b)
        .insert(kiln_bevy::KilnBody::shape(Sphere::new(0.2)));
    run(&mut app, 90);
    // Kiln's world has the body where Avian has moved it
    let kiln_at = kiln_pose(&app, b);
    let avian_at = app.world().get::<GlobalTransform>(b).unwrap().translation();
    assert!(
        kiln_at.translation.distance(avian_at) < 1e-6 && avian_at.y < over.y - 1.0,
        "Kiln has the ball at {}, Avian at {avian_at}",
        kiln_at.translation
    );
    let seen = app.world().resource::<Entries>();
    let avian: Vec<u32> = seen
        .avian
        .iter()
        .filter(|&&(_, a, c)| (a, c) == (zone, b) || (a, c) == (b, zone))
        .map(|&(f, _, _)| f)
        .collect();
    let kiln: Vec<u32> = seen
        .kiln
        .iter()
        .filter(|&&(_, t, body)| (t, body) == (zone, b))
        .map(|&(f, _, _)| f)
        .collect();
    assert!(
        !avian.is_empty() && avian == kiln,
        "Avian saw the ball enter at frames {avian:?}, Kiln at {kiln:?}"
    );
}

#[test]
fn a_reloaded_level_replaces_the_colliders_and_dynamic_bodies_keep_their_motion() {
    let dir = assets("reload");
    let mut app = level_app(&dir, &bake("samples/props.gltf"));
    let crate_ = named(&mut app, "crate");
    let table = named(&mut app, "table");
    assert!((at(&app, table).x - 2.0).abs() < 1e-6);
    // the crate in mid-fall
    run(&mut app, 10);
    let falling = app.world().get::<LinearVelocity>(crate_).unwrap().0;
    let was = at(&app, crate_);
    assert!(falling.y < -1.0, "{falling}");
    // the same props with the table 1 m along x, as a new archive
    let bytes = bake_edited(&dir, "samples/props.gltf", "props_edited", |doc| {
        for node in doc["nodes"].as_array_mut().unwrap() {
            if node["name"] == "table" {
                node["translation"] = serde_json::json!([3.0, 0.0, 7.0]);
            }
        }
    });
    load_edited(&mut app, &dir, &bytes);
    app.update(); // the new colliders are in Avian's world
    // one collider entity per static object, the table's where it moved to
    let mut statics = app
        .world_mut()
        .query::<(&KilnStaticCollider, &Name, &Transform)>();
    let found: Vec<(String, Vec3)> = statics
        .iter(app.world())
        .map(|(_, n, t)| (n.to_string(), t.translation))
        .collect();
    assert_eq!(found.len(), 3, "{found:?}");
    let table_now = found.iter().find(|f| f.0 == "table").unwrap().1;
    assert!((table_now.x - 3.0).abs() < 1e-6, "{found:?}");
    // the crate is the same entity, still falling from where it was
    assert_eq!(named(&mut app, "crate"), crate_);
    let now = at(&app, crate_);
    let v = app.world().get::<LinearVelocity>(crate_).unwrap().0;
    assert!(
        now.y < was.y && v.y < falling.y && (now.xz() - was.xz()).length() < 1e-3,
        "the crate was at {was} falling at {falling}; after the reload at {now} moving at {v}"
    );
    // the table moved from under it (the crate spans x 1.9 to 2.3 m, the
    // table now 2.4 to 3.6 m): it lands on the floor
    run(&mut app, 120);
    let rest = at(&app, crate_);
    assert!((rest.y - 0.2).abs() < 0.01, "{rest}");
}

#[test]
fn a_turntable_turned_by_its_transform_carries_a_box_round() {
    let dir = assets("turntable");
    let mut app = level_app(&dir, &bake("samples/moving_course.gltf"));
    let table = named(&mut app, "turntable");
    let centre = at(&app, table);
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.3, 0.3, 0.3),
            Transform::from_translation(centre + Vec3::new(1.0, 0.3, 0.0)),
        ))
        .id();
    run(&mut app, 60);
    let before = at(&app, b);
    // a quarter turn over 3 s, by its transform, as a game turns it
    let quarter = std::f32::consts::FRAC_PI_2;
    for _ in 0..180 {
        app.world_mut()
            .get_mut::<Transform>(table)
            .unwrap()
            .rotate_y(quarter / 180.0);
        app.update();
    }
    run(&mut app, 30);
    let after = at(&app, b);
    let want = centre + Quat::from_rotation_y(quarter) * (before - centre);
    let turned = app.world().get::<Transform>(b).unwrap().rotation;
    assert!(
        after.xz().distance(want.xz()) < 0.02
            && (after.y - before.y).abs() < 0.01
            && turned.angle_between(Quat::from_rotation_y(quarter)) < 0.02,
        "the box went from {before} to {after} (turned {turned}); carried round it would be at {want}"
    );
    // Kiln's world has the turntable where Avian turned it
    let kiln_turn = kiln_pose(&app, table).rotation;
    assert!(
        kiln_turn.angle_between(Quat::from_rotation_y(quarter)) < 1e-3,
        "{kiln_turn}"
    );
}

/// Points the level entity at archive `bytes` (written as
/// `dir/assets/edited.kiln`) and updates until the world has it.
fn load_edited(app: &mut App, dir: &Path, bytes: &[u8]) {
    std::fs::write(dir.join("assets/edited.kiln"), bytes).unwrap();
    let handle = app.world().resource::<AssetServer>().load("edited.kiln");
    let mut levels = app.world_mut().query::<&mut KilnLevel>();
    levels.single_mut(app.world_mut()).unwrap().0 = handle;
    let old = app.world().resource::<KilnWorld>().level().unwrap().clone();
    until(app, "the edited level loads", |app| {
        !std::sync::Arc::ptr_eq(app.world().resource::<KilnWorld>().level().unwrap(), &old)
    });
}

/// Entity `e`'s world position (a child's through its parents).
fn world_at(app: &App, e: Entity) -> Vec3 {
    app.world().get::<GlobalTransform>(e).unwrap().translation()
}

#[test]
fn an_authored_body_of_several_colliders_is_one_avian_body_with_its_authored_mass() {
    let dir = assets("dumbbell");
    let mut app = level_app(&dir, &bake("samples/bodies.gltf"));
    let dumbbell = named(&mut app, "dumbbell");
    let (left, right, bar) = (
        named(&mut app, "dumbbell_left"),
        named(&mut app, "dumbbell_right"),
        named(&mut app, "dumbbell_bar"),
    );
    // one rigid body, on the body's entity, with the mass the file gives
    assert!(app.world().get::<KilnAuthoredBody>(dumbbell).is_some());
    assert_eq!(
        app.world().get::<RigidBody>(dumbbell),
        Some(&RigidBody::Dynamic)
    );
    assert_eq!(app.world().get::<Mass>(dumbbell).unwrap().0, 12.0);
    let com = app.world().get::<CenterOfMass>(dumbbell).unwrap().0;
    assert!((com - Vec3::new(0.05, 0.0, 0.0)).length() < 1e-6, "{com}");
    let inertia = app.world().get::<AngularInertia>(dumbbell).unwrap();
    let moments = inertia.principal;
    let mut m = moments.to_array();
    m.sort_by(f32::total_cmp);
    assert!(
        (Vec3::from(m) - Vec3::new(0.05, 0.6, 0.6)).length() < 1e-5,
        "{moments}"
    );
    // its three colliders are children with no body of their own
    for e in [left, right, bar] {
        assert!(app.world().get::<Collider>(e).is_some());
        assert!(app.world().get::<RigidBody>(e).is_none());
        assert_eq!(app.world().get::<ChildOf>(e).unwrap().parent(), dumbbell);
    }
    // dropped from 1 m, it comes to rest on its two weights (radius 0.12 m)
    // as one: the weights still 0.8 m apart, level, on the floor
    run(&mut app, 180);
    let (l, r) = (world_at(&app, left), world_at(&app, right));
    assert!((l.distance(r) - 0.8).abs() < 1e-4, "{l} {r}");
    assert!(
        (l.y - 0.12).abs() < 0.01 && (r.y - 0.12).abs() < 0.01,
        "the weights rest at {l} and {r}, not on the floor"
    );
    // Kiln's world has each collider where Avian has it
    for e in [left, right, bar] {
        let p = kiln_pose(&app, e).translation;
        assert!(p.distance(world_at(&app, e)) < 1e-4, "{p}");
    }
    let top = app
        .world_mut()
        .run_system_once(move |kiln: KilnQuery| {
            kiln.raycast(l + Vec3::Y * 2.0, Dir3::NEG_Y, 5.0, &KilnFilter::default())
        })
        .unwrap()
        .expect("Kiln sees the weight");
    assert_eq!(top.entity, left);
    assert!((top.point.y - (l.y + 0.12)).abs() < 1e-3, "{top:?}");
    // the barrel, a body of one collider, is that collider's entity, with
    // its authored 30 kg about its cylinder's own centre
    let barrel = named(&mut app, "barrel_shell");
    assert_eq!(
        app.world().get::<RigidBody>(barrel),
        Some(&RigidBody::Dynamic)
    );
    assert_eq!(app.world().get::<Mass>(barrel).unwrap().0, 30.0);
    let com = app.world().get::<CenterOfMass>(barrel).unwrap().0;
    assert!(com.length() < 1e-5, "{com}");
    // it stands on the floor: the cylinder's centre 0.45 m up
    assert!(
        (at(&app, barrel).y - 0.45).abs() < 0.01,
        "{}",
        at(&app, barrel)
    );
}

#[test]
fn a_kinematic_body_of_several_colliders_moves_as_one_by_its_transform() {
    let dir = assets("gate");
    let mut app = level_app(&dir, &bake("samples/bodies.gltf"));
    let gate = named(&mut app, "gate");
    let beam = named(&mut app, "gate_beam");
    let post = named(&mut app, "gate_post_a");
    assert_eq!(
        app.world().get::<RigidBody>(gate),
        Some(&RigidBody::Kinematic)
    );
    // a box on the beam (top at 2.2 m)
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.2, 0.2, 0.2),
            Transform::from_xyz(6.0, 2.4, 5.0),
        ))
        .id();
    run(&mut app, 60);
    assert!((at(&app, b).y - 2.3).abs() < 0.01, "{}", at(&app, b));
    // the game raises the gate 1 m over a second, by its Transform alone
    for _ in 0..60 {
        app.world_mut()
            .get_mut::<Transform>(gate)
            .unwrap()
            .translation
            .y += 1.0 / 60.0;
        app.update();
    }
    run(&mut app, 30);
    assert!((at(&app, gate).y - 1.0).abs() < 1e-4, "{}", at(&app, gate));
    // every part moved with it, in Kiln's world as in Bevy's
    assert!((kiln_pose(&app, beam).translation - Vec3::new(6.0, 3.1, 5.0)).length() < 1e-4);
    assert!((kiln_pose(&app, post).translation - Vec3::new(5.0, 2.0, 5.0)).length() < 1e-4);
    // and the box rode up on the beam
    assert!((at(&app, b).y - 3.3).abs() < 0.02, "{}", at(&app, b));
}

#[test]
fn a_reload_keeps_an_authored_body_entity_and_takes_its_new_mass() {
    let dir = assets("bodies_reload");
    let mut app = level_app(&dir, &bake("samples/bodies.gltf"));
    let dumbbell = named(&mut app, "dumbbell");
    let left = named(&mut app, "dumbbell_left");
    run(&mut app, 180);
    let rest = at(&app, dumbbell);
    // the same file with the dumbbell authored at 20 kg
    let bytes = bake_edited(&dir, "samples/bodies.gltf", "bodies_edited", |doc| {
        for node in doc["nodes"].as_array_mut().unwrap() {
            if node["name"] == "dumbbell" {
                node["extensions"]["KHR_physics_rigid_bodies"]["motion"]["mass"] =
                    serde_json::json!(20.0);
            }
        }
    });
    load_edited(&mut app, &dir, &bytes);
    run(&mut app, 3);
    // the same entities, where they rested, with the new mass
    assert_eq!(named(&mut app, "dumbbell"), dumbbell);
    assert_eq!(named(&mut app, "dumbbell_left"), left);
    assert_eq!(app.world().get::<ChildOf>(left).unwrap().parent(), dumbbell);
    assert_eq!(app.world().get::<Mass>(dumbbell).unwrap().0, 20.0);
    assert!(
        at(&app, dumbbell).distance(rest) < 0.01,
        "{rest} {}",
        at(&app, dumbbell)
    );
    let mut q = app.world_mut().query::<&KilnAuthoredBody>();
    assert_eq!(q.iter(app.world()).count(), 2, "the dumbbell and the gate");
}
