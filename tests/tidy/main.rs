//! Tidy tests: the claims ARCHITECTURE.md and the README make about the
//! code, checked against the code (as rust-analyzer's tidy tests keep its
//! docs honest). Each reads source files only: no build of what it checks.
//!
//! - the runtime's and the baker's modules import only from the layers
//!   the map puts below them;
//! - `ColliderRef`'s dispatch names every family in every match;
//! - every parser has a fuzz target, and the README lists every target
//!   and every `baker` command;
//! - every C function that can fail runs inside `run`;
//! - ARCHITECTURE.md and BENCHMARKS.md stay within their word caps;
//! - names retired for one name per idea stay retired.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `.rs` file under `dir` (relative to the repository root).
fn sources(dir: &str) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    out.sort();
    out
}

/// `text` without its `#[cfg(test)]` items (a test module may use
/// anything) and without comment lines.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        // skip the item: to the end of its braces, or of its line
        let item = &rest[at..];
        let open = item.find('{');
        let semi = item.find(';');
        let end = match (open, semi) {
            (Some(o), s) if s.is_none_or(|s| o < s) => {
                let mut depth = 0;
                let mut end = item.len();
                for (i, c) in item[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(s)) => s + 1,
            _ => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate-level names `code` uses through `crate::`: module names, or
/// items re-exported at the crate root (mapped to their module by
/// `reexports`).
fn crate_uses(code: &str, reexports: &[(String, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + 7..];
        let names: Vec<&str> = if let Some(list) = rest.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            list[..end].split(',').collect()
        } else {
            vec![rest]
        };
        for n in names {
            let n: String = n
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if n.is_empty() {
                continue;
            }
            match reexports.iter().find(|(item, _)| *item == n) {
                Some((_, module)) => out.insert(module.clone()),
                None => out.insert(n),
            };
        }
    }
    out
}

/// `pub use module::…::{A, B}` lines of a crate root, as (item, module).
fn reexports(lib: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for stmt in code(lib).split(';') {
        let s = stmt.trim();
        let Some(path) = s.strip_prefix("pub use ") else {
            continue;
        };
        let module: String = path
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let items = match path.find('{') {
            Some(o) => path[o + 1..path.rfind('}').unwrap_or(path.len())].to_string(),
            None => path.rsplit("::").next().unwrap_or("").to_string(),
        };
        for item in items.split(',') {
            let item = item.trim().rsplit(" as ").next().unwrap_or("").trim();
            if !item.is_empty() {
                out.push((item.to_string(), module.clone()));
            }
        }
    }
    out
}

/// Checks that each module of the crate at `dir` (its first path part
/// under `src/`) uses, through `crate::`, only modules of its own layer,
/// of a layer below (later in `layers`), or of `anywhere`.
fn layered(dir: &str, layers: &[&[&str]], anywhere: &[&str]) {
    let lib = read(&format!("{dir}/lib.rs"));
    let reexports = reexports(&lib);
    let layer_of = |m: &str| layers.iter().position(|l| l.contains(&m));
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for path in sources(dir) {
        let rel = path.strip_prefix(root().join(dir)).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" || anywhere.contains(&module.as_str()) {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            wrong.push(format!(
                "{}: module {module} is in no layer of the map",
                rel.display()
            ));
            continue;
        };
        seen.insert(module.clone());
        let text = std::fs::read_to_string(&path).unwrap();
        for used in crate_uses(&code(&text), &reexports) {
            if used == module || anywhere.contains(&used.as_str()) {
                continue;
            }
            match layer_of(&used) {
                Some(l) if l >= own => {}
                Some(_) => wrong.push(format!(
                    "{}: {module} uses {used}, a layer above it",
                    rel.display()
                )),
                // a re-export of another crate (glam's Vec3) or a macro
                None => {}
            }
        }
    }
    for m in layers.iter().flat_map(|l| l.iter()) {
        assert!(seen.contains(*m), "the map names {m}, which {dir} lacks");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The runtime's layers, top to bottom, as ARCHITECTURE.md lists them:
/// each module imports only from its own layer and those below.
#[test]
fn runtime_modules_import_only_from_the_layers_below() {
    layered(
        "runtime/src",
        &[
            &["character", "space", "stream"],
            &["world", "handle", "manifest"],
            &["query"],
            &["dynamic"],
            &["authored"],
            &["level", "mass"],
            &["collider"],
            &["shape", "placement", "walk"],
            &["geom"],
        ],
        &["object", "filter"],
    );
}

/// The baker's steps in data-flow order, then what they stand on: no step
/// imports a later one, nothing below the steps imports a step. (The
/// tools over archives and the binary are another crate, `baker/cli`.)
#[test]
fn baker_steps_import_no_later_step() {
    layered(
        "baker/src",
        &[
            &["export", "tile"],
            &["bake"],
            &["report"],
            &["write"],
            &["encode"],
            &["collider"],
            &["prepare"],
            &["classify"],
            &["ingest"],
            &["config"],
            &["scene", "geom", "kind", "limits"],
        ],
        &[],
    );
}

/// The bake library links no CLI, watcher or HTTP crate (an engine that
/// bakes, as Bevy's asset processor does, would compile them all): those
/// are the `baker` tool crate's.
#[test]
fn the_bake_library_depends_on_no_tool_crate() {
    let toml = read("baker/Cargo.toml");
    let deps = toml
        .split("[dependencies]")
        .nth(1)
        .expect("baker/Cargo.toml has [dependencies]");
    let deps = &deps[..deps.find("\n[").unwrap_or(deps.len())];
    for tool in [
        "clap",
        "notify",
        "ctrlc",
        "indicatif",
        "httparse",
        "anyhow",
        "tungstenite",
    ] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(tool)),
            "kiln-baker depends on {tool}: it belongs to baker/cli"
        );
    }
}

