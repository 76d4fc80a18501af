//! Collider wireframes as gizmos (feature `gizmos`), coloured by kind as
//! `baker view` colours them: boxes orange, spheres blue, capsules green,
//! polytopes purple, concave solids yellow, triangle meshes teal. Trigger
//! volumes are drawn faint. Add Bevy's `GizmoPlugin` (in `DefaultPlugins`)
//! and turn them on and off with the [`KilnGizmos`] resource.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::app::{App, PostUpdate};
use bevy::asset::{AssetId, Assets};
use bevy::color::{Alpha, Color};
use bevy::ecs::prelude::*;
use bevy::gizmos::config::GizmoConfigStore;
use bevy::gizmos::gizmos::Gizmos;
use bevy::math::Vec3;
use bevy::transform::components::GlobalTransform;
use kiln_runtime::{Level, ObjectId, Pose, World};

use crate::asset::KilnArchive;
use crate::body::{KilnBody, KilnBodyCollider, KilnShape};
use crate::convert::pose_of;
use crate::world::{KilnSystems, KilnWorld};

/// What the collider gizmos draw, and what they drew last frame.
#[derive(Resource, Clone, Debug)]
pub struct KilnGizmos {
    /// Draw the level's objects (default true).
    pub level: bool,
    /// Draw the bodies of [`KilnBody`] entities (default true).
    pub bodies: bool,
    /// Objects with more edges than this are drawn as their bounding
    /// box's twelve edges (default 50,000).
    pub max_edges: usize,
    /// Lines drawn in the last frame.
    pub drawn: usize,
    /// Keep the last frame's lines in `recorded` (default false: for
    /// tests and tools that check what is shown).
    pub record: bool,
    /// The last frame's lines (start, end, colour) when `record` is on.
    pub recorded: Vec<(Vec3, Vec3, Color)>,
}

impl Default for KilnGizmos {
    fn default() -> Self {
        KilnGizmos {
            level: true,
            bodies: true,
            max_edges: 50_000,
            drawn: 0,
            record: false,
            recorded: Vec::new(),
        }
    }
}

/// A collider kind's colour, as `baker view` shows it (the names
/// `inspect` prints).
pub fn kind_colour(kind: &str) -> Color {
    let rgb = match kind {
        "cuboid" => 0xff7a1a,
        "sphere" => 0x2f8cff,
        "capsule" => 0x22cc66,
        "polytope" => 0xb040ff,
        "bsp" => 0xffd21a,
        "trimesh" => 0x19d3c5,
        _ => 0xffffff,
    };
    Color::srgb_u8((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8)
}

/// How a trigger's colour is faded.
fn faint(c: Color, trigger: bool) -> Color {
    if trigger { c.with_alpha(0.35) } else { c }
}

/// One object's wireframe where its archive places it.
struct Wire {
    object: ObjectId,
    colour: Color,
    trigger: bool,
    /// Where the archive places it (a mover's pose before any move).
    baked: Pose,
    edges: Vec<[Vec3; 2]>,
}

/// The wireframes of an archive's objects.
struct Wires {
    level: Arc<Level>,
    wires: Vec<Wire>,
}

impl Wires {
    fn of(level: &Arc<Level>, max_edges: usize) -> Wires {
        let a = level.archive();
        let placed = World::new(level.clone());
        let objects = kiln_baker::export::world_objects(a);
        let wires = level
            .objects()
            .zip(objects)
            .map(|(object, mesh)| {
                let inst = &a.instances[object.index() as usize];
                let kind = a.colliders[inst.collider.to_native() as usize].kind_name();
                let mut edges = feature_edges(&mesh.positions, &mesh.triangles);
                if edges.len() > max_edges {
                    edges = box_edges(&mesh.positions);
                }
                Wire {
                    object,
                    colour: kind_colour(kind),
                    trigger: level.is_trigger(object),
                    baked: placed.pose(object).unwrap_or(Pose::IDENTITY),
                    edges,
                }
            })
            .collect();
        Wires {
            level: level.clone(),
            wires,
        }
    }
}

/// The edges where a mesh folds (or ends): the diagonals inside flat
/// faces left out.
fn feature_edges(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<[Vec3; 2]> {
    let p = |i: u32| Vec3::from_array(positions[i as usize]);
    let mut by_edge: HashMap<(u32, u32), Vec<Vec3>> = HashMap::new();
    for t in triangles {
        let n = (p(t[1]) - p(t[0]))
            .cross(p(t[2]) - p(t[0]))
            .normalize_or_zero();
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            by_edge.entry((a.min(b), a.max(b))).or_default().push(n);
        }
    }
    let mut edges: Vec<_> = by_edge
        .into_iter()
        .filter(|(_, normals)| normals.len() != 2 || normals[0].dot(normals[1]) < 0.9998)
        .map(|((a, b), _)| [p(a), p(b)])
        .collect();
    edges.sort_by(|x, y| {
        x[0].to_array()
            .partial_cmp(&y[0].to_array())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    edges
}

/// The twelve edges of the box around `positions`.
fn box_edges(positions: &[[f32; 3]]) -> Vec<[Vec3; 2]> {
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &q| {
            (lo.min(Vec3::from_array(q)), hi.max(Vec3::from_array(q)))
        });
    let corner = |i: usize| {
        Vec3::new(
            [lo.x, hi.x][i & 1],
            [lo.y, hi.y][i >> 1 & 1],
            [lo.z, hi.z][i >> 2],
        )
    };
    let mut edges = Vec::new();
    for i in 0..8 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                edges.push([corner(i), corner(i | bit)]);
            }
        }
    }
    edges
}

