//! A world's tiles: levels mounted at f64 positions beside the world's
//! own level, answered together with it and the bodies.
//!
//! # Frames and precision
//!
//! A world answers in one f32 frame whose zero sits at an f64 point, its
//! origin ([`World::origin`]). A tile is a level baked in its own frame
//! (its coordinates relative to its tile's origin, `kiln_baker::tile`);
//! mounted at f64 point `at`, it sits at the f32 offset `at − origin`.
//! A question is moved into each tile's frame by that offset (one f32
//! subtraction of two nearby numbers), answered there by the tile's
//! level exactly as a level answers, and its answer moved back. So what
//! a query loses to f32 depends on how far it is from the world's origin,
//! not from the world's zero: a game keeps the origin near its focus
//! (moving it is [`World::set_origin`], the "floating origin" of large
//! worlds) and a query 100 km out answers as one at the zero does. The
//! f64 helpers [`World::to_local`] and [`World::to_global`] convert.
//!
//! # Cut meshes
//!
//! A static triangle mesh the baker cut at tile borders (terrain) is a
//! piece per tile, flagged as one; the pieces of one name over the mounted
//! tiles answer an overlap together, as the whole mesh: once, with the
//! deepest contact over all their triangles (a flat floor's region runs on
//! across the border). Rays, casts and sphere contacts need no neighbour:
//! each piece answers, the first or deepest stands.
//!
//! # Ids and layers
//!
//! A tile's objects are named by ids that carry the tile ([`TileId`],
//! [`ObjectId::tile`]); its movers and triggers become bodies under those
//! ids. Each tile names its own collision layers: the world keeps one
//! table (its own level's names, then each name a tile adds, at most 32)
//! and a filter's mask is read in it; a tile's objects answer
//! [`World::object_layers`] in it too.

use std::sync::Arc;

use glam::{DVec3, Vec3};
use kiln_formats::world::MAX_ORIGIN;

use super::World;
use crate::dynamic::body::WorldError;
use crate::filter::Filter;
use crate::level::Level;
use crate::object::{MAX_TAG, ObjectId, TileId};
use crate::query::{Ranked, Ray, RayHit, Scope, ShapeCast, ShapeHit, ShapeOverlap, cull_box};
use crate::shape::{Pose, Posed, QueryShape};

/// One mounted tile.
#[derive(Clone)]
pub(crate) struct Mounted {
    pub id: TileId,
    pub level: Arc<Level>,
    /// Where its frame's zero is (f64 world position).
    pub at: DVec3,
    /// `at − origin`, in the world's f32 frame.
    pub offset: Vec3,
    /// Its static objects' box in the world's frame, grown by a rounding
    /// margin; empty (lo > hi) for a tile with none.
    pub lo: Vec3,
    pub hi: Vec3,
    /// The world's mask of each of the tile's layers, by its layer number.
    pub layer_bits: Vec<u32>,
}

/// The tiles of a world, its origin and its layer table.
#[derive(Clone, Default)]
pub(crate) struct Tiles {
    pub origin: DVec3,
    pub mounted: Vec<Mounted>,
    /// The number the next mount gets (from 1).
    pub next: u32,
    /// The world's collision layer names: its own level's, then those
    /// tiles added.
    pub layer_names: Vec<String>,
}

impl Tiles {
    /// The tiles of a world whose own level is `level`.
    pub fn new(level: &Level) -> Tiles {
        Tiles {
            origin: DVec3::ZERO,
            mounted: Vec::new(),
            next: 1,
            layer_names: level.layer_names().map(str::to_owned).collect(),
        }
    }

    fn find(&self, id: TileId) -> Option<&Mounted> {
        self.mounted.iter().find(|m| m.id == id)
    }

