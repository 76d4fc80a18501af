//! Watertight low-poly colliders from render meshes, with a measured error.
//!
//! Render meshes have UV seams, holes, open backs, doubled and internal
//! faces and far too many triangles; a concave collider must be closed,
//! consistently oriented and small. The steps:
//! 1. weld by position within a small tolerance (`1e-5` of the mesh's
//!    size), drop degenerate triangles, and cancel pairs of coincident
//!    faces of opposite orientation (internal walls);
//! 2. not closed (an edge not used exactly twice in opposite directions)
//!    and not ground (flat or huge: see `ground_like`) ⇒ remesh with meshoptimizer's voxel remesher (voxelise, flood-fill
//!    the outside, extract the surface, positions solved to fit the
//!    input), one voxel about the tolerance, at most 256 across;
//! 3. simplify with meshoptimizer (absolute error = the tolerance, target
//!    = the face budget: whichever binds first stops it), then check
//!    closed and oriented again: meshoptimizer does not promise it. On
//!    failure the budget doubles (a result with pinched edges — closed,
//!    but touching itself — is taken after two doublings rather than
//!    growing further); last resort the convex hull, with a warning. meshoptimizer's error is an estimate: when the
//!    measured distance (step 4) is over the tolerance, simplify again
//!    with its target scaled down by the overshoot (up to 4 rounds);
//! 4. measure, not estimate: sample both surfaces (every vertex and 2048
//!    area-stratified points each) and take the two-sided Hausdorff
//!    distance (render → collider and collider → render, each point's
//!    nearest distance found on a binned-SAH tree, `geom::nearest`), the mean
//!    distance, and the volume ratio.

pub mod fidelity;
pub mod remesh;
pub mod repair;
pub mod simplify;

use crate::collider::note::Step;
use crate::geom::nearest::Nearest;
use crate::geom::topology::{bounds, closed_and_volume};
use crate::geom::weld::WeldedMesh;
pub use fidelity::Fidelity;
use fidelity::measure;
use glam::DVec3;
use remesh::{ground_like, remesh, remesh_resolution};
use repair::{make_manifold, weld_close};
use simplify::simplify_closed;

/// What a concave collider is simplified to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceSettings {
    /// Largest distance, in mesh units, the collider may deviate from the
    /// render mesh.
    pub tolerance: f64,
    /// Face budget.
    pub max_faces: usize,
}

/// A watertight collider mesh and how it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct Surface {
    /// Vertices.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles, counter-clockwise seen from outside; every edge used
    /// exactly twice, in opposite directions.
    pub triangles: Vec<[u32; 3]>,
    /// Measured error and steps.
    pub fidelity: Fidelity,
    /// The collider is the mesh's convex hull (the last resort): a
    /// polytope says it best.
    pub convex: bool,
    /// Edges used by four or more faces (the surface touches itself along
    /// them; still closed and consistently oriented, which is all a BSP
    /// tree needs). Zero unless the remesher left pinches that splitting
    /// could not undo.
    pub pinched_edges: usize,
}

