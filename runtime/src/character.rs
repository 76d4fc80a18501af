//! A kinematic character controller: a convex shape (an upright capsule
//! by default) moved through a level by "collide and slide" — cast along
//! the motion, stop at the first contact, slide the rest along what was
//! hit, a few times over (Fauerby, "Improved Collision detection and
//! Response", 2003) — with ground, slopes, stairs and snapping in the
//! manner of Jolt's `CharacterVirtual` (Rouwé, Jolt Physics, 2022).
//!
//! Everything rests on [`Level::cast`](crate::Level::cast) with
//! [`CastOptions::ignore_leaving`]: a contact the character moves away
//! from or along never stops it, so resting on a floor or touching a wall
//! never sticks, and flat edges baked into the archive keep tessellated
//! floors and seams between objects smooth. Casts are continuous, so no
//! motion, however long, passes through anything.
//!
//! ```
//! # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
//! use kiln_runtime::character::{Character, Ground};
//! use kiln_runtime::{Filter, Vec3};
//! let player = Character::capsule(0.3, 0.6);
//! let mut at = Vec3::new(12.0, 2.0, 5.0);
//! for _ in 0..60 {
//!     // walk forward 3 m/s and fall under gravity, one 60 Hz frame
//!     let step = player.move_and_slide(&level, at, Vec3::new(0.0, -9.8, 3.0) / 60.0, &Filter::ALL);
//!     at = step.position;
//!     if let Ground::OnGround(g) = step.ground {
//!         println!("standing on {} at {at}", level.object_name(g.object).unwrap_or_default());
//!     }
//! }
//! assert!((at.y - 0.9).abs() < 0.01 && at.z > 7.5);
//! ```

use crate::filter::Filter;
use crate::object::ObjectId;
use crate::query::{CastOptions, Ray, ShapeCast, ShapeHit};
use crate::shape::{Pose, QueryShape};
use crate::{Quat, Vec3, World};

/// What a character moves through: any [`Space`] — a [`Level`](crate::Level), or a
/// [`World`] and the bodies that move in it, or a reference or `Arc` of
/// either.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::Character;
/// use kiln_runtime::{Filter, Vec3, World};
/// use std::sync::Arc;
/// let player = Character::capsule(0.3, 0.6);
/// let (at, fall) = (Vec3::new(12.0, 1.0, 5.0), Vec3::new(0.0, -0.2, 0.0));
/// let shared = Arc::new(level);
/// let world = World::new(shared.clone());
/// let by_ref: &kiln_runtime::Level = &shared;
/// let a = player.move_and_slide(&shared, at, fall, &Filter::ALL).position; // an Arc<Level>
/// let b = player.move_and_slide(&by_ref, at, fall, &Filter::ALL).position; // a &&Level
/// let c = player.move_and_slide(&world, at, fall, &Filter::ALL).position; // a World
/// assert!(a == b && b == c && (a.y - 0.9).abs() < 1e-3);
/// ```
pub use crate::space::Space;

/// How a character moves; [`CharacterSettings::default`] suits a
/// human-sized capsule in metres.
///
/// ```
/// use kiln_runtime::Vec3;
/// use kiln_runtime::character::{Character, CharacterSettings};
/// let s = CharacterSettings::default();
/// assert_eq!((s.up, s.skin, s.step_height, s.max_iterations), (Vec3::Y, 0.01, 0.3, 8));
/// assert!((s.max_slope.to_degrees() - 50.0).abs() < 1e-4);
/// // a nimbler character: higher steps, steeper slopes
/// let mut climber = Character::capsule(0.3, 0.6);
/// climber.settings = CharacterSettings { step_height: 0.45, max_slope: 60f32.to_radians(), ..s };
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterSettings {
    /// The up direction (unit length; default +Y).
    pub up: Vec3,
    /// How deep the character may be inside geometry before it is pushed
    /// out (default 0.01 m). Casts keep it at contact, not inside; this
    /// only absorbs rounding and geometry that moved into it.
    pub skin: f32,
    /// The steepest ground it stands and walks on, in radians from
    /// horizontal (default 50°). Steeper ground is a wall to walk into
    /// and a slope to slide down.
    pub max_slope: f32,
    /// The highest step it walks up (default 0.3 m); higher ones block.
    pub step_height: f32,
    /// How deep a step's top must be, beyond where the character first
    /// touches it, to be stepped onto (default 0.05 m): a thin ledge is a
    /// wall.
    pub min_step_tread: f32,
    /// How far down it follows the ground after a move that left it in
    /// the air while it was on the ground before and not moving up
    /// (walking down slopes and steps; default 0.3 m).
    pub snap_distance: f32,
    /// Most slides per move (default 8).
    pub max_iterations: u32,
}

