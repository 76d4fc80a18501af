//! Config: the settings a bake runs with, resolved from the command line
//! and a project file (`kiln.toml`, [`ProjectConfig`]). The library never
//! sees clap types.

pub mod values;

use crate::kind::ColliderKind;
use kiln_formats::tri_mesh::TreeKind;
use values::tree_kind;
pub use values::{Concavity, FaceBudget, MaxPieces, MaxPlanes, Metres, VolumeFraction, parse_tree};

/// Settings that change the baked bytes. Hashed into the header's content
/// hash, so a change of settings makes an archive out of date.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BakeSettings {
    /// Bounding volumes of every triangle mesh's tree (terrain, level
    /// geometry, anything baked as triangles).
    pub mesh_tree: TreeKind,
    /// Automatic classification: a closed mesh whose volume is within this
    /// fraction of its hull's becomes a polytope (default 0.02).
    pub convex_tolerance: VolumeFraction,
    /// Most planes a polytope may have (default 64); a larger hull is
    /// capped.
    pub max_planes: MaxPlanes,
    /// Automatic classification: the most render triangles a non-convex
    /// prop may have to become a concave solid (BSP); larger ones stay
    /// triangle meshes. Default none: every prop gets a low-poly collider
    /// whatever its render triangle count.
    pub concave_max_triangles: Option<usize>,
    /// Concave colliders: largest deviation from the render mesh, in world
    /// units (metres) at the largest scale the mesh is placed with
    /// (default 0.05). The face budget binds small objects, the deviation
    /// large ones.
    pub max_deviation: Metres,
    /// Concave colliders: face budget (default 128).
    pub max_faces: FaceBudget,
    /// Concave colliders: bevel planes below solid leaves (default false:
    /// they served plane-shifted sphere queries, which concave solids no
    /// longer use; on only to measure what they cost).
    pub bevels: bool,
    /// Give every concave solid its convex pieces (default false: only the
    /// objects that ask, and dynamic bodies, get them).
    pub decompose: bool,
    /// How far convex pieces may bulge beyond their object (default 2% of
    /// its diagonal).
    pub decompose_concavity: Concavity,
    /// Most convex pieces per object (default 64).
    pub max_pieces: MaxPieces,
    /// Classify at all: when false every drawn object is a triangle mesh
    /// and authored physics colliders are not baked (what triangle-level
    /// oracles and the peer benchmark compare against).
    pub classify: bool,
    /// In a file that authors its colliders with a glTF physics
    /// extension, also bake the render meshes (classified automatically).
    /// Default false: such files bake exactly their authored colliders, as
    /// engines import them.
    pub render_meshes: bool,
    /// Project rules: the first whose glob matches an object's name
    /// chooses its collider (after glTF physics, before node extras).
    pub rules: Vec<Rule>,
}

/// The settings that may differ per object (a project rule sets them for
/// the objects it matches): what a shape's builder reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColliderSettings {
    /// Bounding volumes of a triangle-mesh tree.
    pub mesh_tree: TreeKind,
    /// Most planes a polytope may have.
    pub max_planes: MaxPlanes,
    /// Concave colliders: largest deviation from the render mesh, in world
    /// units (metres).
    pub max_deviation: Metres,
    /// Concave colliders: face budget.
    pub max_faces: FaceBudget,
    /// Concave colliders: bevel planes below solid leaves.
    pub bevels: bool,
    /// Give the collider convex pieces, if it is a concave solid.
    pub decompose: bool,
    /// How far the pieces may bulge beyond the object.
    pub decompose_concavity: Concavity,
    /// Most pieces.
    pub max_pieces: MaxPieces,
}

// settings are keys of the shape table: floats compared by their bits
impl Eq for ColliderSettings {}

impl std::hash::Hash for ColliderSettings {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (
            self.mesh_tree,
            self.max_planes,
            self.max_deviation.get().to_bits(),
            self.max_faces,
            self.bevels,
            self.decompose,
            self.decompose_concavity.key(),
            self.max_pieces,
        )
            .hash(h);
    }
}