    /// The world masks of `level`'s layers, adding the names the table
    /// lacks; an error (the table unchanged) when they do not fit, unless
    /// `lenient`, when those left out fall in the default layer.
    fn layer_bits(&mut self, level: &Level, lenient: bool) -> Result<Vec<u32>, WorldError> {
        let have = self.layer_names.len();
        let mut names = self.layer_names.clone();
        let mut over = 0;
        let bits = level
            .layer_names()
            .map(|n| match names.iter().position(|m| m == n) {
                Some(k) => 1u32 << k,
                None if names.len() < 32 => {
                    names.push(n.to_owned());
                    1 << (names.len() - 1)
                }
                None => {
                    over += 1;
                    1
                }
            })
            .collect();
        if over > 0 && !lenient {
            return Err(WorldError::Layers {
                names: names.len() - have + over,
                have,
            });
        }
        self.layer_names = names;
        Ok(bits)
    }
}

impl Mounted {
    /// The tile's mask for world mask `mask`.
    #[inline]
    fn mask_in(&self, mask: u32) -> u32 {
        if mask == u32::MAX {
            return u32::MAX;
        }
        let mut m = 0;
        for (k, &b) in self.layer_bits.iter().enumerate() {
            if mask & b != 0 {
                m |= 1 << k;
            }
        }
        m
    }

    /// The world's mask for tile mask `mask`.
    fn mask_out(&self, mask: u32) -> u32 {
        let mut m = 0;
        for (k, &b) in self.layer_bits.iter().enumerate() {
            if mask & (1 << k) != 0 {
                m |= b;
            }
        }
        m
    }

    /// `filter` as the tile's level reads it.
    #[inline]
    fn filter<'a>(&self, filter: &Filter<'a>) -> Filter<'a> {
        filter.in_tile(self.id.0, self.mask_in(filter.layer_mask()))
    }

    /// The id of the tile's object `object` (a level id of its level).
    #[inline]
    fn object(&self, object: ObjectId) -> ObjectId {
        ObjectId::tile_object(self.id, object.index())
    }

    /// Whether the tile's box meets `lo..=hi`.
    #[inline]
    fn meets(&self, lo: Vec3, hi: Vec3) -> bool {
        self.lo.cmple(hi).all() && lo.cmple(self.hi).all()
    }

    /// Where `ray` enters the tile's box within `[0, max_t]` (0 from
    /// inside), if it may meet it; `inv` is `1 / ray.dir` and `reach` the
    /// box around the ray's segment (infinite for an endless ray).
    #[inline]
    fn ray_entry(&self, ray: &Ray, inv: Vec3, reach: (Vec3, Vec3), max_t: f32) -> Option<f32> {
        // most tiles are nowhere near the segment: no arithmetic for them
        if !self.meets(reach.0, reach.1) {
            return None;
        }
        let (mut t0, mut t1) = (0.0f32, max_t);
        for k in 0..3 {
            let (o, d) = (ray.origin[k], ray.dir[k]);
            if d == 0.0 {
                if o < self.lo[k] || o > self.hi[k] {
                    return None;
                }
                continue;
            }
            let (a, b) = ((self.lo[k] - o) * inv[k], (self.hi[k] - o) * inv[k]);
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
        match t0.partial_cmp(&t1) {
            Some(std::cmp::Ordering::Greater) => None,
            // NaN keeps the tile, entered at 0: its own walk decides
            None => Some(0.0),
            _ => Some(t0),
        }
    }

    /// `ray` (to `max_t`) asked of the tile's level in its own frame, the
    /// hit moved back to the world's.
    fn raycast(&self, ray: &Ray, max_t: f32, filter: &Filter) -> Option<RayHit> {
        let r = Ray {
            origin: ray.origin - self.offset,
            dir: ray.dir,
            max_t,
        };
        let mut h = Scope::of(&self.level).raycast(&r, &self.filter(filter))?;
        h.point += self.offset;
        h.object = self.object(h.object);
        Some(h)
    }

    /// Moves it to the world frame of `origin`.
    fn place(&mut self, origin: DVec3) {
        let off = self.at - origin;
        self.offset = off.as_vec3();
        match self.level.bounds() {
            Some((lo, hi)) => {
                let (lo, hi) = (lo.as_dvec3() + off, hi.as_dvec3() + off);
                // a hair wider than f32 rounding of the moved query
                let pad = (hi - lo) * 1e-6 + (lo.abs().max(hi.abs())) * 1e-6 + 1e-4;
                self.lo = (lo - pad).as_vec3();
                self.hi = (hi + pad).as_vec3();
            }
            None => {
                self.lo = Vec3::INFINITY;
                self.hi = Vec3::NEG_INFINITY;
            }
        }
    }
}

