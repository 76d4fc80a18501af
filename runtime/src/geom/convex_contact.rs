//! Contact and first time of impact between a convex query shape (a core
//! grown by a radius) and one convex piece of a collider (a core grown by
//! a radius: a triangle, a box, a polytope, a sphere's centre, a capsule's
//! segment), in world space and f64.
//!
//! Apart, the distance between the cores (GJK) less both radii is exact,
//! with the closest points; overlapping cores take the separating-axis
//! depth ([`super::sat`]). Casts advance conservatively on the exact
//! distance ([`super::gjk::cast`]).

use super::contact_point::{self, from_segment, on_segment};
use super::epa;
use super::gjk::{
    self, Gap, Moved, OrientedBox, Point, Segment, Separation, Support, contact_eps, scale,
};
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

/// Whether `q` grown by `rq` touches `c` grown by `rc`, no depth (yes/no
/// tests): the closed-form axis scan for boxes against boxes and
/// triangles, else the GJK distance alone.
pub(crate) fn touches(q: &impl Polyhedral, rq: f64, c: &impl Polyhedral, rc: f64) -> bool {
    let r = rq + rc;
    if r == 0.0
        && let Some(yes) = sat::closed_form_touches(q, c, contact_eps(q, c))
    {
        return yes;
    }
    match gjk::search(q, c, r, r, None) {
        Gap::Beyond => false,
        Gap::Apart(s) => s.distance <= r,
        Gap::Near | Gap::Overlap => true,
    }
}

/// The deepest contact of `q` grown by `rq` with `c` grown by `rc`, if
/// they touch.
pub(crate) fn touch(q: &impl Polyhedral, rq: f64, c: &impl Polyhedral, rc: f64) -> Option<Touch> {
    let eps = contact_eps(q, c);
    if rq + rc == 0.0
        && let Some((d, u)) = sat::closed_form(q, c, eps)
    {
        // the closed form's axis, measured with support values (what
        // `sat::penetration` would compute again)
        return (d >= -eps).then(|| way_out(q, rq, c, rc, sat::along(q, c, u)));
    }
    match gjk::search_enclosing(q, c, rq + rc, -1.0, None) {
        (Gap::Beyond, _) => None,
        // apart by less than the closest points' rounding: touching
        (Gap::Apart(s), tet) if s.normal() == DVec3::ZERO => Some(inside(q, rq, c, rc, tet)),
        (Gap::Apart(s), _) => apart(s, rq, rc),
        (_, tet) => Some(inside(q, rq, c, rc, tet)),
    }
}

/// The closest point of box `b` to `p`, with `p`'s box coordinates
/// (Ericson, "Real-Time Collision Detection", 2004, §5.1.4).
fn box_closest(b: &OrientedBox, p: DVec3) -> (DVec3, DVec3) {
    let d = p - b.center;
    let local = DVec3::new(d.dot(b.axes[0]), d.dot(b.axes[1]), d.dot(b.axes[2]));
    let c = local.clamp(-b.half, b.half);
    (
        b.center + b.axes[0] * c.x + b.axes[1] * c.y + b.axes[2] * c.z,
        local,
    )
}

/// [`touch`] of a query core grown by `rq` with a point `p` grown by `rc`
/// (a sphere collider) in closed form, where there is one: the core's
/// closest point to `p` when apart; for a box holding `p`, the way out
/// through the face nearest `p`. `None`: no closed form (a hull, or `p`
/// on a segment), the general path answers. Spheres against boxes and
/// capsules are the commonest pair in a game, and the general path ran
/// GJK and then the expanding polytope for them.
pub(crate) fn point_touch(q: &CoreRef, rq: f64, p: DVec3, rc: f64) -> Option<Option<Touch>> {
    let r = rq + rc;
    let on_q = match q {
        CoreRef::Cuboid(b) => {
            let (on_q, local) = box_closest(b, p);
            if local.abs().cmple(b.half).all() {
                // inside (or on the surface): out through the nearest
                // face, the box moving away from p
                let room = b.half - local.abs();
                let k = if room.x <= room.y && room.x <= room.z {
                    0
                } else if room.y <= room.z {
                    1
                } else {
                    2
                };
                let side = if local[k] < 0.0 { 1.0 } else { -1.0 };
                let n = b.axes[k] * side;
                return Some(Some(Touch {
                    point: p + n * rc,
                    normal: n,
                    depth: room[k].max(0.0) + r,
                }));
            }
            on_q
        }
        CoreRef::Segment(s) => return Some(from_core(s.0, s.1, p, rq, rc)),
        // as a capsule whose ends meet
        CoreRef::Point(a) => return Some(from_core(a.0, a.0, p, rq, rc)),
        CoreRef::Hull(h) => return hull_point_touch(*h, rq, p, rc),
    };
    let d = on_q - p;
    let distance = d.length();
    if distance == 0.0 {
        return None;
    }
    Some(apart(
        Separation {
            distance,
            on_a: on_q,
            on_b: p,
        },
        rq,
        rc,
    ))
}

