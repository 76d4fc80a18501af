//! Argument parsing (clap) and the command implementations. The library
//! never sees clap types; each command turns its arguments into library calls.

use crate::Usage;
use crate::print::report_one;
use anyhow::{Context, Result, bail};
use baker_tools::{inspect, json_lines};
use clap::{Parser, Subcommand};
use kiln_baker::config::{
    Concavity, ConfigError, FaceBudget, MaxPieces, MaxPlanes, Metres, Overrides, VolumeFraction,
    parse_tree,
};
use kiln_baker::{BakeSettings, Outcome, export, write};
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
    /// Bake glTF files (.gltf/.glb) into archives, several in parallel.
    /// An archive whose header says it was baked from the same input
    /// bytes and settings by this baker is left alone (--force re-bakes).
    /// Exit status: 0 all baked or up to date, 1 some input failed, 2 usage.
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
        #[command(flatten)]
        settings: SettingsArgs,
        /// Bake even when the archive is up to date.
        #[arg(long)]
        force: bool,
        /// Write a Make/Ninja depfile: each archive with every file its
        /// bake read (the document and its external buffers).
        #[arg(long, value_name = "FILE")]
        depfile: Option<PathBuf>,
        /// Fail an input (and write nothing) when a concave collider
        /// deviates from its render mesh by more than the tolerance.
        #[arg(long)]
        strict: bool,
        /// Bake each input as a world of tiles of this many metres on an
        /// x-z grid: DIR/STEM.kilnworld (the manifest) and a
        /// DIR/STEM.I.K.kiln archive per tile, each relative to its tile's
        /// origin; only tiles whose objects changed are baked again (needs
        /// --out-dir).
        #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
        tile_size: Option<f64>,
        /// Bake the inputs as tiles authored apart: each its own archive
        /// in --out-dir, and DIR/NAME.kilnworld listing them at the origins
        /// kiln.toml's [tiles.origins] gives their file names.
        #[arg(long, value_name = "NAME", conflicts_with = "tile_size")]
        world: Option<String>,
    },
    /// Write a world manifest listing tile archives baked apart, each at
    /// its f64 origin (a build system's last step: archives in, manifest
    /// out; `baker bake --world` does the same from kiln.toml).
    World {
        /// The manifest to write (NAME.kilnworld); every archive must lie
        /// in its folder or below.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        /// Each tile as ARCHIVE@X,Y,Z: its archive and where its origin
        /// sits in the world (metres).
        #[arg(required = true, value_name = "ARCHIVE@X,Y,Z")]
        tiles: Vec<String>,
    },
    /// Bake every glTF file named (or found under a directory named), then
    /// re-bake each whenever it or a buffer it reads changes, until Ctrl-C.
    Watch {
        /// glTF files and directories to watch.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output directory: each input becomes DIR/STEM.kiln.
        #[arg(long, required = true)]
        out_dir: PathBuf,
        /// Poll for changes instead of file-system events (network shares,
        /// containers).
        #[arg(long)]
        poll: bool,
        /// Print one JSON report per bake on stdout.
        #[arg(long)]
        json: bool,
        /// Milliseconds file events settle before a bake (a burst of saves
        /// is one bake).
        #[arg(long, value_name = "MS", default_value_t = 200)]
        debounce: u64,
        /// Bake each input as a world of tiles of this many metres, as
        /// `bake --tile-size` does: a change bakes only the tiles whose
        /// objects changed [default: kiln.toml's `[tiles] size`, if any].
        #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
        tile_size: Option<f64>,
        /// Bake the inputs as tiles authored apart, each its own archive,
        /// and keep DIR/NAME.kilnworld listing them at the origins
        /// kiln.toml's [tiles.origins] gives their file names.
        #[arg(long, value_name = "NAME", conflicts_with = "tile_size")]
        world: Option<String>,
        #[command(flatten)]
        settings: SettingsArgs,
    },
    /// Show what an archive holds: counts, bytes, tree quality, objects
    /// (or what a world manifest lists: its tiles).
    Inspect {
        /// The archive, or a `.kilnworld` manifest.
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
    /// Write the colliders as glTF physics (.glb: `KHR_physics_rigid_bodies`
    /// with `KHR_implicit_shapes` boxes, spheres and capsules, convex and
    /// triangle meshes, and a decomposed object as a compound of its convex
    /// pieces, each with a preview mesh) or as world-space triangles (.obj).
    Export {
        /// The archive.
        archive: PathBuf,
        /// Output file; the extension (.glb or .obj) picks the format.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
        /// Also write the render meshes of this glTF file (the archive's
        /// source), so colliders (translucent orange) and render meshes
        /// (grey) can be compared in any glTF viewer (.glb only).
        #[arg(long, value_name = "GLTF")]
        compare: Option<PathBuf>,
    },
    /// Show an archive in the browser: colliders coloured by kind beside
    /// the source's render meshes, an object list, live ray and probe
    /// queries, and live reload when the archive is re-baked. Serves on
    /// 127.0.0.1 only, until Ctrl-C.
    View(crate::view_cmd::Args),
}

