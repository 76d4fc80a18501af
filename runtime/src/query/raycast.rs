//! Ray casts against the whole level: the top-level tree in world space,
//! then each touched instance's shape in its local space (the ray is
//! transformed once per instance; the parameter `t` is the same in both
//! spaces because the transform is affine).

use super::Scope;
use crate::collider::{At, ColliderRef, LocalRayHit, ObjectVisitor, local_ray};
use crate::filter::Filter;
use crate::geom::ray_box::SlabRay;
use crate::level::Level;
use crate::object::ObjectId;
use crate::placement::{Mat3x4, transpose_vector};
use crate::walk::Grow;
use glam::Vec3;
use kiln_formats::level::ArchivedLevel;

/// A ray: `origin + t · dir` for `t` in `[0, max_t]`. `dir` need not be
/// unit length; `t` is measured in multiples of it.
///
/// ```
/// use kiln_runtime::{Ray, Vec3};
/// let ray = Ray { origin: Vec3::ZERO, dir: Vec3::new(0.0, 0.0, 2.0), max_t: 5.0 };
/// // t counts multiples of dir: this ray reaches 10 m
/// assert_eq!(ray.origin + ray.dir * ray.max_t, Vec3::new(0.0, 0.0, 10.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Start point.
    pub origin: Vec3,
    /// Direction (non-zero).
    pub dir: Vec3,
    /// Largest `t` of interest (may be infinite).
    pub max_t: f32,
}

impl Ray {
    /// A ray from its parts.
    ///
    /// ```
    /// use kiln_runtime::{Ray, Vec3};
    /// let down = Ray::new(Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y, f32::INFINITY);
    /// assert_eq!(down.max_t, f32::INFINITY);
    /// ```
    pub fn new(origin: Vec3, dir: Vec3, max_t: f32) -> Ray {
        Ray { origin, dir, max_t }
    }

    /// True when the ray can be cast: a finite origin, a direction that
    /// [`is_direction`], `max_t >= 0` (NaN is not). Every query answers an
    /// invalid ray with no hit (the C API and `baker query` refuse it with
    /// an error).
    ///
    /// ```
    /// use kiln_runtime::{Ray, Vec3};
    /// assert!(Ray::new(Vec3::ZERO, Vec3::X, 1.0).is_valid());
    /// assert!(!Ray::new(Vec3::ZERO, Vec3::ZERO, 1.0).is_valid());
    /// // too short to have a direction in f32
    /// assert!(!Ray::new(Vec3::ZERO, Vec3::new(0.0, -1e-38, 0.0), 1.0).is_valid());
    /// assert!(!Ray::new(Vec3::ZERO, Vec3::X, f32::NAN).is_valid());
    /// assert!(!Ray::new(Vec3::NAN, Vec3::X, 1.0).is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite() && is_direction(self.dir) && self.max_t >= 0.0
    }
}

/// Whether `v` can be a ray's direction or a cast's motion: finite, and
/// long enough that its squared length is a normal `f32` (at least
/// `f32::MIN_POSITIVE`, so `|v|` above about 1.1e-19). A shorter one,
/// zero included, has no direction in `f32` (normalising it gives NaN or
/// infinity): one rule for rays and casts, in Rust, C, `baker query` and
/// Bevy.
///
/// ```
/// use kiln_runtime::{Vec3, is_direction};
/// assert!(is_direction(Vec3::new(0.0, -1e-10, 0.0)));
/// assert!(!is_direction(Vec3::new(0.0, -1e-38, 0.0)));
/// assert!(!is_direction(Vec3::ZERO));
/// assert!(!is_direction(Vec3::new(f32::INFINITY, 0.0, 0.0)));
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Pose, QueryShape, Ray, ShapeCast};
/// // refused: no hit (never one at a NaN point)
/// let tiny = Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::new(0.0, -1e-38, 0.0), f32::INFINITY);
/// assert!(level.raycast(&tiny, &Filter::ALL).is_none());
/// // a zero motion is refused the same way, even starting in the floor
/// let ball = QueryShape::Sphere { radius: 0.5 };
/// let still = ShapeCast::new(ball, Pose::at(Vec3::new(12.0, 0.0, 5.0)), Vec3::ZERO, 1.0);
/// assert!(level.cast(&still, &Filter::ALL).is_none());
/// ```
pub fn is_direction(v: Vec3) -> bool {
    v.is_finite() && v.length_squared() >= f32::MIN_POSITIVE
}

