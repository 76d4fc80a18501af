//! Helpers for Kiln's end-to-end tests: finding the shared levels, reading
//! their published statistics, generating rays, and the brute-force oracle.

use glam::{DVec3, Vec3};
use kiln_baker::scene::{Scene, WorldTriangle};
use std::path::PathBuf;

pub mod convex;
pub mod decomposition;
pub mod judge;
pub mod scenes;
pub mod search;
pub mod solid;

/// The shared real-world levels (`../shared/levels` beside the repository,
/// or `$KILN_LEVELS`), or `None` after saying loudly that tests skip.
///
/// # Panics
/// Under CI (`CI` set to anything but `false` or empty), where the levels
/// are always placed beside the clone: a missing directory there means the
/// real-level checks would silently check nothing, so the test fails.
pub fn levels_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("KILN_LEVELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/levels"));
    if dir.join("README.md").is_file() {
        Some(dir)
    } else {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(
            !ci,
            "shared levels not found at {} under CI: the real-level checks cannot run (set KILN_LEVELS)",
            dir.display()
        );
        eprintln!(
            "\n*** SKIPPED: shared levels not found at {} (set KILN_LEVELS); real-level checks did not run ***\n",
            dir.display()
        );
        None
    }
}

/// The repository's bundled samples.
pub fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

/// One row of the shared levels' README table.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelRow {
    /// File name.
    pub file: String,
    /// Triangles instanced in the scene.
    pub instanced: usize,
    /// Triangles over unique meshes.
    pub unique: usize,
}

/// Parses the triangle counts out of the README table (`| \`file\` ... | N / M | ...`)
/// and the degenerate counts out of its `level_stats` section.
pub fn readme_rows(dir: &std::path::Path) -> Vec<LevelRow> {
    let text = std::fs::read_to_string(dir.join("README.md")).expect("README.md readable");
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 6 || !cells[1].starts_with('`') {
            continue;
        }
        let file = cells[1].split('`').nth(1).unwrap_or("").to_string();
        let Some((a, b)) = cells[4].split_once('/') else {
            continue;
        };
        let num = |s: &str| s.trim().replace(',', "").parse::<usize>().ok();
        if let (Some(instanced), Some(unique)) = (num(a), num(b)) {
            rows.push(LevelRow {
                file,
                instanced,
                unique,
            });
        }
    }
    rows
}

/// Degenerate-triangle counts the README's `level_stats` output lists per
/// file (`None` where it says n/a).
pub fn readme_degenerates(dir: &std::path::Path) -> Vec<(String, Option<usize>)> {
    let text = std::fs::read_to_string(dir.join("README.md")).expect("README.md readable");
    let mut out = Vec::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("== ") {
            current = rest.split_whitespace().next().map(str::to_string);
        }
        if let (Some(file), Some(pos)) = (&current, line.find("degenerate tris ")) {
            let v = line[pos + 16..].split_whitespace().next().unwrap_or("");
            out.push((file.clone(), v.parse().ok()));
        }
    }
    out
}

/// The tests' seeded generator: Kiln's one ([`kiln_geometry::rng`]).
pub use kiln_geometry::rng::Rng;

/// A test ray.
#[derive(Clone, Copy, Debug)]
pub struct TestRay {
    /// Origin.
    pub origin: Vec3,
    /// Direction.
    pub dir: Vec3,
    /// Range.
    pub max_t: f32,
}

/// The triangles of a grid of `n` × `n` cells over `(n + 1)²` vertices
/// numbered row by row (`x` along a row, rows along `z`), two per cell
/// split on the same diagonal, facing +y: every test floor's layout.
pub fn grid_triangles(n: u32) -> Vec<[u32; 3]> {
    let mut tris = Vec::with_capacity(2 * (n * n) as usize);
    for z in 0..n {
        for x in 0..n {
            let i = z * (n + 1) + x;
            tris.push([i, i + n + 1, i + 1]);
            tris.push([i + 1, i + n + 1, i + n + 2]);
        }
    }
    tris
}

