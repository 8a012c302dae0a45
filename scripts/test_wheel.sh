#!/usr/bin/env bash
# The wheels a stranger installs, on every CPython dlrt supports (scripts/run_tests.sh
# step 6; the versions and interpreters: scripts/wheel_pythons.sh). For each version:
#   1. its wheel, built once per wheel by scripts/build_wheel.sh with the Python
#      that makes it (3.10: cp310, 3.11: cp311, 3.12 and 3.13: the one cp312-abi3
#      wheel, built by 3.12), incremental in build-wheel-<tag>/, auditwheel show
#      and the no-vendor-runtime check,
#   2. a FRESH venv of that version in a temporary folder, only the wheel and the
#      pinned numpy for that version (scripts/pins.sh) installed into it, run from
#      the temporary folder with `python -I` (no PYTHONPATH, no user site, no
#      script folder: nothing of the source tree is importable;
#      tests/wheel/check_wheel.py checks it): a zoo model against its expected
#      outputs, the Embedder on tiny_bert, and device="openvino" refused with
#      the reason (nothing vendor bundled),
#   3. `pip install pytest` (pinned) into the same venv and tests/python run with it on the
#      installed package (the generated test models: DLRT_TEST_MODELS, default
#      build/test_models; tests that need Ray, pyarrow or nanobind skip and say so),
#   4. `pip install openvino==$OV_VERSION` into the same venv, not activated:
#      dlrt finds that OpenVINO by itself and runs the zoo model on it.
# Prints one line per version ("ok 3.10: ...", "FAILED 3.10: ..." or "not here 3.10: how
# to add it"); the last line is the summary run_tests.sh shows. The versions without an
# interpreter on this machine are left out and named with how to add them
# (scripts/wheel_pythons.sh), so that a machine with only its distribution's python3
# tests that version's wheel; DLRT_REQUIRE_ALL_PYTHONS=1 (.ci/run) makes each missing
# one a failure. Exit 0 only when every version tested passed (and, with
# DLRT_REQUIRE_ALL_PYTHONS=1, none was missing); pip failing to reach PyPI is a
# failure, never a skip.
# Env: DLRT_ZOO_DIR (default ../shared/models), DLRT_TEST_MODELS, DLRT_WHEEL_OPENVINO (the
# OpenVINO release for step 3, default the project's pin; "skip" leaves it out),
# DLRT_WHEEL_PYTHONS (the versions, default all: scripts/wheel_pythons.sh),
# DLRT_REQUIRE_ALL_PYTHONS.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
MODELS=${DLRT_TEST_MODELS:-$ROOT/build/test_models}
. "$ROOT/scripts/pins.sh"
. "$ROOT/scripts/wheel_pythons.sh"
OV_VERSION=${DLRT_WHEEL_OPENVINO:-$OPENVINO_PIN}
start=$(date +%s)

