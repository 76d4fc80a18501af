//! Semantic verification: the invariants rkyv's structural check cannot see.
//! One file per collider family; [`verify_level`] dispatches on the collider.
//!
//! After [`verify_level`] accepts an archive, every index a query can follow
//! is in range, every tree is a proper wide tree in breadth-first order
//! no deeper than
//! [`MAX_DEPTH`], its leaves cover the primitives exactly once and in
//! order, and every number a query reads is finite. Queries rely on this
//! and do not re-check, so no archive can make them panic, read out of bounds
//! or loop forever. The baker runs the same checks on what it writes.

mod bsp;
mod polytope;
mod tri_mesh;

pub use bsp::verify_bsp;
pub use polytope::{verify_capsule, verify_cuboid, verify_polytope, verify_sphere};
pub use tri_mesh::{PARALLEL_TREE_NODES, mesh_tree_stats, verify_mesh_tree, verify_tri_mesh};

use crate::level::{
    ArchivedCollider, ArchivedInstance, ArchivedLevel, ArchivedTopNodes, MAX_DEPTH,
    similarity_scale,
};
use thiserror::Error;

/// A broken tree invariant.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TreeError {
    /// The tree has nodes but nothing to cover, or primitives but no nodes.
    #[error("{nodes} nodes for {prims} primitives")]
    Empty {
        /// Node count.
        nodes: usize,
        /// Primitive count.
        prims: usize,
    },
    /// The tree is deeper than [`MAX_DEPTH`].
    #[error("deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// The leaves do not cover every primitive.
    #[error("leaves cover {covered} of {prims} primitives")]
    Coverage {
        /// Primitives covered.
        covered: usize,
        /// Primitives present.
        prims: usize,
    },
    /// A 4-wide tree's node does not start its children where the nodes
    /// before it leave off (breadth-first numbering).
    #[error("node {node}: children start at node {} and leaf {}, expected {} and {}", found.0, found.1, expected.0, expected.1)]
    Links {
        /// Node index.
        node: usize,
        /// First inner child and first leaf stored.
        found: (u32, u32),
        /// The counts of the nodes before it.
        expected: (u64, u64),
    },
    /// A 4-wide tree's node is not the child of an earlier node.
    #[error("node {node} is not a child of an earlier node")]
    Orphan {
        /// Node index.
        node: usize,
    },
    /// A 4-wide tree's root reference is not node 0 (or leaf 0 for a tree
    /// of one leaf).
    #[error("root reference {found:#x}, expected {expected:#x}")]
    Root {
        /// Reference stored.
        found: u32,
        /// Reference expected.
        expected: u32,
    },
    /// A 4-wide tree's node uses fewer than two child slots, or marks an
    /// unused slot as a leaf.
    #[error("node {node}: fewer than two child slots used, or a leaf bit on an unused slot")]
    Slots {
        /// Node index.
        node: usize,
    },
    /// A box node's child codes put a lower face above an upper face.
    #[error("node {node}: a child box's lower and upper codes cross")]
    Crossed {
        /// Node index.
        node: usize,
    },
    /// A box is not finite or has min > max.
    #[error("node {node}: box {min:?}..{max:?} is not finite and ordered")]
    Bounds {
        /// Node index.
        node: usize,
        /// Lower corner.
        min: [f32; 3],
        /// Upper corner.
        max: [f32; 3],
    },
}

/// Collider statistics gathered while verifying a tree.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeStats {
    /// Number of nodes.
    pub nodes: usize,
    /// Number of leaves.
    pub leaves: usize,
    /// Depth of the deepest leaf (root = 1).
    pub depth: usize,
    /// Surface area heuristic cost: Σ area(inner) + Σ area(leaf)·prims,
    /// divided by the root's area (1 traversal step ≙ 1 primitive test).
    pub sah_cost: f64,
}

