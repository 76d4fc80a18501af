//! Placements: how an instance's transform is stored, and the 3×4 matrices
//! every reader derives from it.
//!
//! Most placements are **similarities** (rotation, uniform scale,
//! translation). They are stored as a translation and one quaternion `q`
//! whose squared length is the scale: the rotation `v ↦ q v q*` of a
//! quaternion of squared length `s` scales by `s` as it turns, so the 3×3
//! part of `world_from_local` is a quadratic form in `q`'s components, with
//! no square root or division (Shoemake, "Animating rotation with
//! quaternion curves", SIGGRAPH 1985, gives the unit form). That is 28
//! bytes where two f32 matrices took 96. Everything else — shear,
//! non-uniform scale, mirroring, and a similarity scaled or moved past
//! [`SIMILARITY_RANGE`] — keeps both f32 matrices in
//! [`crate::level::Level::affines`].
//!
//! Readers never use `q` directly: they take [`similarity_rows`], computed
//! in f64 from the stored f32 values and rounded once, so the runtime, the
//! verifier, the exporter and the tests' oracles all see the same f32
//! matrices. The baker stores a similarity only when those matrices
//! reproduce its f64 transform to a few f32 ulps of the scale
//! ([`similarity_from_rows`]); anything less exact goes to the affine table.

/// Row-major 3×4 matrices of one placement: `p' = M[..3] · p + M[3]` per
/// row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rows {
    /// Local (collider) space to world space.
    pub world_from_local: [f32; 12],
    /// World space to local space.
    pub local_from_world: [f32; 12],
}

/// A similarity's stored form: the quaternion `(x, y, z, w)` whose squared
/// length is the scale, and the translation.
pub type Similarity = ([f32; 4], [f32; 3]);

/// The world-from-local 3×4 rows of `q` (squared length = scale) and `t`,
/// in f64, unrounded.
pub fn similarity_world64(q: [f32; 4], t: [f32; 3]) -> [f64; 12] {
    let [x, y, z, w] = q.map(f64::from);
    let t = t.map(f64::from);
    [
        w * w + x * x - y * y - z * z,
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        t[0],
        2.0 * (x * y + w * z),
        w * w - x * x + y * y - z * z,
        2.0 * (y * z - w * x),
        t[1],
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        w * w - x * x - y * y + z * z,
        t[2],
    ]
}

/// Both matrices of the similarity stored as `q` (squared length = the
/// scale `s`) and translation `t`: world-from-local is `s·R | t`, and
/// local-from-world its exact inverse `Rᵀ/s | −Rᵀt/s`, each computed in f64
/// and rounded to f32 once. The identity (`q = (0, 0, 0, 1)`, `t = 0`)
/// gives the identity exactly.
pub fn similarity_rows(q: [f32; 4], t: [f32; 3]) -> Rows {
    if let Some(r) = translation_rows(q, t) {
        return r;
    }
    // the world matrix once, for both (it was computed twice)
    let m = similarity_world64(q, t);
    Rows {
        world_from_local: m.map(|v| v as f32),
        local_from_world: local_from(q, t, &m),
    }
}

/// The world-from-local matrix of [`similarity_rows`] alone (what a
/// convex collider's exact tests need), the same f32 values.
#[inline]
pub fn similarity_world(q: [f32; 4], t: [f32; 3]) -> [f32; 12] {
    if let Some(r) = translation_rows(q, t) {
        return r.world_from_local;
    }
    similarity_world64(q, t).map(|v| v as f32)
}

