//! Watertight low-poly colliders from render meshes, with a measured error.
//!
//! Render meshes have UV seams, holes, open backs, doubled and internal
//! faces and far too many triangles; a concave collider must be closed,
//! consistently oriented and small. The steps:
//! 1. weld by position within a small tolerance (`1e-5` of the mesh's
//!    size), drop degenerate triangles, and cancel pairs of coincident
//!    faces of opposite orientation (internal walls);
//! 2. not closed (an edge not used exactly twice in opposite directions)
//!    and not ground (flat or huge: see `ground_like`) ⇒ remesh with meshoptimizer's voxel remesher (voxelise, flood-fill
//!    the outside, extract the surface, positions solved to fit the
//!    input), one voxel about the tolerance, at most 256 across;
//! 3. simplify with meshoptimizer (absolute error = the tolerance, target
//!    = the face budget: whichever binds first stops it), then check
//!    closed and oriented again: meshoptimizer does not promise it. On
//!    failure the budget doubles (a result with pinched edges — closed,
//!    but touching itself — is taken after two doublings rather than
//!    growing further); last resort the convex hull, with a warning. meshoptimizer's error is an estimate: when the
//!    measured distance (step 4) is over the tolerance, simplify again
//!    with its target scaled down by the overshoot (up to 4 rounds);
//! 4. measure, not estimate: sample both surfaces (every vertex and 2048
//!    area-stratified points each) and take the two-sided Hausdorff
//!    distance (render → collider and collider → render, each point's
//!    nearest distance found by Kiln's own triangle tree), the mean
//!    distance, and the volume ratio.

use crate::prepare::WeldedMesh;
use glam::DVec3;

/// Vertices and triangles.
type Mesh = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// What a concave collider is simplified to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColliderSettings {
    /// Largest distance, in mesh units, the collider may deviate from the
    /// render mesh.
    pub tolerance: f64,
    /// Face budget.
    pub max_faces: usize,
}

/// How close a collider is to the mesh it came from, measured on samples
/// of both surfaces.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Fidelity {
    /// Triangles in (welded render mesh).
    pub faces_in: usize,
    /// Triangles out (collider).
    pub faces_out: usize,
    /// Largest distance from a render-surface sample to the collider.
    pub render_to_collider: f64,
    /// Largest distance from a collider-surface sample to the render mesh.
    pub collider_to_render: f64,
    /// Mean distance over both sample sets.
    pub mean: f64,
    /// Collider volume over render volume (render mesh closed), else over
    /// the remeshed volume.
    pub volume_ratio: f64,
    /// What was done, in order (e.g. `welded`, `remeshed at 64³`,
    /// `simplified to 128 faces`, `convex hull`).
    pub steps: Vec<String>,
}

impl Fidelity {
    /// The two-sided Hausdorff distance.
    pub fn hausdorff(&self) -> f64 {
        self.render_to_collider.max(self.collider_to_render)
    }
}

/// A watertight collider mesh and how it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    /// Vertices.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles, counter-clockwise seen from outside; every edge used
    /// exactly twice, in opposite directions.
    pub triangles: Vec<[u32; 3]>,
    /// Measured error and steps.
    pub fidelity: Fidelity,
    /// The collider is the mesh's convex hull (the last resort): a
    /// polytope says it best.
    pub convex: bool,
    /// Edges used by four or more faces (the surface touches itself along
    /// them; still closed and consistently oriented, which is all a BSP
    /// tree needs). Zero unless the remesher left pinches that splitting
    /// could not undo.
    pub pinched_edges: usize,
}

/// Whether every edge is used exactly twice in opposite directions, and
/// the signed volume.
pub fn closed_and_volume(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> (bool, f64) {
    let p = |i: u32| DVec3::from(vertices[i as usize].map(f64::from));
    let volume = triangles
        .iter()
        .map(|t| p(t[0]).dot(p(t[1]).cross(p(t[2]))))
        .sum::<f64>()
        / 6.0;
    (pinched_edges(triangles) == Some(0), volume)
}

/// Directed edges `(a, b)` as sorted `a << 32 | b` keys.
fn directed_edges(triangles: &[[u32; 3]]) -> Vec<u64> {
    let mut e: Vec<u64> = triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (u64::from(t[k]) << 32) | u64::from(t[(k + 1) % 3])))
        .collect();
    e.sort_unstable();
    e
}

