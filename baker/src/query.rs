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

fn answer(level: &Level, v: &Value) -> Result<Value, String> {
    let obj = v.as_object().ok_or("a request must be a JSON object")?;
    if let Some(r) = obj.get("ray") {
        let origin = vec3(&r["origin"], "ray.origin")?;
        let dir = vec3(&r["dir"], "ray.dir")?;
        if dir == Vec3::ZERO {
            return Err("ray.dir must not be zero".into());
        }
        let max_t = match r.get("max_t") {
            None | Some(Value::Null) => f32::INFINITY,
            Some(m) => {
                let m = m.as_f64().ok_or("ray.max_t must be a number")? as f32;
                if m.is_nan() || m < 0.0 {
                    return Err("ray.max_t must be >= 0".into());
                }
                m
            }
        };
        let hit = level.raycast(origin, dir, max_t).map(|h| {
            json!({
                "t": h.t,
                "point": h.point.to_array(),
                "normal": h.normal.to_array(),
                "front_face": h.front_face,
                "object": level.object_name(h.instance),
                "instance": h.instance,
                "feature": h.triangle,
            })
        });
        return Ok(json!({ "hit": hit }));
    }
    for kind in ["sphere", "sweep", "point"] {
        if obj.contains_key(kind) {
            return Err(format!(
                "{kind} queries are not implemented yet in this version (ray queries are)"
            ));
        }
    }
    Err("unknown request: expected one of ray, sphere, sweep, point".into())
}
