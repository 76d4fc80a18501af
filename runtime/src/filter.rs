//! Which objects a query sees.

use crate::ObjectId;
use kiln_formats::level::ArchivedLevel;

/// Which objects a query sees: all of them by default; only those in
/// some collision layers (a mask over [`crate::Level::layer_names`]),
/// some skipped (a character's own object), or only those a predicate
/// keeps. A filtered-out object is as if it were not in the level.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::Filter;
/// let [o2, o3, o5] = [2, 3, 5].map(|i| level.object(i).unwrap());
/// let own = [o3];
/// let keep_even = |o: kiln_runtime::ObjectId| o.index() % 2 == 0;
/// let f = Filter::skip(&own).keep(&keep_even).layers(0b10);
/// // object 2 in layer 1 passes; in layer 0 only, it does not
/// assert!(f.accepts(o2, 0b10) && !f.accepts(o2, 0b01));
/// assert!(!f.accepts(o3, 0b10) && !f.accepts(o5, 0b10));
/// assert!(Filter::ALL.accepts(o3, 0b01));
/// ```
#[derive(Clone, Copy)]
pub struct Filter<'a> {
    skip: &'a [ObjectId],
    keep: Option<&'a (dyn Fn(ObjectId) -> bool + Sync)>,
    layers: u32,
    triggers: bool,
    /// The numbering of the level's objects this filter is asked of: 0
    /// for a level's own, a mounted tile's number for that tile's (so
    /// `skip` and `keep` see the ids a [`crate::World`] gives them).
    tag: u32,
}

impl Default for Filter<'_> {
    fn default() -> Self {
        Filter::ALL
    }
}

impl std::fmt::Debug for Filter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("skip", &self.skip)
            .field("keep", &self.keep.map(|_| "predicate"))
            .field("layers", &format_args!("{:#x}", self.layers))
            .field("triggers", &self.triggers)
            .finish()
    }
}

impl<'a> Filter<'a> {
    /// Every object but trigger volumes (see [`Filter::triggers`]).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::Filter;
    /// let wall = level.find_object("wall").unwrap();
    /// assert!(Filter::ALL.accepts(wall, 1) && Filter::ALL.accepts(wall, 1 << 31));
    /// assert!(Filter::default().accepts(wall, 1));
    /// ```
    pub const ALL: Filter<'static> = Filter {
        skip: &[],
        keep: None,
        layers: u32::MAX,
        triggers: false,
        tag: 0,
    };

    /// Every object but these.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::Filter;
    /// let [o4, o5, o9] = [4, 5, 9].map(|i| level.object(i).unwrap());
    /// let mine = [o4, o9];
    /// let others = Filter::skip(&mine);
    /// assert!(!others.accepts(o4, 1) && !others.accepts(o9, 1) && others.accepts(o5, 1));
    /// ```
    pub fn skip(objects: &'a [ObjectId]) -> Filter<'a> {
        Filter {
            skip: objects,
            ..Filter::ALL
        }
    }

    /// Only the objects in at least one of the layers of `mask` (bits
    /// from [`crate::Level::layer`]).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// let walkable = level.layer("default").unwrap();
    /// let down = Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::NEG_Y, 10.0);
    /// assert!(level.raycast(&down, &Filter::ALL.layers(walkable)).is_some());
    /// assert!(!Filter::ALL.layers(0b10).accepts(level.object(0).unwrap(), 0b01));
    /// ```
    pub fn layers(self, mask: u32) -> Filter<'a> {
        Filter {
            layers: mask,
            ..self
        }
    }

    /// Also drops the objects `keep` answers `false` for (it is called
    /// with the object, from any thread).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // only the floor tiles, by name
    /// let floors = |o| level.object_name(o).is_some_and(|n| n.starts_with("floor"));
    /// let only_floors = Filter::ALL.keep(&floors);
    /// let along = Ray::new(Vec3::new(12.0, 1.0, 12.0), Vec3::X, 10.0);
    /// assert!(level.raycast(&along, &Filter::ALL).is_some()); // the wall
    /// assert!(level.raycast(&along, &only_floors).is_none());
    /// ```
    pub fn keep(self, keep: &'a (dyn Fn(ObjectId) -> bool + Sync)) -> Filter<'a> {
        Filter {
            keep: Some(keep),
            ..self
        }
    }

    /// Also (with `true`) the trigger volumes of a [`crate::World`]: no
    /// query sees them unless it asks. A trigger counts as any object for
    /// layers, skips and predicates.
    ///
    /// ```
    /// use kiln_runtime::Filter;
    /// assert!(!Filter::ALL.sees_triggers() && Filter::ALL.triggers(true).sees_triggers());
    /// ```
    pub fn triggers(self, yes: bool) -> Filter<'a> {
        Filter {
            triggers: yes,
            ..self
        }
    }

    /// Whether the filter lets trigger volumes through.
    #[inline]
    pub fn sees_triggers(&self) -> bool {
        self.triggers
    }

    /// Whether a query sees `object`, whose layers are `layers`
    /// ([`crate::Level::object_layers`]).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::Filter;
    /// let f = Filter::ALL.layers(0b100);
    /// let o3 = level.object(3).unwrap();
    /// assert!(f.accepts(o3, 0b110) && !f.accepts(o3, 0b011));
    /// ```
    #[inline]
    pub fn accepts(&self, object: ObjectId, layers: u32) -> bool {
        layers & self.layers != 0
            && !self.skip.contains(&object)
            && self.keep.is_none_or(|k| k(object))
    }

    /// [`Filter::accepts`] for an instance of `level` (verified: in
    /// range), the one check every query's tree walk makes per object. A
    /// filter over every layer does not read the layer masks.
    #[inline]
    pub(crate) fn sees(&self, level: &ArchivedLevel, instance: u32) -> bool {
        let layers = if self.layers == u32::MAX {
            u32::MAX
        } else {
            level.instances[instance as usize].layers.to_native()
        };
        self.accepts(ObjectId::in_namespace(instance, self.tag), layers)
    }

    /// This filter asked of a mounted tile's level: its objects named as
    /// tile `tag`'s, its layers `mask` in that level's numbering.
    #[inline]
    pub(crate) fn in_tile(&self, tag: u32, mask: u32) -> Filter<'a> {
        Filter {
            tag,
            layers: mask,
            ..*self
        }
    }

    /// Whether the predicate ([`Filter::keep`]) keeps `object`.
    #[inline]
    pub(crate) fn keeps(&self, object: ObjectId) -> bool {
        self.keep.is_none_or(|k| k(object))
    }

    /// This filter with `keep` as its whole predicate (which should ask
    /// [`Filter::keeps`] of this one to keep its say).
    #[inline]
    pub(crate) fn keeping<'b>(&self, keep: &'b (dyn Fn(ObjectId) -> bool + Sync)) -> Filter<'b>
    where
        'a: 'b,
    {
        Filter {
            keep: Some(keep),
            ..*self
        }
    }

    /// The layer mask, in the numbering of the level asked.
    #[inline]
    pub(crate) fn layer_mask(&self) -> u32 {
        self.layers
    }
}
