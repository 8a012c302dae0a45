#!/usr/bin/env bash
# Builds dlrt's source distribution (what `make sdist` runs): scikit-build-core's
# sdist (pyproject.toml: the git-tracked tree, plus the pinned onnx sources in
# third_party/ that the build compiles, without build folders), with the pinned
# tools (scripts/pins.sh: WHEEL_BUILD_TOOLS in build-wheel/tools-X.Y), then checks
# its contents: what the build needs is in, no build folder is.
#   scripts/build_sdist.sh [OUT_DIR]   (default build-wheel/sdist)
# The last line printed is the sdist's path. Exit 1 on any failure.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build-wheel/sdist}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
. "$ROOT/scripts/pins.sh"
PYTHON=${DLRT_VENV_PYTHON:-python3}
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { echo "FAILED: no $PYTHON"; exit 1; }
fail() { echo "FAILED: $*"; exit 1; }

# The onnx sources go into the sdist: they must be here (a download now, never at build time).
"$ROOT/scripts/fetch_onnx.sh" || fail "scripts/fetch_onnx.sh could not put the onnx $ONNX_SOURCE_VERSION sources in third_party/"
# shellcheck disable=SC2086
PY=$("$ROOT/scripts/setup_venv.sh" "$ROOT/build-wheel/tools-$pyver" $WHEEL_BUILD_TOOLS | tail -n 1) ||
  fail "pip could not install the build tools ($WHEEL_BUILD_TOOLS) (PyPI unreachable?)"

rm -f "$OUT"/dlrt-*.tar.gz
(cd "$ROOT" && "$PY" -c 'import sys; from scikit_build_core.build import build_sdist; print(build_sdist(sys.argv[1]))' "$OUT") ||
  fail "scikit-build-core could not build the sdist"
sdist=$(ls "$OUT"/dlrt-*.tar.gz 2>/dev/null | head -1)
[ -n "$sdist" ] || fail "no dlrt-*.tar.gz in $OUT"

list=$(tar tzf "$sdist") || fail "cannot list $sdist"
top=$(echo "$list" | head -1 | cut -d/ -f1)
for need in pyproject.toml CMakeLists.txt LICENSE cmake/python.cmake python/src/module.cpp \
            "third_party/onnx-$ONNX_SOURCE_VERSION/onnx/onnx-ml.proto" \
            "third_party/onnx-$ONNX_SOURCE_VERSION/onnx/defs/schema.cc" "third_party/onnx-$ONNX_SOURCE_VERSION/LICENSE"; do
  grep -qx "$top/$need" <<< "$list" || fail "$(basename "$sdist") lacks $need"
done
bad=$(echo "$list" | grep -E "^$top/(build[^/]*|\.cache|\.git|\.gpukit)/|/__pycache__/|/onnx/backend/test/data/" | head -3)
[ -z "$bad" ] || fail "$(basename "$sdist") holds what it must not: $bad"
echo "ok: $(echo "$list" | grep -vc '/$') files, $(du -k "$sdist" | cut -f1) KiB; the onnx $ONNX_SOURCE_VERSION sources in, no build folder"
echo "$sdist"
