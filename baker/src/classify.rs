//! Classify: which kind of collider each placed object gets, and the rule
//! that decided it (reported by `inspect`, so an artist can see why).
//!
//! Decided per instance (a (mesh, node) pair): two nodes that share a mesh
//! may classify differently, and then bake two shapes.

use crate::config::{BakeSettings, ColliderName, ShapeSettings};
use crate::geom::weld::WeldedMesh;
use crate::kind::ColliderKind;
use crate::scene::Scene;
use rayon::prelude::*;

/// The collider chosen for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What to build.
    pub kind: ColliderKind,
    /// Which rule chose it, in words (e.g. `default: triangle mesh`).
    pub rule: String,
    /// The settings its shape is built with (the bake's, or a project
    /// rule's for this object).
    pub shape: ShapeSettings,
}

/// One choice per scene instance, in scene order. The first rule that
/// speaks decides:
/// 1. glTF physics (`OMI_physics_body`/`OMI_physics_shape`,
///    `KHR_physics_rigid_bodies`/`KHR_implicit_shapes`): the instance is an
///    authored collider (ingest made it);
/// 2. project rules (`kiln.toml` `[[rules]]`, glob on the object's or its
///    mesh's name; the first match is the object's rule: its settings
///    apply to the object whatever decides the kind, and its `collider`,
///    if it gives one, decides here), then node extras
///    `{"collider": "convex" | "concave" | "mesh" | "terrain" |
///    "box" | "sphere" | "capsule" | "none"}`;
/// 3. naming conventions: Unreal prefixes `UCX_` (convex), `UBX_` (box),
///    `USP_` (sphere), `UCP_` (capsule) — the object named by the rest
///    (with or without a trailing `_NN`) is their render mesh and gets no
///    collider of its own; Godot suffixes `-col`, `-colonly` (concave),
///    `-convcol`, `-convcolonly` (convex), case-insensitive, after
///    `-`, `_` or `$`, trailing digits ignored;
/// 4. in a file that authors physics, everything else is a render mesh and
///    gets no collider (unless `settings.render_meshes`);
/// 5. automatic: a closed mesh whose volume is within
///    `settings.convex_tolerance` of its hull's becomes a polytope (or
///    the primitive it fills as closely); another closed mesh of at most
///    `settings.concave_max_triangles` triangles a concave solid (BSP);
///    everything else (open, or larger: terrain, level shells) a triangle
///    mesh.
///
/// Returns the choices and warnings (e.g. an unknown extras value).
pub fn classify(
    scene: &Scene,
    welded: &[WeldedMesh],
    settings: &BakeSettings,
) -> (Vec<Choice>, Vec<String>) {
    let base = settings.shape_settings();
    if !settings.classify {
        let all = scene.instances.iter().map(|i| match i.physics {
            None => Choice {
                kind: ColliderKind::TriMesh,
                rule: "classification off: triangle mesh".into(),
                shape: base,
            },
            Some(_) => Choice {
                kind: ColliderKind::None,
                rule: "classification off: authored colliders are not baked".into(),
                shape: base,
            },
        });
        return (all.collect(), Vec::new());
    }
    // each instance's project rule (the first that matches), if any
    let rule_of: Vec<Option<(usize, &crate::config::Rule)>> = scene
        .instances
        .iter()
        .map(|inst| {
            let mesh_name = scene.meshes[inst.mesh].name.as_str();
            settings
                .rules
                .iter()
                .enumerate()
                .find(|(_, r)| r.matches(&inst.name) || r.matches(mesh_name))
        })
        .collect();
    // render meshes that an Unreal-prefixed collider names
    let mut linked: std::collections::HashMap<&str, &str> = Default::default();
    for inst in &scene.instances {
        if inst.physics.is_none()
            && inst.extras_collider.is_none()
            && let Some((_, _, rest)) = unreal_prefix(&inst.name)
        {
            linked.entry(rest).or_insert(&inst.name);
            linked.entry(strip_number(rest)).or_insert(&inst.name);
        }
    }
    let mut warnings = Vec::new();
    // a kind and the rule that chose it, before any project rule's settings
    let explicit: Vec<Option<(ColliderKind, String)>> = scene
        .instances
        .iter()
        .zip(&rule_of)
        .map(|(inst, project_rule)| {
            if let Some(a) = &inst.physics {
                return Some((a.kind, format!("glTF physics: {}", a.rule)));
            }
            if let Some((k, rule)) = project_rule
                && let Some(c) = rule.collider
            {
                return Some((
                    c.into(),
                    format!("project rule {} (match = {:?}): {}", k + 1, rule.pattern, rule.describe()),
                ));
            }
            if let Some(v) = inst.extras_collider.as_deref() {
                match ColliderName::parse(v).map(ColliderKind::from) {
                    Some(kind) => {
                        return Some((kind, format!("node extras: collider = {v}")));
                    }
                    None => warnings.push(format!(
                        "{}: unknown extras collider {v:?} (expected convex, concave, mesh, terrain, box, sphere, capsule or none); classified by the other rules",
                        inst.name
                    )),
                }
            }
            if let Some((kind, prefix, rest)) = unreal_prefix(&inst.name) {
                return Some((
                    kind,
                    format!(
                        "name prefix {prefix} (Unreal): {} collider of {}",
                        kind.name(),
                        strip_number(rest)
                    ),
                ));
            }
            if let Some(&collider) = linked.get(inst.name.as_str()) {
                return Some((
                    ColliderKind::None,
                    format!("render mesh of {collider} (Unreal naming): no collider of its own"),
                ));
            }
            if let Some((kind, suffix)) = godot_suffix(&inst.name) {
                return Some((kind, format!("name suffix {suffix} (Godot): {}", kind.name())));
            }
            if let Some(ext) = &scene.authored_physics
                && !settings.render_meshes {
                    return Some((
                        ColliderKind::None,
                        format!("render mesh: the file authors its colliders with {ext}"),
                    ));
                }
            None
        })
        .collect();
    // the automatic rules' facts, for the meshes that reach them, in parallel
    let mut needed = vec![false; scene.meshes.len()];
    for (inst, c) in scene.instances.iter().zip(&explicit) {
        needed[inst.mesh] |= c.is_none();
    }
    let facts: Vec<Option<MeshFacts>> = welded
        .par_iter()
        .zip(&needed)
        .map(|(w, &n)| n.then(|| analyse(w)))
        .collect();
    let out = scene
        .instances
        .iter()
        .zip(explicit)
        .zip(&rule_of)
        .map(|((inst, c), project_rule)| {
            let tolerance = project_rule
                .and_then(|(_, r)| r.settings.convex_tolerance)
                .unwrap_or(settings.convex_tolerance)
                .get();
            let concave_max = project_rule
                .and_then(|(_, r)| r.settings.concave_max_triangles)
                .unwrap_or(settings.concave_max_triangles);
            let (kind, mut rule) = c.unwrap_or_else(|| {
                let f = facts[inst.mesh].expect("analysed");
                auto(&f, tolerance, concave_max)
            });
            let shape = match project_rule {
                Some((k, r)) => {
                    if r.collider.is_none() || inst.physics.is_some() {
                        rule.push_str(&format!(
                            "; project rule {} (match = {:?}): {}",
                            k + 1,
                            r.pattern,
                            r.describe()
                        ));
                    }
                    r.settings.shape_settings(base)
                }
                None => base,
            };
            Choice { kind, rule, shape }
        })
        .collect();
    (out, warnings)
}