/// The settings a project file's `[settings]`, a `[[rules]]` entry or
/// the command line may give; each one absent leaves the value beneath
/// (the defaults, then the project file, then the flags; per object, the
/// bake's settings, then the object's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Tree of every triangle mesh.
    pub mesh_tree: Option<TreeKind>,
    /// Automatic classification's convexity tolerance.
    pub convex_tolerance: Option<VolumeFraction>,
    /// Plane cap of polytopes.
    pub max_planes: Option<MaxPlanes>,
    /// Automatic classification's size cap for concave solids.
    pub concave_max_triangles: Option<usize>,
    /// Concave colliders: largest deviation from the render mesh.
    pub max_deviation: Option<Metres>,
    /// Concave colliders: face budget.
    pub max_faces: Option<FaceBudget>,
    /// Convex pieces for concave solids.
    pub decompose: Option<bool>,
    /// How far convex pieces may bulge.
    pub decompose_concavity: Option<Concavity>,
    /// Most convex pieces.
    pub max_pieces: Option<MaxPieces>,
}

impl Overrides {
    /// `settings` with every given value set.
    pub fn apply(&self, settings: &mut BakeSettings) {
        let s = settings;
        s.mesh_tree = self.mesh_tree.unwrap_or(s.mesh_tree);
        s.convex_tolerance = self.convex_tolerance.unwrap_or(s.convex_tolerance);
        s.max_planes = self.max_planes.unwrap_or(s.max_planes);
        s.concave_max_triangles = self.concave_max_triangles.or(s.concave_max_triangles);
        s.max_deviation = self.max_deviation.unwrap_or(s.max_deviation);
        s.max_faces = self.max_faces.unwrap_or(s.max_faces);
        s.decompose = self.decompose.unwrap_or(s.decompose);
        s.decompose_concavity = self.decompose_concavity.unwrap_or(s.decompose_concavity);
        s.max_pieces = self.max_pieces.unwrap_or(s.max_pieces);
    }

    /// `base` with the given per-object values set (the classification
    /// settings, `convex_tolerance` and `concave_max_triangles`, are read
    /// by classification itself).
    pub fn shape_settings(&self, base: ColliderSettings) -> ColliderSettings {
        ColliderSettings {
            mesh_tree: self.mesh_tree.unwrap_or(base.mesh_tree),
            max_planes: self.max_planes.unwrap_or(base.max_planes),
            max_deviation: self.max_deviation.unwrap_or(base.max_deviation),
            max_faces: self.max_faces.unwrap_or(base.max_faces),
            bevels: base.bevels,
            decompose: self.decompose.unwrap_or(base.decompose),
            decompose_concavity: self.decompose_concavity.unwrap_or(base.decompose_concavity),
            max_pieces: self.max_pieces.unwrap_or(base.max_pieces),
        }
    }

    /// Whether nothing is given.
    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }

    /// The given values in the project file's words, e.g.
    /// `max_planes = 32`, in a fixed order.
    fn describe(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(t) = self.mesh_tree {
            parts.push(format!("mesh_tree = {}", t.name()));
        }
        if let Some(m) = self.max_planes {
            parts.push(format!("max_planes = {m}"));
        }
        if let Some(t) = self.convex_tolerance {
            parts.push(format!("convex_tolerance = {t}"));
        }
        if let Some(m) = self.concave_max_triangles {
            parts.push(format!("concave_max_triangles = {m}"));
        }
        if let Some(t) = self.max_deviation {
            parts.push(format!("max_deviation = {t}"));
        }
        if let Some(m) = self.max_faces {
            parts.push(format!("max_faces = {m}"));
        }
        if let Some(d) = self.decompose {
            parts.push(format!("decompose = {d}"));
        }
        if let Some(c) = self.decompose_concavity {
            parts.push(format!("decompose_concavity = {c}"));
        }
        if let Some(m) = self.max_pieces {
            parts.push(format!("max_pieces = {m}"));
        }
        parts
    }
}

/// One `[[rules]]` entry of a project file: a glob, and the collider kind
/// and settings it gives the objects it matches (at least one of them).
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Glob on the object's (node's) or its mesh's name: `*` any run of
    /// characters, `?` one character, matched case-sensitively.
    pub pattern: String,
    /// The collider kind, as node extras name it. Absent: the other
    /// classification rules choose.
    pub collider: Option<ColliderName>,
    /// The collision layer the matched objects go in (instead of any the
    /// file gives them).
    pub layer: Option<String>,
    /// How the matched objects move (instead of what the file says).
    pub motion: Option<crate::scene::Motion>,
    /// Whether the matched objects are trigger volumes (instead of what
    /// the file says).
    pub trigger: Option<bool>,
    /// The object's settings.
    pub settings: Overrides,
}

