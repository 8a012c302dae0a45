#!/usr/bin/env python3
"""The layer check of ../shared/DESIGN.md ("Layers"): fails when a file of a
lower layer includes a header of a higher one.

Every `#include "..."` in src/, include/, apps/, tools/ and python/src is
resolved to a file of the tree and both ends are put in their layer (LAYERS,
first matching prefix). An include is fine when it stays in its layer, goes
to a lower rank, or is one of the cross edges of ALLOWED (each with its
reason). Files of the product on top (PUBLIC_ONLY: python/, apps/, tools/)
include the runtime through its public headers only (include/dlrt/): of
src/ they may use core (src/core/, CORE_UTILITIES) and nothing else, even
where the rank would allow it (runtime/, backend/, backends/, exec/, ir/,
device/ internals). Anything else must be listed in EXCEPTIONS (file, header, reason):
the known violations of today, to be removed as they are fixed. The check
fails on a new violation and on an exception that no longer occurs (so the
list only shrinks).

  check_layers.py [--root DIR] [--dot FILE] [--list] [--plant FILE:HEADER]

--dot writes the layer graph (edge labels: number of includes; dashed:
allowed cross edges, red: exceptions). --plant adds one include that is not
in the tree, to show that the check fails on it.
"""
import argparse
import collections
import os
import re
import sys

# (layer, rank, path prefixes). Lower ranks may be used by higher ones; a file
# is in the first layer one of whose prefixes it starts with.
LAYERS = [
    ("core", 0, ["src/core/", "include/dlrt/dtype.h", "include/dlrt/shape.h", "include/dlrt/status.h",
                 "include/dlrt/tensor.h", "include/dlrt/export.h", "include/dlrt/version.h", "include/dlrt/limits.h",
                 "include/dlrt/model_metadata.h"]),
    ("ir", 1, ["src/ir/"]),
    ("backend", 2, ["src/backend/", "include/dlrt/plugin.h"]),
    ("device", 2, ["src/device/", "include/dlrt/device.h"]),
    ("exec", 2, ["src/exec/"]),
    ("backends/cpu", 3, ["src/backends/cpu/"]),
    ("backends/gpu", 3, ["src/backends/gpu/"]),
    ("backends/opencl", 3, ["src/backends/opencl/"]),
    ("backends/cuda", 3, ["src/backends/cuda/"]),
    ("backends/openvino", 3, ["src/backends/openvino/"]),
    ("runtime", 4, ["src/runtime/", "include/dlrt/session.h", "include/dlrt/dlrt.h", "src/dlrt_library.cpp",
                    "include/dlrt/backends.h", "include/dlrt/compile.h", "include/dlrt/cpu_precision.h",
                    "include/dlrt/memory.h", "include/dlrt/model_info.h",
                    "include/dlrt/onnx_data.h", "include/dlrt/placement.h", "include/dlrt/profile.h",
                    "include/dlrt/precision_choice.h"]),
    # The embedding app's three parts (DESIGN.md: serve -> models -> tokenizer).
    ("apps/embed/tokenizer", 5, ["apps/embed/tokenizer/"]),
    # Images (decoding, preprocessing) use the tokenizer's folder-file helpers.
    ("apps/embed/image", 5.05, ["apps/embed/image/"]),
    ("apps/embed/models", 5.1, ["apps/embed/models/"]),
    ("apps/embed/serve", 5.2, ["apps/embed/serve/"]),
    ("apps", 5.3, ["apps/"]),
    ("tools", 6, ["tools/"]),
    ("capi", 7, ["src/capi/", "include/dlrt/dlrt_c.h"]),
    ("python", 7, ["python/"]),
]

# Edges between layers of the same rank, or from a backend folder to another,
# that the design allows, and why.
ALLOWED = {
    ("backend", "device"): "the contract pairs a backend with the discovered devices it drives "
                           "(BackendDevice::hardware is a dlrt::Device)",
    ("backends/opencl", "backends/gpu"): "the shared GPU kernels, lowering and executor OpenCL runs",
    ("backends/cuda", "backends/gpu"): "the shared GPU kernels, lowering and executor CUDA runs",
    ("backends/gpu", "backends/cpu"): "the GPU executor runs the nodes it keeps on the host with the CPU "
                                      "kernels (backends/cpu/kernel.h); the host fallback of today",
    ("capi", "apps"): "the C API's embedder wraps apps/embed",
    ("python", "apps"): "the Python package's Embedder wraps apps/embed",
}

# Layers that use the runtime through its public API only (DESIGN.md,
# "bindings ... over the public C++ API only"; issue 78): of src/ they may
# include the core utilities (Status helpers, env, npy, spelling, ThreadPool,
# tensor values, memory sizes) and nothing else.
PUBLIC_ONLY = ("python", "apps", "apps/embed/tokenizer", "apps/embed/image", "apps/embed/models", "apps/embed/serve",
               "tools")
