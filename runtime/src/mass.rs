//! Mass properties of a level's objects for a physics engine: mass,
//! centre of mass and inertia tensor of an object's solid at a density,
//! where the level baked it, exact for the archived shape. Volume
//! integrals over a closed surface by the divergence theorem, one signed
//! tetrahedron per triangle (Eberly, "Polyhedral Mass Properties
//! (Revisited)", 2002; Tonon, "Explicit Exact Formulas for the 3-D
//! Tetrahedron Inertia Tensor", 2004); closed forms for boxes, spheres and
//! capsules. An affine placement `x' = A x + t` maps the local moments:
//! volume by `|det A|`, centre to `A c + t`, second moment to
//! `|det A| A Σ Aᵀ`, so any placement (mirrored, non-uniform, sheared)
//! is exact.

use crate::level::Level;
use crate::object::ObjectId;
use glam::{DMat3, DVec3};
use kiln_formats::level::ArchivedCollider;

/// What a physics engine needs to simulate an object as one rigid body
/// (f64, in the level's world frame as baked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// The solid's volume (m³).
    pub volume: f64,
    /// Mass: density × volume (kg for a density in kg/m³).
    pub mass: f64,
    /// Centre of mass (world).
    pub centre: DVec3,
    /// Inertia tensor about the centre of mass, along the world axes
    /// (symmetric; kg·m²): Jolt's `MassProperties::mInertia` as it is,
    /// PhysX's after `PxDiagonalize`.
    pub inertia: DMat3,
}

/// Volume, first moment and second moment (`∫ x xᵀ`) of a solid.
#[derive(Clone, Copy, Debug)]
struct Moments {
    volume: f64,
    first: DVec3,
    second: DMat3,
}

impl Moments {
    /// The moments of the solid a closed, outward-facing triangle surface
    /// bounds: one tetrahedron from the origin per triangle, signed.
    fn of_surface(triangles: impl Iterator<Item = [DVec3; 3]>) -> Moments {
        // (not `Default`: glam's default matrix is the identity)
        let mut m = Moments {
            volume: 0.0,
            first: DVec3::ZERO,
            second: DMat3::ZERO,
        };
        for [a, b, c] in triangles {
            let v = a.dot(b.cross(c)) / 6.0;
            let s = a + b + c;
            m.volume += v;
            m.first += v * s / 4.0;
            // ∫ x xᵀ over the tetrahedron (0, a, b, c)
            let outer = |p: DVec3| DMat3::from_cols(p * p.x, p * p.y, p * p.z);
            m.second += (outer(a) + outer(b) + outer(c) + outer(s)) * (v / 20.0);
        }
        m
    }

    /// A box of half extents `h` centred on the origin.
    fn of_box(h: DVec3) -> Moments {
        let volume = 8.0 * h.x * h.y * h.z;
        Moments {
            volume,
            first: DVec3::ZERO,
            second: DMat3::from_diagonal(volume * h * h / 3.0),
        }
    }

    /// A capsule along y: radius `r`, inner segment of half length `hh`
    /// (a sphere when `hh` is 0), centred on the origin.
    fn of_capsule(hh: f64, r: f64) -> Moments {
        use std::f64::consts::PI;
        let (cylinder, ball) = (PI * r * r * 2.0 * hh, 4.0 / 3.0 * PI * r * r * r);
        // across the axis: the cylinder's r²/4, the two half balls' r²/5;
        // along it: the cylinder's hh²/3, each half ball moved out by hh
        // (its own centroid 3r/8 beyond the segment's end)
        let across = cylinder * r * r / 4.0 + ball * r * r / 5.0;
        let along = cylinder * hh * hh / 3.0 + ball * (hh * hh + 0.75 * hh * r + r * r / 5.0);
        Moments {
            volume: cylinder + ball,
            first: DVec3::ZERO,
            second: DMat3::from_diagonal(DVec3::new(across, along, across)),
        }
    }
}

