//! Which objects a query sees.

/// Which objects a query sees: all of them by default; some skipped by
/// instance index (a character's own object), or only those a predicate
/// keeps. A filtered-out object is as if it were not in the level.
///
/// ```
/// use kiln_runtime::Filter;
/// let own = [3];
/// let keep_even = |i: u32| i % 2 == 0;
/// let f = Filter::skip(&own).keep(&keep_even);
/// assert!(f.accepts(2) && !f.accepts(3) && !f.accepts(5));
/// assert!(Filter::ALL.accepts(3));
/// ```
#[derive(Clone, Copy, Default)]
pub struct Filter<'a> {
    skip: &'a [u32],
    keep: Option<&'a (dyn Fn(u32) -> bool + Sync)>,
}

impl std::fmt::Debug for Filter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("skip", &self.skip)
            .field("keep", &self.keep.map(|_| "predicate"))
            .finish()
    }
}

impl<'a> Filter<'a> {
    /// Every object.
    pub const ALL: Filter<'static> = Filter {
        skip: &[],
        keep: None,
    };

    /// Every object but these instances.
    pub fn skip(instances: &'a [u32]) -> Filter<'a> {
        Filter {
            skip: instances,
            keep: None,
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

    /// Whether a query sees instance `instance`.
    #[inline]
    pub fn accepts(&self, instance: u32) -> bool {
        !self.skip.contains(&instance) && self.keep.is_none_or(|k| k(instance))
    }
}
