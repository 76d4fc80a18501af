//! What a bake reports: counts the user can check against their source,
//! sizes, timings and warnings.

use crate::scene::Scene;
use kiln_formats::{Collider, Level};
use serde::Serialize;

/// The summary of one bake.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BakeReport {
    /// Input file (empty for in-memory scenes).
    pub input: String,
    /// Triangles drawn by the scene's nodes (each instance counted),
    /// degenerate ones included: the number a viewer or `level_stats` shows.
    pub scene_triangles: usize,
    /// Degenerate triangles dropped, over instances.
    pub scene_degenerate: usize,
    /// Triangles baked, over instances (`scene_triangles - scene_degenerate`).
    pub baked_triangles: usize,
    /// Triangles over unique meshes (each once), degenerate ones included.
    pub unique_triangles: usize,
    /// Degenerate triangles over unique meshes.
    pub unique_degenerate: usize,
    /// Triangles stored in the archive (unique meshes, degenerates dropped).
    pub stored_triangles: usize,
    /// Objects in the scene (placed meshes and authored colliders), with
    /// a collider or not. The drawn half of an object whose collider the
    /// file gives apart (a node's glTF physics collider, an Unreal `UCX_`
    /// mesh) is that object, counted once: see [`BakeReport::render_meshes`].
    pub objects: usize,
    /// Placed meshes that are only drawn: their objects' colliders are
    /// authored apart, so they are not objects of their own.
    pub render_meshes: usize,
    /// Unique colliders.
    pub colliders: usize,
    /// Unique colliders per kind, e.g. `{"polytope": 2, "trimesh": 3}`.
    pub collider_kinds: std::collections::BTreeMap<String, usize>,
    /// Instances in the archive.
    pub instances: usize,
    /// Archive size in bytes.
    pub bytes: usize,
    /// Archive bytes per stored triangle.
    pub bytes_per_triangle: f64,
    /// Time spent reading and decoding the input.
    pub ingest_ms: f64,
    /// Time spent building shapes and trees: every stage of
    /// [`BakeReport::stages`] from welding to encoding.
    pub build_ms: f64,
    /// Where the bake's time went, stage by stage.
    pub stages: StageTimes,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// Information that is not a problem (e.g. ignored extensions).
    pub notes: Vec<String>,
    /// Concave solids' low-poly surfaces made from render meshes, with
    /// their measured error (two-sided Hausdorff, mean, volume ratio,
    /// faces in and out).
    pub surfaces: Vec<crate::collider::SurfaceReport>,
}

impl BakeReport {
    /// Summarises a bake of `scene` into `level` (`bytes` long).
    pub fn new(
        scene: &Scene,
        choices: &[crate::classify::Choice],
        level: &Level,
        bytes: usize,
        build_ms: f64,
    ) -> BakeReport {
        let render_meshes = choices.iter().filter(|c| c.render_only).count();
        let s = scene.stats();
        let stored: usize = level
            .colliders
            .iter()
            .map(|s| match s {
                Collider::TriMesh(m) => m.triangle_count(),
                _ => 0,
            })
            .sum();
        BakeReport {
            input: String::new(),
            scene_triangles: s.scene_triangles,
            scene_degenerate: s.scene_degenerate,
            baked_triangles: s.scene_triangles - s.scene_degenerate,
            unique_triangles: s.unique_triangles,
            unique_degenerate: s.unique_degenerate,
            stored_triangles: stored,
            objects: scene.instances.len() - render_meshes,
            render_meshes,
            colliders: level.colliders.len(),
            collider_kinds: level.colliders.iter().fold(Default::default(), |mut m, s| {
                *m.entry(s.kind_name().to_string()).or_insert(0) += 1;
                m
            }),
            instances: level.instances.len(),
            bytes,
            bytes_per_triangle: if stored > 0 {
                bytes as f64 / stored as f64
            } else {
                0.0
            },
            ingest_ms: 0.0,
            build_ms,
            stages: StageTimes::default(),
            warnings: scene.warnings.clone(),
            notes: scene.notes.clone(),
            surfaces: Vec::new(),
        }
    }
}

/// Where a bake's time went, stage by stage, in milliseconds of wall
/// clock (stages run one after another; each may use the whole thread
/// pool). The baker's own profile: `baker bake --json` prints it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StageTimes {
    /// Hashing the scene's content (in-memory scenes; a file's hash is
    /// taken when it is read, under `ingest_ms`).
    pub hash_ms: f64,
    /// Welding each mesh by exact position.
    pub weld_ms: f64,
    /// Choosing each object's collider kind.
    pub classify_ms: f64,
    /// Preparing colliders: which objects share one, primitive fits.
    pub prepare_ms: f64,
    /// Building colliders and trees: BSP trees and their surfaces, polytopes, the triangle
    /// trees (edge grouping, pairing, binned SAH), seams and the
    /// top-level tree.
    pub build_colliders_ms: f64,
    /// Encoding into archive form: layers, collapsing and quantising
    /// trees, placing leaves and vertices.
    pub encode_ms: f64,
    /// Serialising the archive and its header.
    pub serialize_ms: f64,
    /// The runtime's own validation of the archive before it is handed
    /// out.
    pub check_ms: f64,
}

impl StageTimes {
    /// Welding through encoding: what [`BakeReport::build_ms`] reports.
    pub fn building_ms(&self) -> f64 {
        self.weld_ms + self.classify_ms + self.prepare_ms + self.build_colliders_ms + self.encode_ms
    }
}

/// Times consecutive stages: each [`Laps::lap`] returns the milliseconds
/// since the last one (or since the start).
pub(crate) struct Laps(std::time::Instant);

impl Laps {
    /// Starts the clock.
    pub(crate) fn start() -> Laps {
        Laps(std::time::Instant::now())
    }

    /// Milliseconds since the last lap; starts the next.
    pub(crate) fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let ms = (now - self.0).as_secs_f64() * 1e3;
        self.0 = now;
        ms
    }
}
