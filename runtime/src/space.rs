//! [`Space`]: the one query surface a [`Level`] and a [`World`] share, so
//! code that asks questions — the character controller, an engine
//! binding, a game's own systems — is written once and takes either.
//!
//! Each question is written once, over a `Scope` (the level-wide walks in
//! `query/`); `Level` and `World` carry it as methods of
//! their own (so no import is needed to ask one), and the trait names the
//! same methods for code generic over both. A tidy test holds the trait,
//! `Level` and `World` to one list.

use std::sync::Arc;

use glam::Vec3;

use crate::filter::Filter;
use crate::level::Level;
use crate::object::ObjectId;
use crate::query::{Ray, RayHit, ShapeCast, ShapeHit, ShapeOverlap};
use crate::shape::{Pose, QueryShape};
use crate::world::World;

/// Declares [`Space`] from one list of the questions, and implements it
/// for `Level` and `World` (their own methods answer), and through a
/// reference or an `Arc`.
macro_rules! space {
    ($(
        $(#[$doc:meta])*
        fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;
    )*) => {
        /// What a query runs on: a [`Level`] (its static objects), a
        /// [`World`] (the level, its movers and triggers, and the bodies),
        /// or a reference or `Arc` of either. Every method is the one of
        /// the same name on `Level` and `World`.
        ///
        /// ```
        /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
        /// use kiln_runtime::{Filter, Level, Ray, Space, Vec3, World};
        /// use std::sync::Arc;
        /// // written once, asked of a level or a world
        /// fn ground(space: &impl Space, x: f32, z: f32) -> Option<f32> {
        ///     let down = Ray::new(Vec3::new(x, 10.0, z), Vec3::NEG_Y, 100.0);
        ///     space.raycast(&down, &Filter::ALL).map(|h| h.point.y)
        /// }
        /// let level = Arc::new(level);
        /// let world = World::new(level.clone());
        /// assert_eq!(ground(&level, 12.0, 5.0), ground(&world, 12.0, 5.0));
        /// ```
        pub trait Space {
            $( $(#[$doc])* fn $name(&self $(, $arg: $ty)*) $(-> $ret)?; )*
        }

        impl Space for Level {
            $(
                #[inline]
                fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    Level::$name(self $(, $arg)*)
                }
            )*
        }

        impl Space for World {
            $(
                #[inline]
                fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    World::$name(self $(, $arg)*)
                }
            )*
        }

        impl<T: Space + ?Sized> Space for &T {
            $(
                #[inline]
                fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    (**self).$name($($arg),*)
                }
            )*
        }

        impl<T: Space + ?Sized> Space for Arc<T> {
            $(
                #[inline]
                fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    (**self).$name($($arg),*)
                }
            )*
        }
    };
}

space! {
    /// [`Level::raycast`]: the closest hit.
    fn raycast(&self, ray: &Ray, filter: &Filter) -> Option<RayHit>;
    /// [`Level::raycast_any`]: whether anything is hit.
    fn raycast_any(&self, ray: &Ray, filter: &Filter) -> bool;
    /// [`Level::raycast_batch`]: many rays on the rayon pool.
    fn raycast_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]);
    /// [`Level::raycast_any_batch`].
    fn raycast_any_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]);
    /// [`Level::raycast_many`]: many rays on the calling thread.
    fn raycast_many(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]);
    /// [`Level::raycast_any_many`].
    fn raycast_any_many(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]);
    /// [`Level::overlap`]: every object a shape touches.
    fn overlap(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> Vec<ShapeOverlap>;
    /// [`Level::overlap_into`]: the same into the caller's buffer.
    fn overlap_into(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>
    );
    /// [`Level::overlap_batch`].
    fn overlap_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [Vec<ShapeOverlap>]
    );
    /// [`Level::overlap_any`]: whether a shape touches anything.
    fn overlap_any(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool;
    /// [`Level::overlap_any_batch`].
    fn overlap_any_batch(&self, queries: &[(QueryShape, Pose)], filter: &Filter, out: &mut [bool]);
    /// [`Level::cast`]: where a moving shape first touches.
    fn cast(&self, cast: &ShapeCast, filter: &Filter) -> Option<ShapeHit>;
    /// [`Level::cast_batch`].
    fn cast_batch(&self, casts: &[ShapeCast], filter: &Filter, out: &mut [Option<ShapeHit>]);
    /// [`Level::contains_point`]: the solids holding a point.
    fn contains_point(&self, p: Vec3, filter: &Filter) -> Vec<ObjectId>;
    /// [`Level::contains_point_into`].
    fn contains_point_into(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>);
    /// [`Level::contains_point_batch`].
    fn contains_point_batch(&self, points: &[Vec3], filter: &Filter, out: &mut [Vec<ObjectId>]);
    /// [`Level::contains_point_any`]: whether any solid holds a point.
    fn contains_point_any(&self, p: Vec3, filter: &Filter) -> bool;
    /// [`Level::contains_point_any_batch`].
    fn contains_point_any_batch(&self, points: &[Vec3], filter: &Filter, out: &mut [bool]);
}