/// Welds positions closer than `eps` (snapped to a grid of that size),
/// drops degenerate triangles and cancels coincident opposite pairs.
fn weld_close(vertices: &[[f32; 3]], triangles: &[[u32; 3]], eps: f64) -> WeldedMesh {
    let mut map = std::collections::HashMap::new();
    let mut out_v: Vec<[f32; 3]> = Vec::new();
    let remap: Vec<u32> = vertices
        .iter()
        .map(|v| {
            let key = v.map(|c| (f64::from(c) / eps).round() as i64);
            *map.entry(key).or_insert_with(|| {
                out_v.push(*v);
                (out_v.len() - 1) as u32
            })
        })
        .collect();
    // a triangle keyed by its sorted corners: an opposite twin cancels it
    let mut seen: std::collections::HashMap<[u32; 3], Vec<usize>> = Default::default();
    let mut tris: Vec<Option<[u32; 3]>> = Vec::new();
    for t in triangles {
        let t = t.map(|i| remap[i as usize]);
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
            continue;
        }
        let mut key = t;
        key.sort_unstable();
        let twins = seen.entry(key).or_default();
        let opposite = twins
            .iter()
            .position(|&j| tris[j].is_some_and(|u| !same_winding(u, t)));
        match opposite {
            Some(k) => {
                let j = twins.swap_remove(k);
                tris[j] = None;
            }
            None if twins.iter().any(|&j| tris[j].is_some()) => {} // a duplicate
            None => {
                twins.push(tris.len());
                tris.push(Some(t));
            }
        }
    }
    let triangles: Vec<[u32; 3]> = tris.into_iter().flatten().collect();
    let (vertices, triangles) = compact(&out_v, &triangles);
    WeldedMesh {
        name: String::new(),
        source_ids: (0..triangles.len() as u32).collect(),
        vertices,
        triangles,
    }
}

/// Whether two triangles over the same three vertices wind the same way.
fn same_winding(a: [u32; 3], b: [u32; 3]) -> bool {
    let rot = |t: [u32; 3], k: usize| [t[k], t[(k + 1) % 3], t[(k + 2) % 3]];
    (0..3).any(|k| rot(a, k) == b)
}

/// Only the vertices `triangles` use, renumbered in first-use order.
fn compact(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Mesh {
    let mut map = vec![u32::MAX; vertices.len()];
    let mut out = Vec::new();
    let tris = triangles
        .iter()
        .map(|t| {
            t.map(|i| {
                let m = &mut map[i as usize];
                if *m == u32::MAX {
                    out.push(vertices[i as usize]);
                    *m = (out.len() - 1) as u32;
                }
                *m
            })
        })
        .collect();
    (out, tris)
}

/// Box of the vertices.
fn bounds(vertices: &[[f32; 3]]) -> (DVec3, DVec3) {
    vertices.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| {
            let p = DVec3::from(p.map(f64::from));
            (lo.min(p), hi.max(p))
        },
    )
}

