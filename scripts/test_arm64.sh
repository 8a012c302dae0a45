#!/usr/bin/env bash
# `make test-arm64`'s runs: the aarch64 cross build under user-mode QEMU on an x86-64 host
# (docs/platforms.md), each step printing the vector ISA its CPU kernels ran (`neon`):
#   1. `dlrt devices`, and `dlrt run` of a small conv net (tests/models/make_test_models.py) whose placement line must say
#      "neon vectors" (the run report's vector_isa),
#   2. the unit tests (ctest; CMAKE_CROSSCOMPILING_EMULATOR runs them under qemu-aarch64),
#      but those named in tests/arm64/excluded.txt (each with its reason) and the zoo test;
#      NeonSelection.* fail when a kernel family written over simd/ ran its portable path,
#      NeonInt8.* when the 8-bit GEMM ran its portable kernel, NeonBf16.* when precision bf16's GEMM
#      ran a model instead of the BFMMLA tile; those and the GemmInt8 tests again as a Cortex-A76 and
#      a Cortex-A53 (QEMU_CPU: dotprod only, then neither dotprod nor i8mm; neither has BF16),
#   3. `cmake --install` into a fresh prefix and C/C++ consumers cross-built against it
#      (scripts/test_install.sh), run under QEMU,
#   4. `dlrt conformance` over ONNX's backend test data against
#      tests/conformance/expected_passing.txt, and over the onnx release's node cases
#      (tests/conformance/expected_passing_onnx-<version>.txt) when X86_BUILD has them
#      generated (`make test` does; generating them needs pip),
#   5. the zoo test on a sample of ZOO_DIR's models and cases (DLRT_ARM64_ZOO), and precision bf16
#      on ZOO_DIR's minilm_l6 against f32, as QEMU's `max` (BFMMLA) and as a Cortex-A76 (f32, and the
#      report says why; tests/arm64/compare_bf16.py),
#   6. with X86_BUILD: outputs of the generated test models and of quantized zoo models
#      (X86_BUILD/quant_zoo, when `make test` made it) against the x86 build's: float within
#      the zoo's tolerance, statically quantized ones bit-identical, a dynamically quantized
#      one by row cosine (tests/arm64/compare_x86.py).
#   scripts/test_arm64.sh BUILD_ARM64 [ZOO_DIR] [X86_BUILD]
# Env: JOBS (ctest processes, default 2), TESTDATA (/usr/share/libonnx-testdata/data),
# DLRT_ARM64_ZOO ("model/case ..." or "all"), DLRT_ARM64_TESTS (a ctest regex: only those unit
# tests, for a quick check; default all). Each step is a phase (scripts/phases.sh).
set -uo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_ARM64 [ZOO_DIR] [X86_BUILD]}" && pwd)
ZOO=${2:-}
X86=${3:-}
[ -n "$X86" ] && X86=$(cd "$X86" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
JOBS=${JOBS:-2}
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
# The sample: one case of each kernel family of the vector layer (scripts/zoo_sample.sh).
. "$ROOT/scripts/zoo_sample.sh"
ZOO_SAMPLE=${DLRT_ARM64_ZOO:-$ZOO_SAMPLE_DEFAULT}
# The multiarch loader and libraries (libc6:arm64): with -L /usr/aarch64-linux-gnu the cross
# toolchain's libc copy is mixed with them, and thread creation hung.
QEMU=(qemu-aarch64)
OUT="$BUILD/arm64_runs"
rm -rf "$OUT" && mkdir -p "$OUT"
. "$ROOT/scripts/phases.sh"
failed=()

step() { echo; echo "== arm64: $* ($(date -u +%T))"; }
# The vector ISA the CPU kernels of this binary run with under this environment.
PROBE="$BUILD/test_models/conv_net.onnx"
vector_isa() {
  "${QEMU[@]}" "$BUILD/dlrt" run "$PROBE" --seed 1 --threads 2 > "$OUT/probe.txt" 2>&1 &&
    grep -oE '[a-z0-9]+ vectors' "$OUT/probe.txt" | head -1 | cut -d' ' -f1
}

step "dlrt devices and the vector ISA"
# The generated test models, where the unit tests look for them (as in the x86 build).
"$PYTHON" "$ROOT/tests/models/make_test_models.py" "$BUILD/test_models" > /dev/null || exit 1
export DLRT_TEST_MODELS="$BUILD/test_models"
# The tests that start `dlrt` as a child process run this wrapper (DLRT_TEST_DLRT,
# tests/tools/cli_test_util.h): the host has no binfmt_misc entry to exec aarch64 files.
printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${QEMU[*]}" "$BUILD/dlrt" > "$OUT/dlrt"
chmod +x "$OUT/dlrt"
export DLRT_TEST_DLRT="$OUT/dlrt"
"${QEMU[@]}" "$BUILD/dlrt" devices | tee "$OUT/devices.txt"
ISA=$(vector_isa)
echo "vector ISA of the CPU kernels: ${ISA:-none reported (see $OUT/probe.txt)}"
if ! grep -q "isa.*neon" "$OUT/devices.txt" || [ "$ISA" != neon ]; then
  echo "test_arm64: the aarch64 build does not select NEON (devices: see above; run report: '${ISA}')" >&2
  exit 1
fi

# The unit tests, but the named exclusions (tests/arm64/excluded.txt: "REGEX  reason").
step "unit tests under qemu-aarch64 (vector ISA $ISA; exclusions: tests/arm64/excluded.txt)"
exclude='^Zoo\.'
while IFS= read -r line; do
  case "$line" in '#'* | '') continue ;; esac
  re=${line%%[[:space:]]*}
  echo "excluded: $line"
  exclude="$exclude|$re"
