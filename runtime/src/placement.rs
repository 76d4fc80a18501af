//! Placement: how an instance puts its shape into the world.
//!
//! Every reader takes an instance's placement as two f32 3×4 row
//! matrices, `world_from_local` and `local_from_world`
//! ([`ArchivedLevel::rows`]: computed from a similarity's quaternion, or
//! read from the level's affine table). Rays and culling use them as they
//! are (a ray's `t` is the same in both spaces because the map is affine). Exact sphere tests use
//! [`Placement`]: `world_from_local` in f64, and whether the map is a
//! similarity (rotation, uniform scale, translation), computed once per
//! instance and query.

use glam::{DVec3, Vec3};
use kiln_formats::level::{ArchivedInstance, ArchivedLevel};

/// A 3×4 row-major matrix.
pub(crate) type Mat3x4 = [f32; 12];

/// `M · p` (point: rotation, scale and translation).
#[inline]
pub(crate) fn transform_point(m: &Mat3x4, p: Vec3) -> Vec3 {
    let r = |k: usize| m[k] * p.x + m[k + 1] * p.y + m[k + 2] * p.z + m[k + 3];
    Vec3::new(r(0), r(4), r(8))
}

/// `M · d` (vector: no translation).
#[inline]
pub(crate) fn transform_vector(m: &Mat3x4, d: Vec3) -> Vec3 {
    let r = |k: usize| m[k] * d.x + m[k + 1] * d.y + m[k + 2] * d.z;
    Vec3::new(r(0), r(4), r(8))
}

/// `Mᵀ · n` for the 3×3 part of `M`: with `M = local_from_world` this takes
/// a local normal to world space (the inverse transpose of
/// `world_from_local`), which also flips it under a mirroring transform,
/// as glTF's winding rule asks.
#[inline]
pub(crate) fn transpose_vector(m: &Mat3x4, n: Vec3) -> Vec3 {
    let c = |k: usize| m[k] * n.x + m[k + 4] * n.y + m[k + 8] * n.z;
    Vec3::new(c(0), c(1), c(2))
}

/// The identity as a 3×4 row-major matrix.
const ID: [f64; 12] = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];

/// World-from-local in f64 alone (`None` for the identity): all a convex
/// piece (a box, a polytope, a sphere's centre, a capsule's segment) is
/// placed by, without [`Placement`]'s f32 inverse.
#[derive(Clone, Copy)]
pub(crate) struct Frame(Option<[f64; 12]>);

impl Frame {
    /// The frame of an f32 world-from-local matrix.
    #[inline]
    pub fn of(world_from_local: &Mat3x4) -> Frame {
        let m: [f64; 12] = world_from_local.map(f64::from);
        Frame((m != ID).then_some(m))
    }

    /// World-from-local in f64.
    #[inline]
    pub fn world_matrix(&self) -> [f64; 12] {
        self.0.unwrap_or(ID)
    }

    /// Local-from-world in f64 (the exact inverse of [`Self::world_matrix`]
    /// up to f64 rounding), computed on each call.
    #[inline]
    pub fn local_matrix(&self) -> [f64; 12] {
        invert(&self.world_matrix())
    }

    /// A local point in world space, f64 (the identity costs nothing).
    #[inline]
    pub fn world_point64(&self, p: DVec3) -> DVec3 {
        self.0.as_ref().map_or(p, |m| apply(m, p, 1.0))
    }

    /// A local vector in world space, f64.
    #[inline]
    pub fn world_vector64(&self, d: DVec3) -> DVec3 {
        self.0.as_ref().map_or(d, |m| apply(m, d, 0.0))
    }

    /// World length of a unit local length along the first axis (the
    /// scale of a similarity placement).
    #[inline]
    pub fn world_scale(&self) -> f64 {
        self.world_vector64(DVec3::X).length()
    }
}

/// An instance prepared for exact world-space tests.
pub(crate) struct Placement {
    /// The instance's placement as f32 matrices.
    pub rows: kiln_formats::placement::Rows,
    /// World-from-local in f64.
    frame: Frame,
    /// The scale of `local_from_world` if it is a similarity (computed on
    /// first use: point and ray queries on most shapes never ask).
    similarity: std::cell::OnceCell<Option<f32>>,
    /// Local-from-world in f64: the inverse of the f64 `frame`, so points
    /// taken to local space and back agree to f64 rounding (computed on
    /// first use).
    local: std::cell::OnceCell<[f64; 12]>,
    /// Whether the placement is stored as a similarity (a quaternion),
    /// whose two f32 matrices are rounded from one exact pair.
    stored_similarity: bool,
}

