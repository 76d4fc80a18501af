//! The level: colliders, the instances that place them in the world, and a
//! top-level tree over the instances. Each collider family has its own file
//! ([`crate::tri_mesh`], …); this file holds what ties them together.
//!
//! Every type here is plain data: `[f32; 3]`, `u32`, `Vec` and `String`.
//! Builder types (index-linked trees, glam) stay in the baker; the runtime
//! converts to glam at the edge.
//!
//! # The top-level tree
//! The **top-level tree** over instances ([`TopTree`]) has the form of a
//! mesh's box tree: inner nodes of up to four children, breadth-first,
//! each leaf one instance; the walkers test a node's four children at
//! once. Its nodes hold their children's boxes in one of two forms
//! ([`TopNodes`]): plain f32 corners for a tree small enough to stay in
//! cache, or 8-bit codes against the parent's decoded box
//! ([`crate::tri_mesh::BoxNode`]) for a large one.

use crate::bsp::Bsp;
use crate::polytope::Polytope;
use crate::primitive::{Capsule, Cuboid, Sphere};
use crate::tri_mesh::TriMesh;
use rkyv::{Archive, Serialize};

/// Deepest tree a valid archive may contain. The builder guarantees it (it
/// falls back to median splits long before) and verification enforces it, so
/// traversal can use a fixed-size stack.
pub const MAX_DEPTH: usize = 128;

/// An object placed in the world: a collider, where it stands, its layers
/// (40 bytes; see [`crate::placement`] for the stored transform).
///
/// A **similarity** placement stores `rotation`, a quaternion `(x, y, z,
/// w)` whose squared length is the uniform scale, and `translation`. An
/// **affine** placement (shear, non-uniform scale, mirroring) has an
/// all-zero `rotation`, and `translation` is `[k, 0, 0]` with `k` (an
/// integer below 2²⁴, exact in f32) the index of its matrices in
/// [`Level::affines`]. Read either through [`ArchivedLevel::rows`].
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Instance {
    /// Rotation and scale of a similarity placement, zero for an affine one.
    pub rotation: [f32; 4],
    /// Translation of a similarity placement, `[k, 0, 0]` for an affine one.
    pub translation: [f32; 3],
    /// Index into [`Level::colliders`].
    pub collider: u32,
    /// Index of this instance in the baked scene (glTF node traversal
    /// order); instances are stored in top-tree leaf order.
    pub source: u32,
    /// The instance's collision layers as a bit mask over
    /// [`Level::layer_names`] (never 0: an object no rule puts in a layer
    /// is in the default one).
    pub layers: u32,
    /// What the object is beside a collider: its motion ([`MOTION`] bits:
    /// 0 static, [`KINEMATIC`] or [`DYNAMIC`]) and whether it is a
    /// trigger volume ([`TRIGGER`]), and whether it is a piece of a
    /// larger triangle mesh cut at tile borders ([`PIECE`]). Static
    /// non-trigger objects (no motion or trigger bit) are the top-level
    /// tree's; the others follow them, outside it.
    pub flags: u32,
}

/// [`Instance::flags`]: the motion bits.
pub const MOTION: u32 = 0b11;
/// [`Instance::flags`] motion: moved by the game (doors, lifts, platforms).
pub const KINEMATIC: u32 = 1;
/// [`Instance::flags`] motion: moved by a simulation (props).
pub const DYNAMIC: u32 = 2;
/// [`Instance::flags`]: a trigger volume, which queries see only when
/// they ask for triggers.
pub const TRIGGER: u32 = 0b100;
/// [`Instance::flags`]: a piece of a static triangle mesh the baker cut at
/// tile borders (`kiln_baker::tile`). A world that mounts the tiles
/// answers the pieces of one name as one mesh, as the whole would.
pub const PIECE: u32 = 0b1000;
/// [`Instance::flags`]: the bits that take an object out of the top-level
/// tree (a mover or a trigger).
pub const LOOSE: u32 = MOTION | TRIGGER;

