//! `.kiln` archives as Bevy assets.

use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, LoadContext};
use bevy::reflect::TypePath;
use kiln_runtime::Level;

/// The first bytes of what Bevy's asset processor writes for a source
/// that did not bake (then the reason); no archive starts so (archives
/// start with `KILNARC\0`).
pub(crate) const BAKE_FAILED: &[u8] = b"KILN BAKE FAILED\n";

/// A baked level: an archive opened and validated once, shared by every
/// world and query that uses it.
#[derive(Asset, TypePath, Clone, Debug)]
pub struct KilnArchive {
    /// The level.
    pub level: Arc<Level>,
}

/// Loads `.kiln` archives (and the archives Bevy's processor made of
/// glTF sources with [`crate::KilnBake`]).
#[derive(Default, TypePath)]
pub struct KilnArchiveLoader;

/// Why an archive did not load.
#[derive(Debug, thiserror::Error)]
pub enum KilnLoadError {
    /// The asset could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The asset path.
        path: String,
        /// The reader's error.
        error: std::io::Error,
    },
    /// The bytes are not a valid archive.
    #[error("{path}: {error}")]
    Invalid {
        /// The asset path.
        path: String,
        /// What is wrong.
        error: kiln_runtime::ArchiveError,
    },
    /// Bevy's asset processor could not bake the glTF source: why, as
    /// the baker said it (the source's path and the cause).
    #[error("{path}: the asset processor could not bake it: {reason}")]
    BakeFailed {
        /// The asset path.
        path: String,
        /// The baker's error.
        reason: String,
    },
    /// A glTF file given to the archive loader: it must be baked first.
    #[error(
        "{path} is a glTF file, not a Kiln archive: bake it with `baker bake`, or run Bevy's asset processor (AssetMode::Processed with kiln-bevy's `bake` feature) on a `*.kiln.glb`/`*.kiln.gltf` source"
    )]
    NotBaked {
        /// The asset path.
        path: String,
    },
}

/// Every byte of an asset, a read error named by its path.
pub(crate) async fn read_all(
    reader: &mut dyn Reader,
    path: &str,
) -> Result<Vec<u8>, KilnLoadError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .await
        .map_err(|error| KilnLoadError::Io {
            path: path.to_string(),
            error,
        })?;
    Ok(bytes)
}

impl AssetLoader for KilnArchiveLoader {
    type Asset = KilnArchive;
    type Settings = ();
    type Error = KilnLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<KilnArchive, KilnLoadError> {
        let path = load_context.path().to_string();
        let bytes = read_all(reader, &path).await?;
        if let Some(reason) = bytes.strip_prefix(BAKE_FAILED) {
            return Err(KilnLoadError::BakeFailed {
                path,
                reason: String::from_utf8_lossy(reason).into_owned(),
            });
        }
        if bytes.starts_with(b"glTF") || bytes.trim_ascii_start().starts_with(b"{") {
            return Err(KilnLoadError::NotBaked { path });
        }
        match Level::from_bytes(&bytes) {
            Ok(level) => Ok(KilnArchive {
                level: Arc::new(level),
            }),
            Err(kiln_runtime::OpenError::Invalid { error, .. }) => {
                Err(KilnLoadError::Invalid { path, error })
            }
            Err(kiln_runtime::OpenError::Io { error, .. }) => {
                Err(KilnLoadError::Io { path, error })
            }
        }
    }

    fn extensions(&self) -> &[&str] {
        &["kiln"]
    }
}