/// A closed, outward mesh from `mesh`, simplified within `s`, or why not
/// (the caller keeps a triangle mesh).
pub fn watertight(mesh: &WeldedMesh, s: SurfaceSettings) -> Result<Surface, String> {
    let (lo, hi) = bounds(&mesh.vertices);
    let extent = (hi - lo).max_element();
    if mesh.triangles.is_empty() || !extent.is_finite() || extent <= 0.0 {
        return Err("no triangles with extent".into());
    }
    let mut steps = Vec::new();
    let size = lo.abs().max(hi.abs()).max_element().max(extent);
    let welded = weld_close(&mesh.vertices, &mesh.triangles, 1e-5 * size);
    if welded.vertices.len() < mesh.vertices.len() || welded.triangles.len() < mesh.triangles.len()
    {
        steps.push(Step::Welded {
            vertices: (mesh.vertices.len(), welded.vertices.len()),
            faces: (mesh.triangles.len(), welded.triangles.len()),
        });
    }
    let (mut closed, mut volume) = closed_and_volume(&welded.vertices, &welded.triangles);
    let mut welded = welded;
    if !closed && let Some((v, t)) = make_manifold(&welded.vertices, &welded.triangles) {
        let (c, vol) = closed_and_volume(&v, &t);
        if c {
            steps.push(Step::PinchedEdgesSplit);
            (closed, volume) = (c, vol);
            (welded.vertices, welded.triangles) = (v, t);
        }
    }
    let (base_v, base_t, reference_volume) = if closed && volume > 0.0 {
        (welded.vertices, welded.triangles, volume)
    } else if closed && volume < 0.0 {
        steps.push(Step::TurnedOutward);
        let t = welded
            .triangles
            .iter()
            .map(|t| [t[0], t[2], t[1]])
            .collect();
        (welded.vertices, t, -volume)
    } else {
        if let Some(why) = ground_like(&welded) {
            return Err(why);
        }
        let (res, w, pinched, volume) = remesh(mesh, remesh_resolution(extent, s.tolerance), size);
        steps.push(Step::Remeshed {
            resolution: res,
            faces: w.triangles.len(),
            pinched,
        });
        if pinched.is_none() || volume == 0.0 {
            return hull_fallback(mesh, steps, "the remeshed surface is not closed");
        }
        if volume < 0.0 {
            let t = w.triangles.iter().map(|t| [t[0], t[2], t[1]]).collect();
            (w.vertices, t, -volume)
        } else {
            (w.vertices, w.triangles, volume)
        }
    };
    let flat: Vec<u32> = base_t.iter().flatten().copied().collect();
    let near_render = Nearest::new(&mesh.vertices, &mesh.triangles);
    // meshoptimizer's error is a quadric estimate: when the measured
    // distance exceeds the tolerance, simplify again with a target scaled
    // down by what was measured (a few times), keeping the best result
    let mut target = s.tolerance;
    let mut best: Option<Surface> = None;
    for _ in 0..4 {
        let Some((v, t, pinched)) = simplify_closed(&flat, &base_v, s.max_faces, target) else {
            break;
        };
        let mut steps = steps.clone();
        if t.len() < base_t.len() {
            steps.push(Step::Simplified { faces: t.len() });
        }
        if pinched > 0 {
            steps.push(Step::Pinched { edges: pinched });
        }
        let fidelity = measure(mesh, &near_render, &v, &t, reference_volume, steps);
        let h = fidelity.hausdorff();
        let reduced = t.len() < base_t.len();
        // fewer pinches first, then the smaller error
        let key = |p: usize, h: f64| (p, h);
        if best
            .as_ref()
            .is_none_or(|b| key(pinched, h) < key(b.pinched_edges, b.fidelity.hausdorff()))
        {
            best = Some(Surface {
                vertices: v,
                triangles: t,
                fidelity,
                convex: false,
                pinched_edges: pinched,
            });
        }
        if h <= s.tolerance || !reduced {
            break;
        }
        target *= 0.8 * s.tolerance / h;
    }
    match best {
        Some(c) => Ok(c),
        None => hull_fallback(mesh, steps, "simplification did not stay closed"),
    }
}

/// The convex hull as the collider of last resort.
fn hull_fallback(
    mesh: &WeldedMesh,
    mut steps: Vec<Step>,
    why: &'static str,
) -> Result<Surface, String> {
    let pts: Vec<DVec3> = mesh
        .vertices
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    let h = kiln_geometry::hull::hull(&pts).ok_or_else(|| format!("{why}, and no convex hull"))?;
    let vertices: Vec<[f32; 3]> = h.vertices.iter().map(|v| v.as_vec3().to_array()).collect();
    let triangles: Vec<[u32; 3]> = h
        .faces
        .iter()
        .flat_map(|(lp, _, _)| (1..lp.len() - 1).map(move |j| [lp[0], lp[j], lp[j + 1]]))
        .collect();
    steps.push(Step::ConvexHull { why });
    let volume = h.volume();
    let near_render = Nearest::new(&mesh.vertices, &mesh.triangles);
    let fidelity = measure(mesh, &near_render, &vertices, &triangles, volume, steps);
    Ok(Surface {
        vertices,
        triangles,
        fidelity,
        convex: true,
        pinched_edges: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_box_is_remeshed_closed_and_measured() {
        // a cube missing its top: not closed
        let v: Vec<[f32; 3]> = (0..8)
            .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32])
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
        ];
        let t: Vec<[u32; 3]> = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        let mesh = WeldedMesh {
            name: "open".into(),
            source_ids: (0..t.len() as u32).collect(),
            vertices: v,
            triangles: t,
        };
        let c = watertight(
            &mesh,
            SurfaceSettings {
                tolerance: 0.05,
                max_faces: 64,
            },
        )
        .unwrap();
        let (closed, vol) = closed_and_volume(&c.vertices, &c.triangles);
        assert!(closed && vol > 0.0);
        assert!(
            c.fidelity
                .steps
                .iter()
                .any(|s| matches!(s, Step::Remeshed { .. })),
            "{:?}",
            c.fidelity.steps
        );
        assert!(c.triangles.len() <= 64 * 32);
        // the walls come out about a voxel thick (40 across at 5 cm)
        assert!(c.fidelity.hausdorff() < 0.06, "{:?}", c.fidelity);
    }
}
