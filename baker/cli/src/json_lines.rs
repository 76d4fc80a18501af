//! `baker query`: JSON lines in, JSON lines out, one answer per line, in
//! order. A malformed line gets `{"error": …}` and the run goes on.

use kiln_runtime::{
    CastOptions, ConvexHull, Filter, ObjectId, Pose, Quat, QueryShape, Ray, ShapeCast, ShapeHit,
    ShapeOverlap, Vec3, World,
};
use serde_json::{Value, json};

/// Answers one request line, over the world's level and what it holds:
/// the level's movers where the world has put them (where they were
/// baked, in a world just made of the level: `World::new`) and its
/// triggers when the request asks (`"triggers": true`).
pub fn answer_line(world: &World, line: &str) -> Value {
    match serde_json::from_str::<Value>(line) {
        Err(e) => json!({"error": format!("not JSON: {e}")}),
        Ok(v) => answer(world, &v).unwrap_or_else(|e| json!({"error": e})),
    }
}

fn vec3(v: &Value, what: &str) -> Result<Vec3, String> {
    let a = v
        .as_array()
        .filter(|a| a.len() == 3)
        .ok_or_else(|| format!("{what} must be an array of 3 numbers"))?;
    let mut out = [0.0f32; 3];
    for (o, x) in out.iter_mut().zip(a) {
        *o = x
            .as_f64()
            .ok_or_else(|| format!("{what} must be an array of 3 numbers"))? as f32;
    }
    let v = Vec3::from(out);
    if !v.is_finite() {
        return Err(format!("{what} must be finite"));
    }
    Ok(v)
}

/// `max_t`: absent or null means no limit.
fn max_t(q: &Value, what: &str) -> Result<f32, String> {
    match q.get("max_t") {
        None | Some(Value::Null) => Ok(f32::INFINITY),
        Some(m) => {
            let m = m
                .as_f64()
                .ok_or_else(|| format!("{what} must be a number"))? as f32;
            if m.is_nan() || m < 0.0 {
                return Err(format!("{what} must be >= 0"));
            }
            Ok(m)
        }
    }
}

fn radius(v: &Value, what: &str) -> Result<f32, String> {
    let r = v
        .as_f64()
        .ok_or_else(|| format!("{what} must be a number"))? as f32;
    if !(r.is_finite() && r >= 0.0) {
        return Err(format!("{what} must be finite and >= 0"));
    }
    Ok(r)
}

/// A query shape read from a line (a hull is owned here and lent to the
/// query).
enum Shape {
    Sphere(f32),
    Capsule(f32, f32),
    Cuboid(Vec3),
    Hull(ConvexHull),
}

impl Shape {
    fn query(&self) -> QueryShape<'_> {
        match self {
            Shape::Sphere(radius) => QueryShape::Sphere { radius: *radius },
            Shape::Capsule(half_height, radius) => QueryShape::Capsule {
                half_height: *half_height,
                radius: *radius,
            },
            Shape::Cuboid(half) => QueryShape::Cuboid { half: *half },
            Shape::Hull(h) => QueryShape::Hull(h),
        }
    }
}

/// `rotation`: absent or null means none; else `[x, y, z, w]`, normalised.
fn rotation(q: &Value, what: &str) -> Result<Quat, String> {
    let err = || format!("{what} must be an array of 4 finite numbers [x, y, z, w], not all 0");
    match q.get("rotation") {
        None | Some(Value::Null) => Ok(Quat::IDENTITY),
        Some(r) => {
            let a = r.as_array().filter(|a| a.len() == 4).ok_or_else(err)?;
            let mut c = [0.0f32; 4];
            for (o, x) in c.iter_mut().zip(a) {
                *o = x.as_f64().ok_or_else(err)? as f32;
            }
            let q = Quat::from_array(c);
            let len = q.length();
            if !(len.is_finite() && len > 0.0) {
                return Err(err());
            }
            Ok(q / len)
        }
    }
}

/// The query shapes a line may name, with the JSON key of each.
const SHAPES: &str = "sphere, capsule, box or hull";

