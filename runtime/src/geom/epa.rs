//! Penetration depth of two overlapping convex shapes by the expanding
//! polytope algorithm (van den Bergen, "Proximity Queries and Penetration
//! Depth Computation on 3D Game Objects", GDC 2001): a polytope inside the
//! Minkowski difference A − B, grown from a tetrahedron around the origin
//! by the support point beyond its face nearest the origin, until no point
//! of A − B lies beyond that face.
//!
//! Its answer is a support value along the face's normal, so a real
//! separating move; the face's distance is a lower bound of the depth
//! (the polytope lies inside A − B), and the two agree to a hair of the
//! coordinates when it stops. It is the fast path wherever a solid takes
//! part, ahead of the separating-axis test ([`super::sat`]), which tries
//! every pair of edges; anything it cannot vouch for (a flat start, a
//! degenerate face, no convergence) answers `None`, and the caller takes
//! that test.
//!
//! The polytope's vertices keep the points of A and B they came from, so
//! the nearest face also gives the contact: B's point under the origin's
//! projection onto that face, where A leaves B.

use super::gjk::{Support, Vertex, scale};
use super::sphere_triangle::{TriangleRegion, closest_region};
use glam::DVec3;

/// What the polytope answers: how deep, which way out, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Depth {
    /// How far `a` moves along `normal` to leave `b` (a support value).
    pub depth: f64,
    /// The unit direction `a` moves to leave `b`.
    pub normal: DVec3,
    /// The point of `b` where `a` leaves it, when the polytope's faces
    /// show it.
    pub on_b: Option<DVec3>,
}

/// A face of the polytope: its vertices (counter-clockwise seen from
/// outside), unit outward normal and distance from the origin.
struct Face {
    v: [u32; 3],
    n: DVec3,
    d: f64,
    /// The point of `A − B` at `v[0]`, kept here so that the test of
    /// which faces a new point sees reads no vertex.
    a: DVec3,
}

/// The polytope's storage, reused by every call on a thread.
#[derive(Default)]
struct Scratch {
    points: Vec<Vertex>,
    faces: Vec<Face>,
    /// The outline's directed edges, `from << 32 | to`.
    horizon: Vec<u64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Most support points added before giving up (to the exact fallback).
const MAX_POINTS: usize = 128;

/// The depth of `a` into `b`, the unit direction `a` moves to leave (as
/// [`super::sat::penetration`]) and the point of `b` where it leaves, from
/// `start`, a tetrahedron of points of A − B around the origin; `None`
/// when the polytope cannot vouch for an answer.
pub(crate) fn penetration(a: &impl Support, b: &impl Support, start: [Vertex; 4]) -> Option<Depth> {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => grow(a, b, start, &mut s),
        // a nested call (none today) finds the scratch taken: it uses its own
        Err(_) => grow(a, b, start, &mut Scratch::default()),
    })
}

/// [`penetration`] in the storage `s`.
fn grow(a: &impl Support, b: &impl Support, start: [Vertex; 4], s: &mut Scratch) -> Option<Depth> {
    // tolerances relative to the coordinates, as GJK's
    let tol = 1e-11 * scale(a, b);
    let Scratch {
        points,
        faces,
        horizon,
    } = s;
    points.clear();
    faces.clear();
    points.extend_from_slice(&start);
    // the tetrahedron's faces, each wound away from the fourth vertex
    for (i, j, k, o) in [(0, 1, 2, 3), (0, 3, 1, 2), (0, 2, 3, 1), (1, 3, 2, 0)] {
        let p = &points[..];
        let n = (p[j].w - p[i].w).cross(p[k].w - p[i].w);
        let v = if n.dot(p[o].w - p[i].w) > 0.0 {
            [i, k, j]
        } else {
            [i, j, k]
        };
        faces.push(face(p, v.map(|x| x as u32), tol)?);
    }
    loop {
        let ni = nearest_face(faces)?;
        let f = &faces[ni];
        let (n, d, nearest) = (f.n, f.d, f.v);
        let x = Vertex::support(a, b, n);
        let w = x.w;
        let h = w.dot(n);
        if !h.is_finite() {
            return None;
        }
        if h - d <= tol {
            // no point of A − B beyond the nearest face (to a hair): B's
            // point under the origin's projection onto it is the contact.
            // Faces in one plane of A − B (a box's face on another's)
            // tie, and the projection may fall in a neighbour: take the
            // face of that plane it falls in; if none, no point.
            let under = |v: [u32; 3]| {
                let [p, q, r] = v.map(|i| points[i as usize]);
                match closest_region(DVec3::ZERO, p.w, q.w, r.w) {
                    region @ TriangleRegion::Face(..) => Some(region.point([p.b, q.b, r.b])),
                    _ => None,
                }
            };
            let on_b = under(nearest).or_else(|| {
                faces
                    .iter()
                    .filter(|f| f.d - d <= tol && f.n.dot(n) >= 1.0 - 1e-9)
                    .find_map(|f| under(f.v))
            });
            return Some(Depth {
                depth: h,
                normal: -n,
                on_b,
            });
        }
        if points.len() >= MAX_POINTS {
            return None;
        }
        // the nearest face must be among those `w` sees (it lies beyond
        // it)
        let sees = |f: &Face| f.n.dot(w - f.a) > 0.0;
        if !sees(&faces[ni]) {
            return None;
        }
        let wi = points.len() as u32;
        points.push(x);
        // remove every face `w` sees, keeping their outline: edges of
        // one removed face only
        horizon.clear();
        let mut k = 0;
        while k < faces.len() {
            let f = &faces[k];
            if sees(f) {
                let [p, q, r] = f.v.map(u64::from);
                for (from, to) in [(p, q), (q, r), (r, p)] {
                    match horizon.iter().position(|&e| e == to << 32 | from) {
                        Some(at) => {
                            horizon.swap_remove(at);
                        }
                        None => horizon.push(from << 32 | to),
                    }
                }
                faces.swap_remove(k);
                continue;
            }
            k += 1;
        }
        // the outline must be one loop
        if horizon.len() < 3 || !one_loop(horizon) {
            return None;
        }
        for &e in horizon.iter() {
            faces.push(face(points, [(e >> 32) as u32, e as u32, wi], tol)?);
        }
    }
}

