//! The README's Bevy snippet is the crate's own example (which rustdoc
//! compiles), so the five lines a user copies are ones that build.

#[test]
fn readme_snippet_is_the_crate_example() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(here.join("src/lib.rs")).unwrap();
    let start = lib.find("//! ```no_run\n").expect("the crate example") + "//! ```no_run\n".len();
    let end = start + lib[start..].find("//! ```\n").unwrap();
    let example: String = lib[start..end]
        .lines()
        .map(|l| {
            l.strip_prefix("//! ")
                .or_else(|| l.strip_prefix("//!"))
                .unwrap_or(l)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let readme = std::fs::read_to_string(here.join("../../README.md")).unwrap();
    assert!(
        readme.contains(&format!("```rust\n{example}```")),
        "README.md's Bevy snippet is not the example in engines/bevy/src/lib.rs:\n{example}"
    );
}
