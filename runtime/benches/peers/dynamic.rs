//! The dynamic tree beside parry3d's `Bvh` as Rapier's broad phase uses it
//! (`insert_or_update_partially` with a margin, then `refit` and
//! `optimize_incremental` every frame): the same boxes on the same random
//! walk, insert/remove churn, one incremental optimisation step, and rays
//! and box overlaps against each tree after a million moves.

use super::{Row, compare};
use kiln_runtime::Vec3;
use kiln_runtime::internals::{Aabb, DynamicTree, Proxy};
use parry3d::bounding_volume::Aabb as PAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhWorkspace, TraversalAction};
use std::time::Instant;

/// The margin both sides grow leaves by (Box2D's and Rapier's default).
const MARGIN: f32 = 0.1;

use kiln_geometry::rng::Rng;

/// Uniform in the cube [−s, s]³.
fn v(rng: &mut Rng, s: f32) -> Vec3 {
    Vec3::new(rng.range(-s, s), rng.range(-s, s), rng.range(-s, s))
}

/// `n` boxes 0.2 to 2 m across, spread so a box meets a few others on
/// average (a world about `n^(1/3) · 4` m across).
fn bodies(n: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = Rng(seed);
    let span = (n as f32).cbrt() * 2.0;
    (0..n)
        .map(|_| {
            let c = v(&mut rng, span);
            let h = Vec3::new(
                rng.range(0.1, 1.0),
                rng.range(0.1, 1.0),
                rng.range(0.1, 1.0),
            );
            Aabb::new(c - h, c + h)
        })
        .collect()
}

fn pa(b: &Aabb) -> PAabb {
    PAabb::new(
        Vector::new(b.lo.x, b.lo.y, b.lo.z),
        Vector::new(b.hi.x, b.hi.y, b.hi.z),
    )
}

/// Kiln's side: the tree and each body's proxy and current box.
struct KilnSide {
    tree: DynamicTree,
    proxies: Vec<Option<Proxy>>,
    boxes: Vec<Aabb>,
    rng: Rng,
}

/// parry's side: the tree, its workspace, each body's current box.
struct ParrySide {
    tree: Bvh,
    ws: BvhWorkspace,
    live: Vec<bool>,
    boxes: Vec<Aabb>,
    rng: Rng,
}

/// Kiln's incremental optimisation budget per frame, as `World::step`
/// spends it: a hundredth of the leaves, at least 8.
fn budget(n: usize) -> usize {
    (n / 100).max(8)
}

/// Moves every live body by a random step of up to `step` m per axis.
fn walk(boxes: &mut [Aabb], rng: &mut Rng, step: f32, mut moved: impl FnMut(usize, &Aabb)) {
    for (i, b) in boxes.iter_mut().enumerate() {
        let d = v(rng, step);
        *b = Aabb::new(b.lo + d, b.hi + d);
        moved(i, b);
    }
}

impl KilnSide {
    fn new(boxes: &[Aabb], seed: u64) -> KilnSide {
        let mut tree = DynamicTree::new(MARGIN);
        let proxies = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| Some(tree.insert(*b, i as u32)))
            .collect();
        KilnSide {
            tree,
            proxies,
            boxes: boxes.to_vec(),
            rng: Rng(seed),
        }
    }

    /// One game frame ([`Frame`]): the awake bodies step, a few teleport,
    /// the frame's queries run, then the optimisation step; returns what
    /// the queries found.
    fn game_frame(&mut self, f: &Frame) -> usize {
        let (tree, proxies) = (&mut self.tree, &self.proxies);
        walk(&mut self.boxes[..f.awake], &mut self.rng, f.step, |i, b| {
            if let Some(p) = proxies[i] {
                tree.set_box(p, *b);
            }
        });
        let n = self.boxes.len();
        for _ in 0..f.teleports {
            let i = self.rng.below(n);
            let b = teleported(&self.boxes[i], &mut self.rng, f.span);
            self.boxes[i] = b;
            if let Some(p) = self.proxies[i] {
                self.tree.set_box(p, b);
            }
        }
        let found = kiln_queries(&self.tree, &self.boxes, f);
        let m = self.tree.len();
        self.tree.optimize(budget(m));
        found
    }

    /// One frame of churn: `k` bodies taken out and `k` put back elsewhere.
    fn churn(&mut self, k: usize) {
        let n = self.boxes.len();
        for _ in 0..k {
            let i = (self.rng.f32() * n as f32) as usize % n;
            if let Some(p) = self.proxies[i].take() {
                self.tree.remove(p);
            } else {
                let b = self.boxes[i];
                self.proxies[i] = Some(self.tree.insert(b, i as u32));
            }
        }
        let m = self.tree.len();
        self.tree.optimize(budget(m));
    }
}