impl Level {
    /// The mass properties of `object`'s solid at `density` where the level
    /// baked it, for a physics engine that simulates it as one body: its
    /// box, sphere, capsule, polytope or concave solid (the collider Kiln's
    /// queries answer on). `None` when `object` is not one of this level's,
    /// is a triangle mesh (static geometry: it bounds no solid), or has no
    /// volume, or when `density` is not a positive finite number.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/props.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let crate_ = level.find_object("l_crate").unwrap();
    /// let m = level.object_mass_properties(crate_, 1000.0).unwrap();
    /// // three cells of 0.5 m at 1000 kg/m³
    /// assert!((m.mass - 375.0).abs() < 1e-3 && (m.volume - 0.375).abs() < 1e-6);
    /// assert!(level.object_mass_properties(crate_, -1.0).is_none());
    /// ```
    pub fn object_mass_properties(&self, object: ObjectId, density: f64) -> Option<MassProperties> {
        if !density.is_finite() || density <= 0.0 {
            return None;
        }
        let inst = self.instance(object)?;
        let a = self.archive();
        let local = match &a.colliders[inst.collider.to_native() as usize] {
            ArchivedCollider::TriMesh(_) => return None,
            ArchivedCollider::Cuboid(c) => Moments::of_box(DVec3::from(
                c.half_extents.map(|x| f64::from(x.to_native())),
            )),
            ArchivedCollider::Sphere(s) => {
                Moments::of_capsule(0.0, f64::from(s.radius.to_native()))
            }
            ArchivedCollider::Capsule(c) => Moments::of_capsule(
                f64::from(c.half_height.to_native()),
                f64::from(c.radius.to_native()),
            ),
            ArchivedCollider::Polytope(p) => {
                let v =
                    |k: u32| DVec3::from(p.vertices[k as usize].map(|x| f64::from(x.to_native())));
                Moments::of_surface(p.fan_triangles().map(|t| t.map(v)))
            }
            ArchivedCollider::Bsp(b) => {
                let s = &b.surface;
                let v = |k: u32| DVec3::from(s.vertices.get(k).map(f64::from));
                Moments::of_surface(s.triangles().map(|(t, _)| t.map(v)))
            }
        };
        if local.volume.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let m = a.world_from_local(inst).map(f64::from);
        let lin = DMat3::from_cols(
            DVec3::new(m[0], m[4], m[8]),
            DVec3::new(m[1], m[5], m[9]),
            DVec3::new(m[2], m[6], m[10]),
        );
        let t = DVec3::new(m[3], m[7], m[11]);
        let scale = lin.determinant().abs();
        let c = local.first / local.volume;
        // the second moment about the local centre, then placed
        let about = local.second - local.volume * DMat3::from_cols(c * c.x, c * c.y, c * c.z);
        let sigma = lin * about * lin.transpose() * (scale * density);
        // exactly symmetric, whatever the products rounded
        let sigma = (sigma + sigma.transpose()) * 0.5;
        let trace = sigma.x_axis.x + sigma.y_axis.y + sigma.z_axis.z;
        Some(MassProperties {
            volume: local.volume * scale,
            mass: local.volume * scale * density,
            centre: lin * c + t,
            inertia: DMat3::from_diagonal(DVec3::splat(trace)) - sigma,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms_are_the_surface_integrals_of_the_same_solid() {
        // a box as 12 triangles against its closed form
        let h = DVec3::new(0.5, 1.0, 1.5);
        let corner = |i: u32| {
            DVec3::new(
                if i & 1 != 0 { h.x } else { -h.x },
                if i & 2 != 0 { h.y } else { -h.y },
                if i & 4 != 0 { h.z } else { -h.z },
            )
        };
        let faces = kiln_formats::primitive::Cuboid::FACES;
        let tris = faces
            .iter()
            .flat_map(|f| [[f[0], f[1], f[2]], [f[0], f[2], f[3]]].map(|t| t.map(corner)));
        let (a, b) = (Moments::of_surface(tris), Moments::of_box(h));
        assert!((a.volume - b.volume).abs() < 1e-12 && a.first.length() < 1e-12);
        assert!(
            a.second.abs_diff_eq(b.second, 1e-12),
            "{:?} {:?}",
            a.second,
            b.second
        );
        // a ball: I = 2/5 m r² about every axis
        let ball = Moments::of_capsule(0.0, 2.0);
        let want = 0.4 * ball.volume * 4.0;
        // ∫ x² = I/2 for a ball (I_xx = ∫ y² + z²)
        assert!((ball.second.x_axis.x - want / 2.0).abs() < 1e-9);
    }
}