/// A position a world accepts: finite, within the manifest's limit.
fn valid_at(p: DVec3) -> bool {
    p.is_finite() && p.abs().max_element() <= MAX_ORIGIN
}

/// What [`Mounted::ray_entry`] takes of `ray` out to `max_t`: its
/// direction's reciprocal, and the box around its segment (endless for an
/// endless ray).
fn ray_reach(ray: &Ray, max_t: f32) -> (Vec3, (Vec3, Vec3)) {
    let end = ray.origin + ray.dir * max_t;
    let reach = if end.is_finite() {
        (ray.origin.min(end), ray.origin.max(end))
    } else {
        (Vec3::NEG_INFINITY, Vec3::INFINITY)
    };
    (ray.dir.recip(), reach)
}

/// The f32 box that culls tiles for `shape` at `pose` (`None`: the shape
/// touches nothing): a sphere's straight from its centre, any other
/// shape's from its placed bounds.
fn shape_box(shape: &QueryShape, pose: &Pose) -> Option<(Vec3, Vec3)> {
    let (c, h) = match *shape {
        QueryShape::Sphere { radius } => (radius >= 0.0 && pose.translation.is_finite())
            .then(|| (pose.translation.as_dvec3(), DVec3::splat(f64::from(radius))))?,
        _ => Posed::new(shape, pose)?.bounds(),
    };
    Some(cull_box(c, h))
}

/// `pose` moved into the frame of tile `m`.
fn in_tile(pose: &Pose, m: &Mounted) -> Pose {
    Pose {
        rotation: pose.rotation,
        translation: pose.translation - m.offset,
    }
}

/// `pose` moved by `delta` (added in f64, rounded once).
fn shifted(pose: Pose, delta: DVec3) -> Pose {
    Pose {
        rotation: pose.rotation,
        translation: (pose.translation.as_dvec3() + delta).as_vec3(),
    }
}