/// The settings a bake runs with, as flags (shared by `bake` and `watch`).
/// Precedence: built-in defaults, then the project file, then flags given
/// on the command line.
#[derive(clap::Args)]
struct SettingsArgs {
    /// Project file (default: `kiln.toml` beside each input, if there is one).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Read no project file, not even a `kiln.toml` beside the input (a
    /// hermetic build action that declares none: the Bazel rules pass it).
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
    /// Bounding volumes of every triangle mesh's tree (terrain, level
    /// geometry): aabb or sphere [default: aabb]. Sphere trees measured
    /// slower for every query kind (rays 5 to 9 times slower: BENCHMARKS.md).
    #[arg(long, value_name = "KIND", value_parser = parse_tree)]
    mesh_tree: Option<TreeKind>,
    /// Automatic classification: a closed mesh within this fraction of
    /// its convex hull's volume is convex, in [0, 1) [default: 0.02].
    #[arg(long, value_name = "FRACTION")]
    convex_tolerance: Option<VolumeFraction>,
    /// Most planes a polytope may have, 6 to 256; larger hulls are capped
    /// (the report says how far the capped hull reaches beyond the exact
    /// one) [default: 64].
    #[arg(long, value_name = "N")]
    max_planes: Option<MaxPlanes>,
    /// Automatic classification: the most render triangles a non-convex
    /// prop may have to become a concave solid (BSP tree) rather than a
    /// triangle mesh [default: no cap].
    #[arg(long, value_name = "N")]
    concave_max_triangles: Option<usize>,
    /// Concave colliders: the largest deviation from the render mesh, in
    /// world units (metres), measured at the largest scale the mesh is
    /// placed with [default: 0.05].
    #[arg(long, value_name = "M")]
    max_deviation: Option<Metres>,
    /// Concave colliders: the face budget, 4 to 65536; simplification
    /// stops at the budget or the deviation, whichever comes first
    /// [default: 128].
    #[arg(long, value_name = "N")]
    max_faces: Option<FaceBudget>,
    /// Give every concave solid its convex pieces, stored beside it for
    /// physics engines (objects that ask by name, and dynamic bodies, get
    /// them anyway).
    #[arg(long)]
    decompose: bool,
    /// How far convex pieces may bulge beyond their object: metres
    /// (`0.05`) or a percentage of its diagonal (`2%`) [default: 2%].
    #[arg(long, value_name = "M|P%")]
    decompose_concavity: Option<Concavity>,
    /// Most convex pieces per object, 1 to 1024 [default: 64].
    #[arg(long, value_name = "N")]
    max_pieces: Option<MaxPieces>,
    /// Concave colliders: add bevel planes below the BSP's solid leaves
    /// (off by default: no query needs them since concave solids answer
    /// on their surface; kept to measure what they cost).
    #[arg(long)]
    bevels: bool,
    /// Bake every drawn object as a triangle mesh and no authored
    /// collider (no classification).
    #[arg(long)]
    all_meshes: bool,
    /// In files that author colliders with glTF physics extensions,
    /// also bake the render meshes (default: only the authored colliders).
    #[arg(long)]
    render_meshes: bool,
}

