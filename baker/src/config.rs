//! Config: the settings a bake runs with, resolved from the command line
//! (later also a project file). The library never sees clap types.

use kiln_formats::tri_mesh::TreeKind;

/// Settings that change the baked bytes. Hashed into the header's content
/// hash, so a change of settings makes an archive out of date.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BakeSettings {
    /// Bounding volumes of the triangle-mesh (terrain) trees.
    pub tree: TreeKind,
}

impl BakeSettings {
    /// The settings with mesh trees of `kind`.
    pub fn with_tree(mut self, kind: TreeKind) -> Self {
        self.tree = kind;
        self
    }

    /// A stable description of every setting, for the content hash.
    pub fn fingerprint(&self) -> String {
        format!(
            "kiln-format={};tree={}",
            kiln_formats::FORMAT_VERSION,
            self.tree.name()
        )
    }
}