/// Mounting, unmounting, and the world's origin.
impl World {
    /// A world of tiles alone: no level of its own (an empty one), its
    /// f32 frame's zero at f64 point `origin`. Tiles come and go with
    /// [`World::mount`] and [`World::unmount`] (or a
    /// [`crate::Streamer`]), and the origin moves with
    /// [`World::set_origin`].
    ///
    /// # Errors
    /// An origin that is not finite or lies past 1e12 m.
    ///
    /// ```
    /// # let baked = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap();
    /// use kiln_runtime::{Filter, Level, Ray, Vec3, World};
    /// use glam::DVec3;
    /// let course = std::sync::Arc::new(Level::from_bytes(&baked.bytes)?);
    /// // the same course mounted twice, 100 km out, 30 m apart
    /// let far = DVec3::new(100_000.0, 0.0, 0.0);
    /// let mut world = World::tiled(far)?;
    /// let a = world.mount(course.clone(), far)?;
    /// let b = world.mount(course.clone(), far + DVec3::new(30.0, 0.0, 0.0))?;
    /// // a ray down onto the second copy's floor, asked in the world's frame,
    /// // answers as the course asked in its own
    /// let down = Ray::new(world.to_local(far + DVec3::new(42.0, 5.0, 5.0)), Vec3::NEG_Y, 100.0);
    /// let hit = world.raycast(&down, &Filter::ALL).unwrap();
    /// let own = course.raycast(&Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::NEG_Y, 100.0), &Filter::ALL).unwrap();
    /// assert_eq!(hit.object.tile(), Some(b));
    /// assert_eq!((hit.t, hit.object.index()), (own.t, own.object.index()));
    /// assert_eq!(world.object_name(hit.object), course.object_name(course.object(hit.object.index()).unwrap()));
    /// world.unmount(b)?;
    /// assert!(world.raycast(&down, &Filter::ALL).is_none());
    /// assert_eq!(world.tiles().map(|(id, _, _)| id).collect::<Vec<_>>(), [a]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tiled(origin: DVec3) -> Result<World, WorldError> {
        if !valid_at(origin) {
            return Err(WorldError::BadOrigin(origin));
        }
        let mut world = World::new(Level::empty());
        world.tiles.origin = origin;
        Ok(world)
    }

    /// Mounts `level` (a tile, baked in its own frame) with its frame's
    /// zero at f64 world point `at`: its static objects answer every
    /// query from now on, and its movers and triggers join the bodies,
    /// where they were baked. Loading and validating the level
    /// ([`Level::open`]) may happen on any thread beforehand; mounting is
    /// for the sync point, like every move.
    ///
    /// # Errors
    /// A position not finite or past 1e12 m; a tile whose layer names
    /// would take the world past 32; a world that has used every tile id.
    pub fn mount(&mut self, level: impl Into<Arc<Level>>, at: DVec3) -> Result<TileId, WorldError> {
        let level = level.into();
        if !valid_at(at) {
            return Err(WorldError::BadOrigin(at));
        }
        if self.tiles.next > MAX_TAG {
            return Err(WorldError::Mounts);
        }
        let layer_bits = self.tiles.layer_bits(&level, false)?;
        let id = TileId(self.tiles.next);
        self.tiles.next += 1;
        let mut m = Mounted {
            id,
            level: level.clone(),
            at,
            offset: Vec3::ZERO,
            lo: Vec3::ZERO,
            hi: Vec3::ZERO,
            layer_bits,
        };
        m.place(self.tiles.origin);
        let delta = at - self.tiles.origin;
        for object in level.movers_and_triggers() {
            let placed = self.bodies.insert_level_as(
                &level,
                object,
                m.object(object),
                |baked| shifted(baked, delta),
                |layers| m.mask_out(layers),
            );
            // a verified archive's object, placed within the world's range
            debug_assert!(placed.is_ok(), "{placed:?}");
        }
        self.tiles.mounted.push(m);
        Ok(id)
    }

    /// Unmounts tile `tile`: its objects, movers and triggers leave the
    /// world (a trigger's contacts end at the next [`World::step`]), and
    /// the world lets go of its level, which is returned.
    ///
    /// # Errors
    /// A tile not mounted.
    pub fn unmount(&mut self, tile: TileId) -> Result<Arc<Level>, WorldError> {
        let k = self
            .tiles
            .mounted
            .iter()
            .position(|m| m.id == tile)
            .ok_or(WorldError::UnknownTile(tile))?;
        let m = self.tiles.mounted.remove(k);
        for object in m.level.movers_and_triggers() {
            let _ = self.bodies.remove(m.object(object));
        }
        Ok(m.level)
    }

    /// The mounted tiles, in the order mounted: each one's id, level and
    /// f64 position.
    pub fn tiles(&self) -> impl Iterator<Item = (TileId, &Arc<Level>, DVec3)> + '_ {
        self.tiles.mounted.iter().map(|m| (m.id, &m.level, m.at))
    }

    /// Tile `tile`'s level and f64 position, if it is mounted.
    pub fn tile(&self, tile: TileId) -> Option<(&Arc<Level>, DVec3)> {
        self.tiles.find(tile).map(|m| (&m.level, m.at))
    }

    /// The f64 world point the world's f32 frame's zero sits at.
    pub fn origin(&self) -> DVec3 {
        self.tiles.origin
    }

    /// Moves the world's f32 frame so its zero sits at f64 point `origin`
    /// (a "floating origin": keep it near where the game looks, and
    /// queries there keep f32's precision however far out that is).
    /// Every body, mover and trigger keeps its place in the world, so its
    /// f32 pose changes by the returned shift; so must the positions the
    /// game keeps in the world's frame (a [`crate::character::Character`]'s,
    /// a camera's). The shift is no motion: no trigger fires for it and
    /// [`World::frame_motion`] does not report it.
    ///
    /// # Errors
    /// An origin not finite or past 1e12 m; a world whose own level has
    /// objects ([`WorldError::Rebase`]: only [`World::tiled`] worlds move).
    ///
    /// ```
    /// # let baked = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap();
    /// use kiln_runtime::{Filter, Level, Ray, Vec3, World};
    /// use glam::DVec3;
    /// let course = Level::from_bytes(&baked.bytes)?;
    /// let mut world = World::tiled(DVec3::ZERO)?;
    /// world.mount(course, DVec3::new(50_000.0, 0.0, 0.0))?;
    /// let shift = world.set_origin(DVec3::new(50_000.0, 0.0, 0.0))?;
    /// assert_eq!(shift, Vec3::new(-50_000.0, 0.0, 0.0));
    /// // the course's floor, 50 km out, answers at full f32 precision
    /// let down = Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::NEG_Y, 100.0);
    /// let floor = world.raycast(&down, &Filter::ALL).unwrap();
    /// let own = Level::from_bytes(&baked.bytes)?.raycast(&down, &Filter::ALL).unwrap();
    /// assert_eq!((floor.t, floor.point), (own.t, own.point));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_origin(&mut self, origin: DVec3) -> Result<Vec3, WorldError> {
        if !valid_at(origin) {
            return Err(WorldError::BadOrigin(origin));
        }
        if self.level.object_count() > 0 {
            return Err(WorldError::Rebase);
        }
        let delta = self.tiles.origin - origin;
        self.tiles.origin = origin;
        for m in &mut self.tiles.mounted {
            m.place(origin);
        }
        if delta != DVec3::ZERO {
            self.bodies.shift(delta);
        }
        Ok(delta.as_vec3())
    }

    /// The world-frame (f32) position of f64 world point `p`.
    #[inline]
    pub fn to_local(&self, p: DVec3) -> Vec3 {
        (p - self.tiles.origin).as_vec3()
    }

    /// The f64 world point of world-frame position `p`.
    #[inline]
    pub fn to_global(&self, p: Vec3) -> DVec3 {
        p.as_dvec3() + self.tiles.origin
    }

    /// The world's collision layer names: its own level's, then each
    /// name a mounted tile added, in mount order (a filter's mask and
    /// [`World::object_layers`] number layers in this list). A name stays
    /// after its tile is unmounted, so masks keep their meaning.
    pub fn layer_names(&self) -> impl Iterator<Item = &str> {
        self.tiles.layer_names.iter().map(String::as_str)
    }

    /// After the world's own level changed: its layer names first, then
    /// each tile's again (names past 32 fall in the default layer), its
    /// movers and triggers given their layers in the new numbering.
    pub(super) fn relayer(&mut self) {
        self.tiles.layer_names = self.level.layer_names().map(str::to_owned).collect();
        for k in 0..self.tiles.mounted.len() {
            let level = self.tiles.mounted[k].level.clone();
            let bits = self.tiles.layer_bits(&level, true).unwrap_or_default();
            let m = &mut self.tiles.mounted[k];
            m.layer_bits = bits;
            for object in level.movers_and_triggers() {
                let layers = level.object_layers(object).unwrap_or(1);
                self.bodies.set_layers(m.object(object), m.mask_out(layers));
            }
        }
    }

    /// A tile's static object's name and layers, if `id` is one.
    pub(super) fn tile_object(&self, id: ObjectId) -> Option<(&Mounted, ObjectId)> {
        let m = self.tiles.find(id.tile()?)?;
        let local = m.level.object(id.index())?;
        Some((m, local))
    }

    /// The layers of a tile's object, in the world's numbering.
    pub(super) fn tile_object_layers(&self, id: ObjectId) -> Option<u32> {
        let (m, local) = self.tile_object(id)?;
        m.level.object_layers(local).map(|l| m.mask_out(l))
    }

    /// The first tile object called `name`, in mount order.
    pub(super) fn find_tile_object(&self, name: &str) -> Option<ObjectId> {
        self.tiles
            .mounted
            .iter()
            .find_map(|m| m.level.find_object(name).map(|o| m.object(o)))
    }
}

