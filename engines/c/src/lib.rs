//! # Kiln's C API
//!
//! `libkiln` (a shared and a static library) gives C and C++ engines what
//! `kiln-runtime` gives Rust: a level opened from a baked archive
//! ([`KilnLevel`]), a world of bodies beside it ([`KilnWorld`]) answering
//! every query, and the character controller. `include/kiln.h` is
//! generated from this file by cbindgen.
//!
//! ## Conventions
//! - Every function that can fail returns a [`KilnStatus`];
//!   [`kiln_last_error`] says why the last failing call on the calling
//!   thread failed. Answers are written through out-pointers.
//! - Handles ([`KilnLevel`], [`KilnWorld`], [`KilnHull`]) are made by
//!   `kiln_*_open`/`_new` and given back by their `_free`; nothing else
//!   the API hands out is the caller's to free. Variable-length answers
//!   are written into the caller's arrays (`out`, `cap`, `count`: at most
//!   `cap` written, `*count` set to how many there are, and
//!   [`KilnStatus::BufferTooSmall`] when that is more than `cap`).
//! - Null pointers are refused with [`KilnStatus::NullArgument`] (an
//!   array of length 0 may be null); malformed queries (a non-finite
//!   number, a zero direction, an unknown shape kind) with
//!   [`KilnStatus::InvalidArgument`]. No panic crosses the boundary: one
//!   would be caught and returned as [`KilnStatus::Panic`]. A failed
//!   call writes the answer of nothing found to every out-pointer it can
//!   (`answer`), and hands its message to the log hook ([`kiln_set_log`]).
//! - Queries come twice: `kiln_level_*` on a level's static objects,
//!   `kiln_world_*` on a world (one generic body each: `Scene`).
//! - Memory: [`kiln_set_allocator`], called first, routes every
//!   allocation to the engine's allocator (the library's global
//!   allocator dispatches).
//! - Threads: functions taking a `const KilnWorld*` (every query) may run
//!   on any number of threads at once; those taking a `KilnWorld*`
//!   (inserting, moving, removing, stepping) need the world to
//!   themselves, as in Rust.
//!
//! ## Safety contract
//! Every pointer passed is null or valid for its type (arrays: for the
//! length passed with them) for the duration of the call, and handles are
//! ones this API made and has not freed. The API checks for null; it
//! cannot check the rest, as no C API can.

#![allow(clippy::missing_safety_doc)] // one contract for all, stated above

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use kiln_runtime::character::{Character, CharacterSettings, Ground, Support};
use kiln_runtime::{
    Body, CastOptions, ConvexHull, Filter, Level, ObjectId, OpenError, Pose, Quat, QueryShape, Ray,
    ShapeCast, Space, Vec3, World, WorldError,
};

// ---------------------------------------------------------------- status

/// What a call came to.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KilnStatus {
    /// Done.
    Ok = 0,
    /// A pointer that must not be null was null.
    NullArgument = 1,
    /// A malformed argument: a non-finite number, a zero direction or
    /// rotation, a negative size, an unknown shape kind, a name that is
    /// not UTF-8, a hull that is flat or has too many points.
    InvalidArgument = 2,
    /// An archive file could not be read.
    Io = 3,
    /// Bytes that are not a valid Kiln archive (truncated, corrupt, of
    /// another format version).
    BadArchive = 4,
    /// No object, body or layer of that name or id.
    NotFound = 5,
    /// The object is part of the level's static geometry: it cannot be
    /// moved or removed.
    StaticObject = 6,
    /// The answer has more items than the array passed can hold: the
    /// first `cap` were written and `*count` says how many there are.
    BufferTooSmall = 7,
    /// A bug inside Kiln, caught before it reached the caller.
    Panic = 8,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// A failed call: its status and what to tell the caller.
struct Fail(KilnStatus, String);

impl Fail {
    fn new(status: KilnStatus, why: impl Display) -> Fail {
        Fail(status, why.to_string())
    }
    fn invalid(why: impl Display) -> Fail {
        Fail::new(KilnStatus::InvalidArgument, why)
    }
}

impl From<WorldError> for Fail {
    fn from(e: WorldError) -> Fail {
        let status = match e {
            WorldError::Unknown(_) | WorldError::NotInLevel(_) | WorldError::UnknownTile(_) => {
                KilnStatus::NotFound
            }
            WorldError::Static(_) => KilnStatus::StaticObject,
            WorldError::BadPose(_)
            | WorldError::BadShape(_)
            | WorldError::BadOrigin(_)
            | WorldError::Layers { .. }
            | WorldError::Rebase
            | WorldError::Mounts => KilnStatus::InvalidArgument,
        };
        Fail::new(status, e)
    }
}

impl From<OpenError> for Fail {
    fn from(e: OpenError) -> Fail {
        let status = match e {
            OpenError::Io { .. } => KilnStatus::Io,
            OpenError::Invalid { .. } => KilnStatus::BadArchive,
        };
        Fail::new(status, e)
    }
}

/// Runs one call: records the failure's message, catches panics.
fn run(name: &str, f: impl FnOnce() -> Result<(), Fail>) -> KilnStatus {
    let outcome = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Fail::new(
            KilnStatus::Panic,
            format!("internal error: {what}"),
        ))
    });
    match outcome {
        Ok(()) => KilnStatus::Ok,
        Err(Fail(status, why)) => {
            let text = format!("{name}: {why}").replace('\0', " ");
            LAST_ERROR.with(|e| {
                *e.borrow_mut() = CString::new(text).unwrap_or_default();
                log(status, &e.borrow());
            });
            status
        }
    }
}

/// Why the last failing call on this thread failed ("" if none has): the
/// function's name and the cause, e.g. `kiln_level_open: level.kiln: No
/// such file or directory`. The text stays valid until the next failing
/// call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The major version of the API this header describes (semantic
/// versioning: before 1, a new minor version may break the API too).
pub const KILN_VERSION_MAJOR: u32 = 0;
/// The minor version of the API this header describes.
pub const KILN_VERSION_MINOR: u32 = 3;
/// The patch version of the API this header describes.
pub const KILN_VERSION_PATCH: u32 = 0;
/// The archive format version this header's library reads (the `format`
/// field of an archive's header; `baker inspect` prints it). An archive of
/// another version is refused with [`KilnStatus::BadArchive`].
pub const KILN_FORMAT_VERSION: u32 = 24;

/// The library's version, e.g. "0.3.0" (static text).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Whether the library linked is one a program built against the header
/// of version `major`.`minor` can use: the same major version, and a minor
/// version at least as new (before 1.0, the same minor version). Call it
/// at start-up with the header's macros, as PhysX and Jolt ask:
/// `kiln_version_compatible(KILN_VERSION_MAJOR, KILN_VERSION_MINOR)`.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_version_compatible(major: u32, minor: u32) -> bool {
    // the constants are the crate's version (a test holds them to it)
    major == KILN_VERSION_MAJOR
        && if major == 0 {
            minor == KILN_VERSION_MINOR
        } else {
            minor <= KILN_VERSION_MINOR
        }
}

/// The archive format version the library reads (see
/// [`KILN_FORMAT_VERSION`]).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_format_version() -> u32 {
    kiln_runtime::FORMAT_VERSION
}

// ------------------------------------------------- allocator and log hooks

/// Memory for Kiln from the engine, as Jolt's `Allocate`/`Free` and
/// PhysX's `PxAllocatorCallback` take it: every allocation Kiln makes
/// (handles, answers, its thread pool) goes through `alloc` and `free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnAllocator {
    /// `size` bytes aligned to `align` (a power of two), or null when
    /// there is no memory (Kiln then aborts the process, as Rust does).
    pub alloc:
        Option<unsafe extern "C" fn(size: usize, align: usize, user: *mut c_void) -> *mut c_void>,
    /// Gives back a block `alloc` made, with the size and alignment it
    /// was asked for.
    pub free: Option<
        unsafe extern "C" fn(ptr: *mut c_void, size: usize, align: usize, user: *mut c_void),
    >,
    /// Passed to both, as it is.
    pub user: *mut c_void,
}

/// The allocator the library uses: the system's until a hook is set.
mod memory {
    use super::KilnAllocator;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::ffi::c_void;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU8, Ordering};

    /// Nothing allocated yet: a hook may still be set.
    const UNTOUCHED: u8 = 0;
    /// The system's allocator has been used: it stays.
    const SYSTEM: u8 = 1;
    /// The caller's hook is in use, for good.
    const HOOKED: u8 = 2;

    static STATE: AtomicU8 = AtomicU8::new(UNTOUCHED);

    /// The hook's functions and its user pointer (kept as an address).
    struct Hook {
        alloc: unsafe extern "C" fn(usize, usize, *mut c_void) -> *mut c_void,
        free: unsafe extern "C" fn(*mut c_void, usize, usize, *mut c_void),
        user: usize,
    }

    static HOOK: OnceLock<Hook> = OnceLock::new();

    /// Which allocator serves: the first allocation fixes the system's
    /// unless a hook came first. Once fixed it never changes, so every
    /// block is freed by the allocator that made it.
    fn state() -> u8 {
        match STATE.load(Ordering::Acquire) {
            UNTOUCHED => {
                match STATE.compare_exchange(UNTOUCHED, SYSTEM, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => SYSTEM,
                    Err(now) => now,
                }
            }
            now => now,
        }
    }

    /// Installs `a` if nothing has been allocated yet; `Err` says why not.
    pub(super) fn set(a: &KilnAllocator) -> Result<(), &'static str> {
        let (Some(alloc), Some(free)) = (a.alloc, a.free) else {
            return Err("alloc and free must both be set");
        };
        if STATE.load(Ordering::Acquire) != UNTOUCHED {
            return Err("Kiln has allocated already: set the allocator before any other call");
        }
        // The hook is stored before the state says HOOKED (release), and
        // read only after the state is seen HOOKED (acquire).
        HOOK.set(Hook {
            alloc,
            free,
            user: a.user as usize,
        })
        .map_err(|_| "an allocator was set already")?;
        STATE
            .compare_exchange(UNTOUCHED, HOOKED, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| "Kiln has allocated already: set the allocator before any other call")
    }

    /// The hook, when the state is HOOKED.
    fn hook() -> &'static Hook {
        // HOOKED is stored only after HOOK is set (see `set`)
        HOOK.get().expect("a hooked state has a hook")
    }

    /// Kiln's global allocator: the system's, or the caller's hook.
    pub(super) struct Kiln;

    // SAFETY: each method forwards to the system allocator or to the
    // caller's hook, which `kiln_set_allocator`'s contract binds to
    // GlobalAlloc's (aligned blocks of the size asked, or null); which of
    // the two serves is fixed before the first block is made (`state`),
    // so a block is always given back to the allocator that made it.
    unsafe impl GlobalAlloc for Kiln {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if state() == HOOKED {
                let h = hook();
                // SAFETY: the hook's contract (above).
                unsafe { (h.alloc)(layout.size(), layout.align(), h.user as *mut c_void) }.cast()
            } else {
                // SAFETY: the caller's GlobalAlloc contract, passed on.
                unsafe { System.alloc(layout) }
            }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            if state() == HOOKED {
                let h = hook();
                // SAFETY: `ptr` came from the hook's `alloc` with `layout`.
                unsafe {
                    (h.free)(
                        ptr.cast(),
                        layout.size(),
                        layout.align(),
                        h.user as *mut c_void,
                    )
                }
            } else {
                // SAFETY: `ptr` came from `System.alloc` with `layout`.
                unsafe { System.dealloc(ptr, layout) }
            }
        }
    }
}

#[global_allocator]
static ALLOCATOR: memory::Kiln = memory::Kiln;

/// Makes every allocation of the library go through `allocator` (copied).
/// Call it first, before any other Kiln call: once Kiln has allocated
/// with the system's allocator it keeps it, and this returns
/// `KILN_STATUS_INVALID_ARGUMENT`; it can be set once. `alloc` must return
/// blocks of the size and alignment asked (or null), and both functions
/// may be called from any thread at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_set_allocator(allocator: *const KilnAllocator) -> KilnStatus {
    // SAFETY: the API's contract (module docs).
    let hook = unsafe { allocator.as_ref() };
    // nothing here may allocate before the hook is in: `run` does only on
    // failure, by which time the allocator in use is fixed either way
    run("kiln_set_allocator", || {
        let hook = hook.ok_or_else(|| Fail::new(KilnStatus::NullArgument, "allocator is null"))?;
        memory::set(hook).map_err(Fail::invalid)
    })
}

/// Told of each failed call, as PhysX's `PxErrorCallback` is: the status
/// and the message `kiln_last_error` gives (valid during the call only),
/// on the thread that failed. It must not call back into Kiln.
pub type KilnLogFn =
    Option<unsafe extern "C" fn(status: KilnStatus, message: *const c_char, user: *mut c_void)>;

/// The log hook and its user pointer (kept as an address).
static LOG: std::sync::RwLock<(KilnLogFn, usize)> = std::sync::RwLock::new((None, 0));

/// Calls the log hook, if one is set, with a failure's message.
fn log(status: KilnStatus, message: &CStr) {
    let (f, user) = *LOG.read().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = f {
        // SAFETY: the hook's contract (kiln_set_log): a function that
        // takes these arguments; the message lives through the call.
        unsafe { f(status, message.as_ptr(), user as *mut c_void) }
    }
}

/// Sets the function told of every failed call (null: none), with `user`
/// passed to it as it is. It may be called from any thread, at any time.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_set_log(log: KilnLogFn, user: *mut c_void) {
    *LOG.write().unwrap_or_else(|e| e.into_inner()) = (log, user as usize);
}

// ------------------------------------------------- pointers from the caller

