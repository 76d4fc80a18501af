//! glTF physics: colliders authored with `OMI_physics_body` +
//! `OMI_physics_shape`, or with `KHR_physics_rigid_bodies` +
//! `KHR_implicit_shapes` (and its predecessor `KHR_collision_shapes`).
//!
//! Each collider becomes a scene instance with an
//! [`Authored`](crate::scene::Authored) kind: a mesh
//! the shape names (convex or triangle mesh), or a proxy mesh of an implicit
//! shape that the build fits exactly (a box's corners; a sphere's or
//! capsule's latitude rings, whose bounding box is the shape's) or takes the
//! hull of (a cylinder or cone as a [`CYLINDER_SEGMENTS`]-gon prism or
//! pyramid, vertices on the circle).
//!
//! Decisions where the specifications leave room:
//! - OMI capsule and cylinder `height` is the full height (caps included);
//!   KHR capsule `height` is the distance between the cap centres, KHR
//!   cylinder `height` the full height.
//! - A KHR capsule with different top and bottom radii becomes a capsule of
//!   the larger radius (it contains the tapered one; the difference is
//!   reported in the rule).
//! - `geometry.node` places the referenced node's mesh where that node is
//!   drawn (its own world transform).
//! - A trigger is baked as a trigger volume from its geometry; a KHR
//!   compound trigger of other nodes (`trigger.nodes`) is skipped with a
//!   warning. Planes and other shape types are skipped with a warning.
//! - A body's `motion` (KHR: present, kinematic if `isKinematic`; OMI:
//!   `motion.type`) applies to the colliders and triggers of its node and
//!   of the nodes below it, down to the next body that says otherwise.

use crate::kind::ColliderKind;
use crate::scene::{AuthoredMass, Motion, SceneMesh};
use glam::{DQuat, DVec3};
use gltf::json;
use serde_json::Value;

/// Segments of the polygon that stands in for a cylinder's circle: the
/// polytope's sides lie at most `r (1 − cos(π/32))` ≈ 0.0048 r inside the
/// true surface (its vertices are on it).
pub const CYLINDER_SEGMENTS: usize = 32;

/// Longitudes and latitude bands of sphere and capsule proxy meshes.
const SPHERE_SEGMENTS: usize = 16;
const SPHERE_BANDS: usize = 8;

/// The geometry of one authored shape.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Geometry {
    /// Full size along x, y, z.
    Box(DVec3),
    /// Radius.
    Sphere(f64),
    /// Half the distance between the cap centres, bottom and top radius.
    Capsule(f64, f64, f64),
    /// Half height, bottom and top radius.
    Cylinder(f64, f64, f64),
    /// A mesh of the document, as its hull or as triangles.
    Mesh { mesh: usize, convex: bool },
    /// A type this baker does not bake (e.g. `plane`, `heightfield`).
    Other(String),
}

/// The document-level shape arrays.
pub(super) struct Catalog {
    omi: Vec<Geometry>,
    khr: Vec<Geometry>,
    khr_name: &'static str,
}

/// A reference to a document-level shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ShapeRef {
    /// In `KHR_implicit_shapes` (else `OMI_physics_shape`).
    pub khr: bool,
    /// Index in that extension's `shapes`.
    pub index: usize,
    /// `geometry.convexHull` (KHR only).
    pub convex: bool,
}

/// What a node's physics extension asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeCollider {
    /// A document-level shape.
    Shape(ShapeRef),
    /// The mesh of another node (KHR `geometry.node`); `convex` from
    /// `geometry.convexHull`.
    Node { node: usize, convex: bool },
}

impl NodeCollider {
    /// The node extension the collider is authored with.
    pub(super) fn extension(self) -> &'static str {
        match self {
            NodeCollider::Shape(ShapeRef { khr: false, .. }) => "OMI_physics_body",
            _ => "KHR_physics_rigid_bodies",
        }
    }
}