/// The questions over the tiles, each after the world's own level and
/// bodies have answered (`super`'s query methods call these).
impl World {
    pub(super) fn tiles_raycast(
        &self,
        ray: &Ray,
        filter: &Filter,
        mut best: Option<RayHit>,
    ) -> Option<RayHit> {
        // the tiles the ray meets, nearest entry first, so a hit in a near
        // tile shortens the ray before the far ones are walked (on the
        // stack; past 64 tiles met, the rest in mount order after them)
        let (inv, reach) = ray_reach(ray, best.map_or(ray.max_t, |h| h.t));
        let mut order = [(0.0f32, 0u32); 64];
        let mut n = 0;
        let mut rest = Vec::new();
        for (k, m) in self.tiles.mounted.iter().enumerate() {
            if let Some(t) = m.ray_entry(ray, inv, reach, best.map_or(ray.max_t, |h| h.t)) {
                if n < order.len() {
                    order[n] = (t, k as u32);
                    n += 1;
                } else {
                    rest.push((t, k as u32));
                }
            }
        }
        let order = &mut order[..n];
        order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(entry, k) in order.iter().chain(&rest) {
            let max_t = best.map_or(ray.max_t, |h| h.t);
            if entry <= max_t
                && let Some(h) = self.tiles.mounted[k as usize].raycast(ray, max_t, filter)
                && best.is_none_or(|b| h.t < b.t)
            {
                best = Some(h);
            }
        }
        best
    }

