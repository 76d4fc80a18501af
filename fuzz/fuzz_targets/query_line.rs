//! Any text as a `baker query` line: always one JSON answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static WORLD: OnceLock<kiln_runtime::World> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let world = WORLD.get_or_init(|| {
        let mesh = kiln_baker::SceneMesh::new(
            "tri",
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
            &[[0, 1, 2]],
        );
        let baked = kiln_baker::bake_scene(
            &kiln_baker::Scene::from_meshes(vec![mesh]),
            &kiln_baker::BakeSettings::default(),
        );
        kiln_runtime::World::new(std::sync::Arc::new(
            kiln_runtime::Level::from_bytes(&baked.bytes).unwrap(),
        ))
    });
    if let Ok(line) = std::str::from_utf8(data) {
        let v = baker_tools::json_lines::answer_line(world, line);
        assert!(v.is_object());
    }
});
