#!/usr/bin/env bash
# The aarch64 cross build, run under user-mode QEMU on an x86-64 host (docs/platforms.md):
# `dlrt devices`, then `dlrt run` on the project's generated test models and on zoo models
# with their sample inputs, each output compared with the zoo's expected one (rtol 1e-3,
# atol 1e-4, as the zoo test) and, where an x86 build is given, with the x86 build's output.
#   scripts/test_arm64.sh BUILD_ARM64 [ZOO_DIR] [X86_BUILD]
# ZOO_DIR empty: the zoo runs are skipped (said so). Prints the time of each step.
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_ARM64 [ZOO_DIR] [X86_BUILD]}
ZOO=${2:-}
X86=${3:-}
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The multiarch loader and libraries (libc6:arm64): with -L /usr/aarch64-linux-gnu the cross
# toolchain's libc copy is mixed with them, and thread creation hung.
QEMU=(qemu-aarch64)
OUT="$BUILD/arm64_runs"
rm -rf "$OUT" && mkdir -p "$OUT"

step() { echo "== $* ($(date -u +%T))"; }

step "dlrt devices (aarch64, under qemu)"
"${QEMU[@]}" "$BUILD/dlrt" devices | tee "$OUT/devices.txt"
grep -q "isa.*neon" "$OUT/devices.txt" || { echo "test_arm64: dlrt devices names no neon" >&2; exit 1; }

# One model with named inputs: run on aarch64 (and x86 when given), compare.
run_case() {  # NAME MODEL EXPECTED_DIR INPUT_NAME=FILE...
  local name=$1 model=$2 expected=$3
  shift 3
  local args=()
  for i in "$@"; do args+=(--input "$i"); done
  step "dlrt run $name"
  "${QEMU[@]}" "$BUILD/dlrt" run "$model" "${args[@]}" --threads 2 --output-dir "$OUT/$name" > "$OUT/$name.txt"
  grep -E "placement|partition|timings" "$OUT/$name.txt"
  local other=()
  if [ -n "$X86" ]; then
    "$X86/dlrt" run "$model" "${args[@]}" --threads 2 --output-dir "$OUT/$name.x86" > "$OUT/$name.x86.txt"
    other=("$OUT/$name.x86")
  fi
  "$PYTHON" "$ROOT/scripts/compare_npy.py" "$OUT/$name" "$expected" "${other[@]}"
}

# The generated test models (x86 python writes them; they have no expected outputs, so each
# is compared with the x86 build's output only).
if [ -n "$X86" ]; then
  "$PYTHON" "$ROOT/tests/models/make_test_models.py" "$BUILD/test_models" > /dev/null
  for m in mlp conv_net; do
    step "dlrt run $m (seeded random inputs)"
    "${QEMU[@]}" "$BUILD/dlrt" run "$BUILD/test_models/$m.onnx" --seed 1 --threads 2 --output-dir "$OUT/$m" > "$OUT/$m.txt"
    "$X86/dlrt" run "$BUILD/test_models/$m.onnx" --seed 1 --threads 2 --output-dir "$OUT/$m.x86" > "$OUT/$m.x86.txt"
    "$PYTHON" "$ROOT/scripts/compare_npy.py" "$OUT/$m" "$OUT/$m.x86"
  done
fi

if [ -z "$ZOO" ]; then
  echo "test_arm64: no zoo folder given: the zoo runs are skipped"
  exit 0
fi
Z=$ZOO/minilm_l6/b1s16
run_case minilm_l6_b1s16 "$ZOO/minilm_l6.onnx" "$Z/expected" \
  input_ids="$Z/input_ids.npy" attention_mask="$Z/attention_mask.npy" token_type_ids="$Z/token_type_ids.npy"
run_case resnet18_b1 "$ZOO/resnet18.onnx" "$ZOO/resnet18/b1/expected" input="$ZOO/resnet18/b1/input.npy"
echo "test_arm64: all passed"