impl ParrySide {
    fn new(boxes: &[Aabb], seed: u64) -> ParrySide {
        let mut tree = Bvh::new();
        for (i, b) in boxes.iter().enumerate() {
            tree.insert_or_update_partially(pa(b), i as u32, MARGIN);
        }
        let mut ws = BvhWorkspace::default();
        tree.refit(&mut ws);
        ParrySide {
            tree,
            ws,
            live: vec![true; boxes.len()],
            boxes: boxes.to_vec(),
            rng: Rng(seed),
        }
    }

    /// One game frame, as [`KilnSide::game_frame`], with parry3d's refit
    /// before the queries (its boxes above the moved leaves are stale
    /// until then) and its incremental optimisation after.
    fn game_frame(&mut self, f: &Frame) -> usize {
        let (tree, live) = (&mut self.tree, &self.live);
        walk(&mut self.boxes[..f.awake], &mut self.rng, f.step, |i, b| {
            if live[i] {
                tree.insert_or_update_partially(pa(b), i as u32, MARGIN);
            }
        });
        let n = self.boxes.len();
        for _ in 0..f.teleports {
            let i = self.rng.below(n);
            let b = teleported(&self.boxes[i], &mut self.rng, f.span);
            self.boxes[i] = b;
            if self.live[i] {
                self.tree
                    .insert_or_update_partially(pa(&b), i as u32, MARGIN);
            }
        }
        self.tree.refit(&mut self.ws);
        let found = parry_queries(&self.tree, &self.boxes, f);
        self.tree.optimize_incremental(&mut self.ws);
        found
    }

    fn churn(&mut self, k: usize) {
        let n = self.boxes.len();
        for _ in 0..k {
            let i = (self.rng.f32() * n as f32) as usize % n;
            if self.live[i] {
                self.tree.remove(i as u32);
            } else {
                self.tree
                    .insert_or_update_partially(pa(&self.boxes[i]), i as u32, MARGIN);
            }
            self.live[i] = !self.live[i];
        }
        self.tree.refit(&mut self.ws);
        self.tree.optimize_incremental(&mut self.ws);
    }

    /// The surface-area cost as `DynamicTree::sah_cost` counts it: inner
    /// nodes' half areas over the root's.
    fn sah_cost(&self) -> f64 {
        let half = |b: &PAabb| {
            let d = b.maxs - b.mins;
            f64::from(d.x * d.y + d.y * d.z + d.z * d.x)
        };
        let mut sum = 0.0;
        self.tree.traverse(|node| {
            if !node.is_leaf() {
                sum += half(&node.aabb());
            }
            TraversalAction::Continue
        });
        let root = half(&self.tree.root_aabb());
        // parry's root is a wide node of two children, not counted by
        // `traverse`: add it as one inner node
        (sum + root) / root
    }
}

/// The slab entry of a ray into a box within `max_t`.
fn ray_box(o: Vec3, inv: Vec3, b: &Aabb, max_t: f32) -> Option<f32> {
    let t0 = (b.lo - o) * inv;
    let t1 = (b.hi - o) * inv;
    let near = t0.min(t1).max_element().max(0.0);
    let far = t0.max(t1).min_element().min(max_t);
    (near <= far).then_some(near)
}

/// What one game frame does: the first `awake` bodies take a random step
/// of up to `step` m per axis (the rest sleep), `teleports` bodies chosen
/// at random jump anywhere in the world, then `rays` rays (the nearest
/// tight box) and `boxes` box overlaps (every tight box met) are asked.
struct Frame {
    awake: usize,
    step: f32,
    teleports: usize,
    span: f32,
    rays: Vec<(Vec3, Vec3)>,
    boxes: Vec<Aabb>,
}