/// The closest hit of a ray.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Ray, Vec3};
/// // into the wall's face from outside, then from inside the wall
/// let hit = level.raycast(&Ray::new(Vec3::new(12.0, 1.0, 12.0), Vec3::X, 10.0), &Filter::ALL).unwrap();
/// assert!(hit.front_face && hit.feature.is_some());
/// assert!((hit.point - Vec3::new(16.0, 1.0, 12.0)).length() < 1e-5);
/// let inside = level.raycast(&Ray::new(Vec3::new(16.25, 1.0, 12.0), Vec3::X, 10.0), &Filter::ALL).unwrap();
/// assert_eq!((inside.t, inside.front_face, inside.feature), (0.0, false, None));
/// assert_eq!(inside.normal, Vec3::NEG_X);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// World-space hit point (`origin + t · dir`).
    pub point: Vec3,
    /// Unit geometric normal of the surface hit, facing the ray's origin.
    /// A ray that starts inside a solid reports `t = 0` and `-dir`
    /// (normalised) here.
    pub normal: Vec3,
    /// Whether the ray hit the surface's front face (for triangles:
    /// counter-clockwise in glTF terms, after the node transform's
    /// handedness; for solids: the outside). False for a ray that starts
    /// inside a solid.
    pub front_face: bool,
    /// The object hit (see [`Level::object_name`]).
    pub object: ObjectId,
    /// The feature hit: for a triangle mesh, the index of the triangle in
    /// its source mesh (primitives concatenated); for a box or a polytope,
    /// its face (plane index); for a concave solid, the index of the
    /// triangle in its collider. `None` for a sphere or capsule collider
    /// (one smooth surface), and for a ray that starts inside a solid: it
    /// crosses no surface.
    pub feature: Option<u32>,
}

/// The rows an answer found in world space goes through: the identity.
pub(super) const WORLD_ROWS: Mat3x4 = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];

/// What a ray search found: the shape's answer in its local space, the
/// instance, and the instance's local-from-world rows it was found
/// through, which the world normal needs again (not computing a turned
/// placement's rows a second time: 300 spheres rays 2.02 → 2.19 M/s).
#[derive(Clone, Copy)]
pub(super) struct RayFound {
    pub(super) hit: LocalRayHit,
    pub(super) object: ObjectId,
    pub(super) local_from_world: Mat3x4,
}

/// An instance leaf as a ray search takes it.
pub(super) enum Leaf<'a> {
    /// Its shape and the ray in its local space, with the rows it took.
    Local(ColliderRef<'a>, Vec3, Vec3, Mat3x4),
    /// A sphere's or capsule's answer, found in world space (its normal
    /// goes through [`WORLD_ROWS`]).
    World(Option<LocalRayHit>),
}

/// Hit search over the top-level tree: each instance leaf asks its shape
/// for a hit within the current range.
pub(super) struct TopSearch<'a> {
    pub(super) level: &'a ArchivedLevel,
    pub(super) filter: &'a Filter<'a>,
    pub(super) ray: Ray,
    pub(super) t_max: f32,
    pub(super) any: bool,
    pub(super) hit: Option<RayFound>,
}

