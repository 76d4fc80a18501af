//! Any bytes as an archive, with the body checksum fixed up so the input
//! reaches rkyv's validation and our verify: open must fail cleanly or
//! every query (rays, sphere overlaps, yes/no tests, sweeps, points) must run
//! without panicking.
#![no_main]

use kiln_formats::{HEADER_LEN, header::body_hash};
use kiln_runtime::{Level, Vec3};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= HEADER_LEN {
        let h = body_hash(&bytes[HEADER_LEN..]);
        bytes[48..56].copy_from_slice(&h.to_le_bytes());
    }
    if let Ok(level) = Level::from_bytes(&bytes) {
        for d in [Vec3::X, Vec3::NEG_Y, Vec3::new(0.3, -0.5, 0.8)] {
            let _ = level.raycast(Vec3::ZERO, d, f32::INFINITY);
            let _ = level.raycast_any(Vec3::new(1.0, 2.0, 3.0), d, 1e6);
            let _ = level.sweep_sphere(Vec3::new(0.5, 3.0, -0.5), 0.75, d, 50.0);
        }
        let _ = level.overlap_sphere(Vec3::new(0.2, 0.1, -0.3), 2.0);
        let _ = level.intersects_sphere(Vec3::new(-1.0, 0.5, 0.0), 0.5);
        for p in [Vec3::ZERO, Vec3::new(5.0, 0.2, 0.1), Vec3::new(0.5, 0.5, 0.5)] {
            let _ = level.contains_point(p);
        }
        let _ = kiln_baker::inspect::inspect(&level);
        let _ = kiln_baker::export::world_objects(&level);
    }
});