impl Frame {
    /// Every one of `n` bodies steps up to `step` m an axis; nothing
    /// teleports, nothing is asked (the random-walk rows).
    fn walk(n: usize, step: f32) -> Frame {
        Frame {
            awake: n,
            step,
            teleports: 0,
            span: 0.0,
            rays: Vec::new(),
            boxes: Vec::new(),
        }
    }
}

/// `b` moved to a random place in the world (half-width `span`).
fn teleported(b: &Aabb, rng: &mut Rng, span: f32) -> Aabb {
    let c = v(rng, span);
    let h = (b.hi - b.lo) * 0.5;
    Aabb::new(c - h, c + h)
}

/// Rays from outside the bodies' cube through it, as the row's queries use.
fn rays_through(rng: &mut Rng, span: f32, count: usize) -> Vec<(Vec3, Vec3)> {
    (0..count)
        .map(|_| {
            let o = v(rng, span * 1.2);
            let target = v(rng, span * 0.8);
            (o, (target - o).normalize())
        })
        .collect()
}

/// 2 m boxes in the bodies' cube.
fn boxes_in(rng: &mut Rng, span: f32, count: usize) -> Vec<Aabb> {
    (0..count)
        .map(|_| {
            let c = v(rng, span);
            Aabb::new(c - 1.0, c + 1.0)
        })
        .collect()
}

/// Kiln's answers to the frame's rays and boxes: hits plus bodies met.
fn kiln_queries(tree: &DynamicTree, tight: &[Aabb], f: &Frame) -> usize {
    let mut found = 0;
    for &(o, d) in &f.rays {
        let inv = d.recip();
        let mut best = None;
        tree.raycast(o, d, 1e4, |i, t_max| {
            if let Some(t) = ray_box(o, inv, &tight[i as usize], *t_max) {
                *t_max = t;
                best = Some(i);
            }
            false
        });
        found += usize::from(best.is_some());
    }
    for q in &f.boxes {
        tree.query(q, |i| {
            found += usize::from(tight[i as usize].overlaps(q));
            false
        });
    }
    found
}

/// parry3d's answers to the same.
fn parry_queries(tree: &Bvh, tight: &[Aabb], f: &Frame) -> usize {
    let mut found = 0;
    for &(o, d) in &f.rays {
        let inv = d.recip();
        let ray = parry3d::query::Ray::new(Vector::new(o.x, o.y, o.z), Vector::new(d.x, d.y, d.z));
        let hit = tree.cast_ray(&ray, 1e4, |i, t_max| {
            ray_box(o, inv, &tight[i as usize], t_max)
        });
        found += usize::from(hit.is_some());
    }
    for q in &f.boxes {
        for i in tree.intersect_aabb(&pa(q)) {
            found += usize::from(tight[i as usize].overlaps(q));
        }
    }
    found
}

/// The whole-frame rows for `n` bodies: 10% and 100% awake, each frame
/// with a thousandth of the bodies teleporting (at least one) and a
/// hundredth of `n` rays and as many box overlaps (at least 10 each).
fn frame_rows(n: usize, quick: bool, rows: &mut Vec<Row>) {
    let label = format!("{}k bodies", n / 1000);
    let start = bodies(n, 48);
    let span = (n as f32).cbrt() * 2.0;
    let frames = if quick { 5 } else { 30 };
    for awake_pct in [10, 100] {
        let mut rng = Rng(11);
        let q = (n / 100).max(10);
        let f = Frame {
            awake: n * awake_pct / 100,
            step: 0.05,
            teleports: (n / 1000).max(1),
            span,
            rays: rays_through(&mut rng, span, q),
            boxes: boxes_in(&mut rng, span, q),
        };
        let mut k = KilnSide::new(&start, 5);
        let mut p = ParrySide::new(&start, 5);
        compare(
            rows,
            &label,
            &format!("frames/s ({awake_pct}% awake)"),
            "found",
            frames,
            || (0..frames).map(|_| k.game_frame(&f)).sum(),
            || (0..frames).map(|_| p.game_frame(&f)).sum(),
        );
    }
}

