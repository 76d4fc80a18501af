//! Verification of the Bsp shape.

use super::VerifyError;
use super::tri_mesh::verify_tri_mesh;
use crate::bsp::{ArchivedBsp, BEVEL, EMPTY, MAX_DEPTH, MAX_NODES, SOLID};

/// Checks a BSP tree: at least one node and at most [`MAX_NODES`]; every
/// plane finite with a unit normal; every node's plane in range, bevel
/// nodes with nothing in front; every
/// child a leaf or a later node, each node but the root the child of
/// exactly one node (a tree: no cycles, no shared subtrees), no deeper than
/// [`MAX_DEPTH`]; the collider surface a non-empty, valid triangle mesh
/// (`verify_tri_mesh`). O(nodes + planes + mesh).
pub fn verify_bsp(s: usize, b: &ArchivedBsp) -> Result<(), VerifyError> {
    let bad = |problem: String| VerifyError::Collider {
        collider: s,
        problem,
    };
    let (nn, np) = (b.nodes.len(), b.planes.len());
    if nn == 0 || nn > MAX_NODES || np == 0 || np > 3 * MAX_NODES {
        return Err(bad(format!(
            "bsp with {nn} nodes and {np} planes (1..={MAX_NODES} nodes, some planes)"
        )));
    }
    if b.bevel_nodes.to_native() as usize > nn {
        return Err(bad("more bevel nodes than nodes".into()));
    }
    for (i, pl) in b.planes.iter().enumerate() {
        let pl = pl.map(|x| f64::from(x.to_native()));
        let len = (pl[0] * pl[0] + pl[1] * pl[1] + pl[2] * pl[2]).sqrt();
        if !pl.iter().all(|x| x.is_finite()) || (len - 1.0).abs() > 1e-4 {
            return Err(bad(format!("plane {i} is not finite with a unit normal")));
        }
    }
    // parents are seen before children, so one pass settles depth and
    // the single-parent rule
    let mut depth = vec![0u32; nn];
    depth[0] = 1;
    for (i, node) in b.nodes.iter().enumerate() {
        let plane = node.plane.to_native();
        if (plane & !BEVEL) as usize >= np {
            return Err(bad(format!("node {i}: plane {} of {np}", plane & !BEVEL)));
        }
        if plane & BEVEL != 0 && node.front.to_native() != EMPTY {
            return Err(bad(format!("node {i}: a bevel with something in front")));
        }
        if depth[i] == 0 {
            return Err(bad(format!("node {i} is no node's child")));
        }
        for c in [node.front.to_native(), node.back.to_native()] {
            if c == EMPTY || c == SOLID {
                continue;
            }
            let c = c as usize;
            if c <= i || c >= nn {
                return Err(bad(format!(
                    "node {i}: child {c} is not a later node (of {nn})"
                )));
            }
            if depth[c] != 0 {
                return Err(bad(format!("node {c} has two parents")));
            }
            depth[c] = depth[i] + 1;
            if depth[c] as usize > MAX_DEPTH {
                return Err(bad(format!("deeper than {MAX_DEPTH} levels")));
            }
        }
    }
    if b.surface.leaves.is_empty() {
        return Err(bad("bsp without a collider surface".into()));
    }
    verify_tri_mesh(s, &b.surface)
}