/// `p` as a reference, or a null-argument failure naming `what`.
///
/// # Safety
/// `p` is null or valid for reads of a `T` for `'a`.
unsafe fn read<'a, T>(p: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: null is checked; the rest is the caller's contract.
    unsafe { p.as_ref() }
        .ok_or_else(|| Fail::new(KilnStatus::NullArgument, format!("{what} is null")))
}

/// `p` as a mutable reference, or a null-argument failure naming `what`.
///
/// # Safety
/// `p` is null or valid for reads and writes of a `T` for `'a`, and not
/// aliased.
unsafe fn write<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: null is checked; the rest is the caller's contract.
    unsafe { p.as_mut() }
        .ok_or_else(|| Fail::new(KilnStatus::NullArgument, format!("{what} is null")))
}

/// `p` as a mutable reference, set to `empty` at once: a call that
/// fails after this leaves its answer defined (no hit, false, 0 items, a
/// null handle), never what the caller's memory held before.
///
/// # Safety
/// As [`write()`].
unsafe fn answer<'a, T>(p: *mut T, what: &str, empty: T) -> Result<&'a mut T, Fail> {
    // SAFETY: the caller's contract.
    let out = unsafe { write(p, what) }?;
    *out = empty;
    Ok(out)
}

/// `len` values at `p` (which may be null when `len` is 0).
///
/// # Safety
/// `p` is null or valid for reads of `len` `T`s for `'a`.
unsafe fn array<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::new(
            KilnStatus::NullArgument,
            format!("{what} is null but its length is {len}"),
        ));
    }
    // SAFETY: non-null, and valid for `len` values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// `len` writable values at `p` (which may be null when `len` is 0).
///
/// # Safety
/// `p` is null or valid for writes of `len` `T`s for `'a`, and not
/// aliased.
unsafe fn array_mut<'a, T>(p: *mut T, len: usize, what: &str) -> Result<&'a mut [T], Fail> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Fail::new(
            KilnStatus::NullArgument,
            format!("{what} is null but its length is {len}"),
        ));
    }
    // SAFETY: non-null, and valid for `len` values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// A NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` is null or a NUL-terminated string valid for `'a`.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if p.is_null() {
        return Err(Fail::new(
            KilnStatus::NullArgument,
            format!("{what} is null"),
        ));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|e| Fail::invalid(format!("{what} is not UTF-8: {e}")))
}

/// Hands `value` to the caller as a handle (its `_free` takes it back).
fn handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes back a handle [`handle`] made; null is ignored.
///
/// # Safety
/// `p` is null or a handle of this type not yet freed.
unsafe fn release<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: made by `handle` (Box::into_raw) and not yet freed.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Writes a variable-length answer into the caller's array.
fn fill<T: Copy>(items: &[T], out: &mut [T], count: &mut usize) -> Result<(), Fail> {
    *count = items.len();
    let n = items.len().min(out.len());
    out[..n].copy_from_slice(&items[..n]);
    if items.len() > out.len() {
        return Err(Fail::new(
            KilnStatus::BufferTooSmall,
            format!("{} items, room for {}", items.len(), out.len()),
        ));
    }
    Ok(())
}

// ------------------------------------------------------------ value types

/// A vector (metres, or a direction).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnVec3 {
    /// x
    pub x: f32,
    /// y
    pub y: f32,
    /// z
    pub z: f32,
}

impl From<KilnVec3> for Vec3 {
    fn from(v: KilnVec3) -> Vec3 {
        Vec3::new(v.x, v.y, v.z)
    }
}

impl From<Vec3> for KilnVec3 {
    fn from(v: Vec3) -> KilnVec3 {
        KilnVec3 {
            x: v.x,
            y: v.y,
            z: v.z,
        }
    }
}

/// A rotation as a unit quaternion (x, y, z, w), as glTF writes them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnQuat {
    /// x
    pub x: f32,
    /// y
    pub y: f32,
    /// z
    pub z: f32,
    /// w (1 for no rotation)
    pub w: f32,
}

impl From<Quat> for KilnQuat {
    fn from(q: Quat) -> KilnQuat {
        KilnQuat {
            x: q.x,
            y: q.y,
            z: q.z,
            w: q.w,
        }
    }
}

/// A rigid placement: the rotation, then the translation.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KilnPose {
    /// Rotation (normalised by the API; not zero).
    pub rotation: KilnQuat,
    /// Translation.
    pub translation: KilnVec3,
}

impl From<Pose> for KilnPose {
    fn from(p: Pose) -> KilnPose {
        KilnPose {
            rotation: p.rotation.into(),
            translation: p.translation.into(),
        }
    }
}

fn vec3(v: KilnVec3, what: &str) -> Result<Vec3, Fail> {
    let v = Vec3::from(v);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Fail::invalid(format!("{what} {v} is not finite")))
    }
}

fn quat(q: KilnQuat, what: &str) -> Result<Quat, Fail> {
    let q = Quat::from_xyzw(q.x, q.y, q.z, q.w);
    let len = q.length();
    if q.is_finite() && len > 1e-6 && len.is_finite() {
        Ok(q / len)
    } else {
        Err(Fail::invalid(format!(
            "{what} {q} is not a finite non-zero quaternion"
        )))
    }
}

fn to_pose(p: KilnPose, what: &str) -> Result<Pose, Fail> {
    Ok(Pose::new(
        quat(p.rotation, what)?,
        vec3(p.translation, what)?,
    ))
}

/// An object of a level or a body of a world, as every answer names it
/// (0 is a level's first object; ids of bodies are never reused).
pub type KilnObjectId = u64;

/// The id a failed `kiln_world_find_object` or `kiln_world_insert_*`
/// writes: no object's.
pub const KILN_NO_OBJECT: KilnObjectId = u64::MAX;

/// `KilnRayHit::feature` and friends when no feature is named.
pub const KILN_NO_FEATURE: u32 = u32::MAX;

/// The `kind` of a [`KilnShape`]: a sphere (`radius`).
pub const KILN_SHAPE_SPHERE: u32 = 0;
/// The `kind` of a [`KilnShape`]: an upright capsule (`half_height`, `radius`).
pub const KILN_SHAPE_CAPSULE: u32 = 1;
/// The `kind` of a [`KilnShape`]: a box (`half` extents).
pub const KILN_SHAPE_CUBOID: u32 = 2;
/// The `kind` of a [`KilnShape`]: a convex hull (`hull`).
pub const KILN_SHAPE_HULL: u32 = 3;

/// A convex hull of points, made by [`kiln_hull_new`] (opaque).
pub struct KilnHull(ConvexHull);

/// A convex shape to query with, in its own frame (a [`KilnPose`] places
/// it). Make one with `kiln_shape_sphere`, `_capsule`, `_cuboid` or `_hull`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnShape {
    /// `KILN_SHAPE_SPHERE`, `_CAPSULE`, `_CUBOID` or `_HULL`.
    pub kind: u32,
    /// Radius of a sphere or capsule (≥ 0).
    pub radius: f32,
    /// Half the distance between a capsule's cap centres, along its +Y
    /// axis (≥ 0).
    pub half_height: f32,
    /// Half extents of a box (each ≥ 0).
    pub half: KilnVec3,
    /// The hull of a hull shape (not freed while a query uses it; a body
    /// keeps its own copy).
    pub hull: *const KilnHull,
}

fn size(x: f32, what: &str) -> Result<f32, Fail> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(Fail::invalid(format!(
            "{what} {x} is not a finite size ≥ 0"
        )))
    }
}

/// The runtime's shape for `s`.
///
/// # Safety
/// `s.hull` is null or a live hull made by [`kiln_hull_new`].
unsafe fn to_shape<'a>(s: &KilnShape) -> Result<QueryShape<'a>, Fail> {
    Ok(match s.kind {
        KILN_SHAPE_SPHERE => QueryShape::Sphere {
            radius: size(s.radius, "sphere radius")?,
        },
        KILN_SHAPE_CAPSULE => QueryShape::Capsule {
            half_height: size(s.half_height, "capsule half height")?,
            radius: size(s.radius, "capsule radius")?,
        },
        KILN_SHAPE_CUBOID => {
            let h = s.half;
            for (x, what) in [
                (h.x, "box half x"),
                (h.y, "box half y"),
                (h.z, "box half z"),
            ] {
                size(x, what)?;
            }
            QueryShape::Cuboid { half: h.into() }
        }
        KILN_SHAPE_HULL => {
            // SAFETY: the caller's contract: null or a live hull.
            let hull = unsafe { read(s.hull, "shape.hull") }?;
            QueryShape::Hull(&hull.0)
        }
        k => {
            return Err(Fail::invalid(format!(
                "shape kind {k} is none of KILN_SHAPE_*"
            )));
        }
    })
}

/// A sphere of `radius`.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_shape_sphere(radius: f32) -> KilnShape {
    KilnShape {
        kind: KILN_SHAPE_SPHERE,
        radius,
        half_height: 0.0,
        half: KilnVec3::default(),
        hull: std::ptr::null(),
    }
}

/// An upright capsule: cap centres `half_height` above and below its
/// origin, grown by `radius`. Radius first, as in
/// `kiln_character_capsule` (before version 0.2 the order was the other
/// way round).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_shape_capsule(radius: f32, half_height: f32) -> KilnShape {
    KilnShape {
        kind: KILN_SHAPE_CAPSULE,
        radius,
        half_height,
        half: KilnVec3::default(),
        hull: std::ptr::null(),
    }
}

/// A box of half extents `half`.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_shape_cuboid(half: KilnVec3) -> KilnShape {
    KilnShape {
        kind: KILN_SHAPE_CUBOID,
        radius: 0.0,
        half_height: 0.0,
        half,
        hull: std::ptr::null(),
    }
}

/// A convex hull shape (the hull must outlive the queries that use it).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_shape_hull(hull: *const KilnHull) -> KilnShape {
    KilnShape {
        kind: KILN_SHAPE_HULL,
        radius: 0.0,
        half_height: 0.0,
        half: KilnVec3::default(),
        hull,
    }
}

/// The convex hull of `count` points (at least four, not all on a plane;
/// at most 256). Free it with [`kiln_hull_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_hull_new(
    points: *const KilnVec3,
    count: usize,
    out: *mut *mut KilnHull,
) -> KilnStatus {
    run("kiln_hull_new", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, points) = unsafe {
            (
                answer(out, "out", std::ptr::null_mut())?,
                array(points, count, "points")?,
            )
        };
        let points: Vec<Vec3> = points.iter().map(|&p| p.into()).collect();
        let hull = ConvexHull::new(&points).map_err(Fail::invalid)?;
        *out = handle(KilnHull(hull));
        Ok(())
    })
}

/// Frees a hull (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_hull_free(hull: *mut KilnHull) {
    // SAFETY: the API's contract: null, or made by `kiln_hull_new` and not yet freed.
    unsafe { release(hull) }
}

/// Which objects a query sees. Pass null for every object but triggers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnFilter {
    /// Objects in none of these layers are skipped (`0xFFFFFFFF`: all).
    pub layers: u32,
    /// Non-zero: trigger volumes are seen too.
    pub triggers: u32,
    /// Objects to skip (`skip_count` of them; may be null when 0).
    pub skip: *const KilnObjectId,
    /// How many ids `skip` holds.
    pub skip_count: usize,
}

/// A filter that sees every object but triggers.
#[unsafe(no_mangle)]
pub extern "C" fn kiln_filter_all() -> KilnFilter {
    KilnFilter {
        layers: u32::MAX,
        triggers: 0,
        skip: std::ptr::null(),
        skip_count: 0,
    }
}

/// The ids a filter skips, in the runtime's type.
struct Skips(Vec<ObjectId>);

/// Reads a filter (null for every object but triggers).
///
/// # Safety
/// `f` is null or a valid filter whose `skip` holds `skip_count` ids.
unsafe fn skips(f: *const KilnFilter) -> Result<(Skips, u32, bool), Fail> {
    // SAFETY: the caller's contract.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return Ok((Skips(Vec::new()), u32::MAX, false));
    };
    // SAFETY: the caller's contract.
    let skip = unsafe { array(f.skip, f.skip_count, "filter.skip") }?;
    Ok((
        Skips(skip.iter().map(|&b| ObjectId::from_bits(b)).collect()),
        f.layers,
        f.triggers != 0,
    ))
}

fn to_filter<'a>((skip, layers, triggers): &'a (Skips, u32, bool)) -> Filter<'a> {
    Filter::skip(&skip.0).layers(*layers).triggers(*triggers)
}

// ----------------------------------------------------------------- level

/// A baked level, opened from an archive (opaque). A world made of it
/// keeps it alive: free the handle whenever the caller is done with it.
pub struct KilnLevel(Arc<Level>);

/// Opens the archive at `path` (memory-mapped, validated once). The file
/// must not be rewritten in place while the level (or a world made of it)
/// is alive: `cp new.kiln live.kiln` truncates and rewrites the mapped
/// file and the process dies of SIGBUS. Replace it by rename (as the baker
/// does), or open files that may change in place with [`kiln_level_read`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_open(
    path: *const c_char,
    out: *mut *mut KilnLevel,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { open_with("kiln_level_open", path, out, |p| Level::open(p)) }
}

/// Opens the archive at `path` with `open` (mapping or reading it), for
/// the function `name`.
///
/// # Safety
/// The API's contract (module docs); null is checked.
unsafe fn open_with(
    name: &str,
    path: *const c_char,
    out: *mut *mut KilnLevel,
    open: fn(&str) -> Result<Level, OpenError>,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, path) = unsafe {
            (
                answer(out, "out", std::ptr::null_mut())?,
                text(path, "path")?,
            )
        };
        *out = handle(KilnLevel(Arc::new(open(path)?)));
        Ok(())
    })
}

