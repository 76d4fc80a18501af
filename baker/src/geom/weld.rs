//! Welding by exact position: every step that looks for shared edges
//! (classification's closedness test, the concave collider, the triangle
//! tree's quad pairing) starts from a welded mesh.

use crate::scene::SceneMesh;
use rayon::prelude::*;

/// A mesh welded by exact position, unused vertices dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeldedMesh {
    /// Source mesh name.
    pub name: String,
    /// Unique vertex positions.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as indices into `vertices` (source order).
    pub triangles: Vec<[u32; 3]>,
    /// Source triangle id of each triangle.
    pub source_ids: Vec<u32>,
}

/// Every mesh of a scene welded, in parallel (one result per mesh, in order).
pub fn weld_all(scene: &crate::scene::Scene) -> Vec<WeldedMesh> {
    scene.meshes.par_iter().map(weld).collect()
}

/// Welds `mesh` by position.
pub fn weld(mesh: &SceneMesh) -> WeldedMesh {
    let (vertices, triangles) = weld_positions(&mesh.positions, &mesh.triangles);
    WeldedMesh {
        name: mesh.name.clone(),
        vertices,
        triangles,
        source_ids: mesh.source_ids.clone(),
    }
}

/// Merges vertices with bit-identical positions (after mapping -0.0 to 0.0)
/// and drops unused ones.
fn weld_positions(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    if triangles.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let canon: Vec<[f32; 3]> = positions
        .par_iter()
        .map(|p| p.map(|c| if c == 0.0 { 0.0 } else { c }))
        .collect();
    let (count, remap) = meshopt::generate_vertex_remap(&canon, Some(triangles.as_flattened()));
    let vertices = meshopt::remap_vertex_buffer(&canon, count, &remap);
    let tris = triangles
        .par_iter()
        .map(|t| t.map(|v| remap[v as usize]))
        .collect();
    (vertices, tris)
}