CORE_UTILITIES = ("src/core/",)

# Known violations: (including file, included file, reason). Each is a debt
# of issue 36 part 1; remove the line with the include.
EXCEPTIONS = []

ROOTS = ["src", "include", "apps", "tools", "python/src"]
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".c", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(path):
    for name, rank, prefixes in LAYERS:
        if any(path == p or path.startswith(p) for p in prefixes):
            return name, rank
    return None, None


def resolve(root, including, header):
    """The tree file `header` names, as the build's include folders find it."""
    here = os.path.dirname(including)
    for cand in (os.path.join(here, header), "src/" + header, "include/" + header, "apps/" + header, header):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    if header == "dlrt/version.h":  # generated into the build folder from cmake/version.h.in
        return "include/dlrt/version.h"
    return None


def includes(root, plant):
    """(file, header file) for every quoted include of the tree, plus the planted one."""
    for top in ROOTS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if not n.endswith(SOURCE_SUFFIXES):
                    continue
                f = os.path.relpath(os.path.join(dirpath, n), root)
                with open(os.path.join(root, f), errors="replace") as fh:
                    text = fh.read()
                for h in INCLUDE_RE.findall(text):
                    yield f, h, resolve(root, f, h)
    if plant:
        f, h = plant.split(":", 1)
        yield f, h, resolve(root, f, h)


def check(root, plant=None):
    """(violations, stale exceptions, layer edge counts, unresolved includes)."""
    exceptions = {(f, h): why for f, h, why in EXCEPTIONS}
    seen_exceptions = set()
    violations, unresolved = [], []
    edges = collections.Counter()
    for f, h, target in includes(root, plant):
        if target is None:
            unresolved.append((f, h))
            continue
        src, src_rank = layer_of(f)
        dst, dst_rank = layer_of(target)
        if src is None or dst is None or src == dst:
            continue
        edges[(src, dst)] += 1
        if (f, target) in exceptions:
            seen_exceptions.add((f, target))
            continue
        if src in PUBLIC_ONLY and target.startswith("src/") and not target.startswith(CORE_UTILITIES):
            violations.append(f"{f} ({src}) includes {target} ({dst}), a runtime internal: use the public "
                              f"API (include/dlrt/)")
            continue
        backend_sideways = src.startswith("backends/") and dst.startswith("backends/")
        if (dst_rank < src_rank and not backend_sideways) or (src, dst) in ALLOWED:
            continue
        violations.append(f"{f} ({src}) includes {target} ({dst})")
    stale = [f"{f} -> {h}" for f, h in exceptions if (f, h) not in seen_exceptions]
    return violations, stale, edges, unresolved


def write_dot(path, edges):
    exception_edges = collections.Counter()
    for f, h, _ in EXCEPTIONS:
        exception_edges[(layer_of(f)[0], layer_of(h)[0])] += 1
    lines = ["// dlrt's layers and the includes between them (tests/layers/check_layers.py --dot; render:",
             "// dot -Tpng -Gdpi=80 docs/layers.dot -o docs/layers.png). Red: listed exceptions; dashed: allowed cross edges.",
             "digraph dlrt_layers {", '  rankdir=TB; node [shape=box, fontname="Helvetica"];']
    by_rank = collections.defaultdict(list)
    for name, rank, _ in LAYERS:
        by_rank[rank].append(name)
    for rank in sorted(by_rank):
        lines.append("  { rank=same; " + " ".join(f'"{n}";' for n in by_rank[rank]) + " }")
    for (a, b), n in sorted(edges.items()):
        style = ""
        if (a, b) in exception_edges:
            style = ', color=red, fontcolor=red, penwidth=2'
        elif (a, b) in ALLOWED or (a.startswith("backends/") and b.startswith("backends/")):
            style = ", style=dashed"
        lines.append(f'  "{a}" -> "{b}" [label="{n}"{style}];')
    lines.append("}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--dot")
    ap.add_argument("--list", action="store_true", help="print the layer edges with their counts")
    ap.add_argument("--plant", help="FILE:HEADER, one extra include to check")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    violations, stale, edges, unresolved = check(root, args.plant)
    if args.list:
        for (a, b), n in sorted(edges.items()):
            print(f"{a:18} -> {b:18} {n:3}")
    if args.dot:
        write_dot(args.dot, edges)
        print(f"layer graph: {args.dot}")
    for f, h in unresolved:
        print(f"note: {f}: #include \"{h}\" is not a file of the tree (not checked)")
    for v in violations:
        print(f"FAIL: {'upward include' if 'runtime internal' not in v else 'internal include'}: {v}")
    for s in stale:
        print(f"FAIL: exception no longer occurs, remove it from EXCEPTIONS: {s}")
    if violations or stale:
        return 1
    print(f"layers ok: {sum(edges.values())} includes across {len(edges)} layer edges, "
          f"{len(EXCEPTIONS)} listed exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
