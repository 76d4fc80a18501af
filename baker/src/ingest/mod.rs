//! Ingest: a glTF 2.0 file becomes a [`Scene`] of unique meshes and their
//! world placements.
//!
//! Covered: `.gltf` (external or data-URI buffers) and `.glb`; the default
//! scene (else the first, else every root node; scenes without `nodes` and
//! documents without scenes are empty, with a warning); node hierarchies
//! with TRS or matrices, accumulated in f64; triangle lists, strips and fans
//! (points and lines skipped with a warning); indexed and non-indexed
//! primitives; sparse accessors; integer and normalised positions
//! (KHR_mesh_quantization); EXT_meshopt_compression; KHR_draco_mesh_compression
//! (`draco.rs`); EXT_mesh_gpu_instancing (one placement per instance, the
//! node's transform applied after the instance's); morph targets with the
//! node's `weights`, else the mesh's (a node with its own weights gets its
//! own mesh); glTF physics colliders (`physics.rs`). A mesh used by several
//! nodes becomes one mesh and several instances. Required extensions that
//! do not change geometry are accepted with a note; unknown ones are refused.

mod accessor;
mod document;
mod draco;
mod meshopt;
pub mod physics;

use crate::kind::ColliderKind;
use crate::scene::{Authored, Motion, Scene, SceneInstance, SceneMesh};
use glam::{DAffine3, DMat4, DQuat, DVec3};
use gltf::json::{self, mesh::Mode, mesh::Semantic, validation::Checked};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A file that could not be ingested, and why.
#[derive(Debug, Error)]
#[error("{}: {kind}", path.display())]
pub struct IngestError {
    /// The input file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: IngestErrorKind,
}

/// The reasons ingest can fail.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IngestErrorKind {
    /// The file could not be read.
    #[error("{0}")]
    Io(String),
    /// The GLB container or file type is wrong.
    #[error("not a valid glTF container: {0}")]
    Container(String),
    /// The JSON does not parse as glTF.
    #[error("invalid glTF JSON: {0}")]
    Json(String),
    /// A KHR_draco_mesh_compression stream that does not decode.
    #[error("{0}")]
    Draco(String),
    /// A required extension this baker does not implement and that may
    /// change geometry.
    #[error(
        "requires the extension {0}, which this baker does not implement (it may change geometry; see the README's extension table)"
    )]
    UnsupportedExtension(String),
    /// A buffer is missing or malformed.
    #[error("buffer {index} {problem}")]
    Buffer {
        /// Buffer index.
        index: usize,
        /// What is wrong.
        problem: String,
    },
    /// Anything else structurally wrong (bad index, accessor out of range…).
    #[error("{0}")]
    Invalid(String),
}

/// What ingest produced, with the hash of its input for up-to-date checks.
pub struct Ingested {
    /// The scene.
    pub scene: Scene,
    /// xxh3-128 of every input file read (the document, then external
    /// buffers, each prefixed by its length).
    pub input_hash: u128,
}

/// A glTF file and every buffer it uses, read and parsed but not yet
/// turned into a scene: enough to know what a bake depends on
/// ([`Source::files`], [`Source::input_hash`]) before building anything.
pub struct Source {
    path: PathBuf,
    doc: document::Document,
    read_ms: f64,
}