/// Splits pinches: where a closed surface touches itself along an edge
/// (four faces on one edge, as marching cubes makes where two voxels meet
/// diagonally) or at a vertex, the sheets are separated by giving each its
/// own copies of the shared vertices, so every edge ends up used exactly
/// twice. Faces around a shared edge are paired by angle around it, each
/// with its neighbour of opposite direction. `None` if some directed edge
/// is used a different number of times than its reverse (the surface has
/// a hole, not a pinch).
fn make_manifold(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Option<Mesh> {
    // which way to pair is local guesswork: two solids touching along the
    // edge want their faces kept apart, two holes touching along it want
    // the opposite; the vertices at the edge's ends tell which was right
    // (their fans split only then), so edges still shared after a round
    // are paired the other way in the next
    let mut flipped = std::collections::HashSet::new();
    let mut last = None;
    for _ in 0..4 {
        let (v, t, orig) = split_pinches(vertices, triangles, &flipped)?;
        let mut count: std::collections::HashMap<(u32, u32), u32> = Default::default();
        for tri in &t {
            for k in 0..3 {
                *count.entry((tri[k], tri[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        let shared: Vec<(u32, u32)> = count
            .iter()
            .filter(|&(_, &n)| n > 1)
            .map(|(&(a, b), _)| {
                let (a, b) = (orig[a as usize], orig[b as usize]);
                (a.min(b), a.max(b))
            })
            .collect();
        if shared.is_empty() {
            return Some((v, t));
        }
        for e in shared {
            if !flipped.insert(e) {
                flipped.remove(&e);
            }
        }
        last = Some((v, t));
    }
    last
}

/// One round of [`make_manifold`]: pinches paired as `flipped` says,
/// vertices split by fan. Also returns each vertex's original index.
#[allow(clippy::type_complexity)]
fn split_pinches(
    vertices: &[[f32; 3]],
    triangles: &[[u32; 3]],
    flipped: &std::collections::HashSet<(u32, u32)>,
) -> Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, Vec<u32>)> {
    use std::collections::HashMap;
    // faces on each undirected edge: (face, corner k of the edge k→k+1)
    let mut on_edge: HashMap<(u32, u32), Vec<(usize, usize)>> = HashMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            on_edge
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push((f, k));
        }
    }
    let p = |i: u32| DVec3::from(vertices[i as usize].map(f64::from));
    // partner[f][k]: the face across edge k of face f
    let mut partner = vec![[usize::MAX; 3]; triangles.len()];
    for (&(a, b), faces) in &on_edge {
        let forward: Vec<_> = faces
            .iter()
            .filter(|&&(f, k)| triangles[f][k] == a)
            .collect();
        if forward.len() * 2 != faces.len() {
            return None;
        }
        if faces.len() == 2 {
            let ((f0, k0), (f1, k1)) = (faces[0], faces[1]);
            partner[f0][k0] = f1;
            partner[f1][k1] = f0;
            continue;
        }
        // order the faces by the angle of their third corner around a→b
        let axis = (p(b) - p(a)).normalize_or_zero();
        let u = axis.any_orthonormal_vector();
        let w = axis.cross(u);
        let mut sorted: Vec<(f64, usize, usize)> = faces
            .iter()
            .map(|&(f, k)| {
                let c = p(triangles[f][(k + 2) % 3]) - p(a);
                (c.dot(w).atan2(c.dot(u)), f, k)
            })
            .collect();
        sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        // around a clean pinch the directions alternate. A forward face's
        // solid side is at lower angles: pairing each reverse face with the
        // next forward face going around keeps the solids on either side
        // apart; flipped, each forward face goes with the next reverse one
        // (folds from the remesher's position solve can break the
        // alternation; the pairing still closes the surface)
        let n = sorted.len();
        let first_fwd = !flipped.contains(&(a, b));
        let start = (0..n).find(|&i| (triangles[sorted[i].1][sorted[i].2] == a) != first_fwd)?;
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut pairs = Vec::new();
        for j in 0..n {
            let (_, f, k) = sorted[(start + j) % n];
            let fwd = triangles[f][k] == a;
            match open.last() {
                Some(&(g, l)) if (triangles[g][l] == a) != fwd => {
                    open.pop();
                    pairs.push(((g, l), (f, k)));
                }
                _ => open.push((f, k)),
            }
        }
        if !open.is_empty() {
            return None;
        }
        for ((f0, k0), (f1, k1)) in pairs {
            partner[f0][k0] = f1;
            partner[f1][k1] = f0;
        }
    }
    // each vertex: its faces grouped into fans joined through partners;
    // every fan after the first gets a copy of the vertex
    let mut out_v = vertices.to_vec();
    let mut orig: Vec<u32> = (0..vertices.len() as u32).collect();
    let mut out_t = triangles.to_vec();
    let mut around: HashMap<u32, Vec<usize>> = HashMap::new();
    for (f, t) in triangles.iter().enumerate() {
        for &v in t {
            around.entry(v).or_default().push(f);
        }
    }
    let mut keys: Vec<u32> = around.keys().copied().collect();
    keys.sort_unstable();
    for v in keys {
        let faces = &around[&v];
        if faces.len() < 3 {
            continue;
        }
        let mut fan_of: HashMap<usize, usize> = HashMap::new();
        let mut fans = 0;
        for &f0 in faces {
            if fan_of.contains_key(&f0) {
                continue;
            }
            let mut stack = vec![f0];
            fan_of.insert(f0, fans);
            while let Some(f) = stack.pop() {
                let t = triangles[f];
                let c = t.iter().position(|&x| x == v)?;
                // the two edges of f at v: edge c (v→next) and edge c+2 (prev→v)
                for k in [c, (c + 2) % 3] {
                    let g = partner[f][k];
                    if g != usize::MAX && !fan_of.contains_key(&g) && triangles[g].contains(&v) {
                        fan_of.insert(g, fans);
                        stack.push(g);
                    }
                }
            }
            fans += 1;
        }
        if fans > 1 {
            let copies: Vec<u32> = (1..fans)
                .map(|_| {
                    out_v.push(vertices[v as usize]);
                    orig.push(v);
                    (out_v.len() - 1) as u32
                })
                .collect();
            for (&f, &fan) in &fan_of {
                if fan > 0 {
                    for x in out_t[f].iter_mut() {
                        if *x == v {
                            *x = copies[fan - 1];
                        }
                    }
                }
            }
        }
    }
    Some((out_v, out_t, orig))
}

/// The finest remeshing grid: 128 voxels across (meshoptimizer takes up to
/// 256, but at 200 the damaged-helmet sample took 2.2 s per attempt and
/// made 400,000 triangles; a collider is simplified to about a hundred).
pub const MAX_RESOLUTION: f64 = 128.0;

/// The number of edges used by more than two faces, if every directed edge
/// is used exactly as often as its reverse (the surface bounds a solid:
/// no boundary, consistently oriented); `None` if some is not (a hole or
/// a flipped face).
pub fn pinched_edges(triangles: &[[u32; 3]]) -> Option<usize> {
    if triangles.is_empty() {
        return None;
    }
    let edges = directed_edges(triangles);
    // runs of equal keys: (edge, count)
    let mut runs: Vec<(u64, u32)> = Vec::with_capacity(edges.len());
    for e in edges {
        match runs.last_mut() {
            Some((k, n)) if *k == e => *n += 1,
            _ => runs.push((e, 1)),
        }
    }
    let mut pinched = 0;
    for &(e, n) in &runs {
        let (a, b) = (e >> 32, e & 0xffff_ffff);
        let reverse = (b << 32) | a;
        let back = runs
            .binary_search_by_key(&reverse, |r| r.0)
            .map_or(0, |i| runs[i].1);
        if back != n {
            return None;
        }
        pinched += usize::from(n > 1 && a < b);
    }
    Some(pinched)
}

/// The remesher's grid size for `tolerance`: one voxel about the
/// tolerance along the longest side, at least 16 (small objects), at most
/// [`MAX_RESOLUTION`], within the 4..=256 meshoptimizer accepts (its checks are compiled out of release builds, so the range
/// is enforced here).
pub fn remesh_resolution(extent: f64, tolerance: f64) -> u32 {
    let r = (2.0 * extent / tolerance.max(1e-9)).ceil();
    if r.is_finite() {
        r.clamp(16.0, MAX_RESOLUTION) as u32
    } else {
        MAX_RESOLUTION as u32
    }
}

/// Remeshes `mesh` at about `res` voxels across: the first of three
/// nearby resolutions whose surface, after pinches are split, is closed
/// with every edge used twice (the pinches the split cannot undo depend on
/// how the grid falls), else the one with the fewest pinched edges.
/// Returns the resolution, the mesh, its pinched edges (`None`: not
/// closed), and its volume.
fn remesh(mesh: &WeldedMesh, res: u32, size: f64) -> (u32, WeldedMesh, Option<usize>, f64) {
    let extent = {
        let (lo, hi) = bounds(&mesh.vertices);
        (hi - lo).max_element()
    };
    let mut best: Option<(u32, WeldedMesh, Option<usize>, f64)> = None;
    for delta in [0i32, -1, 1] {
        let r = (res as i32 + delta).clamp(8, 256) as u32;
        // the remesher puts one vertex in each voxel, so a wall one voxel
        // thick comes out as two coincident sheets facing away from each
        // other, which enclose nothing (and cancel): every face is
        // voxelised three times, also pushed 0.75 voxel out along its
        // normal both ways, so that walls are at least two voxels thick
        let voxel = extent / (r as f64 - 2.0).max(1.0);
        let (vertices, flat) = thickened(mesh, 0.75 * voxel);
        let corners = meshopt::remesh_decoder(&flat, &vertices, r, meshopt::RemeshOptions::Solve);
        let tris: Vec<[u32; 3]> = (0..corners.len() as u32 / 3)
            .map(|k| [3 * k, 3 * k + 1, 3 * k + 2])
            .collect();
        let mut w = weld_close(&corners, &tris, 1e-7 * size);
        let mut pinched = pinched_edges(&w.triangles);
        if pinched.is_some_and(|p| p > 0)
            && let Some((v, t)) = make_manifold(&w.vertices, &w.triangles)
        {
            pinched = pinched_edges(&t);
            (w.vertices, w.triangles) = (v, t);
        }
        let (_, volume) = closed_and_volume(&w.vertices, &w.triangles);
        let rank = |p: Option<usize>| p.map_or(usize::MAX, |p| p);
        if pinched == Some(0) && volume != 0.0 {
            return (r, w, pinched, volume);
        }
        if best.as_ref().is_none_or(|b| rank(pinched) < rank(b.2)) && volume != 0.0 {
            best = Some((r, w, pinched, volume));
        }
    }
    best.unwrap_or((res, WeldedMesh::default(), None, 0.0))
}

/// The mesh's triangles, and each also moved by `d` along its normal
/// both ways, as a vertex list and flat indices (for voxelising).
fn thickened(mesh: &WeldedMesh, d: f64) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut v = mesh.vertices.clone();
    let mut idx: Vec<u32> = mesh.triangles.iter().flatten().copied().collect();
    for t in &mesh.triangles {
        let p = t.map(|i| DVec3::from(mesh.vertices[i as usize].map(f64::from)));
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        if n == DVec3::ZERO {
            continue;
        }
        for s in [d, -d] {
            for q in p {
                idx.push(v.len() as u32);
                v.push((q + n * s).as_vec3().to_array());
            }
        }
    }
    (v, idx)
}

/// Most triangles an open mesh may have to be remeshed into a concave
/// solid: more is a level shell or terrain.
pub const REMESH_MAX_TRIANGLES: usize = 65_536;

/// Why an open mesh is ground rather than an object to close: flat (its
/// thickness along its mean normal under 2% of its longest side: floors,
/// terrain, wall panels) or huge (more than [`REMESH_MAX_TRIANGLES`]).
/// Asked of open meshes only.
fn ground_like(welded: &WeldedMesh) -> Option<String> {
    if welded.triangles.len() > REMESH_MAX_TRIANGLES {
        return Some(format!(
            "open with {} triangles (a level shell or terrain)",
            welded.triangles.len()
        ));
    }
    // thickness along the area-weighted mean normal against the extent
    let p = |i: u32| DVec3::from(welded.vertices[i as usize].map(f64::from));
    let n = welded
        .triangles
        .iter()
        .map(|t| (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])))
        .sum::<DVec3>()
        .normalize_or_zero();
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let (mut a, mut b) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in &welded.vertices {
        let v = DVec3::from(v.map(f64::from));
        lo = lo.min(v);
        hi = hi.max(v);
        a = a.min(n.dot(v));
        b = b.max(n.dot(v));
    }
    let flat = n != DVec3::ZERO && (b - a) < 0.02 * (hi - lo).max_element();
    flat.then(|| "open and flat (a floor or terrain)".into())
}