/// The collider kinds a rule may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
#[allow(missing_docs)]
pub enum ColliderName {
    Convex,
    Concave,
    Mesh,
    Terrain,
    Box,
    Sphere,
    Capsule,
    None,
    /// A concave solid with its convex pieces.
    Decompose,
}

impl ColliderName {
    /// Every name, in the order error messages list them.
    pub const ALL: [ColliderName; 9] = [
        ColliderName::Convex,
        ColliderName::Concave,
        ColliderName::Mesh,
        ColliderName::Terrain,
        ColliderName::Box,
        ColliderName::Sphere,
        ColliderName::Capsule,
        ColliderName::Decompose,
        ColliderName::None,
    ];

    /// The name as written in files (node extras, project rules).
    pub fn as_str(self) -> &'static str {
        match self {
            ColliderName::Convex => "convex",
            ColliderName::Concave => "concave",
            ColliderName::Mesh => "mesh",
            ColliderName::Terrain => "terrain",
            ColliderName::Box => "box",
            ColliderName::Sphere => "sphere",
            ColliderName::Capsule => "capsule",
            ColliderName::None => "none",
            ColliderName::Decompose => "decompose",
        }
    }

    /// Every name, for messages: "convex, concave, …, capsule or none".
    pub fn list() -> String {
        let names: Vec<&str> = ColliderName::ALL.iter().map(|n| n.as_str()).collect();
        let (last, rest) = names.split_last().expect("names");
        format!("{} or {last}", rest.join(", "))
    }

    /// The name `v` stands for, if any: a file name, or the name `inspect`
    /// gives the collider it becomes (`polytope`, `bsp`, `trimesh`,
    /// `cuboid`); `decompose` also as `decomposed`, `decomposition`,
    /// `convex_decomposition` (or with `-` or a space), `compound` and
    /// `pieces`.
    pub fn parse(v: &str) -> Option<ColliderName> {
        match v {
            "decomposed"
            | "decomposition"
            | "convex_decomposition"
            | "convex-decomposition"
            | "convex decomposition"
            | "compound"
            | "pieces" => Some(ColliderName::Decompose),
            "polytope" => Some(ColliderName::Convex),
            "cuboid" => Some(ColliderName::Box),
            "bsp" => Some(ColliderName::Concave),
            "trimesh" => Some(ColliderName::Mesh),
            _ => ColliderName::ALL.into_iter().find(|n| n.as_str() == v),
        }
    }
}

/// `kiln.toml` reads collider names through [`ColliderName::parse`], as
/// node extras do: one list of names and aliases.
impl TryFrom<String> for ColliderName {
    type Error = String;
    fn try_from(v: String) -> Result<ColliderName, String> {
        ColliderName::parse(&v)
            .ok_or_else(|| format!("unknown collider {v:?}: expected {}", ColliderName::list()))
    }
}

impl From<ColliderName> for ColliderKind {
    fn from(n: ColliderName) -> ColliderKind {
        match n {
            ColliderName::Convex => ColliderKind::Polytope,
            ColliderName::Concave => ColliderKind::Bsp,
            ColliderName::Mesh | ColliderName::Terrain => ColliderKind::TriMesh,
            ColliderName::Box => ColliderKind::Cuboid,
            ColliderName::Sphere => ColliderKind::Sphere,
            ColliderName::Capsule => ColliderKind::Capsule,
            ColliderName::None => ColliderKind::None,
            ColliderName::Decompose => ColliderKind::Bsp,
        }
    }
}

impl Rule {
    /// Whether the glob matches `name`.
    pub fn matches(&self, name: &str) -> bool {
        glob(self.pattern.as_bytes(), name.as_bytes())
    }

    /// A rule choosing `collider` for the objects `pattern` matches.
    pub fn collider(pattern: &str, collider: ColliderName) -> Rule {
        Rule {
            pattern: pattern.into(),
            collider: Some(collider),
            layer: None,
            motion: None,
            trigger: None,
            settings: Overrides::default(),
        }
    }

    /// Whether the rule says anything about classification (a collider
    /// kind or settings), not only a layer.
    pub fn classifies(&self) -> bool {
        self.collider.is_some() || !self.settings.is_empty()
    }

