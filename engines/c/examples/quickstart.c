#include "kiln.h"
#include <stdio.h>

int main(int argc, char **argv) {
  KilnLevel *level = NULL;
  KilnWorld *world = NULL;
  if (kiln_level_open(argc > 1 ? argv[1] : "walk.kiln", &level) != KILN_STATUS_OK ||
      kiln_world_new(level, &world) != KILN_STATUS_OK) {
    fprintf(stderr, "%s\n", kiln_last_error());
    return 1;
  }
  /* a ray straight down from (12, 10, 5), seeing every object but triggers */
  KilnRay down = {{12, 10, 5}, {0, -1, 0}, 100};
  KilnRayHit hit;
  if (kiln_world_raycast(world, down, NULL, &hit) == KILN_STATUS_OK && hit.hit) {
    char name[64];
    size_t len;
    kiln_world_object_name(world, hit.object, name, sizeof name, &len);
    printf("hit %s at (%.2f, %.2f, %.2f)\n", name, hit.point.x, hit.point.y, hit.point.z);
  }
  kiln_world_free(world);
  kiln_level_free(level);
  return 0;
}
