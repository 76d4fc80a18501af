//! Verification of the Polytope collider and of the primitives.

use super::VerifyError;
use crate::polytope::{ArchivedPolytope, MAX_PLANES, MAX_VERTICES, NO_TWIN, PLANE_TOLERANCE};
use crate::primitive::{ArchivedCapsule, ArchivedCuboid, ArchivedSphere};

/// Checks a polytope: sizes within limits, every number finite, normals of
/// unit length, face loops of at least three vertices in range, and every
/// vertex on or behind every plane (within [`PLANE_TOLERANCE`] of the
/// polytope's size) and inside its box, and a face (or none) across every
/// edge.
pub fn verify_polytope(s: usize, p: &ArchivedPolytope) -> Result<(), VerifyError> {
    let bad = |problem: String| VerifyError::Collider {
        collider: s,
        problem,
    };
    let (np, nv) = (p.planes.len(), p.vertices.len());
    if !(4..=MAX_PLANES).contains(&np) || !(4..=MAX_VERTICES).contains(&nv) {
        return Err(bad(format!(
            "polytope with {np} planes and {nv} vertices (4..={MAX_PLANES} and 4..={MAX_VERTICES} allowed)"
        )));
    }
    let f = |v: &[rkyv::rend::f32_le; 3]| v.map(|x| x.to_native());
    let (min, max) = (f(&p.min), f(&p.max));
    if !(0..3).all(|k| min[k].is_finite() && max[k].is_finite() && min[k] <= max[k]) {
        return Err(bad("polytope box is not finite and ordered".into()));
    }
    let size = (0..3)
        .map(|k| min[k].abs().max(max[k].abs()))
        .fold(1.0f32, f32::max);
    let tol = PLANE_TOLERANCE * size;
    for (i, v) in p.vertices.iter().enumerate() {
        let v = f(v);
        if !(0..3).all(|k| v[k].is_finite() && v[k] >= min[k] && v[k] <= max[k]) {
            return Err(bad(format!("vertex {i} is not finite or outside the box")));
        }
    }
    for (i, pl) in p.planes.iter().enumerate() {
        let pl = pl.map(|x| f64::from(x.to_native()));
        let len = (pl[0] * pl[0] + pl[1] * pl[1] + pl[2] * pl[2]).sqrt();
        if !pl.iter().all(|x| x.is_finite()) || (len - 1.0).abs() > 1e-4 {
            return Err(bad(format!("plane {i} is not finite with a unit normal")));
        }
        for (j, v) in p.vertices.iter().enumerate() {
            let v = f(v).map(f64::from);
            let out = pl[0] * v[0] + pl[1] * v[1] + pl[2] * v[2] - pl[3];
            if out > f64::from(tol) {
                return Err(bad(format!("vertex {j} lies {out} outside plane {i}")));
            }
        }
    }
    if p.face_starts.len() != np + 1 || p.face_starts[0].to_native() != 0 {
        return Err(bad("face starts do not match the planes".into()));
    }
    for k in 0..np {
        let (a, b) = (
            p.face_starts[k].to_native(),
            p.face_starts[k + 1].to_native(),
        );
        if b < a.saturating_add(3) {
            return Err(bad(format!("face {k} has fewer than three vertices")));
        }
    }
    if p.face_starts[np].to_native() as usize != p.face_vertices.len() {
        return Err(bad("face loops do not end where the last face does".into()));
    }
    if let Some(v) = p
        .face_vertices
        .iter()
        .find(|v| v.to_native() as usize >= nv)
    {
        return Err(bad(format!("a face uses vertex {v} of {nv}")));
    }
    if p.face_twins.len() != p.face_vertices.len() {
        return Err(bad("face twins do not match the face loops".into()));
    }
    if let Some(t) = p
        .face_twins
        .iter()
        .map(|t| t.to_native())
        .find(|&t| t != NO_TWIN && t as usize >= np)
    {
        return Err(bad(format!("an edge names face {t} of {np} across it")));
    }
    Ok(())
}

/// Checks a box: finite, positive half extents.
pub fn verify_cuboid(s: usize, c: &ArchivedCuboid) -> Result<(), VerifyError> {
    let h = c.half_extents.map(|x| x.to_native());
    positive(s, "cuboid half extent", &h)
}

/// Checks a sphere: finite, positive radius.
pub fn verify_sphere(s: usize, b: &ArchivedSphere) -> Result<(), VerifyError> {
    positive(s, "sphere radius", &[b.radius.to_native()])
}

/// Checks a capsule: finite, positive radius and a non-negative half height.
pub fn verify_capsule(s: usize, c: &ArchivedCapsule) -> Result<(), VerifyError> {
    positive(s, "capsule radius", &[c.radius.to_native()])?;
    positive(s, "capsule half height", &[c.half_height.to_native() + 1.0])
}

fn positive(s: usize, what: &str, v: &[f32]) -> Result<(), VerifyError> {
    // sizes also stay far below f32::MAX so that sums of them stay finite
    if v.iter().all(|x| x.is_finite() && *x > 0.0 && *x < 1e30) {
        Ok(())
    } else {
        Err(VerifyError::Collider {
            collider: s,
            problem: format!("{what} {v:?} is not finite and positive"),
        })
    }
}