/// How an object moves: static objects are a level's fixed geometry;
/// movers (kinematic or dynamic) are stored with their collider and first
/// placement and moved at run time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Motion {
    /// Never moves.
    #[default]
    Static,
    /// Moved by the game (doors, lifts, platforms).
    Kinematic,
    /// Moved by a simulation.
    Dynamic,
}

impl Motion {
    /// The name files and reports use: `static`, `kinematic`, `dynamic`.
    pub fn name(self) -> &'static str {
        match self {
            Motion::Static => "static",
            Motion::Kinematic => "kinematic",
            Motion::Dynamic => "dynamic",
        }
    }

    /// The motion a name gives.
    pub fn parse(name: &str) -> Option<Motion> {
        [Motion::Static, Motion::Kinematic, Motion::Dynamic]
            .into_iter()
            .find(|m| m.name() == name)
    }

    /// Its motion bits in [`Instance::flags`].
    pub fn bits(self) -> u32 {
        match self {
            Motion::Static => 0,
            Motion::Kinematic => KINEMATIC,
            Motion::Dynamic => DYNAMIC,
        }
    }
}

impl ArchivedInstance {
    /// The motion [`Instance::flags`] gives (a verified archive's bits
    /// are one of the three).
    #[inline]
    pub fn motion(&self) -> Motion {
        match self.flags.to_native() & MOTION {
            KINEMATIC => Motion::Kinematic,
            DYNAMIC => Motion::Dynamic,
            _ => Motion::Static,
        }
    }

    /// Whether the object is a trigger volume.
    #[inline]
    pub fn is_trigger(&self) -> bool {
        self.flags.to_native() & TRIGGER != 0
    }

    /// Whether the object is a piece of a mesh cut at tile borders
    /// ([`PIECE`]).
    #[inline]
    pub fn is_piece(&self) -> bool {
        self.flags.to_native() & PIECE != 0
    }
}

/// Most affine placements a level may hold (their index is an f32 integer).
pub const MAX_AFFINES: usize = 1 << 24;

/// The matrices of a placement that is not a similarity, both f32 3×4
/// row-major (see [`crate::placement::Rows`]).
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Affine {
    /// Local (collider) space to world space.
    pub world_from_local: [f32; 12],
    /// World space to local space (the inverse of `world_from_local`).
    pub local_from_world: [f32; 12],
}

/// `NameRun::number` of a run whose objects are named `name` alone.
pub const UNNUMBERED: u32 = u32::MAX;

/// The names and classification rule of a run of scene instances: every
/// instance whose [`Instance::source`] lies from `first` up to the next
/// run's `first`. A run is numbered when its objects are `name#n`, `name#n+1`,
/// … (the placements of one glTF node's `EXT_mesh_gpu_instancing`), so a
/// forest of a million trees stores one name.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct NameRun {
    /// The first scene instance (source index) of the run.
    pub first: u32,
    /// The objects' name, or its part before `#` for a numbered run.
    pub name: String,
    /// The number of the run's first object, or [`UNNUMBERED`].
    pub number: u32,
    /// Index into [`Level::rules`].
    pub rule: u32,
}

/// If the 3×3 part of a row-major 3×4 matrix is a similarity — orthogonal
/// columns of equal length, to `tol` relative to the squared length — its
/// scale (the columns' length). The baker, verification and the runtime
/// all decide "similarity" with this one test (at different tolerances).
pub fn similarity_scale(m: &[f64; 12], tol: f64) -> Option<f64> {
    let col = |k: usize| [m[k], m[4 + k], m[8 + k]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (a, b, c) = (col(0), col(1), col(2));
    let s2 = dot(a, a);
    let t = tol * s2;
    let similar = s2 > 0.0
        && s2.is_finite()
        && (dot(b, b) - s2).abs() <= t
        && (dot(c, c) - s2).abs() <= t
        && dot(a, b).abs() <= t
        && dot(b, c).abs() <= t
        && dot(c, a).abs() <= t;
    similar.then(|| s2.sqrt())
}

/// One collider, in its own local space. Instances refer to colliders
/// by index, so a collider used by many objects is stored once.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub enum Collider {
    /// A triangle mesh under a tree (terrain, open or large meshes).
    TriMesh(Box<TriMesh>),
    /// A convex polytope (planes, vertices, faces).
    Polytope(Polytope),
    /// A box.
    Cuboid(Cuboid),
    /// A sphere.
    Sphere(Sphere),
    /// A capsule.
    Capsule(Capsule),
    /// A solid-leaf BSP tree (concave solids).
    Bsp(Box<Bsp>),
}

