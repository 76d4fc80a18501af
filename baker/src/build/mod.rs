//! Build: prepared meshes become shapes (the builders' own types), placed
//! instances get a top-level tree. `encode` flattens the result into the
//! archive's types.
//!
//! Everything here is deterministic: shapes are built in parallel but each
//! depends only on its input, and they are collected in first-use order.

pub mod bsp;
pub mod hull;
pub mod sah;
pub mod solid;
pub mod top;
pub mod tri_tree;

use crate::classify::{Choice, ColliderKind};
use crate::config::ShapeSettings;
use crate::prepare::WeldedMesh;
use crate::prepare::collider::{ColliderSettings, Fidelity, watertight};
use crate::scene::Scene;
use glam::DAffine3;
use rayon::prelude::*;
use sah::BinNode;
use solid::{BuiltPolytope, Primitive};
use std::borrow::Cow;
use tri_tree::TriTree;

/// A built shape, in the builder's own form.
#[derive(Clone, Debug, PartialEq)]
pub enum BuiltShape {
    /// A triangle mesh and its binary tree.
    TriMesh(TriTree),
    /// A convex polytope.
    Polytope(BuiltPolytope),
    /// A fitted primitive, centred on the origin of its own frame.
    Primitive(Primitive),
    /// A solid-leaf BSP tree of a closed mesh.
    Bsp(bsp::BuiltBsp),
}

impl BuiltShape {
    /// The shape's points that bound it (every point of the shape lies in
    /// their convex hull), for world boxes.
    pub fn hull_points(&self) -> Cow<'_, [[f32; 3]]> {
        match self {
            BuiltShape::TriMesh(t) => Cow::Borrowed(&t.vertices),
            BuiltShape::Polytope(p) => Cow::Borrowed(&p.vertices),
            BuiltShape::Primitive(p) => Cow::Owned(p.box_corners()),
            BuiltShape::Bsp(b) => Cow::Borrowed(&b.vertices),
        }
    }

    /// Whether the shape has nothing to collide with.
    pub fn is_empty(&self) -> bool {
        match self {
            BuiltShape::TriMesh(t) => t.leaves.is_empty(),
            BuiltShape::Polytope(_) | BuiltShape::Primitive(_) | BuiltShape::Bsp(_) => false,
        }
    }
}

/// An instance of a built shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// Index of the instance in the scene.
    pub source: usize,
    /// Index into [`BuiltLevel::shapes`].
    pub shape: usize,
    /// Local-to-world transform.
    pub transform: DAffine3,
    /// Object name.
    pub name: String,
    /// The classification rule that chose the shape.
    pub rule: String,
}

/// Shapes, their placements in top-tree leaf order, and the top tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltLevel {
    /// Unique shapes.
    pub shapes: Vec<BuiltShape>,
    /// Placements, in top-tree leaf order (empty shapes left out).
    pub placed: Vec<Placed>,
    /// Binary tree over `placed`'s world boxes.
    pub top: Vec<BinNode>,
    /// The concave colliders made, with their measured fidelity.
    pub colliders: Vec<ColliderReport>,
}

/// A concave collider's fidelity, for the bake report.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ColliderReport {
    /// The first object using it.
    pub object: String,
    /// Its mesh.
    pub mesh: String,
    /// The tolerance it was made with.
    pub tolerance: f64,
    /// What was measured.
    #[serde(flatten)]
    pub fidelity: Fidelity,
}

impl ColliderReport {
    /// Whether the measured two-sided Hausdorff distance is within the
    /// tolerance.
    pub fn within_tolerance(&self) -> bool {
        self.fidelity.hausdorff() <= self.tolerance
    }
}

