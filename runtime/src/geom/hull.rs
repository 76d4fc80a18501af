//! Convex hulls in f64, incremental (the beneath–beyond method: each point
//! outside the hull sees some faces; they are removed and the horizon is
//! joined to the point — Preparata and Hong 1977; the visible-face and
//! horizon bookkeeping of Barber, Dobkin and Huhdanpaa, "The quickhull
//! algorithm for convex hulls", 1996), with a distance tolerance derived
//! from the coordinates' magnitude, then coplanar triangles merged into
//! polygons.
//!
//! Degenerate inputs (fewer than four points, all collinear or coplanar
//! within the tolerance) give `None`: the caller falls back to another
//! shape. Nothing here panics on duplicated, tiny or huge inputs.

use glam::DVec3;
use std::collections::HashMap;

/// A convex hull: vertices and planar faces (vertex loops, counter-clockwise
/// seen from outside), each with its outward unit normal and offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Hull {
    /// Hull vertices (a subset of the input).
    pub vertices: Vec<DVec3>,
    /// Faces: loop of indices into `vertices`, outward normal, offset
    /// (`n · x ≤ d` inside; every vertex satisfies it).
    pub faces: Vec<(Vec<u32>, DVec3, f64)>,
}

impl Hull {
    // used by the baker (feature `internals`)
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    /// Enclosed volume.
    pub fn volume(&self) -> f64 {
        let mut v = 0.0;
        for (lp, _, _) in &self.faces {
            let a = self.vertices[lp[0] as usize];
            for w in lp[1..].windows(2) {
                let (b, c) = (self.vertices[w[0] as usize], self.vertices[w[1] as usize]);
                v += a.dot(b.cross(c));
            }
        }
        v / 6.0
    }
}

struct Tri {
    v: [usize; 3],
    n: DVec3,
    d: f64,
    alive: bool,
}

impl Tri {
    /// Signed distance of `p` above the face's plane.
    #[inline]
    fn dist(&self, p: DVec3) -> f64 {
        self.n.dot(p) - self.d
    }
}

fn tri(points: &[DVec3], v: [usize; 3]) -> Tri {
    let (a, b, c) = (points[v[0]], points[v[1]], points[v[2]]);
    let n = (b - a).cross(c - a).normalize_or_zero();
    Tri {
        v,
        n,
        d: n.dot(a),
        alive: true,
    }
}

