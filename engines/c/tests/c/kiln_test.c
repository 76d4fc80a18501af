/* The C API as a C engine meets it: every query kind on a baked level,
 * bodies inserted, moved and removed, triggers, a character that walks and
 * rides a lift, and hostile input (null pointers, wrong sizes, malformed
 * queries, a truncated archive). Run by engines/c/tests/c_program.rs,
 * plain against libkiln.so and under AddressSanitizer against libkiln.a.
 *
 * usage: kiln_test <moving_course.kiln> */

#include "kiln.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n",         \
              __FILE__, __LINE__, #cond, kiln_last_error());               \
      failures++;                                                          \
    }                                                                      \
  } while (0)

#define EXPECT(status, call) CHECK((call) == (status))
#define OK(call) EXPECT(KILN_STATUS_OK, call)

static KilnVec3 v3(float x, float y, float z) {
  KilnVec3 v = {x, y, z};
  return v;
}

static KilnPose at(float x, float y, float z) {
  KilnPose p = {{0, 0, 0, 1}, {x, y, z}};
  return p;
}

static KilnRay ray(KilnVec3 origin, KilnVec3 dir, float max_t) {
  KilnRay r = {origin, dir, max_t};
  return r;
}

static int near(float a, float b, float tol) { return fabsf(a - b) <= tol; }

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *bytes = malloc((size_t)n);
  if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return bytes;
}

/* The engine's allocator: blocks from malloc, aligned by hand, counted.
   Kiln's thread pool calls it from several threads at once. */
static _Atomic size_t hook_allocs = 0, hook_frees = 0, hook_wrong_user = 0;
static int hook_user = 42;

static void *hook_alloc(size_t size, size_t align, void *user) {
  if (user != &hook_user) atomic_fetch_add(&hook_wrong_user, 1);
  if (align < sizeof(void *)) align = sizeof(void *);
  unsigned char *raw = malloc(size + align + sizeof(void *));
  if (!raw) return NULL;
  uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + align - 1) & ~(uintptr_t)(align - 1);
  ((void **)p)[-1] = raw;
  atomic_fetch_add(&hook_allocs, 1);
  return (void *)p;
}

static void hook_free(void *ptr, size_t size, size_t align, void *user) {
  (void)size;
  (void)align;
  if (user != &hook_user) atomic_fetch_add(&hook_wrong_user, 1);
  free(((void **)ptr)[-1]);
  atomic_fetch_add(&hook_frees, 1);
}

/* The engine's log: the last failure it was told of. */
struct told {
  int calls;
  KilnStatus status;
  char message[256];
};

static void log_failure(KilnStatus status, const char *message, void *user) {
  struct told *t = (struct told *)user;
  t->calls++;
  t->status = status;
  snprintf(t->message, sizeof t->message, "%s", message);
}

static void logging(KilnWorld *world) {
  struct told told = {0, KILN_STATUS_OK, ""};
  kiln_set_log(log_failure, &told);
  KilnObjectId id;
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_find_object(world, "no such thing", &id));
  CHECK(told.calls == 1 && told.status == KILN_STATUS_NOT_FOUND);
  CHECK(strcmp(told.message, kiln_last_error()) == 0 && strstr(told.message, "no such thing"));
  OK(kiln_world_find_object(world, "wall", &id));
  CHECK(told.calls == 1); /* a call that succeeds is not logged */
  kiln_set_log(NULL, NULL);
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_find_object(world, "no such thing", &id));
  CHECK(told.calls == 1);
  printf("log callback told: %s\n", told.message);
}

/* The level's objects listed, and the level's static geometry queried
   without a world: the movers are the world's. */
static void level_alone(KilnLevel *level, KilnWorld *world) {
  uint32_t n = kiln_level_object_count(level), kinematic = 0, trimesh = 0, polytope = 0;
  for (uint32_t i = 0; i < n; i++) {
    KilnObjectInfo info;
    OK(kiln_level_object_info(level, i, &info));
    char name[64];
    size_t len;
    OK(kiln_world_object_name(world, i, name, sizeof name, &len));
    int is_mover = !strcmp(name, "lift") || !strcmp(name, "turntable") || !strcmp(name, "door");
    CHECK((info.motion == KILN_MOTION_KINEMATIC) == is_mover);
    CHECK(info.motion == KILN_MOTION_KINEMATIC || info.motion == KILN_MOTION_STATIC);
    CHECK(!info.trigger && info.layers == 1);
    CHECK(info.collider == (strncmp(name, "floor", 5) ? KILN_COLLIDER_POLYTOPE : KILN_COLLIDER_TRIMESH));
    kinematic += info.motion == KILN_MOTION_KINEMATIC;
    trimesh += info.collider == KILN_COLLIDER_TRIMESH;
    polytope += info.collider == KILN_COLLIDER_POLYTOPE;
  }
  CHECK(kinematic == 3 && trimesh == 4 && polytope == n - 4);
  KilnObjectInfo info;
  memset(&info, 0xab, sizeof info);
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_info(level, n, &info));
  CHECK(info.collider == 0 && info.motion == 0 && !info.trigger && info.layers == 0);
  printf("%u objects listed: %u kinematic, %u triangle meshes, %u polytopes\n", n, kinematic, trimesh, polytope);

  /* the floor: the level and the world agree */
  KilnRay down = ray(v3(12, 10, 5), v3(0, -1, 0), 100);
  KilnRayHit on_level, on_world;
  OK(kiln_level_raycast(level, down, NULL, &on_level));
  OK(kiln_world_raycast(world, down, NULL, &on_world));
  CHECK(on_level.hit && on_level.object == on_world.object && near(on_level.t, on_world.t, 0));
  bool any = false;
  OK(kiln_level_raycast_any(level, down, NULL, &any));
  CHECK(any);
  KilnRayHit batch[1];
  OK(kiln_level_raycast_batch(level, &down, 1, NULL, batch));
  CHECK(batch[0].hit && batch[0].object == on_level.object && near(batch[0].t, on_level.t, 0));
  KilnShape ball = kiln_shape_sphere(0.5f);
  bool touches = false;
  OK(kiln_level_overlap_any(level, &ball, at(12, 0.45f, 5), NULL, &touches));
  CHECK(touches);
  KilnOverlap overlaps[4];
  size_t count = 0;
  OK(kiln_level_overlap(level, &ball, at(12, 0.45f, 5), NULL, overlaps, 4, &count));
  CHECK(count == 1 && overlaps[0].object == on_level.object && near(overlaps[0].depth, 0.05f, 1e-4f));
  KilnShapeHit swept;
  OK(kiln_level_cast(level, &ball, at(12, 5, 5), v3(0, -1, 0), 10, false, NULL, &swept));
  CHECK(swept.hit && near(swept.t, 4.5f, 1e-4f) && swept.object == on_level.object);
  KilnObjectId wall = 0;
  OK(kiln_world_find_object(world, "wall", &wall));
  KilnObjectId inside[4];
  OK(kiln_level_contains_point(level, v3(16.1f, 1, 12), NULL, inside, 4, &count));
  CHECK(count == 1 && inside[0] == wall);
  bool solid = false;
  OK(kiln_level_contains_point_any(level, v3(16.1f, 1, 12), NULL, &solid));
  CHECK(solid);

  /* the lift: a world's ray hits it, the level's does not */
  KilnObjectId lift = 0;
  OK(kiln_world_find_object(world, "lift", &lift));
  KilnPose pose;
  OK(kiln_world_get_pose(world, lift, &pose));
  KilnRay onto_lift = ray(v3(pose.translation.x, 20, pose.translation.z), v3(0, -1, 0), 100);
  OK(kiln_world_raycast(world, onto_lift, NULL, &on_world));
  OK(kiln_level_raycast(level, onto_lift, NULL, &on_level));
  CHECK(on_world.hit && on_world.object == lift);
  CHECK(!on_level.hit || on_level.object != lift);
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_level_raycast(NULL, down, NULL, &on_level));
  CHECK(strstr(kiln_last_error(), "kiln_level_raycast: level is null"));
}

