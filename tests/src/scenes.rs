//! Differential testing: small random scenes — every collider kind, open
//! and closed meshes, placements of every class (identity, rotated and
//! scaled, non-uniform, mirrored, sheared) — and random query shapes deep
//! inside, straddling and near every collider, judged by
//! [`crate::judge`]. Driven by a seed ([`Dice::seeded`]) in the test suite
//! and by fuzzer bytes ([`Dice::from_bytes`]) in the `query_judge` fuzz
//! target, so a case the fuzzer finds is replayed from its bytes.

use crate::judge::{self, Object, Query, Stats};
use crate::{Rng, grid_triangles, torus_knot};
use glam::{DAffine3, DMat3, DQuat, DVec3, Vec3};
use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
use kiln_runtime::Level;

/// Where a scene's random decisions come from.
pub enum Dice<'a> {
    /// A seeded generator.
    Seeded(Rng),
    /// Fuzzer bytes, read in order (zeros once they run out).
    Bytes(&'a [u8]),
}

impl<'a> Dice<'a> {
    /// Decisions from `seed`.
    pub fn seeded(seed: u64) -> Dice<'static> {
        Dice::Seeded(Rng::new(seed))
    }

    /// Decisions from `bytes`.
    pub fn from_bytes(bytes: &'a [u8]) -> Dice<'a> {
        Dice::Bytes(bytes)
    }

    /// A number in `[0, 1)`.
    pub fn f32(&mut self) -> f32 {
        match self {
            Dice::Seeded(r) => r.f32(),
            Dice::Bytes(b) => {
                let mut x = [0u8; 2];
                for v in &mut x {
                    if let Some((first, rest)) = b.split_first() {
                        *v = *first;
                        *b = rest;
                    }
                }
                f32::from(u16::from_le_bytes(x)) / 65536.0
            }
        }
    }

    /// A number in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    /// An index below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.f32() * n as f32) as usize).min(n - 1)
    }

    /// A unit vector.
    pub fn unit32(&mut self) -> Vec3 {
        let v = Vec3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        );
        v.try_normalize().unwrap_or(Vec3::Y)
    }
}

/// The placement classes every collider is tried under.
pub const PLACEMENTS: [&str; 6] = [
    "identity",
    "rotated, scaled",
    "non-uniform",
    "mirrored",
    "sheared",
    "far",
];

/// A placement of class `PLACEMENTS[k]` with random parameters, moved by
/// `at`.
fn placement(k: usize, at: DVec3, dice: &mut Dice) -> DAffine3 {
    let rot = DQuat::from_axis_angle(
        dice.unit32().as_dvec3(),
        f64::from(dice.range(0.0, std::f32::consts::TAU)),
    );
    let s = |d: &mut Dice| f64::from(d.range(0.4, 2.0));
    let m = match k {
        0 => DMat3::IDENTITY,
        1 => DMat3::from_quat(rot) * s(dice),
        2 => DMat3::from_quat(rot) * DMat3::from_diagonal(DVec3::new(s(dice), s(dice), s(dice))),
        3 => {
            // one axis (or all three) negated: an editor's mirror
            let mut d = DVec3::new(s(dice), s(dice), s(dice));
            d[dice.below(3)] *= -1.0;
            if dice.below(4) == 0 {
                d = -d;
            }
            DMat3::from_quat(rot) * DMat3::from_diagonal(d)
        }
        4 => {
            let shear = DMat3::from_cols(
                DVec3::X,
                DVec3::new(f64::from(dice.range(-0.6, 0.6)), 1.0, 0.0),
                DVec3::new(
                    f64::from(dice.range(-0.6, 0.6)),
                    f64::from(dice.range(-0.6, 0.6)),
                    1.0,
                ),
            );
            DMat3::from_quat(rot) * shear
        }
        _ => DMat3::from_quat(rot),
    };
    let far = if k == 5 {
        DVec3::new(3000.0, -200.0, 1500.0)
    } else {
        DVec3::ZERO
    };
    DAffine3 {
        matrix3: m,
        translation: at + far,
    }
}

/// A closed mesh of the union of unit cells (integer corners, scaled by
/// `size`, centred on the origin).
fn voxels(name: &str, cells: &[[i32; 3]], size: f32) -> SceneMesh {
    let (corners, tris) = kiln_geometry::voxels::surface(cells);
    let (lo, hi) = corners
        .iter()
        .fold(([i32::MAX; 3], [i32::MIN; 3]), |(l, h), c| {
            (
                std::array::from_fn(|i| l[i].min(c[i])),
                std::array::from_fn(|i| h[i].max(c[i])),
            )
        });
    let centre: [f32; 3] = std::array::from_fn(|i| (lo[i] + hi[i]) as f32 * 0.5);
    let pos = corners
        .iter()
        .map(|p| std::array::from_fn(|i| (p[i] as f32 - centre[i]) * size))
        .collect();
    SceneMesh::new(name, pos, &tris)
}

