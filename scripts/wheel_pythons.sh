# shellcheck shell=bash disable=SC2034
# The CPython versions dlrt ships wheels for, and where each interpreter is:
# sourced by scripts/build_wheels.sh, scripts/test_wheel.sh and
# scripts/prepare_venvs.sh.
#   WHEEL_PYTHONS        the versions a wheel is installed and tested on
#   wheel_build_python V the version whose build makes V's wheel: 3.12 for 3.12
#                        and later (one cp312-abi3 wheel, pyproject.toml's
#                        wheel.py-api), V itself before
#   wheel_python V       the interpreter's path for version V (e.g. 3.10), or a
#                        one-line error on stderr and status 1
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
  echo "no CPython $v found (PATH, $root/versions/$v.*, /usr/bin): install it (pyenv install $v, or" \
       "apt-get install python$v-venv python$v-dev), or name it with $var=PATH" >&2
  return 1
}
