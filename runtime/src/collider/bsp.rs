//! Queries on a concave solid ([`kiln_formats::bsp`]): a solid-leaf BSP
//! tree for inside and outside, and the collider's triangles under their
//! own box tree for everything that needs the surface.
//!
//! Points descend the tree. Rays, sphere overlaps and sweeps that start
//! outside are answered exactly on the surface triangles (`tri_mesh`):
//! the surface is closed, so the first surface contact of anything that
//! starts outside is its first contact with the solid. What starts inside
//! (a point the tree puts in a solid cell) answers `t = 0`, and a sphere
//! centred inside takes the nearest surface point as the way out. (Dynamic
//! plane shifting, Melax, "Dynamic Plane Shifting BSP Traversal", GI 2000,
//! was the first design: it needs no second structure but reports contacts
//! up to r·(sec(θ/4) − 1) early near sharp edges, points off the surface.)
//!
//! Verification guarantees children come after their parents, so the
//! descent ends, and the surface is a valid triangle mesh.

use super::{ColliderContact, LocalRayHit, obstacles, tri_mesh};
use crate::geom::convex_contact::{self, Touch};
use crate::geom::gjk::{self, Moved, Point, Support, Triangle};
use crate::geom::least_move::{self, Least};
use crate::geom::ray_box::SlabRay;
use crate::geom::sat::Polyhedral;
use crate::geom::sphere_triangle;
use crate::geom::sphere_triangle::Contact;
use crate::placement::Placement;
use crate::shape::Core;
use crate::shape::Posed;
use crate::walk::vec3a;
use crate::walk::{Grow, RayVisitor, TreeRef};
use glam::{DVec3, Vec3};
use kiln_formats::bsp::{ArchivedBsp, BEVEL, EMPTY, SOLID};
use kiln_formats::tri_mesh::ArchivedTriMesh;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A BSP shape ready to answer.
#[derive(Clone, Copy)]
pub(crate) struct BspView<'a>(pub &'a ArchivedBsp);

impl<'a> BspView<'a> {
    /// Whether the local point `p` is in the solid (points on a face count
    /// as inside).
    pub fn contains_local(&self, p: DVec3) -> bool {
        // the solid is what the closed surface encloses, so nothing outside
        // the surface's exact box is in it: most rays and spheres that reach
        // a concave solid start outside its box, and skip the descent (100
        // tori, rays against a triangle tree of the same collider 0.96 →
        // 1.00)
        let s = &self.0.surface;
        if p.cmplt(vec3a(&s.min).as_dvec3()).any() || p.cmpgt(vec3a(&s.max).as_dvec3()).any() {
            return false;
        }
        let mut at = 0u32;
        loop {
            match at {
                SOLID => return true,
                EMPTY => return false,
                _ => {
                    let n = &self.0.nodes[at as usize];
                    let (k, front, back) =
                        (n.plane.to_native(), n.front.to_native(), n.back.to_native());
                    if k & BEVEL != 0 {
                        // a bevel has nothing in front
                        at = back;
                        continue;
                    }
                    let pl = &self.0.planes[k as usize];
                    let f = |i: usize| f64::from(pl[i].to_native());
                    let s = DVec3::new(f(0), f(1), f(2)).dot(p) - f(3);
                    at = if s > 0.0 { front } else { back };
                }
            }
        }
    }

    /// A ray in local space (any placement: rays are affine-invariant):
    /// `t = 0` from inside, else the surface's first hit.
    pub fn raycast(&self, o: Vec3, d: Vec3, t_max: f32, any: bool) -> Option<LocalRayHit> {
        if self.contains_local(o.as_dvec3()) {
            return Some(LocalRayHit {
                t: 0.0,
                normal: -d,
                feature: None, // the ray starts inside: no surface crossed
                inside: true,
            });
        }
        tri_mesh::raycast(&self.0.surface, o, d, t_max, any)
    }

    /// Whether the world point `p` is inside.
    pub fn contains(&self, place: &Placement, p: Vec3) -> bool {
        self.contains_local(place.local_point64(p.as_dvec3()))
    }

    /// The closest surface point to the world sphere (`c`, `r`) if it
    /// touches, where moving the sphere out along it frees the sphere from
    /// the solid; else (a pinched solid) the way out of the solid, as every
    /// query shape gets it ([`shape_touch`]); for a centre
    /// inside, [`Self::way_out`].
    pub fn closest(&self, place: &Placement, c: Vec3, r: f32) -> Option<ColliderContact> {
        if self.contains(place, c) {
            return self.way_out(place, c, r);
        }
        let h = tri_mesh::closest(place, &self.0.surface, c, r)?;
        if self.frees_sphere(place, c, r, h.contact.normal, f64::from(r) - h.distance) {
            return Some(h);
        }
        // the least translation out, improving on the way out along the
        // closest point's normal (for a sphere the deepest triangle's
        // normal and the direction from the nearest surface point are
        // that one)
        let posed = point_posed(c, r);
        let upper = exit_along(place, self, &posed, h.contact.normal).unwrap_or((
            Touch {
                point: h.contact.point,
                normal: h.contact.normal,
                depth: f64::from(r) - h.distance,
            },
            h.feature,
        ));
        let (t, feature) = surface_point(
            place,
            self,
            &posed,
            least_way_out(place, self, &posed, upper, f64::from(r) - h.distance),
        );
        Some(ColliderContact {
            contact: Contact {
                t: 0.0,
                point: t.point,
                normal: t.normal,
            },
            distance: f64::from(r) - t.depth,
            feature,
            inside: false,
        })
    }