done < "$ROOT/tests/arm64/excluded.txt"
only=()
[ -n "${DLRT_ARM64_TESTS:-}" ] && only=(-R "$DLRT_ARM64_TESTS") && echo "only the tests matching $DLRT_ARM64_TESTS"
phase "arm64: unit tests (ctest under qemu-aarch64)" \
  ctest --test-dir "$BUILD" -j "$JOBS" --timeout 600 --output-on-failure -E "$exclude" "${only[@]}" > "$OUT/ctest.log" 2>&1 ||
  failed+=("unit tests (see $OUT/ctest.log)")
grep -E '^[0-9]+% tests passed|tests failed out of|Total Test time' "$OUT/ctest.log"
sed -n '/The following tests FAILED/,$p' "$OUT/ctest.log" | head -20

# The 8-bit GEMM's and the bf16 GEMM's kernels on CPUs with less than QEMU's `max` (i8mm, dotprod,
# bf16): as a Cortex-A76 (dotprod, no i8mm) and a Cortex-A53 (neither), where an extension chosen
# without HWCAP traps.
for cpu in cortex-a76 cortex-a53; do
  step "int8 and bf16 kernels under qemu-aarch64 -cpu $cpu"
  phase "arm64: int8 and bf16 kernels as $cpu" env QEMU_CPU=$cpu ctest --test-dir "$BUILD" -j "$JOBS" --timeout 600 \
    --output-on-failure -R '^(NeonInt8|GemmInt8|Kernels/Int8Kernel|NeonBf16)\.' > "$OUT/int8_$cpu.log" 2>&1 ||
    failed+=("int8 and bf16 kernels as $cpu (see $OUT/int8_$cpu.log)")
  grep -E '^[0-9]+% tests passed|tests failed out of' "$OUT/int8_$cpu.log"
done

# The installed library (cmake --install into a fresh prefix), as scripts/test_install.sh checks
# the x86 one: its C and C++ consumers cross-built through the CMake package and pkg-config and
# run under QEMU.
step "cmake --install of $BUILD, consumers cross-built against it and run under qemu-aarch64"
phase "arm64: install (scripts/test_install.sh)" env DLRT_INSTALL_CC=aarch64-linux-gnu-gcc \
  DLRT_INSTALL_CXX=aarch64-linux-gnu-g++ DLRT_INSTALL_TOOLCHAIN="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
  DLRT_INSTALL_RUN="${QEMU[*]}" bash "$ROOT/scripts/test_install.sh" "$BUILD" "$PROBE" > "$OUT/install.log" 2>&1 ||
  failed+=("install (see $OUT/install.log)")
