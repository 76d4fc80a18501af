//! Classify: which kind of collider each placed object gets, and the rule
//! that decided it (reported by `inspect`, so an artist can see why).
//!
//! Decided per instance (a (mesh, node) pair): two nodes that share a mesh
//! may classify differently, and then bake two shapes.

use crate::config::{BakeSettings, ColliderName, ColliderSettings};
use crate::geom::weld::WeldedMesh;
use crate::kind::ColliderKind;
use crate::scene::Scene;
use glam::{DAffine3, DVec3};
use rayon::prelude::*;

/// The collider chosen for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What to build.
    pub kind: ColliderKind,
    /// Which rule chose it, in words (e.g. `default: triangle mesh`).
    pub rule: String,
    /// The settings its collider is built with (the bake's, or a project
    /// rule's for this object).
    pub settings: ColliderSettings,
    /// The instance is only the drawn half of an object whose collider
    /// the file gives apart (a glTF physics collider on its node, an
    /// Unreal `UCX_` mesh naming it, a file that authors every collider):
    /// not an object of its own in counts and reports.
    pub render_only: bool,
}

/// One choice per scene instance, in scene order. The first rule that
/// speaks decides:
/// 1. glTF physics (`OMI_physics_body`/`OMI_physics_shape`,
///    `KHR_physics_rigid_bodies`/`KHR_implicit_shapes`): the instance is an
///    authored collider (ingest made it); the same node's render mesh gets
///    none;
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
/// 5. automatic: level geometry stays a triangle mesh — a
///    shell that encloses another object (a world box, a sky dome, a room
///    around its props, whichever way its faces point), a closed mesh
///    whose faces point inwards, an open surface that faces one way
///    (terrain, floors, walls), an open mesh too large to close within
///    its deviation (see [`crate::limits::level_extent`]), an open mesh with no more
///    triangles than the face budget. Every other mesh is a prop: a
///    closed one within `settings.convex_tolerance` of its hull's volume
///    becomes a polytope (or the primitive it fills as closely), any
///    other prop a concave solid (open ones remeshed watertight), unless
///    it has more triangles than `settings.concave_max_triangles`.
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
                settings: base,
                render_only: false,
            },
            Some(_) => Choice {
                kind: ColliderKind::None,
                rule: "classification off: authored colliders are not baked".into(),
                settings: base,
                render_only: false,
            },
        });
        return (all.collect(), Vec::new());
    }
    // each instance's project rule (the first that matches), if any
    let rule_of: Vec<Option<(usize, &crate::config::Rule)>> =
        scene
            .instances
            .iter()
            .map(|inst| {
                let mesh_name = scene.meshes[inst.mesh].name.as_str();
                settings.rules.iter().enumerate().find(|(_, r)| {
                    r.classifies() && (r.matches(&inst.name) || r.matches(mesh_name))
                })
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
    let explicit: Vec<Option<(ColliderKind, String, bool, bool)>> = scene
        .instances
        .iter()
        .zip(&rule_of)
        .enumerate()
        .map(|(i, (inst, project_rule))| {
            if let Some(whole) = scene.cut_from.get(&i) {
                return Some((
                    ColliderKind::TriMesh,
                    format!("{whole}; cut at tile borders"),
                    false,
                    false,
                ));
            }
            if let Some(a) = &inst.physics {
                return Some((a.kind, format!("glTF physics: {}", a.rule), false, false));
            }
            if inst.beside_collider {
                return Some((
                    ColliderKind::None,
                    "render mesh of a node whose glTF physics collider is its own object".into(),
                    true,
                    false,
                ));
            }
            if let Some((k, rule)) = project_rule
                && let Some(c) = rule.collider
            {
                return Some((
                    c.into(),
                    format!("project rule {} (match = {:?}): {}", k + 1, rule.pattern, rule.describe()),
                    false,
                    c == ColliderName::Decompose,
                ));
            }
            if let Some(v) = inst.extras_collider.as_deref() {
                match ColliderName::parse(v) {
                    Some(name) => {
                        return Some((
                            name.into(),
                            format!("node extras: collider = {v}"),
                            false,
                            name == ColliderName::Decompose,
                        ));
                    }
                    None => warnings.push(format!(
                        "{}: unknown extras collider {v:?} (expected {}); classified by the other rules",
                        inst.name,
                        ColliderName::list()
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
                    false,
                    false,
                ));
            }
            if let Some(&collider) = linked.get(inst.name.as_str()) {
                return Some((
                    ColliderKind::None,
                    format!("render mesh of {collider} (Unreal naming): no collider of its own"),
                    true,
                    false,
                ));
            }
            if let Some((kind, suffix)) = godot_suffix(&inst.name) {
                return Some((
                    kind,
                    format!("name suffix {suffix} (Godot): {}", kind.name()),
                    false,
                    false,
                ));
            }
            if let Some(ext) = &scene.authored_physics
                && !settings.render_meshes {
                    return Some((
                        ColliderKind::None,
                        format!("render mesh: the file authors its colliders with {ext}"),
                        true,
                        false,
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
    // every instance's world box: its size for the automatic rule, and
    // what may enclose what for the shell test
    let boxes: Vec<Option<(DVec3, DVec3)>> = scene
        .instances
        .iter()
        .map(|i| world_box(&welded[i.mesh], &i.transform))
        .collect();
    // the kind each instance gets before the shell test
    // (automatic, kind, rule, settings, render only, pieces asked for by name)
    type First = (bool, ColliderKind, String, ColliderSettings, bool, bool);
    let first: Vec<First> = scene
        .instances
        .iter()
        .zip(explicit)
        .zip(&rule_of)
        .zip(&boxes)
        .map(|(((inst, c), project_rule), world)| {
            let tolerance = project_rule
                .and_then(|(_, r)| r.settings.convex_tolerance)
                .unwrap_or(settings.convex_tolerance)
                .get();
            let concave_max = project_rule
                .and_then(|(_, r)| r.settings.concave_max_triangles)
                .or(settings.concave_max_triangles);
            let shape = match project_rule {
                Some((_, r)) => r.settings.shape_settings(base),
                None => base,
            };
            // closed automatic solids are tested for enclosing others
            let automatic = c.is_none() && facts[inst.mesh].is_some_and(|f| f.closed);
            let (kind, rule, render_only, asked) = c.unwrap_or_else(|| {
                let f = facts[inst.mesh].expect("analysed");
                let extent = world.map_or(0.0, |(lo, hi)| (hi - lo).max_element());
                let (kind, rule) = auto(&f, tolerance, concave_max, extent, &shape);
                (kind, rule, false, false)
            });
            (automatic, kind, rule, shape, render_only, asked)
        })
        .collect();
    // shells: a closed automatic solid that encloses another object is a
    // surface (a convex one only when it holds half the level's objects or
    // more: a world box or sky sphere, not a box around a box)
    let objects = (0..scene.instances.len())
        .filter(|&o| is_object(scene, o))
        .count();
    let enclosed: Vec<Option<usize>> = first
        .par_iter()
        .enumerate()
        .map(|(ii, (automatic, kind, _, _, _, _))| {
            let solid = *automatic && !matches!(kind, ColliderKind::TriMesh | ColliderKind::None);
            if !solid {
                return None;
            }
            let convex = kind.is_primitive() || *kind == ColliderKind::Polytope;
            let need = if convex {
                objects.saturating_sub(1).div_ceil(2).max(1)
            } else {
                1
            };
            encloses(scene, welded, &boxes, ii, need)
        })
        .collect();
    let out = first
        .into_iter()
        .zip(enclosed)
        .zip(scene.instances.iter().zip(&rule_of))
        .map(|(((_, mut kind, mut rule, mut shape, render_only, asked), enclosed), (inst, project_rule))| {
            if let Some(o) = enclosed {
                kind = ColliderKind::TriMesh;
                rule = format!(
                    "auto: triangle mesh (a level shell: it encloses {}, so it is a surface, not a solid)",
                    scene.instances[o].name
                );
            }
            // convex pieces (the kind final, shells found): asked for by
            // name, authored (a compound), or a dynamic body's whose collider
            // is not convex (a physics engine simulates a moving body only
            // as convex shapes); a triangle mesh bounds no solid, so its
            // pieces are cut from one made for them, which a dynamic body
            // needs and a static mesh (a level's floors, walls and shells,
            // on `--decompose`) does not
            let dynamic = motion_of(scene, settings, inst) == crate::scene::Motion::Dynamic;
            let authored = scene.pieces.contains_key(&inst.mesh);
            shape.decompose = match kind {
                ColliderKind::Bsp => shape.decompose || asked || authored || dynamic,
                ColliderKind::TriMesh => dynamic || authored,
                // convex already: nothing to decompose (and no second
                // collider for a flag that changes nothing)
                _ => false,
            };
            if let Some((k, r)) = project_rule
                && (r.collider.is_none() || inst.physics.is_some())
            {
                rule.push_str(&format!(
                    "; project rule {} (match = {:?}): {}",
                    k + 1,
                    r.pattern,
                    r.describe()
                ));
            }
            Choice {
                kind,
                rule,
                settings: shape,
                render_only,
            }
        })
        .collect();
    (out, warnings)
}

/// The automatic rule for one instance of a mesh with facts `f`, placed
/// `extent` world units across, with the per-object settings `shape`:
/// level geometry (inward-facing closed meshes, open sheets, open meshes
/// too large to close, open meshes already within the face budget) stays a
/// triangle mesh; a closed
/// mesh within `tolerance` of its hull's volume is convex (a primitive if
/// it fills a fitted one as well); every other prop is concave, unless it
/// has more than `concave_max` triangles. (Shells that enclose other
/// objects are found afterwards, over the whole scene.)
fn auto(
    f: &MeshFacts,
    tolerance: f64,
    concave_max: Option<usize>,
    extent: f64,
    shape: &ColliderSettings,
) -> (ColliderKind, String) {
    let mesh = |why: String| {
        (
            ColliderKind::TriMesh,
            format!("auto: triangle mesh ({why})"),
        )
    };
    let ratio = f.volume / f.hull_volume;
    if f.closed && f.volume < 0.0 {
        return mesh("closed with its faces pointing inwards, a room: its surface".into());
    }
    let convex = f.closed && f.hull_volume > 0.0 && ratio >= 1.0 - tolerance;
    match f.primitive {
        Some((kind, fill)) if convex && fill >= 1.0 - tolerance => {
            return (
                kind,
                format!(
                    "auto: closed and convex, fills {:.1}% of a fitted {}",
                    fill * 100.0,
                    kind.name()
                ),
            );
        }
        _ if convex => {
            return (
                ColliderKind::Polytope,
                format!("auto: closed, {:.1}% of its hull's volume", ratio * 100.0),
            );
        }
        _ => {}
    }
    if !f.closed {
        if f.one_way >= SHEET {
            return mesh(format!(
                "open, {:.0}% of its area facing one way: terrain, a floor or a wall",
                f.one_way * 100.0
            ));
        }
        let max_deviation = shape.max_deviation.get();
        let limit = crate::limits::level_extent(max_deviation);
        if extent > limit {
            return mesh(format!(
                "open and {extent:.1} m across: level geometry (a closed collider within {max_deviation} m needs it under {limit:.1} m)"
            ));
        }
        // a closed collider is made with up to max_faces faces: a mesh
        // with no more is as low-poly already, and closing a few big
        // scattered faces (a level's wall pieces grouped by material)
        // makes a worse collider, not a simpler one
        let budget = shape.max_faces.get();
        if f.triangles <= budget {
            return mesh(format!(
                "open, {} triangles: already within the face budget max_faces = {budget}",
                f.triangles
            ));
        }
    } else if f.volume == 0.0 {
        return mesh("closed but encloses no volume".into());
    }
    if let Some(cap) = concave_max
        && f.triangles > cap
    {
        return mesh(format!(
            "{} triangles, more than concave_max_triangles = {cap}",
            f.triangles
        ));
    }
    let rule = if !f.closed {
        "auto: open, concave (remeshed watertight)".to_string()
    } else if f.hull_volume > 0.0 {
        format!(
            "auto: closed, concave ({:.1}% of its hull's volume)",
            ratio * 100.0
        )
    } else {
        "auto: closed, concave".to_string()
    };
    (ColliderKind::Bsp, rule)
}

/// An open surface with at least this share of its area facing one way
/// (|Σ area vectors| / Σ areas: 1 for a plane, about 0.9 for rolling
/// terrain, 0.5 for a hemisphere, near 0 for a prop with a hole) is
/// terrain, a floor or a wall: level geometry.
pub const SHEET: f64 = 0.6;

/// The world box of an instance of `w` under `t` (every vertex
/// transformed), `None` for an empty mesh.
fn world_box(w: &WeldedMesh, t: &DAffine3) -> Option<(DVec3, DVec3)> {
    let mut it = w
        .vertices
        .iter()
        .map(|v| t.transform_point3(DVec3::from(v.map(f64::from))));
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p))))
}

/// Whether instance `o` is an object a shell can enclose: drawn, not an
/// authored collider or the proxy of an implicit shape.
fn is_object(scene: &Scene, o: usize) -> bool {
    let i = &scene.instances[o];
    i.physics.is_none() && !scene.meshes[i.mesh].proxy
}

/// An object instance `ii` encloses, if it encloses at least `need`: an
/// object whose world box lies strictly inside `ii`'s, and from whose box
/// centre (in `ii`'s mesh space) rays along all six axes meet `ii`'s
/// surface, and meet it first beyond the object's own box — it is inside a
/// world box, a dome, a room or a hollow shell, whichever way the shell's
/// faces point, and not merely overlapping it or sharing a face with it.
/// Authored colliders and proxy meshes do not count as objects.
fn encloses(
    scene: &Scene,
    welded: &[WeldedMesh],
    boxes: &[Option<(DVec3, DVec3)>],
    ii: usize,
    need: usize,
) -> Option<usize> {
    let inst = &scene.instances[ii];
    let (lo, hi) = boxes[ii]?;
    // objects whose world box lies strictly inside this one's
    let inside: Vec<(usize, DVec3, DVec3)> = (0..scene.instances.len())
        .filter(|&o| o != ii && is_object(scene, o))
        .filter_map(|o| {
            let (olo, ohi) = boxes[o]?;
            (olo.cmpgt(lo).all() && ohi.cmplt(hi).all()).then_some((o, olo, ohi))
        })
        .collect();
    if inside.len() < need {
        return None;
    }
    let w = &welded[inst.mesh];
    let to_local = inst.transform.inverse();
    let p = |i: u32| DVec3::from(w.vertices[i as usize].map(f64::from));
    let tris: Vec<[DVec3; 3]> = w.triangles.iter().map(|t| t.map(p)).collect();
    let mut found = inside.into_iter().filter_map(|(o, olo, ohi)| {
        // the object's box in the shell's mesh space
        let (mut llo, mut lhi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for k in 0..8 {
            let corner = DVec3::select(
                glam::BVec3::new(k & 1 == 1, k & 2 == 2, k & 4 == 4),
                ohi,
                olo,
            );
            let q = to_local.transform_point3(corner);
            (llo, lhi) = (llo.min(q), lhi.max(q));
        }
        let (c, half) = ((llo + lhi) * 0.5, (lhi - llo) * 0.5);
        crate::geom::SIGNED_AXES
            .iter()
            .all(|&d| {
                let first = tris
                    .iter()
                    .filter_map(|t| ray_hit(c, d, t))
                    .fold(f64::INFINITY, f64::min);
                first.is_finite() && first > half.dot(d.abs())
            })
            .then_some(o)
    });
    let first = found.next()?;
    (found.take(need - 1).count() + 1 >= need).then_some(first)
}

/// Where the ray `o + t·d`, t > 0, meets the triangle, if it does (edges
/// and vertices included; Möller and Trumbore, "Fast, minimum storage
/// ray/triangle intersection", 1997, in f64).
fn ray_hit(o: DVec3, d: DVec3, t: &[DVec3; 3]) -> Option<f64> {
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - t[0];
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t > 0.0).then_some(t)
}

/// An Unreal collision prefix (case-insensitive): the kind, the prefix as
/// written, and the rest of the name.
pub fn unreal_prefix(name: &str) -> Option<(ColliderKind, &str, &str)> {
    const PREFIXES: [(&str, ColliderKind); 4] = [
        ("UCX_", ColliderKind::Polytope),
        ("UBX_", ColliderKind::Cuboid),
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
        ("convcolonly", ColliderKind::Polytope),
        ("colonly", ColliderKind::Bsp),
        ("convcol", ColliderKind::Polytope),
        ("col", ColliderKind::Bsp),
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
    /// The share of the area facing one way: |Σ area vectors| / Σ areas
    /// (0 for a closed surface, 1 for a plane).
    pub one_way: f64,
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
    let hull = if closed && w.vertices.len() <= AUTO_HULL_VERTICES {
        let pts: Vec<_> = (0..w.vertices.len() as u32).map(p).collect();
        kiln_geometry::hull::hull(&pts)
    } else {
        None
    };
    let hull_volume = hull.as_ref().map_or(0.0, |h| h.volume());
    let fitting = (hull_volume > 0.0)
        .then(|| crate::geom::fit::Fitting::new(&w.vertices, hull))
        .flatten();
    let primitive = fitting.and_then(|fitting| fitting.best_fill(hull_volume));
    let (mut sum, mut area) = (glam::DVec3::ZERO, 0.0);
    for t in &w.triangles {
        let n = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0]));
        sum += n;
        area += n.length();
    }
    MeshFacts {
        closed,
        volume,
        hull_volume,
        triangles: w.triangles.len(),
        one_way: if area > 0.0 { sum.length() / area } else { 0.0 },
        primitive,
    }
}

/// How an instance moves: as the first project rule that matches it (or
/// its mesh) and says so decides, else as the file says.
fn motion_of(
    scene: &Scene,
    settings: &BakeSettings,
    inst: &crate::scene::SceneInstance,
) -> crate::scene::Motion {
    let mesh_name = scene.meshes[inst.mesh].name.as_str();
    settings
        .rules
        .iter()
        .filter(|r| r.matches(&inst.name) || r.matches(mesh_name))
        .find_map(|r| r.motion)
        .unwrap_or(inst.motion)
}

/// Every scene instance's archive flags (`kiln_formats::level::Instance::
/// flags`): its motion and whether it is a trigger (each as the first
/// project rule that matches the object, or its mesh, and says so
/// decides, else as the file says), and whether it is a piece cut at tile
/// borders ([`Scene::cut_from`]).
pub fn roles(scene: &Scene, settings: &BakeSettings) -> Vec<u32> {
    use kiln_formats::level::{PIECE, TRIGGER};
    scene
        .instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let mesh_name = scene.meshes[inst.mesh].name.as_str();
            let matching = || {
                settings
                    .rules
                    .iter()
                    .filter(|r| r.matches(&inst.name) || r.matches(mesh_name))
            };
            let motion = motion_of(scene, settings, inst);
            let trigger = matching().find_map(|r| r.trigger).unwrap_or(inst.trigger);
            let piece = if scene.cut_from.contains_key(&i) {
                PIECE
            } else {
                0
            };
            motion.bits() | if trigger { TRIGGER } else { 0 } | piece
        })
        .collect()
}

