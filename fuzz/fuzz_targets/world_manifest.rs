//! Any bytes as a world manifest, with the body checksum fixed up so the
//! input reaches rkyv's validation and `verify_world`: reading must fail
//! cleanly, or every tile's fields must be readable and its path safe.
#![no_main]

use kiln_formats::world::{access_world_file, safe_tile_path};
use kiln_formats::{HEADER_LEN, header::body_hash};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= HEADER_LEN {
        let h = body_hash(&bytes[HEADER_LEN..]);
        bytes[48..56].copy_from_slice(&h.to_le_bytes());
    }
    let aligned = kiln_formats::aligned(&bytes);
    if let Ok((_, world)) = access_world_file(&aligned) {
        for t in world.tiles.iter() {
            assert!(safe_tile_path(t.file.as_str()));
            assert!(t.origin.iter().all(|x| x.to_native().is_finite()));
        }
    }
});
