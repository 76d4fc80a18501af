//! The name every query gives the things it meets.

/// One object of a level (a placed collider) or one body of a
/// [`crate::World`], as every query answer and every method that takes or
/// gives an object names it.
///
/// A level's objects are numbered from 0 to [`crate::Level::object_count`]
/// in archive order; [`ObjectId::index`] is that number (to index a
/// caller's own tables). Numbers may change when a level is re-baked;
/// names ([`crate::Level::object_name`], [`crate::Level::find_object`])
/// are the identity that survives a re-bake. A body's id
/// ([`ObjectId::is_body`]) holds its slot and how often that slot was
/// used, so it names that body alone until it is removed.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// let wall = level.find_object("wall").unwrap();
/// assert_eq!(level.object(wall.index()), Some(wall));
/// assert_eq!(level.objects().filter(|&o| level.object_name(o).as_deref() == Some("wall")).count(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(u64);

impl ObjectId {
    /// The level's object numbered `index`.
    #[inline]
    pub(crate) const fn level(index: u32) -> ObjectId {
        ObjectId(index as u64)
    }

    /// The body in slot `slot` of a [`crate::World`], in its
    /// `generation`-th use (from 1: a slot reused after a removal names a
    /// new body).
    #[inline]
    pub(crate) const fn body(slot: u32, generation: u32) -> ObjectId {
        ObjectId(((generation as u64) << 32) | slot as u64)
    }

    /// The id as one 64-bit number, to keep in a foreign table or hand
    /// across a C boundary; [`ObjectId::from_bits`] turns it back.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::ObjectId;
    /// let wall = level.find_object("wall").unwrap();
    /// assert_eq!(ObjectId::from_bits(wall.to_bits()), wall);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// The id [`ObjectId::to_bits`] gave. Any number is an id; one that
    /// names no object is answered as such (no name, no layers,
    /// [`crate::WorldError::Unknown`] when moved or removed).
    #[inline]
    pub const fn from_bits(bits: u64) -> ObjectId {
        ObjectId(bits)
    }

    /// The object's number: among its level's objects for a level's
    /// object, its slot among the world's bodies for a body a
    /// [`crate::World`] was given (slots are reused; the id as a whole is
    /// not).
    #[inline]
    pub const fn index(self) -> u32 {
        self.0 as u32
    }

    /// Whether this is a body given to a [`crate::World`] (inserted or
    /// spawned), not one of a level's objects.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// assert!(!level.find_object("wall").unwrap().is_body());
    /// ```
    #[inline]
    pub const fn is_body(self) -> bool {
        self.0 >> 32 != 0
    }

    /// The number of a level's object (`None` for a body).
    #[inline]
    pub(crate) const fn level_index(self) -> Option<u32> {
        if self.is_body() {
            None
        } else {
            Some(self.0 as u32)
        }
    }

    /// A body's generation (0 for a level's object).
    #[inline]
    pub(crate) const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_body() {
            write!(f, "body {}.{}", self.index(), self.generation())
        } else {
            write!(f, "object {}", self.0)
        }
    }
}