/// Reads a shape object (`{"capsule": {…}}`, …), naming `what.key.field`
/// in errors.
fn shape(v: &Value, what: &str) -> Result<(Shape, Pose), String> {
    let obj = v
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or_else(|| format!("{what} must be an object with one of {SHAPES}"))?;
    let (key, q) = obj.iter().next().expect("one entry");
    named_shape(key, q, what)
}

/// Reads the shape `key` (`"capsule"`, …) with fields `q`, naming
/// `what.key.field` in errors.
fn named_shape(key: &str, q: &Value, what: &str) -> Result<(Shape, Pose), String> {
    let at = |f: &str| format!("{what}{}{key}.{f}", if what.is_empty() { "" } else { "." });
    match key {
        "sphere" => {
            let center = vec3(&q["center"], &at("center"))?;
            let r = radius(&q["radius"], &at("radius"))?;
            Ok((Shape::Sphere(r), Pose::at(center)))
        }
        "capsule" => {
            let a = vec3(&q["a"], &at("a"))?;
            let b = vec3(&q["b"], &at("b"))?;
            let r = radius(&q["radius"], &at("radius"))?;
            match QueryShape::capsule(a, b, r) {
                (
                    QueryShape::Capsule {
                        half_height,
                        radius,
                    },
                    pose,
                ) => Ok((Shape::Capsule(half_height, radius), pose)),
                _ => unreachable!("QueryShape::capsule makes a capsule"),
            }
        }
        "box" => {
            let center = vec3(&q["center"], &at("center"))?;
            let half = vec3(&q["half"], &at("half"))?;
            if half.min_element() < 0.0 {
                return Err(format!("{} must be >= 0", at("half")));
            }
            let rot = rotation(q, &at("rotation"))?;
            Ok((Shape::Cuboid(half), Pose::new(rot, center)))
        }
        "hull" => {
            let pts = q["points"]
                .as_array()
                .ok_or_else(|| format!("{} must be an array of points", at("points")))?;
            let pts = pts
                .iter()
                .enumerate()
                .map(|(i, p)| vec3(p, &format!("{}[{i}]", at("points"))))
                .collect::<Result<Vec<_>, _>>()?;
            let hull = ConvexHull::new(&pts).map_err(|e| format!("{}: {e}", at("points")))?;
            let center = match q.get("center") {
                None | Some(Value::Null) => Vec3::ZERO,
                Some(c) => vec3(c, &at("center"))?,
            };
            let rot = rotation(q, &at("rotation"))?;
            Ok((Shape::Hull(hull), Pose::new(rot, center)))
        }
        other => Err(format!(
            "{what}: unknown shape {other:?}: expected one of {SHAPES}"
        )),
    }
}

fn overlaps_json(world: &World, overlaps: &[ShapeOverlap]) -> Value {
    let rows: Vec<Value> = overlaps
        .iter()
        .map(|o| {
            json!({
                "object": world.object_name(o.object),
                "object_index": o.object.index(),
                "point": o.point.to_array(),
                "normal": o.normal.to_array(),
                "depth": o.depth,
                "feature": o.feature,
            })
        })
        .collect();
    json!({ "overlaps": rows })
}

fn hit_json(world: &World, h: Option<ShapeHit>) -> Value {
    let hit = h.map(|h| {
        json!({
            "t": h.t,
            "point": h.point.to_array(),
            "normal": h.normal.to_array(),
            "object": world.object_name(h.object),
            "object_index": h.object.index(),
            "feature": h.feature,
        })
    });
    json!({ "hit": hit })
}

/// The objects a request sees: its optional `"layers"` (names of the
/// level's collision layers; any of them) and `"skip"` (object names)
/// beside the query, as a layer mask and the skipped objects.
fn filter_of(
    world: &World,
    obj: &serde_json::Map<String, Value>,
) -> Result<(u32, Vec<ObjectId>), String> {
    let names = |key: &str| -> Result<Vec<&str>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .ok_or_else(|| format!("{key} must be a list of names"))
                })
                .collect(),
            Some(_) => Err(format!("{key} must be a list of names")),
        }
    };
    let layers = names("layers")?;
    let mask = if obj.get("layers").is_none_or(Value::is_null) {
        u32::MAX
    } else {
        layers.iter().try_fold(0u32, |m, &n| {
            world.level().layer(n).map(|b| m | b).ok_or_else(|| {
                format!(
                    "layers: no layer {n:?} in this level (it has {})",
                    world.level().layer_names().collect::<Vec<_>>().join(", ")
                )
            })
        })?
    };
    let mut skip = Vec::new();
    for n in names("skip")? {
        // every object of that name (a mesh node with GPU instances is
        // several)
        let before = skip.len();
        skip.extend(
            world
                .level()
                .objects()
                .filter(|&o| world.object_name(o).as_deref() == Some(n)),
        );
        if skip.len() == before {
            return Err(format!("skip: no object {n:?} in this level"));
        }
    }
    Ok((mask, skip))
}

