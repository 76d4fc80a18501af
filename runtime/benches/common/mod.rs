//! The workload the peer benchmark and the profiling example share: a
//! seeded generator, the fBm terrain, and the ray mix.

use glam::Vec3;

/// The seeded generator (Kiln's one: the same sequence on every machine).
pub use kiln_geometry::rng::Rng;

/// fBm terrain of `n × n` quads over 1 m cells.
pub fn terrain(n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let hash = |x: i32, y: i32, o: u32| {
        let mut h = (x as u32).wrapping_mul(374_761_393)
            ^ (y as u32).wrapping_mul(668_265_263)
            ^ o.wrapping_mul(2_246_822_519);
        h = (h ^ (h >> 13)).wrapping_mul(1_274_126_177);
        (h ^ (h >> 16)) as f32 / u32::MAX as f32
    };
    let noise = |x: f32, y: f32, o: u32| {
        let (xi, yi) = (x.floor() as i32, y.floor() as i32);
        let (fx, fy) = (x - xi as f32, y - yi as f32);
        let s = |t: f32| t * t * (3.0 - 2.0 * t);
        let (a, b) = (hash(xi, yi, o), hash(xi + 1, yi, o));
        let (c, d) = (hash(xi, yi + 1, o), hash(xi + 1, yi + 1, o));
        let top = a + (b - a) * s(fx);
        let bot = c + (d - c) * s(fx);
        top + (bot - top) * s(fy)
    };
    let mut pos = Vec::with_capacity(((n + 1) * (n + 1)) as usize);
    for y in 0..=n {
        for x in 0..=n {
            let mut h = 0.0;
            let (mut amp, mut freq) = (40.0, 1.0 / 128.0);
            for o in 0..6 {
                h += amp * noise(x as f32 * freq, y as f32 * freq, o);
                amp *= 0.5;
                freq *= 2.0;
            }
            pos.push([x as f32, h, y as f32]);
        }
    }
    (pos, kiln_tests::grid_triangles(n))
}

/// A city of `lots × lots` building lots (20 m square, a 16 m street
/// after every fourth lot) on a ground grid of 20 m cells: each lot holds
/// a tower of one to three boxes, each narrower than the one below
/// (setbacks), taller towards the centre. Boxes share their eight corners
/// and have no bottom face: ten triangles each. `lots = 100` gives about
/// 240k triangles (the downtown of an open-world level); the same seed
/// gives the same city on every machine.
pub fn city(lots: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    const LOT: f32 = 20.0;
    const STREET: f32 = 16.0;
    const CELL: f32 = 20.0;
    let mut r = Rng(0xC17E_5EED_0000_0001);
    let mut pos: Vec<[f32; 3]> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    // where lot i starts along an axis: a street after every fourth lot
    let at = |i: u32| i as f32 * LOT + (i / 4) as f32 * STREET + STREET;
    let size = at(lots) + STREET;
    // the ground
    let cells = (size / CELL).ceil() as u32;
    for z in 0..=cells {
        for x in 0..=cells {
            pos.push([x as f32 * CELL, 0.0, z as f32 * CELL]);
        }
    }
    tris.extend(kiln_tests::grid_triangles(cells));
    let centre = size * 0.5;
    for lz in 0..lots {
        for lx in 0..lots {
            let (x0, z0) = (at(lx), at(lz));
            // towers rise towards the centre: up to 150 m there, 20 m at the edge
            let d = ((x0 - centre).hypot(z0 - centre) / centre).min(1.0);
            let tall = 20.0 + 130.0 * (1.0 - d) * (1.0 - d);
            let mut lo = [x0 + r.range(1.0, 4.0), z0 + r.range(1.0, 4.0)];
            let mut hi = [x0 + LOT - r.range(1.0, 4.0), z0 + LOT - r.range(1.0, 4.0)];
            let mut base = 0.0;
            let tiers = 1 + (r.f32() * 3.0) as u32;
            for _ in 0..tiers {
                let top = base + r.range(0.2, 0.6) * tall;
                let b = pos.len() as u32;
                for k in 0..8u32 {
                    let x = if k & 1 == 0 { lo[0] } else { hi[0] };
                    let y = if k & 2 == 0 { base } else { top };
                    let z = if k & 4 == 0 { lo[1] } else { hi[1] };
                    pos.push([x, y, z]);
                }
                // the four walls and the roof, wound outwards (corner k has
                // x from bit 0, y from bit 1, z from bit 2)
                for q in [
                    [0, 2, 3, 1], // z = lo, facing −z
                    [4, 5, 7, 6], // z = hi, facing +z
                    [0, 4, 6, 2], // x = lo, facing −x
                    [1, 3, 7, 5], // x = hi, facing +x
                    [2, 6, 7, 3], // roof, facing +y
                ] {
                    tris.push([b + q[0], b + q[1], b + q[2]]);
                    tris.push([b + q[0], b + q[2], b + q[3]]);
                }
                // the next tier steps in from every side
                for a in 0..2 {
                    let inset = (hi[a] - lo[a]) * r.range(0.08, 0.2);
                    lo[a] += inset;
                    hi[a] -= inset;
                }
                base = top;
            }
        }
    }
    (pos, tris)
}

