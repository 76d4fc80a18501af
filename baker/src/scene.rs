//! The baker's in-memory scene: what ingest produces and the build consumes.
//!
//! A scene is independent of glTF: tools and benchmarks can make one from
//! plain triangle lists with [`Scene::from_meshes`] and bake it directly.

use crate::kind::ColliderKind;
use glam::{DAffine3, DVec3};

/// A triangle mesh in its own (local) space.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneMesh {
    /// Name from the source (may be empty).
    pub name: String,
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Non-degenerate triangles as indices into `positions`.
    pub triangles: Vec<[u32; 3]>,
    /// For each kept triangle, its index among all the source mesh's
    /// triangles (primitives concatenated, degenerates counted).
    pub source_ids: Vec<u32>,
    /// Triangles dropped because two indices repeat or the area is zero.
    pub degenerate: usize,
    /// A stand-in the baker made for an implicit physics shape (not a mesh
    /// of the file; left out of the triangle counts).
    pub proxy: bool,
}

impl SceneMesh {
    /// Builds a mesh from positions and triangles, dropping degenerate
    /// triangles (repeated index or exactly zero area) and counting them.
    ///
    /// Indices must be in range; see [`SceneMesh::try_new`] for untrusted data.
    pub fn new(name: impl Into<String>, positions: Vec<[f32; 3]>, triangles: &[[u32; 3]]) -> Self {
        Self::try_new(name, positions, triangles).expect("triangle index out of range")
    }

    /// Like [`SceneMesh::new`], but reports the first out-of-range index
    /// instead of panicking.
    pub fn try_new(
        name: impl Into<String>,
        positions: Vec<[f32; 3]>,
        triangles: &[[u32; 3]],
    ) -> Result<Self, (usize, u32)> {
        let mut mesh = SceneMesh {
            name: name.into(),
            positions,
            ..SceneMesh::default()
        };
        for (i, &t) in triangles.iter().enumerate() {
            if let Some(&bad) = t.iter().find(|&&v| v as usize >= mesh.positions.len()) {
                return Err((i, bad));
            }
            mesh.push_triangle(t, i as u32);
        }
        Ok(mesh)
    }

    /// Adds one source triangle, or counts it as degenerate. Indices must be
    /// in range.
    pub(crate) fn push_triangle(&mut self, t: [u32; 3], source_id: u32) {
        if is_degenerate(&self.positions, t) {
            self.degenerate += 1;
        } else {
            self.triangles.push(t);
            self.source_ids.push(source_id);
        }
    }

    /// A closed box with half extents `half` centred on `centre`, outward
    /// winding: the archive's own corner and face numbering
    /// ([`kiln_formats::primitive::Cuboid`]), each face fanned into two
    /// triangles.
    pub fn cuboid(name: impl Into<String>, centre: [f32; 3], half: [f32; 3]) -> Self {
        use kiln_formats::primitive::Cuboid;
        let p: Vec<[f32; 3]> = (0..8)
            .map(|i| {
                let q = Cuboid::corner(half, i);
                [0, 1, 2].map(|k| centre[k] + q[k])
            })
            .collect();
        let tris: Vec<[u32; 3]> = Cuboid::FACES
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        SceneMesh::new(name, p, &tris)
    }

    /// Triangles in the source, kept or not.
    pub fn source_triangle_count(&self) -> usize {
        self.triangles.len() + self.degenerate
    }
}

pub use crate::geom::topology::is_degenerate;

/// A collider the file authors through a glTF physics extension.
#[derive(Clone, Debug, PartialEq)]
pub struct Authored {
    /// What to build from the instance's mesh.
    pub kind: ColliderKind,
    /// Where it comes from, in words (e.g. `OMI_physics_shape 2: box`).
    pub rule: String,
}

