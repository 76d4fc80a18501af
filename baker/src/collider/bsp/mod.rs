//! The Bsp collider of a concave solid: its watertight low-poly surface
//! ([`surface`]) and the solid-leaf tree built from it ([`tree`]), made
//! together because the one decides the other: a surface with more faces
//! than both its render mesh and the face budget, or whose tree is over
//! the node cap, is made again at twice the deviation (up to four times),
//! and says so. Only this module makes surfaces; `prepare` only says a
//! collider is a BSP.

pub mod surface;
pub mod tree;

pub use tree::BuiltBsp;

use super::note::{Note, Relaxed, Step, Steps, Tree};
use super::{BuiltCollider, polytope};
use crate::config::ColliderSettings;
use crate::geom::weld::WeldedMesh;
use crate::limits::MAX_DEVIATION;
use surface::{Surface, SurfaceSettings, watertight};

/// The concave solid of a welded mesh placed at most `scale` times its
/// size: a BSP tree — or a polytope when the collider had to be the convex
/// hull — with its note for the rule (the measured fidelity and the
/// tree); retried as the module says. `Err` says why no solid could be made (the triangles
/// then stand in).
pub fn build(
    welded: &WeldedMesh,
    settings: ColliderSettings,
    scale: f64,
) -> Result<(BuiltCollider, Note), String> {
    let mut tolerance = settings.max_deviation.get();
    let mut c = collider(welded, settings, tolerance, scale, None)?;
    let mut attempt = 0;
    loop {
        let f = &mut c.fidelity;
        // a collider with more faces than both the render mesh and the
        // face budget is no low-poly collider (simplification stalled
        // keeping a remesh closed): coarser, as for a tree over the node cap
        let budget = settings.max_faces.get().max(f.faces_in);
        if !c.convex && f.faces_out > budget && attempt < 4 {
            let relaxed = Relaxed::TooManyFaces {
                tolerance,
                faces: f.faces_out,
                render_faces: f.faces_in,
            };
            attempt += 1;
            tolerance *= 2.0;
            c = collider(welded, settings, tolerance, scale, Some(relaxed))?;
            continue;
        }
        let shape = if c.convex {
            let (poly, note) = polytope::polytope(&c.vertices, settings.max_planes.get())?;
            if let Some(n) = note {
                f.steps.push(Step::Capped(n));
            }
            BuiltCollider::Polytope(poly)
        } else {
            let built = tree::build(
                &c.vertices,
                &c.triangles,
                tree::BspOptions {
                    bevels: settings.bevels,
                    ..Default::default()
                },
            );
            match built {
                Ok(b) => BuiltCollider::Bsp(b),
                Err(e @ tree::BspError::TooLarge(_)) => {
                    let relaxed = Relaxed::BspTooLarge {
                        tolerance,
                        error: e.to_string(),
                    };
                    attempt += 1;
                    if attempt == 5 {
                        return Err(format!("no BSP tree: {relaxed}"));
                    }
                    tolerance *= 2.0;
                    c = collider(welded, settings, tolerance, scale, Some(relaxed))?;
                    continue;
                }
                Err(e) => return Err(format!("no BSP tree: {e}")),
            }
        };
        let tree = match &shape {
            BuiltCollider::Bsp(b) => Tree::Bsp {
                nodes: b.nodes.len(),
                bevel: b.bevel_nodes,
                depth: b.depth,
            },
            _ => Tree::Polytope,
        };
        let note = Note::Surface {
            fidelity: c.fidelity,
            tree,
        };
        return Ok((shape, note));
    }
}

/// The concave collider of a welded mesh ([`watertight`]:
/// watertight, simplified, measured) at `tolerance` (world units), its
/// fidelity in world units. `scale` is the largest world length of a mesh
/// unit over the placements: the tolerance is in world units, the mesh is
/// simplified in its own. `relaxed` says why the tolerance is not the
/// object's own ([`build`] relaxes it and says why). A
/// collider more than [`MAX_DEVIATION`] times the object's tolerance off is
/// refused: a bad solid is worse than triangles.
fn collider(
    welded: &WeldedMesh,
    settings: ColliderSettings,
    tolerance: f64,
    scale: f64,
    relaxed: Option<Relaxed>,
) -> Result<Surface, String> {
    let mut c = watertight(
        welded,
        SurfaceSettings {
            tolerance: tolerance / scale,
            max_faces: settings.max_faces.get(),
        },
    )?;
    let f = &mut c.fidelity;
    for d in [
        &mut f.render_to_collider,
        &mut f.collider_to_render,
        &mut f.mean,
    ] {
        *d *= scale;
    }
    if let Some(why) = relaxed {
        f.steps.push(Step::Relaxed { why, tolerance });
    }
    // a collider this far off (a level shell remeshed as one blob, a hull
    // of a helmet) is worse than the triangles
    if f.hausdorff() > MAX_DEVIATION * settings.max_deviation.get() {
        return Err(format!(
            "the collider would deviate {:.4} m from the render mesh, over {MAX_DEVIATION}× the tolerance ({})",
            f.hausdorff(),
            Steps(&f.steps)
        ));
    }
    Ok(c)
}