impl<'a> TopSearch<'a> {
    /// Instance `inst`'s shape and the ray in its local space, if the
    /// filter accepts the instance and the ray is not degenerate there;
    /// a sphere or capsule answers at once, in world space.
    #[inline]
    pub(super) fn local(&self, inst: u32) -> Option<Leaf<'a>> {
        if !self.filter.sees(self.level, inst) {
            return None;
        }
        let level = self.level;
        let instance = &level.instances[inst as usize];
        let shape = ColliderRef(&level.colliders[instance.collider.to_native() as usize]);
        let at = At::Instance(level, instance);
        if let Some(h) = shape.raycast_world(&at, self.ray.origin, self.ray.dir, self.t_max) {
            return Some(Leaf::World(h));
        }
        let local = level.local_from_world(instance);
        let (lo, ld) = local_ray(&local, self.ray.origin, self.ray.dir)?;
        Some(Leaf::Local(shape, lo, ld, local))
    }

    /// Keeps `object`'s answer `h` (found through its rows `local`) if it
    /// is the closest so far; returns `true` when the walk may stop (any
    /// hit, and one is found).
    #[inline]
    pub(super) fn offer(
        &mut self,
        h: Option<LocalRayHit>,
        object: ObjectId,
        local: &Mat3x4,
    ) -> bool {
        if let Some(h) = h
            && (self.hit.is_none() || h.t < self.t_max)
        {
            self.t_max = h.t;
            self.hit = Some(RayFound {
                hit: h,
                object,
                local_from_world: *local,
            });
        }
        self.any && self.hit.is_some()
    }
}

impl ObjectVisitor for TopSearch<'_> {
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn object(&mut self, id: ObjectId, shape: ColliderRef<'_>, at: At<'_>) -> bool {
        if let Some(h) = shape.raycast_world(&at, self.ray.origin, self.ray.dir, self.t_max) {
            return self.offer(h, id, &WORLD_ROWS);
        }
        let local = at.local_from_world();
        let Some((lo, ld)) = local_ray(&local, self.ray.origin, self.ray.dir) else {
            return false;
        };
        let h = shape.raycast_local(lo, ld, self.t_max, self.any);
        self.offer(h, id, &local)
    }
}

/// Whether-search over the top-level tree: the first object the ray hits
/// ends it, and nothing of the hit is kept (no answer, no rows, no
/// normal: [`TopSearch`] with `any` kept them all, 2,272 → 2,174
/// instructions an any-hit ray on sauer_pandora, counted by callgrind).
/// Its range never shrinks: its first hit ends it.
pub(super) struct AnySearch {
    pub(super) ray: Ray,
    pub(super) hit: bool,
}

impl ObjectVisitor for AnySearch {
    #[inline]
    fn t_max(&self) -> f32 {
        self.ray.max_t
    }
    #[inline]
    fn object(&mut self, _id: ObjectId, shape: ColliderRef<'_>, at: At<'_>) -> bool {
        let (o, d, t) = (self.ray.origin, self.ray.dir, self.ray.max_t);
        self.hit = match shape.raycast_world(&at, o, d, t) {
            Some(h) => h.is_some(),
            None => at
                .local_ray(o, d)
                .is_some_and(|(lo, ld)| shape.raycast_local_any(lo, ld, t)),
        };
        self.hit
    }
}

impl Scope<'_> {
    /// Walks the scope for `ray` (which must be valid).
    pub(super) fn search(&self, ray: &Ray, any: bool, filter: &Filter) -> Option<RayFound> {
        let mut v = TopSearch {
            level: self.level.archive(),
            filter,
            ray: *ray,
            t_max: ray.max_t,
            any,
            hit: None,
        };
        self.walk_line(ray, filter, &mut v);
        v.hit
    }

    /// [`Scope::walk_ray`] for the ray itself (nothing grown): what
    /// [`Scope::search`] and [`Scope::raycast_any`] walk.
    #[inline(always)]
    fn walk_line(&self, ray: &Ray, filter: &Filter, v: &mut impl ObjectVisitor) {
        self.walk_ray(&SlabRay::new(ray.origin, ray.dir), &Grow::NONE, filter, v);
    }

    /// The closest hit of a valid or invalid ray ([`Level::raycast`]).
    pub(crate) fn raycast(&self, ray: &Ray, filter: &Filter) -> Option<RayHit> {
        if !ray.is_valid() {
            return None;
        }
        let found = self.search(ray, false, filter)?;
        Some(world_hit(ray, found))
    }

    /// Whether a ray hits anything ([`Level::raycast_any`]).
    pub(crate) fn raycast_any(&self, ray: &Ray, filter: &Filter) -> bool {
        if !ray.is_valid() {
            return false;
        }
        let mut v = AnySearch {
            ray: *ray,
            hit: false,
        };
        self.walk_line(ray, filter, &mut v);
        v.hit
    }
}

