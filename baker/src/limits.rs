//! Limits of the concave-collider pipeline that classification needs too
//! (below every step of the bake, importing none): how fine the remesher
//! may go, how far off a collider may be, and so how large an open mesh
//! can be closed at all.

/// The finest remeshing grid: 128 voxels across (meshoptimizer takes up to
/// 256, but at 200 the damaged-helmet sample took 2.2 s per attempt and
/// made 400,000 triangles; a collider is simplified to about a hundred).
pub const MAX_RESOLUTION: f64 = 128.0;

/// How many times the tolerance a concave collider may deviate before the
/// triangle mesh is kept instead (with the reason in the rule).
pub const MAX_DEVIATION: f64 = 10.0;

/// The largest open mesh (world units across) that can be remeshed into a
/// concave collider within `MAX_DEVIATION` times `max_deviation`: the
/// finest grid is [`MAX_RESOLUTION`] voxels across, so anything larger
/// would be remeshed only to be refused (63 m at the default 5 cm).
pub fn level_extent(max_deviation: f64) -> f64 {
    (MAX_RESOLUTION - 2.0) * MAX_DEVIATION * max_deviation
}
