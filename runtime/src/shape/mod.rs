//! Query shapes: the convex shapes every overlap, yes/no test and cast
//! asks with — spheres, capsules, boxes and convex hulls in their own
//! frame ([`QueryShape`]), placed by a [`Pose`] — and, inside the crate,
//! the same shape placed in world space in f64 ([`Posed`]), which the
//! colliders answer against.

mod hull;
mod pose;
mod posed;

pub use hull::{ConvexHull, HullError};
pub use pose::Pose;
pub(crate) use posed::{Core, Posed};

use glam::{Quat, Vec3};

/// A convex shape to query with, in its own frame (a [`Pose`] places it).
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{ConvexHull, Filter, Pose, QueryShape, Vec3};
/// let wedge = ConvexHull::new(&[Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::Y])?;
/// let shapes = [
///     QueryShape::Sphere { radius: 0.5 },
///     QueryShape::Capsule { half_height: 0.6, radius: 0.3 },
///     QueryShape::Cuboid { half: Vec3::new(0.5, 0.25, 0.5) },
///     QueryShape::Hull(&wedge),
/// ];
/// // each, placed well above the floor, touches nothing
/// for s in &shapes {
///     assert!(!level.overlap_any(s, &Pose::at(Vec3::new(12.0, 2.0, 5.0)), &Filter::ALL));
/// }
/// # Ok::<(), kiln_runtime::HullError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueryShape<'a> {
    /// A sphere around the origin.
    Sphere {
        /// Radius (≥ 0).
        radius: f32,
    },
    /// A capsule: the segment from `(0, −half_height, 0)` to `(0,
    /// half_height, 0)` grown by `radius` (see [`QueryShape::capsule`]
    /// for one between two world points).
    Capsule {
        /// Half the distance between the cap centres (≥ 0).
        half_height: f32,
        /// Radius (≥ 0).
        radius: f32,
    },
    /// A box around the origin.
    Cuboid {
        /// Half extents along the local axes (each ≥ 0).
        half: Vec3,
    },
    /// A convex hull.
    Hull(&'a ConvexHull),
}

impl QueryShape<'_> {
    /// A capsule between the world points `a` and `b`, with its pose.
    ///
    /// ```
    /// use kiln_runtime::{QueryShape, Vec3};
    /// let (shape, pose) = QueryShape::capsule(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), 0.25);
    /// assert_eq!(shape, QueryShape::Capsule { half_height: 1.0, radius: 0.25 });
    /// assert_eq!(pose.translation, Vec3::new(1.0, 0.0, 0.0));
    /// // the pose turns the capsule's +Y axis onto the segment
    /// assert!((pose.rotation * Vec3::Y - Vec3::X).length() < 1e-6);
    /// ```
    pub fn capsule(a: Vec3, b: Vec3, radius: f32) -> (QueryShape<'static>, Pose) {
        let d = b - a;
        let len = d.length();
        let rotation = if len > 0.0 {
            Quat::from_rotation_arc(Vec3::Y, d / len)
        } else {
            Quat::IDENTITY
        };
        (
            QueryShape::Capsule {
                half_height: len * 0.5,
                radius,
            },
            Pose::new(rotation, (a + b) * 0.5),
        )
    }
}