impl Default for CharacterSettings {
    fn default() -> Self {
        CharacterSettings {
            up: Vec3::Y,
            skin: 0.01,
            max_slope: 50f32.to_radians(),
            step_height: 0.3,
            min_step_tread: 0.05,
            snap_distance: 0.3,
            max_iterations: 8,
        }
    }
}

/// What the character stands on.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::{Character, Ground};
/// use kiln_runtime::{Filter, Vec3};
/// let player = Character::capsule(0.3, 0.6);
/// // standing on the floor at (12, 0, 5)
/// let m = player.move_and_slide(&level, Vec3::new(12.0, 0.9, 5.0), Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
/// let Ground::OnGround(support) = m.ground else { panic!("{:?}", m.ground) };
/// assert!(support.normal.abs_diff_eq(Vec3::Y, 1e-5) && support.point.y.abs() < 1e-3);
/// assert!(level.object_name(support.object).is_some_and(|n| n.starts_with("floor")));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Support {
    /// Contact point on the ground.
    pub point: Vec3,
    /// The ground's surface normal there (unit; for a contact on an edge,
    /// the face below the contact point where there is one).
    pub normal: Vec3,
    /// The ground object.
    pub object: ObjectId,
}

/// The character's ground state after a move.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::{Character, Ground};
/// use kiln_runtime::{Filter, Vec3};
/// let player = Character::capsule(0.3, 0.6);
/// // dropped above the 60° ramp (at z = 14, rising from x = 4): it lands on
/// // ground too steep to stand on
/// let mut at = Vec3::new(5.0, 4.0, 14.0);
/// let mut ground = Ground::InAir;
/// for _ in 0..60 {
///     let m = player.move_and_slide(&level, at, Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
///     (at, ground) = (m.position, m.ground);
///     if ground != Ground::InAir {
///         break;
///     }
/// }
/// let Ground::OnSteepGround(s) = ground else { panic!("{ground:?}") };
/// assert!((s.normal.angle_between(Vec3::Y).to_degrees() - 60.0).abs() < 0.1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ground {
    /// Nothing below within a hair: falling or jumping.
    InAir,
    /// On walkable ground (no steeper than [`CharacterSettings::max_slope`]).
    OnGround(Support),
    /// On ground too steep to stand on: it slides down.
    OnSteepGround(Support),
}

/// A contact met while moving.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::Character;
/// use kiln_runtime::{Filter, Vec3};
/// // walking into the wall at x = 16 for a frame
/// let player = Character::capsule(0.3, 0.6);
/// let m = player.move_and_slide(&level, Vec3::new(15.5, 0.9, 12.0), Vec3::new(0.5, -0.1, 0.0), &Filter::ALL);
/// let wall = level.find_object("wall").unwrap();
/// let hit = m.hits.iter().find(|h| h.object == wall).unwrap();
/// assert!(hit.normal.abs_diff_eq(Vec3::NEG_X, 1e-4) && (hit.point.x - 16.0).abs() < 1e-3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterHit {
    /// Contact point on the object.
    pub point: Vec3,
    /// Unit normal from the object towards the character.
    pub normal: Vec3,
    /// The object touched.
    pub object: ObjectId,
}

