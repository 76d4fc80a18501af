//! Rigid bodies authored in glTF physics (`KHR_physics_rigid_bodies`,
//! `OMI_physics_body`): which objects move as one, and the mass, centre of
//! mass and inertia the file gives, for a physics engine to take as they
//! are. Where the file leaves a value out, [`Level::authored_body_mass`]
//! computes it from the members' solids at a density, as
//! [`Level::object_mass_properties`] does for one object.

use crate::level::Level;
use crate::mass::MassProperties;
use crate::object::ObjectId;
use crate::shape::Pose;
use glam::{DMat3, DVec3, Quat, Vec3};
use kiln_formats::level::{
    AUTHORED_CENTRE, AUTHORED_INERTIA, AUTHORED_MASS, ArchivedBody, DYNAMIC, Motion,
};

/// A kinematic or dynamic rigid body authored in glTF physics: its
/// objects move as one, in its frame.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthoredBody<'a> {
    /// The body node's name.
    pub name: &'a str,
    /// Kinematic or dynamic.
    pub motion: Motion,
    /// The body's frame as baked (the rigid part of its node's world
    /// transform): a physics engine's body starts here, and each member
    /// keeps its placement relative to it.
    pub pose: Pose,
    /// Its objects, in object order (at least one).
    pub members: Vec<ObjectId>,
    /// The mass the file gives (kg).
    pub mass: Option<f32>,
    /// The centre of mass the file gives, in the body's frame.
    pub centre_of_mass: Option<Vec3>,
    /// The principal moments of inertia the file gives (kg·m²) and the
    /// rotation from their axes into the body's frame.
    pub inertia: Option<(Vec3, Quat)>,
}

impl<'a> AuthoredBody<'a> {
    fn of(b: &'a ArchivedBody) -> AuthoredBody<'a> {
        let authored = b.authored.to_native();
        let has = |bit: u32| authored & bit != 0;
        AuthoredBody {
            name: b.name.as_str(),
            motion: if b.motion.to_native() == DYNAMIC {
                Motion::Dynamic
            } else {
                Motion::Kinematic
            },
            pose: Pose::new(
                Quat::from_array(b.rotation.map(|x| x.to_native())),
                Vec3::from(b.translation.map(|x| x.to_native())),
            ),
            members: b
                .members
                .iter()
                .map(|m| ObjectId::level(m.to_native()))
                .collect(),
            mass: has(AUTHORED_MASS).then(|| b.mass.to_native()),
            centre_of_mass: has(AUTHORED_CENTRE)
                .then(|| Vec3::from(b.centre_of_mass.map(|x| x.to_native()))),
            inertia: has(AUTHORED_INERTIA).then(|| {
                (
                    Vec3::from(b.inertia_diagonal.map(|x| x.to_native())),
                    Quat::from_array(b.inertia_orientation.map(|x| x.to_native())),
                )
            }),
        }
    }
}

impl Level {
    /// The rigid bodies authored in glTF physics, in document order (index
    /// `k` is [`Level::authored_body`]'s). Objects authored as movers in
    /// other ways (`extras.motion`, a project rule) are bodies of one
    /// object each and not listed.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/bodies.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let dumbbell = level.authored_bodies().find(|b| b.name == "dumbbell").unwrap();
    /// assert_eq!(dumbbell.members.len(), 3); // a bar and two weights
    /// assert_eq!(dumbbell.mass, Some(12.0));
    /// ```
    pub fn authored_bodies(&self) -> impl ExactSizeIterator<Item = AuthoredBody<'_>> + '_ {
        self.archive().bodies.iter().map(AuthoredBody::of)
    }

    /// Authored body `k` (`None` past the last).
    pub fn authored_body(&self, k: usize) -> Option<AuthoredBody<'_>> {
        self.archive().bodies.get(k).map(AuthoredBody::of)
    }

    /// The authored body `object` belongs to, by index (a table of every
    /// object's body, made on the first call).
    pub fn authored_body_of(&self, object: ObjectId) -> Option<usize> {
        let k = *self.body_table().get(object.level_index()? as usize)?;
        (k != u32::MAX).then_some(k as usize)
    }