/// The world answer to `ray` from what a search found. Always inlined:
/// called, it took the search's 88-byte answer through memory, and the
/// closest rays on sauer_pandora ran about 2% slower (best of each of
/// eight interleaved runs: 353–377 ms a million, median 359, against
/// 349–362, median 352, inlined). Fewer instructions elsewhere around the
/// walk (4% of them) moved nothing: see BENCHMARKS.md.
#[inline(always)]
pub(super) fn world_hit(ray: &Ray, found: RayFound) -> RayHit {
    let (h, object) = (found.hit, found.object);
    if h.inside {
        return RayHit {
            t: 0.0,
            point: ray.origin,
            normal: -ray.dir.normalize(),
            front_face: false,
            object,
            feature: None,
        };
    }
    // front normal in world space: L^T n (glTF: a mirroring transform
    // flips the winding, which this inverse-transpose form already does)
    let n = transpose_vector(&found.local_from_world, h.normal).normalize_or_zero();
    let front_face = n.dot(ray.dir) < 0.0;
    RayHit {
        t: h.t,
        point: ray.origin + ray.dir * h.t,
        normal: if front_face { n } else { -n },
        front_face,
        object,
        feature: h.feature,
    }
}

impl Level {
    /// The closest hit of `ray` on the objects `filter` accepts, or
    /// `None`. An invalid ray (see [`Ray::is_valid`]) hits nothing.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // along +x at head height: the wall's face at x = 16
    /// let ray = Ray::new(Vec3::new(12.0, 1.0, 10.0), Vec3::X, 100.0);
    /// let hit = level.raycast(&ray, &Filter::ALL).unwrap();
    /// assert_eq!(level.object_name(hit.object).as_deref(), Some("wall"));
    /// assert!((hit.t - 4.0).abs() < 1e-5 && hit.normal.abs_diff_eq(Vec3::NEG_X, 1e-6) && hit.front_face);
    /// // without the wall, the ray leaves the level
    /// let wall = [hit.object];
    /// assert_eq!(level.raycast(&ray, &Filter::skip(&wall)), None);
    /// ```
    pub fn raycast(&self, ray: &Ray, filter: &Filter) -> Option<RayHit> {
        Scope::of(self).raycast(ray, filter)
    }

    /// Whether `ray` hits any object `filter` accepts (an occlusion test:
    /// it stops at the first hit found, not the closest).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // can a point at (12, 1, 10) see one at (18, 1, 10)? The wall is between.
    /// let (eye, target) = (Vec3::new(12.0, 1.0, 10.0), Vec3::new(18.0, 1.0, 10.0));
    /// assert!(level.raycast_any(&Ray::new(eye, target - eye, 1.0), &Filter::ALL));
    /// // over the 3 m wall, yes
    /// let high = Vec3::Y * 3.0;
    /// assert!(!level.raycast_any(&Ray::new(eye + high, target - eye, 1.0), &Filter::ALL));
    /// ```
    pub fn raycast_any(&self, ray: &Ray, filter: &Filter) -> bool {
        Scope::of(self).raycast_any(ray, filter)
    }

