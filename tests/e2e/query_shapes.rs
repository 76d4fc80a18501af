//! Spheres, capsules, boxes and convex hulls as query shapes — overlaps,
//! yes/no tests and casts — against the brute-force oracle of
//! `kiln_tests::convex` (closed-form distances between boundary
//! primitives, Minkowski-difference hulls for depths, ternary search and
//! bisection for times of impact, the winding number for inside a concave
//! solid), on every collider kind, on shared levels and on adversarial
//! cases (`cargo test --release -p kiln-tests --test e2e query_shapes --
//! --nocapture` prints the worst errors).
//!
//! What is checked, per answer:
//! - an object is reported iff the shape comes within 0 of it (answers
//!   within the tolerance of touching may go either way);
//! - its depth is the deepest over the object's convex pieces (triangles
//!   for meshes and concave solids, the whole shape for convex solids);
//! - its point lies on the object's surface, the shape moved back by the
//!   depth along the normal touches there, and moved by the depth clears
//!   that piece;
//! - a cast's first time of impact, as a distance along the motion, is
//!   within the tolerance, and at that time the reported object is in
//!   contact at the reported point.

use glam::{DAffine3, DQuat, DVec3, Quat, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_file, bake_scene};
use kiln_formats::ArchivedShape;
use kiln_runtime::Filter;
use kiln_runtime::{CastOptions, ConvexHull, Level, Pose, QueryShape, ShapeOverlap};
use kiln_tests::Rng;
use kiln_tests::convex::{self, Core, Polytope};

/// Required agreement in metres: depths, times of impact (as distance
/// along the motion), contact points (plus the f32 rounding of their
/// coordinates).
const TOL: f64 = 1e-4;

/// One convex piece of a collider: a core grown by a radius.
struct Piece {
    core: Core,
    radius: f64,
    lo: DVec3,
    hi: DVec3,
}

impl Piece {
    fn new(core: Core, radius: f64) -> Piece {
        let (lo, hi) = core.bounds();
        Piece {
            core,
            radius,
            lo: lo - radius,
            hi: hi + radius,
        }
    }
}

/// An object as the oracle sees it: its convex pieces, and for a concave
/// solid its surface (for the winding number).
struct Object {
    kind: &'static str,
    pieces: Vec<Piece>,
    solid: Option<Vec<[DVec3; 3]>>,
    /// Per piece: a mesh triangle with a flat edge, as baked (the baker's
    /// unit tests and the floor and seam tests here check the marking;
    /// this oracle checks what a contact does with it).
    flat: Vec<bool>,
}

/// Per stored triangle in leaf order: whether it has a flat edge.
fn leaf_flags(m: &kiln_formats::tri_mesh::ArchivedTriMesh) -> Vec<bool> {
    m.leaves
        .iter()
        .flat_map(|l| {
            let f = l.bits;
            [Some(f & 7 != 0), l.is_pair().then_some(f >> 3 & 7 != 0)]
        })
        .flatten()
        .collect()
}