    /// Whether the sphere (`c`, `r`) moved by `depth` (and a hair) along
    /// `n` touches the surface nowhere and has its centre outside: the
    /// common case of a sphere's way out, told by the closed-form sphere
    /// tests (the general check, `convex_contact::frees`, runs GJK on every
    /// triangle near, ten times the cost of the whole query).
    fn frees_sphere(&self, place: &Placement, c: Vec3, r: f32, n: DVec3, depth: f64) -> bool {
        // the hair of `convex_contact::frees`, in f64 throughout: at a few
        // kilometres from the origin an f32 centre and a larger hair
        // passed shapes still overlapping a neighbour by 1 mm
        let size = f64::from(c.abs().max_element() + r + 1.0);
        let moved = c.as_dvec3() + n * (depth + 1e-7 * size);
        !tri_mesh::touches(place, &self.0.surface, moved, f64::from(r))
            && !self.contains_local(place.local_point64(moved))
    }

    /// For a centre inside: the way out of the solid, as every query shape
    /// gets it ([`shape_inside`]); `distance` is then the
    /// depth less the radius, so [`ColliderContact::depth`] gives the depth.
    fn way_out(&self, place: &Placement, c: Vec3, r: f32) -> Option<ColliderContact> {
        // through the nearest surface point, `r` beyond it: the common case,
        // told by the closed-form sphere tests as in `closest`
        if let Some(near) = tri_mesh::closest(place, &self.0.surface, c, f32::MAX)
            && near.distance > 0.0
        {
            let n = (near.contact.point - c.as_dvec3()) / near.distance;
            if self.frees_sphere(place, c, r, n, f64::from(r) + near.distance) {
                return Some(ColliderContact {
                    contact: Contact {
                        t: 0.0,
                        point: near.contact.point,
                        normal: n,
                    },
                    distance: near.distance,
                    feature: near.feature,
                    inside: true,
                });
            }
            // the least translation out, improving on the way out along
            // the same direction
            let posed = point_posed(c, r);
            if let Some(upper) = exit_along(place, self, &posed, n) {
                let (t, feature) = surface_point(
                    place,
                    self,
                    &posed,
                    least_way_out(place, self, &posed, upper, f64::from(r) + near.distance),
                );
                return Some(ColliderContact {
                    contact: Contact {
                        t: 0.0,
                        point: t.point,
                        normal: t.normal,
                    },
                    distance: t.depth - f64::from(r),
                    feature,
                    inside: true,
                });
            }
        }
        let (t, feature) = shape_inside(place, self, &point_posed(c, r))?;
        Some(ColliderContact {
            contact: Contact {
                t: 0.0,
                point: t.point,
                normal: t.normal,
            },
            distance: t.depth - f64::from(r),
            feature,
            inside: true,
        })
    }

    /// Whether the world sphere touches the solid.
    pub fn touches(&self, place: &Placement, c: Vec3, r: f32) -> bool {
        tri_mesh::touches(place, &self.0.surface, c.as_dvec3(), f64::from(r))
            || self.contains(place, c)
    }

    /// First contact of the sweep at a time `≤ limit`, culling volumes
    /// beyond `t_cull`: `t = 0` with the way out for a centre inside, else
    /// the surface's first contact.
    pub fn sweep(
        &self,
        place: &Placement,
        s: &crate::collider::Sweep,
        limit: f64,
        t_cull: f32,
    ) -> Option<(Contact, Option<u32>)> {
        if self.contains(place, s.center) {
            let h = self.way_out(place, s.center, s.radius)?;
            return Some((h.contact, h.feature));
        }
        tri_mesh::sweep(place, &self.0.surface, s, limit, t_cull).map(|(c, f)| (c, Some(f)))
    }
}

/// A sphere as a query posed: its centre grown by its radius.
fn point_posed(c: Vec3, r: f32) -> crate::shape::Posed<'static> {
    crate::shape::Posed {
        core: crate::shape::Core::Point(crate::geom::gjk::Point(c.as_dvec3())),
        radius: f64::from(r),
    }
}

/// The contact of a query shape with a concave solid: the least move along one
/// direction that frees the shape from the solid, so that a shape is never
/// pushed further in, nor out of one triangle into another.
///
/// - Centred inside: [`shape_inside`].
/// - Centred outside and touching the surface: the deepest surface
///   triangle's contact, where moving by its depth along its normal frees
///   the shape (the common case, checked by one more walk); else the
///   shorter of the ways out ([`exit_along`]) along that normal and along
///   the direction from the surface point nearest the centre to the
///   centre (outwards). No way out is shallower than the deepest
///   triangle's: freeing the shape frees it from that triangle too.
///
/// The point is then a surface point in the shape ([`surface_point`]).
pub(crate) fn shape_touch(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
) -> Option<(Touch, Option<u32>)> {
    solid_way_out(place, b, posed).map(|tf| surface_point(place, b, posed, tf))
}

/// [`shape_touch`] before its point is chosen: the least translation out.
fn solid_way_out(place: &Placement, b: &BspView, posed: &Posed) -> Option<(Touch, Option<u32>)> {
    if let Some(inside) = inside_way_out(place, b, posed) {
        return Some(inside);
    }
    let (t, f, own) = tri_mesh::shape_touch_own(place, &b.0.surface, posed)?;
    let frees_it = frees(place, b, posed, t.normal, t.depth);
    if frees_it && own {
        // the deepest triangle's own way out frees the shape from the
        // solid: no translation is shorter
        return Some((t, Some(f)));
    }
    // a free translation to improve on: this one, or the least move along
    // the deepest contact's normal or outwards from the surface point
    // nearest the centre, whichever is shortest
    let mut best = frees_it.then_some((t, Some(f)));
    let mut offer = |other: Option<(Touch, Option<u32>)>| {
        if let Some(o) = other
            && best.is_none_or(|(x, _)| o.0.depth < x.depth)
        {
            best = Some(o);
        }
    };
    offer(exit_along(place, b, posed, t.normal));
    let c = posed.centre();
    if let Some(near) = tri_mesh::closest(place, &b.0.surface, c.as_vec3(), f32::MAX)
        && near.distance > 0.0
    {
        offer(exit_along(
            place,
            b,
            posed,
            (c - near.contact.point) / near.distance,
        ));
    }
    Some(match best {
        Some(upper) => least_way_out(place, b, posed, upper, if own { t.depth } else { 0.0 }),
        None => (t, Some(f)),
    })
}

