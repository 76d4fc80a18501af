//! The baked colliders, one module per family, behind one dispatch
//! ([`ColliderRef`]) that lists every operation a collider answers for one
//! placed instance — a ray, a sphere (closest point, touch test, sweep), a
//! point (inside or not), a query shape (deepest contact, touch test,
//! cast) — each an exhaustive `match` over the families, so a new family
//! cannot be added without answering every operation (a tidy test keeps
//! catch-all arms out of this file). One fast path goes past it:
//! `query/ray_batch.rs` walks triangle meshes for packets of rays itself,
//! through [`ColliderRef::tri_mesh`]. Each operation
//! *returns* its answer; the level-wide walks in `crate::query` only pick
//! instances and keep the best.
//!
//! | family (archived shape) | module |
//! |---|---|
//! | triangle meshes | [`tri_mesh`]: the mesh tree walked in local space, exact triangle tests |
//! | concave solids | [`bsp`]: inside by the BSP tree, everything else on the surface mesh |
//! | polytopes and boxes | [`polytope`], over the plane-set routines of [`convex`] |
//! | spheres and capsules | [`rounded`]: closed forms |
//!
//! Query shapes meet a collider as convex pieces handed to
//! [`crate::geom::convex_contact`]: a mesh's triangles (so a box against a
//! triangle is [`tri_mesh::shape_touch`] calling it), a polytope or box as
//! a whole, a sphere's centre or a capsule's segment with its radius.
//! Nothing here imports from `crate::query`.

pub(crate) mod bsp;
pub(crate) mod convex;
pub(crate) mod obstacles;
pub(crate) mod polytope;
pub(crate) mod rounded;
pub(crate) mod tri_mesh;

use crate::geom::convex_contact::{self, Touch};
use crate::geom::gjk::{OrientedBox, Point, Segment, Support};
use crate::geom::sphere_triangle::Contact;
use crate::object::ObjectId;
use crate::placement::{Frame, Placement, transform_point, transform_vector};
use crate::shape::{Core, Posed};
use glam::{DVec3, Vec3};
use kiln_formats::level::{ArchivedCollider, ArchivedInstance, ArchivedLevel};
use polytope::{Convex, LocalPolytope, PlacedPolytope};
use rounded::Rounded;

/// A ray hit in a shape's local space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalRayHit {
    /// Ray parameter (the same in local and world space).
    pub t: f32,
    /// The surface's front-side normal in local space (unnormalised):
    /// the triangle's winding normal, or a solid's outward normal.
    pub normal: Vec3,
    /// Feature: source triangle (meshes), collider triangle (concave
    /// solids), face (plane index of boxes and polytopes); `None` for
    /// spheres and capsules.
    pub feature: Option<u32>,
    /// The ray starts inside a solid (`t = 0`).
    pub inside: bool,
}

/// The closest point of a shape to a sphere's centre, in world space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColliderContact {
    /// Point, and normal from the shape towards the centre.
    pub contact: Contact,
    /// Distance from the centre to the point (f64).
    pub distance: f64,
    /// Feature, as in [`LocalRayHit::feature`].
    pub feature: Option<u32>,
    /// The centre is inside a solid: `distance` is then the depth of the
    /// centre below the surface and the normal the shortest way out.
    pub inside: bool,
}

impl ColliderContact {
    /// Penetration depth of a sphere of radius `r`.
    #[inline]
    pub fn depth(&self, r: f64) -> f64 {
        if self.inside {
            r + self.distance
        } else {
            (r - self.distance).max(0.0)
        }
    }
}

/// A closest point kept only if it touches a sphere of radius `r`.
pub(crate) fn keep(
    contact: Contact,
    distance: f64,
    inside: bool,
    feature: Option<u32>,
    r: f32,
) -> Option<ColliderContact> {
    (inside || distance <= f64::from(r)).then_some(ColliderContact {
        contact,
        distance,
        feature,
        inside,
    })
}

/// A sphere sweep: `center + t·dir`, `t` in `[0, max_t]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sweep {
    /// Start centre.
    pub center: Vec3,
    /// Radius (≥ 0).
    pub radius: f32,
    /// Motion (non-zero).
    pub dir: Vec3,
    /// Largest `t` of interest.
    pub max_t: f32,
}