    /// The rule in the project file's words, e.g.
    /// `collider = convex, max_planes = 32` (for reports and the hash).
    pub fn describe(&self) -> String {
        let kind = self.collider.map(|c| format!("collider = {}", c.as_str()));
        let layer = self.layer.as_ref().map(|l| format!("layer = {l:?}"));
        let motion = self.motion.map(|m| format!("motion = {:?}", m.name()));
        let trigger = self.trigger.map(|t| format!("trigger = {t}"));
        kind.into_iter()
            .chain(layer)
            .chain(motion)
            .chain(trigger)
            .chain(self.settings.describe())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `*` and `?` glob matching (iterative, with one backtrack point: linear
/// in practice, never exponential).
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A project file, `kiln.toml`:
///
/// ```toml
/// [settings]                 # every key optional; defaults as the CLI's
/// convex_tolerance = 0.02
/// max_planes = 64           # 6 to 256
/// concave_max_triangles = 20000 # optional: larger props stay triangle meshes (default: no cap)
/// max_deviation = 0.05       # concave colliders: metres
/// max_faces = 128            # concave colliders: face budget, 4 to 65536
/// decompose = false          # convex pieces for every concave solid (dynamic
///                            # bodies and objects that ask get them anyway)
/// decompose_concavity = "2%" # how far pieces may bulge: metres or "N%" of the diagonal
/// max_pieces = 64            # most pieces per object, 1 to 1024
/// mesh_tree = "aabb"         # or "sphere", for every triangle mesh
/// render_meshes = false
///
/// [[rules]]                  # the first rule that matches an object is its rule
/// match = "Rock*"
/// collider = "convex"        # optional: absent, the other rules choose
/// motion = "kinematic"       # optional: static, kinematic or dynamic (a mover)
/// trigger = true             # optional: a trigger volume
/// max_planes = 32            # optional per-object settings: any [settings]
///                            # key but render_meshes
///
/// [watch]
/// include = ["*.glb", "*.gltf"]
/// exclude = ["*_wip.*"]
///
/// [tiles]
/// size = 256                 # `baker bake --out-dir` cuts each input on this grid
/// [tiles.origins]            # tiles authored apart (`baker bake --world NAME`):
/// "harbour.gltf" = [2048.0, 0.0, -1024.0] # each file's origin in the world, f64 m
/// ```
///
/// Unknown keys and bad values are errors naming the key, the file and the
/// line; a key renamed since Kiln 0.1 (`terrain_tree`, `tolerance`) is an
/// error that names its new spelling.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectConfig {
    /// `[settings]`, but `render_meshes`.
    pub settings: Overrides,
    /// `[settings]` `render_meshes`.
    pub render_meshes: Option<bool>,
    /// Collider rules, in order.
    pub rules: Vec<Rule>,
    /// File globs for `baker watch`.
    pub watch: WatchTable,
    /// `[tiles]`: the grid inputs are cut on, and where tiles authored
    /// apart sit.
    pub tiles: TilesTable,
}

/// Keys renamed since Kiln 0.1: (old spelling, new spelling). The old
/// ones are unknown keys now, and the error says what to write instead;
/// the command line refuses the same names as flags (`--terrain-tree`).
pub const RENAMED: [(&str, &str); 2] = [
    ("terrain_tree", "mesh_tree"),
    ("tolerance", "max_deviation"),
];

/// A project file as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    #[serde(default)]
    settings: Option<toml::Spanned<Keys>>,
    #[serde(default)]
    rules: Vec<toml::Spanned<Keys>>,
    #[serde(default)]
    watch: WatchTable,
    #[serde(default)]
    tiles: TilesTable,
}

/// The keys of a `[settings]` or `[[rules]]` table as written (one list,
/// so both tables read every setting the same way; which keys a table
/// may not have is checked after).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[serde(rename = "match", default)]
    pattern: Option<String>,
    #[serde(default)]
    collider: Option<ColliderName>,
    #[serde(default)]
    layer: Option<String>,
    #[serde(default)]
    motion: Option<String>,
    #[serde(default)]
    trigger: Option<bool>,
    #[serde(default)]
    render_meshes: Option<bool>,
    #[serde(default, deserialize_with = "tree_kind")]
    mesh_tree: Option<TreeKind>,
    #[serde(default)]
    max_planes: Option<MaxPlanes>,
    #[serde(default)]
    convex_tolerance: Option<VolumeFraction>,
    #[serde(default)]
    concave_max_triangles: Option<usize>,
    #[serde(default)]
    max_deviation: Option<Metres>,
    #[serde(default)]
    max_faces: Option<FaceBudget>,
    #[serde(default)]
    decompose: Option<bool>,
    #[serde(default)]
    decompose_concavity: Option<Concavity>,
    #[serde(default)]
    max_pieces: Option<MaxPieces>,
}