/// Builds every shape the choices ask for (one per distinct (mesh, kind,
/// settings); `welded[m]` is scene mesh `m` welded) and the top-level tree.
pub fn build_level(scene: &Scene, welded: &[WeldedMesh], choices: &[Choice]) -> BuiltLevel {
    // distinct (mesh, kind, settings) in first-use order
    let mut keys: Vec<(usize, ColliderKind, ShapeSettings)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    // the shape of each instance, and whether a primitive gave way to the
    // hull; objects without a collider get none
    let shape_of: Vec<Option<(usize, bool)>> = scene
        .instances
        .iter()
        .zip(choices)
        .map(|(inst, c)| {
            if c.kind == ColliderKind::None {
                return None;
            }
            // primitives are placed by similarities only: under any other
            // placement the mesh's hull stands in (a box's hull is exact)
            let hull_instead = c.kind.is_primitive() && !is_similarity(&inst.transform);
            let kind = if hull_instead {
                ColliderKind::Convex
            } else {
                c.kind
            };
            let key = (inst.mesh, kind, c.shape);
            let shape = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            });
            Some((shape, hull_instead))
        })
        .collect();
    // the largest world length of a mesh unit each shape is placed with
    let mut scale = vec![0.0f64; keys.len()];
    for (inst, s) in scene.instances.iter().zip(&shape_of) {
        if let Some((k, _)) = s {
            let m = inst.transform.matrix3;
            let longest = m
                .x_axis
                .length()
                .max(m.y_axis.length())
                .max(m.z_axis.length());
            scale[*k] = scale[*k].max(longest);
        }
    }
    let built: Vec<ShapeBuild> = keys
        .par_iter()
        .zip(&scale)
        .map(|(&(mesh, kind, shape), &s)| {
            let s = if s.is_finite() && s > 0.0 { s } else { 1.0 };
            build_shape(&welded[mesh], kind, shape, s)
        })
        .collect();
    let placed: Vec<Placed> = scene
        .instances
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| Some((i, inst, shape_of[i]?)))
        .filter(|&(_, _, (s, _))| !built[s].shape.is_empty())
        .map(|(i, inst, (shape, hull_instead))| {
            let ShapeBuild { frame, note, .. } = &built[shape];
            let mut rule = choices[i].rule.clone();
            if hull_instead {
                rule.push_str(
                    " (placed with non-uniform scale or shear: the mesh's convex hull instead)",
                );
            }
            if let Some(n) = note {
                rule.push_str(&format!(" ({n})"));
            }
            Placed {
                source: i,
                shape,
                transform: inst.transform * *frame,
                name: inst.name.clone(),
                rule,
            }
        })
        .collect();
    let colliders = built
        .iter()
        .enumerate()
        .filter_map(|(k, b)| {
            let f = b.fidelity.clone()?;
            let object = placed.iter().find(|p| p.shape == k)?.name.clone();
            Some(ColliderReport {
                object,
                mesh: welded[keys[k].0].name.clone(),
                tolerance: keys[k].2.tolerance,
                fidelity: f,
            })
        })
        .collect();
    let shapes: Vec<BuiltShape> = built.into_iter().map(|b| b.shape).collect();
    let (order, top) = top::build(&placed, &shapes);
    let placed = order.iter().map(|&i| placed[i].clone()).collect();
    BuiltLevel {
        shapes,
        placed,
        top,
        colliders,
    }
}

/// One built shape and what its builder tells the placements and the
/// report.
struct ShapeBuild {
    shape: BuiltShape,
    /// The shape's frame in mesh space (primitives are centred on their
    /// own origin).
    frame: DAffine3,
    /// A note for the rule (fit error, fallback, collider fidelity).
    note: Option<String>,
    /// A concave collider's measured fidelity.
    fidelity: Option<Fidelity>,
}

/// Builds one shape of `kind` from a scene mesh with an object's settings;
/// `scale` is the largest world length of a mesh unit over its placements.
fn build_shape(
    welded: &WeldedMesh,
    kind: ColliderKind,
    settings: ShapeSettings,
    scale: f64,
) -> ShapeBuild {
    let plain = |shape: BuiltShape, note: Option<String>| ShapeBuild {
        shape,
        frame: DAffine3::IDENTITY,
        note,
        fidelity: None,
    };
    let tri = |note: Option<String>| {
        plain(
            BuiltShape::TriMesh(tri_tree::build(welded, settings.tree)),
            note,
        )
    };
    match kind {
        ColliderKind::TriMesh | ColliderKind::None => tri(None),
        ColliderKind::Convex => match solid::polytope(&welded.vertices, settings.max_planes) {
            Ok((p, note)) => plain(BuiltShape::Polytope(p), note),
            Err(why) => tri(Some(format!("{why}; kept as a triangle mesh"))),
        },
        ColliderKind::Concave => match concave(welded, settings, scale) {
            Ok((shape, note, fidelity)) => ShapeBuild {
                fidelity: Some(fidelity),
                ..plain(shape, Some(note))
            },
            Err(why) => tri(Some(format!("{why}; kept as a triangle mesh"))),
        },
        ColliderKind::Box | ColliderKind::Sphere | ColliderKind::Capsule => {
            match solid::fit(&welded.vertices, kind) {
                Some((p, frame, error)) => ShapeBuild {
                    frame,
                    ..plain(
                        BuiltShape::Primitive(p),
                        Some(format!("fit error {error:.4} m")),
                    )
                },
                None => tri(Some("nothing to fit; kept as a triangle mesh".into())),
            }
        }
    }
}