impl Source {
    /// Reads the document at `path` and its buffers.
    pub fn read(path: &Path) -> Result<Source, IngestError> {
        let t0 = std::time::Instant::now();
        let doc = document::load(path).map_err(|kind| IngestError {
            path: path.to_path_buf(),
            kind,
        })?;
        Ok(Source {
            path: path.to_path_buf(),
            doc,
            read_ms: t0.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// xxh3-128 of every input byte (as [`Ingested::input_hash`]).
    pub fn input_hash(&self) -> u128 {
        self.doc.input_hash
    }

    /// Every file read: the document, then external buffers.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.path.clone()];
        files.extend(self.doc.files.iter().cloned());
        files
    }

    /// Time spent reading and parsing, in milliseconds.
    pub fn read_ms(&self) -> f64 {
        self.read_ms
    }

    /// Decodes the meshes and walks the scene.
    pub fn scene(&self) -> Result<Scene, IngestError> {
        build_scene(&self.doc).map_err(|kind| IngestError {
            path: self.path.clone(),
            kind,
        })
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("path", &self.path).finish()
    }
}

/// Reads a `.gltf`/`.glb` file into a scene.
pub fn load(path: &Path) -> Result<Ingested, IngestError> {
    let source = Source::read(path)?;
    Ok(Ingested {
        scene: source.scene()?,
        input_hash: source.input_hash(),
    })
}

/// Parses an in-memory `.gltf`/`.glb` (external buffers resolve against
/// `base_dir`). `name` is used in errors. Used by fuzzing and tests.
pub fn load_bytes(bytes: Vec<u8>, base_dir: &Path, name: &Path) -> Result<Ingested, IngestError> {
    let wrap = |kind| IngestError {
        path: name.to_path_buf(),
        kind,
    };
    let doc = document::parse(bytes, base_dir).map_err(wrap)?;
    let scene = build_scene(&doc).map_err(wrap)?;
    Ok(Ingested {
        scene,
        input_hash: doc.input_hash,
    })
}

/// Guards against absurd or hostile hierarchies.
const MAX_NODE_DEPTH: usize = 1024;

fn build_scene(doc: &document::Document) -> Result<Scene, IngestErrorKind> {
    let root = &doc.root;
    let views = accessor::Views::new(doc);
    let mut scene = Scene::default();
    let mut mesh_map = MeshCache::new(root.meshes.len());
    let mut warned_skin = false;
    let catalog = physics::Catalog::new(root).map_err(IngestErrorKind::Invalid)?;
    // world transforms of the nodes the walk reaches, and the nodes that
    // carry colliders (resolved after the walk: `geometry.node` may name a
    // node visited later)
    let mut worlds: Vec<Option<DAffine3>> = vec![None; root.nodes.len()];
    let mut colliders: Vec<NodeShape> = Vec::new();
    let mut unread_triggers = 0usize;
    // compounds `baker export` writes: a concave object's node (by node,
    // its scene mesh) whose children are its convex pieces
    let mut compounds = Compounds::new(root.nodes.len());

    // which nodes start the walk
    let roots: Vec<usize> = match root.scene.map(|s| s.value()).or(if root.scenes.is_empty() {
        None
    } else {
        Some(0)
    }) {
        Some(s) => {
            let sc = root.scenes.get(s).ok_or_else(|| {
                IngestErrorKind::Invalid(format!("default scene {s} does not exist"))
            })?;
            sc.nodes.iter().map(|n| n.value()).collect()
        }
        None => {
            let mut is_child = vec![false; root.nodes.len()];
            for n in &root.nodes {
                for c in n.children.iter().flatten() {
                    if let Some(f) = is_child.get_mut(c.value()) {
                        *f = true;
                    }
                }
            }
            (0..root.nodes.len()).filter(|&i| !is_child[i]).collect()
        }
    };

    // walk the hierarchy depth-first, in document order
    let mut visited = vec![false; root.nodes.len()];
    // (node, parent's world transform, depth, the motion of the body the
    // node is in and that body in `scene.bodies` where it is a moving one,
    // the parent node)
    type Visit = (
        usize,
        DAffine3,
        usize,
        (Motion, Option<usize>),
        Option<usize>,
    );
    let mut stack: Vec<Visit> = roots
        .iter()
        .rev()
        .map(|&n| (n, DAffine3::IDENTITY, 0, (Motion::Static, None), None))
        .collect();
    while let Some((ni, parent, depth, inherited, parent_node)) = stack.pop() {
        let node = root
            .nodes
            .get(ni)
            .ok_or_else(|| IngestErrorKind::Invalid(format!("node {ni} does not exist")))?;
        if std::mem::replace(&mut visited[ni], true) {
            return Err(IngestErrorKind::Invalid(format!(
                "node {ni} is reached twice (a cycle or a node with two parents)"
            )));
        }
        if depth > MAX_NODE_DEPTH {
            return Err(IngestErrorKind::Invalid(format!(
                "node hierarchy deeper than {MAX_NODE_DEPTH}"
            )));
        }
        let world = parent * local_transform(node, ni)?;
        worlds[ni] = Some(world);
        compounds.parent[ni] = parent_node;
        let body = physics::node_body(node)
            .map_err(|e| IngestErrorKind::Invalid(format!("node {ni}: {e}")))?;
        unread_triggers += usize::from(body.unread_trigger);
        // a body with a motion starts here: a moving one is a rigid body
        // of its own, a static one ends the body above
        let (motion, in_body) = match body.motion {
            None => inherited,
            Some(Motion::Static) => (Motion::Static, None),
            Some(m) => {
                scene.bodies.push(crate::scene::SceneBody {
                    name: node.name.clone().unwrap_or_else(|| format!("node{ni}")),
                    motion: m,
                    transform: world,
                    mass: body.mass,
                });
                (m, Some(scene.bodies.len() - 1))
            }
        };
        let beside_collider = body.collider.is_some() || body.trigger.is_some();
        for (shape, trigger) in [(body.collider, false), (body.trigger, true)] {
            if let Some(c) = shape {
                colliders.push(NodeShape {
                    node: ni,
                    collider: c,
                    motion,
                    body: in_body,
                    trigger,
                });
            }
        }
        // a mesh node's own extras say how its object moves
        let (own_motion, own_trigger) = extras_role(node)
            .map_err(|e| IngestErrorKind::Invalid(format!("node {ni}: extras: {e}")))?;
        // a compound's piece is read with its collider, not drawn
        let piece = compounds.piece_of(node, ni).is_some();
        if let Some(mi) = node.mesh.map(|m| m.value()).filter(|_| !piece) {
            let scene_mesh = scene_mesh_of(
                doc,
                &views,
                &mut scene,
                &mut mesh_map,
                (ni, mi),
                node.weights.as_deref(),
            )?;
            // glTF ignores the node transform of a skinned mesh; without a
            // pose we bake the bind pose, in mesh space.
            let transform = if node.skin.is_some() {
                if !warned_skin {
                    scene.warnings.push(
                        "skinned meshes are baked in their bind pose (mesh space); joints are not applied"
                            .into(),
                    );
                    warned_skin = true;
                }
                DAffine3::IDENTITY
            } else {
                world
            };
            let name = node
                .name
                .clone()
                .or_else(|| root.meshes.get(mi).and_then(|m| m.name.clone()))
                .unwrap_or_else(|| format!("node{ni}"));
            let extras_collider = extras_str(node, "collider");
            let layers = extras_layers(node);
            let instancing = node
                .extensions
                .as_ref()
                .and_then(|e| e.others.get("EXT_mesh_gpu_instancing"));
            // one placement, or one per GPU instance (the node's transform
            // applied after each instance's)
            let placements: Vec<(String, DAffine3)> = match instancing {
                None => vec![(name, transform)],
                Some(ext) => instances(doc, &views, ext)
                    .map_err(|e| {
                        IngestErrorKind::Invalid(format!("node {ni}: EXT_mesh_gpu_instancing: {e}"))
                    })?
                    .into_iter()
                    .enumerate()
                    .map(|(k, t)| (format!("{name}#{k}"), transform * t))
                    .collect(),
            };
            let corners = box_corners(&scene.meshes[scene_mesh]);
            // a concave object whose children are its convex pieces
            let compound = extras(node)
                .and_then(|x| x.get("kiln_pieces").and_then(|v| v.as_u64()))
                .filter(|_| instancing.is_none());
            let physics = compound.map(|n| {
                compounds.mesh_of.insert(ni, scene_mesh);
                // a concave solid, else the triangles it was
                let (kind, what) =
                    if extras_str(node, "kiln_collider").as_deref() == Some("concave") {
                        (ColliderKind::Bsp, "a concave solid")
                    } else {
                        (ColliderKind::TriMesh, "a triangle mesh")
                    };
                Authored {
                    kind,
                    rule: format!(
                        "{what} whose {n} child nodes are its convex pieces (extras kiln_pieces)"
                    ),
                }
            });
            let mut singular = 0usize;
            for (name, transform) in placements {
                if !placeable(&corners, &transform)
                    .map_err(|p| IngestErrorKind::Invalid(format!("node {ni}: {p}")))?
                {
                    singular += 1;
                    continue;
                }
                scene.instances.push(SceneInstance {
                    name,
                    mesh: scene_mesh,
                    transform,
                    extras_collider: extras_collider.clone(),
                    layers: layers.clone(),
                    physics: physics.clone(),
                    beside_collider: beside_collider && physics.is_none(),
                    motion: own_motion.unwrap_or(motion),
                    trigger: own_trigger,
                    // the body's, unless its own extras move it otherwise
                    body: in_body.filter(|_| own_motion.is_none_or(|m| m == motion)),
                });
            }
            if singular > 0 {
                scene.warnings.push(format!(
                    "node {ni}: {singular} placement(s) with a singular transform (zero scale) skipped"
                ));
            }
        }
        for c in node.children.iter().flatten().rev() {
            stack.push((c.value(), world, depth + 1, (motion, in_body), Some(ni)));
        }
    }
    add_colliders(
        doc,
        &views,
        &catalog,
        &colliders,
        (&worlds, &compounds),
        &mut scene,
        &mut mesh_map,
    )?;
    if unread_triggers > 0 {
        scene.warnings.push(format!(
            "{unread_triggers} compound physics trigger(s) made of other nodes (`trigger.nodes`) are not baked"
        ));
    }
    scene.notes.extend(doc.notes.iter().cloned());
    if scene.instances.is_empty() {
        scene.warnings.push(
            "no collision geometry in this file (no node draws a mesh and nothing authors a collider); the archive is empty".into(),
        );
    }
    let unused = mesh_map.used.iter().filter(|&&u| !u).count();
    if unused > 0 {
        scene.warnings.push(format!(
            "{unused} of {} meshes are used by no node of the scene and no collider; they are not baked",
            mesh_map.used.len()
        ));
    }
    Ok(scene)
}

/// The string a node's `extras` object holds under `key`, if any.
fn extras_str(node: &json::Node, key: &str) -> Option<String> {
    extras(node)?.get(key)?.as_str().map(str::to_owned)
}

/// The node's `extras` as JSON, if it has some that parse.
fn extras(node: &json::Node) -> Option<serde_json::Value> {
    serde_json::from_str(node.extras.as_ref()?.get()).ok()
}

/// The node's `extras.motion` (`"static"`, `"kinematic"` or
/// `"dynamic"`) and `extras.trigger` (`true` or `false`); any other value
/// of either is an error.
fn extras_role(node: &json::Node) -> Result<(Option<Motion>, bool), String> {
    let Some(x) = extras(node) else {
        return Ok((None, false));
    };
    let motion = match x.get("motion") {
        None => None,
        Some(serde_json::Value::String(m)) => Some(
            Motion::parse(m)
                .ok_or_else(|| format!("motion {m:?} is not static, kinematic or dynamic"))?,
        ),
        Some(v) => return Err(format!("motion {v} is not a string")),
    };
    let trigger = match x.get("trigger") {
        None => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(v) => return Err(format!("trigger {v} is not true or false")),
    };
    Ok((motion, trigger))
}

/// The compounds `baker export` writes: a concave object's node says
/// `"extras": {"kiln_pieces": N}` and each child carrying one of its convex
/// pieces says `"extras": {"kiln_piece": k}` (with a convex-hull collider
/// of its own mesh, which physics engines read as the body's compound).
struct Compounds {
    /// Each reached node's parent.
    parent: Vec<Option<usize>>,
    /// The compound objects' nodes and their scene meshes (ordered, so the
    /// first node placing a mesh is found the same way every time).
    mesh_of: std::collections::BTreeMap<usize, usize>,
}

impl Compounds {
    fn new(nodes: usize) -> Self {
        Compounds {
            parent: vec![None; nodes],
            mesh_of: Default::default(),
        }
    }

    /// The compound object node `ni` is a piece of, if it is one.
    fn piece_of(&self, node: &json::Node, ni: usize) -> Option<usize> {
        let parent = self.parent.get(ni).copied().flatten()?;
        extras(node)?.get("kiln_piece")?;
        self.mesh_of.contains_key(&parent).then_some(parent)
    }
}

/// A compound piece in its object's mesh space: its node's mesh under the
/// node's own transform (the object's frame is the parent's), with the
/// faces `baker export` wrote in its extras (`kiln_normals`, `kiln_faces`)
/// when the node places the mesh rigidly. Its collider is its mesh's hull,
/// or a box, sphere or capsule (an implicit shape, placed by the node's
/// rigid transform) that stands in for it in physics engines.
fn piece_points(
    doc: &document::Document,
    views: &accessor::Views,
    (node, ni): (&json::Node, usize),
    (c, catalog): (physics::NodeCollider, &physics::Catalog),
    cache: &mut MeshCache,
    warnings: &mut Vec<String>,
) -> Result<crate::scene::AuthoredPiece, IngestErrorKind> {
    use crate::geom::fit::Primitive;
    use physics::Geometry;
    let bad = |e: String| IngestErrorKind::Invalid(format!("node {ni}: convex piece: {e}"));
    let local = local_transform(node, ni)?;
    let m3 = local.matrix3;
    let rigid = crate::geom::fit::is_rigid(&m3, 1e-5);
    let primitive = match c {
        physics::NodeCollider::Node { node: target, .. } if target == ni => None,
        physics::NodeCollider::Node { node: target, .. } => {
            return Err(bad(format!(
                "its collider names node {target}, not its own mesh"
            )));
        }
        physics::NodeCollider::Shape(r) => {
            let (g, ext, si) = catalog.shape(r).map_err(bad)?;
            let prim = match g {
                Geometry::Box(size) => Primitive::Cuboid((size * 0.5).as_vec3().to_array()),
                Geometry::Sphere(r) => Primitive::Sphere(r as f32),
                Geometry::Capsule(hh, b, t) if b == t => Primitive::Capsule(hh as f32, b as f32),
                _ => {
                    return Err(bad(format!(
                        "{ext} {si} is not a box, sphere or capsule (a piece's shape must be one, or its mesh's hull)"
                    )));
                }
            };
            if !rigid {
                return Err(bad(format!(
                    "{ext} {si} is placed by a transform that is not a rotation and translation"
                )));
            }
            Some((prim, local))
        }
    };
    let mi = node
        .mesh
        .map(|m| m.value())
        .ok_or_else(|| bad("no mesh".into()))?;
    if let Some(u) = cache.used.get_mut(mi) {
        *u = true;
    }
    let weights = node.weights.clone().unwrap_or_default();
    let m = read_mesh(doc, views, mi, &weights, warnings)?;
    let points = m
        .positions
        .iter()
        .map(|p| {
            local
                .transform_point3(DVec3::from(p.map(f64::from)))
                .as_vec3()
                .to_array()
        })
        .collect();
    // the faces as written (their normals turned as the points are), read
    // leniently: anything off and the piece is the hull of its points
    let faces = rigid
        .then(|| {
            let x = extras(node)?;
            let normals = x
                .get("kiln_normals")?
                .as_array()?
                .iter()
                .map(|n| {
                    let a = n.as_array()?;
                    let v: Vec<f64> = a.iter().filter_map(serde_json::Value::as_f64).collect();
                    (v.len() == 3 && a.len() == 3)
                        .then(|| m3.mul_vec3(DVec3::new(v[0], v[1], v[2])).to_array())
                })
                .collect::<Option<Vec<[f64; 3]>>>()?;
            let loops = x
                .get("kiln_faces")?
                .as_array()?
                .iter()
                .map(|l| {
                    l.as_array()?
                        .iter()
                        .map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()))
                        .collect::<Option<Vec<u32>>>()
                })
                .collect::<Option<Vec<Vec<u32>>>>()?;
            Some(crate::scene::PieceFaces { normals, loops })
        })
        .flatten();
    Ok(crate::scene::AuthoredPiece {
        points,
        faces,
        primitive,
    })
}

