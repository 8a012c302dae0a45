#!/usr/bin/env bash
# Installs every pinned PyPI tool of the tests (scripts/pins.sh) into the
# venv that later uses it, ahead of time: `make test` (scripts/make_test.sh)
# runs this in the background while it compiles, so the downloads overlap the
# build instead of adding to the test phases. Each venv is made by
# scripts/setup_venv.sh, whose lock a test that needs the venv waits on; a
# venv that failed here is installed again (and the failure reported) by the
# test that uses it, so nothing is lost by a failure here.
#   scripts/prepare_venvs.sh BUILD
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: prepare_venvs.sh BUILD}" && pwd)
. "$ROOT/scripts/pins.sh"

rc=0
install() {  # FOLDER PACKAGE...
  local t0=$SECONDS dir=$1
  shift
  # shellcheck disable=SC2068
  if "$ROOT/scripts/setup_venv.sh" "$dir" "$@" > /dev/null; then
    echo "prepare_venvs: $dir/venv ready in $((SECONDS - t0)) s ($*)"
  else
    echo "prepare_venvs: $dir/venv FAILED after $((SECONDS - t0)) s ($*); its test installs again"
    rc=1
  fi
}
# In the order the tests need them (scripts/run_tests.sh).
# shellcheck disable=SC2086
install "$BUILD" $QUANT_ZOO_PACKAGES $TOKENIZER_PARITY_PACKAGES "openvino==$OPENVINO_PIN"
# shellcheck disable=SC2086
install "$BUILD/ml-set" $ML_SET_PACKAGES
# shellcheck disable=SC2086
install "$BUILD/trained-int8" $TRAINED_INT8_PACKAGES
# shellcheck disable=SC2086
install "$BUILD/serve-clients" $SERVE_CLIENT_PACKAGES
# shellcheck disable=SC2086
install "$BUILD/docs-browser" $DOCS_BROWSER_PACKAGES
for v in $OPENVINO_MATRIX_DEFAULT; do
  [ "$v" = newest ] && continue  # resolved at test time (scripts/run_tests.sh)
  install "$BUILD/venv-openvino-$v" "openvino==$v"
done
# shellcheck disable=SC2086
install "$BUILD/python-venv" $PYTHON_TEST_PACKAGES
# The wheel build tools, for each Python here that builds a wheel (scripts/wheel_pythons.sh;
# the wheel test names the missing ones).
. "$ROOT/scripts/wheel_pythons.sh"
wheel_pythons_here 2> /dev/null
built=" "
for v in $WHEEL_PYTHONS_HERE; do
  bv=$(wheel_build_python "$v")
  case $built in *" $bv "*) continue ;; esac
  built="$built$bv "
  if ! wpy=$(wheel_python "$bv"); then rc=1; continue; fi
  # shellcheck disable=SC2086
  DLRT_VENV_PYTHON=$wpy install "$ROOT/build-wheel/tools-$bv" $WHEEL_BUILD_TOOLS
done
exit $rc