/// Reads the archive at `path` into memory and validates it: no mapping,
/// so the file may change in any way afterwards (the hot-reload path).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_read(
    path: *const c_char,
    out: *mut *mut KilnLevel,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { open_with("kiln_level_read", path, out, |p| Level::read(p)) }
}

/// Opens an archive held in memory (`len` bytes, copied).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_from_bytes(
    bytes: *const u8,
    len: usize,
    out: *mut *mut KilnLevel,
) -> KilnStatus {
    run("kiln_level_from_bytes", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, bytes) = unsafe {
            (
                answer(out, "out", std::ptr::null_mut())?,
                array(bytes, len, "bytes")?,
            )
        };
        *out = handle(KilnLevel(Arc::new(Level::from_bytes(bytes)?)));
        Ok(())
    })
}

/// Frees a level handle (null is ignored). Worlds made of it keep the
/// level itself.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_free(level: *mut KilnLevel) {
    // SAFETY: the API's contract: null, or made by `kiln_level_open`/`_from_bytes` and not yet freed.
    unsafe { release(level) }
}

/// How many objects the level has (0 for null); their ids are 0 to this.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_count(level: *const KilnLevel) -> u32 {
    // SAFETY: the API's contract (module docs).
    unsafe { level.as_ref() }.map_or(0, |l| l.0.object_count())
}

/// The mask bit of the level's layer called `name` (for `KilnFilter::layers`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_layer(
    level: *const KilnLevel,
    name: *const c_char,
    out: *mut u32,
) -> KilnStatus {
    run("kiln_level_layer", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level, name) = unsafe {
            (
                answer(out, "out", 0)?,
                read(level, "level")?,
                text(name, "name")?,
            )
        };
        *out = level
            .0
            .layer(name)
            .ok_or_else(|| Fail::new(KilnStatus::NotFound, format!("no layer {name:?}")))?;
        Ok(())
    })
}

/// `KilnObjectInfo::collider`: a triangle mesh under a tree (terrain,
/// open or large meshes).
pub const KILN_COLLIDER_TRIMESH: u32 = 0;
/// `KilnObjectInfo::collider`: a convex polytope (a plane set).
pub const KILN_COLLIDER_POLYTOPE: u32 = 1;
/// `KilnObjectInfo::collider`: a box.
pub const KILN_COLLIDER_CUBOID: u32 = 2;
/// `KilnObjectInfo::collider`: a sphere.
pub const KILN_COLLIDER_SPHERE: u32 = 3;
/// `KilnObjectInfo::collider`: a capsule.
pub const KILN_COLLIDER_CAPSULE: u32 = 4;
/// `KilnObjectInfo::collider`: a concave solid (a solid-leaf BSP tree).
pub const KILN_COLLIDER_BSP: u32 = 5;

/// `KilnObjectInfo::motion`: never moves (part of the level's tree).
pub const KILN_MOTION_STATIC: u32 = 0;
/// `KilnObjectInfo::motion`: moved by the game (a door, a lift): a world
/// places it where it was baked and `kiln_world_set_pose` moves it.
pub const KILN_MOTION_KINEMATIC: u32 = 1;
/// `KilnObjectInfo::motion`: authored to be moved by a simulation.
pub const KILN_MOTION_DYNAMIC: u32 = 2;

/// What one object of a level is, as `baker inspect` lists it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnObjectInfo {
    /// Its collider: `KILN_COLLIDER_*`.
    pub collider: u32,
    /// How it moves: `KILN_MOTION_*`.
    pub motion: u32,
    /// Whether it is a trigger volume (seen only by queries whose filter
    /// asks for triggers, and only through a world).
    pub trigger: bool,
    /// Its collision layers as a mask (see `kiln_level_layer`).
    pub layers: u32,
}

/// What object `index` of the level is (`0 ≤ index <
/// kiln_level_object_count`; its id is `index`). Its name:
/// `kiln_world_object_name` on a world of the level.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_info(
    level: *const KilnLevel,
    index: u32,
    out: *mut KilnObjectInfo,
) -> KilnStatus {
    run("kiln_level_object_info", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnObjectInfo::default())?,
                read(level, "level")?,
            )
        };
        let object = level_object(level, index)?;
        use kiln_runtime::Motion;
        *out = KilnObjectInfo {
            collider: collider_kind(level_collider(level, index)?),
            motion: match level.0.object_motion(object).unwrap_or(Motion::Static) {
                Motion::Static => KILN_MOTION_STATIC,
                Motion::Kinematic => KILN_MOTION_KINEMATIC,
                Motion::Dynamic => KILN_MOTION_DYNAMIC,
            },
            trigger: level.0.is_trigger(object),
            layers: level.0.object_layers(object).unwrap_or(0),
        };
        Ok(())
    })
}

/// The decomposition of object `index` and its piece `piece` (an index
/// that verification makes valid in both `pieces` and `shapes`), or a
/// not-found failure.
fn level_piece(
    level: &KilnLevel,
    index: u32,
    piece: u32,
) -> Result<(&kiln_formats::level::ArchivedDecomposition, usize), Fail> {
    let inst = level_instance(level, index)?;
    let d = level.0.archive().decomposition(inst.collider.to_native());
    let n = d.map_or(0, |d| d.pieces.len());
    d.filter(|_| (piece as usize) < n)
        .map(|d| (d, piece as usize))
        .ok_or_else(|| {
            Fail::new(
                KilnStatus::NotFound,
                format!("piece {piece}: object {index} has {n} convex pieces"),
            )
        })
}

/// The object `index` of `level`, or a not-found failure.
fn level_instance(
    level: &KilnLevel,
    index: u32,
) -> Result<&kiln_formats::level::ArchivedInstance, Fail> {
    level
        .0
        .archive()
        .instances
        .get(index as usize)
        .ok_or_else(|| no_object(level, index))
}

/// The failure for an object `index` past `level`'s objects.
fn no_object(level: &KilnLevel, index: u32) -> Fail {
    Fail::new(
        KilnStatus::NotFound,
        format!(
            "object {index}: the level has {} objects",
            level.0.object_count()
        ),
    )
}

/// Where object `index` was baked: its world-from-local matrix, row-major
/// 3×4 (`out[4·r + c]`, the translation in column 3), which places its
/// collider's local space — and its convex pieces' vertices and planes —
/// in the world. It may scale, mirror or shear.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_transform(
    level: *const KilnLevel,
    index: u32,
    out: *mut [f32; 12],
) -> KilnStatus {
    run("kiln_level_object_transform", || {
        let identity = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe { (answer(out, "out", identity)?, read(level, "level")?) };
        let inst = level_instance(level, index)?;
        *out = level.0.archive().rows(inst).world_from_local;
        Ok(())
    })
}

/// How many convex pieces object `index` has, for a physics engine that
/// simulates a concave object as convex shapes (Jolt's `ConvexHullShape`
/// under a `StaticCompoundShape`, PhysX's `PxConvexMesh`es on one actor):
/// 0 when its collider has none (a box, sphere, capsule or polytope is
/// convex already; a static triangle mesh is static geometry; a dynamic
/// body's triangle mesh has pieces).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_piece_count(
    level: *const KilnLevel,
    index: u32,
    count: *mut u32,
) -> KilnStatus {
    run("kiln_level_object_piece_count", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (count, level) = unsafe { (answer(count, "count", 0)?, read(level, "level")?) };
        let inst = level_instance(level, index)?;
        *count = level
            .0
            .archive()
            .decomposition(inst.collider.to_native())
            .map_or(0, |d| d.pieces.len() as u32);
        Ok(())
    })
}

/// What one convex piece is to a physics engine (`kiln_level_object_piece_shape`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnPieceShape {
    /// `KILN_COLLIDER_POLYTOPE`: take the piece's polytope
    /// (`kiln_level_object_piece`); `KILN_COLLIDER_CUBOID`,
    /// `KILN_COLLIDER_SPHERE` or `KILN_COLLIDER_CAPSULE`: take this
    /// primitive instead (Jolt's `BoxShape`, `SphereShape` or `CapsuleShape`
    /// under a `RotatedTranslatedShape`; PhysX's `PxBoxGeometry`,
    /// `PxSphereGeometry` or `PxCapsuleGeometry`, whose axis is x: turn it
    /// onto y), which fills and encloses the piece.
    pub kind: u32,
    /// A box's half size along its local axes.
    pub half_extents: [f32; 3],
    /// A sphere's or capsule's radius.
    pub radius: f32,
    /// Half the length of a capsule's inner segment, along its local y.
    pub half_height: f32,
    /// The primitive's orientation in the collider's local space: a unit
    /// quaternion `x, y, z, w` (identity for a polytope).
    pub rotation: [f32; 4],
    /// The primitive's centre in the collider's local space
    /// (`kiln_level_object_transform` places it).
    pub centre: [f32; 3],
}

impl KilnPieceShape {
    /// A shape of `kind` at the identity frame, with no sizes.
    fn of_kind(kind: u32) -> Self {
        KilnPieceShape {
            kind,
            rotation: [0.0, 0.0, 0.0, 1.0],
            ..KilnPieceShape::default()
        }
    }

    /// A box at the identity frame.
    fn cuboid(c: &kiln_formats::primitive::ArchivedCuboid) -> Self {
        KilnPieceShape {
            half_extents: c.half_extents.map(|x| x.to_native()),
            ..Self::of_kind(KILN_COLLIDER_CUBOID)
        }
    }

    /// A sphere at the identity frame.
    fn sphere(b: &kiln_formats::primitive::ArchivedSphere) -> Self {
        KilnPieceShape {
            radius: b.radius.to_native(),
            ..Self::of_kind(KILN_COLLIDER_SPHERE)
        }
    }

    /// A capsule at the identity frame.
    fn capsule(c: &kiln_formats::primitive::ArchivedCapsule) -> Self {
        KilnPieceShape {
            radius: c.radius.to_native(),
            half_height: c.half_height.to_native(),
            ..Self::of_kind(KILN_COLLIDER_CAPSULE)
        }
    }
}

/// Piece `piece` of object `index` as a physics engine should take it: its
/// polytope, or the box, sphere or capsule that fills it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_piece_shape(
    level: *const KilnLevel,
    index: u32,
    piece: u32,
    out: *mut KilnPieceShape,
) -> KilnStatus {
    run("kiln_level_object_piece_shape", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnPieceShape::default())?,
                read(level, "level")?,
            )
        };
        let (d, k) = level_piece(level, index, piece)?;
        let s = &d.shapes[k];
        use kiln_formats::level::ArchivedPieceKind as K;
        let shape = match &s.kind {
            K::Hull => KilnPieceShape::of_kind(KILN_COLLIDER_POLYTOPE),
            K::Cuboid(c) => KilnPieceShape::cuboid(c),
            K::Sphere(b) => KilnPieceShape::sphere(b),
            K::Capsule(c) => KilnPieceShape::capsule(c),
        };
        let shape = KilnPieceShape {
            rotation: s.rotation.map(|x| x.to_native()),
            centre: s.centre.map(|x| x.to_native()),
            ..shape
        };
        *out = shape;
        Ok(())
    })
}

/// The sizes of one convex piece.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnPieceSizes {
    /// Vertices (3 floats each).
    pub vertices: u32,
    /// Faces: planes (4 floats each), and `faces + 1` face starts.
    pub faces: u32,
    /// Entries of all the face loops together.
    pub loop_entries: u32,
}

/// Piece `piece` of object `index` (`0 ≤ piece <
/// kiln_level_object_piece_count`), copied into the caller's arrays, in
/// the collider's local space (`kiln_level_object_transform` places it):
/// `vertices` (`x, y, z` each, room for `vertex_cap` vertices), `planes`
/// (`nx, ny, nz, d` each, inside where `n · x ≤ d`, room for `face_cap`
/// faces), `face_starts` (room for `face_cap + 1`: the loop of face f is
/// the entries of `face_vertices` from face f's start up to face f + 1's,
/// counter-clockwise seen from outside, lying in plane f) and
/// `face_vertices` (room for `loop_cap`). `sizes` is set first; arrays too small give
/// `KILN_STATUS_BUFFER_TOO_SMALL` (call with null arrays and capacities of 0 to
/// learn the sizes). Every vertex lies on or behind every plane.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_level_object_piece(
    level: *const KilnLevel,
    index: u32,
    piece: u32,
    sizes: *mut KilnPieceSizes,
    vertices: *mut f32,
    vertex_cap: usize,
    planes: *mut f32,
    face_cap: usize,
    face_starts: *mut u32,
    face_vertices: *mut u32,
    loop_cap: usize,
) -> KilnStatus {
    run("kiln_level_object_piece", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (sizes, level) = unsafe {
            (
                answer(sizes, "sizes", KilnPieceSizes::default())?,
                read(level, "level")?,
            )
        };
        let (d, k) = level_piece(level, index, piece)?;
        let what = format!("piece {piece} of object {index}");
        // SAFETY: the API's contract: each array holds its capacity.
        unsafe {
            copy_polytope(
                &d.pieces[k],
                &what,
                sizes,
                (vertices, vertex_cap),
                (planes, face_cap),
                (face_starts, face_vertices, loop_cap),
            )
        }
    })
}

