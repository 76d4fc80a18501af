//! Export: the colliders as glTF physics (`.glb`: what physics tools read,
//! with a preview mesh per collider any viewer shows), as world-space
//! triangles (`.obj`), or beside the source's render meshes (`--compare`).
//! One glTF node / OBJ object per instance, named after the source node,
//! so a collider can be traced back to what made it.

use kiln_formats::ArchivedLevel;
use kiln_formats::level::ArchivedCollider;
use kiln_formats::primitive::Cuboid;
use serde_json::json;
use std::fmt::Write as _;

/// One instance's triangles in world space.
pub struct ExportObject {
    /// Object (node) name.
    pub name: String,
    /// World-space vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Triangles as indices into `positions`.
    pub triangles: Vec<[u32; 3]>,
}

/// Collects every instance of the archive `a` in world space, in archive
/// order.
pub fn world_objects(a: &ArchivedLevel) -> Vec<ExportObject> {
    a.instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let (local_positions, triangles) =
                shape_mesh(&a.colliders[inst.collider.to_native() as usize]);
            let m = a.rows(inst).world_from_local;
            let positions = local_positions.iter().map(|&p| place(&m, p)).collect();
            // a mirroring placement turns every winding round: written in
            // world space on a plain node, each triangle is turned back, so
            // solids keep facing out and a mesh keeps the front glTF gives
            // it under the mirror
            let det = f64::from(m[0])
                * (f64::from(m[5]) * f64::from(m[10]) - f64::from(m[6]) * f64::from(m[9]))
                - f64::from(m[1])
                    * (f64::from(m[4]) * f64::from(m[10]) - f64::from(m[6]) * f64::from(m[8]))
                + f64::from(m[2])
                    * (f64::from(m[4]) * f64::from(m[9]) - f64::from(m[5]) * f64::from(m[8]));
            let triangles = if det < 0.0 {
                triangles.into_iter().map(|[a, b, c]| [a, c, b]).collect()
            } else {
                triangles
            };
            ExportObject {
                name: a.instance_name(i).to_string(),
                positions,
                triangles,
            }
        })
        .collect()
}

/// Segments around a tessellated sphere or capsule (and half as many
/// rings per hemisphere): the exported surface lies within
/// `r·(1 − cos(π/SEGMENTS))` ≈ 1.9% of the radius inside the true one.
pub const SEGMENTS: u32 = 16;

/// A shape as a triangle mesh in its local space: triangle meshes as
/// stored, polytopes' faces fanned into triangles, boxes as 12 triangles,
/// spheres and capsules tessellated with [`SEGMENTS`] segments, BSP trees
/// as the collider mesh they were built from.
pub fn shape_mesh(shape: &ArchivedCollider) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    match shape {
        ArchivedCollider::TriMesh(mesh) => (
            mesh.vertices.iter().collect(),
            mesh.triangles().map(|(t, _)| t).collect(),
        ),
        ArchivedCollider::Polytope(p) => polytope_mesh(p),
        ArchivedCollider::Cuboid(c) => {
            let h = c.half_extents.map(|x| x.to_native());
            let v = (0..8).map(|i| Cuboid::corner(h, i)).collect();
            (v, fan(Cuboid::FACES.iter().map(|q| &q[..])))
        }
        ArchivedCollider::Sphere(s) => rounded(0.0, s.radius.to_native()),
        ArchivedCollider::Capsule(c) => rounded(c.half_height.to_native(), c.radius.to_native()),
        ArchivedCollider::Bsp(b) => {
            // the collider's triangles back in collider order
            let mut tris: Vec<(u32, [u32; 3])> =
                b.surface.triangles().map(|(t, id)| (id, t)).collect();
            tris.sort_unstable_by_key(|&(id, _)| id);
            (
                b.surface.vertices.iter().collect(),
                tris.into_iter().map(|(_, t)| t).collect(),
            )
        }
    }
}

/// A polytope's faces fanned into triangles, in its local space.
pub fn polytope_mesh(
    p: &kiln_formats::polytope::ArchivedPolytope,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let loops: Vec<Vec<u32>> = (0..p.planes.len())
        .map(|k| p.face(k).iter().map(|v| u32::from(v.to_native())).collect())
        .collect();
    let tris = fan(loops.iter().map(|l| &l[..]));
    (
        p.vertices
            .iter()
            .map(|v| v.map(|c| c.to_native()))
            .collect(),
        tris,
    )
}