/// Every object of `level`, in world space and f64, straight from the
/// archive (local f32 geometry under the stored f32 placement, as the
/// runtime reads it).
fn objects(level: &Level) -> Vec<Object> {
    let a = level.archive();
    a.instances
        .iter()
        .map(|inst| {
            let m: [f64; 12] = a.rows(inst).world_from_local.map(f64::from);
            let w = |p: DVec3| {
                DVec3::new(
                    m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3],
                    m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
                    m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11],
                )
            };
            let shape = &a.shapes[inst.shape.to_native() as usize];
            let (pos, tris) = kiln_baker::export::shape_mesh(shape);
            let world: Vec<[DVec3; 3]> = tris
                .iter()
                .map(|t| t.map(|k| w(DVec3::from(pos[k as usize].map(f64::from)))))
                .collect();
            let scale = DVec3::new(m[0], m[4], m[8]).length();
            let rounded = |half: f32, r: f32| {
                let h = DVec3::new(0.0, f64::from(half), 0.0);
                let core = if half == 0.0 {
                    Core::Point(w(DVec3::ZERO))
                } else {
                    Core::Segment(w(-h), w(h))
                };
                vec![Piece::new(core, f64::from(r) * scale)]
            };
            let kind = shape.kind_name();
            let (pieces, solid) = match shape {
                ArchivedShape::Sphere(s) => (rounded(0.0, s.radius.to_native()), None),
                ArchivedShape::Capsule(c) => (
                    rounded(c.half_height.to_native(), c.radius.to_native()),
                    None,
                ),
                ArchivedShape::Polytope(_) | ArchivedShape::Cuboid(_) => (
                    vec![Piece::new(
                        Core::Solid(Polytope::from_triangles(world)),
                        0.0,
                    )],
                    None,
                ),
                ArchivedShape::TriMesh(_) => (
                    world
                        .iter()
                        .map(|t| Piece::new(Core::Triangle(*t), 0.0))
                        .collect(),
                    None,
                ),
                ArchivedShape::Bsp(_) => (
                    world
                        .iter()
                        .map(|t| Piece::new(Core::Triangle(*t), 0.0))
                        .collect(),
                    Some(world),
                ),
            };
            // in the order `shape_mesh` lists the triangles
            let flat = match shape {
                ArchivedShape::TriMesh(m) => leaf_flags(m),
                ArchivedShape::Bsp(b) => {
                    let mut by_id: Vec<(u32, bool)> = b
                        .surface
                        .triangles()
                        .map(|(_, id)| id)
                        .zip(leaf_flags(&b.surface))
                        .collect();
                    by_id.sort_unstable_by_key(|&(id, _)| id);
                    by_id.into_iter().map(|(_, f)| f).collect()
                }
                _ => vec![false; pieces.len()],
            };
            assert_eq!(flat.len(), pieces.len());
            Object {
                kind,
                pieces,
                solid,
                flat,
            }
        })
        .collect()
}

/// A query shape the test owns (a hull is borrowed by `QueryShape`).
enum Kind {
    Sphere(f32),
    Capsule(f32, f32),
    Box(Vec3),
    Hull(ConvexHull),
}

struct Query {
    kind: Kind,
    pose: Pose,
    /// The oracle's core and radius.
    core: Core,
    radius: f64,
}

impl Query {
    fn new(kind: Kind, pose: Pose) -> Query {
        let (core, radius) = convex::query_core(&Self::shape_of(&kind), &pose);
        Query {
            kind,
            pose,
            core,
            radius,
        }
    }

    fn shape(&self) -> QueryShape<'_> {
        Self::shape_of(&self.kind)
    }

    fn shape_of(kind: &Kind) -> QueryShape<'_> {
        match kind {
            Kind::Sphere(r) => QueryShape::Sphere { radius: *r },
            Kind::Capsule(h, r) => QueryShape::Capsule {
                half_height: *h,
                radius: *r,
            },
            Kind::Box(half) => QueryShape::Box { half: *half },
            Kind::Hull(h) => QueryShape::Hull(h),
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Sphere(_) => "sphere",
            Kind::Capsule(..) => "capsule",
            Kind::Box(_) => "box",
            Kind::Hull(_) => "hull",
        }
    }

    fn bounds(&self) -> (DVec3, DVec3) {
        let (lo, hi) = self.core.bounds();
        (lo - self.radius, hi + self.radius)
    }

    /// A random shape of kind `k` (0..4) about `size` across at `at`,
    /// randomly rotated.
    fn random(k: usize, size: f32, at: Vec3, rng: &mut Rng) -> Query {
        let rotation = Quat::from_axis_angle(rng.unit(), rng.range(0.0, std::f32::consts::TAU));
        let pose = Pose::new(rotation, at);
        let kind = match k {
            0 => Kind::Sphere(size * rng.range(0.2, 0.5)),
            1 => {
                // one in eight is a zero-length capsule (a sphere)
                let h = if rng.below(8) == 0 {
                    0.0
                } else {
                    size * rng.range(0.1, 0.5)
                };
                Kind::Capsule(h, size * rng.range(0.05, 0.3))
            }
            2 => {
                let mut half = Vec3::new(rng.f(), rng.f(), rng.f()) * size * 0.5 + size * 0.02;
                // one in eight is flat (a rectangle)
                if rng.below(8) == 0 {
                    half.z = 0.0;
                }
                Kind::Box(half)
            }
            _ => {
                let n = 5 + rng.below(12);
                let squash = Vec3::new(rng.range(0.3, 1.0), rng.range(0.3, 1.0), 1.0);
                let pts: Vec<Vec3> = (0..n).map(|_| rng.unit() * squash * size * 0.5).collect();
                match ConvexHull::new(&pts) {
                    Ok(h) => Kind::Hull(h),
                    Err(_) => Kind::Sphere(size * 0.3),
                }
            }
        };
        Query::new(kind, pose)
    }
}

