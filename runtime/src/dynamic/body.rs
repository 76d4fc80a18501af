//! One body of a world: its collider (made for it from a query shape, or
//! a baked one of an archive), its pose, and the matrices every query
//! reads, recomputed when it moves.

use crate::collider::{At, ColliderRef};
use crate::level::Level;
use crate::object::ObjectId;
use crate::placement::{apply, invert};
use crate::shape::{HullError, Pose, QueryShape};
use glam::{DQuat, DVec3};
use kiln_formats::level::{ArchivedCollider, Collider};
use kiln_formats::placement::Rows;
use std::sync::Arc;

use super::tree::Aabb;

/// What a body is made of: a query shape made into a collider, or a copy
/// of a baked object (a prefab).
#[derive(Clone, Copy, Debug)]
pub enum BodyCollider<'a> {
    /// A sphere, capsule, box or convex hull, in its own frame (the body's
    /// pose places it). A hull may have at most 256 faces.
    Shape(QueryShape<'a>),
    /// The collider of `object` of a level's archive, placed relative to
    /// the body's frame as that level places it relative to its origin: a
    /// prop baked in a "prefab" archive, spawned as often as wanted.
    Copy {
        /// The archive.
        from: &'a Arc<Level>,
        /// Its object.
        object: ObjectId,
    },
}

/// Why a world refused a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorldError {
    /// No body or object with this id is in the world (never was, or it
    /// was removed).
    #[error("{0} is not in the world")]
    Unknown(ObjectId),
    /// The object is part of the level's static geometry: it cannot move.
    #[error(
        "{0} is part of the level: its static objects never move, and none of its objects is removed"
    )]
    Static(ObjectId),
    /// A pose with a non-finite number or a zero rotation.
    #[error("the pose {0} is not finite with a non-zero rotation")]
    BadPose(Pose),
    /// The body's shape is not a valid collider.
    #[error("body shape: {0}")]
    BadShape(#[from] BodyShapeError),
    /// The object a copy names is not one of its level's.
    #[error("{0} is not an object of the level to copy from")]
    NotInLevel(ObjectId),
    /// No tile with this id is mounted (never was, or it was unmounted).
    #[error("{0} is not mounted")]
    UnknownTile(crate::object::TileId),
    /// A tile's position or a world's origin that is not finite or lies
    /// past [`kiln_formats::world::MAX_ORIGIN`] metres.
    #[error("the position {0} is not finite or lies past 1e12 m")]
    BadOrigin(glam::DVec3),
    /// Mounting the tile would give the world more collision layers than
    /// a mask holds.
    #[error(
        "the tile names {names} collision layers the world lacks, and the world has {have} of the 32 a mask holds"
    )]
    Layers {
        /// The tile's layer names the world lacks.
        names: usize,
        /// The layers the world has.
        have: usize,
    },
    /// Only a world of tiles moves its origin: its own level's objects
    /// would have to move with it.
    #[error(
        "the world's own level has objects, which stay at the origin: only a world of tiles (World::tiled) moves its origin"
    )]
    Rebase,
    /// The world has given out every tile id an object id holds (2³¹ − 1
    /// mounts).
    #[error("this world has mounted 2^31 - 1 tiles, every id it can give")]
    Mounts,
}