/// The convex pieces of instance `i`'s collider (none when it has no
/// decomposition), each as world-space triangles named `piece K`.
pub fn piece_objects(a: &ArchivedLevel, i: usize) -> Vec<ExportObject> {
    let Some(inst) = a.instances.get(i) else {
        return Vec::new();
    };
    let Some(d) = a.decomposition(inst.collider.to_native()) else {
        return Vec::new();
    };
    let m = a.rows(inst).world_from_local;
    d.pieces
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let (positions, triangles) = polytope_mesh(p);
            ExportObject {
                name: format!("piece {k}"),
                positions: positions.iter().map(|v| place(&m, *v)).collect(),
                triangles,
            }
        })
        .collect()
}

/// Convex face loops fanned into triangles (winding kept).
fn fan<'a>(loops: impl Iterator<Item = &'a [u32]>) -> Vec<[u32; 3]> {
    loops
        .flat_map(|f| (1..f.len() - 1).map(move |j| [f[0], f[j], f[j + 1]]))
        .collect()
}

/// A capsule along y (a sphere when `half` is 0) as rings of vertices.
fn rounded(half: f32, r: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let rings = SEGMENTS / 2; // per hemisphere, pole excluded
    let mut ring_y = Vec::new();
    for i in 1..=rings {
        let a = std::f32::consts::FRAC_PI_2 * (i as f32 / rings as f32);
        ring_y.push((-half - r * a.cos(), r * a.sin()));
    }
    // the top hemisphere from its equator (shared with the bottom one's
    // for a sphere) up to the ring below the pole
    let top_from = if half > 0.0 { rings } else { rings - 1 };
    for i in (1..=top_from).rev() {
        let a = std::f32::consts::FRAC_PI_2 * (i as f32 / rings as f32);
        ring_y.push((half + r * a.cos(), r * a.sin()));
    }
    let mut v = vec![[0.0, -half - r, 0.0]];
    for &(y, rr) in &ring_y {
        for s in 0..SEGMENTS {
            let t = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            v.push([rr * t.cos(), y, rr * t.sin()]);
        }
    }
    v.push([0.0, half + r, 0.0]);
    let top = v.len() as u32 - 1;
    let ring = |i: u32, s: u32| 1 + i * SEGMENTS + s % SEGMENTS;
    let last = ring_y.len() as u32 - 1;
    let mut tris = Vec::new();
    for s in 0..SEGMENTS {
        tris.push([0, ring(0, s), ring(0, s + 1)]);
        tris.push([top, ring(last, s + 1), ring(last, s)]);
        for i in 0..last {
            tris.push([ring(i, s), ring(i + 1, s), ring(i + 1, s + 1)]);
            tris.push([ring(i, s), ring(i + 1, s + 1), ring(i, s + 1)]);
        }
    }
    (v, tris)
}

/// A piece's `KHR_implicit_shapes` shape when it is given as a box,
/// sphere or capsule (`None` for its hull).
fn piece_implicit(s: &kiln_formats::level::ArchivedPieceShape) -> Option<serde_json::Value> {
    use kiln_formats::level::ArchivedPieceKind as K;
    Some(match &s.kind {
        K::Hull => return None,
        K::Cuboid(c) => box_shape(c),
        K::Sphere(b) => sphere_shape(b),
        K::Capsule(c) => capsule_shape(c),
    })
}

/// A box as a `KHR_implicit_shapes` shape.
fn box_shape(c: &kiln_formats::primitive::ArchivedCuboid) -> serde_json::Value {
    json!({"type": "box", "box": {"size": c.half_extents.map(|h| 2.0 * h.to_native())}})
}

/// A sphere as a `KHR_implicit_shapes` shape.
fn sphere_shape(b: &kiln_formats::primitive::ArchivedSphere) -> serde_json::Value {
    json!({"type": "sphere", "sphere": {"radius": b.radius.to_native()}})
}

/// A capsule as a `KHR_implicit_shapes` shape: its `height` is between
/// the caps' centres, along y.
fn capsule_shape(c: &kiln_formats::primitive::ArchivedCapsule) -> serde_json::Value {
    json!({"type": "capsule", "capsule": {
        "height": 2.0 * c.half_height.to_native(),
        "radiusTop": c.radius.to_native(), "radiusBottom": c.radius.to_native()}})
}

