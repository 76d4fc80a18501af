//! Builders of the solid shapes: polytopes from convex hulls, and
//! primitives (box, sphere, capsule) fitted to a mesh's vertices.

use super::note::HullCap;
use glam::DVec3;
use kiln_geometry::hull;
use kiln_geometry::sphere_triangle::closest_point;

/// A polytope before encoding, in f64 (encode rounds to f32).
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltPolytope {
    /// Unit outward normals and offsets, one per face.
    pub planes: Vec<(DVec3, f64)>,
    /// Vertices (f32, as archived).
    pub vertices: Vec<[f32; 3]>,
    /// Face loops, counter-clockwise seen from outside.
    pub faces: Vec<Vec<u32>>,
}

/// The convex hull of `points` as a polytope of at most `max_planes`
/// planes, or why not. A hull with more faces is capped ([`capped`]): the
/// note says how many planes were kept and how far the result reaches
/// beyond the exact hull.
pub fn polytope(
    points: &[[f32; 3]],
    max_planes: usize,
) -> Result<(BuiltPolytope, Option<HullCap>), String> {
    let pts: Vec<DVec3> = points
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    let h = hull::hull(&pts).ok_or("flat or degenerate: no convex hull")?;
    let cap = max_planes.min(kiln_formats::polytope::MAX_PLANES);
    let (vertices, faces, note): (Vec<DVec3>, Vec<(Vec<u32>, DVec3)>, _) = if h.faces.len() > cap {
        if cap < 6 {
            return Err(format!(
                "hull has {} faces and the plane cap {cap} is below the 6 a capped hull needs",
                h.faces.len()
            ));
        }
        let c = capped(&h, cap);
        let note = HullCap {
            faces: h.faces.len(),
            planes: c.faces.len(),
            reach: c.added,
        };
        (c.vertices, c.faces, Some(note))
    } else {
        let faces = h.faces.into_iter().map(|(lp, n, _)| (lp, n)).collect();
        (h.vertices, faces, None)
    };
    if vertices.len() > kiln_formats::polytope::MAX_VERTICES {
        return Err(format!("hull has {} vertices", vertices.len()));
    }
    let vertices: Vec<[f32; 3]> = vertices.iter().map(|v| v.as_vec3().to_array()).collect();
    // offsets against the f32 vertices, so every archived vertex is on or
    // behind every plane
    let planes = faces
        .iter()
        .map(|(_, n)| {
            let d = vertices
                .iter()
                .map(|v| n.dot(DVec3::from(v.map(f64::from))))
                .fold(f64::NEG_INFINITY, f64::max);
            (*n, d)
        })
        .collect();
    Ok((
        BuiltPolytope {
            planes,
            vertices,
            faces: faces.into_iter().map(|(lp, _)| lp).collect(),
        },
        note,
    ))
}

/// A hull with some of its planes dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct Capped {
    /// Vertices of the intersection of the kept planes.
    pub vertices: Vec<DVec3>,
    /// Face loops (counter-clockwise from outside) with their normals.
    pub faces: Vec<(Vec<u32>, DVec3)>,
    /// Largest distance from the capped polytope to the exact hull.
    pub added: f64,
}