/* A failed call leaves every answer defined: what it would be for
   nothing found, never the memory's old contents. */
static void defined_on_failure(KilnWorld *world) {
  KilnRayHit hit;
  memset(&hit, 0xab, sizeof hit);
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast(world, ray(v3(0, 0, 0), v3(0, 0, 0), 1), NULL, &hit));
  CHECK(!hit.hit && hit.t == 0 && hit.object == 0 && hit.feature == KILN_NO_FEATURE);
  memset(&hit, 0xab, sizeof hit);
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_raycast(NULL, ray(v3(0, 0, 0), v3(0, -1, 0), 1), NULL, &hit));
  CHECK(!hit.hit && hit.t == 0);
  bool yes = true;
  KilnShape negative = kiln_shape_sphere(-1);
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap_any(world, &negative, at(0, 0, 0), NULL, &yes));
  CHECK(!yes);
  size_t count = 12345;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap(world, &negative, at(0, 0, 0), NULL, NULL, 0, &count));
  CHECK(count == 0);
  count = 12345;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_contains_point(world, v3(NAN, 0, 0), NULL, NULL, 0, &count));
  CHECK(count == 0);
  KilnShapeHit swept;
  memset(&swept, 0xab, sizeof swept);
  KilnShape ball = kiln_shape_sphere(0.5f);
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_cast(world, &ball, at(0, 0, 0), v3(0, 0, 0), 1, false, NULL, &swept));
  CHECK(!swept.hit && swept.t == 0 && swept.feature == KILN_NO_FEATURE);
  KilnObjectId id = 7;
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_find_object(world, "no such thing", &id));
  CHECK(id == KILN_NO_OBJECT);
  id = 7;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_insert_shape(world, &negative, at(0, 0, 0), 1, NULL, false, &id));
  CHECK(id == KILN_NO_OBJECT);
  KilnPose pose;
  memset(&pose, 0xab, sizeof pose);
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_get_pose(world, 0xdeadbeefULL << 32, &pose));
  CHECK(pose.rotation.w == 1 && pose.rotation.x == 0 && pose.translation.x == 0);
  char name[8] = "abcdefg";
  size_t len = 99;
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_object_name(world, 0xdeadbeefULL << 32, name, sizeof name, &len));
  CHECK(len == 0 && name[0] == 0);
  KilnCharacter sideways = kiln_character_capsule(0.3f, 0.6f);
  sideways.settings.up = v3(0, 2, 0);
  KilnMove m;
  memset(&m, 0xab, sizeof m);
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_character_move(world, &sideways, v3(2, 1, 2), v3(0, 0, 0), NULL, &m, NULL, 0));
  CHECK(m.position.x == 2 && m.position.y == 1 && m.ground.state == KILN_GROUND_IN_AIR && m.hit_count == 0);
  KilnVec3 p = v3(9, 9, 9);
  KilnQuat turn = {9, 9, 9, 9};
  KilnGround lost = {7, {0, 0, 0}, {0, 1, 0}, 0};
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_character_ride(world, &sideways, v3(1, 2, 3), &lost, &p, &turn));
  CHECK(p.x == 1 && p.y == 2 && p.z == 3 && turn.w == 1 && turn.x == 0);
  KilnLevel *level = (KilnLevel *)&hit;
  EXPECT(KILN_STATUS_IO, kiln_level_open("no/such/level.kiln", &level));
  CHECK(level == NULL);
  uint32_t layer = 5;
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_level_layer(NULL, "default", &layer));
  CHECK(layer == 0);
}

static void queries(KilnWorld *world) {
  /* a ray straight down onto the floor */
  KilnRayHit hit;
  OK(kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && near(hit.t, 10, 1e-4f) && near(hit.point.y, 0, 1e-4f));
  CHECK(near(hit.normal.y, 1, 1e-5f) && hit.front_face);
  char name[64];
  size_t len = 0;
  OK(kiln_world_object_name(world, hit.object, name, sizeof name, &len));
  CHECK(strncmp(name, "floor", 5) == 0 && strlen(name) == len);
  printf("ray down from (12, 10, 5): hit %s at y = %.4f, t = %.4f\n", name, hit.point.y, hit.t);

  /* the same ray skipping the floor, and seeing no layer: nothing */
  KilnFilter skip_floor = kiln_filter_all();
  skip_floor.skip = &hit.object;
  skip_floor.skip_count = 1;
  KilnRayHit below;
  OK(kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), &skip_floor, &below));
  CHECK(!below.hit || below.object != hit.object);
  KilnFilter no_layer = kiln_filter_all();
  no_layer.layers = 0;
  OK(kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), &no_layer, &below));
  CHECK(!below.hit);
  bool any = false;
  OK(kiln_world_raycast_any(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), NULL, &any));
  CHECK(any);
  OK(kiln_world_raycast_any(world, ray(v3(12, 10, 5), v3(0, 1, 0), 100), NULL, &any));
  CHECK(!any);

  /* a batch: down, up, and sideways into the wall at x = 16 */
  KilnRay rays[3] = {ray(v3(12, 10, 5), v3(0, -1, 0), 100), ray(v3(12, 10, 5), v3(0, 1, 0), 100),
                     ray(v3(15, 1, 12), v3(1, 0, 0), 100)};
  KilnRayHit hits[3];
  OK(kiln_world_raycast_batch(world, rays, 3, NULL, hits));
  CHECK(hits[0].hit && hits[0].object == hit.object && near(hits[0].t, hit.t, 0));
  CHECK(!hits[1].hit && hits[1].feature == KILN_NO_FEATURE);
  CHECK(hits[2].hit && near(hits[2].point.x, 16, 1e-4f) && near(hits[2].normal.x, -1, 1e-5f));
  KilnObjectId wall = 0;
  OK(kiln_world_find_object(world, "wall", &wall));
  CHECK(hits[2].object == wall);
  /* one malformed ray: named in the error, the others answered all the same */
  rays[1].dir = v3(0, 0, 0);
  KilnRayHit mixed[3];
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast_batch(world, rays, 3, NULL, mixed));
  CHECK(strstr(kiln_last_error(), "rays[1]") && strstr(kiln_last_error(), "direction"));
  CHECK(!strstr(kiln_last_error(), "Vec3"));
  CHECK(mixed[0].hit && mixed[0].object == hits[0].object && near(mixed[0].t, hits[0].t, 0));
  CHECK(!mixed[1].hit);
  CHECK(mixed[2].hit && mixed[2].object == wall);
  printf("a batch with a malformed ray: %s\n", kiln_last_error());

  /* a ball resting on the floor touches it; lifted by 1 m it touches nothing */
  KilnShape ball = kiln_shape_sphere(0.5f);
  bool touches = false;
  OK(kiln_world_overlap_any(world, &ball, at(12, 0.45f, 5), NULL, &touches));
  CHECK(touches);
  OK(kiln_world_overlap_any(world, &ball, at(12, 1.5f, 5), NULL, &touches));
  CHECK(!touches);
  KilnOverlap overlaps[8];
  size_t count = 0;
  OK(kiln_world_overlap(world, &ball, at(12, 0.45f, 5), NULL, overlaps, 8, &count));
  CHECK(count >= 1 && near(overlaps[0].depth, 0.05f, 1e-4f) && near(overlaps[0].normal.y, 1, 1e-4f));
  printf("ball at y = 0.45: %zu overlap(s), depth %.4f\n", count, count ? overlaps[0].depth : 0.0f);

  /* a box dropped from y = 2 lands on the floor after 1.5 m */
  KilnShape crate = kiln_shape_cuboid(v3(0.5f, 0.5f, 0.5f));
  KilnShapeHit landed;
  OK(kiln_world_cast(world, &crate, at(12, 2, 4), v3(0, -1, 0), 10, false, NULL, &landed));
  CHECK(landed.hit && near(landed.t, 1.5f, 1e-4f) && near(landed.normal.y, 1, 1e-4f));
  printf("box dropped from y = 2: lands after %.4f m\n", landed.t);

  /* a hull (a tetrahedron) swept along the floor sideways into the wall */
  KilnVec3 corners[4] = {v3(0, 0, 0), v3(0.5f, 0, 0), v3(0, 0.5f, 0), v3(0, 0, 0.5f)};
  KilnHull *wedge = NULL;
  OK(kiln_hull_new(corners, 4, &wedge));
  KilnShape wedge_shape = kiln_shape_hull(wedge);
  OK(kiln_world_cast(world, &wedge_shape, at(14, 1, 12), v3(1, 0, 0), 10, true, NULL, &landed));
  CHECK(landed.hit && landed.object == wall && near(landed.t, 1.5f, 1e-4f));
  kiln_hull_free(wedge);

  /* the point inside the top stair's box */
  KilnObjectId inside[4];
  OK(kiln_world_contains_point(world, v3(7.5f, 0.5f, 2), NULL, inside, 4, &count));
  KilnObjectId stair_top = 0;
  OK(kiln_world_find_object(world, "stair_top", &stair_top));
  CHECK(count == 1 && inside[0] == stair_top);
  bool solid = false;
  OK(kiln_world_contains_point_any(world, v3(7.5f, 0.5f, 2), NULL, &solid));
  CHECK(solid);
  OK(kiln_world_contains_point_any(world, v3(7.5f, 3, 2), NULL, &solid));
  CHECK(!solid);
}