tmp=$(mktemp -d /tmp/dlrt-wheel-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

declare -A wheel_of=()   # build version -> repaired wheel, or "" when its build failed
results=()
rc=0

# Builds the wheel of build version BV (scripts/wheel_pythons.sh) into wheel_of[BV];
# a failure leaves its reason in build_err[BV].
declare -A build_err=()
build_for() {
  local bv=$1 py out b
  wheel_of[$bv]=""
  if ! py=$(wheel_python "$bv" 2>&1); then build_err[$bv]=$py; return 1; fi
  out=$(DLRT_VENV_PYTHON=$py "$ROOT/scripts/build_wheel.sh" 2>&1)
  b=$?
  echo "$out"
  if [ $b -eq 0 ]; then wheel_of[$bv]=$(echo "$out" | tail -1); else build_err[$bv]="building the $bv wheel: $(echo "$out" | tail -1)"; fi
}

# Installs V's wheel into a fresh venv of V and runs check_wheel.py; prints its result last.
test_version() {
  local v=$1 whl py venv vpy numpy t0 var ov_note pytest_out pytest_sum prc
  t0=$(date +%s)
  echo
  echo "=== CPython $v"
  py=$(wheel_python "$v" 2>&1) || { echo "FAILED: $py"; return 1; }
  whl=${wheel_of[$(wheel_build_python "$v")]}
  [ -n "$whl" ] || { echo "FAILED: ${build_err[$(wheel_build_python "$v")]}"; return 1; }
  var="WHEEL_TEST_NUMPY_${v//./_}"
  numpy=${!var:-$WHEEL_TEST_NUMPY}
  venv=$tmp/venv-$v vpy=$tmp/venv-$v/bin/python
  echo "== fresh venv $venv ($py): pip install $(basename "$whl") $numpy"
  "$py" -m venv "$venv" || { echo "FAILED: $py -m venv"; return 1; }
  if ! "$vpy" -m pip install --disable-pip-version-check -q "$whl" "$numpy" > "$tmp/pip-$v.log" 2>&1; then
    tail -5 "$tmp/pip-$v.log"
    echo "FAILED: pip could not install the wheel and $numpy into a fresh venv (PyPI unreachable?)"
    return 1
  fi
  "$vpy" -m pip list --disable-pip-version-check 2>/dev/null | sed -n '3,$p' | tr -s ' ' | paste -sd ',' |
    sed 's/^/installed: /'
  # Not activated, no PYTHONPATH: as a user would run a script with the venv's python.
  check() {
    env -u PYTHONPATH -u VIRTUAL_ENV -u OPENVINO_LIB_PATH -u DLRT_DEVICE DLRT_ZOO_DIR="$ZOO" \
      "$vpy" -I "$ROOT/tests/wheel/check_wheel.py" --embed-data "$ROOT/tests/embed/data" --source "$ROOT" "$@"
  }
  check --openvino absent || { echo "FAILED: the wheel in a fresh venv (tests/wheel/check_wheel.py)"; return 1; }
  echo "== pip install $WHEEL_TEST_PYTEST; pytest tests/python on the installed dlrt"
  if ! "$vpy" -m pip install --disable-pip-version-check -q "$WHEEL_TEST_PYTEST" > "$tmp/pip-pytest-$v.log" 2>&1; then
    tail -5 "$tmp/pip-pytest-$v.log"
    echo "FAILED: pip could not install $WHEEL_TEST_PYTEST (PyPI unreachable?)"
    return 1
  fi
  [ -f "$MODELS/mlp.onnx" ] || { echo "FAILED: no generated test models in $MODELS (make build/test_models/STAMP)"; return 1; }
  mkdir -p "$tmp/run-$v"
  # Deselected (and said so): test_gil_released_during_run times a polling thread against a run,
  # which a loaded machine's scheduler can fail four times over here; scripts/test_python.sh runs it.
  echo "deselected: tests/python/test_threads.py::test_gil_released_during_run (timing; scripts/test_python.sh runs it)"
  pytest_out=$(cd "$tmp/run-$v" && env -u PYTHONPATH DLRT_TEST_MODELS="$MODELS" DLRT_ZOO_DIR="$ZOO" \
               "$vpy" -m pytest -q -rfEs -p no:cacheprovider "$ROOT/tests/python" \
               -k "not test_gil_released_during_run" 2>&1)
  prc=$?
  echo "$pytest_out" | tail -15
  # A failure's traceback, name and message, also when the skipped lines fill the tail.
  if [ $prc -ne 0 ]; then
    sed -n '/^=* FAILURES =*$/,/^=* short test summary/p' <<< "$pytest_out" | head -80
    grep -E '^(FAILED|ERROR) ' <<< "$pytest_out" | head -10
  fi
  pytest_sum=$(echo "$pytest_out" | grep -E '^=* ?[0-9]+ (passed|failed|skipped|error)' | tail -1 | sed -E 's/^=+ //; s/ =+$//')
  [ $prc -eq 0 ] || { echo "FAILED: pytest tests/python on the wheel (${pytest_sum:-exit $prc})"; return 1; }
  ov_note="openvino not tried (DLRT_WHEEL_OPENVINO=skip)"
  if [ "$OV_VERSION" != skip ]; then
    echo "== pip install openvino==$OV_VERSION into the same venv (not activated)"
    if ! "$vpy" -m pip install --disable-pip-version-check -q "openvino==$OV_VERSION" > "$tmp/pip-ov-$v.log" 2>&1; then
      tail -5 "$tmp/pip-ov-$v.log"
      echo "FAILED: pip could not install openvino==$OV_VERSION (PyPI unreachable? DLRT_WHEEL_OPENVINO=skip leaves it out)"
      return 1
    fi
    check --openvino present || { echo "FAILED: dlrt with openvino==$OV_VERSION in the same venv"; return 1; }
    ov_note="openvino $OV_VERSION found"
  fi
  rm -rf "$venv"
  echo "ok: $(basename "$whl"), $numpy: zoo, embedder, pytest ${pytest_sum%% in *}, $ov_note; $(( $(date +%s) - t0 )) s"
}

# The versions with an interpreter here; each missing one is a line of how to add it.
wheel_pythons_here 2> "$tmp/missing.txt"
here_rc=$?
if [ -n "$WHEEL_PYTHONS_MISSING" ]; then
  echo "== CPython versions not on this machine (their wheels are neither built nor tested here):"
  cat "$tmp/missing.txt"
fi
[ $here_rc -eq 0 ] || rc=1

# Each wheel once (the abi3 one serves 3.12 and 3.13), in this shell, not in a
# subshell, so that wheel_of keeps what the builds found. A version's test
# starts in the background as soon as its wheel is there, so that it runs
# beside the next wheel's compile; at most TEST_JOBS tests at a time (venvs,
# pip and pytest are mostly one core each). Their logs print in order after.
TEST_JOBS=${JOBS:-2}
running=0
for v in $WHEEL_PYTHONS_HERE; do
  bv=$(wheel_build_python "$v")
  [ -n "${wheel_of[$bv]+set}" ] || { echo; echo "=== the wheel built by CPython $bv"; build_for "$bv"; }
  while [ "$running" -ge "$TEST_JOBS" ]; do wait -n; running=$((running - 1)); done
  ( test_version "$v" > "$tmp/test-$v.log" 2>&1; echo $? > "$tmp/test-$v.rc" ) &
  running=$((running + 1))
done
wait
for v in $WHEEL_PYTHONS_HERE; do
  r=$(cat "$tmp/test-$v.rc" 2>/dev/null || echo 1)
  cat "$tmp/test-$v.log"
  last=$(tail -1 "$tmp/test-$v.log")
  if [ $r -eq 0 ]; then
    results+=("ok $v: ${last#ok: }")
  else
    results+=("FAILED $v: ${last#FAILED: }")
    rc=1
  fi
done
for v in $WHEEL_PYTHONS_MISSING; do
  if [ "${DLRT_REQUIRE_ALL_PYTHONS:-0}" = 1 ]; then
    results+=("FAILED $v: no interpreter, and DLRT_REQUIRE_ALL_PYTHONS=1 requires it (how to add it: above)")
  else
    results+=("not here $v: no interpreter (how to add it: above)")
  fi
done

echo
echo "== wheels per CPython"
printf '%s\n' "${results[@]}"
tags=$(for bv in "${!wheel_of[@]}"; do [ -n "${wheel_of[$bv]}" ] && basename "${wheel_of[$bv]}" | cut -d- -f3-; done |
       sed 's/\.whl$//' | sort | paste -sd ' ')
missing_note=""
[ -z "$WHEEL_PYTHONS_MISSING" ] || missing_note="; not here: $(echo "$WHEEL_PYTHONS_MISSING" | tr ' ' ',')"
summary="CPython $(echo "$WHEEL_PYTHONS_HERE" | tr ' ' ','): fresh venvs, zoo, embedder, tests/python, OpenVINO ${OV_VERSION}; wheels: ${tags:-none}${missing_note}; $(( $(date +%s) - start )) s"
if [ $rc -eq 0 ]; then echo "ok ($summary)"
elif [ -z "$WHEEL_PYTHONS_HERE" ]; then echo "FAILED: $(tail -1 "$tmp/missing.txt")"
else echo "FAILED: $(printf '%s\n' "${results[@]}" | grep -c ^FAILED) of ${#results[@]} versions ($summary)"; fi
exit $rc