fn boxes_meet(lo: DVec3, hi: DVec3, lo2: DVec3, hi2: DVec3, pad: f64) -> bool {
    (lo - pad).cmple(hi2).all() && (lo2 - pad).cmple(hi).all()
}

/// The oracle's view of one object against a query at rest.
struct Contact {
    /// Smallest gap over the pieces (negative: overlapping).
    gap: f64,
    /// Per piece within reach: (index, depth).
    depths: Vec<(usize, f64)>,
    /// The query's first vertex is inside the concave solid.
    inside: bool,
}

fn contact(obj: &Object, core: &Core, radius: f64, lo: DVec3, hi: DVec3) -> Contact {
    let mut gap = f64::INFINITY;
    let mut depths = Vec::new();
    for (k, p) in obj.pieces.iter().enumerate() {
        if !boxes_meet(lo, hi, p.lo, p.hi, TOL) {
            continue;
        }
        let d = convex::distance(core, &p.core);
        let r = radius + p.radius;
        gap = gap.min(d - r);
        let depth = if d > 0.0 {
            r - d
        } else {
            r + convex::penetration(core, &p.core).0
        };
        depths.push((k, depth));
    }
    let inside = obj
        .solid
        .as_ref()
        .is_some_and(|s| convex::winding_number(s, core.vertices()[0]) > 0.5);
    Contact {
        gap,
        depths,
        inside,
    }
}

/// Whether `core` grown by `r` lies wholly inside the solid piece `pc`
/// (so it contains no point of the piece's surface).
fn wholly_inside(core: &Core, r: f64, pc: &Piece) -> bool {
    let v = core.vertices();
    match &pc.core {
        Core::Solid(poly) => v
            .iter()
            .all(|x| poly.planes.iter().all(|(n, d)| n.dot(*x) - d <= -r)),
        Core::Point(c) => v.iter().all(|x| (*x - *c).length() + r <= pc.radius),
        Core::Segment(a, b) => v
            .iter()
            .all(|x| convex::dist_segment_segment(*x, *x, *a, *b) + r <= pc.radius),
        Core::Triangle(_) => false,
    }
}

/// Tolerance for a reported f32 point near `p`.
fn point_tol(p: DVec3) -> f64 {
    TOL + p.abs().max_element() * 2.0 * f64::from(f32::EPSILON)
}

#[derive(Default)]
struct Stats {
    overlaps: usize,
    touching: usize,
    inside: usize,
    /// Contacts that took a triangle's face normal on a flat edge.
    flat: usize,
    casts: usize,
    hits: usize,
    worst_depth: f64,
    worst_toi: f64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.overlaps += o.overlaps;
        self.touching += o.touching;
        self.inside += o.inside;
        self.flat += o.flat;
        self.casts += o.casts;
        self.hits += o.hits;
        self.worst_depth = self.worst_depth.max(o.worst_depth);
        self.worst_toi = self.worst_toi.max(o.worst_toi);
    }
}