/// Drops planes of a hull until at most `cap` remain (`cap` ≥ 6). Dropping
/// a plane only grows the shape, so it still contains every input point.
/// It stays bounded because the six axis-aligned planes touching the hull
/// are always kept (as Quake's `AddBrushBevels` adds them to brushes);
/// then, greedily, the hull face that cuts deepest into the current
/// polytope is added, until `cap` planes or nothing sticks out. The largest
/// distance from the result to the hull is measured at its vertices (the
/// distance to a convex set is convex, so a vertex attains it).
pub fn capped(h: &hull::Hull, cap: usize) -> Capped {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for v in &h.vertices {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    let centre = (lo + hi) * 0.5;
    let size = (hi - lo).max_element().max(1e-30);
    let eps = 1e-9 * (size + centre.abs().max_element());
    let mut planes: Vec<(DVec3, f64)> = Vec::new();
    for k in 0..3 {
        let mut e = DVec3::ZERO;
        e[k] = 1.0;
        planes.push((e, hi[k]));
        planes.push((-e, -lo[k]));
    }
    let mut used = vec![false; h.faces.len()];
    let mut faces = brush(&planes, centre, size);
    while planes.len() < cap {
        let verts = faces.iter().flatten().flatten();
        let mut best: Option<(usize, f64)> = None;
        let mut deepest = vec![f64::NEG_INFINITY; h.faces.len()];
        for v in verts {
            for (f, (_, n, d)) in h.faces.iter().enumerate() {
                deepest[f] = deepest[f].max(n.dot(*v) - d);
            }
        }
        for (f, &depth) in deepest.iter().enumerate() {
            if !used[f] && depth > eps && best.is_none_or(|(_, b)| depth > b) {
                best = Some((f, depth));
            }
        }
        let Some((f, _)) = best else { break };
        used[f] = true;
        planes.push((h.faces[f].1, h.faces[f].2));
        faces = brush(&planes, centre, size);
        // planes the new one made redundant (no face left) free their slot
        let keep: Vec<bool> = faces.iter().map(Option::is_some).collect();
        let mut k = keep.iter();
        planes.retain(|_| *k.next().unwrap());
        faces.retain(Option::is_some);
    }
    // vertices shared between faces, merged
    let merge = 1e-7 * (size + centre.abs().max_element());
    let mut vertices: Vec<DVec3> = Vec::new();
    let mut out_faces = Vec::new();
    for (poly, &(n, _)) in faces.iter().zip(&planes) {
        let Some(poly) = poly else { continue };
        let mut lp: Vec<u32> = Vec::new();
        for p in poly {
            let i = match vertices.iter().position(|v| v.distance(*p) <= merge) {
                Some(i) => i,
                None => {
                    vertices.push(*p);
                    vertices.len() - 1
                }
            } as u32;
            if lp.last() != Some(&i) && lp.first() != Some(&i) {
                lp.push(i);
            }
        }
        if lp.len() >= 3 {
            out_faces.push((lp, n));
        }
    }
    let added = vertices
        .iter()
        .map(|v| distance_to_hull(h, *v))
        .fold(0.0, f64::max);
    Capped {
        vertices,
        faces: out_faces,
        added,
    }
}

/// Each plane's face of the intersection of `planes` (`None` when the
/// plane does not touch it): a square on the plane, far larger than the
/// shape, clipped by every other plane.
fn brush(planes: &[(DVec3, f64)], centre: DVec3, size: f64) -> Vec<Option<Vec<DVec3>>> {
    planes
        .iter()
        .enumerate()
        .map(|(i, &(n, d))| {
            let (u, v) = n.any_orthonormal_pair();
            // u × v = n: the square runs counter-clockwise seen from outside
            let (u, v) = if u.cross(v).dot(n) > 0.0 {
                (u, v)
            } else {
                (v, u)
            };
            let o = centre + n * (d - n.dot(centre));
            let e = 4.0 * size;
            let mut poly = vec![
                o - u * e - v * e,
                o + u * e - v * e,
                o + u * e + v * e,
                o - u * e + v * e,
            ];
            for (j, &(m, c)) in planes.iter().enumerate() {
                if j != i {
                    poly = clip(&poly, m, c);
                    if poly.len() < 3 {
                        return None;
                    }
                }
            }
            Some(poly)
        })
        .collect()
}

/// The part of a convex polygon with `n · x ≤ d` (Sutherland–Hodgman).
fn clip(poly: &[DVec3], n: DVec3, d: f64) -> Vec<DVec3> {
    let mut out = Vec::with_capacity(poly.len() + 1);
    for (k, &a) in poly.iter().enumerate() {
        let b = poly[(k + 1) % poly.len()];
        let (da, db) = (n.dot(a) - d, n.dot(b) - d);
        if da <= 0.0 {
            out.push(a);
        }
        if (da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0) {
            out.push(a + (b - a) * (da / (da - db)));
        }
    }
    out
}

/// Distance from `p` to the hull's surface when `p` lies outside it (0
/// inside), over the hull's faces fanned into triangles.
pub(crate) fn distance_to_hull(h: &hull::Hull, p: DVec3) -> f64 {
    if h.faces.iter().all(|(_, n, d)| n.dot(p) <= *d) {
        return 0.0;
    }
    let mut best = f64::INFINITY;
    for (lp, _, _) in &h.faces {
        let a = h.vertices[lp[0] as usize];
        for w in lp[1..].windows(2) {
            let (b, c) = (h.vertices[w[0] as usize], h.vertices[w[1] as usize]);
            best = best.min(p.distance(closest_point(p, a, b, c)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points on a unit sphere (latitude rings), as f32.
    fn sphere_points(rings: usize, segments: usize) -> Vec<[f32; 3]> {
        let mut out = vec![[0.0, -1.0, 0.0], [0.0, 1.0, 0.0]];
        for i in 1..rings {
            let phi = std::f64::consts::PI * (i as f64 / rings as f64 - 0.5);
            for k in 0..segments {
                let a = std::f64::consts::TAU * k as f64 / segments as f64;
                let (r, y) = (phi.cos(), phi.sin());
                out.push([(r * a.cos()) as f32, y as f32, (r * a.sin()) as f32]);
            }
        }
        out
    }

    #[test]
    fn capped_hulls_keep_every_point_inside_and_measure_what_they_add() {
        let pts = sphere_points(12, 24);
        for cap in [6, 10, 20, 64] {
            let (p, note) = polytope(&pts, cap).unwrap();
            assert!(
                p.planes.len() <= cap,
                "{} planes for cap {cap}",
                p.planes.len()
            );
            assert!(note.is_some());
            for v in &pts {
                let v = DVec3::from(v.map(f64::from));
                for (n, d) in &p.planes {
                    assert!(n.dot(v) <= d + 1e-6, "cap {cap}: a point is outside");
                }
            }
            // every polytope vertex lies on its faces' planes
            for (f, lp) in p.faces.iter().enumerate() {
                let (n, d) = p.planes[f];
                for &i in lp {
                    let v = DVec3::from(p.vertices[i as usize].map(f64::from));
                    assert!((n.dot(v) - d).abs() < 1e-5, "cap {cap}: face {f}");
                }
            }
        }
        // six planes: the axis-aligned box, whose corners are √3 − 1 away
        let h = hull::hull(
            &pts.iter()
                .map(|p| DVec3::from(p.map(f64::from)))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let c = capped(&h, 6);
        assert_eq!(c.faces.len(), 6);
        assert_eq!(c.vertices.len(), 8);
        let corner = 3f64.sqrt() - 1.0;
        assert!((c.added - corner).abs() < 0.02, "{}", c.added);
        // more planes, less added
        let c20 = capped(&h, 20);
        let c64 = capped(&h, 64);
        assert!(c64.added < c20.added && c20.added < c.added);
    }
}