/// The convex hull of `points`, or `None` for degenerate input.
pub fn hull(points: &[DVec3]) -> Option<Hull> {
    if points.len() < 4 || !points.iter().all(|p| p.is_finite()) {
        return None;
    }
    let (lo, hi) = points
        .iter()
        .fold((points[0], points[0]), |(l, h), &p| (l.min(p), h.max(p)));
    let extent = (hi - lo).max_element();
    let magnitude = lo.abs().max(hi.abs()).max_element();
    // distances below this are rounding noise of f32 input
    let eps = 1e-6 * extent + 1e-9 * magnitude;
    if extent <= 0.0 {
        return None;
    }
    // initial simplex: extreme point, farthest from it, from their line,
    // from their plane
    let i0 = (0..points.len()).min_by(|&a, &b| points[a].x.total_cmp(&points[b].x))?;
    let far = |score: &dyn Fn(DVec3) -> f64| {
        (0..points.len()).max_by(|&a, &b| score(points[a]).total_cmp(&score(points[b])))
    };
    let p0 = points[i0];
    let i1 = far(&|p| p.distance(p0))?;
    let p1 = points[i1];
    let dir = (p1 - p0).normalize_or_zero();
    let i2 = far(&|p| (p - p0).cross(dir).length())?;
    let p2 = points[i2];
    let nrm = (p1 - p0).cross(p2 - p0).normalize_or_zero();
    let i3 = far(&|p| (p - p0).dot(nrm).abs())?;
    if p1.distance(p0) <= eps
        || (p2 - p0).cross(dir).length() <= eps
        || (points[i3] - p0).dot(nrm).abs() <= eps
    {
        return None;
    }
    let mut tris: Vec<Tri> = Vec::new();
    let mut edges: HashMap<(usize, usize), usize> = HashMap::new();
    let add = |tris: &mut Vec<Tri>, edges: &mut HashMap<(usize, usize), usize>, v: [usize; 3]| {
        let t = tris.len();
        for k in 0..3 {
            edges.insert((v[k], v[(k + 1) % 3]), t);
        }
        tris.push(tri(points, v));
    };
    let above = (points[i3] - p0).dot(nrm) > 0.0;
    let base = if above { [i0, i2, i1] } else { [i0, i1, i2] };
    add(&mut tris, &mut edges, base);
    // the three sides, wound to match the base's reversed edges
    for k in 0..3 {
        let (a, b) = (base[k], base[(k + 1) % 3]);
        add(&mut tris, &mut edges, [b, a, i3]);
    }
    let mut visible = Vec::new();
    for (pi, &p) in points.iter().enumerate() {
        if [i0, i1, i2, i3].contains(&pi) {
            continue;
        }
        // the faces the point sees, grown across edges from the one it
        // sees best, so the set is connected and its boundary one loop
        // (a global distance test can split it where faces are nearly
        // coplanar with the point, and the cone then tears the surface);
        // faces the point is coplanar with, within the tolerance, are taken
        // too: stopping at them leaves faces the point sees beyond them
        // alive, and the hull dented (the cone over them is flat, which the
        // merge below joins)
        let seed = (0..tris.len())
            .filter(|&t| tris[t].alive)
            .max_by(|&a, &b| tris[a].dist(p).total_cmp(&tris[b].dist(p)))?;
        if tris[seed].dist(p) <= eps {
            continue; // inside, or on the hull within rounding
        }
        visible.clear();
        visible.push(seed);
        tris[seed].alive = false;
        let mut next = 0;
        while next < visible.len() {
            let v = tris[visible[next]].v;
            next += 1;
            for k in 0..3 {
                if let Some(&o) = edges.get(&(v[(k + 1) % 3], v[k]))
                    && tris[o].alive
                    && tris[o].dist(p) > -eps
                {
                    tris[o].alive = false;
                    visible.push(o);
                }
            }
        }
        // horizon: edges of visible faces whose neighbour is not visible
        let mut horizon = Vec::new();
        for &t in &visible {
            let v = tris[t].v;
            for k in 0..3 {
                let (a, b) = (v[k], v[(k + 1) % 3]);
                match edges.get(&(b, a)) {
                    Some(&o) if tris[o].alive => horizon.push((a, b)),
                    _ => {}
                }
            }
        }
        for &t in &visible {
            let v = tris[t].v;
            for k in 0..3 {
                let key = (v[k], v[(k + 1) % 3]);
                if edges.get(&key) == Some(&t) {
                    edges.remove(&key);
                }
            }
        }
        for (a, b) in horizon {
            add(&mut tris, &mut edges, [a, b, pi]);
        }
        // a hull of n points has fewer than 2n faces alive, and every face
        // ever made is a face of some intermediate hull: far more than
        // that means rounding broke the horizon; give up cleanly
        if tris.len() > 64 * points.len() + 64 {
            return None;
        }
    }
    merge(points, &tris, eps)
}

