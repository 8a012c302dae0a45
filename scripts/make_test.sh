#!/usr/bin/env bash
# `make test`: every check of the project, then the time each phase took.
#   1. the Debian packages (scripts/install_deps.sh test),
#   2. the Release build with warnings as errors, while the pinned PyPI
#      tools of the later phases install into their venvs in the background
#      (scripts/prepare_venvs.sh: network, not CPU),
#   3. scripts/run_tests.sh (unit and CLI tests, OpenVINO matrix, conformance,
#      zoo, install, Python, wheel), which records its own phases,
#   4. the fuzz smoke run: the harnesses of fuzz/ in the Release build
#      (dlrt_fuzz_smoke, cmake/fuzz.cmake) on their regression inputs, seeds and
#      seeded random mutations (scripts/run_fuzz.sh BUILD smoke). The sanitizer
#      fuzz build with libFuzzer is `make fuzz`'s.
#   5. with DLRT_TEST_ARM64=1 (.ci/run): `make test-arm64`'s cross build and its
#      runs under qemu-aarch64 (scripts/test_arm64.sh), each a phase.
#   6. with DLRT_TEST_AVX2_CPU=1 (.ci/run): `make test-avx2-cpu`'s runs of this build under
#      qemu-x86_64 as AVX2-only CPUs (scripts/test_avx2_cpu.sh), each a phase.
# The table at the end lists every phase, slowest first, and the wall-clock
# total: a phase that grows shows in every run. The exit status is non-zero
# when any phase failed; each phase still runs after an earlier one failed,
# except those that need the build.
# Env (the Makefile passes them): BUILD, JOBS, WERROR, PYTHON, TESTDATA,
# ZOO_DIR; DLRT_TEST_ARM64, DLRT_TEST_AVX2_CPU.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-/usr/bin/python3}
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
export JOBS
# The wheel's compile commands as build/'s, so that ccache reuses its objects (scripts/build_wheel.sh).
export DLRT_WHEEL_WERROR=${WERROR:-ON}

. "$ROOT/scripts/phases.sh"
mkdir -p "$BUILD"
export DLRT_PHASE_START
DLRT_PHASE_START=$(phase_now)
export DLRT_PHASE_LOG="$ROOT/$BUILD/test_phases.tsv"
: > "$DLRT_PHASE_LOG"

rc=0
phase "deps (scripts/install_deps.sh test)" bash scripts/install_deps.sh test || exit 1

# The venvs' downloads overlap the compile; a later user of a venv waits on
# its lock (scripts/setup_venv.sh), and installs itself what is still missing.
echo "== pinned PyPI tools into their venvs, in the background (log $BUILD/prepare_venvs.log)"
(
  t0=$(phase_now)
  bash scripts/prepare_venvs.sh "$BUILD" > "$BUILD/prepare_venvs.log" 2>&1
  phase_record "pip: the test venvs (background, during the build)" "$(phase_since "$t0")" $?
) &
venvs_pid=$!

phase "build (Release, -Werror)" make --no-print-directory build BUILD="$BUILD" WERROR="${WERROR:-ON}" JOBS="$JOBS" ||
  { wait $venvs_pid; phase_report; exit 1; }
phase "test models" make --no-print-directory "$BUILD/test_models/STAMP" BUILD="$BUILD" PYTHON="$PYTHON" || rc=1

# The tests do not wait for the venvs: each one that needs a venv takes its lock.
DLRT_ONNX_TESTDATA="$TESTDATA" DLRT_ZOO_DIR="${ZOO_DIR:-}" bash scripts/run_tests.sh "$BUILD" 2>&1 |
  tee "$BUILD/run_tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
wait $venvs_pid

echo
echo "== fuzz smoke run (scripts/run_fuzz.sh $BUILD smoke)"
phase "fuzz smoke (dlrt_fuzz_smoke, $JOBS harnesses at a time)" env DLRT_TEST_MODELS="$ROOT/$BUILD/test_models" \
  bash scripts/run_fuzz.sh "$BUILD" smoke || rc=1

# The aarch64 cross build and its runs under qemu-aarch64 (make test-arm64), when
# DLRT_TEST_ARM64=1 (.ci/run sets it): after the x86 phases, whose build it compares with.
if [ "${DLRT_TEST_ARM64:-0}" = 1 ]; then
  echo
  echo "== aarch64: cross build, then the tests under qemu-aarch64 (make test-arm64)"
  if phase "arm64: cross build (build-arm64: library, CLI, unit tests)" make --no-print-directory build-arm64-tests \
    WERROR="${WERROR:-ON}" JOBS="$JOBS"; then
    JOBS=$JOBS TESTDATA=$TESTDATA PYTHON=$PYTHON bash scripts/test_arm64.sh build-arm64 "${ZOO_DIR:-}" "$BUILD" || rc=1
  else
    rc=1
  fi
fi

# This build's binaries under qemu-x86_64 as AVX2-only CPUs (make test-avx2-cpu), when
# DLRT_TEST_AVX2_CPU=1: after the phases that made the quantized zoo and the venv it uses.
if [ "${DLRT_TEST_AVX2_CPU:-0}" = 1 ]; then
  echo
  echo "== AVX2-only CPUs under qemu-x86_64 (make test-avx2-cpu)"
  JOBS=$JOBS PYTHON=$PYTHON bash scripts/test_avx2_cpu.sh "$BUILD" "${ZOO_DIR:-}" || rc=1
fi

phase_report
# What failed, last, where a reader of only the log's tail (a CI summary) sees it.
if [ $rc -ne 0 ]; then
  echo
  echo "== what failed"
  awk -F '\t' '$3 != 0 { print "phase " $1 ": exit " $3 }' "$DLRT_PHASE_LOG"
  grep -E '^[a-zA-Z ]+: +FAILED' "$BUILD/run_tests.log" 2>/dev/null | head -12
  sed -n '/The following tests FAILED/,$p' "$BUILD/ctest.log" 2>/dev/null | grep -E '^[[:space:]]+[0-9]+ - ' | head -12 |
    sed -E 's/^[[:space:]]+/ctest /'
  ls "$BUILD"/fuzz-smoke/crashes/*/* 2>/dev/null | head -5 | sed 's/^/fuzz crash: /'
fi
if [ $rc -eq 0 ]; then echo "make test: ok"; else echo "make test: FAILED (see the phases above)"; fi
exit $rc