/// World bounds of a scene's triangles.
pub fn scene_bounds(tris: &[WorldTriangle]) -> (Vec3, Vec3) {
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for t in tris {
        for v in t.v {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    (lo.as_vec3(), hi.as_vec3())
}

/// The ray mix: a third downward probes, a third random rays of
/// length ≤ 100, a third long visibility rays between points of the level.
pub fn ray_mix(lo: Vec3, hi: Vec3, n: usize, seed: u64) -> Vec<TestRay> {
    let mut r = Rng::new(seed);
    let size = hi - lo;
    let diag = size.length().max(1e-3);
    let margin = size * 0.05;
    let point = |r: &mut Rng| {
        Vec3::new(
            r.range(lo.x - margin.x, hi.x + margin.x),
            r.range(lo.y - margin.y, hi.y + margin.y),
            r.range(lo.z - margin.z, hi.z + margin.z),
        )
    };
    (0..n)
        .map(|i| match i % 3 {
            0 => {
                let mut o = point(&mut r);
                o.y = hi.y + 0.1 * diag;
                TestRay {
                    origin: o,
                    dir: Vec3::NEG_Y,
                    max_t: 2.0 * diag,
                }
            }
            1 => TestRay {
                origin: point(&mut r),
                dir: r.unit32(),
                max_t: r.range(0.0, 100.0),
            },
            _ => {
                let a = point(&mut r);
                let b = point(&mut r);
                TestRay {
                    origin: a,
                    dir: b - a,
                    max_t: 1.0,
                }
            }
        })
        .filter(|r| r.dir != Vec3::ZERO)
        .collect()
}

/// Brute force over every triangle in f64 (Möller–Trumbore), reporting how
/// far inside the triangle the hit is, so the comparison can tell a real
/// disagreement from a ray that grazes an edge within rounding.
pub struct Oracle {
    tris: Vec<WorldTriangle>,
    /// Runs of at most [`Oracle::RUN`] triangles of one instance, in scene
    /// order, with their boxes, to skip triangles a ray cannot touch: each
    /// box is padded to hold every point the margin test accepts, so the
    /// answer is the same as testing every triangle (no tree, no sorting).
    runs: Vec<Run>,
    /// (instance, source id) → index into `tris`.
    by_id: std::collections::HashMap<(usize, u32), usize>,
}

/// A run of the oracle's triangles and its box (see [`Oracle`]).
struct Run {
    /// The box of its corners.
    lo: DVec3,
    hi: DVec3,
    /// Its triangles, `tris[start..end]`.
    start: usize,
    end: usize,
    /// How far its corners reach out per unit of margin: 1 / sin(α/2)
    /// for its sharpest corner angle α.
    grow: f64,
}

/// An oracle hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OracleHit {
    /// Ray parameter.
    pub t: f64,
    /// Instance (scene order).
    pub instance: usize,
    /// Source triangle id.
    pub source_id: u32,
    /// |cos| of the angle between the ray and the triangle normal.
    pub cos: f64,
}

impl Oracle {
    /// Triangles a box covers at most.
    const RUN: usize = 32;

    /// Prepares the oracle for a scene.
    pub fn new(scene: &Scene) -> Oracle {
        let tris = scene.world_triangles();
        let mut runs: Vec<Run> = Vec::new();
        let mut start = 0;
        while start < tris.len() {
            let inst = tris[start].instance;
            let mut end = start;
            let mut lo = DVec3::splat(f64::INFINITY);
            let mut hi = DVec3::splat(f64::NEG_INFINITY);
            let mut grow = 0.0f64;
            while end < tris.len() && end - start < Self::RUN && tris[end].instance == inst {
                let v = tris[end].v;
                for k in 0..3 {
                    lo = lo.min(v[k]);
                    hi = hi.max(v[k]);
                    // the triangle with its edges moved out by m has this
                    // corner m / sin(α/2) further out, α the corner's angle
                    let (a, b) = (v[(k + 1) % 3] - v[k], v[(k + 2) % 3] - v[k]);
                    let cos = a.dot(b) / (a.length() * b.length());
                    let half_sin = ((1.0 - cos) * 0.5).max(0.0).sqrt();
                    grow = grow.max(if half_sin > 0.0 {
                        1.0 / half_sin
                    } else {
                        f64::INFINITY
                    });
                }
                end += 1;
            }
            runs.push(Run {
                lo,
                hi,
                start,
                end,
                grow,
            });
            start = end;
        }
        let by_id = tris
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.instance, t.source_id), i))
            .collect();
        Oracle { tris, runs, by_id }
    }

    /// All world triangles.
    pub fn triangles(&self) -> &[WorldTriangle] {
        &self.tris
    }

    /// Closest hit with `t <= max_t`. `slack` is a distance in world
    /// units: a positive slack also accepts rays passing that close outside
    /// a triangle's edges (near misses); a negative one demands hits at
    /// least that far inside (clear hits). It grows as 1/cos θ for rays at
    /// a grazing angle θ to the triangle, where an error in the ray moves
    /// the hit point across the plane that much more.
    pub fn closest(&self, ray: &TestRay, slack: f64, max_t: f64) -> Option<OracleHit> {
        let o = ray.origin.as_dvec3();
        let d = ray.dir.as_dvec3();
        let mut best: Option<OracleHit> = None;
        // an accepted hit lies in its triangle's plane within slack / cos
        // of the triangle (cos floored at 1e-3), so within that of its box
        // (a margin of -reach moves a corner reach · grow out)
        let reach = slack.max(0.0) * 1e3;
        for run in &self.runs {
            let out = if reach > 0.0 {
                reach * run.grow * 1.01
            } else {
                0.0
            };
            let pad = (run.hi - run.lo).max_element() * 1e-6 + out + 1e-9;
            if !slab(o, d, run.lo - pad, run.hi + pad, max_t) {
                continue;
            }
            self.closest_in(run.start..run.end, o, d, slack, max_t, &mut best);
        }
        best
    }

    /// [`Oracle::closest`] over every triangle, without the boxes: what the
    /// boxes must not change.
    pub fn closest_of_all(&self, ray: &TestRay, slack: f64, max_t: f64) -> Option<OracleHit> {
        let mut best = None;
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        self.closest_in(0..self.tris.len(), o, d, slack, max_t, &mut best);
        best
    }

    /// The closest accepted hit among `range`'s triangles nearer than `best`.
    fn closest_in(
        &self,
        range: std::ops::Range<usize>,
        o: DVec3,
        d: DVec3,
        slack: f64,
        max_t: f64,
        best: &mut Option<OracleHit>,
    ) {
        for tri in &self.tris[range] {
            // beyond the range or the best so far: dropped on `t`
            // alone, before the margin's lengths and divisions
            let Some(c) = crossing(o, d, tri.v) else {
                continue;
            };
            let t = c.t.max(0.0);
            if t > max_t || best.is_some_and(|b| t >= b.t) {
                continue;
            }
            let h = c.hit(d, tri.v);
            if h.margin >= -slack / h.cos.max(1e-3) {
                *best = Some(OracleHit {
                    t: h.t,
                    instance: tri.instance,
                    source_id: tri.source_id,
                    cos: h.cos,
                });
            }
        }
    }

    /// Where the ray meets one specific triangle's plane, if the point is
    /// within `slack` of the triangle, with the angle cosine.
    pub fn t_on(
        &self,
        ray: &TestRay,
        instance: usize,
        source_id: u32,
        slack: f64,
    ) -> Option<(f64, f64)> {
        let o = ray.origin.as_dvec3();
        let d = ray.dir.as_dvec3();
        let tri = &self.tris[*self.by_id.get(&(instance, source_id))?];
        moller(o, d, tri.v)
            .filter(|h| h.margin >= -slack / h.cos.max(1e-3))
            .map(|h| (h.t, h.cos))
    }
}

