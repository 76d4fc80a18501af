//! A mesh's vertex positions, each axis stored either as f32 or as 16-bit
//! steps on a grid, decoded to exactly the f32 the baker started from.
//!
//! Many levels put a whole axis on a grid: a heightfield's x and z are
//! whole metres, a block-built level's walls sit on a fixed spacing. An
//! axis whose every coordinate equals `origin + q · step` in f32 (`q` a
//! `u16`, both operations rounded as IEEE-754 binary32 does) is stored as
//! `q`; any other axis keeps its f32. Decoding computes that same
//! expression, so a reader sees bit-for-bit the coordinates the baker
//! wrote and every exact query stays exact. The packer checks each
//! coordinate bitwise and falls back to f32 for the axis on the first one
//! that would not come back.
//!
//! A vertex is one record of `layout[3]` bytes (6 to 12): the f32 axes
//! first, then the 16-bit ones, each in axis order, little-endian.

use rayon::prelude::*;
use rkyv::{Archive, Serialize};

/// Decodes one 16-bit coordinate: `origin + q · scale`, in f32, in
/// exactly this order (the baker rounds against the same formula).
#[inline]
pub fn dequantize(origin: f32, scale: f32, q: u16) -> f32 {
    origin + f32::from(q) * scale
}

/// Meshes with at least this many vertices are packed on the rayon pool.
const PARALLEL_VERTICES: usize = 1 << 15;

/// Largest grid index an axis stores.
pub const MAX_STEPS: u32 = u16::MAX as u32;

/// How one axis is stored: on the grid `origin + q · step` (`step > 0`),
/// or as f32 (`origin` and `step` both `+0.0`).
#[derive(Archive, Serialize, Clone, Copy, Debug, PartialEq, Default)]
#[rkyv(derive(Debug))]
#[repr(C)]
pub struct Axis {
    /// The grid's first value.
    pub origin: f32,
    /// The grid's spacing; `+0.0` for an axis stored as f32.
    pub step: f32,
}

impl Axis {
    /// An axis stored as f32.
    pub const F32: Axis = Axis {
        origin: 0.0,
        step: 0.0,
    };

    /// Whether the axis is stored as 16-bit grid indices.
    #[inline(always)]
    pub fn on_grid(&self) -> bool {
        self.step != 0.0
    }

    /// Grid value `q`: `origin + q · step`, each operation rounded to f32
    /// (the 16-bit decode the sphere frames use, [`dequantize`]).
    #[inline(always)]
    pub fn value(&self, q: u16) -> f32 {
        dequantize(self.origin, self.step, q)
    }

    /// The grid index that gives back exactly `v` (same bits), if any.
    pub fn index_of(&self, v: f32) -> Option<u16> {
        // the nearest index, by a reciprocal and a truncating conversion
        // (no libm call); the bitwise check below decides
        let x = (f64::from(v) - f64::from(self.origin)) * (1.0 / f64::from(self.step)) + 0.5;
        if !(0.0..=f64::from(MAX_STEPS) + 0.5).contains(&x) {
            return None;
        }
        let q = x as u16;
        (self.value(q).to_bits() == v.to_bits()).then_some(q)
    }

    /// Whether the axis is well formed: stored as f32 with both fields
    /// `+0.0`, or a grid whose origin, step and last value are finite with
    /// a positive step (rounding is monotonic, so then every value is).
    pub fn is_valid(&self) -> bool {
        if self.origin.to_bits() == 0 && self.step.to_bits() == 0 {
            return true;
        }
        self.origin.is_finite()
            && self.step.is_finite()
            && self.step > 0.0
            && self.value(u16::MAX).is_finite()
    }
}

impl ArchivedAxis {
    /// Whether this axis is stored on its grid ([`Axis::on_grid`]).
    #[inline(always)]
    pub fn on_grid(&self) -> bool {
        self.get().on_grid()
    }

    /// The native axis.
    #[inline(always)]
    pub fn get(&self) -> Axis {
        Axis {
            origin: self.origin.to_native(),
            step: self.step.to_native(),
        }
    }
}

/// Byte offset of each axis in a record, then the record's size: f32 axes
/// first, then grid axes, each in axis order.
pub fn layout_of(axes: &[Axis; 3]) -> [u8; 4] {
    layout_for_grid(grid_mask(axes.map(|a| a.on_grid())))
}

