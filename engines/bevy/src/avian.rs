//! Avian physics on the level's own colliders (feature `avian`): every
//! object of the level becomes an Avian body whose collider is built from
//! the archive — no hull recomputed, no decomposition run, no render mesh
//! read.
//!
//! | Kiln collider | Avian collider |
//! |---|---|
//! | box, sphere, capsule | `cuboid`, `sphere`, `capsule` (scaled by the placement) |
//! | polytope | a convex polyhedron of its stored vertices and faces |
//! | triangle mesh | a triangle mesh of its stored triangles (`FIX_INTERNAL_EDGES` where they have an outside: [`triangles`]) |
//! | concave solid, static or kinematic | a triangle mesh of its low-poly surface: what Kiln's queries answer on |
//! | concave solid or triangle mesh, dynamic | a compound of its convex pieces (box, sphere, capsule or hull each) |
//!
//! Not yet as the design asks (concave solids as their pieces): a static
//! or kinematic concave solid is given its surface, because the baker
//! decomposes dynamic solids only and pieces stand out of the surface by
//! the decomposition's concavity, past the 1 mm to which Kiln's and
//! Avian's rays must agree. A dynamic one gets its pieces, and a dynamic
//! object with no pieces falls back to its triangles.
//!
//! A placement that is not a similarity (non-uniform scale, shear, a
//! mirror) is applied to the vertices, so the entity's `Transform` stays
//! rigid: the pose Kiln's world holds for it ([`Level::object_rest`]).
//! Kinematic movers are driven by velocity ([`KilnKinematic`]).
//!
//! A rigid body authored in glTF physics with several colliders is one
//! Avian body: its [`KilnAuthoredBody`] entity carries the `RigidBody` and
//! the mass, and its objects' entities, its children, carry the colliders.
//! A dynamic body's mass, centre of mass and inertia are what the file
//! authors, the rest computed from its solids at the density
//! ([`Level::authored_body_mass`]).

use std::sync::Arc;

use avian3d::parry::shape::SharedShape;
use avian3d::prelude::*;
use bevy::app::{App, FixedLast, FixedPreUpdate, Plugin, PostUpdate};
use bevy::ecs::prelude::*;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::math::{DMat3, DVec3, Quat, Vec3};
use bevy::prelude::{ChildOf, Fixed, Name, Time, Transform};
use kiln_formats::level::{
    ArchivedCollider, ArchivedDecomposition, ArchivedPieceKind, ArchivedPieceShape,
};
use kiln_formats::polytope::ArchivedPolytope;
use kiln_formats::tri_mesh::ArchivedTriMesh;
use kiln_runtime::{Level, Motion, ObjectId};

use crate::world::{KilnAuthoredBody, KilnMover, KilnSystems, KilnTrigger, KilnWorld};

/// Adds Avian bodies for the level's objects (with [`crate::KilnPlugin`]
/// and Avian's `PhysicsPlugins`): static objects as child entities of the
/// level entity marked [`KilnStaticCollider`], movers and triggers on
/// their own entities. Movers authored kinematic are
/// `RigidBody::Kinematic`: the game moves them by `Transform`, and each
/// move becomes the velocity that makes it in one physics step, so what
/// rests on them rides along; movers
/// authored dynamic (glTF `KHR_physics_rigid_bodies` or `"motion":
/// "dynamic"`) are `RigidBody::Dynamic` with the mass, centre of mass and
/// inertia the file authors, else their solid's at
/// [`KilnAvianPlugin::density`]; an authored body of several colliders is
/// one rigid body on its [`KilnAuthoredBody`] entity; triggers are
/// `Sensor`s with collision events; layers become `CollisionLayers`
/// (memberships; every filter). A reloaded level's colliders replace the
/// old ones, and movers, dynamic bodies included, keep their entities,
/// poses and velocities.
///
/// ```no_run
/// use bevy::prelude::*;
/// use kiln_bevy::avian3d::prelude::*;
/// use kiln_bevy::{KilnAvianPlugin, KilnBody, KilnLevel, KilnPlugin};
///
/// fn main() {
///     App::new()
///         .add_plugins((DefaultPlugins, KilnPlugin))
///         .add_plugins((PhysicsPlugins::default(), KilnAvianPlugin::default()))
///         .add_systems(Startup, |mut commands: Commands, assets: Res<AssetServer>| {
///             commands.spawn(KilnLevel(assets.load("moving_course.kiln")));
///             // Avian simulates the ball; its KilnBody puts it in Kiln's world too
///             commands.spawn((
///                 RigidBody::Dynamic,
///                 Collider::sphere(0.2),
///                 KilnBody::shape(Sphere::new(0.2)),
///                 Transform::from_xyz(13.0, 2.0, 5.0),
///             ));
///         })
///         .run();
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct KilnAvianPlugin {
    /// Density of dynamic objects (kg/m³; default 1000, water's).
    pub density: f32,
}

