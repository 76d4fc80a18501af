//! Point queries against the whole level: which solids contain a point.

use crate::instance::Placement;
use crate::level::Level;
use crate::shape::ShapeRef;
use crate::walk::walk_box;
use glam::Vec3;
use kiln_formats::level::leaf_range;

impl Level {
    /// The instances whose solid contains `p` (surface included), in
    /// archive order. Triangle meshes have no inside and never contain a
    /// point. Appends to `out`, which it clears first, so a caller can
    /// reuse one buffer and never allocate.
    pub fn contains_point_into(&self, p: Vec3, out: &mut Vec<u32>) {
        out.clear();
        if !p.is_finite() {
            return;
        }
        let level = self.archive();
        walk_box(level.top.as_slice(), p, p, |data| {
            let (ii, _) = leaf_range(data);
            let inst = &level.instances[ii as usize];
            let shape = ShapeRef(&level.shapes[inst.shape.to_native() as usize]);
            if shape.contains(&Placement::new(inst), p) {
                out.push(ii);
            }
            false
        });
        out.sort_unstable();
    }

    /// [`Level::contains_point_into`] into a new vector.
    pub fn contains_point(&self, p: Vec3) -> Vec<u32> {
        let mut out = Vec::new();
        self.contains_point_into(p, &mut out);
        out
    }

    /// Point queries on the rayon pool: `out[i]` answers `points[i]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn contains_point_batch(&self, points: &[Vec3], out: &mut [Vec<u32>]) {
        super::batch(points, out, 256, |p, o| self.contains_point_into(*p, o));
    }
}