/// The meshes a scene draws from: closed convex (a cube, a tetrahedron
/// with a sliver face), closed concave (an L prism, a torus knot, a block
/// with one corner cut out — an inside corner of three walls — and a
/// block with a slot), open (a two-triangle quad, a bumpy grid patch).
fn meshes() -> Vec<SceneMesh> {
    let mut cube_pos = Vec::new();
    for i in 0..8u32 {
        let s = |b: u32| if i & b != 0 { 0.5 } else { -0.5 };
        cube_pos.push([s(1), s(2), s(4)]);
    }
    let cube = SceneMesh::new(
        "cube",
        cube_pos,
        &[
            [0, 2, 3],
            [0, 3, 1],
            [4, 5, 7],
            [4, 7, 6],
            [0, 1, 5],
            [0, 5, 4],
            [2, 6, 7],
            [2, 7, 3],
            [0, 4, 6],
            [0, 6, 2],
            [1, 3, 7],
            [1, 7, 5],
        ],
    );
    let tetra = SceneMesh::new(
        "tetra",
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.02, 1.0],
            [0.3, 0.8, 0.2],
        ],
        &[[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]],
    );
    let l = [
        [0.0, 0.0],
        [1.2, 0.0],
        [1.2, 0.5],
        [0.5, 0.5],
        [0.5, 1.2],
        [0.0, 1.2],
    ];
    let mut l_pos = Vec::new();
    for z in [0.0f32, 0.6] {
        for p in l {
            l_pos.push([p[0] - 0.6, p[1] - 0.6, z - 0.3]);
        }
    }
    let mut l_tris = Vec::new();
    for k in 1..5u32 {
        l_tris.push([0, k + 1, k]);
        l_tris.push([6, 6 + k, 6 + k + 1]);
    }
    for k in 0..6u32 {
        let j = (k + 1) % 6;
        l_tris.push([k, j, 6 + j]);
        l_tris.push([k, 6 + j, 6 + k]);
    }
    let l_prism = SceneMesh::new("L", l_pos, &l_tris);
    let (knot_pos, knot_tris) = torus_knot(32, 6, false);
    let knot_pos = knot_pos.iter().map(|p| p.map(|c| c * 0.4)).collect();
    let knot = SceneMesh::new("knot", knot_pos, &knot_tris);
    let quad = SceneMesh::new(
        "quad",
        vec![
            [-1.0, 0.0, -1.0],
            [1.0, 0.0, -1.0],
            [-1.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
        ],
        &[[0, 2, 1], [1, 2, 3]],
    );
    let n = 4;
    let mut grid = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let h = if (x + y) % 3 == 0 {
                0.0
            } else {
                0.1 * ((x * y) % 3) as f32
            };
            grid.push([x as f32 * 0.5 - 1.0, h, y as f32 * 0.5 - 1.0]);
        }
    }
    let patch = SceneMesh::new("patch", grid, &grid_triangles(n));
    let block = |keep: &dyn Fn([i32; 3]) -> bool, dims: [i32; 3]| -> Vec<[i32; 3]> {
        let mut cells = Vec::new();
        for x in 0..dims[0] {
            for y in 0..dims[1] {
                for z in 0..dims[2] {
                    if keep([x, y, z]) {
                        cells.push([x, y, z]);
                    }
                }
            }
        }
        cells
    };
    let notch = voxels("notch", &block(&|c| c != [1, 1, 1], [2, 2, 2]), 0.45);
    let slot = voxels(
        "slot",
        &block(&|c| !(c[0] == 1 && c[1] == 1), [3, 2, 2]),
        0.35,
    );
    vec![cube, tetra, l_prism, knot, quad, patch, notch, slot]
}

/// The collider each mesh may be asked for (extras names).
fn colliders(mesh: &str) -> &'static [&'static str] {
    match mesh {
        "cube" | "tetra" => &["convex", "box", "sphere", "capsule", "mesh", "concave"],
        "L" | "knot" | "notch" | "slot" => &["concave", "convex", "mesh"],
        _ => &["mesh"],
    }
}

/// A scene of one to four objects near the origin.
pub fn scene(dice: &mut Dice) -> Scene {
    let count = 1 + dice.below(4);
    scene_of(dice, count, |dice, _| {
        DVec3::new(
            f64::from(dice.range(-1.2, 1.2)),
            f64::from(dice.range(-0.5, 0.5)),
            f64::from(dice.range(-1.2, 1.2)),
        )
    })
}