/// Copies a polytope into a caller's arrays (see
/// `kiln_level_object_piece`), its sizes first.
///
/// # Safety
/// Each non-null array holds its capacity: `3 · vertex_cap` floats,
/// `4 · face_cap` floats, `face_cap + 1` and `loop_cap` entries.
unsafe fn copy_polytope(
    p: &kiln_formats::polytope::ArchivedPolytope,
    what: &str,
    sizes: &mut KilnPieceSizes,
    (vertices, vertex_cap): (*mut f32, usize),
    (planes, face_cap): (*mut f32, usize),
    (face_starts, face_vertices, loop_cap): (*mut u32, *mut u32, usize),
) -> Result<(), Fail> {
    *sizes = KilnPieceSizes {
        vertices: p.vertices.len() as u32,
        faces: p.planes.len() as u32,
        loop_entries: p.face_vertices.len() as u32,
    };
    if vertex_cap < p.vertices.len()
        || face_cap < p.planes.len()
        || loop_cap < p.face_vertices.len()
    {
        return Err(Fail::new(
            KilnStatus::BufferTooSmall,
            format!(
                "{what} has {} vertices, {} faces and {} loop entries; room for {vertex_cap}, {face_cap} and {loop_cap}",
                p.vertices.len(),
                p.planes.len(),
                p.face_vertices.len()
            ),
        ));
    }
    // SAFETY: the caller's contract: each array holds its capacity.
    let (vs, ps, starts, loops) = unsafe {
        (
            array_mut(vertices, 3 * vertex_cap, "vertices")?,
            array_mut(planes, 4 * face_cap, "planes")?,
            array_mut(face_starts, face_cap + 1, "face_starts")?,
            array_mut(face_vertices, loop_cap, "face_vertices")?,
        )
    };
    for (o, v) in vs.chunks_exact_mut(3).zip(p.vertices.iter()) {
        o.copy_from_slice(&v.map(|x| x.to_native()));
    }
    for (o, pl) in ps.chunks_exact_mut(4).zip(p.planes.iter()) {
        o.copy_from_slice(&pl.map(|x| x.to_native()));
    }
    for (o, k) in starts.iter_mut().zip(p.face_starts.iter()) {
        *o = u32::from(k.to_native());
    }
    for (o, k) in loops.iter_mut().zip(p.face_vertices.iter()) {
        *o = u32::from(k.to_native());
    }
    Ok(())
}

/// Object `index` of `level`, or a not-found failure.
fn level_object(level: &KilnLevel, index: u32) -> Result<kiln_runtime::ObjectId, Fail> {
    level.0.object(index).ok_or_else(|| no_object(level, index))
}

/// The `KILN_COLLIDER_*` code of a collider.
fn collider_kind(c: &kiln_formats::level::ArchivedCollider) -> u32 {
    use kiln_formats::level::ArchivedCollider as S;
    match c {
        S::TriMesh(_) => KILN_COLLIDER_TRIMESH,
        S::Polytope(_) => KILN_COLLIDER_POLYTOPE,
        S::Cuboid(_) => KILN_COLLIDER_CUBOID,
        S::Sphere(_) => KILN_COLLIDER_SPHERE,
        S::Capsule(_) => KILN_COLLIDER_CAPSULE,
        S::Bsp(_) => KILN_COLLIDER_BSP,
    }
}

/// The collider of object `index` of `level`, or a not-found failure.
fn level_collider(
    level: &KilnLevel,
    index: u32,
) -> Result<&kiln_formats::level::ArchivedCollider, Fail> {
    let inst = level_instance(level, index)?;
    Ok(&level.0.archive().colliders[inst.collider.to_native() as usize])
}

/// The shape of object `index`'s own collider, as a physics engine takes
/// it, into `out`: its kind (`KILN_COLLIDER_*`); a box, sphere or capsule
/// has its sizes there, centred on the collider's local origin along its
/// axes (rotation identity, centre zero: `kiln_level_object_transform`
/// places it, and is a similarity for primitives). A polytope's faces come
/// from `kiln_level_object_polytope`; a triangle mesh's or a concave
/// solid's triangles from `kiln_level_object_triangles`, and a concave
/// solid's convex pieces from `kiln_level_object_piece` (what a moving
/// body should be simulated with).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_shape(
    level: *const KilnLevel,
    index: u32,
    out: *mut KilnPieceShape,
) -> KilnStatus {
    run("kiln_level_object_shape", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnPieceShape::default())?,
                read(level, "level")?,
            )
        };
        use kiln_formats::level::ArchivedCollider as S;
        let shape = match level_collider(level, index)? {
            S::Cuboid(c) => KilnPieceShape::cuboid(c),
            S::Sphere(b) => KilnPieceShape::sphere(b),
            S::Capsule(c) => KilnPieceShape::capsule(c),
            other => KilnPieceShape::of_kind(collider_kind(other)),
        };
        *out = shape;
        Ok(())
    })
}

/// Object `index`'s polytope (its collider is `KILN_COLLIDER_POLYTOPE`;
/// others give `KILN_STATUS_NOT_FOUND`), copied as
/// `kiln_level_object_piece` copies a piece: in the collider's local
/// space, `sizes` first, `KILN_STATUS_BUFFER_TOO_SMALL` when an array is
/// short. A Jolt `ConvexHullShape` or a PhysX `PxConvexMesh` takes its
/// vertices as they are (no hull to recompute).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_level_object_polytope(
    level: *const KilnLevel,
    index: u32,
    sizes: *mut KilnPieceSizes,
    vertices: *mut f32,
    vertex_cap: usize,
    planes: *mut f32,
    face_cap: usize,
    face_starts: *mut u32,
    face_vertices: *mut u32,
    loop_cap: usize,
) -> KilnStatus {
    run("kiln_level_object_polytope", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (sizes, level) = unsafe {
            (
                answer(sizes, "sizes", KilnPieceSizes::default())?,
                read(level, "level")?,
            )
        };
        let kiln_formats::level::ArchivedCollider::Polytope(p) = level_collider(level, index)?
        else {
            return Err(Fail::new(
                KilnStatus::NotFound,
                format!(
                    "object {index} is not a polytope (kiln_level_object_shape says what it is)"
                ),
            ));
        };
        // SAFETY: the API's contract: each array holds its capacity.
        unsafe {
            copy_polytope(
                p,
                &format!("object {index}"),
                sizes,
                (vertices, vertex_cap),
                (planes, face_cap),
                (face_starts, face_vertices, loop_cap),
            )
        }
    })
}

/// The sizes of a triangle mesh (`kiln_level_object_triangles`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnMeshSizes {
    /// Vertices (3 floats each).
    pub vertices: u32,
    /// Triangles (3 vertex indices each).
    pub triangles: u32,
}

/// Object `index`'s triangles, in the collider's local space
/// (`kiln_level_object_transform` places them): a triangle mesh's stored
/// triangles (`KILN_COLLIDER_TRIMESH`), or a concave solid's low-poly
/// collider surface (`KILN_COLLIDER_BSP`: closed, counter-clockwise seen
/// from outside), which is what its queries answer on — for a static
/// triangle-mesh shape (Jolt's `MeshShape`, PhysX's `PxTriangleMesh`);
/// other colliders give `KILN_STATUS_NOT_FOUND`. `vertices`: `x, y, z`
/// each, room for `vertex_cap`; `indices`: 3 per triangle, room for
/// `triangle_cap` triangles, in the order the tree stores them. `sizes`
/// is set first; arrays too small give `KILN_STATUS_BUFFER_TOO_SMALL`
/// (call with null arrays and capacities of 0 to learn the sizes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_triangles(
    level: *const KilnLevel,
    index: u32,
    sizes: *mut KilnMeshSizes,
    vertices: *mut f32,
    vertex_cap: usize,
    indices: *mut u32,
    triangle_cap: usize,
) -> KilnStatus {
    run("kiln_level_object_triangles", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (sizes, level) = unsafe {
            (
                answer(sizes, "sizes", KilnMeshSizes::default())?,
                read(level, "level")?,
            )
        };
        use kiln_formats::level::ArchivedCollider as S;
        let mesh = match level_collider(level, index)? {
            S::TriMesh(m) => m,
            S::Bsp(b) => &b.surface,
            _ => {
                return Err(Fail::new(
                    KilnStatus::NotFound,
                    format!(
                        "object {index} has no triangles: it is convex (kiln_level_object_shape says what it is)"
                    ),
                ));
            }
        };
        let (nv, nt) = (mesh.vertices.len(), mesh.triangle_count());
        *sizes = KilnMeshSizes {
            vertices: nv as u32,
            triangles: nt as u32,
        };
        if vertex_cap < nv || triangle_cap < nt {
            return Err(Fail::new(
                KilnStatus::BufferTooSmall,
                format!(
                    "object {index} has {nv} vertices and {nt} triangles; room for {vertex_cap} and {triangle_cap}"
                ),
            ));
        }
        // SAFETY: the API's contract: each array holds its capacity.
        let (vs, is) = unsafe {
            (
                array_mut(vertices, 3 * vertex_cap, "vertices")?,
                array_mut(indices, 3 * triangle_cap, "indices")?,
            )
        };
        for (i, o) in vs.chunks_exact_mut(3).take(nv).enumerate() {
            o.copy_from_slice(&mesh.vertices.get(i as u32));
        }
        for (o, (t, _)) in is.chunks_exact_mut(3).zip(mesh.triangles()) {
            o.copy_from_slice(&t);
        }
        Ok(())
    })
}

/// The mass properties of one object (`kiln_level_object_mass`), in the
/// level's world frame as baked.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnMass {
    /// The solid's volume (m³).
    pub volume: f32,
    /// Density × volume (kg for a density in kg/m³).
    pub mass: f32,
    /// Centre of mass (world).
    pub centre: [f32; 3],
    /// Inertia tensor about the centre of mass along the world axes,
    /// row-major 3×3 and symmetric (kg·m²): Jolt's `mInertia` as it is,
    /// PhysX's after `PxDiagonalize`.
    pub inertia: [f32; 9],
}

/// The mass properties of object `index`'s solid at `density` (> 0,
/// e.g. 1000 kg/m³ for water) where the level baked it, exact for its
/// archived box, sphere, capsule, polytope or concave solid under any
/// placement, into `out`. A triangle mesh bounds no solid
/// (`KILN_STATUS_NOT_FOUND`). This is the density's answer for the one
/// object; an object in a rigid body the glTF file authors is simulated
/// with its body (`kiln_level_object_body`, `kiln_level_body_mass`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_mass(
    level: *const KilnLevel,
    index: u32,
    density: f32,
    out: *mut KilnMass,
) -> KilnStatus {
    run("kiln_level_object_mass", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnMass::default())?,
                read(level, "level")?,
            )
        };
        let density = density_arg(density)?;
        let object = level_object(level, index)?;
        let m = level
            .0
            .object_mass_properties(object, density)
            .ok_or_else(|| {
                Fail::new(
                    KilnStatus::NotFound,
                    format!("object {index} has no solid to weigh: it is a triangle mesh, or flat"),
                )
            })?;
        *out = KilnMass::from(&m);
        Ok(())
    })
}

/// [`KilnBodyInfo::authored`]: the file gives the body's mass.
pub const KILN_AUTHORED_MASS: u32 = 1;
/// [`KilnBodyInfo::authored`]: the file gives the body's centre of mass.
pub const KILN_AUTHORED_CENTRE: u32 = 2;
/// [`KilnBodyInfo::authored`]: the file gives the body's principal
/// moments of inertia and their axes.
pub const KILN_AUTHORED_INERTIA: u32 = 4;

/// A kinematic or dynamic rigid body a glTF physics extension authors
/// (`kiln_level_body_info`): its objects (`kiln_level_body_members`) move
/// as one. One engine body (a Jolt `Body` with a `StaticCompoundShape`, a
/// PhysX `PxRigidDynamic` with one shape per object) at `rotation` and
/// `translation`, each object's shape at its place relative to that
/// frame (`kiln_level_object_transform`, taken into the body's frame).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnBodyInfo {
    /// `KILN_MOTION_KINEMATIC` or `KILN_MOTION_DYNAMIC`.
    pub motion: u32,
    /// How many objects it has (at least 1).
    pub member_count: u32,
    /// Its frame's rotation at bake, a unit quaternion `(x, y, z, w)`.
    pub rotation: [f32; 4],
    /// Its frame's origin at bake (world).
    pub translation: [f32; 3],
    /// Which values below the file gives (`KILN_AUTHORED_*`); the others
    /// are zero (the axes the identity): `kiln_level_body_mass` fills
    /// them in.
    pub authored: u32,
    /// Mass (kg).
    pub mass: f32,
    /// Centre of mass, in the body's frame.
    pub centre_of_mass: [f32; 3],
    /// Principal moments of inertia (kg·m²).
    pub inertia_diagonal: [f32; 3],
    /// The rotation from the principal axes into the body's frame, a unit
    /// quaternion `(x, y, z, w)` (Jolt's `mRotation` of a diagonal
    /// `MassProperties`; PhysX's `cMassLocalPose.q`).
    pub inertia_orientation: [f32; 4],
}

/// How many rigid bodies the level's glTF file authors (0 for null).
/// Movers authored otherwise (node extras, project rules) are bodies of
/// one object each and not counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_body_count(level: *const KilnLevel) -> u32 {
    // SAFETY: the API's contract (module docs); null is checked.
    unsafe { read(level, "level") }.map_or(0, |l| l.0.authored_bodies().len() as u32)
}

/// Authored body `k`, 0 ≤ k < `kiln_level_body_count`.
fn authored_body(level: &KilnLevel, k: u32) -> Result<kiln_runtime::AuthoredBody<'_>, Fail> {
    level.0.authored_body(k as usize).ok_or_else(|| {
        Fail::new(
            KilnStatus::NotFound,
            format!(
                "body {k}: the level has {} authored bodies",
                level.0.authored_bodies().len()
            ),
        )
    })
}