/// Where in a level a problem was found, and what it is.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum VerifyError {
    /// A mesh's tree is malformed.
    #[error("mesh {mesh}: tree: {source}")]
    MeshTree {
        /// Mesh index.
        mesh: usize,
        /// The broken invariant.
        source: TreeError,
    },
    /// A leaf refers to a vertex that does not exist.
    #[error("mesh {mesh}: leaf {triangle} uses vertex {vertex} of {vertices}")]
    VertexIndex {
        /// Mesh index.
        mesh: usize,
        /// Leaf index.
        triangle: usize,
        /// Vertex index used.
        vertex: u32,
        /// Vertex count.
        vertices: usize,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("mesh {mesh}: vertex {vertex} is not finite")]
    Vertex {
        /// Mesh index.
        mesh: usize,
        /// Vertex index.
        vertex: usize,
    },
    /// A vertex axis could decode to a non-finite value, the record layout
    /// is not the one its axes give, or the records do not fill the data.
    #[error("mesh {mesh}: vertex axes or record layout are malformed")]
    VertexLayout {
        /// Mesh index.
        mesh: usize,
    },
    /// The leaves' runs and their base pairs disagree in number.
    #[error("mesh {mesh}: {leaves} leaves need {expected} base pairs, {bases} stored")]
    LeafBases {
        /// Mesh index.
        mesh: usize,
        /// Leaf count.
        leaves: usize,
        /// Base pairs the leaves need (one per run of `LEAF_CHUNK`).
        expected: usize,
        /// Base pairs stored.
        bases: usize,
    },
    /// A table of listed values (corners, first ids or second ids) is not
    /// exactly the leaves flagged for it, by ascending leaf.
    #[error(
        "mesh {mesh}: {table} entry {entry} of {entries} does not name the next flagged leaf ({flagged} leaves flagged)"
    )]
    Listed {
        /// Mesh index.
        mesh: usize,
        /// Which table: `listed-corner`, `listed-id` or `second-id`.
        table: &'static str,
        /// First entry at fault (the list's length when entries are missing).
        entry: usize,
        /// Entries listed.
        entries: usize,
        /// Leaves flagged for the table.
        flagged: usize,
    },
    /// An instance refers to a collider that does not exist.
    #[error("instance {instance}: collider {collider} of {colliders}")]
    InstanceCollider {
        /// Instance index.
        instance: usize,
        /// Collider index used.
        collider: u32,
        /// Collider count.
        colliders: usize,
    },
    /// A collider breaks its family's invariants.
    #[error("collider {collider}: {problem}")]
    Collider {
        /// Collider index.
        collider: usize,
        /// What is wrong.
        problem: String,
    },
    /// A convex decomposition is malformed: its collider is out of range or
    /// out of order, it has no pieces or too many, a piece breaks the
    /// polytope invariants, or its figures are not finite.
    #[error("decomposition {decomposition}: {problem}")]
    Decomposition {
        /// Index into the decompositions.
        decomposition: usize,
        /// What is wrong.
        problem: String,
    },
    /// An authored rigid body is malformed: a motion that is not kinematic
    /// or dynamic, a frame or mass figure that is not finite (or a
    /// quaternion not of unit length, a negative mass or moment), no
    /// members, a member out of range, out of order, of another motion or
    /// in another body, or unknown authored bits.
    #[error("body {body}: {problem}")]
    Body {
        /// Index into the bodies.
        body: usize,
        /// What is wrong.
        problem: String,
    },
    /// A primitive is placed by a transform that is not a similarity.
    #[error("instance {instance}: a primitive placed by a transform that is not a similarity")]
    NotSimilar {
        /// Instance index.
        instance: usize,
    },
    /// An instance's placement is out of range: a similarity's scale or
    /// translation beyond 2⁴⁰ (or scale below 2⁻⁴⁰), or an affine index
    /// that is not in the table.
    #[error("instance {instance}: placement is out of range")]
    Transform {
        /// Instance index.
        instance: usize,
    },
    /// The name runs or the rule table are malformed.
    #[error("names: {0}")]
    Names(String),
    /// More affine placements than an f32 index can hold.
    #[error("{0} affine placements (at most 2^24)")]
    Affines(usize),
    /// An affine placement's matrices are not finite.
    #[error("affine placement {affine}: matrices are not finite")]
    AffineNotFinite {
        /// Index into the affine table.
        affine: usize,
    },
    /// The collision layer tables are malformed.
    #[error("collision layers: {0}")]
    Layers(String),
    /// An instance's flags are unknown, or the static instances are not
    /// the top-level tree's and the movers and triggers after them.
    #[error("instance {instance}: {problem}")]
    Flags {
        /// Instance index.
        instance: usize,
        /// What is wrong.
        problem: String,
    },
    /// The top-level tree is malformed.
    #[error("top-level tree: {0}")]
    TopTree(TreeError),
    /// A mesh's quantisation frame is not finite.
    #[error("mesh {mesh}: root box or sphere frame is not finite and ordered")]
    Quantization {
        /// Mesh index.
        mesh: usize,
    },
}