    /// [`Level::raycast`] for many rays on the rayon pool; `out[i]`
    /// answers `rays[i]`.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // a 10 x 10 grid of rays down onto the floor tiles
    /// let rays: Vec<Ray> = (0..100)
    ///     .map(|i| Ray::new(Vec3::new(10.5 + (i % 10) as f32 * 0.5, 5.0, 0.5 + (i / 10) as f32 * 1.9), Vec3::NEG_Y, 10.0))
    ///     .collect();
    /// let mut hits = vec![None; rays.len()];
    /// level.raycast_batch(&rays, &Filter::ALL, &mut hits);
    /// assert!(hits.iter().all(|h| h.is_some_and(|h| h.point.y.abs() < 1e-4)));
    /// ```
    pub fn raycast_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]) {
        super::batch_chunks(rays, out, 256, |r, o| self.raycast_many(r, filter, o));
    }

    /// [`Level::raycast_any`] for many rays on the rayon pool; `out[i]`
    /// answers `rays[i]`.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // sight lines from (12, h, 10) across the 3 m wall at x = 16
    /// let rays: Vec<Ray> = [1.0, 2.0, 4.0, 5.0]
    ///     .map(|h| Ray::new(Vec3::new(12.0, h, 10.0), Vec3::X, 6.0))
    ///     .to_vec();
    /// let mut blocked = vec![false; rays.len()];
    /// level.raycast_any_batch(&rays, &Filter::ALL, &mut blocked);
    /// assert_eq!(blocked, [true, true, false, false]);
    /// ```
    pub fn raycast_any_batch(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]) {
        super::batch_chunks(rays, out, 256, |r, o| self.raycast_any_many(r, filter, o));
    }

    /// [`Level::raycast`] for many rays on the calling thread only (for an
    /// engine's own job system); `out[i]` answers `rays[i]`, exactly as
    /// `raycast` would. On archives of 4 MiB or more, several rays are
    /// walked side by side, so one ray's wait for memory overlaps another's
    /// work: on a level larger than the cache this answers a batch faster
    /// than one call per ray (smaller archives, which stay in cache, are
    /// walked one ray at a time).
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// let rays = [
    ///     Ray::new(Vec3::new(12.0, 1.0, 10.0), Vec3::X, 100.0), // into the wall
    ///     Ray::new(Vec3::new(12.0, 1.0, 10.0), Vec3::Y, 100.0), // up into the sky
    /// ];
    /// let mut hits = [None; 2];
    /// level.raycast_many(&rays, &Filter::ALL, &mut hits);
    /// assert_eq!(hits[0], level.raycast(&rays[0], &Filter::ALL));
    /// assert!(hits[0].is_some() && hits[1].is_none());
    /// ```
    pub fn raycast_many(&self, rays: &[Ray], filter: &Filter, out: &mut [Option<RayHit>]) {
        self.raycast_many_as(rays, filter, out, self.interleaves());
    }

    pub(super) fn raycast_many_as(
        &self,
        rays: &[Ray],
        filter: &Filter,
        out: &mut [Option<RayHit>],
        interleave: bool,
    ) {
        assert_eq!(rays.len(), out.len(), "one output slot per query");
        self.search_many(rays, filter, false, interleave, |i, found| {
            out[i] = found.map(|f| world_hit(&rays[i], f));
        });
    }

    pub(super) fn raycast_any_many_as(
        &self,
        rays: &[Ray],
        filter: &Filter,
        out: &mut [bool],
        interleave: bool,
    ) {
        assert_eq!(rays.len(), out.len(), "one output slot per query");
        if !interleave {
            // one at a time, each a whether-search (no answer kept)
            let scope = Scope::of(self);
            for (o, ray) in out.iter_mut().zip(rays) {
                *o = scope.raycast_any(ray, filter);
            }
            return;
        }
        // side by side (the lanes' walk carries `any`)
        self.search_many(rays, filter, true, true, |i, found| {
            out[i] = found.is_some()
        });
    }

    /// [`Level::raycast_any`] for many rays on the calling thread only,
    /// walked side by side as [`Level::raycast_many`] walks them; `out[i]`
    /// answers `rays[i]`.
    ///
    /// # Panics
    /// If `out` and `rays` differ in length.
    pub fn raycast_any_many(&self, rays: &[Ray], filter: &Filter, out: &mut [bool]) {
        self.raycast_any_many_as(rays, filter, out, self.interleaves());
    }
}