/// What rigid body `k` is, into `out`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_body_info(
    level: *const KilnLevel,
    k: u32,
    out: *mut KilnBodyInfo,
) -> KilnStatus {
    run("kiln_level_body_info", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnBodyInfo::default())?,
                read(level, "level")?,
            )
        };
        let b = authored_body(level, k)?;
        let (moments, axes) = b.inertia.unwrap_or_default();
        *out = KilnBodyInfo {
            motion: match b.motion {
                kiln_runtime::Motion::Dynamic => KILN_MOTION_DYNAMIC,
                _ => KILN_MOTION_KINEMATIC,
            },
            member_count: b.members.len() as u32,
            rotation: b.pose.rotation.to_array(),
            translation: b.pose.translation.to_array(),
            authored: [
                (b.mass.is_some(), KILN_AUTHORED_MASS),
                (b.centre_of_mass.is_some(), KILN_AUTHORED_CENTRE),
                (b.inertia.is_some(), KILN_AUTHORED_INERTIA),
            ]
            .into_iter()
            .filter(|&(on, _)| on)
            .fold(0, |bits, (_, bit)| bits | bit),
            mass: b.mass.unwrap_or(0.0),
            centre_of_mass: b.centre_of_mass.unwrap_or_default().to_array(),
            inertia_diagonal: moments.to_array(),
            inertia_orientation: axes.to_array(),
        };
        Ok(())
    })
}

/// The name of rigid body `k` (its glTF node's), NUL-terminated, into
/// `buf` (`cap` bytes); `*len` is its length without the NUL. Too long
/// for `buf`: as much as fits is written, NUL-terminated, with
/// `KILN_STATUS_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_body_name(
    level: *const KilnLevel,
    k: u32,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> KilnStatus {
    run("kiln_level_body_name", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (len, buf, level) = unsafe {
            let len = answer(len, "len", 0)?;
            let buf = array_mut(buf.cast::<u8>(), cap, "buf")?;
            if let Some(first) = buf.first_mut() {
                *first = 0;
            }
            (len, buf, read(level, "level")?)
        };
        let name = authored_body(level, k)?.name;
        *len = name.len();
        copy_text(name, buf)
    })
}

/// `text` and a NUL into `buf`: as much as fits, and
/// `KILN_STATUS_BUFFER_TOO_SMALL` when that is not all of it.
fn copy_text(text: &str, buf: &mut [u8]) -> Result<(), Fail> {
    let cap = buf.len();
    let Some(room) = cap.checked_sub(1) else {
        return Err(Fail::new(
            KilnStatus::BufferTooSmall,
            format!("{} bytes and a NUL, room for 0", text.len()),
        ));
    };
    let n = text.len().min(room);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    buf[n] = 0;
    if n < text.len() {
        return Err(Fail::new(
            KilnStatus::BufferTooSmall,
            format!("{} bytes and a NUL, room for {cap}", text.len()),
        ));
    }
    Ok(())
}

/// The objects of rigid body `k` (level object indices, ascending) into
/// `members` (room for `cap`; `KilnBodyInfo::member_count` of them):
/// `KILN_STATUS_BUFFER_TOO_SMALL`, with nothing written, when `cap` is
/// short.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_body_members(
    level: *const KilnLevel,
    k: u32,
    members: *mut u32,
    cap: u32,
) -> KilnStatus {
    run("kiln_level_body_members", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let level = unsafe { read(level, "level")? };
        let b = authored_body(level, k)?;
        if (cap as usize) < b.members.len() {
            return Err(Fail::new(
                KilnStatus::BufferTooSmall,
                format!("body {k} has {} objects, room for {cap}", b.members.len()),
            ));
        }
        // SAFETY: the API's contract: `members` holds `cap` values.
        let out = unsafe { array_mut(members, cap as usize, "members")? };
        for (o, m) in out.iter_mut().zip(&b.members) {
            *o = m.index();
        }
        Ok(())
    })
}

/// The rigid body object `index` belongs to, into `*body`:
/// `KILN_STATUS_NOT_FOUND` (and `*body` `UINT32_MAX`) for an object in
/// none (static, or a mover of its own).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_object_body(
    level: *const KilnLevel,
    index: u32,
    body: *mut u32,
) -> KilnStatus {
    run("kiln_level_object_body", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (body, level) = unsafe { (answer(body, "body", u32::MAX)?, read(level, "level")?) };
        let object = level_object(level, index)?;
        let k = level.0.authored_body_of(object).ok_or_else(|| {
            Fail::new(
                KilnStatus::NotFound,
                format!("object {index} is in no authored body"),
            )
        })?;
        *body = k as u32;
        Ok(())
    })
}

/// The mass properties of rigid body `k` in the level's world frame as
/// baked, into `out`: each value the glTF file gives, and the rest from
/// its objects' solids at `density` (> 0; summed by the parallel-axis
/// rule; an authored mass alone scales the computed inertia, an authored
/// centre moves it). `KILN_STATUS_NOT_FOUND` when what the file leaves
/// out cannot be computed (no object bounds a solid).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_body_mass(
    level: *const KilnLevel,
    k: u32,
    density: f32,
    out: *mut KilnMass,
) -> KilnStatus {
    run("kiln_level_body_mass", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", KilnMass::default())?,
                read(level, "level")?,
            )
        };
        let density = density_arg(density)?;
        authored_body(level, k)?;
        let m = level
            .0
            .authored_body_mass(k as usize, density)
            .ok_or_else(|| {
                Fail::new(
                    KilnStatus::NotFound,
                    format!("body {k}: its file gives too little and no object bounds a solid"),
                )
            })?;
        *out = KilnMass::from(&m);
        Ok(())
    })
}

impl From<&kiln_runtime::MassProperties> for KilnMass {
    fn from(m: &kiln_runtime::MassProperties) -> KilnMass {
        KilnMass {
            volume: m.volume as f32,
            mass: m.mass as f32,
            centre: m.centre.as_vec3().to_array(),
            // row-major: glam's matrices are column-major
            inertia: m.inertia.transpose().to_cols_array().map(|x| x as f32),
        }
    }
}

/// A density argument, checked positive and finite.
fn density_arg(density: f32) -> Result<f64, Fail> {
    if density > 0.0 && density.is_finite() {
        Ok(f64::from(density))
    } else {
        Err(Fail::new(
            KilnStatus::InvalidArgument,
            format!("density {density} is not a positive finite number"),
        ))
    }
}

// ----------------------------------------------------------------- world

/// A level and the bodies that move beside it (opaque): the level's movers
/// and triggers where they were baked, and what the caller inserts.
pub struct KilnWorld(World);

/// A world of `level` (which the world keeps; the handle may be freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_new(
    level: *const KilnLevel,
    out: *mut *mut KilnWorld,
) -> KilnStatus {
    run("kiln_world_new", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, level) = unsafe {
            (
                answer(out, "out", std::ptr::null_mut())?,
                read(level, "level")?,
            )
        };
        *out = handle(KilnWorld(World::new(level.0.clone())));
        Ok(())
    })
}

/// Frees a world (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_free(world: *mut KilnWorld) {
    // SAFETY: the API's contract: null, or made by `kiln_world_new` and not yet freed.
    unsafe { release(world) }
}

/// Replaces the world's level (a re-baked archive): inserted bodies stay,
/// movers keep their poses by name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_set_level(
    world: *mut KilnWorld,
    level: *const KilnLevel,
) -> KilnStatus {
    run("kiln_world_set_level", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (world, level) = unsafe { (write(world, "world")?, read(level, "level")?) };
        world.0.set_level(level.0.clone());
        Ok(())
    })
}

/// How many bodies the world holds, the level's movers and triggers
/// included (0 for null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_body_count(world: *const KilnWorld) -> usize {
    // SAFETY: the API's contract (module docs).
    unsafe { world.as_ref() }.map_or(0, |w| w.0.body_count())
}

/// Whether `id` names an object of the world's level or one of its bodies.
fn known(world: &World, id: ObjectId) -> Result<(), Fail> {
    if world.has_object(id) {
        Ok(())
    } else {
        Err(Fail::new(
            KilnStatus::NotFound,
            format!("{id} is not in the world"),
        ))
    }
}

/// The id of the level's first object called `name`, else the first body
/// so named.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_find_object(
    world: *const KilnWorld,
    name: *const c_char,
    out: *mut KilnObjectId,
) -> KilnStatus {
    run("kiln_world_find_object", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, world, name) = unsafe {
            (
                answer(out, "out", KILN_NO_OBJECT)?,
                read(world, "world")?,
                text(name, "name")?,
            )
        };
        let id = world
            .0
            .find_object(name)
            .ok_or_else(|| Fail::new(KilnStatus::NotFound, format!("no object {name:?}")))?;
        *out = id.to_bits();
        Ok(())
    })
}

/// The name of object or body `id`, NUL-terminated, into `buf` (`cap`
/// bytes); `*len` is its length without the NUL. Too long for `buf`: as
/// much as fits is written, NUL-terminated, with `KILN_STATUS_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_object_name(
    world: *const KilnWorld,
    id: KilnObjectId,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> KilnStatus {
    run("kiln_world_object_name", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (len, buf, world) = unsafe {
            let len = answer(len, "len", 0)?;
            let buf = array_mut(buf.cast::<u8>(), cap, "buf")?;
            if let Some(first) = buf.first_mut() {
                *first = 0;
            }
            (len, buf, read(world, "world")?)
        };
        let id = ObjectId::from_bits(id);
        known(&world.0, id)?;
        let name = world.0.object_name(id).unwrap_or_default();
        *len = name.len();
        copy_text(&name, buf)
    })
}

/// The layer mask of object or body `id` (0 if the world has none such).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_object_layers(
    world: *const KilnWorld,
    id: KilnObjectId,
) -> u32 {
    // SAFETY: the API's contract (module docs).
    unsafe { world.as_ref() }
        .and_then(|w| w.0.object_layers(ObjectId::from_bits(id)))
        .unwrap_or(0)
}

/// The name and flags of a body being inserted.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn body_name<'a>(name: *const c_char) -> Result<&'a str, Fail> {
    if name.is_null() {
        Ok("")
    } else {
        // SAFETY: the caller's contract.
        unsafe { text(name, "name") }
    }
}

/// Inserts a body made of `shape` (a hull is copied) at `pose`, in
/// `layers`, called `name` (may be null), a trigger volume if `trigger`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_world_insert_shape(
    world: *mut KilnWorld,
    shape: *const KilnShape,
    pose: KilnPose,
    layers: u32,
    name: *const c_char,
    trigger: bool,
    out: *mut KilnObjectId,
) -> KilnStatus {
    run("kiln_world_insert_shape", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, world, shape, name) = unsafe {
            (
                answer(out, "out", KILN_NO_OBJECT)?,
                write(world, "world")?,
                to_shape(read(shape, "shape")?)?,
                body_name(name)?,
            )
        };
        let mut body = Body::shape(shape, to_pose(pose, "pose")?)
            .layers(layers)
            .named(name);
        if trigger {
            body = body.trigger();
        }
        *out = world.0.insert(body)?.to_bits();
        Ok(())
    })
}

/// Inserts a copy of object `object` of `from` (any level: a prefab
/// archive) at `pose`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_world_insert_copy(
    world: *mut KilnWorld,
    from: *const KilnLevel,
    object: KilnObjectId,
    pose: KilnPose,
    layers: u32,
    name: *const c_char,
    trigger: bool,
    out: *mut KilnObjectId,
) -> KilnStatus {
    run("kiln_world_insert_copy", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, world, from, name) = unsafe {
            (
                answer(out, "out", KILN_NO_OBJECT)?,
                write(world, "world")?,
                read(from, "from")?,
                body_name(name)?,
            )
        };
        let mut body = Body::copy(&from.0, ObjectId::from_bits(object), to_pose(pose, "pose")?)
            .layers(layers)
            .named(name);
        if trigger {
            body = body.trigger();
        }
        *out = world.0.insert(body)?.to_bits();
        Ok(())
    })
}

/// Moves body or mover `id` to `pose` (a teleport).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_set_pose(
    world: *mut KilnWorld,
    id: KilnObjectId,
    pose: KilnPose,
) -> KilnStatus {
    run("kiln_world_set_pose", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let world = unsafe { write(world, "world") }?;
        world
            .0
            .set_pose(ObjectId::from_bits(id), to_pose(pose, "pose")?)?;
        Ok(())
    })
}

/// Where body or mover `id` is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_get_pose(
    world: *const KilnWorld,
    id: KilnObjectId,
    out: *mut KilnPose,
) -> KilnStatus {
    run("kiln_world_get_pose", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, world) = unsafe {
            (
                answer(out, "out", Pose::IDENTITY.into())?,
                read(world, "world")?,
            )
        };
        let id = ObjectId::from_bits(id);
        *out = world
            .0
            .pose(id)
            .ok_or_else(|| {
                Fail::new(
                    KilnStatus::NotFound,
                    format!("{id} is no body or mover of the world"),
                )
            })?
            .into();
        Ok(())
    })
}

/// Takes body `id` out of the world.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_remove(world: *mut KilnWorld, id: KilnObjectId) -> KilnStatus {
    run("kiln_world_remove", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let world = unsafe { write(world, "world") }?;
        world.0.remove(ObjectId::from_bits(id))?;
        Ok(())
    })
}

/// The sync point, once a frame after the moves: records each body's
/// motion (for riding) and finds trigger enters and leaves.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_step(world: *mut KilnWorld) -> KilnStatus {
    run("kiln_world_step", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let world = unsafe { write(world, "world") }?;
        world.0.step();
        Ok(())
    })
}

/// A body entering or leaving a trigger volume.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnTriggerEvent {
    /// The trigger.
    pub trigger: KilnObjectId,
    /// The body.
    pub body: KilnObjectId,
    /// True for entering, false for leaving.
    pub entered: bool,
}