static void bodies(KilnWorld *world, KilnLevel *level) {
  size_t before = kiln_world_body_count(world);
  KilnShape crate = kiln_shape_cuboid(v3(0.5f, 0.5f, 0.5f));
  KilnObjectId id = 0;
  OK(kiln_world_insert_shape(world, &crate, at(2, 3, 16), 1, "crate", false, &id));
  CHECK(kiln_world_body_count(world) == before + 1);
  KilnRayHit hit;
  OK(kiln_world_raycast(world, ray(v3(2, 10, 16), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object == id && near(hit.point.y, 3.5f, 1e-4f));

  /* moved: the query follows */
  OK(kiln_world_set_pose(world, id, at(2, 5, 16)));
  OK(kiln_world_raycast(world, ray(v3(2, 10, 16), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object == id && near(hit.point.y, 5.5f, 1e-4f));
  KilnPose pose;
  OK(kiln_world_get_pose(world, id, &pose));
  CHECK(near(pose.translation.y, 5, 0));
  printf("crate moved to y = 5: ray hits its top at y = %.4f\n", hit.point.y);

  /* a copy of the level's top stair beside it (a prefab) */
  KilnObjectId stair_top = 0, copy = 0;
  OK(kiln_world_find_object(world, "stair_top", &stair_top));
  OK(kiln_world_insert_copy(world, level, stair_top, at(0, 0, 16), 1, NULL, false, &copy));
  OK(kiln_world_raycast(world, ray(v3(7.5f, 10, 18), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object == copy && near(hit.point.y, 1, 1e-4f));
  OK(kiln_world_remove(world, copy));

  /* removed: gone from queries, and its id names nothing any more */
  OK(kiln_world_remove(world, id));
  OK(kiln_world_raycast(world, ray(v3(2, 10, 16), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object != id && near(hit.point.y, 0, 1e-4f));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_remove(world, id));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_set_pose(world, id, at(0, 0, 0)));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_get_pose(world, id, &pose));
  KilnObjectId wall = 0;
  OK(kiln_world_find_object(world, "wall", &wall));
  EXPECT(KILN_STATUS_STATIC_OBJECT, kiln_world_set_pose(world, wall, at(0, 0, 0)));
  EXPECT(KILN_STATUS_STATIC_OBJECT, kiln_world_remove(world, wall));
  CHECK(kiln_world_body_count(world) == before);

  /* a trigger: seen only by filters that ask, and it reports a ball entering and leaving */
  KilnShape zone = kiln_shape_cuboid(v3(1, 1, 1));
  KilnObjectId trigger = 0, ball = 0;
  OK(kiln_world_insert_shape(world, &zone, at(3, 1, 15), 1, "zone", true, &trigger));
  KilnShape ball_shape = kiln_shape_sphere(0.3f);
  OK(kiln_world_insert_shape(world, &ball_shape, at(3, 5, 15), 1, "ball", false, &ball));
  OK(kiln_world_raycast(world, ray(v3(3.5f, 10, 14.5f), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object != trigger);
  KilnFilter with_triggers = kiln_filter_all();
  with_triggers.triggers = 1;
  OK(kiln_world_raycast(world, ray(v3(3.5f, 10, 14.5f), v3(0, -1, 0), 100), &with_triggers, &hit));
  CHECK(hit.hit && hit.object == trigger && near(hit.point.y, 2, 1e-4f));
  KilnTriggerEvent events[4];
  size_t count = 99;
  OK(kiln_world_step(world));
  OK(kiln_world_trigger_events(world, events, 4, &count));
  CHECK(count == 0);
  OK(kiln_world_set_pose(world, ball, at(3, 1, 15)));
  OK(kiln_world_step(world));
  OK(kiln_world_trigger_events(world, events, 4, &count));
  CHECK(count == 1 && events[0].trigger == trigger && events[0].body == ball && events[0].entered);
  OK(kiln_world_set_pose(world, ball, at(3, 5, 15)));
  OK(kiln_world_step(world));
  OK(kiln_world_trigger_events(world, events, 4, &count));
  CHECK(count == 1 && events[0].body == ball && !events[0].entered);
  printf("ball entered and left the trigger: %s\n", failures ? "no" : "yes");
  OK(kiln_world_remove(world, ball));
  OK(kiln_world_remove(world, trigger));
}

static void character(KilnWorld *world) {
  /* up the stairs at z = 2: five 0.2 m steps onto a 1 m platform */
  KilnCharacter player = kiln_character_capsule(0.3f, 0.6f);
  KilnVec3 p = v3(2, 0.9f, 2);
  KilnMove m;
  KilnCharacterHit hits[8];
  for (int i = 0; i < 110; i++) {
    OK(kiln_character_move(world, &player, p, v3(0.05f, -0.1f, 0), NULL, &m, hits, 8));
    p = m.position;
  }
  CHECK(near(p.y, 1.9f, 0.01f) && m.ground.state == KILN_GROUND_ON_GROUND);
  printf("walked up the stairs to (%.2f, %.3f, %.2f)\n", p.x, p.y, p.z);

  /* onto the lift at (12, 17) and up 1 m with it */
  KilnObjectId lift = 0;
  OK(kiln_world_find_object(world, "lift", &lift));
  KilnPose lift_pose;
  OK(kiln_world_get_pose(world, lift, &lift_pose));
  float start = lift_pose.translation.y;
  p = v3(12, 1.5f, 17);
  for (int i = 0; i < 30; i++) {
    OK(kiln_character_move(world, &player, p, v3(0, -0.1f, 0), NULL, &m, NULL, 0));
    p = m.position;
  }
  CHECK(m.ground.state == KILN_GROUND_ON_GROUND && m.ground.object == lift);
  float stood = p.y;
  for (int i = 0; i < 50; i++) {
    lift_pose.translation.y += 0.02f;
    OK(kiln_world_set_pose(world, lift, lift_pose));
    OK(kiln_world_step(world));
    KilnQuat turn;
    OK(kiln_character_ride(world, &player, p, &m.ground, &p, &turn));
    OK(kiln_character_move(world, &player, p, v3(0, -0.1f, 0), NULL, &m, NULL, 0));
    p = m.position;
  }
  CHECK(near(p.y - stood, lift_pose.translation.y - start, 2e-3f));
  CHECK(m.ground.state == KILN_GROUND_ON_GROUND && m.ground.object == lift);
  printf("rode the lift from y = %.3f to y = %.3f\n", stood, p.y);
}

static void hostile(KilnWorld *world, const char *archive) {
  KilnRayHit hit;
  KilnShape ball = kiln_shape_sphere(0.5f);
  KilnVec3 zero = v3(0, 0, 0);
  bool yes;
  size_t count;
  KilnObjectId id;

  /* null pointers where they may not be */
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_raycast(NULL, ray(zero, v3(0, -1, 0), 1), NULL, &hit));
  CHECK(strstr(kiln_last_error(), "kiln_world_raycast") && strstr(kiln_last_error(), "world is null"));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_raycast(world, ray(zero, v3(0, -1, 0), 1), NULL, NULL));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_overlap_any(world, NULL, at(0, 0, 0), NULL, &yes));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_overlap(world, &ball, at(0, 0, 0), NULL, NULL, 0, NULL));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_find_object(world, NULL, &id));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_level_open(NULL, NULL));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_new(NULL, NULL));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_step(NULL));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_character_move(world, NULL, zero, zero, NULL, NULL, NULL, 0));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_hull_new(NULL, 4, NULL));
  KilnShape no_hull = kiln_shape_hull(NULL);
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_overlap_any(world, &no_hull, at(0, 0, 0), NULL, &yes));
  KilnFilter bad_skip = kiln_filter_all();
  bad_skip.skip_count = 3; /* and skip left null */
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_raycast(world, ray(zero, v3(0, -1, 0), 1), &bad_skip, &hit));
  CHECK(kiln_world_body_count(NULL) == 0 && kiln_level_object_count(NULL) == 0);
  CHECK(kiln_world_object_layers(NULL, 0) == 0);
  kiln_world_free(NULL);
  kiln_level_free(NULL);
  kiln_hull_free(NULL);

  /* wrong sizes: arrays too small, or null with a length */
  KilnOverlap one;
  EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_world_overlap(world, &ball, at(12, 0.45f, 5), NULL, NULL, 0, &count));
  CHECK(count >= 1);
  size_t needed = count;
  EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_world_overlap(world, &ball, at(12, 0.45f, 5), NULL, &one, 0, &count));
  CHECK(count == needed);
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_overlap(world, &ball, at(12, 0.45f, 5), NULL, NULL, 5, &count));
  EXPECT(KILN_STATUS_NULL_ARGUMENT, kiln_world_raycast_batch(world, NULL, 2, NULL, &hit));
  OK(kiln_world_raycast_batch(world, NULL, 0, NULL, NULL));
  char small[4] = "xyz";
  size_t len = 0;
  KilnObjectId wall = 0;
  OK(kiln_world_find_object(world, "wall", &wall));
  EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_world_object_name(world, wall, small, sizeof small, &len));
  CHECK(len == 4 && strcmp(small, "wal") == 0);
  EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_world_object_name(world, wall, NULL, 0, &len));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_object_name(world, 0xdeadbeefULL << 32, small, sizeof small, &len));
  KilnVec3 three[3] = {zero, v3(1, 0, 0), v3(0, 1, 0)};
  KilnHull *flat = NULL;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_hull_new(three, 3, &flat));
  CHECK(flat == NULL);

  /* malformed queries */
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast(world, ray(zero, zero, 1), NULL, &hit));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast(world, ray(v3(NAN, 0, 0), v3(0, -1, 0), 1), NULL, &hit));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast(world, ray(zero, v3(0, -1, 0), -1), NULL, &hit));
  KilnShape weird = ball;
  weird.kind = 99;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap_any(world, &weird, at(0, 0, 0), NULL, &yes));
  CHECK(strstr(kiln_last_error(), "shape kind 99"));
  KilnShape negative = kiln_shape_sphere(-1);
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap_any(world, &negative, at(0, 0, 0), NULL, &yes));
  KilnShape nan_box = kiln_shape_cuboid(v3(1, NAN, 1));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap(world, &nan_box, at(0, 0, 0), NULL, NULL, 0, &count));
  KilnPose zero_turn = {{0, 0, 0, 0}, {0, 0, 0}};
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_overlap_any(world, &ball, zero_turn, NULL, &yes));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_insert_shape(world, &ball, zero_turn, 1, NULL, false, &id));
  KilnShapeHit shape_hit;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_cast(world, &ball, at(0, 5, 0), v3(0, -1, 0), NAN, false, NULL, &shape_hit));
  /* one rule for directions: too short to have one in f32 is refused, a
     ray's as a cast's, never a hit at a NaN point or a silent miss */
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1e-38f, 0), 100), NULL, &hit));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_cast(world, &ball, at(12, 0, 5), zero, 1, false, NULL, &shape_hit));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_cast(world, &ball, at(12, 0, 5), v3(0, -1e-38f, 0), 1, false, NULL, &shape_hit));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_contains_point(world, v3(INFINITY, 0, 0), NULL, NULL, 0, &count));
  const char not_utf8[] = {(char)0xff, (char)0xfe, 0};
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_find_object(world, not_utf8, &id));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_find_object(world, "no such thing", &id));
  KilnCharacter sideways = kiln_character_capsule(0.3f, 0.6f);
  sideways.settings.up = v3(0, 2, 0);
  KilnMove m;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_character_move(world, &sideways, v3(2, 1, 2), zero, NULL, &m, NULL, 0));
  KilnGround lost = {7, {0, 0, 0}, {0, 1, 0}, 0};
  KilnCharacter player = kiln_character_capsule(0.3f, 0.6f);
  KilnVec3 p;
  KilnQuat turn;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_character_ride(world, &player, zero, &lost, &p, &turn));

  /* archives: missing, empty, truncated, corrupted */
  KilnLevel *level = NULL;
  EXPECT(KILN_STATUS_IO, kiln_level_open("no/such/level.kiln", &level));
  CHECK(level == NULL && strstr(kiln_last_error(), "no/such/level.kiln"));
  EXPECT(KILN_STATUS_BAD_ARCHIVE, kiln_level_from_bytes(NULL, 0, &level));
  size_t n = 0;
  unsigned char *bytes = read_file(archive, &n);
  CHECK(bytes != NULL && n > 64);
  if (bytes) {
    EXPECT(KILN_STATUS_BAD_ARCHIVE, kiln_level_from_bytes(bytes, n / 2, &level));
    printf("truncated archive: %s\n", kiln_last_error());
    EXPECT(KILN_STATUS_BAD_ARCHIVE, kiln_level_from_bytes(bytes, 17, &level));
    bytes[n / 3] ^= 0x5a;
    bytes[n / 3 + 1] ^= 0xa5;
    EXPECT(KILN_STATUS_BAD_ARCHIVE, kiln_level_from_bytes(bytes, n, &level));
    CHECK(level == NULL);
    free(bytes);
  }
}