impl Collider {
    /// The collider family's name, as `inspect` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Collider::TriMesh(_) => "trimesh",
            Collider::Polytope(_) => "polytope",
            Collider::Cuboid(_) => "cuboid",
            Collider::Sphere(_) => "sphere",
            Collider::Capsule(_) => "capsule",
            Collider::Bsp(_) => "bsp",
        }
    }
}

impl ArchivedCollider {
    /// The collider family's name, as `inspect` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            ArchivedCollider::TriMesh(_) => "trimesh",
            ArchivedCollider::Polytope(_) => "polytope",
            ArchivedCollider::Cuboid(_) => "cuboid",
            ArchivedCollider::Sphere(_) => "sphere",
            ArchivedCollider::Capsule(_) => "capsule",
            ArchivedCollider::Bsp(_) => "bsp",
        }
    }

    /// Whether the collider is a primitive (placed only by similarities).
    pub fn is_primitive(&self) -> bool {
        matches!(
            self,
            ArchivedCollider::Cuboid(_)
                | ArchivedCollider::Sphere(_)
                | ArchivedCollider::Capsule(_)
        )
    }

    /// The box around the collider in its own local space (lower and upper
    /// corners), as its fields give it.
    pub fn local_box(&self) -> ([f32; 3], [f32; 3]) {
        let n = |v: &[rkyv::rend::f32_le; 3]| v.map(|x| x.to_native());
        let sym = |h: [f32; 3]| (h.map(|x| -x), h);
        match self {
            ArchivedCollider::TriMesh(m) => (n(&m.min), n(&m.max)),
            ArchivedCollider::Polytope(p) => (n(&p.min), n(&p.max)),
            ArchivedCollider::Cuboid(c) => sym(n(&c.half_extents)),
            ArchivedCollider::Sphere(b) => sym([b.radius.to_native(); 3]),
            ArchivedCollider::Capsule(c) => {
                let (h, r) = (c.half_height.to_native(), c.radius.to_native());
                sym([r, h + r, r])
            }
            ArchivedCollider::Bsp(b) => (n(&b.surface.min), n(&b.surface.max)),
        }
    }

    /// The triangle mesh, if this collider is one.
    pub fn tri_mesh(&self) -> Option<&crate::tri_mesh::ArchivedTriMesh> {
        match self {
            ArchivedCollider::TriMesh(m) => Some(m),
            _ => None,
        }
    }
}

/// Most pieces one decomposition may have.
pub const MAX_PIECES: usize = 1024;

/// The convex pieces of one collider: what a physics engine simulates a
/// moving concave object with (Rapier, Avian, Jolt and PhysX take only
/// convex shapes for moving bodies). Kiln's own queries keep answering on
/// the collider itself; every instance of the collider shares its pieces.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Decomposition {
    /// Index into [`Level::colliders`] of the collider the pieces stand in
    /// for.
    pub collider: u32,
    /// The pieces: convex polytopes in the collider's local space, from 1
    /// to [`MAX_PIECES`].
    pub pieces: Vec<Polytope>,
    /// What each piece is to a physics engine, one per piece: its polytope,
    /// or the box, sphere or capsule that fills it (and encloses it), which
    /// an engine should take instead (primitives collide faster and roll
    /// smoothly). The stated `concavity` holds for either.
    pub shapes: Vec<PieceShape>,
    /// How far the pieces reach beyond the object's render mesh, at most
    /// (local units; sampled on the pieces' surfaces).
    pub concavity: f32,
    /// How far the object's render mesh lies outside the pieces, at most
    /// (local units; measured on the render mesh's vertices and samples).
    pub coverage: f32,
}