impl SettingsArgs {
    /// Where the project file for `input` is or would be: `--config`, else
    /// `kiln.toml` beside it.
    fn config_path(&self, input: &Path) -> PathBuf {
        self.config.clone().unwrap_or_else(|| {
            let dir = input.parent().unwrap_or(Path::new("."));
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dir.join("kiln.toml")
        })
    }

    /// The project file for `input`, if there is one: `--config` (which
    /// must exist), else `kiln.toml` beside it; none with `--no-config`.
    fn config_for(&self, input: &Path) -> Option<PathBuf> {
        if self.no_config {
            return None;
        }
        let path = self.config_path(input);
        (self.config.is_some() || path.is_file()).then_some(path)
    }

    /// `input`'s project file, read and checked (`None` if it has none).
    fn project(
        &self,
        input: &Path,
    ) -> Result<Option<kiln_baker::config::ProjectConfig>, ConfigError> {
        self.config_for(input)
            .map(|p| kiln_baker::config::ProjectConfig::load(&p))
            .transpose()
    }

    /// The settings for `input` (its project file read and checked).
    fn resolve(
        &self,
        input: &Path,
    ) -> Result<(BakeSettings, Option<kiln_baker::config::ProjectConfig>), ConfigError> {
        let mut settings = BakeSettings::default();
        let project = match self.config_for(input) {
            Some(path) => {
                let c = kiln_baker::config::ProjectConfig::load(&path)?;
                settings = c.apply(settings);
                Some(c)
            }
            None => None,
        };
        Overrides {
            mesh_tree: self.mesh_tree,
            convex_tolerance: self.convex_tolerance,
            max_planes: self.max_planes,
            concave_max_triangles: self.concave_max_triangles,
            max_deviation: self.max_deviation,
            max_faces: self.max_faces,
            decompose: self.decompose.then_some(true),
            decompose_concavity: self.decompose_concavity,
            max_pieces: self.max_pieces,
        }
        .apply(&mut settings);
        if self.bevels {
            settings.bevels = true;
        }
        if self.render_meshes {
            settings.render_meshes = true;
        }
        if self.all_meshes {
            settings = settings.all_meshes();
        }
        Ok((settings, project))
    }
}

/// The error for a flag renamed since Kiln 0.1 among `args`, if any: the
/// project file's renamed keys ([`kiln_baker::config::RENAMED`]) as flags.
fn renamed_flag(args: impl Iterator<Item = std::ffi::OsString>) -> Option<String> {
    for arg in args {
        let arg = arg.to_string_lossy();
        if arg == "--" {
            break;
        }
        for (old, new) in kiln_baker::config::RENAMED {
            let flag = |key: &str| format!("--{}", key.replace('_', "-"));
            let (old, new) = (flag(old), flag(new));
            if arg == old || arg.starts_with(&format!("{old}=")) {
                return Some(format!("{old} is now spelled {new}"));
            }
        }
    }
    None
}