/// A scene of `count` objects, object `i` of a random mesh, collider kind
/// and placement class, placed about `at(dice, i)` (drawn in this order,
/// which the seeds and fuzz inputs that once found wrong answers replay).
fn scene_of(dice: &mut Dice, count: usize, at: impl Fn(&mut Dice, usize) -> DVec3) -> Scene {
    let meshes = meshes();
    let instances = (0..count)
        .map(|i| {
            let mesh = dice.below(meshes.len());
            let kinds = colliders(&meshes[mesh].name);
            let collider = kinds[dice.below(kinds.len())];
            let at = at(dice, i);
            let class = dice.below(PLACEMENTS.len());
            SceneInstance {
                name: format!("o{i}"),
                mesh,
                transform: placement(class, at, dice),
                extras_collider: Some(collider.into()),
                ..SceneInstance::default()
            }
        })
        .collect();
    Scene {
        meshes,
        instances,
        ..Scene::default()
    }
}

/// A query near the objects: deep inside one, straddling its surface, or
/// clear of it, of a random shape and size.
fn query(objs: &[Object], dice: &mut Dice, k: usize) -> Query {
    let obj = &objs[dice.below(objs.len())];
    let piece = &obj.pieces[dice.below(obj.pieces.len())];
    let v = piece.core.vertices();
    let mut w: Vec<f64> = v.iter().map(|_| f64::from(dice.f32()) + 1e-3).collect();
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= sum);
    let on: DVec3 = v.iter().zip(&w).map(|(p, w)| *p * *w).sum();
    let size = ((piece.hi - piece.lo).max_element() as f32).clamp(0.2, 3.0);
    let s = size * dice.range(0.05, 0.8);
    let at = on.as_vec3() + dice.unit32() * s * dice.range(0.0, 1.5);
    let mut rng = Rng::new(u64::from(dice.range(0.0, 1e9) as u32));
    Query::random(k % 4, s, at, &mut rng)
}

/// A scene of `count` objects, each of a random mesh, collider kind and
/// placement class, one to a cell of a square grid `spacing` apart on
/// the ground: a level large enough for a top-level tree of quantised
/// nodes (`kiln_formats::level::TopNodes`).
pub fn grid_scene(dice: &mut Dice, count: usize, spacing: f32) -> Scene {
    let side = (count as f64).sqrt().ceil() as usize;
    scene_of(dice, count, |dice, i| {
        DVec3::new(
            f64::from((i % side) as f32 * spacing + dice.range(-0.3, 0.3)),
            f64::from(dice.range(-0.5, 0.5)),
            f64::from((i / side) as f32 * spacing + dice.range(-0.3, 0.3)),
        )
    })
}

/// Bakes the scene `dice` makes and judges `queries` random queries of
/// every shape against it — overlaps, yes/no tests, casts and points —
/// panicking on the first wrong answer (with `what` and the case).
pub fn judge_scene(dice: &mut Dice, queries: usize, what: &str) -> Stats {
    let scene = scene(dice);
    let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes)
        .expect("the baker's own archive opens");
    judge_level(&level, dice, queries, what)
}

/// Judges `queries` random queries of every shape (overlaps, yes/no
/// tests, casts and points) against `level`, each near one of its
/// objects, panicking on the first wrong answer (with `what` and the
/// case).
pub fn judge_level(level: &Level, dice: &mut Dice, queries: usize, what: &str) -> Stats {
    let objs = judge::objects(level);
    let mut stats = Stats::default();
    for i in 0..queries {
        let q = query(&objs, dice, i);
        let tag = format!("{what} {} {i}", q.name());
        judge::check_overlap(level, &objs, &q, &mut stats, &tag);
        let motion = dice.unit32() * dice.range(0.05, 3.0);
        judge::check_cast(level, &objs, &q, motion, 1.0, &mut stats, &tag);
        judge::check_point(level, &objs, q.pose.translation, &tag);
    }
    stats
}

