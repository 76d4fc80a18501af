//! The kinds of collider an object can get: a vocabulary shared by every
//! step of the bake (ingest names authored kinds, classify chooses,
//! prepare and build act on the choice), so it lives below all of them.

/// The kinds of collider a scene mesh can become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColliderKind {
    /// A triangle mesh under a tree.
    TriMesh,
    /// A convex polytope (the hull of the mesh); authors say `convex`.
    Polytope,
    /// A concave solid: a solid-leaf BSP tree of the closed mesh (a
    /// triangle mesh where the mesh cannot be one); authors say `concave`.
    Bsp,
    /// A box fitted to the mesh; authors say `box`.
    Cuboid,
    /// A sphere fitted to the mesh.
    Sphere,
    /// A capsule fitted to the mesh.
    Capsule,
    /// No collider.
    None,
}

impl ColliderKind {
    /// The word authors write for the kind (node extras, `kiln.toml`),
    /// as reports and the archive's rules quote it: `convex`, `concave`
    /// and `box` are the user-facing aliases of `Polytope`, `Bsp` and
    /// `Cuboid`.
    pub fn name(self) -> &'static str {
        match self {
            ColliderKind::TriMesh => "trimesh",
            ColliderKind::Polytope => "convex",
            ColliderKind::Bsp => "concave",
            ColliderKind::Cuboid => "box",
            ColliderKind::Sphere => "sphere",
            ColliderKind::Capsule => "capsule",
            ColliderKind::None => "none",
        }
    }

    /// Whether the kind is an analytic primitive.
    pub fn is_primitive(self) -> bool {
        matches!(
            self,
            ColliderKind::Cuboid | ColliderKind::Sphere | ColliderKind::Capsule
        )
    }
}
