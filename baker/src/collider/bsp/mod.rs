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
