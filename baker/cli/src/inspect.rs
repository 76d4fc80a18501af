//! `baker inspect`: what an archive holds and what it costs.

use kiln_formats::Archive;
use kiln_formats::level::ArchivedCollider;
use kiln_formats::verify::mesh_tree_stats;
use serde::Serialize;

/// Bytes per section of the body (payload bytes; the rest is rkyv
/// bookkeeping and padding, reported as `other`).
#[derive(Debug, Default, Serialize)]
pub struct Sections {
    /// Fixed header.
    pub header: usize,
    /// Mesh vertices.
    pub vertices: usize,
    /// Mesh leaves (one or two triangles as a quad's corners and the first
    /// source id, 12 bytes), their runs' vertex bases and listed corners.
    pub triangles: usize,
    /// Source triangle ids outside the leaves: the runs' id bases and the
    /// listed first and second ids.
    pub source_ids: usize,
    /// Mesh tree nodes.
    pub mesh_nodes: usize,
    /// Polytope planes and face loops.
    pub planes: usize,
    /// Instance records.
    pub instances: usize,
    /// Top-level tree nodes.
    pub top_nodes: usize,
    /// Names (meshes and objects) and classification rules.
    pub names: usize,
    /// Convex pieces (the decompositions' polytopes: vertices, planes and
    /// face loops).
    pub pieces: usize,
    /// Everything else.
    pub other: usize,
}

impl Sections {
    /// Adds a triangle mesh's vertex records, 12-byte leaves (flat-edge masks
    /// and first ids inside) with their bases and listed values, and tree
    /// nodes.
    fn add_mesh(&mut self, m: &kiln_formats::tri_mesh::ArchivedTriMesh) {
        self.vertices += m.vertices.data.len();
        self.triangles += m.leaves.len()
            * std::mem::size_of::<kiln_formats::tri_mesh::ArchivedLeaf>()
            + m.bases.len() * 4
            + m.listed_corners.len() * 8;
        self.source_ids += m.bases.len() * 4 + (m.listed_ids.len() + m.second_ids.len()) * 8;
        self.mesh_nodes += m.tree.node_bytes();
    }

    /// Every section but `other`.
    fn payload(&self) -> usize {
        self.header
            + self.vertices
            + self.triangles
            + self.source_ids
            + self.mesh_nodes
            + self.planes
            + self.pieces
            + self.instances
            + self.top_nodes
            + self.names
    }
}

/// One row of the per-object table.
#[derive(Debug, Serialize)]
pub struct ObjectRow {
    /// Instance index.
    pub instance: usize,
    /// Object name.
    pub name: String,
    /// Collider index.
    pub collider: u32,
    /// Collider kind (`trimesh`, …).
    pub kind: &'static str,
    /// The classification rule that chose the collider.
    pub rule: String,
    /// The collision layers the object is in.
    pub layers: Vec<String>,
    /// How it moves: `static`, `kinematic` or `dynamic`.
    pub motion: &'static str,
    /// Whether it is a trigger volume.
    pub trigger: bool,
    /// Triangles in the collider (triangle meshes; 0 for the others).
    pub triangles: usize,
    /// Depth of the collider's tree (triangle meshes; 0 for the others).
    pub depth: usize,
    /// Kind of the mesh tree (`aabb` or `sphere`; `-` for the others).
    pub tree: &'static str,
    /// World-space box of the instance (its top-level leaf box; for a
    /// mover or trigger, the box around its collider where it was baked).
    pub bounds: [[f32; 3]; 2],
    /// Payload bytes of its collider (vertices, leaves, source ids, nodes,
    /// planes; a collider shared by several objects counts for each).
    pub collider_bytes: usize,
    /// Its convex pieces for physics engines, if its collider has them.
    pub pieces: Option<PiecesRow>,
}

/// An object's convex pieces, in world units at its placement.
#[derive(Debug, Serialize)]
pub struct PiecesRow {
    /// Number of pieces.
    pub count: usize,
    /// Vertices over all pieces.
    pub vertices: usize,
    /// Pieces given to physics engines as a box, a sphere and a capsule
    /// (the rest as their hulls).
    pub primitives: [usize; 3],
    /// How far the pieces reach beyond the render mesh, at most (m).
    pub concavity: f32,
    /// How far the render mesh lies outside the pieces, at most (m).
    pub coverage: f32,
}

