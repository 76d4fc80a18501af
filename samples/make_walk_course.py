#!/usr/bin/env python3
"""Writes samples/walk_course.gltf: a small course for the character
controller (the `walk` example and tests/e2e/character.rs). Y is up, metres.

  - four floor tiles, 10 x 10 m each, tessellated (10 x 10 quads, diagonals
    alternating) and meeting at seams along x = 10 and z = 10;
  - lane z = 2: stairs of five 0.2 m steps, 0.4 m deep, from x = 4, onto a
    1.0 m platform;
  - lane z = 6: one 0.5 m step (too high to climb) at x = 4;
  - lane z = 10 (along the seam): a 20 degree ramp (walkable) from x = 4;
  - lane z = 14: a 60 degree ramp (too steep) from x = 4;
  - a wall 3 m high along x = 16.

It also writes samples/moving_course.gltf: the same course and three
movers (node extras `{"motion": "kinematic"}`) for the `walk` example's
ride: a lift (2 x 0.2 x 2 m) at x = 12, z = 17; a turntable (3 x 0.2 x 3 m)
at x = 12, z = 7; a sliding door (0.2 x 2 x 2 m) across z = 10 at x = 14.5.

And samples/props.gltf: props authored as dynamic bodies (node extras
`{"motion": "dynamic"}`) on a floor tile, which the baker gives convex
pieces by default: an L-shaped crate (two pieces), a U-shaped tray
(three) and a box (convex: its own one piece, none stored); and, for
physics engines on the level, a static table (a top on four legs: a
concave prop) with a dynamic crate above it, and a static tub (a 3 x 3 m
block with a 1 x 1 m pit 0.5 m deep in its middle).

And samples/bodies.gltf: rigid bodies authored with KHR_physics_rigid_bodies
and KHR_implicit_shapes (so only authored colliders collide): a static
floor slab (10 x 0.2 x 10 m, top at y = 0); a dynamic dumbbell of three
colliders (a bar along x and two weights of radius 0.12 m at x = +-0.4 m)
with an authored mass of 12 kg, centre of mass and inertia; a kinematic
gate of two posts and a beam that move as one; and a dynamic barrel (a
cylinder on a child node, 0.45 m above the body's origin) with an
authored mass of 30 kg and nothing else.

Re-run after editing: python3 samples/make_walk_course.py"""
import base64, json, math, os, struct

