//! Any bytes as a .gltf/.glb: ingest must return a scene or an error, and a
//! scene must bake. Seed the corpus with `../shared/levels/*.glb`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    // external buffers resolve against a directory with nothing in it
    let dir = std::env::temp_dir().join("kiln-fuzz-empty");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(i) = kiln_baker::ingest::load_bytes(data.to_vec(), &dir, Path::new("fuzz.glb")) {
        let _ = kiln_baker::bake_scene(&i.scene, &kiln_baker::BakeSettings::default());
    }
});