/// The dynamic-tree rows for `n` bodies.
fn rows_for(n: usize, quick: bool, rows: &mut Vec<Row>) {
    let label = format!("{}k bodies", n / 1000);
    let start = bodies(n, 48);
    let frames = if quick { 3 } else { 10 };
    eprintln!("{label}: random walk, churn, optimisation, queries after 1M moves");

    // moves: every body one step of up to 5 cm per axis per frame (most
    // stay inside their fat boxes, as in a game)
    let (walk_5cm, stride) = (Frame::walk(n, 0.05), Frame::walk(n, 1.0));
    let mut k = KilnSide::new(&start, 1);
    let mut p = ParrySide::new(&start, 1);
    compare(
        rows,
        &label,
        "random-walk moves/s",
        "moves",
        n * frames,
        || {
            for _ in 0..frames {
                k.game_frame(&walk_5cm);
            }
            n * frames
        },
        || {
            for _ in 0..frames {
                p.game_frame(&walk_5cm);
            }
            n * frames
        },
    );

    // churn: a hundredth of the bodies out or back in per frame
    let churned = (n / 100).max(1);
    compare(
        rows,
        &label,
        "insert/remove churn ops/s",
        "ops",
        churned * frames,
        || {
            for _ in 0..frames {
                k.churn(churned);
            }
            churned * frames
        },
        || {
            for _ in 0..frames {
                p.churn(churned);
            }
            churned * frames
        },
    );

    // one incremental optimisation step alone
    compare(
        rows,
        &label,
        "optimisation steps/s",
        "steps",
        1,
        || k.tree.optimize(budget(k.tree.len())),
        || {
            p.tree.refit(&mut p.ws);
            p.tree.optimize_incremental(&mut p.ws);
            1
        },
    );

    // a million moves on (10k bodies: 100 frames; 100k: 10), larger
    // strides too, then the trees' quality and queries against them
    let moves = if quick { 100_000 } else { 1_000_000 };
    let t0 = Instant::now();
    for f in 0..moves / n {
        k.game_frame(if f % 10 == 0 { &stride } else { &walk_5cm });
    }
    let kiln_s = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    for f in 0..moves / n {
        p.game_frame(if f % 10 == 0 { &stride } else { &walk_5cm });
    }
    let parry_s = t0.elapsed().as_secs_f64();
    let mut fresh = k.tree.clone();
    fresh.rebuild();
    eprintln!(
        "  after {moves} moves ({kiln_s:.2} s Kiln, {parry_s:.2} s parry3d): Kiln's tree costs {:.2}, a fresh build of its boxes {:.2} ({:+.1}%); parry3d's {:.2}; heights {} and {}",
        k.tree.sah_cost(),
        fresh.sah_cost(),
        (k.tree.sah_cost() / fresh.sah_cost() - 1.0) * 100.0,
        p.sah_cost(),
        k.tree.height(),
        fresh.height(),
    );

    // rays through the bodies: the nearest tight box hit
    let mut rng = Rng(7);
    let span = (n as f32).cbrt() * 2.0;
    let rays: Vec<(Vec3, Vec3)> = (0..if quick { 2_000 } else { 20_000 })
        .map(|_| {
            let o = v(&mut rng, span * 1.2);
            let target = v(&mut rng, span * 0.8);
            (o, (target - o).normalize())
        })
        .collect();
    let (kb, pb) = (&k.boxes, &p.boxes);
    compare(
        rows,
        &label,
        "rays/s (after 1M moves)",
        "hits",
        rays.len(),
        || {
            let mut hits = 0;
            for &(o, d) in &rays {
                let inv = d.recip();
                let mut best = None;
                k.tree.raycast(o, d, 1e4, |i, t_max| {
                    if let Some(t) = ray_box(o, inv, &kb[i as usize], *t_max) {
                        *t_max = t;
                        best = Some(i);
                    }
                    false
                });
                hits += usize::from(best.is_some());
            }
            hits
        },
        || {
            let mut hits = 0;
            for &(o, d) in &rays {
                let inv = d.recip();
                let ray = parry3d::query::Ray::new(
                    Vector::new(o.x, o.y, o.z),
                    Vector::new(d.x, d.y, d.z),
                );
                let hit = p.tree.cast_ray(&ray, 1e4, |i, t_max| {
                    ray_box(o, inv, &pb[i as usize], t_max)
                });
                hits += usize::from(hit.is_some());
            }
            hits
        },
    );

    // box overlaps: every body whose tight box meets a 2 m box
    let queries: Vec<Aabb> = (0..if quick { 2_000 } else { 20_000 })
        .map(|_| {
            let c = v(&mut rng, span);
            Aabb::new(c - 1.0, c + 1.0)
        })
        .collect();
    compare(
        rows,
        &label,
        "box overlaps/s (after 1M moves)",
        "bodies met",
        queries.len(),
        || {
            let mut met = 0;
            for q in &queries {
                k.tree.query(q, |i| {
                    met += usize::from(kb[i as usize].overlaps(q));
                    false
                });
            }
            met
        },
        || {
            let mut met = 0;
            for q in &queries {
                for i in p.tree.intersect_aabb(&pa(q)) {
                    met += usize::from(pb[i as usize].overlaps(q));
                }
            }
            met
        },
    );
}

