#!/usr/bin/env bash
# The Python package's tests against a build folder (default: build):
# installs the pinned tools into BUILD/python-venv/venv (scripts/setup_venv.sh;
# a venv of its own, so its numpy pin cannot disturb BUILD/venv's openvino and
# onnxruntime, nor theirs this one), builds the
# module dlrt._dlrt there (-DDLRT_BUILD_PYTHON=ON with the venv's python and
# nanobind: only the module's own files compile, the libraries are the
# folder's), runs pytest on tests/python with PYTHONPATH=BUILD/python, and puts
# the folder's DLRT_BUILD_PYTHON setting back, so `make build` never depends
# on the venv. The last line is the summary scripts/run_tests.sh shows.
# Exit 0 only when the tests ran and passed; a pip failure (no PyPI) fails.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
JOBS=${JOBS:-$(nproc)}
# The pinned tools (scripts/pins.sh): nanobind, pytest, numpy, Ray Data.
. "$ROOT/scripts/pins.sh"
PYTHON_PACKAGES=$PYTHON_TEST_PACKAGES

if grep -qE '^DLRT_(SANITIZE|FUZZ):BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  # An ASan-built module cannot load into an uninstrumented python.
  echo "skipped (a sanitizer build: the module would need libasan preloaded into python; make test runs it)"
  exit 0
fi
was_on=$(grep -c '^DLRT_BUILD_PYTHON:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null)
restore() {
  if [ "$was_on" = 0 ]; then cmake -S "$ROOT" -B "$BUILD" -DDLRT_BUILD_PYTHON=OFF > /dev/null 2>&1; fi
}
trap restore EXIT

if ! PY=$("$ROOT/scripts/setup_venv.sh" "$BUILD/python-venv" $PYTHON_PACKAGES | tail -n 1); then
  echo "FAILED: pip could not install $PYTHON_PACKAGES into $BUILD/python-venv/venv (PyPI unreachable?)"
  exit 1
fi
if ! ls "$BUILD"/st-reference/sentence_transformers-"${QUANTIZE_REFERENCE_WHEEL#*==}"-*.whl > /dev/null 2>&1 &&
   ! "$PY" -m pip download --disable-pip-version-check -q --no-deps -d "$BUILD/st-reference" \
       "$QUANTIZE_REFERENCE_WHEEL" > /dev/null 2>&1; then
  echo "FAILED: pip could not download $QUANTIZE_REFERENCE_WHEEL into $BUILD/st-reference (PyPI unreachable?)"
  exit 1
fi
if ! cmake -S "$ROOT" -B "$BUILD" -DDLRT_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY" > "$BUILD/python_configure.log" 2>&1; then
  tail -20 "$BUILD/python_configure.log"
  echo "FAILED: configuring with -DDLRT_BUILD_PYTHON=ON (see $BUILD/python_configure.log)"
  exit 1
fi
if ! cmake --build "$BUILD" -j "$JOBS" --target _dlrt > "$BUILD/python_build.log" 2>&1; then
  grep -E 'error|FAILED' "$BUILD/python_build.log" | head -20
  echo "FAILED: building the module _dlrt (see $BUILD/python_build.log)"
  exit 1
fi
out=$(cd "$ROOT" && PYTHONPATH="$BUILD/python" DLRT_TEST_MODELS="${DLRT_TEST_MODELS:-$BUILD/test_models}" \
      "$PY" -m pytest -q -rs --durations=10 -p no:cacheprovider "$ROOT/tests/python" 2>&1)
rc=$?
echo "$out" | tail -40
summary=$(echo "$out" | grep -E '^=* ?[0-9]+ (passed|failed|skipped|error)' | tail -1 | sed -E 's/^=+ //; s/ =+$//')
summary=${summary:-no pytest summary (exit $rc)}
if [ $rc -ne 0 ]; then echo "FAILED ($summary)"; exit 1; fi
echo "ok ($summary)"
