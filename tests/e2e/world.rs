//! The dynamic world: bodies inserted, moved and removed beside a baked
//! level, every query kind judged against brute force over the level's
//! objects and every body at its current pose.

use glam::{Quat, Vec3};
use kiln_baker::bake_file;
use kiln_runtime::{Body, Filter, Level, ObjectId, Pose, Ray, World, WorldError};
use kiln_tests::Rng;
use kiln_tests::judge::{self, Kind, Object, Query, Stats};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

fn sample(name: &str) -> Arc<Level> {
    let path = kiln_tests::samples_dir().join(name);
    let baked = bake_file(&path, &Default::default()).expect("the sample bakes");
    Arc::new(Level::from_bytes(&baked.bytes).expect("the archive opens"))
}

/// What a body of the test is made of.
enum Made {
    /// A query shape.
    Shape(Kind),
    /// A copy of an object of one of the archives.
    Copy(usize, ObjectId),
}

/// The test's own record of a body, to build the oracle from.
struct Model {
    made: Made,
    pose: Pose,
}

/// The level, the archives copies come from, and the bodies as the test
/// put them.
struct Churn {
    world: World,
    sources: Vec<Arc<Level>>,
    models: HashMap<ObjectId, Model>,
    /// Trigger volumes (boxes that stay put), with their oracle view.
    triggers: HashMap<ObjectId, Query>,
    rng: Rng,
}

impl Churn {
    fn random_pose(&mut self) -> Pose {
        let rng = &mut self.rng;
        let at = Vec3::new(
            rng.range(-2.0, 22.0),
            rng.range(-1.0, 4.0),
            rng.range(-2.0, 22.0),
        );
        Pose::new(
            Quat::from_axis_angle(rng.unit32(), rng.range(0.0, std::f32::consts::TAU)),
            at,
        )
    }

    fn insert(&mut self) {
        let pose = self.random_pose();
        let made = if self.rng.below(3) == 0 {
            let s = self.rng.below(self.sources.len());
            let n = self.sources[s].object_count();
            Made::Copy(
                s,
                self.sources[s]
                    .object(self.rng.below(n as usize) as u32)
                    .unwrap(),
            )
        } else {
            let size = self.rng.range(0.2, 3.0);
            let k = self.rng.below(4);
            Made::Shape(Query::random(k, size, pose.translation, &mut self.rng).kind)
        };
        let result = match &made {
            Made::Shape(kind) => self.world.insert(Body::shape(Query::shape_of(kind), pose)),
            Made::Copy(s, o) => self.world.insert(Body::copy(&self.sources[*s], *o, pose)),
        };
        match result {
            Ok(id) => {
                assert!(id.is_body() && !self.models.contains_key(&id));
                self.models.insert(id, Model { made, pose });
            }
            // a flat box is no collider
            Err(WorldError::BadShape(why)) => {
                assert!(
                    matches!(&made, Made::Shape(Kind::Cuboid(h)) if h.min_element() == 0.0),
                    "refused: {why}"
                );
            }
            Err(e) => panic!("insert: {e}"),
        }
    }

    fn pick(&mut self) -> Option<ObjectId> {
        let mut ids: Vec<ObjectId> = self.models.keys().copied().collect();
        ids.sort_unstable();
        (!ids.is_empty()).then(|| ids[self.rng.below(ids.len())])
    }

    fn step(&mut self) {
        let op = self.rng.below(10);
        if op < 2 || self.models.len() < 10 {
            if self.models.len() < 60 {
                self.insert();
            }
        } else if op < 4 {
            let id = self.pick().unwrap();
            self.world.remove(id).expect("a body is removed");
            self.models.remove(&id);
            // a removed body is gone for good
            assert_eq!(self.world.remove(id), Err(WorldError::Unknown(id)));
            assert!(self.world.set_pose(id, Pose::IDENTITY).is_err());
        } else {
            let id = self.pick().unwrap();
            let old = self.models[&id].pose;
            let pose = match op {
                // tiny moves and turns, inside the tree's margin
                4..=6 => Pose::new(
                    Quat::from_axis_angle(self.rng.unit32(), self.rng.range(0.0, 0.02))
                        * old.rotation,
                    old.translation + self.rng.unit32() * self.rng.range(0.0, 0.05),
                ),
                // a stride
                7 | 8 => Pose::new(old.rotation, old.translation + self.rng.unit32() * 1.5),
                // a teleport
                _ => self.random_pose(),
            };
            self.world.set_pose(id, pose).expect("a body moves");
            self.models.get_mut(&id).unwrap().pose = pose;
        }
    }

