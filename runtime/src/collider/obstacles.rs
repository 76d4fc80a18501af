//! The obstacles that a concave solid's surface triangles make in the
//! space of a query shape's translations, as patches of planes, tubes and
//! balls for [`least_move`](crate::geom::least_move), each with the box
//! where it can bound the free translations.
//!
//! A translation `v` is blocked by a triangle where the core moved by `v`,
//! grown by the radius, touches it: the triangle grown by the reflected
//! shape (Lozano-Pérez, "Spatial Planning: A Configuration Space
//! Approach", 1983). Its boundary is made of pieces, each standing for one
//! kind of contact: a face of the triangle with a vertex of the core, an
//! edge with an edge, a vertex with a face. A piece bounds the free
//! translations only where that contact is one the solid allows without
//! overlap, which the triangles around the feature decide:
//!
//! - a contact's normal (the direction the shape is pushed) must lie in
//!   the solid's normal cone at the touched feature: between the two face
//!   normals at a convex edge, among the face normals at a convex vertex.
//!   Each patch's box is drawn from those normals, so that a curved
//!   surface tessellated into hundreds of triangles offers a handful of
//!   patches near a shape, not hundreds of infinite surfaces;
//! - a rounded shape (a sphere or a capsule: its surface is smooth) that
//!   touches a concave edge or a vertex with one in its interior also
//!   cuts a face beside it: no such contact bounds anything, and neither
//!   does one with an edge inside a flat region (the baked flat bit) or a
//!   vertex with only flat edges;
//! - a box's or hull's edge that crosses a concave edge cuts a face too.
//!
//! The triangles are joined by their corners' exact coordinates; a feature
//! whose neighbours are not all at hand is given every normal, which only
//! costs time.

use crate::geom::least_move::{Patch, Surface};
use crate::geom::sat::{self, Polyhedral};
use crate::shape::Core;
use glam::DVec3;
use rustc_hash::FxHashMap;

/// The surface triangles near a shape, joined: their corners once each.
pub(crate) struct Local {
    corners: Vec<DVec3>,
    /// Corner indices (wound outwards), unit normal, flat-edge bits
    /// (bit `k`: edge `k`, from corner `k` to `k + 1`, joins a coplanar
    /// triangle).
    tris: Vec<([u32; 3], DVec3, u8)>,
    /// For each directed edge, the triangle and edge slot it is in.
    edges: FxHashMap<(u32, u32), (u32, u8)>,
    /// What the solid allows at each triangle's edges ([`Local::class`]),
    /// once each.
    classes: Vec<[Normals; 3]>,
    /// Directed edges given twice (a mesh that is not a manifold there).
    twice: Vec<(u32, u32)>,
    /// For each corner, the triangles at it.
    around: Vec<Vec<u32>>,
    /// The size of the coordinates, for tolerances.
    scale: f64,
}

/// What the solid allows at an edge or a vertex.
#[derive(Clone, Debug, PartialEq)]
enum Normals {
    /// No contact there bounds anything (a rounded shape): a flat or
    /// concave edge, a vertex with a concave edge or only flat ones.
    None,
    /// The normals between two face normals (the short arc): a convex edge.
    Arc(DVec3, DVec3),
    /// Among these face normals (their cone): a convex vertex.
    Cone(Vec<DVec3>),
    /// Any (the neighbours are not all at hand, or the edge is open): an
    /// edge is given the half circle from its face's normal through its
    /// outward direction in the face's plane.
    Open(DVec3, DVec3),
    /// Any direction at all.
    Any,
}

impl Local {
    /// Joins `tris` (corners wound outwards, with their flat-edge bits).
    /// Triangles with no area are left out: they bound nothing.
    pub(crate) fn new(tris: &[([DVec3; 3], u8)], scale: f64) -> Local {
        let mut index: FxHashMap<[u64; 3], u32> = FxHashMap::default();
        let mut corners = Vec::new();
        let mut local = Local {
            corners: Vec::new(),
            tris: Vec::new(),
            edges: FxHashMap::default(),
            classes: Vec::new(),
            twice: Vec::new(),
            around: Vec::new(),
            scale,
        };
        for (t, flat) in tris {
            let n = (t[1] - t[0]).cross(t[2] - t[0]);
            let l = n.length();
            if l.is_nan() || l <= 0.0 || !l.is_finite() {
                continue;
            }
            let ids = t.map(|x| {
                *index
                    .entry(x.to_array().map(f64::to_bits))
                    .or_insert_with(|| {
                        corners.push(x);
                        (corners.len() - 1) as u32
                    })
            });
            if ids[0] == ids[1] || ids[1] == ids[2] || ids[2] == ids[0] {
                continue;
            }
            let id = local.tris.len() as u32;
            local.around.resize(corners.len(), Vec::new());
            for &c in &ids {
                local.around[c as usize].push(id);
            }
            for k in 0..3 {
                let e = (ids[k], ids[(k + 1) % 3]);
                if local.edges.insert(e, (id, k as u8)).is_some() {
                    local.twice.push(e);
                }
            }
            local.tris.push((ids, n / l, *flat));
        }
        local.corners = corners;
        local.classes = (0..local.tris.len() as u32)
            .map(|t| std::array::from_fn(|k| local.class(t, k)))
            .collect();
        local
    }

