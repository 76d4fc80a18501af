//! What the `baker` binary's test files share.

// each test file is its own crate and uses part of this module
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The `baker` binary under test.
pub fn baker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_baker"))
}

/// A file of the bundled `samples/` folder.
pub fn sample(name: &str) -> PathBuf {
    kiln_tests::samples_dir().join(name)
}

/// A fresh, empty directory for one test (`file` names the test file).
pub fn tmpdir(file: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-{file}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