/// The automatic rule: a closed mesh within `tolerance` of its hull's
/// volume is convex (a primitive if it fills a fitted one as well), other
/// closed meshes of at most `concave_max` triangles concave, everything
/// else a triangle mesh.
fn auto(f: &MeshFacts, tolerance: f64, concave_max: usize) -> (ColliderKind, String) {
    let ratio = f.volume / f.hull_volume;
    let convex = f.closed && f.hull_volume > 0.0 && ratio >= 1.0 - tolerance;
    match f.primitive {
        Some((kind, fill)) if convex && fill >= 1.0 - tolerance => (
            kind,
            format!(
                "auto: closed and convex, fills {:.1}% of a fitted {}",
                fill * 100.0,
                kind.name()
            ),
        ),
        _ if convex => (
            ColliderKind::Convex,
            format!("auto: closed, {:.1}% of its hull's volume", ratio * 100.0),
        ),
        _ if f.closed && f.volume > 0.0 && f.triangles <= concave_max => (
            ColliderKind::Concave,
            if f.hull_volume > 0.0 {
                format!(
                    "auto: closed, concave ({:.1}% of its hull's volume)",
                    ratio * 100.0
                )
            } else {
                "auto: closed, concave".to_string()
            },
        ),
        _ => {
            let why = if !f.closed {
                "not closed".to_string()
            } else if f.volume > 0.0 && f.triangles > concave_max {
                format!(
                    "{} triangles, more than concave_max_triangles = {concave_max}",
                    f.triangles
                )
            } else if f.hull_volume > 0.0 {
                format!("{:.1}% of its hull's volume", ratio * 100.0)
            } else {
                "no convex hull: flat, or the hull failed".to_string()
            };
            (
                ColliderKind::TriMesh,
                format!("auto: triangle mesh ({why})"),
            )
        }
    }
}

/// An Unreal collision prefix (case-insensitive): the kind, the prefix as
/// written, and the rest of the name.
pub fn unreal_prefix(name: &str) -> Option<(ColliderKind, &str, &str)> {
    const PREFIXES: [(&str, ColliderKind); 4] = [
        ("UCX_", ColliderKind::Convex),
        ("UBX_", ColliderKind::Box),
        ("USP_", ColliderKind::Sphere),
        ("UCP_", ColliderKind::Capsule),
    ];
    let head = name.get(..4)?;
    let &(_, kind) = PREFIXES
        .iter()
        .find(|(p, _)| p.eq_ignore_ascii_case(head))?;
    let rest = &name[4..];
    (!rest.is_empty()).then_some((kind, head, rest))
}