/// A solid for convex pieces, nearer the render mesh than a collider need
/// be: the watertight surface of `welded` within `tolerance` (mesh units),
/// with as few faces as that allows, and its tree without bevels (the
/// pieces take its solid cells; bevels would only cut them finer). Returns
/// the solid and how far its surface stands outside the render mesh (mesh
/// units, measured).
pub fn solid_for_pieces(
    welded: &WeldedMesh,
    tolerance: f64,
) -> Result<(BuiltCollider, f64), String> {
    let c = watertight(
        welded,
        SurfaceSettings {
            tolerance,
            max_faces: 4,
        },
    )?;
    let out = c.fidelity.collider_to_render;
    if c.convex {
        // a hull of last resort stands far off: no better than the collider
        return Err("the surface for pieces fell back to the convex hull".into());
    }
    let b = tree::build(
        &c.vertices,
        &c.triangles,
        tree::BspOptions {
            bevels: false,
            ..Default::default()
        },
    )
    .map_err(|e| format!("no BSP tree for pieces: {e}"))?;
    Ok((BuiltCollider::Bsp(b), out))
}

/// Most edges a hole [`fill_holes`] closes may have.
pub const MAX_HOLE_EDGES: usize = 64;

/// `mesh` with each hole closed by a fan from the hole's centroid, when
/// every hole is a simple loop of at most [`MAX_HOLE_EDGES`] edges and
/// every edge is used once each way or once only (on a hole); `None` when
/// the mesh is closed already or its holes are not that simple (the
/// watertight surface then remeshes it).
pub fn fill_holes(mesh: &WeldedMesh) -> Option<WeldedMesh> {
    use std::collections::{BTreeMap, HashMap};
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    // a hole's edge is used one way only; the fill runs it the other way
    let mut next: BTreeMap<u32, u32> = BTreeMap::new();
    for (&(a, b), &n) in &directed {
        let back = directed.get(&(b, a)).copied().unwrap_or(0);
        if n > 1 || back > 1 {
            return None;
        }
        if back == 0 && next.insert(b, a).is_some() {
            // two holes meet at a vertex
            return None;
        }
    }
    if next.is_empty() {
        return None;
    }
    let mut out = mesh.clone();
    let source = mesh.source_ids.iter().max().map_or(0, |m| m + 1);
    let mut left = next;
    while let Some((&start, _)) = left.iter().next() {
        let mut ring = vec![start];
        let mut at = start;
        loop {
            let to = left.remove(&at)?;
            if to == start {
                break;
            }
            if ring.len() >= MAX_HOLE_EDGES {
                return None;
            }
            ring.push(to);
            at = to;
        }
        let c = ring
            .iter()
            .map(|&v| glam::DVec3::from(mesh.vertices[v as usize].map(f64::from)))
            .sum::<glam::DVec3>()
            / ring.len() as f64;
        let ci = out.vertices.len() as u32;
        out.vertices.push(c.as_vec3().to_array());
        for k in 0..ring.len() {
            out.triangles
                .push([ring[k], ring[(k + 1) % ring.len()], ci]);
            out.source_ids.push(source);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::topology::closed_and_volume;
    use crate::geom::weld::weld;
    use crate::scene::SceneMesh;

    #[test]
    fn holes_are_filled_only_when_each_is_a_simple_loop() {
        let cube = weld(&SceneMesh::cuboid("cube", [0.0; 3], [1.0, 2.0, 3.0]));
        assert_eq!(
            closed_and_volume(&cube.vertices, &cube.triangles),
            (true, 48.0)
        );
        // closed already: nothing to fill
        assert!(fill_holes(&cube).is_none());
        // a face missing: the square hole closed, the volume the box's
        let mut open = cube.clone();
        open.triangles.drain(0..2);
        open.source_ids.drain(0..2);
        assert!(!closed_and_volume(&open.vertices, &open.triangles).0);
        let filled = fill_holes(&open).expect("one square hole");
        let (closed, volume) = closed_and_volume(&filled.vertices, &filled.triangles);
        assert!(closed && (volume - 48.0).abs() < 1e-9, "{volume}");
        assert_eq!(filled.triangles.len(), 10 + 4);
        // two faces missing that share an edge: one hole of six edges,
        // not flat (its fan cuts the missing corner off)
        let faces = |t: &[u32; 3]| {
            let n = glam::Vec3::from(cube.vertices[t[1] as usize])
                - glam::Vec3::from(cube.vertices[t[0] as usize]);
            let m = glam::Vec3::from(cube.vertices[t[2] as usize])
                - glam::Vec3::from(cube.vertices[t[0] as usize]);
            n.cross(m).normalize()
        };
        let without = |drop: &[glam::Vec3]| {
            let mut m = cube.clone();
            let keep: Vec<bool> = m
                .triangles
                .iter()
                .map(|t| !drop.iter().any(|d| faces(t).dot(*d) > 0.99))
                .collect();
            let mut k = keep.iter();
            m.triangles.retain(|_| *k.next().unwrap());
            let mut k = keep.iter();
            m.source_ids.retain(|_| *k.next().unwrap());
            m
        };
        let two = fill_holes(&without(&[glam::Vec3::X, glam::Vec3::Y])).expect("one hole");
        let (closed, volume) = closed_and_volume(&two.vertices, &two.triangles);
        assert!(closed && volume > 0.0 && volume <= 48.0, "{volume}");
        // a box's two opposite faces missing: two square holes, both filled
        let tube = fill_holes(&without(&[glam::Vec3::Z, glam::Vec3::NEG_Z])).expect("two holes");
        let (closed, volume) = closed_and_volume(&tube.vertices, &tube.triangles);
        assert!(closed && (volume - 48.0).abs() < 1e-9, "{volume}");
    }
}