fn slab(o: DVec3, d: DVec3, lo: DVec3, hi: DVec3, max_t: f64) -> bool {
    let (mut near, mut far) = (0.0f64, max_t);
    for k in 0..3 {
        if d[k] == 0.0 {
            if o[k] < lo[k] || o[k] > hi[k] {
                return false;
            }
        } else {
            let a = (lo[k] - o[k]) / d[k];
            let b = (hi[k] - o[k]) / d[k];
            near = near.max(a.min(b));
            far = far.min(a.max(b));
        }
    }
    near <= far * (1.0 + 1e-9) + 1e-12
}

struct PlaneHit {
    t: f64,
    /// Signed distance from the hit point to the nearest edge (positive inside).
    margin: f64,
    cos: f64,
}

/// Möller–Trumbore in f64, reporting how far inside the triangle the hit
/// point lies as a distance (barycentric coordinate × altitude), which
/// stays meaningful for sliver triangles.
fn moller(o: DVec3, d: DVec3, v: [DVec3; 3]) -> Option<PlaneHit> {
    crossing(o, d, v).map(|c| c.hit(d, v))
}

/// Where a ray crosses a triangle's plane, before the lengths and
/// divisions of [`Crossing::hit`]: a search drops most triangles on `t`
/// alone.
struct Crossing {
    t: f64,
    u: f64,
    w: f64,
    e1: DVec3,
    e2: DVec3,
}