/// What one convex piece is to a physics engine.
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
pub struct PieceShape {
    /// The primitive, or [`PieceKind::Hull`]: the piece's polytope.
    pub kind: PieceKind,
    /// The primitive's orientation in the collider's local space: a unit
    /// quaternion `[x, y, z, w]` (identity for a hull).
    pub rotation: [f32; 4],
    /// The primitive's centre in the collider's local space (zero for a
    /// hull).
    pub centre: [f32; 3],
}

/// The shape a piece is given to a physics engine as; a primitive is
/// centred on [`PieceShape::centre`] and turned by
/// [`PieceShape::rotation`] (a capsule along its local y).
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq)]
pub enum PieceKind {
    /// The piece's polytope, as stored in [`Decomposition::pieces`].
    Hull,
    /// A box that fills the piece.
    Cuboid(Cuboid),
    /// A sphere that fills the piece.
    Sphere(Sphere),
    /// A capsule that fills the piece.
    Capsule(Capsule),
}

impl PieceShape {
    /// A piece given as its polytope.
    pub const HULL: PieceShape = PieceShape {
        kind: PieceKind::Hull,
        rotation: [0.0, 0.0, 0.0, 1.0],
        centre: [0.0; 3],
    };
}

impl ArchivedPieceKind {
    /// The kind's name, as `inspect` prints it: `hull`, `cuboid`,
    /// `sphere` or `capsule`.
    pub fn name(&self) -> &'static str {
        match self {
            ArchivedPieceKind::Hull => "hull",
            ArchivedPieceKind::Cuboid(_) => "cuboid",
            ArchivedPieceKind::Sphere(_) => "sphere",
            ArchivedPieceKind::Capsule(_) => "capsule",
        }
    }
}

/// The layer every object no rule puts elsewhere belongs to (bit 0).
pub const DEFAULT_LAYER: &str = "default";
/// Most collision layers a level may have (a 32-bit mask).
pub const MAX_LAYERS: usize = 32;

/// A whole baked level: the archive body.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Level {
    /// Unique colliders; instances refer to them by index.
    pub colliders: Vec<Collider>,
    /// Placed objects.
    pub instances: Vec<Instance>,
    /// The matrices of the affine placements (see [`Instance`]).
    pub affines: Vec<Affine>,
    /// The objects' names and rules, in runs by source index, ordered by
    /// `first`.
    pub names: Vec<NameRun>,
    /// The classification rules that chose the colliders, in words, each
    /// once.
    pub rules: Vec<String>,
    /// Collision layer names, bit `k` of a mask naming `layer_names[k]`;
    /// `layer_names[0]` is always [`DEFAULT_LAYER`], at most
    /// [`MAX_LAYERS`] in all.
    pub layer_names: Vec<String>,
    /// Top-level tree over the instances' world boxes; leaves hold one instance.
    pub top: TopTree,
    /// Convex decompositions of colliders, at most one per collider, by
    /// ascending [`Decomposition::collider`].
    pub decompositions: Vec<Decomposition>,
    /// Rigid bodies authored in glTF physics, in document order: the
    /// objects that move as one, and the mass properties the file gives.
    pub bodies: Vec<Body>,
}

/// [`Body::authored`]: the file gives the body's mass.
pub const AUTHORED_MASS: u32 = 1;
/// [`Body::authored`]: the file gives the body's centre of mass.
pub const AUTHORED_CENTRE: u32 = 2;
/// [`Body::authored`]: the file gives the body's principal moments of
/// inertia (and their axes' orientation, the identity where not given).
pub const AUTHORED_INERTIA: u32 = 4;