    /// Every object as the oracle sees it: the level's, then each body's
    /// in the order the world lists them.
    fn oracle(&self) -> Vec<Object> {
        let mut objs = judge::objects(self.world.level());
        for id in self.world.bodies() {
            if let Some(t) = self.triggers.get(&id) {
                // no query here asks for triggers: the oracle sees none
                let mut o = judge::body_object(&t.shape(), &t.pose);
                o.pieces.clear();
                o.flat.clear();
                objs.push(o);
                continue;
            }
            let m = &self.models[&id];
            objs.push(match &m.made {
                Made::Shape(kind) => judge::body_object(&Query::shape_of(kind), &m.pose),
                Made::Copy(s, o) => judge::copy_object(&self.sources[*s], *o, &m.pose),
            });
        }
        objs
    }
}

/// 100,000 random inserts, moves (tiny, strides, teleports) and removes of
/// query-shape bodies and copies of baked objects (meshes, boxes,
/// polytopes, spheres, concave solids) beside a real level; after every
/// thousand, overlaps, yes/no tests, casts, points and rays are judged
/// against brute force over the level and every body at its current pose.
#[test]
fn a_world_under_churn_answers_every_query_like_brute_force() {
    let level = sample("walk_course.gltf");
    let prefab = sample("shape_collection.glb");
    let mut c = Churn {
        world: World::new(level.clone()),
        sources: vec![prefab, level],
        models: HashMap::new(),
        triggers: HashMap::new(),
        rng: Rng::new(4848),
    };
    // four trigger volumes over the course, turned
    for k in 0..4 {
        let pose = Pose::new(
            Quat::from_rotation_y(0.4 * k as f32),
            Vec3::new(3.0 + 5.0 * k as f32, 1.0, 8.0),
        );
        let half = Vec3::new(2.0, 1.5, 3.0);
        let id = c
            .world
            .insert(Body::shape(kiln_runtime::QueryShape::Cuboid { half }, pose).trigger())
            .unwrap();
        c.triggers.insert(id, Query::new(Kind::Cuboid(half), pose));
    }
    // what the trigger events add up to, step after step
    let mut inside: std::collections::BTreeSet<(ObjectId, ObjectId)> = Default::default();
    let (mut in_trigger, mut judged) = (0, 0);
    let mut stats = Stats::default();
    let (mut rays, mut points, mut ray_hits) = (0, 0, 0);
    for batch in 0..100 {
        for _ in 0..1000 {
            c.step();
        }
        c.world.step();
        assert_eq!(c.world.body_count(), c.models.len() + c.triggers.len());
        for e in c.world.trigger_events() {
            let pair = (e.trigger, e.body);
            assert!(
                if e.entered {
                    inside.insert(pair)
                } else {
                    inside.remove(&pair)
                },
                "{e:?} repeats what the events said before"
            );
        }
        let contacts = c.world.trigger_contacts();
        assert!(inside.iter().copied().eq(contacts.iter().copied()));
        in_trigger += contacts.len();
        // each body against each trigger: exact for shapes and copies of
        // convex colliders; a copy of a mesh or concave solid stands in by
        // its box's hull, so only a clear contact must be reported
        for (&t, tq) in &c.triggers {
            for (&id, m) in &c.models {
                let (obj, exact) = match &m.made {
                    Made::Shape(kind) => {
                        (judge::body_object(&Query::shape_of(kind), &m.pose), true)
                    }
                    Made::Copy(s, o) => {
                        let obj = judge::copy_object(&c.sources[*s], *o, &m.pose);
                        let exact =
                            matches!(obj.kind, "cuboid" | "sphere" | "capsule" | "polytope");
                        (obj, exact)
                    }
                };
                let gap = obj
                    .pieces
                    .iter()
                    .map(|pc| {
                        kiln_tests::convex::distance(&pc.core, &tq.core) - pc.radius - tq.radius
                    })
                    .fold(f64::INFINITY, f64::min);
                let reported = contacts.binary_search(&(t, id)).is_ok();
                if gap < -judge::TOL {
                    assert!(
                        reported,
                        "batch {batch}: {id} is {gap:.2e} m into trigger {t}, not reported"
                    );
                    judged += 1;
                } else if gap > judge::TOL && exact {
                    assert!(
                        !reported,
                        "batch {batch}: {id} is {gap:.2e} m clear of trigger {t}, reported"
                    );
                    judged += 1;
                }
            }
        }
        let objs = c.oracle();
        let mut rng = Rng::new(batch as u64);
        for i in 0..40 {
            let tag = format!("batch {batch} query {i}");
            let (p, size) = judge::near_surface(&objs, &mut rng);
            let s = (size * f64::from(rng.range(0.05, 0.6))) as f32;
            let at = (p + rng.unit32().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5)))
                .as_vec3();
            let q = Query::random(i % 4, s, at, &mut rng);
            judge::check_overlap(&c.world, &objs, &q, &mut stats, &tag);
            // towards a surface point, or anywhere
            let (target, _) = judge::near_surface(&objs, &mut rng);
            let motion = if i % 3 == 0 {
                rng.unit32() * s * 2.0
            } else {
                (target - at.as_dvec3()).as_vec3() + rng.unit32() * s * 0.2
            };
            if motion.length() > 1e-3 {
                judge::check_cast(&c.world, &objs, &q, motion, 1.5, &mut stats, &tag);
            }
            // a point near a surface
            let (p, size) = judge::near_surface(&objs, &mut rng);
            let p = (p + rng.unit32().as_dvec3() * size * 0.1).as_vec3();
            judge::check_point(&c.world, &objs, p, &tag);
            points += 1;
            // a ray from somewhere around the level at a surface point
            let from = Vec3::new(
                rng.range(-5.0, 25.0),
                rng.range(-2.0, 8.0),
                rng.range(-5.0, 25.0),
            );
            let (target, _) = judge::near_surface(&objs, &mut rng);
            let ray = if i % 3 == 0 {
                Ray::new(from, rng.unit32(), 30.0)
            } else {
                Ray::new(from, target.as_vec3() - from, 1.5)
            };
            judge::check_ray(&c.world, &objs, &ray, &tag);
            rays += 1;
            ray_hits += usize::from(c.world.raycast(&ray, &Filter::ALL).is_some());
        }
    }
    judge::report("world churn", &stats);
    eprintln!(
        "world churn: {points} points, {rays} rays ({ray_hits} hits); {in_trigger} body-trigger contacts over the steps, {judged} pairs judged"
    );
    // the checks met bodies, not only the level: most casts and rays hit
    assert!(stats.touching > 1000 && stats.hits > 1000 && ray_hits > 2000);
    assert!(in_trigger > 100 && judged > 10_000, "{in_trigger} {judged}");
}

