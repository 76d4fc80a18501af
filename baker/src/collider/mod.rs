//! Build: prepared colliders become colliders in the builders' own types,
//! one module per family (`tri_mesh`, `polytope`, `bsp`; primitives come
//! fitted from `prepare`), and placed instances get a top-level tree
//! (`top`). `encode` flattens the result into the archive's types. The
//! runtime's `collider/` answers queries on the same families.
//!
//! Everything here is deterministic: colliders are built in parallel but
//! each depends only on its input, and they are collected in first-use
//! order.

pub mod bsp;
pub mod note;
pub mod pieces;
pub mod polytope;
pub mod seams;
pub mod top;
pub mod tri_mesh;

use crate::classify::Choice;
use crate::config::ColliderSettings;
use crate::geom::fit::Primitive;
use crate::geom::sah::BinNode;
use crate::geom::weld::WeldedMesh;
use crate::prepare::Prepared;
use crate::prepare::{ColliderInput, PreparedCollider};
use crate::scene::Scene;
use bsp::surface::Fidelity;
use glam::DAffine3;
use kiln_formats::placement::Similarity;
use note::{Note, rule_with};
use polytope::BuiltPolytope;
use rayon::prelude::*;
use std::borrow::Cow;
use tri_mesh::BuiltTriMesh;

/// A built collider, in the builder's own form.
#[derive(Clone, Debug, PartialEq)]
pub enum BuiltCollider {
    /// A triangle mesh and its binary tree.
    TriMesh(BuiltTriMesh),
    /// A convex polytope.
    Polytope(BuiltPolytope),
    /// A fitted primitive, centred on the origin of its own frame.
    Primitive(Primitive),
    /// A solid-leaf BSP tree of a closed mesh.
    Bsp(bsp::BuiltBsp),
}

impl BuiltCollider {
    /// The collider's points that bound it (every point of the collider lies in
    /// their convex hull), for world boxes.
    pub fn hull_points(&self) -> Cow<'_, [[f32; 3]]> {
        match self {
            BuiltCollider::TriMesh(t) => Cow::Borrowed(&t.vertices),
            BuiltCollider::Polytope(p) => Cow::Borrowed(&p.vertices),
            BuiltCollider::Primitive(p) => Cow::Owned(p.box_corners()),
            BuiltCollider::Bsp(b) => Cow::Borrowed(&b.surface.vertices),
        }
    }

    /// Whether the collider has nothing to collide with.
    pub fn is_empty(&self) -> bool {
        match self {
            BuiltCollider::TriMesh(t) => t.leaves.is_empty(),
            BuiltCollider::Polytope(_) | BuiltCollider::Primitive(_) | BuiltCollider::Bsp(_) => {
                false
            }
        }
    }
}

/// An instance of a built collider.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// Index of the instance in the scene.
    pub source: usize,
    /// Index into [`BuiltLevel::colliders`].
    pub collider: usize,
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
    /// The classification rule that chose the collider.
    pub rule: String,
    /// The archive's instance flags (`kiln_formats::level::Instance::flags`):
    /// 0 for a static object, else its motion and trigger bits.
    pub flags: u32,
}

/// Colliders, their placements in top-tree leaf order, and the top tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltLevel {
    /// Unique colliders.
    pub colliders: Vec<BuiltCollider>,
    /// Placements: the static ones in top-tree leaf order, then the
    /// movers and triggers in scene order (empty colliders left out).
    pub placed: Vec<Placed>,
    /// Binary tree over the static placements' world boxes.
    pub top: Vec<BinNode>,
    /// How many placements (the first) the top tree holds.
    pub in_top: usize,
    /// The concave solids' low-poly surfaces made, with their measured
    /// fidelity.
    pub surfaces: Vec<SurfaceReport>,
    /// Each collider's convex pieces, where it has them (by collider).
    pub pieces: Vec<Option<BuiltPieces>>,
}

/// A collider's convex pieces and the figures the archive keeps with
/// them, in the collider's local units.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltPieces {
    /// The pieces.
    pub decomposition: pieces::Decomposition,
    /// How far the pieces reach beyond the render mesh, at most: the
    /// sampled bulge of their merged hulls past it, or the bulge of the
    /// solid they were cut from (the collider, or a finer one), the larger.
    pub concavity: f64,
    /// How far the render mesh lies outside the pieces, at most, measured
    /// on it (the pieces hold the whole solid they were cut from).
    pub coverage: f64,
}

/// A concave solid's low-poly surface and its fidelity, for the bake
/// report.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SurfaceReport {
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

