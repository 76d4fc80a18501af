//! Prepare: after classification, what each collider's builder starts from.
//!
//! Objects sharing a mesh, a collider kind and per-object settings share
//! one collider; this step finds those colliders (in first-use order), the
//! largest world scale each is placed with, and makes each one's input:
//! the welded triangles for a triangle mesh or a polytope, the fitted
//! primitive and its frame for a box, sphere or capsule. A concave solid's
//! surface is made by the BSP builder (`collider::bsp`), which
//! owns it and its retries: whether it must be made coarser depends on the
//! tree built from it.

use crate::classify::Choice;
use crate::config::ColliderSettings;
use crate::geom::fit::{self, Primitive};
use crate::geom::weld::WeldedMesh;
use crate::kind::ColliderKind;
use crate::scene::Scene;
use glam::DAffine3;
use rayon::prelude::*;

/// What a collider's builder starts from.
#[derive(Clone, Debug, PartialEq)]
pub enum ColliderInput {
    /// The welded mesh's triangles (a triangle mesh).
    Triangles,
    /// The welded mesh's convex hull (a polytope).
    Polytope,
    /// A fitted primitive, its frame in mesh space (the primitive is
    /// centred on the frame's origin) and its fit error.
    Primitive {
        /// The primitive.
        primitive: Primitive,
        /// Where it sits in mesh space.
        frame: DAffine3,
        /// Largest distance from a vertex to the primitive's surface.
        error: f64,
    },
    /// A concave solid: its watertight low-poly surface and BSP tree are
    /// made together by `collider::bsp`.
    Bsp,
    /// The kind asked for cannot be made from this mesh (why): the
    /// triangles stand in.
    Fallback(String),
}

/// One collider to build.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedCollider {
    /// Index of the scene mesh (and of its welded form).
    pub mesh: usize,
    /// The kind to build (a primitive under a non-similarity placement has
    /// already become [`ColliderKind::Polytope`]).
    pub kind: ColliderKind,
    /// The object settings it is built with.
    pub settings: ColliderSettings,
    /// The largest world length of a mesh unit over its placements.
    pub scale: f64,
    /// What the builder starts from.
    pub input: ColliderInput,
}

/// Every collider to build and which one each scene instance uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// Distinct (mesh, kind, settings), in first-use order.
    pub colliders: Vec<PreparedCollider>,
    /// Per scene instance: its collider, and whether a primitive gave way to
    /// the mesh's hull (placed by a non-similarity); `None`: no collider.
    pub collider_of: Vec<Option<(usize, bool)>>,
}

/// Finds the colliders the choices ask for and prepares each (in parallel;
/// each depends only on its own input, so the result does not depend on
/// the thread count). `welded[m]` is scene mesh `m` welded.
pub fn prepare(scene: &Scene, welded: &[WeldedMesh], choices: &[Choice]) -> Prepared {
    let mut keys: Vec<(usize, ColliderKind, ColliderSettings)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let collider_of: Vec<Option<(usize, bool)>> = scene
        .instances
        .iter()
        .zip(choices)
        .map(|(inst, c)| {
            if c.kind == ColliderKind::None {
                return None;
            }
            // primitives are placed by similarities only: under any other
            // placement the mesh's hull stands in (a box's hull is exact)
            let hull_instead = c.kind.is_primitive() && !is_similarity(&inst.transform);
            let kind = if hull_instead {
                ColliderKind::Polytope
            } else {
                c.kind
            };
            let key = (inst.mesh, kind, c.settings);
            let collider = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            });
            Some((collider, hull_instead))
        })
        .collect();
    let mut scale = vec![0.0f64; keys.len()];
    for (inst, s) in scene.instances.iter().zip(&collider_of) {
        if let Some((k, _)) = s {
            let m = inst.transform.matrix3;
            let longest = m
                .x_axis
                .length()
                .max(m.y_axis.length())
                .max(m.z_axis.length());
            scale[*k] = scale[*k].max(longest);
        }
    }
    let colliders = keys
        .par_iter()
        .zip(&scale)
        .map(|(&(mesh, kind, settings), &s)| {
            let scale = if s.is_finite() && s > 0.0 { s } else { 1.0 };
            let input = collider_input(&welded[mesh], kind);
            PreparedCollider {
                mesh,
                kind,
                settings,
                scale,
                input,
            }
        })
        .collect();
    Prepared {
        colliders,
        collider_of,
    }
}

/// The input of one collider of `kind` made from a welded mesh.
fn collider_input(welded: &WeldedMesh, kind: ColliderKind) -> ColliderInput {
    match kind {
        ColliderKind::TriMesh | ColliderKind::None => ColliderInput::Triangles,
        ColliderKind::Polytope => ColliderInput::Polytope,
        ColliderKind::Bsp => ColliderInput::Bsp,
        ColliderKind::Cuboid | ColliderKind::Sphere | ColliderKind::Capsule => {
            match fit::fit(&welded.vertices, kind) {
                Some((primitive, frame, error)) => ColliderInput::Primitive {
                    primitive,
                    frame,
                    error,
                },
                None => ColliderInput::Fallback("nothing to fit".into()),
            }
        }
    }
}

/// Whether a transform is a similarity, to 1e-6 (tighter than the 1e-4
/// verification accepts, so what the baker calls a similarity always opens).
pub fn is_similarity(t: &DAffine3) -> bool {
    let (x, y, z) = (t.matrix3.x_axis, t.matrix3.y_axis, t.matrix3.z_axis);
    let rows = [
        x.x, y.x, z.x, 0.0, //
        x.y, y.y, z.y, 0.0, //
        x.z, y.z, z.z, 0.0,
    ];
    kiln_formats::level::similarity_scale(&rows, 1e-6).is_some()
}