/// A polytope's payload bytes: its vertices, and its planes with their
/// face loops and twins.
fn polytope_bytes(p: &kiln_formats::polytope::ArchivedPolytope) -> (usize, usize) {
    (
        p.vertices.len() * 12,
        p.planes.len() * 16
            + (p.face_starts.len() + p.face_vertices.len() + p.face_twins.len()) * 2,
    )
}

/// The full inspection report.
#[derive(Debug, Serialize)]
pub struct InspectReport {
    /// Archive format version.
    pub format_version: u32,
    /// Baker version that wrote it.
    pub baker_version: String,
    /// Content hash (hex).
    pub content_hash: String,
    /// Total bytes.
    pub bytes: usize,
    /// Bytes per section.
    pub sections: Sections,
    /// Unique colliders.
    pub colliders: usize,
    /// Unique colliders per kind, e.g. `{"trimesh": 3}`.
    pub collider_kinds: std::collections::BTreeMap<&'static str, usize>,
    /// Instances.
    pub instances: usize,
    /// Triangles stored (each mesh once).
    pub stored_triangles: usize,
    /// Triangles in the world (each instance).
    pub world_triangles: usize,
    /// Archive bytes per stored triangle.
    pub bytes_per_triangle: f64,
    /// Deepest mesh tree.
    pub max_mesh_depth: usize,
    /// Triangle-weighted mean SAH cost of the mesh trees.
    pub mesh_sah_cost: f64,
    /// Depth of the top-level tree.
    pub top_depth: usize,
    /// SAH cost of the top-level tree.
    pub top_sah_cost: f64,
    /// The top-level tree's node form: `"float"` or `"quantised"`
    /// (`kiln_formats::level::TopNodes`).
    pub top_nodes_form: &'static str,
    /// World bounds (min, max) of the static objects (the level's own
    /// tree), if it has any.
    pub bounds: Option<[[f32; 3]; 2]>,
    /// World bounds of every object, movers and triggers where they were
    /// baked included, if the level has any object.
    pub bounds_all: Option<[[f32; 3]; 2]>,
    /// Collision layer names (bit order; the first is the default layer).
    pub layers: Vec<String>,
    /// One row per instance.
    pub objects: Vec<ObjectRow>,
    /// The rigid bodies glTF physics authors (objects that move as one).
    pub bodies: Vec<BodyRow>,
}

/// A rigid body glTF physics authors.
#[derive(Debug, Serialize)]
pub struct BodyRow {
    /// The body node's name.
    pub name: String,
    /// `kinematic` or `dynamic`.
    pub motion: &'static str,
    /// Its objects' names.
    pub members: Vec<String>,
    /// The authored mass (kg), if the file gives one.
    pub mass: Option<f32>,
    /// The authored centre of mass (body frame), if given.
    pub centre_of_mass: Option<[f32; 3]>,
    /// The authored principal moments of inertia (kg·m²), if given.
    pub inertia: Option<[f32; 3]>,
}

/// [`inspect`] of a level the runtime has opened.
pub fn inspect_level(level: &kiln_runtime::Level) -> InspectReport {
    inspect(&Archive {
        header: *level.header(),
        level: level.archive(),
        byte_len: level.byte_len(),
    })
}