/// Checks the convex decompositions: each names an existing collider, in
/// ascending order with none twice, has from 1 to
/// [`MAX_PIECES`](crate::level::MAX_PIECES) pieces that are valid
/// polytopes, and finite, non-negative figures.
fn verify_decompositions(level: &ArchivedLevel) -> Result<(), VerifyError> {
    let mut last: Option<u32> = None;
    for (k, d) in level.decompositions.iter().enumerate() {
        let bad = |problem: String| VerifyError::Decomposition {
            decomposition: k,
            problem,
        };
        let c = d.collider.to_native();
        if c as usize >= level.colliders.len() || last.is_some_and(|l| c <= l) {
            return Err(bad(format!(
                "collider {c} of {} (after {last:?}: ascending, each once)",
                level.colliders.len()
            )));
        }
        last = Some(c);
        let n = d.pieces.len();
        if !(1..=crate::level::MAX_PIECES).contains(&n) {
            return Err(bad(format!(
                "{n} pieces (1..={} allowed)",
                crate::level::MAX_PIECES
            )));
        }
        for (i, p) in d.pieces.iter().enumerate() {
            verify_polytope(i, p).map_err(|e| bad(format!("piece {i}: {e}")))?;
        }
        if d.shapes.len() != n {
            return Err(bad(format!(
                "{} piece shapes for {n} pieces",
                d.shapes.len()
            )));
        }
        for (i, (shape, p)) in d.shapes.iter().zip(d.pieces.iter()).enumerate() {
            verify_piece_shape(shape, p).map_err(|e| bad(format!("piece {i}: {e}")))?;
        }
        let (cv, cov) = (d.concavity.to_native(), d.coverage.to_native());
        if !(cv.is_finite() && cv >= 0.0 && cov.is_finite() && cov >= 0.0) {
            return Err(bad(format!(
                "concavity {cv} and coverage {cov} are not finite and non-negative"
            )));
        }
    }
    Ok(())
}

/// Checks the authored bodies (see [`VerifyError::Body`]).
fn verify_bodies(level: &ArchivedLevel) -> Result<(), VerifyError> {
    use crate::level::{AUTHORED_CENTRE, AUTHORED_INERTIA, AUTHORED_MASS, DYNAMIC, KINEMATIC};
    let mut taken = vec![false; level.instances.len()];
    let unit = |q: [f32; 4]| {
        let len2: f64 = q.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
        q.iter().all(|x| x.is_finite()) && (len2 - 1.0).abs() <= 1e-3
    };
    for (k, b) in level.bodies.iter().enumerate() {
        let bad = |problem: String| VerifyError::Body { body: k, problem };
        let motion = b.motion.to_native();
        if motion != KINEMATIC && motion != DYNAMIC {
            return Err(bad(format!("motion {motion} is not kinematic or dynamic")));
        }
        let rotation = b.rotation.map(|x| x.to_native());
        let translation = b.translation.map(|x| x.to_native());
        if !unit(rotation) || !translation.iter().all(|x| x.is_finite()) {
            return Err(bad(format!(
                "frame rotation {rotation:?} (not of unit length) or origin {translation:?} (not finite)"
            )));
        }
        if b.members.is_empty() {
            return Err(bad("no members".into()));
        }
        let mut last: Option<u32> = None;
        for m in b.members.iter().map(|m| m.to_native()) {
            let inst = level
                .instances
                .get(m as usize)
                .filter(|_| last.is_none_or(|l| m > l));
            let Some(inst) = inst else {
                return Err(bad(format!(
                    "member {m} of {} instances (after {last:?}: ascending, each once)",
                    level.instances.len()
                )));
            };
            if inst.flags.to_native() & crate::level::MOTION != motion {
                return Err(bad(format!("member {m} does not have the body's motion")));
            }
            if std::mem::replace(&mut taken[m as usize], true) {
                return Err(bad(format!("member {m} is in an earlier body too")));
            }
            last = Some(m);
        }
        let authored = b.authored.to_native();
        if authored & !(AUTHORED_MASS | AUTHORED_CENTRE | AUTHORED_INERTIA) != 0 {
            return Err(bad(format!("unknown authored bits {authored:#x}")));
        }
        let mass = b.mass.to_native();
        let centre = b.centre_of_mass.map(|x| x.to_native());
        let diagonal = b.inertia_diagonal.map(|x| x.to_native());
        let orientation = b.inertia_orientation.map(|x| x.to_native());
        let sound = mass.is_finite()
            && mass >= 0.0
            && centre.iter().all(|x| x.is_finite())
            && diagonal.iter().all(|x| x.is_finite() && *x >= 0.0)
            && unit(orientation);
        if !sound {
            return Err(bad(format!(
                "mass {mass}, centre {centre:?}, moments {diagonal:?} or axes {orientation:?} are not finite, non-negative and of unit length"
            )));
        }
    }
    Ok(())
}

