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
        self.0 >> 32 != 0 && self.0 & TILE_BIT == 0
    }

    /// An object of the tile a [`crate::World`] mounted as `tile`
    /// ([`TileId`]), numbered `index` among that tile's level's objects.
    #[inline]
    pub(crate) const fn tile_object(tile: TileId, index: u32) -> ObjectId {
        ObjectId(TILE_BIT | ((tile.0 as u64) << 32) | index as u64)
    }

    /// The same object numbered in namespace `tag`: a level's own object
    /// as tile `tag`'s (tag 0: the level's own numbering, unchanged).
    #[inline]
    pub(crate) const fn in_namespace(index: u32, tag: u32) -> ObjectId {
        if tag == 0 {
            ObjectId::level(index)
        } else {
            ObjectId::tile_object(TileId(tag), index)
        }
    }

    /// The tile whose object this is, for an object of a tile a
    /// [`crate::World`] mounted ([`crate::World::mount`]); `None` for a
    /// body or an object of the world's own level.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// assert_eq!(level.find_object("wall").unwrap().tile(), None);
    /// ```
    #[inline]
    pub const fn tile(self) -> Option<TileId> {
        if self.0 & TILE_BIT != 0 {
            Some(TileId(((self.0 & !TILE_BIT) >> 32) as u32))
        } else {
            None
        }
    }

    /// The number of a level's object (`None` for a body).
    #[inline]
    pub(crate) const fn level_index(self) -> Option<u32> {
        if self.0 >> 32 != 0 {
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
        } else if let Some(tile) = self.tile() {
            write!(f, "object {} of tile {}", self.index(), tile.0)
        } else {
            write!(f, "object {}", self.0)
        }
    }
}

/// The top bit of an [`ObjectId`]: set for a mounted tile's object, whose
/// tile's number is in the 31 bits below it (a body's generation stays
/// below 2³¹, so the two never meet).
const TILE_BIT: u64 = 1 << 63;

/// The largest tile number, and body generation, an [`ObjectId`] holds.
pub(crate) const MAX_TAG: u32 = (1 << 31) - 1;

/// A tile a [`crate::World`] mounted ([`crate::World::mount`]): its
/// objects' ids carry it ([`ObjectId::tile`]). Every mount gets a new
/// number, so an id of a tile that was unmounted names nothing, even
/// after the same tile is mounted again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileId(pub(crate) u32);

impl TileId {
    /// The number, to keep in a foreign table; unique among the mounts
    /// of one world.
    pub const fn to_bits(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for TileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tile {}", self.0)
    }
}