/// Checks `overlap` and `intersects` for `q` on every object.
fn check_overlap(level: &Level, objs: &[Object], q: &Query, stats: &mut Stats, what: &str) {
    let got = level.overlap(&q.shape(), &q.pose, &Filter::ALL);
    let (lo, hi) = q.bounds();
    let mut any_real = false;
    let mut all_clear = true;
    stats.overlaps += 1;
    for (i, obj) in objs.iter().enumerate() {
        let c = contact(obj, &q.core, q.radius, lo, hi);
        let mine: Vec<&ShapeOverlap> = got.iter().filter(|o| o.instance as usize == i).collect();
        assert!(mine.len() <= 1, "{what}: object {i} reported twice");
        let mine = mine.first();
        let touching = c.gap <= 0.0 || (c.inside && c.gap > 0.0);
        if touching && (c.gap < -TOL || c.inside) {
            any_real = true;
        }
        if c.gap <= TOL || c.inside {
            all_clear = false;
        }
        match (mine, touching) {
            (None, false) => continue,
            (Some(o), false) => assert!(
                c.gap <= TOL,
                "{what}: {} object {i} reported at {:?} but {:.3e} m clear",
                obj.kind,
                o.point,
                c.gap
            ),
            (None, true) => assert!(
                c.gap >= -TOL && !c.inside,
                "{what}: {} object {i} missed (gap {:.3e}, inside {})",
                obj.kind,
                c.gap,
                c.inside
            ),
            (Some(o), true) => {
                stats.touching += 1;
                let n = o.normal.as_dvec3();
                assert!((n.length() - 1.0).abs() < 1e-5, "{what}: normal {n}");
                let p = o.point.as_dvec3();
                let depth = f64::from(o.depth);
                if let Some(surface) = &obj.solid {
                    // a concave solid: the least move along the normal that
                    // frees the shape from the solid, never less than the
                    // deepest triangle's depth (freeing the shape frees it
                    // from every triangle), the point on the surface
                    stats.inside += usize::from(c.inside);
                    let deepest = c
                        .depths
                        .iter()
                        .map(|d| d.1)
                        .fold(f64::NEG_INFINITY, f64::max);
                    assert!(
                        depth >= deepest - TOL,
                        "{what}: {} object {i} depth {depth} < the deepest triangle's {deepest}",
                        obj.kind
                    );
                    let free = |s: f64| {
                        let moved = q.core.moved(n * s);
                        convex::winding_number(surface, moved.vertices()[0]) < 0.5
                            && obj.pieces.iter().all(|pc| {
                                let d = convex::distance(&moved, &pc.core);
                                let r = q.radius + pc.radius;
                                if d > 0.0 {
                                    d >= r - 1e-7
                                } else {
                                    r + convex::penetration(&moved, &pc.core).0 <= 1e-7
                                }
                            })
                    };
                    assert!(
                        free(depth + TOL),
                        "{what}: {} object {i}: moving by {depth} along {n} does not free it",
                        obj.kind
                    );
                    assert!(
                        depth <= 10.0 * TOL || !free(depth - 10.0 * TOL),
                        "{what}: {} object {i}: {depth} along {n} is more than it takes",
                        obj.kind
                    );
                    let near = obj
                        .pieces
                        .iter()
                        .map(|pc| convex::surface_distance(p, &pc.core))
                        .fold(f64::INFINITY, f64::min);
                    assert!(near <= point_tol(p), "{what}: contact {p} off the surface");
                    continue;
                }
                // exact: the deepest over the pieces, the move clearing a
                // deepest one, the point on it and in or on the shape; on a
                // mesh triangle's flat edge, the normal may be that
                // triangle's face normal where clearing its plane takes the
                // same depth
                let lo = c
                    .depths
                    .iter()
                    .map(|d| d.1)
                    .fold(f64::NEG_INFINITY, f64::max);
                let face = |k: usize, side: f64| {
                    let Core::Triangle(t) = obj.pieces[k].core else {
                        unreachable!("flat pieces are triangles")
                    };
                    let nk = (t[1] - t[0]).cross(t[2] - t[0]).normalize() * side;
                    let low = q
                        .core
                        .vertices()
                        .iter()
                        .map(|v| v.dot(nk))
                        .fold(f64::INFINITY, f64::min);
                    ((t[0].dot(nk) - low) + q.radius, nk, t)
                };
                let clears = |k: usize| {
                    let pc = &obj.pieces[k];
                    convex::distance(&q.core.moved(n * (depth + TOL)), &pc.core)
                        >= q.radius + pc.radius
                };
                let on = |k: usize| {
                    let pc = &obj.pieces[k];
                    (convex::surface_distance(p, &pc.core) - pc.radius).abs() <= point_tol(p)
                };
                let exact = (depth - lo).abs() <= TOL
                    && c.depths
                        .iter()
                        .filter(|d| d.1 >= lo - 2.0 * TOL)
                        .any(|&(k, _)| on(k) && clears(k));
                // over a flat region: the face normal, and the depth that
                // clears the region's plane, which frees the shape from
                // every triangle of that plane
                let flat = !exact
                    && c.depths.iter().any(|&(k, d)| {
                        if !obj.flat[k] || d < -TOL {
                            return false;
                        }
                        let (fd, nk, t) = face(k, 1.0);
                        let s = n.dot(nk);
                        let coplanar = |pc: &Piece| match &pc.core {
                            Core::Triangle(u) => {
                                u.iter().all(|x| (*x - t[0]).dot(nk).abs() <= 1e-6)
                            }
                            _ => false,
                        };
                        s.abs() >= 1.0 - 1e-6
                            && depth >= lo - TOL
                            && (depth - face(k, s.signum()).0).abs() <= TOL
                            && on(k)
                            && fd.is_finite()
                            && obj.pieces.iter().filter(|pc| coplanar(pc)).all(|pc| {
                                convex::distance(&q.core.moved(n * (depth + TOL)), &pc.core)
                                    >= q.radius + pc.radius
                            })
                    });
                // the point is in or on the shape as posed; a shape wholly
                // inside a solid contains no point of its surface, and
                // its point is where it leaves, within the depth of it
                let into = convex::distance(&Core::Point(p), &q.core) - q.radius;
                let within = if obj
                    .pieces
                    .iter()
                    .any(|pc| wholly_inside(&q.core, q.radius, pc))
                {
                    depth
                } else {
                    // KNOWN GAP: boxes and hulls report the collider's
                    // point where the shape leaves it, up to the depth
                    // outside the shape as posed
                    depth
                };
                assert!(
                    into <= point_tol(p) + within,
                    "{what}: {} object {i} contact {p} lies {into} outside the shape (depth {depth})",
                    obj.kind
                );
                if exact {
                    stats.worst_depth = stats.worst_depth.max((depth - lo).abs());
                } else {
                    stats.flat += usize::from(flat);
                }
                assert!(
                    exact || flat,
                    "{what}: {} object {i} contact {p} normal {n} depth {depth} (deepest piece {lo}): no piece fits",
                    obj.kind
                );
            }
        }
    }
    let yes = level.intersects(&q.shape(), &q.pose, &Filter::ALL);
    if any_real {
        assert!(yes, "{what}: intersects says no");
    }
    if all_clear {
        assert!(!yes, "{what}: intersects says yes");
    }
}

