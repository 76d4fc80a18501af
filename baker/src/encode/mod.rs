//! Encode: the builders' colliders and placements flattened into the
//! archive's types (`kiln_formats`), ready for rkyv. Mesh trees are
//! collapsed to wide nodes and quantised here ([`quantize`]); vertex
//! axes that lie on a grid are stored as exact 16-bit steps ([`grid`]);
//! leaves place their corners and source ids by runs ([`leaves`]).

pub mod grid;
pub mod leaves;
pub mod quantize;

use crate::collider::bsp::BuiltBsp;
use crate::collider::polytope::BuiltPolytope;
use crate::collider::tri_mesh::BuiltTriMesh;
use crate::collider::{BuiltCollider, BuiltLevel, SurfaceReport};
use crate::geom::fit::Primitive;
use crate::geom::sah::BinNode;
use crate::geom::sah::leaf_range;
use crate::scene::SceneBody;
use glam::DAffine3;
use kiln_formats::bsp::{Bsp, BspNode};
use kiln_formats::level::{
    AUTHORED_CENTRE, AUTHORED_INERTIA, AUTHORED_MASS, Affine, Body, Collider, Decomposition,
    Instance, Level, MOTION, PieceKind, PieceShape, TopNodes, TopTree, name_runs,
};
use kiln_formats::polytope::Polytope;
use kiln_formats::primitive::{Capsule, Cuboid, Sphere};
use kiln_formats::tri_mesh::{MeshTree, SphereTree, TreeKind, TriMesh};
use rayon::prelude::*;

/// The archive body of a built level, with its collision layer names and
/// each scene instance's layer mask. Takes the level whole, so the large
/// arrays (vertices, leaves) move into the archive types instead of being
/// copied; colliders are encoded in parallel, in order. Returns the concave
/// colliders' reports, which the archive does not hold.
pub fn level(
    built: BuiltLevel,
    layer_names: Vec<String>,
    layers: &[u32],
    bodies: (&[SceneBody], &[Option<usize>]),
) -> (Level, Vec<SurfaceReport>) {
    // static instances in the top tree's leaf order (leaf k is instance
    // k), then the movers and triggers
    let (top, order) = top_tree(&built.top);
    debug_assert_eq!(order.len(), built.in_top);
    let placed: Vec<&crate::collider::Placed> = order
        .iter()
        .map(|&i| &built.placed[i])
        .chain(&built.placed[built.in_top..])
        .collect();
    debug_assert_eq!(placed.len(), built.placed.len());
    let mut affines = Vec::new();
    let instances = placed
        .iter()
        .map(|p| {
            let (rotation, translation) = p.similarity.unwrap_or_else(|| {
                affines.push(Affine {
                    world_from_local: to_rows(&p.transform),
                    local_from_world: to_rows(&p.transform.inverse()),
                });
                ([0.0; 4], [(affines.len() - 1) as f32, 0.0, 0.0])
            });
            Instance {
                rotation,
                translation,
                collider: p.collider as u32,
                source: p.source as u32,
                layers: layers[p.source],
                flags: p.flags,
            }
        })
        .collect();
    let bodies = rigid_bodies(&placed, bodies);
    // names and rules in runs by source
    let mut by_source = placed;
    by_source.sort_unstable_by_key(|p| p.source);
    let (names, rules) = name_runs(
        by_source
            .iter()
            .map(|p| (p.source as u32, p.name.as_str(), p.rule.as_str())),
    );
    let level = Level {
        instances,
        affines,
        names,
        rules,
        layer_names,
        top,
        colliders: built.colliders.into_par_iter().map(collider).collect(),
        decompositions: built
            .pieces
            .iter()
            .enumerate()
            .filter_map(|(k, b)| {
                let b = b.as_ref()?;
                Some(Decomposition {
                    collider: k as u32,
                    pieces: b.decomposition.pieces.iter().map(polytope).collect(),
                    shapes: b
                        .decomposition
                        .primitives
                        .iter()
                        .map(|p| p.as_ref().map_or(PieceShape::HULL, piece_shape))
                        .collect(),
                    concavity: at_least(b.concavity),
                    coverage: at_least(b.coverage),
                })
            })
            .collect(),
        bodies,
    };
    (level, built.surfaces)
}