/// The trigger events of the last step.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_trigger_events(
    world: *const KilnWorld,
    out: *mut KilnTriggerEvent,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    run("kiln_world_trigger_events", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (count, out, world) = unsafe {
            (
                answer(count, "count", 0)?,
                array_mut(out, cap, "out")?,
                read(world, "world")?,
            )
        };
        let events: Vec<KilnTriggerEvent> = world
            .0
            .trigger_events()
            .iter()
            .map(|e| KilnTriggerEvent {
                trigger: e.trigger.to_bits(),
                body: e.body.to_bits(),
                entered: e.entered,
            })
            .collect();
        fill(&events, out, count)
    })
}

// ----------------------------------------------------------------- tiles

/// A point in the world in f64 (metres): where a tile or a world's origin
/// sits, or a focus point far from the world's zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KilnDVec3 {
    /// x
    pub x: f64,
    /// y
    pub y: f64,
    /// z
    pub z: f64,
}

impl From<KilnDVec3> for kiln_runtime::glam::DVec3 {
    fn from(v: KilnDVec3) -> kiln_runtime::glam::DVec3 {
        kiln_runtime::glam::DVec3::new(v.x, v.y, v.z)
    }
}

impl From<kiln_runtime::glam::DVec3> for KilnDVec3 {
    fn from(v: kiln_runtime::glam::DVec3) -> KilnDVec3 {
        KilnDVec3 {
            x: v.x,
            y: v.y,
            z: v.z,
        }
    }
}

/// A world of tiles alone (no level of its own), its f32 frame's zero at
/// `origin`: tiles come with `kiln_world_mount` or a `KilnStreamer`. Every
/// query and the character then see all mounted tiles together, as one
/// level baked whole would answer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_new_tiled(
    origin: KilnDVec3,
    out: *mut *mut KilnWorld,
) -> KilnStatus {
    run("kiln_world_new_tiled", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let out = unsafe { answer(out, "out", std::ptr::null_mut())? };
        *out = handle(KilnWorld(World::tiled(origin.into())?));
        Ok(())
    })
}

/// Mounts `level` (a tile, baked in its own frame) with its frame's zero at
/// world point `at`; `tile` gets its number (never 0; object ids of its
/// objects carry it: `kiln_object_tile`). The world keeps the level.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_mount(
    world: *mut KilnWorld,
    level: *const KilnLevel,
    at: KilnDVec3,
    tile: *mut u32,
) -> KilnStatus {
    run("kiln_world_mount", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (tile, world, level) = unsafe {
            (
                answer(tile, "tile", 0)?,
                write(world, "world")?,
                read(level, "level")?,
            )
        };
        *tile = world.0.mount(level.0.clone(), at.into())?.to_bits();
        Ok(())
    })
}

/// Unmounts tile `tile`: its objects, movers and triggers leave the world.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_unmount(world: *mut KilnWorld, tile: u32) -> KilnStatus {
    run("kiln_world_unmount", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let world = unsafe { write(world, "world")? };
        let id = world
            .0
            .tiles()
            .map(|(id, _, _)| id)
            .find(|id| id.to_bits() == tile)
            .ok_or_else(|| {
                Fail::new(KilnStatus::NotFound, format!("tile {tile} is not mounted"))
            })?;
        world.0.unmount(id)?;
        Ok(())
    })
}

/// How many tiles the world has mounted (0 for null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_tile_count(world: *const KilnWorld) -> usize {
    // SAFETY: the API's contract (module docs).
    unsafe { world.as_ref() }.map_or(0, |w| w.0.tiles().count())
}

/// The tile whose object `id` is (0: none, a body or an object of the
/// world's own level).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_object_tile(id: KilnObjectId) -> u32 {
    ObjectId::from_bits(id).tile().map_or(0, |t| t.to_bits())
}

/// The world point (f64) the world's f32 frame's zero sits at.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_origin(
    world: *const KilnWorld,
    out: *mut KilnDVec3,
) -> KilnStatus {
    run("kiln_world_origin", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, world) = unsafe {
            (
                answer(out, "out", KilnDVec3::default())?,
                read(world, "world")?,
            )
        };
        *out = world.0.origin().into();
        Ok(())
    })
}

/// Moves a tiled world's f32 frame so its zero sits at `origin` (a
/// floating origin: keep it near the camera or player). Bodies, movers and
/// triggers keep their places in the world, so their f32 poses change by
/// `shift` (optional), as must every position the caller keeps in the
/// world's frame. A world made of one level keeps its origin
/// (`KILN_STATUS_INVALID_ARGUMENT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_set_origin(
    world: *mut KilnWorld,
    origin: KilnDVec3,
    shift: *mut KilnVec3,
) -> KilnStatus {
    run("kiln_world_set_origin", || {
        // SAFETY: the API's contract (module docs); null is checked, and
        // `shift` may be null.
        let world = unsafe { write(world, "world")? };
        let moved = world.0.set_origin(origin.into())?;
        // SAFETY: the caller's contract: null or a valid pointer.
        if let Some(out) = unsafe { shift.as_mut() } {
            *out = moved.into();
        }
        Ok(())
    })
}

/// Keeps the tiles of a world manifest near focus points mounted in a
/// world, loading them on a background thread (opaque).
pub struct KilnStreamer {
    streamer: kiln_runtime::Streamer,
    /// The last failure's message, if a tile failed.
    failure: String,
}

/// What one `kiln_streamer_update` did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnStreamReport {
    /// Tiles mounted by this update.
    pub mounted: u32,
    /// Tiles unmounted by this update.
    pub dropped: u32,
    /// Tiles that failed to load or mount (`kiln_streamer_failure` says
    /// why); tried again once they leave the loading radius and return.
    pub failed: u32,
}

/// One tile a streamer has mounted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KilnStreamTile {
    /// Its index among the manifest's tiles.
    pub index: u32,
    /// Its number in the world (`kiln_object_tile`).
    pub tile: u32,
    /// Its grid cell (x, z); `[index, 0]` for tiles authored apart.
    pub cell: [i32; 2],
}

/// Opens the world manifest at `path` (validated) and starts a streamer of
/// its tiles: it keeps those within `radius` m of a focus point mounted and
/// loads `ahead` m further (a negative `ahead`: half the radius).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_streamer_open(
    path: *const c_char,
    radius: f64,
    ahead: f64,
    out: *mut *mut KilnStreamer,
) -> KilnStatus {
    run("kiln_streamer_open", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, path) = unsafe {
            (
                answer(out, "out", std::ptr::null_mut())?,
                text(path, "path")?,
            )
        };
        if !(radius.is_finite() && radius >= 0.0) || ahead.is_nan() {
            return Err(Fail::invalid(format!(
                "radius {radius} and ahead {ahead}: a radius is a finite number of metres, at least 0"
            )));
        }
        let manifest = kiln_runtime::WorldManifest::open(path)?;
        let mut streamer = kiln_runtime::Streamer::new(manifest, radius);
        if ahead >= 0.0 {
            streamer = streamer.ahead(ahead);
        }
        *out = handle(KilnStreamer {
            streamer,
            failure: String::new(),
        });
        Ok(())
    })
}

/// Stops the streamer's loader thread and frees it (null is ignored); the
/// tiles it mounted stay in their world.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_streamer_free(streamer: *mut KilnStreamer) {
    // SAFETY: the API's contract: null, or made by `kiln_streamer_open` and not yet freed.
    unsafe { release(streamer) }
}

/// One frame's streaming around the `count` focus points (f64 world
/// points): mounts the loaded tiles within the radius, drops those past
/// the band, asks for the rest in the background. With `wait`, waits until
/// every tile within the radius is mounted (a first frame, a teleport).
/// A tile that fails is counted in `report`, not an error of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_streamer_update(
    streamer: *mut KilnStreamer,
    world: *mut KilnWorld,
    focus: *const KilnDVec3,
    count: usize,
    wait: bool,
    report: *mut KilnStreamReport,
) -> KilnStatus {
    run("kiln_streamer_update", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (report, streamer, world, focus) = unsafe {
            (
                answer(report, "report", KilnStreamReport::default())?,
                write(streamer, "streamer")?,
                write(world, "world")?,
                array(focus, count, "focus")?,
            )
        };
        let points: Vec<kiln_runtime::glam::DVec3> = focus.iter().map(|&p| p.into()).collect();
        let r = if wait {
            streamer.streamer.update_blocking(&mut world.0, &points)
        } else {
            streamer.streamer.update(&mut world.0, &points)
        };
        if let Some((k, e)) = r.failed.last() {
            streamer.failure = format!("tile {k}: {e}");
        }
        *report = KilnStreamReport {
            mounted: r.mounted.len() as u32,
            dropped: r.dropped.len() as u32,
            failed: r.failed.len() as u32,
        };
        Ok(())
    })
}

/// The tiles the streamer has mounted, by manifest index, into `out`
/// (room for `cap`); `len` gets how many there are
/// (`KILN_STATUS_BUFFER_TOO_SMALL` when more than `cap`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_streamer_mounted(
    streamer: *const KilnStreamer,
    out: *mut KilnStreamTile,
    cap: usize,
    len: *mut usize,
) -> KilnStatus {
    run("kiln_streamer_mounted", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (len, out, streamer) = unsafe {
            (
                answer(len, "len", 0)?,
                array_mut(out, cap, "out")?,
                read(streamer, "streamer")?,
            )
        };
        let tiles = streamer.streamer.manifest().tiles();
        let mounted: Vec<KilnStreamTile> = streamer
            .streamer
            .mounted()
            .map(|(k, id)| KilnStreamTile {
                index: k as u32,
                tile: id.to_bits(),
                cell: tiles[k].cell,
            })
            .collect();
        *len = mounted.len();
        if mounted.len() > out.len() {
            return Err(Fail::new(
                KilnStatus::BufferTooSmall,
                format!("{} tiles mounted, room for {}", mounted.len(), out.len()),
            ));
        }
        out[..mounted.len()].copy_from_slice(&mounted);
        Ok(())
    })
}

/// The message of the last tile the streamer failed to load or mount (an
/// empty string if none), into `buf` (room for `cap` bytes with the NUL);
/// `len` gets its length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_streamer_failure(
    streamer: *const KilnStreamer,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> KilnStatus {
    run("kiln_streamer_failure", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (len, buf, streamer) = unsafe {
            let len = answer(len, "len", 0)?;
            let buf = array_mut(buf.cast::<u8>(), cap, "buf")?;
            if let Some(first) = buf.first_mut() {
                *first = 0;
            }
            (len, buf, read(streamer, "streamer")?)
        };
        *len = streamer.failure.len();
        copy_text(&streamer.failure, buf)
    })
}

// --------------------------------------------------------------- queries

/// A ray: `origin + t·dir` for `t` in `[0, max_t]` (`dir` need not be
/// unit length; `t` is in its units).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnRay {
    /// Start.
    pub origin: KilnVec3,
    /// Direction (not zero).
    pub dir: KilnVec3,
    /// Farthest `t` (≥ 0; may be infinite).
    pub max_t: f32,
}

fn to_ray(r: KilnRay) -> Result<Ray, Fail> {
    let ray = Ray::new(r.origin.into(), r.dir.into(), r.max_t);
    if ray.is_valid() {
        return Ok(ray);
    }
    let v = |v: Vec3| format!("({}, {}, {})", v.x, v.y, v.z);
    let why = if !ray.origin.is_finite() {
        format!("the origin {} is not finite", v(ray.origin))
    } else if !ray.dir.is_finite() {
        format!("the direction {} is not finite", v(ray.dir))
    } else if !kiln_runtime::is_direction(ray.dir) {
        format!(
            "the direction {} is zero or too short to have one (under 1.1e-19)",
            v(ray.dir)
        )
    } else {
        format!("max_t {} is not ≥ 0", ray.max_t)
    };
    Err(Fail::invalid(format!("ray: {why}")))
}

/// The closest hit of a ray.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnRayHit {
    /// Whether the ray hit anything (the rest is zero if not).
    pub hit: bool,
    /// Whether it hit a front face (false for a ray starting in a solid).
    pub front_face: bool,
    /// Ray parameter of the hit.
    pub t: f32,
    /// The hit point.
    pub point: KilnVec3,
    /// Unit surface normal, facing the ray's origin.
    pub normal: KilnVec3,
    /// The object hit.
    pub object: KilnObjectId,
    /// The triangle or face hit, `KILN_NO_FEATURE` if none.
    pub feature: u32,
}

const NO_RAY_HIT: KilnRayHit = KilnRayHit {
    hit: false,
    front_face: false,
    t: 0.0,
    point: KilnVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
    normal: KilnVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
    object: 0,
    feature: KILN_NO_FEATURE,
};

fn ray_hit(h: Option<kiln_runtime::RayHit>) -> KilnRayHit {
    h.map_or(NO_RAY_HIT, |h| KilnRayHit {
        hit: true,
        front_face: h.front_face,
        t: h.t,
        point: h.point.into(),
        normal: h.normal.into(),
        object: h.object.to_bits(),
        feature: h.feature.unwrap_or(KILN_NO_FEATURE),
    })
}

/// A handle a query runs on: a level's static objects alone
/// ([`KilnLevel`]), or a world: the level, its movers and triggers, and
/// the bodies inserted ([`KilnWorld`]). Both answer through the runtime's
/// [`Space`], so one body serves both entry points.
trait Scene {
    /// The argument's name in messages.
    const WHAT: &'static str;
    /// What the handle holds.
    type Space: Space;
    /// The level or world.
    fn space(&self) -> &Self::Space;
}

