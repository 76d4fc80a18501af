//! Contact and first time of impact between a convex query shape (a core
//! grown by a radius) and one convex piece of a collider (a core grown by
//! a radius: a triangle, a box, a polytope, a sphere's centre, a capsule's
//! segment), in world space and f64.
//!
//! Apart, the distance between the cores (GJK) less both radii is exact,
//! with the closest points; overlapping cores take the separating-axis
//! depth ([`super::sat`]). Casts advance conservatively on the exact
//! distance ([`super::gjk::cast`]).

use super::gjk::{self, Moved, Support};
use super::sat::{self, Polyhedral};
use glam::DVec3;

/// A contact between a query shape and a collider piece.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Touch {
    /// Point on the collider piece's surface.
    pub point: DVec3,
    /// Unit normal from the collider towards the query shape: the
    /// direction that separates them fastest.
    pub normal: DVec3,
    /// Penetration depth (0 when just touching).
    pub depth: f64,
}

/// The coordinate magnitude of a problem, for relative tolerances.
fn scale(a: &impl Support, b: &impl Support) -> f64 {
    a.any_point()
        .abs()
        .max(b.any_point().abs())
        .max_element()
        .max(1.0)
}

/// The deepest contact of `q` grown by `rq` with `c` grown by `rc`, if
/// they touch.
pub(crate) fn touch(q: &impl Polyhedral, rq: f64, c: &impl Polyhedral, rc: f64) -> Option<Touch> {
    let r = rq + rc;
    if let Some(s) = gjk::distance(q, c)
        && s.distance > 0.0
    {
        if s.distance > r {
            return None;
        }
        let n = (s.on_a - s.on_b) / s.distance;
        return Some(Touch {
            point: s.on_b + n * rc,
            normal: n,
            depth: r - s.distance,
        });
    }
    // the cores overlap (or touch): the shortest way out
    let (d, n) = sat::penetration(q, c);
    let d = d.max(0.0);
    // the collider's point where the query shape leaves it: its closest
    // point to the query moved just clear along the way out
    let hair = 1e-9 * scale(q, c);
    let point = match gjk::distance(&Moved(q, n * (d + hair)), c) {
        Some(s) => s.on_b,
        None => c.support(n),
    };
    Some(Touch {
        point: point + n * rc,
        normal: n,
        depth: d + r,
    })
}

/// The first contact of `q` grown by `rq`, moving by `motion · t` for `t`
/// in `[0, t_max]`, with `c` grown by `rc`: the time and the contact
/// there. A shape that starts touching answers `t = 0` — unless
/// `ignore_leaving` and the motion does not close in on the contact
/// (`motion · normal ≥ 0`): two convex shapes moving apart never meet
/// again, so that piece is then no contact at all.
pub(crate) fn cast(
    q: &impl Polyhedral,
    rq: f64,
    motion: DVec3,
    t_max: f64,
    c: &impl Polyhedral,
    rc: f64,
    ignore_leaving: bool,
) -> Option<(f64, Touch)> {
    if let Some(t0) = touch(q, rq, c, rc) {
        if ignore_leaving && t0.normal.dot(motion) >= 0.0 {
            return None;
        }
        return Some((0.0, t0));
    }
    let tolerance = 1e-9 * scale(q, c);
    let (t, _) = gjk::cast(q, rq + rc, motion, t_max, c, tolerance)?;
    let at = Moved(q, motion * t);
    // at t the gap is within the tolerance: the contact is the closest
    // points (or, when rounding put the cores in touch, the way out)
    let hit = match gjk::distance(&at, c) {
        Some(s) if s.distance > 0.0 => {
            let n = (s.on_a - s.on_b) / s.distance;
            Touch {
                point: s.on_b + n * rc,
                normal: n,
                depth: 0.0,
            }
        }
        _ => touch(&at, rq, c, rc)?,
    };
    Some((t, hit))
}