/// A closed, outward mesh from `mesh`, simplified within `s`, or why not
/// (the caller keeps a triangle mesh).
pub fn watertight(mesh: &WeldedMesh, s: ColliderSettings) -> Result<Collider, String> {
    let (lo, hi) = bounds(&mesh.vertices);
    let extent = (hi - lo).max_element();
    if mesh.triangles.is_empty() || !extent.is_finite() || extent <= 0.0 {
        return Err("no triangles with extent".into());
    }
    let mut steps = Vec::new();
    let size = lo.abs().max(hi.abs()).max_element().max(extent);
    let welded = weld_close(&mesh.vertices, &mesh.triangles, 1e-5 * size);
    if welded.vertices.len() < mesh.vertices.len() || welded.triangles.len() < mesh.triangles.len()
    {
        steps.push(format!(
            "welded ({} → {} vertices, {} → {} faces)",
            mesh.vertices.len(),
            welded.vertices.len(),
            mesh.triangles.len(),
            welded.triangles.len()
        ));
    }
    let (mut closed, mut volume) = closed_and_volume(&welded.vertices, &welded.triangles);
    let mut welded = welded;
    if !closed && let Some((v, t)) = make_manifold(&welded.vertices, &welded.triangles) {
        let (c, vol) = closed_and_volume(&v, &t);
        if c {
            steps.push("pinched edges split".into());
            (closed, volume) = (c, vol);
            (welded.vertices, welded.triangles) = (v, t);
        }
    }
    let (base_v, base_t, reference_volume) = if closed && volume > 0.0 {
        (welded.vertices, welded.triangles, volume)
    } else if closed && volume < 0.0 {
        steps.push("turned outward".into());
        let t = welded
            .triangles
            .iter()
            .map(|t| [t[0], t[2], t[1]])
            .collect();
        (welded.vertices, t, -volume)
    } else {
        if let Some(why) = ground_like(&welded) {
            return Err(why);
        }
        let (res, w, pinched, volume) = remesh(mesh, remesh_resolution(extent, s.tolerance), size);
        steps.push(format!(
            "remeshed at {res}³ ({} faces{})",
            w.triangles.len(),
            match pinched {
                None => ", not closed".to_string(),
                Some(0) => String::new(),
                Some(p) => format!(", {p} pinched edges"),
            }
        ));
        if pinched.is_none() || volume == 0.0 {
            return hull_fallback(mesh, steps, "the remeshed surface is not closed");
        }
        if volume < 0.0 {
            let t = w.triangles.iter().map(|t| [t[0], t[2], t[1]]).collect();
            (w.vertices, t, -volume)
        } else {
            (w.vertices, w.triangles, volume)
        }
    };
    let flat: Vec<u32> = base_t.iter().flatten().copied().collect();
    let near_render = Nearest::new(&mesh.vertices, &mesh.triangles);
    // meshoptimizer's error is a quadric estimate: when the measured
    // distance exceeds the tolerance, simplify again with a target scaled
    // down by what was measured (a few times), keeping the best result
    let mut target = s.tolerance;
    let mut best: Option<Collider> = None;
    for _ in 0..4 {
        let Some((v, t, pinched)) = simplify_closed(&flat, &base_v, s.max_faces, target) else {
            break;
        };
        let mut steps = steps.clone();
        if t.len() < base_t.len() {
            steps.push(format!("simplified to {} faces", t.len()));
        }
        if pinched > 0 {
            steps.push(format!(
                "{pinched} pinched edges (closed, but touching itself there)"
            ));
        }
        let fidelity = measure(mesh, &near_render, &v, &t, reference_volume, steps);
        let h = fidelity.hausdorff();
        let reduced = t.len() < base_t.len();
        // fewer pinches first, then the smaller error
        let key = |p: usize, h: f64| (p, h);
        if best
            .as_ref()
            .is_none_or(|b| key(pinched, h) < key(b.pinched_edges, b.fidelity.hausdorff()))
        {
            best = Some(Collider {
                vertices: v,
                triangles: t,
                fidelity,
                convex: false,
                pinched_edges: pinched,
            });
        }
        if h <= s.tolerance || !reduced {
            break;
        }
        target *= 0.8 * s.tolerance / h;
    }
    match best {
        Some(c) => Ok(c),
        None => hull_fallback(mesh, steps, "simplification did not stay closed"),
    }
}