impl Default for KilnAvianPlugin {
    fn default() -> Self {
        KilnAvianPlugin { density: 1000.0 }
    }
}

/// A static object of the level as an Avian collider (a child of the
/// level entity, named as in the source).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct KilnStaticCollider {
    /// Its object in the level.
    pub object: ObjectId,
}

/// What the plugin keeps: its settings and the level its colliders were
/// built for.
#[derive(Resource)]
struct Built {
    density: f32,
    level: Option<Arc<Level>>,
}

impl Plugin for KilnAvianPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(Built {
            density: self.density,
            level: None,
        })
        .add_systems(PostUpdate, build_colliders.after(KilnSystems::Sync))
        .add_systems(FixedPreUpdate, drive_kinematic)
        .add_systems(FixedLast, mark_stepped);
    }
}

/// Gives the level's objects their Avian colliders: all of them when the
/// level is new or reloaded, else movers and triggers that have none yet.
#[allow(clippy::type_complexity)] // a system: its parameters are what it touches
fn build_colliders(
    mut commands: Commands,
    kiln: Res<KilnWorld>,
    mut built: ResMut<Built>,
    own: Query<(Entity, Has<Collider>), Or<(With<KilnMover>, With<KilnTrigger>)>>,
    statics: Query<Entity, With<KilnStaticCollider>>,
    groups: Query<(Entity, &KilnAuthoredBody, Has<RigidBody>)>,
) {
    let Some(level) = kiln.level() else {
        built.level = None;
        return;
    };
    let new = built.level.as_ref().is_none_or(|l| !Arc::ptr_eq(l, level));
    // the objects to build: every static one of a new level, and the
    // movers' and triggers' entities that need one
    let statics_wanted: Vec<ObjectId> = match (new, kiln.level_entity()) {
        (true, Some(_)) => level.static_objects().collect(),
        _ => Vec::new(),
    };
    let own_wanted: Vec<(Entity, ObjectId)> = own
        .iter()
        .filter(|&(_, has)| new || !has)
        .filter_map(|(e, _)| Some((e, kiln.object(e)?)))
        .collect();
    // the bodies of several objects: their entities carry the rigid body
    for (e, group, has) in &groups {
        if (new || !has)
            && let Some((rigid, mass)) = group_body(level, group.index, built.density)
        {
            insert_rigid(&mut commands.entity(e), rigid, mass);
        }
    }
    if !new && own_wanted.is_empty() {
        return;
    }
    let objects: Vec<ObjectId> = statics_wanted
        .iter()
        .copied()
        .chain(own_wanted.iter().map(|&(_, o)| o))
        .collect();
    let mut bodies = build_all(level, &objects, built.density).into_iter();
    if new {
        for e in &statics {
            commands.entity(e).despawn();
        }
        if let Some(parent) = kiln.level_entity() {
            for (&object, body) in statics_wanted.iter().zip(bodies.by_ref()) {
                let Some(body) = body else {
                    continue;
                };
                let mut e = commands.spawn((
                    KilnStaticCollider { object },
                    Name::new(level.object_name(object).unwrap_or_default().into_owned()),
                    body.transform,
                    ChildOf(parent),
                ));
                body.insert(&mut e);
            }
        }
        built.level = Some(level.clone());
    }
    for (&(e, _), body) in own_wanted.iter().zip(bodies) {
        if let Some(body) = body {
            // the entity's transform is the pose the game (or Avian) sets
            body.insert(&mut commands.entity(e));
        }
    }
}

