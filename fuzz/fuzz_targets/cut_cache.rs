//! Any bytes as the baker's cut cache file (`.STEM.kilncut`), with the
//! checksum fixed up so the input reaches the field reader: it must refuse
//! cleanly or read what it would write back byte for byte.
#![no_main]

use kiln_baker::tile::CutCache;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= 8 {
        let n = bytes.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n]);
        bytes[n..].copy_from_slice(&sum.to_le_bytes());
    }
    if let Some(cache) = CutCache::from_bytes(&bytes) {
        assert_eq!(cache.to_bytes().as_deref(), Some(&bytes[..]));
    }
});