/// Checks a piece's shape: a hull as it is; a primitive with valid
/// parameters, a finite unit rotation and centre, and every corner of the
/// piece's polytope inside it (within a thousandth of its size: the
/// primitive stands in for the piece, so it must hold all of it).
fn verify_piece_shape(
    shape: &crate::level::ArchivedPieceShape,
    p: &crate::polytope::ArchivedPolytope,
) -> Result<(), String> {
    use crate::level::ArchivedPieceKind as K;
    let at = |e: VerifyError| e.to_string();
    // a box's half extents, or a sphere's or capsule's segment half
    // length and radius (a sphere: a capsule with no segment)
    let (half, round) = match &shape.kind {
        K::Hull => return Ok(()),
        K::Cuboid(c) => {
            verify_cuboid(0, c).map_err(at)?;
            (
                Some(c.half_extents.map(|x| f64::from(x.to_native()))),
                (0.0, 0.0),
            )
        }
        K::Sphere(b) => {
            verify_sphere(0, b).map_err(at)?;
            (None, (0.0, f64::from(b.radius.to_native())))
        }
        K::Capsule(c) => {
            verify_capsule(0, c).map_err(at)?;
            let hh = f64::from(c.half_height.to_native()).max(0.0);
            (None, (hh, f64::from(c.radius.to_native())))
        }
    };
    // how far a point in the primitive's frame lies outside it
    let outside = |q: [f64; 3]| match half {
        Some(h) => (0..3).fold(f64::NEG_INFINITY, |m, k| m.max(q[k].abs() - h[k])),
        None => {
            let y = (q[1].abs() - round.0).max(0.0);
            (q[0] * q[0] + y * y + q[2] * q[2]).sqrt() - round.1
        }
    };
    let size = half.map_or(round.0 + round.1, |h| h[0].max(h[1]).max(h[2]));
    let q = shape.rotation.map(|x| f64::from(x.to_native()));
    let c = shape.centre.map(|x| f64::from(x.to_native()));
    let len2: f64 = q.iter().map(|x| x * x).sum();
    if !q.iter().chain(&c).all(|x| x.is_finite() && x.abs() < 1e30) || (len2 - 1.0).abs() > 1e-3 {
        return Err(format!(
            "the {} has rotation {q:?} (not of unit length) or centre {c:?} (not finite)",
            shape.kind.name()
        ));
    }
    for v in p.vertices.iter() {
        let v = v.map(|x| f64::from(x.to_native()));
        let d = [v[0] - c[0], v[1] - c[1], v[2] - c[2]];
        // into the primitive's frame: by the conjugate rotation
        let u = [-q[0], -q[1], -q[2]];
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        };
        let t = cross(u, d).map(|x| 2.0 * x);
        let ut = cross(u, t);
        let local = [0, 1, 2].map(|k| d[k] + q[3] * t[k] + ut[k]);
        let out = outside(local);
        // NaN is outside too
        if out.is_nan() || out > 1e-3 * size + 1e-6 {
            return Err(format!(
                "corner {v:?} lies {out} outside the {} that stands in for it",
                shape.kind.name()
            ));
        }
    }
    Ok(())
}