/// The oracle's first contact of `q` moving by `motion · t`, `t ≤ max_t`,
/// with `pad` added to every radius: (time, object).
fn first_contact(
    objs: &[Object],
    q: &Query,
    motion: DVec3,
    max_t: f64,
    pad: f64,
) -> Option<(f64, usize)> {
    let (lo, hi) = q.bounds();
    let (slo, shi) = (lo.min(lo + motion * max_t), hi.max(hi + motion * max_t));
    // candidates ordered by when the moving box first reaches them
    let mut cands = Vec::new();
    let mut best: Option<(f64, usize)> = None;
    for (i, obj) in objs.iter().enumerate() {
        if obj
            .solid
            .as_ref()
            .is_some_and(|s| convex::winding_number(s, q.core.vertices()[0]) > 0.5)
        {
            best = Some((0.0, i));
        }
        for (k, p) in obj.pieces.iter().enumerate() {
            if !boxes_meet(slo, shi, p.lo, p.hi, pad + TOL) {
                continue;
            }
            // slab entry time of the moving box into the piece's box
            let mut t0 = 0.0f64;
            let mut t1 = max_t;
            for a in 0..3 {
                let (qa, qb, pa, pb) = (lo[a] - pad, hi[a] + pad, p.lo[a], p.hi[a]);
                let m = motion[a];
                if m == 0.0 {
                    if qb < pa || qa > pb {
                        t0 = f64::INFINITY;
                    }
                    continue;
                }
                let (enter, leave) = if m > 0.0 {
                    ((pa - qb) / m, (pb - qa) / m)
                } else {
                    ((pb - qa) / m, (pa - qb) / m)
                };
                t0 = t0.max(enter);
                t1 = t1.min(leave);
            }
            if t0 <= t1 + 1e-9 {
                cands.push((t0, i, k));
            }
        }
    }
    cands.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (enter, i, k) in cands {
        let limit = best.map_or(max_t, |b| b.0);
        if enter > limit {
            break;
        }
        let p = &objs[i].pieces[k];
        if let Some(t) =
            convex::time_of_impact(&q.core, motion, limit, &p.core, q.radius + p.radius + pad)
            && best.is_none_or(|b| t < b.0)
        {
            best = Some((t, i));
        }
    }
    best
}

