//! `baker watch`: bake every input once (skipping up-to-date archives),
//! then re-bake an input whenever a file it reads changes.
//!
//! Parent directories are watched, not files, so every way editors save
//! works: write a temporary file and rename it over the old one (Blender
//! and most editors), truncate and write in place, delete and recreate.
//! Events are debounced (`notify-debouncer-full`, 200 ms), so a burst of
//! saves is one bake. A save that does not parse yet (half written) prints
//! its cause, keeps the last good archive, and is tried again on the next
//! event. Editor temporaries and backups and the output directory are
//! ignored. `--poll` polls instead of subscribing to events (network
//! shares, containers): every 250 ms, comparing contents (the poller's
//! modification times have whole-second resolution).
//!
//! Worlds: with a grid (`--tile-size`, or `[tiles] size`), each input is
//! baked as tiles, and a change bakes only the tiles whose objects changed;
//! with `--world NAME`, each input is a tile authored apart and the
//! manifest is written again whenever a tile's archive changes.

use crate::print::report_one;
use anyhow::{Context, Result};
use kiln_baker::BakeSettings;
use kiln_baker::Outcome;
use kiln_baker::config::{TilesTable, WatchTable};
use notify_debouncer_full::notify::{self, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer, new_debouncer_opt};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Whether `p` is a glTF document by its extension.
fn is_gltf(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("gltf" | "glb")
    )
}

/// Editor temporaries and backups: `~` endings, `.swp`/`.tmp`/`.bak`/
/// `.blend1`, names starting `.#`, `#`, or `.` (hidden, like the baker's
/// own `.name.tmp-…` files).
fn is_scratch(p: &Path) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    name.starts_with('.')
        || name.starts_with('#')
        || name.ends_with('~')
        || [
            ".swp",
            ".swx",
            ".tmp",
            ".bak",
            ".blend1",
            ".part",
            ".crdownload",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Whether the project's `[watch]` include/exclude globs let `p` in.
fn wanted(p: &Path, filter: &WatchTable) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| filter.wants(n))
}

/// Absolute form of `p` (no symlinks resolved: files may not exist yet).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The glTF documents a command-line argument names: the file itself, or
/// every `.gltf`/`.glb` under a directory (recursively, the output
/// directory and hidden folders left out).
fn documents(arg: &Path, out_dir: &Path, filter: &WatchTable, into: &mut BTreeSet<PathBuf>) {
    if arg.is_dir() {
        let Ok(entries) = std::fs::read_dir(arg) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if absolute(&p) == out_dir || is_scratch(&p) {
                continue;
            }
            if p.is_dir() {
                documents(&p, out_dir, filter, into);
            } else if is_gltf(&p) && wanted(&p, filter) {
                into.insert(absolute(&p));
            }
        }
    } else {
        into.insert(absolute(arg));
    }
}

/// The watch's project file: where it is (or would be), and how to read
/// the settings and watch filter from it (with the command line's flags
/// applied) when it changes.
pub struct Project<'a> {
    /// `--config`, else `kiln.toml` beside the first path (watched even
    /// when absent, so creating one takes effect).
    pub path: PathBuf,
    /// Reads the settings, filter and tiles table again.
    pub resolve: &'a dyn Fn() -> Result<
        (BakeSettings, WatchTable, TilesTable),
        kiln_baker::config::ConfigError,
    >,
}

/// How `watch` listens and reports.
pub struct Options {
    /// Poll instead of subscribing to file-system events.
    pub poll: bool,
    /// One JSON report per bake on stdout.
    pub json: bool,
    /// How long events settle before a bake.
    pub debounce: Duration,
    /// `--tile-size`: bake each input as tiles of this size (else the
    /// project's `[tiles] size`, if any).
    pub tile_size: Option<f64>,
    /// `--world NAME`: the inputs are tiles authored apart, listed in
    /// `NAME.kilnworld`.
    pub world: Option<String>,
}

/// What an input becomes.
#[derive(Clone, Copy)]
enum Tiling {
    /// One archive, `DIR/STEM.kiln` (also each tile of `--world`).
    Whole,
    /// Tiles of this size: `DIR/STEM.kilnworld` and its tiles.
    Grid(f64),
}

/// How inputs are baked under the options and the project's tiles table.
fn tiling(opts: &Options, tiles: &TilesTable) -> Tiling {
    match (opts.world.is_some(), opts.tile_size.or(tiles.size)) {
        (false, Some(size)) => Tiling::Grid(size),
        _ => Tiling::Whole,
    }
}