/// A digest of every answer — overlaps, yes/no tests and casts — to
/// `queries` random queries of every shape on each of `scenes` random
/// scenes drawn from `seed` (as [`judge_scene`] draws them): the check that
/// a change to the queries "changes no answer", bit for bit, run before
/// and after it (`cargo run --release -p kiln-tests --example
/// answer_digest`). FNV-1a over the answers' debug text, which prints
/// every float's shortest exact form.
pub fn answer_digest(seed: u64, scenes: usize, queries: usize) -> u64 {
    let mut digest = Fnv::default();
    let mut dice = Dice::seeded(seed);
    let filter = kiln_runtime::Filter::default();
    for _ in 0..scenes {
        let scene = scene(&mut dice);
        let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes)
            .expect("the baker's own archive opens");
        let mut objs = judge::objects(&level);
        // a mesh's triangles in an order of their own, not the archive's
        // leaf order, so that a change to the tree's layout asks the same
        // queries
        for o in &mut objs {
            let key = |p: &judge::Piece| {
                let v: Vec<[u64; 3]> = p
                    .core
                    .vertices()
                    .iter()
                    .map(|v| v.to_array().map(f64::to_bits))
                    .collect();
                (v, p.radius.to_bits())
            };
            let mut order: Vec<usize> = (0..o.pieces.len()).collect();
            order.sort_by_cached_key(|&k| key(&o.pieces[k]));
            let mut old: Vec<Option<judge::Piece>> = std::mem::take(&mut o.pieces)
                .into_iter()
                .map(Some)
                .collect();
            o.pieces = order.iter().filter_map(|&k| old[k].take()).collect();
            if o.flat.len() == order.len() {
                o.flat = order.iter().map(|&k| o.flat[k]).collect();
            }
        }
        for i in 0..queries {
            let q = query(&objs, &mut dice, i);
            let (shape, pose) = (q.shape(), q.pose);
            digest.add(&format!("{:?}", level.overlap(&shape, &pose, &filter)));
            digest.add(&format!("{:?}", level.overlap_any(&shape, &pose, &filter)));
            let motion = dice.unit32() * dice.range(0.05, 3.0);
            let cast = kiln_runtime::ShapeCast::new(shape, pose, motion, 1.0);
            digest.add(&format!("{:?}", level.cast(&cast, &filter)));
        }
    }
    digest.0
}

/// The 64-bit FNV-1a hash (Fowler, Noll and Vo), the same on every
/// toolchain (unlike the standard library's hasher).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, text: &str) {
        for &b in text.as_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The height of [`terrain_world`]'s ground at `(x, z)`: flat (y = 0)
/// for `x < 24`, rolling hills past it (continuous at the fold).
pub fn terrain_height(x: f64, z: f64) -> f64 {
    if x < 24.0 {
        0.0
    } else {
        1.5 * (0.12 * (x - 24.0)).sin() * (0.09 * z).sin() + 0.4 * (0.05 * (x - 24.0)).sin()
    }
}

/// A generated open world: one terrain mesh of `quads` × `quads` cells of
/// `spacing` m (two triangles each, flat for x < 24 and hills beyond:
/// [`terrain_height`]), and `props` boxes of one shared mesh scattered
/// over it (turned, some scaled unevenly), from seed `seed`.
pub fn terrain_world(quads: u32, spacing: f64, props: usize, seed: u64) -> Scene {
    let n = quads + 1;
    let mut positions = Vec::with_capacity((n * n) as usize);
    for z in 0..n {
        for x in 0..n {
            let (fx, fz) = (f64::from(x) * spacing, f64::from(z) * spacing);
            positions.push([fx as f32, terrain_height(fx, fz) as f32, fz as f32]);
        }
    }
    let terrain = SceneMesh::new("terrain", positions, &crate::grid_triangles(quads));
    let cube = SceneMesh::new(
        "crate",
        (0..8)
            .map(|k| [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| if b == 1 { 0.5 } else { -0.5 }))
            .collect(),
        &[
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ],
    );
    let mut instances = vec![SceneInstance {
        name: "terrain".into(),
        mesh: 0,
        transform: DAffine3::IDENTITY,
        ..Default::default()
    }];
    let mut rng = Rng::new(seed);
    let extent = f64::from(quads) * spacing;
    for k in 0..props {
        let (x, z) = (
            f64::from(rng.range(1.0, extent as f32 - 1.0)),
            f64::from(rng.range(1.0, extent as f32 - 1.0)),
        );
        let scale = if k % 4 == 0 {
            DVec3::new(2.0, 0.6, 1.2)
        } else {
            DVec3::splat(f64::from(rng.range(0.6, 1.4)))
        };
        let turn = glam::DQuat::from_rotation_y(f64::from(rng.range(0.0, 6.3)));
        let at = DVec3::new(x, terrain_height(x, z) + 0.3 * scale.y, z);
        instances.push(SceneInstance {
            name: format!("crate_{k}"),
            mesh: 1,
            transform: DAffine3::from_scale_rotation_translation(scale, turn, at),
            ..Default::default()
        });
    }
    Scene {
        meshes: vec![terrain, cube],
        instances,
        ..Default::default()
    }
}
