//! Convex query shapes — spheres, capsules, boxes and convex hulls, placed
//! by a [`Pose`] — against the whole level: overlaps (every object touched,
//! each with its deepest contact), yes/no tests and casts (first time of
//! impact along a motion).
//!
//! The top-level tree picks the instances the shape's world box may reach;
//! each instance's collider answers exactly for itself (`collider`): GJK
//! distance between the query's core and each convex piece of the collider
//! (a triangle, a box, a polytope, a sphere's centre, a capsule's
//! segment), the separating-axis depth when the cores overlap, and casts
//! by conservative advancement, all in f64 world space.
//!
//! ```
//! # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
//! use kiln_runtime::{CastOptions, Filter, QueryShape, ShapeCast, Vec3};
//! let (capsule, pose) =
//!     QueryShape::capsule(Vec3::new(12.0, 0.2, 5.0), Vec3::new(12.0, 1.4, 5.0), 0.4);
//! for touch in level.overlap(&capsule, &pose, &Filter::ALL) {
//!     println!("{} deep in {}", touch.depth, level.object_name(touch.object).unwrap_or_default());
//! }
//! let slide = CastOptions { ignore_leaving: true };
//! let along_x = ShapeCast::new(capsule, pose, Vec3::X, 10.0).with(slide);
//! let hit = level.cast(&along_x, &Filter::ALL).unwrap();
//! assert_eq!(level.object_name(hit.object).as_deref(), Some("wall"));
//! ```

use super::Scope;
use crate::collider::At;
use crate::collider::ColliderRef;
use crate::filter::Filter;
use crate::geom::convex_contact::Touch;
use crate::level::Level;
use crate::object::ObjectId;
use crate::shape::{Pose, Posed, QueryShape};
use glam::{DVec3, Vec3};

/// One object a query shape touches.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
/// // a ball sunk 0.2 m into the floor: push it out by `depth` along `normal`
/// let ball = QueryShape::Sphere { radius: 0.5 };
/// let mut at = Vec3::new(12.0, 0.3, 5.0);
/// let touch = level.overlap(&ball, &Pose::at(at), &Filter::ALL)[0];
/// at += touch.normal * touch.depth;
/// assert!((at.y - 0.5).abs() < 1e-5);
/// assert!((touch.point - Vec3::new(12.0, 0.0, 5.0)).length() < 1e-5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeOverlap {
    /// The object touched (see [`Level::object_name`]).
    pub object: ObjectId,
    /// The deepest contact's point: on the object's surface and in or on
    /// the shape as posed — the object's point the shape touches when
    /// moved out by `depth`, where that lies in the shape, else the surface
    /// inside the shape farthest along `normal`; only a shape wholly
    /// inside a solid, reaching no surface, gets the surface point it
    /// leaves by (the contact rules in the README).
    pub point: Vec3,
    /// Unit normal from the object towards the query shape: the direction
    /// that separates them fastest. Over a flat region of a mesh
    /// (triangles continuing each other in one plane, marked at bake) — every
    /// corner of the shape that reaches through the plane lying over it —
    /// capsules, boxes and hulls answer with the face's normal, so a
    /// tessellated floor pushes straight up; past the region's border they
    /// answer the exact contact. For a concave solid, the way out of the
    /// solid (see the README's contact rules).
    pub normal: Vec3,
    /// Penetration depth: how far the shape must move along `normal` to
    /// clear that contact — the triangle, the flat region's plane, or the
    /// whole solid (0 when just touching).
    pub depth: f32,
    /// The feature touched, as every answer names it: for a triangle mesh,
    /// the index of the triangle in its source mesh (primitives
    /// concatenated); for a concave solid, the index of the triangle in
    /// its collider; for a box or a polytope, the face (plane index) a
    /// sphere touches. `None` where no one index stands for the contact:
    /// sphere and capsule colliders, and capsules, boxes and hulls against
    /// a box or a polytope (their deepest contact may be an edge or a
    /// corner).
    pub feature: Option<u32>,
}

/// The f32 box around a world box, grown by a hair for rounding.
pub(crate) fn cull_box(centre: DVec3, half: DVec3) -> (Vec3, Vec3) {
    let pad = half * 1e-5 + centre.abs() * 1e-6 + 1e-6;
    (
        (centre - half - pad).as_vec3(),
        (centre + half + pad).as_vec3(),
    )
}

/// A sphere's centre and radius when `shape` at `pose` is a valid
/// sphere (the pose's rotation, irrelevant to it, still finite): spheres
/// take their own closed-form path.
pub(super) fn as_sphere(shape: &QueryShape, pose: &Pose) -> Option<(Vec3, f32)> {
    match *shape {
        QueryShape::Sphere { radius } if pose.rotation.is_finite() => {
            Some((pose.translation, radius))
        }
        _ => None,
    }
}

