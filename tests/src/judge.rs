//! The judge of query-shape answers: every collider of a level as the
//! brute-force oracle sees it ([`objects`]: convex pieces in f64 world
//! space, concave solids' surfaces for the winding number), query shapes
//! with their oracle cores ([`Query`]), and the checks of overlaps,
//! yes/no tests and casts against the contact rules ([`check_overlap`],
//! [`check_cast`]); they panic, naming the case, on a wrong answer. The
//! end-to-end tests, the differential scene generator ([`crate::scenes`])
//! and its fuzz target share it.
//!
//! What is checked, per answer:
//! - an object is reported iff the shape comes within 0 of it (answers
//!   within the tolerance of touching may go either way);
//! - a mesh's or convex solid's depth is the deepest over the object's
//!   convex pieces; over a mesh's flat region, the depth clearing the
//!   region's plane, freeing the shape from every triangle in it;
//! - a concave solid's depth frees the shape from the solid, no shorter
//!   move along the normal does, and it is no less than the deepest
//!   triangle's; where it is more, a search over directions
//!   ([`least_translation`]) looks for a shorter translation that frees
//!   it, and the point of a sphere or capsule is checked to be where the
//!   moved-out shape touches (both counted in [`Stats`], not yet asserted:
//!   the runtime does not reach the least translation everywhere yet);
//! - its point lies on the object's surface (and, for a shape not wholly
//!   inside, within the depth of the shape);
//! - a cast's first time of impact, as a distance along the motion, is
//!   within the tolerance, and at that time the reported object is in
//!   contact at the reported point.

use crate::Rng;
use crate::convex::{self, Core, Polytope};
use glam::{DVec3, Quat, Vec3};
use kiln_formats::ArchivedCollider;
use kiln_runtime::{
    ConvexHull, Filter, Level, ObjectId, Pose, QueryShape, Ray, RayHit, ShapeCast, ShapeHit,
    ShapeOverlap, World,
};

/// What the judge asks: a [`Level`], or a [`World`] of a level and its
/// bodies, and where each answer's object sits in the oracle's list
/// ([`objects`], then for a world [`body_object`] per body in the order
/// [`World::bodies`] lists them).
pub trait Answers {
    /// `overlap` with every object.
    fn overlap(&self, shape: &QueryShape, pose: &Pose) -> Vec<ShapeOverlap>;
    /// `overlap_any` with every object.
    fn overlap_any(&self, shape: &QueryShape, pose: &Pose) -> bool;
    /// `cast` with every object.
    fn cast(&self, cast: &ShapeCast) -> Option<ShapeHit>;
    /// `contains_point` with every object.
    fn contains_point(&self, p: Vec3) -> Vec<ObjectId>;
    /// `raycast` with every object.
    fn raycast(&self, ray: &Ray) -> Option<RayHit>;
    /// The oracle's index of `id`.
    fn slot(&self, id: ObjectId) -> usize;
}

/// [`Answers`] for a type whose own query methods answer, its objects
/// placed in the oracle's list by `$slot`.
macro_rules! answers_by_methods {
    ($t:ty, $slot:expr) => {
        impl Answers for $t {
            fn overlap(&self, shape: &QueryShape, pose: &Pose) -> Vec<ShapeOverlap> {
                <$t>::overlap(self, shape, pose, &Filter::ALL)
            }
            fn overlap_any(&self, shape: &QueryShape, pose: &Pose) -> bool {
                <$t>::overlap_any(self, shape, pose, &Filter::ALL)
            }
            fn cast(&self, cast: &ShapeCast) -> Option<ShapeHit> {
                <$t>::cast(self, cast, &Filter::ALL)
            }
            fn contains_point(&self, p: Vec3) -> Vec<ObjectId> {
                <$t>::contains_point(self, p, &Filter::ALL)
            }
            fn raycast(&self, ray: &Ray) -> Option<RayHit> {
                <$t>::raycast(self, ray, &Filter::ALL)
            }
            fn slot(&self, id: ObjectId) -> usize {
                $slot(self, id)
            }
        }
    };
}

answers_by_methods!(Level, |_: &Level, id: ObjectId| {
    assert!(!id.is_body(), "a level answered with a body");
    id.index() as usize
});

answers_by_methods!(World, |w: &World, id: ObjectId| {
    if !id.is_body() {
        return id.index() as usize;
    }
    let k = w
        .bodies()
        .position(|b| b == id)
        .unwrap_or_else(|| panic!("{id} answered but not in the world"));
    w.level().object_count() as usize + k
});

/// Required agreement in metres: depths, times of impact (as distance
/// along the motion), contact points (plus the f32 rounding of their
/// coordinates).
pub const TOL: f64 = 1e-4;

/// One convex piece of a collider: a core grown by a radius.
pub struct Piece {
    /// The piece's core.
    pub core: Core,
    /// The radius it is grown by.
    pub radius: f64,
    /// Its box's lower corner (radius included).
    pub lo: DVec3,
    /// Its box's upper corner.
    pub hi: DVec3,
}

