//! The fixed 64-byte header that precedes every archive body, and every
//! world manifest's ([`crate::world`]: the same layout under its own magic
//! and version, [`FileKind`]).
//!
//! The header is read and checked *before* any rkyv validation (the rkyv
//! practice of checking a version first): a file from another tool, another
//! format version or a truncated download is rejected with a precise reason
//! without touching the body.
//!
//! ```text
//! offset size field
//!      0    8 magic            b"KILNARC\0"
//!      8    4 format_version   u32 LE, bumped on any change of archived bytes
//!     12    4 flags            u32 LE, see `flags`
//!     16    8 baker_version    [u16; 3] major.minor.patch + u16 reserved (0)
//!     24   16 content_hash     xxh3-128 of (input bytes + bake settings)
//!     40    8 body_len         u64 LE, bytes of rkyv body after the header
//!     48    8 body_hash        xxh3-64 of the body bytes
//!     56    8 reserved         zero
//! ```

use thiserror::Error;

/// First eight bytes of every Kiln archive.
pub const MAGIC: [u8; 8] = *b"KILNARC\0";

/// Version of the archived layout. Any change to archived bytes bumps it and
/// adds a line to `FORMAT_CHANGES.md`.
pub const FORMAT_VERSION: u32 = 24;

/// Size of the fixed header; the rkyv body starts right after it. A multiple
/// of 16 so that a page-aligned mapping gives the body the alignment rkyv needs.
pub const HEADER_LEN: usize = 64;

/// Alignment the body must have in memory (the largest alignment of any
/// archived type).
pub const BODY_ALIGN: usize = 16;

/// What a file with this header is: its magic bytes, the version this
/// build reads, the flag bits it may set, and its name in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKind {
    /// The first eight bytes.
    pub magic: [u8; 8],
    /// The version this build reads and writes.
    pub version: u32,
    /// The flag bits it may set.
    pub flags: u32,
    /// What errors call it ("Kiln archive").
    pub what: &'static str,
}

/// A baked level's archive.
pub const ARCHIVE: FileKind = FileKind {
    magic: MAGIC,
    version: FORMAT_VERSION,
    flags: flags::AABB_NODES | flags::SPHERE_NODES,
    what: "Kiln archive",
};

/// Header flag bits.
pub mod flags {
    /// Some mesh trees use box nodes (informational: each mesh says its
    /// own kind).
    pub const AABB_NODES: u32 = 1 << 0;
    /// Some mesh trees use sphere nodes (informational, as above).
    pub const SPHERE_NODES: u32 = 1 << 1;
}

/// The decoded fixed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version the body was written with.
    pub format_version: u32,
    /// Feature flags (see [`flags`]).
    pub flags: u32,
    /// Version of the baker that wrote the file (major, minor, patch).
    pub baker_version: [u16; 3],
    /// Hash of the input bytes and the bake settings, for up-to-date checks.
    pub content_hash: [u8; 16],
    /// Length of the body in bytes.
    pub body_len: u64,
    /// xxh3-64 of the body, to catch corruption in transit or on disk.
    pub body_hash: u64,
}

/// Why a header was rejected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HeaderError {
    /// The file is shorter than the fixed header.
    #[error("file is {0} bytes, shorter than the {HEADER_LEN}-byte Kiln header")]
    TooShort(usize),
    /// The magic bytes are wrong: not a file of the kind wanted.
    #[error("not a {what} (bad magic bytes {found:02x?})")]
    BadMagic {
        /// What was wanted ([`FileKind::what`]).
        what: &'static str,
        /// The bytes found.
        found: [u8; 8],
    },
    /// The format version is not the one this build reads.
    #[error("{what} format version {found}, this build reads version {expected}; re-bake it")]
    Version {
        /// What the file is ([`FileKind::what`]).
        what: &'static str,
        /// Version in the file.
        found: u32,
        /// Version this build understands.
        expected: u32,
    },
    /// Reserved bytes are not zero (written by a newer or a broken tool).
    #[error("reserved header bytes are not zero")]
    Reserved,
    /// Unknown flag bits are set.
    #[error("unknown header flags {0:#x}")]
    Flags(u32),
    /// The body length disagrees with the file length.
    #[error(
        "header says the body is {declared} bytes but the file holds {actual} after the header (truncated or padded file)"
    )]
    BodyLen {
        /// Declared by the header.
        declared: u64,
        /// Actually present.
        actual: u64,
    },
    /// The body bytes do not hash to the value in the header.
    #[error(
        "body checksum mismatch (stored {stored:#018x}, computed {computed:#018x}): the file is corrupt"
    )]
    Checksum {
        /// Stored in the header.
        stored: u64,
        /// Computed over the body.
        computed: u64,
    },
}

