/* Kiln's C API: generated from engines/c/src/lib.rs by cbindgen; do not edit.
 *
 * Link with -lkiln (libkiln.so or libkiln.a; the static library also needs
 * -lpthread -ldl -lm). At start-up, check the library against this header:
 *   if (!kiln_version_compatible(KILN_VERSION_MAJOR, KILN_VERSION_MINOR)) ...
 *
 * Errors: every function returns a KilnStatus, or a value that cannot fail;
 * kiln_last_error() says why the last failing call on this thread failed.
 * Null pointers are refused (KILN_STATUS_NULL_ARGUMENT); malformed numbers
 * (non-finite, a direction too short to have one, a zero rotation, a
 * negative size) with KILN_STATUS_INVALID_ARGUMENT. A failed call still
 * writes every answer it was given a place for, as the answer of nothing
 * found: a null handle, no hit, false, a count of 0, KILN_NO_OBJECT, an
 * identity pose; a character move or ride leaves it where it was. (With
 * KILN_STATUS_BUFFER_TOO_SMALL the count says how many there are and the
 * first cap were written.) kiln_set_log hands every failure to the engine's
 * log as it happens; kiln_set_allocator, called first, gives Kiln the
 * engine's memory.
 *
 * Queries: kiln_level_* ask a level's static objects alone; kiln_world_*
 * ask a world: the level, its movers and triggers, and the bodies inserted.
 *
 * Ownership: KilnLevel, KilnWorld and KilnHull handles are made by their
 * _open/_read/_from_bytes/_new functions and given back by their _free
 * (null is ignored); freeing one twice, or using it after, is undefined
 * behaviour, as in any C API. A world keeps its level alive: the level
 * handle may be freed while the world is used. Nothing else the API hands
 * out is the caller's to free; answers of varying length go into the
 * caller's arrays.
 *
 * Threads: functions taking a const KilnWorld* or const KilnLevel* (every
 * query) may run on any number of threads at once; those taking a
 * KilnWorld* (insert, move, remove, step, set the level) need the world to
 * themselves. kiln_last_error() is per thread.
 *
 * Files: kiln_level_open memory-maps the archive: do not rewrite the file in
 * place while the level (or a world made of it) lives (cp over it kills the
 * process with SIGBUS); replace it by rename, as the baker does, or open
 * files that may change with kiln_level_read. */

#ifndef KILN_H
#define KILN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 The major version of the API this header describes (semantic
 versioning: before 1, a new minor version may break the API too).
 */
#define KILN_VERSION_MAJOR 0

/*
 The minor version of the API this header describes.
 */
#define KILN_VERSION_MINOR 3

/*
 The patch version of the API this header describes.
 */
#define KILN_VERSION_PATCH 0

/*
 The archive format version this header's library reads (the `format`
 field of an archive's header; `baker inspect` prints it). An archive of
 another version is refused with `KilnStatus::BadArchive`.
 */
#define KILN_FORMAT_VERSION 24

/*
 `KilnRayHit::feature` and friends when no feature is named.
 */
#define KILN_NO_FEATURE UINT32_MAX

/*
 The `kind` of a `KilnShape`: a sphere (`radius`).
 */
#define KILN_SHAPE_SPHERE 0

/*
 The `kind` of a `KilnShape`: an upright capsule (`half_height`, `radius`).
 */
#define KILN_SHAPE_CAPSULE 1

/*
 The `kind` of a `KilnShape`: a box (`half` extents).
 */
#define KILN_SHAPE_CUBOID 2

/*
 The `kind` of a `KilnShape`: a convex hull (`hull`).
 */
#define KILN_SHAPE_HULL 3

/*
 `KilnObjectInfo::collider`: a triangle mesh under a tree (terrain,
 open or large meshes).
 */
#define KILN_COLLIDER_TRIMESH 0

/*
 `KilnObjectInfo::collider`: a convex polytope (a plane set).
 */
#define KILN_COLLIDER_POLYTOPE 1

/*
 `KilnObjectInfo::collider`: a box.
 */
#define KILN_COLLIDER_CUBOID 2

/*
 `KilnObjectInfo::collider`: a sphere.
 */
#define KILN_COLLIDER_SPHERE 3

/*
 `KilnObjectInfo::collider`: a capsule.
 */
#define KILN_COLLIDER_CAPSULE 4

/*
 `KilnObjectInfo::collider`: a concave solid (a solid-leaf BSP tree).
 */
#define KILN_COLLIDER_BSP 5

/*
 `KilnObjectInfo::motion`: never moves (part of the level's tree).
 */
#define KILN_MOTION_STATIC 0

/*
 `KilnObjectInfo::motion`: moved by the game (a door, a lift): a world
 places it where it was baked and `kiln_world_set_pose` moves it.
 */
#define KILN_MOTION_KINEMATIC 1

/*
 `KilnObjectInfo::motion`: authored to be moved by a simulation.
 */
#define KILN_MOTION_DYNAMIC 2

/*
 `KilnBodyInfo::authored`: the file gives the body's mass.
 */
#define KILN_AUTHORED_MASS 1

/*
 `KilnBodyInfo::authored`: the file gives the body's centre of mass.
 */
#define KILN_AUTHORED_CENTRE 2

/*
 `KilnBodyInfo::authored`: the file gives the body's principal
 moments of inertia and their axes.
 */
#define KILN_AUTHORED_INERTIA 4

/*
 `KilnGround::state`: nothing below (falling or jumping).
 */
#define KILN_GROUND_IN_AIR 0

/*
 `KilnGround::state`: on walkable ground.
 */
#define KILN_GROUND_ON_GROUND 1

/*
 `KilnGround::state`: on ground too steep to stand on.
 */
#define KILN_GROUND_ON_STEEP_GROUND 2

/*
 What a call came to.
 */