/// Checks every semantic invariant of an archived level (see module docs).
pub fn verify_level(level: &ArchivedLevel) -> Result<(), VerifyError> {
    // colliders on the rayon pool; the error of the first bad collider is reported
    let collider = |(s, collider): (usize, &ArchivedCollider)| match collider {
        ArchivedCollider::TriMesh(mesh) => verify_tri_mesh(s, mesh),
        ArchivedCollider::Polytope(p) => verify_polytope(s, p),
        ArchivedCollider::Cuboid(c) => verify_cuboid(s, c),
        ArchivedCollider::Sphere(b) => verify_sphere(s, b),
        ArchivedCollider::Capsule(c) => verify_capsule(s, c),
        ArchivedCollider::Bsp(b) => verify_bsp(s, b),
    };
    if level.colliders.len() > 1 {
        use rayon::prelude::*;
        let bad = level
            .colliders
            .par_iter()
            .enumerate()
            .filter_map(|s| collider(s).err().map(|e| (s.0, e)))
            .min_by_key(|(s, _)| *s);
        if let Some((_, e)) = bad {
            return Err(e);
        }
    } else if let Some(s) = level.colliders.first() {
        collider((0, s))?;
    }
    verify_decompositions(level)?;
    let layers = level.layer_names.len();
    if !(1..=crate::level::MAX_LAYERS).contains(&layers)
        || level.layer_names[0].as_str() != crate::level::DEFAULT_LAYER
    {
        return Err(VerifyError::Layers(format!(
            "{layers} layer names (1..={} allowed, the first {:?})",
            crate::level::MAX_LAYERS,
            crate::level::DEFAULT_LAYER,
        )));
    }
    let allowed = if layers == 32 {
        u32::MAX
    } else {
        (1u32 << layers) - 1
    };
    if level.affines.len() > crate::level::MAX_AFFINES {
        return Err(VerifyError::Affines(level.affines.len()));
    }
    if let Some(k) = level.affines.iter().position(|a| {
        !a.world_from_local
            .iter()
            .chain(a.local_from_world.iter())
            .all(|v| v.to_native().is_finite())
    }) {
        return Err(VerifyError::AffineNotFinite { affine: k });
    }
    let colliders = level.colliders.len();
    let in_top = level.top.leaves.to_native() as usize;
    if in_top > level.instances.len() {
        return Err(VerifyError::TopTree(TreeError::Coverage {
            covered: in_top,
            prims: level.instances.len(),
        }));
    }
    for (i, inst) in level.instances.iter().enumerate() {
        verify_instance(i, inst, colliders, level.affines.len())?;
        let flags = inst.flags.to_native();
        use crate::level::{LOOSE, MOTION, PIECE, TRIGGER};
        let problem = if flags & !(MOTION | TRIGGER | PIECE) != 0 || flags & MOTION == MOTION {
            Some(format!("unknown flags {flags:#x}"))
        } else if flags & PIECE != 0
            && (flags & LOOSE != 0
                || level.colliders[inst.collider.to_native() as usize]
                    .tri_mesh()
                    .is_none())
        {
            Some(format!(
                "flags {flags:#x}: a piece cut at tile borders is a static triangle mesh"
            ))
        } else if (i < in_top) != (flags & LOOSE == 0) {
            Some(format!(
                "flags {flags:#x} {} the top-level tree's {in_top} static objects",
                if i < in_top { "inside" } else { "after" }
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(VerifyError::Flags {
                instance: i,
                problem,
            });
        }
        let mask = inst.layers.to_native();
        if mask == 0 || mask & !allowed != 0 {
            return Err(VerifyError::Layers(format!(
                "instance {i} has layer mask {mask:#x} over {layers} layers"
            )));
        }
        if level.colliders[inst.collider.to_native() as usize].is_primitive()
            && !is_similarity(level, inst)
        {
            return Err(VerifyError::NotSimilar { instance: i });
        }
    }
    verify_names(level)?;
    verify_bodies(level)?;
    verify_top(level).map_err(VerifyError::TopTree)?;
    Ok(())
}

/// A box's lower and upper corners.
pub type BoxCorners = ([f32; 3], [f32; 3]);

/// The top-level tree's shape statistics and each instance's box as the
/// tree stores it (decoded, so rounded outward by at most a 255th of its
/// parent's box), by instance; checks the tree first ([`verify_top`]).
pub fn top_tree_stats(level: &ArchivedLevel) -> Result<(TreeStats, Vec<BoxCorners>), TreeError> {
    verify_top(level)?;
    let top = &level.top;
    let mut boxes = vec![([0.0f32; 3], [0.0f32; 3]); top.leaves.to_native() as usize];
    if boxes.is_empty() {
        return Ok((
            TreeStats {
                nodes: top.nodes.len(),
                ..TreeStats::default()
            },
            boxes,
        ));
    }
    let root = tri_mesh::Vol::Box(
        top.min.map(|v| v.to_native()),
        top.max.map(|v| v.to_native()),
    );
    let leaf = |leaf: u32, vol: tri_mesh::Vol| {
        if let tri_mesh::Vol::Box(lo, hi) = vol {
            boxes[leaf as usize] = (lo, hi);
        }
        vol.area()
    };
    let r = top.root.to_native();
    let mut stats = match &top.nodes {
        ArchivedTopNodes::Floats(n) => tri_mesh::stats_walk(
            r,
            root,
            |i| n[i].links(),
            |i, c, _| tri_mesh::float_child(&n[i], c),
            leaf,
        ),
        ArchivedTopNodes::Boxes(n) => tri_mesh::stats_walk(
            r,
            root,
            |i| n[i].links(),
            |i, c, vol| tri_mesh::box_child(&n[i], c, vol),
            leaf,
        ),
    };
    stats.nodes = top.nodes.len();
    Ok((stats, boxes))
}

/// Checks the top-level tree: a finite, ordered root box, and a 4-wide box
/// tree whose leaves are the instances, one each, in order (see
/// [`crate::level::TopTree`]); float nodes' used boxes finite and ordered.
pub fn verify_top(level: &ArchivedLevel) -> Result<(), TreeError> {
    let top = &level.top;
    let (inner, leaves) = (
        top.nodes.len(),
        (top.leaves.to_native() as usize).min(level.instances.len()),
    );
    if !tri_mesh::node_count(inner, leaves, crate::tri_mesh::WIDTH)? {
        return Ok(());
    }
    let (min, max) = (
        top.min.map(|v| v.to_native()),
        top.max.map(|v| v.to_native()),
    );
    if !(0..3).all(|k| {
        min[k].is_finite()
            && max[k].is_finite()
            && min[k] <= max[k]
            && (max[k] - min[k]).is_finite()
    }) {
        return Err(TreeError::Bounds { node: 0, min, max });
    }
    let root = top.root.to_native();
    match &top.nodes {
        ArchivedTopNodes::Floats(n) => {
            tri_mesh::check_links(root, leaves, &tri_mesh::FloatNodes(n.as_slice()))
        }
        ArchivedTopNodes::Boxes(n) => {
            tri_mesh::check_links(root, leaves, &tri_mesh::BoxNodes(n.as_slice()))
        }
    }
}

fn verify_instance(
    i: usize,
    inst: &ArchivedInstance,
    colliders: usize,
    affines: usize,
) -> Result<(), VerifyError> {
    let collider = inst.collider.to_native();
    if collider as usize >= colliders {
        return Err(VerifyError::InstanceCollider {
            instance: i,
            collider,
            colliders,
        });
    }
    let q = inst.rotation.map(|v| v.to_native());
    let t = inst.translation.map(|v| v.to_native());
    let ok = if q == [0.0; 4] {
        // an affine placement: `[k, 0, 0]`, k an index into the table
        t[0] >= 0.0 && t[0].fract() == 0.0 && (t[0] as usize) < affines && t[1..] == [0.0, 0.0]
    } else {
        crate::placement::similarity_in_range(q, t)
    };
    if !ok {
        return Err(VerifyError::Transform { instance: i });
    }
    Ok(())
}

/// Whether an instance's placement is a similarity, to 1e-4.
fn is_similarity(level: &ArchivedLevel, inst: &ArchivedInstance) -> bool {
    let m = level.rows(inst).world_from_local.map(f64::from);
    similarity_scale(&m, 1e-4).is_some()
}

/// The name runs: ordered by `first`, each rule in the table.
fn verify_names(level: &ArchivedLevel) -> Result<(), VerifyError> {
    let runs = level.names.as_slice();
    let bad = |problem: String| Err(VerifyError::Names(problem));
    if runs.is_empty() {
        if level.instances.is_empty() {
            return Ok(());
        }
        return bad(format!("{} instances but no names", level.instances.len()));
    }
    for (k, r) in runs.iter().enumerate() {
        if k > 0 && r.first.to_native() <= runs[k - 1].first.to_native() {
            return bad(format!("name run {k} is out of order"));
        }
        if r.rule.to_native() as usize >= level.rules.len() {
            return bad(format!(
                "name run {k} names rule {} of {}",
                r.rule.to_native(),
                level.rules.len()
            ));
        }
    }
    Ok(())
}
