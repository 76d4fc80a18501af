//! The top-level tree over instances, with each instance's transform and its
//! inverse in the archive's 3×4 row-major form.

use super::sah::{self, PrimRef};
use crate::scene::Scene;
use glam::{DAffine3, DVec3};
use kiln_formats::level::{Instance, Node, TriMesh};

/// Builds the instance table (in leaf order), the names parallel to it and
/// the top-level tree. Instances of meshes without triangles are left out.
pub fn build(scene: &Scene, meshes: &[TriMesh]) -> (Vec<Instance>, Vec<String>, Vec<Node>) {
    let mut prims: Vec<PrimRef> = scene
        .instances
        .iter()
        .enumerate()
        .filter(|(_, inst)| !meshes[inst.mesh].leaves.is_empty())
        .map(|(i, inst)| {
            let (min, max) = world_box(&meshes[inst.mesh], &inst.transform);
            PrimRef {
                min,
                max,
                id: i as u32,
            }
        })
        .collect();
    let top = sah::build(&mut prims);
    let mut instances = Vec::with_capacity(prims.len());
    let mut names = Vec::with_capacity(prims.len());
    for p in &prims {
        let inst = &scene.instances[p.id as usize];
        instances.push(Instance {
            world_from_local: to_rows(&inst.transform),
            local_from_world: to_rows(&inst.transform.inverse()),
            mesh: inst.mesh as u32,
            source: p.id,
        });
        names.push(inst.name.clone());
    }
    (instances, names, top)
}

/// 3×4 row-major, f32.
pub fn to_rows(a: &DAffine3) -> [f32; 12] {
    let m = a.matrix3;
    let t = a.translation;
    [
        m.x_axis.x, m.y_axis.x, m.z_axis.x, t.x, //
        m.x_axis.y, m.y_axis.y, m.z_axis.y, t.y, //
        m.x_axis.z, m.y_axis.z, m.z_axis.z, t.z,
    ]
    .map(|v| v as f32)
}

/// The world box of a mesh under a transform, from every vertex (tight even
/// under rotation), widened by a few ulps of its magnitude so that the f32
/// transforms the runtime uses can never put geometry outside it.
fn world_box(mesh: &TriMesh, xf: &DAffine3) -> ([f32; 3], [f32; 3]) {
    let mut min = DVec3::splat(f64::INFINITY);
    let mut max = DVec3::splat(f64::NEG_INFINITY);
    for v in &mesh.vertices {
        let p = xf.transform_point3(DVec3::from(v.map(f64::from)));
        min = min.min(p);
        max = max.max(p);
    }
    let pad = (min.abs().max(max.abs()).max_element() + (max - min).max_element()) * 1e-6;
    let lo = (min - DVec3::splat(pad)).to_array().map(|v| v as f32);
    let hi = (max + DVec3::splat(pad)).to_array().map(|v| v as f32);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    #[test]
    fn rows_apply_like_the_affine() {
        let a = DAffine3::from_scale_rotation_translation(
            DVec3::new(1.0, 2.0, -3.0),
            DQuat::from_rotation_y(0.7),
            DVec3::new(5.0, 6.0, 7.0),
        );
        let r = to_rows(&a);
        let p = DVec3::new(0.3, -1.2, 2.5);
        let q = a.transform_point3(p);
        for row in 0..3 {
            let v = r[row * 4] as f64 * p.x
                + r[row * 4 + 1] as f64 * p.y
                + r[row * 4 + 2] as f64 * p.z
                + r[row * 4 + 3] as f64;
            assert!((v - q[row]).abs() < 1e-5);
        }
    }
}