/// The world ray `origin + t·dir` in the local space of `local_from_world`
/// (the same `t`); `None` where the transform leaves it degenerate (a zero
/// or non-finite direction, a non-finite origin), which hits nothing.
#[inline]
pub(crate) fn local_ray(
    local_from_world: &crate::placement::Mat3x4,
    origin: Vec3,
    dir: Vec3,
) -> Option<(Vec3, Vec3)> {
    let lo = transform_point(local_from_world, origin);
    let ld = transform_vector(local_from_world, dir);
    (ld != Vec3::ZERO && ld.is_finite() && lo.is_finite()).then_some((lo, ld))
}

/// Instance `ii` of `level` (verified: in range): its shape and placement
/// (the tests' way to one instance; queries go through [`At`]).
#[cfg(test)]
pub(crate) fn placed(level: &ArchivedLevel, ii: u32) -> (ColliderRef<'_>, Placement) {
    let inst = &level.instances[ii as usize];
    (
        ColliderRef(&level.colliders[inst.collider.to_native() as usize]),
        Placement::new(level, inst),
    )
}

/// Where a candidate object a walk found is placed: an instance of a
/// level (its placement read from the archive) or a body of a world (its
/// current matrices).
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    /// A level's instance.
    Instance(&'a ArchivedLevel, &'a ArchivedInstance),
    /// A world's body: its rows, and whether they were rounded from one
    /// exact similarity pair.
    Rows(&'a kiln_formats::placement::Rows, bool),
}

impl At<'_> {
    /// The world ray `o + t·d` in the shape's local space: [`local_ray`]
    /// through [`Self::local_from_world`], the same values. An instance
    /// placed by a translation alone (every level mesh baked in place,
    /// every unturned prop) takes its rows from the one function that
    /// makes them ([`kiln_formats::placement::translation_rows`]),
    /// inlined here, so their constant ones and zeros fold into the
    /// transform: the same operations on the same values, so the same
    /// bits, without a 12-entry matrix built and read back (an any-hit
    /// ray on sauer_pandora: 2,174 → 2,089 instructions, counted by
    /// callgrind).
    #[inline(always)]
    pub fn local_ray(&self, o: Vec3, d: Vec3) -> Option<(Vec3, Vec3)> {
        if let At::Instance(_, inst) = *self
            && let Some(r) = kiln_formats::placement::translation_rows(
                inst.rotation.map(|v| v.to_native()),
                inst.translation.map(|v| v.to_native()),
            )
        {
            return local_ray(&r.local_from_world, o, d);
        }
        local_ray(&self.local_from_world(), o, d)
    }

    /// Local-from-world (what a ray needs).
    #[inline]
    pub fn local_from_world(&self) -> crate::placement::Mat3x4 {
        match *self {
            At::Instance(level, inst) => level.local_from_world(inst),
            At::Rows(r, _) => r.local_from_world,
        }
    }

    /// The placement, prepared for exact tests.
    // always inlined, as `Placement::new` is: built aside it is copied
    // (a point query on a field of spheres 9% slower)
    #[inline(always)]
    pub fn placement(&self) -> Placement {
        match *self {
            At::Instance(level, inst) => Placement::new(level, inst),
            At::Rows(r, similar) => Placement::from_rows(*r, similar),
        }
    }

    /// World-from-local alone, in f64: what a convex piece is placed by
    /// (the same values as [`Self::placement`]'s, without its inverse).
    #[inline]
    pub fn frame(&self) -> Frame {
        match *self {
            At::Instance(level, inst) => Frame::of(&level.world_from_local(inst)),
            At::Rows(r, _) => Frame::of(&r.world_from_local),
        }
    }
}

/// What a walk over objects (a level's top-level tree, a world's bodies)
/// asks of a visitor: how far along its ray it still looks, and each
/// object the filter let through.
pub(crate) trait ObjectVisitor {
    /// Current far end of the ray (shrinks as hits are found).
    fn t_max(&self) -> f32;
    /// Visits object `id`; returns `true` to stop the walk.
    fn object(&mut self, id: ObjectId, collider: ColliderRef<'_>, at: At<'_>) -> bool;
}

