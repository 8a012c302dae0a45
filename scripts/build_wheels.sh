#!/usr/bin/env bash
# Builds the wheels of every CPython dlrt supports (what `make wheel` runs): one
# scripts/build_wheel.sh per wheel, with the Python that makes it
# (scripts/wheel_pythons.sh): cp310, cp311 and cp312-abi3 (3.12 and later).
# Each build folder build-wheel-<tag>/ compiles only the Python module: with
# ccache, the library's objects are those of build/ (or of the first wheel).
#   scripts/build_wheels.sh [OUT_DIR]   (default build-wheel/wheelhouse)
# Only the versions with an interpreter on this machine; each missing one is named
# with how to add it (scripts/wheel_pythons.sh), and is a failure with
# DLRT_REQUIRE_ALL_PYTHONS=1. Prints the repaired wheels' paths last, one a line.
# Exit 1 when any wheel failed (the others are still built).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=wheel_pythons.sh
. "$ROOT/scripts/wheel_pythons.sh"
rc=0
wheel_pythons_here || rc=1
built=()
done_for=" "
for v in $WHEEL_PYTHONS_HERE; do
  bv=$(wheel_build_python "$v")
  case $done_for in *" $bv "*) continue ;; esac
  done_for="$done_for$bv "
  echo "=== the wheel built by CPython $bv"
  if ! py=$(wheel_python "$bv"); then rc=1; continue; fi
  out=$(DLRT_VENV_PYTHON=$py "$ROOT/scripts/build_wheel.sh" "$@" 2>&1)
  r=$?
  echo "$out"
  if [ $r -eq 0 ]; then built+=("$(echo "$out" | tail -1)"); else rc=1; fi
done
echo "== wheels"
printf '%s\n' "${built[@]}"
exit $rc
