"""Bazel rules for Kiln: bake glTF levels and tiles, and list tiles in a world manifest.

Every bake is one hermetic action: the glTF file, the buffers it reads and the
project file (`kiln.toml`) in, one archive out, with the `baker` binary itself
an input. A remote cache or executor (any REAPI server: Buildbarn,
BuildBuddy, EngFlow, NativeLink, BuildGrid) therefore reuses a tile's archive
until the tile, its settings or the baker change, and a bake gives the same
bytes wherever it runs (Kiln's archives are byte-identical for the same input
and settings, whatever the thread count).

The `baker` binary comes from the repository `@kiln_baker` by default (a
BUILD file there exporting `baker`), or from any label given as `baker`.
"""

_BAKER = Label("@kiln_baker//:baker")

def _baker_attr():
    return attr.label(
        default = _BAKER,
        executable = True,
        cfg = "exec",
        allow_single_file = True,
        doc = "The `baker` binary (an input of every action: a new baker bakes again).",
    )

def _kiln_bake_impl(ctx):
    out = ctx.actions.declare_file(ctx.attr.out or ctx.label.name + ".kiln")
    args = ctx.actions.args()
    args.add("bake")
    args.add(ctx.file.src)
    args.add("-o", out)
    inputs = [ctx.file.src] + ctx.files.data
    if ctx.file.config:
        args.add("--config", ctx.file.config)
        inputs.append(ctx.file.config)
    else:
        # no kiln.toml that Bazel does not know of, even without a sandbox
        args.add("--no-config")
    args.add_all(ctx.attr.flags)
    ctx.actions.run(
        executable = ctx.executable.baker,
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = "KilnBake",
        progress_message = "Baking %s" % ctx.file.src.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

kiln_bake = rule(
    implementation = _kiln_bake_impl,
    doc = "Bakes one glTF level or tile into one Kiln archive (`baker bake SRC -o NAME.kiln`).",
    attrs = {
        "src": attr.label(
            mandatory = True,
            allow_single_file = [".gltf", ".glb"],
            doc = "The glTF file.",
        ),
        "data": attr.label_list(
            allow_files = True,
            doc = "Every file the glTF file reads: its buffers (.bin), beside it as its URIs say.",
        ),
        "config": attr.label(
            allow_single_file = True,
            doc = "The project file (kiln.toml); without one the bake reads none.",
        ),
        "flags": attr.string_list(
            doc = "More `baker bake` flags, such as [\"--decompose\"].",
        ),
        "out": attr.string(
            doc = "The archive's file name (default: NAME.kiln).",
        ),
        "baker": _baker_attr(),
    },
)

def _kiln_world_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".kilnworld")
    args = ctx.actions.args()
    args.add("world")
    args.add("-o", out)
    archives = []
    for target, origin in ctx.attr.tiles.items():
        files = target.files.to_list()
        if len(files) != 1:
            fail("kiln_world %s: tile %s gives %d files, not one archive" % (ctx.label, target.label, len(files)))
        archives.append(files[0])
        args.add("%s@%s" % (files[0].path, origin))
    ctx.actions.run(
        executable = ctx.executable.baker,
        arguments = [args],
        inputs = archives,
        outputs = [out],
        mnemonic = "KilnWorld",
        progress_message = "Listing %d tiles in %s" % (len(archives), out.short_path),
    )
    return [DefaultInfo(files = depset([out] + archives))]

kiln_world = rule(
    implementation = _kiln_world_impl,
    doc = """Writes NAME.kilnworld, a world manifest listing tile archives at their origins (`baker world`).

The archives must be baked in this package or below it: a manifest names its
tiles by paths relative to its own folder.""",
    attrs = {
        "tiles": attr.label_keyed_string_dict(
            mandatory = True,
            allow_files = [".kiln"],
            doc = "Each tile's archive and its origin in the world, \"X,Y,Z\" in metres (f64).",
        ),
        "baker": _baker_attr(),
    },
)

def kiln_tiles(name, tiles, config = None, buffers = {}, flags = [], baker = None, **kwargs):
    """A world of tiles authored apart: one kiln_bake per glTF file, and a kiln_world listing them.

    Args:
      name: the world; its manifest is NAME.kilnworld.
      tiles: each glTF file and its origin, [x, y, z] or "x,y,z" (metres).
      config: the project file every tile is baked with (kiln.toml), if any.
      buffers: each glTF file's buffers; a .gltf file not listed reads
        STEM.bin beside it if there is one.
      flags: more `baker bake` flags for every tile.
      baker: the `baker` binary (default @kiln_baker//:baker).
      **kwargs: common attributes (visibility, tags) for the world.
    """
    extra = {"baker": baker} if baker else {}
    world = {}
    for src, origin in tiles.items():
        stem = src.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if src in buffers:
            data = buffers[src]
        elif src.endswith(".gltf"):
            data = native.glob([src.rsplit(".", 1)[0] + ".bin"])
        else:
            data = []
        if type(origin) != "string":
            origin = ",".join([str(c) for c in origin])
        kiln_bake(
            name = stem,
            src = src,
            data = data,
            config = config,
            flags = flags,
            **extra
        )
        world[":" + stem] = origin
    kiln_world(name = name, tiles = world, **dict(extra, **kwargs))