impl Keys {
    /// The settings the table gives.
    fn overrides(&self) -> Overrides {
        Overrides {
            mesh_tree: self.mesh_tree,
            convex_tolerance: self.convex_tolerance,
            max_planes: self.max_planes,
            concave_max_triangles: self.concave_max_triangles,
            max_deviation: self.max_deviation,
            max_faces: self.max_faces,
            decompose: self.decompose,
            decompose_concavity: self.decompose_concavity,
            max_pieces: self.max_pieces,
        }
    }
}

/// `[watch]` of a project file: which file names (globs on the name)
/// `baker watch` bakes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchTable {
    /// Names to bake (default: every `.gltf`/`.glb`).
    #[serde(default)]
    pub include: Vec<String>,
    /// Names to skip.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// `[tiles]` of a project file: the grid size a `baker bake --out-dir`
/// cuts inputs on (what `--tile-size` says), and the origins of tiles
/// authored apart (`baker bake --world`), by file name.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TilesTable {
    /// The grid's cell size (m), if the project cuts its inputs.
    #[serde(default)]
    pub size: Option<f64>,
    /// A tile's origin in the world (f64 m), by its input's file name.
    #[serde(default)]
    pub origins: std::collections::BTreeMap<String, [f64; 3]>,
}

impl WatchTable {
    /// Whether `baker watch` bakes a file called `name`.
    pub fn wants(&self, name: &str) -> bool {
        let g = |p: &String| glob(p.as_bytes(), name.as_bytes());
        (self.include.is_empty() || self.include.iter().any(g)) && !self.exclude.iter().any(g)
    }
}

/// A project file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ConfigError {
    /// The file.
    pub path: std::path::PathBuf,
    /// What is wrong, with the line and the key.
    pub message: String,
}

impl ProjectConfig {
    /// Reads and checks a project file.
    pub fn load(path: &std::path::Path) -> Result<ProjectConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            message: format!("cannot read: {e}"),
        })?;
        ProjectConfig::parse(&text, path)
    }

    /// Parses and checks the text of a project file read from `path`
    /// (named in errors, with the line).
    pub fn parse(text: &str, path: &std::path::Path) -> Result<ProjectConfig, ConfigError> {
        let err = |message: String| ConfigError {
            path: path.to_path_buf(),
            message,
        };
        let file: ProjectFile = toml::from_str(text).map_err(|e| {
            let message = e.to_string().trim().to_string();
            match RENAMED
                .iter()
                .find(|(old, _)| message.contains(&format!("unknown field `{old}`")))
            {
                Some((old, new)) => err(format!("`{old}` is now spelled `{new}`: {message}")),
                None => err(message),
            }
        })?;
        let line = |t: &toml::Spanned<Keys>| {
            1 + text.as_bytes()[..t.span().start.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        };
        if let Some(size) = file.tiles.size
            && !(size.is_finite() && size > 0.0)
        {
            return Err(err(format!(
                "[tiles]: size = {size} is not a positive number of metres"
            )));
        }
        if let Some((name, o)) = file.tiles.origins.iter().find(|(_, o)| {
            !o.iter()
                .all(|x| x.is_finite() && x.abs() <= kiln_formats::world::MAX_ORIGIN)
        }) {
            return Err(err(format!(
                "[tiles.origins]: {name:?} = {o:?} is not a finite point within 1e12 m"
            )));
        }
        let mut c = ProjectConfig {
            watch: file.watch,
            tiles: file.tiles,
            ..ProjectConfig::default()
        };
        // each table's settings; `what` names the table in messages
        let read = |t: &toml::Spanned<Keys>| t.get_ref().overrides();
        if let Some(t) = &file.settings {
            let keys = t.get_ref();
            if keys.pattern.is_some()
                || keys.collider.is_some()
                || keys.layer.is_some()
                || keys.motion.is_some()
                || keys.trigger.is_some()
            {
                return Err(err(format!(
                    "line {}: [settings]: match, collider, layer, motion and trigger belong in a [[rules]] entry",
                    line(t)
                )));
            }
            let settings = read(t);
            c.settings = settings;
            c.render_meshes = keys.render_meshes;
        }
        for t in &file.rules {
            let keys = t.get_ref();
            let Some(pattern) = keys.pattern.clone() else {
                return Err(err(format!(
                    "line {}: a [[rules]] entry needs match = \"GLOB\"",
                    line(t)
                )));
            };
            let what = format!("rule (match = {pattern:?})");
            if keys.render_meshes.is_some() {
                return Err(err(format!(
                    "line {}: {what}: render_meshes is a [settings] key, not an object's",
                    line(t)
                )));
            }
            let settings = read(t);
            if keys.collider.is_none()
                && keys.layer.is_none()
                && keys.motion.is_none()
                && keys.trigger.is_none()
                && settings.is_empty()
            {
                return Err(err(format!(
                    "line {}: {what} sets nothing: give collider, layer, motion, trigger, mesh_tree, max_planes, convex_tolerance, concave_max_triangles, max_deviation, max_faces, decompose, decompose_concavity or max_pieces",
                    line(t)
                )));
            }
            let motion = match &keys.motion {
                None => None,
                Some(m) => Some(crate::scene::Motion::parse(m).ok_or_else(|| {
                    err(format!(
                        "line {}: {what}: motion {m:?} is not static, kinematic or dynamic",
                        line(t)
                    ))
                })?),
            };
            if let Some(l) = &keys.layer
                && (l.is_empty() || l == kiln_formats::level::DEFAULT_LAYER)
            {
                return Err(err(format!(
                    "line {}: {what}: layer {l:?} is not a layer name (the default layer is where objects no rule names go)",
                    line(t)
                )));
            }
            c.rules.push(Rule {
                pattern,
                collider: keys.collider,
                layer: keys.layer.clone(),
                motion,
                trigger: keys.trigger,
                settings,
            });
        }
        Ok(c)
    }

    /// `base` with this file's settings and rules applied.
    pub fn apply(&self, mut base: BakeSettings) -> BakeSettings {
        self.settings.apply(&mut base);
        base.render_meshes = self.render_meshes.unwrap_or(base.render_meshes);
        base.rules = self.rules.clone();
        base
    }
}