/// One archived shape, ready to answer queries.
#[derive(Clone, Copy)]
pub(crate) struct ColliderRef<'a>(pub &'a ArchivedCollider);

impl<'a> ColliderRef<'a> {
    /// The closest hit (or with `any`, any hit) of the ray `lo + t·ld`,
    /// `t ≤ t_max`, in the shape's local space (see [`local_ray`]).
    #[inline]
    pub fn raycast_local(self, lo: Vec3, ld: Vec3, t_max: f32, any: bool) -> Option<LocalRayHit> {
        match self.family() {
            Family::TriMesh(m) => tri_mesh::raycast(m, lo, ld, t_max, any),
            Family::Convex(c) => c.raycast(lo, ld, t_max),
            Family::Rounded(r) => r.raycast(lo, ld, t_max),
            Family::Bsp(b) => b.raycast(lo, ld, t_max, any),
        }
    }

    /// Whether the ray `lo + t·ld`, `t ≤ t_max`, hits the shape (in its
    /// local space): [`Self::raycast_local`] with `any`, without building
    /// the answer a hit would carry.
    #[inline]
    pub fn raycast_local_any(self, lo: Vec3, ld: Vec3, t_max: f32) -> bool {
        match self.family() {
            Family::TriMesh(m) => tri_mesh::raycast_any(m, lo, ld, t_max),
            Family::Convex(c) => c.raycast(lo, ld, t_max).is_some(),
            Family::Rounded(r) => r.raycast(lo, ld, t_max).is_some(),
            Family::Bsp(b) => b.raycast(lo, ld, t_max, true).is_some(),
        }
    }

    /// For a sphere or capsule, its answer to the world ray `o + t·d`,
    /// `t ≤ t_max`, found in world space with a world normal
    /// ([`Rounded::raycast_placed`]); `None` for the other families, which
    /// answer in local space.
    #[inline]
    pub fn raycast_world(
        self,
        at: &At,
        o: Vec3,
        d: Vec3,
        t_max: f32,
    ) -> Option<Option<LocalRayHit>> {
        match self.family() {
            Family::Rounded(r) => Some(Rounded::raycast_placed(&r.placed(at), o, d, t_max)),
            Family::TriMesh(_) | Family::Convex(_) | Family::Bsp(_) => None,
        }
    }

