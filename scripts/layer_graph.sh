#!/usr/bin/env bash
# The layer graph of the build: the layer libraries (CMakeLists.txt, DLRT_LAYERS) and their
# dependencies, from CMake's --graphviz, as DOT and, when Graphviz's `dot` is installed, SVG.
#   scripts/layer_graph.sh BUILD_DIR OUT_PREFIX     writes OUT_PREFIX.dot (and OUT_PREFIX.svg)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_PREFIX" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
OUT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$BUILD/CMakeGraphVizOptions.cmake"' EXIT
# Only static libraries named dlrt_*, not the embedding app's nor the tests' helpers.
cat > "$BUILD/CMakeGraphVizOptions.cmake" <<'OPTS'
foreach(kind EXECUTABLES SHARED_LIBS MODULE_LIBS INTERFACE_LIBS OBJECT_LIBS UNKNOWN_LIBS EXTERNAL_LIBS
             GENERATE_PER_TARGET GENERATE_DEPENDERS)
  set(GRAPHVIZ_${kind} FALSE)
endforeach()
set(GRAPHVIZ_IGNORE_TARGETS "^dlrt_embed|^nanobind|^dlrt_plugin|^dlrt_cuda_double|^dlrt_ov_double|^gtest|^gmock")
OPTS
cmake --graphviz="$TMP/graph.dot" "$BUILD" > /dev/null
# Drop CMake's legend.
awk '/subgraph clusterLegend/ {skip = 1} skip && /^}/ {skip = 0; next} !skip' "$TMP/graph.dot" > "$OUT.dot"
echo "layer_graph: $OUT.dot"
if command -v dot > /dev/null; then
  dot -Tsvg "$OUT.dot" -o "$OUT.svg"
  echo "layer_graph: $OUT.svg"
fi