typedef enum {
  /*
   Done.
   */
  KILN_STATUS_OK = 0,
  /*
   A pointer that must not be null was null.
   */
  KILN_STATUS_NULL_ARGUMENT = 1,
  /*
   A malformed argument: a non-finite number, a zero direction or
   rotation, a negative size, an unknown shape kind, a name that is
   not UTF-8, a hull that is flat or has too many points.
   */
  KILN_STATUS_INVALID_ARGUMENT = 2,
  /*
   An archive file could not be read.
   */
  KILN_STATUS_IO = 3,
  /*
   Bytes that are not a valid Kiln archive (truncated, corrupt, of
   another format version).
   */
  KILN_STATUS_BAD_ARCHIVE = 4,
  /*
   No object, body or layer of that name or id.
   */
  KILN_STATUS_NOT_FOUND = 5,
  /*
   The object is part of the level's static geometry: it cannot be
   moved or removed.
   */
  KILN_STATUS_STATIC_OBJECT = 6,
  /*
   The answer has more items than the array passed can hold: the
   first `cap` were written and `*count` says how many there are.
   */
  KILN_STATUS_BUFFER_TOO_SMALL = 7,
  /*
   A bug inside Kiln, caught before it reached the caller.
   */
  KILN_STATUS_PANIC = 8
} KilnStatus;

/*
 A convex hull of points, made by `kiln_hull_new` (opaque).
 */
typedef struct KilnHull KilnHull;

/*
 A baked level, opened from an archive (opaque). A world made of it
 keeps it alive: free the handle whenever the caller is done with it.
 */
typedef struct KilnLevel KilnLevel;

/*
 Keeps the tiles of a world manifest near focus points mounted in a
 world, loading them on a background thread (opaque).
 */
typedef struct KilnStreamer KilnStreamer;

/*
 A level and the bodies that move beside it (opaque): the level's movers
 and triggers where they were baked, and what the caller inserts.
 */
typedef struct KilnWorld KilnWorld;

/*
 Memory for Kiln from the engine, as Jolt's `Allocate`/`Free` and
 PhysX's `PxAllocatorCallback` take it: every allocation Kiln makes
 (handles, answers, its thread pool) goes through `alloc` and `free`.
 */
typedef struct {
  /*
   `size` bytes aligned to `align` (a power of two), or null when
   there is no memory (Kiln then aborts the process, as Rust does).
   */
  void *(*alloc)(size_t size, size_t align, void *user);
  /*
   Gives back a block `alloc` made, with the size and alignment it
   was asked for.
   */
  void (*free)(void *ptr, size_t size, size_t align, void *user);
  /*
   Passed to both, as it is.
   */
  void *user;
} KilnAllocator;

/*
 Told of each failed call, as PhysX's `PxErrorCallback` is: the status
 and the message `kiln_last_error` gives (valid during the call only),
 on the thread that failed. It must not call back into Kiln.
 */
typedef void (*KilnLogFn)(KilnStatus status, const char *message, void *user);

/*
 A vector (metres, or a direction).
 */
typedef struct {
  /*
   x
   */
  float x;
  /*
   y
   */
  float y;
  /*
   z
   */
  float z;
} KilnVec3;

/*
 A convex shape to query with, in its own frame (a `KilnPose` places
 it). Make one with `kiln_shape_sphere`, `_capsule`, `_cuboid` or `_hull`.
 */
typedef struct {
  /*
   `KILN_SHAPE_SPHERE`, `_CAPSULE`, `_CUBOID` or `_HULL`.
   */
  uint32_t kind;
  /*
   Radius of a sphere or capsule (≥ 0).
   */
  float radius;
  /*
   Half the distance between a capsule's cap centres, along its +Y
   axis (≥ 0).
   */
  float half_height;
  /*
   Half extents of a box (each ≥ 0).
   */
  KilnVec3 half;
  /*
   The hull of a hull shape (not freed while a query uses it; a body
   keeps its own copy).
   */
  const KilnHull *hull;
} KilnShape;

/*
 An object of a level or a body of a world, as every answer names it
 (0 is a level's first object; ids of bodies are never reused).
 */
typedef uint64_t KilnObjectId;

/*
 Which objects a query sees. Pass null for every object but triggers.
 */
typedef struct {
  /*
   Objects in none of these layers are skipped (`0xFFFFFFFF`: all).
   */
  uint32_t layers;
  /*
   Non-zero: trigger volumes are seen too.
   */
  uint32_t triggers;
  /*
   Objects to skip (`skip_count` of them; may be null when 0).
   */
  const KilnObjectId *skip;
  /*
   How many ids `skip` holds.
   */
  size_t skip_count;
} KilnFilter;

/*
 What one object of a level is, as `baker inspect` lists it.
 */
typedef struct {
  /*
   Its collider: `KILN_COLLIDER_*`.
   */
  uint32_t collider;
  /*
   How it moves: `KILN_MOTION_*`.
   */
  uint32_t motion;
  /*
   Whether it is a trigger volume (seen only by queries whose filter
   asks for triggers, and only through a world).
   */
  bool trigger;
  /*
   Its collision layers as a mask (see `kiln_level_layer`).
   */
  uint32_t layers;
} KilnObjectInfo;

/*
 What one convex piece is to a physics engine (`kiln_level_object_piece_shape`).
 */
typedef struct {
  /*
   `KILN_COLLIDER_POLYTOPE`: take the piece's polytope
   (`kiln_level_object_piece`); `KILN_COLLIDER_CUBOID`,
   `KILN_COLLIDER_SPHERE` or `KILN_COLLIDER_CAPSULE`: take this
   primitive instead (Jolt's `BoxShape`, `SphereShape` or `CapsuleShape`
   under a `RotatedTranslatedShape`; PhysX's `PxBoxGeometry`,
   `PxSphereGeometry` or `PxCapsuleGeometry`, whose axis is x: turn it
   onto y), which fills and encloses the piece.
   */
  uint32_t kind;
  /*
   A box's half size along its local axes.
   */
  float half_extents[3];
  /*
   A sphere's or capsule's radius.
   */
  float radius;
  /*
   Half the length of a capsule's inner segment, along its local y.
   */
  float half_height;
  /*
   The primitive's orientation in the collider's local space: a unit
   quaternion `x, y, z, w` (identity for a polytope).
   */
  float rotation[4];
  /*
   The primitive's centre in the collider's local space
   (`kiln_level_object_transform` places it).
   */
  float centre[3];
} KilnPieceShape;