/// Simplifies a closed mesh within `target` (absolute) towards `max_faces`;
/// while the result is not closed, outward and free of pinched edges, the
/// budget doubles. The first pinch-free result within four times the
/// budget wins; past that, a closed result with pinches (the fewest) is
/// taken rather than growing the collider further (a pinch costs the BSP
/// tree nothing; thousands of faces cost every query); only when none
/// was closed does the budget keep doubling (up to 32 times). Returns the
/// mesh and its pinched edges; `None` if nothing was closed.
#[allow(clippy::type_complexity)]
fn simplify_closed(
    flat: &[u32],
    vertices: &[[f32; 3]],
    max_faces: usize,
    target: f64,
) -> Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, usize)> {
    let mut budget = max_faces.max(4);
    let mut best: Option<(Vec<[f32; 3]>, Vec<[u32; 3]>, usize)> = None;
    for round in 0..6 {
        let idx = meshopt::simplify_decoder(
            flat,
            vertices,
            (budget * 3).min(flat.len()),
            target as f32,
            meshopt::SimplifyOptions::ErrorAbsolute,
            None,
        );
        let tris: Vec<[u32; 3]> = idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let (v, t) = compact(vertices, &tris);
        let (_, vol) = closed_and_volume(&v, &t);
        if vol > 0.0
            && let Some(p) = pinched_edges(&t)
        {
            if p == 0 {
                return Some((v, t, 0));
            }
            if best.as_ref().is_none_or(|b| p < b.2) {
                best = Some((v, t, p));
            }
        }
        if round >= 2 && best.is_some() {
            break;
        }
        budget *= 2;
    }
    best
}