/// The first two columns of [`similarity_world`] (the same f32 values):
/// the first's length is the similarity's scale as its world matrix gives
/// it, the second is where the local y axis goes. All a sphere or a
/// capsule (along y) needs besides its centre `t`. The entries are
/// [`similarity_world64`]'s written out (a test checks them bit for bit):
/// taken from that whole matrix, a sphere's point and ray queries ran
/// 6–10% slower (measured).
#[inline]
pub fn similarity_first_columns(q: [f32; 4]) -> [[f32; 3]; 2] {
    let [x, y, z, w] = q.map(f64::from);
    [
        [
            (w * w + x * x - y * y - z * z) as f32,
            (2.0 * (x * y + w * z)) as f32,
            (2.0 * (x * z - w * y)) as f32,
        ],
        [
            (2.0 * (x * y - w * z)) as f32,
            (w * w - x * x + y * y - z * z) as f32,
            (2.0 * (y * z + w * x)) as f32,
        ],
    ]
}

/// The local-from-world matrix of [`similarity_rows`] alone (what a ray
/// needs), the same f32 values.
#[inline]
pub fn similarity_local(q: [f32; 4], t: [f32; 3]) -> [f32; 12] {
    if let Some(r) = translation_rows(q, t) {
        return r.local_from_world;
    }
    local_from(q, t, &similarity_world64(q, t))
}

/// [`similarity_rows`] of a placement that only moves (`q = (0, 0, 0, 1)`,
/// `t` finite), without the f64 arithmetic: every prop placed unturned and
/// every level mesh has one, and a ray answer asked for it twice (its walk
/// and its world normal): the city's rays 4–6% faster with it. The values
/// are the general path's bit for bit: with `q` the identity, `s·R` is the
/// identity with +0 off the diagonal, `1/s² = 1`, and each row's
/// translation `−(1·tᵣ + 0·tₐ + 0·t_b)` is exact in f32 as in f64, signed
/// zeros included (a test compares the two over such values).
///
/// Public, and always inlined, so that a reader that takes this path
/// itself gets the rows' known ones and zeros folded into its own
/// arithmetic (a ray moved into local space, say), with the same values.
#[inline(always)]
pub fn translation_rows(q: [f32; 4], t: [f32; 3]) -> Option<Rows> {
    // bits, not values: a −0 in `q` puts −0 off the general path's diagonal
    if q.map(f32::to_bits) != [0, 0, 0, 1.0f32.to_bits()] || !t.iter().all(|v| v.is_finite()) {
        return None;
    }
    let back = |r: usize| {
        let u = |c: usize| if c == r { 1.0 } else { 0.0 };
        -(u(0) * t[0] + u(1) * t[1] + u(2) * t[2])
    };
    Some(Rows {
        world_from_local: [1., 0., 0., t[0], 0., 1., 0., t[1], 0., 0., 1., t[2]],
        local_from_world: [
            1.,
            0.,
            0.,
            back(0),
            0.,
            1.,
            0.,
            back(1),
            0.,
            0.,
            1.,
            back(2),
        ],
    })
}

/// The local-from-world matrix of the similarity `(q, t)` whose f64 world
/// matrix is `m`.
#[inline]
fn local_from(q: [f32; 4], t: [f32; 3], m: &[f64; 12]) -> [f32; 12] {
    let [x, y, z, w] = q.map(f64::from);
    let n = x * x + y * y + z * z + w * w;
    let inv = 1.0 / (n * n);
    let t = t.map(f64::from);
    let mut local = [0.0f32; 12];
    for r in 0..3 {
        // row r of Rᵀ/s = column r of s·R, divided by s²
        let row = [m[r] * inv, m[4 + r] * inv, m[8 + r] * inv];
        for c in 0..3 {
            local[4 * r + c] = row[c] as f32;
        }
        local[4 * r + 3] = -(row[0] * t[0] + row[1] * t[1] + row[2] * t[2]) as f32;
    }
    local
}

/// Largest scale and translation a stored similarity may have (2⁴⁰), and
/// the smallest scale (2⁻⁴⁰): inside these both of its matrices are finite
/// and the inverse loses nothing to overflow. A placement outside them is
/// stored in the affine table instead.
pub const SIMILARITY_RANGE: f32 = (1u64 << 40) as f32;

