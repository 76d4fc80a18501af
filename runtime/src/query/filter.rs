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
    pub const ALL: Filter<'static> = Filter {
        skip: &[],
        keep: None,
        layers: u32::MAX,
    };

    /// Every object but these instances.
    pub fn skip(instances: &'a [u32]) -> Filter<'a> {
        Filter {
            skip: instances,
            ..Filter::ALL
        }
    }

    /// Only the objects in at least one of the layers of `mask` (bits
    /// from [`crate::Level::layer`]).
    pub fn layers(self, mask: u32) -> Filter<'a> {
        Filter {
            layers: mask,
            ..self
        }
    }

    /// Also drops the objects `keep` answers `false` for (it is called
    /// with the instance index, from any thread).
    pub fn keep(self, keep: &'a (dyn Fn(u32) -> bool + Sync)) -> Filter<'a> {
        Filter {
            keep: Some(keep),
            ..self
        }
    }

    /// Whether a query sees instance `instance`, whose layers are
    /// `layers` ([`crate::Level::object_layers`]).
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
            level.instance_layers[instance as usize].to_native()
        };
        self.accepts(instance, layers)
    }
}