    /// What the solid allows at edge `k` of triangle `t`.
    fn edge_normals(&self, t: u32, k: usize) -> &Normals {
        &self.classes[t as usize][k]
    }

    /// The triangle across the edge from `a` to `b` (the one holding the
    /// edge from `b` to `a`), where exactly one is.
    fn across(&self, a: u32, b: u32) -> Option<u32> {
        if self.twice.contains(&(a, b)) || self.twice.contains(&(b, a)) {
            return None;
        }
        self.edges.get(&(b, a)).map(|&(t, _)| t)
    }

    /// What the solid allows at edge `k` of triangle `t`: none at a flat or
    /// concave edge, the arc between its faces' normals at a convex one.
    fn class(&self, t: u32, k: usize) -> Normals {
        let (ids, n, flat) = &self.tris[t as usize];
        if flat & (1 << k) != 0 {
            return Normals::None;
        }
        let (a, b) = (ids[k], ids[(k + 1) % 3]);
        let (pa, pb) = (self.corners[a as usize], self.corners[b as usize]);
        let Some(o) = self.across(a, b) else {
            // outward in the face's plane: away from the third corner
            let out = (pb - pa).cross(*n).normalize_or_zero();
            return Normals::Open(*n, out);
        };
        let (oids, m, _) = &self.tris[o as usize];
        let far = oids.iter().find(|&&x| x != a && x != b).copied();
        let Some(far) = far else {
            return Normals::Open(*n, (pb - pa).cross(*n).normalize_or_zero());
        };
        let w = self.corners[far as usize] - pa;
        // the neighbour's far corner above this face's plane: concave
        if n.dot(w) > 1e-9 * (w.length() + self.scale) {
            Normals::None
        } else {
            Normals::Arc(*n, *m)
        }
    }

    /// Calls `f` with the ends of each edge the solid allows a contact
    /// at (neither flat nor concave), once however many triangles give
    /// it, and its normals.
    fn for_each_edge(&self, f: &mut dyn FnMut(DVec3, DVec3, &Normals)) {
        for (t, (ids, ..)) in self.tris.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (ids[k], ids[(k + 1) % 3]);
                // from the triangle with the lesser corner first, or the
                // only one
                if a > b && self.across(a, b).is_some() {
                    continue;
                }
                let normals = self.edge_normals(t as u32, k);
                if *normals != Normals::None {
                    f(self.corners[a as usize], self.corners[b as usize], normals);
                }
            }
        }
    }

    /// What the solid allows at corner `c`, for a rounded shape: the cone
    /// of its faces' normals where every edge at it is convex or flat and
    /// one is convex; none where one is concave or all are flat; any where
    /// its ring of triangles is not all at hand.
    fn corner_normals(&self, c: u32) -> Normals {
        let mut normals = Vec::new();
        let (mut real, mut whole) = (false, true);
        for &t in &self.around[c as usize] {
            let (ids, n, _) = &self.tris[t as usize];
            let Some(k) = ids.iter().position(|&x| x == c) else {
                continue;
            };
            normals.push(*n);
            // the edge leaving the corner and the one arriving at it
            for e in [k, (k + 2) % 3] {
                match self.edge_normals(t, e) {
                    Normals::None => {
                        let flat = self.tris[t as usize].2 & (1 << e) != 0;
                        if !flat {
                            return Normals::None;
                        }
                    }
                    Normals::Arc(..) => real = true,
                    _ => whole = false,
                }
            }
        }
        if !whole {
            Normals::Any
        } else if !real {
            Normals::None
        } else {
            Normals::Cone(normals)
        }
    }
}