impl Catalog {
    /// Reads the document's shape arrays; a malformed shape is an error
    /// naming it.
    pub(super) fn new(root: &json::Root) -> Result<Catalog, String> {
        let ext = |k: &str| root.extensions.as_ref().and_then(|e| e.others.get(k));
        let omi = match ext("OMI_physics_shape") {
            Some(v) => shapes(v, "OMI_physics_shape", omi_shape)?,
            None => Vec::new(),
        };
        let (khr, khr_name) = match (ext("KHR_implicit_shapes"), ext("KHR_collision_shapes")) {
            (Some(v), _) => (
                shapes(v, "KHR_implicit_shapes", khr_shape)?,
                "KHR_implicit_shapes",
            ),
            (None, Some(v)) => (
                shapes(v, "KHR_collision_shapes", khr_shape)?,
                "KHR_collision_shapes",
            ),
            (None, None) => (Vec::new(), "KHR_implicit_shapes"),
        };
        Ok(Catalog { omi, khr, khr_name })
    }

    /// The geometry a shape reference names, the extension it comes from,
    /// and the shape's index, or an error naming the bad reference.
    pub(super) fn shape(&self, r: ShapeRef) -> Result<(Geometry, &'static str, usize), String> {
        let (list, name) = if r.khr {
            (&self.khr, self.khr_name)
        } else {
            (&self.omi, "OMI_physics_shape")
        };
        let i = r.index;
        let g = list.get(i).ok_or_else(|| {
            format!(
                "collider shape {i} does not exist ({name} has {})",
                list.len()
            )
        })?;
        let g = match g {
            // convexHull turns a mesh shape into its hull
            Geometry::Mesh { mesh, .. } if r.convex => Geometry::Mesh {
                mesh: *mesh,
                convex: true,
            },
            _ => g.clone(),
        };
        Ok((g, name, i))
    }
}

/// What a node's physics extension says about it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct NodeBody {
    /// Its collider.
    pub collider: Option<NodeCollider>,
    /// Its trigger volume.
    pub trigger: Option<NodeCollider>,
    /// A trigger this baker does not read (a KHR compound of other
    /// nodes' triggers, `trigger.nodes`).
    pub unread_trigger: bool,
    /// Its body's motion, where the node has one (it applies to the
    /// colliders of the node and its descendants).
    pub motion: Option<Motion>,
    /// The mass properties the motion gives.
    pub mass: AuthoredMass,
}

/// The physics extension a node carries a collider, a trigger or a
/// body's motion in. An unreadable collider or trigger is an error.
pub(super) fn node_body(node: &json::Node) -> Result<NodeBody, String> {
    let Some(ext) = node.extensions.as_ref() else {
        return Ok(NodeBody::default());
    };
    if let Some(body) = ext.others.get("OMI_physics_body") {
        let shape = |v: &Value, what: &str| -> Result<NodeCollider, String> {
            Ok(NodeCollider::Shape(ShapeRef {
                khr: false,
                index: index(v, "shape", what)?,
                convex: false,
            }))
        };
        let motion = match body.get("motion") {
            None => None,
            Some(m) => Some(match m.get("type").and_then(Value::as_str) {
                Some("static") => Motion::Static,
                Some("kinematic") => Motion::Kinematic,
                // "rigid" is the draft's name for a simulated body
                Some("dynamic" | "rigid") => Motion::Dynamic,
                other => {
                    return Err(format!(
                        "OMI_physics_body motion type {other:?} is not static, kinematic or dynamic"
                    ));
                }
            }),
        };
        return Ok(NodeBody {
            collider: body
                .get("collider")
                .map(|c| shape(c, "OMI_physics_body collider"))
                .transpose()?,
            trigger: body
                .get("trigger")
                .map(|c| shape(c, "OMI_physics_body trigger"))
                .transpose()?,
            unread_trigger: false,
            motion,
            mass: authored_mass(body.get("motion"), "OMI_physics_body motion")?,
        });
    }
    if let Some(body) = ext.others.get("KHR_physics_rigid_bodies") {
        let motion = body.get("motion").map(|m| {
            if m.get("isKinematic").and_then(Value::as_bool) == Some(true) {
                Motion::Kinematic
            } else {
                Motion::Dynamic
            }
        });
        let collider = body
            .get("collider")
            .map(|c| khr_geometry(c, "KHR_physics_rigid_bodies collider"))
            .transpose()?;
        let (trigger, unread_trigger) = match body.get("trigger") {
            None => (None, false),
            Some(t) if t.get("geometry").is_some() => (
                Some(khr_geometry(t, "KHR_physics_rigid_bodies trigger")?),
                false,
            ),
            Some(_) => (None, true),
        };
        return Ok(NodeBody {
            collider,
            trigger,
            unread_trigger,
            motion,
            mass: authored_mass(body.get("motion"), "KHR_physics_rigid_bodies motion")?,
        });
    }
    Ok(NodeBody::default())
}