/// `ColliderRef` dispatches by exhaustive matches: a new family does not
/// compile until every operation answers for it. A catch-all arm would
/// let it through silently.
#[test]
fn collider_dispatch_has_no_catch_all_arm() {
    let dispatch = code(&read("runtime/src/collider/mod.rs"));
    let arms: Vec<&str> = dispatch
        .lines()
        .filter(|l| l.trim_start().starts_with("_ =>"))
        .collect();
    assert!(
        arms.is_empty(),
        "collider/mod.rs has catch-all arms:\n{}",
        arms.join("\n")
    );
}

/// The fuzz targets, from `fuzz/Cargo.toml`.
fn fuzz_targets() -> Vec<String> {
    let toml = read("fuzz/Cargo.toml");
    toml.split("[[bin]]")
        .skip(1)
        .filter_map(|b| {
            let line = b.lines().find(|l| l.trim_start().starts_with("name"))?;
            Some(line.split('"').nth(1)?.to_string())
        })
        .collect()
}

/// Every parser of untrusted input, and the fuzz target that feeds it:
/// a source file that reads a format (glTF JSON, TOML, JSON lines, HTTP,
/// archives) must be one of these, and each target must call its parser.
const PARSERS: &[(&str, &str, &str)] = &[
    (
        "baker/src/ingest/document.rs",
        "gltf_ingest",
        "ingest::load_bytes",
    ),
    (
        "baker/src/ingest/mod.rs",
        "gltf_ingest",
        "ingest::load_bytes",
    ),
    (
        "baker/src/config/mod.rs",
        "project_file",
        "ProjectConfig::parse",
    ),
    ("baker/cli/src/json_lines.rs", "query_line", "answer_line"),
    (
        "baker/cli/src/view/http.rs",
        "view_http",
        "http::read_request",
    ),
    ("formats/src/lib.rs", "archive_open", "Level::from_bytes"),
    (
        "formats/src/world.rs",
        "world_manifest",
        "access_world_file",
    ),
];

/// What marks a file as parsing untrusted input.
const PARSING: &[&str] = &[
    "serde_json::from_",
    "toml::from_str",
    "httparse::",
    "gltf_json::",
    "rkyv::access",
];

