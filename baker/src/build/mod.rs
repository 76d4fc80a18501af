//! Build: prepared shapes become shapes in the builders' own types, placed
//! instances get a top-level tree. `encode` flattens the result into the
//! archive's types.
//!
//! Everything here is deterministic: shapes are built in parallel but each
//! depends only on its input, and they are collected in first-use order.

pub mod bsp;
pub mod collider;
pub mod concave;
pub mod note;
pub mod seams;
pub mod solid;
pub mod top;
pub mod tri_tree;

use crate::classify::Choice;
use crate::geom::fit::Primitive;
use crate::geom::sah::BinNode;
use crate::geom::weld::WeldedMesh;
use crate::prepare::Prepared;
use crate::prepare::{PreparedShape, ShapeInput};
use crate::scene::Scene;
use collider::Fidelity;
use glam::DAffine3;
use kiln_formats::placement::Similarity;
use note::{Note, rule_with};
use rayon::prelude::*;
use solid::BuiltPolytope;
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
            BuiltShape::Bsp(b) => Cow::Borrowed(&b.surface.vertices),
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
    /// Local-to-world transform: for a similarity, exactly the one its
    /// stored form (`similarity`) gives, so the top-level tree's boxes
    /// and the seams see what the runtime will.
    pub transform: DAffine3,
    /// The stored form of a similarity placement (quaternion of squared
    /// length the scale, translation; see `kiln_formats::placement`), or
    /// `None` for one kept whole in the archive's affine table.
    pub similarity: Option<Similarity>,
    /// Object name.
    pub name: String,
    /// The classification rule that chose the shape.
    pub rule: String,
    /// The archive's instance flags (`kiln_formats::level::Instance::flags`):
    /// 0 for a static object, else its motion and trigger bits.
    pub flags: u32,
}

/// Shapes, their placements in top-tree leaf order, and the top tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltLevel {
    /// Unique shapes.
    pub shapes: Vec<BuiltShape>,
    /// Placements: the static ones in top-tree leaf order, then the
    /// movers and triggers in scene order (empty shapes left out).
    pub placed: Vec<Placed>,
    /// Binary tree over the static placements' world boxes.
    pub top: Vec<BinNode>,
    /// How many placements (the first) the top tree holds.
    pub in_top: usize,
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

/// The note of a primitive placed where only its hull can stand.
const HULL_INSTEAD: Note = Note::HullInstead;

/// Builds every prepared shape (`welded[m]` is scene mesh `m` welded) and
/// the top-level tree over the placed ones.
pub fn build_level(
    scene: &Scene,
    welded: &[WeldedMesh],
    choices: &[Choice],
    prepared: Prepared,
    flags: &[u32],
) -> BuiltLevel {
    let Prepared { shapes, shape_of } = prepared;
    // (mesh, deviation) of each shape, for the collider reports
    let meta: Vec<(usize, f64)> = shapes
        .iter()
        .map(|p| (p.mesh, p.settings.max_deviation.get()))
        .collect();
    let built: Vec<ShapeBuild> = shapes
        .into_par_iter()
        .map(|p| build_shape(&welded[p.mesh], p))
        .collect();
    let placed: Vec<Placed> = scene
        .instances
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| Some((i, inst, shape_of[i]?)))
        .filter(|&(_, _, (s, _))| !built[s].shape.is_empty())
        .map(|(i, inst, (shape, hull_instead))| {
            let ShapeBuild { frame, note, .. } = &built[shape];
            let hull = hull_instead.then_some(&HULL_INSTEAD);
            let rule = rule_with(&choices[i].rule, hull.into_iter().chain(note));
            let (transform, similarity) = stored_placement(inst.transform * *frame);
            Placed {
                source: i,
                shape,
                transform,
                similarity,
                name: inst.name.clone(),
                rule,
                flags: flags[i],
            }
        })
        .collect();
    let colliders = built
        .iter()
        .enumerate()
        .filter_map(|(k, b)| {
            let Some(Note::Collider { fidelity, .. }) = &b.note else {
                return None;
            };
            let f = fidelity.clone();
            let object = placed.iter().find(|p| p.shape == k)?.name.clone();
            let (mesh, tolerance) = meta[k];
            Some(ColliderReport {
                object,
                mesh: welded[mesh].name.clone(),
                tolerance,
                fidelity: f,
            })
        })
        .collect();
    let mut shapes: Vec<BuiltShape> = built.into_iter().map(|b| b.shape).collect();
    seams::join(&mut shapes, &placed);
    // the static objects under the top tree, the others after them
    let (fixed, loose): (Vec<Placed>, Vec<Placed>) = placed.into_iter().partition(|p| p.flags == 0);
    let (order, top) = top::build(&fixed, &shapes);
    let in_top = fixed.len();
    let placed = order
        .iter()
        .map(|&i| fixed[i].clone())
        .chain(loose)
        .collect();
    BuiltLevel {
        shapes,
        placed,
        top,
        in_top,
        colliders,
    }
}

/// A transform as the archive will store it: a similarity whose compact
/// form reproduces it (within `kiln_formats::placement::SIMILARITY_TOLERANCE`)
/// becomes exactly that form; anything else stays as it is.
fn stored_placement(t: DAffine3) -> (DAffine3, Option<Similarity>) {
    use crate::geom::{from_rows64, to_rows64};
    use kiln_formats::placement::{similarity_from_rows, similarity_world64};
    match similarity_from_rows(&to_rows64(&t)) {
        Some((q, tr)) => (from_rows64(&similarity_world64(q, tr)), Some((q, tr))),
        None => (t, None),
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
    note: Option<Note>,
}

/// Builds one prepared shape.
fn build_shape(welded: &WeldedMesh, p: PreparedShape) -> ShapeBuild {
    let plain = |shape: BuiltShape, note: Option<Note>| ShapeBuild {
        shape,
        frame: DAffine3::IDENTITY,
        note,
    };
    let tri = |note: Option<Note>| {
        plain(
            BuiltShape::TriMesh(tri_tree::build(welded, p.settings.mesh_tree)),
            note,
        )
    };
    let kept = |why: String| tri(Some(Note::KeptAsTriangles(why)));
    match p.input {
        ShapeInput::Triangles => tri(None),
        ShapeInput::Fallback(why) => kept(why),
        ShapeInput::Hull => match solid::polytope(&welded.vertices, p.settings.max_planes.get()) {
            Ok((poly, cap)) => plain(BuiltShape::Polytope(poly), cap.map(Note::Capped)),
            Err(why) => kept(why),
        },
        ShapeInput::Primitive {
            primitive,
            frame,
            error,
        } => ShapeBuild {
            frame,
            ..plain(BuiltShape::Primitive(primitive), Some(Note::Fit { error }))
        },
        ShapeInput::Concave => match concave::build(welded, p.settings, p.scale) {
            Ok((shape, note)) => plain(shape, Some(note)),
            Err(why) => kept(why),
        },
    }
}