/// Every world triangle of the glTF file at `path`, as one mesh with three
/// vertices a triangle, so a peer and Kiln see the same triangles (how the
/// benchmark takes sauer_pandora).
pub fn flattened(path: &std::path::Path) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let scene = kiln_baker::ingest::load(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .scene;
    let mut pos = Vec::new();
    let mut tris = Vec::new();
    for w in scene.world_triangles() {
        let b = pos.len() as u32;
        pos.extend(w.v.map(|v| v.as_vec3().to_array()));
        tris.push([b, b + 1, b + 2]);
    }
    (pos, tris)
}

#[derive(Clone, Copy)]
/// A ray query: origin, direction, range.
pub struct Q {
    /// Origin.
    pub o: Vec3,
    /// Direction.
    pub d: Vec3,
    /// Largest t.
    pub t: f32,
}

/// The second ray peer, obvhs' compressed wide BVH (see
/// `benches/peers/cwbvh.rs`), over a triangle soup: `medium_build`, with
/// the triangles reordered to its leaves' order, as obvhs' own examples do.
pub struct Peer {
    /// The tree.
    pub bvh: obvhs::cwbvh::CwBvh,
    /// The triangles in leaf order.
    pub ordered: Vec<obvhs::triangle::Triangle>,
}

impl Peer {
    /// Builds the peer's tree over `tris` (indices into `pos`).
    pub fn build(pos: &[[f32; 3]], tris: &[[u32; 3]]) -> Peer {
        use obvhs::triangle::Triangle;
        let v = |k: u32| glam_obvhs::Vec3A::from(pos[k as usize]);
        let input: Vec<Triangle> = tris
            .iter()
            .map(|t| Triangle {
                v0: v(t[0]),
                v1: v(t[1]),
                v2: v(t[2]),
            })
            .collect();
        let bvh = obvhs::cwbvh::builder::build_cwbvh_from_tris(
            &input,
            obvhs::BvhBuildParams::medium_build(),
            &mut std::time::Duration::default(),
        );
        // leaves index the reordered list directly
        let ordered = bvh
            .primitive_indices
            .iter()
            .map(|&i| input[i as usize])
            .collect();
        Peer { bvh, ordered }
    }

    /// Whether the closest-hit traversal finds a hit for `q`.
    pub fn hits(&self, q: &Q) -> bool {
        let mut hit = obvhs::ray::RayHit::none();
        self.bvh
            .ray_traverse(Self::ray(q), &mut hit, |r, i| self.ordered[i].intersect(r))
    }

    /// Whether the any-hit traversal finds a hit for `q`.
    pub fn any(&self, q: &Q) -> bool {
        !self
            .bvh
            .ray_traverse_miss(Self::ray(q), |r, i| self.ordered[i].intersect(r))
    }

    fn ray(q: &Q) -> obvhs::ray::Ray {
        obvhs::ray::Ray::new(q.o.to_array().into(), q.d.to_array().into(), 0.0, q.t)
    }
}

/// Probes, random rays ≤ 100 m, visibility rays: a third each.
pub fn rays(lo: Vec3, hi: Vec3, n: usize) -> Vec<Q> {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let p = |r: &mut Rng| {
        Vec3::new(
            r.range(lo.x, hi.x),
            r.range(lo.y, hi.y),
            r.range(lo.z, hi.z),
        )
    };
    (0..n)
        .map(|i| match i % 3 {
            0 => {
                let mut o = p(&mut r);
                o.y = hi.y + 10.0;
                Q {
                    o,
                    d: Vec3::NEG_Y,
                    t: (hi.y - lo.y) + 20.0,
                }
            }
            1 => Q {
                o: p(&mut r),
                d: r.unit32(),
                t: r.range(0.0, 100.0),
            },
            _ => {
                let (a, b) = (p(&mut r), p(&mut r));
                Q {
                    o: a,
                    d: b - a,
                    t: 1.0,
                }
            }
        })
        .collect()
}

/// Points on the surface: a random point of a random triangle.
pub fn surface_points(pos: &[[f32; 3]], tris: &[[u32; 3]], n: usize, seed: u64) -> Vec<Vec3> {
    let mut r = Rng(seed);
    (0..n)
        .map(|_| {
            let t = tris[((r.f32() as f64 * tris.len() as f64) as usize).min(tris.len() - 1)];
            let (mut u, mut v) = (r.f32(), r.f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let p = |k: usize| Vec3::from(pos[t[k] as usize]);
            p(0) + (p(1) - p(0)) * u + (p(2) - p(0)) * v
        })
        .collect()
}