impl Piece {
    /// A piece with its box.
    pub fn new(core: Core, radius: f64) -> Piece {
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
pub struct Object {
    /// The kind `inspect` prints.
    pub kind: &'static str,
    /// Its convex pieces.
    pub pieces: Vec<Piece>,
    /// A concave solid's surface triangles (for the winding number).
    pub solid: Option<Vec<[DVec3; 3]>>,
    /// Per piece: a mesh triangle with a flat edge, as baked (the baker's
    /// unit tests and the floor and seam tests here check the marking;
    /// this oracle checks what a contact does with it).
    pub flat: Vec<bool>,
}

/// Per stored triangle in leaf order: whether it has a flat edge.
pub fn leaf_flags(m: &kiln_formats::tri_mesh::ArchivedTriMesh) -> Vec<bool> {
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
/// runtime reads it); movers and triggers, which no query of a level
/// sees, have no pieces.
pub fn objects(level: &Level) -> Vec<Object> {
    let a = level.archive();
    a.instances
        .iter()
        .map(|inst| {
            let m: [f64; 12] = a.rows(inst).world_from_local.map(f64::from);
            let mut obj = placed_object(&a.colliders[inst.collider.to_native() as usize], &m);
            if inst.flags.to_native() & kiln_formats::level::LOOSE != 0 {
                // a mover or trigger: no query of the level sees it (a
                // world's oracle puts it where the world has it)
                obj.pieces.clear();
                obj.flat.clear();
                obj.solid = None;
            }
            obj
        })
        .collect()
}

/// A copy of `object` of `prefab` whose origin is at `pose`, as a
/// [`World`] body of [`kiln_runtime::Body::copy`] is, composed here in
/// f64 from the archive's f32 placement and the pose.
pub fn copy_object(prefab: &Level, object: ObjectId, pose: &Pose) -> Object {
    let a = prefab.archive();
    let inst = &a.instances[object.index() as usize];
    let m: [f64; 12] = a.rows(inst).world_from_local.map(f64::from);
    let q = pose.rotation.as_dquat().normalize();
    let t = pose.translation.as_dvec3();
    let col = |c: usize| q * DVec3::new(m[c], m[4 + c], m[8 + c]);
    let (x, y, z) = (col(0), col(1), col(2));
    let o = q * DVec3::new(m[3], m[7], m[11]) + t;
    let composed = [x.x, y.x, z.x, o.x, x.y, y.y, z.y, o.y, x.z, y.z, z.z, o.z];
    placed_object(&a.colliders[inst.collider.to_native() as usize], &composed)
}

/// A body made of a query shape at `pose`, as the oracle sees it: the
/// shape's own oracle core (the kind named as the baked family it becomes).
pub fn body_object(shape: &QueryShape, pose: &Pose) -> Object {
    let (core, radius) = convex::query_core(shape, pose);
    let kind = match shape {
        QueryShape::Sphere { .. } => "sphere",
        QueryShape::Capsule { .. } => "capsule",
        QueryShape::Cuboid { .. } => "cuboid",
        QueryShape::Hull(_) => "polytope",
    };
    Object {
        kind,
        pieces: vec![Piece::new(core, radius)],
        solid: None,
        flat: vec![false],
    }
}

/// One collider of an archive placed by the world-from-local rows `m`.
fn placed_object(shape: &ArchivedCollider, m: &[f64; 12]) -> Object {
    let w = |p: DVec3| {
        DVec3::new(
            m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3],
            m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
            m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11],
        )
    };
    let (pos, tris) = kiln_baker::export::shape_mesh(shape);
    // a mirroring placement turns outward windings inward: the
    // oracle's planes and winding numbers need them outward
    let det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8])
        + m[2] * (m[4] * m[9] - m[5] * m[8]);
    let world: Vec<[DVec3; 3]> = tris
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| w(DVec3::from(pos[k as usize].map(f64::from))));
            if det < 0.0 { [a, c, b] } else { [a, b, c] }
        })
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
        ArchivedCollider::Sphere(s) => (rounded(0.0, s.radius.to_native()), None),
        ArchivedCollider::Capsule(c) => (
            rounded(c.half_height.to_native(), c.radius.to_native()),
            None,
        ),
        ArchivedCollider::Polytope(_) | ArchivedCollider::Cuboid(_) => (
            vec![Piece::new(
                Core::Solid(Polytope::from_triangles(world)),
                0.0,
            )],
            None,
        ),
        // a concave solid's surface also gives its winding number
        ArchivedCollider::TriMesh(_) | ArchivedCollider::Bsp(_) => (
            world
                .iter()
                .map(|t| Piece::new(Core::Triangle(*t), 0.0))
                .collect(),
            matches!(shape, ArchivedCollider::Bsp(_)).then_some(world),
        ),
    };
    // in the order `shape_mesh` lists the triangles
    let flat = match shape {
        ArchivedCollider::TriMesh(m) => leaf_flags(m),
        ArchivedCollider::Bsp(b) => {
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
}

/// A query shape the test owns (a hull is borrowed by `QueryShape`).
pub enum Kind {
    /// A sphere of this radius.
    Sphere(f32),
    /// A capsule: half height, radius.
    Capsule(f32, f32),
    /// A box of these half extents.
    Cuboid(Vec3),
    /// A convex hull.
    Hull(ConvexHull),
}

/// A query shape under its pose, with the oracle's view of it.
pub struct Query {
    /// The shape.
    pub kind: Kind,
    /// Where it is.
    pub pose: Pose,
    /// The oracle's core and radius.
    pub core: Core,
    /// The oracle's radius around the core.
    pub radius: f64,
}

impl Query {
    /// `kind` at `pose`.
    pub fn new(kind: Kind, pose: Pose) -> Query {
        let (core, radius) = convex::query_core(&Self::shape_of(&kind), &pose);
        Query {
            kind,
            pose,
            core,
            radius,
        }
    }

    /// The shape as the runtime takes it.
    pub fn shape(&self) -> QueryShape<'_> {
        Self::shape_of(&self.kind)
    }

    /// `kind` as the runtime takes it.
    pub fn shape_of(kind: &Kind) -> QueryShape<'_> {
        match kind {
            Kind::Sphere(r) => QueryShape::Sphere { radius: *r },
            Kind::Capsule(h, r) => QueryShape::Capsule {
                half_height: *h,
                radius: *r,
            },
            Kind::Cuboid(half) => QueryShape::Cuboid { half: *half },
            Kind::Hull(h) => QueryShape::Hull(h),
        }
    }

    /// The kind's name.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Sphere(_) => "sphere",
            Kind::Capsule(..) => "capsule",
            Kind::Cuboid(_) => "cuboid",
            Kind::Hull(_) => "hull",
        }
    }

    /// The oracle's box around the shape.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        let (lo, hi) = self.core.bounds();
        (lo - self.radius, hi + self.radius)
    }

    /// A random shape of kind `k` (0..4) about `size` across at `at`,
    /// randomly rotated.
    pub fn random(k: usize, size: f32, at: Vec3, rng: &mut Rng) -> Query {
        let rotation = Quat::from_axis_angle(rng.unit32(), rng.range(0.0, std::f32::consts::TAU));
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
                let mut half =
                    Vec3::new(rng.f32(), rng.f32(), rng.f32()) * size * 0.5 + size * 0.02;
                // one in eight is flat (a rectangle)
                if rng.below(8) == 0 {
                    half.z = 0.0;
                }
                Kind::Cuboid(half)
            }
            _ => {
                let n = 5 + rng.below(12);
                let squash = Vec3::new(rng.range(0.3, 1.0), rng.range(0.3, 1.0), 1.0);
                let pts: Vec<Vec3> = (0..n).map(|_| rng.unit32() * squash * size * 0.5).collect();
                match ConvexHull::new(&pts) {
                    Ok(h) => Kind::Hull(h),
                    Err(_) => Kind::Sphere(size * 0.3),
                }
            }
        };
        Query::new(kind, pose)
    }
}