/// [`object_body`] of each of `objects`, in order, built on as many
/// threads as the machine has (a triangle mesh's collider builds parry's
/// tree over its triangles, the bulk of a level's time; Bevy's compute
/// pool may be a single thread, so scoped threads of our own).
fn build_all(level: &Level, objects: &[ObjectId], density: f32) -> Vec<Option<ObjectBody>> {
    let n = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(objects.len() / 8);
    if n <= 1 {
        return objects
            .iter()
            .map(|&o| object_body(level, o, density))
            .collect();
    }
    // largest first, each thread taking the next one left (the longest
    // builds start at once and the small ones fill in behind them); this
    // thread works too
    let a = level.archive();
    let cost = |o: ObjectId| {
        let Some(inst) = a.instances.get(o.index() as usize) else {
            return 0;
        };
        match &a.colliders[inst.collider.to_native() as usize] {
            ArchivedCollider::TriMesh(m) => m.triangle_count(),
            ArchivedCollider::Bsp(b) => b.surface.triangle_count(),
            _ => 1,
        }
    };
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(objects[i])));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(k) else {
                return done;
            };
            done.push((i, object_body(level, objects[i], density)));
        }
    };
    let mut all: Vec<(usize, Option<ObjectBody>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (1..n).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for w in workers {
            all.extend(w.join().expect("a collider build panicked"));
        }
        all
    });
    all.sort_unstable_by_key(|&(i, _)| i);
    all.into_iter().map(|(_, b)| b).collect()
}

/// A kinematic mover Avian moves by velocity: the game sets its
/// `Transform` (the pose it should have), and before each physics step the
/// difference from where Avian has it becomes its linear and angular
/// velocity, so bodies resting on it are carried by contact and friction
/// (a box on a turntable turns with it), not only pushed out. A velocity
/// the game sets itself, with no `Transform` move, is left alone.
#[derive(Component, Clone, Copy, Debug)]
struct KilnKinematic {
    /// Whether Avian has stepped since the collider was given: its
    /// position is only then its own.
    stepped: bool,
    /// Whether the last step's velocity came from a `Transform` move (to
    /// be stopped when the moves stop; a velocity the game sets itself is
    /// left alone).
    driving: bool,
    /// The pose this step moves it to: set exactly after the step (Avian's
    /// integration of a turn falls a little short, and a game that turns
    /// a mover a little every frame would see the shortfalls add up).
    target: Option<(Vec3, Quat)>,
}

/// Turns each kinematic mover's new `Transform` into the velocity that
/// takes it there in one step, and puts the `Transform` back where Avian
/// has the body (Avian would otherwise jump it there and then move it on
/// by that velocity).
#[allow(clippy::type_complexity)] // a system: its parameters are what it touches
fn drive_kinematic(
    time: bevy::ecs::system::Res<Time<Fixed>>,
    mut movers: Query<(
        &mut Transform,
        &Position,
        &Rotation,
        &mut LinearVelocity,
        &mut AngularVelocity,
        &mut KilnKinematic,
    )>,
) {
    let dt = time.delta_secs();
    if dt <= 0.0 {
        return;
    }
    for (mut t, p, r, mut v, mut w, mut k) in &mut movers {
        if !k.stepped {
            continue;
        }
        let (at, turned) = (p.0, r.0);
        let (to, turn) = (t.translation, t.rotation);
        if to == at && turn == turned {
            if k.driving {
                // the moves stopped
                v.0 = Vec3::ZERO;
                w.0 = Vec3::ZERO;
                k.driving = false;
            }
            continue;
        }
        k.driving = true;
        k.target = Some((to, turn));
        v.0 = (to - at) / dt;
        // the shorter way round
        let mut d = turn * turned.inverse();
        if d.w < 0.0 {
            d = -d;
        }
        let (axis, angle) = d.to_axis_angle();
        w.0 = if angle.is_finite() && angle > 1e-7 {
            axis * (angle / dt)
        } else {
            Vec3::ZERO
        };
        t.translation = at;
        t.rotation = turned;
    }
}

