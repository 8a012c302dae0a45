#!/usr/bin/env bash
# The wheel a stranger installs (scripts/run_tests.sh step 6):
#   1. scripts/build_wheel.sh: the manylinux wheel (incremental in build-wheel-<tag>/),
#      auditwheel show and the no-vendor-runtime check,
#   2. a FRESH venv in a temporary folder (python3 -m venv, or $DLRT_VENV_PYTHON), only that wheel
#      and numpy installed into it, run from the temporary folder with
#      `python -I` (no PYTHONPATH, no user site, no script folder: nothing of
#      the source tree is importable; tests/wheel/check_wheel.py checks it):
#      a zoo model against its expected outputs, the Embedder on tiny_bert,
#      and device="openvino" refused with the reason (nothing vendor bundled),
#   3. `pip install openvino==$OV_VERSION` into the same venv, not activated:
#      dlrt finds that OpenVINO by itself and runs the zoo model on it.
# The last line is the summary run_tests.sh shows. Exit 0 only when all of it
# ran and passed; pip failing to reach PyPI is a failure, never a skip.
# Env: DLRT_ZOO_DIR (default ../shared/models), DLRT_WHEEL_OPENVINO (the
# OpenVINO release for step 3, default the project's pin; "skip" leaves it out).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
. "$ROOT/scripts/pins.sh"
OV_VERSION=${DLRT_WHEEL_OPENVINO:-$OPENVINO_PIN}
NUMPY=$WHEEL_TEST_NUMPY
start=$(date +%s)

fail() { echo "FAILED: $*"; exit 1; }

build_out=$("$ROOT/scripts/build_wheel.sh" 2>&1)
build_rc=$?
echo "$build_out"
[ $build_rc -eq 0 ] || fail "building the wheel: $(echo "$build_out" | tail -1)"
whl=$(echo "$build_out" | tail -1)
size=$(du -k "$whl" | cut -f1)

tmp=$(mktemp -d /tmp/dlrt-wheel-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
echo "== fresh venv $tmp/venv: pip install $(basename "$whl") $NUMPY"
PYTHON=${DLRT_VENV_PYTHON:-python3}   # the Python the wheel was built for (scripts/build_wheel.sh)
"$PYTHON" -m venv "$tmp/venv" || fail "$PYTHON -m venv ($PYTHON is $(command -v "$PYTHON"))"
VPY=$tmp/venv/bin/python
if ! "$VPY" -m pip install --disable-pip-version-check -q "$whl" "$NUMPY" > pip.log 2>&1; then
  tail -5 pip.log
  fail "pip could not install the wheel and $NUMPY into a fresh venv (PyPI unreachable?)"
fi
"$VPY" -m pip list --disable-pip-version-check 2>/dev/null | sed -n '3,$p' | tr -s ' ' | paste -sd ',' | sed 's/^/installed: /'

# Not activated, no PYTHONPATH: as a user would run a script with the venv's python.
check() {
  env -u PYTHONPATH -u VIRTUAL_ENV -u OPENVINO_LIB_PATH -u DLRT_DEVICE DLRT_ZOO_DIR="$ZOO" \
    "$VPY" -I "$ROOT/tests/wheel/check_wheel.py" --embed-data "$ROOT/tests/embed/data" --source "$ROOT" "$@"
}
check --openvino absent || fail "the wheel in a fresh venv (tests/wheel/check_wheel.py)"

ov_note="openvino not tried (DLRT_WHEEL_OPENVINO=skip)"
if [ "$OV_VERSION" != skip ]; then
  echo "== pip install openvino==$OV_VERSION into the same venv (not activated)"
  if ! "$VPY" -m pip install --disable-pip-version-check -q "openvino==$OV_VERSION" > pip_ov.log 2>&1; then
    tail -5 pip_ov.log
    fail "pip could not install openvino==$OV_VERSION (PyPI unreachable? DLRT_WHEEL_OPENVINO=skip leaves it out)"
  fi
  check --openvino present || fail "dlrt with openvino==$OV_VERSION in the same venv"
  ov_note="found openvino $OV_VERSION in the venv"
fi
echo "ok ($(basename "$whl"), $size KiB: fresh venv, zoo, embedder, $ov_note; $(( $(date +%s) - start )) s)"
