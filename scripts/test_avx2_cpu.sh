#!/usr/bin/env bash
# `make test-avx2-cpu`'s runs: the x86-64 build's own binaries under user-mode QEMU as CPUs with
# AVX2 + FMA and neither AVX-512 nor VNNI (docs/testing.md "An AVX2-only CPU, emulated"), each
# step a phase (scripts/phases.sh):
#   1. per CPU model (DLRT_AVX2_CPUS, default "EPYC-Milan Haswell": an AMD Zen 3 with AMD's cpuid
#      cache leaves, an Intel Haswell), `dlrt devices` (its ISA line must name avx2 and fma and
#      not avx512f) and `dlrt run` of the small conv net, whose placement line must say "avx2
#      vectors",
#   2. the CPU kernel and CPU detection tests (the suites of tests/cpu/ and tests/device/) under
#      the first model, through ctest (tests/avx2cpu/emulated_ctest.py: each test binary of BUILD
#      under qemu-x86_64), but those named in tests/avx2cpu/excluded.txt; DLRT_AVX2_TESTS=isa
#      runs only the suites per vector width or ISA and the 8-bit ones (.ci/run), =all every unit
#      test (over an hour on 2 loaded cores), or a ctest regex,
#   3. the 8-bit kernel tests (GemmInt8, Int8Kernel, Igemm, QuantizeKernels, ContribQuant) under
#      the other models,
#   4. the model zoo test under the first model: a sample of ZOO_DIR (DLRT_AVX2_ZOO, the same
#      kernel families as test-arm64's sample) and of the quantized zoo BUILD/quant_zoo that
#      `make test` makes (DLRT_AVX2_QUANT_ZOO), whose int8 references do not depend on the CPU
#      that made them (tests/models/int8_reference.py),
#   5. with BUILD/venv (the quantized zoo's): tests/models/check_int8_reference.py with ONNX
#      Runtime itself under the Intel model, where its uint8 x int8 kernels saturate: the probe
#      must find that, and the zoo check must reject ONNX Runtime's own saturated outputs as a
#      reference.
# Nothing here is timed: QEMU's TCG translates every instruction, so speed says nothing of the
# silicon. The CPU models' cpuid (features, cache leaves, brand) is QEMU's.
#   scripts/test_avx2_cpu.sh BUILD [ZOO_DIR]
# Env: JOBS (ctest processes, default 2), DLRT_AVX2_CPUS, DLRT_AVX2_TESTS, DLRT_AVX2_ZOO and
# DLRT_AVX2_QUANT_ZOO ("model/case ..." or "all").
set -uo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD [ZOO_DIR]}" && pwd)
ZOO=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
JOBS=${JOBS:-2}
read -r -a CPUS <<< "${DLRT_AVX2_CPUS:-EPYC-Milan Haswell}"
. "$ROOT/scripts/zoo_sample.sh"  # the same sample as test-arm64's
ZOO_SAMPLE=${DLRT_AVX2_ZOO:-$ZOO_SAMPLE_DEFAULT}
# The quantized cases that failed against ONNX Runtime's references on a Zen 3 (issue 81), one
# each: static QDQ and QOp convolutions, per-channel dynamic qint8, QAttention u8s8. The whole
# quantized zoo takes over an hour under TCG (DLRT_AVX2_QUANT_ZOO=all).
QUANT_SAMPLE=${DLRT_AVX2_QUANT_ZOO:-"resnet18_static_qdq/b1 resnet18_static_qop/b1 mobilenet_v2_static_qdq/b1 efficientnet_b0_static_qop/b1 minilm_l6_ort_optimized_dynamic_qint8_per_channel/b1s16 gpt_small_ort_optimized_dynamic_qint8/b1s32 ms_qattention_u8s8_per_column/c0"}
OUT="$BUILD/avx2_cpu_runs"
rm -rf "$OUT" && mkdir -p "$OUT"
. "$ROOT/scripts/phases.sh"
failed=()
step() { echo; echo "== avx2 cpu: $* ($(date -u +%T))"; }

if ! command -v qemu-x86_64 > /dev/null; then
  echo "test_avx2_cpu: qemu-x86_64 is missing (scripts/install_deps.sh test-arm64 installs qemu-user)" >&2
  exit 1
fi
[ -x "$BUILD/dlrt" ] && [ -x "$BUILD/tests/dlrt_tests" ] || { echo "test_avx2_cpu: build $BUILD first (make build)" >&2; exit 1; }
[ -f "$BUILD/test_models/STAMP" ] || "$PYTHON" "$ROOT/tests/models/make_test_models.py" "$BUILD/test_models" > /dev/null || exit 1
export DLRT_TEST_MODELS="$BUILD/test_models"