/// After a physics step: marks kinematic movers Avian has stepped with,
/// and puts those it drove exactly where the game asked.
fn mark_stepped(
    mut movers: Query<(
        &mut KilnKinematic,
        &mut Position,
        &mut Rotation,
        &mut Transform,
    )>,
) {
    for (mut k, mut p, mut r, mut t) in &mut movers {
        if !k.stepped {
            k.stepped = true;
        }
        if let Some((to, turn)) = k.target.take() {
            p.0 = to;
            r.0 = turn;
            t.translation = to;
            t.rotation = turn;
        }
    }
}

/// One object as an Avian body: everything but its pose, which the
/// entity's `Transform` gives (`transform` is where it was baked).
struct ObjectBody {
    transform: Transform,
    /// `None` for a member of an authored body of several objects.
    rigid: Option<RigidBody>,
    collider: Collider,
    layers: CollisionLayers,
    sensor: bool,
    mass: Option<BodyMass>,
}

/// A body's mass, centre of mass and inertia in its own frame.
type BodyMass = (Mass, CenterOfMass, AngularInertia);

impl ObjectBody {
    /// Gives entity `e` the body, in one insertion: Avian reads a
    /// collider's sensor and event flags when the collider is added. A
    /// member of an authored body of several objects (`rigid` `None`) gets
    /// its collider alone: its parent entity is the rigid body.
    fn insert(self, e: &mut EntityCommands) {
        e.remove::<(
            Sensor,
            CollisionEventsEnabled,
            NoAutoMass,
            NoAutoCenterOfMass,
            NoAutoAngularInertia,
        )>();
        let shape = (self.collider, self.layers);
        match self.rigid {
            Some(rigid) => {
                insert_rigid(e, rigid, self.mass);
            }
            None => {
                e.remove::<(RigidBody, KilnKinematic, Mass, CenterOfMass, AngularInertia)>();
            }
        }
        if self.sensor {
            e.insert((shape, Sensor, CollisionEventsEnabled));
        } else {
            e.insert(shape);
        }
    }
}

/// Makes entity `e` a rigid body: kinematic ones driven by their
/// `Transform` ([`KilnKinematic`]), dynamic ones with `mass` where known
/// (else Avian's own from the colliders).
fn insert_rigid(e: &mut EntityCommands, rigid: RigidBody, mass: Option<BodyMass>) {
    if rigid == RigidBody::Kinematic {
        e.insert(KilnKinematic {
            stepped: false,
            driving: false,
            target: None,
        });
    } else {
        e.remove::<KilnKinematic>();
    }
    let fixed = (NoAutoMass, NoAutoCenterOfMass, NoAutoAngularInertia);
    match mass {
        Some(m) => e.insert((rigid, m, fixed)),
        None => e
            .remove::<(NoAutoMass, NoAutoCenterOfMass, NoAutoAngularInertia)>()
            .insert(rigid),
    };
}