/// Writes `dir/NAME.kilnworld` listing each input's archive at its origin
/// in `tiles`, unless it would hold the bytes it holds already. Inputs
/// without an origin or an archive yet are left out, and said so.
fn write_world(
    dir: &Path,
    name: &str,
    inputs: &BTreeSet<PathBuf>,
    tiles: &TilesTable,
) -> Result<()> {
    let mut listed = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (file, archive) = crate::cli::tile_names(input);
        match tiles.origins.get(&file) {
            None => eprintln!(
                "warning: {}: no origin for it in kiln.toml ([tiles.origins] \"{file}\" = [x, y, z]): left out of {name}.kilnworld",
                input.display()
            ),
            Some(_) if !dir.join(&archive).is_file() => eprintln!(
                "warning: {}: not baked yet: left out of {name}.kilnworld",
                input.display()
            ),
            Some(&origin) => listed.push((archive, origin)),
        }
    }
    let path = dir.join(format!("{name}.kilnworld"));
    let (_, bytes) = kiln_baker::tile::world_of_archives(dir, &listed)?;
    if std::fs::read(&path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    crate::cli::write_manifest(dir, &path, &listed).map(|_| ())
}

/// Runs until Ctrl-C. Returns when interrupted.
pub fn watch(args: &[PathBuf], out_dir: &Path, opts: &Options, project: &Project) -> Result<()> {
    let Options {
        poll,
        json,
        debounce,
        ..
    } = *opts;
    let (mut settings, mut filter, mut tiles) = (project.resolve)()?;
    let project_path = absolute(&project.path);
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let out_dir = absolute(out_dir);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("cannot install the Ctrl-C handler")?;
    }
    let (tx, rx) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer: Box<dyn WatchRoots> = if poll {
        // notify's poller compares whole-second modification times, so
        // it compares contents too: saves within one second are seen
        let config = notify::Config::default()
            .with_poll_interval(Duration::from_millis(250))
            .with_compare_contents(true);
        Box::new(
            new_debouncer_opt::<_, notify::PollWatcher, notify_debouncer_full::NoCache>(
                debounce,
                None,
                tx,
                notify_debouncer_full::NoCache,
                config,
            )
            .context("cannot start polling")?,
        )
    } else {
        Box::new(new_debouncer(debounce, None, tx).context("cannot watch for file events")?)
    };
    // the directories watched, and each input's dependencies
    let mut watched: BTreeSet<PathBuf> = BTreeSet::new();
    let mut deps: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let output_of = |input: &Path| {
        let stem = input.file_stem().unwrap_or(input.as_os_str());
        out_dir.join(stem).with_extension("kiln")
    };
    let mut watch_dir = |dir: &Path, recursive: bool, d: &mut Box<dyn WatchRoots>| -> Result<()> {
        if watched.insert(dir.to_path_buf()) {
            d.watch_dir(dir, recursive)
                .with_context(|| format!("cannot watch {}", dir.display()))?;
        }
        Ok(())
    };
    // the arguments, absolute: directories (watched recursively; new
    // documents under them are baked) and files (their directories watched)
    let (roots, arg_files): (Vec<PathBuf>, Vec<PathBuf>) =
        args.iter().map(|a| absolute(a)).partition(|a| a.is_dir());
    for r in &roots {
        watch_dir(r, true, &mut debouncer)?;
    }
    for f in arg_files.iter().chain([&project_path]) {
        if let Some(parent) = f.parent()
            && parent.is_dir()
        {
            watch_dir(parent, false, &mut debouncer)?;
        }
    }
    let mut inputs = BTreeSet::new();
    for a in args {
        documents(a, &out_dir, &filter, &mut inputs);
    }
    let mut bake = |input: &Path,
                    n: usize,
                    total: usize,
                    deps: &mut BTreeMap<PathBuf, Vec<PathBuf>>,
                    settings: &BakeSettings,
                    how: Tiling,
                    d: &mut Box<dyn WatchRoots>|
     -> Result<()> {
        let read = match how {
            Tiling::Whole => {
                let output = output_of(input);
                let outcome = kiln_baker::bake_to_file(input, &output, false, false, settings);
                report_one(n, total, input, &output, &outcome, json, &|l| {
                    eprintln!("{l}")
                });
                match outcome {
                    Outcome::Baked(_, files) | Outcome::UpToDate(files) => Some(files),
                    Outcome::Failed(_) => None,
                }
            }
            Tiling::Grid(size) => {
                match kiln_baker::tile::bake_tiled_to_dir(input, &out_dir, size, false, settings) {
                    Ok(r) => {
                        eprintln!(
                            "[{n}/{total}] {} -> {}: {} tiles of {size} m ({} baked, {} up to date, {} removed), {} objects",
                            input.display(),
                            r.manifest.display(),
                            r.tiles,
                            r.baked,
                            r.up_to_date,
                            r.removed,
                            r.objects
                        );
                        if json {
                            println!(
                                "{}",
                                serde_json::json!({
                                    "input": input.display().to_string(),
                                    "output": r.manifest.display().to_string(),
                                    "tiles": r.tiles,
                                    "baked": r.baked,
                                    "up_to_date": r.up_to_date,
                                    "removed": r.removed,
                                })
                            );
                        }
                        Some(r.files)
                    }
                    Err(e) => {
                        eprintln!("[{n}/{total}] {}: {e}", input.display());
                        if json {
                            println!(
                                "{}",
                                serde_json::json!({
                                    "input": input.display().to_string(),
                                    "error": e.to_string(),
                                })
                            );
                        }
                        None
                    }
                }
            }
        };
        if let Some(files) = read {
            let files: Vec<PathBuf> = files.iter().map(|f| absolute(f)).collect();
            for f in &files {
                if let Some(parent) = f.parent() {
                    watch_dir(parent, false, d)?;
                }
            }
            deps.insert(input.to_path_buf(), files);
        }
        Ok(())
    };
    let total = inputs.len();
    let mut how = tiling(opts, &tiles);
    for (n, input) in inputs.iter().enumerate() {
        bake(
            input,
            n + 1,
            total,
            &mut deps,
            &settings,
            how,
            &mut debouncer,
        )?;
    }
    if let Some(name) = &opts.world
        && let Err(e) = write_world(&out_dir, name, &inputs, &tiles)
    {
        eprintln!("error: {e:#}");
    }
    eprintln!(
        "watching {} input(s) for changes (Ctrl-C to stop){}",
        inputs.len(),
        if poll { ", polling" } else { "" }
    );
    while !stop.load(Ordering::SeqCst) {
        let events = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(events)) => events,
            Ok(Err(errors)) => {
                for e in errors {
                    eprintln!("warning: watching: {e}");
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        // reading a file is an event too (the bake's own reads): only
        // creations, writes, renames and removals count
        let changed: BTreeSet<PathBuf> = events
            .iter()
            .filter(|e| {
                matches!(
                    e.event.kind,
                    notify::EventKind::Create(_)
                        | notify::EventKind::Modify(_)
                        | notify::EventKind::Remove(_)
                        | notify::EventKind::Any
                )
            })
            .flat_map(|e| e.event.paths.iter())
            .map(|p| absolute(p))
            .filter(|p| !p.starts_with(&out_dir) && !is_scratch(p))
            .collect();
        // a changed project file: every input with the new settings (those
        // it does not change stay up to date); a broken one is reported
        // and the previous settings kept
        let mut todo: BTreeSet<PathBuf> = BTreeSet::new();
        if changed.contains(&project_path) {
            match (project.resolve)() {
                Ok((s, f, t)) => {
                    eprintln!("{}: changed, re-baking", project.path.display());
                    (settings, filter, tiles) = (s, f, t);
                    how = tiling(opts, &tiles);
                    for a in args {
                        documents(a, &out_dir, &filter, &mut inputs);
                    }
                    todo.extend(inputs.iter().filter(|p| wanted(p, &filter)).cloned());
                }
                Err(e) => eprintln!("error: {e:#}; keeping the previous settings"),
            }
        }
        // inputs whose documents or buffers changed, and new documents
        // under a watched directory argument
        for p in &changed {
            for (input, files) in &deps {
                if files.contains(p) {
                    todo.insert(input.clone());
                }
            }
            let under_arg = roots.iter().any(|a| p.starts_with(a)) || arg_files.contains(p);
            if under_arg && is_gltf(p) && wanted(p, &filter) {
                todo.insert(p.clone());
            }
        }
        let todo: Vec<PathBuf> = todo.into_iter().filter(|p| p.is_file()).collect();
        let total = todo.len();
        for (n, input) in todo.iter().enumerate() {
            inputs.insert(input.clone());
            bake(
                input,
                n + 1,
                total,
                &mut deps,
                &settings,
                how,
                &mut debouncer,
            )?;
        }
        // the manifest follows its tiles (and origins the project file moved)
        if let Some(name) = &opts.world
            && (total > 0 || changed.contains(&project_path))
            && let Err(e) = write_world(&out_dir, name, &inputs, &tiles)
        {
            eprintln!("error: {e:#}");
        }
    }
    eprintln!("stopped");
    Ok(())
}

/// The part of a debouncer `watch` needs, over both watcher kinds.
trait WatchRoots {
    fn watch_dir(&mut self, dir: &Path, recursive: bool) -> notify::Result<()>;
}

impl<T: notify::Watcher, C: notify_debouncer_full::FileIdCache> WatchRoots
    for notify_debouncer_full::Debouncer<T, C>
{
    fn watch_dir(&mut self, dir: &Path, recursive: bool) -> notify::Result<()> {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        self.watch(dir, mode)
    }
}
