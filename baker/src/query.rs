//! `baker query`: JSON lines in, JSON lines out, one answer per line, in
//! order. A malformed line gets `{"error": …}` and the run goes on.

use kiln_runtime::{Level, Vec3};
use serde_json::{Value, json};

/// Answers one request line.
pub fn answer_line(level: &Level, line: &str) -> Value {
    match serde_json::from_str::<Value>(line) {
        Err(e) => json!({"error": format!("not JSON: {e}")}),
        Ok(v) => answer(level, &v).unwrap_or_else(|e| json!({"error": e})),
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

fn answer(level: &Level, v: &Value) -> Result<Value, String> {
    let obj = v.as_object().ok_or("a request must be a JSON object")?;
    if let Some(r) = obj.get("ray") {
        let origin = vec3(&r["origin"], "ray.origin")?;
        let dir = vec3(&r["dir"], "ray.dir")?;
        if dir == Vec3::ZERO {
            return Err("ray.dir must not be zero".into());
        }
        let max_t = max_t(r, "ray.max_t")?;
        let hit = level.raycast(origin, dir, max_t).map(|h| {
            json!({
                "t": h.t,
                "point": h.point.to_array(),
                "normal": h.normal.to_array(),
                "front_face": h.front_face,
                "object": level.object_name(h.instance),
                "instance": h.instance,
                "feature": h.feature,
            })
        });
        return Ok(json!({ "hit": hit }));
    }
    if let Some(q) = obj.get("sphere") {
        let center = vec3(&q["center"], "sphere.center")?;
        let radius = radius(&q["radius"], "sphere.radius")?;
        let overlaps: Vec<Value> = level
            .overlap_sphere(center, radius)
            .iter()
            .map(|o| {
                json!({
                    "object": level.object_name(o.instance),
                    "instance": o.instance,
                    "point": o.point.to_array(),
                    "normal": o.normal.to_array(),
                    "depth": o.depth,
                    "feature": o.feature,
                })
            })
            .collect();
        return Ok(json!({ "overlaps": overlaps }));
    }
    if let Some(q) = obj.get("sweep") {
        let center = vec3(&q["center"], "sweep.center")?;
        let radius = radius(&q["radius"], "sweep.radius")?;
        let dir = vec3(&q["dir"], "sweep.dir")?;
        if dir == Vec3::ZERO {
            return Err("sweep.dir must not be zero".into());
        }
        let max_t = max_t(q, "sweep.max_t")?;
        let hit = level.sweep_sphere(center, radius, dir, max_t).map(|h| {
            json!({
                "t": h.t,
                "point": h.point.to_array(),
                "normal": h.normal.to_array(),
                "object": level.object_name(h.instance),
                "instance": h.instance,
                "feature": h.feature,
            })
        });
        return Ok(json!({ "hit": hit }));
    }
    if let Some(p) = obj.get("point") {
        let p = vec3(p, "point")?;
        let inside: Vec<&str> = level
            .contains_point(p)
            .iter()
            .map(|&i| level.object_name(i))
            .collect();
        return Ok(json!({ "inside": inside }));
    }
    Err("unknown request: expected one of ray, sphere, sweep, point".into())
}