    /// The shape's triangle mesh, if it is one.
    #[inline]
    pub fn tri_mesh(self) -> Option<&'a kiln_formats::tri_mesh::ArchivedTriMesh> {
        match self.0 {
            ArchivedCollider::TriMesh(m) => Some(m),
            ArchivedCollider::Polytope(_)
            | ArchivedCollider::Cuboid(_)
            | ArchivedCollider::Sphere(_)
            | ArchivedCollider::Capsule(_)
            | ArchivedCollider::Bsp(_) => None,
        }
    }

    /// The closest point of the shape within `radius` of `center`.
    // this and the three below always inlined: each builds the placement
    // a family needs, and called, a point query on hulls lost 9% to it
    #[inline(always)]
    pub fn closest(self, at: At, center: Vec3, radius: f32) -> Option<ColliderContact> {
        match self.family() {
            Family::TriMesh(m) => tri_mesh::closest(&at.placement(), m, center, radius),
            Family::Convex(c) => c.closest(&at.placement(), center, radius),
            Family::Rounded(r) => Rounded::closest(&r.placed(&at), center, radius),
            Family::Bsp(b) => b.closest(&at.placement(), center, radius),
        }
    }

    /// Whether the shape comes within `radius` of `center`.
    #[inline(always)]
    pub fn touches(self, at: At, center: Vec3, radius: f32) -> bool {
        match self.family() {
            Family::TriMesh(m) => {
                tri_mesh::touches(&at.placement(), m, center.as_dvec3(), f64::from(radius))
            }
            Family::Convex(c) => c.touches(&at.placement(), center, radius),
            Family::Rounded(r) => Rounded::closest(&r.placed(&at), center, radius).is_some(),
            Family::Bsp(b) => b.touches(&at.placement(), center, radius),
        }
    }

    /// The first contact of the sweep `s` at a time `≤ limit` (exact, f64),
    /// culling volumes beyond `t_cull`; with its feature.
    #[inline(always)]
    pub fn sweep(
        self,
        at: At,
        s: &Sweep,
        limit: f64,
        t_cull: f32,
    ) -> Option<(Contact, Option<u32>)> {
        match self.family() {
            Family::TriMesh(m) => {
                tri_mesh::sweep(&at.placement(), m, s, limit, t_cull).map(|(c, f)| (c, Some(f)))
            }
            Family::Convex(c) => c
                .sweep(&at.placement(), s, limit)
                .map(|(c, f)| (c, Some(f))),
            Family::Rounded(r) => Rounded::sweep(&r.placed(&at), s, limit).map(|c| (c, None)),
            Family::Bsp(b) => b.sweep(&at.placement(), s, limit, t_cull),
        }
    }

    /// Whether the world point `p` is inside the shape (triangle meshes
    /// have no inside).
    #[inline(always)]
    pub fn contains(self, at: At, p: Vec3) -> bool {
        match self.family() {
            Family::TriMesh(_) => false,
            Family::Convex(c) => c.contains(&at.placement(), p),
            Family::Rounded(r) => Rounded::contains(&r.placed(&at), p),
            Family::Bsp(b) => b.contains(&at.placement(), p),
        }
    }

    /// The shape as one of the three ways queries are answered.
    #[inline]
    fn family(self) -> Family<'a> {
        let f = |x: &rkyv::rend::f32_le| f64::from(x.to_native());
        match self.0 {
            ArchivedCollider::TriMesh(m) => Family::TriMesh(m),
            ArchivedCollider::Polytope(p) => Family::Convex(Convex::Polytope(LocalPolytope(p))),
            ArchivedCollider::Cuboid(c) => {
                let h = &c.half_extents;
                Family::Convex(Convex::Cuboid(convex::CuboidView(DVec3::new(
                    f(&h[0]),
                    f(&h[1]),
                    f(&h[2]),
                ))))
            }
            ArchivedCollider::Sphere(s) => Family::Rounded(Rounded {
                half: 0.0,
                radius: f(&s.radius),
            }),
            ArchivedCollider::Capsule(c) => Family::Rounded(Rounded {
                half: f(&c.half_height),
                radius: f(&c.radius),
            }),
            ArchivedCollider::Bsp(b) => Family::Bsp(bsp::BspView(b)),
        }
    }
}

