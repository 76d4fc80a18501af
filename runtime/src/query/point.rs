//! Point queries against the whole level: which solids contain a point.

use super::Scope;
use crate::filter::Filter;
use crate::level::Level;
use crate::object::ObjectId;
use glam::Vec3;

impl Level {
    /// The instances `filter` accepts whose solid contains `p` (surface
    /// included), in instance order. Triangle meshes have no inside and
    /// never contain a point; a non-finite point is in nothing.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Vec3};
    /// // the wall is a solid box; the floor tiles are triangle meshes
    /// let inside = level.contains_point(Vec3::new(16.25, 1.0, 10.0), &Filter::ALL);
    /// assert_eq!(inside, [level.find_object("wall").unwrap()]);
    /// assert!(level.contains_point(Vec3::new(12.0, 0.0, 5.0), &Filter::ALL).is_empty());
    /// ```
    pub fn contains_point(&self, p: Vec3, filter: &Filter) -> Vec<ObjectId> {
        let mut out = Vec::new();
        self.contains_point_into(p, filter, &mut out);
        out
    }

    /// [`Level::contains_point`] into `out`, which it clears first, so a
    /// caller can reuse one buffer and never allocate.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Vec3};
    /// let mut inside = Vec::new();
    /// for x in [15.0, 16.25, 17.0] {
    ///     level.contains_point_into(Vec3::new(x, 1.0, 10.0), &Filter::ALL, &mut inside);
    ///     assert_eq!(inside.len(), usize::from(x == 16.25));
    /// }
    /// ```
    pub fn contains_point_into(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>) {
        Scope::of(self).contains_point_into(p, filter, out)
    }

    /// Whether any solid `filter` accepts contains `p` (surface included):
    /// [`Level::contains_point`]'s yes/no form, which stops at the first
    /// solid found. Triangle meshes have no inside; a non-finite point is
    /// in nothing.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Vec3};
    /// assert!(level.contains_point_any(Vec3::new(16.25, 1.0, 10.0), &Filter::ALL)); // in the wall
    /// assert!(!level.contains_point_any(Vec3::new(12.0, 0.0, 5.0), &Filter::ALL)); // on a floor tile
    /// ```
    pub fn contains_point_any(&self, p: Vec3, filter: &Filter) -> bool {
        Scope::of(self).contains_point_any(p, filter)
    }

    /// [`Level::contains_point_any`] on the rayon pool: `out[i]` answers
    /// `points[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Vec3};
    /// let points: Vec<Vec3> = (0..100).map(|i| Vec3::new(15.01 + i as f32 * 0.02, 1.0, 10.0)).collect();
    /// let mut out = vec![false; points.len()];
    /// level.contains_point_any_batch(&points, &Filter::ALL, &mut out);
    /// assert_eq!(out.iter().filter(|&&o| o).count(), 25); // 16.01 to 16.49
    /// ```
    pub fn contains_point_any_batch(&self, points: &[Vec3], filter: &Filter, out: &mut [bool]) {
        super::batch(points, out, 256, |p, o| {
            *o = self.contains_point_any(*p, filter)
        });
    }

    /// Point queries on the rayon pool: `out[i]` answers `points[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Vec3};
    /// let points: Vec<Vec3> = (0..100).map(|i| Vec3::new(15.01 + i as f32 * 0.02, 1.0, 10.0)).collect();
    /// let mut out = vec![Vec::new(); points.len()];
    /// level.contains_point_batch(&points, &Filter::ALL, &mut out);
    /// assert_eq!(out.iter().filter(|o| !o.is_empty()).count(), 25); // 16.01 to 16.49
    /// ```
    pub fn contains_point_batch(
        &self,
        points: &[Vec3],
        filter: &Filter,
        out: &mut [Vec<ObjectId>],
    ) {
        super::batch(points, out, 256, |p, o| {
            self.contains_point_into(*p, filter, o)
        });
    }
}

impl Scope<'_> {
    /// [`Level::contains_point_into`] over the scope.
    pub(crate) fn contains_point_into(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>) {
        out.clear();
        self.contains_point_append(p, filter, out);
        out.sort_unstable();
    }

    /// The solids holding `p`, added to `out` in the order found.
    pub(crate) fn contains_point_append(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>) {
        if !p.is_finite() {
            return;
        }
        self.near(p, p, filter, |id, shape, at| {
            if shape.contains(at, p) {
                out.push(id);
            }
            false
        });
    }

    /// [`Level::contains_point_any`] over the scope.
    pub(crate) fn contains_point_any(&self, p: Vec3, filter: &Filter) -> bool {
        if !p.is_finite() {
            return false;
        }
        let mut found = false;
        self.near(p, p, filter, |_, shape, at| {
            found = shape.contains(at, p);
            found
        });
        found
    }
}