pub fn main() -> ExitCode {
    if let Some(e) = renamed_flag(std::env::args_os().skip(1)) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bake {
            inputs,
            out,
            out_dir,
            json,
            threads,
            settings,
            force,
            depfile,
            strict,
            tile_size,
            world,
        } => {
            let opts = BakeOpts {
                json,
                threads,
                force,
                depfile,
                strict,
            };
            // the grid: --tile-size, else the first input's [tiles] size
            // when baking into a folder
            let grid = tile_size.or_else(|| {
                let first = inputs.first()?;
                out_dir.as_ref()?;
                world.is_none().then_some(())?;
                settings.project(first).ok()??.tiles.size
            });
            match (grid, out_dir.as_deref(), world) {
                (Some(size), Some(dir), None) => bake_tiles(&inputs, dir, size, &opts, &settings),
                (Some(_), None, _) => Err(Usage(
                    "--tile-size writes a manifest and its tiles: say where with --out-dir <DIR>"
                        .into(),
                )
                .into()),
                (_, Some(dir), Some(name)) => bake_world(&inputs, dir, &name, &opts, &settings),
                (_, None, Some(_)) => Err(Usage(
                    "--world writes a manifest and its tiles: say where with --out-dir <DIR>"
                        .into(),
                )
                .into()),
                _ => bake(
                    &inputs,
                    out.as_deref(),
                    out_dir.as_deref(),
                    &opts,
                    &settings,
                ),
            }
        }
        Command::World { out, tiles } => write_world(&out, &tiles),
        Command::Watch {
            paths,
            out_dir,
            poll,
            json,
            debounce,
            tile_size,
            world,
            settings,
        } => 'watch: {
            if let Some(size) = tile_size
                && !(size.is_finite() && size > 0.0)
            {
                break 'watch Err(Usage(format!(
                    "--tile-size {size} is not a positive number of metres"
                ))
                .into());
            }
            let first = paths.first().cloned().unwrap_or_default();
            // one project file for a watch: --config, else beside the first path
            let anchor = if first.is_dir() {
                first.join("x")
            } else {
                first
            };
            let resolve = || {
                settings.resolve(&anchor).map(|(s, project)| {
                    let p = project.unwrap_or_default();
                    (s, p.watch, p.tiles)
                })
            };
            let project = crate::watch::Project {
                path: settings.config_path(&anchor),
                resolve: &resolve,
            };
            let opts = crate::watch::Options {
                poll,
                json,
                tile_size,
                world,
                debounce: std::time::Duration::from_millis(debounce),
            };
            crate::watch::watch(&paths, &out_dir, &opts, &project).map(|_| true)
        }
        Command::Inspect { archive, json } => inspect_cmd(&archive, json).map(|_| true),
        Command::Query { archive, input } => query_cmd(&archive, input.as_deref()).map(|_| true),
        Command::Export {
            archive,
            out,
            compare,
        } => export_cmd(&archive, &out, compare.as_deref()).map(|_| true),
        Command::View(args) => crate::view_cmd::view_cmd(args).map(|_| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) if e.downcast_ref::<Usage>().is_some() => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `bake`'s switches besides the settings.
struct BakeOpts {
    json: bool,
    threads: Option<usize>,
    force: bool,
    depfile: Option<PathBuf>,
    strict: bool,
}

/// Bakes every input in parallel; returns false if any failed (the others
/// still bake). Lines are printed as inputs finish, each naming its input.
fn bake(
    inputs: &[PathBuf],
    out: Option<&Path>,
    out_dir: Option<&Path>,
    opts: &BakeOpts,
    settings: &SettingsArgs,
) -> Result<bool> {
    use rayon::prelude::*;
    if let Some(n) = opts.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("cannot set up the thread pool")?;
    }
    let outputs: Vec<PathBuf> = match (out, out_dir) {
        (Some(o), None) => {
            if inputs.len() != 1 {
                return Err(Usage(format!(
                    "-o/--out takes a single input; use --out-dir for {} inputs",
                    inputs.len()
                ))
                .into());
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
        _ => {
            return Err(Usage(
                "say where to write: -o <OUT> (one input) or --out-dir <DIR>".into(),
            )
            .into());
        }
    };
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = outputs.iter().find(|o| !seen.insert(*o)) {
        return Err(Usage(format!(
            "two inputs would write {}; bake them into different directories",
            dup.display()
        ))
        .into());
    }
    let total = inputs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    // a progress bar on a terminal for batches, plain lines otherwise
    use std::io::IsTerminal;
    let bar = (total > 1 && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} baked, {elapsed}")
        {
            b.set_style(style);
        }
        b
    });
    let print = |line: String| match &bar {
        Some(b) => b.println(line),
        None => eprintln!("{line}"),
    };
    let outcomes: Vec<Outcome> = inputs
        .par_iter()
        .zip(&outputs)
        .map(|(input, output)| {
            let outcome = match settings.resolve(input) {
                Ok((s, _)) => {
                    let mut outcome =
                        kiln_baker::bake_to_file(input, output, opts.force, opts.strict, &s);
                    // the project file is an input too (for depfiles)
                    if let (Outcome::Baked(_, files) | Outcome::UpToDate(files), Some(c)) =
                        (&mut outcome, settings.config_for(input))
                    {
                        files.push(c);
                    }
                    outcome
                }
                Err(e) => Outcome::Failed(e.into()),
            };
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            report_one(n, total, input, output, &outcome, opts.json, &print);
            if let Some(b) = &bar {
                b.inc(1);
            }
            outcome
        })
        .collect();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(dep) = &opts.depfile {
        let mut text = String::new();
        for (output, outcome) in outputs.iter().zip(&outcomes) {
            if let Outcome::Baked(_, files) | Outcome::UpToDate(files) = outcome {
                text.push_str(&make_escape(output));
                text.push(':');
                for f in files {
                    text.push(' ');
                    text.push_str(&make_escape(f));
                }
                text.push('\n');
            }
        }
        write::write_atomic(dep, text.as_bytes())
            .with_context(|| format!("{}: cannot write the depfile", dep.display()))?;
    }
    Ok(outcomes.iter().all(|o| !matches!(o, Outcome::Failed(_))))
}