/// [`point_touch`] and then [`settle`] for a box with no radius against
/// a ball (centre `p`, radius `rc`) whose centre lies outside the box: the
/// same contact and the same settled point, bit for bit, with the centre's
/// box coordinates found once for both (the commonest pair of a box
/// overlap on a field of balls). `None`: the centre in the box, or on its
/// surface to the last bit (the general calls answer).
pub(crate) fn box_ball_contact(b: &OrientedBox, p: DVec3, rc: f64) -> Option<Option<Touch>> {
    let (on_q, local) = box_closest(b, p);
    if local.abs().cmple(b.half).all() {
        return None;
    }
    let distance = (on_q - p).length();
    if distance == 0.0 {
        return None;
    }
    let separation = Separation {
        distance,
        on_a: on_q,
        on_b: p,
    };
    let Some(t) = apart(separation, 0.0, rc) else {
        return Some(None);
    };
    let tol = settle_tol(b, &Point(p));
    let contact = (t.point, t.normal, t.depth);
    Some(Some(
        match contact_point::box_in_ball_from(b, p, local, rc, contact, tol) {
            contact_point::InBall::Point(point) => Touch { point, ..t },
            contact_point::InBall::Wholly => t,
            contact_point::InBall::Open => settle(b, 0.0, &Point(p), rc, t),
        },
    ))
}

/// The contact of the segment `a`–`b` grown by `rq` with the point `p`
/// grown by `rc`, if they touch: out across the axis where `p` is beside
/// it, or on it ([`from_segment`]).
fn from_core(a: DVec3, b: DVec3, p: DVec3, rq: f64, rc: f64) -> Option<Touch> {
    let (u, distance) = from_segment(a, b, p);
    (distance <= rq + rc).then(|| Touch {
        point: p - u * rc,
        normal: -u,
        depth: rq + rc - distance,
    })
}

/// [`touches`] of a query core grown by `rq` with a point `p` grown by
/// `rc`, in closed form where [`point_touch`] has one.
pub(crate) fn point_touches(q: &CoreRef, rq: f64, p: DVec3, rc: f64) -> Option<bool> {
    let on_q = match q {
        CoreRef::Cuboid(b) => box_closest(b, p).0,
        CoreRef::Segment(s) => on_segment(s.0, s.1, p),
        CoreRef::Point(a) => a.0,
        // GJK's yes/no stops at the first separating direction; the face
        // planes' pass cost more than it saved (hull yes/no on 2,000 balls:
        // 3.09-3.30 M a second with it, 3.93 M without)
        CoreRef::Hull(_) => return None,
    };
    Some((on_q - p).length() <= rq + rc)
}

/// [`point_touch`] for a hull: where `p` lies inside the hull, the way out
/// is through the face plane nearest it (the least translation that
/// frees a point from a convex polytope is to its nearest face plane);
/// where `p` lies beyond one face plane by more than `rq + rc`, they are
/// apart (a point's distance to a convex set is at least its height over
/// any of its face planes). Between the two, where the foot of `p` on its
/// highest face plane lies in the hull, that foot is the closest point;
/// else (an edge or corner closest) `None`: the general path measures
/// the distance.
fn hull_point_touch(h: &dyn FacePlanes, rq: f64, p: DVec3, rc: f64) -> Option<Option<Touch>> {
    let (most, face, tol) = h.plane_excess(p);
    let r = rq + rc;
    if most > r + tol {
        return Some(None);
    }
    if face == DVec3::ZERO {
        return None;
    }
    // the hull moves away from p along −face
    let n = -face;
    if most > 0.0 {
        // outside, within reach: where p's foot on that face's plane lies
        // in the hull, it is the hull's closest point to p and `most` the
        // distance (else an edge or corner is closest: the general path)
        let foot = p - face * most;
        let (foot_most, _, foot_tol) = h.plane_excess(foot);
        if foot_most > foot_tol {
            return None;
        }
        return Some((most <= r).then(|| Touch {
            point: p + n * rc,
            normal: n,
            depth: r - most,
        }));
    }
    Some(Some(Touch {
        point: p + n * rc,
        normal: n,
        depth: -most + r,
    }))
}