#[test]
fn every_parser_has_a_fuzz_target() {
    let targets = fuzz_targets();
    for (file, target, call) in PARSERS {
        assert!(
            targets.iter().any(|t| t == target),
            "{file}: no fuzz target {target} in fuzz/Cargo.toml"
        );
        let source = read(&format!("fuzz/fuzz_targets/{target}.rs"));
        assert!(
            source.contains(call),
            "fuzz target {target} does not call {call} ({file}'s parser)"
        );
    }
    let mut unfuzzed = Vec::new();
    for dir in ["baker/src", "baker/cli/src", "formats/src", "runtime/src"] {
        for path in sources(dir) {
            let rel = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = code(&std::fs::read_to_string(&path).unwrap());
            let parses = PARSING.iter().find(|p| text.contains(*p));
            let known = PARSERS.iter().any(|(f, ..)| *f == rel)
                // the same format read again where a fuzzed parser has
                // vouched for the bytes, or written rather than read
                || ALSO_READ.iter().any(|(f, _)| *f == rel);
            if let Some(p) = parses
                && !known
            {
                unfuzzed.push(format!("{rel} ({p})"));
            }
        }
    }
    assert!(
        unfuzzed.is_empty(),
        "files that parse input but are no parser of PARSERS (give them a fuzz target, or say \
         in ALSO_READ why none is needed):\n{}",
        unfuzzed.join("\n")
    );
}

/// Files that touch a format without being its parser of untrusted input,
/// and why.
const ALSO_READ: &[(&str, &str)] = &[
    (
        "runtime/src/level.rs",
        "reads the body formats/src/lib.rs has verified (access_unchecked)",
    ),
    (
        "runtime/src/dynamic/body.rs",
        "a hull body's shape, archived by the runtime itself from a ConvexHull",
    ),
];

/// The README names every `baker` command and every fuzz target.
#[test]
fn readme_lists_every_command_and_fuzz_target() {
    let readme = read("README.md");
    let cli = code(&read("baker/cli/src/cli.rs"));
    let commands = cli
        .split("enum Command {")
        .nth(1)
        .expect("cli.rs has enum Command");
    let body = &commands[..commands.find("\n}").unwrap()];
    let names: Vec<String> = body
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("    ")?;
            let first = l.chars().next()?;
            first.is_ascii_uppercase().then(|| {
                l.chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect::<String>()
                    .to_lowercase()
            })
        })
        .collect();
    assert!(names.len() >= 5, "commands found: {names:?}");
    let line = readme
        .lines()
        .find(|l| l.contains("**CLI**"))
        .expect("the README's CLI line");
    for n in &names {
        assert!(
            line.contains(&format!(" {n} "))
                || line.contains(&format!("`baker {n} "))
                || line.contains(&format!(" {n}`")),
            "the README's CLI line lacks `{n}`: {line}"
        );
    }
    for t in fuzz_targets() {
        assert!(
            readme.contains(&format!("`{t}`")),
            "the README does not name the fuzz target `{t}`"
        );
        assert!(
            read("fuzz/README.md").contains(&format!("fuzz run {t}")),
            "fuzz/README.md does not say how to run `{t}`"
        );
    }
}