/// A shape's wireframe in its own frame: a box's twelve edges, three
/// circles of a sphere, a capsule's rings, sides and caps, a hull's edges.
fn shape_edges(shape: &KilnShape) -> Vec<[Vec3; 2]> {
    const N: usize = 32;
    let circle =
        |centre: Vec3, u: Vec3, v: Vec3, r: f32, from: f32, to: f32, out: &mut Vec<[Vec3; 2]>| {
            let at = |k: usize| {
                let a = from + (to - from) * k as f32 / N as f32;
                centre + (u * a.cos() + v * a.sin()) * r
            };
            out.extend((0..N).map(|k| [at(k), at(k + 1)]));
        };
    let tau = std::f32::consts::TAU;
    let pi = std::f32::consts::PI;
    let mut e = Vec::new();
    match shape {
        KilnShape::Cuboid { half } => {
            let corners: Vec<[f32; 3]> = (0..8)
                .map(|i| {
                    [
                        [-half.x, half.x][i & 1],
                        [-half.y, half.y][i >> 1 & 1],
                        [-half.z, half.z][i >> 2],
                    ]
                })
                .collect();
            e = box_edges(&corners);
        }
        KilnShape::Sphere { radius } => {
            circle(Vec3::ZERO, Vec3::X, Vec3::Y, *radius, 0.0, tau, &mut e);
            circle(Vec3::ZERO, Vec3::Y, Vec3::Z, *radius, 0.0, tau, &mut e);
            circle(Vec3::ZERO, Vec3::Z, Vec3::X, *radius, 0.0, tau, &mut e);
        }
        KilnShape::Capsule {
            half_height,
            radius,
        } => {
            let (top, bottom) = (Vec3::Y * *half_height, Vec3::NEG_Y * *half_height);
            circle(top, Vec3::X, Vec3::Z, *radius, 0.0, tau, &mut e);
            circle(bottom, Vec3::X, Vec3::Z, *radius, 0.0, tau, &mut e);
            for side in [Vec3::X, Vec3::NEG_X, Vec3::Z, Vec3::NEG_Z] {
                e.push([top + side * *radius, bottom + side * *radius]);
            }
            circle(top, Vec3::X, Vec3::Y, *radius, 0.0, pi, &mut e);
            circle(top, Vec3::Z, Vec3::Y, *radius, 0.0, pi, &mut e);
            circle(bottom, Vec3::X, Vec3::NEG_Y, *radius, 0.0, pi, &mut e);
            circle(bottom, Vec3::Z, Vec3::NEG_Y, *radius, 0.0, pi, &mut e);
        }
        KilnShape::Hull(hull) => e.extend(hull.edges().map(|(a, b)| [a, b])),
    }
    e
}