/// The outcome of [`Character::move_and_slide`].
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::{Character, Ground};
/// use kiln_runtime::{Filter, Vec3};
/// // diagonally into the wall: stopped in x, sliding on in z, still on the floor
/// let player = Character::capsule(0.3, 0.6);
/// let m = player.move_and_slide(&level, Vec3::new(15.5, 0.9, 12.0), Vec3::new(0.5, -0.1, 0.5), &Filter::ALL);
/// assert!((m.position.x - 15.7).abs() < 0.02 && (m.position.z - 12.5).abs() < 0.02);
/// assert!(matches!(m.ground, Ground::OnGround(_)) && !m.hits.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// Where the character ended up.
    pub position: Vec3,
    /// What it stands on there.
    pub ground: Ground,
    /// The contacts that stopped or turned it, in order (pushes out of
    /// geometry included).
    pub hits: Vec<CharacterHit>,
}

/// A character: a convex query shape, its rotation and its settings.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::character::{Character, CharacterSettings, Ground};
/// use kiln_runtime::{Filter, Quat, QueryShape, Vec3};
/// // a rolling ball as a character: any convex query shape will do
/// let ball = Character {
///     shape: QueryShape::Sphere { radius: 0.4 },
///     rotation: Quat::IDENTITY,
///     settings: CharacterSettings::default(),
/// };
/// let m = ball.move_and_slide(&level, Vec3::new(12.0, 0.45, 5.0), Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
/// assert!((m.position.y - 0.4).abs() < 0.02 && matches!(m.ground, Ground::OnGround(_)));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Character<'a> {
    /// The shape, centred on the character's position.
    pub shape: QueryShape<'a>,
    /// The shape's rotation (fixed: characters turn without turning their
    /// collision shape).
    pub rotation: Quat,
    /// How it moves.
    pub settings: CharacterSettings,
}

/// Below this a motion is no motion (metres).
const STILL: f32 = 1e-6;

impl Character<'static> {
    /// An upright capsule (along +Y): cap centres `half_height` above and
    /// below the position, grown by `radius`; default settings.
    ///
    /// ```
    /// use kiln_runtime::QueryShape;
    /// use kiln_runtime::character::{Character, CharacterSettings};
    /// // 1.8 m tall: 0.6 m half segment plus a 0.3 m radius at each end
    /// let player = Character::capsule(0.3, 0.6);
    /// assert_eq!(player.shape, QueryShape::Capsule { half_height: 0.6, radius: 0.3 });
    /// assert_eq!(player.settings, CharacterSettings::default());
    /// ```
    pub fn capsule(radius: f32, half_height: f32) -> Character<'static> {
        Character {
            shape: QueryShape::Capsule {
                half_height,
                radius,
            },
            rotation: Quat::IDENTITY,
            settings: CharacterSettings::default(),
        }
    }
}

