//! Build: scene meshes become archived shapes, instances get a top-level
//! tree. Everything here is deterministic: meshes are built in parallel but
//! each result depends only on its input, and they are collected in order.

pub mod quantize;
pub mod sah;
pub mod top;
pub mod tri_tree;

use crate::scene::Scene;
use kiln_formats::Level;
use kiln_formats::level::TreeKind;
use rayon::prelude::*;

/// Builds the archive body for a scene, with mesh trees of `kind`.
pub fn build_level(scene: &Scene, kind: TreeKind) -> Level {
    let meshes: Vec<_> = scene
        .meshes
        .par_iter()
        .map(|m| tri_tree::build(m, kind))
        .collect();
    let (instances, instance_names, top) = top::build(scene, &meshes);
    Level {
        meshes,
        instances,
        instance_names,
        top,
    }
}