/* A point `p` of object `i`'s surface (in the world, where the level baked
   it) with outward normal `n`: a level ray from 1 cm outside straight at it,
   seeing only that object, hits that object there. */
static void aimed_at(KilnLevel *level, uint32_t i, const double p[3], double n[3]) {
  double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (len < 1e-9) return; /* a sliver: no normal to aim along */
  uint32_t count = kiln_level_object_count(level);
  KilnObjectId *others = malloc(sizeof(KilnObjectId) * count);
  if (!others) {
    CHECK(0);
    return;
  }
  size_t k = 0;
  for (uint32_t j = 0; j < count; j++)
    if (j != i) others[k++] = j;
  KilnFilter only = kiln_filter_all();
  only.skip = others;
  only.skip_count = k;
  for (int a = 0; a < 3; a++) n[a] /= len;
  KilnRay r = ray(v3((float)(p[0] + 0.01 * n[0]), (float)(p[1] + 0.01 * n[1]), (float)(p[2] + 0.01 * n[2])),
                  v3((float)-n[0], (float)-n[1], (float)-n[2]), 0.05f);
  KilnRayHit hit;
  OK(kiln_level_raycast(level, r, &only, &hit));
  CHECK(hit.hit && hit.object == i && near(hit.t, 0.01f, 1e-3f));
  free(others);
}