/// The concave collider of a welded mesh ([`crate::prepare::collider`]:
/// watertight, simplified, measured) as a BSP tree — or as a polytope when
/// the collider had to be the convex hull — with a note for the rule and
/// the measured fidelity. `scale` is the largest world length of a mesh
/// unit over the placements: the tolerance is in world units, the mesh is
/// simplified in its own. A tree over the node cap is retried with the
/// tolerance doubled (up to 4 times), and says so.
fn concave(
    welded: &WeldedMesh,
    settings: ShapeSettings,
    scale: f64,
) -> Result<(BuiltShape, String, Fidelity), String> {
    let mut tolerance = settings.tolerance;
    let mut relaxed = None;
    for _ in 0..5 {
        let mut c = watertight(
            welded,
            ColliderSettings {
                tolerance: tolerance / scale,
                max_faces: settings.max_faces,
            },
        )?;
        let f = &mut c.fidelity;
        for d in [
            &mut f.render_to_collider,
            &mut f.collider_to_render,
            &mut f.mean,
        ] {
            *d *= scale;
        }
        if let Some(r) = &relaxed {
            f.steps
                .push(format!("{r}; tolerance relaxed to {tolerance}"));
        }
        // a collider this far off (a level shell remeshed as one blob, a
        // hull of a helmet) is worse than the triangles
        if f.hausdorff() > MAX_DEVIATION * settings.tolerance {
            return Err(format!(
                "the collider would deviate {:.4} m from the render mesh, over {MAX_DEVIATION}× the tolerance ({})",
                f.hausdorff(),
                f.steps.join(", ")
            ));
        }
        let shape = if c.convex {
            let (p, note) = solid::polytope(&c.vertices, settings.max_planes)?;
            if let Some(n) = note {
                f.steps.push(n);
            }
            BuiltShape::Polytope(p)
        } else {
            let built = bsp::build(
                &c.vertices,
                &c.triangles,
                bsp::BspOptions {
                    bevels: settings.bevels,
                    ..Default::default()
                },
            );
            match built {
                Ok(b) => BuiltShape::Bsp(b),
                Err(e @ bsp::BspError::TooLarge(_)) => {
                    relaxed = Some(format!("at tolerance {tolerance} {e}"));
                    tolerance *= 2.0;
                    continue;
                }
                Err(e) => return Err(format!("no BSP tree: {e}")),
            }
        };
        let f = &c.fidelity;
        let tree = match &shape {
            BuiltShape::Bsp(b) => format!(
                "bsp of {} nodes ({} bevel), depth {}",
                b.nodes.len(),
                b.bevel_nodes,
                b.depth
            ),
            _ => "the convex hull as a polytope".into(),
        };
        let note = format!(
            "collider {} → {} faces, Hausdorff {:.4} m (render → collider {:.4}, collider → render {:.4}), mean {:.4} m, volume {:.1}%; {tree}",
            f.faces_in,
            f.faces_out,
            f.hausdorff(),
            f.render_to_collider,
            f.collider_to_render,
            f.mean,
            f.volume_ratio * 100.0,
        );
        let note = if f.steps.is_empty() {
            note
        } else {
            format!("{note}; {}", f.steps.join(", "))
        };
        return Ok((shape, note, c.fidelity));
    }
    Err(format!("no BSP tree: {}", relaxed.unwrap_or_default()))
}

/// How many times the tolerance a concave collider may deviate before the
/// triangle mesh is kept instead (with the reason in the rule).
pub const MAX_DEVIATION: f64 = 10.0;

/// Whether a transform is a similarity, to 1e-6 (tighter than the 1e-4
/// verification accepts, so what the baker calls a similarity always opens).
pub fn is_similarity(t: &DAffine3) -> bool {
    let (x, y, z) = (t.matrix3.x_axis, t.matrix3.y_axis, t.matrix3.z_axis);
    let rows = [
        x.x, y.x, z.x, 0.0, //
        x.y, y.y, z.y, 0.0, //
        x.z, y.z, z.z, 0.0,
    ];
    kiln_formats::level::similarity_scale(&rows, 1e-6).is_some()
}