/// Whether the query shape moved by `depth` (and a hair) along `n` is free of
/// the solid: it overlaps no surface triangle, and its centre is outside.
fn frees(place: &Placement, b: &BspView, posed: &Posed, n: DVec3, depth: f64) -> bool {
    let (c, h) = posed.bounds();
    let size = c.abs().max_element() + h.max_element() + 1.0;
    let v = n * (depth + 1e-7 * size);
    if b.contains_local(place.local_point64(posed.centre() + v)) {
        return false;
    }
    let moved = Moved(&posed.core, v);
    let (lo, hi) = tri_mesh::local_box(place, c + v, h);
    let mesh = &b.0.surface;
    let mut touched = false;
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        touched = (first << 1..(first << 1) + count).any(|slot| {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            convex_contact::touch(&moved, posed.radius, &tri, 0.0)
                .is_some_and(|t| t.depth > 1e-9 * size)
        });
        touched
    });
    !touched
}

/// The way out of a concave solid for a query shape whose centre is inside
/// it, whatever else it touches: the solid, not the surface triangles
/// near it, is what the shape must leave (a triangle's own contact would
/// push a shape that is mostly inside further in).
///
/// The direction is from the centre to the surface point nearest it
/// (outwards: the centre is inside), and the depth is the least distance
/// along it that frees the shape from the solid ([`exit_along`]). For a
/// sphere this is the shortest way out wherever the solid is convex
/// around the nearest point; for other shapes and pinched solids it is
/// the shortest way out along that direction, which is always a way out.
/// The point is a surface point in the shape ([`surface_point`]), or,
/// for a shape wholly inside, where the shape, moved by the depth,
/// touches the surface it last leaves; the feature is that triangle's
/// source id.
pub(crate) fn shape_inside(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
) -> Option<(Touch, Option<u32>)> {
    inside_way_out(place, b, posed).map(|tf| surface_point(place, b, posed, tf))
}

/// A contact `t` with a concave solid, named `feature`, with its point
/// where the README's rule puts it: the surface point that the shape,
/// moved out by the depth along the normal, last touches, where that lies
/// in or on the shape as posed; else the surface point in the shape
/// farthest along the normal, over the surface triangles the shape
/// touches ([`convex_contact::settle`] on each); for a shape that touches
/// none (wholly inside), where it leaves. The feature is that point's
/// triangle.
fn surface_point(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
    (t, feature): (Touch, Option<u32>),
) -> (Touch, Option<u32>) {
    let last = last_touch(place, b, posed, t.normal * t.depth);
    if let Some((p, f, into)) = last
        && into <= 1e-7 * posed_size(posed)
    {
        return (Touch { point: p, ..t }, Some(f));
    }
    let (c, h) = posed.bounds();
    let (lo, hi) = tri_mesh::local_box(place, c, h);
    let mesh = &b.0.surface;
    let (core, radius) = (&posed.core, posed.radius);
    let mut best: Option<(DVec3, u32)> = None;
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            if let Some(own) = convex_contact::touch(core, radius, &tri, 0.0) {
                let own = Touch {
                    normal: t.normal,
                    ..own
                };
                // a triangle the shape reaches none of (it only grazes it,
                // to rounding) offers no point
                let Some(p) = convex_contact::settled_point(core, radius, &tri, 0.0, own) else {
                    continue;
                };
                let source = tri_mesh::slot_source(mesh, slot);
                // ties to the lower source id, whatever the walk's order
                if best.is_none_or(|(b, bs)| {
                    let (h, bh) = (p.dot(t.normal), b.dot(t.normal));
                    h > bh || (h == bh && source < bs)
                }) {
                    best = Some((p, source));
                }
            }
        }
        false
    });
    match (best, last) {
        (Some((point, f)), _) => (Touch { point, ..t }, Some(f)),
        (None, Some((point, f, _))) => (Touch { point, ..t }, Some(f)),
        (None, None) => (t, feature),
    }
}

/// The size of a posed shape's coordinates, for tolerances.
fn posed_size(posed: &Posed) -> f64 {
    let (c, h) = posed.bounds();
    c.abs().max_element() + h.max_element() + 1.0
}

/// The surface point that the query shape moved by `v` touches, on the
/// triangle nearest the shape as posed: (point, source triangle, how far
/// the point lies outside the shape as posed). `None` where the moved
/// shape touches no triangle.
fn last_touch(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
    v: DVec3,
) -> Option<(DVec3, u32, f64)> {
    let (c, h) = posed.bounds();
    let eps = 1e-7 * (posed_size(posed) + v.length());
    let (lo, hi) = tri_mesh::local_box(place, c + v, h + eps);
    let mesh = &b.0.surface;
    let (core, radius) = (&posed.core, posed.radius);
    let moved = Moved(core, v);
    let mut best: Option<(DVec3, u32, f64)> = None;
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let tri = Triangle(tri_mesh::world_triangle(place, mesh, slot));
            let p = match gjk::distance(&moved, &tri) {
                Some(s) if s.distance <= radius + eps => s.on_b,
                Some(_) => continue,
                // overlapping by a rounding hair
                None => match convex_contact::touch(&moved, radius, &tri, 0.0) {
                    Some(t) => t.point,
                    None => continue,
                },
            };
            let into = gjk::distance(core, &Point(p)).map_or(0.0, |s| s.distance) - radius;
            let source = tri_mesh::slot_source(mesh, slot);
            // ties to the lower source id, whatever the walk's order
            if best.is_none_or(|(_, bs, x)| into < x || (into == x && source < bs)) {
                best = Some((p, source, into));
            }
        }
        false
    });
    best
}