/* `m` (row-major 3×4) applied to the local point `x`. */
static void placed(const float m[12], const float *x, double out[3]) {
  for (int r = 0; r < 3; r++) out[r] = m[4 * r] * x[0] + m[4 * r + 1] * x[1] + m[4 * r + 2] * x[2] + m[4 * r + 3];
}

/* The normal of the world triangle a, b, c (counter-clockwise seen from
   outside in the local space; `flip` when the placement mirrors). */
static void normal_of(const double a[3], const double b[3], const double c[3], int flip, double n[3]) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  n[0] = u[1] * w[2] - u[2] * w[1];
  n[1] = u[2] * w[0] - u[0] * w[2];
  n[2] = u[0] * w[1] - u[1] * w[0];
  if (flip)
    for (int k = 0; k < 3; k++) n[k] = -n[k];
}

/* Every object's own collider as a Jolt or PhysX integration builds its
   shape from the archive: the shape's kind is the one the object lists; a
   box, sphere or capsule has positive sizes; a polytope's vertices lie on
   or behind its planes and each face loop in its plane; triangles index
   their vertices, and a concave solid's surface is closed (each edge used
   once each way). On static objects (`rays`), a level ray aimed at the
   middle of every face and of triangles spread over the mesh, placed by
   the object's transform, hits that object there. */
static void geometry(KilnLevel *level, int rays) {
  uint32_t n = kiln_level_object_count(level), kinds[6] = {0, 0, 0, 0, 0, 0};
  for (uint32_t i = 0; i < n; i++) {
    KilnObjectInfo info;
    OK(kiln_level_object_info(level, i, &info));
    KilnPieceShape shape;
    OK(kiln_level_object_shape(level, i, &shape));
    CHECK(shape.kind == info.collider && shape.kind < 6);
    if (shape.kind >= 6) continue;
    kinds[shape.kind]++;
    CHECK(shape.rotation[3] == 1 && shape.centre[0] == 0 && shape.centre[1] == 0 && shape.centre[2] == 0);
    float m[12];
    OK(kiln_level_object_transform(level, i, &m));
    double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                 m[2] * (m[4] * m[9] - m[5] * m[8]);
    int aim = rays && info.motion == KILN_MOTION_STATIC;
    KilnPieceSizes sizes;
    KilnMeshSizes mesh;
    if (shape.kind == KILN_COLLIDER_CUBOID) CHECK(shape.half_extents[0] > 0 && shape.half_extents[1] > 0 && shape.half_extents[2] > 0);
    if (shape.kind == KILN_COLLIDER_SPHERE || shape.kind == KILN_COLLIDER_CAPSULE) CHECK(shape.radius > 0);
    if (shape.kind != KILN_COLLIDER_POLYTOPE)
      EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_polytope(level, i, &sizes, NULL, 0, NULL, 0, NULL, NULL, 0));
    if (shape.kind != KILN_COLLIDER_TRIMESH && shape.kind != KILN_COLLIDER_BSP)
      EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_triangles(level, i, &mesh, NULL, 0, NULL, 0));
    KilnMass mass;
    EXPECT(shape.kind == KILN_COLLIDER_TRIMESH ? KILN_STATUS_NOT_FOUND : KILN_STATUS_OK, kiln_level_object_mass(level, i, 1.0f, &mass));
    CHECK((mass.volume > 0) == (shape.kind != KILN_COLLIDER_TRIMESH));
    if (shape.kind == KILN_COLLIDER_POLYTOPE) {
      EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_object_polytope(level, i, &sizes, NULL, 0, NULL, 0, NULL, NULL, 0));
      CHECK(sizes.vertices >= 4 && sizes.faces >= 4);
      float *v = malloc(3 * sizeof(float) * sizes.vertices), *p = malloc(4 * sizeof(float) * sizes.faces);
      uint32_t *starts = malloc(sizeof(uint32_t) * (sizes.faces + 1)), *loops = malloc(sizeof(uint32_t) * sizes.loop_entries);
      if (v && p && starts && loops) {
        OK(kiln_level_object_polytope(level, i, &sizes, v, sizes.vertices, p, sizes.faces, starts, loops, sizes.loop_entries));
        CHECK(starts[0] == 0 && starts[sizes.faces] == sizes.loop_entries);
        for (uint32_t f = 0; f < sizes.faces; f++) {
          const float *pl = p + 4 * f;
          for (uint32_t j = 0; j < sizes.vertices; j++) {
            const float *x = v + 3 * j;
            CHECK(pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2] - pl[3] <= 1e-4f);
          }
          double mid[3] = {0, 0, 0}, w[3][3];
          uint32_t corners = starts[f + 1] - starts[f];
          for (uint32_t e = starts[f]; e < starts[f + 1]; e++) {
            const float *x = v + 3 * loops[e];
            CHECK(loops[e] < sizes.vertices);
            CHECK(near(pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2], pl[3], 1e-4f));
            double at[3];
            placed(m, x, at);
            for (int a = 0; a < 3; a++) mid[a] += at[a] / corners;
            if (e - starts[f] < 3)
              for (int a = 0; a < 3; a++) w[e - starts[f]][a] = at[a];
          }
          double nrm[3];
          normal_of(w[0], w[1], w[2], det < 0, nrm);
          if (aim) aimed_at(level, i, mid, nrm);
        }
      } else {
        CHECK(0);
      }
      free(v);
      free(p);
      free(starts);
      free(loops);
    }
    if (shape.kind == KILN_COLLIDER_TRIMESH || shape.kind == KILN_COLLIDER_BSP) {
      EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_object_triangles(level, i, &mesh, NULL, 0, NULL, 0));
      CHECK(mesh.vertices >= 3 && mesh.triangles >= 1);
      float *v = malloc(3 * sizeof(float) * mesh.vertices);
      uint32_t *t = malloc(3 * sizeof(uint32_t) * mesh.triangles);
      if (v && t) {
        EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_object_triangles(level, i, &mesh, v, mesh.vertices, t, mesh.triangles - 1));
        OK(kiln_level_object_triangles(level, i, &mesh, v, mesh.vertices, t, mesh.triangles));
        for (uint32_t k = 0; k < 3 * mesh.triangles; k++) CHECK(t[k] < mesh.vertices);
        if (shape.kind == KILN_COLLIDER_BSP) {
          /* closed: every directed edge has its reverse, once */
          for (uint32_t k = 0; k < 3 * mesh.triangles; k++) {
            uint32_t a = t[k], b = t[k % 3 == 2 ? k - 2 : k + 1], back = 0;
            for (uint32_t j = 0; j < 3 * mesh.triangles; j++)
              back += t[j] == b && t[j % 3 == 2 ? j - 2 : j + 1] == a;
            CHECK(back == 1);
          }
        }
        uint32_t step = mesh.triangles / 50 + 1;
        for (uint32_t k = 0; aim && k < mesh.triangles; k += step) {
          double w[3][3], mid[3], nrm[3];
          for (int c = 0; c < 3; c++) placed(m, v + 3 * t[3 * k + c], w[c]);
          for (int a = 0; a < 3; a++) mid[a] = (w[0][a] + w[1][a] + w[2][a]) / 3;
          normal_of(w[0], w[1], w[2], det < 0, nrm);
          aimed_at(level, i, mid, nrm);
        }
      } else {
        CHECK(0);
      }
      free(v);
      free(t);
    }
  }
  KilnPieceShape none;
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_shape(level, n, &none));
  printf("colliders read back: %u triangle meshes, %u polytopes, %u boxes, %u spheres, %u capsules, %u solids\n",
         kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5]);
}

