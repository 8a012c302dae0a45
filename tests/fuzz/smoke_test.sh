#!/usr/bin/env bash
# dlrt_fuzz_smoke (fuzz/smoke_main.cpp) reports what it is there to find: with
# its selftest harness (fuzz/smoke_selftest.cpp), an abort, a segfault, an
# exception thrown out of the harness and a hang each exit 1, name the input and
# leave it in the artifact folder; seeded mutations reach a crash no seed holds,
# the same run for the same seed; a clean run exits 0 with its counts; bad
# arguments exit 2.
#   tests/fuzz/smoke_test.sh PATH/TO/dlrt_fuzz_smoke
set -uo pipefail
BIN=${1:?usage: smoke_test.sh DLRT_FUZZ_SMOKE}
tmp=$(mktemp -d /tmp/dlrt-fuzz-smoke-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
fail() { echo "FAIL: $*"; rc=1; }

mkdir -p "$tmp/seeds"
printf 'clean input' > "$tmp/seeds/a"
printf 'another one' > "$tmp/seeds/b"
out=$("$BIN" selftest -runs=2000 -seed=7 "$tmp/seeds" 2>&1)
[ $? -eq 0 ] || fail "a clean run exited non-zero: $out"
grep -q "selftest: 2 inputs replayed, 2000 mutated runs (seed 7), no crash" <<< "$out" || fail "a clean run's counts: $out"

# `expect_crash NAME WHAT OPTIONS...`: the run exits 1, prints WHAT and writes the failing input.
expect_crash() {
  local name=$1 what=$2 out status
  shift 2
  rm -rf "$tmp/art" && mkdir -p "$tmp/art"
  out=$("$BIN" selftest -artifact_prefix="$tmp/art/" "$@" 2>&1)
  status=$?
  [ $status -eq 1 ] || { fail "$name: exit $status, not 1: $out"; return; }
  grep -q "$what" <<< "$out" || { fail "$name: no '$what' in: $out"; return; }
  ls "$tmp"/art/crash-* > /dev/null 2>&1 || fail "$name: no input written to the artifact folder: $out"
}
for kind in abort segv throw; do
  printf '%s me' "$kind" > "$tmp/$kind"
  expect_crash "$kind" "CRASH (SIG.*) on $tmp/$kind ($(wc -c < "$tmp/$kind") bytes)" "$tmp/seeds" "$tmp/$kind"
  cmp -s "$tmp/$kind" "$tmp/art/crash-2" || fail "$kind: the written input is not the one that failed"
done
printf 'hang' > "$tmp/hang"
expect_crash hang "TIMEOUT on $tmp/hang" -timeout=1 "$tmp/hang"

# Mutations of a seed without 0xff reach one with it; the same seed, the same failing run.
printf 'find a byte' > "$tmp/find"
expect_crash mutation "CRASH (SIGABRT.*) on mutated run [0-9]* (seed 3)" -runs=100000 -seed=3 "$tmp/find"
first=$(cat "$tmp"/art/crash-* | od -An -tx1)
expect_crash "mutation, again" "CRASH (SIGABRT" -runs=100000 -seed=3 "$tmp/find"
[ "$(cat "$tmp"/art/crash-* | od -An -tx1)" = "$first" ] || fail "seed 3 found a different input the second time"
echo "$first" | grep -q ff || fail "the mutated input that failed holds no 0xff: $first"

for args in "nosuch $tmp/seeds" "selftest -runs=x $tmp/seeds" "selftest -bogus=1" "selftest $tmp/missing"; do
  # shellcheck disable=SC2086
  "$BIN" $args > /dev/null 2>&1
  status=$?
  [ $status -eq 2 ] || fail "dlrt_fuzz_smoke $args: exit $status, not 2"
done

[ $rc -ne 0 ] || echo "ok: abort, segv, throw, hang and a crash found by mutation reported; clean run and usage errors"
exit $rc