/// The mass properties a body's `motion` object gives (the same names in
/// `KHR_physics_rigid_bodies` and `OMI_physics_body`): `mass`,
/// `centerOfMass`, `inertiaDiagonal` and `inertiaOrientation` (read only
/// beside a diagonal). A value that is there but malformed is an error.
fn authored_mass(motion: Option<&Value>, what: &str) -> Result<AuthoredMass, String> {
    let Some(m) = motion else {
        return Ok(AuthoredMass::default());
    };
    let numbers = |key: &str, n: usize, non_negative: bool| -> Result<Option<Vec<f64>>, String> {
        let Some(v) = m.get(key) else {
            return Ok(None);
        };
        let xs: Option<Vec<f64>> = match v {
            Value::Number(x) if n == 1 => x.as_f64().map(|x| vec![x]),
            Value::Array(a) if a.len() == n && n > 1 => a.iter().map(Value::as_f64).collect(),
            _ => None,
        };
        match xs {
            Some(xs)
                if xs
                    .iter()
                    .all(|x| x.is_finite() && (!non_negative || *x >= 0.0)) =>
            {
                Ok(Some(xs))
            }
            _ => Err(format!(
                "{what} {key} {v} is not {}{}",
                if n == 1 {
                    "a number".to_string()
                } else {
                    format!("{n} numbers")
                },
                if non_negative {
                    ", finite and not negative"
                } else {
                    ", finite"
                }
            )),
        }
    };
    let mass = numbers("mass", 1, true)?.map(|x| x[0]);
    let centre = numbers("centerOfMass", 3, false)?.map(|x| DVec3::new(x[0], x[1], x[2]));
    let inertia = match numbers("inertiaDiagonal", 3, true)? {
        None => None,
        Some(d) => {
            let q = match numbers("inertiaOrientation", 4, false)? {
                None => DQuat::IDENTITY,
                Some(q) => {
                    let q = DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
                    if q.length() < 1e-6 {
                        return Err(format!(
                            "{what} inertiaOrientation is not a rotation (length 0)"
                        ));
                    }
                    q.normalize()
                }
            };
            Some((DVec3::new(d[0], d[1], d[2]), q))
        }
    };
    Ok(AuthoredMass {
        mass,
        centre,
        inertia,
    })
}

/// A KHR collider's or trigger's geometry: a document shape or another
/// node's mesh (`geometry`), or the draft's `shape` before `geometry`.
fn khr_geometry(c: &Value, what: &str) -> Result<NodeCollider, String> {
    Ok(match c.get("geometry") {
        Some(g) => {
            let convex = g
                .get("convexHull")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if g.get("node").is_some() {
                NodeCollider::Node {
                    node: index(g, "node", what)?,
                    convex,
                }
            } else {
                NodeCollider::Shape(ShapeRef {
                    khr: true,
                    index: index(g, "shape", what)?,
                    convex,
                })
            }
        }
        None => NodeCollider::Shape(ShapeRef {
            khr: true,
            index: index(c, "shape", what)?,
            convex: false,
        }),
    })
}

