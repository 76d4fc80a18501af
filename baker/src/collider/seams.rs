//! Flat edges across objects: where two triangle meshes meet along a
//! border edge (the same two world points) and continue each other in one
//! plane — floor tiles laid side by side, a road meeting a pavement — the
//! seam is no edge of the level's surface, and a shape sliding across it
//! must not catch on it. Both sides' edges are marked flat, as edges inside
//! one mesh are (`tri_mesh`'s flat edges).
//!
//! Flags live on the collider, so only meshes placed once take part: a mesh
//! instanced many times keeps its border edges (one instance's neighbour
//! is not another's). Endpoints are matched by their world positions
//! rounded to f32, so seams that meet to the bit after placement match.

use super::tri_mesh::{BuiltTriMesh, continues_at};
use super::{BuiltCollider, Placed};
use glam::DVec3;
use kiln_formats::tri_mesh::leaf_triangle;

/// A border edge of a mesh in world space, as sorted: its f32-rounded
/// endpoints as the key (low, high), then which collider, leaf triangle and
/// edge, and which of the meshes taking part it came from. 40 bytes: the
/// f64 points are computed again for the few edges that meet (sorting
/// 120-byte records that carried them had been a twentieth of a one-mesh
/// level's bake, before such a level skipped the pass).
struct Border {
    key: ([u32; 3], [u32; 3]),
    collider: u32,
    tri: u32,
    mesh: u32,
    edge: u8,
}

/// Marks seams between meshes placed once as flat edges on both sides.
/// Only static objects take part: a mover's or trigger's mesh (which may
/// be anywhere at run time) counts as placed more than once.
pub fn join(colliders: &mut [BuiltCollider], placed: &[Placed]) {
    let mut uses = vec![0usize; colliders.len()];
    for p in placed {
        uses[p.collider] += if p.flags & kiln_formats::level::LOOSE == 0 {
            1
        } else {
            2
        };
    }
    // the meshes that take part: a triangle mesh placed once, with border
    // edges, and its placement
    let meshes: Vec<(&Placed, &BuiltTriMesh)> = placed
        .iter()
        .filter(|p| uses[p.collider] == 1)
        .filter_map(|p| match &colliders[p.collider] {
            BuiltCollider::TriMesh(t) if !t.borders.is_empty() => Some((p, t)),
            _ => None,
        })
        .collect();
    // a seam joins two colliders: with fewer than two, there is none (a
    // level of one mesh skips the pass)
    if meshes.len() < 2 {
        return;
    }
    let mut borders = Vec::with_capacity(meshes.iter().map(|(_, t)| t.borders.len()).sum());
    for (m, &(p, t)) in meshes.iter().enumerate() {
        let key = |v: u32| {
            world_point(p, t, v)
                .to_array()
                .map(|c| (c as f32).to_bits())
        };
        for &(tri, edge) in &t.borders {
            let v = leaf_triangle(t.leaves[tri / 2], (tri % 2) as u32);
            let (ka, kb) = (key(v[edge]), key(v[(edge + 1) % 3]));
            borders.push(Border {
                key: (ka.min(kb), ka.max(kb)),
                collider: p.collider as u32,
                tri: tri as u32,
                mesh: m as u32,
                edge: edge as u8,
            });
        }
    }
    // by key, then collider, triangle and edge: the pairs below, and which
    // side of a pair the flatness test measures from, do not depend on the
    // order the sort meets equal keys in
    borders.sort_unstable_by(|x, y| {
        (x.key, x.collider, x.tri, x.edge).cmp(&(y.key, y.collider, y.tri, y.edge))
    });
    // an edge as its triangle walks it, then the triangle's third corner
    let points = |b: &Border| {
        let (p, t) = meshes[b.mesh as usize];
        let (tri, edge) = (b.tri as usize, b.edge as usize);
        let v = leaf_triangle(t.leaves[tri / 2], (tri % 2) as u32);
        [0, 1, 2].map(|k| world_point(p, t, v[(edge + k) % 3]))
    };
    let flat: Vec<(usize, usize, u8)> = borders
        .chunk_by(|x, y| x.key == y.key)
        .filter_map(|group| match group {
            [x, y] if x.collider != y.collider => Some((x, y)),
            _ => None,
        })
        .filter(|(x, y)| {
            let (px, py) = (points(x), points(y));
            continues_at([px[0], px[1]], px[2], py[2])
        })
        .flat_map(|(x, y)| [x, y].map(|b| (b.collider as usize, b.tri as usize, b.edge)))
        .collect();
    for (collider, tri, edge) in flat {
        if let BuiltCollider::TriMesh(t) = &mut colliders[collider] {
            t.flat_edges[tri / 2] |= 1 << (3 * (tri % 2) + edge as usize);
        }
    }
}

