//! Capsule, box and hull queries — overlaps, yes/no tests, casts — against
//! parry3d's `contact`, `intersection_test` and `cast_shapes` on the same
//! shapes, poses and targets, with the number of answers of each library
//! that disagree with a brute-force oracle (`kiln_tests::convex`: exact
//! distances between boundary primitives, times of impact by bisection on
//! the convex gap) by more than 1 mm, over the first `checked` queries.

use super::{Rng, Row, compare, pv};
use glam::{DVec3, Quat, Vec3};
use kiln_runtime::{ConvexHull, Level, Pose, QueryShape, ShapeCast};
use kiln_runtime::{Filter, Ray};
use kiln_tests::convex::{self, Core, Polytope};
use parry3d::shape::SharedShape;
use std::collections::HashMap;

/// Disagreement margin, metres.
const MARGIN: f64 = 1e-3;

/// One convex piece of a target for the oracle: a core grown by a radius.
pub struct Piece {
    core: Core,
    radius: f64,
    lo: DVec3,
    hi: DVec3,
}

impl Piece {
    /// A piece and its bounds.
    pub fn new(core: Core, radius: f64) -> Piece {
        let (lo, hi) = core.bounds();
        Piece {
            core,
            radius,
            lo: lo - radius,
            hi: hi + radius,
        }
    }

    /// A triangle.
    pub fn triangle(t: [DVec3; 3]) -> Piece {
        Piece::new(Core::Triangle(t), 0.0)
    }
}

/// The oracle's target: its pieces under a uniform grid.
pub struct Oracle {
    pieces: Vec<Piece>,
    cell: f64,
    grid: HashMap<[i64; 3], Vec<u32>>,
}

impl Oracle {
    /// The pieces bucketed in cells of `cell` metres.
    pub fn new(pieces: Vec<Piece>, cell: f64) -> Oracle {
        let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
        for (i, p) in pieces.iter().enumerate() {
            let (a, b) = ((p.lo / cell).floor(), (p.hi / cell).floor());
            for x in a.x as i64..=b.x as i64 {
                for y in a.y as i64..=b.y as i64 {
                    for z in a.z as i64..=b.z as i64 {
                        grid.entry([x, y, z]).or_default().push(i as u32);
                    }
                }
            }
        }
        Oracle { pieces, cell, grid }
    }

