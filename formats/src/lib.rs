//! # kiln-formats
//!
//! The Kiln archive schema and nothing else: the fixed [`header`], the rkyv
//! body types ([`level`] ties together one file per collider family:
//! [`tri_mesh`] (its vertices in [`vertices`]), [`polytope`], [`primitive`], [`bsp`]), and the semantic checks in [`verify`]. Both the
//! baker (which writes archives) and the runtime (which maps them) depend on
//! this crate, so the two can never disagree about a byte.
//!
//! An archive file is `[Header; 64 bytes][rkyv body]`. Reading one is:
//! [`Header::parse`] → [`Header::check_body`] → [`access_body`] (rkyv's
//! checked access plus [`verify::verify_level`]). A world too large for one
//! archive is tile archives listed by a [`world`] manifest.

pub mod bsp;
pub mod header;
pub mod level;
pub mod placement;
pub mod polytope;
pub mod primitive;
pub mod tri_mesh;
pub mod verify;
pub mod vertices;
pub mod world;

pub use header::{FORMAT_VERSION, HEADER_LEN, Header, HeaderError};
pub use level::{ArchivedCollider, ArchivedLevel, Collider, Instance, Level, TopTree};
pub use tri_mesh::{MeshTree, TreeKind, TriMesh};

use thiserror::Error;

