# shellcheck shell=bash disable=SC2034
# The CPython versions dlrt ships wheels for, and where each interpreter is:
# sourced by scripts/build_wheels.sh, scripts/test_wheel.sh and
# scripts/prepare_venvs.sh.
#   WHEEL_PYTHONS        the versions a wheel is installed and tested on
#   wheel_build_python V the version whose build makes V's wheel: 3.12 for 3.12
#                        and later (one cp312-abi3 wheel, pyproject.toml's
#                        wheel.py-api), V itself before
#   wheel_python V       the interpreter's path for version V (e.g. 3.10), or a
#                        one-line error on stderr (how to add it) and status 1
#   wheel_pythons_here   splits WHEEL_PYTHONS into WHEEL_PYTHONS_HERE (those with
#                        an interpreter on this machine) and WHEEL_PYTHONS_MISSING,
#                        with wheel_python's line for each missing one on stderr;
#                        status 1 when none is here, or when one is missing and
#                        DLRT_REQUIRE_ALL_PYTHONS=1 (.ci/run sets it)
# A machine with only its distribution's python3 builds and tests the wheel of
# that version alone; CI demands all of them.
# DLRT_WHEEL_PYTHONS overrides WHEEL_PYTHONS (e.g. "3.11" for one wheel only);
# DLRT_PYTHON_<major>_<minor> (DLRT_PYTHON_3_10=/opt/py/bin/python3.10) names an
# interpreter the search below would not find.

WHEEL_PYTHONS=${DLRT_WHEEL_PYTHONS:-"3.10 3.11 3.12 3.13"}

wheel_build_python() {
  local v=$1
  if [ "${v%%.*}" -eq 3 ] && [ "${v#*.}" -ge 12 ]; then echo 3.12; else echo "$v"; fi
}

# Runs CANDIDATE and prints the interpreter's own path (a pyenv shim resolved)
# when it is CPython VERSION; a pyenv shim for a version that is not selected
# fails here and is passed over.
_wheel_python_is() {
  local cand=$1 v=$2 got
  got=$("$cand" -c 'import sys, platform
print("%d.%d %s %s" % (sys.version_info[:2] + (platform.python_implementation(), sys.executable)))' 2>/dev/null) ||
    return 1
  [ "${got% *}" = "$v CPython" ] || return 1
  echo "${got##* }"
}

wheel_python() {
  local v=$1 var cand root=${PYENV_ROOT:-$HOME/.pyenv}
  var="DLRT_PYTHON_${v//./_}"
  if [ -n "${!var:-}" ]; then
    _wheel_python_is "${!var}" "$v" && return 0
    echo "$var=${!var} is not CPython $v" >&2
    return 1
  fi
  # PATH first, then pyenv's installs (newest patch release first), then the system's.
  for cand in "$(command -v "python$v" 2>/dev/null)" \
              $(ls -d "$root"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -rV) \
              "/usr/local/bin/python$v" "/usr/bin/python$v"; do
    [ -n "$cand" ] && [ -x "$cand" ] && _wheel_python_is "$cand" "$v" && return 0
  done
  echo "no CPython $v found (PATH, $root/versions/$v.*, /usr/bin): add it with pyenv install $v (or the" \
       "distribution's python$v-venv and python$v-dev where it has them), or name it with $var=PATH" >&2
  return 1
}

wheel_pythons_here() {
  local v err
  WHEEL_PYTHONS_HERE="" WHEEL_PYTHONS_MISSING=""
  for v in $WHEEL_PYTHONS; do
    if err=$(wheel_python "$v" 2>&1 > /dev/null); then
      WHEEL_PYTHONS_HERE="${WHEEL_PYTHONS_HERE:+$WHEEL_PYTHONS_HERE }$v"
    else
      WHEEL_PYTHONS_MISSING="${WHEEL_PYTHONS_MISSING:+$WHEEL_PYTHONS_MISSING }$v"
      echo "$err" >&2
    fi
  done
  if [ -z "$WHEEL_PYTHONS_HERE" ]; then
    echo "none of CPython $WHEEL_PYTHONS is here: no wheel can be built or tested" >&2
    return 1
  fi
  if [ -n "$WHEEL_PYTHONS_MISSING" ] && [ "${DLRT_REQUIRE_ALL_PYTHONS:-0}" = 1 ]; then
    echo "DLRT_REQUIRE_ALL_PYTHONS=1: every one of CPython $WHEEL_PYTHONS is required; missing: $WHEEL_PYTHONS_MISSING" >&2
    return 1
  fi
  return 0
}