/// Whether the stored form `(q, t)` lies inside [`SIMILARITY_RANGE`]: its
/// scale (`q`'s squared length, summed in f64) in `[2⁻⁴⁰, 2⁴⁰]` and every
/// translation component at most 2⁴⁰ in size. NaN is never in range. The
/// archive verifier and the baker's choice of stored form share this rule.
pub fn similarity_in_range(q: [f32; 4], t: [f32; 3]) -> bool {
    let scale = q.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>();
    let range = f64::from(SIMILARITY_RANGE);
    (1.0 / range..=range).contains(&scale) && t.iter().all(|v| v.abs() <= SIMILARITY_RANGE)
}

/// How far (in units of the scale) a stored similarity may move any entry
/// of the 3×3 part from the transform it was made from: 4 f32 ulps, so a
/// shape 1 km across moves by at most 0.24 mm at its far end.
pub const SIMILARITY_TOLERANCE: f64 = 1.0 / (1u64 << 22) as f64;

/// The stored form `(q, t)` of a row-major 3×4 f64 transform, if it is a
/// proper similarity (no mirroring) whose stored form reproduces it to
/// [`SIMILARITY_TOLERANCE`] of its scale; `None` sends it to the affine
/// table. The rotation is read from the matrix by Shepperd's method
/// ("Quaternion from rotation matrix", J. Guidance and Control, 1978).
/// A similarity outside [`SIMILARITY_RANGE`] (scaled or moved past 2⁴⁰) is
/// also `None`: the archive accepts it only as an affine placement.
pub fn similarity_from_rows(m: &[f64; 12]) -> Option<Similarity> {
    if !m.iter().all(|v| v.is_finite()) {
        return None;
    }
    let a = |r: usize, c: usize| m[4 * r + c];
    let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
        - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
        + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
    if det.is_nan() || det <= 0.0 {
        return None;
    }
    let s = det.cbrt();
    let r = |i: usize, j: usize| a(i, j) / s;
    let trace = r(0, 0) + r(1, 1) + r(2, 2);
    // the largest of 4w², 4x², 4y², 4z² decides which one to take a root of
    let (x, y, z, w);
    if trace >= r(0, 0).max(r(1, 1)).max(r(2, 2)) {
        let k = (1.0 + trace).max(0.0).sqrt() * 2.0; // 4w
        w = 0.25 * k;
        x = (r(2, 1) - r(1, 2)) / k;
        y = (r(0, 2) - r(2, 0)) / k;
        z = (r(1, 0) - r(0, 1)) / k;
    } else if r(0, 0) >= r(1, 1) && r(0, 0) >= r(2, 2) {
        let k = (1.0 + r(0, 0) - r(1, 1) - r(2, 2)).max(0.0).sqrt() * 2.0; // 4x
        x = 0.25 * k;
        w = (r(2, 1) - r(1, 2)) / k;
        y = (r(0, 1) + r(1, 0)) / k;
        z = (r(0, 2) + r(2, 0)) / k;
    } else if r(1, 1) >= r(2, 2) {
        let k = (1.0 + r(1, 1) - r(0, 0) - r(2, 2)).max(0.0).sqrt() * 2.0; // 4y
        y = 0.25 * k;
        w = (r(0, 2) - r(2, 0)) / k;
        x = (r(0, 1) + r(1, 0)) / k;
        z = (r(1, 2) + r(2, 1)) / k;
    } else {
        let k = (1.0 + r(2, 2) - r(0, 0) - r(1, 1)).max(0.0).sqrt() * 2.0; // 4z
        z = 0.25 * k;
        w = (r(1, 0) - r(0, 1)) / k;
        x = (r(0, 2) + r(2, 0)) / k;
        y = (r(1, 2) + r(2, 1)) / k;
    }
    let len = (x * x + y * y + z * z + w * w).sqrt();
    if len.is_nan() || len <= 0.0 {
        return None;
    }
    // unit quaternion scaled so its squared length is s
    let f = s.sqrt() / len;
    let q = [x * f, y * f, z * f, w * f].map(|v| v as f32);
    let t = [m[3], m[7], m[11]].map(|v| v as f32);
    if !similarity_in_range(q, t) {
        return None;
    }
    let back = similarity_world64(q, t);
    let tol = SIMILARITY_TOLERANCE * s;
    let close = (0..3).all(|r| (0..3).all(|c| (back[4 * r + c] - a(r, c)).abs() <= tol));
    close.then_some((q, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    /// Row-major 3×4 of `s · R(axis, angle)` with translation `t`.
    fn turned(axis: [f64; 3], angle: f64, s: f64, t: [f64; 3]) -> [f64; 12] {
        let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        let [x, y, z] = axis.map(|v| v / n);
        let (si, co) = angle.sin_cos();
        let c1 = 1.0 - co;
        [
            s * (co + x * x * c1),
            s * (x * y * c1 - z * si),
            s * (x * z * c1 + y * si),
            t[0],
            s * (y * x * c1 + z * si),
            s * (co + y * y * c1),
            s * (y * z * c1 - x * si),
            t[1],
            s * (z * x * c1 - y * si),
            s * (z * y * c1 + x * si),
            s * (co + z * z * c1),
            t[2],
        ]
    }

    #[test]
    fn the_identity_is_exact() {
        let r = similarity_rows([0.0, 0.0, 0.0, 1.0], [0.0; 3]);
        let id = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
        assert_eq!(r.world_from_local, id);
        assert_eq!(r.local_from_world, id);
        let m = id.map(f64::from);
        assert_eq!(
            similarity_from_rows(&m),
            Some(([0.0, 0.0, 0.0, 1.0], [0.0; 3]))
        );
    }

    #[test]
    fn a_translation_takes_the_short_path_to_the_same_bits() {
        let values = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -1e-45,
            0.1,
            -3000.25,
            1e30,
            -f32::MAX,
            f32::MAX,
        ];
        let mut cases = 0;
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    let (q, t) = ([0.0, 0.0, 0.0, 1.0], [a, b, c]);
                    let fast = translation_rows(q, t).expect("a translation");
                    let m = similarity_world64(q, t);
                    let slow = Rows {
                        world_from_local: m.map(|v| v as f32),
                        local_from_world: local_from(q, t, &m),
                    };
                    let bits = |r: &Rows| {
                        (
                            r.world_from_local.map(f32::to_bits),
                            r.local_from_world.map(f32::to_bits),
                        )
                    };
                    assert_eq!(bits(&fast), bits(&slow), "{t:?}");
                    assert_eq!(similarity_local(q, t), slow.local_from_world);
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, values.len().pow(3));
        // anything else takes the general path
        assert!(translation_rows([0.0, 0.0, 0.0, 2.0], [0.0; 3]).is_none());
        assert!(translation_rows([0.0, 0.0, 1e-30, 1.0], [0.0; 3]).is_none());
        assert!(translation_rows([-0.0, 0.0, 0.0, 1.0], [0.0; 3]).is_none());
        assert!(translation_rows([0.0, 0.0, 0.0, 1.0], [f32::INFINITY, 0.0, 0.0]).is_none());
    }

    #[test]
    fn similarities_round_trip_within_the_tolerance_and_invert() {
        // every branch of Shepperd's method: angles near 0, π/2 and π
        // about each axis and skew axes, scales from 1e-3 to 1e3
        let mut stored = 0;
        let mut cases = 0;
        for axis in [
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 2.0, -3.0],
            [-0.3, 0.1, 0.9],
        ] {
            for angle in [0.0, 1e-7, 0.4, FRAC_PI_2, 3.0, PI, PI - 1e-7, -2.2] {
                for s in [1e-3, 0.8, 1.0, 1.2, 1e3] {
                    cases += 1;
                    let t = [12.5, -3000.25, 7.0];
                    let m = turned(axis, angle, s, t);
                    let Some((q, tt)) = similarity_from_rows(&m) else {
                        continue;
                    };
                    stored += 1;
                    let r = similarity_rows(q, tt);
                    // each matrix alone is the pair's, bit for bit
                    let bits = |m: [f32; 12]| m.map(f32::to_bits);
                    assert_eq!(bits(similarity_world(q, tt)), bits(r.world_from_local));
                    let columns = similarity_first_columns(q).map(|c| c.map(f32::to_bits));
                    let w = r.world_from_local.map(f32::to_bits);
                    assert_eq!(columns, [[w[0], w[4], w[8]], [w[1], w[5], w[9]]]);
                    assert_eq!(bits(similarity_local(q, tt)), bits(r.local_from_world));
                    for k in [0, 1, 2, 4, 5, 6, 8, 9, 10] {
                        let d = (f64::from(r.world_from_local[k]) - m[k]).abs();
                        assert!(
                            d <= 1.2 * SIMILARITY_TOLERANCE * s,
                            "{axis:?} {angle} {s}: {d}"
                        );
                    }
                    // local ∘ world is the identity to f32 rounding
                    let p = [0.7f64, -1.3, 2.9];
                    let w = r.world_from_local.map(f64::from);
                    let l = r.local_from_world.map(f64::from);
                    let apply = |m: &[f64; 12], p: [f64; 3]| {
                        std::array::from_fn::<f64, 3, _>(|i| {
                            m[4 * i] * p[0]
                                + m[4 * i + 1] * p[1]
                                + m[4 * i + 2] * p[2]
                                + m[4 * i + 3]
                        })
                    };
                    let back = apply(&l, apply(&w, p));
                    for i in 0..3 {
                        let tol = 1e-6 * (1.0 + 3000.0 / s);
                        assert!(
                            (back[i] - p[i]).abs() <= tol,
                            "{axis:?} {angle} {s}: {back:?}"
                        );
                    }
                }
            }
        }
        // nearly all of them fit in the compact form
        assert!(stored * 10 >= cases * 9, "{stored} of {cases}");
    }

    #[test]
    fn shear_mirrors_and_non_uniform_scale_are_refused() {
        let mut m = turned([1.0, 2.0, 3.0], 0.7, 1.0, [1.0, 2.0, 3.0]);
        let mirrored = {
            let mut n = m;
            for k in [0, 4, 8] {
                n[k] = -n[k];
            }
            n
        };
        assert_eq!(similarity_from_rows(&mirrored), None);
        m[0] *= 1.001; // stretched along one local axis
        assert_eq!(similarity_from_rows(&m), None);
        let mut sheared = turned([0.0, 1.0, 0.0], 0.3, 2.0, [0.0; 3]);
        sheared[1] += 1e-4;
        assert_eq!(similarity_from_rows(&sheared), None);
        let mut nan = turned([0.0, 1.0, 0.0], 0.3, 2.0, [0.0; 3]);
        nan[3] = f64::NAN;
        assert_eq!(similarity_from_rows(&nan), None);
        assert_eq!(similarity_from_rows(&[0.0; 12]), None);
    }

    #[test]
    fn similarities_past_the_range_go_to_the_affine_table() {
        let edge = f64::from(SIMILARITY_RANGE);
        for (s, t, stored) in [
            (1.0, edge, true),
            (1.0, -edge, true),
            (1.0, 2.0 * edge, false),
            (1.0, -1e30, false),
            (edge * 0.5, 0.0, true),
            (edge * 2.0, 0.0, false),
            (2.0 / edge, 0.0, true),
            (0.5 / edge, 0.0, false),
        ] {
            let m = turned([0.2, 1.0, -0.4], 0.9, s, [3.0, t, 1.0]);
            let got = similarity_from_rows(&m);
            assert_eq!(got.is_some(), stored, "scale {s}, translation {t}");
            if let Some((q, t)) = got {
                assert!(similarity_in_range(q, t));
            }
        }
        assert!(!similarity_in_range([f32::NAN, 0.0, 0.0, 1.0], [0.0; 3]));
        assert!(!similarity_in_range(
            [0.0, 0.0, 0.0, 1.0],
            [f32::NAN, 0.0, 0.0]
        ));
    }
}
