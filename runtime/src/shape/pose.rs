//! Where a query shape is.

use glam::{Quat, Vec3};

/// Where a query shape is: a rotation, then a translation.
///
/// ```
/// use kiln_runtime::{Pose, Quat, Vec3};
/// // a pose turns the shape, then moves it
/// let p = Pose::new(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), Vec3::new(1.0, 2.0, 3.0));
/// let tip = p.rotation * Vec3::X + p.translation;
/// assert!((tip - Vec3::new(1.0, 3.0, 3.0)).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Translation (the shape's local origin in world space).
    pub translation: Vec3,
}

impl Pose {
    /// No rotation, at the origin.
    ///
    /// ```
    /// use kiln_runtime::{Pose, Vec3};
    /// assert_eq!(Pose::IDENTITY, Pose::at(Vec3::ZERO));
    /// ```
    pub const IDENTITY: Pose = Pose {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };

    /// No rotation, at `translation`.
    ///
    /// ```
    /// use kiln_runtime::{Pose, Quat, Vec3};
    /// assert_eq!(Pose::at(Vec3::Y), Pose::new(Quat::IDENTITY, Vec3::Y));
    /// ```
    pub fn at(translation: Vec3) -> Pose {
        Pose {
            rotation: Quat::IDENTITY,
            translation,
        }
    }

    /// `rotation`, then `translation`.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, Quat, QueryShape, Vec3};
    /// // a 2 x 0.2 x 0.2 m plank 0.9 m from the wall: upright, it misses the wall;
    /// // lying along x, it pokes 0.1 m into it
    /// let plank = QueryShape::Cuboid { half: Vec3::new(0.1, 1.0, 0.1) };
    /// let at = Vec3::new(15.1, 1.5, 12.0);
    /// let wall = level.find_object("wall").unwrap();
    /// let hits = |pose: &Pose| level.overlap(&plank, pose, &Filter::ALL).iter().any(|o| o.object == wall);
    /// assert!(!hits(&Pose::at(at)));
    /// assert!(hits(&Pose::new(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), at)));
    /// ```
    pub fn new(rotation: Quat, translation: Vec3) -> Pose {
        Pose {
            rotation,
            translation,
        }
    }
}

/// In words: where and how turned, e.g. `at [1, 2, 3] turned [0, 0, 0, 1]`
/// (the rotation as `x, y, z, w`).
impl std::fmt::Display for Pose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {} turned {}", self.translation, self.rotation)
    }
}