/// Why a query shape cannot be a body's collider.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum BodyShapeError {
    /// Its hull, made again as a polytope, is no solid.
    #[error(transparent)]
    Hull(#[from] HullError),
    /// Its hull has more faces than a polytope may have.
    #[error("a hull of {faces} faces (a body's hull may have {max})")]
    TooManyFaces {
        /// Faces of the hull.
        faces: usize,
        /// The most a polytope may have.
        max: usize,
    },
    /// Its collider breaks what an archive's colliders must hold (a
    /// negative or non-finite size): the verifier's word.
    #[error(transparent)]
    Invalid(#[from] kiln_formats::verify::VerifyError),
    /// Its collider could not be archived (rkyv's message).
    #[error("not archived: {0}")]
    Archive(String),
}

/// Where a body's collider lives.
#[derive(Clone)]
enum Source {
    /// Built for the body and archived in place (checked once when made).
    Own(rkyv::util::AlignedVec<16>),
    /// A shape of a level's archive.
    Level(Arc<Level>, u32),
}

/// A body as the world keeps it.
#[derive(Clone)]
pub(crate) struct BodyState {
    pub id: ObjectId,
    source: Source,
    /// The collider's placement in the body's frame (f64 world-from-local
    /// with the body at the origin, unturned).
    base: [f64; 12],
    /// Whether `base` is a similarity (then so is every placement).
    similar: bool,
    /// The collider's box in its local space.
    local_box: ([f32; 3], [f32; 3]),
    pub pose: Pose,
    /// The current placement.
    pub rows: Rows,
    pub layers: u32,
    pub name: String,
    /// A trigger volume (seen only by queries that ask for triggers).
    pub trigger: bool,
    /// The body as a convex query shape in its own frame, for trigger
    /// tests (made on first use).
    probe: std::sync::OnceLock<Probe>,
    /// Its pose at the last step, while it has moved since.
    pub before: Option<Pose>,
    /// How it moved between the two last steps: its poses at the one
    /// before and at the last.
    pub moved: Option<(Pose, Pose)>,
}

/// A body as a query shape: its shape and where it sits in the body's
/// frame. Exact for spheres, capsules, boxes and polytopes (their
/// vertices' hull); for a triangle mesh or a concave solid, the hull of
/// its local box's corners (a conservative stand-in, documented on
/// `World::step`).
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    shape: ProbeShape,
    /// Rotation and translation of the shape in the body's frame.
    frame: (DQuat, DVec3),
}

#[derive(Clone, Debug)]
enum ProbeShape {
    Sphere(f32),
    Capsule(f32, f32),
    Cuboid(glam::Vec3),
    Hull(Arc<crate::shape::ConvexHull>),
}

impl Probe {
    /// The query shape and its pose for a body at `pose`.
    pub fn placed(&self, pose: &Pose) -> (QueryShape<'_>, Pose) {
        let shape = match &self.shape {
            ProbeShape::Sphere(r) => QueryShape::Sphere { radius: *r },
            ProbeShape::Capsule(h, r) => QueryShape::Capsule {
                half_height: *h,
                radius: *r,
            },
            ProbeShape::Cuboid(half) => QueryShape::Cuboid { half: *half },
            ProbeShape::Hull(h) => QueryShape::Hull(h),
        };
        let q = pose.rotation.as_dquat().normalize();
        let (fq, ft) = self.frame;
        let at = Pose::new(
            (q * fq).as_quat(),
            (q * ft + pose.translation.as_dvec3()).as_vec3(),
        );
        (shape, at)
    }
}

/// The identity as a 3×4 row-major matrix.
const ID: [f64; 12] = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];

impl BodyState {
    /// A body of `collider`, not yet placed (its rows are the base's).
    pub fn new(
        id: ObjectId,
        collider: &BodyCollider,
        layers: u32,
        name: String,
    ) -> Result<BodyState, WorldError> {
        let (source, base, similar) = collider_source(collider)?;
        let mut body = BodyState {
            id,
            source,
            base,
            similar,
            local_box: ([0.0; 3], [0.0; 3]),
            pose: Pose::IDENTITY,
            rows: Rows {
                world_from_local: [0.0; 12],
                local_from_world: [0.0; 12],
            },
            layers,
            name,
            trigger: false,
            probe: std::sync::OnceLock::new(),
            before: None,
            moved: None,
        };
        body.local_box = body.collider().0.local_box();
        Ok(body)
    }

