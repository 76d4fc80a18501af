//! Classify: which kind of collider each placed object gets, and the rule
//! that decided it (reported by `inspect`, so an artist can see why).
//!
//! Decided per instance (a (mesh, node) pair): two nodes that share a mesh
//! may classify differently, and then bake two shapes.

use crate::scene::Scene;

/// The kinds of collider a scene mesh can become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColliderKind {
    /// A triangle mesh under a tree.
    TriMesh,
}

impl ColliderKind {
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ColliderKind::TriMesh => "trimesh",
        }
    }
}

/// The collider chosen for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What to build.
    pub kind: ColliderKind,
    /// Which rule chose it, in words (e.g. `default: triangle mesh`).
    pub rule: String,
}

/// One choice per scene instance, in scene order.
pub fn classify(scene: &Scene) -> Vec<Choice> {
    scene
        .instances
        .iter()
        .map(|_| Choice {
            kind: ColliderKind::TriMesh,
            rule: "default: triangle mesh".into(),
        })
        .collect()
}