impl Scene for KilnLevel {
    const WHAT: &'static str = "level";
    type Space = Level;
    fn space(&self) -> &Level {
        &self.0
    }
}

impl Scene for KilnWorld {
    const WHAT: &'static str = "world";
    type Space = World;
    fn space(&self) -> &World {
        &self.0
    }
}

/// The closest hit of `ray` on `scene`.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn raycast_on<S: Scene>(
    name: &str,
    scene: *const S,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, f) = unsafe {
            (
                answer(out, "out", NO_RAY_HIT)?,
                read(scene, S::WHAT)?,
                skips(filter)?,
            )
        };
        *out = ray_hit(scene.space().raycast(&to_ray(ray)?, &to_filter(&f)));
        Ok(())
    })
}

/// The closest hit of `ray` among the objects `filter` sees (null: all
/// but triggers): the level, its movers and triggers, and the bodies.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_raycast(
    world: *const KilnWorld,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_on("kiln_world_raycast", world, ray, filter, out) }
}

/// The closest hit of `ray` among the level's static objects `filter`
/// sees (no movers, triggers or bodies: those are a world's).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_raycast(
    level: *const KilnLevel,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_on("kiln_level_raycast", level, ray, filter, out) }
}

/// Whether `ray` hits anything on `scene`.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn raycast_any_on<S: Scene>(
    name: &str,
    scene: *const S,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, f) = unsafe {
            (
                answer(out, "out", false)?,
                read(scene, S::WHAT)?,
                skips(filter)?,
            )
        };
        *out = scene.space().raycast_any(&to_ray(ray)?, &to_filter(&f));
        Ok(())
    })
}

/// Whether `ray` hits anything `filter` sees in the world.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_raycast_any(
    world: *const KilnWorld,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_any_on("kiln_world_raycast_any", world, ray, filter, out) }
}

/// Whether `ray` hits any of the level's static objects `filter` sees.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_raycast_any(
    level: *const KilnLevel,
    ray: KilnRay,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_any_on("kiln_level_raycast_any", level, ray, filter, out) }
}

/// `count` rays on `scene`, on Kiln's thread pool.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn raycast_batch_on<S: Scene>(
    name: &str,
    scene: *const S,
    rays: *const KilnRay,
    count: usize,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, rays, f) = unsafe {
            let out = array_mut(out, count, "out")?;
            out.fill(NO_RAY_HIT);
            (
                out,
                read(scene, S::WHAT)?,
                array(rays, count, "rays")?,
                skips(filter)?,
            )
        };
        // a malformed ray is answered as none (the runtime's rule), the
        // first named after every good one is answered
        let bad = rays.iter().enumerate().find_map(|(i, &r)| {
            to_ray(r)
                .err()
                .map(|Fail(s, why)| Fail(s, format!("rays[{i}]: {why}")))
        });
        let rays: Vec<Ray> = rays
            .iter()
            .map(|r| Ray::new(r.origin.into(), r.dir.into(), r.max_t))
            .collect();
        let mut hits = vec![None; rays.len()];
        scene
            .space()
            .raycast_batch(&rays, &to_filter(&f), &mut hits);
        for (o, h) in out.iter_mut().zip(hits) {
            *o = ray_hit(h);
        }
        bad.map_or(Ok(()), Err)
    })
}

/// `count` rays at once, on Kiln's thread pool: `out[i]` answers `rays[i]`.
/// A malformed ray answers no hit and the others are answered all the
/// same; the call then returns `KILN_STATUS_INVALID_ARGUMENT` naming the
/// first malformed one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_raycast_batch(
    world: *const KilnWorld,
    rays: *const KilnRay,
    count: usize,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_batch_on("kiln_world_raycast_batch", world, rays, count, filter, out) }
}

/// [`kiln_world_raycast_batch`] on the level's static objects alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_raycast_batch(
    level: *const KilnLevel,
    rays: *const KilnRay,
    count: usize,
    filter: *const KilnFilter,
    out: *mut KilnRayHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { raycast_batch_on("kiln_level_raycast_batch", level, rays, count, filter, out) }
}

/// What a shape touches.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnOverlap {
    /// The object touched.
    pub object: KilnObjectId,
    /// The deepest contact's point, on the object's surface.
    pub point: KilnVec3,
    /// Unit normal from the object towards the shape.
    pub normal: KilnVec3,
    /// How far the shape must move along `normal` to clear the contact.
    pub depth: f32,
    /// The triangle or face touched, `KILN_NO_FEATURE` if none.
    pub feature: u32,
}

/// Every object `shape` at `pose` touches on `scene`.
///
/// # Safety
/// The API's contract (module docs).
#[allow(clippy::too_many_arguments)]
unsafe fn overlap_on<S: Scene>(
    name: &str,
    scene: *const S,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut KilnOverlap,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (count, out, scene, shape, f) = unsafe {
            (
                answer(count, "count", 0)?,
                array_mut(out, cap, "out")?,
                read(scene, S::WHAT)?,
                to_shape(read(shape, "shape")?)?,
                skips(filter)?,
            )
        };
        let found: Vec<KilnOverlap> = scene
            .space()
            .overlap(&shape, &to_pose(pose, "pose")?, &to_filter(&f))
            .into_iter()
            .map(|o| KilnOverlap {
                object: o.object.to_bits(),
                point: o.point.into(),
                normal: o.normal.into(),
                depth: o.depth,
                feature: o.feature.unwrap_or(KILN_NO_FEATURE),
            })
            .collect();
        fill(&found, out, count)
    })
}

/// Every object of the world `shape` at `pose` touches, with the deepest
/// contact of each.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_world_overlap(
    world: *const KilnWorld,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut KilnOverlap,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        overlap_on(
            "kiln_world_overlap",
            world,
            shape,
            pose,
            filter,
            out,
            cap,
            count,
        )
    }
}

/// Every static object of the level `shape` at `pose` touches.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_level_overlap(
    level: *const KilnLevel,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut KilnOverlap,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        overlap_on(
            "kiln_level_overlap",
            level,
            shape,
            pose,
            filter,
            out,
            cap,
            count,
        )
    }
}

/// Whether `shape` at `pose` touches anything on `scene`.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn overlap_any_on<S: Scene>(
    name: &str,
    scene: *const S,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, shape, f) = unsafe {
            (
                answer(out, "out", false)?,
                read(scene, S::WHAT)?,
                to_shape(read(shape, "shape")?)?,
                skips(filter)?,
            )
        };
        *out = scene
            .space()
            .overlap_any(&shape, &to_pose(pose, "pose")?, &to_filter(&f));
        Ok(())
    })
}

/// Whether `shape` at `pose` touches anything `filter` sees in the world.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_overlap_any(
    world: *const KilnWorld,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { overlap_any_on("kiln_world_overlap_any", world, shape, pose, filter, out) }
}

/// Whether `shape` at `pose` touches any static object of the level.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_overlap_any(
    level: *const KilnLevel,
    shape: *const KilnShape,
    pose: KilnPose,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { overlap_any_on("kiln_level_overlap_any", level, shape, pose, filter, out) }
}

/// Where a moving shape first touches.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnShapeHit {
    /// Whether it touched anything (the rest is zero if not).
    pub hit: bool,
    /// How far along the motion it first touches (0 to `max_t`).
    pub t: f32,
    /// The contact point.
    pub point: KilnVec3,
    /// Unit normal from the object towards the shape.
    pub normal: KilnVec3,
    /// The object touched.
    pub object: KilnObjectId,
    /// The triangle or face touched, `KILN_NO_FEATURE` if none.
    pub feature: u32,
}

const NO_SHAPE_HIT: KilnShapeHit = KilnShapeHit {
    hit: false,
    t: 0.0,
    point: KilnVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
    normal: KilnVec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    },
    object: 0,
    feature: KILN_NO_FEATURE,
};

/// A sweep on `scene`.
///
/// # Safety
/// The API's contract (module docs).
#[allow(clippy::too_many_arguments)]
unsafe fn cast_on<S: Scene>(
    name: &str,
    scene: *const S,
    shape: *const KilnShape,
    pose: KilnPose,
    motion: KilnVec3,
    max_t: f32,
    ignore_leaving: bool,
    filter: *const KilnFilter,
    out: *mut KilnShapeHit,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, shape, f) = unsafe {
            (
                answer(out, "out", NO_SHAPE_HIT)?,
                read(scene, S::WHAT)?,
                to_shape(read(shape, "shape")?)?,
                skips(filter)?,
            )
        };
        let motion = vec3(motion, "motion")?;
        if max_t.is_nan() || max_t < 0.0 {
            return Err(Fail::invalid(format!("max_t {max_t} is not ≥ 0")));
        }
        if !kiln_runtime::is_direction(motion) {
            return Err(Fail::invalid(format!(
                "motion {motion}: zero or shorter than 1.1e-19 (a shape standing still: kiln_*_overlap)"
            )));
        }
        let cast = ShapeCast::new(shape, to_pose(pose, "pose")?, motion, max_t)
            .with(CastOptions { ignore_leaving });
        *out = scene
            .space()
            .cast(&cast, &to_filter(&f))
            .map_or(NO_SHAPE_HIT, |h| KilnShapeHit {
                hit: true,
                t: h.t,
                point: h.point.into(),
                normal: h.normal.into(),
                object: h.object.to_bits(),
                feature: h.feature.unwrap_or(KILN_NO_FEATURE),
            });
        Ok(())
    })
}

/// Sweeps `shape` from `pose` along `motion` for `t` in `[0, max_t]`
/// through the world; with `ignore_leaving`, contacts present at the
/// start that the motion leaves are skipped (so a shape resting on a
/// floor can slide).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_world_cast(
    world: *const KilnWorld,
    shape: *const KilnShape,
    pose: KilnPose,
    motion: KilnVec3,
    max_t: f32,
    ignore_leaving: bool,
    filter: *const KilnFilter,
    out: *mut KilnShapeHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        cast_on(
            "kiln_world_cast",
            world,
            shape,
            pose,
            motion,
            max_t,
            ignore_leaving,
            filter,
            out,
        )
    }
}

/// [`kiln_world_cast`] against the level's static objects alone.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_level_cast(
    level: *const KilnLevel,
    shape: *const KilnShape,
    pose: KilnPose,
    motion: KilnVec3,
    max_t: f32,
    ignore_leaving: bool,
    filter: *const KilnFilter,
    out: *mut KilnShapeHit,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        cast_on(
            "kiln_level_cast",
            level,
            shape,
            pose,
            motion,
            max_t,
            ignore_leaving,
            filter,
            out,
        )
    }
}

/// The solids on `scene` that contain `point`.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn contains_point_on<S: Scene>(
    name: &str,
    scene: *const S,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut KilnObjectId,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (count, out, scene, f) = unsafe {
            (
                answer(count, "count", 0)?,
                array_mut(out, cap, "out")?,
                read(scene, S::WHAT)?,
                skips(filter)?,
            )
        };
        let ids: Vec<u64> = scene
            .space()
            .contains_point(vec3(point, "point")?, &to_filter(&f))
            .iter()
            .map(|o| o.to_bits())
            .collect();
        fill(&ids, out, count)
    })
}

/// The solids of the world (boxes, spheres, capsules, polytopes, concave
/// solids) that contain `point`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_contains_point(
    world: *const KilnWorld,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut KilnObjectId,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        contains_point_on(
            "kiln_world_contains_point",
            world,
            point,
            filter,
            out,
            cap,
            count,
        )
    }
}

/// The level's static solids that contain `point`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_contains_point(
    level: *const KilnLevel,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut KilnObjectId,
    cap: usize,
    count: *mut usize,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe {
        contains_point_on(
            "kiln_level_contains_point",
            level,
            point,
            filter,
            out,
            cap,
            count,
        )
    }
}

/// Whether any solid on `scene` contains `point`.
///
/// # Safety
/// The API's contract (module docs).
unsafe fn contains_point_any_on<S: Scene>(
    name: &str,
    scene: *const S,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    run(name, || {
        // SAFETY: the caller's contract; null is checked.
        let (out, scene, f) = unsafe {
            (
                answer(out, "out", false)?,
                read(scene, S::WHAT)?,
                skips(filter)?,
            )
        };
        *out = scene
            .space()
            .contains_point_any(vec3(point, "point")?, &to_filter(&f));
        Ok(())
    })
}

/// Whether any solid of the world `filter` sees contains `point`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_world_contains_point_any(
    world: *const KilnWorld,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { contains_point_any_on("kiln_world_contains_point_any", world, point, filter, out) }
}

/// Whether any static solid of the level `filter` sees contains `point`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_level_contains_point_any(
    level: *const KilnLevel,
    point: KilnVec3,
    filter: *const KilnFilter,
    out: *mut bool,
) -> KilnStatus {
    // SAFETY: the caller's contract.
    unsafe { contains_point_any_on("kiln_level_contains_point_any", level, point, filter, out) }
}

// ------------------------------------------------------------- character

/// How a character moves (see `kiln_character_settings_default`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnCharacterSettings {
    /// The up direction (unit length).
    pub up: KilnVec3,
    /// How deep it may be inside geometry before it is pushed out (m).
    pub skin: f32,
    /// The steepest ground it stands on, in radians from horizontal.
    pub max_slope: f32,
    /// The highest step it walks up (m).
    pub step_height: f32,
    /// How deep a step's top must be to be stepped onto (m).
    pub min_step_tread: f32,
    /// How far down it follows the ground after leaving it (m).
    pub snap_distance: f32,
    /// Most slides per move.
    pub max_iterations: u32,
}