    /// A level's own mover or trigger `object` as a body, and the pose it
    /// was baked at: the rigid part of its placement (rotation and
    /// translation; scale, shear or mirroring stay in the collider's
    /// placement in the body's frame), so a new pose turns and moves it
    /// about its own origin.
    pub fn of_level(level: &Arc<Level>, object: ObjectId) -> Result<(BodyState, Pose), WorldError> {
        let a = level.archive();
        let inst = object
            .level_index()
            .and_then(|i| a.instances.get(i as usize))
            .ok_or(WorldError::NotInLevel(object))?;
        let (pose, base) = rest(&a.rows(inst).world_from_local);
        let similar = inst.rotation.iter().any(|v| v.to_native() != 0.0);
        let mut body = BodyState::new(
            object,
            &BodyCollider::Copy {
                from: level,
                object,
            },
            inst.layers.to_native(),
            level.object_name(object).unwrap_or_default().into_owned(),
        )?;
        body.base = base;
        body.similar = similar;
        body.trigger = inst.is_trigger();
        Ok((body, pose))
    }

    /// The body's collider.
    #[inline]
    pub fn collider(&self) -> ColliderRef<'_> {
        ColliderRef(match &self.source {
            // SAFETY: `own_shape` made these bytes by serialising a
            // `Shape` and checked them with rkyv's validating access (and
            // the shape's own verification) before they were stored; they
            // are never changed afterwards, and an `AlignedVec<16>` keeps
            // the alignment the archived root needs.
            Source::Own(bytes) => unsafe { rkyv::access_unchecked::<ArchivedCollider>(bytes) },
            Source::Level(level, s) => &level.archive().colliders[*s as usize],
        })
    }

    /// The body as a query shape in its own frame (see [`Probe`]).
    pub fn probe(&self) -> &Probe {
        self.probe.get_or_init(|| self.make_probe())
    }

    fn make_probe(&self) -> Probe {
        let b = &self.base;
        let f = |x: &rkyv::rend::f32_le| x.to_native();
        // a primitive (always placed by a similarity): scaled, in the
        // base's rigid frame
        let scale = DVec3::new(b[0], b[4], b[8]).length() as f32;
        let (q, t) = rigid_part(b);
        let primitive = match self.collider().0 {
            ArchivedCollider::Sphere(s) => Some(ProbeShape::Sphere(f(&s.radius) * scale)),
            ArchivedCollider::Capsule(c) => Some(ProbeShape::Capsule(
                f(&c.half_height) * scale,
                f(&c.radius) * scale,
            )),
            ArchivedCollider::Cuboid(c) => Some(ProbeShape::Cuboid(
                glam::Vec3::from(c.half_extents.map(|x| x.to_native())) * scale,
            )),
            _ => None,
        };
        if let Some(shape) = primitive {
            return Probe {
                shape,
                frame: (q, t),
            };
        }
        // the hull of the polytope's vertices, or of the box's corners,
        // placed in the body's frame
        let points: Vec<glam::Vec3> = match self.collider().0 {
            ArchivedCollider::Polytope(p)
                if p.vertices.len() <= crate::shape::ConvexHull::MAX_POINTS =>
            {
                p.vertices
                    .iter()
                    .map(|v| {
                        apply(b, DVec3::from(v.map(|x| f64::from(x.to_native()))), 1.0).as_vec3()
                    })
                    .collect()
            }
            _ => {
                let (lo, hi) = self.local_box;
                (0..8)
                    .map(|k| {
                        let c = DVec3::new(
                            f64::from(if k & 1 == 0 { lo[0] } else { hi[0] }),
                            f64::from(if k & 2 == 0 { lo[1] } else { hi[1] }),
                            f64::from(if k & 4 == 0 { lo[2] } else { hi[2] }),
                        );
                        apply(b, c, 1.0).as_vec3()
                    })
                    .collect()
            }
        };
        let shape = match crate::shape::ConvexHull::new(&points) {
            Ok(h) => ProbeShape::Hull(Arc::new(h)),
            // flat: the box around the points
            Err(_) => {
                let (mut lo, mut hi) = (glam::Vec3::INFINITY, glam::Vec3::NEG_INFINITY);
                for p in &points {
                    lo = lo.min(*p);
                    hi = hi.max(*p);
                }
                return Probe {
                    shape: ProbeShape::Cuboid((hi - lo) * 0.5),
                    frame: (DQuat::IDENTITY, ((lo + hi) * 0.5).as_dvec3()),
                };
            }
        };
        Probe {
            shape,
            frame: (DQuat::IDENTITY, DVec3::ZERO),
        }
    }

    /// Where the body is, for the colliders' tests.
    #[inline]
    pub fn at(&self) -> At<'_> {
        At::Rows(&self.rows, self.similar)
    }

    /// Moves the body to `pose` (checked: finite, non-zero rotation) and
    /// returns its new world box.
    pub fn place(&mut self, pose: Pose) -> Aabb {
        self.pose = pose;
        let q = pose.rotation.as_dquat().normalize();
        let t = pose.translation.as_dvec3();
        let w = compose(q, t, &self.base);
        let l = invert(&w);
        self.rows = Rows {
            world_from_local: w.map(|v| v as f32),
            local_from_world: l.map(|v| v as f32),
        };
        // the box: the local box's centre placed, its half extents through
        // |M|, grown by a hair for the f32 rows the tests read
        let (lo, hi) = self.local_box;
        let (lo, hi) = (
            DVec3::from(lo.map(f64::from)),
            DVec3::from(hi.map(f64::from)),
        );
        let (c, h) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
        let wc = apply(&w, c, 1.0);
        let row = |k: usize| DVec3::new(w[k].abs(), w[k + 1].abs(), w[k + 2].abs()).dot(h);
        let wh = DVec3::new(row(0), row(4), row(8));
        let pad = wh * 1e-5 + wc.abs() * 1e-6 + DVec3::splat(1e-6);
        Aabb::new((wc - wh - pad).as_vec3(), (wc + wh + pad).as_vec3())
    }
}