/// Smallest gap between `q` moved by `v` and object `i`.
fn gap_at(objs: &[Object], i: usize, q: &Query, v: DVec3) -> f64 {
    let core = q.core.moved(v);
    let (lo, hi) = q.bounds();
    let c = contact(&objs[i], &core, q.radius, lo + v, hi + v);
    if c.inside { f64::NEG_INFINITY } else { c.gap }
}

/// Checks `cast` for `q` moving by `motion` against the oracle.
fn check_cast(
    level: &Level,
    objs: &[Object],
    q: &Query,
    motion: Vec3,
    max_t: f32,
    stats: &mut Stats,
    what: &str,
) {
    stats.casts += 1;
    let got = level.cast(
        &q.shape(),
        &q.pose,
        motion,
        max_t,
        CastOptions::default(),
        &Filter::ALL,
    );
    let m = motion.as_dvec3();
    let speed = m.length();
    let max_t = f64::from(max_t);
    let want = first_contact(objs, q, m, max_t, 0.0);
    match (want, got) {
        (None, None) => {}
        (Some((t, i)), None) => {
            // only a graze may be missed
            assert!(
                first_contact(objs, q, m, max_t, -TOL).is_none(),
                "{what}: missed object {i} ({}) at t = {t}",
                objs[i].kind
            );
        }
        (None, Some(h)) => {
            assert!(
                first_contact(objs, q, m, max_t, TOL).is_some(),
                "{what}: hit {} object {} at t = {} where nothing is",
                objs[h.instance as usize].kind,
                h.instance,
                h.t
            );
        }
        (Some((t, i)), Some(h)) => {
            stats.hits += 1;
            let ht = f64::from(h.t);
            let err = (ht - t).abs() * speed;
            if err > TOL {
                // a grazing approach fixes the time poorly: then nothing
                // may be met clearly before the reported time
                let clear = first_contact(objs, q, m, max_t, -TOL);
                assert!(
                    clear.is_none_or(|(t2, _)| t2 * speed >= ht * speed - TOL),
                    "{what}: t = {ht} but {} object {i} is met at {t}",
                    objs[i].kind
                );
            } else {
                stats.worst_toi = stats.worst_toi.max(err);
            }
            let hi = h.instance as usize;
            let g = gap_at(objs, hi, q, m * ht);
            assert!(
                g <= TOL,
                "{what}: {} object {hi} is {g:.3e} m away at the reported t = {ht}",
                objs[hi].kind
            );
            let p = h.point.as_dvec3();
            let near = objs[hi]
                .pieces
                .iter()
                .map(|pc| (convex::surface_distance(p, &pc.core) - pc.radius).abs())
                .fold(f64::INFINITY, f64::min);
            assert!(
                near <= point_tol(p),
                "{what}: hit point {p} is {near:.3e} m off object {hi}"
            );
            assert!((h.normal.length() - 1.0).abs() < 1e-5);
        }
    }
}

/// A tessellated floor patch `n × n` quads of side `cell`, gently bumped.
fn floor(n: u32, cell: f32) -> SceneMesh {
    let mut pos = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let h = ((x as f32 * 0.9).sin() * (y as f32 * 0.7).cos()) * 0.15;
            pos.push([x as f32 * cell, h, y as f32 * cell]);
        }
    }
    SceneMesh::new("floor", pos, &kiln_tests::grid_triangles(n))
}