impl Placement {
    /// Prepares `inst`.
    // inlined so the 312-byte result is built where the caller keeps it:
    // called, it was built aside and copied (a `memcpy` per candidate
    // object, 6-9% of a solid-family query)
    #[inline]
    pub fn new(level: &ArchivedLevel, inst: &ArchivedInstance) -> Self {
        let similar = inst.rotation.iter().any(|v| v.to_native() != 0.0);
        Placement::from_rows(level.rows(inst), similar)
    }

    /// Prepares a placement given by its two f32 matrices; `similarity`
    /// says whether they were rounded from one exact f64 pair of a
    /// similarity and its inverse (what [`Self::local_point_bounded`]'s
    /// bound rests on).
    #[inline]
    pub fn from_rows(rows: kiln_formats::placement::Rows, similarity: bool) -> Self {
        let frame = Frame::of(&rows.world_from_local);
        Placement {
            rows,
            // the identity needs no test (most instances of flattened levels)
            similarity: match frame.0 {
                None => std::cell::OnceCell::from(Some(1.0)),
                Some(_) => std::cell::OnceCell::new(),
            },
            frame,
            local: std::cell::OnceCell::new(),
            stored_similarity: similarity,
        }
    }

    /// A world point in local space in f32, with a bound on how far each
    /// coordinate can lie from [`Self::local_point64`]'s, for a test that
    /// decides most points without the f64 inverse; `None` for a placement
    /// from the affine table, whose inverse may be ill-conditioned.
    ///
    /// The bound: both f32 matrices of a stored similarity are rounded
    /// from one exact pair (`kiln_formats::placement::similarity_rows`),
    /// so the f32 inverse and the f64 inverse of the rounded forward
    /// matrix differ by a few f32 ulps of each row (a similarity's
    /// condition number is 1), and the product adds a few ulps of its
    /// terms. The bound is `2⁻¹⁶` (256 ulps) of the terms' size: the
    /// agreement test in `collider::polytope` still passes with a 64th of it and
    /// fails with a 1000th.
    // always: the box tests that call it lost 10% to a call
    #[inline(always)]
    pub fn local_point_bounded(&self, p: Vec3) -> Option<(Vec3, Vec3)> {
        if !self.stored_similarity {
            return None;
        }
        let (l, w) = (&self.rows.local_from_world, &self.rows.world_from_local);
        let reach = p.abs() + Vec3::new(w[3], w[7], w[11]).abs();
        let size = |k: usize| {
            l[k].abs() * reach.x
                + l[k + 1].abs() * reach.y
                + l[k + 2].abs() * reach.z
                + l[k + 3].abs()
        };
        let err = Vec3::new(size(0), size(4), size(8)) * (1.0 / 65536.0);
        Some((transform_point(l, p), err))
    }

    /// The scale of a stored similarity's `local_from_world` in f32 (the
    /// length of its first row), within 1e-6 of the f64 inverse's; `None`
    /// for a placement from the affine table.
    #[inline]
    pub fn local_scale_bounded(&self) -> Option<f32> {
        let l = &self.rows.local_from_world;
        self.stored_similarity
            .then(|| Vec3::new(l[0], l[1], l[2]).length())
    }

    /// A world point in local space in f32 for culling, with a bound on
    /// its distance from [`Self::local_point64`]'s (the point the exact
    /// tests, on f64 world triangles, agree with). A stored similarity
    /// takes the f32 matrix and [`Self::local_point_bounded`]'s bound;
    /// an affine placement takes the f64 inverse, rounded. Without the
    /// bound a sphere a few kilometres from the origin, where an f32
    /// ulp is a quarter of a millimetre, was culled from a triangle it
    /// overlapped by 0.2 mm.
    #[inline]
    pub fn local_point_cull(&self, p: Vec3) -> (Vec3, f32) {
        if self.frame.0.is_none() {
            return (p, 0.0);
        }
        if let Some((lp, err)) = self.local_point_bounded(p) {
            return (lp, err.length());
        }
        let exact = self.local_point64(p.as_dvec3());
        let lp = exact.as_vec3();
        (lp, ((lp.as_dvec3() - exact).length() * 2.0) as f32)
    }

    /// World-from-local in f64.
    #[inline]
    pub fn world_matrix(&self) -> [f64; 12] {
        self.frame.world_matrix()
    }

    /// Local-from-world in f64 (the exact inverse of [`Self::world_matrix`]
    /// up to f64 rounding).
    #[inline]
    pub fn local_matrix(&self) -> [f64; 12] {
        *self.local.get_or_init(|| self.frame.local_matrix())
    }