/// Merges coplanar neighbouring triangles into polygons and keeps only the
/// vertices the faces use.
fn merge(points: &[DVec3], tris: &[Tri], eps: f64) -> Option<Hull> {
    let alive: Vec<usize> = (0..tris.len()).filter(|&t| tris[t].alive).collect();
    let mut by_edge: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, &t) in alive.iter().enumerate() {
        let v = tris[t].v;
        for k in 0..3 {
            by_edge.insert((v[k], v[(k + 1) % 3]), i);
        }
    }
    // union-find over triangles sharing an edge and (nearly) a plane
    let mut parent: Vec<usize> = (0..alive.len()).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for (i, &t) in alive.iter().enumerate() {
        let v = tris[t].v;
        for k in 0..3 {
            let Some(&j) = by_edge.get(&(v[(k + 1) % 3], v[k])) else {
                return None; // not closed: numerical trouble, give up cleanly
            };
            let (a, b) = (&tris[t], &tris[alive[j]]);
            // one plane: parallel normals, and each triangle's corners on
            // the other's plane
            let off = |x: &Tri, y: &Tri| y.v.iter().any(|&q| x.dist(points[q]).abs() > eps);
            let far = off(a, b) || off(b, a);
            if a.n.dot(b.n) > 1.0 - 1e-9 && !far {
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                if ri != rj {
                    parent[ri.max(rj)] = ri.min(rj);
                }
            }
        }
    }
    let root_of: Vec<usize> = (0..alive.len()).map(|i| find(&mut parent, i)).collect();
    // boundary loops per group
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (i, &r) in root_of.iter().enumerate() {
        let g = *group_of.entry(r).or_insert_with(|| {
            groups.push((r, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(i);
    }
    let mut remap: HashMap<usize, u32> = HashMap::new();
    let mut vertices = Vec::new();
    let mut faces = Vec::new();
    for (root, members) in &groups {
        let mut next: HashMap<usize, usize> = HashMap::new();
        for &i in members {
            let v = tris[alive[i]].v;
            for k in 0..3 {
                let (a, b) = (v[k], v[(k + 1) % 3]);
                let inside = by_edge.get(&(b, a)).is_some_and(|&j| root_of[j] == *root);
                if !inside {
                    next.insert(a, b);
                }
            }
        }
        let start = *next.keys().min()?;
        let mut lp = vec![start];
        let mut cur = next[&start];
        while cur != start {
            if lp.len() > next.len() {
                return None; // not a simple loop
            }
            lp.push(cur);
            cur = *next.get(&cur)?;
        }
        if lp.len() != next.len() || lp.len() < 3 {
            return None;
        }
        // Newell's normal of the loop
        let mut n = DVec3::ZERO;
        for k in 0..lp.len() {
            let (a, b) = (points[lp[k]], points[lp[(k + 1) % lp.len()]]);
            n += DVec3::new(
                (a.y - b.y) * (a.z + b.z),
                (a.z - b.z) * (a.x + b.x),
                (a.x - b.x) * (a.y + b.y),
            );
        }
        let n = n.normalize_or_zero();
        if n == DVec3::ZERO {
            return None;
        }
        let ids = lp
            .iter()
            .map(|&p| {
                *remap.entry(p).or_insert_with(|| {
                    vertices.push(points[p]);
                    (vertices.len() - 1) as u32
                })
            })
            .collect();
        faces.push((ids, n, 0.0));
    }
    // offsets: the largest n · v over every hull vertex, so every vertex is
    // on or behind every plane
    for f in &mut faces {
        f.2 = vertices
            .iter()
            .map(|v| f.1.dot(*v))
            .fold(f64::NEG_INFINITY, f64::max);
    }
    Some(Hull { vertices, faces })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube_points() -> Vec<DVec3> {
        let mut p = Vec::new();
        for i in 0..8 {
            let s = |k: u32| if i & (1 << k) != 0 { 1.0 } else { -1.0 };
            p.push(DVec3::new(s(0), s(1), s(2)));
        }
        // interior, duplicate and face-centre points change nothing
        p.push(DVec3::ZERO);
        p.push(DVec3::ONE);
        p.push(DVec3::new(1.0, 0.0, 0.0));
        p
    }

    #[test]
    fn a_cube_has_six_square_faces_and_volume_eight() {
        let h = hull(&cube_points()).unwrap();
        assert_eq!(h.faces.len(), 6);
        assert_eq!(h.vertices.len(), 8);
        assert!((h.volume() - 8.0).abs() < 1e-9);
        for (lp, n, d) in &h.faces {
            assert_eq!(lp.len(), 4);
            assert!((d - 1.0).abs() < 1e-12 && (n.length() - 1.0).abs() < 1e-12);
            for v in &h.vertices {
                assert!(n.dot(*v) <= d + 1e-12);
            }
        }
    }

    #[test]
    fn a_uv_sphere_in_f32_has_a_hull() {
        // rings of points: many nearly coplanar quads near the poles
        let mut pts = vec![DVec3::Y, DVec3::NEG_Y];
        for i in 1..16 {
            let a = std::f64::consts::PI * i as f64 / 16.0;
            for j in 0..32 {
                let b = std::f64::consts::TAU * j as f64 / 32.0;
                let p = DVec3::new(a.sin() * b.cos(), a.cos(), a.sin() * b.sin());
                pts.push(p.as_vec3().as_dvec3());
            }
        }
        let h = hull(&pts).expect("a hull");
        assert_eq!(h.vertices.len(), pts.len());
        let ideal = 4.0 / 3.0 * std::f64::consts::PI;
        assert!(
            h.volume() > 0.9 * ideal && h.volume() < ideal,
            "{}",
            h.volume()
        );
    }

    #[test]
    fn degenerate_inputs_give_none() {
        assert!(hull(&[DVec3::ZERO; 10]).is_none());
        let line: Vec<DVec3> = (0..10).map(|i| DVec3::X * i as f64).collect();
        assert!(hull(&line).is_none());
        let flat: Vec<DVec3> = (0..20)
            .map(|i| DVec3::new((i % 5) as f64, (i / 5) as f64, 0.0))
            .collect();
        assert!(hull(&flat).is_none());
        assert!(hull(&[DVec3::ZERO, DVec3::X, DVec3::NAN, DVec3::Y, DVec3::Z]).is_none());
    }

    #[test]
    fn random_clouds_contain_every_point_far_from_the_origin() {
        let mut s = 12345u64;
        let mut r = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in [4usize, 8, 50, 300] {
            let c = DVec3::new(1e4, -3e3, 2e3);
            let pts: Vec<DVec3> = (0..n)
                .map(|_| c + DVec3::new(r(), r(), r()) * 10.0)
                .collect();
            let h = hull(&pts).unwrap();
            assert!(h.volume() > 0.0);
            for (_, nrm, d) in &h.faces {
                for p in &pts {
                    assert!(nrm.dot(*p) <= d + 1e-6, "{n} points");
                }
            }
        }
    }

    /// Clouds snapped to a half-metre grid: many duplicated points and many
    /// exactly coplanar with a face. Every one gives a hull whose face loops
    /// lie on their planes and whose planes keep every point behind them.
    /// (Growing the visible region only across faces strictly in front of
    /// the point stopped at coplanar faces, left visible faces beyond them,
    /// and dented the hull: 7 of 2,000 loops sat 0.47 m off their planes,
    /// and 380 clouds gave up.)
    #[test]
    fn grid_clouds_give_hulls_whose_faces_lie_on_their_planes() {
        let mut rng = crate::geom::test_rng::Rng(0x5A11_0F5E);
        for i in 0..2000 {
            let n = 8 + (rng.f() * 192.0) as usize;
            let pts: Vec<DVec3> = (0..n).map(|_| (rng.v(2.0) * 2.0).round() * 0.5).collect();
            let h = hull(&pts).unwrap_or_else(|| panic!("cloud {i}: no hull"));
            for (k, (lp, nrm, d)) in h.faces.iter().enumerate() {
                for &v in lp {
                    let off = nrm.dot(h.vertices[v as usize]) - d;
                    assert!(
                        off.abs() <= 1e-9,
                        "cloud {i}, face {k}: a corner {off} off its plane"
                    );
                }
                for p in &pts {
                    assert!(
                        nrm.dot(*p) <= d + 1e-9,
                        "cloud {i}, face {k}: a point in front"
                    );
                }
            }
        }
    }
}