/// A kinematic or dynamic rigid body authored in glTF physics (a node with
/// a `KHR_physics_rigid_bodies` or `OMI_physics_body` motion): the objects
/// of the colliders and triggers on it and below it (down to the next
/// body), which move as one, and what the file says of its mass.
///
/// The body's frame is the rigid part of its node's world transform at
/// bake ([`Body::rotation`], [`Body::translation`]); the authored centre
/// of mass and inertia are in that frame. A body node's scale moves the
/// centre of mass with it but does not scale the authored inertia.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Body {
    /// The body node's name (`node<k>` for an unnamed node).
    pub name: String,
    /// [`KINEMATIC`] or [`DYNAMIC`]; every member has this motion.
    pub motion: u32,
    /// The frame's rotation, a unit quaternion `(x, y, z, w)`.
    pub rotation: [f32; 4],
    /// The frame's origin (world, as baked).
    pub translation: [f32; 3],
    /// Its objects: indices into [`Level::instances`], ascending, at
    /// least one; no object is in two bodies.
    pub members: Vec<u32>,
    /// Which of the values below the file gives ([`AUTHORED_MASS`],
    /// [`AUTHORED_CENTRE`], [`AUTHORED_INERTIA`]); those it does not give
    /// are zero (the orientation the identity).
    pub authored: u32,
    /// Mass (kg; non-negative).
    pub mass: f32,
    /// Centre of mass, in the body's frame.
    pub centre_of_mass: [f32; 3],
    /// Principal moments of inertia (kg·m²; non-negative).
    pub inertia_diagonal: [f32; 3],
    /// The rotation from the principal axes into the body's frame, a unit
    /// quaternion `(x, y, z, w)`.
    pub inertia_orientation: [f32; 4],
}

impl ArchivedLevel {
    /// The convex pieces of collider `collider`, if it has them.
    pub fn decomposition(&self, collider: u32) -> Option<&ArchivedDecomposition> {
        let k = self
            .decompositions
            .binary_search_by_key(&collider, |d| d.collider.to_native())
            .ok()?;
        self.decompositions.get(k)
    }

    /// The f32 matrices of instance `inst`'s placement (computed from a
    /// similarity's quaternion, or read from [`Level::affines`]). An
    /// affine index out of range (only in an unverified archive) gives the
    /// identity.
    #[inline]
    pub fn rows(&self, inst: &ArchivedInstance) -> crate::placement::Rows {
        let q = inst.rotation.map(|v| v.to_native());
        let t = inst.translation.map(|v| v.to_native());
        if q == [0.0; 4] {
            let id = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
            let a = self.affines.get(t[0] as usize);
            return crate::placement::Rows {
                world_from_local: a.map_or(id, |a| a.world_from_local.map(|v| v.to_native())),
                local_from_world: a.map_or(id, |a| a.local_from_world.map(|v| v.to_native())),
            };
        }
        crate::placement::similarity_rows(q, t)
    }

    /// The world-from-local matrix of [`ArchivedLevel::rows`] alone, the
    /// same f32 values.
    #[inline]
    pub fn world_from_local(&self, inst: &ArchivedInstance) -> [f32; 12] {
        let q = inst.rotation.map(|v| v.to_native());
        if q == [0.0; 4] {
            return self.rows(inst).world_from_local;
        }
        crate::placement::similarity_world(q, inst.translation.map(|v| v.to_native()))
    }

    /// The local-from-world matrix of [`ArchivedLevel::rows`] alone (what
    /// a ray needs), the same f32 values.
    #[inline(always)]
    pub fn local_from_world(&self, inst: &ArchivedInstance) -> [f32; 12] {
        let q = inst.rotation.map(|v| v.to_native());
        if q == [0.0; 4] {
            return self.rows(inst).local_from_world;
        }
        crate::placement::similarity_local(q, inst.translation.map(|v| v.to_native()))
    }

    /// The run of names that scene instance `source` falls in.
    fn name_run(&self, source: u32) -> Option<&ArchivedNameRun> {
        let k = self
            .names
            .partition_point(|r| r.first.to_native() <= source);
        k.checked_sub(1).map(|k| &self.names[k])
    }

