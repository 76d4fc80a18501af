//! Classify: which kind of collider each placed object gets, and the rule
//! that decided it (reported by `inspect`, so an artist can see why).
//!
//! Decided per instance (a (mesh, node) pair): two nodes that share a mesh
//! may classify differently, and then bake two shapes.

use crate::config::BakeSettings;
use crate::prepare::WeldedMesh;
use crate::scene::Scene;

/// The kinds of collider a scene mesh can become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColliderKind {
    /// A triangle mesh under a tree.
    TriMesh,
    /// A convex polytope (the hull of the mesh).
    Convex,
    /// A box fitted to the mesh.
    Box,
    /// A sphere fitted to the mesh.
    Sphere,
    /// A capsule fitted to the mesh.
    Capsule,
    /// No collider.
    None,
}

impl ColliderKind {
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ColliderKind::TriMesh => "trimesh",
            ColliderKind::Convex => "convex",
            ColliderKind::Box => "box",
            ColliderKind::Sphere => "sphere",
            ColliderKind::Capsule => "capsule",
            ColliderKind::None => "none",
        }
    }

    /// Whether the kind is an analytic primitive.
    pub fn is_primitive(self) -> bool {
        matches!(
            self,
            ColliderKind::Box | ColliderKind::Sphere | ColliderKind::Capsule
        )
    }

    /// The kind a node's `extras.collider` value names.
    pub fn from_extras(v: &str) -> Option<ColliderKind> {
        Some(match v {
            "convex" => ColliderKind::Convex,
            // concave objects become BSP trees once that shape exists
            "concave" | "mesh" | "terrain" => ColliderKind::TriMesh,
            "box" => ColliderKind::Box,
            "sphere" => ColliderKind::Sphere,
            "capsule" => ColliderKind::Capsule,
            "none" => ColliderKind::None,
            _ => return None,
        })
    }
}

/// The collider chosen for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What to build.
    pub kind: ColliderKind,
    /// Which rule chose it, in words (e.g. `default: triangle mesh`).
    pub rule: String,
}

/// One choice per scene instance, in scene order: node extras first
/// (`{"collider": "convex" | "concave" | "mesh" | "terrain" | "box" |
/// "sphere" | "capsule" | "none"}`), then automatic: a closed mesh whose
/// volume is within `settings.convex_tolerance` of its hull's becomes a
/// polytope; everything else a triangle mesh.
///
/// Returns the choices and warnings (e.g. an unknown extras value).
pub fn classify(
    scene: &Scene,
    welded: &[WeldedMesh],
    settings: &BakeSettings,
) -> (Vec<Choice>, Vec<String>) {
    if !settings.classify {
        let all = scene.instances.iter().map(|_| Choice {
            kind: ColliderKind::TriMesh,
            rule: "classification off: triangle mesh".into(),
        });
        return (all.collect(), Vec::new());
    }
    let mut facts: Vec<Option<MeshFacts>> = vec![None; scene.meshes.len()];
    let mut warnings = Vec::new();
    let out = scene
        .instances
        .iter()
        .map(|inst| {
            if let Some(v) = inst.extras_collider.as_deref() {
                match ColliderKind::from_extras(v) {
                    Some(kind) => {
                        return Choice {
                            kind,
                            rule: format!("node extras: collider = {v}"),
                        };
                    }
                    None => warnings.push(format!(
                        "{}: unknown extras collider {v:?} (expected convex, concave, mesh, terrain, box, sphere, capsule or none); classified automatically",
                        inst.name
                    )),
                }
            }
            let f = *facts[inst.mesh].get_or_insert_with(|| analyse(&welded[inst.mesh]));
            let ratio = f.volume / f.hull_volume;
            if f.closed && f.hull_volume > 0.0 && ratio >= 1.0 - settings.convex_tolerance {
                Choice {
                    kind: ColliderKind::Convex,
                    rule: format!("auto: closed, {:.1}% of its hull's volume", ratio * 100.0),
                }
            } else {
                let why = if !f.closed {
                    "not closed".to_string()
                } else if f.hull_volume > 0.0 {
                    format!("{:.1}% of its hull's volume", ratio * 100.0)
                } else {
                    "no convex hull: flat, or the hull failed".to_string()
                };
                Choice {
                    kind: ColliderKind::TriMesh,
                    rule: format!("auto: triangle mesh ({why})"),
                }
            }
        })
        .collect();
    (out, warnings)
}

/// What automatic classification needs to know of a mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshFacts {
    /// Every edge (after welding) is used exactly twice, in opposite directions.
    pub closed: bool,
    /// Signed volume of the mesh (meaningful when closed).
    pub volume: f64,
    /// Volume of its convex hull (0 when flat or too large to check).
    pub hull_volume: f64,
}

/// Most welded vertices automatic classification computes a hull for
/// (larger meshes stay triangle meshes).
pub const AUTO_HULL_VERTICES: usize = 4096;

/// Closedness and volumes of a welded mesh.
pub fn analyse(w: &WeldedMesh) -> MeshFacts {
    let mut edges = std::collections::HashMap::new();
    for t in &w.triangles {
        for k in 0..3 {
            *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0u32) += 1;
        }
    }
    let closed = !w.triangles.is_empty()
        && edges
            .iter()
            .all(|(&(a, b), &n)| n == 1 && edges.get(&(b, a)) == Some(&1));
    let p = |i: u32| glam::DVec3::from(w.vertices[i as usize].map(f64::from));
    let volume = w
        .triangles
        .iter()
        .map(|t| p(t[0]).dot(p(t[1]).cross(p(t[2]))))
        .sum::<f64>()
        / 6.0;
    let hull_volume = if closed && w.vertices.len() <= AUTO_HULL_VERTICES {
        let pts: Vec<_> = (0..w.vertices.len() as u32).map(p).collect();
        crate::build::hull::hull(&pts).map_or(0.0, |h| h.volume())
    } else {
        0.0
    };
    MeshFacts {
        closed,
        volume,
        hull_volume,
    }
}
