#!/usr/bin/env bash
# Runs every test against a built build folder (default: build):
#   1. the unit and CLI tests (ctest, all but the zoo test),
#   2. `dlrt conformance` over ONNX's backend test data, compared with
#      tests/conformance/expected_passing.txt (any expected case that does not
#      pass is a failure; the full log is in BUILD/conformance.log),
#   3. the model-zoo test (ctest -R Zoo; skipped unless DLRT_ZOO_DIR is set),
#   and the real-OpenVINO tests a second time against a 2024.x wheel.
# Then prints the totals. Exit status 0 only when all three pass.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
JOBS=${JOBS:-$(nproc)}
TESTDATA=${DLRT_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
EXPECTED=${DLRT_CONFORMANCE_EXPECTED:-$ROOT/tests/conformance/expected_passing.txt}
export DLRT_TEST_MODELS="$BUILD/test_models"

if [ ! -x "$BUILD/dlrt" ]; then
  echo "run_tests: $BUILD/dlrt is missing; build first (make build)" >&2
  exit 1
fi
if [ ! -f "$DLRT_TEST_MODELS/STAMP" ]; then
  /usr/bin/python3 "$ROOT/tests/models/make_test_models.py" "$DLRT_TEST_MODELS" || exit 1
fi

echo "== unit tests (ctest)"
# (OvDoubleChild.* are not tests of their own: OvDouble.* runs them in child processes.)
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" -E '^(Zoo|OvDoubleChild)\.' 2>&1 | tee "$BUILD/ctest.log"
unit_rc=${PIPESTATUS[0]}
# Skipped tests are listed in the totals, so a green run never hides one.
unit_skipped=$(grep -oE 'Test +#[0-9]+: [A-Za-z0-9_.]+ \.+\*+Skipped' "$BUILD/ctest.log" | awk '{print $3}' | sort | tr '\n' ' ')

# The real-OpenVINO tests once more against a 2024.x wheel (the element-type
# numbering before 2025.1), in a venv of its own; skipped with the reason when
# pip cannot install it. DLRT_OPENVINO_OLD_VERSION= (empty) leaves it out.
OV_OLD=${DLRT_OPENVINO_OLD_VERSION-2024.6.0}
ov_old_state="not run (DLRT_OPENVINO_OLD_VERSION is empty)"
if [ -n "$OV_OLD" ] && [ -z "${DLRT_OPENVINO_TEST_VERSION:-}" ]; then
  echo
  echo "== real OpenVINO $OV_OLD (ctest -R RealOpenVino, DLRT_OPENVINO_TEST_VERSION=$OV_OLD)"
  ov_out=$(DLRT_OPENVINO_TEST_VERSION=$OV_OLD ctest --test-dir "$BUILD" --output-on-failure -R '^RealOpenVino\.' 2>&1)
  ov_rc=$?
  echo "$ov_out" | grep -E 'Passed|Failed|Skipped|tests passed|Failure' | sed -E 's/ +\.\.\.+ */ /'
  [ $ov_rc -ne 0 ] && echo "$ov_out" | tail -40
  if [ $ov_rc -ne 0 ]; then ov_old_state="FAILED"; unit_rc=1
  elif echo "$ov_out" | grep -q 'Skipped'; then ov_old_state="skipped (see the reasons above)"
  else ov_old_state="ok"; fi
fi

echo
echo "== ONNX conformance ($TESTDATA/{node,pytorch-converted,pytorch-operator,simple})"
dirs=()
for d in node pytorch-converted pytorch-operator simple; do
  [ -d "$TESTDATA/$d" ] && dirs+=("$TESTDATA/$d")
done
conf_line="not run"
if [ ${#dirs[@]} -eq 0 ]; then
  echo "no ONNX backend test data under $TESTDATA (install libonnx-testdata)"
  conf_rc=1
else
  args=(conformance "${dirs[@]}" --list-passing "$BUILD/conformance_passing.txt")
  if [ -f "$EXPECTED" ]; then
    args+=(--expect "$EXPECTED")
  else
    echo "note: $EXPECTED does not exist; nothing is checked for regressions (create it with 'make update-expected')"
  fi
  "$BUILD/dlrt" "${args[@]}" > "$BUILD/conformance.log"
  conf_rc=$?
  if [ $conf_rc -ge 128 ]; then
    echo "dlrt conformance crashed (exit $conf_rc); last lines of $BUILD/conformance.log:"
    tail -5 "$BUILD/conformance.log"
  fi
  # Without an expected list, failing cases are reported but not fatal.
  if [ ! -f "$EXPECTED" ] && [ $conf_rc -eq 1 ]; then conf_rc=0; fi
  conf_line=$(grep '^conformance:' "$BUILD/conformance.log" | tail -1)
  skipped=$(grep -c '^SKIP ' "$BUILD/conformance.log")
  echo "${conf_line:-no totals (see $BUILD/conformance.log)}; $skipped training-only cases skipped"
  echo "(per-case results: $BUILD/conformance.log; passing cases: $BUILD/conformance_passing.txt)"
fi

echo
echo "== model zoo (DLRT_ZOO_DIR=${DLRT_ZOO_DIR:-unset})"
zoo_out=$(ctest --test-dir "$BUILD" --output-on-failure -V -R '^Zoo\.' 2>&1)
zoo_rc=$?
echo "$zoo_out" | grep -E 'zoo:|Skipped|DLRT_ZOO_DIR is not set|Failure|MISMATCH|exit code' | sed -E 's/^[0-9]+: //'
if echo "$zoo_out" | grep -q 'DLRT_ZOO_DIR is not set'; then zoo_state="skipped (DLRT_ZOO_DIR not set)"
elif [ $zoo_rc -eq 0 ]; then zoo_state="ok ($(echo "$zoo_out" | grep -oE '[0-9]+ of [0-9]+ cases match' | tail -1))"
else zoo_state="FAILED"; fi

echo
echo "== totals"
if [ $unit_rc -eq 0 ]; then echo "unit tests:  ok"; else echo "unit tests:  FAILED"; fi
if [ -n "$unit_skipped" ]; then
  echo "skipped:     $unit_skipped(each printed its reason above)"
fi
if [ $conf_rc -eq 0 ]; then echo "conformance: ok -- $conf_line"; else echo "conformance: FAILED -- $conf_line"; fi
echo "zoo:         $zoo_state"
echo "openvino $OV_OLD: $ov_old_state"
[ $unit_rc -eq 0 ] && [ $conf_rc -eq 0 ] && [ $zoo_rc -eq 0 ]