/// A query core as the closed forms see it.
pub(crate) enum CoreRef<'a> {
    /// A sphere's centre.
    Point(&'a Point),
    /// A capsule's segment.
    Segment(&'a Segment),
    /// A box.
    Cuboid(&'a OrientedBox),
    /// A convex hull, by its face planes.
    Hull(&'a dyn FacePlanes),
}

/// A convex hull's face planes, as the closed forms against a point read
/// them.
pub(crate) trait FacePlanes {
    /// The most a face plane is exceeded by `x` (negative inside: the
    /// depth below the nearest face), that face's outward unit normal
    /// (the first such face on ties; zero for a hull without faces), and
    /// how far rounding may have moved that figure.
    fn plane_excess(&self, x: DVec3) -> (f64, DVec3, f64);
}

/// The contact of cores `s` apart, grown by `rq` and `rc`, if they touch.
fn apart(s: Separation, rq: f64, rc: f64) -> Option<Touch> {
    let r = rq + rc;
    if s.distance > r || s.distance <= 0.0 {
        return None;
    }
    let n = s.normal();
    if n == DVec3::ZERO {
        // apart by less than the points' rounding: no direction to go by
        return None;
    }
    Some(Touch {
        point: s.on_b + n * rc,
        normal: n,
        depth: r - s.distance,
    })
}

/// The contact of `q` grown by `rq` with `c` grown by `rc` when their
/// cores overlap (or touch): the depth of the expanding polytope from
/// GJK's last tetrahedron `tet`, with its own contact point, where one
/// of them is a solid and it can vouch for its answer; else the
/// separating-axis depth.
fn inside(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    tet: Option<[gjk::Vertex; 4]>,
) -> Touch {
    match tet
        .filter(|_| sat::expanding_first(q, c))
        .and_then(|t| epa::penetration(q, c, t))
    {
        Some(epa::Depth {
            depth,
            normal,
            on_b: Some(on_b),
        }) => Touch {
            point: on_b + normal * rc,
            normal,
            depth: depth.max(0.0) + rq + rc,
        },
        Some(e) => way_out(q, rq, c, rc, (e.depth, e.normal)),
        None => way_out(q, rq, c, rc, sat::penetration(q, c)),
    }
}

/// The contact whose cores leave each other by moving `q` the core depth
/// `d` along `n` (a separating-axis answer): the collider's point where
/// the query shape leaves it.
fn way_out(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    (d, n): (f64, DVec3),
) -> Touch {
    let r = rq + rc;
    let d = d.max(0.0);
    // the collider's point where the query shape leaves it: its closest
    // point to the query moved just clear along the way out (the witness
    // the flat-edge rule reads the contact's feature from; [`settle`]
    // then reports a point in the shape)
    let hair = 1e-9 * scale(q, c);
    // the search starts along the way out: the cores' separating direction
    let point = match gjk::search(&Moved(q, n * (d + hair)), c, f64::INFINITY, -1.0, Some(n)) {
        Gap::Apart(s) => s.on_b,
        _ => c.support(n),
    };
    Touch {
        point: point + n * rc,
        normal: n,
        depth: d + r,
    }
}

/// The contact `t` of `q` grown by `rq` with `c` grown by `rc` as an
/// overlap reports it: its point becomes a point of the collider's
/// surface in or on the shape ([`contact_point::settle`]) in place of the
/// witness where the shape, moved out by the depth, last touches the
/// collider (which lies up to the depth outside the shape as posed); a
/// shape wholly inside the collider keeps the witness. Run once on the
/// contact an overlap answers with, after the flat-edge rule has read
/// its feature from the witness.
pub(crate) fn settle(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    t: Touch,
) -> Touch {
    match settled_point(q, rq, c, rc, t) {
        Some(point) => Touch { point, ..t },
        None => t,
    }
}

/// [`settle`]'s point, `None` where the shape reaches none of the
/// collider's surface (it is wholly inside).
pub(crate) fn settled_point(
    q: &impl Polyhedral,
    rq: f64,
    c: &impl Polyhedral,
    rc: f64,
    t: Touch,
) -> Option<DVec3> {
    contact_point::settle(q, rq, c, rc, (t.point, t.normal, t.depth), settle_tol(q, c))
}

/// The tolerance a contact point is settled to: a billionth of the
/// coordinates' size.
#[inline]
fn settle_tol(q: &impl Support, c: &impl Support) -> f64 {
    1e-9 * scale(q, c)
}

/// Whether a displacement `d` (the whole motion) does not close in on a
/// contact with unit `normal`: it moves away from it or along it. "Along"
/// allows closing in by 0.1 mm over the whole motion (or 1e-5 rad, if
/// more): f32 vertices and placements turn a floor triangle's normal by
/// up to a few 1e-6 rad (measured on a tiled slope), and a shape sliding
/// along the floor must not stop on that noise.
pub(crate) fn leaving(normal: DVec3, d: DVec3) -> bool {
    normal.dot(d) >= -(1e-5 * d.length()).max(1e-4)
}

/// The first contact of `q` grown by `rq`, moving by `motion · t` for `t`
/// in `[0, t_max]`, with `c` grown by `rc`: the time and the contact
/// there. A shape that starts touching answers `t = 0` — unless `leave`
/// holds the whole motion of the query (so contacts it leaves are
/// ignored; a walk shrinks `t_max` as it finds contacts, the whole motion
/// stays) and that motion does not close in on the contact (`motion ·
/// normal ≥ 0`): two convex shapes moving apart never meet again, so that
/// piece is then no contact at all.
///
/// `fix` adjusts every contact before it is used and names the normal the
/// leaving test judges it by (a mesh triangle's flat edges, [`flatten`]);
/// with `leave` the test applies to a later contact too: a
/// contact on the flat edges of a floor the shape slides along (`motion ·
/// face normal = 0`) does not stop it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cast(
    q: &impl Polyhedral,
    rq: f64,
    motion: DVec3,
    t_max: f64,
    c: &impl Polyhedral,
    rc: f64,
    leave: Option<DVec3>,
    fix: impl Fn(Touch) -> (Touch, DVec3),
) -> Option<(f64, Touch)> {
    let begin = |t0: Touch| {
        let (t0, judge) = fix(t0);
        if leave.is_some_and(|whole| leaving(judge, whole)) {
            None
        } else {
            Some((0.0, t0))
        }
    };
    let tolerance = 1e-9 * scale(q, c);
    // at t = 0: touching, or apart with the separation (and the simplex)
    // to start from
    let mut warm = gjk::Warm::default();
    let start = match gjk::search_enclosing(q, c, f64::INFINITY, -1.0, Some(&mut warm)) {
        (Gap::Apart(s), _) => match apart(s, rq, rc) {
            Some(t0) => return begin(t0),
            None => s,
        },
        (_, tet) => return begin(inside(q, rq, c, rc, tet)),
    };
    let (t, sep) = gjk::cast(
        q,
        rq + rc,
        motion,
        t_max,
        c,
        tolerance,
        Some((start, &mut warm)),
    )?;
    // at t the gap is within the tolerance: the contact is the closest
    // points (or, when rounding put the cores in touch, the way out)
    let hit = match sep {
        Some(gjk::Meet { s, normal: n }) => Touch {
            point: s.on_b + n * rc,
            normal: n,
            depth: 0.0,
        },
        _ => touch(&Moved(q, motion * t), rq, c, rc)?,
    };
    let (hit, judge) = fix(hit);
    if leave.is_some_and(|whole| leaving(judge, whole)) {
        return None;
    }
    Some((t, hit))
}

/// Where a contact `t` with a mesh triangle `tri` lies on the triangle's
/// flat edges only (`flat`: bit `k` for the edge from corner `k` to
/// corner `k + 1`, an edge inside a flat region of the mesh; a corner
/// counts when both of its edges are flat), the surface there is the
/// region's plane, not an edge (Mirtich-style feature reduction, as Jolt's
/// "active edges" do; Gregorius, "Robust contact creation for physics
/// simulations", GDC 2015): the plane's unit normal on the side of the
/// shape's `centre`, and how far the shape `q` grown by `rq` must move
/// along it to clear the plane. `None` for other contacts.
pub(crate) fn flat_face(
    t: &Touch,
    tri: &[DVec3; 3],
    flat: u8,
    q: &impl Support,
    rq: f64,
    centre: DVec3,
) -> Option<(DVec3, f64)> {
    if flat & 7 == 0 {
        return None;
    }
    let n = (tri[1] - tri[0]).cross(tri[2] - tri[0]);
    let n2 = n.length_squared();
    if n2 == 0.0 || !n2.is_finite() {
        return None;
    }
    // barycentric weights of the contact point (on the triangle)
    let w = |a: DVec3, b: DVec3| (b - a).cross(t.point - a).dot(n) / n2;
    // edge k runs from corner k to k + 1: on it, corner k + 2 weighs 0
    let weight_opposite = [w(tri[0], tri[1]), w(tri[1], tri[2]), w(tri[2], tri[0])];
    let mut on_edge = false;
    for (k, &x) in weight_opposite.iter().enumerate() {
        if x <= 1e-9 {
            on_edge = true;
            if flat & (1 << k) == 0 {
                // on a real edge (or a corner one of whose edges is real)
                return None;
            }
        }
    }
    if !on_edge {
        return None;
    }
    let n = n / n2.sqrt();
    let side = (centre - tri[0]).dot(n);
    let below = side < 0.0 || (side == 0.0 && t.normal.dot(n) < 0.0);
    let n = if below { -n } else { n };
    Some((n, (tri[0] - q.support(-n)).dot(n) + rq))
}

/// A contact `t` with a mesh triangle seen through its flat edges
/// ([`flat_face`]), with the normal a cast's leaving test judges it by.
///
/// - The contact takes the face normal `n` only where that is also a
///   least way out of the triangle (clearing the plane takes no more than
///   the contact's own depth, to rounding): the two then agree. Its depth
///   is always its own, so nothing is made up for a shape that hangs past
///   the flat region's border.
/// - A cast judges whether it leaves the contact by the face normal, so a
///   shape sliding along a tessellated floor is not stopped by the edges
///   inside it.
///
/// Other contacts are returned unchanged, judged by their own normal.
/// (Overlaps go further where they can see the flat region: see
/// `collider::tri_mesh::touch`.)
pub(crate) fn flatten(
    t: Touch,
    tri: &[DVec3; 3],
    flat: u8,
    q: &impl Support,
    rq: f64,
    centre: DVec3,
) -> (Touch, DVec3) {
    match flat_face(&t, tri, flat, q, rq, centre) {
        Some((n, clear)) if agrees(clear, t.depth, tri, centre, rq) => (
            Touch {
                point: t.point,
                normal: n,
                depth: t.depth,
            },
            n,
        ),
        Some((n, _)) => (t, n),
        None => (t, t.normal),
    }
}

/// Whether clearing a flat face's plane (`clear`) takes no more than a
/// contact's own `depth`, to the rounding of both.
pub(crate) fn agrees(clear: f64, depth: f64, tri: &[DVec3; 3], centre: DVec3, rq: f64) -> bool {
    let size = tri[0].abs().max_element() + centre.abs().max_element() + rq + 1.0;
    clear <= depth + 1e-9 * size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::epa;
    use crate::geom::gjk::{OrientedBox, Triangle};
    use kiln_geometry::rng::Rng;

    /// A box against a ball in one pass answers as the general calls do,
    /// bit for bit: the contact, the settled point, and no contact.
    #[test]
    fn a_box_against_a_ball_in_one_pass_is_the_general_calls_bit_for_bit() {
        let mut r = Rng(0xb0c5_ba11_5eed_0003);
        let mut seen = [0; 3];
        for i in 0..20_000 {
            let b = OrientedBox::random(&mut r, 4.0);
            let p = b.center + r.unit() * r.f() * 3.0;
            let rc = 0.05 + r.f() * 2.5;
            let Some(got) = box_ball_contact(&b, p, rc) else {
                seen[2] += 1;
                continue;
            };
            let want = point_touch(&CoreRef::Cuboid(&b), 0.0, p, rc)
                .expect("a closed form for a box")
                .map(|t| settle(&b, 0.0, &Point(p), rc, t));
            assert_eq!(got, want, "case {i}: {b:?} {p} {rc}");
            seen[usize::from(got.is_some())] += 1;
        }
        // apart, touching and the centre inside (left to the general calls)
        assert!(seen.iter().all(|&n| n > 1_000), "{seen:?}");
    }

    /// The closed-form box–triangle answers (yes/no and contact) agree
    /// with the general path: GJK apart, separating axes inside.
    #[test]
    fn box_triangle_closed_form_agrees_with_gjk() {
        let mut r = Rng(0xb0c5_7a1e_5eed_0001);
        let (mut yes, mut no) = (0, 0);
        for i in 0..20_000 {
            let at = r.v(1.0) * if i % 4 == 0 { 1e4 } else { 1.0 };
            let b = OrientedBox {
                center: at,
                axes: r.rotation(),
                half: DVec3::new(0.05 + r.f(), 0.05 + r.f(), 0.05 + r.f()),
            };
            let t = Triangle([at + r.v(1.5), at + r.v(1.5), at + r.v(1.5)]);
            let gjk_says = gjk::distance(&b, &t).is_none_or(|s| s.distance <= 0.0);
            let got = touches(&b, 0.0, &t, 0.0);
            assert_eq!(got, gjk_says, "case {i}");
            assert_eq!(touches(&t, 0.0, &b, 0.0), gjk_says, "case {i} swapped");
            let contact = touch(&b, 0.0, &t, 0.0);
            assert_eq!(contact.is_some(), got, "case {i}");
            if let Some(c) = contact {
                yes += 1;
                // moved out by the depth (and a hair) the box clears
                let out = Moved(&b, c.normal * (c.depth + 1e-9 * (1.0 + at.length())));
                assert!(gjk::distance(&out, &t).is_some(), "case {i}");
            } else {
                no += 1;
            }
        }
        assert!(yes > 2000 && no > 2000, "{yes} {no}");
    }

    /// The closed-form box–box answers (yes/no and contact) agree with
    /// the general path: GJK apart, the expanding polytope's depth inside;
    /// moved out by the depth along the normal, the query box clears.
    #[test]
    fn box_box_closed_form_agrees_with_gjk_and_the_polytope() {
        let mut r = Rng(0xb0c5_b0c5_5eed_0003);
        let (mut yes, mut no, mut compared) = (0, 0, 0);
        for i in 0..20_000 {
            let at = r.v(1.0) * if i % 4 == 0 { 1e4 } else { 1.0 };
            let random_box = |r: &mut Rng, c: DVec3| OrientedBox {
                center: c,
                // every fifth pair shares its axes (parallel edges)
                axes: if i % 5 == 0 {
                    [DVec3::X, DVec3::Y, DVec3::Z]
                } else {
                    r.rotation()
                },
                half: DVec3::new(0.05 + r.f(), 0.05 + r.f(), 0.05 + r.f()) * 0.7,
            };
            let a = random_box(&mut r, at);
            let off = r.v(1.2);
            let b = random_box(&mut r, at + off);
            let gjk_says = gjk::distance(&a, &b).is_none_or(|s| s.distance <= 0.0);
            let got = touches(&a, 0.0, &b, 0.0);
            assert_eq!(got, gjk_says, "case {i}");
            assert_eq!(touches(&b, 0.0, &a, 0.0), gjk_says, "case {i} swapped");
            let contact = touch(&a, 0.0, &b, 0.0);
            assert_eq!(contact.is_some(), got, "case {i}");
            let Some(c) = contact else {
                no += 1;
                continue;
            };
            yes += 1;
            let size = 1.0 + at.abs().max_element();
            // moved out by the depth (and a hair) the box clears
            let out = Moved(&a, c.normal * (c.depth + 1e-9 * size));
            assert!(gjk::distance(&out, &b).is_some(), "case {i}");
            if let (Gap::Overlap, Some(tet)) =
                gjk::search_enclosing(&a, &b, f64::INFINITY, -1.0, None)
                && let Some(e) = epa::penetration(&a, &b, tet)
            {
                compared += 1;
                assert!(
                    (e.depth - c.depth).abs() <= 1e-9 * size,
                    "case {i}: {} {}",
                    e.depth,
                    c.depth
                );
            }
        }
        assert!(
            yes > 4000 && no > 4000 && compared > 3000,
            "{yes} {no} {compared}"
        );
    }

    /// A box touching another box's (or a triangle's) plane a hair off,
    /// but far from it along another axis, is apart: the closed forms
    /// stop early only at an axis that parts the shapes beyond rounding.
    #[test]
    fn closed_forms_do_not_stop_at_a_grazing_axis() {
        for at in [DVec3::ZERO, DVec3::new(3e3, -2e3, 1e3)] {
            let a = OrientedBox {
                center: at,
                axes: [DVec3::X, DVec3::Y, DVec3::Z],
                half: DVec3::new(0.5, 0.5, 0.5),
            };
            for gap in [-1e-13, 0.0, 1e-13] {
                // x faces a hair apart (or meeting), 5 m apart along y
                let b = OrientedBox {
                    center: at + DVec3::new(1.0 + gap, 5.0, 0.0),
                    ..a
                };
                assert!(!touches(&a, 0.0, &b, 0.0), "box {gap} at {at}");
                assert!(touch(&a, 0.0, &b, 0.0).is_none(), "box {gap} at {at}");
                // the same faces, side by side: touching
                let c = OrientedBox {
                    center: at + DVec3::new(1.0, 0.3, 0.0),
                    ..a
                };
                assert!(touches(&a, 0.0, &c, 0.0), "box at {at}");
                // a triangle in the plane x = 0.5 + gap, 5 m up
                let x = at.x + 0.5 + gap;
                let t = Triangle([
                    DVec3::new(x, at.y + 5.0, at.z - 1.0),
                    DVec3::new(x, at.y + 6.0, at.z + 1.0),
                    DVec3::new(x, at.y + 5.0, at.z + 1.0),
                ]);
                assert!(!touches(&a, 0.0, &t, 0.0), "triangle {gap} at {at}");
                assert!(touch(&a, 0.0, &t, 0.0).is_none(), "triangle {gap} at {at}");
            }
        }
    }

    /// The closed forms against a sphere collider (a point grown by a
    /// radius) agree with the general path — GJK apart, the expanding
    /// polytope or separating axes inside — for boxes, capsule segments
    /// points and hulls: the same yes/no answers away from the tolerance
    /// of touching, the same depth, normal and contact point (a box or
    /// hull holding the centre leaves through its nearest face).
    #[test]
    fn sphere_collider_closed_forms_agree_with_the_general_path() {
        let mut r = Rng(0x5fe7_e0c1_05ed_0002);
        let (mut touching, mut inside, mut apart) = (0, 0, 0);
        let (mut hull_inside, mut hull_answered) = (0, 0);
        for i in 0..30_000 {
            let at = r.v(1.0) * if i % 4 == 0 { 1e3 } else { 1.0 };
            let p = at + r.v(0.7);
            let rc = 0.05 + r.f() * 0.5;
            let rq = if i % 3 == 1 { r.f() * 0.3 } else { 0.0 };
            let bx = OrientedBox {
                center: at,
                axes: r.rotation(),
                half: DVec3::new(0.05 + r.f(), 0.05 + r.f(), 0.05 + r.f()) * 0.8,
            };
            let h = r.v(0.7);
            let seg = Segment(at - h, at + h);
            let pt = Point(at);
            let size = 1.0 + at.abs().max_element();
            let check = |closed: CoreRef, general: &dyn Fn() -> (bool, Option<Touch>)| {
                let (yes_general, t_general) = general();
                let yes = point_touches(&closed, rq, p, rc);
                let t = point_touch(&closed, rq, p, rc);
                // each closed form judged alone (a hull has one for its
                // contact, none for its yes/no)
                let near_edge = t.flatten().is_some_and(|t| t.depth < 1e-9 * size)
                    || t_general.is_some_and(|t| t.depth < 1e-9 * size);
                if let (Some(yes), Some(t)) = (yes, t) {
                    assert_eq!(yes, t.is_some(), "case {i}");
                }
                if let Some(yes) = yes
                    && !near_edge
                {
                    assert_eq!(yes, yes_general, "case {i}");
                }
                let t = t?;
                // away from touching, the same yes/no
                if !near_edge {
                    assert_eq!(t.is_some(), t_general.is_some(), "case {i}");
                }
                if let (Some(a), Some(b)) = (t, t_general) {
                    assert!(
                        (a.depth - b.depth).abs() <= 1e-9 * size,
                        "case {i}: {a:?} {b:?}"
                    );
                    // equally deep ways out (a centre on a box's diagonal)
                    // may differ; the depth may not
                    let ties = a.depth - b.depth == 0.0 && a.normal != b.normal;
                    if !ties && a.depth > 1e-6 {
                        assert!(a.normal.dot(b.normal) > 1.0 - 1e-9, "case {i}: {a:?} {b:?}");
                        assert!(
                            (a.point - b.point).length() <= 1e-7 * size,
                            "case {i}: {a:?} {b:?}"
                        );
                    }
                }
                Some(t)
            };
            let tb = check(CoreRef::Cuboid(&bx), &|| {
                (
                    touches(&bx, rq, &Point(p), rc),
                    touch(&bx, rq, &Point(p), rc),
                )
            });
            let ts = check(CoreRef::Segment(&seg), &|| {
                (
                    touches(&seg, rq, &Point(p), rc),
                    touch(&seg, rq, &Point(p), rc),
                )
            });
            let tp = check(CoreRef::Point(&pt), &|| {
                (
                    touches(&pt, rq, &Point(p), rc),
                    touch(&pt, rq, &Point(p), rc),
                )
            });
            // a hull of a dozen points about `at`, turned
            let pts: Vec<glam::Vec3> = (0..12).map(|_| r.v(0.6).as_vec3()).collect();
            let th = crate::shape::ConvexHull::new(&pts).ok().and_then(|hull| {
                let q = glam::DQuat::from_axis_angle(r.unit(), r.f() * std::f64::consts::TAU);
                let pose = crate::Pose::new(q.as_quat(), at.as_vec3());
                let posed = crate::shape::Posed::new(&crate::QueryShape::Hull(&hull), &pose)?;
                let crate::shape::Core::Hull(ph) = &posed.core else {
                    unreachable!("a hull poses as a hull")
                };
                let t = check(CoreRef::Hull(ph), &|| {
                    (touches(ph, rq, &Point(p), rc), touch(ph, rq, &Point(p), rc))
                });
                hull_inside += usize::from(t.flatten().is_some_and(|t| t.depth >= rq + rc));
                hull_answered += usize::from(t.is_some());
                t
            });
            for t in [tb, ts, tp, th].into_iter().flatten() {
                touching += usize::from(t.is_some());
                apart += usize::from(t.is_none());
            }
            // the box holding the centre
            inside += usize::from(tb.flatten().is_some_and(|t| t.depth >= rq + rc));
        }
        eprintln!(
            "{touching} touching, {apart} apart, {inside} boxes and {hull_inside} hulls holding the centre, {hull_answered} hulls in closed form"
        );
        assert!(
            touching > 20_000 && inside > 1000 && apart > 20_000,
            "{touching} {inside} {apart}"
        );
        assert!(
            hull_inside > 1000 && hull_answered > hull_inside + 5000,
            "{hull_inside} {hull_answered}"
        );
    }

    /// A capsule whose axis passes through a sphere collider's centre, or a
    /// rounding's width off it (what a fuzzer found: the axis through the
    /// centre went out along x, not across the axis, and moving by the
    /// depth left the capsule 5 mm in), goes out across its axis and is
    /// then clear; a capsule whose ends meet answers as the sphere does.
    #[test]
    fn a_capsule_axis_through_a_sphere_centre_goes_out_across_it() {
        let mut r = Rng(0xa715_c0e5_0000_0001);
        for i in 0..5000 {
            let far = if i % 2 == 0 { 3000.0 } else { 0.0 };
            let p = DVec3::new(far, -200.0, 1500.0) + r.v(2.0);
            let u = r.v(1.0).normalize();
            let off = u.any_orthonormal_vector() * 1e-15 * (1.0 + far) * (r.f() - 0.5);
            let (back, ahead) = (0.05 + r.f(), 0.05 + r.f());
            let seg = Segment(p + off - u * back, p + off + u * ahead);
            let (rq, rc) = (0.01 + 0.2 * r.f(), 0.01 + 0.5 * r.f());
            let Some(Some(t)) = point_touch(&CoreRef::Segment(&seg), rq, p, rc) else {
                panic!("case {i}: the centre is on the capsule's axis");
            };
            let size = 1.0 + far;
            assert!((t.normal.length() - 1.0).abs() <= 1e-12, "case {i}: {t:?}");
            assert!(t.normal.dot(u).abs() <= 1e-9, "case {i}: {t:?} along {u}");
            assert!((t.depth - rq - rc).abs() <= 1e-12 * size, "case {i}: {t:?}");
            let out = t.normal * t.depth;
            let gap = (p - on_segment(seg.0 + out, seg.1 + out, p)).length();
            assert!(gap >= rq + rc - 1e-9 * size, "case {i}: {gap} left");
            // the capsule whose ends meet at the centre, and the sphere
            let (point, ends) = (Point(p + off), Segment(p + off, p + off));
            let as_sphere = point_touch(&CoreRef::Point(&point), rq, p, rc);
            let as_capsule = point_touch(&CoreRef::Segment(&ends), rq, p, rc);
            assert_eq!(as_sphere, as_capsule, "case {i}");
            assert!(as_sphere.flatten().is_some(), "case {i}");
        }
    }

    /// Two capsules whose cores pass a hair apart 3 km out (what a fuzzer
    /// found: a normal 2.5e-5 off unit length, from the closest points'
    /// difference divided by a distance rounded apart from it) get a unit
    /// normal.
    #[test]
    fn cores_a_hair_apart_far_out_give_a_unit_normal() {
        use crate::geom::gjk::Segment;
        let mut r = Rng(0x4a14_a9a2_7000_0001);
        let mut met = 0;
        for i in 0..5000 {
            let at = DVec3::new(3000.0, -200.0, 1500.0) + r.v(2.0);
            let (u, w) = (r.v(1.0).normalize(), r.v(1.0).normalize());
            let across = u.cross(w).normalize();
            let gap = 1e-12 * 10f64.powf(r.f() * 5.0);
            let a = Segment(at - u * 0.3, at + u * 0.4);
            let b = Segment(at + across * gap - w * 0.5, at + across * gap + w * 0.2);
            let Some(t) = touch(&a, 0.2, &b, 0.3) else {
                panic!("case {i}: the capsules overlap by 0.5");
            };
            assert!(
                (t.normal.length() - 1.0).abs() <= 1e-12,
                "case {i}: gap {gap:e}, normal {} long",
                t.normal.length()
            );
            assert!((t.depth - 0.5).abs() <= 1e-6, "case {i}: depth {}", t.depth);
            met += 1;
        }
        assert_eq!(met, 5000);
    }
}