/// Wavefront OBJ text.
pub fn to_obj(objects: &[ExportObject]) -> String {
    let mut s = String::from("# Kiln collision export (world space)\n");
    let mut base = 1u64;
    for o in objects {
        let _ = writeln!(s, "o {}", o.name.replace(['\n', '\r'], " "));
        for p in &o.positions {
            let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
        }
        for t in &o.triangles {
            let _ = writeln!(
                s,
                "f {} {} {}",
                base + u64::from(t[0]),
                base + u64::from(t[1]),
                base + u64::from(t[2])
            );
        }
        base += o.positions.len() as u64;
    }
    s
}

/// The render meshes of a scene (what a viewer draws: every placed mesh
/// that is not an authored physics collider) in world space, one object
/// per node.
pub fn render_objects(scene: &crate::Scene) -> Vec<ExportObject> {
    scene
        .instances
        .iter()
        .filter(|i| i.physics.is_none() && !scene.meshes[i.mesh].proxy)
        .map(|inst| {
            let m = &scene.meshes[inst.mesh];
            ExportObject {
                name: inst.name.clone(),
                positions: m
                    .positions
                    .iter()
                    .map(|p| {
                        let w = inst
                            .transform
                            .transform_point3(glam::DVec3::from(p.map(f64::from)));
                        w.as_vec3().to_array()
                    })
                    .collect(),
                triangles: m.triangles.clone(),
            }
        })
        .collect()
}

/// Render meshes and colliders in one binary glTF file for looking at both
/// in any viewer: two parent nodes, `render` (opaque grey) and `colliders`
/// (translucent orange, double-sided), each with a node per object.
pub fn to_compare_glb(render: &[ExportObject], colliders: &[ExportObject]) -> Vec<u8> {
    glb_of(&[
        Group {
            name: "render",
            objects: render,
            material: json!({
                "name": "render",
                "pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.7, 0.7, 1.0], "metallicFactor": 0.0, "roughnessFactor": 0.9}
            }),
        },
        Group {
            name: "colliders",
            objects: colliders,
            material: json!({
                "name": "collider",
                "pbrMetallicRoughness": {"baseColorFactor": [1.0, 0.45, 0.05, 0.45], "metallicFactor": 0.0, "roughnessFactor": 1.0},
                "alphaMode": "BLEND",
                "doubleSided": true
            }),
        },
    ])
}

/// Objects written under one parent node, in one material.
struct Group<'a> {
    name: &'a str,
    objects: &'a [ExportObject],
    material: serde_json::Value,
}

/// The buffer, views, accessors and meshes of a glTF file being written.
#[derive(Default)]
struct Gltf {
    bin: Vec<u8>,
    views: Vec<serde_json::Value>,
    accessors: Vec<serde_json::Value>,
    meshes: Vec<serde_json::Value>,
}

impl Gltf {
    /// Adds a triangle mesh named `name` (positions and u32 indices, in
    /// `material` if given) and returns its index.
    fn mesh(
        &mut self,
        name: &str,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        material: Option<usize>,
    ) -> usize {
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        let start = self.bin.len();
        for p in positions {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
                self.bin.extend_from_slice(&p[k].to_le_bytes());
            }
        }
        self.view(start, 34962);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": 5126, "count": positions.len(), "type": "VEC3", "min": lo, "max": hi}));
        let start = self.bin.len();
        for v in triangles.iter().flatten() {
            self.bin.extend_from_slice(&v.to_le_bytes());
        }
        self.view(start, 34963);
        self.accessors.push(json!({"bufferView": self.views.len() - 1, "componentType": 5125, "count": triangles.len() * 3, "type": "SCALAR"}));
        let n = self.accessors.len();
        let mut primitive = json!({"attributes": {"POSITION": n - 2}, "indices": n - 1});
        if let Some(m) = material {
            primitive["material"] = json!(m);
        }
        self.meshes
            .push(json!({"name": name, "primitives": [primitive]}));
        self.meshes.len() - 1
    }

    /// A buffer view over the bytes written since `start`.
    fn view(&mut self, start: usize, target: u32) {
        self.views.push(json!({"buffer": 0, "byteOffset": start, "byteLength": self.bin.len() - start, "target": target}));
    }

    /// The GLB file of `nodes` (the scene's roots listed) around what was
    /// written, with `extra` top-level members (materials, extensions).
    fn glb(
        self,
        nodes: Vec<serde_json::Value>,
        roots: Vec<usize>,
        extra: serde_json::Value,
    ) -> Vec<u8> {
        let mut doc = json!({
            "asset": {"version": "2.0", "generator": concat!("kiln baker ", env!("CARGO_PKG_VERSION"))},
            "scene": 0,
            "scenes": [{"nodes": roots}],
            "nodes": nodes,
        });
        if !self.meshes.is_empty() {
            doc["meshes"] = json!(self.meshes);
            doc["accessors"] = json!(self.accessors);
            doc["bufferViews"] = json!(self.views);
            doc["buffers"] = json!([{"byteLength": self.bin.len()}]);
        }
        if let serde_json::Value::Object(m) = extra {
            for (k, v) in m {
                doc[k] = v;
            }
        }
        glb(&doc, self.bin)
    }
}