/// Whether two boxes meet, each grown by `pad`.
pub fn boxes_meet(lo: DVec3, hi: DVec3, lo2: DVec3, hi2: DVec3, pad: f64) -> bool {
    (lo - pad).cmple(hi2).all() && (lo2 - pad).cmple(hi).all()
}

/// The oracle's view of one object against a query at rest.
pub struct Contact {
    /// Smallest gap over the pieces (negative: overlapping).
    pub gap: f64,
    /// Per piece within reach: (index, depth).
    pub depths: Vec<(usize, f64)>,
    /// The query's first vertex is inside the concave solid.
    pub inside: bool,
}

/// The oracle's view of `core` grown by `radius` (box `lo`..`hi`) against one object.
pub fn contact(obj: &Object, core: &Core, radius: f64, lo: DVec3, hi: DVec3) -> Contact {
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
        .is_some_and(|s| convex::winding_number(s, inner_point(core)) > 0.5);
    Contact {
        gap,
        depths,
        inside,
    }
}

/// Whether the solid piece `pc` holds all of `core` grown by `radius`:
/// every core vertex's ball (the shape is the hull of those balls).
pub fn holds(pc: &Piece, core: &Core, radius: f64) -> bool {
    if matches!(pc.core, Core::Triangle(_)) {
        return false;
    }
    core.vertices().into_iter().all(|v| {
        let d = convex::distance(&Core::Point(v), &pc.core);
        if d > 0.0 {
            d + radius <= pc.radius + TOL
        } else {
            convex::surface_distance(v, &pc.core) + pc.radius + TOL >= radius
        }
    })
}

/// Tolerance for a reported f32 point near `p`.
pub fn point_tol(p: DVec3) -> f64 {
    TOL + p.abs().max_element() * 2.0 * f64::from(f32::EPSILON)
}

#[derive(Default)]
/// What a run of checks saw.
pub struct Stats {
    /// Overlap queries checked.
    pub overlaps: usize,
    /// Objects reported touching.
    pub touching: usize,
    /// Contacts with a concave solid whose query starts inside it.
    pub inside: usize,
    /// Contacts that took a triangle's face normal on a flat edge.
    pub flat: usize,
    /// Casts checked.
    pub casts: usize,
    /// Casts that hit.
    pub hits: usize,
    /// Contacts with a concave solid deeper than their deepest triangle,
    /// whose least translation was searched over directions (none shorter
    /// than the answer may be found).
    pub searched: usize,
    /// Worst depth error (m) of a contact, against the rule that fits it
    /// best: the deepest piece's depth, or on a flat region the depth
    /// that clears the region's plane.
    pub worst_depth: f64,
    /// Worst time-of-impact error (m) of a cast within [`TOL`] along its
    /// motion, as a distance along the contact normal.
    pub worst_toi: f64,
}