/// The first half of [`moller`]: `None` for a ray parallel to the plane
/// or crossing it behind the origin.
fn crossing(o: DVec3, d: DVec3, v: [DVec3; 3]) -> Option<Crossing> {
    let e1 = v[1] - v[0];
    let e2 = v[2] - v[0];
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - v[0];
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let w = d.dot(q) * inv;
    let t = e2.dot(q) * inv;
    if t < -1e-9 {
        return None;
    }
    Some(Crossing { t, u, w, e1, e2 })
}

impl Crossing {
    /// The second half of [`moller`].
    fn hit(&self, d: DVec3, v: [DVec3; 3]) -> PlaneHit {
        let (u, w, e1, e2) = (self.u, self.w, self.e1, self.e2);
        let n = e1.cross(e2);
        let area2 = n.length();
        let margin = ((1.0 - u - w) * area2 / (v[2] - v[1]).length())
            .min(u * area2 / e2.length())
            .min(w * area2 / e1.length());
        PlaneHit {
            t: self.t.max(0.0),
            margin,
            cos: (n.dot(d) / (area2 * d.length())).abs(),
        }
    }
}

/// Distance from `p` to triangle `v` in f64, computed independently of the
/// runtime: the plane projection if it falls inside, else the nearest of
/// the three edges.
pub fn dist_point_triangle(p: DVec3, v: [DVec3; 3]) -> f64 {
    let seg = |a: DVec3, b: DVec3| {
        let ab = b - a;
        let l = ab.length_squared();
        let s = if l > 0.0 {
            ((p - a).dot(ab) / l).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (a + ab * s - p).length()
    };
    let edges = seg(v[0], v[1]).min(seg(v[1], v[2])).min(seg(v[2], v[0]));
    let n = (v[1] - v[0]).cross(v[2] - v[0]);
    let nl = n.length();
    if nl == 0.0 {
        return edges;
    }
    let n = n / nl;
    let h = (p - v[0]).dot(n);
    let q = p - n * h;
    let inside = (0..3).all(|k| (v[(k + 1) % 3] - v[k]).cross(q - v[k]).dot(n) >= 0.0);
    if inside { h.abs() } else { edges }
}

/// First `t` in `[0, max_t]` at which a sphere moving along `c + t·d`
/// comes within `r` of triangle `v` ([`search::first_contact`]: the
/// distance is convex in `t`). Also returns the closest approach distance.
pub fn sweep_oracle(c: DVec3, d: DVec3, r: f64, max_t: f64, v: [DVec3; 3]) -> (Option<f64>, f64) {
    let (t, least) = search::first_contact(|t| dist_point_triangle(c + d * t, v) - r, max_t);
    (t, least + r)
}

/// The time of [`sweep_oracle`] alone, found with fewer steps
/// ([`search::first_root`]: the centre moves |d| a unit of `t`).
pub fn sweep_toi(c: DVec3, d: DVec3, r: f64, max_t: f64, v: [DVec3; 3]) -> Option<f64> {
    search::first_root(|t| dist_point_triangle(c + d * t, v) - r, max_t, d.length())
}

/// A scene baked with each tree kind, AABB first: every oracle test checks
/// both against one brute-force answer.
pub fn both_kinds(
    bake: impl Fn(&kiln_baker::BakeSettings) -> Vec<u8>,
) -> Vec<(kiln_formats::TreeKind, kiln_runtime::Level)> {
    use kiln_formats::TreeKind;
    [TreeKind::Aabb, TreeKind::Sphere]
        .into_iter()
        .map(|k| {
            let bytes = bake(
                &kiln_baker::BakeSettings::default()
                    .all_meshes()
                    .with_tree(k),
            );
            (k, kiln_runtime::Level::from_bytes(&bytes).unwrap())
        })
        .collect()
}

/// Each archived instance's index in the baked scene (instances are
/// stored in top-tree leaf order).
pub fn scene_order(level: &kiln_runtime::Level) -> Vec<usize> {
    level
        .archive()
        .instances
        .iter()
        .map(|i| i.source.to_native() as usize)
        .collect()
}

/// Three ways to place an object: the identity; rotated, scaled 2 and far
/// from the origin; non-uniformly scaled and rotated.
pub fn placements() -> Vec<(&'static str, glam::DAffine3)> {
    vec![
        ("identity", glam::DAffine3::IDENTITY),
        (
            "rotated, scale 2, far",
            glam::DAffine3::from_scale_rotation_translation(
                glam::DVec3::splat(2.0),
                glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1),
                glam::DVec3::new(1000.0, -200.0, 500.0),
            ),
        ),
        (
            "non-uniform",
            glam::DAffine3::from_scale_rotation_translation(
                glam::DVec3::new(1.0, 3.0, 0.5),
                glam::DQuat::from_rotation_y(0.6),
                glam::DVec3::new(-3.0, 1.0, 2.0),
            ),
        ),
    ]
}