/// The collision systems of a node's `KHR_physics_rigid_bodies`
/// collider (its `collisionFilter` in the document's `collisionFilters`):
/// `None` when it names no filter; an error when the filter is missing or
/// malformed.
pub(super) fn collision_systems(
    root: &json::Root,
    node: &json::Node,
) -> Option<Result<Vec<String>, String>> {
    let collider = node
        .extensions
        .as_ref()?
        .others
        .get("KHR_physics_rigid_bodies")?
        .get("collider")?;
    let f = collider.get("collisionFilter")?;
    Some((|| {
        let k = f
            .as_u64()
            .ok_or("KHR_physics_rigid_bodies collider: `collisionFilter` is not an index")?
            as usize;
        let filters = root
            .extensions
            .as_ref()
            .and_then(|e| e.others.get("KHR_physics_rigid_bodies"))
            .and_then(|e| e.get("collisionFilters"))
            .and_then(Value::as_array)
            .ok_or("KHR_physics_rigid_bodies: a collider names a collision filter, but there are no `collisionFilters`")?;
        let filter = filters.get(k).ok_or_else(|| {
            format!(
                "KHR_physics_rigid_bodies collision filter {k} does not exist ({} of them)",
                filters.len()
            )
        })?;
        match filter.get("collisionSystems") {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str().map(str::to_owned).ok_or_else(|| {
                        format!("KHR_physics_rigid_bodies collision filter {k}: `collisionSystems` holds a non-string")
                    })
                })
                .collect(),
            Some(_) => Err(format!(
                "KHR_physics_rigid_bodies collision filter {k}: `collisionSystems` is not an array"
            )),
        }
    })())
}

fn index(v: &Value, key: &str, what: &str) -> Result<usize, String> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| format!("{what}: `{key}` is missing or not an index"))
}

fn shapes(
    v: &Value,
    ext: &str,
    parse: fn(&Value) -> Result<Geometry, String>,
) -> Result<Vec<Geometry>, String> {
    let list = v
        .get("shapes")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{ext}: `shapes` is missing or not an array"))?;
    list.iter()
        .enumerate()
        .map(|(i, s)| parse(s).map_err(|e| format!("{ext} shape {i}: {e}")))
        .collect()
}

/// A positive finite number at `obj[key]`, or `default` when absent.
fn positive(obj: Option<&Value>, key: &str, default: f64, zero_ok: bool) -> Result<f64, String> {
    let Some(v) = obj.and_then(|o| o.get(key)) else {
        return Ok(default);
    };
    match v.as_f64() {
        Some(x) if x.is_finite() && (x > 0.0 || (zero_ok && x == 0.0)) => Ok(x),
        _ => Err(format!("`{key}` must be a positive number, not {v}")),
    }
}

fn size3(obj: Option<&Value>) -> Result<DVec3, String> {
    let Some(v) = obj.and_then(|o| o.get("size")) else {
        return Ok(DVec3::ONE);
    };
    let a = v
        .as_array()
        .filter(|a| a.len() == 3)
        .ok_or_else(|| format!("box `size` must be three numbers, not {v}"))?;
    let mut s = DVec3::ZERO;
    for (k, c) in a.iter().enumerate() {
        s[k] = match c.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => x,
            _ => {
                return Err(format!(
                    "box `size` must be three positive numbers, not {v}"
                ));
            }
        };
    }
    Ok(s)
}

fn type_of(s: &Value) -> Result<&str, String> {
    s.get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| "`type` is missing".to_string())
}

fn omi_shape(s: &Value) -> Result<Geometry, String> {
    let ty = type_of(s)?;
    let body = s.get(ty);
    Ok(match ty {
        "box" => Geometry::Box(size3(body)?),
        "sphere" => Geometry::Sphere(positive(body, "radius", 0.5, false)?),
        "capsule" => {
            let r = positive(body, "radius", 0.5, false)?;
            let h = positive(body, "height", 2.0, false)?;
            Geometry::Capsule((h * 0.5 - r).max(0.0), r, r)
        }
        "cylinder" => {
            let r = positive(body, "radius", 0.5, false)?;
            let h = positive(body, "height", 2.0, false)?;
            Geometry::Cylinder(h * 0.5, r, r)
        }
        "convex" | "trimesh" => Geometry::Mesh {
            mesh: index(body.unwrap_or(&Value::Null), "mesh", ty)?,
            convex: ty == "convex",
        },
        other => Geometry::Other(other.to_string()),
    })
}