/// The box of the unit vectors that `normals` allows, scaled by `r`.
fn normal_box(normals: &Normals, r: f64) -> (DVec3, DVec3) {
    let (lo, hi) = match normals {
        Normals::None => (DVec3::ZERO, DVec3::ZERO),
        Normals::Arc(a, b) => arc_box(*a, *b),
        Normals::Open(n, out) => {
            let (l1, h1) = arc_box(*n, *out);
            let (l2, h2) = arc_box(*out, -*n);
            (l1.min(l2), h1.max(h2))
        }
        Normals::Cone(ns) => cap_box(ns),
        Normals::Any => (DVec3::NEG_ONE, DVec3::ONE),
    };
    (lo * r, hi * r)
}

/// The box of the short arc of unit vectors from `a` to `b`: its ends,
/// and each axis's extreme where it lies on the arc.
fn arc_box(a: DVec3, b: DVec3) -> (DVec3, DVec3) {
    let (mut lo, mut hi) = (a.min(b), a.max(b));
    let k = a.cross(b);
    if k.length() <= 1e-12 {
        return (lo, hi);
    }
    let k = k.normalize();
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        for e in [axis, -axis] {
            let w = (e - k * k.dot(e)).normalize_or_zero();
            if w != DVec3::ZERO && on_arc(w, a, b) {
                lo = lo.min(w);
                hi = hi.max(w);
            }
        }
    }
    (lo, hi)
}

/// A box of the unit vectors in the cone of the unit vectors `ns`: the
/// box of the least spherical cap about their mean that holds them all
/// (which holds their cone), or every direction where that cap is a
/// hemisphere or more.
fn cap_box(ns: &[DVec3]) -> (DVec3, DVec3) {
    let m = ns
        .iter()
        .fold(DVec3::ZERO, |a, &n| a + n)
        .normalize_or_zero();
    let cos = ns.iter().map(|n| n.dot(m)).fold(1.0f64, f64::min);
    if m == DVec3::ZERO || cos <= 1e-3 {
        return (DVec3::NEG_ONE, DVec3::ONE);
    }
    // a little wider than the widest normal, for rounding
    let theta = cos.clamp(-1.0, 1.0).acos() + 1e-9;
    let (mut lo, mut hi) = (DVec3::ZERO, DVec3::ZERO);
    for i in 0..3 {
        let alpha = m[i].clamp(-1.0, 1.0).acos();
        hi[i] = (alpha - theta).max(0.0).cos();
        lo[i] = (alpha + theta).min(std::f64::consts::PI).cos();
    }
    (lo, hi)
}

/// Whether the direction `u` lies on the short arc of the unit sphere
/// between the normals `a` and `b` (it is `α a + β b`, `α, β ≥ 0`, to
/// rounding); `u` is taken to lie in their plane.
fn on_arc(u: DVec3, a: DVec3, b: DVec3) -> bool {
    let (aa, ab, bb) = (a.dot(a), a.dot(b), b.dot(b));
    let det = aa * bb - ab * ab;
    if det.is_nan() || det <= 1e-12 * aa * bb {
        // parallel faces: the arc is a point (or a half circle, where
        // they face apart): keep the axis
        return true;
    }
    let (ua, ub) = (u.dot(a), u.dot(b));
    let alpha = (ua * bb - ub * ab) / det;
    let beta = (ub * aa - ua * ab) / det;
    let tol = -1e-9 * u.length() * (aa.max(bb)).sqrt();
    alpha >= tol && beta >= tol
}

/// Whether `u` (across the edge) is a normal that `normals` allows at an
/// edge.
fn allows(normals: &Normals, u: DVec3) -> bool {
    match normals {
        Normals::None => false,
        Normals::Arc(a, b) => on_arc(u, *a, *b),
        Normals::Open(_, out) => u.dot(*out) >= -1e-9 * u.length(),
        Normals::Cone(_) | Normals::Any => true,
    }
}

/// The box of `pts`.
fn bounds(pts: impl IntoIterator<Item = DVec3>) -> (DVec3, DVec3) {
    pts.into_iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    )
}

/// The points of `pts` that reach farthest along `u`, to `tol`.
fn support(pts: &[DVec3], u: DVec3, tol: f64) -> impl Iterator<Item = DVec3> + '_ {
    let top = pts
        .iter()
        .map(|p| p.dot(u))
        .fold(f64::NEG_INFINITY, f64::max);
    pts.iter().copied().filter(move |p| p.dot(u) >= top - tol)
}