/// Where a body's collider lives, its placement in the body's frame, and
/// whether that is a similarity.
fn collider_source(collider: &BodyCollider) -> Result<(Source, [f64; 12], bool), WorldError> {
    Ok(match *collider {
        BodyCollider::Shape(shape) => (Source::Own(own_shape(&shape)?), ID, true),
        BodyCollider::Copy { from, object } => {
            let level = from.archive();
            let inst = object
                .level_index()
                .and_then(|i| level.instances.get(i as usize))
                .ok_or(WorldError::NotInLevel(object))?;
            let rows = level.rows(inst);
            let similar = inst.rotation.iter().any(|v| v.to_native() != 0.0);
            (
                Source::Level(from.clone(), inst.collider.to_native()),
                rows.world_from_local.map(f64::from),
                similar,
            )
        }
    })
}

impl Level {
    /// Object `object`'s placement split in two, `placement = pose ∘
    /// base`: the pose it was baked at (the rotation and translation a
    /// mover starts at, [`crate::World::pose`]) and the rest of its
    /// placement in that pose's frame (scale, shear or mirroring; the
    /// identity for a rigid placement), row-major 3×4. What a physics
    /// engine's body needs: the pose for its transform, the base applied
    /// to the collider's local geometry. `None` for an id the level does
    /// not have.
    pub fn object_rest(&self, object: ObjectId) -> Option<(Pose, [f64; 12])> {
        let a = self.archive();
        let inst = a.instances.get(object.level_index()? as usize)?;
        Some(rest(&a.rows(inst).world_from_local))
    }
}

/// A placement's rigid part as a pose, and what is left of it in that
/// pose's frame.
fn rest(world_from_local: &[f32; 12]) -> (Pose, [f64; 12]) {
    let m: [f64; 12] = world_from_local.map(f64::from);
    let (q, t) = rigid_part(&m);
    let inv = q.conjugate();
    let mut base = compose(inv, -(inv * t), &m);
    // exact where it can be: an unscaled, unturned placement's base is
    // the identity
    if base.iter().zip(&ID).all(|(a, b)| (a - b).abs() < 1e-12) {
        base = ID;
    }
    (Pose::new(q.as_quat(), t.as_vec3()), base)
}

/// Whether `pose` can place a body.
pub(crate) fn valid_pose(pose: &Pose) -> bool {
    pose.translation.is_finite()
        && pose.rotation.is_finite()
        && pose.rotation.length_squared() > 1e-12
}

