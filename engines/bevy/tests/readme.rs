//! The README's Bevy snippets are the crate's own examples (which rustdoc
//! compiles), so the lines a user copies are ones that build.

/// The first `no_run` example in `file`'s doc comments starting with
/// `prefix` (`//!` or `///`), as plain lines.
fn example(file: &str, prefix: &str) -> String {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(here.join(file)).unwrap();
    let open = format!("{prefix} ```no_run\n");
    let close = format!("{prefix} ```\n");
    let start = src.find(&open).expect("an example") + open.len();
    let end = start + src[start..].find(&close).unwrap();
    src[start..end]
        .lines()
        .map(|l| {
            l.trim_start()
                .strip_prefix(&format!("{prefix} "))
                .or_else(|| l.trim_start().strip_prefix(prefix))
                .unwrap_or(l)
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn readme() -> String {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(here.join("../../README.md")).unwrap()
}

#[test]
fn readme_snippet_is_the_crate_example() {
    let example = example("src/lib.rs", "//!");
    assert!(
        readme().contains(&format!("```rust\n{example}```")),
        "README.md's Bevy snippet is not the example in engines/bevy/src/lib.rs:\n{example}"
    );
}

#[test]
fn readme_avian_snippet_is_the_plugin_example() {
    let example = example("src/avian.rs", "///");
    assert!(
        readme().contains(&format!("```rust\n{example}```")),
        "README.md's Avian snippet is not the example on KilnAvianPlugin:\n{example}"
    );
}