    /// How many objects authored body `k` has (0 past the last).
    pub fn authored_body_len(&self, k: usize) -> usize {
        self.archive().bodies.get(k).map_or(0, |b| b.members.len())
    }

    /// The mass properties of authored body `k` in the level's world frame
    /// as baked: each value the file gives, and the rest from its members'
    /// solids at `density` ([`Level::object_mass_properties`], summed with
    /// the parallel-axis rule). An authored mass without an authored
    /// inertia scales the computed inertia with it; an authored centre
    /// moves the computed inertia to it (parallel axes). `None` for a body
    /// the level does not have, a `density` that is not positive and
    /// finite, or when what the file leaves out cannot be computed (no
    /// member bounds a solid).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/bodies.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let k = level.authored_bodies().position(|b| b.name == "dumbbell").unwrap();
    /// let m = level.authored_body_mass(k, 1000.0).unwrap();
    /// assert_eq!(m.mass, 12.0); // as authored, whatever the density
    /// ```
    pub fn authored_body_mass(&self, k: usize, density: f64) -> Option<MassProperties> {
        if !density.is_finite() || density <= 0.0 {
            return None;
        }
        let b = self.authored_body(k)?;
        // the members' solids together
        let mut computed: Option<MassProperties> = None;
        for &m in &b.members {
            let Some(p) = self.object_mass_properties(m, density) else {
                continue;
            };
            computed = Some(match computed {
                None => p,
                Some(q) => combine(&q, &p),
            });
        }
        let r = DMat3::from_quat(b.pose.rotation.as_dquat());
        let origin = b.pose.translation.as_dvec3();
        let mass = b.mass.map(f64::from);
        let centre = b
            .centre_of_mass
            .map(|c| origin + r * c.as_dvec3())
            .or(computed.map(|c| c.centre))
            .unwrap_or(origin);
        let total = mass.or(computed.map(|c| c.mass))?;
        let inertia = match (b.inertia, computed) {
            (Some((d, q)), _) => {
                let axes = r * DMat3::from_quat(q.as_dquat().normalize());
                axes * DMat3::from_diagonal(d.as_dvec3()) * axes.transpose()
            }
            (None, Some(c)) => {
                let scale = if c.mass > 0.0 { total / c.mass } else { 1.0 };
                // about the computed centre, then moved to the body's
                shift(c.inertia * scale, total, centre - c.centre)
            }
            (None, None) => return None,
        };
        Some(MassProperties {
            volume: computed.map_or(0.0, |c| c.volume),
            mass: total,
            centre,
            inertia,
        })
    }
}

/// The inertia about a point `d` from the centre of mass, given `inertia`
/// about the centre (the parallel-axis rule).
fn shift(inertia: DMat3, mass: f64, d: DVec3) -> DMat3 {
    inertia
        + (DMat3::from_diagonal(DVec3::splat(d.length_squared()))
            - DMat3::from_cols(d * d.x, d * d.y, d * d.z))
            * mass
}

/// Two solids as one.
fn combine(a: &MassProperties, b: &MassProperties) -> MassProperties {
    let mass = a.mass + b.mass;
    let centre = (a.centre * a.mass + b.centre * b.mass) / mass;
    MassProperties {
        volume: a.volume + b.volume,
        mass,
        centre,
        inertia: shift(a.inertia, a.mass, a.centre - centre)
            + shift(b.inertia, b.mass, b.centre - centre),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_solids_combine_by_parallel_axes() {
        // two unit point-like masses 2 apart: I about the middle is m d² across
        let one = |x: f64| MassProperties {
            volume: 1.0,
            mass: 1.0,
            centre: DVec3::new(x, 0.0, 0.0),
            inertia: DMat3::ZERO,
        };
        let c = combine(&one(-1.0), &one(1.0));
        assert_eq!((c.mass, c.volume, c.centre), (2.0, 2.0, DVec3::ZERO));
        assert_eq!(c.inertia, DMat3::from_diagonal(DVec3::new(0.0, 2.0, 2.0)));
    }
}