    /// The name of the object behind instance `i` (empty if out of range).
    pub fn instance_name(&self, i: usize) -> std::borrow::Cow<'_, str> {
        let Some(inst) = self.instances.get(i) else {
            return "".into();
        };
        let source = inst.source.to_native();
        match self.name_run(source) {
            None => "".into(),
            Some(r) => match r.number_of(source) {
                None => r.name.as_str().into(),
                Some(n) => format!("{}#{n}", r.name.as_str()).into(),
            },
        }
    }

    /// The classification rule that chose instance `i`'s collider, in words
    /// (empty if out of range).
    pub fn instance_rule(&self, i: usize) -> &str {
        self.instances
            .get(i)
            .and_then(|inst| self.name_run(inst.source.to_native()))
            .and_then(|r| self.rules.get(r.rule.to_native() as usize))
            .map_or("", |r| r.as_str())
    }

    /// The first instance (in instance order) of the object called `name`.
    pub fn find_instance(&self, name: &str) -> Option<u32> {
        let numbered = split_numbered(name);
        let wanted = |source: u32| {
            self.name_run(source)
                .is_some_and(|r| match r.number_of(source) {
                    None => r.name.as_str() == name,
                    Some(n) => numbered
                        .is_some_and(|(base, k)| r.name.as_str() == base && n == u64::from(k)),
                })
        };
        self.instances
            .iter()
            .position(|inst| wanted(inst.source.to_native()))
            .map(|i| i as u32)
    }
}

impl ArchivedNameRun {
    /// The number in the name of scene instance `source` (at or after
    /// `first`), or `None` for an unnumbered run.
    fn number_of(&self, source: u32) -> Option<u64> {
        let number = self.number.to_native();
        (number != UNNUMBERED)
            .then(|| u64::from(number) + u64::from(source - self.first.to_native()))
    }
}

/// `base#n` as `(base, n)`, when `n` is written exactly as `format!`
/// writes a number below [`UNNUMBERED`] (so the name round-trips).
fn split_numbered(name: &str) -> Option<(&str, u32)> {
    let (base, n) = name.rsplit_once('#')?;
    let k: u32 = n.parse().ok()?;
    (k != UNNUMBERED && k.to_string() == n).then_some((base, k))
}

/// The name runs and rule table of objects given in source order as
/// `(source, name, rule)`: consecutive sources with the same rule whose
/// names are `base#n`, `base#n+1`, … (exactly as written by `format!`) share
/// one numbered run, consecutive equal names one plain run, and each rule
/// is stored once.
pub fn name_runs<'a>(
    objects: impl IntoIterator<Item = (u32, &'a str, &'a str)>,
) -> (Vec<NameRun>, Vec<String>) {
    let mut rules: Vec<String> = Vec::new();
    let mut rule_index: std::collections::HashMap<&'a str, u32> = Default::default();
    let mut runs: Vec<NameRun> = Vec::new();
    // (last source, last number) of the open run
    let mut last: Option<(u32, u32)> = None;
    for (source, name, rule) in objects {
        let r = *rule_index.entry(rule).or_insert_with(|| {
            rules.push(rule.to_string());
            rules.len() as u32 - 1
        });
        let split = split_numbered(name);
        if let (Some(open), Some((ls, ln))) = (runs.last_mut(), last) {
            let next = source.checked_sub(ls) == Some(1);
            if next && open.rule == r {
                // continues a numbered run, or a plain one
                let numbered = open.number != UNNUMBERED
                    && split.is_some_and(|(b, k)| b == open.name && ln.checked_add(1) == Some(k));
                if numbered {
                    last = Some((source, ln + 1));
                    continue;
                }
                if open.number == UNNUMBERED && open.name == name {
                    last = Some((source, 0));
                    continue;
                }
            }
        }
        let (base, number) = split.unwrap_or((name, UNNUMBERED));
        runs.push(NameRun {
            first: source,
            name: base.to_string(),
            number,
            rule: r,
        });
        last = Some((source, if number == UNNUMBERED { 0 } else { number }));
    }
    (runs, rules)
}

/// The top-level tree: the static instances' world boxes in the 4-wide
/// form of a mesh's box tree ([`TopNodes`]). Its leaves are the first
/// [`TopTree::leaves`] instances, leaf `k` instance `k` (the baker stores
/// static instances in the tree's leaf order, then the movers and
/// triggers, which a runtime world keeps in a tree of its own); a tree of
/// one leaf has [`crate::tri_mesh::LEAF_BIT`] (leaf 0) for a root and no
/// nodes; a tree of none has no nodes and a root that is never read.
#[derive(Archive, Serialize, Clone, Debug, PartialEq, Default)]
pub struct TopTree {
    /// Lower corner of the box around every instance.
    pub min: [f32; 3],
    /// Upper corner of the box around every instance.
    pub max: [f32; 3],
    /// The root reference: inner node 0, or a leaf.
    pub root: u32,
    /// Inner nodes in breadth-first order.
    pub nodes: TopNodes,
    /// How many instances (the first ones) the tree holds.
    pub leaves: u32,
}