impl Stats {
    /// Adds another run's counts.
    pub fn add(&mut self, o: &Stats) {
        self.overlaps += o.overlaps;
        self.touching += o.touching;
        self.inside += o.inside;
        self.flat += o.flat;
        self.searched += o.searched;
        self.casts += o.casts;
        self.hits += o.hits;
        self.worst_depth = self.worst_depth.max(o.worst_depth);
        self.worst_toi = self.worst_toi.max(o.worst_toi);
    }
}

/// Whether an answer of query shape `q` on an object of `kind` names a
/// feature, as `RayHit::feature` documents: a triangle of a mesh or a
/// concave solid always; the face of a box or polytope for a sphere;
/// nothing for sphere and capsule colliders, nor for other shapes against
/// a box or polytope (their contact may be an edge or a corner).
pub fn names_feature(kind: &str, q: &Query) -> bool {
    match kind {
        "trimesh" | "bsp" => true,
        "cuboid" | "polytope" => matches!(q.kind, Kind::Sphere(_)),
        _ => false,
    }
}

/// Checks that `feature`, an answer of `q` on an object of `kind`, names
/// a feature exactly where [`names_feature`] says.
fn check_feature(feature: Option<u32>, kind: &str, q: &Query, what: &str) {
    assert_eq!(
        feature.is_some(),
        names_feature(kind, q),
        "{what}: feature {feature:?} on a {kind}"
    );
}

/// Checks `overlap` and `overlap_any` for `q` on every object.
pub fn check_overlap(
    level: &(impl Answers + ?Sized),
    objs: &[Object],
    q: &Query,
    stats: &mut Stats,
    what: &str,
) {
    let got = level.overlap(&q.shape(), &q.pose);
    let (lo, hi) = q.bounds();
    let mut any_real = false;
    let mut all_clear = true;
    stats.overlaps += 1;
    for (i, obj) in objs.iter().enumerate() {
        let c = contact(obj, &q.core, q.radius, lo, hi);
        let mine: Vec<&ShapeOverlap> = got.iter().filter(|o| level.slot(o.object) == i).collect();
        assert!(mine.len() <= 1, "{what}: object {i} reported twice");
        let mine = mine.first();
        if let Some(o) = mine {
            check_feature(o.feature, obj.kind, q, what);
        }
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
                assert!(
                    (n.length() - 1.0).abs() < 1e-5,
                    "{what}: {} object {i} normal {n}, {o:?}, query {:?}",
                    obj.kind,
                    q.pose
                );
                let p = o.point.as_dvec3();
                let depth = f64::from(o.depth);
                if obj.solid.is_some() {
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
                    let every: Vec<usize> = (0..obj.pieces.len()).collect();
                    let free = |s: f64| free_of_solid(obj, q, &every, n * s);
                    // freed somewhere within the rounding of the reported
                    // f32 values past `depth`: a sphere pushed into a
                    // narrow slot of a concave solid is free only over a
                    // window, and the least move lies at its near end
                    let tol = point_tol(p);
                    assert!(
                        (0..=8).any(|k| free(depth + tol * f64::from(k) / 8.0)),
                        "{what}: {} object {i}: moving by {depth} along {n} does not free it",
                        obj.kind
                    );
                    assert!(
                        depth <= 10.0 * point_tol(p) || !free(depth - 10.0 * point_tol(p)),
                        "{what}: {} object {i}: {depth} along {n} is more than it takes",
                        obj.kind
                    );
                    // no direction frees it by less: where the depth is the
                    // deepest triangle's it is least already (freeing the
                    // shape frees it from that triangle); else searched
                    let size = {
                        let (lo, hi) = q.core.bounds();
                        (hi - lo).length() * 0.5 + q.radius
                    };
                    let slack = TOL * size.max(1.0) + point_tol(p);
                    if depth > deepest + slack {
                        stats.searched += 1;
                        let least = least_translation(obj, q, depth);
                        assert!(
                            depth <= least + slack,
                            "{what}: {} object {i}: {depth} along {n}, but a translation of {least} frees it",
                            obj.kind
                        );
                    }
                    // the point is where the shape moved out by the depth
                    // touches the surface, where one such lies in the shape
                    // as posed
                    let moved = q.core.moved(n * depth);
                    let on_moved = convex::distance(&Core::Point(p), &moved) - q.radius
                        <= slack + 10.0 * point_tol(p);
                    if !on_moved {
                        let missed = obj.pieces.iter().find_map(|pc| {
                            let Core::Triangle(t) = pc.core else {
                                return None;
                            };
                            // touching to the rounding of one f32
                            // coordinate there (half an ulp): a hull's edge
                            // that rises slowly from the surface is not
                            // touching along its length
                            let near = 1e-6 + 0.5 * p.abs().max_element() * f64::from(f32::EPSILON);
                            touch_in_shape(&moved, &q.core, q.radius, t, near, slack)
                        });
                        assert!(
                            missed.is_none(),
                            "{what}: {} object {i}: point {p} is not on the shape moved out by {depth} along {n}, which touches {missed:?} in the shape as posed",
                            obj.kind
                        );
                    }
                    let near = obj
                        .pieces
                        .iter()
                        .map(|pc| convex::surface_distance(p, &pc.core))
                        .fold(f64::INFINITY, f64::min);
                    assert!(near <= point_tol(p), "{what}: contact {p} off the surface");
                    // in or on the shape, unless the shape is wholly
                    // inside the solid, touching no surface triangle
                    let into = convex::distance(&Core::Point(p), &q.core) - q.radius;
                    // (a shape within the tolerance of a surface triangle
                    // may be read as reaching it or not)
                    let reaches = c.depths.iter().any(|&(_, d)| d > TOL);
                    assert!(
                        into <= point_tol(p) || !reaches,
                        "{what}: {} object {i} contact {p} lies {into} outside the shape (depth {depth})",
                        obj.kind
                    );
                    continue;
                }
                // against a triangle mesh no depth exceeds the radius
                // unless the core itself touches the mesh: a flat region's
                // depth is never made up past its border
                if obj.kind == "trimesh" && depth > q.radius + TOL + point_tol(p) {
                    assert!(
                        obj.pieces
                            .iter()
                            .any(|pc| convex::distance(&q.core, &pc.core) <= TOL),
                        "{what}: {} object {i}: depth {depth} exceeds the radius {} though the core touches no triangle",
                        obj.kind,
                        q.radius
                    );
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
                let exact_err = exact.then(|| (depth - lo).abs());
                let mut flat_err = f64::INFINITY;
                // (judged where not exact, or where the flat rule may fit
                // better: its depth is the region's, not the deepest
                // triangle's)
                let flat = exact_err.is_none_or(|e| e > 1e-7)
                    && c.depths
                        .iter()
                        .filter(|&&(k, d)| {
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
                            let err = (depth - face(k, s.signum()).0).abs();
                            let fits = s.abs() >= 1.0 - 1e-6
                                && depth >= lo - TOL
                                && err <= TOL
                                && (0..obj.pieces.len()).any(|j| coplanar(&obj.pieces[j]) && on(j))
                                && fd.is_finite()
                                && obj.pieces.iter().filter(|pc| coplanar(pc)).all(|pc| {
                                    convex::distance(&q.core.moved(n * (depth + TOL)), &pc.core)
                                        >= q.radius + pc.radius
                                });
                            if fits {
                                flat_err = flat_err.min(err);
                            }
                            fits
                        })
                        .count()
                        > 0;
                // the point lies in or on the shape as posed, unless the
                // shape is wholly inside a solid piece, whose surface it
                // then does not reach: the point is then where it leaves
                let into = convex::distance(&Core::Point(p), &q.core) - q.radius;
                let within = if obj.pieces.iter().any(|pc| holds(pc, &q.core, q.radius)) {
                    depth
                } else {
                    0.0
                };
                assert!(
                    into <= point_tol(p) + within,
                    "{what}: {} object {i} contact {p} lies {into} outside the shape (depth {depth})",
                    obj.kind
                );
                // the error of the rule that fits best
                let err = exact_err.unwrap_or(f64::INFINITY).min(flat_err);
                if err.is_finite() {
                    stats.worst_depth = stats.worst_depth.max(err);
                }
                stats.flat += usize::from(flat_err < exact_err.unwrap_or(f64::INFINITY));
                assert!(
                    exact || flat,
                    "{what}: {} object {i} contact {p} normal {n} depth {depth} (deepest piece {lo}): no piece fits",
                    obj.kind
                );
            }
        }
    }
    let yes = level.overlap_any(&q.shape(), &q.pose);
    if any_real {
        assert!(yes, "{what}: overlap_any says no");
    }
    if all_clear {
        assert!(!yes, "{what}: overlap_any says yes");
    }
}