/// The patches of the obstacles of `local`'s triangles for the query
/// shape `core` grown by `radius`; a box's or hull's faces and edges with
/// their Gauss arcs in `gauss` (`None` for a core without them: every
/// separating axis is taken then, each with a loose box). The inward faces
/// are left out: a shape touching a triangle from behind is inside the
/// solid, never free.
pub(crate) fn patches(
    local: &Local,
    core: &Core,
    radius: f64,
    gauss: Option<(&[sat::Face], &[sat::Edge])>,
    out: &mut Vec<Patch>,
) {
    let mut verts = Vec::new();
    core.for_each_vertex(&mut |p| verts.push(p));
    let tol = 1e-12 * local.scale;
    let pad = DVec3::splat(1e-9 * local.scale);
    // the plane with outward normal u where the shape, moved, touches the
    // points `near` of the triangles and reaches no farther: its patch is
    // those points less the core's points that reach least along u, and
    // the radius along u
    let mut plane = |u: DVec3, near: &[DVec3], out: &mut Vec<Patch>| {
        let u = u.normalize_or_zero();
        if u == DVec3::ZERO {
            return;
        }
        let top = near
            .iter()
            .map(|x| x.dot(u))
            .fold(f64::NEG_INFINITY, f64::max);
        let low = verts.iter().map(|p| p.dot(u)).fold(f64::INFINITY, f64::min);
        let (tlo, thi) = bounds(support(near, u, tol));
        let (clo, chi) = bounds(support(&verts, -u, tol));
        out.push(Patch {
            s: Surface::Plane {
                n: u,
                h: top - low + radius,
            },
            lo: tlo - chi + u * radius - pad,
            hi: thi - clo + u * radius + pad,
        });
    };
    let corner = |c: u32| local.corners[c as usize];
    let rounded = matches!(core, Core::Point(_) | Core::Segment(_));
    // each triangle's outward face
    for (ids, n, _) in &local.tris {
        plane(*n, &ids.map(corner), out);
    }
    if rounded {
        rounded_patches(local, &verts, radius, pad, &mut plane, out);
        return;
    }
    // a box or hull: a triangle's corner with the core's face
    match gauss {
        Some((faces, core_edges)) => {
            for (ids, ..) in &local.tris {
                for f in faces {
                    plane(-f.n, &ids.map(corner), out);
                }
            }
            // an edge with the core's edges whose Gauss arcs cross the
            // edge's, once per edge (from the triangle with the lesser
            // corner first, or the only one)
            // (flat edges lie within the neighbour's obstacle; an edge
            // across a concave one cuts a face beside it)
            local.for_each_edge(&mut |pa, pb, normals| {
                for ce in core_edges {
                    let u = (pb - pa).cross(ce.q - ce.p);
                    for u in [u, -u] {
                        if allows(normals, u) && on_arc(-u, ce.n1, ce.n2) {
                            plane(u, &[pa, pb], out);
                        }
                    }
                }
            });
        }
        None => {
            // no features (a degenerate core): every separating axis,
            // each plane's patch the whole obstacle's box
            let mut faces = Vec::new();
            core.face_normals(&mut |m| faces.push(m));
            let mut dirs = Vec::new();
            core.edge_directions(&mut |d| dirs.push(d));
            let (clo, chi) = bounds(verts.iter().copied());
            for (ids, _, flat) in &local.tris {
                let t = ids.map(corner);
                let mut axes = faces.clone();
                for k in (0..3).filter(|&k| flat & (1 << k) == 0) {
                    axes.extend(dirs.iter().map(|&d| (t[(k + 1) % 3] - t[k]).cross(d)));
                }
                let (tlo, thi) = bounds(t);
                let mut one = Vec::new();
                for u in axes {
                    plane(u, &t, &mut one);
                    plane(-u, &t, &mut one);
                }
                out.extend(one.into_iter().map(|p| Patch {
                    lo: tlo - chi - pad,
                    hi: thi - clo + pad,
                    ..p
                }));
            }
        }
    }
}

