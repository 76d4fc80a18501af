//! Which objects a query sees.

use kiln_formats::level::ArchivedLevel;

/// Which objects a query sees: all of them by default; only those in
/// some collision layers (a mask over [`crate::Level::layer_names`]),
/// some skipped by instance index (a character's own object), or only
/// those a predicate keeps. A filtered-out object is as if it were not in
/// the level.
///
/// ```
/// use kiln_runtime::Filter;
/// let own = [3];
/// let keep_even = |i: u32| i % 2 == 0;
/// let f = Filter::skip(&own).keep(&keep_even).layers(0b10);
/// // instance 2 in layer 1 passes; in layer 0 only, it does not
/// assert!(f.accepts(2, 0b10) && !f.accepts(2, 0b01));
/// assert!(!f.accepts(3, 0b10) && !f.accepts(5, 0b10));
/// assert!(Filter::ALL.accepts(3, 0b01));
/// ```
#[derive(Clone, Copy)]
pub struct Filter<'a> {
    skip: &'a [u32],
    keep: Option<&'a (dyn Fn(u32) -> bool + Sync)>,
    layers: u32,
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
            .finish()
    }
}

impl<'a> Filter<'a> {
    /// Every object.
    ///
    /// ```
    /// use kiln_runtime::Filter;
    /// assert!(Filter::ALL.accepts(0, 1) && Filter::ALL.accepts(u32::MAX, 1 << 31));
    /// assert!(Filter::default().accepts(7, 1));
    /// ```
    pub const ALL: Filter<'static> = Filter {
        skip: &[],
        keep: None,
        layers: u32::MAX,
    };

    /// Every object but these instances.
    ///
    /// ```
    /// use kiln_runtime::Filter;
    /// let mine = [4, 9];
    /// let others = Filter::skip(&mine);
    /// assert!(!others.accepts(4, 1) && !others.accepts(9, 1) && others.accepts(5, 1));
    /// ```
    pub fn skip(instances: &'a [u32]) -> Filter<'a> {
        Filter {
            skip: instances,
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
    /// assert!(!Filter::ALL.layers(0b10).accepts(0, 0b01));
    /// ```
    pub fn layers(self, mask: u32) -> Filter<'a> {
        Filter {
            layers: mask,
            ..self
        }
    }

    /// Also drops the objects `keep` answers `false` for (it is called
    /// with the instance index, from any thread).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// // only the floor tiles, by name
    /// let floors = |i: u32| level.object_name(i).starts_with("floor");
    /// let only_floors = Filter::ALL.keep(&floors);
    /// let along = Ray::new(Vec3::new(12.0, 1.0, 12.0), Vec3::X, 10.0);
    /// assert!(level.raycast(&along, &Filter::ALL).is_some()); // the wall
    /// assert!(level.raycast(&along, &only_floors).is_none());
    /// ```
    pub fn keep(self, keep: &'a (dyn Fn(u32) -> bool + Sync)) -> Filter<'a> {
        Filter {
            keep: Some(keep),
            ..self
        }
    }

    /// Whether a query sees instance `instance`, whose layers are
    /// `layers` ([`crate::Level::object_layers`]).
    ///
    /// ```
    /// use kiln_runtime::Filter;
    /// let f = Filter::ALL.layers(0b100);
    /// assert!(f.accepts(3, 0b110) && !f.accepts(3, 0b011));
    /// ```
    #[inline]
    pub fn accepts(&self, instance: u32, layers: u32) -> bool {
        layers & self.layers != 0
            && !self.skip.contains(&instance)
            && self.keep.is_none_or(|k| k(instance))
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
        self.accepts(instance, layers)
    }
}