/*
 The sizes of one convex piece.
 */
typedef struct {
  /*
   Vertices (3 floats each).
   */
  uint32_t vertices;
  /*
   Faces: planes (4 floats each), and `faces + 1` face starts.
   */
  uint32_t faces;
  /*
   Entries of all the face loops together.
   */
  uint32_t loop_entries;
} KilnPieceSizes;

/*
 The sizes of a triangle mesh (`kiln_level_object_triangles`).
 */
typedef struct {
  /*
   Vertices (3 floats each).
   */
  uint32_t vertices;
  /*
   Triangles (3 vertex indices each).
   */
  uint32_t triangles;
} KilnMeshSizes;

/*
 The mass properties of one object (`kiln_level_object_mass`), in the
 level's world frame as baked.
 */
typedef struct {
  /*
   The solid's volume (m³).
   */
  float volume;
  /*
   Density × volume (kg for a density in kg/m³).
   */
  float mass;
  /*
   Centre of mass (world).
   */
  float centre[3];
  /*
   Inertia tensor about the centre of mass along the world axes,
   row-major 3×3 and symmetric (kg·m²): Jolt's `mInertia` as it is,
   PhysX's after `PxDiagonalize`.
   */
  float inertia[9];
} KilnMass;

/*
 A kinematic or dynamic rigid body a glTF physics extension authors
 (`kiln_level_body_info`): its objects (`kiln_level_body_members`) move
 as one. One engine body (a Jolt `Body` with a `StaticCompoundShape`, a
 PhysX `PxRigidDynamic` with one shape per object) at `rotation` and
 `translation`, each object's shape at its place relative to that
 frame (`kiln_level_object_transform`, taken into the body's frame).
 */
typedef struct {
  /*
   `KILN_MOTION_KINEMATIC` or `KILN_MOTION_DYNAMIC`.
   */
  uint32_t motion;
  /*
   How many objects it has (at least 1).
   */
  uint32_t member_count;
  /*
   Its frame's rotation at bake, a unit quaternion `(x, y, z, w)`.
   */
  float rotation[4];
  /*
   Its frame's origin at bake (world).
   */
  float translation[3];
  /*
   Which values below the file gives (`KILN_AUTHORED_*`); the others
   are zero (the axes the identity): `kiln_level_body_mass` fills
   them in.
   */
  uint32_t authored;
  /*
   Mass (kg).
   */
  float mass;
  /*
   Centre of mass, in the body's frame.
   */
  float centre_of_mass[3];
  /*
   Principal moments of inertia (kg·m²).
   */
  float inertia_diagonal[3];
  /*
   The rotation from the principal axes into the body's frame, a unit
   quaternion `(x, y, z, w)` (Jolt's `mRotation` of a diagonal
   `MassProperties`; PhysX's `cMassLocalPose.q`).
   */
  float inertia_orientation[4];
} KilnBodyInfo;

/*
 A rotation as a unit quaternion (x, y, z, w), as glTF writes them.
 */
typedef struct {
  /*
   x
   */
  float x;
  /*
   y
   */
  float y;
  /*
   z
   */
  float z;
  /*
   w (1 for no rotation)
   */
  float w;
} KilnQuat;

/*
 A rigid placement: the rotation, then the translation.
 */
typedef struct {
  /*
   Rotation (normalised by the API; not zero).
   */
  KilnQuat rotation;
  /*
   Translation.
   */
  KilnVec3 translation;
} KilnPose;

/*
 A body entering or leaving a trigger volume.
 */
typedef struct {
  /*
   The trigger.
   */
  KilnObjectId trigger;
  /*
   The body.
   */
  KilnObjectId body;
  /*
   True for entering, false for leaving.
   */
  bool entered;
} KilnTriggerEvent;

/*
 A point in the world in f64 (metres): where a tile or a world's origin
 sits, or a focus point far from the world's zero.
 */
typedef struct {
  /*
   x
   */
  double x;
  /*
   y
   */
  double y;
  /*
   z
   */
  double z;
} KilnDVec3;

/*
 What one `kiln_streamer_update` did.
 */
typedef struct {
  /*
   Tiles mounted by this update.
   */
  uint32_t mounted;
  /*
   Tiles unmounted by this update.
   */
  uint32_t dropped;
  /*
   Tiles that failed to load or mount (`kiln_streamer_failure` says
   why); tried again once they leave the loading radius and return.
   */
  uint32_t failed;
} KilnStreamReport;

/*
 One tile a streamer has mounted.
 */
typedef struct {
  /*
   Its index among the manifest's tiles.
   */
  uint32_t index;
  /*
   Its number in the world (`kiln_object_tile`).
   */
  uint32_t tile;
  /*
   Its grid cell (x, z); `[index, 0]` for tiles authored apart.
   */
  int32_t cell[2];
} KilnStreamTile;

/*
 A ray: `origin + t·dir` for `t` in `[0, max_t]` (`dir` need not be
 unit length; `t` is in its units).
 */
typedef struct {
  /*
   Start.
   */
  KilnVec3 origin;
  /*
   Direction (not zero).
   */
  KilnVec3 dir;
  /*
   Farthest `t` (≥ 0; may be infinite).
   */
  float max_t;
} KilnRay;

/*
 The closest hit of a ray.
 */