fn answer(world: &World, v: &Value) -> Result<Value, String> {
    let obj = v.as_object().ok_or("a request must be a JSON object")?;
    const KEYS: [&str; 11] = [
        "ray",
        "sphere",
        "capsule",
        "box",
        "hull",
        "overlap_any",
        "sweep",
        "point",
        "layers",
        "skip",
        "triggers",
    ];
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unknown key {k:?}: expected {}", KEYS.join(", ")));
    }
    let (mask, skip) = filter_of(world, obj)?;
    // trigger volumes are seen only when asked for
    let triggers = match obj.get("triggers") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("triggers must be true or false".into()),
    };
    let filter = Filter::skip(&skip).layers(mask).triggers(triggers);
    if let Some(r) = obj.get("ray") {
        let origin = vec3(&r["origin"], "ray.origin")?;
        let dir = vec3(&r["dir"], "ray.dir")?;
        if !kiln_runtime::is_direction(dir) {
            return Err("ray.dir must be finite and not zero (|dir| above 1.1e-19)".into());
        }
        let max_t = max_t(r, "ray.max_t")?;
        let hit = world
            .raycast(&Ray::new(origin, dir, max_t), &filter)
            .map(|h| {
                json!({
                    "t": h.t,
                    "point": h.point.to_array(),
                    "normal": h.normal.to_array(),
                    "front_face": h.front_face,
                    "object": world.object_name(h.object),
                    "object_index": h.object.index(),
                    "feature": h.feature,
                })
            });
        return Ok(json!({ "hit": hit }));
    }
    if let Some(q) = obj.get("sphere") {
        let center = vec3(&q["center"], "sphere.center")?;
        let radius = radius(&q["radius"], "sphere.radius")?;
        let ball = QueryShape::Sphere { radius };
        let found = world.overlap(&ball, &Pose::at(center), &filter);
        return Ok(overlaps_json(world, &found));
    }
    for key in ["capsule", "box", "hull"] {
        if let Some(q) = obj.get(key) {
            let (s, pose) = named_shape(key, q, "")?;
            let found = world.overlap(&s.query(), &pose, &filter);
            return Ok(overlaps_json(world, &found));
        }
    }
    if let Some(q) = obj.get("overlap_any") {
        let (s, pose) = shape(q, "overlap_any")?;
        return Ok(json!({ "overlap_any": world.overlap_any(&s.query(), &pose, &filter) }));
    }
    if let Some(q) = obj.get("sweep") {
        let dir = vec3(&q["dir"], "sweep.dir")?;
        if !kiln_runtime::is_direction(dir) {
            return Err("sweep.dir must be finite and not zero (|dir| above 1.1e-19)".into());
        }
        let max_t = max_t(q, "sweep.max_t")?;
        if let Some(sh) = q.get("shape") {
            let (s, pose) = shape(sh, "sweep.shape")?;
            let ignore_leaving = match q.get("ignore_leaving") {
                None | Some(Value::Null) => false,
                Some(b) => b
                    .as_bool()
                    .ok_or("sweep.ignore_leaving must be true or false")?,
            };
            let options = CastOptions { ignore_leaving };
            let hit = world.cast(
                &ShapeCast::new(s.query(), pose, dir, max_t).with(options),
                &filter,
            );
            return Ok(hit_json(world, hit));
        }
        let center = vec3(&q["center"], "sweep.center")?;
        let radius = radius(&q["radius"], "sweep.radius")?;
        let ball = QueryShape::Sphere { radius };
        let options = CastOptions::default();
        let hit = world.cast(
            &ShapeCast::new(ball, Pose::at(center), dir, max_t).with(options),
            &filter,
        );
        return Ok(hit_json(world, hit));
    }
    if let Some(p) = obj.get("point") {
        let p = vec3(p, "point")?;
        let inside: Vec<_> = world
            .contains_point(p, &filter)
            .into_iter()
            .map(|i| world.object_name(i))
            .collect();
        return Ok(json!({ "inside": inside }));
    }
    Err(
        "unknown request: expected one of ray, sphere, capsule, box, hull, overlap_any, sweep, point"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_runtime::Level;
    use std::sync::Arc;

    /// A 20 m square floor mesh at y = 0.
    fn floor_mesh() -> kiln_baker::SceneMesh {
        kiln_baker::SceneMesh::new(
            "floor",
            vec![
                [-10.0, 0.0, -10.0],
                [10.0, 0.0, -10.0],
                [10.0, 0.0, 10.0],
                [-10.0, 0.0, 10.0],
            ],
            &[[0, 2, 1], [0, 3, 2]],
        )
    }

    /// The floor alone.
    fn floor() -> Arc<Level> {
        let scene = kiln_baker::Scene::from_meshes(vec![floor_mesh()]);
        let baked = kiln_baker::bake_scene(&scene, &kiln_baker::BakeSettings::default());
        Arc::new(Level::from_bytes(&baked.bytes).unwrap())
    }

    /// The floor (layer "walkable") with a crate (layer "props") on it.
    fn floor_and_crate() -> Arc<Level> {
        let floor = floor_mesh();
        let crate_mesh = kiln_baker::SceneMesh::cuboid("crate", [0.0, 0.5, 0.0], [0.5, 0.5, 0.5]);
        let mut scene = kiln_baker::Scene::from_meshes(vec![floor, crate_mesh]);
        scene.instances[0].layers = vec!["walkable".into()];
        scene.instances[1].layers = vec!["props".into()];
        let baked = kiln_baker::bake_scene(&scene, &kiln_baker::BakeSettings::default());
        Arc::new(Level::from_bytes(&baked.bytes).unwrap())
    }

    /// Movers answer where they were baked, and triggers when asked.
    #[test]
    fn movers_answer_and_triggers_when_asked() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/colliders/movers.gltf");
        let baked = kiln_baker::bake_file(&path, &Default::default()).unwrap();
        let level = Arc::new(Level::from_bytes(&baked.bytes).unwrap());
        let object = |v: &Value| v["hit"]["object"].as_str().unwrap_or("none").to_string();
        let down = |x: f32, rest: &str| {
            format!(r#"{{"ray":{{"origin":[{x},10,0],"dir":[0,-1,0]}}{rest}}}"#)
        };
        assert_eq!(object(&ask(&level, &down(0.0, ""))), "Lift");
        assert_eq!(object(&ask(&level, &down(-3.0, ""))), "Floor");
        assert_eq!(
            object(&ask(&level, &down(-3.0, r#","triggers":true"#))),
            "Zone"
        );
        let e = ask(&level, &down(-3.0, r#","triggers":1"#));
        assert_eq!(e["error"], "triggers must be true or false", "{e}");
    }

    #[test]
    fn layers_and_skip_filter_every_query_line() {
        let level = floor_and_crate();
        let object = |v: &Value| v["hit"]["object"].as_str().unwrap_or("none").to_string();
        let ray = r#""ray":{"origin":[0,5,0],"dir":[0,-1,0],"max_t":10}"#;
        assert_eq!(object(&ask(&level, &format!("{{{ray}}}"))), "crate");
        assert_eq!(
            object(&ask(&level, &format!(r#"{{{ray},"layers":["walkable"]}}"#))),
            "floor"
        );
        assert_eq!(
            object(&ask(&level, &format!(r#"{{{ray},"skip":["crate"]}}"#))),
            "floor"
        );
        assert_eq!(
            object(&ask(
                &level,
                &format!(r#"{{{ray},"layers":["props","walkable"]}}"#)
            )),
            "crate"
        );
        // a box resting on the floor beside the crate touches both
        let bx = r#""box":{"center":[0.8,0.25,0],"half":[0.35,0.3,0.3]}"#;
        let names = |v: &Value| {
            let mut n: Vec<String> = v["overlaps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["object"].as_str().unwrap().to_string())
                .collect();
            n.sort();
            n
        };
        assert_eq!(
            names(&ask(&level, &format!("{{{bx}}}"))),
            ["crate", "floor"]
        );
        assert_eq!(
            names(&ask(&level, &format!(r#"{{{bx},"layers":["props"]}}"#))),
            ["crate"]
        );
        let sphere = r#""sphere":{"center":[0.8,0.25,0],"radius":0.35}"#;
        assert_eq!(
            names(&ask(&level, &format!(r#"{{{sphere},"skip":["floor"]}}"#))),
            ["crate"]
        );
        // a sphere sweep, in either form, sees what the filter lets it
        let plain = r#""sweep":{"center":[0,5,0],"radius":0.2,"dir":[0,-1,0],"max_t":10}"#;
        assert_eq!(object(&ask(&level, &format!("{{{plain}}}"))), "crate");
        assert_eq!(
            object(&ask(&level, &format!(r#"{{{plain},"skip":["crate"]}}"#))),
            "floor"
        );
        let sweep = r#""sweep":{"shape":{"sphere":{"center":[0,5,0],"radius":0.2}},"dir":[0,-1,0],"max_t":10}"#;
        assert_eq!(
            object(&ask(
                &level,
                &format!(r#"{{{sweep},"layers":["walkable"]}}"#)
            )),
            "floor"
        );
        let inter = r#""overlap_any":{"box":{"center":[0,1.2,0],"half":[0.3,0.3,0.3]}}"#;
        assert_eq!(
            ask(&level, &format!("{{{inter}}}"))["overlap_any"],
            json!(true)
        );
        assert_eq!(
            ask(&level, &format!(r#"{{{inter},"layers":["walkable"]}}"#))["overlap_any"],
            json!(false)
        );
        // bad filters are errors naming the key
        for (line, want) in [
            (
                format!(r#"{{{ray},"layers":["lava"]}}"#),
                "no layer \"lava\"",
            ),
            (
                format!(r#"{{{ray},"layers":"props"}}"#),
                "layers must be a list",
            ),
            (
                format!(r#"{{{ray},"skip":["ghost"]}}"#),
                "skip: no object \"ghost\"",
            ),
            (
                format!(r#"{{{ray},"layer":["props"]}}"#),
                "unknown key \"layer\"",
            ),
        ] {
            let e = ask(&level, &line)["error"]
                .as_str()
                .unwrap_or("")
                .to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    fn ask(level: &Arc<Level>, line: &str) -> Value {
        answer_line(&World::new(level.clone()), line)
    }

    fn depth(v: &Value) -> f64 {
        let o = v["overlaps"].as_array().expect("overlaps");
        assert_eq!(o.len(), 1, "{v}");
        assert_eq!(o[0]["normal"], json!([0.0, 1.0, 0.0]), "{v}");
        o[0]["depth"].as_f64().unwrap()
    }

    #[test]
    fn shape_lines_answer_overlaps_yes_no_and_sweeps() {
        let l = floor();
        let near = |x: f64, want: f64| (x - want).abs() < 1e-6;
        let capsule = r#"{"capsule":{"a":[0,0.3,0],"b":[0,1.3,0],"radius":0.5}}"#;
        assert!(near(depth(&ask(&l, capsule)), 0.2));
        let cube = r#"{"box":{"center":[1,0.4,2],"half":[0.5,0.5,0.5],"rotation":[0,0,0,1]}}"#;
        assert!(near(depth(&ask(&l, cube)), 0.1));
        let hull = r#"{"hull":{"points":[[-0.5,-0.5,-0.5],[0.5,-0.5,-0.5],[-0.5,0.5,-0.5],[0.5,0.5,-0.5],[-0.5,-0.5,0.5],[0.5,-0.5,0.5],[-0.5,0.5,0.5],[0.5,0.5,0.5]],"center":[0,0.45,0]}}"#;
        assert!(near(depth(&ask(&l, hull)), 0.05));
        let yes = ask(
            &l,
            r#"{"overlap_any":{"box":{"center":[0,0.4,0],"half":[1,0.5,1]}}}"#,
        );
        assert_eq!(yes, json!({"overlap_any": true}));
        let no = ask(
            &l,
            r#"{"overlap_any":{"sphere":{"center":[0,2,0],"radius":1.5}}}"#,
        );
        assert_eq!(no, json!({"overlap_any": false}));
        // a box rotated 45° about z stands on an edge: 0.5·√2 below its centre
        let s = std::f64::consts::FRAC_PI_8.sin();
        let c = std::f64::consts::FRAC_PI_8.cos();
        let line = format!(
            r#"{{"sweep":{{"shape":{{"box":{{"center":[0,3,0],"half":[0.5,0.5,0.5],"rotation":[0,0,{s},{c}]}}}},"dir":[0,-1,0],"max_t":10}}}}"#
        );
        let hit = ask(&l, &line);
        let t = hit["hit"]["t"].as_f64().unwrap();
        assert!((t - (3.0 - 0.5 * 2f64.sqrt())).abs() < 1e-5, "{hit}");
        // resting on the floor: lifting off is free only when told to
        // ignore what the motion leaves
        let rest = r#"{"capsule":{"a":[0,0.5,0],"b":[0,1.5,0],"radius":0.5}}"#;
        let lift = |ignore: bool| {
            ask(
                &l,
                &format!(
                    r#"{{"sweep":{{"shape":{rest},"dir":[0,1,0],"max_t":1,"ignore_leaving":{ignore}}}}}"#
                ),
            )
        };
        assert_eq!(lift(false)["hit"]["t"], json!(0.0));
        assert_eq!(lift(true), json!({"hit": null}));
    }

    #[test]
    fn malformed_shape_lines_name_the_field() {
        let l = floor();
        for (line, want) in [
            (
                r#"{"box":{"center":[0,0,0]}}"#,
                "box.half must be an array of 3 numbers",
            ),
            (
                r#"{"box":{"center":[0,0,0],"half":[1,-1,1]}}"#,
                "box.half must be >= 0",
            ),
            (
                r#"{"box":{"center":[0,0,0],"half":[1,1,1],"rotation":[0,0,0,0]}}"#,
                "box.rotation must be an array of 4",
            ),
            (
                r#"{"capsule":{"a":[0,0,0],"b":[0,1,0],"radius":-1}}"#,
                "capsule.radius must be finite and >= 0",
            ),
            (
                r#"{"capsule":{"a":[0,0,0],"radius":1}}"#,
                "capsule.b must be",
            ),
            (
                r#"{"hull":{"points":[[0,0,0],[1,0,0],[0,1,0]]}}"#,
                "hull.points: ",
            ),
            (
                r#"{"hull":{"points":[[0,0,0],[1,0,0],"x"]}}"#,
                "hull.points[2] must be",
            ),
            (r#"{"overlap_any":[1,2]}"#, "overlap_any must be an object"),
            (
                r#"{"sweep":{"shape":{"cone":{}},"dir":[0,1,0]}}"#,
                "sweep.shape: unknown shape \"cone\"",
            ),
            (
                r#"{"sweep":{"shape":{"box":{"center":[0,0,0],"half":[1,1,1]}},"dir":[0,1,0],"ignore_leaving":1}}"#,
                "sweep.ignore_leaving must be true or false",
            ),
            (
                r#"{"sweep":{"shape":{"box":{"center":[0,0,0],"half":"big"}},"dir":[0,1,0]}}"#,
                "sweep.shape.box.half must be",
            ),
            // one rule for directions: too short to have one in f32
            (
                r#"{"ray":{"origin":[0,5,0],"dir":[0,-1e-38,0]}}"#,
                "ray.dir must be finite and not zero",
            ),
            (
                r#"{"sweep":{"center":[0,5,0],"radius":0.2,"dir":[0,-1e-38,0]}}"#,
                "sweep.dir must be finite and not zero",
            ),
        ] {
            let got = ask(&l, line);
            let e = got["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{line}: {got}"));
            assert!(e.starts_with(want), "{line}: {e}");
        }
    }
}
