//! Build: prepared meshes become shapes (the builders' own types), placed
//! instances get a top-level tree. `encode` flattens the result into the
//! archive's types.
//!
//! Everything here is deterministic: shapes are built in parallel but each
//! depends only on its input, and they are collected in first-use order.

pub mod hull;
pub mod sah;
pub mod solid;
pub mod top;
pub mod tri_tree;

use crate::classify::{Choice, ColliderKind};
use crate::config::ShapeSettings;
use crate::prepare::WeldedMesh;
use crate::scene::Scene;
use glam::DAffine3;
use rayon::prelude::*;
use sah::BinNode;
use solid::{BuiltPolytope, Primitive};
use std::borrow::Cow;
use tri_tree::TriTree;

/// A built shape, in the builder's own form.
#[derive(Clone, Debug, PartialEq)]
pub enum BuiltShape {
    /// A triangle mesh and its binary tree.
    TriMesh(TriTree),
    /// A convex polytope.
    Polytope(BuiltPolytope),
    /// A fitted primitive, centred on the origin of its own frame.
    Primitive(Primitive),
}

impl BuiltShape {
    /// The shape's points that bound it (every point of the shape lies in
    /// their convex hull), for world boxes.
    pub fn hull_points(&self) -> Cow<'_, [[f32; 3]]> {
        match self {
            BuiltShape::TriMesh(t) => Cow::Borrowed(&t.vertices),
            BuiltShape::Polytope(p) => Cow::Borrowed(&p.vertices),
            BuiltShape::Primitive(p) => Cow::Owned(p.box_corners()),
        }
    }

    /// Whether the shape has nothing to collide with.
    pub fn is_empty(&self) -> bool {
        match self {
            BuiltShape::TriMesh(t) => t.leaves.is_empty(),
            BuiltShape::Polytope(_) | BuiltShape::Primitive(_) => false,
        }
    }
}

/// An instance of a built shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// Index of the instance in the scene.
    pub source: usize,
    /// Index into [`BuiltLevel::shapes`].
    pub shape: usize,
    /// Local-to-world transform.
    pub transform: DAffine3,
    /// Object name.
    pub name: String,
    /// The classification rule that chose the shape.
    pub rule: String,
}

/// Shapes, their placements in top-tree leaf order, and the top tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltLevel {
    /// Unique shapes.
    pub shapes: Vec<BuiltShape>,
    /// Placements, in top-tree leaf order (empty shapes left out).
    pub placed: Vec<Placed>,
    /// Binary tree over `placed`'s world boxes.
    pub top: Vec<BinNode>,
}

/// Builds every shape the choices ask for (one per distinct (mesh, kind,
/// settings); `welded[m]` is scene mesh `m` welded) and the top-level tree.
pub fn build_level(scene: &Scene, welded: &[WeldedMesh], choices: &[Choice]) -> BuiltLevel {
    // distinct (mesh, kind, settings) in first-use order
    let mut keys: Vec<(usize, ColliderKind, ShapeSettings)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    // the shape of each instance, and whether a primitive gave way to the
    // hull; objects without a collider get none
    let shape_of: Vec<Option<(usize, bool)>> = scene
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
                ColliderKind::Convex
            } else {
                c.kind
            };
            let key = (inst.mesh, kind, c.shape);
            let shape = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            });
            Some((shape, hull_instead))
        })
        .collect();
    // each shape, with what its builder wants the placements and the
    // report to know: the shape's frame in mesh space, a note for the rule
    let built: Vec<(BuiltShape, DAffine3, Option<String>)> = keys
        .par_iter()
        .map(|&(mesh, kind, shape)| build_shape(&welded[mesh], kind, shape))
        .collect();
    let placed: Vec<Placed> = scene
        .instances
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| Some((i, inst, shape_of[i]?)))
        .filter(|&(_, _, (s, _))| !built[s].0.is_empty())
        .map(|(i, inst, (shape, hull_instead))| {
            let (_, frame, note) = &built[shape];
            let mut rule = choices[i].rule.clone();
            if hull_instead {
                rule.push_str(
                    " (placed with non-uniform scale or shear: the mesh's convex hull instead)",
                );
            }
            if let Some(n) = note {
                rule.push_str(&format!(" ({n})"));
            }
            Placed {
                source: i,
                shape,
                transform: inst.transform * *frame,
                name: inst.name.clone(),
                rule,
            }
        })
        .collect();
    let shapes: Vec<BuiltShape> = built.into_iter().map(|(s, _, _)| s).collect();
    let (order, top) = top::build(&placed, &shapes);
    let placed = order.iter().map(|&i| placed[i].clone()).collect();
    BuiltLevel {
        shapes,
        placed,
        top,
    }
}

/// Builds one shape of `kind` from a scene mesh with an object's settings: the shape, its frame in
/// mesh space (primitives are centred on their own origin), and a note for
/// the report (fit error, fallback).
fn build_shape(
    welded: &WeldedMesh,
    kind: ColliderKind,
    settings: ShapeSettings,
) -> (BuiltShape, DAffine3, Option<String>) {
    let tri = |note: Option<String>| {
        (
            BuiltShape::TriMesh(tri_tree::build(welded, settings.tree)),
            DAffine3::IDENTITY,
            note,
        )
    };
    match kind {
        ColliderKind::TriMesh | ColliderKind::None => tri(None),
        ColliderKind::Convex => match solid::polytope(&welded.vertices, settings.max_planes) {
            Ok((p, note)) => (BuiltShape::Polytope(p), DAffine3::IDENTITY, note),
            Err(why) => tri(Some(format!("{why}; kept as a triangle mesh"))),
        },
        ColliderKind::Box | ColliderKind::Sphere | ColliderKind::Capsule => {
            match solid::fit(&welded.vertices, kind) {
                Some((p, frame, error)) => (
                    BuiltShape::Primitive(p),
                    frame,
                    Some(format!("fit error {error:.4} m")),
                ),
                None => tri(Some("nothing to fit; kept as a triangle mesh".into())),
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