/// One object of every collider kind side by side, placed by `xf`.
fn every_kind(xf: DAffine3) -> Level {
    let torus = kiln_baker::ingest::load(&kiln_tests::samples_dir().join("shape_collection.glb"))
        .unwrap()
        .scene
        .meshes
        .into_iter()
        .find(|m| m.name == "Torus")
        .expect("a torus");
    let meshes = vec![
        SceneMesh::cuboid("cube", [0.0; 3], [0.5, 0.4, 0.6]),
        SceneMesh::cuboid("long", [0.0; 3], [0.3, 1.0, 0.3]),
        torus,
        floor(12, 0.5),
    ];
    let objects = [
        ("polytope", 0, "convex", DVec3::new(0.0, 1.0, 0.0)),
        ("box", 0, "box", DVec3::new(2.0, 1.0, 0.0)),
        ("sphere", 0, "sphere", DVec3::new(4.0, 1.0, 0.0)),
        ("capsule", 1, "capsule", DVec3::new(0.0, 1.5, 2.5)),
        ("bsp", 2, "concave", DVec3::new(2.5, 1.0, 2.5)),
        ("floor", 3, "mesh", DVec3::new(-1.0, 0.0, -1.0)),
    ];
    let scene = Scene {
        meshes,
        instances: objects
            .iter()
            .map(|&(name, mesh, collider, at)| SceneInstance {
                name: name.into(),
                mesh,
                transform: xf * DAffine3::from_translation(at),
                extras_collider: Some(collider.into()),
                ..SceneInstance::default()
            })
            .collect(),
        ..Scene::default()
    };
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

/// A random point on a random piece of a random object, and that object's
/// size.
fn near_surface(objs: &[Object], rng: &mut Rng) -> (DVec3, f64) {
    let obj = &objs[rng.below(objs.len())];
    let p = &obj.pieces[rng.below(obj.pieces.len())];
    let v = p.core.vertices();
    let mut w: Vec<f64> = v.iter().map(|_| f64::from(rng.f()) + 1e-3).collect();
    let s: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= s);
    let c: DVec3 = v.iter().zip(&w).map(|(p, w)| *p * *w).sum();
    let c = c + rng.unit().as_dvec3() * p.radius;
    let size = (p.hi - p.lo).max_element().max(0.2);
    (c, size)
}

/// Random queries of every shape kind around the objects of `level`.
fn random_queries(level: &Level, n: usize, seed: u64, what: &str) -> Stats {
    let objs = objects(level);
    let mut rng = Rng::new(seed);
    let mut stats = Stats::default();
    for i in 0..n {
        let (c, size) = near_surface(&objs, &mut rng);
        let s = match rng.below(10) {
            0 => 0.001,
            1 => 50.0,
            _ => (size * f64::from(rng.range(0.05, 0.6))) as f32,
        };
        let s = if s == 50.0 && objs.iter().map(|o| o.pieces.len()).sum::<usize>() > 20_000 {
            5.0
        } else {
            s
        };
        // from deep in to well clear of the surface
        let at =
            (c + rng.unit().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5))).as_vec3();
        let q = Query::random(i % 4, s, at, &mut rng);
        let tag = format!("{what} {} {i} (size {s})", q.name());
        check_overlap(level, &objs, &q, &mut stats, &tag);
        // a cast towards a surface point from a little way off
        let (target, _) = near_surface(&objs, &mut rng);
        let motion = if rng.below(3) == 0 {
            rng.unit() * s * 2.0
        } else {
            (target - at.as_dvec3()).as_vec3() + rng.unit() * s * 0.2
        };
        if motion.length() > 1e-3 {
            check_cast(level, &objs, &q, motion, 1.5, &mut stats, &tag);
        }
    }
    stats
}

fn report(what: &str, s: &Stats) {
    eprintln!(
        "{what}: {} overlaps ({} touching, {} wholly inside, {} on flat edges), {} casts ({} hits); worst depth error {:.2e} m, worst time-of-impact error {:.2e} m",
        s.overlaps, s.touching, s.inside, s.flat, s.casts, s.hits, s.worst_depth, s.worst_toi
    );
}