/// The top-level tree's inner nodes, in one of two forms. The baker
/// stores floats for a tree of at most a few thousand instances and codes
/// for a larger one: on the benchmark's 300 solids, walks of float nodes
/// answered rays and points 10–15% faster (no parent box to carry from
/// node to node); on a forest of a million trees, where the tree is
/// larger than the caches, they answered 25% slower (3.3 times the bytes
/// to bring in); at 10,000 instances the two measured the same.
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub enum TopNodes {
    /// Children's boxes as f32 corners.
    Floats(Vec<crate::tri_mesh::FloatBoxNode>),
    /// Children's boxes as 8-bit codes against the parent's decoded box
    /// (the root's box is [`TopTree::min`], [`TopTree::max`]).
    Boxes(Vec<crate::tri_mesh::BoxNode>),
}

impl Default for TopNodes {
    fn default() -> Self {
        TopNodes::Floats(Vec::new())
    }
}

impl TopNodes {
    /// Number of inner nodes.
    pub fn len(&self) -> usize {
        match self {
            TopNodes::Floats(n) => n.len(),
            TopNodes::Boxes(n) => n.len(),
        }
    }
    /// Whether there are no inner nodes (at most one instance).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ArchivedTopNodes {
    /// Number of inner nodes.
    pub fn len(&self) -> usize {
        match self {
            ArchivedTopNodes::Floats(n) => n.len(),
            ArchivedTopNodes::Boxes(n) => n.len(),
        }
    }
    /// Whether there are no inner nodes (at most one instance).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of inner nodes.
    pub fn node_bytes(&self) -> usize {
        match self {
            ArchivedTopNodes::Floats(n) => std::mem::size_of_val(n.as_slice()),
            ArchivedTopNodes::Boxes(n) => std::mem::size_of_val(n.as_slice()),
        }
    }
}