/// [`placements`] and the two no similarity reaches: a mirror (an
/// editor's "scale −1" on a non-uniform scale) and a shear.
pub fn affine_placements() -> Vec<(&'static str, glam::DAffine3)> {
    let mut all = placements();
    all.push((
        "mirrored",
        glam::DAffine3::from_scale_rotation_translation(
            glam::DVec3::new(-0.8, 1.3, 1.1),
            glam::DQuat::from_rotation_y(-0.3),
            glam::DVec3::new(2.0, 0.5, -1.0),
        ),
    ));
    all.push((
        "sheared",
        glam::DAffine3 {
            matrix3: glam::DMat3::from_cols(
                glam::DVec3::new(1.0, 0.0, 0.0),
                glam::DVec3::new(0.45, 1.0, 0.0),
                glam::DVec3::new(0.0, -0.3, 1.2),
            ),
            translation: glam::DVec3::new(-1.0, 0.2, 3.0),
        },
    ));
    all
}

/// A tessellated floor patch `n × n` quads of side `cell`, gently bumped.
pub fn floor(n: u32, cell: f32) -> kiln_baker::SceneMesh {
    let mut pos = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let h = ((x as f32 * 0.9).sin() * (y as f32 * 0.7).cos()) * 0.15;
            pos.push([x as f32 * cell, h, y as f32 * cell]);
        }
    }
    kiln_baker::SceneMesh::new("floor", pos, &grid_triangles(n))
}

