#!/usr/bin/env bash
# dlrt against both CPU peers, ONNX Runtime and OpenVINO, on every zoo model in one alternating run.
#
#   bench/compare_peers.sh ZOO_DIR [ORT_PEER_DIR]
#
# ZOO_DIR: the model zoo (../shared/models: manifest.json, <model>.onnx, <model>/<case>/*.npy).
# The feeds are the zoo's own sample inputs. ORT_PEER_DIR: the folder with ort_run.py (default
# ../shared/peers/ort next to the repository). The peers:
#   ONNX Runtime 1.30.0, CPU EP, all graph optimisations, intra_op threads = N (ort_run.py)
#   OpenVINO 2026.4.1 from PyPI, CPU plugin, INFERENCE_PRECISION_HINT=f32, PERFORMANCE_HINT=LATENCY,
#     INFERENCE_NUM_THREADS=N, inputs reshaped to the feeds' shapes (bench/ov_run.py)
# Both come from PyPI through scripts/setup_venv.sh: ORT into VENVS/venv, OpenVINO into
# VENVS/venv-openvino-<version>/venv (the folders the test scripts use for the OpenVINO matrix).
#
# Environment:
#   BUILD=build          build folder of dlrt and dlrt_fma_peak; raw reports go to
#                        BUILD/bench_results/peers-<stamp>
#   VENVS=BUILD          folder holding the peers' venvs (e.g. VENVS=build to reuse the lead's)
#   OV_VERSION=2026.4.1  the openvino release
#   OV_DYNAMIC=1         give OpenVINO the model's dynamic shapes instead of the feeds' shapes
#   THREADS="1 2"        thread counts (dlrt --threads, ORT intra_op_num_threads, OV threads)
#   ROUNDS=3             rounds; each runs every case once on each runtime, rotating which goes first
#   CASES=zoo            every batch-1 case of manifest.json plus minilm_l6/b8s128, or a list of
#                        MODEL/CASE (e.g. CASES="efficientnet_b0/b1 gpt_small/b1s32")
#   ITER_SCALE=1         multiplies each case's timed-run count (about 0.25 s of runs at 1 thread)
#   ITERS=N              the same timed-run count for every case instead
#   WARMUP=5             untimed runs before timing, all runtimes
#   PEERS="ort ov"       which peers to run
#   NO_BUILD=1           do not run ninja for dlrt_cli and dlrt_fma_peak first
#   DLRT_BIN=BUILD/dlrt  the dlrt binary to time; DLRT_LABEL names it in the results
#   BASE_BIN=PATH        a second dlrt binary (e.g. built at an earlier commit) timed in the same
#                        rotation, reported as "before" with its own ratios; BASE_LABEL names it
#   SAVE=bench/results/<date>_compare_peers_<HHMM>.json   where the summary JSON goes
#                        (relative to the repository; SAVE= leaves it in the raw folder only)
#
# Prints a Markdown table (per case and thread count: dlrt, ORT and OV medians, dlrt / ORT,
# dlrt / OV, dlrt / min(ORT, OV), session create and peak RSS of all three, dlrt's share of the
# FMA peak) and the geometric means per thread count. About 6 minutes with the defaults on 2 cores.
set -euo pipefail