fn khr_shape(s: &Value) -> Result<Geometry, String> {
    let ty = type_of(s)?;
    let body = s.get(ty);
    let radii = || -> Result<(f64, f64), String> {
        let b = positive(body, "radiusBottom", 0.25, true)?;
        let t = positive(body, "radiusTop", 0.25, true)?;
        if b == 0.0 && t == 0.0 {
            return Err("both radii are zero".into());
        }
        Ok((b, t))
    };
    Ok(match ty {
        "box" => Geometry::Box(size3(body)?),
        "sphere" => Geometry::Sphere(positive(body, "radius", 0.5, false)?),
        "capsule" => {
            let h = positive(body, "height", 0.5, false)?;
            let (b, t) = radii()?;
            Geometry::Capsule(h * 0.5, b, t)
        }
        "cylinder" => {
            let h = positive(body, "height", 0.5, false)?;
            let (b, t) = radii()?;
            Geometry::Cylinder(h * 0.5, b, t)
        }
        // KHR_collision_shapes' mesh shape, with its convexHull flag
        "mesh" => Geometry::Mesh {
            mesh: index(body.unwrap_or(&Value::Null), "mesh", "mesh shape")?,
            convex: s
                .pointer("/extensions/KHR_physics_rigid_bodies/convexHull")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        other => Geometry::Other(other.to_string()),
    })
}

/// The collider kind and the rule text for an implicit shape, with its
/// proxy mesh; `None` for mesh and unknown geometries.
pub(super) fn implicit(
    g: &Geometry,
    ext: &str,
    index: usize,
) -> Option<(ColliderKind, String, SceneMesh)> {
    let name = format!("{ext} {index}");
    let (kind, what, mesh) = match *g {
        Geometry::Box(s) => (
            ColliderKind::Cuboid,
            format!("box {} × {} × {}", s.x, s.y, s.z),
            box_mesh(&name, s * 0.5),
        ),
        Geometry::Sphere(r) => (
            ColliderKind::Sphere,
            format!("sphere r {r}"),
            revolve(&name, &capsule_profile(0.0, r), SPHERE_SEGMENTS),
        ),
        Geometry::Capsule(hh, b, t) => {
            let r = b.max(t);
            let what = if b == t {
                format!("capsule r {r}, segment {}", 2.0 * hh)
            } else {
                format!(
                    "tapered capsule r {b}/{t}, segment {}: a capsule of r {r} (up to {} larger)",
                    2.0 * hh,
                    (b - t).abs()
                )
            };
            (
                ColliderKind::Capsule,
                what,
                revolve(&name, &capsule_profile(hh, r), SPHERE_SEGMENTS),
            )
        }
        Geometry::Cylinder(hh, b, t) => (
            ColliderKind::Polytope,
            format!(
                "cylinder r {b}/{t}, height {}: {CYLINDER_SEGMENTS}-gon prism",
                2.0 * hh
            ),
            revolve(
                &name,
                &[(-hh, 0.0), (-hh, b), (hh, t), (hh, 0.0)],
                CYLINDER_SEGMENTS,
            ),
        ),
        Geometry::Mesh { .. } | Geometry::Other(_) => return None,
    };
    Some((kind, format!("{name}: {what}"), mesh))
}

fn box_mesh(name: &str, h: DVec3) -> SceneMesh {
    SceneMesh {
        proxy: true,
        ..SceneMesh::cuboid(name, [0.0; 3], h.as_vec3().to_array())
    }
}

/// A capsule's (y, radius) profile from the bottom pole to the top pole:
/// a sphere split at its equator, the halves `hh` apart.
fn capsule_profile(hh: f64, r: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for i in 0..=SPHERE_BANDS {
        let phi = std::f64::consts::PI * (i as f64 / SPHERE_BANDS as f64 - 0.5);
        let (s, c) = phi.sin_cos();
        let ring = if i == 0 || i == SPHERE_BANDS {
            0.0
        } else {
            r * c
        };
        let shift = if 2 * i < SPHERE_BANDS { -hh } else { hh };
        if 2 * i == SPHERE_BANDS && hh > 0.0 {
            out.push((-hh, r));
        }
        out.push((r * s + shift, ring));
    }
    out
}

/// A closed surface of revolution about y from a (y, radius) profile that
/// starts and ends on the axis (radius 0), outward winding.
fn revolve(name: &str, profile: &[(f64, f64)], segments: usize) -> SceneMesh {
    let mut pos: Vec<[f32; 3]> = Vec::new();
    // first vertex of each profile point (a pole has one, a ring `segments`)
    let mut starts = Vec::new();
    for &(y, r) in profile {
        starts.push(pos.len() as u32);
        if r == 0.0 {
            pos.push([0.0, y as f32, 0.0]);
        } else {
            for k in 0..segments {
                let a = std::f64::consts::TAU * k as f64 / segments as f64;
                let (s, c) = a.sin_cos();
                pos.push([(r * c) as f32, y as f32, (r * s) as f32]);
            }
        }
    }
    let at = |j: usize, k: usize| -> u32 {
        if profile[j].1 == 0.0 {
            starts[j]
        } else {
            starts[j] + (k % segments) as u32
        }
    };
    let mut tris = Vec::new();
    for j in 0..profile.len() - 1 {
        for k in 0..segments {
            let (a, b) = (at(j, k), at(j, k + 1));
            let (c, d) = (at(j + 1, k), at(j + 1, k + 1));
            // seen from outside with y up and angle growing from +x to +z,
            // (a, c, b) and (b, c, d) run counter-clockwise
            for t in [[a, c, b], [b, c, d]] {
                // the fans at the poles have one triangle per quad
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    tris.push(t);
                }
            }
        }
    }
    SceneMesh {
        proxy: true,
        ..SceneMesh::new(name, pos, &tris)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed_volume(m: &SceneMesh) -> f64 {
        let p = |i: u32| DVec3::from(m.positions[i as usize].map(f64::from));
        m.triangles
            .iter()
            .map(|t| p(t[0]).dot(p(t[1]).cross(p(t[2]))) / 6.0)
            .sum()
    }

    #[test]
    fn proxies_are_closed_outward_and_the_right_size() {
        let (_, _, sphere) = implicit(&Geometry::Sphere(2.0), "T", 0).unwrap();
        let v = signed_volume(&sphere);
        let exact = 4.0 / 3.0 * std::f64::consts::PI * 8.0;
        assert!(v > 0.9 * exact && v < exact, "sphere volume {v} vs {exact}");
        let (_, _, capsule) = implicit(&Geometry::Capsule(1.0, 0.5, 0.5), "T", 0).unwrap();
        let v = signed_volume(&capsule);
        let exact = 4.0 / 3.0 * std::f64::consts::PI * 0.125 + std::f64::consts::PI * 0.25 * 2.0;
        assert!(
            v > 0.9 * exact && v < exact,
            "capsule volume {v} vs {exact}"
        );
        let top = capsule
            .positions
            .iter()
            .map(|p| p[1])
            .fold(f32::MIN, f32::max);
        assert_eq!(top, 1.5);
        let (kind, _, cyl) = implicit(&Geometry::Cylinder(1.0, 1.0, 0.0), "T", 0).unwrap();
        assert_eq!(kind, ColliderKind::Polytope);
        let v = signed_volume(&cyl);
        let cone = std::f64::consts::PI * 2.0 / 3.0;
        assert!(v > 0.98 * cone && v < cone, "cone volume {v} vs {cone}");
        let (_, _, b) = implicit(&Geometry::Box(DVec3::new(2.0, 4.0, 6.0)), "T", 0).unwrap();
        assert!((signed_volume(&b) - 48.0).abs() < 1e-9);
    }

    #[test]
    fn shapes_parse_with_defaults_and_reject_degenerate_sizes() {
        let j = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(
            omi_shape(&j(
                r#"{"type":"capsule","capsule":{"radius":0.5,"height":3}}"#
            )),
            Ok(Geometry::Capsule(1.0, 0.5, 0.5))
        );
        assert_eq!(
            khr_shape(&j(r#"{"type":"capsule","capsule":{"height":3}}"#)),
            Ok(Geometry::Capsule(1.5, 0.25, 0.25))
        );
        assert_eq!(
            khr_shape(&j(r#"{"type":"box"}"#)),
            Ok(Geometry::Box(DVec3::ONE))
        );
        assert!(khr_shape(&j(r#"{"type":"sphere","sphere":{"radius":-1}}"#)).is_err());
        assert!(omi_shape(&j(r#"{"type":"box","box":{"size":[1,0,1]}}"#)).is_err());
        assert!(omi_shape(&j(r#"{"box":{}}"#)).is_err());
        assert_eq!(
            khr_shape(&j(r#"{"type":"plane"}"#)),
            Ok(Geometry::Other("plane".into()))
        );
    }
}