/// One object of every collider kind side by side, placed by `xf`, each
/// named for the kind its `extras.collider` asks: `polytope`, `cuboid`,
/// `sphere`, `capsule`, `bsp` (the shape collection's torus) and `floor`
/// (a triangle mesh).
pub fn every_kind_scene(xf: glam::DAffine3) -> Scene {
    use glam::{DAffine3, DVec3};
    let torus = kiln_baker::ingest::load(&samples_dir().join("shape_collection.glb"))
        .expect("the shape collection loads")
        .scene
        .meshes
        .into_iter()
        .find(|m| m.name == "Torus")
        .expect("a torus");
    let meshes = vec![
        kiln_baker::SceneMesh::cuboid("cube", [0.0; 3], [0.5, 0.4, 0.6]),
        kiln_baker::SceneMesh::cuboid("long", [0.0; 3], [0.3, 1.0, 0.3]),
        torus,
        floor(12, 0.5),
    ];
    let objects = [
        ("polytope", 0, "convex", DVec3::new(0.0, 1.0, 0.0)),
        ("cuboid", 0, "box", DVec3::new(2.0, 1.0, 0.0)),
        ("sphere", 0, "sphere", DVec3::new(4.0, 1.0, 0.0)),
        ("capsule", 1, "capsule", DVec3::new(0.0, 1.5, 2.5)),
        ("bsp", 2, "concave", DVec3::new(2.5, 1.0, 2.5)),
        ("floor", 3, "mesh", DVec3::new(-1.0, 0.0, -1.0)),
    ];
    Scene {
        meshes,
        instances: objects
            .iter()
            .map(|&(name, mesh, collider, at)| kiln_baker::SceneInstance {
                name: name.into(),
                mesh,
                transform: xf * DAffine3::from_translation(at),
                extras_collider: Some(collider.into()),
                ..kiln_baker::SceneInstance::default()
            })
            .collect(),
        ..Scene::default()
    }
}

/// Object `i` of `level` as world-space triangles in f64, as export
/// writes them (the oracle's view of a baked shape).
pub fn object_triangles(level: &kiln_runtime::Level, i: usize) -> Vec<[DVec3; 3]> {
    let objs = kiln_baker::export::world_objects(level.archive());
    let o = &objs[i];
    let p = |k: u32| DVec3::from(o.positions[k as usize].map(f64::from));
    o.triangles.iter().map(|t| t.map(p)).collect()
}

/// Every object of `level` as (name, built kind as `inspect` prints it,
/// the rule that chose it), in archive order.
pub fn object_kinds(level: &kiln_runtime::Level) -> Vec<(String, String, String)> {
    let a = level.archive();
    a.instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            (
                level
                    .object_name(level.object(i as u32).unwrap())
                    .unwrap_or_default()
                    .to_string(),
                a.colliders[inst.collider.to_native() as usize]
                    .kind_name()
                    .to_string(),
                a.instance_rule(i).to_string(),
            )
        })
        .collect()
}

/// Triangles as position triples (f32 bit patterns), each from its
/// smallest corner, sorted: equal for two encodings of one mesh whatever
/// their point and face order.
pub fn sorted_triangles(tris: impl Iterator<Item = [[f32; 3]; 3]>) -> Vec<[[u32; 3]; 3]> {
    let mut out: Vec<[[u32; 3]; 3]> = tris
        .map(|t| {
            let mut v = t.map(|p| p.map(f32::to_bits));
            // the same triangle from any starting corner
            let r = (0..3).min_by_key(|&k| v[k]).expect("three corners");
            v.rotate_left(r);
            v
        })
        .collect();
    out.sort_unstable();
    out
}