/// Authored body `k` of several objects as an Avian rigid body: its motion
/// and, for a dynamic one, its mass properties (as authored, the rest from
/// its members' solids at `density`) in its entity's frame, the body's
/// baked pose.
fn group_body(level: &Level, k: usize, density: f32) -> Option<(RigidBody, Option<BodyMass>)> {
    let b = level.authored_body(k)?;
    let rigid = match b.motion {
        Motion::Dynamic => RigidBody::Dynamic,
        Motion::Kinematic => RigidBody::Kinematic,
        Motion::Static => RigidBody::Static,
    };
    let mass = (b.motion == Motion::Dynamic)
        .then(|| level.authored_body_mass(k, f64::from(density)))
        .flatten()
        .map(|m| body_mass(&m, &b.pose));
    Some((rigid, mass))
}

/// Mass properties in the level's world frame as baked, in the frame of a
/// body at `pose`.
fn body_mass(m: &kiln_runtime::MassProperties, pose: &kiln_runtime::Pose) -> BodyMass {
    let r = DMat3::from_quat(pose.rotation.as_dquat());
    let centre = r.transpose() * (m.centre - pose.translation.as_dvec3());
    let inertia = r.transpose() * m.inertia * r;
    (
        Mass(m.mass as f32),
        CenterOfMass(centre.as_vec3()),
        AngularInertia::from_tensor(AngularInertiaTensor::from_mat3_unchecked(inertia.as_mat3())),
    )
}

/// Object `object` of `level` as an Avian body (`None` for an id the level
/// does not have, or a collider Avian cannot take: no triangle left).
fn object_body(level: &Level, object: ObjectId, density: f32) -> Option<ObjectBody> {
    let a = level.archive();
    if object.is_body() {
        return None;
    }
    let inst = a.instances.get(object.index() as usize)?;
    let (pose, base) = level.object_rest(object)?;
    let motion = level.object_motion(object)?;
    let index = inst.collider.to_native();
    let collider = &a.colliders[index as usize];
    let dynamic = motion == Motion::Dynamic;
    let base = Affine::new(&base);
    let surface = match collider {
        ArchivedCollider::TriMesh(m) => Some(&**m),
        ArchivedCollider::Bsp(b) => Some(&b.surface),
        _ => None,
    };
    // a solid's surface is closed and wound outward
    let closed = matches!(collider, ArchivedCollider::Bsp(_));
    let s = base.scale();
    let shape = match (surface, collider) {
        (Some(mesh), _) => match a.decomposition(index).filter(|_| dynamic) {
            Some(d) => pieces(d, &base),
            None => triangles(mesh, &base, closed)?,
        },
        (None, ArchivedCollider::Polytope(p)) => polytope(p, &base)?,
        (None, ArchivedCollider::Cuboid(c)) => {
            primitive(&base, cuboid(c.half_extents.map(|x| x.to_native() * s)))
        }
        (None, ArchivedCollider::Sphere(b)) => {
            primitive(&base, SharedShape::ball(b.radius.to_native() * s))
        }
        (None, ArchivedCollider::Capsule(c)) => primitive(
            &base,
            SharedShape::capsule_y(c.half_height.to_native() * s, c.radius.to_native() * s),
        ),
        (None, _) => return None,
    };
    // an authored body of several objects is its parent entity's; one of
    // one object is this entity's, with the masses the file gives
    let authored = level.authored_body_of(object);
    let members = authored.map_or(1, |k| level.authored_body_len(k));
    let rigid = match motion {
        _ if members > 1 => None,
        Motion::Static => Some(RigidBody::Static),
        Motion::Kinematic => Some(RigidBody::Kinematic),
        Motion::Dynamic => Some(RigidBody::Dynamic),
    };
    let mass = dynamic
        .then(|| match authored {
            Some(k) => level.authored_body_mass(k, f64::from(density)),
            None => level.object_mass_properties(object, f64::from(density)),
        })
        .flatten()
        // the baked world frame into the body's: p = pose(local)
        .map(|m| body_mass(&m, &pose));
    Some(ObjectBody {
        transform: Transform::from_translation(pose.translation).with_rotation(pose.rotation),
        rigid,
        collider: Collider::from(shape),
        layers: CollisionLayers::new(
            LayerMask(level.object_layers(object).unwrap_or(u32::MAX)),
            LayerMask::ALL,
        ),
        sensor: level.is_trigger(object),
        mass,
    })
}