/// Vertex `v` of `t`, placed by `p`, in f64 world space.
fn world_point(p: &Placed, t: &BuiltTriMesh, v: u32) -> DVec3 {
    p.transform
        .transform_point3(DVec3::from(t.vertices[v as usize].map(f64::from)))
}

#[cfg(test)]
mod tests {
    use crate::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};
    use glam::{DAffine3, DQuat, DVec3};
    use kiln_formats::tri_mesh::FLAT_BITS;
    use kiln_runtime::Level;

    /// A flat 2 × 2 m square of two triangles in the xz-plane from the
    /// origin.
    fn tile() -> SceneMesh {
        SceneMesh::new(
            "tile",
            vec![
                [0.0, 0.0, 0.0],
                [2.0, 0.0, 0.0],
                [2.0, 0.0, 2.0],
                [0.0, 0.0, 2.0],
            ],
            &[[0, 2, 1], [0, 3, 2]],
        )
    }

    /// Flat-edge bits over every triangle mesh of the baked scene.
    fn flat_bits(meshes: Vec<SceneMesh>, placed: &[(usize, DAffine3)]) -> u32 {
        let scene = Scene {
            meshes,
            instances: placed
                .iter()
                .enumerate()
                .map(|(i, &(mesh, transform))| SceneInstance {
                    name: format!("obj{i}"),
                    mesh,
                    transform,
                    extras_collider: Some("mesh".into()),
                    ..SceneInstance::default()
                })
                .collect(),
            ..Scene::default()
        };
        let level = Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap();
        level
            .archive()
            .colliders
            .iter()
            .map(|s| match s {
                kiln_formats::ArchivedCollider::TriMesh(m) => m
                    .leaves
                    .iter()
                    .map(|l| (l.bits & FLAT_BITS).count_ones())
                    .sum(),
                _ => 0,
            })
            .sum()
    }

    #[test]
    fn tiles_side_by_side_join_flat_and_a_wall_does_not() {
        let at = |x: f64| DAffine3::from_translation(DVec3::new(x, 0.0, 0.0));
        // one tile: only its diagonal is flat (two bits)
        let one = flat_bits(vec![tile()], &[(0, at(0.0))]);
        assert_eq!(one, 2);
        // two copies of one mesh, side by side: instanced, so no seam
        assert_eq!(flat_bits(vec![tile()], &[(0, at(0.0)), (0, at(2.0))]), 2);
        // two meshes side by side: the shared border edge is flat on both
        assert_eq!(
            flat_bits(vec![tile(), tile()], &[(0, at(0.0)), (1, at(2.0))]),
            2 + 2 + 2
        );
        // a gap of a millimetre: no shared edge
        assert_eq!(
            flat_bits(vec![tile(), tile()], &[(0, at(0.0)), (1, at(2.001))]),
            4
        );
        // a wall standing on the tile's edge: a real edge
        let wall = DAffine3::from_rotation_translation(
            DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2),
            DVec3::new(2.0, 0.0, 0.0),
        );
        assert_eq!(
            flat_bits(vec![tile(), tile()], &[(0, at(0.0)), (1, wall)]),
            4
        );
    }
}
