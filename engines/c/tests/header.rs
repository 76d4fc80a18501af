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

/// Every lower-case name a function's comment quotes (`` `ray` ``) is one
/// of its parameters, a field of a struct in the header, or a function:
/// a comment that says `filter` over a prototype that says `f` leaves the
/// C reader guessing.
#[test]
fn comments_name_the_parameters_the_prototypes_have() {
    let header =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/kiln.h"))
            .expect("include/kiln.h");
    let ident = |w: &str| {
        !w.is_empty()
            && w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    // struct fields: `  type name;` lines inside a typedef'd struct
    let mut fields = std::collections::BTreeSet::new();
    let mut functions = std::collections::BTreeSet::new();
    for line in header.lines() {
        let t = line.trim();
        if line.starts_with("  ")
            && t.ends_with(';')
            && !t.contains('(')
            && let Some(name) = t.trim_end_matches(';').split_whitespace().last()
        {
            fields.insert(name.trim_start_matches('*').to_string());
        }
        // a function-pointer field or typedef: `void *(*alloc)(...)`
        if let Some(at) = t.find("(*") {
            let name: String = t[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            fields.insert(name);
        }
        if let Some(at) = t.find("kiln_") {
            let name: String = t[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if t[at + name.len()..].starts_with('(') {
                functions.insert(name);
            }
        }
    }
    // each comment and the prototype after it
    let mut wrong = Vec::new();
    let mut checked = 0;
    let mut rest = header.as_str();
    while let Some(open) = rest.find("/*") {
        let Some(close) = rest[open..].find("*/") else {
            break;
        };
        let comment = &rest[open + 2..open + close];
        let after = &rest[open + close + 2..];
        rest = after;
        let Some(end) = after.find(';') else { break };
        let proto = after[..end].trim();
        let Some(paren) = proto.find('(') else {
            continue;
        };
        if proto.contains('{') || proto.contains("(*") || proto.starts_with('#') {
            continue;
        }
        let name = proto[..paren]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .trim_start_matches('*');
        let params: Vec<&str> = proto[paren + 1..proto.rfind(')').unwrap_or(proto.len())]
            .split(',')
            .filter_map(|p| p.split_whitespace().last())
            .map(|p| p.trim_start_matches('*'))
            .collect();
        checked += 1;
        for (k, quoted) in comment.split('`').enumerate() {
            if k % 2 == 1
                && ident(quoted)
                && !params.contains(&quoted)
                && !fields.contains(quoted)
                && !functions.contains(quoted)
            {
                wrong.push(format!(
                    "{name}: `{quoted}` is none of ({})",
                    params.join(", ")
                ));
            }
        }
    }
    assert!(
        checked > 40,
        "only {checked} prototypes found: the parser lost its way"
    );
    assert!(
        wrong.is_empty(),
        "comments quote names the prototypes lack:\n{}",
        wrong.join("\n")
    );
}