/// [`patches`] for a sphere or a capsule (`verts`: its one or two core
/// points): tubes about the edges of each triangle less a core point, and
/// for a capsule planes along its segment through the edges; balls about
/// each corner less a core point, and for a capsule a tube along the
/// segment through it. Only where the solid allows the contact, with
/// boxes from its normals.
fn rounded_patches(
    local: &Local,
    verts: &[DVec3],
    radius: f64,
    pad: DVec3,
    plane: &mut impl FnMut(DVec3, &[DVec3], &mut Vec<Patch>),
    out: &mut Vec<Patch>,
) {
    let corner = |c: u32| local.corners[c as usize];
    let tube = |a: DVec3, b: DVec3, normals: &Normals, out: &mut Vec<Patch>| {
        // one orientation of each line, so that one line given twice is
        // one tube
        let (a, b) = if a.to_array() < b.to_array() {
            (a, b)
        } else {
            (b, a)
        };
        let u = (b - a).normalize_or_zero();
        if u == DVec3::ZERO {
            return;
        }
        let (nlo, nhi) = normal_box(normals, radius);
        out.push(Patch {
            s: Surface::Tube { a, u, r: radius },
            lo: a.min(b) + nlo - pad,
            hi: a.max(b) + nhi + pad,
        });
    };
    local.for_each_edge(&mut |pa, pb, normals| {
        for &c in verts {
            tube(pa - c, pb - c, normals, out);
        }
        if let [s0, s1] = verts {
            let u = (pb - pa).cross(*s1 - *s0);
            for u in [u, -u] {
                if allows(normals, u) {
                    plane(u, &[pa, pb], out);
                }
            }
        }
    });
    for c in 0..local.corners.len() as u32 {
        let normals = local.corner_normals(c);
        if normals == Normals::None {
            continue;
        }
        let p = corner(c);
        let (nlo, nhi) = normal_box(&normals, radius);
        for &v in verts {
            out.push(Patch {
                s: Surface::Ball {
                    c: p - v,
                    r: radius,
                },
                lo: p - v + nlo - pad,
                hi: p - v + nhi + pad,
            });
        }
        if let [s0, s1] = verts {
            tube(p - *s0, p - *s1, &normals, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::gjk::Support;
    use crate::{ConvexHull, Pose, QueryShape, shape::Posed};
    use glam::{Quat, Vec3};
    use kiln_geometry::rng::Rng;

    /// The planes of a triangle's obstacle for a box or hull, kept where
    /// the Gauss arcs of their edges cross, bound the same region as every
    /// separating axis does: the facets are all there.
    #[test]
    fn obstacle_facets_from_gauss_arcs_bound_what_every_axis_bounds() {
        let mut rng = Rng(0x0b57_ac1e_0000_0001);
        let pts: Vec<Vec3> = (0..12)
            .map(|_| (rng.unit() * DVec3::new(0.6, 0.3, 0.45)).as_vec3())
            .collect();
        let hull = ConvexHull::new(&pts).expect("a solid hull");
        let (mut inside, mut outside) = (0, 0);
        for case in 0..400 {
            let shapes = [
                QueryShape::Cuboid {
                    half: Vec3::new(0.5, 0.2, 0.35),
                },
                QueryShape::Hull(&hull),
            ];
            let rotation = Quat::from_axis_angle(rng.unit().as_vec3(), (rng.f() * 6.2) as f32);
            let at = rng.unit() * 0.3;
            let posed = Posed::new(&shapes[case % 2], &Pose::new(rotation, at.as_vec3()))
                .expect("a valid pose");
            let t = [rng.unit(), rng.unit(), rng.unit()];
            let n = (t[1] - t[0]).cross(t[2] - t[0]);
            if n.length() < 0.1 {
                continue;
            }
            let (mut faces, mut edges) = (Vec::new(), Vec::new());
            assert!(posed.core.features(&mut faces, &mut edges));
            let local = Local::new(&[(t, 0)], 1.0);
            let (mut arcs, mut every) = (Vec::new(), Vec::new());
            patches(&local, &posed.core, 0.0, Some((&faces, &edges)), &mut arcs);
            patches(&local, &posed.core, 0.0, None, &mut every);
            let mut arcs: Vec<Surface> = arcs.iter().map(|p| p.s).collect();
            let mut every: Vec<Surface> = every.iter().map(|p| p.s).collect();
            // both with the triangle's back face, which neither keeps
            let n = n.normalize();
            let back = Surface::Plane {
                n: -n,
                h: t.iter().map(|x| -n.dot(*x)).fold(f64::MIN, f64::max)
                    + posed.core.support(n).dot(n),
            };
            arcs.push(back);
            every.push(back);
            assert!(arcs.len() < every.len(), "case {case}");
            let within = |set: &[Surface], v: DVec3| {
                set.iter()
                    .map(|s| match *s {
                        Surface::Plane { n, h } => n.dot(v) - h,
                        _ => unreachable!("planes only"),
                    })
                    .fold(f64::MIN, f64::max)
            };
            for _ in 0..200 {
                let v = rng.unit() * (rng.f() * 3.0);
                let (a, e) = (within(&arcs, v), within(&every, v));
                if e.abs() < 1e-9 || a.abs() < 1e-9 {
                    continue;
                }
                assert_eq!(a < 0.0, e < 0.0, "case {case}: {v} ({a} vs {e})");
                if e < 0.0 {
                    inside += 1;
                } else {
                    outside += 1;
                }
            }
        }
        assert!(inside > 1000 && outside > 1000, "{inside} {outside}");
    }
}