impl From<CharacterSettings> for KilnCharacterSettings {
    fn from(s: CharacterSettings) -> Self {
        KilnCharacterSettings {
            up: s.up.into(),
            skin: s.skin,
            max_slope: s.max_slope,
            step_height: s.step_height,
            min_step_tread: s.min_step_tread,
            snap_distance: s.snap_distance,
            max_iterations: s.max_iterations,
        }
    }
}

/// A character: a convex shape, its fixed rotation and its settings.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnCharacter {
    /// The shape, centred on the character's position.
    pub shape: KilnShape,
    /// The shape's rotation.
    pub rotation: KilnQuat,
    /// How it moves.
    pub settings: KilnCharacterSettings,
}

/// An upright capsule character with default settings (0.3 m radius and
/// 0.6 m half height make one 1.8 m tall).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_character_capsule(radius: f32, half_height: f32) -> KilnCharacter {
    KilnCharacter {
        shape: kiln_shape_capsule(radius, half_height),
        rotation: Quat::IDENTITY.into(),
        settings: CharacterSettings::default().into(),
    }
}

/// The default character settings (up +Y, 1 cm skin, 50° slopes, 0.3 m
/// steps).
#[unsafe(no_mangle)]
pub extern "C" fn kiln_character_settings_default() -> KilnCharacterSettings {
    CharacterSettings::default().into()
}

/// The runtime's character for `c`.
///
/// # Safety
/// `c.shape.hull` is null or a live hull.
unsafe fn to_character<'a>(c: &KilnCharacter) -> Result<Character<'a>, Fail> {
    let s = &c.settings;
    let up = vec3(s.up, "settings.up")?;
    if (up.length() - 1.0).abs() >= 1e-3 {
        return Err(Fail::invalid(format!(
            "settings.up {up} is not unit length"
        )));
    }
    for (x, what) in [
        (s.skin, "settings.skin"),
        (s.max_slope, "settings.max_slope"),
        (s.step_height, "settings.step_height"),
        (s.min_step_tread, "settings.min_step_tread"),
        (s.snap_distance, "settings.snap_distance"),
    ] {
        size(x, what)?;
    }
    Ok(Character {
        // SAFETY: the caller's contract.
        shape: unsafe { to_shape(&c.shape) }?,
        rotation: quat(c.rotation, "rotation")?,
        settings: CharacterSettings {
            up,
            skin: s.skin,
            max_slope: s.max_slope,
            step_height: s.step_height,
            min_step_tread: s.min_step_tread,
            snap_distance: s.snap_distance,
            max_iterations: s.max_iterations,
        },
    })
}

/// `KilnGround::state`: nothing below (falling or jumping).
pub const KILN_GROUND_IN_AIR: u32 = 0;
/// `KilnGround::state`: on walkable ground.
pub const KILN_GROUND_ON_GROUND: u32 = 1;
/// `KilnGround::state`: on ground too steep to stand on.
pub const KILN_GROUND_ON_STEEP_GROUND: u32 = 2;

/// What a character stands on.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnGround {
    /// `KILN_GROUND_IN_AIR`, `_ON_GROUND` or `_ON_STEEP_GROUND`.
    pub state: u32,
    /// Contact point on the ground (zero in the air).
    pub point: KilnVec3,
    /// The ground's unit normal there.
    pub normal: KilnVec3,
    /// The ground object.
    pub object: KilnObjectId,
}

impl From<Ground> for KilnGround {
    fn from(g: Ground) -> KilnGround {
        let (state, s) = match g {
            Ground::InAir => {
                return KilnGround {
                    state: KILN_GROUND_IN_AIR,
                    point: KilnVec3::default(),
                    normal: KilnVec3::default(),
                    object: 0,
                };
            }
            Ground::OnGround(s) => (KILN_GROUND_ON_GROUND, s),
            Ground::OnSteepGround(s) => (KILN_GROUND_ON_STEEP_GROUND, s),
        };
        KilnGround {
            state,
            point: s.point.into(),
            normal: s.normal.into(),
            object: s.object.to_bits(),
        }
    }
}

fn to_ground(g: &KilnGround) -> Result<Ground, Fail> {
    let support = || -> Result<Support, Fail> {
        Ok(Support {
            point: vec3(g.point, "ground.point")?,
            normal: vec3(g.normal, "ground.normal")?,
            object: ObjectId::from_bits(g.object),
        })
    };
    Ok(match g.state {
        KILN_GROUND_IN_AIR => Ground::InAir,
        KILN_GROUND_ON_GROUND => Ground::OnGround(support()?),
        KILN_GROUND_ON_STEEP_GROUND => Ground::OnSteepGround(support()?),
        k => {
            return Err(Fail::invalid(format!(
                "ground state {k} is none of KILN_GROUND_*"
            )));
        }
    })
}

/// A contact met while moving.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnCharacterHit {
    /// Contact point on the object.
    pub point: KilnVec3,
    /// Unit normal from the object towards the character.
    pub normal: KilnVec3,
    /// The object touched.
    pub object: KilnObjectId,
}

/// The outcome of a move.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnMove {
    /// Where the character ended up.
    pub position: KilnVec3,
    /// What it stands on there.
    pub ground: KilnGround,
    /// How many contacts stopped or turned it (the first `hits_cap` are
    /// in `hits`).
    pub hit_count: usize,
}

/// Moves `character` from `position` by `motion` (one frame's worth,
/// gravity included), sliding along what it meets, stepping up steps and
/// following the ground down; `out` says where it ended and what it
/// stands on, and the contacts go to `hits` (`hits_cap` of them; may be
/// null when 0; more than fit is not an error here).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kiln_character_move(
    world: *const KilnWorld,
    character: *const KilnCharacter,
    position: KilnVec3,
    motion: KilnVec3,
    filter: *const KilnFilter,
    out: *mut KilnMove,
    hits: *mut KilnCharacterHit,
    hits_cap: usize,
) -> KilnStatus {
    run("kiln_character_move", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out, hits, world, c, f) = unsafe {
            (
                answer(
                    out,
                    "out",
                    KilnMove {
                        position,
                        ground: Ground::InAir.into(),
                        hit_count: 0,
                    },
                )?,
                array_mut(hits, hits_cap, "hits")?,
                read(world, "world")?,
                to_character(read(character, "character")?)?,
                skips(filter)?,
            )
        };
        let m = c.move_and_slide(
            &world.0,
            vec3(position, "position")?,
            vec3(motion, "motion")?,
            &to_filter(&f),
        );
        for (o, h) in hits.iter_mut().zip(&m.hits) {
            *o = KilnCharacterHit {
                point: h.point.into(),
                normal: h.normal.into(),
                object: h.object.to_bits(),
            };
        }
        *out = KilnMove {
            position: m.position.into(),
            ground: m.ground.into(),
            hit_count: m.hits.len(),
        };
        Ok(())
    })
}

/// Carries a character at `position` standing on `ground` (the last
/// move's) by its ground's motion in the last frame (a lift, a
/// turntable); `out_position` is where that takes it and `out_turn` the
/// turn about up it should add to its heading. Call after
/// `kiln_world_step` and before the frame's move.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kiln_character_ride(
    world: *const KilnWorld,
    character: *const KilnCharacter,
    position: KilnVec3,
    ground: *const KilnGround,
    out_position: *mut KilnVec3,
    out_turn: *mut KilnQuat,
) -> KilnStatus {
    run("kiln_character_ride", || {
        // SAFETY: the API's contract (module docs); null is checked.
        let (out_position, out_turn, world, c, g) = unsafe {
            (
                answer(out_position, "out_position", position)?,
                answer(out_turn, "out_turn", Quat::IDENTITY.into())?,
                read(world, "world")?,
                to_character(read(character, "character")?)?,
                read(ground, "ground")?,
            )
        };
        let (p, turn) = c.ride(&world.0, vec3(position, "position")?, &to_ground(g)?);
        *out_position = p.into();
        *out_turn = turn.into();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every object's own collider read through the API is the archive's:
    /// the shape's kind and sizes, a polytope's arrays, the triangles of a
    /// triangle mesh or of a concave solid's surface (vertex positions as
    /// the tree decodes them); on one object of every kind, turned, scaled
    /// and moved.
    #[test]
    fn object_geometry_is_the_archive_s() {
        let turn = kiln_tests::placements()[1].1;
        let scene = kiln_tests::every_kind_scene(turn);
        let bytes = kiln_baker::bake_scene(&scene, &kiln_baker::BakeSettings::default()).bytes;
        let mut level: *mut KilnLevel = std::ptr::null_mut();
        // SAFETY: the bytes and the out pointer are valid for the call.
        let status = unsafe { kiln_level_from_bytes(bytes.as_ptr(), bytes.len(), &mut level) };
        assert_eq!(status, KilnStatus::Ok);
        // SAFETY: a level the call above made, freed below.
        let l = unsafe { &*level };
        let a = l.0.archive();
        let mut kinds = [0usize; 6];
        for i in 0..a.instances.len() as u32 {
            let collider = &a.colliders[a.instances[i as usize].collider.to_native() as usize];
            let mut shape = KilnPieceShape::default();
            // SAFETY: valid pointers for every call in this loop.
            unsafe {
                assert_eq!(
                    kiln_level_object_shape(level, i, &mut shape),
                    KilnStatus::Ok
                );
            }
            kinds[shape.kind as usize] += 1;
            use kiln_formats::level::ArchivedCollider as S;
            let mut sizes = KilnPieceSizes::default();
            let mut mesh = KilnMeshSizes::default();
            match collider {
                S::Cuboid(c) => {
                    assert_eq!(shape.kind, KILN_COLLIDER_CUBOID);
                    assert_eq!(shape.half_extents, c.half_extents.map(|x| x.to_native()));
                }
                S::Sphere(b) => {
                    assert_eq!(shape.kind, KILN_COLLIDER_SPHERE);
                    assert_eq!(shape.radius, b.radius.to_native());
                }
                S::Capsule(c) => {
                    assert_eq!(shape.kind, KILN_COLLIDER_CAPSULE);
                    assert_eq!(
                        (shape.radius, shape.half_height),
                        (c.radius.to_native(), c.half_height.to_native())
                    );
                }
                S::Polytope(p) => {
                    assert_eq!(shape.kind, KILN_COLLIDER_POLYTOPE);
                    let (nv, nf, nl) = (p.vertices.len(), p.planes.len(), p.face_vertices.len());
                    let (mut v, mut pl) = (vec![0f32; 3 * nv], vec![0f32; 4 * nf]);
                    let (mut st, mut lp) = (vec![0u32; nf + 1], vec![0u32; nl]);
                    // SAFETY: each array holds its capacity.
                    let status = unsafe {
                        kiln_level_object_polytope(
                            level,
                            i,
                            &mut sizes,
                            v.as_mut_ptr(),
                            nv,
                            pl.as_mut_ptr(),
                            nf,
                            st.as_mut_ptr(),
                            lp.as_mut_ptr(),
                            nl,
                        )
                    };
                    assert_eq!(status, KilnStatus::Ok);
                    let flat = |xs: &[[f32; 3]]| xs.concat();
                    let vs: Vec<[f32; 3]> = p
                        .vertices
                        .iter()
                        .map(|x| x.map(|c| c.to_native()))
                        .collect();
                    let ps: Vec<[f32; 4]> =
                        p.planes.iter().map(|x| x.map(|c| c.to_native())).collect();
                    assert_eq!(v, flat(&vs));
                    assert_eq!(pl, ps.concat());
                    assert!(
                        st.iter()
                            .zip(p.face_starts.iter())
                            .all(|(a, b)| *a == u32::from(b.to_native()))
                    );
                    assert!(
                        lp.iter()
                            .zip(p.face_vertices.iter())
                            .all(|(a, b)| *a == u32::from(b.to_native()))
                    );
                }
                S::TriMesh(_) | S::Bsp(_) => {
                    let m = match collider {
                        S::TriMesh(m) => m,
                        S::Bsp(b) => &b.surface,
                        _ => unreachable!(),
                    };
                    let (nv, nt) = (m.vertices.len(), m.triangle_count());
                    let (mut v, mut t) = (vec![0f32; 3 * nv], vec![0u32; 3 * nt]);
                    // SAFETY: each array holds its capacity.
                    let status = unsafe {
                        kiln_level_object_triangles(
                            level,
                            i,
                            &mut mesh,
                            v.as_mut_ptr(),
                            nv,
                            t.as_mut_ptr(),
                            nt,
                        )
                    };
                    assert_eq!(status, KilnStatus::Ok);
                    assert_eq!((mesh.vertices as usize, mesh.triangles as usize), (nv, nt));
                    let want: Vec<f32> = (0..nv as u32).flat_map(|k| m.vertices.get(k)).collect();
                    assert_eq!(v, want);
                    let tris: Vec<u32> = m.triangles().flat_map(|(t, _)| t).collect();
                    assert_eq!(t, tris);
                }
            }
        }
        // every kind is there to be read
        assert!(kinds.iter().all(|&k| k > 0), "{kinds:?}");
        // SAFETY: made above, not used after.
        unsafe { kiln_level_free(level) };
    }

    /// The header's version macros are the crate's version, and its format
    /// version the one the library reads.
    #[test]
    fn version_macros_are_the_library_s() {
        let v = format!(
            "{}.{}.{}",
            super::KILN_VERSION_MAJOR,
            super::KILN_VERSION_MINOR,
            super::KILN_VERSION_PATCH
        );
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        assert_eq!(super::KILN_FORMAT_VERSION, kiln_runtime::FORMAT_VERSION);
        assert!(super::kiln_version_compatible(
            super::KILN_VERSION_MAJOR,
            super::KILN_VERSION_MINOR
        ));
        assert!(!super::kiln_version_compatible(
            super::KILN_VERSION_MAJOR + 1,
            0
        ));
    }
}
