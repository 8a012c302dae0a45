#!/usr/bin/env bash
# `dlrt conformance` on the backend test cases of the onnx release dlrt's model
# layer is built from (scripts/pins.sh: ONNX_SOURCE_VERSION): the node cases,
# generated from the PyPI wheel's collectors into BUILD/onnx-testdata-<version>
# (once; tests/conformance/make_onnx_testdata.py), and the pytorch-converted,
# pytorch-operator and simple cases the wheel ships.
#   scripts/conformance_onnx.sh BUILD [--update]
# Without --update: every case of tests/conformance/expected_passing_onnx-<version>.txt
# must pass (exit 1 and the names otherwise); the log is BUILD/conformance_onnx.log,
# the passing cases BUILD/conformance_onnx_passing.txt. --update rewrites that list.
# Prints the totals line and the share of cases passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: conformance_onnx.sh BUILD [--update]}
. "$ROOT/scripts/pins.sh"
VER=$ONNX_SOURCE_VERSION
DATA="$BUILD/onnx-testdata-$VER"
EXPECTED="$ROOT/tests/conformance/expected_passing_onnx-$VER.txt"
if [ ! -f "$DATA/.complete" ]; then
  # shellcheck disable=SC2086
  if ! py=$("$ROOT/scripts/setup_venv.sh" "$BUILD" $CONFORMANCE_PACKAGES | tail -1); then
    echo "conformance_onnx: cannot install $CONFORMANCE_PACKAGES (pip failed; no network?)" >&2
    exit 1
  fi
  rm -rf "$DATA"
  if ! "$py" "$ROOT/tests/conformance/make_onnx_testdata.py" "$DATA" > "$BUILD/onnx-testdata.log" 2>&1; then
    echo "conformance_onnx: generating the onnx $VER test cases failed; see $BUILD/onnx-testdata.log" >&2
    exit 1
  fi
  touch "$DATA/.complete"
fi
args=(conformance "$DATA/node" "$DATA/pytorch-converted" "$DATA/pytorch-operator" "$DATA/simple"
      --list-passing "$BUILD/conformance_onnx_passing.txt")
if [ "${2:-}" = --update ]; then
  "$BUILD/dlrt" "${args[@]}" > "$BUILD/conformance_onnx.log"
  cp "$BUILD/conformance_onnx_passing.txt" "$EXPECTED"
  rc=0
  echo "wrote $EXPECTED ($(wc -l < "$EXPECTED") cases)"
else
  "$BUILD/dlrt" "${args[@]}" --expect "$EXPECTED" > "$BUILD/conformance_onnx.log"
  rc=$?
  if [ $rc -ge 128 ]; then
    echo "dlrt conformance crashed (exit $rc); last lines of $BUILD/conformance_onnx.log:"
    tail -5 "$BUILD/conformance_onnx.log"
  fi
fi
line=$(grep '^conformance:' "$BUILD/conformance_onnx.log" | tail -1)
read -r passed failed unsupported < <(echo "$line" | sed -E 's/conformance: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) unsupported/\1 \2 \3/')
total=$((passed + failed + unsupported))
skipped=$(grep -c '^SKIP ' "$BUILD/conformance_onnx.log")
echo "onnx $VER: $line; $(awk -v p="$passed" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * p / t : 0 }')% of $total cases pass; $skipped training-only cases skipped" | tee -a "$BUILD/conformance_onnx.log"
exit $rc
