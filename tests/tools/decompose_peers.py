#!/usr/bin/env python3
"""Convex decomposition by a peer, for Kiln's decomposition bench.

    python decompose_peers.py coacd|vhacd < mesh.json > pieces.json

Reads {"vertices": [[x, y, z], ...], "triangles": [[a, b, c], ...]} and
writes {"pieces": [[[x, y, z], ...], ...], "seconds": wall time}: each
piece as its hull's vertices. CoACD (Wei et al., SIGGRAPH 2022) at its
default threshold 0.05; V-HACD 4 (the `vhacdx` binding) at its defaults.
Needs `pip install coacd vhacdx numpy` in the Python that runs it.
"""
import json
import sys
import time

import numpy as np


def main():
    tool = sys.argv[1]
    mesh = json.load(sys.stdin)
    v = np.asarray(mesh["vertices"], dtype=np.float64)
    f = np.asarray(mesh["triangles"], dtype=np.int64)
    start = time.perf_counter()
    if tool == "coacd":
        import coacd

        coacd.set_log_level("error")
        parts = coacd.run_coacd(coacd.Mesh(v, f), threshold=0.05, seed=0)
        pieces = [np.asarray(p[0]).tolist() for p in parts]
    elif tool == "vhacd":
        import vhacdx

        parts = vhacdx.compute_vhacd(v, f.astype(np.uint32))
        pieces = [np.asarray(p[0]).tolist() for p in parts]
    else:
        sys.exit(f"unknown tool {tool!r}: coacd or vhacd")
    seconds = time.perf_counter() - start
    json.dump({"pieces": pieces, "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main()