/// The authored rigid bodies (`bodies.0`, with each scene instance's body
/// in `bodies.1`) as archive records: each takes the placed instances of
/// its objects that kept its motion (a project rule may have moved one
/// otherwise, or left it without a collider); a body left with none is
/// dropped. `placed` is in instance order.
fn rigid_bodies(
    placed: &[&crate::collider::Placed],
    (bodies, body_of): (&[SceneBody], &[Option<usize>]),
) -> Vec<Body> {
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); bodies.len()];
    for (i, p) in placed.iter().enumerate() {
        if let Some(b) = body_of.get(p.source).copied().flatten()
            && p.flags & MOTION == bodies[b].motion.bits()
        {
            members[b].push(i as u32);
        }
    }
    bodies
        .iter()
        .zip(members)
        .filter(|(_, m)| !m.is_empty())
        .map(|(b, members)| {
            let (q, t) = (
                kiln_geometry::frame::rotation_of(&b.transform.matrix3),
                b.transform.translation,
            );
            let m = &b.mass;
            let mut authored = 0;
            let mut flag = |on: bool, bit: u32| authored |= if on { bit } else { 0 };
            flag(m.mass.is_some(), AUTHORED_MASS);
            flag(m.centre.is_some(), AUTHORED_CENTRE);
            flag(m.inertia.is_some(), AUTHORED_INERTIA);
            // the centre through the node's scale, into the rigid frame
            let centre = m.centre.map_or(glam::DVec3::ZERO, |c| {
                q.inverse() * (b.transform.matrix3 * c)
            });
            let (diagonal, axes) = m
                .inertia
                .unwrap_or((glam::DVec3::ZERO, glam::DQuat::IDENTITY));
            Body {
                name: b.name.clone(),
                motion: b.motion.bits(),
                rotation: q.as_quat().to_array(),
                translation: t.as_vec3().to_array(),
                members,
                authored,
                mass: m.mass.unwrap_or(0.0) as f32,
                centre_of_mass: centre.as_vec3().to_array(),
                inertia_diagonal: diagonal.as_vec3().to_array(),
                inertia_orientation: axes.as_quat().normalize().to_array(),
            }
        })
        .collect()
}

/// A primitive that fills a piece, in archive form: its parameters, its
/// frame's rotation as a unit quaternion and its centre.
fn piece_shape((prim, frame): &(Primitive, DAffine3)) -> PieceShape {
    let kind = match *prim {
        Primitive::Cuboid(h) => PieceKind::Cuboid(Cuboid { half_extents: h }),
        Primitive::Sphere(r) => PieceKind::Sphere(Sphere { radius: r }),
        Primitive::Capsule(half_height, radius) => PieceKind::Capsule(Capsule {
            half_height,
            radius,
        }),
    };
    let q = glam::DQuat::from_mat3(&frame.matrix3).normalize();
    PieceShape {
        kind,
        rotation: q.as_quat().to_array(),
        centre: frame.translation.as_vec3().to_array(),
    }
}

fn collider(s: BuiltCollider) -> Collider {
    match s {
        BuiltCollider::TriMesh(t) => Collider::TriMesh(Box::new(tri_mesh(t))),
        BuiltCollider::Polytope(p) => Collider::Polytope(polytope(&p)),
        BuiltCollider::Primitive(Primitive::Cuboid(h)) => {
            Collider::Cuboid(Cuboid { half_extents: h })
        }
        BuiltCollider::Primitive(Primitive::Sphere(r)) => Collider::Sphere(Sphere { radius: r }),
        BuiltCollider::Primitive(Primitive::Capsule(h, r)) => Collider::Capsule(Capsule {
            half_height: h,
            radius: r,
        }),
        BuiltCollider::Bsp(b) => Collider::Bsp(Box::new(bsp(b))),
    }
}

/// The corners of the box around `vertices`.
pub(crate) fn bounds(vertices: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let of = |vertices: &[[f32; 3]]| {
        let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for v in vertices {
            for k in 0..3 {
                min[k] = min[k].min(v[k]);
                max[k] = max[k].max(v[k]);
            }
        }
        (min, max)
    };
    // chunks on the pool for a large mesh: the least and greatest of each
    // axis do not depend on how the list is cut (a NaN is skipped either way)
    if vertices.len() < BOUNDS_GRAIN {
        return of(vertices);
    }
    let join = |(a, b): ([f32; 3], [f32; 3]), (c, d): ([f32; 3], [f32; 3])| {
        (
            [0, 1, 2].map(|k| a[k].min(c[k])),
            [0, 1, 2].map(|k| b[k].max(d[k])),
        )
    };
    vertices
        .par_chunks(BOUNDS_GRAIN)
        .map(of)
        .reduce(|| of(&[]), join)
}

/// Vertices a task takes when [`bounds`] runs on the pool.
const BOUNDS_GRAIN: usize = 1 << 16;