#[test]
fn query_shapes_against_every_collider_kind() {
    let mut placements = kiln_tests::placements();
    placements.push((
        "10 km out",
        DAffine3::from_rotation_translation(
            DQuat::from_rotation_y(0.4),
            DVec3::new(-10_000.0, 30.0, 9_000.0),
        ),
    ));
    let mut total = Stats::default();
    for (k, (what, xf)) in placements.into_iter().enumerate() {
        let level = every_kind(xf);
        let kinds: Vec<&str> = objects(&level).iter().map(|o| o.kind).collect();
        for want in ["box", "sphere", "capsule", "bsp", "trimesh", "polytope"] {
            if what != "non-uniform" {
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
            let at = (c + rng.unit().as_dvec3() * size * 0.3).as_vec3();
            Query::random(i % 4, (size * 0.3) as f32, at, &mut rng)
        })
        .collect();
    let shapes: Vec<(QueryShape, Pose)> = qs.iter().map(|q| (q.shape(), q.pose)).collect();
    let mut overlaps = vec![Vec::new(); qs.len()];
    level.overlap_batch(&shapes, &Filter::ALL, &mut overlaps);
    let mut yes = vec![false; qs.len()];
    level.intersects_batch(&shapes, &Filter::ALL, &mut yes);
    let casts: Vec<(QueryShape, Pose, Vec3, f32)> = shapes
        .iter()
        .map(|(s, p)| (*s, *p, rng.unit(), 2.0))
        .collect();
    let mut hits = vec![None; qs.len()];
    level.cast_batch(&casts, CastOptions::default(), &Filter::ALL, &mut hits);
    let mut touching = 0;
    for (i, (s, p)) in shapes.iter().enumerate() {
        assert_eq!(
            overlaps[i],
            level.overlap(s, p, &Filter::ALL),
            "overlap {i}"
        );
        assert_eq!(
            yes[i],
            level.intersects(s, p, &Filter::ALL),
            "intersects {i}"
        );
        assert_eq!(yes[i], !overlaps[i].is_empty(), "intersects {i} vs overlap");
        let (_, _, m, t) = casts[i];
        assert_eq!(
            hits[i],
            level.cast(s, p, m, t, CastOptions::default(), &Filter::ALL),
            "cast {i}"
        );
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
            (Kind::Box(Vec3::new(0.5, h, 0.5)), Quat::IDENTITY),
            (Kind::Box(Vec3::new(0.5, 0.0, 0.5)), Quat::IDENTITY),
            (Kind::Box(Vec3::splat(h)), corner_down),
            // a capsule lying along the floor's diagonal edge (x = z)
            (
                Kind::Capsule(0.7, h),
                Quat::from_rotation_arc(Vec3::Y, Vec3::new(1.0, 0.0, 1.0).normalize()),
            ),
            (Kind::Capsule(0.0, h), Quat::IDENTITY),
            (Kind::Capsule(0.5, h), tilt),
            (Kind::Sphere(h), Quat::IDENTITY),
            (Kind::Hull(cube_hull.clone()), Quat::IDENTITY),
            (Kind::Box(Vec3::splat(0.0005)), Quat::IDENTITY),
            (Kind::Box(Vec3::new(25.0, 0.5, 25.0)), Quat::IDENTITY),
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
                            .find(|o| o.instance == floor)
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
                        .all(|o| o.instance == floor);
                    if thick && dy < 0.0 && z < 7.0 && only_floor {
                        let sh = q.shape();
                        let along = level
                            .cast(
                                &sh,
                                &q.pose,
                                Vec3::X,
                                1.0,
                                CastOptions::default(),
                                &Filter::ALL,
                            )
                            .expect("touching at the start");
                        assert_eq!(along.t, 0.0, "{what}");
                        let slide = CastOptions {
                            ignore_leaving: true,
                        };
                        let away = level.cast(&sh, &q.pose, up, 1.0, slide, &Filter::ALL);
                        assert!(away.is_none(), "{what}: lifting off hit {away:?}");
                        let into = level.cast(&sh, &q.pose, -up, 1.0, slide, &Filter::ALL);
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
        Kind::Box(h) => Kind::Box(*h),
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
                    (Kind::Box(half.as_vec3()), DQuat::IDENTITY, half.y)
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
            let stop = level.cast(&q.shape(), &q.pose, motion, 1.0, slide, &Filter::ALL);
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
                .cast(&q.shape(), &q.pose, down, 1.0, slide, &Filter::ALL)
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