impl SurfaceReport {
    /// Whether the measured two-sided Hausdorff distance is within the
    /// tolerance.
    pub fn within_tolerance(&self) -> bool {
        self.fidelity.hausdorff() <= self.tolerance
    }
}

/// The note of a primitive placed where only its hull can stand.
const HULL_INSTEAD: Note = Note::HullInstead;

/// Builds every prepared collider (`welded[m]` is scene mesh `m` welded) and
/// the top-level tree over the placed ones.
pub fn build_level(
    scene: &Scene,
    welded: &[WeldedMesh],
    choices: &[Choice],
    prepared: Prepared,
    flags: &[u32],
) -> BuiltLevel {
    let Prepared {
        colliders,
        collider_of,
    } = prepared;
    // (mesh, deviation) of each collider, for the collider reports
    let meta: Vec<(usize, f64)> = colliders
        .iter()
        .map(|p| (p.mesh, p.settings.max_deviation.get()))
        .collect();
    let built: Vec<ColliderBuild> = colliders
        .into_par_iter()
        .map(|p| {
            let authored = scene.pieces.get(&p.mesh).map(Vec::as_slice);
            let edges = scene.edge_flags.get(&p.mesh).map(Vec::as_slice);
            build_collider(&welded[p.mesh], p, authored, edges)
        })
        .collect();
    let placed: Vec<Placed> = scene
        .instances
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| Some((i, inst, collider_of[i]?)))
        .filter(|&(_, _, (s, _))| !built[s].collider.is_empty())
        .map(|(i, inst, (collider, hull_instead))| {
            let ColliderBuild {
                frame,
                note,
                pieces,
                ..
            } = &built[collider];
            let hull = hull_instead.then_some(&HULL_INSTEAD);
            let mut rule = rule_with(&choices[i].rule, hull.into_iter().chain(note));
            match pieces {
                Some(Ok(b)) if b.decomposition.authored => rule.push_str(&format!(
                    "; {} convex pieces from the file, reaching {:.4} beyond the render mesh",
                    b.decomposition.pieces.len(),
                    b.concavity * inst_scale(inst),
                )),
                Some(Ok(b)) => rule.push_str(&format!(
                    "; {} convex pieces from {} cells, reaching {:.4} beyond the render mesh{}",
                    b.decomposition.pieces.len(),
                    b.decomposition.cells,
                    b.concavity * inst_scale(inst),
                    if b.decomposition.over_bound {
                        " (the piece cap passed the concavity bound)"
                    } else {
                        ""
                    }
                )),
                Some(Err(why)) => rule.push_str(&format!("; {why}")),
                None => {}
            }
            let (transform, similarity) = stored_placement(inst.transform * *frame);
            Placed {
                source: i,
                collider,
                transform,
                similarity,
                name: inst.name.clone(),
                rule,
                flags: flags[i],
            }
        })
        .collect();
    let surfaces = built
        .iter()
        .enumerate()
        .filter_map(|(k, b)| {
            let Some(Note::Surface { fidelity, .. }) = &b.note else {
                return None;
            };
            let f = fidelity.clone();
            let object = placed.iter().find(|p| p.collider == k)?.name.clone();
            let (mesh, tolerance) = meta[k];
            Some(SurfaceReport {
                object,
                mesh: welded[mesh].name.clone(),
                tolerance,
                fidelity: f,
            })
        })
        .collect();
    let (mut colliders, pieces): (Vec<BuiltCollider>, Vec<Option<BuiltPieces>>) = built
        .into_iter()
        .map(|b| (b.collider, b.pieces.and_then(Result::ok)))
        .unzip();
    seams::join(&mut colliders, &placed);
    // the static objects under the top tree, the others after them
    let (fixed, loose): (Vec<Placed>, Vec<Placed>) = placed
        .into_iter()
        .partition(|p| p.flags & kiln_formats::level::LOOSE == 0);
    let (order, top) = top::build(&fixed, &colliders);
    let in_top = fixed.len();
    let placed = order
        .iter()
        .map(|&i| fixed[i].clone())
        .chain(loose)
        .collect();
    BuiltLevel {
        colliders,
        placed,
        top,
        in_top,
        surfaces,
        pieces,
    }
}