/// A closed (2, 3) torus-knot tube about 1.6 m across, `u × v × 2`
/// triangles, manifold; `open` leaves out one row of quads along the tube
/// (a slit). A prop of any size for the classification, Draco and
/// collider tests.
pub fn torus_knot(u: u32, v: u32, open: bool) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let curve = |s: f32| {
        let (p, q) = (2.0, 3.0);
        let r = 0.5 + 0.2 * (q * s).cos();
        Vec3::new(r * (p * s).cos(), 0.2 * (q * s).sin(), r * (p * s).sin())
    };
    let mut pos = Vec::new();
    for i in 0..u {
        let s = std::f32::consts::TAU * i as f32 / u as f32;
        let c = curve(s);
        let t = (curve(s + 1e-3) - curve(s - 1e-3)).normalize();
        let n = t.cross(Vec3::Y).normalize();
        let b = t.cross(n);
        for j in 0..v {
            let a = std::f32::consts::TAU * j as f32 / v as f32;
            pos.push((c + (n * a.cos() + b * a.sin()) * 0.08).to_array());
        }
    }
    let at = |i: u32, j: u32| (i % u) * v + j % v;
    let mut tris = Vec::new();
    for i in 0..u {
        for j in 0..v {
            if open && j == 0 {
                continue;
            }
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            tris.push([a, c, b]);
            tris.push([a, d, c]);
        }
    }
    (pos, tris)
}

/// Sphere queries as the oracle tests and the benchmark ask them: a sphere
/// of radius `r` at `c`, seeing every object, casts keeping every contact.
/// Shorthands over [`kiln_runtime::Level::overlap`], `overlap_any` and
/// `cast` with [`kiln_runtime::QueryShape::Sphere`].
pub trait SphereQueries {
    /// Every object the sphere touches.
    fn sphere_overlaps(&self, c: Vec3, r: f32) -> Vec<kiln_runtime::ShapeOverlap>;
    /// [`SphereQueries::sphere_overlaps`] into `out`.
    fn sphere_overlaps_into(&self, c: Vec3, r: f32, out: &mut Vec<kiln_runtime::ShapeOverlap>);
    /// Whether the sphere touches anything.
    fn sphere_touches(&self, c: Vec3, r: f32) -> bool;
    /// The first contact of the sphere moving by `t · d`, `t ≤ max_t`.
    fn sphere_sweep(&self, c: Vec3, r: f32, d: Vec3, max_t: f32) -> Option<kiln_runtime::ShapeHit>;
}