/// Inspects a validated archive.
pub fn inspect(archive: &Archive) -> InspectReport {
    let (a, h) = (archive.level, &archive.header);
    let mut s = Sections {
        header: kiln_formats::HEADER_LEN,
        ..Sections::default()
    };
    // per shape: (triangles, depth, tree kind)
    let mut shape_rows = Vec::with_capacity(a.colliders.len());
    let mut collider_kinds = std::collections::BTreeMap::new();
    let (mut stored, mut sah_sum, mut max_depth) = (0usize, 0.0f64, 0usize);
    // payload bytes per shape: what its arm adds to the sections
    let mut shape_bytes = Vec::with_capacity(a.colliders.len());
    for shape in a.colliders.iter() {
        let before = s.payload();
        *collider_kinds.entry(shape.kind_name()).or_insert(0) += 1;
        match shape {
            ArchivedCollider::TriMesh(m) => {
                s.add_mesh(m);
                s.names += m.name.len();
                // verified at open, so this cannot fail; stats only
                let st = mesh_tree_stats(m).unwrap_or_default();
                let tris = m.triangle_count();
                shape_rows.push((tris, st.depth, m.tree.kind().name()));
                stored += tris;
                sah_sum += st.sah_cost * tris as f64;
                max_depth = max_depth.max(st.depth);
            }
            ArchivedCollider::Polytope(p) => {
                let (vertices, planes) = polytope_bytes(p);
                s.vertices += vertices;
                s.planes += planes;
                shape_rows.push((0, 0, "-"));
            }
            ArchivedCollider::Cuboid(_)
            | ArchivedCollider::Sphere(_)
            | ArchivedCollider::Capsule(_) => {
                shape_rows.push((0, 0, "-"));
            }
            ArchivedCollider::Bsp(b) => {
                let m = &b.surface;
                s.add_mesh(m);
                s.mesh_nodes += b.nodes.len() * 12;
                s.planes += b.planes.len() * 16;
                shape_rows.push((m.triangle_count(), 0, "bsp"));
            }
        }
        shape_bytes.push(s.payload() - before);
    }
    for p in a.decompositions.iter().flat_map(|d| d.pieces.iter()) {
        let (vertices, planes) = polytope_bytes(p);
        s.pieces += vertices + planes;
    }
    s.instances = a.instances.len() * std::mem::size_of::<kiln_formats::level::ArchivedInstance>();
    s.top_nodes = a.top.nodes.node_bytes();
    s.instances += a.affines.len() * std::mem::size_of::<kiln_formats::level::ArchivedAffine>();
    s.names += a.names.iter().map(|n| n.name.len()).sum::<usize>();
    s.names += a.rules.iter().map(|n| n.len()).sum::<usize>();
    s.other = archive.byte_len.saturating_sub(s.payload());
    // the top tree's statistics and its leaf boxes, by instance (as
    // stored: rounded outward)
    let (top, inst_boxes) = kiln_formats::verify::top_tree_stats(a).unwrap_or_else(|_| {
        (
            Default::default(),
            vec![([0.0f32; 3], [0.0f32; 3]); a.instances.len()],
        )
    });
    let mut world_triangles = 0;
    let objects: Vec<ObjectRow> = a
        .instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let si = inst.collider.to_native();
            let (tris, depth, tree) = shape_rows[si as usize];
            world_triangles += tris;
            ObjectRow {
                instance: i,
                name: a.instance_name(i).to_string(),
                collider: si,
                kind: a.colliders[si as usize].kind_name(),
                rule: a.instance_rule(i).to_string(),
                layers: a
                    .layer_names
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| inst.layers.to_native() & (1 << k) != 0)
                    .map(|(_, n)| n.to_string())
                    .collect(),
                motion: inst.motion().name(),
                trigger: inst.is_trigger(),
                triangles: tris,
                depth,
                tree,
                bounds: match inst_boxes.get(i) {
                    Some(&(lo, hi)) => [lo, hi],
                    None => placed_box(a, inst),
                },
                collider_bytes: shape_bytes[si as usize],
                pieces: a.decomposition(si).map(|d| {
                    // the largest length a unit of the collider takes
                    let m = a.rows(inst).world_from_local;
                    let scale = (0..3)
                        .map(|k| (m[k] * m[k] + m[4 + k] * m[4 + k] + m[8 + k] * m[8 + k]).sqrt())
                        .fold(0.0f32, f32::max);
                    PiecesRow {
                        count: d.pieces.len(),
                        vertices: d.pieces.iter().map(|p| p.vertices.len()).sum(),
                        primitives: ["cuboid", "sphere", "capsule"]
                            .map(|k| d.shapes.iter().filter(|s| s.kind.name() == k).count()),
                        concavity: d.concavity.to_native() * scale,
                        coverage: d.coverage.to_native() * scale,
                    }
                }),
            }
        })
        .collect();
    let bodies = a
        .bodies
        .iter()
        .map(|b| {
            use kiln_formats::level::{AUTHORED_CENTRE, AUTHORED_INERTIA, AUTHORED_MASS};
            let has = |bit: u32| b.authored.to_native() & bit != 0;
            BodyRow {
                name: b.name.to_string(),
                motion: if b.motion.to_native() == kiln_formats::level::DYNAMIC {
                    "dynamic"
                } else {
                    "kinematic"
                },
                members: b
                    .members
                    .iter()
                    .map(|m| a.instance_name(m.to_native() as usize).into_owned())
                    .collect(),
                mass: has(AUTHORED_MASS).then(|| b.mass.to_native()),
                centre_of_mass: has(AUTHORED_CENTRE)
                    .then(|| b.centre_of_mass.map(|x| x.to_native())),
                inertia: has(AUTHORED_INERTIA).then(|| b.inertia_diagonal.map(|x| x.to_native())),
            }
        })
        .collect();
    InspectReport {
        bodies,
        format_version: h.format_version,
        baker_version: format!(
            "{}.{}.{}",
            h.baker_version[0], h.baker_version[1], h.baker_version[2]
        ),
        content_hash: h.content_hash.iter().map(|b| format!("{b:02x}")).collect(),
        bytes: archive.byte_len,
        sections: s,
        colliders: a.colliders.len(),
        collider_kinds,
        instances: a.instances.len(),
        stored_triangles: stored,
        world_triangles,
        bytes_per_triangle: if stored > 0 {
            archive.byte_len as f64 / stored as f64
        } else {
            0.0
        },
        max_mesh_depth: max_depth,
        mesh_sah_cost: if stored > 0 {
            sah_sum / stored as f64
        } else {
            0.0
        },
        top_depth: top.depth,
        top_sah_cost: top.sah_cost,
        top_nodes_form: match a.top.nodes {
            kiln_formats::level::ArchivedTopNodes::Floats(_) => "float",
            kiln_formats::level::ArchivedTopNodes::Boxes(_) => "quantised",
        },
        bounds: (a.top.leaves.to_native() > 0).then(|| {
            [
                a.top.min.map(|v| v.to_native()),
                a.top.max.map(|v| v.to_native()),
            ]
        }),
        bounds_all: objects.iter().map(|o| o.bounds).reduce(|a, b| {
            [
                std::array::from_fn(|k| a[0][k].min(b[0][k])),
                std::array::from_fn(|k| a[1][k].max(b[1][k])),
            ]
        }),
        layers: a.layer_names.iter().map(|n| n.to_string()).collect(),
        objects,
    }
}