/// Every C function that returns a status runs inside `run` (which
/// catches panics and records the message), itself or through one of the
/// generic bodies it calls.
#[test]
fn c_functions_that_can_fail_run_inside_run() {
    let lib = code(&read("engines/c/src/lib.rs"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for part in lib.split("extern \"C\" fn ").skip(1) {
        let name: String = part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = part.find('{') else { continue };
        if !part[..open].contains("-> KilnStatus") {
            continue;
        }
        checked += 1;
        let body = &part[open..part.find("\n}").unwrap_or(part.len())];
        let through = body.contains("run(") || body.contains("_on(") || body.contains("open_with(");
        if !through {
            wrong.push(name);
        }
    }
    assert!(checked > 30, "only {checked} functions found");
    assert!(wrong.is_empty(), "not inside run: {wrong:?}");
}

/// A `World` answers every question a `Level` answers, by the same
/// method names (the README says so), and the `Space` trait they share
/// names each one.
#[test]
fn a_world_and_the_space_trait_have_every_query_method_a_level_has() {
    let world = read("runtime/src/world.rs");
    let space = read("runtime/src/space.rs");
    let mut missing = Vec::new();
    let mut found = 0;
    for path in sources("runtime/src/query") {
        let text = code(&std::fs::read_to_string(&path).unwrap());
        for block in text.split("impl Level {").skip(1) {
            let block = &block[..block.find("\nimpl").unwrap_or(block.len())];
            for f in block.split("    pub fn ").skip(1) {
                let name: String = f
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                found += 1;
                if !world.contains(&format!("pub fn {name}(")) {
                    missing.push(format!("World::{name}"));
                }
                if !space.contains(&format!("fn {name}(")) {
                    missing.push(format!("Space::{name}"));
                }
            }
        }
    }
    assert!(found >= 15, "only {found} query methods found on Level");
    assert!(missing.is_empty(), "missing: {missing:?}");
}

fn words(path: &str) -> usize {
    read(path).split_whitespace().count()
}

/// ARCHITECTURE.md is a one-page map, BENCHMARKS.md the current table and
/// what limits each short row: git keeps the rest.
#[test]
fn docs_stay_within_their_word_caps() {
    let (map, bench) = (words("ARCHITECTURE.md"), words("BENCHMARKS.md"));
    assert!(map <= 1500, "ARCHITECTURE.md has {map} words (cap 1,500)");
    assert!(bench <= 4000, "BENCHMARKS.md has {bench} words (cap 4,000)");
}

/// Names retired for the one name of their idea (ARCHITECTURE.md's
/// "Names"), with the name that replaced each. A retired name coming back
/// in code, docs, the C header or its test program fails here; the format
/// history (FORMAT_CHANGES.md) keeps the names of its time.
const RETIRED: [(&str, &str); 21] = [
    ("TriTree", "TriMesh (BuiltTriMesh in the baker)"),
    ("ArchivedShape", "ArchivedCollider"),
    ("level::Shape", "level::Collider"),
    ("kiln_formats::Shape", "kiln_formats::Collider"),
    ("ColliderKind::Convex", "ColliderKind::Polytope"),
    ("ColliderKind::Concave", "ColliderKind::Bsp"),
    ("ColliderKind::Box", "ColliderKind::Cuboid"),
    ("QueryShape::Box", "QueryShape::Cuboid"),
    ("KilnShape::Box", "KilnShape::Cuboid"),
    ("kiln_shape_box", "kiln_shape_cuboid"),
    ("KILN_COLLIDER_BOX", "KILN_COLLIDER_CUBOID"),
    ("KILN_SHAPE_BOX", "KILN_SHAPE_CUBOID"),
    ("shape_kinds", "collider_kinds"),
    ("crate::build::", "crate::collider:: (the baker's builders)"),
    ("crate::instance::", "crate::placement::"),
    ("Family::Mesh", "Family::TriMesh"),
    ("point_in_solid", "contains_point_any"),
    (".intersects(", ".overlap_any("),
    ("intersects_batch", "overlap_any_batch"),
    ("_intersects(", "_overlap_any("),
    ("as_archive()", "archive(), header() and byte_len()"),
];

#[test]
fn retired_names_stay_retired() {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if p.is_dir() {
                if !matches!(name.as_ref(), "target" | ".git" | "corpus" | "artifacts") {
                    walk(&p, out);
                }
            } else if ["rs", "md", "h", "c", "toml", "sh"]
                .iter()
                .any(|x| p.extension().is_some_and(|e| e == *x))
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    let this = root().join("tests/tidy/main.rs");
    let history = root().join("FORMAT_CHANGES.md");
    let mut found = Vec::new();
    for f in files {
        if f == this || f == history {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (old, new) in RETIRED {
            for (n, line) in text.lines().enumerate() {
                if line.contains(old) {
                    let rel = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
                    found.push(format!("{rel}:{}: `{old}` is now `{new}`", n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
