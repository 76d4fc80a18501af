//! Config: the settings a bake runs with, resolved from the command line
//! (later also a project file). The library never sees clap types.

use kiln_formats::tri_mesh::TreeKind;

/// Settings that change the baked bytes. Hashed into the header's content
/// hash, so a change of settings makes an archive out of date.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BakeSettings {
    /// Bounding volumes of the triangle-mesh (terrain) trees.
    pub tree: TreeKind,
    /// Automatic classification: a closed mesh whose volume is within this
    /// fraction of its hull's becomes a polytope (default 0.02).
    pub convex_tolerance: f64,
    /// Most planes a polytope may have (default 64); a hull with more
    /// stays a triangle mesh.
    pub max_planes: usize,
    /// Classify at all: when false every drawn object is a triangle mesh
    /// and authored physics colliders are not baked (what triangle-level
    /// oracles and the peer benchmark compare against).
    pub classify: bool,
    /// In a file that authors its colliders with a glTF physics
    /// extension, also bake the render meshes (classified automatically).
    /// Default false: such files bake exactly their authored colliders, as
    /// engines import them.
    pub render_meshes: bool,
}

impl Default for BakeSettings {
    fn default() -> Self {
        BakeSettings {
            tree: TreeKind::default(),
            convex_tolerance: 0.02,
            max_planes: 64,
            classify: true,
            render_meshes: false,
        }
    }
}

impl BakeSettings {
    /// The settings with every object baked as a triangle mesh
    /// (classification off).
    pub fn all_meshes(mut self) -> Self {
        self.classify = false;
        self
    }

    /// The settings with mesh trees of `kind`.
    pub fn with_tree(mut self, kind: TreeKind) -> Self {
        self.tree = kind;
        self
    }

    /// A stable description of every setting, for the content hash.
    pub fn fingerprint(&self) -> String {
        format!(
            "kiln-format={};tree={};convex-tolerance={};max-planes={};classify={};render-meshes={}",
            kiln_formats::FORMAT_VERSION,
            self.tree.name(),
            self.convex_tolerance,
            self.max_planes,
            self.classify,
            self.render_meshes
        )
    }
}