/// The oracle's first contact of `q` moving by `motion · t`, `t ≤ max_t`,
/// with `pad` added to every radius: (time, object).
pub fn first_contact(
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
            .is_some_and(|s| convex::winding_number(s, inner_point(&q.core)) > 0.5)
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
pub fn gap_at(objs: &[Object], i: usize, q: &Query, v: DVec3) -> f64 {
    let core = q.core.moved(v);
    let (lo, hi) = q.bounds();
    let c = contact(&objs[i], &core, q.radius, lo + v, hi + v);
    if c.inside { f64::NEG_INFINITY } else { c.gap }
}

/// Checks `cast` for `q` moving by `motion` against the oracle.
pub fn check_cast(
    level: &(impl Answers + ?Sized),
    objs: &[Object],
    q: &Query,
    motion: Vec3,
    max_t: f32,
    stats: &mut Stats,
    what: &str,
) {
    stats.casts += 1;
    let got = level.cast(&ShapeCast::new(q.shape(), q.pose, motion, max_t));
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
                objs[level.slot(h.object)].kind,
                h.object,
                h.t
            );
        }
        (Some((t, i)), Some(h)) => {
            stats.hits += 1;
            check_feature(h.feature, objs[level.slot(h.object)].kind, q, what);
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
                // as a distance along the contact normal: how far the shape
                // at the reported time is from first contact (along the
                // motion, a grazing approach magnifies it)
                let closing = m.normalize_or_zero().dot(h.normal.as_dvec3()).abs();
                stats.worst_toi = stats.worst_toi.max(err * closing);
            }
            let hi = level.slot(h.object);
            let g = gap_at(objs, hi, q, m * ht);
            assert!(
                g <= TOL,
                "{what}: {} object {hi} is {g:.3e} m away at the reported t = {ht}",
                objs[hi].kind
            );
            let p = h.point.as_dvec3();
            let near = surface_gap(&objs[hi], p);
            assert!(
                near <= point_tol(p),
                "{what}: hit point {p} is {near:.3e} m off object {hi}"
            );
            assert!((h.normal.length() - 1.0).abs() < 1e-5);
        }
    }
}