# shellcheck source=bench/zoo_args.sh
source "$(dirname "$0")/zoo_args.sh"
parse_zoo_args compare_peers 37 "$@"
[ -f "$ZOO/manifest.json" ] || { echo "compare_peers: $ZOO/manifest.json is missing" >&2; exit 2; }
VENVS=${VENVS:-$BUILD}
case "$VENVS" in /*) ;; *) VENVS=$REPO/$VENVS ;; esac
THREADS=${THREADS:-1 2}
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-zoo}
ITER_SCALE=${ITER_SCALE:-1}
WARMUP=${WARMUP:-5}
PEERS=${PEERS:-ort ov}
ORT_VERSION=1.30.0
OV_VERSION=${OV_VERSION:-2026.4.1}
STAMP=$(date -u +%Y%m%d-%H%M%S)
SAVE=${SAVE-bench/results/$(date -u +%Y-%m-%d)_compare_peers_$(date -u +%H%M).json}
case "$SAVE" in ''|/*) ;; *) SAVE=$REPO/$SAVE ;; esac

log() { echo "compare_peers: $*" >&2; }

# --- tools -------------------------------------------------------------------
if [ "${NO_BUILD:-0}" != 1 ]; then
  [ -f "$BUILD/build.ninja" ] || { log "$BUILD has no build.ninja: configure it first"; exit 1; }
  ninja -C "$BUILD" -j2 dlrt_cli dlrt_fma_peak >&2
fi
DLRT=${DLRT_BIN:-$BUILD/dlrt}
FMA=$BUILD/dlrt_fma_peak
[ -x "$DLRT" ] && [ -x "$FMA" ] || { log "$DLRT or $FMA is missing (build dlrt_cli and dlrt_fma_peak)"; exit 1; }
BASE=${BASE_BIN:-}
[ -z "$BASE" ] || [ -x "$BASE" ] || { log "BASE_BIN $BASE is not an executable"; exit 1; }

# setup_venv.sh checks the pins and installs what is missing; it fails without network.
venv_python() {  # DIR PACKAGE==VERSION...
  "$REPO/scripts/setup_venv.sh" "$@" | tail -n 1 ||
    { log "scripts/setup_venv.sh $* failed (no network, or a package pip cannot install)"; return 1; }
}
ORT_PY=$(venv_python "$VENVS" "onnxruntime==$ORT_VERSION" numpy "onnx==1.23.2")
OV_PY=
case " $PEERS " in *" ov "*) OV_PY=$(venv_python "$VENVS/venv-openvino-$OV_VERSION" "openvino==$OV_VERSION") ;; esac
ov_have=$([ -z "$OV_PY" ] || "$OV_PY" -c 'import openvino; print(openvino.get_version().split("-")[0])')

# --- cases -------------------------------------------------------------------
if [ "$CASES" = zoo ]; then
  CASES=$("$ORT_PY" - "$ZOO/manifest.json" <<'PYEOF'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
out = []
for m in sorted(models):
    for c, spec in sorted(models[m]["cases"].items()):
        batch = {s[0] for s in spec["shapes"].values()}
        if batch == {1} or (m, c) == ("minilm_l6", "b8s128"):
            out.append(f"{m}/{c}")
print(" ".join(out))
PYEOF
)
fi
# Timed runs per case: about 0.25 s of runs at 1 thread on a 2-core Zen 5 (dlrt's latency).
iters_of() {
  local n
  if [ -n "${ITERS:-}" ]; then echo "$ITERS"; return; fi
  case "$1" in
    minilm_l6/b8s128|unet_small/*) n=10 ;;
    resnet18/*|lraspp_mobilenet_v3_large/*) n=20 ;;
    minilm_l6/b1s128|tiny_vit/*|efficientnet_b0/*|mobilenet_v2/*) n=40 ;;
    *) n=100 ;;
  esac
  n=$(( n * ITER_SCALE ))
  [ "$n" -ge 1 ] || n=1
  echo "$n"
}
tag_of() { echo "${1//\//_}"; }          # minilm_l6/b1s128 -> minilm_l6_b1s128
feeds_of() {                             # NAME=FILE per input of a case
  local f
  for f in "$ZOO/$1"/*.npy; do printf '%s=%s\n' "$(basename "$f" .npy)" "$f"; done
}

OUT=$BUILD/bench_results/peers-$STAMP
mkdir -p "$OUT"
log "cases: $CASES"
log "raw reports in $OUT"

# --- machine and FLOP counts -------------------------------------------------
"$FMA" --json > "$OUT/fma.json"
for c in $CASES; do
  mapfile -t feeds < <(feeds_of "$c")
  "$ORT_PY" "$REPO/bench/flops.py" "$ZOO/${c%%/*}.onnx" "${feeds[@]}" > "$OUT/flops_$(tag_of "$c").json" 2>/dev/null ||
    log "flops.py: some shapes of $c stayed unknown"
done
"$ORT_PY" - "$OUT/meta.json" "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" "$(nproc)" \
  "$(grep -o -w 'avx512f\|avx2\|fma\|avx512_bf16\|avx512_vnni\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')" \
  "$(git -C "$REPO" rev-parse --short HEAD)" "$(git -C "$REPO" status --porcelain --untracked-files=no | wc -l)" \
  "$ROUNDS" "$THREADS" "$WARMUP" "$(uptime)" "$ORT_VERSION" "$ov_have" "${OV_DYNAMIC:-0}" \
  "$(for c in $CASES; do tag_of "$c"; done | tr '\n' ' ')" "$DLRT" "${DLRT_LABEL:-}" "$BASE" "${BASE_LABEL:-}" <<'PYEOF'
import json, sys, datetime
(out, cpu, cores, isa, commit, dirty, rounds, threads, warmup, uptime, ort, ov, ov_dynamic, cases, dlrt,
 label, base, base_label) = sys.argv[1:]
json.dump({"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), "cpu": cpu,
           "cores": int(cores), "isa_flags": isa.split(), "commit": commit, "modified_tracked_files": int(dirty),
           "rounds": int(rounds), "threads": [int(t) for t in threads.split()], "warmup": int(warmup),
           "uptime_at_start": uptime.strip(), "ort_version": ort, "ov_version": ov,
           "ov_static_shapes": ov_dynamic != "1", "cases": cases.split(), "dlrt_binary": dlrt,
           "dlrt_label": label, "base_binary": base, "base_label": base_label,
           "tool": "bench/compare_peers.sh"}, open(out, "w"), indent=1)
PYEOF

# --- the comparison ----------------------------------------------------------
run_one() {  # who case threads round
  local who=$1 c=$2 t=$3 r=$4 n base
  n=$(iters_of "$c")
  base=$OUT/$(tag_of "$c")_t${t}_r${r}_$who
  case "$who" in
    dlrt|base)
      local args=() bin=$DLRT
      [ "$who" = base ] && bin=$BASE
      for f in "${feeds[@]}"; do args+=(--input "$f"); done
      "$bin" bench "$ZOO/${c%%/*}.onnx" --device cpu --threads "$t" --warmup "$WARMUP" --iterations "$n" \
        "${args[@]}" --json > "$base.json" 2> "$base.err" ;;
    ort)
      "$ORT_PY" "$REPO/bench/ort_rss.py" "$PEER/ort_run.py" --model "$ZOO/${c%%/*}.onnx" "${feeds[@]}" \
        --threads "$t" --iters "$n" --warmup "$WARMUP" --quiet > "$base.json" 2> "$base.err" ;;
    ov)
      local dyn=()
      [ "${OV_DYNAMIC:-0}" = 1 ] && dyn=(--dynamic)
      "$OV_PY" "$REPO/bench/ov_run.py" --model "$ZOO/${c%%/*}.onnx" "${feeds[@]}" "${dyn[@]}" \
        --threads "$t" --iters "$n" --warmup "$WARMUP" --quiet > "$base.json" 2> "$base.err" ;;
  esac || { log "$who failed on $c ($t threads): $(tail -n 3 "$base.err")"; rm -f "$base.json"; }
}

read -r -a who_list <<< "dlrt ${BASE:+base }$PEERS"
run_rounds

"$ORT_PY" "$REPO/bench/summarize_peers.py" "$OUT" ${SAVE:+"$SAVE"}
echo
echo "Raw reports: $OUT${SAVE:+; summary JSON: $SAVE}"