/// The least translation out of the concave solid, given a free one,
/// `upper` (a depth along its normal): [`least_move`] over the obstacles
/// of the surface triangles the shape can meet on a shorter move, each
/// candidate checked free by the exact tests (it touches no triangle, and
/// its centre is outside). The obstacle surfaces are weighed nearest first
/// and none beyond the answer is: a ball in a corner a few centimetres
/// deep weighs the corner's walls, not every wall it could slide along.
/// `lower` is a depth no way out is shorter than (0 where none is known).
/// The point is then where the moved shape touches the surface, and the
/// feature that triangle.
fn least_way_out(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
    upper: (Touch, Option<u32>),
    lower: f64,
) -> (Touch, Option<u32>) {
    let reach = upper.0.depth;
    let size = posed_size(posed) + reach;
    // a candidate must beat the known way out by more than rounding
    let most = reach - 1e-9 * size;
    if most.is_nan() || most <= 0.0 {
        return upper;
    }
    // deepening from twice the known least depth: a translation shorter
    // than the bound meets only the triangles within it, so a search that
    // finds one has found the least; one that finds none doubles it
    let (_, h) = posed.bounds();
    let mut bound = (2.0 * lower).max(0.1 * h.max_element()).min(most);
    let v = loop {
        match least_within(place, b, posed, bound, size) {
            Least::Found(v) => break v,
            Least::NoneNearer if bound < most => bound = (bound * 2.0).min(most),
            _ => return upper,
        }
    };
    let depth = v.length();
    let (point, feature) = match last_touch(place, b, posed, v) {
        Some((p, f, _)) => (p, Some(f)),
        None => (upper.0.point, upper.1),
    };
    (
        Touch {
            point,
            normal: v / depth,
            depth,
        },
        feature,
    )
}

/// The least free translation shorter than `bound`, if one is: see
/// [`least_way_out`].
fn least_within(place: &Placement, b: &BspView, posed: &Posed, bound: f64, size: f64) -> Least {
    let (c, h) = posed.bounds();
    let (lo, hi) = tri_mesh::local_box(place, c, h + bound);
    let mesh = &b.0.surface;
    let mirrored = crate::placement::determinant(&place.world_matrix()) < 0.0;
    let mut tris: Vec<([DVec3; 3], u8)> = Vec::new();
    TreeRef::of(mesh).walk_box(lo, hi, |leaf| {
        let (first, count) = tri_mesh::leaf_span(mesh, leaf);
        for slot in first << 1..(first << 1) + count {
            let mut v = tri_mesh::world_triangle(place, mesh, slot);
            let mut flat = tri_mesh::flat_mask(mesh, slot);
            if mirrored {
                // outward is the winding's normal, which a mirror turns:
                // wind it back (edge 0 becomes the old edge 2, and 2 0)
                v.swap(1, 2);
                flat = (flat & 2) | (flat >> 2 & 1) | (flat << 2 & 4);
            }
            tris.push((v, flat));
        }
        false
    });
    let (core, radius) = (&posed.core, posed.radius);
    // a box's or hull's faces and edges with their Gauss arcs, once
    let (mut faces, mut edges) = (Vec::new(), Vec::new());
    let polyhedral =
        matches!(core, Core::Cuboid(_) | Core::Hull(_)) && core.features(&mut faces, &mut edges);
    let gauss = polyhedral.then_some((&faces[..], &edges[..]));
    let mut surfaces = Vec::new();
    let local = obstacles::Local::new(&tris, size);
    obstacles::patches(&local, core, radius, gauss, &mut surfaces);
    // free to a hair: a candidate lies on the surfaces it was found on, to
    // the solver's rounding, and where many surfaces meet nearly in one
    // point (a great ball pushed into a ring of edges) the points of their
    // triples lie apart by more than that rounding
    let eps = 1e-9 * size;
    let centre = posed.centre();
    // the triangle that blocked the last candidate is asked first: the
    // candidates near one another are mostly blocked by the same one
    let mut blocker = 0;
    let free = |v: DVec3| {
        let moved = Moved(core, v);
        let blocks = |t: &[DVec3; 3]| match core {
            Core::Point(p) => {
                (sphere_triangle::closest_point(p.0 + v, t[0], t[1], t[2]) - (p.0 + v)).length()
                    < radius - eps
            }
            _ => convex_contact::touch(&moved, radius, &Triangle(*t), 0.0)
                .is_some_and(|x| x.depth > eps),
        };
        if tris.get(blocker).is_some_and(|(t, _)| blocks(t)) {
            return false;
        }
        if let Some(k) = tris.iter().position(|(t, _)| blocks(t)) {
            blocker = k;
            return false;
        }
        !b.contains_local(place.local_point64(centre + v))
    };
    least_move::least_move(&surfaces, bound, size, free)
}

/// [`shape_inside`] with the point where the moved shape last touches.
fn inside_way_out(place: &Placement, b: &BspView, posed: &Posed) -> Option<(Touch, Option<u32>)> {
    let c = posed.centre();
    if !b.contains_local(place.local_point64(c)) {
        return None;
    }
    let near = tri_mesh::closest(place, &b.0.surface, c.as_vec3(), f32::MAX)?;
    let out = near.contact.point - c;
    let len = out.length();
    let n = if len > 0.0 {
        out / len
    } else {
        near.contact.normal
    };
    if let Some(upper) = exit_along(place, b, posed, n) {
        return Some(least_way_out(place, b, posed, upper, 0.0));
    }
    Some((
        // no way out was found along n (rounding at a degenerate
        // surface): the nearest point's tangent plane, as before
        Touch {
            point: near.contact.point,
            normal: n,
            depth: ((near.contact.point - posed.core.support(-n)).dot(n) + posed.radius).max(0.0),
        },
        near.feature,
    ))
}

/// A surface triangle on the way out ([`exit_along`]), with bounds of
/// the interval of distances along the way at which the shape touches it.
struct Span {
    /// No sooner than this.
    first: f64,
    /// No later than this.
    last: f64,
    v: [DVec3; 3],
    slot: u32,
}

/// A distance along the way out and a span's index, ordered by the
/// distance (then the index).
#[derive(Clone, Copy, PartialEq)]
struct Key(f64, usize);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Collects the surface triangles a moving posed's volume reaches.
struct Reached<'a> {
    slots: &'a mut Vec<u32>,
    mesh: &'a ArchivedTriMesh,
}