/// The largest world length of a unit of `inst`'s mesh.
fn inst_scale(inst: &crate::scene::SceneInstance) -> f64 {
    let m = inst.transform.matrix3;
    m.x_axis
        .length()
        .max(m.y_axis.length())
        .max(m.z_axis.length())
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

/// One built collider and what its builder tells the placements and the
/// report.
struct ColliderBuild {
    collider: BuiltCollider,
    /// The collider's frame in mesh space (primitives are centred on their
    /// own origin).
    frame: DAffine3,
    /// A note for the rule (fit error, fallback, collider fidelity).
    note: Option<Note>,
    /// Convex pieces, when asked for: made, or why not (for the rule).
    pieces: Option<Result<BuiltPieces, String>>,
}

/// Builds one prepared collider; `authored`: the convex pieces the file
/// gives its mesh, if any; `edges`: the edge flags of the mesh it was cut
/// from, for a piece of one ([`Scene::edge_flags`](crate::scene::Scene)).
fn build_collider(
    welded: &WeldedMesh,
    p: PreparedCollider,
    authored: Option<&[crate::scene::AuthoredPiece]>,
    edges: Option<&[u8]>,
) -> ColliderBuild {
    let plain = |collider: BuiltCollider, note: Option<Note>| ColliderBuild {
        collider,
        frame: DAffine3::IDENTITY,
        note,
        pieces: None,
    };
    let tri = |note: Option<Note>| {
        plain(
            BuiltCollider::TriMesh(tri_mesh::build(welded, p.settings.mesh_tree, edges)),
            note,
        )
    };
    let kept = |why: String| tri(Some(Note::KeptAsTriangles(why)));
    // a triangle mesh bounds no solid: its pieces are cut from one made
    // for them; a solid that could not be made (kept as triangles) has
    // none, and says why
    let no_solid = |why: String| ColliderBuild {
        pieces: p
            .settings
            .decompose
            .then(|| Err(format!("no convex pieces: no solid ({why})"))),
        ..kept(why)
    };
    match p.input {
        ColliderInput::Triangles => ColliderBuild {
            pieces: p
                .settings
                .decompose
                .then(|| triangle_pieces(welded, p.settings, p.scale, authored)),
            ..tri(None)
        },
        ColliderInput::Fallback(why) => no_solid(why),
        ColliderInput::Polytope => {
            match polytope::polytope(&welded.vertices, p.settings.max_planes.get()) {
                Ok((poly, cap)) => plain(BuiltCollider::Polytope(poly), cap.map(Note::Capped)),
                Err(why) => kept(why),
            }
        }
        ColliderInput::Primitive {
            primitive,
            frame,
            error,
        } => ColliderBuild {
            frame,
            ..plain(
                BuiltCollider::Primitive(primitive),
                Some(Note::Fit { error }),
            )
        },
        ColliderInput::Bsp => match bsp::build(welded, p.settings, p.scale) {
            Ok((collider, note)) => {
                let pieces = p.settings.decompose.then(|| match authored {
                    Some(a) => authored_pieces(welded, &collider, a, p.settings),
                    None => built_pieces(welded, &collider, &note, p.settings, p.scale),
                });
                ColliderBuild {
                    pieces: pieces.flatten(),
                    ..plain(collider, Some(note))
                }
            }
            Err(why) => no_solid(why),
        },
    }
}

/// The convex pieces of a concave mesh as a bake makes them, with the
/// figures the archive keeps: its collider at `settings` (mesh units; the
/// bake places it at scale 1), then the pieces. For benches and tests that
/// hold the bake's pieces to other tools'.
pub fn concave_pieces(
    welded: &WeldedMesh,
    settings: ColliderSettings,
) -> Result<BuiltPieces, String> {
    let settings = ColliderSettings {
        decompose: true,
        ..settings
    };
    let (collider, note) = bsp::build(welded, settings, 1.0)?;
    built_pieces(welded, &collider, &note, settings, 1.0)
        .unwrap_or_else(|| Err("no convex pieces: the collider is convex".into()))
}

/// The convex pieces a file authors for a concave object (a compound
/// `baker export` wrote), each the hull of its points (capped at the
/// object's plane cap), with the archive's figures measured as for made
/// ones: how far they bulge past the render mesh, how much of it they
/// miss. `None` for a collider that is not a solid.
fn authored_pieces(
    welded: &WeldedMesh,
    collider: &BuiltCollider,
    authored: &[crate::scene::AuthoredPiece],
    settings: ColliderSettings,
) -> Option<Result<BuiltPieces, String>> {
    let BuiltCollider::Bsp(bsp) = collider else {
        return None;
    };
    let made = pieces::authored(bsp, authored, settings.max_planes.get(), welded);
    Some(
        made.map(|d| figured(welded, d, 0.0))
            .map_err(|e| format!("no convex pieces: {e}")),
    )
}

/// Pieces with the archive's figures: their concavity, or `out` (how far
/// the solid they were cut from stands outside the render mesh) where
/// that is more, and what they miss of the render mesh, measured on it
/// (every vertex and as many samples as the collider's fidelity takes).
fn figured(welded: &WeldedMesh, d: pieces::Decomposition, out: f64) -> BuiltPieces {
    let samples = bsp::surface::fidelity::samples(
        &welded.vertices,
        &welded.triangles,
        bsp::surface::fidelity::SAMPLES,
        0x91ece,
    );
    BuiltPieces {
        concavity: d.concavity.max(out),
        coverage: pieces::coverage(&d.pieces, &samples),
        decomposition: d,
    }
}

/// The convex pieces of a concave object's collider, with the archive's
/// figures; `None` for a collider that is already convex (a polytope:
/// physics engines take it as it is).
fn built_pieces(
    welded: &WeldedMesh,
    collider: &BuiltCollider,
    note: &Note,
    settings: ColliderSettings,
    scale: f64,
) -> Option<Result<BuiltPieces, String>> {
    let BuiltCollider::Bsp(_) = collider else {
        return None;
    };
    let scale = scale.max(f64::MIN_POSITIVE);
    let bound = concavity_bound(welded, settings, scale);
    // how far the collider stands outside the render mesh (mesh units)
    let out = match note {
        Note::Surface { fidelity, .. } => fidelity.collider_to_render / scale,
        _ => 0.0,
    };
    // the pieces hold the whole solid they are cut from, so they reach as
    // far out as it does: a collider standing off by more than the bound
    // gets the pieces a surface of their own, asked to stay within 0.9 of
    // the bound (the simplifier's error is an estimate; what counts is
    // the measured one, and the surface is kept only when it is nearer)
    let finer = (out > bound)
        .then(|| bsp::solid_for_pieces(welded, 0.9 * bound).ok())
        .flatten()
        .filter(|(_, o)| *o < out);
    let (solid, out) = match &finer {
        Some((s, o)) => (s, *o),
        None => (collider, out),
    };
    Some(merged_pieces(welded, solid, out, bound, settings))
}

/// The concavity bound of a mesh's pieces in its own units, for a mesh
/// placed at most `scale` times its size.
fn concavity_bound(welded: &WeldedMesh, settings: ColliderSettings, scale: f64) -> f64 {
    let (lo, hi) = crate::geom::topology::bounds(&welded.vertices);
    settings
        .decompose_concavity
        .local((hi - lo).length(), scale.max(f64::MIN_POSITIVE))
}

/// The convex pieces of an object whose collider is a triangle mesh (an
/// open or broken mesh): the pieces are cut from a watertight solid made
/// for them (its holes filled where each is a simple loop, else remeshed;
/// within 0.9 of the bound), or taken from the file's compound; `Err` says
/// why there are none (a floor-like sheet has no solid).
fn triangle_pieces(
    welded: &WeldedMesh,
    settings: ColliderSettings,
    scale: f64,
    authored: Option<&[crate::scene::AuthoredPiece]>,
) -> Result<BuiltPieces, String> {
    let bound = concavity_bound(welded, settings, scale);
    // an open prop (a crate without its bottom) closed by filling its
    // holes keeps its corners, where the voxel remesher would round them
    // (not for a solid's finer surface: there a capped opening, such as a
    // hose's end, would count as the object)
    let filled = bsp::fill_holes(welded);
    let (solid, out) = bsp::solid_for_pieces(filled.as_ref().unwrap_or(welded), 0.9 * bound)
        .map_err(|e| format!("no convex pieces: no solid ({e})"))?;
    match authored {
        Some(a) => authored_pieces(welded, &solid, a, settings),
        None => Some(merged_pieces(welded, &solid, out, bound, settings)),
    }
    .unwrap_or_else(|| Err("no convex pieces: no solid".into()))
}

/// The merged cells of `solid` (standing `out` outside the render mesh at
/// most) within `bound` of the render mesh, with the archive's figures.
fn merged_pieces(
    welded: &WeldedMesh,
    solid: &BuiltCollider,
    out: f64,
    bound: f64,
    settings: ColliderSettings,
) -> Result<BuiltPieces, String> {
    // merged hulls are judged against the render mesh itself
    let Some(made) = pieces::of_collider(
        solid,
        &pieces::PieceSettings {
            concavity: bound,
            max_pieces: settings.max_pieces.get(),
            max_planes: settings.max_planes.get(),
        },
        Some(welded),
    ) else {
        return Err("no convex pieces: no solid".into());
    };
    // the pieces' bulge past the render mesh where they merged cells, or
    // the solid's where a piece is its own
    made.map(|d| figured(welded, d, out))
        .map_err(|e| format!("no convex pieces: {e}"))
}