# MODEL with the features QEMU's TCG cannot emulate turned off: the cpuid the guest sees is the
# same (QEMU drops them anyway), without a warning per feature on every start, which the CLI tests
# would read as part of dlrt's output.
cpu_spec() {
  local flags
  flags=$(qemu-x86_64 -cpu "$1" /bin/true 2>&1 |
    sed -nE 's/.*TCG doesn.t support requested feature: CPUID\.[0-9A-Fa-f]+H:[A-Z]+\.([^ ]+) \[bit.*/-\1/p' | sort -u | paste -sd,)
  echo "$1${flags:+,$flags}"
}
# The tests that start `dlrt` as a child run it through DLRT_TEST_DLRT (tests/tools/cli_test_util.h),
# which keeps it on the emulated CPU (qemu-user's execve would start it natively).
printf '#!/bin/sh\nexec qemu-x86_64 "%s" "$@"\n' "$BUILD/dlrt" > "$OUT/dlrt"
chmod +x "$OUT/dlrt"
export DLRT_TEST_DLRT="$OUT/dlrt"

# 1. CPU detection and the vector ISA, per model.
for cpu in "${CPUS[@]}"; do
  step "dlrt devices and the vector ISA as $cpu"
  export QEMU_CPU
  QEMU_CPU=$(cpu_spec "$cpu")
  qemu-x86_64 "$BUILD/dlrt" devices > "$OUT/devices_$cpu.txt" 2>&1
  grep -m1 -A1 '^  cpu:0 ' "$OUT/devices_$cpu.txt"
  grep -m1 'int8_gemm=' "$OUT/devices_$cpu.txt"
  qemu-x86_64 "$BUILD/dlrt" run "$BUILD/test_models/conv_net.onnx" --seed 1 --threads 2 > "$OUT/probe_$cpu.txt" 2>&1
  isa=$(grep -oE '[a-z0-9]+ vectors' "$OUT/probe_$cpu.txt" | head -1 | cut -d' ' -f1)
  line=$(grep -m1 ' isa="' "$OUT/devices_$cpu.txt")
  echo "vector ISA of the CPU kernels: ${isa:-none reported (see $OUT/probe_$cpu.txt)}"
  if [ "$isa" != avx2 ] || ! grep -q 'isa="[^"]*avx2' <<< "$line" || ! grep -q 'isa="[^"]*fma' <<< "$line" ||
    grep -q 'isa="[^"]*avx512' <<< "$line"; then
    echo "test_avx2_cpu: as $cpu dlrt does not run AVX2 without AVX-512 (see above)" >&2
    failed+=("$cpu: CPU detection (see $OUT/devices_$cpu.txt, $OUT/probe_$cpu.txt)")
  fi
done

# The unit tests of BUILD, each test binary under qemu-x86_64 (QEMU_CPU chooses the model).
"$PYTHON" "$ROOT/tests/avx2cpu/emulated_ctest.py" "$BUILD" "$OUT/ctest" qemu-x86_64 || exit 1
exclude='^Zoo\.'
while IFS= read -r line; do
  case "$line" in '#'* | '') continue ;; esac
  exclude="$exclude|${line%%[[:space:]]*}"