/// Bit `k` set where axis `k` is on its grid.
#[inline(always)]
fn grid_mask(on: [bool; 3]) -> u8 {
    u8::from(on[0]) | u8::from(on[1]) << 1 | u8::from(on[2]) << 2
}

/// Decodes one record (one bounds check per axis, one load each).
#[inline(always)]
fn decode(axes: [Axis; 3], layout: [u8; 4], rec: &[u8]) -> [f32; 3] {
    let coord = |k: usize| {
        let at = usize::from(layout[k]);
        if axes[k].on_grid() {
            let q: [u8; 2] = rec[at..at + 2].try_into().expect("two bytes");
            axes[k].value(u16::from_le_bytes(q))
        } else {
            let f: [u8; 4] = rec[at..at + 4].try_into().expect("four bytes");
            f32::from_le_bytes(f)
        }
    };
    [coord(0), coord(1), coord(2)]
}

/// [`layout_of`] for the axes whose bit is set in `grid` on the grid: f32
/// axes first, then grid axes, each in axis order (a constant for each of
/// the eight mixes, so readers can name one at compile time).
pub const fn layout_for_grid(grid: u8) -> [u8; 4] {
    let mut layout = [0u8; 4];
    let mut at = 0u8;
    let mut pass = 0;
    while pass < 2 {
        let mut k = 0;
        while k < 3 {
            if (grid >> k & 1 == 1) == (pass == 1) {
                layout[k] = at;
                at += if pass == 1 { 2 } else { 4 };
            }
            k += 1;
        }
        pass += 1;
    }
    layout[3] = at;
    layout
}

/// Vertex `i` of records laid out as [`layout_for_grid`]`(G)`, `S` bytes
/// each: the same values as [`decode`], with every offset a constant.
#[inline(always)]
fn decode_fixed<const G: u8, const S: usize>(
    axes: &[ArchivedAxis; 3],
    data: &[u8],
    i: u32,
) -> [f32; 3] {
    let at = i as usize * S;
    let rec: &[u8; S] = data[at..at + S].try_into().expect("S bytes");
    let layout = const { layout_for_grid(G) };
    // written out, not `array::from_fn`: its closure was left out of line
    // where a ray's answer reads its triangle's corners (150 instructions
    // a closest-hit ray on sauer_pandora)
    #[inline(always)]
    fn axis<const G: u8>(axes: &[ArchivedAxis; 3], rec: &[u8], o: u8, k: usize) -> f32 {
        let o = usize::from(o);
        if G >> k & 1 != 0 {
            let q = u16::from_le_bytes([rec[o], rec[o + 1]]);
            dequantize(axes[k].origin.to_native(), axes[k].step.to_native(), q)
        } else {
            f32::from_le_bytes([rec[o], rec[o + 1], rec[o + 2], rec[o + 3]])
        }
    }
    [
        axis::<G>(axes, rec, layout[0], 0),
        axis::<G>(axes, rec, layout[1], 1),
        axis::<G>(axes, rec, layout[2], 2),
    ]
}

/// A mesh's vertex positions (see the module documentation).
#[derive(Archive, Serialize, Clone, Debug, PartialEq)]
pub struct Vertices {
    /// How each axis is stored.
    pub axes: [Axis; 3],
    /// [`layout_of`] the axes: each axis' byte offset in a record, then
    /// the record's size.
    pub layout: [u8; 4],
    /// One record per vertex.
    pub data: Vec<u8>,
}

impl Default for Vertices {
    /// No vertices, every axis f32 (a layout verification accepts).
    fn default() -> Vertices {
        Vertices::plain(&[])
    }
}

impl Vertices {
    /// `points` with every axis stored as f32.
    pub fn plain(points: &[[f32; 3]]) -> Vertices {
        Vertices::pack(points, [None; 3])
    }