/// A collider or trigger a node's physics extension authors, with the
/// motion of the body it belongs to.
#[derive(Clone, Copy)]
struct NodeShape {
    node: usize,
    collider: physics::NodeCollider,
    motion: Motion,
    /// The rigid body it belongs to (`Scene::bodies`).
    body: Option<usize>,
    trigger: bool,
}

/// The node's `extras.layer`: a name, or a list of names (anything else
/// says nothing).
fn extras_layers(node: &json::Node) -> Vec<String> {
    match extras(node).as_ref().and_then(|v| v.get("layer")) {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The kind a physics mesh shape asks for, and how the rule says it.
fn mesh_collider(convex: bool) -> (ColliderKind, &'static str) {
    if convex {
        (ColliderKind::Polytope, "convex hull")
    } else {
        (ColliderKind::TriMesh, "triangles")
    }
}

/// Scene meshes already read: one per document mesh, and one per distinct
/// set of non-zero morph weights a node asks for.
struct MeshCache {
    plain: Vec<Option<usize>>,
    morphed: std::collections::HashMap<(usize, Vec<u32>), usize>,
    used: Vec<bool>,
}

impl MeshCache {
    fn new(n: usize) -> MeshCache {
        MeshCache {
            plain: vec![None; n],
            morphed: Default::default(),
            used: vec![false; n],
        }
    }
}

/// The scene mesh of document mesh `mi` (named by node `ni`) with morph
/// weights `node_weights` (else the mesh's own `weights`) applied, read on
/// first use.
fn scene_mesh_of(
    doc: &document::Document,
    views: &accessor::Views,
    scene: &mut Scene,
    cache: &mut MeshCache,
    (ni, mi): (usize, usize),
    node_weights: Option<&[f32]>,
) -> Result<usize, IngestErrorKind> {
    let mesh =
        doc.root.meshes.get(mi).ok_or_else(|| {
            IngestErrorKind::Invalid(format!("node {ni}: mesh {mi} does not exist"))
        })?;
    cache.used[mi] = true;
    let weights: Vec<f32> = node_weights
        .or(mesh.weights.as_deref())
        .unwrap_or(&[])
        .to_vec();
    let key: Vec<u32> = if weights.iter().all(|&w| w == 0.0) {
        Vec::new()
    } else {
        weights.iter().map(|w| w.to_bits()).collect()
    };
    let found = if key.is_empty() {
        cache.plain[mi]
    } else {
        cache.morphed.get(&(mi, key.clone())).copied()
    };
    if let Some(s) = found {
        return Ok(s);
    }
    let m = read_mesh(doc, views, mi, &weights, &mut scene.warnings)?;
    scene.meshes.push(m);
    let s = scene.meshes.len() - 1;
    if key.is_empty() {
        cache.plain[mi] = Some(s);
    } else {
        cache.morphed.insert((mi, key), s);
    }
    Ok(s)
}

/// Adds one instance per authored collider, in walk order, and marks the
/// scene as authoring its physics.
fn add_colliders(
    doc: &document::Document,
    views: &accessor::Views,
    catalog: &physics::Catalog,
    colliders: &[NodeShape],
    (worlds, compounds): (&[Option<DAffine3>], &Compounds),
    scene: &mut Scene,
    mesh_map: &mut MeshCache,
) -> Result<(), IngestErrorKind> {
    use physics::{Geometry, NodeCollider};
    let root = &doc.root;
    // one proxy mesh per implicit shape, however many nodes use it
    let mut proxies: std::collections::HashMap<(&'static str, usize), (usize, Authored)> =
        Default::default();
    for &NodeShape {
        node: ni,
        collider: c,
        motion,
        body,
        trigger,
    } in colliders
    {
        let bad = |e: String| IngestErrorKind::Invalid(format!("node {ni}: {e}"));
        let node = &root.nodes[ni];
        scene
            .authored_physics
            .get_or_insert_with(|| c.extension().to_string());
        // a compound's piece: its hull's points join its object's pieces
        // (the object's first node, when several place one mesh)
        if let Some(object) = compounds.piece_of(node, ni) {
            let mesh = compounds.mesh_of[&object];
            let first = compounds
                .mesh_of
                .iter()
                .find(|(_, m)| **m == mesh)
                .map(|(&n, _)| n);
            if first == Some(object) {
                let points = piece_points(
                    doc,
                    views,
                    (node, ni),
                    (c, catalog),
                    mesh_map,
                    &mut scene.warnings,
                )?;
                scene.pieces.entry(mesh).or_default().push(points);
            }
            continue;
        }
        let name = node.name.clone().unwrap_or_else(|| format!("node{ni}"));
        let (mesh, transform, authored) = match c {
            NodeCollider::Node {
                node: target,
                convex,
            } => {
                let t = root.nodes.get(target).ok_or_else(|| {
                    bad(format!("collider geometry node {target} does not exist"))
                })?;
                let Some(mi) = t.mesh.map(|m| m.value()) else {
                    scene.warnings.push(format!(
                        "node {ni}: collider geometry node {target} has no mesh; no collider"
                    ));
                    continue;
                };
                let Some(world) = worlds[target] else {
                    scene.warnings.push(format!(
                        "node {ni}: collider geometry node {target} is not in the scene; no collider"
                    ));
                    continue;
                };
                let m = scene_mesh_of(doc, views, scene, mesh_map, (ni, mi), t.weights.as_deref())?;
                let (mut kind, how) = mesh_collider(convex);
                let mut rule =
                    format!("KHR_physics_rigid_bodies: {how} of node {target}'s mesh {mi}");
                // glTF physics has no concave solid: a triangle-mesh
                // collider whose node says `"extras": {"kiln_collider":
                // "concave"}` (as `baker export` writes them) is one
                let concave = extras_str(node, "kiln_collider").as_deref() == Some("concave");
                if concave && !convex {
                    kind = ColliderKind::Bsp;
                    rule.push_str(", a concave solid (extras)");
                }
                (m, world, Authored { kind, rule })
            }
            NodeCollider::Shape(r) => {
                let (g, ext, si) = catalog.shape(r).map_err(bad)?;
                let world = worlds[ni].expect("collider nodes are visited");
                match g {
                    Geometry::Mesh { mesh: mi, convex } => {
                        let m = scene_mesh_of(doc, views, scene, mesh_map, (ni, mi), None)?;
                        let (kind, how) = mesh_collider(convex);
                        let rule = format!("{ext} {si}: {how} of mesh {mi}");
                        (m, world, Authored { kind, rule })
                    }
                    Geometry::Other(ty) => {
                        scene.warnings.push(format!(
                            "node {ni}: {ext} {si} is a {ty:?} shape, which this baker does not bake; no collider"
                        ));
                        continue;
                    }
                    _ => {
                        let (m, authored) = match proxies.get(&(ext, si)) {
                            Some(p) => p.clone(),
                            None => {
                                let (kind, rule, mesh) =
                                    physics::implicit(&g, ext, si).expect("an implicit shape");
                                scene.meshes.push(mesh);
                                let p = (scene.meshes.len() - 1, Authored { kind, rule });
                                proxies.insert((ext, si), p.clone());
                                p
                            }
                        };
                        (m, world, authored)
                    }
                }
            }
        };
        if !placeable(&box_corners(&scene.meshes[mesh]), &transform).map_err(bad)? {
            scene.warnings.push(format!(
                "node {ni}: transform is singular (zero scale); its collider is skipped"
            ));
            continue;
        }
        let layers = match physics::collision_systems(root, node) {
            Some(systems) => systems.map_err(bad)?,
            None => extras_layers(node),
        };
        scene.instances.push(SceneInstance {
            name,
            mesh,
            transform,
            extras_collider: None,
            layers,
            physics: Some(authored),
            beside_collider: false,
            motion,
            trigger,
            body,
        });
    }
    Ok(())
}

/// Largest coordinate magnitude archives hold, in mesh and world space: a
/// quarter of f32's range, so box extents and their decoding steps stay
/// finite.
const COORD_LIMIT: f32 = f32::MAX / 4.0;

/// The corners of a mesh's bounding box: the world-space extremes of the
/// mesh under any affine map are among their images.
fn box_corners(mesh: &SceneMesh) -> Vec<DVec3> {
    let Some(first) = mesh.positions.first() else {
        return Vec::new();
    };
    let first = DVec3::from(first.map(f64::from));
    let (lo, hi) = mesh.positions.iter().fold((first, first), |(l, h), p| {
        let p = DVec3::from(p.map(f64::from));
        (l.min(p), h.max(p))
    });
    (0..8)
        .map(|i| {
            DVec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            )
        })
        .collect()
}

/// Whether a mesh (given by its box corners) can be placed by `xf`:
/// `Ok(false)` for a singular transform (skipped with a warning), an error
/// when the geometry or a matrix would not fit in f32.
fn placeable(corners: &[DVec3], xf: &DAffine3) -> Result<bool, String> {
    let det = xf.matrix3.determinant();
    if det.abs() < 1e-30 || !det.is_finite() {
        return Ok(false);
    }
    out_of_range(corners, xf).map_or(Ok(true), Err)
}

/// Archives hold f32: the world-space geometry (given by its box corners)
/// and both matrices must fit.
fn out_of_range(corners: &[DVec3], xf: &DAffine3) -> Option<String> {
    const LIMIT: f64 = COORD_LIMIT as f64;
    let inv = xf.inverse();
    let matrices_fit = xf
        .to_cols_array()
        .iter()
        .chain(inv.to_cols_array().iter())
        .all(|v| v.abs() < LIMIT);
    if !matrices_fit {
        return Some("transform or its inverse does not fit in f32".into());
    }
    let too_far = corners
        .iter()
        .any(|p| xf.transform_point3(*p).abs().max_element() >= LIMIT);
    too_far.then(|| "world-space geometry exceeds the f32 range".into())
}

/// Most instances one node may place with `EXT_mesh_gpu_instancing`
/// (about 1 GB of scene at this count; forests of millions fit).
const MAX_GPU_INSTANCES: usize = 1 << 23;

/// The per-instance transforms of `EXT_mesh_gpu_instancing`: TRANSLATION,
/// ROTATION (unit quaternions, float or normalised integers) and SCALE
/// accessors, any of them absent (identity), all of one count.
fn instances(
    doc: &document::Document,
    views: &accessor::Views,
    ext: &serde_json::Value,
) -> Result<Vec<DAffine3>, String> {
    let attr = |k: &str| {
        ext.pointer(&format!("/attributes/{k}"))
            .map(|v| {
                v.as_u64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| format!("{k} is not an accessor index"))
            })
            .transpose()
    };
    let read = |k: &str, width: usize| -> Result<Option<Vec<f64>>, String> {
        match attr(k)? {
            None => Ok(None),
            Some(i) => accessor::read_f64(doc, views, i, width)
                .map(Some)
                .map_err(|e| format!("{k}: {e}")),
        }
    };
    let t = read("TRANSLATION", 3)?;
    let r = read("ROTATION", 4)?;
    let s = read("SCALE", 3)?;
    let counts: Vec<usize> = [(&t, 3), (&r, 4), (&s, 3)]
        .iter()
        .filter_map(|(v, w)| v.as_ref().map(|v| v.len() / w))
        .collect();
    let Some(&n) = counts.first() else {
        return Err("no TRANSLATION, ROTATION or SCALE attribute".into());
    };
    if counts.iter().any(|&c| c != n) {
        return Err(format!("attributes of different counts {counts:?}"));
    }
    if n > MAX_GPU_INSTANCES {
        return Err(format!(
            "{n} instances, more than the {MAX_GPU_INSTANCES} one node may place"
        ));
    }
    (0..n)
        .map(|k| {
            let v3 = |a: &Option<Vec<f64>>, d: f64| {
                a.as_ref().map_or(DVec3::splat(d), |a| {
                    DVec3::new(a[3 * k], a[3 * k + 1], a[3 * k + 2])
                })
            };
            let q = r.as_ref().map_or(DQuat::IDENTITY, |a| {
                DQuat::from_xyzw(a[4 * k], a[4 * k + 1], a[4 * k + 2], a[4 * k + 3])
            });
            let q = if q.length_squared() > 0.0 && q.is_finite() {
                q.normalize()
            } else {
                return Err(format!("instance {k}: ROTATION is not a quaternion"));
            };
            let xf = DAffine3::from_scale_rotation_translation(v3(&s, 1.0), q, v3(&t, 0.0));
            if xf.is_finite() {
                Ok(xf)
            } else {
                Err(format!("instance {k}: transform is not finite"))
            }
        })
        .collect()
}

fn local_transform(node: &json::Node, ni: usize) -> Result<DAffine3, IngestErrorKind> {
    let t = if let Some(m) = node.matrix {
        let m = DMat4::from_cols_array(&m.map(f64::from));
        DAffine3::from_mat4(m)
    } else {
        let t = DVec3::from(node.translation.unwrap_or([0.0; 3]).map(f64::from));
        let r = node
            .rotation
            .map_or([0.0, 0.0, 0.0, 1.0], |q| q.0)
            .map(f64::from);
        let s = DVec3::from(node.scale.unwrap_or([1.0; 3]).map(f64::from));
        let q = DQuat::from_array(r);
        let q = if q.length_squared() > 0.0 {
            q.normalize()
        } else {
            DQuat::IDENTITY
        };
        DAffine3::from_scale_rotation_translation(s, q, t)
    };
    if !t.is_finite() {
        return Err(IngestErrorKind::Invalid(format!(
            "node {ni}: transform is not finite"
        )));
    }
    Ok(t)
}

fn read_mesh(
    doc: &document::Document,
    views: &accessor::Views,
    mi: usize,
    weights: &[f32],
    warnings: &mut Vec<String>,
) -> Result<SceneMesh, IngestErrorKind> {
    let mesh = &doc.root.meshes[mi];
    let mut out = SceneMesh {
        name: mesh.name.clone().unwrap_or_default(),
        ..SceneMesh::default()
    };
    let mut source_id = 0u32;
    for (pi, prim) in mesh.primitives.iter().enumerate() {
        let ctx = |p: String| IngestErrorKind::Invalid(format!("mesh {mi} primitive {pi}: {p}"));
        let mode = match prim.mode {
            Checked::Valid(m) => m,
            Checked::Invalid => return Err(ctx("invalid mode".into())),
        };
        if matches!(
            mode,
            Mode::Points | Mode::Lines | Mode::LineLoop | Mode::LineStrip
        ) {
            warnings.push(format!(
                "mesh {mi} primitive {pi}: {mode:?} primitive skipped (no triangles)"
            ));
            continue;
        }
        let Some(pos) = prim.attributes.get(&Checked::Valid(Semantic::Positions)) else {
            warnings.push(format!(
                "mesh {mi} primitive {pi}: no POSITION attribute, skipped"
            ));
            continue;
        };
        let draco = prim
            .extensions
            .as_ref()
            .and_then(|e| e.others.get("KHR_draco_mesh_compression"));
        // Draco carries POSITION and the indices; a stream without POSITION
        // leaves the accessors to speak, as the extension allows
        let draco_position = draco.and_then(|d| d.pointer("/attributes/POSITION"));
        let (mut positions, indices): (Vec<[f32; 3]>, Option<Vec<u32>>) = match (
            draco,
            draco_position,
        ) {
            (Some(d), Some(id)) => {
                let bad =
                    |p: String| IngestErrorKind::Draco(format!("mesh {mi} primitive {pi}: {p}"));
                let id = id
                    .as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| {
                        bad("KHR_draco_mesh_compression attributes.POSITION is not an id".into())
                    })?;
                let view = d
                    .get("bufferView")
                    .and_then(|v| v.as_u64())
                    .ok_or_else(|| bad("KHR_draco_mesh_compression has no bufferView".into()))?;
                let bytes = views.bytes(view as usize)?;
                let (p, i) = draco::decode(bytes, id).map_err(bad)?;
                (p, Some(i))
            }
            _ => {
                let p = accessor::read_vec3(doc, views, pos.value())?;
                let quantized = doc.root.accessors.get(pos.value()).is_some_and(|a| {
                    !matches!(a.component_type, Checked::Valid(c) if c.0 == json::accessor::ComponentType::F32)
                });
                let declared = doc
                    .root
                    .extensions_required
                    .iter()
                    .any(|e| e == "KHR_mesh_quantization");
                let said = "without requiring KHR_mesh_quantization";
                if quantized && !declared && !warnings.iter().any(|w| w.contains(said)) {
                    warnings.push(format!(
                        "mesh {mi} primitive {pi}: integer POSITION {said}, as the glTF spec asks; read anyway"
                    ));
                }
                let i = match prim.indices {
                    Some(i) => Some(accessor::read_indices(doc, views, i.value())?),
                    None => None,
                };
                (p, i)
            }
        };
        // morph targets, with the instance's default weights
        let targets = prim.targets.as_deref().unwrap_or(&[]);
        for (k, target) in targets.iter().enumerate() {
            let w = weights.get(k).copied().unwrap_or(0.0);
            let Some(acc) = target.positions.filter(|_| w != 0.0) else {
                continue;
            };
            if draco_position.is_some() {
                warnings.push(format!(
                    "mesh {mi} primitive {pi}: morph target {k} is not applied to a Draco primitive"
                ));
                continue;
            }
            let d = accessor::read_vec3(doc, views, acc.value())?;
            if d.len() != positions.len() {
                return Err(ctx(format!(
                    "morph target {k} has {} positions for {} vertices",
                    d.len(),
                    positions.len()
                )));
            }
            for (p, d) in positions.iter_mut().zip(&d) {
                for c in 0..3 {
                    p[c] += w * d[c];
                }
            }
        }
        if let Some(i) = positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(ctx(format!("POSITION {i} is not a finite f32 vector")));
        }
        if let Some(i) = positions
            .iter()
            .position(|p| p.iter().any(|c| c.abs() >= COORD_LIMIT))
        {
            return Err(ctx(format!(
                "POSITION {i} is beyond ±{COORD_LIMIT:e}, the range archives hold"
            )));
        }
        let indices: Vec<u32> = indices.unwrap_or_else(|| (0..positions.len() as u32).collect());
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= positions.len()) {
            return Err(ctx(format!(
                "index {bad} is out of range for {} vertices",
                positions.len()
            )));
        }
        let base = out.positions.len() as u32;
        out.positions.extend_from_slice(&positions);
        for tri in triangles(mode, &indices) {
            out.push_triangle(tri.map(|i| i + base), source_id);
            source_id += 1;
        }
    }
    Ok(out)
}

