//! `include/kiln.h` is what cbindgen makes of `src/lib.rs` today, made
//! C89-clean ([`tidy`]): a header that lags the library would hand C
//! callers the wrong functions or layouts. Regenerate with `KILN_BLESS=1
//! cargo test --release -p kiln-c --test header`.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_src(dir.join("src/lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen reads src/lib.rs")
        .write(&mut fresh);
    let fresh = tidy(&String::from_utf8(fresh).expect("cbindgen writes UTF-8")).into_bytes();
    let path = dir.join("include/kiln.h");
    if std::env::var_os("KILN_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/kiln.h");
        eprintln!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    if committed != fresh {
        let (old, new) = (
            String::from_utf8_lossy(&committed),
            String::from_utf8_lossy(&fresh),
        );
        let first = old.lines().zip(new.lines()).position(|(a, b)| a != b);
        panic!(
            "include/kiln.h is stale (first difference at line {}); regenerate it with \
             `KILN_BLESS=1 cargo test --release -p kiln-c --test header` and commit it",
            first.map_or(old.lines().count().min(new.lines().count()) + 1, |i| i + 1)
        );
    }
}

/// cbindgen's header made C89-clean and plain to C readers: rustdoc links
/// (`` [`KilnShape`] ``) become the names they link, the `//` comments
/// cbindgen puts after its `__cplusplus` guards become `/* */`, and the
/// last enumerator of each enum loses its comma (C89 allows none there).
fn tidy(header: &str) -> String {
    let plain = header.replace("[`", "`").replace("`]", "`");
    let lines: Vec<&str> = plain.lines().collect();
    let mut out = String::with_capacity(plain.len());
    for (k, line) in lines.iter().enumerate() {
        let closes = lines
            .get(k + 1)
            .is_some_and(|next| next.trim_start().starts_with('}'));
        let enumerator = line.starts_with("  ") && line.contains(" = ") && !line.contains('(');
        let guard = line.starts_with('#') || line.starts_with('}');
        if closes && enumerator && line.ends_with(',') {
            out.push_str(&line[..line.len() - 1]);
        } else if guard && let Some((code, note)) = line.split_once("//") {
            out.push_str(&format!("{code}/* {} */", note.trim()));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}