/// Bakes `inputs` into `dir` as tiles authored apart, each its own
/// archive, then writes `dir/NAME.kilnworld` listing them at the origins
/// their project files give their names; false if any failed (then no
/// manifest is written).
fn bake_world(
    inputs: &[PathBuf],
    dir: &Path,
    name: &str,
    opts: &BakeOpts,
    settings: &SettingsArgs,
) -> Result<bool> {
    // every origin first: a missing one stops before anything is baked
    let mut tiles = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (file, archive) = tile_names(input);
        let origin = settings
            .project(input)?
            .and_then(|p| p.tiles.origins.get(&file).copied())
            .ok_or_else(|| {
                Usage(format!(
                    "{}: no origin for it: give one in kiln.toml, [tiles.origins] \"{file}\" = [x, y, z]",
                    input.display()
                ))
            })?;
        tiles.push((archive, origin));
    }
    if !bake(inputs, None, Some(dir), opts, settings)? {
        return Ok(false);
    }
    write_manifest(dir, &dir.join(format!("{name}.kilnworld")), &tiles)
}

/// A tile authored apart: its input's file name (its key in
/// `[tiles.origins]`) and its archive's (`STEM.kiln`, beside the manifest).
pub(crate) fn tile_names(input: &Path) -> (String, String) {
    let file = input
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = input.file_stem().unwrap_or(input.as_os_str());
    let archive = Path::new(stem).with_extension("kiln");
    (file, archive.to_string_lossy().into_owned())
}

/// Writes the manifest `path` of the archives `tiles` (paths relative to
/// `dir`, at their origins) and says what it lists.
pub(crate) fn write_manifest(
    dir: &Path,
    path: &Path,
    tiles: &[(String, [f64; 3])],
) -> Result<bool> {
    let (manifest, bytes) = kiln_baker::tile::world_of_archives(dir, tiles)?;
    write::write_atomic(path, &bytes)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    let objects: usize = manifest.tiles.iter().map(|t| t.objects as usize).sum();
    eprintln!(
        "{}: {} tiles authored apart, {objects} objects",
        path.display(),
        manifest.tiles.len()
    );
    Ok(true)
}

/// `path` made absolute and its `.` and `..` taken out by name, without
/// following links (unlike `canonicalize`).
fn lexical_absolute(path: &Path) -> std::io::Result<PathBuf> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    let mut out = PathBuf::new();
    for c in std::path::absolute(path)?.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// `baker world`: the manifest `out` of the archives `tiles` names
