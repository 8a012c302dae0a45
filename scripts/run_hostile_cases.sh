#!/bin/bash
# Runs every reproducer of the hostile-input sweeps (../shared/cases/hostile-*/<case>/repro.sh) from the
# project root against DLRT (default build/dlrt), one at a time, each under a time limit, and writes
# each one's output to OUT/<sweep>__<case>.txt with its exit code and seconds in OUT/summary.tsv.
# Reading the outputs against each sweep's README decides the outcome; this only runs them.
#   scripts/run_hostile_cases.sh [OUT] (env: DLRT, PYTHON for the Python cases, CASE_TIMEOUT seconds, ONLY=regex)
set -u
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/hostile-cases}
mkdir -p "$OUT"
export DLRT=${DLRT:-build/dlrt}
: > "$OUT/summary.tsv"
for dir in ../shared/cases/hostile-*/*/; do
  [ -f "$dir/repro.sh" ] || continue
  sweep=$(basename "$(dirname "$dir")")
  name=$(basename "$dir")
  [[ -n "${ONLY:-}" && ! "$sweep/$name" =~ $ONLY ]] && continue
  start=$(date +%s)
  CASES=$(cd "$(dirname "$dir")" && pwd) timeout "${CASE_TIMEOUT:-300}" bash "$dir/repro.sh" > "$OUT/${sweep}__${name}.txt" 2>&1
  rc=$?
  printf '%s\t%s\t%d\t%ds\n' "$sweep" "$name" "$rc" "$(( $(date +%s) - start ))" | tee -a "$OUT/summary.tsv"
done
