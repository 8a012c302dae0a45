#!/usr/bin/env bash
# The sdist a user builds from source (step 7 of scripts/run_tests.sh; `make test-sdist`):
#   1. scripts/build_sdist.sh: dlrt-<version>.tar.gz and the check of its contents,
#   2. a fresh venv (CPython 3.11, or $DLRT_VENV_PYTHON) in a temporary folder and
#      `pip install dlrt-<version>.tar.gz` into it: pip's isolated build (the
#      pinned scikit-build-core and nanobind of pyproject.toml from PyPI) compiles
#      the whole library from the sdist alone; nothing else is downloaded,
#   3. tests/wheel/check_wheel.py from there (zoo model, embedder, OpenVINO absent),
#      as scripts/test_wheel.sh runs it on the wheels.
# Compiling the library takes ~20 CPU-minutes without ccache; with ccache (on PATH,
# as make build uses it) and the wheel's compile flags, a tree compiled before by
# `make wheel` with the same WERROR is reused: the unpacked sdist sits in pip's
# temporary folder, so CCACHE_BASEDIR is set to that folder's parent (TMPDIR).
# Env: DLRT_WHEEL_WERROR (ON/OFF, default OFF: pyproject.toml's), DLRT_ZOO_DIR.
# The last line is the summary. Exit 0 only when the sdist built, installed and passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
. "$ROOT/scripts/pins.sh"
. "$ROOT/scripts/wheel_pythons.sh"
# CPython 3.11 as the cp311 wheel's build (scripts/wheel_pythons.sh), so that ccache finds its objects.
PYTHON=${DLRT_VENV_PYTHON:-$(wheel_python 3.11 || echo python3)}
WERROR=${DLRT_WHEEL_WERROR:-OFF}
start=$(date +%s)
fail() { echo "FAILED: $*"; exit 1; }

out=$("$ROOT/scripts/build_sdist.sh" 2>&1)
r=$?
echo "$out"
[ $r -eq 0 ] || fail "building the sdist: $(echo "$out" | tail -1)"
sdist=$(echo "$out" | tail -1)

tmp=$(mktemp -d /tmp/dlrt-sdist-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
"$PYTHON" -m venv "$tmp/venv" || fail "$PYTHON -m venv"
VPY=$tmp/venv/bin/python
var="WHEEL_TEST_NUMPY_$("$VPY" -c 'import sys; print("%d_%d" % sys.version_info[:2])')"
numpy=${!var:-$WHEEL_TEST_NUMPY}
echo "== fresh venv $tmp/venv: pip install $(basename "$sdist") $numpy (log $ROOT/build-wheel/sdist_install.log)"
t0=$(date +%s)
if ! env TMPDIR="$tmp" CCACHE_BASEDIR="$tmp" CC=cc CXX=c++ CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-$(nproc)}" \
     "$VPY" -m pip install --disable-pip-version-check -v "$sdist" "$numpy" \
       --config-settings=cmake.define.DLRT_WERROR="$WERROR" > "$ROOT/build-wheel/sdist_install.log" 2>&1; then
  grep -E 'CMake Error|dlrt needs|error:|ERROR' "$ROOT/build-wheel/sdist_install.log" | head -10
  fail "pip install $(basename "$sdist") (see $ROOT/build-wheel/sdist_install.log)"
fi
echo "built and installed in $(( $(date +%s) - t0 )) s"
env -u PYTHONPATH -u VIRTUAL_ENV -u OPENVINO_LIB_PATH -u DLRT_DEVICE DLRT_ZOO_DIR="$ZOO" \
  "$VPY" -I "$ROOT/tests/wheel/check_wheel.py" --embed-data "$ROOT/tests/embed/data" --source "$ROOT" --openvino absent ||
  fail "the sdist's build in a fresh venv (tests/wheel/check_wheel.py)"
echo "ok ($(basename "$sdist") built by pip in a fresh venv: zoo, embedder; $(( $(date +%s) - start )) s)"