/// One placement of a mesh in the world.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneInstance {
    /// Object name (the glTF node's name, else its mesh's, else `node<i>`).
    pub name: String,
    /// Index into [`Scene::meshes`].
    pub mesh: usize,
    /// Local-to-world transform, accumulated in f64.
    pub transform: DAffine3,
    /// The node's `extras.collider` value, if it has one (classification).
    pub extras_collider: Option<String>,
    /// Collision layers the file puts the object in: a glTF physics
    /// collider's collision filter systems, else the node's
    /// `extras.layer` (a name or a list of names). Empty: none said.
    pub layers: Vec<String>,
    /// Set when the instance is a collider a physics extension authored
    /// (its mesh is the shape's geometry, or a proxy mesh of an implicit
    /// shape: box corners, a sphere's or capsule's latitude rings, a
    /// cylinder's polygon prism).
    pub physics: Option<Authored>,
    /// Set on the render instance of a node that also carries a glTF
    /// physics collider (baked as an instance of its own): this one gets
    /// no collider, whatever its name or the project's rules say.
    pub beside_collider: bool,
    /// How the file says the object moves (a glTF physics body's motion,
    /// else the node's `extras.motion`); the project's rules may say
    /// otherwise.
    pub motion: Motion,
    /// Whether the file makes the object a trigger volume (a glTF physics
    /// trigger, or `extras.trigger`).
    pub trigger: bool,
    /// The authored rigid body ([`Scene::bodies`]) the object belongs to:
    /// a glTF physics body on its node or an ancestor, whose motion it has.
    pub body: Option<usize>,
}

/// A kinematic or dynamic rigid body a glTF physics extension authors
/// (`KHR_physics_rigid_bodies` or `OMI_physics_body` with a motion): its
/// objects move as one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneBody {
    /// The body node's name (`node<k>` for an unnamed one).
    pub name: String,
    /// Kinematic or dynamic.
    pub motion: Motion,
    /// The body node's local-to-world transform.
    pub transform: DAffine3,
    /// What the file says of its mass (node-local frame).
    pub mass: AuthoredMass,
}

/// The mass properties a glTF physics body's motion gives (each where
/// authored), in its node's local frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AuthoredMass {
    /// `mass` (kg).
    pub mass: Option<f64>,
    /// `centerOfMass`.
    pub centre: Option<DVec3>,
    /// `inertiaDiagonal` (kg·m²) and `inertiaOrientation` (the identity
    /// where not given), a unit quaternion.
    pub inertia: Option<(DVec3, glam::DQuat)>,
}

pub use kiln_formats::level::Motion;

/// What ingest counted, for the bake report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    /// Triangles over all drawn instances (authored colliders left out),
    /// degenerate ones included (what a viewer draws).
    pub scene_triangles: usize,
    /// Degenerate triangles over all instances.
    pub scene_degenerate: usize,
    /// Triangles over unique meshes (each once), degenerate ones included.
    pub unique_triangles: usize,
    /// Degenerate triangles over unique meshes.
    pub unique_degenerate: usize,
}

/// Meshes and their placements: the input of the build step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// Unique meshes.
    pub meshes: Vec<SceneMesh>,
    /// Placements, in source order.
    pub instances: Vec<SceneInstance>,
    /// Rigid bodies the file authors (glTF physics), in document order.
    pub bodies: Vec<SceneBody>,
    /// Things the user should know that did not stop the bake.
    pub warnings: Vec<String>,
    /// Things worth saying that are not problems (e.g. a required
    /// extension that does not change geometry, ignored).
    pub notes: Vec<String>,
    /// The physics extension the file authors colliders with, if any
    /// (`OMI_physics_body`, `KHR_physics_rigid_bodies`): then objects
    /// without an authored collider get none by default.
    pub authored_physics: Option<String>,
    /// Convex pieces the file authors for a mesh (by mesh index), each as
    /// its points in the mesh's own space: a compound `baker export`
    /// wrote (a concave object whose children are its convex pieces).
    /// Such a mesh's solid takes these pieces instead of decomposing.
    pub pieces: std::collections::BTreeMap<usize, Vec<AuthoredPiece>>,
    /// For a mesh cut from a larger one at tile borders (by mesh index):
    /// each triangle's edge flags as the whole mesh gave them (bits 0–2
    /// flat, 3–5 border, as the triangle-mesh builder computes them), so an
    /// edge the cut made a border keeps what it was, a flat seam inside a
    /// floor or a crease (`kiln_baker::tile`).
    pub edge_flags: std::collections::BTreeMap<usize, Vec<u8>>,
    /// For an instance cut from a larger one at tile borders (by instance
    /// index): the rule that made the whole a triangle mesh, in words; the
    /// piece is one too, whatever its own size or shape would choose.
    pub cut_from: std::collections::BTreeMap<usize, String>,
}