    /// `points` with axis `k` on the grid `grids[k]` where every
    /// coordinate comes back exactly from it ([`Axis::index_of`]), else
    /// as f32; a grid that is not [`Axis::is_valid`] is not used.
    pub fn pack(points: &[[f32; 3]], grids: [Option<Axis>; 3]) -> Vertices {
        let mut axes = grids.map(|g| {
            g.filter(|g| g.on_grid() && g.is_valid())
                .unwrap_or(Axis::F32)
        });
        // records written as if every grid holds; an axis with a
        // coordinate off its grid is then kept in f32 and the records
        // written again (each round drops a grid, so at most four)
        loop {
            let layout = layout_of(&axes);
            let stride = usize::from(layout[3]);
            let mut data = vec![0u8; points.len() * stride];
            // a mask of the axes with a coordinate off the grid
            let fill = |(points, data): (&[[f32; 3]], &mut [u8])| {
                let mut off = 0u8;
                for (p, rec) in points.iter().zip(data.chunks_exact_mut(stride)) {
                    for k in 0..3 {
                        let at = usize::from(layout[k]);
                        if !axes[k].on_grid() {
                            rec[at..at + 4].copy_from_slice(&p[k].to_le_bytes());
                        } else if let Some(q) = axes[k].index_of(p[k]) {
                            rec[at..at + 2].copy_from_slice(&q.to_le_bytes());
                        } else {
                            off |= 1 << k;
                        }
                    }
                }
                off
            };
            // a pure function of each chunk: the same at any thread count
            let off = if points.len() >= PARALLEL_VERTICES {
                points
                    .par_chunks(PARALLEL_VERTICES)
                    .zip(data.par_chunks_mut(PARALLEL_VERTICES * stride))
                    .map(fill)
                    .reduce(|| 0, |a, b| a | b)
            } else {
                fill((points, &mut data))
            };
            if off == 0 {
                return Vertices { axes, layout, data };
            }
            for (k, a) in axes.iter_mut().enumerate() {
                if off >> k & 1 != 0 {
                    *a = Axis::F32;
                }
            }
        }
    }

    /// Bytes per vertex.
    pub fn stride(&self) -> usize {
        usize::from(self.layout[3]).max(1)
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.data.len() / self.stride()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Vertex `i` (panics past the end).
    pub fn get(&self, i: u32) -> [f32; 3] {
        let s = self.stride();
        let at = i as usize * s;
        decode(self.axes, self.layout, &self.data[at..at + s])
    }

    /// Every vertex, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = [f32; 3]> + '_ {
        self.data
            .chunks_exact(self.stride())
            .map(|rec| decode(self.axes, self.layout, rec))
    }
}

impl ArchivedVertices {
    /// The axes, native.
    #[inline(always)]
    pub fn axes(&self) -> [Axis; 3] {
        [self.axes[0].get(), self.axes[1].get(), self.axes[2].get()]
    }

    /// Bytes per vertex (as stored; verification checks it is
    /// [`layout_of`] the axes).
    #[inline(always)]
    pub fn stride(&self) -> usize {
        usize::from(self.layout[3]).max(1)
    }

    /// Number of vertices.
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len() / self.stride()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Vertex `i` (panics past the end).
    #[inline(always)]
    pub fn get(&self, i: u32) -> [f32; 3] {
        // A verified layout is the one of its mix of grid and f32 axes
        // (`layout_of`), so the mix names its record size and offsets:
        // one bounds check a vertex and no branch an axis. On
        // sauer_pandora's rays a leaf's corners (decoded, then sheared)
        // took 88 instructions each through the general decoder.
        let a = &self.axes;
        let grid = grid_mask([a[0].on_grid(), a[1].on_grid(), a[2].on_grid()]);
        macro_rules! fixed {
            ($($g:literal)*) => {
                match grid {
                    $($g => decode_fixed::<$g, { layout_for_grid($g)[3] as usize }>(&self.axes, &self.data, i),)*
                    _ => decode_fixed::<7, { layout_for_grid(7)[3] as usize }>(&self.axes, &self.data, i),
                }
            };
        }
        fixed!(0 1 2 3 4 5 6)
    }

    /// A leaf's corners `q = [a, b, c, d]` (each panics past the end),
    /// the same values as [`ArchivedVertices::get`] of each; where `four`
    /// is false `d` is not read and `c` fills its slot. The mix of grid
    /// and f32 axes is matched once for the leaf, not once a corner (on
    /// sauer_pandora's closest rays 2,548 → 2,323 instructions a ray,
    /// counted by callgrind; the time within noise).
    #[inline(always)]
    pub fn get_corners(&self, q: [u32; 4], four: bool) -> [[f32; 3]; 4] {
        #[inline(always)]
        fn each<const G: u8, const S: usize>(
            axes: &[ArchivedAxis; 3],
            data: &[u8],
            q: [u32; 4],
            four: bool,
        ) -> [[f32; 3]; 4] {
            let c = decode_fixed::<G, S>(axes, data, q[2]);
            [
                decode_fixed::<G, S>(axes, data, q[0]),
                decode_fixed::<G, S>(axes, data, q[1]),
                c,
                if four {
                    decode_fixed::<G, S>(axes, data, q[3])
                } else {
                    c
                },
            ]
        }
        let a = &self.axes;
        let grid = grid_mask([a[0].on_grid(), a[1].on_grid(), a[2].on_grid()]);
        macro_rules! fixed {
            ($($g:literal)*) => {
                match grid {
                    $($g => each::<$g, { layout_for_grid($g)[3] as usize }>(&self.axes, &self.data, q, four),)*
                    _ => each::<7, { layout_for_grid(7)[3] as usize }>(&self.axes, &self.data, q, four),
                }
            };
        }
        fixed!(0 1 2 3 4 5 6)
    }

