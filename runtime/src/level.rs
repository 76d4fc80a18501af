//! Opening an archive: map (or read) the file, check the fixed header and the
//! body checksum, then rkyv's checked access plus `kiln_formats::verify`.
//! After that, queries run on the mapped bytes without re-checking.

use crate::object::ObjectId;
use kiln_formats::{ArchiveError, ArchivedLevel, HEADER_LEN, Header};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why an archive could not be opened.
///
/// ```
/// use kiln_runtime::{Level, OpenError};
/// match Level::from_bytes(b"KILN but not really") {
///     Err(OpenError::Invalid { path, error }) => {
///         assert_eq!(path, std::path::Path::new("<memory>"));
///         println!("refused: {error}");
///     }
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(Level::open("no/such.kiln"), Err(OpenError::Io { .. })));
/// ```
#[derive(Debug, Error)]
pub enum OpenError {
    /// The file could not be read or mapped.
    #[error("{}: {error}", path.display())]
    Io {
        /// The archive path.
        path: PathBuf,
        /// The I/O error (part of the message, so not repeated as a source).
        error: std::io::Error,
    },
    /// The file is not a valid archive.
    #[error("{}: {error}", path.display())]
    Invalid {
        /// The archive path (`<memory>` for in-memory archives).
        path: PathBuf,
        /// What is wrong.
        error: ArchiveError,
    },
}