const _: () = {
    assert!(std::mem::size_of::<Instance>() == 44);
    assert!(std::mem::size_of::<ArchivedInstance>() == 44);
    assert!(std::mem::align_of::<ArchivedInstance>() == 4);
    // the enum is as large as its largest inline variant (a polytope); the
    // meshes sit behind a relative pointer
    assert!(std::mem::size_of::<ArchivedCollider>() == 68);
    assert!(std::mem::align_of::<ArchivedLevel>() <= crate::header::BODY_ALIGN);
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A level of `instances` (sphere collider 0) with these name runs and
    /// affines, checked by rkyv only (no semantic verification).
    fn level_of(
        instances: Vec<Instance>,
        affines: Vec<Affine>,
        names: Vec<NameRun>,
        rules: Vec<String>,
    ) -> Level {
        let one = instances.len() == 1;
        let leaves = instances.len() as u32;
        Level {
            colliders: vec![Collider::Sphere(crate::primitive::Sphere { radius: 1.0 })],
            instances,
            affines,
            names,
            rules,
            layer_names: vec![DEFAULT_LAYER.into()],
            top: TopTree {
                min: [-10.0; 3],
                max: [10.0; 3],
                root: if one { crate::tri_mesh::LEAF_BIT } else { 0 },
                nodes: TopNodes::default(),
                leaves,
            },
            decompositions: Vec::new(),
            bodies: Vec::new(),
        }
    }

    fn instance(source: u32) -> Instance {
        Instance {
            rotation: [0.0, 0.0, 0.0, 1.0],
            translation: [0.0; 3],
            collider: 0,
            source,
            layers: 1,
            flags: 0,
        }
    }

    #[test]
    fn names_round_trip_through_runs() {
        let rule = |k: usize| ["rule a", "rule b"][k % 2];
        // (source, name, rule): numbered runs, breaks in numbering, gaps in
        // sources, repeats, and names that only look numbered
        let mut objects: Vec<(u32, String, &str)> = vec![
            (2, "wall".into(), rule(0)),
            (3, "wall".into(), rule(0)),
            (4, "wall".into(), rule(1)),
        ];
        for k in 0..50 {
            objects.push((5 + k, format!("Tree#{k}"), rule(0)));
        }
        objects.extend([
            (56, "Tree#51".into(), rule(0)), // a gap in sources
            (57, "Tree#53".into(), rule(0)), // a gap in numbers
            (58, "Tree#54".into(), rule(1)), // another rule
            (59, "x#01".into(), rule(0)),
            (60, "x#1".into(), rule(0)),
            (61, "y#4294967295".into(), rule(0)),
            (62, "#7".into(), rule(0)),
            (63, "#8".into(), rule(0)),
            (64, "a#b#3".into(), rule(0)),
            (65, "".into(), rule(0)),
        ]);
        let (names, rules) = name_runs(objects.iter().map(|(s, n, r)| (*s, n.as_str(), *r)));
        assert_eq!(rules.len(), 2);
        assert!(names.len() < 20, "{} runs", names.len());
        // instances in another order than their sources
        let instances: Vec<Instance> = objects.iter().rev().map(|o| instance(o.0)).collect();
        let level = level_of(instances, vec![], names, rules);
        let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&level).unwrap();
        let a = rkyv::access::<ArchivedLevel, rkyv::rancor::Error>(&bytes).unwrap();
        for (i, (_, name, rule)) in objects.iter().rev().enumerate() {
            assert_eq!(a.instance_name(i), name.as_str(), "instance {i}");
            assert_eq!(a.instance_rule(i), *rule, "instance {i}");
            let first = objects.iter().rev().position(|o| &o.1 == name).unwrap();
            assert_eq!(a.find_instance(name), Some(first as u32), "{name:?}");
        }
        assert_eq!(a.instance_name(objects.len()), "");
        assert_eq!(a.instance_rule(objects.len()), "");
        for missing in ["Tree#50", "Tree#52", "Tree#053", "x#2", "wall#0", "Tree"] {
            assert_eq!(a.find_instance(missing), None, "{missing}");
        }
    }

    #[test]
    fn primitives_under_affine_placements_must_be_similarities() {
        let affine = |m: [f32; 12]| Affine {
            world_from_local: m,
            local_from_world: m,
        };
        let stretched = [3., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
        let turned = [0., -1., 0., 5., 1., 0., 0., 0., 0., 0., 1., 0.];
        let check = |inst: Instance, affines: Vec<Affine>| {
            let names = vec![NameRun {
                first: 0,
                name: "ball".into(),
                number: UNNUMBERED,
                rule: 0,
            }];
            let level = level_of(vec![inst], affines, names, vec!["r".into()]);
            let file = crate::encode(&level, [0; 16], [0; 3]);
            let mut aligned = rkyv::util::AlignedVec::<16>::new();
            aligned.extend_from_slice(&file);
            crate::check_file(&aligned)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let affine_inst = Instance {
            rotation: [0.0; 4],
            ..instance(0)
        };
        assert_eq!(check(instance(0), vec![]), Ok(()));
        assert_eq!(check(affine_inst, vec![affine(turned)]), Ok(()));
        let err = check(affine_inst, vec![affine(stretched)]).unwrap_err();
        assert!(err.contains("not a similarity"), "{err}");
        // an index past the table, a fractional one, and a similarity
        // scaled past 2^40
        for bad in [
            (affine_inst, vec![]),
            (
                Instance {
                    translation: [0.5, 0.0, 0.0],
                    ..affine_inst
                },
                vec![affine(turned)],
            ),
            (
                Instance {
                    rotation: [0.0, 0.0, 0.0, 2e12],
                    ..instance(0)
                },
                vec![],
            ),
        ] {
            let err = check(bad.0, bad.1).unwrap_err();
            assert!(err.contains("placement is out of range"), "{err}");
        }
    }
}