impl RayVisitor for Reached<'_> {
    fn t_max(&self) -> f32 {
        1.0
    }
    fn leaf(&mut self, data: u32) -> bool {
        let (first, count) = tri_mesh::leaf_span(self.mesh, data);
        self.slots.extend(first << 1..(first << 1) + count);
        false
    }
}

/// The least distance `s ≥ 0` such that the query shape moved by `s · n` (a
/// unit world direction) is free of the concave solid `b`: it overlaps no
/// surface triangle and lies outside. Each surface triangle the query shape
/// meets while moving along `n` is met over one interval of `s` (a convex
/// shape moving along a line against a convex piece), found by a cast in
/// from each end; between the intervals the shape touches no surface and
/// is wholly inside or wholly outside, which the point-in-solid test of
/// its centre tells. The first gap outside is the way out.
pub(crate) fn exit_along(
    place: &Placement,
    b: &BspView,
    posed: &Posed,
    n: DVec3,
) -> Option<(Touch, Option<u32>)> {
    let mesh = &b.0.surface;
    let (core, radius) = (&posed.core, posed.radius);
    let n = n.normalize();
    // far enough along n that the query shape is past every surface point
    let (lo, hi) = (vec3a(&mesh.min).as_dvec3(), vec3a(&mesh.max).as_dvec3());
    let mut far_surface = f64::NEG_INFINITY;
    for k in 0..8 {
        let corner = DVec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        );
        far_surface = far_surface.max(place.world_point64(corner).dot(n));
    }
    let trailing = core.support(-n).dot(n) - radius;
    let size = far_surface.abs() + trailing.abs() + radius + 1.0;
    let reach = (far_surface - trailing).max(0.0) + 1e-3 * size;
    let motion = n * reach;
    // the triangles within the swept volume
    let (c, h) = posed.bounds();
    let (blo, bhi) = tri_mesh::local_box(place, c, h);
    let lm = place.local_vector64(motion).as_vec3();
    if !lm.is_finite() || lm == Vec3::ZERO {
        return None;
    }
    let mut slots = Vec::new();
    TreeRef::of(mesh).walk_ray(
        &SlabRay::new((blo + bhi) * 0.5, lm),
        &Grow::by_extent((bhi - blo) * 0.5),
        &mut Reached {
            slots: &mut slots,
            mesh,
        },
    );
    let same = |t: Touch| (t, t.normal);
    let far = Moved(core, motion);
    // a sphere's casts in closed form (the general casts' conservative
    // advancement costs ten times as much, and spheres are most queries)
    let sphere = match core {
        crate::shape::Core::Point(p) => Some(p.0),
        _ => None,
    };
    // where the moving query shape meets each triangle, and (asked only for
    // the triangles the walk below reaches) where it leaves it, by a
    // cast back from the far end
    let enter = |v: &[DVec3; 3]| match sphere {
        Some(c) => sphere_triangle::sweep(c, radius, motion, 1.0, v[0], v[1], v[2]).map(|h| h.t),
        None => convex_contact::cast(core, radius, motion, 1.0, &Triangle(*v), 0.0, None, same)
            .map(|h| h.0),
    };
    let leave = |v: &[DVec3; 3]| match sphere {
        Some(c) => {
            sphere_triangle::sweep(c + motion, radius, -motion, 1.0, v[0], v[1], v[2]).map(|h| {
                let touch = Touch {
                    point: h.point,
                    normal: h.normal,
                    depth: 0.0,
                };
                (h.t, touch)
            })
        }
        None => convex_contact::cast(&far, radius, -motion, 1.0, &Triangle(*v), 0.0, None, same),
    };
    // Each triangle's interval of `s` is bounded without a cast: the
    // shape meets it no sooner than its front reaches the triangle's
    // lowest point along n, and touches it no later than its back passes
    // the highest. A triangle whose interval ends by the current `s` can
    // neither move `s` on nor close a gap past it, so it is dropped
    // uncast; the others are cast in from their end only once their
    // bound says they may have been met (Hjaltason and Samet, "Distance
    // browsing in spatial databases", 1999), and out from the far end
    // highest bound first.
    // The shape also lies within a ball about its centre, which meets the
    // triangle only where the centre's line passes within the sum of the
    // two balls' radii of the triangle's own ball (a triangle the line
    // passes farther off is never met).
    let front = core.support(n).dot(n) + radius;
    let slack = 1e-9 * size;
    let centre = posed.centre();
    let mut ball = 0.0f64;
    core.for_each_vertex(&mut |x| ball = ball.max((x - centre).length()));
    let ball = ball + radius;
    let mut spans: Vec<Span> = slots
        .iter()
        .filter_map(|&slot| {
            let v = tri_mesh::world_triangle(place, mesh, slot);
            let (lo, hi) = v
                .iter()
                .map(|x| x.dot(n))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                    (lo.min(d), hi.max(d))
                });
            let mid = (v[0] + v[1] + v[2]) / 3.0;
            let own = v.iter().map(|x| (*x - mid).length()).fold(0.0, f64::max);
            let along = (mid - centre).dot(n);
            let off = (mid - centre - n * along).length_squared();
            let reach = (own + ball) * (1.0 + 1e-9) + slack;
            let half = (reach * reach - off).max(0.0).sqrt();
            if off > reach * reach {
                return None;
            }
            Some(Span {
                first: (lo - front).max(along - half) - slack,
                last: (hi - trailing).min(along + half) + slack,
                v,
                slot,
            })
        })
        .collect();
    spans.sort_unstable_by(|a, b| a.first.total_cmp(&b.first).then(a.slot.cmp(&b.slot)));
    let mut at: Option<(Touch, Option<u32>)> = None;
    let mut s = 0.0f64;
    // spans[next..]: not looked at yet; `near`: those whose bound allows
    // them to be met by s, latest bound first, `true` where known to be
    // met (else not cast in yet); `ahead`: met past s, earliest first
    let mut next = 0;
    let mut near: BinaryHeap<(Key, bool)> = BinaryHeap::new();
    let mut ahead: BinaryHeap<Reverse<Key>> = BinaryHeap::new();
    loop {
        while let Some(sp) = spans.get(next)
            && sp.first <= s + slack
        {
            near.push((Key(sp.last, next), false));
            next += 1;
        }
        while let Some(&Reverse(Key(e, i))) = ahead.peek()
            && e <= s + slack
        {
            ahead.pop();
            near.push((Key(spans[i].last, i), true));
        }
        if let Some((Key(last, i), known)) = near.pop() {
            if at.is_some() && last <= s {
                // nor any other near one: their bounds are no later
                near.clear();
                continue;
            }
            if !known {
                match enter(&spans[i].v).map(|e| e * reach) {
                    Some(e) if e <= s + slack => {}
                    Some(e) => {
                        ahead.push(Reverse(Key(e, i)));
                        continue;
                    }
                    None => continue,
                }
            }
            let Some((back, touch)) = leave(&spans[i].v) else {
                continue;
            };
            let out = (1.0 - back) * reach;
            if out > s || at.is_none() {
                s = s.max(out);
                at = Some((touch, Some(tri_mesh::slot_source(mesh, spans[i].slot))));
            }
            continue;
        }
        // none met by s: the next span the shape meets, exactly (no span
        // whose bound is later than a known meeting meets it sooner)
        while let Some(sp) = spans.get(next)
            && ahead.peek().is_none_or(|Reverse(Key(e, _))| sp.first <= *e)
        {
            if (at.is_none() || sp.last > s)
                && let Some(e) = enter(&sp.v)
            {
                ahead.push(Reverse(Key(e * reach, next)));
            }
            next += 1;
        }
        let Some(Reverse(Key(e, i))) = ahead.pop() else {
            break;
        };
        // a gap from s to that meeting, touching no surface: the shape
        // is wholly outside or wholly inside there
        let mid = (s + e) * 0.5;
        if at.is_some() && !b.contains_local(place.local_point64(centre + n * mid)) {
            break;
        }
        near.push((Key(spans[i].last, i), true));
    }
    let (last, source) = at?;
    Some((
        Touch {
            point: last.point,
            normal: n,
            depth: s,
        },
        source,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collider::testing::placed_copies;
    use crate::collider::{Family, placed};
    use crate::{ConvexHull, Pose, QueryShape};
    use glam::{DAffine3, DQuat, Quat};
    use kiln_baker::SceneMesh;
    use kiln_geometry::rng::Rng;

    /// [`exit_along`] as it was before its bounds: every triangle of the
    /// surface cast in, spans taken in order of entry, each cast out.
    fn exit_along_casting_every_triangle(
        place: &Placement,
        b: &BspView,
        posed: &Posed,
        n: DVec3,
    ) -> Option<f64> {
        let mesh = &b.0.surface;
        let (core, radius) = (&posed.core, posed.radius);
        let n = n.normalize();
        let (lo, hi) = (vec3a(&mesh.min).as_dvec3(), vec3a(&mesh.max).as_dvec3());
        let far_surface = (0..8)
            .map(|k| {
                let pick = |bit: usize, a: f64, b: f64| if k & bit == 0 { a } else { b };
                let c = DVec3::new(
                    pick(1, lo.x, hi.x),
                    pick(2, lo.y, hi.y),
                    pick(4, lo.z, hi.z),
                );
                place.world_point64(c).dot(n)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        let trailing = core.support(-n).dot(n) - radius;
        let size = far_surface.abs() + trailing.abs() + radius + 1.0;
        let reach = (far_surface - trailing).max(0.0) + 1e-3 * size;
        let motion = n * reach;
        let same = |t: Touch| (t, t.normal);
        let far = Moved(core, motion);
        let mut slots = Vec::new();
        TreeRef::of(mesh).walk_box(vec3a(&mesh.min).into(), vec3a(&mesh.max).into(), |leaf| {
            let (first, count) = tri_mesh::leaf_span(mesh, leaf);
            slots.extend(first << 1..(first << 1) + count);
            false
        });
        let mut spans: Vec<(f64, [DVec3; 3], u32)> = slots
            .into_iter()
            .filter_map(|slot| {
                let v = tri_mesh::world_triangle(place, mesh, slot);
                let e = match core {
                    crate::shape::Core::Point(p) => {
                        sphere_triangle::sweep(p.0, radius, motion, 1.0, v[0], v[1], v[2])
                            .map(|h| h.t)
                    }
                    _ => convex_contact::cast(
                        core,
                        radius,
                        motion,
                        1.0,
                        &Triangle(v),
                        0.0,
                        None,
                        same,
                    )
                    .map(|h| h.0),
                };
                Some((e? * reach, v, slot))
            })
            .collect();
        spans.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        let (centre, slack) = (posed.centre(), 1e-9 * size);
        let (mut s, mut any) = (0.0f64, false);
        for (enter, v, _) in &spans {
            if *enter > s + slack
                && any
                && !b.contains_local(place.local_point64(centre + n * ((s + enter) * 0.5)))
            {
                break;
            }
            let back = match core {
                crate::shape::Core::Point(p) => {
                    sphere_triangle::sweep(p.0 + motion, radius, -motion, 1.0, v[0], v[1], v[2])
                        .map(|h| h.t)
                }
                _ => {
                    convex_contact::cast(&far, radius, -motion, 1.0, &Triangle(*v), 0.0, None, same)
                        .map(|h| h.0)
                }
            };
            if let Some(back) = back {
                s = s.max((1.0 - back) * reach);
                any = true;
            }
        }
        any.then_some(s)
    }

    /// The bounded way out of a concave solid is the way out found by
    /// casting every triangle, for spheres, capsules, boxes and hulls in,
    /// across and beside a knotted tube, along random directions, under an
    /// identity and a turned, scaled, far placement.
    #[test]
    fn bounded_exit_answers_as_casting_every_triangle() {
        let (pos, tris) = kiln_tests::torus_knot(48, 8, false);
        let turned = DAffine3::from_scale_rotation_translation(
            DVec3::new(1.5, 0.7, 1.2),
            DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), 1.1),
            DVec3::new(900.0, -40.0, 300.0),
        );
        let level = placed_copies(
            SceneMesh::new("knot", pos, &tris),
            &[DAffine3::IDENTITY, turned],
            "bsp",
        );
        let mut rng = Rng(0xe417_a10e_0000_0001);
        let pts: Vec<Vec3> = (0..10)
            .map(|_| (rng.unit() * DVec3::new(0.15, 0.1, 0.12)).as_vec3())
            .collect();
        let hull = ConvexHull::new(&pts).expect("a solid hull");
        let (mut found, mut checked) = (0, 0);
        for i in 0..3000 {
            let ii = (i % 2) as u32;
            let (shape, place) = placed(level.archive(), ii);
            let Family::Bsp(b) = shape.family() else {
                panic!("the knot is a solid");
            };
            let size = 0.03 + rng.f() * 0.3;
            let shapes = [
                QueryShape::Sphere {
                    radius: size as f32,
                },
                QueryShape::Capsule {
                    half_height: size as f32,
                    radius: (size * 0.5) as f32,
                },
                QueryShape::Cuboid {
                    half: Vec3::new(1.0, 0.5, 0.7) * size as f32,
                },
                QueryShape::Hull(&hull),
            ];
            let local = rng.unit() * DVec3::new(0.8, 0.3, 0.8);
            let at = if ii == 0 {
                local
            } else {
                turned.transform_point3(local)
            };
            let rotation = Quat::from_axis_angle(
                rng.unit().as_vec3(),
                (rng.f() * std::f64::consts::TAU) as f32,
            );
            let posed = Posed::new(&shapes[i % 4], &Pose::new(rotation, at.as_vec3()))
                .expect("a valid pose");
            let n = rng.unit();
            let got = exit_along(&place, &b, &posed, n);
            let want = exit_along_casting_every_triangle(&place, &b, &posed, n);
            assert_eq!(got.map(|(t, _)| t.depth), want, "case {i}");
            if let Some((t, _)) = got {
                assert!(t.normal.abs_diff_eq(n.normalize(), 1e-12), "case {i}");
                found += 1;
            }
            checked += 1;
        }
        assert!(found > checked / 4, "{found} of {checked} met the knot");
    }

    /// A watertight mesh of the union of unit cubes `cells` (integer
    /// corners) scaled by `size`: the faces between a filled cell and an
    /// empty one, wound outwards.
    fn voxels(cells: &[[i32; 3]], size: f32) -> SceneMesh {
        let (corners, tris) = kiln_geometry::voxels::surface(cells);
        let pos = corners.iter().map(|p| p.map(|x| x as f32 * size)).collect();
        SceneMesh::new("voxels", pos, &tris)
    }

    /// The cells of `lo..hi` (per axis) where `solid` holds.
    fn cells(lo: [i32; 3], hi: [i32; 3], solid: impl Fn([i32; 3]) -> bool) -> Vec<[i32; 3]> {
        let mut out = Vec::new();
        for i in lo[0]..hi[0] {
            for j in lo[1]..hi[1] {
                for k in lo[2]..hi[2] {
                    if solid([i, j, k]) {
                        out.push([i, j, k]);
                    }
                }
            }
        }
        out
    }

    /// The placements the known answers are checked under: the identity,
    /// and a mirror turned and moved (rigid, so the least translation maps
    /// with it).
    fn rigid_placements() -> [DAffine3; 2] {
        let turn = DQuat::from_axis_angle(DVec3::new(0.2, 1.0, 0.4).normalize(), 0.8);
        let mirror = DAffine3::from_mat3(glam::DMat3::from_diagonal(DVec3::new(-1.0, 1.0, 1.0)));
        [
            DAffine3::IDENTITY,
            DAffine3::from_rotation_translation(turn, DVec3::new(30.0, -4.0, 12.0)) * mirror,
        ]
    }

    /// Checks the one overlap of `shape` at `pose` (given in the solid's
    /// own frame) under every placement: depth `|v|`, normal along `v`,
    /// and the point (in the solid's frame) is where the moved-out shape
    /// touches the surface, as `touches` tells.
    fn check_way_out(
        mesh: &SceneMesh,
        shape: &QueryShape,
        rotation: DQuat,
        at: DVec3,
        v: DVec3,
        touches: impl Fn(DVec3) -> bool,
    ) {
        let places = rigid_placements();
        let level = placed_copies(mesh.clone(), &places, "bsp");
        for (i, m) in places.iter().enumerate() {
            let (_, turn, _) = m.to_scale_rotation_translation();
            // a capsule placed is the capsule about the placed axis; a
            // box is its own mirror image, turned as the placement turns
            let rotation = match shape {
                QueryShape::Capsule { .. } => DQuat::from_rotation_arc(
                    DVec3::Y,
                    m.transform_vector3(rotation * DVec3::Y).normalize(),
                ),
                _ => turn * rotation,
            };
            let pose = Pose::new(rotation.as_quat(), m.transform_point3(at).as_vec3());
            let got: Vec<_> = level
                .overlap(shape, &pose, &crate::Filter::ALL)
                .into_iter()
                .filter(|o| o.object.index() == i as u32)
                .collect();
            assert_eq!(got.len(), 1, "placement {i}: {got:?}");
            let o = &got[0];
            let want = m.transform_vector3(v);
            assert!(
                (f64::from(o.depth) - want.length()).abs() < 1e-4,
                "placement {i}: depth {} for {}",
                o.depth,
                want.length()
            );
            assert!(
                o.normal.as_dvec3().abs_diff_eq(want.normalize(), 1e-4),
                "placement {i}: normal {} for {}",
                o.normal,
                want.normalize()
            );
            let p = m.inverse().transform_point3(o.point.as_dvec3());
            assert!(
                touches(p),
                "placement {i}: point {p} not where the moved shape touches"
            );
        }
    }

    /// A test that a point is one of `points`.
    fn one_of(points: &[DVec3]) -> impl Fn(DVec3) -> bool + '_ {
        |p| points.iter().any(|t| (*t - p).length() < 1e-4)
    }

    /// A ball in the inside corner of two thick walls (an L-shaped solid),
    /// 0.08 deep in one and 0.06 in the other, goes out diagonally by 0.1,
    /// not along one wall and out through the far end of the other; in
    /// the corner of three walls, by the three depths at once.
    #[test]
    fn a_ball_in_a_corner_is_freed_by_the_least_translation() {
        let two = voxels(
            &cells([-1, -1, -2], [3, 3, 2], |c| c[0] < 0 || c[1] < 0),
            1.0,
        );
        let ball = QueryShape::Sphere { radius: 0.5 };
        let at = DVec3::new(0.42, 0.44, 0.0);
        check_way_out(
            &two,
            &ball,
            DQuat::IDENTITY,
            at,
            DVec3::new(0.08, 0.06, 0.0),
            one_of(&[DVec3::new(0.0, 0.5, 0.0), DVec3::new(0.5, 0.0, 0.0)]),
        );
        let three = voxels(
            &cells([-1, -1, -1], [3, 3, 3], |c| c.iter().any(|&x| x < 0)),
            1.0,
        );
        check_way_out(
            &three,
            &ball,
            DQuat::IDENTITY,
            DVec3::new(0.42, 0.44, 0.45),
            DVec3::new(0.08, 0.06, 0.05),
            one_of(&[
                DVec3::new(0.0, 0.5, 0.5),
                DVec3::new(0.5, 0.0, 0.5),
                DVec3::new(0.5, 0.5, 0.0),
            ]),
        );
    }

    /// A capsule lying in the crease of two walls, tilted so that its ends
    /// sit at different depths, and a box in the same corner: each is
    /// freed by the least translation out of both walls at once.
    #[test]
    fn a_capsule_and_a_box_in_a_crease_are_freed_by_the_least_translation() {
        let two = voxels(
            &cells([-1, -1, -2], [3, 3, 2], |c| c[0] < 0 || c[1] < 0),
            1.0,
        );
        // ends (0.40, 0.44, -0.5) and (0.45, 0.46, 0.5): the lower end
        // decides both walls' depths, 0.1 and 0.06
        let (a, b) = (DVec3::new(0.40, 0.44, -0.5), DVec3::new(0.45, 0.46, 0.5));
        let axis = (b - a).normalize();
        let capsule = QueryShape::Capsule {
            half_height: ((b - a).length() * 0.5) as f32,
            radius: 0.5,
        };
        let v = DVec3::new(0.1, 0.06, 0.0);
        let end = a + v;
        check_way_out(
            &two,
            &capsule,
            DQuat::from_rotation_arc(DVec3::Y, axis),
            (a + b) * 0.5,
            v,
            one_of(&[DVec3::new(0.0, end.y, end.z), DVec3::new(end.x, 0.0, end.z)]),
        );
        let cube = QueryShape::Cuboid {
            half: Vec3::splat(0.5),
        };
        // the moved box (x and y in [0, 1], z in [-0.5, 0.5]) lies with a
        // face on each wall
        let on_face = |p: DVec3, a: usize| {
            let (u, w) = ((a + 1) % 3, (a + 2) % 3);
            let within = |k: usize, lo: f64, hi: f64| p[k] >= lo - 1e-4 && p[k] <= hi + 1e-4;
            p[a].abs() < 1e-4
                && [u, w].iter().all(|&k| {
                    if k == 2 {
                        within(k, -0.5, 0.5)
                    } else {
                        within(k, 0.0, 1.0)
                    }
                })
        };
        check_way_out(
            &two,
            &cube,
            DQuat::IDENTITY,
            DVec3::new(0.42, 0.44, 0.0),
            DVec3::new(0.08, 0.06, 0.0),
            // and lies in the box as posed (the README's rule)
            |p| {
                let posed = (p - DVec3::new(0.42, 0.44, 0.0)).abs().max_element() <= 0.5 + 1e-4;
                posed && (on_face(p, 0) || on_face(p, 1))
            },
        );
        // deeper in one wall than the other, either way round
        for (x, y) in [(0.42, 0.40), (0.45, 0.30), (0.30, 0.45), (0.35, 0.48)] {
            check_way_out(
                &two,
                &cube,
                DQuat::IDENTITY,
                DVec3::new(x, y, 0.0),
                DVec3::new(0.5 - x, 0.5 - y, 0.0),
                |p| {
                    let posed = (p - DVec3::new(x, y, 0.0)).abs().max_element() <= 0.5 + 1e-4;
                    posed && (on_face(p, 0) || on_face(p, 1))
                },
            );
        }
    }

    /// A ball pressed into a slot narrower than itself rests on both
    /// lips: from (0.05, 0.1) over a slot 0.6 wide it goes to (0, 0.4),
    /// where it touches both lip edges (two tubes meet).
    #[test]
    fn a_ball_in_a_narrow_slot_rests_on_both_lips() {
        // cells of 0.3: the slot is x in [-0.3, 0.3] above y = -0.9
        let slot = voxels(
            &cells([-7, -4, -4], [7, 0, 4], |c| {
                c[0] < -1 || c[0] >= 1 || c[1] < -3
            }),
            0.3,
        );
        let ball = QueryShape::Sphere { radius: 0.5 };
        check_way_out(
            &slot,
            &ball,
            DQuat::IDENTITY,
            DVec3::new(0.05, 0.1, 0.0),
            DVec3::new(-0.05, 0.3, 0.0),
            one_of(&[DVec3::new(0.3, 0.0, 0.0), DVec3::new(-0.3, 0.0, 0.0)]),
        );
    }
}