/// A convex piece a file authors for a mesh (see [`Scene::pieces`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthoredPiece {
    /// Its points, in the mesh's own space.
    pub points: Vec<[f32; 3]>,
    /// Its faces as `baker export` wrote them beside the points (given only when
    /// the piece's node places the points as they are). The piece is then
    /// taken as it was, not rebuilt as a hull of its points.
    pub faces: Option<PieceFaces>,
    /// The box, sphere or capsule the file gives physics engines for it (a
    /// `KHR_implicit_shapes` shape on a node under the piece's), with its
    /// frame in the mesh's own space.
    pub primitive: Option<(crate::geom::fit::Primitive, glam::DAffine3)>,
}

/// An authored piece's faces (see [`AuthoredPiece::faces`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PieceFaces {
    /// Each face's outward unit normal.
    pub normals: Vec<[f64; 3]>,
    /// Each face's loop of point indices, counter-clockwise from outside.
    pub loops: Vec<Vec<u32>>,
}

impl Scene {
    /// A scene with one identity-placed instance per mesh.
    pub fn from_meshes(meshes: Vec<SceneMesh>) -> Scene {
        let instances = meshes
            .iter()
            .enumerate()
            .map(|(i, m)| SceneInstance {
                name: if m.name.is_empty() {
                    format!("mesh{i}")
                } else {
                    m.name.clone()
                },
                mesh: i,
                transform: DAffine3::IDENTITY,
                ..SceneInstance::default()
            })
            .collect();
        Scene {
            meshes,
            instances,
            ..Scene::default()
        }
    }

    /// Counts triangles and degenerates, per instance and per unique mesh.
    pub fn stats(&self) -> IngestStats {
        let mut s = IngestStats::default();
        for m in self.meshes.iter().filter(|m| !m.proxy) {
            s.unique_triangles += m.source_triangle_count();
            s.unique_degenerate += m.degenerate;
        }
        // what the file draws: authored colliders are not drawn
        for i in self.instances.iter().filter(|i| i.physics.is_none()) {
            let m = &self.meshes[i.mesh];
            s.scene_triangles += m.source_triangle_count();
            s.scene_degenerate += m.degenerate;
        }
        s
    }

    /// Every kept triangle of every drawn instance (authored colliders left
    /// out) in world space (f64), with its instance index and source
    /// triangle id: the brute-force oracle's view of a bake with
    /// classification off.
    pub fn world_triangles(&self) -> Vec<WorldTriangle> {
        let mut out = Vec::new();
        for (ii, inst) in self.instances.iter().enumerate() {
            if inst.physics.is_some() {
                continue;
            }
            let m = &self.meshes[inst.mesh];
            for (t, &sid) in m.triangles.iter().zip(&m.source_ids) {
                let v = t.map(|i| {
                    inst.transform
                        .transform_point3(DVec3::from(m.positions[i as usize].map(f64::from)))
                });
                out.push(WorldTriangle {
                    v,
                    instance: ii,
                    source_id: sid,
                });
            }
        }
        out
    }
}

/// A triangle in world space, for oracles and exports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldTriangle {
    /// Corners in world space.
    pub v: [DVec3; 3],
    /// Index into [`Scene::instances`].
    pub instance: usize,
    /// Source triangle id within the instance's mesh.
    pub source_id: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerates_are_dropped_and_counted() {
        let p = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
        ];
        let m = SceneMesh::new("m", p, &[[0, 1, 3], [0, 0, 1], [0, 1, 2], [1, 3, 0]]);
        assert_eq!(m.triangles, vec![[0, 1, 3], [1, 3, 0]]);
        assert_eq!(m.source_ids, vec![0, 3]);
        assert_eq!(m.degenerate, 2);
        assert_eq!(m.source_triangle_count(), 4);
    }

    #[test]
    fn out_of_range_indices_are_reported() {
        let p = vec![[0.0; 3]; 3];
        assert_eq!(SceneMesh::try_new("m", p, &[[0, 1, 3]]), Err((0, 3)));
    }
}
