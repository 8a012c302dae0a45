#!/usr/bin/env bash
# Each zoo case's share of the FMA peak on the AVX2 path against the AVX-512 path, on one machine
# with AVX-512 (issue 81's "within 10 points" line).
#
#   bench/isa_share.sh ZOO_DIR [SET_DIR...]
#
# ZOO_DIR: the model zoo (../shared/models); SET_DIRs: more sets of the same layout (manifest.json,
# <model>.onnx, <model>/<case>/*.npy), e.g. compare_peers.sh's BUILD/unseen_set; their cases are
# named <set folder>/<model>/<case>. The cases: every batch-1 case of each manifest plus
# minilm_l6/b8s128 (compare_peers.sh's). Per case, bench/flops.py counts the FLOP (1 multiply-add
# = 2) and dlrt_isa_share runs the model uncapped and capped at AVX2 in one process on 1 thread,
# alternating, each beside the register-only FMA peak of its width, all timed by the calling
# thread's CPU time (medians), so other processes' load does not count. Then
#   share_avx512 = FLOP / (time_avx512 x peak_avx512),  share_avx2 = FLOP / (time_avx2 x peak_avx2)
# and the difference in points (avx2 - avx512).
#
# Environment:
#   BUILD=build        build folder (dlrt_isa_share is built there unless NO_BUILD=1)
#   PYTHON=python3     a Python with onnx and numpy (and onnxruntime for transformer shapes)
#   CASES=all          or a list of MODEL/CASE (zoo) and SETNAME/MODEL/CASE
#   RUN_SCALE=1        multiplies each case's run count (about 0.4 s at 50 GFLOP/s, 9 to 41 runs)
#   SAVE=bench/results/<date>_avx2_share.json   the JSON (relative to the repository; SAVE= none)
# Prints a Markdown table; the JSON holds the machine (CPU name, flags), commit and method.
set -euo pipefail