/// The convex hull as the collider of last resort.
fn hull_fallback(mesh: &WeldedMesh, mut steps: Vec<String>, why: &str) -> Result<Collider, String> {
    let pts: Vec<DVec3> = mesh
        .vertices
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    let h = crate::build::hull::hull(&pts).ok_or_else(|| format!("{why}, and no convex hull"))?;
    let vertices: Vec<[f32; 3]> = h.vertices.iter().map(|v| v.as_vec3().to_array()).collect();
    let triangles: Vec<[u32; 3]> = h
        .faces
        .iter()
        .flat_map(|(lp, _, _)| (1..lp.len() - 1).map(move |j| [lp[0], lp[j], lp[j + 1]]))
        .collect();
    steps.push(format!("convex hull ({why})"));
    let volume = h.volume();
    let near_render = Nearest::new(&mesh.vertices, &mesh.triangles);
    let fidelity = measure(mesh, &near_render, &vertices, &triangles, volume, steps);
    Ok(Collider {
        vertices,
        triangles,
        fidelity,
        convex: true,
        pinched_edges: 0,
    })
}

/// Samples per surface for the fidelity measure (plus every vertex).
const SAMPLES: usize = 2048;

/// The fidelity of collider (`v`, `t`) to `render`.
fn measure(
    render: &WeldedMesh,
    near_render: &Nearest,
    v: &[[f32; 3]],
    t: &[[u32; 3]],
    reference_volume: f64,
    steps: Vec<String>,
) -> Fidelity {
    let a = samples(&render.vertices, &render.triangles, SAMPLES, 0x5eed);
    let b = samples(v, t, SAMPLES, 0xfeed);
    let near_collider = Nearest::new(v, t);
    let da: Vec<f64> = a.iter().map(|p| near_collider.distance(*p)).collect();
    let db: Vec<f64> = b.iter().map(|p| near_render.distance(*p)).collect();
    let (_, vol) = closed_and_volume(v, t);
    Fidelity {
        faces_in: render.triangles.len(),
        faces_out: t.len(),
        render_to_collider: da.iter().copied().fold(0.0, f64::max),
        collider_to_render: db.iter().copied().fold(0.0, f64::max),
        mean: (da.iter().sum::<f64>() + db.iter().sum::<f64>())
            / (da.len() + db.len()).max(1) as f64,
        volume_ratio: if reference_volume > 0.0 {
            vol / reference_volume
        } else {
            0.0
        },
        steps,
    }
}