/// Human-readable form of the report.
pub fn to_text(r: &InspectReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "format v{}  baker {}  content {}",
        r.format_version, r.baker_version, r.content_hash
    );
    let _ = writeln!(
        s,
        "{} bytes, {} colliders, {} instances, {} triangles stored ({} in the world), {:.1} bytes/triangle",
        r.bytes,
        r.colliders,
        r.instances,
        r.stored_triangles,
        r.world_triangles,
        r.bytes_per_triangle
    );
    let kinds: Vec<String> = r
        .collider_kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let _ = writeln!(s, "colliders by kind: {}", kinds.join(", "));
    let x = &r.sections;
    let _ = writeln!(
        s,
        "sections: header {} | vertices {} | triangles {} | source ids {} | mesh nodes {} | planes {} | pieces {} | instances {} | top nodes {} | names {} | other {}",
        x.header,
        x.vertices,
        x.triangles,
        x.source_ids,
        x.mesh_nodes,
        x.planes,
        x.pieces,
        x.instances,
        x.top_nodes,
        x.names,
        x.other
    );
    let _ = writeln!(
        s,
        "mesh trees: max depth {}, SAH cost {:.2} (triangle-weighted) | top tree: {} nodes, depth {}, SAH cost {:.2}",
        r.max_mesh_depth, r.mesh_sah_cost, r.top_nodes_form, r.top_depth, r.top_sah_cost
    );
    let movers = r
        .objects
        .iter()
        .filter(|o| o.motion != "static" || o.trigger)
        .count();
    match (r.bounds, r.bounds_all) {
        (Some(b), Some(all)) if b == all => {
            let _ = writeln!(
                s,
                "bounds: {:?} .. {:?}{}",
                b[0],
                b[1],
                if movers > 0 {
                    format!(" (the {movers} movers and triggers, where baked, lie inside)")
                } else {
                    String::new()
                }
            );
        }
        (b, all) => {
            match b {
                Some(b) => {
                    let _ = writeln!(s, "bounds of the static objects: {:?} .. {:?}", b[0], b[1]);
                }
                None => {
                    let _ = writeln!(s, "bounds of the static objects: none (no static object)");
                }
            }
            if let Some(all) = all {
                let _ = writeln!(
                    s,
                    "bounds with the {movers} movers and triggers where baked: {:?} .. {:?}",
                    all[0], all[1]
                );
            }
        }
    }
    let _ = writeln!(s, "collision layers: {}", r.layers.join(", "));
    let decomposed: Vec<&ObjectRow> = r.objects.iter().filter(|o| o.pieces.is_some()).collect();
    if !decomposed.is_empty() {
        let _ = writeln!(
            s,
            "convex pieces (for physics engines; queries answer on the collider): {} objects",
            decomposed.len()
        );
        for o in decomposed {
            let p = o.pieces.as_ref().expect("filtered");
            let [b, sp, c] = p.primitives;
            let prims = if b + sp + c > 0 {
                format!("  as primitives: {b} boxes, {sp} spheres, {c} capsules")
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "  {:<24}  {:>4} pieces  {:>5} vertices  concavity {:.4} m  coverage {:.4} m{prims}",
                o.name, p.count, p.vertices, p.concavity, p.coverage
            );
        }
    }
    if !r.bodies.is_empty() {
        let _ = writeln!(
            s,
            "rigid bodies (glTF physics; their objects move as one): {}",
            r.bodies.len()
        );
        for b in &r.bodies {
            let mut said = String::new();
            if let Some(m) = b.mass {
                let _ = write!(said, "  mass {m} kg");
            }
            if let Some(c) = b.centre_of_mass {
                let _ = write!(said, "  centre of mass {c:?}");
            }
            if let Some(i) = b.inertia {
                let _ = write!(said, "  inertia {i:?} kg m²");
            }
            if said.is_empty() {
                said.push_str("  mass from the density");
            }
            let _ = writeln!(
                s,
                "  {:<24}  {:<9}  {}{said}",
                b.name,
                b.motion,
                b.members.join(", ")
            );
        }
    }
    let _ = writeln!(
        s,
        "{:>6}  {:>8}  {:<9}  {:>9}  {:>6}  {:>5}  {:<24}  {:<16}  {:<17}  rule",
        "inst", "collider", "kind", "triangles", "tree", "depth", "name", "layers", "motion"
    );
    for o in &r.objects {
        let _ = writeln!(
            s,
            "{:>6}  {:>8}  {:<9}  {:>9}  {:>6}  {:>5}  {:<24}  {:<16}  {:<17}  {}",
            o.instance,
            o.collider,
            o.kind,
            o.triangles,
            o.tree,
            o.depth,
            o.name,
            o.layers.join(","),
            match (o.motion, o.trigger) {
                ("static", false) => "-".to_string(),
                ("static", true) => "trigger".to_string(),
                (m, false) => m.to_string(),
                (m, true) => format!("{m} trigger"),
            },
            o.rule
        );
    }
    s
}

/// The world box around an instance's collider at its stored placement
/// (the box of its local box's corners).
fn placed_box(
    a: &kiln_formats::ArchivedLevel,
    inst: &kiln_formats::level::ArchivedInstance,
) -> [[f32; 3]; 2] {
    let (lo, hi) = a.colliders[inst.collider.to_native() as usize].local_box();
    let m = a.rows(inst).world_from_local;
    let (mut wlo, mut whi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for k in 0..8 {
        let c = [
            if k & 1 == 0 { lo[0] } else { hi[0] },
            if k & 2 == 0 { lo[1] } else { hi[1] },
            if k & 4 == 0 { lo[2] } else { hi[2] },
        ];
        for r in 0..3 {
            let v = m[4 * r] * c[0] + m[4 * r + 1] * c[1] + m[4 * r + 2] * c[2] + m[4 * r + 3];
            wlo[r] = wlo[r].min(v);
            whi[r] = whi[r].max(v);
        }
    }
    [wlo, whi]
}
