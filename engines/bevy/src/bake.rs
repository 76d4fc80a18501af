//! Baking glTF into archives during Bevy's asset processing.
//!
//! [`KilnBake`] is a `Process`: it reads a glTF source, bakes it with the
//! settings in the source's `.meta` file, and writes the archive, which
//! [`crate::KilnArchiveLoader`] loads. It is the default processor for
//! the `kiln.glb` and `kiln.gltf` extensions; any other glTF is baked when
//! its `.meta` names it:
//!
//! ```ron
//! (
//!     meta_format_version: "1.0",
//!     asset: Process(
//!         processor: "kiln_bevy::bake::KilnBake",
//!         settings: (max_deviation: 0.02, mesh_tree: Sphere),
//!     ),
//! )
//! ```
//!
//! A source that does not bake (malformed, or with settings out of range)
//! is written as a failure record naming the source and the cause; loading
//! it fails with [`crate::KilnLoadError::BakeFailed`], so the app's
//! [`crate::KilnLevelFailed`] says why, and re-processing replaces it once
//! the source is mended.
//!
//! The processor reads the source alone: buffers in other files are not
//! read (a `.glb`, or a `.gltf` with embedded buffers, bakes), and
//! `kiln.toml` project rules do not apply (node extras and glTF physics
//! do).

use std::path::Path;

use bevy::app::App;
use bevy::asset::io::Writer;
use bevy::asset::processor::{Process, ProcessContext, ProcessError};
use bevy::asset::{AssetApp, AsyncWriteExt};
use bevy::reflect::TypePath;
use kiln_baker::config::{FaceBudget, MaxPlanes, Metres, VolumeFraction};
use kiln_baker::{BakeSettings, IngestErrorKind};
use kiln_formats::tri_mesh::TreeKind;
use serde::{Deserialize, Serialize};

use crate::asset::KilnArchiveLoader;

/// The tree over a triangle mesh's triangles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MeshTree {
    /// Axis-aligned boxes (the default).
    #[default]
    Aabb,
    /// Spheres.
    Sphere,
}

/// The bake settings a source's `.meta` file holds (every field may be
/// left out; the defaults are `baker bake`'s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KilnBakeSettings {
    /// The tree over triangle meshes.
    pub mesh_tree: MeshTree,
    /// A closed mesh whose volume is within this fraction of its hull's
    /// becomes a polytope (0.02).
    pub convex_tolerance: f64,
    /// Most planes a polytope may have (64).
    pub max_planes: u32,
    /// The most render triangles a prop may have to become a concave
    /// solid (none: no limit).
    pub concave_max_triangles: Option<usize>,
    /// Concave colliders: largest deviation from the render mesh, in
    /// metres (0.05).
    pub max_deviation: f64,
    /// Concave colliders: face budget (128).
    pub max_faces: u32,
    /// Classify objects at all (true); false bakes every one as a
    /// triangle mesh.
    pub classify: bool,
    /// In a file that authors glTF physics, bake the render meshes too
    /// (false).
    pub render_meshes: bool,
}

impl Default for KilnBakeSettings {
    fn default() -> Self {
        let d = BakeSettings::default();
        KilnBakeSettings {
            mesh_tree: MeshTree::Aabb,
            convex_tolerance: d.convex_tolerance.get(),
            max_planes: d.max_planes.get() as u32,
            concave_max_triangles: d.concave_max_triangles,
            max_deviation: d.max_deviation.get(),
            max_faces: d.max_faces.get() as u32,
            classify: d.classify,
            render_meshes: d.render_meshes,
        }
    }
}

impl KilnBakeSettings {
    /// The baker's settings, each value checked.
    pub fn to_bake_settings(&self) -> Result<BakeSettings, String> {
        let mut s = BakeSettings::default();
        s.mesh_tree = match self.mesh_tree {
            MeshTree::Aabb => TreeKind::Aabb,
            MeshTree::Sphere => TreeKind::Sphere,
        };
        s.convex_tolerance = VolumeFraction::new(self.convex_tolerance)?;
        s.max_planes = MaxPlanes::new(i64::from(self.max_planes))?;
        s.concave_max_triangles = self.concave_max_triangles;
        s.max_deviation = Metres::new(self.max_deviation)?;
        s.max_faces = FaceBudget::new(i64::from(self.max_faces))?;
        s.classify = self.classify;
        s.render_meshes = self.render_meshes;
        Ok(s)
    }
}