    fn near(&self, lo: DVec3, hi: DVec3) -> Vec<usize> {
        let (a, b) = (
            ((lo - MARGIN) / self.cell).floor(),
            ((hi + MARGIN) / self.cell).floor(),
        );
        let mut out = Vec::new();
        for x in a.x as i64..=b.x as i64 {
            for y in a.y as i64..=b.y as i64 {
                for z in a.z as i64..=b.z as i64 {
                    if let Some(v) = self.grid.get(&[x, y, z]) {
                        out.extend(v.iter().map(|&i| i as usize));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out.retain(|&i| {
            let p = &self.pieces[i];
            (lo - MARGIN).cmple(p.hi).all() && (p.lo - MARGIN).cmple(hi).all()
        });
        out
    }

    /// Smallest gap between the shape (`core` grown by `r`) and the target.
    fn gap(&self, core: &Core, r: f64) -> f64 {
        let (lo, hi) = core.bounds();
        self.near(lo - r, hi + r)
            .into_iter()
            .map(|i| {
                let p = &self.pieces[i];
                convex::distance(core, &p.core) - r - p.radius
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// First time of impact of the shape moving by `m · t`, `t ≤ max_t`,
    /// with `pad` added to its radius.
    fn toi(&self, core: &Core, r: f64, m: DVec3, max_t: f64, pad: f64) -> Option<f64> {
        let (lo, hi) = core.bounds();
        let (lo, hi) = (lo - r - pad, hi + r + pad);
        let (slo, shi) = (lo.min(lo + m * max_t), hi.max(hi + m * max_t));
        let mut best: Option<f64> = None;
        for i in self.near(slo, shi) {
            let p = &self.pieces[i];
            let limit = best.unwrap_or(max_t);
            if let Some(t) = convex::time_of_impact(core, m, limit, &p.core, r + p.radius + pad)
                && best.is_none_or(|b| t < b)
            {
                best = Some(t);
            }
        }
        best
    }
}

/// A query shape in both libraries and its oracle core at a pose.
pub enum Shape {
    /// Capsule along local y.
    Capsule(f32, f32),
    /// Box.
    Cuboid(Vec3),
    /// Convex hull.
    Hull(ConvexHull),
}

impl Shape {
    fn name(&self) -> &'static str {
        match self {
            Shape::Capsule(..) => "capsule",
            Shape::Cuboid(_) => "box",
            Shape::Hull(_) => "hull",
        }
    }

    fn kiln(&self) -> QueryShape<'_> {
        match self {
            Shape::Capsule(h, r) => QueryShape::Capsule {
                half_height: *h,
                radius: *r,
            },
            Shape::Cuboid(h) => QueryShape::Cuboid { half: *h },
            Shape::Hull(h) => QueryShape::Hull(h),
        }
    }

    fn parry(&self) -> SharedShape {
        match self {
            Shape::Capsule(h, r) => SharedShape::capsule_y(*h, *r),
            Shape::Cuboid(h) => SharedShape::cuboid(h.x, h.y, h.z),
            Shape::Hull(h) => {
                let pts: Vec<parry3d::math::Vector> = h.vertices().map(pv).collect();
                SharedShape::convex_hull(&pts).expect("a solid hull")
            }
        }
    }

    fn core(&self, pose: &Pose) -> (Core, f64) {
        convex::query_core(&self.kiln(), pose)
    }

    /// One of each kind, about `size` across.
    pub fn set(size: f32, rng: &mut Rng) -> Vec<Shape> {
        let pts: Vec<Vec3> = (0..12)
            .map(|_| rng.unit32() * Vec3::new(1.0, 0.7, 0.5) * size * 0.5)
            .collect();
        vec![
            Shape::Capsule(size * 0.35, size * 0.2),
            Shape::Cuboid(Vec3::new(0.5, 0.3, 0.4) * size),
            Shape::Hull(ConvexHull::new(&pts).expect("a solid hull")),
        ]
    }
}

fn parry_pose(p: &Pose) -> parry3d::math::Pose {
    let q = p.rotation;
    parry3d::math::Pose::from_parts(
        pv(p.translation),
        parry3d::math::Rotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}

/// A random rotation.
pub fn rotation(rng: &mut Rng) -> Quat {
    Quat::from_axis_angle(rng.unit32(), rng.range(0.0, std::f32::consts::TAU))
}

/// Overlap, yes/no and cast rows for each shape of `shapes` at `poses`
/// (casts: `motions`, up to `max_t`) against Kiln's `level` and parry's
/// `target`, the first `checked` queries of each row checked against
/// `oracle`.
#[allow(clippy::too_many_arguments)]
pub fn rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    target: &dyn parry3d::shape::Shape,
    oracle: &Oracle,
    shapes: &[Shape],
    poses: &[Pose],
    motions: &[(Vec3, f32)],
    checked: usize,
) {
    let identity = parry3d::math::Pose::IDENTITY;
    let n = poses.len();
    for shape in shapes {
        let ps = shape.parry();
        let ks = shape.kiln();
        let label = shape.name();
        let mut kiln_yes = Vec::with_capacity(n);
        let mut parry_yes = Vec::with_capacity(n);
        let mut buf = Vec::new();
        // `--profile "TARGET SHAPE QUERY"` (e.g. "sauer_pandora box
        // overlaps"): Kiln's side of that row alone for five seconds, its
        // rate, then exit (for `perf record`); with `--peer`, parry3d's
        // side of it, the same calls as the row's
        let wanted = |q: &str| {
            super::profiled()
                .and_then(|w| w.strip_suffix(&format!(" {label} {q}")).map(str::to_string))
                .is_some_and(|target| !target.is_empty() && name.starts_with(&target))
        };
        let peer = std::env::args().any(|a| a == "--peer");
        let soak = |f: &mut dyn FnMut()| super::soak(name, n, f);
        let peer_cast = |p: &Pose, m: Vec3, max_t: f32| {
            let opts = parry3d::query::ShapeCastOptions::with_max_time_of_impact(max_t);
            let zero = parry3d::math::Vector::ZERO;
            let (pose, motion) = (parry_pose(p), pv(m));
            parry3d::query::cast_shapes(&pose, motion, &*ps.0, &identity, zero, target, opts)
                .unwrap()
                .map(|h| h.time_of_impact)
        };
        if wanted("overlaps") && peer {
            soak(&mut || {
                for p in poses {
                    let c = parry3d::query::contact(&parry_pose(p), &*ps.0, &identity, target, 0.0);
                    std::hint::black_box(c.unwrap());
                }
            });
        }
        if wanted("overlaps") {
            soak(&mut || {
                poses
                    .iter()
                    .for_each(|p| level.overlap_into(&ks, p, &Filter::ALL, &mut buf))
            });
        }
        if wanted("yes/no") && peer {
            soak(&mut || {
                for p in poses {
                    let t = parry3d::query::intersection_test(
                        &parry_pose(p),
                        &*ps.0,
                        &identity,
                        target,
                    );
                    std::hint::black_box(t.unwrap());
                }
            });
        }
        if wanted("yes/no") {
            soak(&mut || {
                poses
                    .iter()
                    .for_each(|p| _ = level.overlap_any(&ks, p, &Filter::ALL))
            });
        }
        if wanted("casts") && peer {
            soak(&mut || {
                for (p, &(m, max_t)) in poses.iter().zip(motions) {
                    std::hint::black_box(peer_cast(p, m, max_t));
                }
            });
        }
        if wanted("casts") {
            soak(&mut || {
                for (p, &(m, max_t)) in poses.iter().zip(motions) {
                    _ = level.cast(&ShapeCast::new(ks, *p, m, max_t), &Filter::ALL);
                }
            });
        }
        compare(
            rows,
            name,
            &format!("{label} overlaps/s"),
            "touching",
            n,
            || {
                kiln_yes.clear();
                kiln_yes.extend(poses.iter().map(|p| {
                    level.overlap_into(&ks, p, &Filter::ALL, &mut buf);
                    !buf.is_empty()
                }));
                kiln_yes.iter().filter(|&&y| y).count()
            },
            || {
                parry_yes.clear();
                parry_yes.extend(poses.iter().map(|p| {
                    parry3d::query::contact(&parry_pose(p), &*ps.0, &identity, target, 0.0)
                        .unwrap()
                        .is_some()
                }));
                parry_yes.iter().filter(|&&y| y).count()
            },
        );
        let gaps: Vec<f64> = poses[..checked.min(n)]
            .iter()
            .map(|p| {
                let (c, r) = shape.core(p);
                oracle.gap(&c, r)
            })
            .collect();
        let wrong = |yes: &[bool]| {
            gaps.iter()
                .zip(yes)
                .filter(|&(&g, &y)| (y && g > MARGIN) || (!y && g < -MARGIN))
                .count()
        };
        let last = rows.last_mut().expect("a row");
        last.query = format!(
            "{label} overlaps/s [oracle: kiln {} parry {} wrong of {}]",
            wrong(&kiln_yes),
            wrong(&parry_yes),
            gaps.len()
        );
        let (mut ky, mut py) = (Vec::with_capacity(n), Vec::with_capacity(n));
        compare(
            rows,
            name,
            &format!("{label} yes/no/s"),
            "touching",
            n,
            || {
                ky.clear();
                ky.extend(
                    poses
                        .iter()
                        .map(|p| level.overlap_any(&ks, p, &Filter::ALL)),
                );
                ky.iter().filter(|&&y| y).count()
            },
            || {
                py.clear();
                py.extend(poses.iter().map(|p| {
                    parry3d::query::intersection_test(&parry_pose(p), &*ps.0, &identity, target)
                        .unwrap()
                        .intersecting
                }));
                py.iter().filter(|&&y| y).count()
            },
        );
        let last = rows.last_mut().expect("a row");
        last.query = format!(
            "{label} yes/no/s [oracle: kiln {} parry {} wrong of {}]",
            wrong(&ky),
            wrong(&py),
            gaps.len()
        );
        let (mut kt, mut pt) = (Vec::with_capacity(n), Vec::with_capacity(n));
        compare(
            rows,
            name,
            &format!("{label} casts/s"),
            "hits",
            n,
            || {
                kt.clear();
                kt.extend(poses.iter().zip(motions).map(|(p, &(m, max_t))| {
                    level
                        .cast(&ShapeCast::new(ks, *p, m, max_t), &Filter::ALL)
                        .map(|h| h.t)
                }));
                kt.iter().flatten().count()
            },
            || {
                pt.clear();
                pt.extend(
                    poses
                        .iter()
                        .zip(motions)
                        .map(|(p, &(m, max_t))| peer_cast(p, m, max_t)),
                );
                pt.iter().flatten().count()
            },
        );
        let (mut kw, mut pw) = (0, 0);
        let m = checked.min(n);
        for i in 0..m {
            let (c, r) = shape.core(&poses[i]);
            let (mv, max_t) = motions[i];
            let (md, max_t) = (mv.as_dvec3(), f64::from(max_t));
            let speed = md.length();
            let want = oracle.toi(&c, r, md, max_t, 0.0);
            let off = |got: Option<f32>| match (got.map(f64::from), want) {
                (None, None) => false,
                (Some(g), Some(w)) => (g - w).abs() * speed > MARGIN,
                // a miss is wrong unless the oracle only grazes within
                // the margin; a hit unless one within it exists
                (None, Some(_)) => oracle.toi(&c, r, md, max_t, -MARGIN).is_some(),
                (Some(_), None) => oracle.toi(&c, r, md, max_t, MARGIN).is_none(),
            };
            kw += usize::from(off(kt[i]));
            pw += usize::from(off(pt[i]));
        }
        let last = rows.last_mut().expect("a row");
        last.query = format!("{label} casts/s [oracle: kiln {kw} parry {pw} wrong of {m}]");
    }
}

/// Random poses near `points` (each shape about `size` across): up to
/// 1.5 sizes from the point, randomly turned.
pub fn poses_near(points: &[Vec3], size: f32, rng: &mut Rng) -> Vec<Pose> {
    points
        .iter()
        .map(|&p| Pose::new(rotation(rng), p + rng.unit32() * size * rng.range(0.0, 1.5)))
        .collect()
}

/// A solid in its own frame, for the oracle.
pub enum Local {
    /// The hull of these points.
    Hull(Vec<DVec3>),
    /// A box of these half extents.
    Cuboid(DVec3),
    /// A ball of this radius.
    Ball(f64),
    /// A capsule along y: half height, radius.
    Capsule(f64, f64),
}

impl Local {
    /// The solid rotated by `rot`, then moved to `at`.
    pub fn placed(&self, rot: Quat, at: Vec3) -> Piece {
        let (rot, at) = (rot.as_dquat().normalize(), at.as_dvec3());
        match self {
            Local::Hull(pts) => {
                let w: Vec<DVec3> = pts.iter().map(|p| rot * *p + at).collect();
                let tris = kiln_tests::convex::hull_triangles(&w).expect("a solid hull");
                Piece::new(Core::Solid(Polytope::from_triangles(tris)), 0.0)
            }
            Local::Cuboid(h) => Piece::new(
                Core::Solid(Polytope::cuboid(
                    at,
                    [rot * DVec3::X, rot * DVec3::Y, rot * DVec3::Z],
                    *h,
                )),
                0.0,
            ),
            Local::Ball(r) => Piece::new(Core::Point(at), *r),
            Local::Capsule(h, r) => {
                let h = rot * DVec3::new(0.0, *h, 0.0);
                Piece::new(Core::Segment(at - h, at + h), *r)
            }
        }
    }
}

/// Character controller updates (`Character::move_and_slide`, a capsule of
/// radius 0.3 m and 1.8 m tall walking 3 m/s at 60 Hz under a constant
/// fall) for characters dropped on a grid over the level's walkable
/// ground, each walking a square path; beside it Rapier's
/// `KinematicCharacterController::move_shape` with the same capsule,
/// starts and motions over the same triangles (a fixed trimesh collider;
/// settings matched: 50° slopes, 0.3 m steps with a 0.05 m tread, 0.3 m
/// ground snapping, 0.01 m offset).
pub fn character_rows(
    rows: &mut Vec<Row>,
    name: &str,
    level: &Level,
    mesh: (&[[f32; 3]], &[[u32; 3]]),
    quick: bool,
) {
    use Filter;
    use kiln_runtime::character::{Character, Ground};
    use rapier3d::control::{CharacterAutostep, CharacterLength, KinematicCharacterController};
    use rapier3d::prelude as rp;
    let (lo, hi) = mesh.0.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(Vec3::from(*p)), hi.max(Vec3::from(*p))),
    );
    let c = Character::capsule(0.3, 0.6);
    let (side, frames) = if quick { (6, 100) } else { (20, 500) };
    let mut starts = Vec::new();
    for gx in 0..side {
        for gz in 0..side {
            let x = lo.x + (hi.x - lo.x) * (gx as f32 + 0.5) / side as f32;
            let z = lo.z + (hi.z - lo.z) * (gz as f32 + 0.5) / side as f32;
            if let Some(h) = level.raycast(
                &Ray::new(Vec3::new(x, hi.y + 1.0, z), Vec3::NEG_Y, hi.y - lo.y + 2.0),
                &Filter::ALL,
            ) && h.front_face
                && h.normal.y >= c.settings.max_slope.cos()
            {
                let at = h.point + Vec3::Y * 0.92;
                if !level.overlap_any(&c.shape, &Pose::new(c.rotation, at), &Filter::ALL) {
                    starts.push(at);
                }
            }
        }
    }
    let motion = |f: usize| {
        [Vec3::X, Vec3::Z, Vec3::NEG_X, Vec3::NEG_Z][(f / 50) % 4] * 0.05
            + Vec3::new(0.0, -0.1, 0.0)
    };
    let (mut updates, mut grounded) = (0usize, 0usize);
    let t0 = std::time::Instant::now();
    for &start in &starts {
        let mut at = start;
        for f in 0..frames {
            let m = c.move_and_slide(level, at, motion(f), &Filter::ALL);
            at = m.position;
            updates += 1;
            grounded += usize::from(matches!(m.ground, Ground::OnGround(_)));
        }
    }
    let kiln_s = t0.elapsed().as_secs_f64();

    // Rapier: one fixed trimesh collider in a query pipeline
    let mut bodies = rp::RigidBodySet::new();
    let mut colliders = rp::ColliderSet::new();
    let verts: Vec<rp::Vector> = mesh.0.iter().map(|p| pv(Vec3::from(*p))).collect();
    colliders.insert(rp::ColliderBuilder::trimesh(verts, mesh.1.to_vec()).expect("a trimesh"));
    let mut broad_phase = rp::DefaultBroadPhase::new();
    let mut narrow_phase = rp::NarrowPhase::new();
    rp::PhysicsPipeline::new().step(
        rp::Vector::ZERO,
        &rp::IntegrationParameters::default(),
        &mut rp::IslandManager::new(),
        &mut broad_phase,
        &mut narrow_phase,
        &mut bodies,
        &mut colliders,
        &mut rp::ImpulseJointSet::new(),
        &mut rp::MultibodyJointSet::new(),
        &mut rp::SoftBodySet::new(),
        &mut rp::CCDSolver::new(),
        &(),
        &(),
    );
    let queries = broad_phase.as_query_pipeline(
        narrow_phase.query_dispatcher(),
        &bodies,
        &colliders,
        rp::QueryFilter::default(),
    );
    let controller = KinematicCharacterController {
        offset: CharacterLength::Absolute(0.01),
        autostep: Some(CharacterAutostep {
            max_height: CharacterLength::Absolute(0.3),
            min_width: CharacterLength::Absolute(0.05),
            include_dynamic_bodies: false,
        }),
        max_slope_climb_angle: 50f32.to_radians(),
        min_slope_slide_angle: 50f32.to_radians(),
        snap_to_ground: Some(CharacterLength::Absolute(0.3)),
        ..KinematicCharacterController::default()
    };
    let shape = rp::SharedShape::capsule_y(0.6, 0.3);
    let (mut r_updates, mut r_grounded) = (0usize, 0usize);
    let t0 = std::time::Instant::now();
    for &start in &starts {
        let mut at = start;
        for f in 0..frames {
            let pose = parry3d::math::Pose::translation(at.x, at.y, at.z);
            let m = controller.move_shape(
                1.0 / 60.0,
                &queries,
                &*shape.0,
                &pose,
                pv(motion(f)),
                |_| {},
            );
            at += Vec3::new(m.translation.x, m.translation.y, m.translation.z);
            r_updates += 1;
            r_grounded += usize::from(m.grounded);
        }
    }
    let rapier_s = t0.elapsed().as_secs_f64();
    eprintln!(
        "  character updates: {} characters, {updates} updates: Kiln {:.1} µs each ({:.0}% on the ground), Rapier {:.1} µs each ({:.0}% grounded)",
        starts.len(),
        1e6 * kiln_s / updates.max(1) as f64,
        100.0 * grounded as f64 / updates.max(1) as f64,
        1e6 * rapier_s / r_updates.max(1) as f64,
        100.0 * r_grounded as f64 / r_updates.max(1) as f64,
    );
    rows.push(Row {
        mesh: name.into(),
        query: "character updates/s (parry: Rapier KCC)".into(),
        kiln: updates as f64 / kiln_s,
        parry: r_updates as f64 / rapier_s,
        unit: "/s",
    });
}