/* Convex pieces as a Jolt or PhysX integration reads them: each dynamic
   concave prop of the props sample has them (an L-shaped crate 2, a
   U-shaped tray 3, the box and the crate none: they are convex), every vertex lies on or
   behind every plane of its piece, every face loop in its plane, and the
   pieces' volumes add up to the prop's (3 and 5 cells of 0.5 m: the
   pieces part it exactly). Each piece is a box of cells, so it is given as
   a box (what a physics engine should take): one of the piece's volume
   that holds every vertex of it. */
static void pieces(const char *path) {
  KilnLevel *level = NULL;
  OK(kiln_level_open(path, &level));
  if (!level) return;
  geometry(level, 0);
  uint32_t n = kiln_level_object_count(level), decomposed = 0;
  for (uint32_t i = 0; i < n; i++) {
    KilnObjectInfo info;
    OK(kiln_level_object_info(level, i, &info));
    uint32_t count = 99;
    OK(kiln_level_object_piece_count(level, i, &count));
    /* static solids (the table, the tub) need none */
    CHECK((count > 0) == (info.collider == KILN_COLLIDER_BSP && info.motion == KILN_MOTION_DYNAMIC));
    if (count == 0) continue;
    decomposed++;
    CHECK(info.motion == KILN_MOTION_DYNAMIC);
    float m[12];
    OK(kiln_level_object_transform(level, i, &m));
    double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                 m[2] * (m[4] * m[9] - m[5] * m[8]);
    double volume = 0;
    for (uint32_t k = 0; k < count; k++) {
      KilnPieceSizes sizes;
      EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_object_piece(level, i, k, &sizes, NULL, 0, NULL, 0, NULL, NULL, 0));
      CHECK(sizes.vertices >= 4 && sizes.faces >= 4 && sizes.loop_entries >= 3 * sizes.faces);
      float *v = malloc(3 * sizeof(float) * sizes.vertices);
      float *p = malloc(4 * sizeof(float) * sizes.faces);
      uint32_t *starts = malloc(sizeof(uint32_t) * (sizes.faces + 1));
      uint32_t *loops = malloc(sizeof(uint32_t) * sizes.loop_entries);
      if (!v || !p || !starts || !loops) {
        CHECK(0);
        break;
      }
      OK(kiln_level_object_piece(level, i, k, &sizes, v, sizes.vertices, p, sizes.faces, starts, loops, sizes.loop_entries));
      CHECK(starts[0] == 0 && starts[sizes.faces] == sizes.loop_entries);
      double before = volume;
      for (uint32_t f = 0; f < sizes.faces; f++) {
        const float *pl = p + 4 * f;
        for (uint32_t j = 0; j < sizes.vertices; j++) {
          const float *x = v + 3 * j;
          CHECK(pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2] - pl[3] <= 1e-4f);
        }
        const float *a = v + 3 * loops[starts[f]];
        for (uint32_t e = starts[f]; e < starts[f + 1]; e++) {
          const float *x = v + 3 * loops[e];
          CHECK(loops[e] < sizes.vertices);
          CHECK(near(pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2], pl[3], 1e-4f));
          /* the face's fan triangles, for the volume (divergence theorem) */
          if (e > starts[f] && e + 1 < starts[f + 1]) {
            const float *b = x, *c = v + 3 * loops[e + 1];
            volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                       a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
          }
        }
      }
      KilnPieceShape shape;
      OK(kiln_level_object_piece_shape(level, i, k, &shape));
      CHECK(shape.kind == KILN_COLLIDER_CUBOID);
      const float *h = shape.half_extents, *q = shape.rotation;
      CHECK(fabs(8.0 * h[0] * h[1] * h[2] - (volume - before)) <= 1e-4);
      for (uint32_t j = 0; j < sizes.vertices; j++) {
        /* into the box's frame: by the conjugate rotation */
        float d[3] = {v[3 * j] - shape.centre[0], v[3 * j + 1] - shape.centre[1], v[3 * j + 2] - shape.centre[2]};
        float u[3] = {-q[0], -q[1], -q[2]};
        float t[3] = {2 * (u[1] * d[2] - u[2] * d[1]), 2 * (u[2] * d[0] - u[0] * d[2]), 2 * (u[0] * d[1] - u[1] * d[0])};
        float x[3] = {d[0] + q[3] * t[0] + u[1] * t[2] - u[2] * t[1], d[1] + q[3] * t[1] + u[2] * t[0] - u[0] * t[2],
                      d[2] + q[3] * t[2] + u[0] * t[1] - u[1] * t[0]};
        for (int a = 0; a < 3; a++) CHECK(fabsf(x[a]) <= h[a] + 1e-4f);
      }
      free(v);
      free(p);
      free(starts);
      free(loops);
    }
    KilnPieceShape none;
    EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_piece_shape(level, i, count, &none));
    double cells = count == 2 ? 3 : 5;
    CHECK(fabs(volume * fabs(det) - cells * 0.125) <= 1e-4);
    /* its mass at 1000 kg/m³: the cells' volume, and a symmetric inertia
       with positive moments that meet the triangle inequality */
    KilnMass mass;
    OK(kiln_level_object_mass(level, i, 1000.0f, &mass));
    CHECK(near(mass.volume, (float)(cells * 0.125), 1e-4f) && near(mass.mass, 1000.0f * mass.volume, 1e-2f));
    const float *in = mass.inertia;
    CHECK(in[1] == in[3] && in[2] == in[6] && in[5] == in[7]);
    CHECK(in[0] > 0 && in[4] > 0 && in[8] > 0 && in[0] + in[4] >= in[8] && in[4] + in[8] >= in[0] && in[0] + in[8] >= in[4]);
    EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_level_object_mass(level, i, -1.0f, &mass));
    CHECK(mass.mass == 0);
    KilnPieceSizes sizes;
    EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_piece(level, i, count, &sizes, NULL, 0, NULL, 0, NULL, NULL, 0));
  }
  CHECK(decomposed == 2);
  printf("%u props with convex pieces read back\n", decomposed);
  kiln_level_free(level);
}