/// The rest of a placement (`Level::object_rest`'s base) applied to
/// local geometry.
struct Affine {
    linear: DMat3,
    offset: DVec3,
}

impl Affine {
    fn new(m: &[f64; 12]) -> Affine {
        Affine {
            linear: DMat3::from_cols(
                DVec3::new(m[0], m[4], m[8]),
                DVec3::new(m[1], m[5], m[9]),
                DVec3::new(m[2], m[6], m[10]),
            ),
            offset: DVec3::new(m[3], m[7], m[11]),
        }
    }

    fn point(&self, p: [f32; 3]) -> Vec3 {
        (self.linear * DVec3::from(p.map(f64::from)) + self.offset).as_vec3()
    }

    /// Whether it turns space inside out (faces' winding must flip).
    fn mirrors(&self) -> bool {
        self.linear.determinant() < 0.0
    }

    /// The scale of a similarity (the first column's length).
    fn scale(&self) -> f32 {
        self.linear.x_axis.length() as f32
    }

    /// Whether it is a similarity: its columns orthogonal and of one
    /// length, to rounding (primitives keep their kind only under one).
    fn similar(&self) -> bool {
        let (x, y, z) = (self.linear.x_axis, self.linear.y_axis, self.linear.z_axis);
        let s = x.length_squared();
        let near = |v: f64| v.abs() <= 1e-6 * s;
        near(y.length_squared() - s)
            && near(z.length_squared() - s)
            && near(x.dot(y))
            && near(y.dot(z))
            && near(z.dot(x))
    }

    /// The proper rotation of a similarity: a mirror is taken out by
    /// turning half-way round every axis (-I), which a box, sphere or
    /// capsule centred on its origin does not see.
    fn rotation(&self) -> Quat {
        let s = f64::from(self.scale()).max(f64::MIN_POSITIVE);
        let mut r = self.linear * (1.0 / s);
        if r.determinant() < 0.0 {
            r = -r;
        }
        Quat::from_mat3(&r.as_mat3()).normalize()
    }
}

/// A primitive (centred on its local origin, already scaled) turned and
/// moved by a similarity `base`.
fn primitive(base: &Affine, shape: SharedShape) -> SharedShape {
    let rotation = base.rotation();
    let offset = base.offset.as_vec3();
    // a rigid or uniformly scaled placement's rest is the identity but for
    // rounding (an angle of 1e-6 rad moves a 100 m collider's corner 0.1 mm)
    if rotation.angle_between(Quat::IDENTITY) < 1e-6 && offset.length() < 1e-6 {
        return shape;
    }
    SharedShape::compound(vec![(
        avian3d::parry::math::Pose::from_parts(offset, rotation),
        shape,
    )])
}

/// A polytope as a convex polyhedron of its stored faces (their loops
/// fanned into triangles), or the hull of its vertices where parry does not
/// take the faces as they are.
fn polytope(p: &ArchivedPolytope, base: &Affine) -> Option<SharedShape> {
    let points: Vec<Vec3> = p
        .vertices
        .iter()
        .map(|v| base.point(v.map(|x| x.to_native())))
        .collect();
    let indices: Vec<[u32; 3]> = p
        .fan_triangles()
        .map(|t| {
            if base.mirrors() {
                [t[0], t[2], t[1]]
            } else {
                t
            }
        })
        .collect();
    SharedShape::convex_mesh(points.clone(), &indices).or_else(|| SharedShape::convex_hull(&points))
}

