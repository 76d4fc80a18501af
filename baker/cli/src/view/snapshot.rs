//! What the viewer serves for one generation of the archive: the level's
//! JSON description (objects with kind, rule, layers, motion, trigger,
//! triangles, bytes and bounds) and one binary buffer of world-space geometry (each collider as
//! the exporter tessellates it, then the source's render meshes) that the
//! JSON points into.

use crate::inspect::inspect_level;
use kiln_baker::export::{ExportObject, piece_objects, render_objects, world_objects};
use kiln_runtime::Level;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One generation of the archive, ready to serve.
pub struct Snapshot {
    /// Counts successful loads: the page reloads when it changes.
    pub generation: u64,
    /// A world of the open level, made once a load: queries run on it
    /// (its movers where they were baked).
    pub world: kiln_runtime::World,
    /// `GET /api/level`.
    pub level_json: Vec<u8>,
    /// `GET /api/geometry`: little-endian f32 positions and u32 indices.
    pub geometry: Vec<u8>,
    /// Colliders in world space, by object (for the distance heat map).
    pub colliders: Vec<ExportObject>,
    /// The source's render meshes in world space (empty without a source).
    pub render: Vec<ExportObject>,
    /// Heat maps already computed, by object.
    heat: Mutex<HashMap<usize, HeatMap>>,
}

/// One object's heat map: per collider triangle, how far it strays from
/// the render mesh; `None` without a render mesh of that name; an error
/// when it would take too long.
pub type HeatMap = Option<Result<Arc<Vec<f64>>, String>>;

/// Appends `o` to `buf` and returns where its arrays are.
fn push(buf: &mut Vec<u8>, o: &ExportObject) -> Value {
    let positions = buf.len();
    for p in &o.positions {
        for c in p {
            buf.extend_from_slice(&c.to_le_bytes());
        }
    }
    let indices = buf.len();
    for t in &o.triangles {
        for i in t {
            buf.extend_from_slice(&i.to_le_bytes());
        }
    }
    json!({
        "positions": positions,
        "vertices": o.positions.len(),
        "indices": indices,
        "triangles": o.triangles.len(),
    })
}

impl Snapshot {
    /// Describes `level` (opened from `archive`) with the render meshes of
    /// `source` (already loaded, or empty).
    pub fn new(
        generation: u64,
        level: Arc<Level>,
        archive: &str,
        source: Option<(&str, &kiln_baker::Scene)>,
    ) -> Snapshot {
        let report = inspect_level(&level);
        let colliders = world_objects(level.archive());
        let render = source.map_or_else(Vec::new, |(_, s)| render_objects(s));
        let mut geometry = Vec::new();
        let a = level.archive();
        let objects: Vec<Value> = report
            .objects
            .iter()
            .zip(&colliders)
            .map(|(row, c)| {
                let pieces: Vec<Value> = piece_objects(a, row.instance)
                    .iter()
                    .map(|p| push(&mut geometry, p))
                    .collect();
                json!({
                    "index": row.instance,
                    "name": row.name,
                    "kind": row.kind,
                    "rule": row.rule,
                    "layers": row.layers,
                    "motion": row.motion,
                    "trigger": row.trigger,
                    "triangles": c.triangles.len(),
                    "bytes": row.collider_bytes,
                    "bounds": row.bounds,
                    "geometry": push(&mut geometry, c),
                    "pieces": pieces,
                })
            })
            .collect();
        let render_json: Vec<Value> = render
            .iter()
            .map(|r| json!({"name": r.name, "geometry": push(&mut geometry, r)}))
            .collect();
        let bounds = level
            .bounds()
            .map(|(lo, hi)| [lo.to_array(), hi.to_array()]);
        let level_json = serde_json::to_vec(&json!({
            "generation": generation,
            "archive": archive,
            "source": source.map(|(name, _)| name),
            "bytes": level.byte_len(),
            "bounds": bounds,
            "objects": objects,
            "render": render_json,
            "geometry_bytes": geometry.len(),
        }))
        .expect("JSON of plain values");
        Snapshot {
            generation,
            world: kiln_runtime::World::new(level),
            level_json,
            geometry,
            colliders,
            render,
            heat: Mutex::new(HashMap::new()),
        }
    }

    /// How far each collider triangle of object `i` strays from its render
    /// mesh (see `face_distances`), computed once per object.
    pub fn heat_map(&self, i: usize) -> HeatMap {
        if let Some(h) = self.heat.lock().unwrap().get(&i) {
            return h.clone();
        }
        let h = self.face_distances(i).map(|r| r.map(Arc::new));
        self.heat.lock().unwrap().insert(i, h.clone());
        h
    }

    /// How far each triangle of object `i`'s collider strays from the
    /// render meshes of the node of the same name: the largest distance,
    /// over the triangle's corners, edge midpoints and centroid, to the
    /// nearest render triangle (a one-sided, sampled form of the baker's
    /// Hausdorff fidelity measure). `None` when the source has no render
    /// mesh of that name; an error when the brute-force pairing would be
    /// too much work for an interactive answer.
    fn face_distances(&self, i: usize) -> Option<Result<Vec<f64>, String>> {
        let c = self.colliders.get(i)?;
        let tris: Vec<[glam::DVec3; 3]> = self
            .render
            .iter()
            .filter(|r| r.name == c.name)
            .flat_map(|r| {
                r.triangles
                    .iter()
                    .map(|t| t.map(|k| glam::DVec3::from(r.positions[k as usize].map(f64::from))))
            })
            .collect();
        if tris.is_empty() {
            return None;
        }
        let work = tris.len() as u64 * c.triangles.len() as u64 * 7;
        if work > MAX_PAIRS {
            return Some(Err(format!(
                "{} collider × {} render triangles is too many for the heat map",
                c.triangles.len(),
                tris.len()
            )));
        }
        let v = |k: u32| glam::DVec3::from(c.positions[k as usize].map(f64::from));
        let dist = |p: glam::DVec3| {
            tris.iter()
                .map(|t| {
                    let q = kiln_geometry::sphere_triangle::closest_point(p, t[0], t[1], t[2]);
                    p.distance_squared(q)
                })
                .fold(f64::INFINITY, f64::min)
                .sqrt()
        };
        Some(Ok(c
            .triangles
            .iter()
            .map(|t| {
                let [a, b, cc] = t.map(v);
                [
                    a,
                    b,
                    cc,
                    (a + b) * 0.5,
                    (b + cc) * 0.5,
                    (cc + a) * 0.5,
                    (a + b + cc) / 3.0,
                ]
                .into_iter()
                .map(dist)
                .fold(0.0, f64::max)
            })
            .collect()))
    }
}

/// Most point/triangle pairs one heat-map answer may test (about a second).
pub const MAX_PAIRS: u64 = 60_000_000;