done < "$ROOT/tests/avx2cpu/excluded.txt"
# The suites of the CPU kernel and CPU detection tests (gtest names; parameterized ones have a prefix/).
suites=$(grep -hoE '^(TEST|TEST_F|TEST_P|TYPED_TEST)\([A-Za-z0-9_]+' "$ROOT"/tests/cpu/*_test.cpp "$ROOT"/tests/device/*_test.cpp |
  sed -E 's/.*\(//' | sort -u | paste -sd'|')
# DLRT_AVX2_TESTS=isa: the suites that test a kernel per vector width or ISA, and the 8-bit ones
# (`.ci/run`: 204 tests of the kernel suites' 651).
isa_suites='CpuIsa|CpuCaches|CpuFeatures|SgemmIsa|ConvDirectIsa|ConvWinogradAvx2|ConvDirectWholeKWidths|DepthwiseFlatWidths'
isa_suites+='|DepthwisePlaneWidths|ErfWidths|ActivationSimd|WinogradSimd|ConvBlockedSimd|RowsPoolSimd|SimdPermute|DepthwiseLanes'
isa_suites+='|LstmCell|GemmInt8|Int8Kernel|Igemm|QuantizeKernels|QuantizeContribKernels|ContribQuant'
case "${DLRT_AVX2_TESTS:-}" in
  all) only=() ;;
  isa) only=(-R "^([A-Za-z0-9_]+/)?($isa_suites)\\.") ;;
  '') only=(-R "^([A-Za-z0-9_]+/)?($suites)\\.") ;;
  *) only=(-R "$DLRT_AVX2_TESTS") ;;
esac
emulated_ctest() {  # CPU LOG CTEST_ARGS...
  local cpu=$1 log=$2
  shift 2
  QEMU_CPU=$(cpu_spec "$cpu") ctest --test-dir "$OUT/ctest" -j "$JOBS" --timeout 600 --output-on-failure "$@" > "$log" 2>&1
}

cpu=${CPUS[0]}
step "unit tests as $cpu (${DLRT_AVX2_TESTS:-the suites of tests/cpu and tests/device}; exclusions: tests/avx2cpu/excluded.txt)"
grep -vE '^#|^$' "$ROOT/tests/avx2cpu/excluded.txt" | sed 's/^/excluded: /'
phase "avx2 cpu: unit tests as $cpu (ctest under qemu-x86_64)" emulated_ctest "$cpu" "$OUT/ctest_$cpu.log" \
  -E "$exclude" "${only[@]}" || failed+=("unit tests as $cpu (see $OUT/ctest_$cpu.log)")
grep -E '^[0-9]+% tests passed|tests failed out of|Total Test time' "$OUT/ctest_$cpu.log"
sed -n '/The following tests FAILED/,$p' "$OUT/ctest_$cpu.log" | head -20

for cpu in "${CPUS[@]:1}"; do
  step "8-bit kernel tests as $cpu"
  phase "avx2 cpu: 8-bit kernel tests as $cpu" emulated_ctest "$cpu" "$OUT/int8_$cpu.log" -E "$exclude" \
    -R '^([A-Za-z0-9_]+/)?(GemmInt8|Int8Kernel|Igemm|QuantizeKernels|QuantizeContribKernels|ContribQuant|CpuIsa|CpuCaches)\.' ||
    failed+=("8-bit kernel tests as $cpu (see $OUT/int8_$cpu.log)")
  grep -E '^[0-9]+% tests passed|tests failed out of' "$OUT/int8_$cpu.log"
done

# 4. The zoo sample and the quantized zoo.
cpu=${CPUS[0]}
QZOO=""
if [ -f "$BUILD/quant_zoo/STAMP" ]; then
  QZOO="$OUT/quant_zoo_sample"
  # shellcheck disable=SC2086
  "$PYTHON" "$ROOT/tests/arm64/zoo_sample.py" "$BUILD/quant_zoo" "$QZOO" $QUANT_SAMPLE ||
    { failed+=("quantized zoo sample: bad DLRT_AVX2_QUANT_ZOO"); QZOO=""; }
fi
SAMPLE=""
if [ -n "$ZOO" ]; then
  SAMPLE="$OUT/zoo_sample"
  # shellcheck disable=SC2086
  "$PYTHON" "$ROOT/tests/arm64/zoo_sample.py" "$ZOO" "$SAMPLE" $ZOO_SAMPLE || { failed+=("zoo sample: bad DLRT_AVX2_ZOO"); SAMPLE=""; }
fi
if [ -z "$SAMPLE" ] && [ -z "$QZOO" ]; then
  echo "model zoo: not run (no ZOO_DIR given and no $BUILD/quant_zoo: make test makes it)"
else
  step "model zoo sample (${SAMPLE:+$ZOO_SAMPLE}) and quantized zoo sample (${QZOO:+$QUANT_SAMPLE}) as $cpu"
  [ -n "$QZOO" ] && head -c 400 "$BUILD/quant_zoo/STAMP" && echo
  zoo_ctest() { DLRT_ZOO_DIR="$SAMPLE" DLRT_QUANT_ZOO_DIR="$QZOO" DLRT_WILD_DIR='' DLRT_TRAINED_INT8_DIR='' emulated_ctest "$@"; }
  phase "avx2 cpu: model zoo sample and quantized zoo as $cpu" zoo_ctest "$cpu" "$OUT/zoo.log" -V \
    -R '^Zoo\.(EveryModelMatchesExpectedOutputs|QuantizedVariantsMatchOnnxRuntime)$' || failed+=("model zoo (see $OUT/zoo.log)")
  grep -E 'zoo: |Failure|MISMATCH|DIFFER' "$OUT/zoo.log" | sed -E 's/^[0-9]+: //' | head -30
fi

# 5. ONNX Runtime's own saturating kernels (its non-VNNI uint8 x int8 path) as the reference.
intel=""
for cpu in "${CPUS[@]}"; do case "$cpu" in EPYC*) ;; *) intel=$cpu ;; esac; done
if [ -n "$intel" ] && [ -x "$BUILD/venv/bin/python" ]; then
  step "int8 references: ONNX Runtime as $intel (tests/models/check_int8_reference.py)"
  printf '#!/bin/sh\nexec qemu-x86_64 "%s" "$@"\n' "$BUILD/tests/dlrt_tests" > "$OUT/dlrt_tests"
  chmod +x "$OUT/dlrt_tests"
  phase "avx2 cpu: int8 reference check, onnxruntime as $intel" env QEMU_CPU="$(cpu_spec "$intel")" \
    DLRT_INT8_EXPECT_SATURATION=1 qemu-x86_64 "$BUILD/venv/bin/python" -W ignore "$ROOT/tests/models/check_int8_reference.py" \
    "$OUT/dlrt_tests" "$OUT/int8_reference_check" > "$OUT/int8_reference.log" 2>&1 ||
    failed+=("int8 reference check as $intel (see $OUT/int8_reference.log)")
  cat "$OUT/int8_reference.log"
else
  echo "int8 reference check: not run (${intel:+no $BUILD/venv: make test makes it}${intel:-no Intel model in DLRT_AVX2_CPUS})"
fi

echo
if [ ${#failed[@]} -ne 0 ]; then
  printf 'test_avx2_cpu: FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "test_avx2_cpu: all passed (${CPUS[*]}: avx2 vectors)"
