//! Fidelity: how far a collider strays from its render mesh, measured on
//! samples of both surfaces (not estimated).

use crate::collider::note::Step;
use crate::geom::nearest::Nearest;
use crate::geom::topology::closed_and_volume;
use crate::geom::weld::WeldedMesh;
use glam::DVec3;

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
    /// Surface volume over render volume (render mesh closed), else over
    /// the remeshed volume.
    pub volume_ratio: f64,
    /// What was done, in order (welded, remeshed, simplified, convex
    /// hull, …).
    pub steps: Vec<Step>,
}

impl Fidelity {
    /// The two-sided Hausdorff distance.
    pub fn hausdorff(&self) -> f64 {
        self.render_to_collider.max(self.collider_to_render)
    }
}

/// Samples per surface for the fidelity measure (plus every vertex).
pub const SAMPLES: usize = 2048;

/// The fidelity of collider (`v`, `t`) to `render`.
pub fn measure(
    render: &WeldedMesh,
    near_render: &Nearest,
    v: &[[f32; 3]],
    t: &[[u32; 3]],
    reference_volume: f64,
    steps: Vec<Step>,
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
pub fn samples(vertices: &[[f32; 3]], triangles: &[[u32; 3]], n: usize, seed: u64) -> Vec<DVec3> {
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