/// A random point on a random piece of a random object, and that object's
/// size.
pub fn near_surface(objs: &[Object], rng: &mut Rng) -> (DVec3, f64) {
    // objects a query sees (movers and triggers of a level have no pieces)
    let seen: Vec<&Object> = objs.iter().filter(|o| !o.pieces.is_empty()).collect();
    let obj = seen[rng.below(seen.len())];
    let p = &obj.pieces[rng.below(obj.pieces.len())];
    let v = p.core.vertices();
    let mut w: Vec<f64> = v.iter().map(|_| f64::from(rng.f32()) + 1e-3).collect();
    let s: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= s);
    let c: DVec3 = v.iter().zip(&w).map(|(p, w)| *p * *w).sum();
    let c = c + rng.unit32().as_dvec3() * p.radius;
    let size = (p.hi - p.lo).max_element().max(0.2);
    (c, size)
}

/// Random queries of every shape kind around the objects of `level`.
pub fn random_queries(level: &Level, n: usize, seed: u64, what: &str) -> Stats {
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
            (c + rng.unit32().as_dvec3() * f64::from(s) * f64::from(rng.range(0.0, 1.5))).as_vec3();
        let q = Query::random(i % 4, s, at, &mut rng);
        let tag = format!("{what} {} {i} (size {s})", q.name());
        check_overlap(level, &objs, &q, &mut stats, &tag);
        // a cast towards a surface point from a little way off
        let (target, _) = near_surface(&objs, &mut rng);
        let motion = if rng.below(3) == 0 {
            rng.unit32() * s * 2.0
        } else {
            (target - at.as_dvec3()).as_vec3() + rng.unit32() * s * 0.2
        };
        if motion.length() > 1e-3 {
            check_cast(level, &objs, &q, motion, 1.5, &mut stats, &tag);
        }
    }
    stats
}

/// Prints what a run of checks saw, named `what`.
pub fn report(what: &str, s: &Stats) {
    eprintln!(
        "{what}: {} overlaps ({} touching, {} wholly inside, {} on flat edges), {} casts ({} hits); worst depth error {:.2e} m, worst time-of-impact error {:.2e} m; concave solids: {} least translations searched, none longer than the least",
        s.overlaps,
        s.touching,
        s.inside,
        s.flat,
        s.casts,
        s.hits,
        s.worst_depth,
        s.worst_toi,
        s.searched
    );
}

/// How far `p` lies from `obj`'s surface (its nearest piece's).
pub fn surface_gap(obj: &Object, p: DVec3) -> f64 {
    obj.pieces
        .iter()
        .map(|pc| (convex::surface_distance(p, &pc.core) - pc.radius).abs())
        .fold(f64::INFINITY, f64::min)
}

/// Per object, whether the oracle puts `p` inside it: `Some(false)` for
/// triangle meshes (no inside), `None` within [`TOL`] of a solid's
/// surface (either answer is right there).
pub fn point_answers(objs: &[Object], p: Vec3) -> Vec<Option<bool>> {
    let p = p.as_dvec3();
    objs.iter()
        .map(|obj| {
            if obj.kind == "trimesh" {
                return Some(false);
            }
            let near = surface_gap(obj, p);
            if near <= point_tol(p) {
                return None;
            }
            Some(match &obj.solid {
                Some(surface) => convex::winding_number(surface, p) > 0.5,
                None => obj.pieces.iter().any(|pc| match &pc.core {
                    Core::Solid(poly) => poly.planes.iter().all(|(n, d)| n.dot(p) <= *d),
                    core => convex::distance(&Core::Point(p), core) <= pc.radius,
                }),
            })
        })
        .collect()
}

/// Checks `contains_point` at `p` against [`point_answers`].
pub fn check_point(level: &(impl Answers + ?Sized), objs: &[Object], p: Vec3, what: &str) {
    let got = level.contains_point(p);
    for (i, want) in point_answers(objs, p).into_iter().enumerate() {
        if let Some(want) = want {
            assert_eq!(
                got.iter().any(|&o| level.slot(o) == i),
                want,
                "{what}: point {p} in {} object {i}",
                objs[i].kind
            );
        }
    }
}

