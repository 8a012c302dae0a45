#!/usr/bin/env bash
# Creates (once) a Python virtual environment for test and benchmark tools
# inside a build folder and installs pinned PyPI packages into it. Never run
# at build time: only test and benchmark scripts call it.
#   scripts/setup_venv.sh BUILD_DIR PACKAGE==VERSION...
# Prints the venv's python path on the last line. Exit 1 when pip fails
# (e.g. no network); callers decide whether that is a skip or an error.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR PACKAGE==VERSION..." >&2
  exit 2
fi
BUILD=$1; shift
VENV="$BUILD/venv"
# One caller at a time per build folder: ctest runs test processes in
# parallel, and each may call this; a second caller must not see (and load
# from) a package that pip is still writing, which crashed a test with
# SIGBUS in a CI run. The lock is released when this script exits.
mkdir -p "$BUILD"
exec 9>"$BUILD/.setup_venv.lock"
flock 9
# Prefer the python3 on PATH (its pip reaches PyPI); Debian's needs python3-venv.
PY=${DLRT_VENV_PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" >&2
fi
need=()
for spec in "$@"; do
  name=${spec%%[=<>]*}
  name=${name%%\[*}  # ray[data]==X: pip show knows the package as ray
  want=${spec#*==}
  have=$("$VENV/bin/python" -m pip show "$name" 2>/dev/null | awk '/^Version:/ {print $2}' || true)
  if [ "$spec" != "$name" ] && [ "$have" = "$want" ]; then continue; fi
  if [ "$spec" = "${spec%%[=<>]*}" ] && [ -n "$have" ]; then continue; fi
  need+=("$spec")
done
if [ ${#need[@]} -gt 0 ]; then
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q "${need[@]}" >&2
fi
echo "$VENV/bin/python"
