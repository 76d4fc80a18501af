//! Convex hulls to query with, made once and reused.

use glam::{DVec3, Vec3};

/// A convex hull to query with: up to [`ConvexHull::MAX_POINTS`] points,
/// its faces and edges found once when it is made (not per query).
///
/// ```
/// use kiln_runtime::{ConvexHull, Vec3};
/// // a square pyramid: five vertices; the point inside is dropped
/// let hull = ConvexHull::new(&[
///     Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0),
///     Vec3::new(1.0, 0.0, 1.0), Vec3::new(-1.0, 0.0, 1.0),
///     Vec3::new(0.0, 1.5, 0.0), Vec3::new(0.0, 0.5, 0.0),
/// ])?;
/// assert_eq!(hull.vertices().count(), 5);
/// # Ok::<(), kiln_runtime::HullError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    pub(super) points: Vec<DVec3>,
    /// The mean of the vertices: a point inside.
    pub(super) centre: DVec3,
    pub(super) normals: Vec<DVec3>,
    /// Each face's support value along its normal.
    pub(super) offsets: Vec<f64>,
    pub(super) edges: Vec<DVec3>,
    /// Each edge's two vertices (indices into `points`) and its two
    /// faces' normals.
    pub(super) edge_faces: Vec<(u32, u32, DVec3, DVec3)>,
}

/// Why a [`ConvexHull`] could not be made.
///
/// ```
/// use kiln_runtime::{ConvexHull, HullError, Vec3};
/// let flat = [Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::ONE.with_y(0.0)];
/// assert_eq!(ConvexHull::new(&flat), Err(HullError::Flat));
/// let bad = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.0, 0.0, f32::NAN)];
/// assert_eq!(ConvexHull::new(&bad), Err(HullError::NotFinite(3)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HullError {
    /// More points than [`ConvexHull::MAX_POINTS`].
    #[error("{0} points, at most {max}", max = ConvexHull::MAX_POINTS)]
    TooManyPoints(usize),
    /// A point is NaN or infinite.
    #[error("point {0} is not finite")]
    NotFinite(usize),
    /// Fewer than four points, or all of them on a plane.
    #[error("the points are flat or fewer than four: no solid hull")]
    Flat,
}

impl ConvexHull {
    /// Most points a query hull may have.
    ///
    /// ```
    /// use kiln_runtime::{ConvexHull, HullError, Vec3};
    /// let many: Vec<Vec3> = (0..=ConvexHull::MAX_POINTS).map(|i| Vec3::splat(i as f32)).collect();
    /// assert_eq!(ConvexHull::new(&many), Err(HullError::TooManyPoints(257)));
    /// ```
    pub const MAX_POINTS: usize = 256;

    /// The hull of `points` in the shape's local frame.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{ConvexHull, Filter, Pose, QueryShape, Vec3};
    /// // a tetrahedron standing on its tip, 5 cm into the floor
    /// let tetra = ConvexHull::new(&[
    ///     Vec3::new(0.0, -0.5, 0.0), Vec3::new(-0.5, 0.5, -0.5),
    ///     Vec3::new(0.5, 0.5, -0.5), Vec3::new(0.0, 0.5, 0.5),
    /// ])?;
    /// let touched = level.overlap(&QueryShape::Hull(&tetra), &Pose::at(Vec3::new(12.0, 0.45, 5.0)), &Filter::ALL);
    /// assert_eq!(touched.len(), 1);
    /// assert!((touched[0].depth - 0.05).abs() < 1e-5);
    /// # Ok::<(), kiln_runtime::HullError>(())
    /// ```
    pub fn new(points: &[Vec3]) -> Result<ConvexHull, HullError> {
        if points.len() > Self::MAX_POINTS {
            return Err(HullError::TooManyPoints(points.len()));
        }
        if let Some(i) = points.iter().position(|p| !p.is_finite()) {
            return Err(HullError::NotFinite(i));
        }
        let pts: Vec<DVec3> = points.iter().map(|p| p.as_dvec3()).collect();
        let h = crate::geom::hull::hull(&pts).ok_or(HullError::Flat)?;
        let normals = h.faces.iter().map(|(_, n, _)| *n).collect();
        let offsets = h.faces.iter().map(|(_, _, d)| *d).collect();
        let mut edges = Vec::new();
        // (low, high, face) per walked edge: each edge is walked by its
        // two faces, which sorting puts side by side
        let mut walked = Vec::new();
        for (f, (lp, _, _)) in h.faces.iter().enumerate() {
            for j in 0..lp.len() {
                let (a, b) = (lp[j], lp[(j + 1) % lp.len()]);
                walked.push((a.min(b), a.max(b), f));
                if a < b {
                    edges.push(h.vertices[b as usize] - h.vertices[a as usize]);
                }
            }
        }
        walked.sort_unstable();
        let edge_faces = walked
            .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
            .filter_map(|g| match g {
                [x, y] => Some((x.0, x.1, h.faces[x.2].1, h.faces[y.2].1)),
                _ => None,
            })
            .collect();
        let centre = h.vertices.iter().sum::<DVec3>() / h.vertices.len() as f64;
        Ok(ConvexHull {
            centre,
            points: h.vertices,
            normals,
            offsets,
            edges,
            edge_faces,
        })
    }

    /// The hull's vertices (a subset of the points it was made from).
    ///
    /// ```
    /// use kiln_runtime::{ConvexHull, Vec3};
    /// let corners: Vec<Vec3> = (0..8).map(|i| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32)).collect();
    /// let cube = ConvexHull::new(&corners)?;
    /// // a unit cube's hull is its eight corners, in some order
    /// assert_eq!(cube.vertices().count(), 8);
    /// assert!(cube.vertices().all(|v| corners.contains(&v)));
    /// # Ok::<(), kiln_runtime::HullError>(())
    /// ```
    pub fn vertices(&self) -> impl Iterator<Item = Vec3> + '_ {
        self.points.iter().map(|p| p.as_vec3())
    }

    /// The hull's edges, each as its two end vertices (to draw it).
    ///
    /// ```
    /// use kiln_runtime::{ConvexHull, Vec3};
    /// let corners: Vec<Vec3> = (0..8).map(|i| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32)).collect();
    /// let cube = ConvexHull::new(&corners)?;
    /// // a cube has twelve edges, each one unit long
    /// assert_eq!(cube.edges().count(), 12);
    /// assert!(cube.edges().all(|(a, b)| (a.distance(b) - 1.0).abs() < 1e-6));
    /// # Ok::<(), kiln_runtime::HullError>(())
    /// ```
    pub fn edges(&self) -> impl Iterator<Item = (Vec3, Vec3)> + '_ {
        self.edge_faces.iter().map(|&(a, b, _, _)| {
            (
                self.points[a as usize].as_vec3(),
                self.points[b as usize].as_vec3(),
            )
        })
    }
}