/// (`ARCHIVE@X,Y,Z`), each in `out`'s folder or below.
fn write_world(out: &Path, tiles: &[String]) -> Result<bool> {
    let dir = out.parent().unwrap_or(Path::new(""));
    // paths as written, not through links: a build system's sandbox links
    // each input archive to where it was built, and the manifest must name
    // the archive beside it, not that link's target
    let base = lexical_absolute(dir)
        .with_context(|| format!("{}: the manifest's folder", dir.display()))?;
    let mut placed = Vec::with_capacity(tiles.len());
    for t in tiles {
        let (file, at) = t
            .rsplit_once('@')
            .ok_or_else(|| Usage(format!("{t:?}: write each tile as ARCHIVE@X,Y,Z")))?;
        let origin: Vec<f64> = at
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| Usage(format!("{t:?}: the origin {at:?}: {e}")))?;
        let origin: [f64; 3] = origin
            .try_into()
            .map_err(|_| Usage(format!("{t:?}: the origin {at:?} is not X,Y,Z")))?;
        let full =
            lexical_absolute(Path::new(file)).with_context(|| format!("{file}: cannot read"))?;
        if !full.is_file() {
            bail!("{file}: cannot read: no such file");
        }
        let rel = full.strip_prefix(&base).map_err(|_| {
            Usage(format!(
                "{file}: not in {} or below, where the manifest's paths start",
                base.display()
            ))
        })?;
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        placed.push((rel, origin));
    }
    write_manifest(&base, out, &placed)
}