/// The rigid part of a 3×4 placement ([`kiln_geometry::frame::rotation_of`]
/// of its linear part) and its translation.
fn rigid_part(m: &[f64; 12]) -> (DQuat, DVec3) {
    let col = |c: usize| DVec3::new(m[c], m[4 + c], m[8 + c]);
    let linear = glam::DMat3::from_cols(col(0), col(1), col(2));
    (kiln_geometry::frame::rotation_of(&linear), col(3))
}

/// `(q, t) ∘ base` as a 3×4 row-major f64 matrix.
fn compose(q: DQuat, t: DVec3, base: &[f64; 12]) -> [f64; 12] {
    let col = |c: usize| q * DVec3::new(base[c], base[4 + c], base[8 + c]);
    let (x, y, z) = (col(0), col(1), col(2));
    let o = q * DVec3::new(base[3], base[7], base[11]) + t;
    [
        x.x, y.x, z.x, o.x, //
        x.y, y.y, z.y, o.y, //
        x.z, y.z, z.z, o.z,
    ]
}

/// A query hull as a baked polytope, or why not: more faces than a
/// polytope may have.
fn hull_polytope(
    hull: &crate::shape::ConvexHull,
) -> Result<kiln_formats::polytope::Polytope, BodyShapeError> {
    use kiln_formats::polytope::{MAX_PLANES, Polytope};
    let points: Vec<DVec3> = hull.vertices().map(|v| v.as_dvec3()).collect();
    let h = crate::geom::hull::hull(&points).ok_or(HullError::Flat)?;
    if h.faces.len() > MAX_PLANES {
        return Err(BodyShapeError::TooManyFaces {
            faces: h.faces.len(),
            max: MAX_PLANES,
        });
    }
    let vertices: Vec<[f32; 3]> = h.vertices.iter().map(|v| v.as_vec3().to_array()).collect();
    let normals: Vec<[f64; 3]> = h.faces.iter().map(|(_, n, _)| n.to_array()).collect();
    let loops: Vec<Vec<u32>> = h.faces.into_iter().map(|(lp, _, _)| lp).collect();
    Ok(Polytope::from_faces(&normals, vertices, &loops))
}

/// A query shape archived as a collider, checked as an archive's shapes
/// are.
fn own_shape(shape: &QueryShape) -> Result<rkyv::util::AlignedVec<16>, WorldError> {
    use kiln_formats::primitive::{Capsule, Cuboid, Sphere};
    let built = match *shape {
        QueryShape::Sphere { radius } => Collider::Sphere(Sphere { radius }),
        QueryShape::Capsule {
            half_height,
            radius,
        } => Collider::Capsule(Capsule {
            half_height,
            radius,
        }),
        QueryShape::Cuboid { half } => Collider::Cuboid(Cuboid {
            half_extents: half.to_array(),
        }),
        QueryShape::Hull(h) => Collider::Polytope(hull_polytope(h)?),
    };
    let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&built)
        .map_err(|e| BodyShapeError::Archive(e.to_string()))?;
    let mut aligned = rkyv::util::AlignedVec::<16>::with_capacity(bytes.len());
    aligned.extend_from_slice(&bytes);
    let archived = rkyv::access::<ArchivedCollider, rkyv::rancor::Error>(&aligned)
        .map_err(|e| BodyShapeError::Archive(e.to_string()))?;
    use kiln_formats::verify;
    let checked = match archived {
        ArchivedCollider::Sphere(s) => verify::verify_sphere(0, s),
        ArchivedCollider::Capsule(c) => verify::verify_capsule(0, c),
        ArchivedCollider::Cuboid(c) => verify::verify_cuboid(0, c),
        ArchivedCollider::Polytope(p) => verify::verify_polytope(0, p),
        // not built here
        ArchivedCollider::TriMesh(_) | ArchivedCollider::Bsp(_) => Ok(()),
    };
    checked.map_err(BodyShapeError::from)?;
    Ok(aligned)
}