/// Bodies have names and layers, filters see them as they see the level's
/// objects, and what a world cannot do is refused with a reason.
#[test]
fn a_world_reports_bodies_by_name_and_refuses_what_it_cannot_do() {
    let level = sample("walk_course.gltf");
    let mut world = World::new(level.clone());
    let wall = level.find_object("wall").unwrap();
    let ball = kiln_runtime::QueryShape::Sphere { radius: 0.5 };
    let id = world
        .insert(
            Body::shape(ball, Pose::at(Vec3::new(5.0, 0.5, 5.0)))
                .named("ball")
                .layers(0b10),
        )
        .unwrap();
    assert_eq!(world.find_object("ball"), Some(id));
    assert_eq!(world.find_object("wall"), Some(wall));
    assert_eq!(world.object_layers(id).unwrap_or(0), 0b10);
    assert_eq!(world.object_name(wall).unwrap_or_default(), "wall");
    // static objects do not move; bad poses and shapes are refused
    assert_eq!(
        world.set_pose(wall, Pose::IDENTITY),
        Err(WorldError::Static(wall))
    );
    let nan = Pose::at(Vec3::NAN);
    assert!(matches!(
        world.set_pose(id, nan),
        Err(WorldError::BadPose(_))
    ));
    let zero = Pose::new(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), Vec3::ZERO);
    assert!(world.insert(Body::shape(ball, zero)).is_err());
    let negative = kiln_runtime::QueryShape::Sphere { radius: -1.0 };
    assert!(matches!(
        world.insert(Body::shape(negative, Pose::IDENTITY)),
        Err(WorldError::BadShape(kiln_runtime::BodyShapeError::Invalid(
            _
        )))
    ));
    // a copy names an object of the archive it copies from
    let prefab = sample("shape_collection.glb");
    let tenth = level.object(10).unwrap();
    assert!(prefab.object_count() <= 10);
    assert_eq!(
        world
            .insert(Body::copy(&prefab, tenth, Pose::IDENTITY))
            .unwrap_err(),
        WorldError::NotInLevel(tenth)
    );
    assert_eq!(
        world
            .insert(Body::copy(&prefab, id, Pose::IDENTITY))
            .unwrap_err(),
        WorldError::NotInLevel(id)
    );
    // a copy is named as the object it copies, unless named otherwise
    let first = prefab.object(0).unwrap();
    assert!(!prefab.object_name(first).unwrap_or_default().is_empty());
    let copy = world
        .insert(Body::copy(
            &prefab,
            first,
            Pose::new(Quat::IDENTITY, Vec3::new(50.0, 0.0, 0.0)),
        ))
        .unwrap();
    assert_eq!(
        world.object_name(copy).unwrap_or_default(),
        prefab.object_name(first).unwrap_or_default()
    );
    let named = world
        .insert(
            Body::copy(
                &prefab,
                first,
                Pose::new(Quat::IDENTITY, Vec3::new(60.0, 0.0, 0.0)),
            )
            .named("mine"),
        )
        .unwrap();
    assert_eq!(world.object_name(named).unwrap_or_default(), "mine");
    world.remove(copy).unwrap();
    world.remove(named).unwrap();
    // layers and skips filter bodies as they filter the level's objects
    let down = Ray::new(Vec3::new(5.0, 5.0, 5.0), Vec3::NEG_Y, 10.0);
    assert_eq!(world.raycast(&down, &Filter::ALL).unwrap().object, id);
    let floor = world.raycast(&down, &Filter::ALL.layers(0b01)).unwrap();
    assert_ne!(floor.object, id);
    assert_eq!(
        world.raycast(&down, &Filter::skip(&[id])).unwrap().object,
        floor.object
    );
    // the level itself knows nothing of the bodies
    assert_eq!(
        level.raycast(&down, &Filter::ALL).unwrap().object,
        floor.object
    );
}