impl Header {
    /// Encodes the header of an archive into its fixed little-endian form.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        self.to_bytes_of(&ARCHIVE)
    }

    /// Encodes the header of a file of `kind`.
    pub fn to_bytes_of(&self, kind: &FileKind) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..8].copy_from_slice(&kind.magic);
        out[8..12].copy_from_slice(&self.format_version.to_le_bytes());
        out[12..16].copy_from_slice(&self.flags.to_le_bytes());
        for (i, v) in self.baker_version.iter().enumerate() {
            out[16 + 2 * i..18 + 2 * i].copy_from_slice(&v.to_le_bytes());
        }
        out[24..40].copy_from_slice(&self.content_hash);
        out[40..48].copy_from_slice(&self.body_len.to_le_bytes());
        out[48..56].copy_from_slice(&self.body_hash.to_le_bytes());
        out
    }

    /// Decodes and checks the header at the start of `file` (the whole file),
    /// including the body length. Does not check the body hash; see
    /// [`Header::check_body`].
    pub fn parse(file: &[u8]) -> Result<Header, HeaderError> {
        Header::parse_of(file, &ARCHIVE)
    }

    /// [`Header::parse`] for a file of `kind`.
    pub fn parse_of(file: &[u8], kind: &FileKind) -> Result<Header, HeaderError> {
        if file.len() < HEADER_LEN {
            return Err(HeaderError::TooShort(file.len()));
        }
        let h = &file[..HEADER_LEN];
        let magic: [u8; 8] = h[0..8].try_into().expect("8-byte slice");
        if magic != kind.magic {
            return Err(HeaderError::BadMagic {
                what: kind.what,
                found: magic,
            });
        }
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        let u16_at = |o: usize| u16::from_le_bytes(h[o..o + 2].try_into().expect("2 bytes"));
        let format_version = u32_at(8);
        if format_version != kind.version {
            return Err(HeaderError::Version {
                what: kind.what,
                found: format_version,
                expected: kind.version,
            });
        }
        let flags = u32_at(12);
        if flags & !kind.flags != 0 {
            return Err(HeaderError::Flags(flags));
        }
        if u16_at(22) != 0 || h[56..64].iter().any(|&b| b != 0) {
            return Err(HeaderError::Reserved);
        }
        let body_len = u64_at(40);
        let actual = (file.len() - HEADER_LEN) as u64;
        if body_len != actual {
            return Err(HeaderError::BodyLen {
                declared: body_len,
                actual,
            });
        }
        Ok(Header {
            format_version,
            flags,
            baker_version: [u16_at(16), u16_at(18), u16_at(20)],
            content_hash: h[24..40].try_into().expect("16 bytes"),
            body_len,
            body_hash: u64_at(48),
        })
    }

    /// Checks the body checksum.
    pub fn check_body(&self, body: &[u8]) -> Result<(), HeaderError> {
        let computed = body_hash(body);
        if computed != self.body_hash {
            return Err(HeaderError::Checksum {
                stored: self.body_hash,
                computed,
            });
        }
        Ok(())
    }
}

/// The checksum stored in [`Header::body_hash`].
pub fn body_hash(body: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(body: &[u8]) -> Vec<u8> {
        let h = Header {
            format_version: FORMAT_VERSION,
            flags: flags::AABB_NODES,
            baker_version: [1, 2, 3],
            content_hash: [7; 16],
            body_len: body.len() as u64,
            body_hash: body_hash(body),
        };
        let mut v = h.to_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn round_trip() {
        let file = sample(b"hello body");
        let h = Header::parse(&file).unwrap();
        assert_eq!(h.baker_version, [1, 2, 3]);
        assert_eq!(h.content_hash, [7; 16]);
        h.check_body(&file[HEADER_LEN..]).unwrap();
    }

    #[test]
    fn rejects_each_kind_of_damage() {
        let file = sample(b"0123456789abcdef");
        assert_eq!(Header::parse(&file[..10]), Err(HeaderError::TooShort(10)));
        let mut bad = file.clone();
        bad[0] = b'X';
        assert!(matches!(
            Header::parse(&bad),
            Err(HeaderError::BadMagic { .. })
        ));
        let mut bad = file.clone();
        bad[8] = 99;
        assert!(matches!(
            Header::parse(&bad),
            Err(HeaderError::Version { found: 99, .. })
        ));
        let mut bad = file.clone();
        bad[13] = 1;
        assert!(matches!(Header::parse(&bad), Err(HeaderError::Flags(_))));
        let mut bad = file.clone();
        bad[60] = 1;
        assert_eq!(Header::parse(&bad), Err(HeaderError::Reserved));
        assert!(matches!(
            Header::parse(&file[..file.len() - 1]),
            Err(HeaderError::BodyLen { .. })
        ));
        let mut bad = file.clone();
        *bad.last_mut().unwrap() ^= 1;
        let h = Header::parse(&bad).unwrap();
        assert!(matches!(
            h.check_body(&bad[HEADER_LEN..]),
            Err(HeaderError::Checksum { .. })
        ));
    }
}