/// Bakes each input as a world of tiles of `size` m into `dir`; returns
/// false if any failed (the others still bake). With a depfile, each
/// tile's archive and the manifest depend on the files the input's bake
/// read and its project file.
fn bake_tiles(
    inputs: &[PathBuf],
    dir: &Path,
    size: f64,
    opts: &BakeOpts,
    settings: &SettingsArgs,
) -> Result<bool> {
    let force = opts.force;
    let mut deps = String::new();
    if !(size.is_finite() && size > 0.0) {
        return Err(Usage(format!(
            "--tile-size {size} is not a positive number of metres"
        ))
        .into());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut ok = true;
    for (n, input) in inputs.iter().enumerate() {
        let done = settings
            .resolve(input)
            .map_err(anyhow::Error::from)
            .and_then(|(s, _)| {
                kiln_baker::tile::bake_tiled_to_dir(input, dir, size, force, &s)
                    .map_err(anyhow::Error::from)
            });
        match done {
            Ok(r) => {
                eprintln!(
                    "[{}/{}] {} -> {}: {} tiles of {size} m ({} baked, {} up to date, {} removed), {} objects, {} bytes",
                    n + 1,
                    inputs.len(),
                    input.display(),
                    r.manifest.display(),
                    r.tiles,
                    r.baked,
                    r.up_to_date,
                    r.removed,
                    r.objects,
                    r.bytes
                );
                let mut files = r.files.clone();
                files.extend(settings.config_for(input));
                for out in r.archives.iter().chain([&r.manifest]) {
                    deps.push_str(&make_escape(out));
                    deps.push(':');
                    for f in &files {
                        deps.push(' ');
                        deps.push_str(&make_escape(f));
                    }
                    deps.push('\n');
                }
            }
            Err(e) => {
                ok = false;
                eprintln!("[{}/{}] {}: {e:#}", n + 1, inputs.len(), input.display());
            }
        }
    }
    if let Some(dep) = &opts.depfile {
        write::write_atomic(dep, deps.as_bytes())
            .with_context(|| format!("{}: cannot write the depfile", dep.display()))?;
    }
    Ok(ok)
}

/// A path for a Make/Ninja depfile: spaces and `#` escaped with a
/// backslash, `$` doubled (backslashes stay: Windows separators).
fn make_escape(p: &Path) -> String {
    let mut out = String::new();
    for c in p.display().to_string().chars() {
        match c {
            ' ' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out
}

/// Reads the archive at `path` into aligned memory, for
/// [`kiln_formats::Archive::access`] (the tools read archives through the
/// schema crate; queries go through the runtime's `Level`).
fn read_archive(path: &Path) -> Result<kiln_formats::AlignedBytes> {
    let cannot = || format!("{}: cannot read", path.display());
    let mut file = std::fs::File::open(path).with_context(cannot)?;
    let mut bytes = kiln_formats::AlignedBytes::new();
    bytes.extend_from_reader(&mut file).with_context(cannot)?;
    Ok(bytes)
}

/// The validated archive in `bytes`, read from `path`.
fn access<'a>(path: &Path, bytes: &'a [u8]) -> Result<kiln_formats::Archive<'a>> {
    kiln_formats::Archive::access(bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn inspect_cmd(archive: &Path, json: bool) -> Result<()> {
    let bytes = read_archive(archive)?;
    if bytes.starts_with(&kiln_formats::world::WORLD.magic) {
        return inspect_world(archive, &bytes, json);
    }
    let report = inspect::inspect(&access(archive, &bytes)?);
    if json {
        stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        stdout(&inspect::to_text(&report))?;
    }
    Ok(())
}

/// `inspect` of a world manifest: its tiles, a line each (or JSON).
fn inspect_world(path: &Path, bytes: &[u8], json: bool) -> Result<()> {
    let (header, world) = kiln_formats::world::access_world_file(bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let tiles: Vec<kiln_formats::world::Tile> = world.tiles.iter().map(|t| t.to_tile()).collect();
    let size = world.tile_size.to_native();
    if json {
        let rows: Vec<serde_json::Value> = tiles
            .iter()
            .map(|t| {
                serde_json::json!({
                    "cell": t.cell, "origin": t.origin, "bounds": t.bounds, "file": t.file,
                    "objects": t.objects, "bytes": t.bytes,
                    "content_hash": t.content_hash.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                })
            })
            .collect();
        let out = serde_json::json!({
            "world_version": header.format_version,
            "tile_size": size,
            "tiles": rows,
            "objects": tiles.iter().map(|t| u64::from(t.objects)).sum::<u64>(),
            "bytes": tiles.iter().map(|t| t.bytes).sum::<u64>(),
        });
        return stdout(&format!("{}\n", serde_json::to_string_pretty(&out)?));
    }
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "world manifest v{}: {} tiles of {size} m, {} objects, {} bytes of tiles",
        header.format_version,
        tiles.len(),
        tiles.iter().map(|t| u64::from(t.objects)).sum::<u64>(),
        tiles.iter().map(|t| t.bytes).sum::<u64>()
    );
    let _ = writeln!(
        text,
        "{:>12}  {:>28}  {:>8}  {:>10}  file",
        "cell", "origin", "objects", "bytes"
    );
    for t in &tiles {
        let _ = writeln!(
            text,
            "{:>12}  {:>28}  {:>8}  {:>10}  {}",
            format!("{} {}", t.cell[0], t.cell[1]),
            format!("{} {} {}", t.origin[0], t.origin[1], t.origin[2]),
            t.objects,
            t.bytes,
            t.file
        );
    }
    stdout(&text)
}

/// Writes `text` to stdout; a reader that went away (`baker inspect … |
/// head`) ends the output quietly instead of panicking as `print!` does.
fn stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write to stdout"))
        }
        _ => Ok(()),
    }
}

fn query_cmd(archive: &Path, input: Option<&Path>) -> Result<()> {
    // a world of the level: its movers where they were baked
    let world = kiln_runtime::World::new(std::sync::Arc::new(Level::open(archive)?));
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
        writeln!(out, "{}", json_lines::answer_line(&world, &line))?;
    }
    out.flush()?;
    Ok(())
}

fn export_cmd(archive: &Path, out: &Path, compare: Option<&Path>) -> Result<()> {
    let bytes = read_archive(archive)?;
    let level = access(archive, &bytes)?.level;
    let objects = export::world_objects(level);
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let bytes = match (ext.as_deref(), compare) {
        (Some("glb"), Some(source)) => {
            let scene = kiln_baker::ingest::load(source)?.scene;
            let render = export::render_objects(&scene);
            eprintln!("{} render objects from {}", render.len(), source.display());
            export::to_compare_glb(&render, &objects)
        }
        (_, Some(_)) => {
            return Err(Usage(format!("{}: --compare writes .glb only", out.display())).into());
        }
        (Some("glb"), None) => export::to_physics_glb(level),
        (Some("obj"), None) => export::to_obj(&objects).into_bytes(),
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