/// A character riding the moving course's lift up and down, with 1,000
/// bodies about: each update is the frame's lift move, the world's step,
/// the ride and the move (Kiln alone: no peer row).
fn character_on_a_lift(quick: bool, rows: &mut Vec<Row>) {
    use kiln_runtime::character::{Character, Ground};
    use kiln_runtime::{Body, Filter, Level, Pose, QueryShape, World};
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/moving_course.gltf");
    let baked = kiln_baker::bake_file(&path, &Default::default()).expect("the moving course bakes");
    let mut world = World::new(Level::from_bytes(&baked.bytes).expect("it opens"));
    let lift = world.level().find_object("lift").expect("a lift");
    let lift0 = world.pose(lift).expect("a mover");
    let mut rng = Rng(3);
    for _ in 0..1000 {
        let at = Vec3::new(
            rng.range(0.0, 20.0),
            rng.range(0.5, 4.0),
            rng.range(0.0, 20.0),
        );
        let _ = world.insert(Body::shape(
            QueryShape::Sphere { radius: 0.2 },
            Pose::at(at),
        ));
    }
    let player = Character::capsule(0.3, 0.6);
    let frames = if quick { 600 } else { 6000 };
    let mut at = Vec3::new(12.0, 1.1, 17.0);
    let mut ground = Ground::InAir;
    let mut on_lift = 0usize;
    let t0 = Instant::now();
    for f in 0..frames {
        let rise = 1.0 - (std::f32::consts::TAU * f as f32 / 360.0).cos();
        world
            .set_pose(
                lift,
                Pose::new(lift0.rotation, lift0.translation + Vec3::Y * rise),
            )
            .expect("the lift moves");
        world.step();
        let (carried, _) = player.ride(&world, at, &ground);
        let m = player.move_and_slide(&world, carried, Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
        (at, ground) = (m.position, m.ground);
        on_lift += usize::from(matches!(ground, Ground::OnGround(g) if g.object == lift));
    }
    let s = t0.elapsed().as_secs_f64();
    eprintln!(
        "moving course: {frames} character updates on a lift (move, step, ride, move_and_slide) with 1,000 bodies about, {on_lift} of them on the lift: {:.2} µs an update",
        s / frames as f64 * 1e6
    );
    rows.push(Row {
        mesh: "moving course".into(),
        query: "character on a lift updates/s".into(),
        kiln: frames as f64 / s,
        parry: f64::NAN,
        unit: "/s",
    });
}

/// The dynamic-tree rows: 10k and 100k bodies (1k and 10k with `--quick`),
/// and a character riding a lift.
pub fn dynamic_rows(quick: bool, rows: &mut Vec<Row>) {
    character_on_a_lift(quick, rows);
    for n in if quick {
        [1_000, 10_000]
    } else {
        [10_000, 100_000]
    } {
        frame_rows(n, quick, rows);
        rows_for(n, quick, rows);
    }
}
