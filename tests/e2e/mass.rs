//! Mass properties (`Level::object_mass_properties`) against a brute-force
//! oracle: the object's solid sampled on a grid by the level's own
//! point-containment query, which the point oracles judge elsewhere;
//! every solid kind under rigid, scaled, non-uniform, mirrored and
//! sheared placements.

use glam::{DAffine3, DMat3, DVec3};
use kiln_baker::{BakeSettings, bake_scene};
use kiln_runtime::{Filter, Level};

/// Cells of the oracle's grid along each axis of an object's box.
const GRID: usize = 64;

/// One object of every collider kind ([`kiln_tests::every_kind_scene`]),
/// placed by `xf`.
fn every_kind(xf: DAffine3) -> Level {
    let scene = kiln_tests::every_kind_scene(xf);
    Level::from_bytes(&bake_scene(&scene, &BakeSettings::default()).bytes).unwrap()
}

/// Volume, centre and inertia (unit density) of object `i`, from the
/// centres of the grid cells the level says are inside it.
fn sampled(level: &Level, i: usize) -> (f64, DVec3, DMat3) {
    let tris = kiln_tests::object_triangles(level, i);
    let (lo, hi) = tris.iter().flatten().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    // a sphere's or capsule's drawn mesh may lie inside its surface
    let pad = 0.05 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let cell = (hi - lo) / GRID as f64;
    let id = level.object(i as u32).unwrap();
    let mut inside = Vec::new();
    for x in 0..GRID {
        for y in 0..GRID {
            for z in 0..GRID {
                let p = lo + cell * (DVec3::new(x as f64, y as f64, z as f64) + 0.5);
                if level
                    .contains_point(p.as_vec3(), &Filter::ALL)
                    .contains(&id)
                {
                    inside.push(p);
                }
            }
        }
    }
    let dv = cell.x * cell.y * cell.z;
    let volume = dv * inside.len() as f64;
    let centre = inside.iter().sum::<DVec3>() / inside.len().max(1) as f64;
    let mut sigma = DMat3::ZERO;
    for p in &inside {
        let d = *p - centre;
        sigma += DMat3::from_cols(d * d.x, d * d.y, d * d.z) * dv;
    }
    let trace = sigma.x_axis.x + sigma.y_axis.y + sigma.z_axis.z;
    (
        volume,
        centre,
        DMat3::from_diagonal(DVec3::splat(trace)) - sigma,
    )
}

#[test]
fn mass_properties_are_the_sampled_solid_s_under_every_placement() {
    let placements = kiln_tests::affine_placements();
    let mut worst = [0.0f64; 3];
    for (what, xf) in placements {
        let level = every_kind(xf);
        let kinds = kiln_tests::object_kinds(&level);
        for (i, (name, kind, _)) in kinds.iter().enumerate() {
            let id = level.object(i as u32).unwrap();
            let got = level.object_mass_properties(id, 2.0);
            if kind == "trimesh" {
                assert!(got.is_none(), "{what} {name}: a triangle mesh has no mass");
                continue;
            }
            let got = got.unwrap_or_else(|| panic!("{what} {name} ({kind}): no mass"));
            let (volume, centre, inertia) = sampled(&level, i);
            let size = kiln_tests::object_triangles(&level, i)
                .iter()
                .flatten()
                .fold(
                    (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
                    |(lo, hi), p| (lo.min(*p), hi.max(*p)),
                );
            let diagonal = (size.1 - size.0).length();
            let scale = inertia.x_axis.x + inertia.y_axis.y + inertia.z_axis.z;
            let errors = [
                (got.volume - volume).abs() / volume,
                (got.centre - centre).length() / diagonal,
                (got.inertia * 0.5 - inertia)
                    .to_cols_array()
                    .iter()
                    .fold(0.0f64, |m, x| m.max(x.abs()))
                    / scale,
            ];
            assert!(
                (got.mass - 2.0 * got.volume).abs() <= 1e-9 * got.mass,
                "{what} {name}"
            );
            for (w, e) in worst.iter_mut().zip(errors) {
                *w = w.max(e);
            }
            assert!(
                errors[0] < 0.02 && errors[1] < 0.002 && errors[2] < 0.015,
                "{what} {name} ({kind}): volume {} against {volume}, centre {} against {centre}, inertia {} against {inertia} (errors {errors:?})",
                got.volume,
                got.centre,
                got.inertia * 0.5
            );
        }
    }
    eprintln!(
        "worst relative errors: volume {:.4}, centre {:.4}, inertia {:.4}",
        worst[0], worst[1], worst[2]
    );
}