/// Every vertex used by `triangles` and `n` area-weighted points of them
/// (deterministic).
fn samples(vertices: &[[f32; 3]], triangles: &[[u32; 3]], n: usize, seed: u64) -> Vec<DVec3> {
    let tris: Vec<[DVec3; 3]> = triangles
        .iter()
        .map(|t| t.map(|i| DVec3::from(vertices[i as usize].map(f64::from))))
        .collect();
    let mut used = vec![false; vertices.len()];
    for t in triangles {
        for &i in t {
            used[i as usize] = true;
        }
    }
    let mut out: Vec<DVec3> = vertices
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(v, _)| DVec3::from(v.map(f64::from)))
        .collect();
    let areas: Vec<f64> = tris
        .iter()
        .map(|t| (t[1] - t[0]).cross(t[2] - t[0]).length() * 0.5)
        .collect();
    let total: f64 = areas.iter().sum();
    if total <= 0.0 {
        return out;
    }
    let mut rng = seed;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    // stratified over the cumulative area
    let mut acc = 0.0;
    let mut k = 0usize;
    for (t, a) in tris.iter().zip(&areas) {
        acc += a;
        while k < n && (k as f64 + 0.5) / n as f64 * total <= acc {
            let (mut u, mut w) = (next(), next());
            if u + w > 1.0 {
                u = 1.0 - u;
                w = 1.0 - w;
            }
            out.push(t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * w);
            k += 1;
        }
    }
    out
}