/// Whether the ray `o + t·d` clearly crosses `piece` before `t_end`: it
/// passes [`TOL`] deep into a solid or rounded piece, or through a
/// triangle's interior [`TOL`] clear of its edges (a ray along an edge or
/// grazing a surface may be answered either way).
fn clearly_crosses(piece: &Piece, o: DVec3, d: DVec3, t_end: f64) -> bool {
    let speed = d.length();
    match &piece.core {
        Core::Triangle(t) => {
            // the triangle shrunk by TOL towards its centre
            let c = (t[0] + t[1] + t[2]) / 3.0;
            let size = (0..3).map(|k| (t[k] - c).length()).fold(0.0f64, f64::max);
            if size <= 2.0 * TOL {
                return false;
            }
            let shrunk = t.map(|v| c + (v - c) * (1.0 - 2.0 * TOL / size));
            convex::segment_crosses_triangle(o, o + d * t_end, shrunk)
        }
        Core::Solid(poly) => {
            // the ray clipped by the planes pulled TOL inwards
            let (mut t0, mut t1) = (0.0f64, t_end);
            for (n, dd) in &poly.planes {
                let (num, den) = (dd - TOL - n.dot(o), n.dot(d));
                if den == 0.0 {
                    if num < 0.0 {
                        return false;
                    }
                } else if den < 0.0 {
                    t0 = t0.max(num / den);
                } else {
                    t1 = t1.min(num / den);
                }
            }
            t0 <= t1
        }
        core => {
            piece.radius > 2.0 * TOL
                && convex::time_of_impact(&Core::Point(o), d, t_end, core, piece.radius - TOL)
                    .is_some()
                && speed > 0.0
        }
    }
}

/// Checks `raycast` for `ray` against every object: a hit lies on the
/// surface of the object it names (or starts inside it), with a unit
/// normal facing the ray and a feature where [`names_feature`] puts one;
/// no object is clearly crossed before it; and a miss crosses nothing
/// clearly.
pub fn check_ray(level: &(impl Answers + ?Sized), objs: &[Object], ray: &Ray, what: &str) {
    let got = level.raycast(ray);
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let speed = d.length();
    // nothing may be crossed before the hit by more than the precision
    // of an f32 point where it lies (a body resting on the level at 700 m
    // from the origin: which is first is not decided in f32 there)
    let t_end = match got {
        Some(h) => {
            let t = f64::from(h.t);
            (t - point_tol(o + d * t) / speed).max(0.0)
        }
        None => f64::from(ray.max_t).min(1e6),
    };
    for (i, obj) in objs.iter().enumerate() {
        if t_end == 0.0 {
            // a hit at the start: nothing comes before it
            break;
        }
        if let Some(k) = obj
            .pieces
            .iter()
            .position(|pc| clearly_crosses(pc, o, d, t_end))
        {
            panic!(
                "{what}: {} object {i} (piece {k}) is crossed before {:?} by {ray:?}",
                obj.kind,
                got.map(|h| (h.t, h.object))
            );
        }
    }
    let Some(h) = got else { return };
    let i = level.slot(h.object);
    let obj = &objs[i];
    assert!(
        (h.normal.length() - 1.0).abs() < 1e-5,
        "{what}: normal {}",
        h.normal
    );
    let p = h.point.as_dvec3();
    if h.t == 0.0 && !h.front_face {
        // starts inside: the origin is in the object (or on its surface)
        let inside = point_answers(std::slice::from_ref(obj), ray.origin)[0];
        assert!(
            inside != Some(false),
            "{what}: inside {} object {i}?",
            obj.kind
        );
        return;
    }
    assert!(
        h.normal.dot(ray.dir) <= 1e-6,
        "{what}: the normal faces away"
    );
    let near = surface_gap(obj, p);
    assert!(
        near <= point_tol(p),
        "{what}: hit point {p} is {near:.3e} m off {} object {i}",
        obj.kind
    );
    let names = matches!(obj.kind, "trimesh" | "bsp" | "cuboid" | "polytope");
    assert_eq!(
        h.feature.is_some(),
        names,
        "{what}: feature on a {}",
        obj.kind
    );
}

/// A point inside the convex core `c`: the mean of its corners (never one
/// of them, which may lie on a surface it touches, where the winding
/// number is either side's).
fn inner_point(c: &Core) -> DVec3 {
    let v = c.vertices();
    v.iter().sum::<DVec3>() / v.len().max(1) as f64
}

/// Whether the query `q` moved by `v` is free of the concave solid `obj`:
/// a point inside it outside (winding number) and none of the pieces
/// `near` (indices; those it can reach) within its radius.
fn free_of_solid(obj: &Object, q: &Query, near: &[usize], v: DVec3) -> bool {
    let Some(surface) = &obj.solid else {
        return true;
    };
    let moved = q.core.moved(v);
    near.iter().all(|&k| {
        let pc = &obj.pieces[k];
        let d = convex::distance(&moved, &pc.core);
        let r = q.radius + pc.radius;
        if d > 0.0 {
            d >= r - 1e-7
        } else {
            r + convex::penetration(&moved, &pc.core).0 <= 1e-7
        }
    }) && convex::winding_number(surface, inner_point(&moved)) < 0.5
}