typedef struct {
  /*
   Whether the ray hit anything (the rest is zero if not).
   */
  bool hit;
  /*
   Whether it hit a front face (false for a ray starting in a solid).
   */
  bool front_face;
  /*
   Ray parameter of the hit.
   */
  float t;
  /*
   The hit point.
   */
  KilnVec3 point;
  /*
   Unit surface normal, facing the ray's origin.
   */
  KilnVec3 normal;
  /*
   The object hit.
   */
  KilnObjectId object;
  /*
   The triangle or face hit, `KILN_NO_FEATURE` if none.
   */
  uint32_t feature;
} KilnRayHit;

/*
 What a shape touches.
 */
typedef struct {
  /*
   The object touched.
   */
  KilnObjectId object;
  /*
   The deepest contact's point, on the object's surface.
   */
  KilnVec3 point;
  /*
   Unit normal from the object towards the shape.
   */
  KilnVec3 normal;
  /*
   How far the shape must move along `normal` to clear the contact.
   */
  float depth;
  /*
   The triangle or face touched, `KILN_NO_FEATURE` if none.
   */
  uint32_t feature;
} KilnOverlap;

/*
 Where a moving shape first touches.
 */
typedef struct {
  /*
   Whether it touched anything (the rest is zero if not).
   */
  bool hit;
  /*
   How far along the motion it first touches (0 to `max_t`).
   */
  float t;
  /*
   The contact point.
   */
  KilnVec3 point;
  /*
   Unit normal from the object towards the shape.
   */
  KilnVec3 normal;
  /*
   The object touched.
   */
  KilnObjectId object;
  /*
   The triangle or face touched, `KILN_NO_FEATURE` if none.
   */
  uint32_t feature;
} KilnShapeHit;

/*
 How a character moves (see `kiln_character_settings_default`).
 */
typedef struct {
  /*
   The up direction (unit length).
   */
  KilnVec3 up;
  /*
   How deep it may be inside geometry before it is pushed out (m).
   */
  float skin;
  /*
   The steepest ground it stands on, in radians from horizontal.
   */
  float max_slope;
  /*
   The highest step it walks up (m).
   */
  float step_height;
  /*
   How deep a step's top must be to be stepped onto (m).
   */
  float min_step_tread;
  /*
   How far down it follows the ground after leaving it (m).
   */
  float snap_distance;
  /*
   Most slides per move.
   */
  uint32_t max_iterations;
} KilnCharacterSettings;

/*
 A character: a convex shape, its fixed rotation and its settings.
 */
typedef struct {
  /*
   The shape, centred on the character's position.
   */
  KilnShape shape;
  /*
   The shape's rotation.
   */
  KilnQuat rotation;
  /*
   How it moves.
   */
  KilnCharacterSettings settings;
} KilnCharacter;

/*
 What a character stands on.
 */
typedef struct {
  /*
   `KILN_GROUND_IN_AIR`, `_ON_GROUND` or `_ON_STEEP_GROUND`.
   */
  uint32_t state;
  /*
   Contact point on the ground (zero in the air).
   */
  KilnVec3 point;
  /*
   The ground's unit normal there.
   */
  KilnVec3 normal;
  /*
   The ground object.
   */
  KilnObjectId object;
} KilnGround;

/*
 The outcome of a move.
 */
typedef struct {
  /*
   Where the character ended up.
   */
  KilnVec3 position;
  /*
   What it stands on there.
   */
  KilnGround ground;
  /*
   How many contacts stopped or turned it (the first `hits_cap` are
   in `hits`).
   */
  size_t hit_count;
} KilnMove;

/*
 A contact met while moving.
 */
typedef struct {
  /*
   Contact point on the object.
   */
  KilnVec3 point;
  /*
   Unit normal from the object towards the character.
   */
  KilnVec3 normal;
  /*
   The object touched.
   */
  KilnObjectId object;
} KilnCharacterHit;

/*
 The id a failed `kiln_world_find_object` or `kiln_world_insert_*`
 writes: no object's.
 */
#define KILN_NO_OBJECT UINT64_MAX

