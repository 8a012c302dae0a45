#!/usr/bin/env bash
# `make test-quick`: the edit-test loop on a built tree (a few minutes; `make
# test` runs everything). Runs against BUILD (default build):
#   1. ctest without the slow tests below (each has a faster sibling here),
#   2. the ONNX conformance suite against tests/conformance/expected_passing.txt,
#      and that of the onnx release dlrt is built from (scripts/conformance_onnx.sh),
#   3. the zoo (ctest -R Zoo) when DLRT_ZOO_DIR is set, with the quantized zoo
#      when an earlier `make test` made it (BUILD/quant_zoo).
# Left out, all run by `make test`: the real-OpenVINO tests (pip), the clients
# against dlrt serve and its /docs in Chromium (pip), the 20 s load test, the allocation counts of the
# zoo, the kernel tests as other CPUs run them (other_cpus.*), the
# differential test over every backend, the OpenVINO canary against
# crashing/hanging doubles, the OpenVINO matrix, install, Python, wheel, fuzz.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
JOBS=${JOBS:-$(nproc)}
TESTDATA=${DLRT_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
export DLRT_TEST_MODELS="$BUILD/test_models"
SLOW='^(Zoo|OvDoubleChild|RealOpenVino|ServeLoad|RunAllocations|other_cpus)\.|^serve\.(clients|docs_browser)$|^Differential\.EveryBackendMatchesCpu$|^OvDouble\.CanaryRejects'
start=$SECONDS

echo "== unit and CLI tests (ctest -j $JOBS, without: $SLOW)"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" -E "$SLOW" > "$BUILD/ctest_quick.log" 2>&1
unit_rc=$?
# The totals, and the failed tests' list when there is one.
sed -n -e '/tests passed, /p' -e '/The following tests FAILED/,$p' "$BUILD/ctest_quick.log"

echo "== ONNX conformance"
dirs=()
for d in node pytorch-converted pytorch-operator simple; do
  [ -d "$TESTDATA/$d" ] && dirs+=("$TESTDATA/$d")
done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "no ONNX backend test data under $TESTDATA (make deps installs libonnx-testdata)"
  conf_rc=1
else
  "$BUILD/dlrt" conformance "${dirs[@]}" --expect "$ROOT/tests/conformance/expected_passing.txt" > "$BUILD/conformance.log"
  conf_rc=$?
  grep -E '^(dlrt conformance|conformance):' "$BUILD/conformance.log" | tail -2
fi
echo "== ONNX conformance of the release the model layer is built from"
bash "$ROOT/scripts/conformance_onnx.sh" "$BUILD" || conf_rc=1

echo "== model zoo (DLRT_ZOO_DIR=${DLRT_ZOO_DIR:-unset})"
[ -f "$BUILD/quant_zoo/STAMP" ] && export DLRT_QUANT_ZOO_DIR="$BUILD/quant_zoo"
[ -f "$BUILD/wild_set/STAMP" ] && export DLRT_WILD_DIR="$BUILD/wild_set"
[ -f "$BUILD/trained-int8-set/STAMP" ] && export DLRT_TRAINED_INT8_DIR="$BUILD/trained-int8-set/set"
zoo_out=$(ctest --test-dir "$BUILD" --output-on-failure -V -R '^Zoo\.' 2>&1)
zoo_rc=$?
echo "$zoo_out" | grep -E '^([0-9]+: )?((quantized )?zoo|wild set): [0-9]+ of|DLRT_ZOO_DIR is not set|Failure|MISMATCH' | sed -E 's/^[0-9]+: //'

echo "== test-quick: $((SECONDS - start)) s; unit $([ $unit_rc -eq 0 ] && echo ok || echo FAILED)," \
     "conformance $([ $conf_rc -eq 0 ] && echo ok || echo FAILED), zoo $([ $zoo_rc -eq 0 ] && echo ok || echo FAILED)"
[ $unit_rc -eq 0 ] && [ $conf_rc -eq 0 ] && [ $zoo_rc -eq 0 ]