CUBE_P = [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
# corner i has x = bit 2, y = bit 1, z = bit 0; outward quads
CUBE_Q = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
CUBE_T = [t for a, b, c, d in CUBE_Q for t in ((a, b, c), (a, c, d))]


def tile(n=10, size=10.0):
    p = [[x * size / n, 0.0, z * size / n] for z in range(n + 1) for x in range(n + 1)]
    t = []
    for z in range(n):
        for x in range(n):
            i = z * (n + 1) + x
            if (x + z) % 2 == 0:
                t += [(i, i + n + 1, i + 1), (i + 1, i + n + 1, i + n + 2)]
            else:
                t += [(i, i + n + 1, i + n + 2), (i, i + n + 2, i + 1)]
    return p, t


def prism(outline, caps, depth):
    """The closed prism of a simple polygon (x, y counter-clockwise) from
    z = 0 to z = depth; `caps` triangulates the polygon (corner indices,
    counter-clockwise)."""
    n = len(outline)
    p = [[x, y, 0.0] for x, y in outline] + [[x, y, depth] for x, y in outline]
    t = []
    for a, b, c in caps:
        t.append((a, c, b))  # the z = 0 cap faces -z
        t.append((n + a, n + b, n + c))  # the z = depth cap faces +z
    for i in range(n):
        j = (i + 1) % n
        t += [(i, j, n + j), (i, n + j, n + i)]
    return p, t


def boxes(parts):
    """One mesh of closed boxes, each (lo, hi) corners."""
    p, t = [], []
    for lo, hi in parts:
        base = len(p)
        p += [[(lo, hi)[x > 0][0], (lo, hi)[y > 0][1], (lo, hi)[z > 0][2]] for x, y, z in CUBE_P]
        t += [(base + a, base + b, base + c) for a, b, c in CUBE_T]
    return p, t


def columns(heights, cell):
    """The closed solid of square columns on a grid, `heights[z][x]` tall
    (all > 0), each `cell` wide: tops, the walls where a neighbour is
    lower or missing, and the bottom; vertices shared."""
    nz, nx = len(heights), len(heights[0])
    p, index, t = [], {}, []

    def v(x, y, z):
        key = (x, y, z)
        if key not in index:
            index[key] = len(p)
            p.append([x * cell, y, z * cell])
        return index[key]

    def quad(a, b, c, d):
        t.extend([(a, b, c), (a, c, d)])

    def h(x, z):
        return heights[z][x] if 0 <= x < nx and 0 <= z < nz else 0.0

    for z in range(nz):
        for x in range(nx):
            y = heights[z][x]
            quad(v(x, y, z), v(x, y, z + 1), v(x + 1, y, z + 1), v(x + 1, y, z))  # top, +y
            quad(v(x, 0, z), v(x + 1, 0, z), v(x + 1, 0, z + 1), v(x, 0, z + 1))  # bottom, -y
            # a wall where the neighbour is lower: from its height up to ours
            for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                low = h(x + dx, z + dz)
                if low >= y:
                    continue
                if dx == 1:
                    quad(v(x + 1, low, z), v(x + 1, y, z), v(x + 1, y, z + 1), v(x + 1, low, z + 1))
                elif dx == -1:
                    quad(v(x, low, z), v(x, low, z + 1), v(x, y, z + 1), v(x, y, z))
                elif dz == 1:
                    quad(v(x, low, z + 1), v(x + 1, low, z + 1), v(x + 1, y, z + 1), v(x, y, z + 1))
                else:
                    quad(v(x, low, z), v(x, y, z), v(x + 1, y, z), v(x + 1, low, z))
    return p, t


def props():
    # an L and a U of unit cells, each cap cut into triangles of its corners
    l_shape = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
    l_caps = [(0, 1, 2), (0, 2, 3), (0, 3, 5), (3, 4, 5)]
    u_shape = [(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)]
    u_caps = [(0, 1, 4), (0, 4, 5), (0, 5, 7), (5, 6, 7), (1, 2, 4), (4, 2, 3)]
    # a table 1.2 x 0.8 m, its top from 0.7 to 0.8 m on legs 0.1 m square
    legs = [((x, 0.0, z), (x + 0.1, 0.7, z + 0.1)) for x in (-0.6, 0.5) for z in (-0.4, 0.3)]
    table = boxes([((-0.6, 0.7, -0.4), (0.6, 0.8, 0.4))] + legs)
    tub = columns([[0.6, 0.6, 0.6], [0.6, 0.1, 0.6], [0.6, 0.6, 0.6]], 1.0)
    meshes = [("tile", *tile()), ("l_crate", *prism(l_shape, l_caps, 1.0)), ("u_tray", *prism(u_shape, u_caps, 1.0)), ("cube", CUBE_P, CUBE_T), ("table", *table), ("tub", *tub)]
    nodes = [
        {"name": "floor", "mesh": 0, "translation": [0, 0, 0]},
        {"name": "l_crate", "mesh": 1, "translation": [2, 0, 2], "scale": [0.5, 0.5, 0.5], "extras": {"motion": "dynamic"}},
        {"name": "u_tray", "mesh": 2, "translation": [5, 0, 2], "scale": [0.5, 0.5, 0.5], "extras": {"motion": "dynamic"}},
        {"name": "box", "mesh": 3, "translation": [8, 0.25, 2], "scale": [0.25, 0.25, 0.25], "extras": {"motion": "dynamic"}},
        {"name": "table", "mesh": 4, "translation": [2, 0, 7]},
        {"name": "crate", "mesh": 3, "translation": [2.1, 1.5, 7], "scale": [0.2, 0.2, 0.2], "extras": {"motion": "dynamic"}},
        {"name": "tub", "mesh": 5, "translation": [5, 0, 6]},
    ]
    return meshes, nodes


def main():
    write("walk_course.gltf", course(False))
    write("moving_course.gltf", course(True))
    write("props.gltf", props())
    write("bodies.gltf", ([], []), bodies())


def bodies():
    shapes = [
        {"type": "box", "box": {"size": [10, 0.2, 10]}},
        {"type": "capsule", "capsule": {"height": 0.6, "radiusBottom": 0.03, "radiusTop": 0.03}},
        {"type": "sphere", "sphere": {"radius": 0.12}},
        {"type": "box", "box": {"size": [0.2, 2, 0.2]}},
        {"type": "box", "box": {"size": [2.2, 0.2, 0.2]}},
        {"type": "cylinder", "cylinder": {"height": 0.9, "radiusBottom": 0.3, "radiusTop": 0.3}},
    ]

    def collider(name, shape, **place):
        return {"name": name, **place, "extensions": {"KHR_physics_rigid_bodies": {"collider": {"geometry": {"shape": shape}}}}}

    def body(name, motion, children, **place):
        return {"name": name, **place, "children": children, "extensions": {"KHR_physics_rigid_bodies": {"motion": motion}}}

    s45 = math.sqrt(0.5)
    nodes = [
        collider("floor", 0, translation=[5, -0.1, 5]),
        body("dumbbell", {"mass": 12, "centerOfMass": [0.05, 0, 0], "inertiaDiagonal": [0.05, 0.6, 0.6]}, [2, 3, 4], translation=[2, 1.0, 5]),
        collider("dumbbell_bar", 1, rotation=[0, 0, s45, s45]),
        collider("dumbbell_left", 2, translation=[-0.4, 0, 0]),
        collider("dumbbell_right", 2, translation=[0.4, 0, 0]),
        body("gate", {"isKinematic": True}, [6, 7, 8], translation=[6, 0, 5]),
        collider("gate_post_a", 3, translation=[-1, 1, 0]),
        collider("gate_post_b", 3, translation=[1, 1, 0]),
        collider("gate_beam", 4, translation=[0, 2.1, 0]),
        body("barrel", {"mass": 30}, [10], translation=[8, 1.0, 2]),
        collider("barrel_shell", 5, translation=[0, 0.45, 0]),
    ]
    return {
        "scenes": [{"nodes": [0, 1, 5, 9]}],
        "nodes": nodes,
        "extensionsUsed": ["KHR_physics_rigid_bodies", "KHR_implicit_shapes"],
        "extensions": {"KHR_implicit_shapes": {"shapes": shapes}},
    }


def course(movers):
    meshes = [("cube", CUBE_P, CUBE_T), ("tile", *tile())]
    nodes = []

    def box(name, centre, half, angle_z=0.0):
        # a unit cube (half extent 1) scaled, turned about z, moved
        s, c = math.sin(angle_z / 2), math.cos(angle_z / 2)
        nodes.append({"name": name, "mesh": 0, "translation": centre, "rotation": [0, 0, s, c], "scale": half})

    for k, (x, z) in enumerate([(0, 0), (10, 0), (0, 10), (10, 10)]):
        nodes.append({"name": f"floor_{k}", "mesh": 1, "translation": [x, 0, z]})
    for i in range(5):
        h = 0.2 * (i + 1)
        box(f"stair_{i}", [4 + 0.4 * i + 0.2, h / 2, 2], [0.2, h / 2, 1])
    box("stair_top", [6 + 1.5, 0.5, 2], [1.5, 0.5, 1])
    box("high_step", [5, 0.25, 6], [1, 0.25, 1])
    for name, deg, z in [("ramp_20", 20, 10), ("ramp_60", 60, 14)]:
        a = math.radians(deg)
        length, thick = 4.0, 0.2
        # the top face rises from (4, 0) at angle a; the slab hangs below it
        cx = 4 + math.cos(a) * length / 2 + math.sin(a) * thick / 2
        cy = math.sin(a) * length / 2 - math.cos(a) * thick / 2
        box(name, [cx, cy, z], [length / 2, thick / 2, 1], a)
    box("wall", [16.25, 1.5, 10], [0.25, 1.5, 10])
    if movers:
        box("lift", [12, 0.1, 17], [1, 0.1, 1])
        box("turntable", [12, 0.1, 7], [1.5, 0.1, 1.5])
        box("door", [14.5, 1.0, 10], [0.1, 1.0, 1.0])
        for n in nodes[-3:]:
            n["extras"] = {"motion": "kinematic"}

    return meshes, nodes


def write(name, course, extra=None):
    meshes, nodes = course
    blob = b""
    accessors, views, gmeshes = [], [], []
    for mname, p, t in meshes:
        pos = b"".join(struct.pack("<3f", *v) for v in p)
        idx = b"".join(struct.pack("<3I", *tri) for tri in t)
        for data, target in ((pos, 34962), (idx, 34963)):
            views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data), "target": target})
            blob += data
        lo = [min(v[k] for v in p) for k in range(3)]
        hi = [max(v[k] for v in p) for k in range(3)]
        accessors.append({"bufferView": len(views) - 2, "componentType": 5126, "count": len(p), "type": "VEC3", "min": lo, "max": hi})
        accessors.append({"bufferView": len(views) - 1, "componentType": 5125, "count": 3 * len(t), "type": "SCALAR"})
        gmeshes.append({"name": mname, "primitives": [{"attributes": {"POSITION": len(accessors) - 2}, "indices": len(accessors) - 1}]})
    doc = {
        "asset": {"version": "2.0", "generator": "kiln samples/make_walk_course.py"},
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": nodes,
        "meshes": gmeshes,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob), "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}],
    }
    if extra:
        doc.update(extra)
        if not meshes:
            for k in ("meshes", "accessors", "bufferViews", "buffers"):
                del doc[k]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", out)


main()