/// Expands a primitive's index list into triangles, as the glTF spec defines
/// for each mode (strips alternate winding so every triangle keeps the
/// orientation of the first).
fn triangles(mode: Mode, idx: &[u32]) -> Vec<[u32; 3]> {
    match mode {
        Mode::Triangles => idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        Mode::TriangleStrip => (0..idx.len().saturating_sub(2))
            .map(|i| {
                if i % 2 == 0 {
                    [idx[i], idx[i + 1], idx[i + 2]]
                } else {
                    [idx[i + 1], idx[i], idx[i + 2]]
                }
            })
            .collect(),
        Mode::TriangleFan => (1..idx.len().saturating_sub(1))
            .map(|i| [idx[i], idx[i + 1], idx[0]])
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_fans_follow_the_spec() {
        assert_eq!(
            triangles(Mode::TriangleStrip, &[0, 1, 2, 3, 4]),
            vec![[0, 1, 2], [2, 1, 3], [2, 3, 4]]
        );
        assert_eq!(
            triangles(Mode::TriangleFan, &[0, 1, 2, 3]),
            vec![[1, 2, 0], [2, 3, 0]]
        );
        assert_eq!(triangles(Mode::Triangles, &[0, 1, 2, 3]), vec![[0, 1, 2]]);
        assert!(triangles(Mode::TriangleStrip, &[0, 1]).is_empty());
    }
}
