//! The kinds of collider an object can get: a vocabulary shared by every
//! step of the bake (ingest names authored kinds, classify chooses,
//! prepare and build act on the choice), so it lives below all of them.

/// The kinds of collider a scene mesh can become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColliderKind {
    /// A triangle mesh under a tree.
    TriMesh,
    /// A convex polytope (the hull of the mesh).
    Convex,
    /// A concave solid: a solid-leaf BSP tree of the closed mesh (a
    /// triangle mesh where the mesh cannot be one).
    Concave,
    /// A box fitted to the mesh.
    Box,
    /// A sphere fitted to the mesh.
    Sphere,
    /// A capsule fitted to the mesh.
    Capsule,
    /// No collider.
    None,
}

impl ColliderKind {
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ColliderKind::TriMesh => "trimesh",
            ColliderKind::Convex => "convex",
            ColliderKind::Concave => "concave",
            ColliderKind::Box => "box",
            ColliderKind::Sphere => "sphere",
            ColliderKind::Capsule => "capsule",
            ColliderKind::None => "none",
        }
    }

    /// Whether the kind is an analytic primitive.
    pub fn is_primitive(self) -> bool {
        matches!(
            self,
            ColliderKind::Box | ColliderKind::Sphere | ColliderKind::Capsule
        )
    }
}