    /// The stored bytes of vertex `i` (`None` past the end): what a
    /// reader about to decode it may ask the CPU to load early.
    #[inline(always)]
    pub fn record(&self, i: u32) -> Option<&[u8]> {
        let s = usize::from(self.layout[3]);
        let at = (i as usize).checked_mul(s)?;
        self.data.get(at..at.checked_add(s)?)
    }

    /// Every vertex, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = [f32; 3]> + '_ {
        let (axes, layout) = (self.axes(), self.layout);
        self.data
            .chunks_exact(self.stride())
            .map(move |rec| decode(axes, layout, rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Vertices) -> Vec<[f32; 3]> {
        let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(v).unwrap();
        let a = rkyv::access::<ArchivedVertices, rkyv::rancor::Error>(&bytes).unwrap();
        assert_eq!(a.len(), v.len());
        let got: Vec<[f32; 3]> = (0..a.len() as u32).map(|i| a.get(i)).collect();
        assert_eq!(bits(&got), bits(&a.iter().collect::<Vec<_>>()));
        // a leaf's corners, matched once for all four, are each vertex's
        let n = a.len() as u32;
        for i in 0..n.saturating_sub(3) {
            let q = [i + 3, (i * 7) % n, i, i + 1];
            for four in [true, false] {
                let c = a.get_corners(q, four);
                let d = if four { q[3] } else { q[2] };
                let one = [q[0], q[1], q[2], d].map(|k| a.get(k));
                assert_eq!(bits(&c), bits(&one), "{q:?} {four}");
            }
        }
        got
    }

    /// The grids `(origin, step)` offered for the axes whose bit is set
    /// in `mask`.
    fn grids_for(mask: u8, grids: [(f32, f32); 3]) -> [Option<Axis>; 3] {
        std::array::from_fn(|k| {
            let (origin, step) = grids[k];
            (mask >> k & 1 != 0).then_some(Axis { origin, step })
        })
    }

    fn bits(p: &[[f32; 3]]) -> Vec<[u32; 3]> {
        p.iter().map(|v| v.map(f32::to_bits)).collect()
    }

    /// Grid axes, f32 axes and every mix come back bit for bit, in the
    /// record size the layout promises.
    #[test]
    fn every_mix_of_axes_comes_back_exactly() {
        let points: Vec<[f32; 3]> = (0..500u32)
            .map(|i| {
                [
                    (i % 37) as f32 * 0.25 - 3.0,
                    (i as f32 * 0.7311).sin() * 40.0,
                    (i / 37) as f32 + 1000.0,
                ]
            })
            .collect();
        let grids = [(-3.0, 0.25), (-40.0, 0.001), (1000.0, 1.0)];
        for mask in 0..8u8 {
            let v = Vertices::pack(&points, grids_for(mask, grids));
            // y's values are not on its grid: always f32
            assert!(!v.axes[1].on_grid());
            let gridded = u32::from(v.axes[0].on_grid()) + u32::from(v.axes[2].on_grid());
            assert_eq!(gridded, u32::from((mask & 1) + (mask >> 2 & 1)), "{mask}");
            assert_eq!(v.stride(), 12 - 2 * gridded as usize);
            assert_eq!(v.data.len(), points.len() * v.stride());
            assert_eq!(bits(&v.iter().collect::<Vec<_>>()), bits(&points));
            assert_eq!(bits(&round_trip(&v)), bits(&points));
        }
    }

    /// The archive's reader decodes each of the eight mixes of grid and
    /// f32 axes through its own fixed layout (each mix's layout the one
    /// the module documents), bit for bit, every vertex of a list.
    #[test]
    fn the_reader_decodes_every_mix_through_its_fixed_layout() {
        let points: Vec<[f32; 3]> = (0..300u32)
            .map(|i| {
                [
                    (i % 17) as f32 * 0.5 - 3.0,
                    (i % 5) as f32 * 0.125 + 7.0,
                    (i / 17) as f32 * 2.0 + 1000.0,
                ]
            })
            .collect();
        let grids = [(-3.0, 0.5), (7.0, 0.125), (1000.0, 2.0)];
        for mask in 0..8u8 {
            let v = Vertices::pack(&points, grids_for(mask, grids));
            let on: [bool; 3] = std::array::from_fn(|k| v.axes[k].on_grid());
            assert_eq!(on, std::array::from_fn(|k| mask >> k & 1 != 0), "{mask}");
            // the module's layout: f32 axes first, then grid axes, each in
            // axis order
            let want: [[u8; 4]; 8] = [
                [0, 4, 8, 12],
                [8, 0, 4, 10],
                [0, 8, 4, 10],
                [4, 6, 0, 8],
                [0, 4, 8, 10],
                [4, 0, 6, 8],
                [0, 4, 6, 8],
                [0, 2, 4, 6],
            ];
            assert_eq!(v.layout, want[usize::from(mask)], "{mask}");
            // every vertex through `get` (the fixed layouts), the last
            // one included
            assert_eq!(bits(&round_trip(&v)), bits(&points), "{mask}");
        }
    }

    /// A single coordinate off the grid, outside its range, or a signed
    /// zero the grid gives back unsigned keeps the axis in f32.
    #[test]
    fn one_coordinate_off_the_grid_keeps_the_axis_in_f32() {
        let grid = Axis {
            origin: 0.0,
            step: 0.5,
        };
        let on: Vec<[f32; 3]> = (0..100).map(|i| [i as f32 * 0.5, 0.0, 0.0]).collect();
        assert!(Vertices::pack(&on, [Some(grid), None, None]).axes[0].on_grid());
        for bad in [
            0.25f32,
            -0.5,
            f32::from_bits(3.0f32.to_bits() + 1),
            0.5 * 65536.0,
            -0.0,
            f32::NAN,
        ] {
            let mut p = on.clone();
            p[57][0] = bad;
            let v = Vertices::pack(&p, [Some(grid), None, None]);
            assert!(!v.axes[0].on_grid(), "{bad}");
            assert_eq!(bits(&round_trip(&v)), bits(&p));
        }
        // a large list, packed in parallel chunks: one coordinate off the
        // grid in a late chunk drops that axis only
        let big: Vec<[f32; 3]> = (0..100_000u32)
            .map(|i| [(i % 1000) as f32 * 0.5, (i / 1000) as f32, 7.0])
            .collect();
        let grids = [
            Some(grid),
            Some(Axis {
                origin: 0.0,
                step: 1.0,
            }),
            Some(Axis {
                origin: 7.0,
                step: 1.0,
            }),
        ];
        let v = Vertices::pack(&big, grids);
        assert_eq!(v.stride(), 6);
        let mut off = big.clone();
        off[99_001][1] = 1.5;
        let v = Vertices::pack(&off, grids);
        assert!(v.axes[0].on_grid() && !v.axes[1].on_grid() && v.axes[2].on_grid());
        assert_eq!(bits(&round_trip(&v)), bits(&off));
        // the grid's last index is still on it
        let mut p = on.clone();
        p[3][0] = grid.value(u16::MAX);
        assert!(Vertices::pack(&p, [Some(grid), None, None]).axes[0].on_grid());
    }

    #[test]
    fn the_default_is_empty_with_a_valid_layout() {
        let v = Vertices::default();
        assert!(v.is_empty() && v.iter().next().is_none());
        assert_eq!(v.layout, layout_of(&v.axes));
        assert_eq!(v.stride(), 12);
    }

    #[test]
    fn grids_that_could_decode_to_non_finite_values_are_invalid() {
        assert!(Axis::F32.is_valid());
        for bad in [
            Axis {
                origin: 0.0,
                step: -1.0,
            },
            Axis {
                origin: f32::NAN,
                step: 1.0,
            },
            Axis {
                origin: 0.0,
                step: f32::INFINITY,
            },
            Axis {
                origin: f32::MAX,
                step: f32::MAX / 1000.0,
            },
            Axis {
                origin: -0.0,
                step: 0.0,
            },
        ] {
            assert!(!bad.is_valid(), "{bad:?}");
        }
        assert!(
            Axis {
                origin: -1e30,
                step: 1e25
            }
            .is_valid()
        );
    }
}