/// The collision layers of every scene instance: the layer names (the
/// default layer first, then the others as first met) and each
/// instance's mask over them. The first project rule that matches the
/// object (or its mesh) and names a layer decides; else the file's
/// (a glTF physics collision filter's systems, else node extras); else
/// the default layer. Names past [`kiln_formats::level::MAX_LAYERS`] are
/// dropped with a warning (their objects stay in their other layers, or
/// the default one).
pub fn layers(scene: &Scene, settings: &BakeSettings) -> (Vec<String>, Vec<u32>, Vec<String>) {
    use kiln_formats::level::{DEFAULT_LAYER, MAX_LAYERS};
    let mut names = vec![DEFAULT_LAYER.to_string()];
    let mut warnings = Vec::new();
    let mut dropped = std::collections::BTreeSet::new();
    let masks = scene
        .instances
        .iter()
        .map(|inst| {
            let mesh_name = scene.meshes[inst.mesh].name.as_str();
            let ruled = settings.rules.iter().find_map(|r| {
                r.layer
                    .as_ref()
                    .filter(|_| r.matches(&inst.name) || r.matches(mesh_name))
            });
            let wanted: Vec<&str> = match ruled {
                Some(l) => vec![l.as_str()],
                None => inst.layers.iter().map(String::as_str).collect(),
            };
            let mut mask = 0u32;
            for w in wanted {
                let k = match names.iter().position(|n| n == w) {
                    Some(k) => k,
                    None if names.len() < MAX_LAYERS => {
                        names.push(w.to_string());
                        names.len() - 1
                    }
                    None => {
                        dropped.insert(w.to_string());
                        continue;
                    }
                };
                mask |= 1 << k;
            }
            if mask == 0 { 1 } else { mask }
        })
        .collect();
    if !dropped.is_empty() {
        warnings.push(format!(
            "more than {MAX_LAYERS} collision layers (the default one included): {} left out, their objects kept in their other layers or the default one",
            dropped.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    (names, masks, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreal_prefixes_and_their_render_meshes() {
        assert_eq!(
            unreal_prefix("UCX_Rock_01"),
            Some((ColliderKind::Polytope, "UCX_", "Rock_01"))
        );
        assert_eq!(
            unreal_prefix("ubx_Crate"),
            Some((ColliderKind::Cuboid, "ubx_", "Crate"))
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
        assert_eq!(k("Wall-col"), Some(ColliderKind::Bsp));
        assert_eq!(k("wall_COLONLY"), Some(ColliderKind::Bsp));
        assert_eq!(k("Crate$convcol"), Some(ColliderKind::Polytope));
        assert_eq!(k("Crate-convcolonly2"), Some(ColliderKind::Polytope));
        assert_eq!(k("Crate-col.001"), Some(ColliderKind::Bsp));
        assert_eq!(k("Protocol"), None);
        assert_eq!(k("Wallcol"), None);
        assert_eq!(k("-col"), None);
        assert_eq!(k("Wall-colx"), None);
        assert_eq!(godot_suffix("Crate-convcol").unwrap().1, "-convcol");
    }
}