/* The bodies sample: rigid bodies glTF physics authors, read back as a
   Jolt or PhysX integration would build them. */
static void authored_bodies(const char *path) {
  KilnLevel *level = NULL;
  OK(kiln_level_open(path, &level));
  if (!level) return;
  CHECK(kiln_level_body_count(level) == 3);
  CHECK(kiln_level_body_count(NULL) == 0);
  const char *names[3] = {"dumbbell", "gate", "barrel"};
  const uint32_t motions[3] = {KILN_MOTION_DYNAMIC, KILN_MOTION_KINEMATIC, KILN_MOTION_DYNAMIC};
  const uint32_t counts[3] = {3, 3, 1};
  uint32_t seen = 0;
  for (uint32_t k = 0; k < 3; k++) {
    KilnBodyInfo info;
    OK(kiln_level_body_info(level, k, &info));
    char name[32];
    size_t len = 0;
    OK(kiln_level_body_name(level, k, name, sizeof name, &len));
    CHECK(strcmp(name, names[k]) == 0 && len == strlen(names[k]));
    CHECK(info.motion == motions[k] && info.member_count == counts[k]);
    CHECK(near(info.rotation[3], 1.0f, 1e-6f));
    uint32_t members[8];
    OK(kiln_level_body_members(level, k, members, 8));
    for (uint32_t j = 0; j < info.member_count; j++) {
      uint32_t body = 99;
      OK(kiln_level_object_body(level, members[j], &body));
      CHECK(body == k);
      KilnObjectInfo o;
      OK(kiln_level_object_info(level, members[j], &o));
      CHECK(o.motion == info.motion);
      CHECK(j == 0 || members[j] > members[j - 1]);
      seen++;
    }
    KilnMass mass;
    OK(kiln_level_body_mass(level, k, 1000.0f, &mass));
    if (k == 0) {
      /* the dumbbell: mass, centre and inertia as the file authors them */
      CHECK(info.authored == (KILN_AUTHORED_MASS | KILN_AUTHORED_CENTRE | KILN_AUTHORED_INERTIA));
      CHECK(info.mass == 12.0f && near(info.centre_of_mass[0], 0.05f, 1e-7f));
      CHECK(info.inertia_diagonal[0] == 0.05f && info.inertia_diagonal[1] == 0.6f && info.inertia_diagonal[2] == 0.6f);
      CHECK(near(info.translation[0], 2, 1e-6f) && near(info.translation[1], 1, 1e-6f) && near(info.translation[2], 5, 1e-6f));
      CHECK(mass.mass == 12.0f && near(mass.centre[0], 2.05f, 1e-5f) && near(mass.inertia[0], 0.05f, 1e-6f) && near(mass.inertia[4], 0.6f, 1e-6f));
      /* a weight 0.4 m along the bar from the body's origin */
      float m[12];
      OK(kiln_level_object_transform(level, members[1], &m));
      CHECK(near(fabsf(m[3] - info.translation[0]), 0.4f, 1e-5f) && near(m[7], 1.0f, 1e-6f));
      /* too little room: nothing written */
      uint32_t one[1] = {77};
      EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_body_members(level, k, one, 1));
      CHECK(one[0] == 77);
      char small[4];
      EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_level_body_name(level, k, small, sizeof small, &len));
      CHECK(len == 8 && strcmp(small, "dum") == 0);
    } else if (k == 1) {
      /* the gate: nothing authored, its three boxes at the density */
      CHECK(info.authored == 0 && info.mass == 0 && info.inertia_orientation[3] == 1.0f);
      CHECK(near(mass.volume, 0.248f, 1e-5f) && near(mass.mass, 248.0f, 1e-2f));
    } else {
      /* the barrel: its mass alone authored */
      CHECK(info.authored == KILN_AUTHORED_MASS && info.mass == 30.0f);
      CHECK(mass.mass == 30.0f && near(mass.centre[1], 1.45f, 1e-5f));
    }
  }
  /* every moving object is in a body; the floor in none */
  CHECK(seen == kiln_level_object_count(level) - 1);
  uint32_t floor = 0, body = 0;
  for (uint32_t i = 0; i < kiln_level_object_count(level); i++) {
    KilnObjectInfo o;
    OK(kiln_level_object_info(level, i, &o));
    if (o.motion == KILN_MOTION_STATIC) floor = i;
  }
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_object_body(level, floor, &body));
  CHECK(body == UINT32_MAX);
  KilnBodyInfo none;
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_body_info(level, 3, &none));
  KilnMass m;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_level_body_mass(level, 0, 0.0f, &m));
  printf("%u authored bodies read back\n", kiln_level_body_count(level));
  kiln_level_free(level);
}

/* a world of tiles: the walk course baked as four 10 m tiles, streamed
   around focus points; a level mounted by hand far out, and the floating
   origin */