impl Character<'_> {
    fn up(&self) -> Vec3 {
        self.settings.up.normalize_or(Vec3::Y)
    }

    fn walkable(&self, n: Vec3) -> bool {
        n.dot(self.up()) >= self.settings.max_slope.cos() - 1e-6
    }

    fn pose(&self, at: Vec3) -> Pose {
        Pose::new(self.rotation, at)
    }

    /// The first contact moving from `at` by `motion`, ignoring contacts
    /// the motion leaves.
    fn cast(
        &self,
        level: &(impl Space + ?Sized),
        at: Vec3,
        motion: Vec3,
        filter: &Filter,
    ) -> Option<ShapeHit> {
        self.cast_with(level, at, motion, filter, true)
    }

    fn cast_with(
        &self,
        level: &(impl Space + ?Sized),
        at: Vec3,
        motion: Vec3,
        filter: &Filter,
        ignore_leaving: bool,
    ) -> Option<ShapeHit> {
        let options = CastOptions { ignore_leaving };
        level.cast(
            &ShapeCast::new(self.shape, self.pose(at), motion, 1.0).with(options),
            filter,
        )
    }

    /// How far above a contact point the short rays that read the surface
    /// there start (and half their length).
    fn reach(&self) -> f32 {
        (self.settings.skin * 2.0).max(0.01)
    }

    /// The surface normal under a contact: a short ray down onto the
    /// contact point gives the face there (a capsule resting on a step's
    /// edge stands on the step's top, not on the edge's rounded normal);
    /// the contact normal where the ray finds nothing.
    fn surface_normal(
        &self,
        level: &(impl Space + ?Sized),
        point: Vec3,
        normal: Vec3,
        filter: &Filter,
    ) -> Vec3 {
        let up = self.up();
        let reach = self.reach();
        let ray = Ray::new(point + up * reach, -up, reach * 2.0);
        match level.raycast(&ray, filter) {
            Some(h) if h.front_face && h.normal.dot(up) > 0.0 => h.normal,
            _ => normal,
        }
    }

    /// Moves the character from `position` by `motion` (one frame's
    /// displacement: walking plus gravity) and reports where it ended up
    /// and what it stands on. Only the objects `filter` accepts count
    /// (skip the character's own object, if it has one).
    ///
    /// In order: a character inside geometry deeper than the skin is
    /// pushed out the shortest way; the motion is cast and slid along
    /// what it meets (walkable ground takes the downward part of the
    /// motion without sliding, so a character stands still on a slope;
    /// steep ground is a wall for walking and a slope for falling); a
    /// step no higher than the step height, with a deep enough top, is
    /// climbed; a character that was on the ground and did not move up
    /// follows the ground down by up to the snap distance.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::character::{Character, Ground};
    /// use kiln_runtime::{Filter, Vec3};
    /// // up the stairs at z = 2 (five 0.2 m steps from x = 4 onto a 1 m platform)
    /// let player = Character::capsule(0.3, 0.6);
    /// let mut at = Vec3::new(2.0, 0.9, 2.0);
    /// for _ in 0..110 {
    ///     // 3 m/s along +x and a constant fall, at 60 Hz
    ///     let m = player.move_and_slide(&level, at, Vec3::new(0.05, -0.1, 0.0), &Filter::ALL);
    ///     at = m.position;
    /// }
    /// assert!((at.y - 1.9).abs() < 0.01, "on the platform: {at}");
    /// ```
    pub fn move_and_slide(
        &self,
        level: &(impl Space + ?Sized),
        position: Vec3,
        motion: Vec3,
        filter: &Filter,
    ) -> Move {
        let up = self.up();
        let mut hits = Vec::new();
        if !position.is_finite() || !motion.is_finite() {
            return Move {
                position,
                ground: Ground::InAir,
                hits,
            };
        }
        let mut at = self.push_out(level, position, filter, &mut hits);
        let before = self.ground(level, at, filter);
        let foot = match before {
            Ground::OnGround(g) => Some(g.point),
            _ => None,
        };
        let grounded = foot.is_some();
        at = self.slide(level, at, motion, foot, filter, &mut hits);
        let mut ground = self.ground(level, at, filter);
        if grounded && !matches!(ground, Ground::OnGround(_)) && motion.dot(up) <= STILL {
            // follow the ground down a slope or a step
            let down = -up * self.settings.snap_distance;
            if let Some(h) = self.cast(level, at, down, filter)
                && self.walkable(self.surface_normal(level, h.point, h.normal, filter))
            {
                at += down * h.t;
                ground = self.ground(level, at, filter);
            }
        }
        Move {
            position: at,
            ground,
            hits,
        }
    }

    /// Where the ground carried a character that stood on it at
    /// `position` (its `ground` after the last move) in the world's last
    /// frame ([`World::frame_motion`]), and how it turned the character
    /// about the up axis (for the game's facing; the collision shape does
    /// not turn). Call it after [`World::step`] and before
    /// [`Character::move_and_slide`]: a lift carries the character up and
    /// down with it, a turning platform round with it; off the ground, or
    /// on ground that did not move, it stays.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::character::{Character, Ground};
    /// use kiln_runtime::{Body, Filter, Pose, QueryShape, Vec3, World};
    /// let mut world = World::new(level);
    /// // a 4 × 0.5 × 4 m lift whose top is at y = 0.5, over the floor at x = 12, z = 5
    /// let mut lift = Pose::at(Vec3::new(12.0, 0.25, 5.0));
    /// let id = world.insert(Body::shape(QueryShape::Cuboid { half: Vec3::new(2.0, 0.25, 2.0) }, lift))?;
    /// let player = Character::capsule(0.3, 0.6);
    /// let mut at = Vec3::new(12.0, 1.4, 5.0);
    /// let mut ground = Ground::InAir;
    /// for _ in 0..120 {
    ///     lift.translation.y += 0.02; // up 2.4 m in two seconds
    ///     world.set_pose(id, lift)?;
    ///     world.step();
    ///     (at, _) = player.ride(&world, at, &ground);
    ///     let m = player.move_and_slide(&world, at, Vec3::new(0.0, -0.1, 0.0), &Filter::ALL);
    ///     (at, ground) = (m.position, m.ground);
    /// }
    /// // standing on the lift's top, 2.4 m higher: not sunk, not left behind
    /// assert!((at.y - (lift.translation.y + 0.25 + 0.9)).abs() < 1e-3, "{at}");
    /// # Ok::<(), kiln_runtime::WorldError>(())
    /// ```
    pub fn ride(&self, world: &World, position: Vec3, ground: &Ground) -> (Vec3, Quat) {
        let Ground::OnGround(support) = ground else {
            return (position, Quat::IDENTITY);
        };
        let Some((before, after)) = world.frame_motion(support.object) else {
            return (position, Quat::IDENTITY);
        };
        let turn = (after.rotation * before.rotation.inverse()).normalize();
        let carried = after.translation + turn * (position - before.translation);
        if !carried.is_finite() {
            return (position, Quat::IDENTITY);
        }
        // the turn's twist about the up axis (swing–twist decomposition)
        let up = self.up();
        let along = up * Vec3::new(turn.x, turn.y, turn.z).dot(up);
        let twist = glam::Vec4::new(along.x, along.y, along.z, turn.w);
        let yaw = if twist.length_squared() > 1e-12 {
            Quat::from_vec4(twist.normalize())
        } else {
            Quat::IDENTITY
        };
        (carried, yaw)
    }

    /// Pushes the character out of anything it is inside deeper than the
    /// skin, deepest contact first, a few rounds.
    fn push_out(
        &self,
        level: &(impl Space + ?Sized),
        mut at: Vec3,
        filter: &Filter,
        hits: &mut Vec<CharacterHit>,
    ) -> Vec3 {
        let mut touching = Vec::new();
        for _ in 0..4 {
            level.overlap_into(&self.shape, &self.pose(at), filter, &mut touching);
            let Some(deepest) = touching
                .iter()
                .filter(|o| o.depth > self.settings.skin)
                .max_by(|a, b| a.depth.total_cmp(&b.depth))
            else {
                break;
            };
            at += deepest.normal * deepest.depth;
            hits.push(CharacterHit {
                point: deepest.point,
                normal: deepest.normal,
                object: deepest.object,
            });
        }
        at
    }

    /// What the character at `at` stands on: a short cast down that
    /// ignores what it moves along or away from, so a wall or a door
    /// pressing on the character's side is not taken for its ground.
    fn ground(&self, level: &(impl Space + ?Sized), at: Vec3, filter: &Filter) -> Ground {
        let up = self.up();
        let reach = self.settings.skin.max(1e-3);
        let Some(h) = self.cast_with(level, at, -up * reach, filter, true) else {
            return Ground::InAir;
        };
        if h.normal.dot(up) <= 0.0 {
            return Ground::InAir;
        }
        let normal = self.surface_normal(level, h.point, h.normal, filter);
        let support = Support {
            point: h.point,
            normal,
            object: h.object,
        };
        if self.walkable(normal) {
            Ground::OnGround(support)
        } else {
            Ground::OnSteepGround(support)
        }
    }

    /// The motion left after a contact with normal `n`, not going back
    /// into any plane met before (`planes`).
    fn clip(&self, rest: Vec3, n: Vec3, planes: &[Vec3]) -> Vec3 {
        let up = self.up();
        let vertical = up * rest.dot(up);
        let horizontal = rest - vertical;
        let along = |v: Vec3, n: Vec3| {
            let d = v.dot(n);
            if d < 0.0 { v - n * d } else { v }
        };
        let mut out = if self.walkable(n) && rest.dot(up) <= 0.0 {
            // walkable ground takes the downward part; the heading stays,
            // lifted onto the ground's plane
            let ny = n.dot(up);
            horizontal - up * (horizontal.dot(n) / ny)
        } else if n.dot(up) > 0.0 && !self.walkable(n) {
            // steep ground: a wall for the walking part (its horizontal
            // normal), a slope for the falling part
            let wall = (n - up * n.dot(up)).normalize_or_zero();
            along(horizontal, wall) + along(vertical, n)
        } else {
            along(rest, n)
        };
        // creases: not back into an earlier plane
        for &p in planes {
            if out.dot(p) < -STILL * 1e-3 {
                let crease = p.cross(n);
                let len2 = crease.length_squared();
                out = if len2 > 1e-12 {
                    crease * (out.dot(crease) / len2)
                } else {
                    Vec3::ZERO
                };
                if planes.iter().any(|&q| out.dot(q) < -STILL * 1e-3) {
                    return Vec3::ZERO;
                }
            }
        }
        out
    }

    /// Collide and slide from `at` by `motion`, climbing steps when
    /// standing on ground at `foot`.
    fn slide(
        &self,
        level: &(impl Space + ?Sized),
        mut at: Vec3,
        motion: Vec3,
        foot: Option<Vec3>,
        filter: &Filter,
        hits: &mut Vec<CharacterHit>,
    ) -> Vec3 {
        let up = self.up();
        let mut rest = motion;
        let mut planes: Vec<Vec3> = Vec::new();
        for _ in 0..self.settings.max_iterations {
            if rest.length() <= STILL {
                break;
            }
            let Some(h) = self.cast(level, at, rest, filter) else {
                at += rest;
                break;
            };
            at += rest * h.t;
            hits.push(CharacterHit {
                point: h.point,
                normal: h.normal,
                object: h.object,
            });
            let left = rest * (1.0 - h.t);
            // a wall while walking on the ground: a step to climb?
            let horizontal = left - up * left.dot(up);
            if let Some(foot) = foot
                && !self.walkable(h.normal)
                && h.normal.dot(up) > -0.1
                && horizontal.length() > STILL
                && let Some(stepped) = self.step(level, at, foot, horizontal, filter)
            {
                // on the step: the walking part is done, and the ground
                // takes the falling part
                at = stepped;
                break;
            }
            rest = self.clip(left, h.normal, &planes);
            planes.push(h.normal);
        }
        at
    }

    /// Tries to walk up a step from ground at `foot`: up by the step
    /// height (less under a ceiling), forward by `horizontal`, down onto
    /// walkable ground no more than the step height above `foot`, with a
    /// top at least the minimum tread deep. The position on the step, or
    /// `None` (the step is too high, too thin, or not ground). Heights
    /// are the contact points', not the character's centre: a rounded
    /// foot that lands on a higher step's edge does not count as climbing
    /// it.
    fn step(
        &self,
        level: &(impl Space + ?Sized),
        at: Vec3,
        foot: Vec3,
        horizontal: Vec3,
        filter: &Filter,
    ) -> Option<Vec3> {
        let up = self.up();
        let s = &self.settings;
        let lift = up * s.step_height;
        let rise = self.cast(level, at, lift, filter).map_or(1.0, |h| h.t);
        let top = at + lift * rise;
        let ahead = self
            .cast(level, top, horizontal, filter)
            .map_or(1.0, |h| h.t);
        if ahead <= 0.0 {
            return None;
        }
        let over = top + horizontal * ahead;
        let drop = -up * (s.step_height * rise);
        let land = self.cast(level, over, drop, filter)?;
        let normal = self.surface_normal(level, land.point, land.normal, filter);
        if !self.walkable(normal) {
            return None;
        }
        let landed = over + drop * land.t;
        let gained = (landed - at).dot(up);
        let riser = (land.point - foot).dot(up);
        if gained <= 1e-4 || riser > s.step_height + 1e-4 {
            return None;
        }
        // the tread: walkable ground continues beyond the first contact
        let reach = self.reach();
        let tread_top = land.point + horizontal.normalize() * s.min_step_tread + up * reach;
        let tread = level.raycast(&Ray::new(tread_top, -up, reach * 2.0), filter);
        if !tread.is_some_and(|t| self.walkable(t.normal)) {
            return None;
        }
        Some(landed)
    }
}