#ifdef __cplusplus
extern "C" {
#endif /* __cplusplus */

/*
 Why the last failing call on this thread failed ("" if none has): the
 function's name and the cause, e.g. `kiln_level_open: level.kiln: No
 such file or directory`. The text stays valid until the next failing
 call on this thread.
 */
const char *kiln_last_error(void);

/*
 The library's version, e.g. "0.3.0" (static text).
 */
const char *kiln_version(void);

/*
 Whether the library linked is one a program built against the header
 of version `major`.`minor` can use: the same major version, and a minor
 version at least as new (before 1.0, the same minor version). Call it
 at start-up with the header's macros, as PhysX and Jolt ask:
 `kiln_version_compatible(KILN_VERSION_MAJOR, KILN_VERSION_MINOR)`.
 */
bool kiln_version_compatible(uint32_t major, uint32_t minor);

/*
 The archive format version the library reads (see
 `KILN_FORMAT_VERSION`).
 */
uint32_t kiln_format_version(void);

/*
 Makes every allocation of the library go through `allocator` (copied).
 Call it first, before any other Kiln call: once Kiln has allocated
 with the system's allocator it keeps it, and this returns
 `KILN_STATUS_INVALID_ARGUMENT`; it can be set once. `alloc` must return
 blocks of the size and alignment asked (or null), and both functions
 may be called from any thread at once.
 */
KilnStatus kiln_set_allocator(const KilnAllocator *allocator);

/*
 Sets the function told of every failed call (null: none), with `user`
 passed to it as it is. It may be called from any thread, at any time.
 */
void kiln_set_log(KilnLogFn log, void *user);

/*
 A sphere of `radius`.
 */
KilnShape kiln_shape_sphere(float radius);

/*
 An upright capsule: cap centres `half_height` above and below its
 origin, grown by `radius`. Radius first, as in
 `kiln_character_capsule` (before version 0.2 the order was the other
 way round).
 */
KilnShape kiln_shape_capsule(float radius, float half_height);

/*
 A box of half extents `half`.
 */
KilnShape kiln_shape_cuboid(KilnVec3 half);

/*
 A convex hull shape (the hull must outlive the queries that use it).
 */
KilnShape kiln_shape_hull(const KilnHull *hull);

/*
 The convex hull of `count` points (at least four, not all on a plane;
 at most 256). Free it with `kiln_hull_free`.
 */
KilnStatus kiln_hull_new(const KilnVec3 *points, size_t count, KilnHull **out);

/*
 Frees a hull (null is ignored).
 */
void kiln_hull_free(KilnHull *hull);

/*
 A filter that sees every object but triggers.
 */
KilnFilter kiln_filter_all(void);

/*
 Opens the archive at `path` (memory-mapped, validated once). The file
 must not be rewritten in place while the level (or a world made of it)
 is alive: `cp new.kiln live.kiln` truncates and rewrites the mapped
 file and the process dies of SIGBUS. Replace it by rename (as the baker
 does), or open files that may change in place with `kiln_level_read`.
 */
KilnStatus kiln_level_open(const char *path, KilnLevel **out);

/*
 Reads the archive at `path` into memory and validates it: no mapping,
 so the file may change in any way afterwards (the hot-reload path).
 */
KilnStatus kiln_level_read(const char *path, KilnLevel **out);

/*
 Opens an archive held in memory (`len` bytes, copied).
 */
KilnStatus kiln_level_from_bytes(const uint8_t *bytes, size_t len, KilnLevel **out);

/*
 Frees a level handle (null is ignored). Worlds made of it keep the
 level itself.
 */
void kiln_level_free(KilnLevel *level);

/*
 How many objects the level has (0 for null); their ids are 0 to this.
 */
uint32_t kiln_level_object_count(const KilnLevel *level);

/*
 The mask bit of the level's layer called `name` (for `KilnFilter::layers`).
 */
KilnStatus kiln_level_layer(const KilnLevel *level, const char *name, uint32_t *out);

/*
 What object `index` of the level is (`0 ≤ index <
 kiln_level_object_count`; its id is `index`). Its name:
 `kiln_world_object_name` on a world of the level.
 */
KilnStatus kiln_level_object_info(const KilnLevel *level, uint32_t index, KilnObjectInfo *out);

/*
 Where object `index` was baked: its world-from-local matrix, row-major
 3×4 (`out[4·r + c]`, the translation in column 3), which places its
 collider's local space — and its convex pieces' vertices and planes —
 in the world. It may scale, mirror or shear.
 */
KilnStatus kiln_level_object_transform(const KilnLevel *level, uint32_t index, float (*out)[12]);

/*
 How many convex pieces object `index` has, for a physics engine that
 simulates a concave object as convex shapes (Jolt's `ConvexHullShape`
 under a `StaticCompoundShape`, PhysX's `PxConvexMesh`es on one actor):
 0 when its collider has none (a box, sphere, capsule or polytope is
 convex already; a static triangle mesh is static geometry; a dynamic
 body's triangle mesh has pieces).
 */
KilnStatus kiln_level_object_piece_count(const KilnLevel *level, uint32_t index, uint32_t *count);

/*
 Piece `piece` of object `index` as a physics engine should take it: its
 polytope, or the box, sphere or capsule that fills it.
 */
KilnStatus kiln_level_object_piece_shape(const KilnLevel *level,
                                         uint32_t index,
                                         uint32_t piece,
                                         KilnPieceShape *out);

/*
 Piece `piece` of object `index` (`0 ≤ piece <
 kiln_level_object_piece_count`), copied into the caller's arrays, in
 the collider's local space (`kiln_level_object_transform` places it):
 `vertices` (`x, y, z` each, room for `vertex_cap` vertices), `planes`
 (`nx, ny, nz, d` each, inside where `n · x ≤ d`, room for `face_cap`
 faces), `face_starts` (room for `face_cap + 1`: the loop of face f is
 the entries of `face_vertices` from face f's start up to face f + 1's,
 counter-clockwise seen from outside, lying in plane f) and
 `face_vertices` (room for `loop_cap`). `sizes` is set first; arrays too small give
 `KILN_STATUS_BUFFER_TOO_SMALL` (call with null arrays and capacities of 0 to
 learn the sizes). Every vertex lies on or behind every plane.
 */
KilnStatus kiln_level_object_piece(const KilnLevel *level,
                                   uint32_t index,
                                   uint32_t piece,
                                   KilnPieceSizes *sizes,
                                   float *vertices,
                                   size_t vertex_cap,
                                   float *planes,
                                   size_t face_cap,
                                   uint32_t *face_starts,
                                   uint32_t *face_vertices,
                                   size_t loop_cap);

/*
 The shape of object `index`'s own collider, as a physics engine takes
 it, into `out`: its kind (`KILN_COLLIDER_*`); a box, sphere or capsule
 has its sizes there, centred on the collider's local origin along its
 axes (rotation identity, centre zero: `kiln_level_object_transform`
 places it, and is a similarity for primitives). A polytope's faces come
 from `kiln_level_object_polytope`; a triangle mesh's or a concave
 solid's triangles from `kiln_level_object_triangles`, and a concave
 solid's convex pieces from `kiln_level_object_piece` (what a moving
 body should be simulated with).
 */
KilnStatus kiln_level_object_shape(const KilnLevel *level, uint32_t index, KilnPieceShape *out);

/*
 Object `index`'s polytope (its collider is `KILN_COLLIDER_POLYTOPE`;
 others give `KILN_STATUS_NOT_FOUND`), copied as
 `kiln_level_object_piece` copies a piece: in the collider's local
 space, `sizes` first, `KILN_STATUS_BUFFER_TOO_SMALL` when an array is
 short. A Jolt `ConvexHullShape` or a PhysX `PxConvexMesh` takes its
 vertices as they are (no hull to recompute).
 */
KilnStatus kiln_level_object_polytope(const KilnLevel *level,
                                      uint32_t index,
                                      KilnPieceSizes *sizes,
                                      float *vertices,
                                      size_t vertex_cap,
                                      float *planes,
                                      size_t face_cap,
                                      uint32_t *face_starts,
                                      uint32_t *face_vertices,
                                      size_t loop_cap);

/*
 Object `index`'s triangles, in the collider's local space
 (`kiln_level_object_transform` places them): a triangle mesh's stored
 triangles (`KILN_COLLIDER_TRIMESH`), or a concave solid's low-poly
 collider surface (`KILN_COLLIDER_BSP`: closed, counter-clockwise seen
 from outside), which is what its queries answer on — for a static
 triangle-mesh shape (Jolt's `MeshShape`, PhysX's `PxTriangleMesh`);
 other colliders give `KILN_STATUS_NOT_FOUND`. `vertices`: `x, y, z`
 each, room for `vertex_cap`; `indices`: 3 per triangle, room for
 `triangle_cap` triangles, in the order the tree stores them. `sizes`
 is set first; arrays too small give `KILN_STATUS_BUFFER_TOO_SMALL`
 (call with null arrays and capacities of 0 to learn the sizes).
 */
KilnStatus kiln_level_object_triangles(const KilnLevel *level,
                                       uint32_t index,
                                       KilnMeshSizes *sizes,
                                       float *vertices,
                                       size_t vertex_cap,
                                       uint32_t *indices,
                                       size_t triangle_cap);

/*
 The mass properties of object `index`'s solid at `density` (> 0,
 e.g. 1000 kg/m³ for water) where the level baked it, exact for its
 archived box, sphere, capsule, polytope or concave solid under any
 placement, into `out`. A triangle mesh bounds no solid
 (`KILN_STATUS_NOT_FOUND`). This is the density's answer for the one
 object; an object in a rigid body the glTF file authors is simulated
 with its body (`kiln_level_object_body`, `kiln_level_body_mass`).
 */
KilnStatus kiln_level_object_mass(const KilnLevel *level,
                                  uint32_t index,
                                  float density,
                                  KilnMass *out);

/*
 How many rigid bodies the level's glTF file authors (0 for null).
 Movers authored otherwise (node extras, project rules) are bodies of
 one object each and not counted.
 */
uint32_t kiln_level_body_count(const KilnLevel *level);

/*
 What rigid body `k` is, into `out`.
 */
KilnStatus kiln_level_body_info(const KilnLevel *level, uint32_t k, KilnBodyInfo *out);

/*
 The name of rigid body `k` (its glTF node's), NUL-terminated, into
 `buf` (`cap` bytes); `*len` is its length without the NUL. Too long
 for `buf`: as much as fits is written, NUL-terminated, with
 `KILN_STATUS_BUFFER_TOO_SMALL`.
 */
KilnStatus kiln_level_body_name(const KilnLevel *level,
                                uint32_t k,
                                char *buf,
                                size_t cap,
                                size_t *len);

/*
 The objects of rigid body `k` (level object indices, ascending) into
 `members` (room for `cap`; `KilnBodyInfo::member_count` of them):
 `KILN_STATUS_BUFFER_TOO_SMALL`, with nothing written, when `cap` is
 short.
 */
KilnStatus kiln_level_body_members(const KilnLevel *level,
                                   uint32_t k,
                                   uint32_t *members,
                                   uint32_t cap);

/*
 The rigid body object `index` belongs to, into `*body`:
 `KILN_STATUS_NOT_FOUND` (and `*body` `UINT32_MAX`) for an object in
 none (static, or a mover of its own).
 */
KilnStatus kiln_level_object_body(const KilnLevel *level, uint32_t index, uint32_t *body);

/*
 The mass properties of rigid body `k` in the level's world frame as
 baked, into `out`: each value the glTF file gives, and the rest from
 its objects' solids at `density` (> 0; summed by the parallel-axis
 rule; an authored mass alone scales the computed inertia, an authored
 centre moves it). `KILN_STATUS_NOT_FOUND` when what the file leaves
 out cannot be computed (no object bounds a solid).
 */
KilnStatus kiln_level_body_mass(const KilnLevel *level, uint32_t k, float density, KilnMass *out);

/*
 A world of `level` (which the world keeps; the handle may be freed).
 */
KilnStatus kiln_world_new(const KilnLevel *level, KilnWorld **out);

/*
 Frees a world (null is ignored).
 */
void kiln_world_free(KilnWorld *world);

/*
 Replaces the world's level (a re-baked archive): inserted bodies stay,
 movers keep their poses by name.
 */
KilnStatus kiln_world_set_level(KilnWorld *world, const KilnLevel *level);

/*
 How many bodies the world holds, the level's movers and triggers
 included (0 for null).
 */
size_t kiln_world_body_count(const KilnWorld *world);

/*
 The id of the level's first object called `name`, else the first body
 so named.
 */
KilnStatus kiln_world_find_object(const KilnWorld *world, const char *name, KilnObjectId *out);

/*
 The name of object or body `id`, NUL-terminated, into `buf` (`cap`
 bytes); `*len` is its length without the NUL. Too long for `buf`: as
 much as fits is written, NUL-terminated, with `KILN_STATUS_BUFFER_TOO_SMALL`.
 */
KilnStatus kiln_world_object_name(const KilnWorld *world,
                                  KilnObjectId id,
                                  char *buf,
                                  size_t cap,
                                  size_t *len);

/*
 The layer mask of object or body `id` (0 if the world has none such).
 */
uint32_t kiln_world_object_layers(const KilnWorld *world, KilnObjectId id);

/*
 Inserts a body made of `shape` (a hull is copied) at `pose`, in
 `layers`, called `name` (may be null), a trigger volume if `trigger`.
 */
KilnStatus kiln_world_insert_shape(KilnWorld *world,
                                   const KilnShape *shape,
                                   KilnPose pose,
                                   uint32_t layers,
                                   const char *name,
                                   bool trigger,
                                   KilnObjectId *out);

/*
 Inserts a copy of object `object` of `from` (any level: a prefab
 archive) at `pose`.
 */
KilnStatus kiln_world_insert_copy(KilnWorld *world,
                                  const KilnLevel *from,
                                  KilnObjectId object,
                                  KilnPose pose,
                                  uint32_t layers,
                                  const char *name,
                                  bool trigger,
                                  KilnObjectId *out);

/*
 Moves body or mover `id` to `pose` (a teleport).
 */
KilnStatus kiln_world_set_pose(KilnWorld *world, KilnObjectId id, KilnPose pose);

/*
 Where body or mover `id` is.
 */
KilnStatus kiln_world_get_pose(const KilnWorld *world, KilnObjectId id, KilnPose *out);

/*
 Takes body `id` out of the world.
 */
KilnStatus kiln_world_remove(KilnWorld *world, KilnObjectId id);

/*
 The sync point, once a frame after the moves: records each body's
 motion (for riding) and finds trigger enters and leaves.
 */
KilnStatus kiln_world_step(KilnWorld *world);

/*
 The trigger events of the last step.
 */
KilnStatus kiln_world_trigger_events(const KilnWorld *world,
                                     KilnTriggerEvent *out,
                                     size_t cap,
                                     size_t *count);

/*
 A world of tiles alone (no level of its own), its f32 frame's zero at
 `origin`: tiles come with `kiln_world_mount` or a `KilnStreamer`. Every
 query and the character then see all mounted tiles together, as one
 level baked whole would answer.
 */
KilnStatus kiln_world_new_tiled(KilnDVec3 origin, KilnWorld **out);

/*
 Mounts `level` (a tile, baked in its own frame) with its frame's zero at
 world point `at`; `tile` gets its number (never 0; object ids of its
 objects carry it: `kiln_object_tile`). The world keeps the level.
 */
KilnStatus kiln_world_mount(KilnWorld *world, const KilnLevel *level, KilnDVec3 at, uint32_t *tile);

/*
 Unmounts tile `tile`: its objects, movers and triggers leave the world.
 */
KilnStatus kiln_world_unmount(KilnWorld *world, uint32_t tile);

/*
 How many tiles the world has mounted (0 for null).
 */
size_t kiln_world_tile_count(const KilnWorld *world);

/*
 The tile whose object `id` is (0: none, a body or an object of the
 world's own level).
 */
uint32_t kiln_object_tile(KilnObjectId id);

/*
 The world point (f64) the world's f32 frame's zero sits at.
 */
KilnStatus kiln_world_origin(const KilnWorld *world, KilnDVec3 *out);

/*
 Moves a tiled world's f32 frame so its zero sits at `origin` (a
 floating origin: keep it near the camera or player). Bodies, movers and
 triggers keep their places in the world, so their f32 poses change by
 `shift` (optional), as must every position the caller keeps in the
 world's frame. A world made of one level keeps its origin
 (`KILN_STATUS_INVALID_ARGUMENT`).
 */
KilnStatus kiln_world_set_origin(KilnWorld *world, KilnDVec3 origin, KilnVec3 *shift);

/*
 Opens the world manifest at `path` (validated) and starts a streamer of
 its tiles: it keeps those within `radius` m of a focus point mounted and
 loads `ahead` m further (a negative `ahead`: half the radius).
 */
KilnStatus kiln_streamer_open(const char *path, double radius, double ahead, KilnStreamer **out);

/*
 Stops the streamer's loader thread and frees it (null is ignored); the
 tiles it mounted stay in their world.
 */
void kiln_streamer_free(KilnStreamer *streamer);

/*
 One frame's streaming around the `count` focus points (f64 world
 points): mounts the loaded tiles within the radius, drops those past
 the band, asks for the rest in the background. With `wait`, waits until
 every tile within the radius is mounted (a first frame, a teleport).
 A tile that fails is counted in `report`, not an error of the call.
 */
KilnStatus kiln_streamer_update(KilnStreamer *streamer,
                                KilnWorld *world,
                                const KilnDVec3 *focus,
                                size_t count,
                                bool wait,
                                KilnStreamReport *report);

/*
 The tiles the streamer has mounted, by manifest index, into `out`
 (room for `cap`); `len` gets how many there are
 (`KILN_STATUS_BUFFER_TOO_SMALL` when more than `cap`).
 */
KilnStatus kiln_streamer_mounted(const KilnStreamer *streamer,
                                 KilnStreamTile *out,
                                 size_t cap,
                                 size_t *len);

/*
 The message of the last tile the streamer failed to load or mount (an
 empty string if none), into `buf` (room for `cap` bytes with the NUL);
 `len` gets its length.
 */
KilnStatus kiln_streamer_failure(const KilnStreamer *streamer, char *buf, size_t cap, size_t *len);

/*
 The closest hit of `ray` among the objects `filter` sees (null: all
 but triggers): the level, its movers and triggers, and the bodies.
 */
KilnStatus kiln_world_raycast(const KilnWorld *world,
                              KilnRay ray,
                              const KilnFilter *filter,
                              KilnRayHit *out);

/*
 The closest hit of `ray` among the level's static objects `filter`
 sees (no movers, triggers or bodies: those are a world's).
 */
KilnStatus kiln_level_raycast(const KilnLevel *level,
                              KilnRay ray,
                              const KilnFilter *filter,
                              KilnRayHit *out);

/*
 Whether `ray` hits anything `filter` sees in the world.
 */
KilnStatus kiln_world_raycast_any(const KilnWorld *world,
                                  KilnRay ray,
                                  const KilnFilter *filter,
                                  bool *out);

/*
 Whether `ray` hits any of the level's static objects `filter` sees.
 */
KilnStatus kiln_level_raycast_any(const KilnLevel *level,
                                  KilnRay ray,
                                  const KilnFilter *filter,
                                  bool *out);

/*
 `count` rays at once, on Kiln's thread pool: `out[i]` answers `rays[i]`.
 A malformed ray answers no hit and the others are answered all the
 same; the call then returns `KILN_STATUS_INVALID_ARGUMENT` naming the
 first malformed one.
 */
KilnStatus kiln_world_raycast_batch(const KilnWorld *world,
                                    const KilnRay *rays,
                                    size_t count,
                                    const KilnFilter *filter,
                                    KilnRayHit *out);

/*
 `kiln_world_raycast_batch` on the level's static objects alone.
 */
KilnStatus kiln_level_raycast_batch(const KilnLevel *level,
                                    const KilnRay *rays,
                                    size_t count,
                                    const KilnFilter *filter,
                                    KilnRayHit *out);

/*
 Every object of the world `shape` at `pose` touches, with the deepest
 contact of each.
 */
KilnStatus kiln_world_overlap(const KilnWorld *world,
                              const KilnShape *shape,
                              KilnPose pose,
                              const KilnFilter *filter,
                              KilnOverlap *out,
                              size_t cap,
                              size_t *count);

/*
 Every static object of the level `shape` at `pose` touches.
 */
KilnStatus kiln_level_overlap(const KilnLevel *level,
                              const KilnShape *shape,
                              KilnPose pose,
                              const KilnFilter *filter,
                              KilnOverlap *out,
                              size_t cap,
                              size_t *count);

/*
 Whether `shape` at `pose` touches anything `filter` sees in the world.
 */
KilnStatus kiln_world_overlap_any(const KilnWorld *world,
                                  const KilnShape *shape,
                                  KilnPose pose,
                                  const KilnFilter *filter,
                                  bool *out);

/*
 Whether `shape` at `pose` touches any static object of the level.
 */
KilnStatus kiln_level_overlap_any(const KilnLevel *level,
                                  const KilnShape *shape,
                                  KilnPose pose,
                                  const KilnFilter *filter,
                                  bool *out);

/*
 Sweeps `shape` from `pose` along `motion` for `t` in `[0, max_t]`
 through the world; with `ignore_leaving`, contacts present at the
 start that the motion leaves are skipped (so a shape resting on a
 floor can slide).
 */
KilnStatus kiln_world_cast(const KilnWorld *world,
                           const KilnShape *shape,
                           KilnPose pose,
                           KilnVec3 motion,
                           float max_t,
                           bool ignore_leaving,
                           const KilnFilter *filter,
                           KilnShapeHit *out);

/*
 `kiln_world_cast` against the level's static objects alone.
 */
KilnStatus kiln_level_cast(const KilnLevel *level,
                           const KilnShape *shape,
                           KilnPose pose,
                           KilnVec3 motion,
                           float max_t,
                           bool ignore_leaving,
                           const KilnFilter *filter,
                           KilnShapeHit *out);

/*
 The solids of the world (boxes, spheres, capsules, polytopes, concave
 solids) that contain `point`.
 */
KilnStatus kiln_world_contains_point(const KilnWorld *world,
                                     KilnVec3 point,
                                     const KilnFilter *filter,
                                     KilnObjectId *out,
                                     size_t cap,
                                     size_t *count);

/*
 The level's static solids that contain `point`.
 */
KilnStatus kiln_level_contains_point(const KilnLevel *level,
                                     KilnVec3 point,
                                     const KilnFilter *filter,
                                     KilnObjectId *out,
                                     size_t cap,
                                     size_t *count);

/*
 Whether any solid of the world `filter` sees contains `point`.
 */
KilnStatus kiln_world_contains_point_any(const KilnWorld *world,
                                         KilnVec3 point,
                                         const KilnFilter *filter,
                                         bool *out);

/*
 Whether any static solid of the level `filter` sees contains `point`.
 */
KilnStatus kiln_level_contains_point_any(const KilnLevel *level,
                                         KilnVec3 point,
                                         const KilnFilter *filter,
                                         bool *out);

/*
 An upright capsule character with default settings (0.3 m radius and
 0.6 m half height make one 1.8 m tall).
 */
KilnCharacter kiln_character_capsule(float radius, float half_height);

/*
 The default character settings (up +Y, 1 cm skin, 50° slopes, 0.3 m
 steps).
 */
KilnCharacterSettings kiln_character_settings_default(void);

/*
 Moves `character` from `position` by `motion` (one frame's worth,
 gravity included), sliding along what it meets, stepping up steps and
 following the ground down; `out` says where it ended and what it
 stands on, and the contacts go to `hits` (`hits_cap` of them; may be
 null when 0; more than fit is not an error here).
 */
KilnStatus kiln_character_move(const KilnWorld *world,
                               const KilnCharacter *character,
                               KilnVec3 position,
                               KilnVec3 motion,
                               const KilnFilter *filter,
                               KilnMove *out,
                               KilnCharacterHit *hits,
                               size_t hits_cap);

/*
 Carries a character at `position` standing on `ground` (the last
 move's) by its ground's motion in the last frame (a lift, a
 turntable); `out_position` is where that takes it and `out_turn` the
 turn about up it should add to its heading. Call after
 `kiln_world_step` and before the frame's move.
 */
KilnStatus kiln_character_ride(const KilnWorld *world,
                               const KilnCharacter *character,
                               KilnVec3 position,
                               const KilnGround *ground,
                               KilnVec3 *out_position,
                               KilnQuat *out_turn);

#ifdef __cplusplus
}  /* extern "C" */
#endif  /* __cplusplus */

#endif  /* KILN_H */