/// Why a source did not bake.
#[derive(Debug, thiserror::Error)]
pub enum KilnBakeError {
    /// A setting out of range in the `.meta` file.
    #[error("{path}: bake settings: {why}")]
    Settings {
        /// The source.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The source is not a glTF file the baker reads.
    #[error("{error}{hint}")]
    Ingest {
        /// The baker's error (it names the file).
        error: kiln_baker::IngestError,
        /// What to do about buffers in other files.
        hint: &'static str,
    },
    /// Reading the source or writing the archive failed.
    #[error("{path}: {error}")]
    Io {
        /// The source.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
}

/// The processor that bakes a glTF source into a Kiln archive.
#[derive(Default, TypePath)]
pub struct KilnBake;

/// Where a source's buffers in other files would be looked for: nowhere
/// (the processor is given the source's bytes alone).
const NOWHERE: &str = "<beside the source: not read by the Bevy processor>";

/// Bakes `bytes` (the source at `path`) into archive bytes.
pub(crate) fn bake_bytes(
    bytes: Vec<u8>,
    path: &str,
    settings: &KilnBakeSettings,
) -> Result<Vec<u8>, KilnBakeError> {
    let settings = settings
        .to_bake_settings()
        .map_err(|why| KilnBakeError::Settings {
            path: path.into(),
            why,
        })?;
    // Buffers in other files would resolve here, which holds none: the
    // processor sees the source alone.
    let ingested = kiln_baker::ingest::load_bytes(bytes, Path::new(NOWHERE), Path::new(path)).map_err(|error| {
        let outside = matches!(&error.kind, IngestErrorKind::Buffer { problem, .. } if problem.contains(NOWHERE));
        let hint = if outside {
            " (the Bevy processor reads the source file alone: pack the level as a .glb, or embed its buffers)"
        } else {
            ""
        };
        KilnBakeError::Ingest { error, hint }
    })?;
    Ok(kiln_baker::bake_scene(&ingested.scene, &settings).bytes)
}

impl Process for KilnBake {
    type Settings = KilnBakeSettings;
    type OutputLoader = KilnArchiveLoader;

    async fn process(
        &self,
        context: &mut ProcessContext<'_>,
        settings: &KilnBakeSettings,
        writer: &mut Writer,
    ) -> Result<(), ProcessError> {
        let path = context.path().to_string();
        let fail = |e: KilnBakeError| ProcessError::AssetTransformError(Box::new(e));
        let mut bytes = Vec::new();
        context
            .asset_reader()
            .read_to_end(&mut bytes)
            .await
            .map_err(|error| {
                fail(KilnBakeError::Io {
                    path: path.clone(),
                    error,
                })
            })?;
        // A bake that fails is written as a failure record, not returned as
        // an error: Bevy's processor would leave an empty file and the app
        // would be told only "Path not found". The loader turns the record
        // into `KilnLoadError::BakeFailed`, with this reason, and the
        // app's `KilnLevelFailed` message carries it.
        let output = match bake_bytes(bytes, &path, settings) {
            Ok(archive) => archive,
            Err(e) => failure_record(&e.to_string()),
        };
        writer
            .write_all(&output)
            .await
            .map_err(|error| fail(KilnBakeError::Io { path, error }))?;
        Ok(())
    }
}

/// What the processor writes for a source that did not bake: the
/// [`crate::asset::BAKE_FAILED`] tag, then the reason in UTF-8.
pub(crate) fn failure_record(reason: &str) -> Vec<u8> {
    let mut out = crate::asset::BAKE_FAILED.to_vec();
    out.extend_from_slice(reason.as_bytes());
    out
}

/// Registers the processor, the default for `*.kiln.glb` and `*.kiln.gltf`.
pub(crate) fn register(app: &mut App) {
    app.register_asset_processor(KilnBake)
        .set_default_asset_processor::<KilnBake>("kiln.glb")
        .set_default_asset_processor::<KilnBake>("kiln.gltf");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A glTF whose buffer is another file is refused with what to do.
    #[test]
    fn a_source_with_buffers_in_other_files_says_to_pack_it() {
        let gltf =
            br#"{"asset":{"version":"2.0"},"buffers":[{"uri":"level.bin","byteLength":12}]}"#;
        let e = bake_bytes(
            gltf.to_vec(),
            "levels/a.kiln.gltf",
            &KilnBakeSettings::default(),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("levels/a.kiln.gltf") && text.contains("level.bin"),
            "{text}"
        );
        assert!(
            text.ends_with("pack the level as a .glb, or embed its buffers)"),
            "{text}"
        );
        // a malformed source gets no such hint
        let e = bake_bytes(
            b"{not json".to_vec(),
            "b.kiln.gltf",
            &KilnBakeSettings::default(),
        )
        .unwrap_err();
        assert!(!e.to_string().contains("pack the level"), "{e}");
    }

    /// Settings out of range in a `.meta` name the source and the value.
    #[test]
    fn settings_out_of_range_are_refused_by_name() {
        let bad = KilnBakeSettings {
            max_faces: 2,
            ..Default::default()
        };
        let e = bake_bytes(Vec::new(), "c.kiln.glb", &bad).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("c.kiln.glb: bake settings:") && text.contains('2'),
            "{text}"
        );
    }
}
