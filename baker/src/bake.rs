//! The bake as one function, its steps in order: config ([`BakeSettings`])
//! → ingest → classify → prepare → build → encode. Writing the file is
//! [`crate::write`]'s job, so a library user can keep the bytes in memory;
//! [`bake_to_file`] is the whole of it for one file (plan, skip when up to
//! date, bake, write), as the CLI's `bake` and `watch` use it.

use crate::config::BakeSettings;
use crate::ingest::{self, IngestError};
use crate::report::{BakeReport, Laps, StageTimes};
use crate::scene::Scene;
use crate::{classify, collider, encode, prepare};
use std::path::Path;
use std::time::Instant;

/// An archive in memory and what the bake saw.
#[derive(Clone, Debug)]
pub struct Baked {
    /// The complete archive file (header + body).
    pub bytes: Vec<u8>,
    /// Counts, timings and warnings.
    pub report: BakeReport,
}

/// The baker's version as it goes into archive headers.
pub fn baker_version() -> [u16; 3] {
    let mut v = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u16>().unwrap_or(0));
    [0; 3].map(|_| v.next().unwrap_or(0))
}

/// The header's content hash for a file whose input bytes hash to
/// `input_hash`, baked with `settings`.
fn file_hash(input_hash: u128, settings: &BakeSettings) -> [u8; 16] {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&input_hash.to_le_bytes());
    hasher.update(settings.fingerprint().as_bytes());
    hasher.digest128().to_le_bytes()
}

/// A file read for baking, and what its archive's header would carry,
/// known before anything is built.
#[derive(Debug)]
pub struct Plan {
    /// The content hash the archive's header would carry.
    pub content_hash: [u8; 16],
    /// Every file the bake reads: the document, then external buffers.
    pub inputs: Vec<std::path::PathBuf>,
    source: ingest::Source,
}

/// Reads `path` and its buffers (nothing is decoded or built) to plan its
/// bake with `settings`; [`bake_plan`] then bakes without reading again.
pub fn plan(path: &Path, settings: &BakeSettings) -> Result<Plan, IngestError> {
    let source = ingest::Source::read(path)?;
    Ok(Plan {
        content_hash: file_hash(source.input_hash(), settings),
        inputs: source.files(),
        source,
    })
}

/// Bakes a planned file (`settings` must be the plan's).
pub fn bake_plan(plan: Plan, settings: &BakeSettings) -> Result<Baked, IngestError> {
    let t0 = Instant::now();
    let scene = plan.source.scene()?;
    let ingest_ms = plan.source.read_ms() + t0.elapsed().as_secs_f64() * 1e3;
    let mut baked = bake_hashed(&scene, settings, plan.content_hash);
    baked.report.input = plan.inputs[0].display().to_string();
    baked.report.ingest_ms = ingest_ms;
    Ok(baked)
}

/// Whether the archive at `archive` is what baking by `plan` would write:
/// its header has this format and baker version and the plan's content
/// hash, and its body matches the header's checksum (a damaged archive is
/// re-baked; xxh3 reads gigabytes a second, so checking costs about what
/// reading the file does). Any doubt — a missing, short or foreign file —
/// says no.
pub fn is_up_to_date(archive: &Path, plan: &Plan) -> bool {
    up_to_date_size(archive, plan.content_hash).is_some()
}

/// The size of the archive at `archive` when it is what a bake with
/// content hash `content_hash` would write (as [`is_up_to_date`] decides),
/// else `None`.
pub fn up_to_date_size(archive: &Path, content_hash: [u8; 16]) -> Option<u64> {
    let file = std::fs::read(archive).ok()?;
    let h = kiln_formats::header::Header::parse(&file).ok()?;
    (h.baker_version == baker_version()
        && h.content_hash == content_hash
        && h.check_body(&file[kiln_formats::HEADER_LEN..]).is_ok())
    .then_some(file.len() as u64)
}

/// Bakes one glTF file.
pub fn bake_file(path: &Path, settings: &BakeSettings) -> Result<Baked, IngestError> {
    bake_plan(plan(path, settings)?, settings)
}

/// Bytes of mesh data [`bake_scene`] hands the content hash at a time.
const HASH_CHUNK: usize = 48 * 1024;