/// A binary glTF 2.0 file: per group, a parent node and a mesh and a node
/// per object.
fn glb_of(groups: &[Group]) -> Vec<u8> {
    let mut out = Gltf::default();
    let mut nodes: Vec<serde_json::Value> = Vec::new();
    let mut materials = Vec::new();
    let mut roots = Vec::new();
    for g in groups {
        materials.push(g.material.clone());
        let first = nodes.len();
        for (i, o) in g.objects.iter().enumerate() {
            if o.triangles.is_empty() {
                continue;
            }
            let mesh = out.mesh(
                &o.name,
                &o.positions,
                &o.triangles,
                Some(materials.len() - 1),
            );
            nodes.push(json!({"name": o.name, "mesh": mesh, "extras": {"kiln_instance": i}}));
        }
        nodes.push(json!({"name": g.name, "children": (first..nodes.len()).collect::<Vec<_>>()}));
        roots.push(nodes.len() - 1);
    }
    out.glb(nodes, roots, json!({"materials": materials}))
}

/// Every collider of `level` as glTF physics, one node per object named
/// after it and placed by its instance transform: `KHR_physics_rigid_bodies`
/// colliders (static bodies; a mover's body has its `motion`, kinematic or
/// not, and a trigger volume is a `trigger`), each object's collision layers as the
/// collider's `collisionFilter` (`collisionSystems` named after the
/// layers; objects only in `default` name none), whose geometry is an analytic
/// `KHR_implicit_shapes` shape for boxes, spheres and capsules, the node's
/// own mesh with `convexHull` for polytopes, and the node's own mesh as
/// triangles for triangle meshes and concave solids (which also say
/// `"extras": {"kiln_collider": "concave"}`, so Kiln bakes them back as
/// solids). A concave solid or triangle mesh with convex pieces (not a
/// trigger) is a compound instead, as the extension makes one: its node
/// holds the body (its motion) and no collider, and one child node per
/// piece holds that piece's mesh as a `convexHull` collider, so physics
/// engines simulate the pieces; the object's node says `"kiln_pieces": N`
/// and each piece's `"kiln_piece": k` (with its faces' normals and loops,
/// `kiln_normals` and `kiln_faces`) in `extras`, so Kiln bakes the object
/// back as the same concave solid or triangle mesh with the same pieces.
/// Each node's mesh is also its preview (spheres and capsules
/// tessellated with [`SEGMENTS`] segments), so any glTF viewer shows the
/// colliders and physics-aware tools (Blender, Godot, Bevy) read them as
/// what they are. An instance whose transform has shear (no glTF node can
/// hold it) is written in world space under an identity node.
pub fn to_physics_glb(a: &ArchivedLevel) -> Vec<u8> {
    use kiln_formats::level::ArchivedCollider as S;
    let mut out = Gltf::default();
    let (mut nodes, mut shapes) = (Vec::new(), Vec::new());
    let mut mesh_of_shape: std::collections::HashMap<u32, usize> = Default::default();
    // collision layers as physics collision filters, one per distinct set
    // of layers (objects only in `default` name none)
    let layer_names: Vec<&str> = a.layer_names.iter().map(|s| s.as_str()).collect();
    let mut filters: Vec<u32> = Vec::new();
    let mut roots: Vec<usize> = Vec::new();
    // each piece's preview mesh, by (collider, piece), shared by instances
    let mut mesh_of_piece: std::collections::HashMap<(u32, usize), usize> = Default::default();
    for (i, inst) in a.instances.iter().enumerate() {
        let name = a.instance_name(i);
        let shape = &a.colliders[inst.collider.to_native() as usize];
        // a decomposed solid is a compound of its pieces
        let pieces = a
            .decomposition(inst.collider.to_native())
            .filter(|_| matches!(shape, S::Bsp(_) | S::TriMesh(_)) && !inst.is_trigger());
        let m = a.rows(inst).world_from_local;
        let cols = [0, 1, 2].map(|c| glam::Vec3::new(m[c], m[4 + c], m[8 + c]));
        // a glTF node holds rotation and (non-uniform) scale, not shear
        let orthogonal = (0..3).all(|j| {
            let (u, v) = (cols[j], cols[(j + 1) % 3]);
            u.dot(v).abs() <= 1e-5 * u.length() * v.length()
        });
        let mut node = json!({"name": name, "extras": {"kiln_instance": i}});
        if orthogonal {
            // glTF matrices are column-major 4×4
            node["matrix"] = json!([
                m[0], m[4], m[8], 0.0, m[1], m[5], m[9], 0.0, m[2], m[6], m[10], 0.0, m[3], m[7],
                m[11], 1.0
            ]);
        }
        // glTF physics has no concave solid: the extras say it is one
        if matches!(shape, S::Bsp(_)) {
            node["extras"]["kiln_collider"] = json!("concave");
        }
        // primitives are analytic (verification guarantees they are placed
        // by similarities); the rest name the node's own mesh
        let geometry = match shape {
            S::Cuboid(c) => Some(box_shape(c)),
            S::Sphere(b) => Some(sphere_shape(b)),
            S::Capsule(c) => Some(capsule_shape(c)),
            _ => None,
        }
        .map(|implicit| {
            shapes.push(implicit);
            json!({"shape": shapes.len() - 1})
        })
        .unwrap_or_else(|| {
            let ni = nodes.len();
            match shape {
                S::Bsp(_) | S::TriMesh(_) if pieces.is_some() => serde_json::Value::Null,
                S::Polytope(_) => json!({"node": ni, "convexHull": true}),
                _ => json!({"node": ni}),
            }
        });
        let mask = inst.layers.to_native();
        let filter = (mask != 1).then(|| {
            filters.iter().position(|&f| f == mask).unwrap_or_else(|| {
                filters.push(mask);
                filters.len() - 1
            })
        });
        let collider = |geometry: serde_json::Value| {
            let mut c = json!({"geometry": geometry});
            if let Some(k) = filter {
                c["collisionFilter"] = json!(k);
            }
            c
        };
        // a trigger volume is a trigger, not a collider; a compound's
        // colliders are its pieces'; a mover's body says how it moves
        let mut body = if pieces.is_some() {
            json!({})
        } else if inst.is_trigger() {
            json!({"trigger": collider(geometry)})
        } else {
            json!({"collider": collider(geometry)})
        };
        match inst.motion() {
            kiln_formats::level::Motion::Kinematic => body["motion"] = json!({"isKinematic": true}),
            kiln_formats::level::Motion::Dynamic => body["motion"] = json!({}),
            kiln_formats::level::Motion::Static => {}
        }
        if body.as_object().is_some_and(|b| !b.is_empty()) {
            node["extensions"] = json!({"KHR_physics_rigid_bodies": body});
        }
        // the preview: one mesh per shape where nodes place it (instances
        // share it), in world space under a shearing transform
        let shared = orthogonal.then(|| inst.collider.to_native());
        let mesh = match shared.and_then(|k| mesh_of_shape.get(&k)) {
            Some(&mi) => Some(mi),
            None => {
                let (mut positions, triangles) = shape_mesh(shape);
                if !orthogonal {
                    for p in &mut positions {
                        *p = place(&m, *p);
                    }
                }
                let mi =
                    (!triangles.is_empty()).then(|| out.mesh(&name, &positions, &triangles, None));
                if let (Some(k), Some(mi)) = (shared, mi) {
                    mesh_of_shape.insert(k, mi);
                }
                mi
            }
        };
        if let Some(mi) = mesh {
            node["mesh"] = json!(mi);
        }
        let Some(d) = pieces else {
            roots.push(nodes.len());
            nodes.push(node);
            continue;
        };
        // the compound's pieces, in the object's frame (in world space
        // under a shearing transform, as its own preview)
        node["extras"]["kiln_pieces"] = json!(d.pieces.len());
        let pi = nodes.len();
        roots.push(pi);
        nodes.push(node);
        // a box, sphere or capsule stays one only under a similarity (a
        // glTF node scales an implicit shape with it)
        let similar = kiln_formats::level::similarity_scale(&m.map(f64::from), 1e-5).is_some();
        let mut children = Vec::new();
        for (k, p) in d.pieces.iter().enumerate() {
            let key = (inst.collider.to_native(), k);
            // a primitive piece's node stands at the primitive's frame,
            // its preview mesh and faces in that frame
            let frame = d
                .shapes
                .get(k)
                .and_then(|s| Some((piece_implicit(s)?, s)))
                .filter(|_| similar)
                .map(|(implicit, s)| {
                    let q = glam::Quat::from_array(s.rotation.map(|x| x.to_native())).normalize();
                    let c = glam::Vec3::from(s.centre.map(|x| x.to_native()));
                    (implicit, glam::Affine3A::from_rotation_translation(q, c))
                });
            let mi = match shared.and_then(|_| mesh_of_piece.get(&key)) {
                Some(&mi) => mi,
                None => {
                    let (mut positions, triangles) = polytope_mesh(p);
                    if !orthogonal {
                        for v in &mut positions {
                            *v = place(&m, *v);
                        }
                    }
                    if let Some((_, f)) = &frame {
                        let to_local = f.inverse();
                        for v in &mut positions {
                            *v = to_local.transform_point3(glam::Vec3::from(*v)).to_array();
                        }
                    }
                    let mi = out.mesh(&format!("{name} piece {k}"), &positions, &triangles, None);
                    if shared.is_some() {
                        mesh_of_piece.insert(key, mi);
                    }
                    mi
                }
            };
            let ci = nodes.len();
            // the faces as stored, so Kiln takes the piece back as it is
            // (a hull of f32 corners can come out with other faces)
            let mut extras = json!({"kiln_piece": k});
            if orthogonal {
                let turn = frame.as_ref().map_or(glam::Quat::IDENTITY, |(_, f)| {
                    glam::Quat::from_mat3a(&f.matrix3).inverse()
                });
                extras["kiln_normals"] = json!(
                    p.planes
                        .iter()
                        .map(|pl| {
                            let n = glam::Vec3::new(
                                pl[0].to_native(),
                                pl[1].to_native(),
                                pl[2].to_native(),
                            );
                            (turn * n).to_array()
                        })
                        .collect::<Vec<_>>()
                );
                extras["kiln_faces"] = json!(
                    (0..p.planes.len())
                        .map(|f| p
                            .face(f)
                            .iter()
                            .map(|v| u32::from(v.to_native()))
                            .collect::<Vec<u32>>())
                        .collect::<Vec<_>>()
                );
            }
            let geometry = match &frame {
                Some((implicit, _)) => {
                    shapes.push(implicit.clone());
                    json!({"shape": shapes.len() - 1})
                }
                None => json!({"node": ci, "convexHull": true}),
            };
            let mut piece = json!({
                "name": format!("{name} piece {k}"),
                "mesh": mi,
                "extras": extras,
                "extensions": {"KHR_physics_rigid_bodies": {
                    "collider": collider(geometry)
                }},
            });
            if let Some((_, f)) = frame {
                let (_, q, t) = f.to_scale_rotation_translation();
                piece["rotation"] = json!(q.to_array());
                piece["translation"] = json!(t.to_array());
            }
            nodes.push(piece);
            children.push(ci);
        }
        nodes[pi]["children"] = json!(children);
    }
    let filters: Vec<serde_json::Value> = filters
        .iter()
        .map(|&mask| {
            let systems: Vec<&str> = (0..layer_names.len())
                .filter(|&k| mask & (1 << k) != 0)
                .map(|k| layer_names[k])
                .collect();
            json!({"collisionSystems": systems})
        })
        .collect();
    let mut extensions = json!({"KHR_implicit_shapes": {"shapes": shapes}});
    if !filters.is_empty() {
        extensions["KHR_physics_rigid_bodies"] = json!({"collisionFilters": filters});
    }
    out.glb(
        nodes,
        roots,
        json!({
            "extensionsUsed": ["KHR_physics_rigid_bodies", "KHR_implicit_shapes"],
            "extensions": extensions,
        }),
    )
}

/// `p` under the row-major 3×4 matrix `m`.
fn place(m: &[f32; 12], p: [f32; 3]) -> [f32; 3] {
    [0, 4, 8].map(|r| m[r] * p[0] + m[r + 1] * p[1] + m[r + 2] * p[2] + m[r + 3])
}

/// A GLB container (glTF 2.0 §4.4) around a glTF JSON document and its one
/// binary buffer, both chunks padded to 4 bytes.
pub fn glb(doc: &serde_json::Value, mut bin: Vec<u8>) -> Vec<u8> {
    let mut json_bytes = serde_json::to_vec(doc).expect("JSON values serialise");
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}