impl Level {
    /// Every object `filter` accepts that `shape` at `pose` touches, each
    /// once with its deepest contact, in the order the tree finds them.
    /// Invalid input (non-finite, negative sizes) touches nothing.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// // a 1 m box sunk 0.1 m into the floor, its side 0.2 m into the wall
    /// let crate_box = QueryShape::Cuboid { half: Vec3::splat(0.5) };
    /// let at = Pose::at(Vec3::new(15.7, 0.4, 12.0));
    /// let mut touched = level.overlap(&crate_box, &at, &Filter::ALL);
    /// touched.sort_by(|a, b| b.depth.total_cmp(&a.depth));
    /// assert_eq!(level.object_name(touched[0].object).as_deref(), Some("wall"));
    /// assert!((touched[0].depth - 0.2).abs() < 1e-5 && touched[0].normal.abs_diff_eq(Vec3::NEG_X, 1e-6));
    /// assert_eq!(level.object_name(touched[1].object).as_deref(), Some("floor_3"));
    /// assert!((touched[1].depth - 0.1).abs() < 1e-5 && touched[1].normal.abs_diff_eq(Vec3::Y, 1e-6));
    /// ```
    pub fn overlap(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> Vec<ShapeOverlap> {
        let mut out = Vec::new();
        self.overlap_into(shape, pose, filter, &mut out);
        out
    }

    /// [`Level::overlap`] into `out`, which it clears first, so a caller
    /// can reuse one buffer and never allocate.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let mut touched = Vec::new();
    /// for y in [0.25, 0.5, 0.75] {
    ///     level.overlap_into(&ball, &Pose::at(Vec3::new(12.0, y, 5.0)), &Filter::ALL, &mut touched);
    ///     assert_eq!(touched.len(), usize::from(y <= 0.5));
    /// }
    /// ```
    pub fn overlap_into(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        Scope::of(self).overlap_into(shape, pose, filter, out)
    }

    /// Whether `shape` at `pose` touches any object `filter` accepts
    /// (stops at the first contact).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// // a standing capsule 1.8 m tall: 1 cm into the floor it touches, 1 cm above it does not
    /// let (body, _) = QueryShape::capsule(Vec3::new(0.0, 0.3, 0.0), Vec3::new(0.0, 1.5, 0.0), 0.3);
    /// assert!(level.overlap_any(&body, &Pose::at(Vec3::new(12.0, 0.89, 5.0)), &Filter::ALL));
    /// assert!(!level.overlap_any(&body, &Pose::at(Vec3::new(12.0, 0.91, 5.0)), &Filter::ALL));
    /// ```
    pub fn overlap_any(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool {
        Scope::of(self).overlap_any(shape, pose, filter)
    }

    /// [`Level::overlap`] for many shapes on the rayon pool: `out[i]`
    /// answers `queries[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let ball = QueryShape::Sphere { radius: 0.5 };
    /// let queries: Vec<_> = (0..8).map(|i| (ball, Pose::at(Vec3::new(12.0, 0.05 + 0.1 * i as f32, 5.0)))).collect();
    /// let mut out = vec![Vec::new(); queries.len()];
    /// level.overlap_batch(&queries, &Filter::ALL, &mut out);
    /// // centres at y = 0.05 to 0.45 touch the floor, 0.55 and up do not
    /// assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 1, 1, 1, 0, 0, 0]);
    /// ```
    pub fn overlap_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [Vec<ShapeOverlap>],
    ) {
        super::batch(queries, out, 32, |(s, p), o| {
            self.overlap_into(s, p, filter, o)
        });
    }

    /// [`Level::overlap_any`] for many shapes on the rayon pool: `out[i]`
    /// answers `queries[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Pose, QueryShape, Vec3};
    /// let crate_box = QueryShape::Cuboid { half: Vec3::splat(0.5) };
    /// let queries = [0.4, 0.6].map(|y| (crate_box, Pose::at(Vec3::new(12.0, y, 5.0))));
    /// let mut out = [false; 2];
    /// level.overlap_any_batch(&queries, &Filter::ALL, &mut out);
    /// assert_eq!(out, [true, false]);
    /// ```
    pub fn overlap_any_batch(
        &self,
        queries: &[(QueryShape, Pose)],
        filter: &Filter,
        out: &mut [bool],
    ) {
        super::batch(queries, out, 32, |(s, p), o| {
            *o = self.overlap_any(s, p, filter)
        });
    }
}

impl Scope<'_> {
    /// [`Level::overlap_into`] over the scope.
    pub(crate) fn overlap_into(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        out.clear();
        self.overlap_append(shape, pose, filter, out);
    }

    /// [`Scope::overlap_into`], adding to what `out` holds.
    pub(crate) fn overlap_append(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        if let Some((c, r)) = as_sphere(shape, pose) {
            return self.sphere_overlap_append(c, r, filter, out);
        }
        // by reference: taken out of the `Option`, the query shape was copied
        // (136 bytes for a box, a memcpy per query)
        if let Some(posed) = &Posed::new(shape, pose) {
            self.near_shape(posed, filter, |id, s, at| {
                if let Some((t, feature)) = s.shape_touch(at, posed) {
                    out.push(overlap(id, t, feature));
                }
                false
            });
        }
    }

    /// [`Level::overlap_any`] over the scope.
    pub(crate) fn overlap_any(&self, shape: &QueryShape, pose: &Pose, filter: &Filter) -> bool {
        if let Some((c, r)) = as_sphere(shape, pose) {
            return self.sphere_overlap_any(c, r, filter);
        }
        // by reference, as in `overlap_into`
        let Some(posed) = &Posed::new(shape, pose) else {
            return false;
        };
        let mut found = false;
        self.near_shape(posed, filter, |_, s, at| {
            found = s.shape_touches(at, posed);
            found
        });
        found
    }

    /// Calls `visit` with every object `filter` accepts whose box meets
    /// the query shape's, until it answers `true`: the walk overlaps and yes/no
    /// tests share.
    fn near_shape(
        &self,
        posed: &Posed,
        filter: &Filter,
        visit: impl FnMut(ObjectId, ColliderRef, At) -> bool,
    ) {
        let (c, h) = posed.bounds();
        let (lo, hi) = cull_box(c, h);
        self.near(lo, hi, filter, visit);
    }
}

fn overlap(object: ObjectId, t: Touch, feature: Option<u32>) -> ShapeOverlap {
    ShapeOverlap {
        object,
        point: t.point.as_vec3(),
        normal: t.normal.as_vec3(),
        depth: t.depth as f32,
        feature,
    }
}