impl Default for BakeSettings {
    fn default() -> Self {
        BakeSettings {
            mesh_tree: TreeKind::default(),
            convex_tolerance: VolumeFraction::new(0.02).expect("in range"),
            max_planes: MaxPlanes::new(64).expect("in range"),
            concave_max_triangles: None,
            max_deviation: Metres::new(0.05).expect("in range"),
            max_faces: FaceBudget::new(128).expect("in range"),
            bevels: false,
            decompose: false,
            decompose_concavity: Concavity::Diagonal(0.02),
            max_pieces: MaxPieces::new(64).expect("in range"),
            classify: true,
            render_meshes: false,
            rules: Vec::new(),
        }
    }
}

impl BakeSettings {
    /// The settings with every object baked as a triangle mesh
    /// (classification off).
    pub fn all_meshes(mut self) -> Self {
        self.classify = false;
        self
    }

    /// The settings with mesh trees of `kind`.
    pub fn with_tree(mut self, kind: TreeKind) -> Self {
        self.mesh_tree = kind;
        self
    }

    /// The per-object settings every object starts from.
    pub fn shape_settings(&self) -> ColliderSettings {
        ColliderSettings {
            mesh_tree: self.mesh_tree,
            max_planes: self.max_planes,
            max_deviation: self.max_deviation,
            max_faces: self.max_faces,
            bevels: self.bevels,
            decompose: self.decompose,
            decompose_concavity: self.decompose_concavity,
            max_pieces: self.max_pieces,
        }
    }