    /// A world point in local space, f64.
    #[inline]
    pub fn local_point64(&self, p: DVec3) -> DVec3 {
        apply(&self.local_matrix(), p, 1.0)
    }

    /// A world vector in local space, f64.
    #[inline]
    pub fn local_vector64(&self, d: DVec3) -> DVec3 {
        apply(&self.local_matrix(), d, 0.0)
    }

    /// A local point in world space, f64 (the identity costs nothing).
    #[inline]
    pub fn world_point64(&self, p: DVec3) -> DVec3 {
        self.frame.world_point64(p)
    }

    /// A local vector in world space, f64.
    #[inline]
    pub fn world_vector64(&self, d: DVec3) -> DVec3 {
        self.frame.world_vector64(d)
    }

    /// World length of a unit local length along the first axis (the
    /// scale of a similarity placement).
    #[inline]
    pub fn world_scale(&self) -> f64 {
        self.frame.world_scale()
    }

    /// A world vector in local space (f32, for culling).
    #[inline]
    pub fn local_vector(&self, d: Vec3) -> Vec3 {
        transform_vector(&self.rows.local_from_world, d)
    }

    /// If world→local is a similarity, its scale: a world sphere of radius
    /// `r` is then a local sphere of radius `r·scale`.
    #[inline]
    pub fn similarity(&self) -> Option<f32> {
        *self
            .similarity
            .get_or_init(|| similarity_scale(&self.rows.local_from_world))
    }

    /// Half-extent, in local space, of the box around a world sphere of
    /// radius `r` (exact for the ellipsoid a non-uniform scale makes of
    /// it: `r·|row_i(L)|`), grown by a hair so f32 rounding of the local
    /// centre cannot cull a feature that touches.
    pub fn local_extent(&self, r: f32) -> Vec3 {
        let l = &self.rows.local_from_world;
        let row = |k: usize| Vec3::new(l[k], l[k + 1], l[k + 2]).length();
        Vec3::new(row(0), row(4), row(8)) * (r * (1.0 + 1e-5)) + Vec3::splat(1e-6 * r.max(1.0))
    }
}

/// `M · (p, w)` for a 3×4 row-major f64 matrix (`w` 1 for points, 0 for
/// vectors).
#[inline]
pub(crate) fn apply(m: &[f64; 12], p: DVec3, w: f64) -> DVec3 {
    DVec3::new(
        m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3] * w,
        m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7] * w,
        m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11] * w,
    )
}

/// The determinant of a 3×4 affine map's linear part: negative where the
/// map mirrors (turns a loop that winds counter-clockwise about a normal
/// into one that winds clockwise about the mapped normal).
#[inline]
pub(crate) fn determinant(m: &[f64; 12]) -> f64 {
    m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8])
        + m[2] * (m[4] * m[9] - m[5] * m[8])
}

/// The inverse of an invertible 3×4 affine map, in f64. Inlined: out of
/// line, it cost a point query on 300 hulls 12% and a sphere overlap on
/// 300 boxes 9% (its callers lost the inlining when the box–ball contact
/// grew a caller of its own).
#[inline]
pub(crate) fn invert(m: &[f64; 12]) -> [f64; 12] {
    let a = glam::DMat3::from_cols(
        DVec3::new(m[0], m[4], m[8]),
        DVec3::new(m[1], m[5], m[9]),
        DVec3::new(m[2], m[6], m[10]),
    );
    let inv = a.inverse();
    let t = -(inv * DVec3::new(m[3], m[7], m[11]));
    let (x, y, z) = (inv.x_axis, inv.y_axis, inv.z_axis);
    [
        x.x, y.x, z.x, t.x, //
        x.y, y.y, z.y, t.y, //
        x.z, y.z, z.z, t.z,
    ]
}

/// A world radius in a similarity frame of scale `s`, grown by a hair so
/// f32 rounding of the local centre cannot cull a feature that touches.
#[inline]
pub(crate) fn local_radius(r: f32, s: f32) -> f32 {
    r * s * (1.0 + 1e-5) + 1e-6 * r.max(1.0)
}

/// The scale of `l` if it is a similarity, to 1e-5 (the shared test,
/// `kiln_formats::level::similarity_scale`).
fn similarity_scale(l: &Mat3x4) -> Option<f32> {
    let m = l.map(f64::from);
    kiln_formats::level::similarity_scale(&m, 1e-5).map(|s| s as f32)
}