/// Many threads query one world between steps (it is `Sync`; moves take
/// `&mut`, so they wait for the sync point): every thread's answers, and
/// the batched forms on the rayon pool, are the answers of one thread.
#[test]
fn many_threads_query_one_world_and_agree_with_one() {
    let level = sample("walk_course.gltf");
    let mut world = World::new(level);
    let mut rng = Rng::new(5);
    for _ in 0..200 {
        let at = Vec3::new(
            rng.range(0.0, 20.0),
            rng.range(0.0, 3.0),
            rng.range(0.0, 20.0),
        );
        let q = Query::random(rng.below(4), rng.range(0.3, 1.5), at, &mut rng);
        // a flat box is no collider
        let _ = world.insert(Body::shape(q.shape(), q.pose));
    }
    world.step();
    let rays: Vec<Ray> = (0..4000)
        .map(|_| {
            let o = Vec3::new(
                rng.range(-2.0, 22.0),
                rng.range(0.0, 6.0),
                rng.range(-2.0, 22.0),
            );
            Ray::new(o, rng.unit32(), 30.0)
        })
        .collect();
    let one: Vec<_> = rays
        .iter()
        .map(|r| world.raycast(r, &Filter::ALL))
        .collect();
    assert!(
        one.iter()
            .filter(|h| h.is_some_and(|h| h.object.is_body()))
            .count()
            > 100
    );
    let world = &world;
    let parts: Vec<Vec<_>> = std::thread::scope(|s| {
        let handles: Vec<_> = rays
            .chunks(1000)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|r| world.raycast(r, &Filter::ALL))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(parts.concat(), one);
    let mut batched = vec![None; rays.len()];
    world.raycast_batch(&rays, &Filter::ALL, &mut batched);
    assert_eq!(batched, one);
    let ball = kiln_runtime::QueryShape::Sphere { radius: 0.4 };
    let queries: Vec<_> = rays.iter().map(|r| (ball, Pose::at(r.origin))).collect();
    let mut yes = vec![false; queries.len()];
    world.overlap_any_batch(&queries, &Filter::ALL, &mut yes);
    let alone: Vec<bool> = queries
        .iter()
        .map(|(s, p)| world.overlap_any(s, p, &Filter::ALL))
        .collect();
    assert_eq!(yes, alone);
    assert!(yes.iter().any(|&y| y) && yes.iter().any(|&y| !y));
}

/// Worlds on the shared real levels (nobody here made them; truck town
/// authors its colliders with OMI bodies): bodies of every shape kind
/// and copies of each level's own objects, moved about, every query kind
/// judged against brute force over the level and the bodies.
#[test]
fn worlds_on_shared_levels_answer_like_brute_force() {
    let Some(dir) = kiln_tests::levels_dir() else {
        eprintln!("SKIPPED: no shared levels (../shared/levels)");
        return;
    };
    let mut total = Stats::default();
    for (k, file) in [
        "many-cubes.gltf",
        "khr_Duck.glb",
        "bevy_terrain.glb",
        "godot_truck_town.gltf",
        "sauer_pandora.glb",
    ]
    .into_iter()
    .enumerate()
    {
        let baked = bake_file(&dir.join(file), &Default::default()).unwrap();
        let level = Arc::new(Level::from_bytes(&baked.bytes).unwrap());
        let mut world = World::new(level.clone());
        let seed: u64 =
            std::env::var("KILN_WORLD_SEED").map_or(900, |s| s.parse().expect("a seed"));
        let mut rng = Rng::new(seed + k as u64);
        // the level's movers where they were baked; its triggers unseen
        let mut base = judge::objects(&level);
        for o in level.movers_and_triggers() {
            if !level.is_trigger(o) {
                base[o.index() as usize] = judge::copy_object(&level, o, &Pose::IDENTITY);
            }
        }
        let statics = judge::objects(&level);
        // ordered, so that the rounds draw the same numbers every run
        let mut models: BTreeMap<ObjectId, Model> = BTreeMap::new();
        let mut stats = Stats::default();
        for round in 0..4 {
            // new bodies near the level's surfaces, and every body moved
            for _ in 0..12 {
                let (p, size) = judge::near_surface(&statics, &mut rng);
                let s = (size as f32 * rng.range(0.1, 0.5)).clamp(0.05, 5.0);
                let at = (p + rng.unit32().as_dvec3() * f64::from(s)).as_vec3();
                let pose = Pose::new(Quat::from_axis_angle(rng.unit32(), rng.range(0.0, 6.0)), at);
                let made = if rng.below(3) == 0 {
                    let n = level.object_count();
                    Made::Copy(0, level.object(rng.below(n as usize) as u32).unwrap())
                } else {
                    Made::Shape(Query::random(rng.below(4), s, at, &mut rng).kind)
                };
                let id = match &made {
                    Made::Shape(kind) => world.insert(Body::shape(Query::shape_of(kind), pose)),
                    Made::Copy(_, o) => world.insert(Body::copy(&level, *o, pose)),
                };
                if let Ok(id) = id {
                    models.insert(id, Model { made, pose });
                }
            }
            for (id, m) in models.iter_mut() {
                m.pose = Pose::new(
                    m.pose.rotation,
                    m.pose.translation + rng.unit32() * rng.range(0.0, 1.0),
                );
                world.set_pose(*id, m.pose).unwrap();
            }
            world.step();
            let mut objs: Vec<Object> = base.iter().map(clone_object).collect();
            for id in world.bodies() {
                objs.push(match models.get(&id) {
                    Some(m) => match &m.made {
                        Made::Shape(kind) => judge::body_object(&Query::shape_of(kind), &m.pose),
                        Made::Copy(_, o) => judge::copy_object(&level, *o, &m.pose),
                    },
                    // one of the level's movers or triggers: addressed by
                    // its level number, nothing here
                    None => Object {
                        kind: "none",
                        pieces: Vec::new(),
                        solid: None,
                        flat: Vec::new(),
                    },
                });
            }
            for i in 0..30 {
                let tag = format!("{file} round {round} query {i}");
                let (p, size) = judge::near_surface(&objs, &mut rng);
                let s = ((size * f64::from(rng.range(0.05, 0.5))) as f32).min(5.0);
                let at =
                    (p + rng.unit32().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5)))
                        .as_vec3();
                let q = Query::random(i % 4, s, at, &mut rng);
                judge::check_overlap(&world, &objs, &q, &mut stats, &tag);
                let (target, _) = judge::near_surface(&objs, &mut rng);
                let motion = (target - at.as_dvec3()).as_vec3() + rng.unit32() * s * 0.2;
                if motion.length() > 1e-3 {
                    judge::check_cast(&world, &objs, &q, motion, 1.5, &mut stats, &tag);
                }
                judge::check_point(&world, &objs, at, &tag);
                let from = at + rng.unit32() * s * 4.0;
                judge::check_ray(
                    &world,
                    &objs,
                    &Ray::new(from, target.as_vec3() - from, 1.5),
                    &tag,
                );
            }
        }
        judge::report(&format!("world on {file}"), &stats);
        total.add(&stats);
    }
    assert!(
        total.touching > 200 && total.hits > 200,
        "too few contacts to mean anything"
    );
}

/// A copy of an oracle object (the judge's objects are not `Clone`).
fn clone_object(o: &Object) -> Object {
    Object {
        kind: o.kind,
        pieces: o
            .pieces
            .iter()
            .map(|p| judge::Piece::new(p.core.clone(), p.radius))
            .collect(),
        solid: o.solid.clone(),
        flat: o.flat.clone(),
    }
}
