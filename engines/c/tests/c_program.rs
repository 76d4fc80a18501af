//! The C API from C: `tests/c/kiln_test.c` and `examples/quickstart.c`
//! (the README's C snippet) compiled with the system's C compiler (`cc`,
//! or `$CC`) against the library this build made, and run — the test
//! program against `libkiln.so`, and again under AddressSanitizer against
//! `libkiln.a`. Without a C compiler the test fails: CI has one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The C compiler.
fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// The newest `libkiln*.{ext}` this build made (cargo keeps the library
/// beside the test binary's `deps/` folder, and in `deps/` itself).
fn library(ext: &str) -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let dirs = [deps.clone(), deps.parent().unwrap().to_path_buf()];
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name == format!("libkiln.{ext}")
                || (name.starts_with("libkiln-") && name.ends_with(&format!(".{ext}")))
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no libkiln*.{ext} beside {}", deps.display()))
}

/// A moving-course archive baked from the bundled sample.
fn archive(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let baked = kiln_baker::bake_file(
        &root.join("samples/moving_course.gltf"),
        &Default::default(),
    )
    .expect("the sample bakes");
    let path = dir.join("moving_course.kiln");
    std::fs::write(&path, &baked.bytes).unwrap();
    path
}

/// The props sample baked: dynamic concave props with convex pieces.
fn props(dir: &Path) -> PathBuf {
    sample(dir, "props")
}

/// The bodies sample baked: rigid bodies glTF physics authors.
fn bodies(dir: &Path) -> PathBuf {
    sample(dir, "bodies")
}

/// `samples/{name}.gltf` baked into `dir/{name}.kiln`.
fn sample(dir: &Path, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let baked = kiln_baker::bake_file(
        &root.join(format!("samples/{name}.gltf")),
        &Default::default(),
    )
    .expect("the sample bakes");
    let path = dir.join(format!("{name}.kiln"));
    std::fs::write(&path, &baked.bytes).unwrap();
    path
}

/// The walk course baked as four tiles of 10 m into `dir/tiles`: its
/// manifest.
fn tiles(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = dir.join("tiles");
    std::fs::create_dir_all(&out).unwrap();
    kiln_baker::tile::bake_tiled_to_dir(
        &root.join("samples/walk_course.gltf"),
        &out,
        10.0,
        true,
        &Default::default(),
    )
    .expect("the sample bakes as tiles");
    out.join("walk_course.kilnworld")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-c-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `source` into `exe` with `flags` and `link` (after the
/// source), panicking with the compiler's words when it fails.
fn compile(source: &str, exe: &Path, flags: &[&str], link: &[String]) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(cc())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .args(flags)
        .arg("-I")
        .arg(here.join("include"))
        .arg(here.join(source))
        .args(link)
        .arg("-o")
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler `{}`: {e}", cc()));
    assert!(
        out.status.success(),
        "{} failed to compile:\n{}",
        source,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `exe` with `args`, returning its output; panics if it fails.
fn run(exe: &Path, args: &[&Path], env: &[(&str, &str)]) -> String {
    let out = Command::new(exe)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{} failed ({}):\n{stdout}\n{stderr}",
        exe.display(),
        out.status
    );
    println!("{stdout}{stderr}");
    stdout.into_owned()
}

fn shared_link() -> Vec<String> {
    let so = library("so");
    vec![
        so.display().to_string(),
        format!("-Wl,-rpath,{}", so.parent().unwrap().display()),
        "-lm".into(),
    ]
}

fn static_link() -> Vec<String> {
    let a = library("a");
    vec![
        a.display().to_string(),
        "-lpthread".into(),
        "-ldl".into(),
        "-lm".into(),
    ]
}

/// The header compiles cleanly as C89, C99 and C11 and as C++11, with
/// every warning an error.
#[test]
fn header_compiles_as_c89_c99_c11_and_cpp11() {
    let dir = scratch("pedantic");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = "#include \"kiln.h\"\nint main(void) {\n  return kiln_version_compatible(KILN_VERSION_MAJOR, KILN_VERSION_MINOR) ? 0 : 1;\n}\n";
    for (std, file, compiler) in [
        ("c89", "h.c", cc()),
        ("c99", "h.c", cc()),
        ("c11", "h.c", cc()),
        (
            "c++11",
            "h.cpp",
            std::env::var("CXX").unwrap_or_else(|_| "c++".into()),
        ),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, source).unwrap();
        let out = Command::new(&compiler)
            .arg(format!("-std={std}"))
            .args(["-Wall", "-Wextra", "-pedantic", "-Werror", "-c", "-o"])
            .arg(dir.join("h.o"))
            .arg("-I")
            .arg(here.join("include"))
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("running `{compiler}`: {e}"));
        assert!(
            out.status.success(),
            "kiln.h as {std}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn c_program_against_the_shared_library() {
    let dir = scratch("shared");
    let archive = archive(&dir);
    let exe = dir.join("kiln_test");
    compile("tests/c/kiln_test.c", &exe, &[], &shared_link());
    let out = run(
        &exe,
        &[&archive, &props(&dir), &bodies(&dir), &tiles(&dir)],
        &[],
    );
    assert!(out.contains("all checks passed"), "{out}");
    assert!(
        out.contains("2 props with convex pieces read back"),
        "{out}"
    );
    assert!(out.contains("3 authored bodies read back"), "{out}");
    assert!(out.contains("tiles streamed and mounted"), "{out}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn c_program_under_address_sanitizer() {
    // Is ASan there? A C compiler without it is said loudly, and fails:
    // the project's CI machines have it (gcc's libasan).
    let dir = scratch("asan");
    let probe = dir.join("probe.c");
    std::fs::write(&probe, "int main(void) { return 0; }\n").unwrap();
    let ok = Command::new(cc())
        .args(["-fsanitize=address"])
        .arg(&probe)
        .arg("-o")
        .arg(dir.join("probe"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the C compiler `{}` cannot build with -fsanitize=address (install libasan)",
        cc()
    );
    let archive = archive(&dir);
    let exe = dir.join("kiln_test_asan");
    compile(
        "tests/c/kiln_test.c",
        &exe,
        &["-fsanitize=address", "-fno-omit-frame-pointer"],
        &static_link(),
    );
    let out = run(
        &exe,
        &[&archive, &props(&dir), &bodies(&dir), &tiles(&dir)],
        &[("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")],
    );
    assert!(out.contains("all checks passed"), "{out}");
    assert!(
        out.contains("2 props with convex pieces read back"),
        "{out}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn readme_quickstart_compiles_and_answers() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(here.join("examples/quickstart.c")).unwrap();
    let readme = std::fs::read_to_string(here.join("../../README.md")).unwrap();
    assert!(
        readme.contains(&example),
        "README.md's C snippet is not examples/quickstart.c as it is"
    );
    let dir = scratch("quickstart");
    let archive = archive(&dir);
    let exe = dir.join("quickstart");
    compile("examples/quickstart.c", &exe, &[], &static_link());
    let out = run(&exe, &[&archive], &[]);
    assert!(
        out.starts_with("hit floor") && out.contains(", 0.00, "),
        "{out}"
    );
    std::fs::remove_dir_all(dir).ok();
}