static void tiles(const char *manifest, const char *course) {
  KilnWorld *world = NULL;
  KilnDVec3 zero = {0, 0, 0};
  OK(kiln_world_new_tiled(zero, &world));
  if (!world) return;
  KilnStreamer *streamer = NULL;
  OK(kiln_streamer_open(manifest, 2.0, 1.0, &streamer));
  if (!streamer) return;
  KilnStreamReport report;
  KilnDVec3 inside = {3, 0, 3}, corner = {9.5, 0, 9.5}, away = {500, 0, 500};
  OK(kiln_streamer_update(streamer, world, &inside, 1, true, &report));
  CHECK(report.mounted == 1 && report.dropped == 0 && report.failed == 0);
  KilnRayHit hit;
  OK(kiln_world_raycast(world, ray(v3(3, 5, 3), v3(0, -1, 0), 10), NULL, &hit));
  CHECK(hit.hit && near(hit.point.y, 0, 1e-4f) && kiln_object_tile(hit.object) != 0);
  OK(kiln_streamer_update(streamer, world, &corner, 1, true, &report));
  CHECK(report.mounted == 3 && kiln_world_tile_count(world) == 4);
  KilnStreamTile listed[4];
  size_t len = 0;
  EXPECT(KILN_STATUS_BUFFER_TOO_SMALL, kiln_streamer_mounted(streamer, listed, 2, &len));
  CHECK(len == 4);
  OK(kiln_streamer_mounted(streamer, listed, 4, &len));
  CHECK(len == 4 && listed[0].index == 0 && listed[3].cell[0] == 1 && listed[3].cell[1] == 1);
  OK(kiln_streamer_update(streamer, world, &away, 1, true, &report));
  CHECK(report.dropped == 4 && kiln_world_tile_count(world) == 0);
  OK(kiln_world_raycast(world, ray(v3(3, 5, 3), v3(0, -1, 0), 10), NULL, &hit));
  CHECK(!hit.hit);
  char text[8];
  OK(kiln_streamer_failure(streamer, text, sizeof text, &len));
  CHECK(len == 0 && text[0] == 0);
  kiln_streamer_free(streamer);

  /* a level mounted 100 km out, asked in a frame whose zero is there */
  KilnLevel *level = NULL;
  OK(kiln_level_open(course, &level));
  KilnDVec3 far = {100000, 0, 0};
  uint32_t tile = 0;
  OK(kiln_world_mount(world, level, far, &tile));
  kiln_level_free(level);
  CHECK(tile != 0);
  KilnVec3 shift;
  OK(kiln_world_set_origin(world, far, &shift));
  CHECK(shift.x == -100000.0f && shift.y == 0 && shift.z == 0);
  KilnDVec3 origin;
  OK(kiln_world_origin(world, &origin));
  CHECK(origin.x == 100000.0);
  OK(kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && near(hit.t, 10, 1e-5f) && kiln_object_tile(hit.object) == tile);
  OK(kiln_world_unmount(world, tile));
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_world_unmount(world, tile));
  KilnDVec3 bad = {NAN, 0, 0};
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_set_origin(world, bad, NULL));
  kiln_world_free(world);
  KilnWorld *none = NULL;
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_world_new_tiled(bad, &none));
  CHECK(none == NULL);
  KilnStreamer *missing = NULL;
  EXPECT(KILN_STATUS_IO, kiln_streamer_open("no/such/world.kilnworld", 1.0, -1.0, &missing));
  CHECK(missing == NULL);
  printf("tiles streamed and mounted\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: %s <moving_course.kiln> [props.kiln [bodies.kiln [walk_course.kilnworld]]]\n", argv[0]);
    return 2;
  }
  /* the engine's allocator, set before anything else */
  KilnAllocator allocator = {hook_alloc, hook_free, &hook_user};
  OK(kiln_set_allocator(&allocator));
  EXPECT(KILN_STATUS_INVALID_ARGUMENT, kiln_set_allocator(&allocator));
  printf("kiln %s\n", kiln_version());
  /* the library linked is the one this header describes */
  CHECK(kiln_version_compatible(KILN_VERSION_MAJOR, KILN_VERSION_MINOR));
  CHECK(!kiln_version_compatible(KILN_VERSION_MAJOR + 1, KILN_VERSION_MINOR));
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH);
  CHECK(strcmp(version, kiln_version()) == 0);
  CHECK(kiln_format_version() == KILN_FORMAT_VERSION);
  KilnLevel *level = NULL;
  OK(kiln_level_open(argv[1], &level));
  if (!level) return 1;
  CHECK(kiln_level_object_count(level) > 10);
  uint32_t layer = 0;
  OK(kiln_level_layer(level, "default", &layer));
  CHECK(layer == 1);
  EXPECT(KILN_STATUS_NOT_FOUND, kiln_level_layer(level, "walkable", &layer));
  KilnWorld *world = NULL;
  OK(kiln_world_new(level, &world));
  if (!world) return 1;

  queries(world);
  bodies(world, level);
  character(world);
  hostile(world, argv[1]);
  logging(world);
  level_alone(level, world);
  geometry(level, 1);
  defined_on_failure(world);
  if (argc >= 3) pieces(argv[2]);
  if (argc >= 4) authored_bodies(argv[3]);
  if (argc == 5) tiles(argv[4], argv[1]);
  /* capsules take the radius first, as characters do */
  KilnShape capsule = kiln_shape_capsule(0.3f, 0.6f);
  CHECK(capsule.radius == 0.3f && capsule.half_height == 0.6f);

  /* the world keeps its level after the handle is freed; a reload keeps bodies */
  kiln_level_free(level);
  KilnRayHit hit;
  OK(kiln_world_raycast(world, ray(v3(12, 10, 5), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit);
  KilnLevel *again = NULL;
  OK(kiln_level_open(argv[1], &again));
  KilnShape ball = kiln_shape_sphere(0.5f);
  KilnObjectId kept = 0;
  OK(kiln_world_insert_shape(world, &ball, at(1, 8, 1), 1, "kept", false, &kept));
  OK(kiln_world_set_level(world, again));
  OK(kiln_world_raycast(world, ray(v3(1, 10, 1), v3(0, -1, 0), 100), NULL, &hit));
  CHECK(hit.hit && hit.object == kept);
  kiln_level_free(again);
  kiln_world_free(world);

  /* a level read (not mapped) outlives its file being rewritten in place,
     as `cp` rewrites it; a mapped one would die of SIGBUS */
  size_t len = 0;
  unsigned char *copy = read_file(argv[1], &len);
  char path[4096];
  snprintf(path, sizeof path, "%s.inplace", argv[1]);
  FILE *f = copy ? fopen(path, "wb") : NULL;
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(copy, 1, len, f) == len);
    fclose(f);
    KilnLevel *read = NULL;
    OK(kiln_level_read(path, &read));
    KilnWorld *live = NULL;
    if (read) OK(kiln_world_new(read, &live));
    f = fopen(path, "wb"); /* truncated, then a little written */
    CHECK(f != NULL);
    if (f) {
      CHECK(fwrite(copy, 1, 100, f) == 100);
      fclose(f);
    }
    if (live) {
      OK(kiln_world_raycast(live, ray(v3(12, 10, 5), v3(0, -1, 0), 100), NULL, &hit));
      CHECK(hit.hit && near(hit.point.y, 0, 1e-4f));
      kiln_world_free(live);
    }
    KilnLevel *broken = NULL;
    EXPECT(KILN_STATUS_BAD_ARCHIVE, kiln_level_read(path, &broken));
    CHECK(broken == NULL);
    kiln_level_free(read);
    remove(path);
  }
  free(copy);

  /* every allocation went through the engine's allocator */
  printf("the engine's allocator: %zu blocks allocated, %zu freed\n", (size_t)hook_allocs, (size_t)hook_frees);
  CHECK(hook_allocs > 100 && hook_frees > 0 && hook_frees <= hook_allocs && hook_wrong_user == 0);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
