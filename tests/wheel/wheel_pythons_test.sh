#!/usr/bin/env bash
# The wheel phase on a machine without every supported CPython
# (scripts/wheel_pythons.sh): the versions found are kept, each missing one is
# named with how to add it, and DLRT_REQUIRE_ALL_PYTHONS=1 (.ci/run) turns a
# missing one into a failure. The machine is simulated: a fake CPython 3.10
# (a script that answers the interpreter probe) on PATH, no pyenv, and versions
# no machine has (3.98, 3.99) as the missing ones.
#   tests/wheel/wheel_pythons_test.sh SOURCE_DIR
set -uo pipefail
SRC=$(cd "${1:?usage: wheel_pythons_test.sh SOURCE_DIR}" && pwd)
tmp=$(mktemp -d /tmp/dlrt-wheel-pythons.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "3.10 CPython %s"\n' "$tmp/bin/python3.10" > "$tmp/bin/python3.10"
chmod +x "$tmp/bin/python3.10"
rc=0
fail() { echo "FAIL: $*"; rc=1; }

# Output is matched with here-strings, not `echo | grep -q`: grep -q stops at
# the first match, and an echo of more than a pipe's worth then dies of SIGPIPE,
# which pipefail turns into a failed match.
# `here VERSIONS [VAR=VALUE...]`: wheel_pythons_here in a clean shell; prints
# "status|HERE|MISSING" and then its stderr.
here() {
  local versions=$1
  shift
  env -i PATH="$tmp/bin:/usr/bin:/bin" PYENV_ROOT="$tmp/no-pyenv" HOME="$tmp" DLRT_WHEEL_PYTHONS="$versions" "$@" \
    bash -c '. "$0/scripts/wheel_pythons.sh"; wheel_pythons_here 2> "$1/err"; echo "$?|$WHEEL_PYTHONS_HERE|$WHEEL_PYTHONS_MISSING"; cat "$1/err"' \
    "$SRC" "$tmp"
}

out=$(here "3.10 3.98 3.99")
[ "$(echo "$out" | head -1)" = "0|3.10|3.98 3.99" ] || fail "one of three found: expected 0|3.10|3.98 3.99, got: $out"
for v in 3.98 3.99; do
  grep -q "no CPython $v found.*pyenv install $v.*DLRT_PYTHON_${v//./_}=PATH" <<< "$out" ||
    fail "the missing $v is not named with how to add it: $out"
done

out=$(here "3.10 3.98 3.99" DLRT_REQUIRE_ALL_PYTHONS=1)
[ "$(echo "$out" | head -1)" = "1|3.10|3.98 3.99" ] || fail "DLRT_REQUIRE_ALL_PYTHONS=1 with 3.98 missing did not fail: $out"
grep -q "DLRT_REQUIRE_ALL_PYTHONS=1: .*missing: 3.98 3.99" <<< "$out" || fail "the failure does not say why: $out"

out=$(here "3.10" DLRT_REQUIRE_ALL_PYTHONS=1)
[ "$(echo "$out" | head -1)" = "0|3.10|" ] || fail "all found, DLRT_REQUIRE_ALL_PYTHONS=1: expected 0|3.10|, got: $out"

out=$(here "3.98 3.99")
[ "$(echo "$out" | head -1)" = "1||3.98 3.99" ] || fail "none found did not fail: $out"

# An interpreter named for a version it is not is missing, and says so.
out=$(here "3.98" DLRT_PYTHON_3_98="$tmp/bin/python3.10")
grep -q "DLRT_PYTHON_3_98=$tmp/bin/python3.10 is not CPython 3.98" <<< "$out" || fail "a wrong DLRT_PYTHON_3_98 is not reported: $out"

# The wheel test itself with none of its versions here: a failure that says why,
# before anything is built.
out=$(env -i PATH="$tmp/bin:/usr/bin:/bin" PYENV_ROOT="$tmp/no-pyenv" HOME="$tmp" DLRT_WHEEL_PYTHONS="3.98 3.99" \
  bash "$SRC/scripts/test_wheel.sh" 2>&1)
status=$?
[ $status -ne 0 ] || fail "test_wheel.sh with no interpreter exited 0"
grep -q "^FAILED: none of CPython 3.98 3.99 is here" <<< "$(tail -1 <<< "$out")" || fail "test_wheel.sh's verdict: $(echo "$out" | tail -1)"
grep -q "^not here 3.98: no interpreter" <<< "$out" || fail "test_wheel.sh does not list 3.98 as not here: $out"

[ $rc -ne 0 ] || echo "ok: found 3.10 kept, 3.98 and 3.99 named with how to add them; DLRT_REQUIRE_ALL_PYTHONS=1 fails on them"
exit $rc