[ $# -ge 1 ] || { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
PYTHON=${PYTHON:-python3}
CASES=${CASES:-all}
RUN_SCALE=${RUN_SCALE:-1}
SAVE=${SAVE-bench/results/$(date -u +%Y-%m-%d)_avx2_share.json}
case "$SAVE" in ''|/*) ;; *) SAVE=$REPO/$SAVE ;; esac
log() { echo "isa_share: $*" >&2; }

"$PYTHON" -c 'import onnx, numpy' 2>/dev/null || { log "$PYTHON lacks onnx or numpy (set PYTHON)"; exit 2; }
grep -qw avx512f /proc/cpuinfo || log "this CPU has no AVX-512: both columns run the AVX2 path"
if [ "${NO_BUILD:-0}" != 1 ]; then
  cmake --build "$BUILD" -j2 --target dlrt_isa_share >&2
fi
TOOL=$BUILD/dlrt_isa_share
[ -x "$TOOL" ] || { log "$TOOL is missing"; exit 1; }

declare -A SET_DIR
SET_DIR[zoo]=$(cd "$1" && pwd)
shift
for d in "$@"; do SET_DIR[$(basename "$d")]=$(cd "$d" && pwd); done
for s in "${!SET_DIR[@]}"; do
  [ -f "${SET_DIR[$s]}/manifest.json" ] || { log "${SET_DIR[$s]}/manifest.json is missing"; exit 2; }
done
if [ "$CASES" = all ]; then
  CASES=
  for s in zoo $(printf '%s\n' "${!SET_DIR[@]}" | grep -vx zoo | sort); do
    CASES+=" $("$PYTHON" - "${SET_DIR[$s]}/manifest.json" "$s" <<'PYEOF'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
prefix = "" if sys.argv[2] == "zoo" else sys.argv[2] + "/"
for m in sorted(models):
    for c, spec in sorted(models[m]["cases"].items()):
        batch = {s[0] for s in (spec.get("shapes") or {}).values() if s}
        if batch <= {1} or (m, c) == ("minilm_l6", "b8s128"):
            print(f"{prefix}{m}/{c}")
PYEOF
)"
  done
fi

read -r -a case_list <<< "$CASES"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/isa_share.XXXXXX")
log "cases:$CASES"
log "raw reports in $OUT"
for c in "${case_list[@]}"; do
  case "$c" in */*/*) set=${c%%/*} rel=${c#*/} ;; *) set=zoo rel=$c ;; esac
  dir=${SET_DIR[$set]:-}
  [ -n "$dir" ] || { log "$c: no set folder $set given"; exit 2; }
  model=$dir/${rel%%/*}.onnx
  feeds=()
  for f in "$dir/$rel"/*.npy; do feeds+=("$(basename "$f" .npy)=$f"); done
  tag=${c//\//_}
  "$PYTHON" "$REPO/bench/flops.py" "$model" "${feeds[@]}" > "$OUT/flops_$tag.json" 2>/dev/null ||
    log "flops.py: some shapes of $c stayed unknown"
  runs=$("$PYTHON" -c 'import json, math, sys
f = json.load(open(sys.argv[1]))["flop"] or 1
print(max(1, round(min(41, max(9, math.ceil(0.4 * 50e9 / f))) * float(sys.argv[2]))))' "$OUT/flops_$tag.json" "$RUN_SCALE")
  log "$c: $runs runs"
  "$TOOL" "$model" "$dir/$rel" --runs "$runs" > "$OUT/run_$tag.json" || { log "$c failed"; exit 1; }
done

"$PYTHON" - "$OUT" "$SAVE" "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" "$(nproc)" \
  "$(grep -o -w 'avx512f\|avx512bw\|avx512vl\|avx512_vnni\|avx512_bf16\|avx_vnni\|avx2\|fma\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')" \
  "$(git -C "$REPO" rev-parse --short HEAD)" "$(git -C "$REPO" status --porcelain --untracked-files=no | wc -l)" \
  "$(uptime)" "${case_list[@]}" <<'PYEOF'
import datetime, json, os, sys
out, save, cpu, cores, flags, commit, dirty, uptime, *cases = sys.argv[1:]
rows = []
for c in cases:
    tag = c.replace("/", "_")
    flop = json.load(open(os.path.join(out, f"flops_{tag}.json"))).get("flop")
    r = json.load(open(os.path.join(out, f"run_{tag}.json")))
    row = {"case": c, "flop": flop, "runs": r["runs"]}
    for side, key in (("wide", "avx512"), ("avx2", "avx2")):
        s = r[side]
        t, peak = s["median_thread_cpu_ms"], s["peak_gflops_median"]
        row[key] = {"vector_isa": s["vector_isa"], "thread_cpu_ms": t, "wall_ms": s["median_ms"],
                    "peak_gflops": peak, "peak_gflops_best": s["peak_gflops_best"],
                    "gflops": flop / (t * 1e6) if flop and t else None}
        row[key]["share_pct"] = 100 * row[key]["gflops"] / peak if row[key]["gflops"] and peak else None
    a, b = row["avx512"]["share_pct"], row["avx2"]["share_pct"]
    row["points_avx2_minus_avx512"] = b - a if a is not None and b is not None else None
    row["time_ratio_avx2_over_avx512"] = row["avx2"]["thread_cpu_ms"] / row["avx512"]["thread_cpu_ms"]
    rows.append(row)
f = lambda x, n=1: "-" if x is None else f"{x:.{n}f}"
print("| case | GFLOP | AVX-512 ms | AVX2 ms | AVX2/AVX-512 time | share AVX-512 | share AVX2 | points |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['case']} | {f(r['flop'] / 1e9 if r['flop'] else None, 3)} | {f(r['avx512']['thread_cpu_ms'], 2)} | "
          f"{f(r['avx2']['thread_cpu_ms'], 2)} | {f(r['time_ratio_avx2_over_avx512'], 2)} | "
          f"{f(r['avx512']['share_pct'])}% | {f(r['avx2']['share_pct'])}% | {f(r['points_avx2_minus_avx512'], 1)} |")
peaks = {k: sorted(r[k]["peak_gflops"] for r in rows) for k in ("avx512", "avx2")}
print(f"\nFMA peak, 1 thread, median over cases of each case's median (thread CPU time): "
      f"AVX-512 {f(peaks['avx512'][len(rows) // 2])} GFLOP/s, AVX2 {f(peaks['avx2'][len(rows) // 2])} GFLOP/s")
far = [r["case"] for r in rows if r["points_avx2_minus_avx512"] is None or abs(r["points_avx2_minus_avx512"]) > 10]
print(f"more than 10 points apart: {len(far)} of {len(rows)}" + (f" ({', '.join(far)})" if far else ""))
doc = {"meta": {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), "cpu": cpu,
                "cores": int(cores), "isa_flags": flags.split(), "commit": commit,
                "modified_tracked_files": int(dirty), "uptime_at_start": uptime.strip(), "tool": "bench/isa_share.sh",
                "method": "1 thread; one process per case (dlrt_isa_share) holding a session created and run "
                          "uncapped and one created and run under ScopedCpuIsa(avx2) (what DLRT_CPU_ISA=avx2 "
                          "does); each round runs both sessions and the register-only FMA loop of each width "
                          "(dlrt_fma_peak's, 12 chains, ~20 ms), order alternating; every figure is the median "
                          "over rounds of the calling thread's CPU time (at 1 thread the run executes on the "
                          "calling thread). FLOP from bench/flops.py (Conv/ConvTranspose/MatMul/Gemm, 2 per "
                          "multiply-add). share = FLOP / (time x peak of the same width); points = share_avx2 - "
                          "share_avx512."},
       "rows": rows, "far_over_10_points": far}
if save:
    os.makedirs(os.path.dirname(save), exist_ok=True)
    json.dump(doc, open(save, "w"), indent=1)
    print(f"JSON: {save}")
PYEOF