/// The least translation found that frees `q` from the concave solid
/// `obj`, searching no farther than `cap`: directions spread over the
/// sphere (a Fibonacci lattice), the best few refined by a pattern search
/// on the sphere; along each direction the first free sample of a scan,
/// then bisection. Independent of the runtime's method (which solves for
/// the meeting points of obstacle surfaces); it may miss a narrow way out
/// and so only ever judges an answer too long, never too short.
pub fn least_translation(obj: &Object, q: &Query, cap: f64) -> f64 {
    let (lo, hi) = q.bounds();
    let near: Vec<usize> = (0..obj.pieces.len())
        .filter(|&k| {
            let pc = &obj.pieces[k];
            boxes_meet(lo, hi, pc.lo, pc.hi, cap + TOL)
        })
        .collect();
    let exit = |u: DVec3, cap: f64| -> Option<f64> {
        let steps = 12;
        let mut prev = 0.0;
        for k in 0..=steps {
            let s = cap * f64::from(k) / f64::from(steps);
            if free_of_solid(obj, q, &near, u * s) {
                if k == 0 {
                    return Some(0.0);
                }
                let (mut a, mut b) = (prev, s);
                for _ in 0..16 {
                    let m = (a + b) * 0.5;
                    if free_of_solid(obj, q, &near, u * m) {
                        b = m;
                    } else {
                        a = m;
                    }
                }
                return Some(b);
            }
            prev = s;
        }
        None
    };
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let count = 32;
    let mut tried: Vec<(f64, DVec3)> = (0..count)
        .filter_map(|k| {
            let y = 1.0 - 2.0 * (f64::from(k) + 0.5) / f64::from(count);
            let rr = (1.0 - y * y).sqrt();
            let a = golden * f64::from(k);
            let u = DVec3::new(rr * a.cos(), y, rr * a.sin());
            exit(u, cap).map(|s| (s, u))
        })
        .collect();
    tried.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best = cap;
    for &(s0, u0) in tried.iter().take(2) {
        let (mut s, mut u) = (s0, u0);
        let mut step = 0.25;
        while step > 2e-3 {
            let t1 = u.any_orthonormal_vector();
            let t2 = u.cross(t1);
            let better = [t1, -t1, t2, -t2]
                .iter()
                .filter_map(|&t| {
                    let w = (u + t * step).normalize();
                    exit(w, s * 1.05 + 1e-9).map(|x| (x, w))
                })
                .filter(|&(x, _)| x < s)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            match better {
                Some((x, w)) => (s, u) = (x, w),
                None => step *= 0.5,
            }
        }
        best = best.min(s);
    }
    best
}

/// A point where the shape `moved` (its core grown by `r`) touches the
/// triangle `t` (within `near`, or `tol` for a rounded shape) that lies `tol` deep in the shape as
/// `posed`, if one is: for a box or hull, the triangle clipped by both
/// shapes' planes; for a sphere or capsule, the touching point
/// ([`witness`]).
fn touch_in_shape(
    moved: &Core,
    posed: &Core,
    r: f64,
    t: [DVec3; 3],
    near: f64,
    tol: f64,
) -> Option<DVec3> {
    if let (Core::Solid(m), Core::Solid(p)) = (moved, posed) {
        // the triangle within `near` of the moved shape, and `tol` deep in
        // the shape as posed: its planes clip the triangle
        let mut poly = t.to_vec();
        for &(n, d) in &m.planes {
            poly = clip(&poly, n, d + near);
        }
        for &(n, d) in &p.planes {
            poly = clip(&poly, n, d - tol);
        }
        let k = poly.len() as f64;
        return (!poly.is_empty()).then(|| poly.iter().sum::<DVec3>() / k);
    }
    witness(moved, r, t, tol).filter(|&w| convex::distance(&Core::Point(w), posed) - r <= -tol)
}

/// The part of the polygon `poly` where `n · x <= d` (Sutherland and
/// Hodgman, "Reentrant polygon clipping", 1974).
fn clip(poly: &[DVec3], n: DVec3, d: f64) -> Vec<DVec3> {
    let mut out = Vec::with_capacity(poly.len() + 1);
    for (k, &a) in poly.iter().enumerate() {
        let b = poly[(k + 1) % poly.len()];
        let (fa, fb) = (n.dot(a) - d, n.dot(b) - d);
        if fa <= 0.0 {
            out.push(a);
        }
        if (fa < 0.0) != (fb < 0.0) && fa != fb {
            out.push(a + (b - a) * (fa / (fa - fb)));
        }
    }
    out
}

/// Where core `q` grown by `r` touches triangle `t` (within `tol`): the
/// triangle's point nearest it, for a point or a segment core (a ternary
/// search along the segment: the distance is convex along it); `None` for
/// other cores or where none is that near.
fn witness(q: &Core, r: f64, t: [DVec3; 3], tol: f64) -> Option<DVec3> {
    let nearest_on = |x: DVec3| {
        // the nearest point of the triangle: on the plane inside, else on
        // the nearest edge
        let n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
        let pr = x - n * (x - t[0]).dot(n);
        if (0..3).all(|k| (t[(k + 1) % 3] - t[k]).cross(pr - t[k]).dot(n) >= 0.0) {
            return pr;
        }
        (0..3)
            .map(|k| {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let ab = b - a;
                a + ab * ((x - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
            })
            .min_by(|a, b| (*a - x).length().total_cmp(&(*b - x).length()))
            .expect("three edges")
    };
    let x = match *q {
        Core::Point(c) => c,
        Core::Segment(a, b) => {
            let f = |s: f64| crate::dist_point_triangle(a + (b - a) * s, t);
            a + (b - a) * crate::search::argmin(f, 0.0, 1.0, 50, 0.0)
        }
        _ => return None,
    };
    let w = nearest_on(x);
    ((w - x).length() <= r + tol).then_some(w)
}