    pub(super) fn tiles_raycast_any(&self, ray: &Ray, filter: &Filter) -> bool {
        let (inv, reach) = ray_reach(ray, ray.max_t);
        self.tiles.mounted.iter().any(|m| {
            m.ray_entry(ray, inv, reach, ray.max_t).is_some() && {
                let r = Ray {
                    origin: ray.origin - m.offset,
                    ..*ray
                };
                Scope::of(&m.level).raycast_any(&r, &m.filter(filter))
            }
        })
    }

    /// The tiles whose boxes meet `shape` at `pose`, each with the pose
    /// moved into its frame.
    fn tiles_near_shape<'s>(
        &'s self,
        shape: &QueryShape,
        pose: &Pose,
    ) -> impl Iterator<Item = (&'s Mounted, Pose)> + 's {
        let bounds = shape_box(shape, pose);
        let pose = *pose;
        self.tiles.mounted.iter().filter_map(move |m| {
            let (lo, hi) = bounds?;
            m.meets(lo, hi).then(|| (m, in_tile(&pose, m)))
        })
    }

    /// The overlaps over the tiles. The pieces of a mesh cut at tile
    /// borders answer as the whole mesh would: once, with the deepest
    /// contact over all of them (named by the piece it is on), each
    /// piece's triangles seeing the others' (a flat floor runs on across
    /// a border). Pieces are matched by name across the mounted tiles.
    pub(super) fn tiles_overlap(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
        out: &mut Vec<ShapeOverlap>,
    ) {
        let sphere = matches!(shape, QueryShape::Sphere { .. });
        let first = out.len();
        // (name, tile, instance) of the pieces near the shape
        let mut pieces: Vec<(std::borrow::Cow<'_, str>, usize, u32)> = Vec::new();
        let Some((lo, hi)) = shape_box(shape, pose) else {
            return;
        };
        for (k, m) in self.tiles.mounted.iter().enumerate() {
            if !m.meets(lo, hi) {
                continue;
            }
            let p = in_tile(pose, m);
            let start = out.len();
            let f = m.filter(filter);
            let scope = Scope::of(&m.level);
            if sphere {
                // a sphere's contact with a mesh is its closest point, which
                // needs no neighbour: pieces answer alone, the deepest kept
                scope.overlap_append(shape, &p, &f, out);
            } else {
                // the pieces are asked together below, the rest here
                let a = m.level.archive();
                let not_piece =
                    |id: ObjectId| !a.instances[id.index() as usize].is_piece() && f.keeps(id);
                scope.overlap_append(shape, &p, &f.keeping(&not_piece), out);
                scope.near(lo - m.offset, hi - m.offset, &f, |id, _, _| {
                    if a.instances[id.index() as usize].is_piece() {
                        let name = m.level.object_name(ObjectId::level(id.index()));
                        pieces.push((name.unwrap_or_default(), k, id.index()));
                    }
                    false
                });
            }
            for o in &mut out[start..] {
                o.point += m.offset;
                o.object = m.object(o.object);
            }
        }
        if sphere {
            self.deepest_per_mesh(first, out);
        } else if !pieces.is_empty() {
            self.touch_pieces(shape, pose, &mut pieces, out);
        }
    }

    /// Whether `id` is a mounted tile's piece of a cut mesh, and its name.
    fn piece_name(&self, id: ObjectId) -> Option<std::borrow::Cow<'_, str>> {
        let (m, local) = self.piece(id)?;
        Some(m.level.object_name(local).unwrap_or_default())
    }

    /// The tile and level id of `id`, if it names a mounted tile's piece
    /// of a cut mesh.
    fn piece(&self, id: ObjectId) -> Option<(&Mounted, ObjectId)> {
        let (m, local) = self.tile_object(id)?;
        m.level.archive().instances[local.index() as usize]
            .is_piece()
            .then_some((m, local))
    }

    /// Keeps one answer per cut mesh among `out[first..]`: its pieces'
    /// deepest (the first of equals).
    fn deepest_per_mesh(&self, first: usize, out: &mut Vec<ShapeOverlap>) {
        // the common case, no two pieces: no names looked up
        if out.len() < first + 2 {
            return;
        }
        let pieces = out[first..]
            .iter()
            .filter(|o| self.piece(o.object).is_some());
        if pieces.count() < 2 {
            return;
        }
        let named: Vec<Option<std::borrow::Cow<'_, str>>> = out[first..]
            .iter()
            .map(|o| self.piece_name(o.object))
            .collect();
        let mut keep = vec![true; named.len()];
        for i in 0..named.len() {
            let Some(a) = &named[i] else { continue };
            for j in i + 1..named.len() {
                if keep[i] && keep[j] && named[j].as_ref() == Some(a) {
                    if out[first + j].depth > out[first + i].depth {
                        keep[i] = false;
                    } else {
                        keep[j] = false;
                    }
                }
            }
        }
        let mut k = 0;
        out.retain(|_| {
            k += 1;
            k <= first || keep[k - 1 - first]
        });
    }

    /// The contacts of the cut meshes whose pieces are `pieces` (name,
    /// tile, instance) with `shape` at `pose`: one per mesh, over all its
    /// pieces together.
    fn touch_pieces(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        pieces: &mut [(std::borrow::Cow<'_, str>, usize, u32)],
        out: &mut Vec<ShapeOverlap>,
    ) {
        let Some(posed) = Posed::new(shape, pose) else {
            return;
        };
        pieces.sort();
        let mut rest = &pieces[..];
        while let Some(head) = rest.first() {
            let n = rest.iter().take_while(|p| p.0 == head.0).count();
            let (group, after) = rest.split_at(n);
            rest = after;
            // each piece (verified: a triangle mesh), placed in its tile's
            // frame, that frame moved to the world's by the tile's offset
            let places: Vec<_> = group
                .iter()
                .filter_map(|&(_, k, i)| {
                    let m = &self.tiles.mounted[k];
                    let a = m.level.archive();
                    let inst = &a.instances[i as usize];
                    let mesh = a.colliders[inst.collider.to_native() as usize].tri_mesh()?;
                    let place = crate::placement::Placement::new(a, inst);
                    Some((
                        ObjectId::tile_object(m.id, i),
                        place,
                        mesh,
                        m.offset.as_dvec3(),
                    ))
                })
                .collect();
            let parts: Vec<crate::collider::tri_mesh::Part> = places
                .iter()
                .map(|(_, p, mesh, shift)| (p, *mesh, *shift))
                .collect();
            if let Some((t, feature, part)) =
                crate::collider::tri_mesh::shape_touch_parts(&parts, &posed)
            {
                out.push(ShapeOverlap {
                    object: places[part].0,
                    point: t.point.as_vec3(),
                    normal: t.normal.as_vec3(),
                    depth: t.depth as f32,
                    feature: Some(feature),
                });
            }
        }
    }

    pub(super) fn tiles_overlap_any(
        &self,
        shape: &QueryShape,
        pose: &Pose,
        filter: &Filter,
    ) -> bool {
        self.tiles_near_shape(shape, pose)
            .any(|(m, p)| Scope::of(&m.level).overlap_any(shape, &p, &m.filter(filter)))
    }

    pub(super) fn tiles_cast(
        &self,
        cast: &ShapeCast,
        filter: &Filter,
        mut best: Option<(ShapeHit, Ranked)>,
    ) -> Option<(ShapeHit, Ranked)> {
        if !cast.is_valid() {
            return best;
        }
        let Some(posed) = Posed::new(&cast.shape, &cast.pose) else {
            return best;
        };
        // the swept box, for every tile; each tile's own walk culls finely
        let (c, h) = posed.bounds();
        let half_way = cast.motion.as_dvec3() * (0.5 * f64::from(cast.max_t));
        let (lo, hi) = cull_box(c + half_way, h + half_way.abs());
        for m in &self.tiles.mounted {
            if !m.meets(lo, hi) {
                continue;
            }
            let moved = ShapeCast {
                pose: in_tile(&cast.pose, m),
                ..*cast
            };
            if let Some((mut hit, rank)) =
                Scope::of(&m.level).cast_ranked(&moved, &m.filter(filter))
                && best.as_ref().is_none_or(|(_, b)| rank.beats(b))
            {
                hit.point += m.offset;
                hit.object = m.object(hit.object);
                best = Some((hit, rank));
            }
        }
        best
    }

    pub(super) fn tiles_contains_point(&self, p: Vec3, filter: &Filter, out: &mut Vec<ObjectId>) {
        for m in &self.tiles.mounted {
            if !m.meets(p, p) {
                continue;
            }
            let start = out.len();
            Scope::of(&m.level).contains_point_append(p - m.offset, &m.filter(filter), out);
            for o in &mut out[start..] {
                *o = m.object(*o);
            }
        }
    }

    pub(super) fn tiles_contains_point_any(&self, p: Vec3, filter: &Filter) -> bool {
        self.tiles.mounted.iter().any(|m| {
            m.meets(p, p) && Scope::of(&m.level).contains_point_any(p - m.offset, &m.filter(filter))
        })
    }
}