/// `x` placed by `p`.
fn place(p: &Pose, x: Vec3) -> Vec3 {
    p.rotation * x + p.translation
}

/// `x` brought back from where `p` places things.
fn unplace(p: &Pose, x: Vec3) -> Vec3 {
    p.rotation.inverse() * (x - p.translation)
}

/// The kind name of a body's shape.
fn shape_kind(shape: &KilnShape) -> &'static str {
    match shape {
        KilnShape::Cuboid { .. } => "cuboid",
        KilnShape::Sphere { .. } => "sphere",
        KilnShape::Capsule { .. } => "capsule",
        KilnShape::Hull(_) => "polytope",
    }
}

/// Wireframes kept between frames: the level's, and each copied archive's.
#[derive(Default)]
pub(crate) struct Cache {
    level: Option<Wires>,
    copied: HashMap<AssetId<KilnArchive>, Wires>,
}

/// Draws the level's objects (movers where they are now) and the bodies.
#[allow(clippy::type_complexity)]
pub(crate) fn draw(
    mut gizmos: Gizmos,
    mut settings: ResMut<KilnGizmos>,
    kiln: Res<KilnWorld>,
    archives: Res<Assets<KilnArchive>>,
    bodies: Query<(&KilnBody, &GlobalTransform)>,
    mut cache: Local<Cache>,
) {
    let mut drawn = 0;
    let mut recorded = std::mem::take(&mut settings.recorded);
    recorded.clear();
    let record = settings.record;
    let mut line = |a: Vec3, b: Vec3, c: Color| {
        gizmos.line(a, b, c);
        drawn += 1;
        if record {
            recorded.push((a, b, c));
        }
    };
    if let (true, Some(world)) = (settings.level, kiln.world()) {
        let stale = cache
            .level
            .as_ref()
            .is_none_or(|w| !Arc::ptr_eq(&w.level, world.level()));
        if stale {
            cache.level = Some(Wires::of(world.level(), settings.max_edges));
        }
        for w in &cache.level.as_ref().expect("just made").wires {
            let colour = faint(w.colour, w.trigger);
            // a mover drawn where it is: its pose now after its baked one undone
            let now = world.pose(w.object);
            let moved = now.filter(|p| *p != w.baked).map(|p| (p, w.baked));
            for [a, b] in &w.edges {
                match moved {
                    None => line(*a, *b, colour),
                    Some((now, baked)) => {
                        let carry = |x: Vec3| place(&now, unplace(&baked, x));
                        line(carry(*a), carry(*b), colour);
                    }
                }
            }
        }
    }
    if settings.bodies {
        for (body, at) in &bodies {
            let pose = pose_of(at);
            let place = |x: Vec3| place(&pose, x);
            match &body.collider {
                KilnBodyCollider::Shape(shape) => {
                    let colour = faint(kind_colour(shape_kind(shape)), body.trigger);
                    for [a, b] in shape_edges(shape) {
                        line(place(a), place(b), colour);
                    }
                }
                KilnBodyCollider::Copy { archive, object } => {
                    let Some(level) = archives.get(archive).map(|a| &a.level) else {
                        continue;
                    };
                    let wires = cache
                        .copied
                        .entry(archive.id())
                        .or_insert_with(|| Wires::of(level, settings.max_edges));
                    if !Arc::ptr_eq(&wires.level, level) {
                        *wires = Wires::of(level, settings.max_edges);
                    }
                    let Some(w) = level
                        .find_object(object)
                        .and_then(|o| wires.wires.get(o.index() as usize))
                    else {
                        continue;
                    };
                    let colour = faint(w.colour, body.trigger);
                    for [a, b] in &w.edges {
                        line(place(*a), place(*b), colour);
                    }
                }
            }
        }
    }
    settings.drawn = drawn;
    settings.recorded = recorded;
}

/// Adds the resource and the drawing system (after the sync point).
pub(crate) fn register(app: &mut App) {
    // drawn only where gizmos are (Bevy's GizmoPlugin, in DefaultPlugins)
    app.init_resource::<KilnGizmos>().add_systems(
        PostUpdate,
        draw.after(KilnSystems::Sync)
            .run_if(resource_exists::<GizmoConfigStore>),
    );
}