enum Storage {
    Mapped(memmap2::Mmap),
    Owned(rkyv::util::AlignedVec<{ kiln_formats::header::BODY_ALIGN }>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// A validated, immutable baked level. Cheap to share between threads
/// (`&Level` is `Sync`); every query takes `&self`.
///
/// ```
/// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
/// use kiln_runtime::{Filter, Ray, Vec3};
/// std::thread::scope(|s| {
///     for x in [11.0, 12.0, 13.0] {
///         let level = &level;
///         s.spawn(move || {
///             let down = Ray::new(Vec3::new(x, 5.0, 5.0), Vec3::NEG_Y, 10.0);
///             assert!(level.raycast(&down, &Filter::ALL).is_some());
///         });
///     }
/// });
/// ```
pub struct Level {
    storage: Storage,
    header: Header,
    /// Each object's authored body (`u32::MAX`: none), made on first
    /// use ([`Level::authored_body_of`]), not at load.
    body_of: std::sync::OnceLock<Box<[u32]>>,
}

impl Level {
    /// Memory-maps and validates an archive. Loading does no parsing and no
    /// allocation proportional to the file: the body is used in place.
    ///
    /// The file must not be modified in place while it is open (replacing it
    /// by rename, as `baker` always does, is fine: this mapping keeps the old
    /// file).
    ///
    /// ```
    /// # let bytes = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-open.kiln");
    /// # std::fs::write(&path, &bytes).unwrap();
    /// let level = kiln_runtime::Level::open(&path)?;
    /// assert!(level.find_object("wall").is_some());
    /// // a missing file names itself in the error
    /// let err = kiln_runtime::Level::open("no/such.kiln").unwrap_err();
    /// assert!(err.to_string().starts_with("no/such.kiln: "));
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Level, OpenError> {
        let path = path.as_ref();
        let io = |error| OpenError::Io {
            path: path.to_path_buf(),
            error,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only and private to this Level. The
        // one hazard of file mappings, another process truncating or
        // rewriting the file in place while it is mapped, is excluded by the
        // documented contract above (Kiln tools replace archives by atomic
        // rename, which leaves this mapping's inode untouched).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Level::validate(Storage::Mapped(map), path)
    }

    /// Reads an archive fully into memory and validates it (no mapping:
    /// for files that may change in place while open).
    ///
    /// ```
    /// # let bytes = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes;
    /// # let path = std::env::temp_dir().join("kiln-doc-read.kiln");
    /// # std::fs::write(&path, &bytes).unwrap();
    /// let level = kiln_runtime::Level::read(&path)?;
    /// assert_eq!(level.byte_len(), bytes.len());
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Level, OpenError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|error| OpenError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Level::from_bytes_named(&bytes, path)
    }

    /// Validates an archive held in memory (copied to aligned storage).
    ///
    /// ```
    /// # let bytes = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes;
    /// let level = kiln_runtime::Level::from_bytes(&bytes)?;
    /// assert!(level.object_count() > 0);
    /// // a truncated archive is refused, never half-read
    /// let err = kiln_runtime::Level::from_bytes(&bytes[..bytes.len() / 2]).unwrap_err();
    /// assert!(matches!(err, kiln_runtime::OpenError::Invalid { .. }), "{err}");
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Level, OpenError> {
        Level::from_bytes_named(bytes, Path::new("<memory>"))
    }

    /// A level of no objects, with the default layer alone: the own level
    /// of a world made only of tiles ([`crate::World::tiled`]).
    ///
    /// ```
    /// let empty = kiln_runtime::Level::empty();
    /// assert_eq!((empty.object_count(), empty.bounds()), (0, None));
    /// ```
    pub fn empty() -> Level {
        use kiln_formats::level as f;
        let level = f::Level {
            colliders: Vec::new(),
            instances: Vec::new(),
            affines: Vec::new(),
            names: Vec::new(),
            rules: Vec::new(),
            layer_names: vec![f::DEFAULT_LAYER.to_string()],
            top: f::TopTree::default(),
            decompositions: Vec::new(),
            bodies: Vec::new(),
        };
        let bytes = kiln_formats::encode(&level, [0; 16], [0; 3]);
        // an empty level verifies: nothing in it to refer out of range
        Level::from_bytes_named(&bytes, Path::new("<empty level>"))
            .expect("an empty level is a valid archive")
    }

    fn from_bytes_named(bytes: &[u8], path: &Path) -> Result<Level, OpenError> {
        let mut v = rkyv::util::AlignedVec::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        Level::validate(Storage::Owned(v), path)
    }

    fn validate(storage: Storage, path: &Path) -> Result<Level, OpenError> {
        let header = kiln_formats::access_file(storage.bytes())
            .map(|(h, _)| h)
            .map_err(|error| OpenError::Invalid {
                path: path.to_path_buf(),
                error,
            })?;
        Ok(Level {
            storage,
            header,
            body_of: std::sync::OnceLock::new(),
        })
    }

    /// The archive's fixed header: format version, content hash, the
    /// baker's version, flags.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Size of the archive in bytes.
    ///
    /// ```
    /// # let bytes = kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes;
    /// let level = kiln_runtime::Level::from_bytes(&bytes)?;
    /// assert_eq!(level.byte_len(), bytes.len());
    /// # Ok::<(), kiln_runtime::OpenError>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.storage.bytes().len()
    }

    /// The validated archive itself, read in place: the schema types of
    /// `kiln_formats` (objects, shapes, rules, the top-level tree), for
    /// what no query method answers. Reading it costs nothing; its layout
    /// follows the archive's format version, not this crate's API.
    #[inline]
    pub fn archive(&self) -> &ArchivedLevel {
        self.view()
    }

    #[inline]
    fn view(&self) -> &ArchivedLevel {
        let body = &self.storage.bytes()[HEADER_LEN..];
        // SAFETY: `validate` ran rkyv's checked access and our semantic
        // verification on exactly these bytes, which are immutable for the
        // life of `self` (owned buffer, or a read-only mapping under the
        // contract of `Level::open`), and the body is 16-byte aligned (page
        // or AlignedVec start + 64).
        unsafe { rkyv::access_unchecked::<ArchivedLevel>(body) }
    }

    /// The first object called `name`. Object names are the identity that
    /// survives a re-bake (object numbers may not).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let wall = level.find_object("wall").unwrap();
    /// assert_eq!(level.object_name(wall).as_deref(), Some("wall"));
    /// assert_eq!(level.find_object("no such object"), None);
    /// ```
    pub fn find_object(&self, name: &str) -> Option<ObjectId> {
        self.archive().find_instance(name).map(ObjectId::level)
    }

    /// The object numbered `index` ([`ObjectId::index`]), if the level
    /// has that many objects.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// assert_eq!(level.object(0).map(|o| o.index()), Some(0));
    /// assert_eq!(level.object(level.object_count()), None);
    /// ```
    pub fn object(&self, index: u32) -> Option<ObjectId> {
        (index < self.object_count()).then_some(ObjectId::level(index))
    }

    /// Every object of the level, in archive order.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// assert_eq!(level.objects().count() as u32, level.object_count());
    /// ```
    pub fn objects(&self) -> impl Iterator<Item = ObjectId> + use<> {
        (0..self.object_count()).map(ObjectId::level)
    }

    /// The name of `object`, `None` if it is not one of this level's (an
    /// unnamed object's name is empty). The placements of one glTF node's `EXT_mesh_gpu_instancing`
    /// are named `node#0`, `node#1`, …; the archive stores such a run of
    /// names once, so a numbered name is made on request (the `Cow` is
    /// owned then, borrowed from the archive otherwise).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let names: Vec<_> = level.objects().filter_map(|o| level.object_name(o)).collect();
    /// assert!(names.contains(&"stair_top".into()) && names.contains(&"ramp_20".into()));
    /// assert_eq!(level.object_name(kiln_runtime::ObjectId::from_bits(u64::MAX)), None);
    /// ```
    pub fn object_name(&self, object: ObjectId) -> Option<std::borrow::Cow<'_, str>> {
        self.instance(object)?;
        Some(self.archive().instance_name(object.level_index()? as usize))
    }

    /// The level's collision layer names; bit `k` of a layer mask is the
    /// `k`-th (the first is always `"default"`, where objects no rule puts
    /// in a layer go).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// // the sample sets no layers: everything is in "default"
    /// assert_eq!(level.layer_names().collect::<Vec<_>>(), ["default"]);
    /// ```
    pub fn layer_names(&self) -> impl Iterator<Item = &str> {
        self.archive().layer_names.iter().map(|s| s.as_str())
    }

