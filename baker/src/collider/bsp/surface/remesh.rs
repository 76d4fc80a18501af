//! Remesh: an open render mesh closed by meshoptimizer's voxel remesher
//! (voxelise, flood-fill the outside, extract the surface, positions
//! solved to fit the input), unless it is ground (flat or huge).

use super::repair::{make_manifold, weld_close};
use crate::geom::topology::{bounds, closed_and_volume, pinched_edges};
use crate::geom::weld::WeldedMesh;
use crate::limits::MAX_RESOLUTION;
use glam::DVec3;

/// The remesher's grid size for `tolerance`: one voxel about the
/// tolerance along the longest side, at least 16 (small objects), at most
/// [`MAX_RESOLUTION`], within the 4..=256 meshoptimizer accepts (its checks are compiled out of release builds, so the range
/// is enforced here).
pub fn remesh_resolution(extent: f64, tolerance: f64) -> u32 {
    let r = (2.0 * extent / tolerance.max(1e-9)).ceil();
    if r.is_finite() {
        r.clamp(16.0, MAX_RESOLUTION) as u32
    } else {
        MAX_RESOLUTION as u32
    }
}

/// Remeshes `mesh` at about `res` voxels across: the first of three
/// nearby resolutions whose surface, after pinches are split, is closed
/// with every edge used twice (the pinches the split cannot undo depend on
/// how the grid falls), else the one with the fewest pinched edges.
/// Returns the resolution, the mesh, its pinched edges (`None`: not
/// closed), and its volume.
pub fn remesh(mesh: &WeldedMesh, res: u32, size: f64) -> (u32, WeldedMesh, Option<usize>, f64) {
    let extent = {
        let (lo, hi) = bounds(&mesh.vertices);
        (hi - lo).max_element()
    };
    let mut best: Option<(u32, WeldedMesh, Option<usize>, f64)> = None;
    for delta in [0i32, -1, 1] {
        let r = (res as i32 + delta).clamp(8, 256) as u32;
        // the remesher puts one vertex in each voxel, so a wall one voxel
        // thick comes out as two coincident sheets facing away from each
        // other, which enclose nothing (and cancel): every face is
        // voxelised three times, also pushed 0.75 voxel out along its
        // normal both ways, so that walls are at least two voxels thick
        let voxel = extent / (r as f64 - 2.0).max(1.0);
        let (vertices, flat) = thickened(mesh, 0.75 * voxel);
        let corners = meshopt::remesh_decoder(&flat, &vertices, r, meshopt::RemeshOptions::Solve);
        let tris: Vec<[u32; 3]> = (0..corners.len() as u32 / 3)
            .map(|k| [3 * k, 3 * k + 1, 3 * k + 2])
            .collect();
        let mut w = weld_close(&corners, &tris, 1e-7 * size);
        let mut pinched = pinched_edges(&w.triangles);
        if pinched.is_some_and(|p| p > 0)
            && let Some((v, t)) = make_manifold(&w.vertices, &w.triangles)
        {
            pinched = pinched_edges(&t);
            (w.vertices, w.triangles) = (v, t);
        }
        let (_, volume) = closed_and_volume(&w.vertices, &w.triangles);
        let rank = |p: Option<usize>| p.map_or(usize::MAX, |p| p);
        if pinched == Some(0) && volume != 0.0 {
            return (r, w, pinched, volume);
        }
        if best.as_ref().is_none_or(|b| rank(pinched) < rank(b.2)) && volume != 0.0 {
            best = Some((r, w, pinched, volume));
        }
    }
    best.unwrap_or((res, WeldedMesh::default(), None, 0.0))
}

/// The mesh's triangles, and each also moved by `d` along its normal
/// both ways, as a vertex list and flat indices (for voxelising).
fn thickened(mesh: &WeldedMesh, d: f64) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut v = mesh.vertices.clone();
    let mut idx: Vec<u32> = mesh.triangles.iter().flatten().copied().collect();
    for t in &mesh.triangles {
        let p = t.map(|i| DVec3::from(mesh.vertices[i as usize].map(f64::from)));
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        if n == DVec3::ZERO {
            continue;
        }
        for s in [d, -d] {
            for q in p {
                idx.push(v.len() as u32);
                v.push((q + n * s).as_vec3().to_array());
            }
        }
    }
    (v, idx)
}

/// Most triangles an open mesh may have to be remeshed into a concave
/// solid: a cap on time and memory only (classification tells props from
/// level geometry by shape and size, not by triangle count).
pub const REMESH_MAX_TRIANGLES: usize = 1 << 20;

/// Why an open mesh is ground rather than an object to close: flat (its
/// thickness along its mean normal under 2% of its longest side: floors,
/// terrain, wall panels) or huge (more than [`REMESH_MAX_TRIANGLES`]).
/// Asked of open meshes only.
pub fn ground_like(welded: &WeldedMesh) -> Option<String> {
    if welded.triangles.len() > REMESH_MAX_TRIANGLES {
        return Some(format!(
            "open with {} triangles, more than the {REMESH_MAX_TRIANGLES} a prop is remeshed from",
            welded.triangles.len()
        ));
    }
    // thickness along the area-weighted mean normal against the extent
    let p = |i: u32| DVec3::from(welded.vertices[i as usize].map(f64::from));
    let n = welded
        .triangles
        .iter()
        .map(|t| (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])))
        .sum::<DVec3>()
        .normalize_or_zero();
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let (mut a, mut b) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in &welded.vertices {
        let v = DVec3::from(v.map(f64::from));
        lo = lo.min(v);
        hi = hi.max(v);
        a = a.min(n.dot(v));
        b = b.max(n.dot(v));
    }
    let flat = n != DVec3::ZERO && (b - a) < 0.02 * (hi - lo).max_element();
    flat.then(|| "open and flat (a floor or terrain)".into())
}