/// A triangle mesh of `mesh`'s triangles, with parry's fix for bumps on
/// internal edges where the triangles have a side that faces out: a
/// `closed` surface (a solid's, wound outward), or an open mesh whose
/// every triangle faces up (terrain, floors), or down (turned over, as
/// Kiln's triangle meshes are two-sided). Parry's fix makes triangles
/// one-sided, so an open mesh facing several ways (walls, a room, a
/// fence) stays two-sided as in Kiln, and its internal edges can bump.
/// `None` when no triangle is left.
fn triangles(mesh: &ArchivedTriMesh, base: &Affine, closed: bool) -> Option<SharedShape> {
    use avian3d::parry::shape::TriMeshFlags;
    let vertices: Vec<Vec3> = (0..mesh.vertices.len() as u32)
        .map(|i| base.point(mesh.vertices.get(i)))
        .collect();
    let mut indices: Vec<[u32; 3]> = mesh
        .triangles()
        .map(|(t, _)| {
            if base.mirrors() {
                [t[0], t[2], t[1]]
            } else {
                t
            }
        })
        .collect();
    if indices.is_empty() {
        return None;
    }
    let (mut up, mut down) = (false, false);
    for t in &indices {
        let [a, b, c] = t.map(|i| vertices[i as usize].as_dvec3());
        let n = (b - a).cross(c - a);
        // slivers say nothing about which way a mesh faces
        if n.length_squared() <= 1e-24 * (b - a).length_squared().max(1e-30) {
            continue;
        }
        up |= n.y > 0.0;
        down |= n.y <= 0.0;
    }
    let one_sided = closed || !(up && down);
    if !closed && down && !up {
        for t in &mut indices {
            t.swap(1, 2);
        }
    }
    if !one_sided {
        return SharedShape::trimesh_with_flags(vertices, indices, TriMeshFlags::empty()).ok();
    }
    SharedShape::trimesh_with_flags(
        vertices.clone(),
        indices.clone(),
        TriMeshFlags::FIX_INTERNAL_EDGES,
    )
    .ok()
    .or_else(|| SharedShape::trimesh_with_flags(vertices, indices, TriMeshFlags::empty()).ok())
}

/// A decomposition's pieces as one compound: a piece's box, sphere or
/// capsule where it has one and the placement keeps it one, else its
/// polytope.
fn pieces(d: &ArchivedDecomposition, base: &Affine) -> SharedShape {
    let mut parts = Vec::new();
    for (piece, shape) in d.pieces.iter().zip(d.shapes.iter()) {
        if let Some(part) = piece_primitive(shape, base) {
            parts.push(part);
        } else if let Some(hull) = polytope(piece, base) {
            parts.push((avian3d::parry::math::Pose::IDENTITY, hull));
        }
    }
    SharedShape::compound(parts)
}

/// A piece's primitive in the body's frame (`None` for a hull, or under a
/// placement that is not a similarity).
fn piece_primitive(
    shape: &ArchivedPieceShape,
    base: &Affine,
) -> Option<(avian3d::parry::math::Pose, SharedShape)> {
    if !base.similar() {
        return None;
    }
    let s = base.scale();
    let local = match &shape.kind {
        ArchivedPieceKind::Hull => return None,
        ArchivedPieceKind::Cuboid(c) => cuboid(c.half_extents.map(|x| x.to_native() * s)),
        ArchivedPieceKind::Sphere(b) => SharedShape::ball(b.radius.to_native() * s),
        ArchivedPieceKind::Capsule(c) => {
            SharedShape::capsule_y(c.half_height.to_native() * s, c.radius.to_native() * s)
        }
    };
    let q = Quat::from_array(shape.rotation.map(|x| x.to_native())).normalize();
    let centre = base.point(shape.centre.map(|x| x.to_native()));
    Some((
        avian3d::parry::math::Pose::from_parts(centre, base.rotation() * q),
        local,
    ))
}

/// A box of half extents `h`.
fn cuboid(h: [f32; 3]) -> SharedShape {
    SharedShape::cuboid(h[0], h[1], h[2])
}