tail -1 "$OUT/install.log"

step "ONNX conformance under qemu-aarch64 (vector ISA $ISA)"
dirs=()
for d in node pytorch-converted pytorch-operator simple; do [ -d "$TESTDATA/$d" ] && dirs+=("$TESTDATA/$d"); done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "no ONNX backend test data under $TESTDATA (scripts/install_deps.sh test-arm64 installs libonnx-testdata)"
  failed+=("conformance: no test data")
else
  phase "arm64: ONNX conformance" "${QEMU[@]}" "$BUILD/dlrt" conformance "${dirs[@]}" \
    --expect "$ROOT/tests/conformance/expected_passing.txt" > "$OUT/conformance.log" 2>&1 ||
    failed+=("conformance (see $OUT/conformance.log)")
  grep '^conformance:' "$OUT/conformance.log" | tail -1
  grep -iE 'regress|expected to pass' "$OUT/conformance.log" | head -20
fi
. "$ROOT/scripts/pins.sh"
ONNX_DATA="${X86:-/nonexistent}/onnx-testdata-$ONNX_SOURCE_VERSION"
if [ -f "$ONNX_DATA/.complete" ]; then
  phase "arm64: ONNX $ONNX_SOURCE_VERSION conformance" "${QEMU[@]}" "$BUILD/dlrt" conformance "$ONNX_DATA/node" \
    "$ONNX_DATA/pytorch-converted" "$ONNX_DATA/pytorch-operator" "$ONNX_DATA/simple" \
    --expect "$ROOT/tests/conformance/expected_passing_onnx-$ONNX_SOURCE_VERSION.txt" > "$OUT/conformance_onnx.log" 2>&1 ||
    failed+=("onnx $ONNX_SOURCE_VERSION conformance (see $OUT/conformance_onnx.log)")
  echo "onnx $ONNX_SOURCE_VERSION: $(grep '^conformance:' "$OUT/conformance_onnx.log" | tail -1)"
else
  echo "onnx $ONNX_SOURCE_VERSION node cases: not run (not generated in ${X86:-an x86 build}: make test generates them with pip)"
fi

if [ -z "$ZOO" ]; then
  echo "test_arm64: no zoo folder given: the zoo sample is skipped"
else
  step "model zoo sample under qemu-aarch64 (vector ISA $ISA): ${ZOO_SAMPLE}"
  SAMPLE="$BUILD/zoo_sample"
  "$PYTHON" "$ROOT/tests/arm64/zoo_sample.py" "$ZOO" "$SAMPLE" $ZOO_SAMPLE || failed+=("zoo sample: bad DLRT_ARM64_ZOO")
  phase "arm64: model zoo sample (ctest -R Zoo)" env DLRT_ZOO_DIR="$SAMPLE" DLRT_QUANT_ZOO_DIR= DLRT_WILD_DIR= \
    DLRT_TRAINED_INT8_DIR= ctest --test-dir "$BUILD" --output-on-failure -V -R '^Zoo\.EveryModel' > "$OUT/zoo.log" 2>&1 ||
    failed+=("zoo sample (see $OUT/zoo.log)")
  grep -E 'zoo: |Failure|MISMATCH' "$OUT/zoo.log" | sed -E 's/^[0-9]+: //'
fi

