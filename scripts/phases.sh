# Phase timings of the test scripts (sourced, not run): `phase NAME CMD...`
# runs CMD, appends "NAME<TAB>seconds<TAB>exit status" to $DLRT_PHASE_LOG
# (when set) and returns CMD's exit status; `phase_record NAME SECONDS RC`
# appends a line measured elsewhere (a background job); `phase_report`
# prints the table, slowest first, with the wall-clock total since
# $DLRT_PHASE_START (seconds since the epoch).
# scripts/make_test.sh sets both and prints the report at the end of
# `make test`, so a phase that grows is seen in every run.

phase_now() { date +%s.%N; }
phase_since() { awk -v a="$1" -v b="$(phase_now)" 'BEGIN { printf "%.1f", b - a }'; }

phase_record() {  # NAME SECONDS RC
  [ -n "${DLRT_PHASE_LOG:-}" ] || return 0
  printf '%s\t%.1f\t%s\n' "$1" "$2" "$3" >> "$DLRT_PHASE_LOG"
}

phase() {  # NAME CMD...
  local name=$1 t0 rc
  shift
  t0=$(phase_now)
  "$@"
  rc=$?
  phase_record "$name" "$(phase_since "$t0")" "$rc"
  return $rc
}

phase_report() {
  [ -n "${DLRT_PHASE_LOG:-}" ] && [ -f "$DLRT_PHASE_LOG" ] || return 0
  echo
  echo "== test time per phase (seconds; $DLRT_PHASE_LOG)"
  sort -t $'\t' -k2,2 -rn "$DLRT_PHASE_LOG" |
    awk -F '\t' '{ printf "%8.1f  %-52s %s\n", $2, $1, ($3 == 0 ? "" : "exit " $3) }'
  if [ -n "${DLRT_PHASE_START:-}" ]; then
    printf '%8.1f  %s\n' "$(phase_since "$DLRT_PHASE_START")" "wall clock in all (background phases overlap the others)"
  fi
}