    /// The mask bit of the layer called `name`, if the level has one (to
    /// build a [`crate::Filter::layers`] mask).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::{Filter, Ray, Vec3};
    /// let default = level.layer("default").unwrap();
    /// assert_eq!(default, 1);
    /// assert_eq!(level.layer("walkable"), None);
    /// // a ray that sees only layer 1 of the sample (nothing is in it) hits nothing
    /// let down = Ray::new(Vec3::new(12.0, 5.0, 5.0), Vec3::NEG_Y, 10.0);
    /// assert!(level.raycast(&down, &Filter::ALL.layers(default)).is_some());
    /// assert!(level.raycast(&down, &Filter::ALL.layers(0b10)).is_none());
    /// ```
    pub fn layer(&self, name: &str) -> Option<u32> {
        self.layer_names().position(|n| n == name).map(|k| 1 << k)
    }

    /// The layers of `object` as a mask, `None` if it is not one of this
    /// level's.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let wall = level.find_object("wall").unwrap();
    /// assert_eq!(level.object_layers(wall), level.layer("default"));
    /// ```
    pub fn object_layers(&self, object: ObjectId) -> Option<u32> {
        self.instance(object).map(|m| m.layers.to_native())
    }

    /// How `object` moves, `None` if it is not one of this level's.
    /// Movers are not in the level's own tree: a [`crate::World`] made of
    /// the level places them and the game moves them.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// use kiln_runtime::Motion;
    /// assert_eq!(level.object_motion(level.find_object("wall").unwrap()), Some(Motion::Static));
    /// ```
    pub fn object_motion(&self, object: ObjectId) -> Option<kiln_formats::level::Motion> {
        self.instance(object).map(|i| i.motion())
    }

    /// Whether `object` is a trigger volume (which queries see only when
    /// they ask, through a [`crate::World`]).
    pub fn is_trigger(&self, object: ObjectId) -> bool {
        self.instance(object).is_some_and(|i| i.is_trigger())
    }

    /// The objects outside the level's own tree — movers and triggers —
    /// which a [`crate::World`] made of the level places.
    pub fn movers_and_triggers(&self) -> impl Iterator<Item = ObjectId> + use<> {
        let a = self.archive();
        (a.top.leaves.to_native()..a.instances.len() as u32).map(ObjectId::level)
    }

    /// The level's fixed objects: static and not triggers, the top-level
    /// tree's leaves (every object [`Level::movers_and_triggers`] leaves
    /// out).
    pub fn static_objects(&self) -> impl Iterator<Item = ObjectId> + use<> {
        (0..self.archive().top.leaves.to_native()).map(ObjectId::level)
    }

    pub(crate) fn instance(
        &self,
        object: ObjectId,
    ) -> Option<&kiln_formats::level::ArchivedInstance> {
        self.archive().instances.get(object.level_index()? as usize)
    }

    /// How many objects the level has: their numbers
    /// ([`ObjectId::index`]) run from 0 to this, exclusive.
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// // the sample's 4 floor tiles, 6 stair boxes, a high step, 2 ramps and a wall
    /// assert_eq!(level.object_count(), 14);
    /// ```
    pub fn object_count(&self) -> u32 {
        self.archive().instances.len() as u32
    }

    /// The world box around every static object (min, max corners), or
    /// `None` for a level with none (movers and triggers, which a
    /// [`crate::World`] places, are not in it).
    ///
    /// ```
    /// # let level = kiln_runtime::Level::from_bytes(&kiln_baker::bake_file("../samples/walk_course.gltf".as_ref(), &Default::default()).unwrap().bytes).unwrap();
    /// let (lo, hi) = level.bounds().unwrap();
    /// assert!(lo.x <= 0.0 && lo.z <= 0.0 && hi.x >= 20.0 && hi.y >= 3.0 && hi.z >= 20.0);
    /// ```
    pub fn bounds(&self) -> Option<(glam::Vec3, glam::Vec3)> {
        let a = self.archive();
        if a.top.leaves.to_native() == 0 {
            return None;
        }
        let v = |a: &[rkyv::rend::f32_le; 3]| glam::Vec3::from(a.map(|x| x.to_native()));
        Some((v(&a.top.min), v(&a.top.max)))
    }
}

impl Level {
    /// Each object's authored body by object index (`u32::MAX`: none).
    pub(crate) fn body_table(&self) -> &[u32] {
        self.body_of.get_or_init(|| {
            let a = self.archive();
            let mut of = vec![u32::MAX; a.instances.len()].into_boxed_slice();
            for (k, b) in a.bodies.iter().enumerate() {
                for m in b.members.iter() {
                    of[m.to_native() as usize] = k as u32;
                }
            }
            of
        })
    }
}

impl std::fmt::Debug for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Level")
            .field("bytes", &self.byte_len())
            .field("header", &self.header)
            .finish()
    }
}