impl SphereQueries for kiln_runtime::Level {
    fn sphere_overlaps(&self, c: Vec3, r: f32) -> Vec<kiln_runtime::ShapeOverlap> {
        let mut out = Vec::new();
        self.sphere_overlaps_into(c, r, &mut out);
        out
    }
    fn sphere_overlaps_into(&self, c: Vec3, r: f32, out: &mut Vec<kiln_runtime::ShapeOverlap>) {
        let ball = kiln_runtime::QueryShape::Sphere { radius: r };
        self.overlap_into(
            &ball,
            &kiln_runtime::Pose::at(c),
            &kiln_runtime::Filter::ALL,
            out,
        );
    }
    fn sphere_touches(&self, c: Vec3, r: f32) -> bool {
        let ball = kiln_runtime::QueryShape::Sphere { radius: r };
        self.overlap_any(
            &ball,
            &kiln_runtime::Pose::at(c),
            &kiln_runtime::Filter::ALL,
        )
    }
    fn sphere_sweep(&self, c: Vec3, r: f32, d: Vec3, max_t: f32) -> Option<kiln_runtime::ShapeHit> {
        let ball = kiln_runtime::QueryShape::Sphere { radius: r };
        let options = kiln_runtime::CastOptions::default();
        self.cast(
            &kiln_runtime::ShapeCast::new(ball, kiln_runtime::Pose::at(c), d, max_t).with(options),
            &kiln_runtime::Filter::ALL,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_baker::{SceneInstance, SceneMesh};

    /// The oracle's boxes against every triangle, on needles (corners of a
    /// thousandth of a radian, whose edges moved out by a margin reach far
    /// past the box) and ordinary triangles, each its own instance so that
    /// each box holds one triangle, with rays aimed just past their corners
    /// at grazing angles and the slacks the ray tests use.
    #[test]
    fn the_boxes_skip_only_triangles_that_cannot_answer() {
        let mut rng = Rng::new(5);
        let mut scene = Scene::default();
        for i in 0..200 {
            let base = rng.unit32() * 20.0;
            let along = rng.unit32() * rng.range(0.5, 3.0);
            let side = along.any_orthonormal_vector() * along.length() * 1e-3 * (i % 2) as f32;
            let wide = rng.unit32() * rng.range(0.2, 1.0);
            let corners = [base, base + along, base + side + wide].map(|v| v.to_array());
            scene
                .meshes
                .push(SceneMesh::new("needle", corners.to_vec(), &[[0, 1, 2]]));
            scene.instances.push(SceneInstance {
                name: format!("needle {i}"),
                mesh: i,
                ..SceneInstance::default()
            });
        }
        let oracle = Oracle::new(&scene);
        assert_eq!(oracle.runs.len(), 200, "a box a triangle");
        let (mut found, mut rays, mut far_out) = (0, 0, 0);
        for tri in oracle.triangles().to_vec() {
            let n = (tri.v[1] - tri.v[0]).cross(tri.v[2] - tri.v[0]).normalize();
            let (lo, hi) = (
                tri.v[0].min(tri.v[1]).min(tri.v[2]),
                tri.v[0].max(tri.v[1]).max(tri.v[2]),
            );
            for _ in 0..40 {
                let slack = [1e-3, 1e-4][rng.below(2)];
                // at an angle whose cosine is between 1e-4 and 1
                let cos = 10f64.powf(-4.0 * f64::from(rng.f32()));
                let in_plane = n.any_orthonormal_vector();
                let dir = n * -cos + in_plane * (1.0 - cos * cos).sqrt();
                // past a corner along its bisector, up to 1.5 times as far
                // as the margin test accepts there
                let k = rng.below(3);
                let (a, b) = (tri.v[(k + 1) % 3] - tri.v[k], tri.v[(k + 2) % 3] - tri.v[k]);
                let (a, b) = (a.normalize(), b.normalize());
                let half_sin = ((1.0 - a.dot(b)) * 0.5).sqrt();
                let allowed = slack / cos.max(1e-3) / half_sin;
                let past = allowed * f64::from(rng.range(0.0, 1.5));
                let target = tri.v[k] - (a + b).normalize() * past;
                let origin = (target - dir * 5.0).as_vec3();
                let ray = TestRay {
                    origin,
                    dir: target.as_vec3() - origin,
                    max_t: 2.0,
                };
                for s in [slack, -slack] {
                    let got = oracle.closest(&ray, s, 2.0);
                    assert_eq!(
                        got,
                        oracle.closest_of_all(&ray, s, 2.0),
                        "{ray:?} slack {s}"
                    );
                    found += usize::from(got.is_some());
                    rays += 1;
                    // a near miss beyond the box padded by the margin alone:
                    // only the corner growth keeps it
                    if let Some(h) = got.filter(|_| s > 0.0) {
                        let p = ray.origin.as_dvec3() + ray.dir.as_dvec3() * h.t;
                        let reach = s * 1e3 + 1e-9;
                        far_out +=
                            usize::from(p.cmplt(lo - reach).any() || p.cmpgt(hi + reach).any());
                    }
                }
            }
        }
        assert!(
            far_out > 100,
            "{far_out} hits outside the margin-padded box"
        );
        assert!(found > rays / 10, "{found} hits of {rays}");
    }
}
