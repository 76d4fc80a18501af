//! Build: prepared meshes become shapes (the builders' own types), placed
//! instances get a top-level tree. `encode` flattens the result into the
//! archive's types.
//!
//! Everything here is deterministic: shapes are built in parallel but each
//! depends only on its input, and they are collected in first-use order.

pub mod sah;
pub mod top;
pub mod tri_tree;

use crate::classify::{Choice, ColliderKind};
use crate::config::BakeSettings;
use crate::prepare;
use crate::scene::Scene;
use glam::DAffine3;
use rayon::prelude::*;
use sah::BinNode;
use tri_tree::TriTree;

/// A built shape, in the builder's own form.
#[derive(Clone, Debug, PartialEq)]
pub enum BuiltShape {
    /// A triangle mesh and its binary tree.
    TriMesh(TriTree),
}

impl BuiltShape {
    /// The shape's points that bound it (every point of the shape lies in
    /// their convex hull), for world boxes.
    pub fn hull_points(&self) -> &[[f32; 3]] {
        match self {
            BuiltShape::TriMesh(t) => &t.vertices,
        }
    }

    /// Whether the shape has nothing to collide with.
    pub fn is_empty(&self) -> bool {
        match self {
            BuiltShape::TriMesh(t) => t.leaves.is_empty(),
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

/// Builds every shape the choices ask for (one per distinct (mesh, kind)
/// pair) and the top-level tree.
pub fn build_level(scene: &Scene, choices: &[Choice], settings: &BakeSettings) -> BuiltLevel {
    // distinct (mesh, kind) pairs in first-use order
    let mut keys: Vec<(usize, ColliderKind)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let shape_of: Vec<usize> = scene
        .instances
        .iter()
        .zip(choices)
        .map(|(inst, c)| {
            *index.entry((inst.mesh, c.kind)).or_insert_with(|| {
                keys.push((inst.mesh, c.kind));
                keys.len() - 1
            })
        })
        .collect();
    let shapes: Vec<BuiltShape> = keys
        .par_iter()
        .map(|&(mesh, kind)| {
            let mesh = &scene.meshes[mesh];
            match kind {
                ColliderKind::TriMesh => {
                    BuiltShape::TriMesh(tri_tree::build(&prepare::weld(mesh), settings.tree))
                }
            }
        })
        .collect();
    let placed: Vec<Placed> = scene
        .instances
        .iter()
        .enumerate()
        .filter(|&(i, _)| !shapes[shape_of[i]].is_empty())
        .map(|(i, inst)| Placed {
            source: i,
            shape: shape_of[i],
            transform: inst.transform,
            name: inst.name.clone(),
            rule: choices[i].rule.clone(),
        })
        .collect();
    let (order, top) = top::build(&placed, &shapes);
    let placed = order.iter().map(|&i| placed[i].clone()).collect();
    BuiltLevel {
        shapes,
        placed,
        top,
    }
}
