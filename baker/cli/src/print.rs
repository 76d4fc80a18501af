//! What the binary prints for a bake: one line per input on stderr (or
//! above the progress bar), and with `--json` one report per input on
//! stdout. Shared by `baker bake` and `baker watch`.

use kiln_baker::Outcome;
use std::path::Path;

/// Prints one input's line (stderr) and JSON report (stdout).
pub fn report_one(
    n: usize,
    total: usize,
    input: &Path,
    output: &Path,
    outcome: &Outcome,
    json: bool,
    print: &(dyn Fn(String) + Sync),
) {
    match outcome {
        Outcome::UpToDate(_) => {
            print(format!(
                "[{n}/{total}] {} -> {}: up to date",
                input.display(),
                output.display()
            ));
            if json {
                println!(
                    "{}",
                    serde_json::json!({"input": input.display().to_string(), "output": output.display().to_string(), "up_to_date": true})
                );
            }
        }
        Outcome::Baked(baked, _) => {
            let r = &baked.report;
            for w in &r.notes {
                print(format!("note: {}: {w}", input.display()));
            }
            for w in &r.warnings {
                print(format!("warning: {}: {w}", input.display()));
            }
            let kinds: Vec<String> = r
                .collider_kinds
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            print(format!(
                "[{n}/{total}] {} -> {}: {} of {} objects have colliders{}, {} distinct colliders ({}), {} triangles stored ({} degenerate dropped), {} bytes ({:.1} B/tri), {:.0} ms",
                input.display(),
                output.display(),
                r.instances,
                r.objects,
                match r.render_meshes {
                    0 => String::new(),
                    1 => " (and 1 render mesh whose collider is authored apart)".into(),
                    n => format!(" (and {n} render meshes whose colliders are authored apart)"),
                },
                r.colliders,
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds.join(", ")
                },
                r.stored_triangles,
                r.scene_degenerate,
                r.bytes,
                r.bytes_per_triangle,
                r.ingest_ms + r.build_ms
            ));
            if json && let Ok(mut v) = serde_json::to_value(r) {
                v["output"] = output.display().to_string().into();
                v["up_to_date"] = false.into();
                println!("{v}");
            }
        }
        Outcome::Failed(e) => {
            print(format!("error: {e:#}"));
            if json {
                println!(
                    "{}",
                    serde_json::json!({"input": input.display().to_string(), "error": format!("{e:#}")})
                );
            }
        }
    }
}