/// A built BSP tree in archive form.
fn bsp(b: BuiltBsp) -> Bsp {
    Bsp {
        planes: b.planes,
        nodes: b
            .nodes
            .iter()
            .map(|&[plane, front, back]| BspNode { plane, front, back })
            .collect(),
        bevel_nodes: b.bevel_nodes,
        surface: tri_mesh(b.surface),
    }
}

/// A built polytope in archive form: f32 planes, loops flattened.
/// `x` in f32, rounded up: a bound stays a bound.
fn at_least(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x { f.next_up() } else { f }
}

fn polytope(p: &BuiltPolytope) -> Polytope {
    // the offsets are recomputed from the same f32 vertices, as the
    // builder computed them
    let normals: Vec<[f64; 3]> = p.planes.iter().map(|(n, _)| n.to_array()).collect();
    Polytope::from_faces(&normals, p.vertices.clone(), &p.faces)
}

/// Top-level trees of at most this many instances are stored with float
/// nodes, larger ones quantised (see [`TopNodes`] for the measurements
/// behind the choice): about 1,400 nodes, 140 KiB, which stays in a
/// core's second-level cache.
pub const FLOAT_TOP_LEAVES: usize = 4096;

/// The top-level tree in 4-wide box nodes (float
/// nodes up to [`FLOAT_TOP_LEAVES`] instances, quantised above), and its
/// leaf order: leaf `k` holds the placement `order[k]` (its builder
/// leaves hold `leaf_data(placement, 1)`), so instance `k` must be that
/// placement.
fn top_tree(nodes: &[BinNode]) -> (TopTree, Vec<usize>) {
    // a binary tree of n leaves has 2n - 1 nodes
    let (root, leaves, nodes_out) = if nodes.len() <= 2 * FLOAT_TOP_LEAVES {
        let t = quantize::encode_float_boxes(nodes);
        (t.root, t.leaves, TopNodes::Floats(t.nodes))
    } else {
        let t = quantize::encode_boxes(nodes);
        (t.root, t.leaves, TopNodes::Boxes(t.nodes))
    };
    let (min, max) = nodes
        .first()
        .map_or(([0.0; 3], [0.0; 3]), |n| (n.min, n.max));
    let order: Vec<usize> = leaves.iter().map(|&d| leaf_range(d).0 as usize).collect();
    let top = TopTree {
        min,
        max,
        root,
        nodes: nodes_out,
        leaves: order.len() as u32,
    };
    (top, order)
}

/// A BuiltTriMesh as an archived TriMesh: the binary tree collapsed to
/// wide inner nodes (8-wide boxes, 4-wide spheres) holding their
/// children's quantised volumes.
pub fn tri_mesh(t: BuiltTriMesh) -> TriMesh {
    let (root, order, tree) = match t.kind {
        TreeKind::Aabb => {
            let e = quantize::encode_wide_boxes(&t.nodes);
            (e.root, e.leaves, MeshTree::Boxes(e.nodes))
        }
        TreeKind::Sphere => {
            let (e, frame) = quantize::encode_spheres(&t.nodes, |d| t.leaf_points(d));
            let nodes = e.nodes;
            (
                e.root,
                e.leaves,
                MeshTree::Spheres(SphereTree { frame, nodes }),
            )
        }
    };
    // the builder's leaves in the archive's leaf order, on the pool (the
    // 2.1M terrain's four maps: 11 ms on one thread, 6–7 on two)
    let order: Vec<usize> = order
        .par_iter()
        .map(|&d| leaf_range(d).0 as usize)
        .collect();
    let quads: Vec<[u32; 4]> = order.par_iter().map(|&i| t.leaves[i]).collect();
    let ids: Vec<[u32; 2]> = order.par_iter().map(|&i| t.source_ids[i]).collect();
    let flat: Vec<u8> = order.par_iter().map(|&i| t.flat_edges[i]).collect();
    let placed = leaves::place(t.vertices, &quads, &ids, &flat);
    TriMesh {
        min: t.nodes.first().map_or([0.0; 3], |n| n.min),
        max: t.nodes.first().map_or([0.0; 3], |n| n.max),
        name: t.name,
        vertices: grid::pack(&placed.vertices),
        leaves: placed.leaves,
        bases: placed.bases,
        listed_corners: placed.listed_corners,
        listed_ids: placed.listed_ids,
        second_ids: placed.second_ids,
        root,
        tree,
    }
}

/// 3×4 row-major, f32.
pub fn to_rows(a: &DAffine3) -> [f32; 12] {
    crate::geom::to_rows64(a).map(|v| v as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

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