# Precision bf16 on a model: minilm_l6 against f32 as QEMU's `max` (the BFMMLA tile) and as a
# Cortex-A76 (no BF16: the session runs f32 and the report says why).
MINILM_CASE="${ZOO:-/nonexistent}/minilm_l6/b1s16"
if [ -f "${ZOO:-/nonexistent}/minilm_l6.onnx" ] && [ -d "$MINILM_CASE" ]; then
  step "precision bf16 under qemu-aarch64: minilm_l6/b1s16 against f32, as max and as cortex-a76"
  t0=$(phase_now)
  BF="$OUT/bf16"
  mkdir -p "$BF"
  ins=()
  for f in "$MINILM_CASE"/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
  b_rc=0
  for run in f32:max:f32 bf16_max:max:bf16 bf16_cortex-a76:cortex-a76:bf16; do
    IFS=: read -r name cpu precision <<< "$run"
    QEMU_CPU=$cpu "${QEMU[@]}" "$BUILD/dlrt" run "$ZOO/minilm_l6.onnx" "${ins[@]}" --threads 2 --precision "$precision" \
      --output-dir "$BF/$name" --json > "$BF/$name.json" 2> "$BF/$name.err" || { b_rc=1; cat "$BF/$name.err"; }
  done
  [ $b_rc -eq 0 ] && { "$PYTHON" "$ROOT/tests/arm64/compare_bf16.py" minilm_l6 "$BF" || b_rc=1; }
  phase_record "arm64: precision bf16 (minilm_l6)" "$(phase_since "$t0")" "$b_rc"
  [ $b_rc -eq 0 ] || failed+=("precision bf16 on minilm_l6 (see $BF)")
else
  echo "precision bf16 on minilm_l6: not run (no ${ZOO:-zoo folder given} with minilm_l6.onnx and its case b1s16)"
fi

# Against the x86 build: the same model and inputs, compared output by output.
compare_x86() {  # NAME MODEL TOL_ARGS... -- RUN_ARGS...
  local name=$1 model=$2
  shift 2
  local tol=()
  while [ "$1" != -- ]; do tol+=("$1"); shift; done
  shift
  "${QEMU[@]}" "$BUILD/dlrt" run "$model" "$@" --threads 2 --output-dir "$OUT/$name" > "$OUT/$name.txt" &&
    "$X86/dlrt" run "$model" "$@" --threads 2 --output-dir "$OUT/$name.x86" > "$OUT/$name.x86.txt" &&
    "$PYTHON" "$ROOT/tests/arm64/compare_x86.py" "${tol[@]}" "$name" "$OUT/$name" "$OUT/$name.x86"
}
if [ -n "$X86" ] && [ -x "$X86/dlrt" ]; then
  step "outputs against the x86 build ($X86, vector ISA $("$X86/dlrt" run "$PROBE" --seed 1 | grep -oE '[a-z0-9]+ vectors' | head -1))"
  t0=$(phase_now)
  x_rc=0
  for m in mlp conv_net; do
    compare_x86 "$m" "$BUILD/test_models/$m.onnx" --float -- --seed 1 || x_rc=1
  done
  # The quantized zoo (make test generates it on x86 with pip's ONNX Runtime): static
  # quantization bit for bit (mobilenet_v2 and efficientnet_b0: depthwise convs, which x86 with
  # AVX-512 runs channels-last); dynamic by row cosine (its scales follow float activations).
  for mm in resnet18_static_qop:--integer mobilenet_v2_static_qdq:--integer efficientnet_b0_static_qop:--integer \
    minilm_l6_dynamic_qint8:--cosine; do
    m=${mm%%:*}
    q="$X86/quant_zoo/$m"
    [ -f "$q.onnx" ] || { echo "$m: not in $X86/quant_zoo (make test makes it)"; continue; }
    c=$(ls -d "$q"/*/ | head -1)
    ins=()
    for f in "$c"*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
    compare_x86 "$m" "$q.onnx" "${mm#*:}" -- "${ins[@]}" || x_rc=1
  done
  phase_record "arm64: outputs against x86" "$(phase_since "$t0")" "$x_rc"
  [ $x_rc -eq 0 ] || failed+=("outputs against x86")
fi

echo
if [ ${#failed[@]} -ne 0 ]; then
  printf 'test_arm64: FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "test_arm64: all passed (vector ISA $ISA)"