/// Bakes a scene built in memory (no glTF). The content hash covers the
/// scene's geometry and placements.
///
/// # Panics
/// If a position or transform is not finite or the world-space geometry
/// does not fit in f32 (the archive could not be valid). Scenes from
/// [`crate::ingest`] never do: ingest rejects such files with an error.
pub fn bake_scene(scene: &Scene, settings: &BakeSettings) -> Baked {
    let mut laps = Laps::start();
    let content_hash = scene_hash(scene, settings);
    let hash_ms = laps.lap();
    let mut baked = bake_hashed(scene, settings, content_hash);
    baked.report.stages.hash_ms = hash_ms;
    baked
}

/// The content hash [`bake_scene`] gives `scene` baked with `settings`
/// (known before anything is built: a tile's up-to-date check).
pub fn scene_hash(scene: &Scene, settings: &BakeSettings) -> [u8; 16] {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    // 48 KB at a time: per-value updates dominated the bake of large
    // meshes, and one buffer for a whole mesh cost its size in fresh pages
    // (the streamed bytes, and so the hash, are the same either way)
    let mut buf: Vec<u8> = Vec::with_capacity(HASH_CHUNK);
    for m in &scene.meshes {
        hasher.update(&(m.positions.len() as u64).to_le_bytes());
        stream_words(
            &mut hasher,
            &mut buf,
            m.positions.as_flattened(),
            f32::to_le_bytes,
        );
        hasher.update(&(m.triangles.len() as u64).to_le_bytes());
        stream_words(
            &mut hasher,
            &mut buf,
            m.triangles.as_flattened(),
            u32::to_le_bytes,
        );
    }
    for i in &scene.instances {
        hash_instance(&mut hasher, i);
    }
    for b in &scene.bodies {
        // Debug of f64 is exact (shortest round-trip)
        hasher.update(
            format!(
                "{}|{}|{:?}|{:?}|",
                b.name,
                b.motion.name(),
                b.transform,
                b.mass
            )
            .as_bytes(),
        );
    }
    if let Some(ext) = &scene.authored_physics {
        hasher.update(ext.as_bytes());
    }
    // a piece cut at tile borders: its whole mesh's edges and rule
    for (m, flags) in &scene.edge_flags {
        hasher.update(&(*m as u64).to_le_bytes());
        hasher.update(&(flags.len() as u64).to_le_bytes());
        hasher.update(flags);
    }
    for (i, rule) in &scene.cut_from {
        hasher.update(format!("{i}|{}|{rule}|", rule.len()).as_bytes());
    }
    hasher.update(settings.fingerprint().as_bytes());
    hasher.digest128().to_le_bytes()
}

/// Hands `hasher` what the content hash covers of instance `i`: its name,
/// mesh number, placement and what classification reads.
pub(crate) fn hash_instance(hasher: &mut xxhash_rust::xxh3::Xxh3, i: &crate::scene::SceneInstance) {
    hasher.update(i.name.as_bytes());
    hasher.update(&(i.mesh as u64).to_le_bytes());
    for v in i.transform.to_cols_array() {
        hasher.update(&v.to_le_bytes());
    }
    // what classification reads besides the name
    let extras = i.extras_collider.as_deref().unwrap_or("");
    hasher.update(format!("|{}|{extras}|", extras.len()).as_bytes());
    hasher.update(format!("{:?}", i.layers).as_bytes());
    hasher.update(format!("|{}|{}|", i.motion.name(), i.trigger).as_bytes());
    if let Some(a) = &i.physics {
        hasher.update(format!("{}|{}|", a.kind.name(), a.rule).as_bytes());
    }
    hasher.update(format!("{:?}|", i.body).as_bytes());
}

/// [`bake_scene`] with its content hash already known ([`scene_hash`]).
pub fn bake_scene_hashed(scene: &Scene, settings: &BakeSettings, content_hash: [u8; 16]) -> Baked {
    bake_hashed(scene, settings, content_hash)
}

/// Hands `words` to `hasher` as little-endian bytes, [`HASH_CHUNK`] bytes
/// at a time through `buf`: a plain loop per chunk, where a word at a time
/// through a `dyn Iterator` had cost 20 ms of the 2.1M-triangle terrain's
/// bake.
fn stream_words<W: Copy>(
    hasher: &mut xxhash_rust::xxh3::Xxh3,
    buf: &mut Vec<u8>,
    words: &[W],
    bytes: fn(W) -> [u8; 4],
) {
    for chunk in words.chunks(HASH_CHUNK / 4) {
        buf.clear();
        buf.resize(4 * chunk.len(), 0);
        for (b, &w) in buf.chunks_exact_mut(4).zip(chunk) {
            b.copy_from_slice(&bytes(w));
        }
        hasher.update(buf);
    }
}

