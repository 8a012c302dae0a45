# Sourced by bench/compare_ort.sh and bench/compare_peers.sh: their usage text (the script's
# leading comment, lines 2 to USAGE_END), their ZOO_DIR [ORT_PEER_DIR] arguments and the
# alternating rounds.
#   parse_zoo_args TOOL USAGE_END "$@"    sets REPO, ZOO and PEER (exit 2 on a bad argument), and
#                                         BUILD (default build) as an absolute path

usage() {
  sed -n "2,${USAGE_END}p" "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

parse_zoo_args() {
  local tool=$1
  USAGE_END=$2
  shift 2
  [ $# -ge 1 ] && [ $# -le 2 ] || usage
  case "$1" in -h|--help) usage ;; esac
  REPO=$(cd "$(dirname "$0")/.." && pwd)
  ZOO=$(cd "$1" && pwd) || { echo "$tool: no zoo folder $1" >&2; exit 2; }
  PEER=${2:-$REPO/../shared/peers/ort}
  PEER=$(cd "$PEER" 2>/dev/null && pwd) ||
    { echo "$tool: no ORT peer folder ${2:-$REPO/../shared/peers/ort}" >&2; exit 2; }
  BUILD=${BUILD:-build}
  case "$BUILD" in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
}

# For each of ROUNDS rounds, each case of CASES and each count of THREADS: `run_one WHO CASE
# THREADS ROUND` for every runtime of the array who_list, round r starting with
# who_list[(r - 1) mod k] (two runtimes alternate). The array `feeds` holds `feeds_of CASE`
# during a case's runs. Logs through `log`, and the time it took.
run_rounds() {
  local r c t i k=${#who_list[@]} start
  start=$(date +%s)
  for r in $(seq 1 "$ROUNDS"); do
    for c in $CASES; do
      mapfile -t feeds < <(feeds_of "$c")
      for t in $THREADS; do
        log "round $r/$ROUNDS: $c, $t thread(s)"
        for i in $(seq 0 $(( k - 1 ))); do
          run_one "${who_list[$(( (i + r - 1) % k ))]}" "$c" "$t" "$r"
        done
      done
    done
  done
  log "comparison took $(( $(date +%s) - start )) s"
}
