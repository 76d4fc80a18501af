//! The name every query gives the things it meets.

/// One object of a level: a placed collider, as every query answer and
/// every [`crate::Level`] method that takes or gives an object names it.
///
/// A level's objects are numbered from 0 to [`crate::Level::object_count`]
/// in archive order; [`ObjectId::index`] is that number (to index a
/// caller's own tables). Numbers may change when a level is re-baked;
/// names ([`crate::Level::object_name`], [`crate::Level::find_object`])
/// are the identity that survives a re-bake.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// let wall = level.find_object("wall").unwrap();
/// assert_eq!(level.object(wall.index()), Some(wall));
/// assert_eq!(level.objects().filter(|&o| level.object_name(o) == "wall").count(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub(crate) u32);

impl ObjectId {
    /// The object's number among its level's objects.
    #[inline]
    pub const fn index(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "object {}", self.0)
    }
}