fn bake_hashed(scene: &Scene, settings: &BakeSettings, content_hash: [u8; 16]) -> Baked {
    let mut laps = Laps::start();
    let mut stages = StageTimes::default();
    let welded = crate::geom::weld::weld_all(scene);
    stages.weld_ms = laps.lap();
    let (choices, warnings) = classify::classify(scene, &welded, settings);
    stages.classify_ms = laps.lap();
    let prepared = prepare::prepare(scene, &welded, &choices);
    stages.prepare_ms = laps.lap();
    let flags = classify::roles(scene, settings);
    let built = collider::build_level(scene, &welded, &choices, prepared, &flags);
    stages.build_colliders_ms = laps.lap();
    let (layer_names, layer_masks, layer_warnings) = classify::layers(scene, settings);
    let body_of: Vec<Option<usize>> = scene.instances.iter().map(|i| i.body).collect();
    let (level, colliders) =
        encode::level(built, layer_names, &layer_masks, (&scene.bodies, &body_of));
    stages.encode_ms = laps.lap();
    let bytes = kiln_formats::encode(&level, content_hash, baker_version());
    stages.serialize_ms = laps.lap();
    // The runtime's own checks, on what we are about to hand out: a failure
    // here is a baker bug, never a property of the input.
    if let Err(e) = kiln_formats::check_file(&bytes) {
        panic!("baker produced an invalid archive: {e}");
    }
    stages.check_ms = laps.lap();
    let mut report = BakeReport::new(scene, &choices, &level, bytes.len(), stages.building_ms());
    report.stages = stages;
    report.warnings.extend(warnings);
    report.warnings.extend(layer_warnings);
    for c in &colliders {
        if !c.within_tolerance() {
            report.warnings.push(format!(
                "{}: collider deviates {:.4} from the render mesh, over the tolerance {} ({})",
                c.object,
                c.fidelity.hausdorff(),
                c.tolerance,
                crate::collider::note::Steps(&c.fidelity.steps)
            ));
        }
    }
    report.surfaces = colliders;
    Baked { bytes, report }
}

/// How baking one file to one archive ended.
#[derive(Debug)]
pub enum Outcome {
    /// Baked and written; the files the bake read.
    Baked(Box<Baked>, Vec<std::path::PathBuf>),
    /// The archive was already what the bake would write; the files the
    /// plan read.
    UpToDate(Vec<std::path::PathBuf>),
    /// Nothing written (a previous archive is left as it was).
    Failed(BakeFileError),
}

/// Why [`bake_to_file`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum BakeFileError {
    /// The input could not be read or decoded.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// `strict` was asked for and a concave collider strays beyond its
    /// tolerance.
    #[error(
        "{input}: {object}: the collider deviates {deviation:.4} m from the render mesh, over the tolerance {tolerance} (--strict; nothing written)"
    )]
    Strict {
        /// The input file.
        input: String,
        /// The object whose collider is off.
        object: String,
        /// Its measured two-sided Hausdorff distance.
        deviation: f64,
        /// Its tolerance.
        tolerance: f64,
    },
    /// The project file (`kiln.toml`) could not be used: never from
    /// [`bake_to_file`] itself, which is given settings, but from callers
    /// that read a project file per input (the CLI's `bake` and `watch`)
    /// and report every input's end the same way.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The archive could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The archive.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Plans `input`, leaves `output` alone when it is up to date (unless
/// `force`), else bakes and writes it atomically. With `strict`, an input
/// with a concave collider beyond its tolerance fails and writes nothing.
pub fn bake_to_file(
    input: &Path,
    output: &Path,
    force: bool,
    strict: bool,
    settings: &BakeSettings,
) -> Outcome {
    let plan = match plan(input, settings) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(e.into()),
    };
    if !force && is_up_to_date(output, &plan) {
        return Outcome::UpToDate(plan.inputs);
    }
    let inputs = plan.inputs.clone();
    let baked = match bake_plan(plan, settings) {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(e.into()),
    };
    if strict && let Some(c) = baked.report.surfaces.iter().find(|c| !c.within_tolerance()) {
        return Outcome::Failed(BakeFileError::Strict {
            input: input.display().to_string(),
            object: c.object.clone(),
            deviation: c.fidelity.hausdorff(),
            tolerance: c.tolerance,
        });
    }
    if let Err(source) = crate::write::write_atomic(output, &baked.bytes) {
        return Outcome::Failed(BakeFileError::Write {
            path: output.to_path_buf(),
            source,
        });
    }
    Outcome::Baked(Box::new(baked), inputs)
}