    /// A stable description of every setting, for the content hash.
    pub fn fingerprint(&self) -> String {
        format!(
            "kiln-format={};tree={};convex-tolerance={};max-planes={};concave-max-triangles={};tolerance={};max-faces={};bevels={};decompose={};decompose-concavity={};max-pieces={};classify={};render-meshes={};rules={}",
            kiln_formats::FORMAT_VERSION,
            self.mesh_tree.name(),
            self.convex_tolerance,
            self.max_planes,
            self.concave_max_triangles
                .map_or("none".to_string(), |n| n.to_string()),
            self.max_deviation,
            self.max_faces,
            self.bevels,
            self.decompose,
            self.decompose_concavity,
            self.max_pieces,
            self.classify,
            self.render_meshes,
            self.rules
                .iter()
                .map(|r| format!("{:?}:{}", r.pattern, r.describe()))
                .collect::<Vec<_>>()
                .join("|")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"Rock*", b"Rock_01"));
        assert!(glob(b"*wall*", b"big_wall_2"));
        assert!(glob(b"R?ck", b"Rock"));
        assert!(!glob(b"Rock*", b"rock"));
        assert!(glob(b"*", b""));
        assert!(!glob(b"a*b", b"acd"));
        assert!(glob(b"a*b*c", b"axxbyyc"));
    }

    #[test]
    fn the_names_inspect_prints_are_collider_names_too() {
        for (file, shown) in [
            ("convex", "polytope"),
            ("concave", "bsp"),
            ("mesh", "trimesh"),
        ] {
            assert_eq!(
                ColliderName::parse(file),
                ColliderName::parse(shown),
                "{shown}"
            );
            assert!(ColliderName::parse(shown).is_some());
            let text = format!("[[rules]]\nmatch = \"x\"\ncollider = \"{shown}\"\n");
            let c = ProjectConfig::parse(&text, std::path::Path::new("kiln.toml")).unwrap();
            assert_eq!(c.rules[0].collider, ColliderName::parse(file), "{shown}");
        }
        assert_eq!(ColliderName::parse("blob"), None);
    }

    #[test]
    fn rules_put_objects_in_collision_layers() {
        let p = std::path::Path::new("kiln.toml");
        let c = ProjectConfig::parse(
            "[[rules]]\nmatch = \"Floor*\"\nlayer = \"walkable\"\n\n[[rules]]\nmatch = \"Rock*\"\ncollider = \"convex\"\n",
            p,
        )
        .unwrap();
        assert_eq!(c.rules[0].layer.as_deref(), Some("walkable"));
        assert!(!c.rules[0].classifies() && c.rules[1].classifies());
        assert_eq!(c.rules[0].describe(), "layer = \"walkable\"");
        let e = ProjectConfig::parse("[settings]\nlayer = \"x\"\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("trigger belong in a [[rules]]"),
            "{e}"
        );
        // convex pieces: metres or a percentage, per rule or for all
        let c = ProjectConfig::parse(
            "[settings]\ndecompose = true\ndecompose_concavity = 0.03\n\n[[rules]]\nmatch = \"Crate*\"\ncollider = \"convex-decomposition\"\ndecompose_concavity = \"5%\"\nmax_pieces = 8\n",
            p,
        )
        .unwrap();
        assert_eq!(c.settings.decompose, Some(true));
        assert_eq!(
            c.settings.decompose_concavity,
            Some(Concavity::Metres(0.03))
        );
        assert_eq!(c.rules[0].collider, Some(ColliderName::Decompose));
        assert_eq!(
            c.rules[0].describe(),
            "collider = decompose, decompose_concavity = \"5%\", max_pieces = 8"
        );
        let base = c.apply(BakeSettings::default()).shape_settings();
        let s = c.rules[0].settings.shape_settings(base);
        assert!(s.decompose && s.max_pieces.get() == 8);
        assert_eq!(s.decompose_concavity, Concavity::Diagonal(0.05));
        let e = ProjectConfig::parse("[settings]\ndecompose_concavity = \"-2%\"\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("concavity bound") && e.contains("line 2"), "{e}");
        // movers and triggers by rule
        let c = ProjectConfig::parse(
            "[[rules]]\nmatch = \"Lift*\"\nmotion = \"kinematic\"\n\n[[rules]]\nmatch = \"Zone*\"\ntrigger = true\n",
            p,
        )
        .unwrap();
        assert_eq!(c.rules[0].motion, Some(crate::scene::Motion::Kinematic));
        assert_eq!((c.rules[1].trigger, c.rules[1].motion), (Some(true), None));
        assert_eq!(c.rules[0].describe(), "motion = \"kinematic\"");
        let e = ProjectConfig::parse("[[rules]]\nmatch = \"a\"\nmotion = \"flying\"\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("motion \"flying\" is not static, kinematic or dynamic"),
            "{e}"
        );
        let e = ProjectConfig::parse("[[rules]]\nmatch = \"a\"\nlayer = \"default\"\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a layer name"), "{e}");
    }

    #[test]
    fn project_files_parse_and_name_bad_keys_and_lines() {
        let dir = std::env::temp_dir().join(format!("kiln-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let good = file(
            "good.toml",
            "[settings]\nmax_planes = 32\n\n[[rules]]\nmatch = \"Rock*\"\ncollider = \"convex\"\n",
        );
        let c = ProjectConfig::load(&good).unwrap();
        let s = c.apply(BakeSettings::default());
        assert_eq!(s.max_planes.get(), 32);
        assert_eq!(s.rules.len(), 1);
        assert!(s.rules[0].matches("Rock_7"));
        assert_ne!(s.fingerprint(), BakeSettings::default().fingerprint());
        let bad_key = file("bad_key.toml", "[settings]\nmax_plane = 3\n");
        let e = ProjectConfig::load(&bad_key).unwrap_err().to_string();
        assert!(
            e.contains("bad_key.toml") && e.contains("line 2") && e.contains("max_plane"),
            "{e}"
        );
        let bad_kind = file(
            "bad_kind.toml",
            "[[rules]]\nmatch = \"x\"\ncollider = \"blob\"\n",
        );
        let e = ProjectConfig::load(&bad_kind).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("blob"), "{e}");
        // per-object settings in a rule, checked like [settings]
        let per_rule = file(
            "per_rule.toml",
            "[[rules]]\nmatch = \"T*\"\nmesh_tree = \"sphere\"\nmax_planes = 8\n",
        );
        let c = ProjectConfig::load(&per_rule).unwrap();
        assert_eq!(c.rules[0].collider, None);
        let s = c.rules[0]
            .settings
            .shape_settings(BakeSettings::default().shape_settings());
        assert_eq!((s.mesh_tree, s.max_planes.get()), (TreeKind::Sphere, 8));
        // keys renamed since 0.1 are errors naming the file, the line and
        // the new spelling
        for (old, new, value) in [
            ("terrain_tree", "mesh_tree", "\"sphere\""),
            ("tolerance", "max_deviation", "0.02"),
        ] {
            let f = file(
                &format!("old_{old}.toml"),
                &format!("[settings]\nmax_planes = 8\n{old} = {value}\n"),
            );
            let e = ProjectConfig::load(&f).unwrap_err().to_string();
            assert!(
                e.contains(&format!("old_{old}.toml"))
                    && e.contains("line 3")
                    && e.contains(&format!("`{old}` is now spelled `{new}`")),
                "{e}"
            );
        }
        let bad_value = file(
            "bad_value.toml",
            "[[rules]]\nmatch = \"a\"\ncollider = \"box\"\n[[rules]]\nmatch = \"b\"\nmax_planes = 2\n",
        );
        let e = ProjectConfig::load(&bad_value).unwrap_err().to_string();
        assert!(
            e.contains("line 6")
                && e.contains("max_planes = 2")
                && e.contains(&MaxPlanes::new(2).unwrap_err()),
            "{e}"
        );
        let bad_setting = file("bad_setting.toml", "[settings]\nconvex_tolerance = 1.5\n");
        let e = ProjectConfig::load(&bad_setting).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("[0, 1)"), "{e}");
        let empty = file(
            "empty_rule.toml",
            "[[rules]]\nmatch = \"a\"\ncollider = \"box\"\n\n[[rules]]\nmatch = \"b\"\n",
        );
        let e = ProjectConfig::load(&empty).unwrap_err().to_string();
        assert!(
            e.contains("line 5") && e.contains("match = \"b\"") && e.contains("sets nothing"),
            "{e}"
        );
        let misplaced = file(
            "misplaced.toml",
            "[settings]\nmax_planes = 8\n\n[[rules]]\nmatch = \"a\"\nrender_meshes = true\n",
        );
        let e = ProjectConfig::load(&misplaced).unwrap_err().to_string();
        assert!(
            e.contains("line 4") && e.contains("render_meshes is a [settings] key"),
            "{e}"
        );
        let no_match = file("no_match.toml", "[[rules]]\ncollider = \"box\"\n");
        let e = ProjectConfig::load(&no_match).unwrap_err().to_string();
        assert!(e.contains("needs match"), "{e}");
        let w = WatchTable {
            include: vec!["*.glb".into()],
            exclude: vec!["*_wip.*".into()],
        };
        assert!(w.wants("a.glb") && !w.wants("a_wip.glb") && !w.wants("a.gltf"));
    }
}