/// The first face of least distance by `f64::total_cmp` (as `min_by`
/// finds it), `None` if there is none. The distances are compared as
/// integers of the same order and the nearest kept with selects, not
/// branches: which face is nearer changes at random from face to face.
#[inline]
fn nearest_face(faces: &[Face]) -> Option<usize> {
    // `f64::total_cmp`'s key: the bits, the magnitude's flipped below zero
    let key = |d: f64| {
        let b = d.to_bits() as i64;
        b ^ (((b >> 63) as u64) >> 1) as i64
    };
    let (mut best, mut at) = (i64::MAX, usize::MAX);
    for (i, f) in faces.iter().enumerate() {
        let k = key(f.d);
        // strict: the first of equals stays
        let less = k < best;
        best = if less { k } else { best };
        at = if less { i } else { at };
    }
    // (a distance is never NaN — a face keeps `d >= -tol` — so every key
    // is below `i64::MAX` and a face is found where there is one)
    (at != usize::MAX).then_some(at)
}

/// The face `v` of `p`, or `None` if it is degenerate or the origin lies
/// beyond it (then the polytope no longer holds the origin).
fn face(p: &[Vertex], v: [u32; 3], tol: f64) -> Option<Face> {
    let [a, b, c] = v.map(|i| p[i as usize].w);
    let n = (b - a).cross(c - a);
    let len = n.length();
    if !(len > 1e-300 && len.is_finite()) {
        return None;
    }
    let n = n / len;
    let d = n.dot(a);
    (d >= -tol).then_some(Face { v, n, d, a })
}

/// Whether directed edges `e` (at least one) form a single closed loop,
/// each vertex entered and left once: the outline of a connected set of
/// faces, as the faces a point sees on a convex polytope are.
fn one_loop(e: &[u64]) -> bool {
    let (first, mut at) = (e[0] >> 32, e[0] & 0xffff_ffff);
    let mut steps = 1;
    while at != first {
        // the one edge leaving `at`: counted over every edge, with no
        // branch on each match (they come at random, and a filter's
        // branch on them was mispredicted often)
        let (mut leaving, mut next) = (0, 0);
        for &x in e {
            let from_here = x >> 32 == at;
            leaving += usize::from(from_here);
            next = if from_here { x & 0xffff_ffff } else { next };
        }
        if leaving != 1 {
            return false;
        }
        at = next;
        steps += 1;
        if steps > e.len() {
            return false;
        }
    }
    steps == e.len()
}

#[cfg(test)]
mod tests {
    use super::{Face, nearest_face, one_loop};
    use glam::DVec3;
    use kiln_geometry::rng::Rng;

    /// The nearest face found with selects is `min_by(total_cmp)`'s, the
    /// first of equals, on 20,000 sets of 0 to 20 distances drawn from a
    /// few values (so most sets tie), signed zeros among them.
    #[test]
    fn the_nearest_face_is_the_first_least_by_total_order() {
        let mut rng = Rng::new(0xe9a_0001);
        let pool = [0.0, -0.0, 1e-300, -1e-12, 0.5, 0.5 + 1e-16, 2.0, 1e300];
        let mut ties = 0;
        for _ in 0..20_000 {
            let faces: Vec<Face> = (0..rng.below(21))
                .map(|_| Face {
                    v: [0; 3],
                    n: DVec3::Z,
                    d: pool[rng.below(pool.len())],
                    a: DVec3::ZERO,
                })
                .collect();
            let want = faces
                .iter()
                .enumerate()
                .min_by(|x, y| x.1.d.total_cmp(&y.1.d))
                .map(|(i, _)| i);
            assert_eq!(nearest_face(&faces), want);
            if let Some(i) = want {
                ties += usize::from(faces[i + 1..].iter().any(|f| f.d == faces[i].d));
            }
        }
        assert!(ties > 5_000, "only {ties} sets tie");
    }

    fn edges(pairs: &[(u64, u64)]) -> Vec<u64> {
        pairs.iter().map(|&(from, to)| from << 32 | to).collect()
    }

    /// An outline is one loop where each vertex is left once: a
    /// triangle's is, in any order; two loops, an open chain and a vertex
    /// left twice (two outlines touching at a corner) are not.
    #[test]
    fn an_outline_is_one_loop_each_vertex_left_once() {
        assert!(one_loop(&edges(&[(1, 2), (2, 3), (3, 1)])));
        assert!(one_loop(&edges(&[(3, 1), (1, 2), (2, 3)])));
        assert!(one_loop(&edges(&[(7, 5), (9, 7), (4, 9), (5, 4)])));
        assert!(!one_loop(&edges(&[(1, 2), (2, 1), (3, 4), (4, 3)])));
        assert!(!one_loop(&edges(&[(1, 2), (2, 3)])));
        assert!(!one_loop(&edges(&[(1, 2), (2, 1), (1, 3), (3, 1)])));
        assert!(!one_loop(&edges(&[(1, 2), (2, 3), (3, 1), (1, 4), (4, 1)])));
    }
}