/// Why an archive body was rejected.
#[derive(Debug, Error)]
pub enum ArchiveError {
    /// The fixed header is wrong.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// The body is not a structurally valid rkyv archive of a [`Level`].
    #[error("archive body is malformed: {0}")]
    Structure(String),
    /// The body is structurally valid but breaks a semantic invariant.
    #[error("archive content is invalid: {0}")]
    Semantic(#[from] verify::VerifyError),
    /// A world manifest's body breaks an invariant.
    #[error("world manifest content is invalid: {0}")]
    Manifest(#[from] world::ManifestError),
    /// The body is not aligned for zero-copy access.
    #[error("archive body is not {align}-byte aligned in memory")]
    Misaligned {
        /// Alignment required.
        align: usize,
    },
}

/// Serialises a level into a complete archive file (header + body).
///
/// Deterministic: the same `level` and arguments give the same bytes.
pub fn encode(level: &Level, content_hash: [u8; 16], baker_version: [u16; 3]) -> Vec<u8> {
    // The body is serialised once to count its bytes, then into a buffer of
    // exactly that size that already holds room for the header: growing the
    // buffer as it filled, and copying the body behind the header, cost more
    // than the serialisation itself on a 58 MB archive. The header's length
    // is a multiple of every alignment rkyv uses, so the body's bytes are
    // the same as when serialised on their own.
    const _: () = assert!(HEADER_LEN.is_multiple_of(header::BODY_ALIGN));
    let len = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(level, Count(HEADER_LEN))
        .expect("counting bytes cannot fail")
        .0;
    let mut out = Vec::with_capacity(len);
    out.resize(HEADER_LEN, 0);
    let mut out = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(level, out)
        .expect("serialising plain vectors into memory cannot fail");
    debug_assert_eq!(out.len(), len);
    let has = |kind: TreeKind| {
        level
            .colliders
            .iter()
            .any(|s| matches!(s, Collider::TriMesh(m) if m.tree.kind() == kind))
    };
    let flags = if has(TreeKind::Aabb) {
        header::flags::AABB_NODES
    } else {
        0
    } | if has(TreeKind::Sphere) {
        header::flags::SPHERE_NODES
    } else {
        0
    };
    let body = &out[HEADER_LEN..];
    let header = Header {
        format_version: FORMAT_VERSION,
        flags,
        baker_version,
        content_hash,
        body_len: body.len() as u64,
        body_hash: header::body_hash(body),
    };
    out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    out
}

/// An rkyv writer that only counts: [`encode`]'s first pass.
struct Count(usize);

impl rkyv::ser::Positional for Count {
    fn pos(&self) -> usize {
        self.0
    }
}

impl<E> rkyv::ser::Writer<E> for Count {
    fn write(&mut self, bytes: &[u8]) -> Result<(), E> {
        self.0 += bytes.len();
        Ok(())
    }
}

/// Bodies of at least this many bytes are checksummed and validated on the
/// rayon pool at once.
const PARALLEL_BODY: usize = 1 << 20;

/// Validates a body (the bytes after the header) and returns the archived
/// level: rkyv's structural check, then [`verify::verify_level`].
///
/// `body` must start at a [`header::BODY_ALIGN`]-aligned address.
pub fn access_body(body: &[u8]) -> Result<&ArchivedLevel, ArchiveError> {
    if !(body.as_ptr() as usize).is_multiple_of(header::BODY_ALIGN) {
        return Err(ArchiveError::Misaligned {
            align: header::BODY_ALIGN,
        });
    }
    let level = rkyv::access::<ArchivedLevel, rkyv::rancor::Error>(body)
        .map_err(|e| ArchiveError::Structure(e.to_string()))?;
    verify::verify_level(level)?;
    Ok(level)
}

/// Parses the header of a whole archive file, checks the body checksum and
/// validates the body. The file must start at a 16-byte aligned address.
pub fn access_file(file: &[u8]) -> Result<(Header, &ArchivedLevel), ArchiveError> {
    let header = Header::parse(file)?;
    let body = &file[HEADER_LEN..];
    // the checksum and the validation read the same bytes independently:
    // on the rayon pool they overlap (the checksum's error comes first)
    let (sum, level) = if body.len() >= PARALLEL_BODY {
        rayon::join(|| header.check_body(body), || access_body(body))
    } else {
        (header.check_body(body), access_body(body))
    };
    sum?;
    Ok((header, level?))
}

/// Runs every check [`access_file`] runs on a file at any address (copying
/// it to aligned memory first when needed) and returns its header.
pub fn check_file(file: &[u8]) -> Result<Header, ArchiveError> {
    if (file.as_ptr() as usize).is_multiple_of(header::BODY_ALIGN) {
        return access_file(file).map(|(h, _)| h);
    }
    access_file(&aligned(file)).map(|(h, _)| h)
}

/// Bytes in memory aligned as an archive's body asks
/// ([`header::BODY_ALIGN`]), for [`Archive::access`].
pub type AlignedBytes = rkyv::util::AlignedVec<{ header::BODY_ALIGN }>;

/// A copy of `bytes` in [`AlignedBytes`].
pub fn aligned(bytes: &[u8]) -> AlignedBytes {
    let mut v = AlignedBytes::with_capacity(bytes.len());
    v.extend_from_slice(bytes);
    v
}

/// A whole validated archive as Kiln's tools read it (`baker inspect`,
/// `export`, `view`): the header, the body's schema types read in place,
/// and the file's size. Queries are the runtime's business; this is what
/// a tool needs to list and draw what an archive holds.
///
/// ```
/// # let level = kiln_formats::Level {
/// #     colliders: vec![], instances: vec![], affines: vec![], names: vec![], rules: vec![],
/// #     layer_names: vec![kiln_formats::level::DEFAULT_LAYER.into()], top: Default::default(), decompositions: vec![], bodies: vec![],
/// # };
/// # let file = kiln_formats::encode(&level, [0; 16], [0, 1, 0]);
/// let bytes = kiln_formats::aligned(&file);
/// let archive = kiln_formats::Archive::access(&bytes)?;
/// assert_eq!(archive.byte_len, file.len());
/// assert_eq!(archive.level.instances.len(), 0);
/// # Ok::<(), kiln_formats::ArchiveError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Archive<'a> {
    /// The fixed header.
    pub header: Header,
    /// The body.
    pub level: &'a ArchivedLevel,
    /// The whole file's size in bytes.
    pub byte_len: usize,
}

impl<'a> Archive<'a> {
    /// Validates a whole archive file as [`access_file`] does; the bytes
    /// must start at an aligned address ([`aligned`] copies them there).
    pub fn access(file: &'a [u8]) -> Result<Archive<'a>, ArchiveError> {
        let (header, level) = access_file(file)?;
        Ok(Archive {
            header,
            level,
            byte_len: file.len(),
        })
    }
}
