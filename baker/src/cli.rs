//! Argument parsing (clap) and the command implementations. The library
//! never sees clap types; each command turns its arguments into library calls.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use kiln_baker::{BakeSettings, export, inspect, query, write};
use kiln_formats::TreeKind;
use kiln_runtime::Level;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "baker",
    version,
    about = "Bake glTF levels into Kiln collision archives, inspect and query them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bake glTF files (.gltf/.glb) into archives.
    Bake {
        /// Input glTF files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output archive (only with a single input).
        #[arg(short = 'o', long = "out", conflicts_with = "out_dir")]
        out: Option<PathBuf>,
        /// Output directory: each input becomes DIR/STEM.kiln.
        #[arg(long)]
        out_dir: Option<PathBuf>,
        /// Print one JSON report per input on stdout.
        #[arg(long)]
        json: bool,
        /// Worker threads (default: all cores). Output is identical for any value.
        #[arg(long)]
        threads: Option<usize>,
        /// Bounding volumes of the triangle-mesh (terrain) trees.
        #[arg(long, value_enum, default_value_t = TreeArg::Aabb)]
        terrain_tree: TreeArg,
        /// Automatic classification: a closed mesh within this fraction of
        /// its convex hull's volume becomes a polytope.
        #[arg(long, default_value_t = 0.02)]
        convex_tolerance: f64,
        /// Most planes a polytope may have; larger hulls stay triangle meshes.
        #[arg(long, default_value_t = 64)]
        max_planes: usize,
        /// Bake every drawn object as a triangle mesh and no authored
        /// collider (no classification).
        #[arg(long)]
        all_meshes: bool,
        /// In files that author colliders with glTF physics extensions,
        /// also bake the render meshes (default: only the authored colliders).
        #[arg(long)]
        render_meshes: bool,
    },
    /// Show what an archive holds: counts, bytes, tree quality, objects.
    Inspect {
        /// The archive.
        archive: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Answer JSON-lines queries (stdin → stdout by default).
    Query {
        /// The archive.
        archive: PathBuf,
        /// Read requests from this file instead of stdin.
        #[arg(long)]
        input: Option<PathBuf>,
    },
    /// Write the baked collision triangles (world space) as .glb or .obj.
    Export {
        /// The archive.
        archive: PathBuf,
        /// Output file; the extension (.glb or .obj) picks the format.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
    },
}

/// `--terrain-tree` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TreeArg {
    /// Axis-aligned boxes, 8-bit child boxes in every node (the default:
    /// faster rays, overlaps and sweeps, smaller; see README).
    Aabb,
    /// Spheres from MeldSpheres, 16-bit.
    Sphere,
}

impl From<TreeArg> for TreeKind {
    fn from(t: TreeArg) -> TreeKind {
        match t {
            TreeArg::Aabb => TreeKind::Aabb,
            TreeArg::Sphere => TreeKind::Sphere,
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bake {
            inputs,
            out,
            out_dir,
            json,
            threads,
            terrain_tree,
            convex_tolerance,
            max_planes,
            all_meshes,
            render_meshes,
        } => {
            let mut settings = BakeSettings::default().with_tree(terrain_tree.into());
            settings.convex_tolerance = convex_tolerance;
            settings.max_planes = max_planes;
            settings.render_meshes = render_meshes;
            if all_meshes {
                settings = settings.all_meshes();
            }
            bake(
                &inputs,
                out.as_deref(),
                out_dir.as_deref(),
                json,
                threads,
                &settings,
            )
        }
        Command::Inspect { archive, json } => inspect_cmd(&archive, json).map(|_| true),
        Command::Query { archive, input } => query_cmd(&archive, input.as_deref()).map(|_| true),
        Command::Export { archive, out } => export_cmd(&archive, &out).map(|_| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Bakes every input; returns false if any failed (the others still bake).
fn bake(
    inputs: &[PathBuf],
    out: Option<&Path>,
    out_dir: Option<&Path>,
    json: bool,
    threads: Option<usize>,
    settings: &BakeSettings,
) -> Result<bool> {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("cannot set up the thread pool")?;
    }
    let outputs: Vec<PathBuf> = match (out, out_dir) {
        (Some(o), None) => {
            if inputs.len() != 1 {
                bail!(
                    "-o/--out takes a single input; use --out-dir for {} inputs",
                    inputs.len()
                );
            }
            vec![o.to_path_buf()]
        }
        (None, Some(d)) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            inputs
                .iter()
                .map(|i| {
                    let stem = i.file_stem().unwrap_or(i.as_os_str());
                    d.join(stem).with_extension("kiln")
                })
                .collect()
        }
        _ => bail!("say where to write: -o <OUT> (one input) or --out-dir <DIR>"),
    };
    let mut ok = true;
    for (n, (input, output)) in inputs.iter().zip(&outputs).enumerate() {
        let result = kiln_baker::bake_file(input, settings)
            .map_err(anyhow::Error::from)
            .and_then(|baked| {
                write::write_atomic(output, &baked.bytes)
                    .with_context(|| format!("{}: cannot write", output.display()))?;
                Ok(baked)
            });
        match result {
            Ok(baked) => {
                let r = &baked.report;
                for w in &r.notes {
                    eprintln!("note: {}: {w}", input.display());
                }
                for w in &r.warnings {
                    eprintln!("warning: {}: {w}", input.display());
                }
                let kinds: Vec<String> = r
                    .shape_kinds
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                eprintln!(
                    "[{}/{}] {} -> {}: {} of {} objects have colliders, {} shapes ({}), {} triangles stored ({} degenerate dropped), {} bytes ({:.1} B/tri), {:.0} ms",
                    n + 1,
                    inputs.len(),
                    input.display(),
                    output.display(),
                    r.instances,
                    r.objects,
                    r.shapes,
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
                );
                if json {
                    let mut v = serde_json::to_value(r)?;
                    v["output"] = output.display().to_string().into();
                    println!("{v}");
                }
            }
            Err(e) => {
                ok = false;
                eprintln!("error: {e:#}");
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"input": input.display().to_string(), "error": format!("{e:#}")})
                    );
                }
            }
        }
    }
    Ok(ok)
}

fn inspect_cmd(archive: &Path, json: bool) -> Result<()> {
    let level = Level::open(archive)?;
    let report = inspect::inspect(&level);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", inspect::to_text(&report));
    }
    Ok(())
}

fn query_cmd(archive: &Path, input: Option<&Path>) -> Result<()> {
    let level = Level::open(archive)?;
    let reader: Box<dyn BufRead> = match input {
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p).with_context(|| format!("cannot open {}", p.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in reader.lines() {
        let line = line.context("cannot read a request line")?;
        if line.trim().is_empty() {
            continue;
        }
        writeln!(out, "{}", query::answer_line(&level, &line))?;
    }
    out.flush()?;
    Ok(())
}

fn export_cmd(archive: &Path, out: &Path) -> Result<()> {
    let level = Level::open(archive)?;
    let objects = export::world_objects(&level);
    let bytes = match out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("glb") => export::to_glb(&objects),
        Some("obj") => export::to_obj(&objects).into_bytes(),
        _ => bail!("{}: the output must end in .glb or .obj", out.display()),
    };
    write::write_atomic(out, &bytes).with_context(|| format!("{}: cannot write", out.display()))?;
    let tris: usize = objects.iter().map(|o| o.triangles.len()).sum();
    eprintln!(
        "{} objects, {} triangles -> {}",
        objects.len(),
        tris,
        out.display()
    );
    Ok(())
}