/// `Rock_01` → `Rock`: a trailing `_` and digits removed, if any.
fn strip_number(s: &str) -> &str {
    let t = s.trim_end_matches(|c: char| c.is_ascii_digit());
    match t.strip_suffix('_') {
        Some(base) if t.len() < s.len() && !base.is_empty() => base,
        _ => s,
    }
}

/// A Godot import suffix (case-insensitive, after `-`, `_` or `$`,
/// trailing digits and a `.`/`_` before them ignored): the kind and the
/// suffix as written.
pub fn godot_suffix(name: &str) -> Option<(ColliderKind, &str)> {
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let stem = if digits.len() < name.len() {
        digits
            .strip_suffix(['.', '_'])
            .filter(|s| !s.is_empty())
            .unwrap_or(digits)
    } else {
        name
    };
    const SUFFIXES: [(&str, ColliderKind); 4] = [
        ("convcolonly", ColliderKind::Convex),
        ("colonly", ColliderKind::Concave),
        ("convcol", ColliderKind::Convex),
        ("col", ColliderKind::Concave),
    ];
    SUFFIXES.iter().find_map(|&(suffix, kind)| {
        let at = stem.len().checked_sub(suffix.len() + 1)?;
        let tail = stem.get(at..)?;
        let (sep, word) = tail.split_at(1);
        (matches!(sep, "-" | "_" | "$") && word.eq_ignore_ascii_case(suffix) && at > 0)
            .then_some((kind, tail))
    })
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
    /// Triangles (welded, degenerate ones included).
    pub triangles: usize,
    /// The fitted primitive the hull fills best, and the fraction of the
    /// primitive's volume it fills (the fit encloses every vertex, so the
    /// rest is space the primitive adds).
    pub primitive: Option<(ColliderKind, f64)>,
}

/// Most welded vertices automatic classification computes a hull for
/// (larger meshes stay triangle meshes).
pub const AUTO_HULL_VERTICES: usize = 4096;

/// Closedness and volumes of a welded mesh.
pub fn analyse(w: &WeldedMesh) -> MeshFacts {
    let (closed, volume) = crate::geom::topology::closed_and_volume(&w.vertices, &w.triangles);
    let p = |i: u32| glam::DVec3::from(w.vertices[i as usize].map(f64::from));
    let hull_volume = if closed && w.vertices.len() <= AUTO_HULL_VERTICES {
        let pts: Vec<_> = (0..w.vertices.len() as u32).map(p).collect();
        crate::geom::hull::hull(&pts).map_or(0.0, |h| h.volume())
    } else {
        0.0
    };
    let primitive = if hull_volume > 0.0 {
        let fills: Vec<(ColliderKind, f64)> = [
            ColliderKind::Box,
            ColliderKind::Sphere,
            ColliderKind::Capsule,
        ]
        .into_iter()
        .filter_map(|kind| {
            let (p, _, _) = crate::geom::fit::fit(&w.vertices, kind)?;
            Some((kind, hull_volume / p.volume()))
        })
        .collect();
        // the simplest primitive within half a percent of the best fill (a
        // sphere is a capsule with no segment)
        let best = fills.iter().map(|f| f.1).fold(0.0, f64::max);
        fills.into_iter().find(|f| f.1 >= best - 0.005)
    } else {
        None
    };
    MeshFacts {
        closed,
        volume,
        hull_volume,
        triangles: w.triangles.len(),
        primitive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreal_prefixes_and_their_render_meshes() {
        assert_eq!(
            unreal_prefix("UCX_Rock_01"),
            Some((ColliderKind::Convex, "UCX_", "Rock_01"))
        );
        assert_eq!(
            unreal_prefix("ubx_Crate"),
            Some((ColliderKind::Box, "ubx_", "Crate"))
        );
        assert_eq!(unreal_prefix("UCX_"), None);
        assert_eq!(unreal_prefix("UCXRock"), None);
        assert_eq!(unreal_prefix("Ü"), None);
        assert_eq!(strip_number("Rock_01"), "Rock");
        assert_eq!(strip_number("Rock01"), "Rock01");
        assert_eq!(strip_number("Rock"), "Rock");
        assert_eq!(strip_number("_01"), "_01");
    }

    #[test]
    fn godot_suffixes() {
        let k = |n: &str| godot_suffix(n).map(|(k, _)| k);
        assert_eq!(k("Wall-col"), Some(ColliderKind::Concave));
        assert_eq!(k("wall_COLONLY"), Some(ColliderKind::Concave));
        assert_eq!(k("Crate$convcol"), Some(ColliderKind::Convex));
        assert_eq!(k("Crate-convcolonly2"), Some(ColliderKind::Convex));
        assert_eq!(k("Crate-col.001"), Some(ColliderKind::Concave));
        assert_eq!(k("Protocol"), None);
        assert_eq!(k("Wallcol"), None);
        assert_eq!(k("-col"), None);
        assert_eq!(k("Wall-colx"), None);
        assert_eq!(godot_suffix("Crate-convcol").unwrap().1, "-convcol");
    }
}