/// Distances to a triangle surface, answered by Kiln's own triangle tree
/// (the runtime's nearest-first closest-point walk on an in-memory bake).
struct Nearest {
    level: kiln_runtime::Level,
    /// A radius that reaches the whole surface from anywhere measured.
    reach: f32,
}

impl Nearest {
    fn new(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let (lo, hi) = bounds(vertices);
        let scene = crate::Scene::from_meshes(vec![crate::SceneMesh::new(
            "surface",
            vertices.to_vec(),
            triangles,
        )]);
        let baked = crate::bake_scene(&scene, &crate::BakeSettings::default().all_meshes());
        let level =
            kiln_runtime::Level::from_bytes(&baked.bytes).expect("the baker's own archive opens");
        Nearest {
            level,
            reach: (4.0 * (hi - lo).length() + 1.0) as f32,
        }
    }

    /// Distance from `p` to the surface.
    fn distance(&self, p: DVec3) -> f64 {
        let c = p.as_vec3();
        self.level
            .overlap_sphere(c, self.reach)
            .iter()
            .map(|o| o.point.as_dvec3().distance(c.as_dvec3()))
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_box_is_remeshed_closed_and_measured() {
        // a cube missing its top: not closed
        let v: Vec<[f32; 3]> = (0..8)
            .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32])
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
        ];
        let t: Vec<[u32; 3]> = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        let mesh = WeldedMesh {
            name: "open".into(),
            source_ids: (0..t.len() as u32).collect(),
            vertices: v,
            triangles: t,
        };
        let c = watertight(
            &mesh,
            ColliderSettings {
                tolerance: 0.05,
                max_faces: 64,
            },
        )
        .unwrap();
        let (closed, vol) = closed_and_volume(&c.vertices, &c.triangles);
        assert!(closed && vol > 0.0);
        assert!(
            c.fidelity.steps.iter().any(|s| s.starts_with("remeshed")),
            "{:?}",
            c.fidelity.steps
        );
        assert!(c.triangles.len() <= 64 * 32);
        // the walls come out about a voxel thick (40 across at 5 cm)
        assert!(c.fidelity.hausdorff() < 0.06, "{:?}", c.fidelity);
    }

    #[test]
    fn internal_twin_faces_cancel() {
        let v = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let w = weld_close(&v, &[[0, 1, 2], [0, 2, 1], [1, 2, 0]], 1e-6);
        assert_eq!(
            w.triangles.len(),
            1,
            "one pair cancelled, the rotation kept"
        );
    }
}