/// How a shape family answers: its tree, the convex routines, the
/// closed forms of a rounded segment, or a BSP tree.
enum Family<'a> {
    TriMesh(&'a kiln_formats::tri_mesh::ArchivedTriMesh),
    Convex(Convex<'a>),
    Rounded(Rounded),
    Bsp(bsp::BspView<'a>),
}

/// A convex piece of a solid shape family in world space.
enum Piece<'a> {
    Point(Point),
    Segment(Segment),
    Cuboid(OrientedBox),
    Polytope(PlacedPolytope<'a>),
}

impl<'a> ColliderRef<'a> {
    /// The convex solid as a world-space piece with its radius (`None`
    /// for meshes and concave solids), placed by its frame alone: the f32
    /// inverse a [`Placement`] computes beside it was a fifth of a box's
    /// yes/no test on a field of spheres.
    // always: called, its 200-byte answer was returned through memory (a
    // copy per candidate object)
    #[inline(always)]
    fn piece(&self, at: &At) -> Option<(Piece<'a>, f64)> {
        Some(match self.family() {
            Family::TriMesh(_) | Family::Bsp(_) => return None,
            Family::Rounded(r) => {
                let w = r.placed(at);
                let core = if r.half == 0.0 {
                    Piece::Point(Point(w.a))
                } else {
                    Piece::Segment(Segment(w.a, w.b))
                };
                (core, w.radius)
            }
            Family::Convex(polytope::Convex::Polytope(p)) => {
                (Piece::Polytope(PlacedPolytope::new(p, &at.frame())), 0.0)
            }
            Family::Convex(polytope::Convex::Cuboid(b)) => {
                let place = at.frame();
                let s = place.world_scale();
                let axis = |d: DVec3| place.world_vector64(d) / s;
                (
                    Piece::Cuboid(OrientedBox {
                        center: place.world_point64(DVec3::ZERO),
                        axes: [axis(DVec3::X), axis(DVec3::Y), axis(DVec3::Z)],
                        half: b.0 * s,
                    }),
                    0.0,
                )
            }
        })
    }

    /// The deepest contact of the query shape with this placed shape, with its
    /// feature.
    pub(crate) fn shape_touch(&self, at: At, posed: &Posed) -> Option<(Touch, Option<u32>)> {
        if let Some((piece, rc)) = self.piece(&at) {
            let (q, r) = (&posed.core, posed.radius);
            let t = match &piece {
                Piece::Point(p) => match q.closed() {
                    convex_contact::CoreRef::Cuboid(b)
                        if r == 0.0
                            && let Some(t) = convex_contact::box_ball_contact(b, p.0, rc) =>
                    {
                        t
                    }
                    closed => convex_contact::point_touch(&closed, r, p.0, rc)
                        .unwrap_or_else(|| convex_contact::touch(q, r, p, rc))
                        .map(|t| convex_contact::settle(q, r, p, rc, t)),
                },
                Piece::Segment(p) => convex_contact::touch(q, r, p, rc)
                    .map(|t| convex_contact::settle(q, r, p, rc, t)),
                Piece::Cuboid(p) => convex_contact::touch(q, r, p, rc)
                    .map(|t| convex_contact::settle(q, r, p, rc, t)),
                Piece::Polytope(p) => {
                    p.prefetch();
                    convex_contact::touch(q, r, p, rc)
                        .map(|t| convex_contact::settle(q, r, p, rc, t))
                }
            };
            // a convex piece: no one face stands for an edge or corner
            return t.map(|t| (t, None));
        }
        let place = &at.placement();
        match self.family() {
            Family::TriMesh(m) => tri_mesh::shape_touch(place, m, posed).map(|(t, f)| (t, Some(f))),
            Family::Bsp(b) => bsp::shape_touch(place, &b, posed),
            // answered above, as convex pieces
            Family::Convex(_) | Family::Rounded(_) => None,
        }
    }

    /// Whether the query shape touches this placed shape (no contact computed).
    pub(crate) fn shape_touches(&self, at: At, posed: &Posed) -> bool {
        let (q, r) = (&posed.core, posed.radius);
        if let Some((piece, rc)) = self.piece(&at) {
            return match &piece {
                Piece::Point(p) => convex_contact::point_touches(&q.closed(), r, p.0, rc)
                    .unwrap_or_else(|| convex_contact::touches(q, r, p, rc)),
                Piece::Segment(p) => convex_contact::touches(q, r, p, rc),
                Piece::Cuboid(p) => convex_contact::touches(q, r, p, rc),
                Piece::Polytope(p) => convex_contact::touches(q, r, p, rc),
            };
        }
        let place = &at.placement();
        match self.family() {
            Family::TriMesh(m) => tri_mesh::shape_touches(place, m, posed),
            Family::Bsp(b) => {
                tri_mesh::shape_touches(place, &b.0.surface, posed)
                    || b.contains_local(place.local_point64(q.any_point()))
            }
            // answered above, as convex pieces
            Family::Convex(_) | Family::Rounded(_) => false,
        }
    }

    /// The first contact of the query shape moving by `t · motion`, `t ≤
    /// limit`, with its time and feature.
    pub(crate) fn shape_cast(
        &self,
        at: At,
        posed: &Posed,
        motion: DVec3,
        limit: f64,
        leave: Option<DVec3>,
    ) -> Option<(f64, Touch, Option<u32>)> {
        if let Some((piece, rc)) = self.piece(&at) {
            let (q, r) = (&posed.core, posed.radius);
            let same = |t: Touch| (t, t.normal);
            let hit = match &piece {
                Piece::Point(p) => convex_contact::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Segment(p) => convex_contact::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Cuboid(p) => convex_contact::cast(q, r, motion, limit, p, rc, leave, same),
                Piece::Polytope(p) => convex_contact::cast(q, r, motion, limit, p, rc, leave, same),
            };
            return hit.map(|(t, h)| {
                // a sphere names the face of a box or polytope as its
                // closed-form path does: the face the sphere's closed form
                // finds from its centre at the time of contact
                let face = if let (Core::Point(c), Family::Convex(convex)) = (q, self.family()) {
                    convex
                        .closest(&at.placement(), (c.0 + motion * t).as_vec3(), f32::MAX)
                        .and_then(|c| c.feature)
                } else {
                    None
                };
                (t, h, face)
            });
        }
        let place = &at.placement();
        match self.family() {
            Family::TriMesh(m) => tri_mesh::shape_cast(place, m, posed, motion, limit, leave)
                .map(|(t, h, f)| (t, h, Some(f))),
            Family::Bsp(b) => {
                // centred inside: the way out of the solid at t = 0
                if let Some((t, f)) = bsp::shape_inside(place, &b, posed) {
                    return (!leave.is_some_and(|whole| convex_contact::leaving(t.normal, whole)))
                        .then_some((0.0, t, f));
                }
                let hit = tri_mesh::shape_cast(place, &b.0.surface, posed, motion, limit, leave)
                    .map(|(t, h, f)| (t, h, Some(f)))?;
                if hit.0 > 0.0 {
                    return Some(hit);
                }
                // in contact at the start: the way out of the solid, as an
                // overlap answers, unless the motion leaves along it (the
                // triangle the motion presses into then answers)
                if let Some((t, f)) = bsp::shape_touch(place, &b, posed)
                    && !leave.is_some_and(|whole| convex_contact::leaving(t.normal, whole))
                {
                    return Some((0.0, t, f));
                }
                Some(hit)
            }
            // answered above, as convex pieces
            Family::Convex(_) | Family::Rounded(_) => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::Level;
    use glam::DAffine3;
    use kiln_baker::{BakeSettings, Scene, SceneInstance, SceneMesh, bake_scene};

    /// The identity, then placements turned at random, scaled from 10⁻³
    /// to 900 and moved up to 10⁵ away (21 in all): where f32 rounding of
    /// a placement is largest against the shape.
    pub(crate) fn turned_placements(rng: &mut kiln_geometry::rng::Rng) -> Vec<DAffine3> {
        let mut transforms = vec![DAffine3::IDENTITY];
        for scale in [1e-3, 0.37, 1.0, 13.7, 900.0] {
            for far in [0.0, 30.0, 1e4, 1e5] {
                transforms.push(DAffine3::from_scale_rotation_translation(
                    glam::DVec3::splat(scale),
                    glam::DQuat::from_axis_angle(rng.unit(), rng.f() * 6.2),
                    rng.unit() * far,
                ));
            }
        }
        transforms
    }

    /// A level of `mesh` placed once under each of `transforms`, baked as
    /// `collider`; instance `i` is placement `i`.
    pub(crate) fn placed_copies(mesh: SceneMesh, transforms: &[DAffine3], collider: &str) -> Level {
        let scene = Scene {
            meshes: vec![mesh],
            instances: transforms
                .iter()
                .enumerate()
                .map(|(i, &transform)| SceneInstance {
                    name: format!("{collider}{i}"),
                    mesh: 0,
                    transform,
                    extras_collider: Some(collider.into()),
                    ..SceneInstance::default()
                })
                .collect(),
            ..Scene::default()
        };
        Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DAffine3, DVec3};
    use kiln_baker::SceneMesh;

    /// A translated instance's ray (`At::local_ray`, through the rows'
    /// constants) is the general path's (`local_ray` through the built
    /// rows) bit for bit: translations with zeros of both signs, tiny,
    /// huge and fractional parts, against origins and directions with
    /// signed zeros, tiny and huge parts; and a turned instance, which
    /// takes the general path, agrees too.
    #[test]
    fn a_translated_instances_ray_is_the_built_rows_bit_for_bit() {
        let parts = [0.0, -0.0, 1.0, -3.5, 1e-30, -7e-39, 1e11, 12345.678, -0.1];
        let mut transforms = Vec::new();
        for (i, &x) in parts.iter().enumerate() {
            let (y, z) = (parts[(i * 4 + 1) % 9], parts[(i * 7 + 2) % 9]);
            transforms.push(DAffine3::from_translation(DVec3::new(x, y, z)));
        }
        transforms.push(DAffine3::from_rotation_y(0.3));
        let mesh = SceneMesh::cuboid("crate", [0.0; 3], [1.0, 1.0, 1.0]);
        let level = testing::placed_copies(mesh, &transforms, "mesh");
        let archive = level.archive();
        let vals = [0.0f32, -0.0, 1.0, -2.5, 1e-20, 3e25, -1e-38, 0.7];
        let mut translated = 0;
        for inst in archive.instances.iter() {
            let q = inst.rotation.map(|v| v.to_native());
            let t = inst.translation.map(|v| v.to_native());
            translated += usize::from(kiln_formats::placement::translation_rows(q, t).is_some());
            let at = At::Instance(archive, inst);
            for (i, &a) in vals.iter().enumerate() {
                for (j, &b) in vals.iter().enumerate() {
                    let o = Vec3::new(a, b, vals[(i + j) % 8]);
                    let d = Vec3::new(b, vals[(i * 3 + j) % 8], a);
                    let bits = |r: Option<(Vec3, Vec3)>| {
                        r.map(|(p, v)| {
                            (
                                p.to_array().map(f32::to_bits),
                                v.to_array().map(f32::to_bits),
                            )
                        })
                    };
                    assert_eq!(
                        bits(at.local_ray(o, d)),
                        bits(local_ray(&at.local_from_world(), o, d)),
                        "instance at {t:?}, ray {o} {d}"
                    );
                }
            }
        }
        // the translation path was taken (else this compares a path with itself)
        assert!(translated >= 8, "{translated} translated instances");
    }
    /// Instances moved or scaled past the compact similarity's range (2⁴⁰)
    /// bake into the affine table instead of failing the archive's check,
    /// and rays still find them where they were placed.
    #[test]
    fn far_out_and_huge_instances_bake_as_affine_placements() {
        let far = (1u64 << 41) as f64;
        let transforms = [
            DAffine3::IDENTITY,
            DAffine3::from_translation(DVec3::new(far, 0.0, 0.0)),
            DAffine3::from_translation(DVec3::new(0.0, -1e30, 0.0)),
            DAffine3::from_scale(DVec3::splat(far * 16.0)),
            DAffine3::from_scale(DVec3::splat(1.0 / (far * 16.0))),
        ];
        let mesh = SceneMesh::cuboid("crate", [0.0; 3], [1.0, 1.0, 1.0]);
        let level = testing::placed_copies(mesh, &transforms, "mesh");
        let affine: Vec<bool> = level
            .archive()
            .instances
            .iter()
            .map(|inst| inst.rotation.iter().all(|v| v.to_native() == 0.0))
            .collect();
        assert_eq!(affine, [false, true, true, true, true]);
        let filter = crate::Filter::default();
        let down = |o: Vec3| {
            let hit = level.raycast(&crate::Ray::new(o, Vec3::NEG_Z, f32::INFINITY), &filter);
            hit.map(|h| h.t)
        };
        // the box's top face is at z = 1 (or 2⁴⁵ for the huge one)
        assert_eq!(down(Vec3::new(far as f32, 0.0, 10.0)), Some(9.0));
        assert_eq!(down(Vec3::new(0.0, -1e30, 10.0)), Some(9.0));
        let huge = (far * 16.0) as f32;
        let t = down(Vec3::new(0.5 * huge, 0.0, 2.0 * huge)).expect("the huge box");
        assert!((t / huge - 1.0).abs() < 1e-6, "{t}");
        // the tiny one sits inside the unit box (a triangle mesh, hollow):
        // a ray from inside meets the tiny box's top before the floor
        let t = down(Vec3::new(0.0, 0.0, 0.5)).expect("the tiny box");
        assert!((t - 0.5).abs() < 1e-6, "{t}");
    }
}
