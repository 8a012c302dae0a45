#!/usr/bin/env bash
# Side-by-side latency of dlrt and ONNX Runtime 1.30 (CPU) on the model zoo.
#
#   bench/compare_ort.sh ZOO_DIR [ORT_PEER_DIR]
#
# ZOO_DIR: the folder with minilm_l6.onnx, resnet18.onnx, mobilenet_v2.onnx,
# tiny_vit.onnx (../shared/models). ORT_PEER_DIR: the folder with ort_run.py
# (default ../shared/peers/ort next to the repository).
#
# Environment:
#   BUILD=build          build folder: dlrt and dlrt_fma_peak come from here; the Python
#                        venv (onnxruntime==1.30.0, numpy, onnx) is BUILD/venv, inputs
#                        BUILD/bench_inputs, results BUILD/bench_results/<date>
#   THREADS="1 2"        thread counts (dlrt --threads, ORT intra_op_num_threads)
#   ROUNDS=3             rounds; each round runs every case once on each runtime,
#                        alternating which goes first
#   CASES="minilm_b1s128 minilm_b8s128 minilm_b1s16 resnet18 mobilenet_v2 tiny_vit"
#                        or CASES=quant: the int8 and float16 variants (minilm_int8_b1s128,
#                        minilm_int8_b8s128, <cnn>_int8_qdq, <cnn>_int8_qop, <cnn>_fp16 for
#                        resnet18, mobilenet_v2, efficientnet_b0) next to their float32 models
#   QZOO=BUILD/quant_zoo the quantized zoo (tests/models/make_quant_zoo.py; made there when missing)
#   ITER_SCALE=1         multiplies each case's iteration count (see iters_of below)
#   ITERS=N              the same timed-run count N for every case instead
#   WARMUP=3             untimed runs before timing, both runtimes
#   NO_BUILD=1           do not run ninja for dlrt_cli and dlrt_fma_peak first
#   PRECISION=f32        dlrt's CPU matmul precision (dlrt bench --precision): f32, or
#                        bf16x3 (AMX tiles; ORT stays fp32, so say so when quoting it)
#
# Prints a Markdown table (dlrt median / ORT median per case and thread count,
# session-create and peak-RSS ratios, their geometric means) and the machine's
# peak FMA rate with the GFLOP/s reached on each case; writes everything under
# the results folder (summary.md, summary.json, every raw JSON report).
# About 10 minutes on a 2-core machine with the defaults.
set -euo pipefail

# shellcheck source=bench/zoo_args.sh
source "$(dirname "$0")/zoo_args.sh"
parse_zoo_args compare_ort 28 "$@"
[ -f "$PEER/ort_run.py" ] || { echo "compare_ort: $PEER/ort_run.py is missing" >&2; exit 2; }
THREADS=${THREADS:-1 2}
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-minilm_b1s128 minilm_b8s128 minilm_b1s16 resnet18 mobilenet_v2 tiny_vit}
if [ "$CASES" = quant ]; then
  CASES="minilm_b1s128 minilm_int8_b1s128 minilm_b8s128 minilm_int8_b8s128"
  for cnn in resnet18 mobilenet_v2 efficientnet_b0; do CASES="$CASES $cnn ${cnn}_int8_qdq ${cnn}_int8_qop ${cnn}_fp16"; done
fi
QZOO=${QZOO:-$BUILD/quant_zoo}
ITER_SCALE=${ITER_SCALE:-1}
WARMUP=${WARMUP:-3}
PRECISION=${PRECISION:-f32}
case "$PRECISION" in f32|bf16x3) ;; *) echo "compare_ort: PRECISION must be f32 or bf16x3, not '$PRECISION'" >&2; exit 2 ;; esac
ORT_VERSION=1.30.0

log() { echo "compare_ort: $*" >&2; }

# Timed runs per case: a few seconds per run on a 2-core machine, the same for both runtimes.
iters_of() {
  local n
  if [ -n "${ITERS:-}" ]; then echo "$ITERS"; return; fi
  case "$1" in
    minilm_b8s128|minilm_int8_b8s128) n=6 ;;
    minilm_b1s16) n=60 ;;
    mobilenet_v2|tiny_vit) n=30 ;;
    *) n=20 ;;
  esac
  n=$(( n * ITER_SCALE ))
  [ "$n" -ge 1 ] || n=1
  echo "$n"
}

model_of() {
  case "$1" in
    minilm_int8_*) echo "$QZOO/minilm_l6_dynamic_qint8.onnx" ;;
    *_int8_qdq) echo "$QZOO/${1%_int8_qdq}_static_qdq.onnx" ;;
    *_int8_qop) echo "$QZOO/${1%_int8_qop}_static_qop.onnx" ;;
    *_fp16) echo "$QZOO/$1.onnx" ;;
    minilm_*) echo "$ZOO/minilm_l6.onnx" ;;
    *) echo "$ZOO/$1.onnx" ;;
  esac
}

# --- build and tools -------------------------------------------------------
if [ "${NO_BUILD:-0}" != 1 ]; then
  [ -f "$BUILD/build.ninja" ] || { log "$BUILD has no build.ninja: configure it first (cmake -G Ninja -DCMAKE_BUILD_TYPE=Release)"; exit 1; }
  log "building dlrt_cli and dlrt_fma_peak in $BUILD"
  ninja -C "$BUILD" -j2 dlrt_cli dlrt_fma_peak >&2
fi
DLRT=$BUILD/dlrt
FMA=$BUILD/dlrt_fma_peak
[ -x "$DLRT" ] || { log "$DLRT is missing (build the dlrt_cli target)"; exit 1; }
[ -x "$FMA" ] || { log "$FMA is missing (build the dlrt_fma_peak target)"; exit 1; }

PKGS=("onnxruntime==$ORT_VERSION" "numpy" "onnx==1.23.2" "onnxconverter-common==1.16.0")
if ! PY=$("$REPO/scripts/setup_venv.sh" "$BUILD" "${PKGS[@]}" | tail -n 1); then
  # setup_venv.sh stops when `pip show` fails for a package not yet installed;
  # install the missing ones here, then let it check the pins.
  log "setup_venv.sh failed; installing the packages with the venv's pip and retrying"
  [ -x "$BUILD/venv/bin/python" ] || "${DLRT_VENV_PYTHON:-python3}" -m venv "$BUILD/venv" >&2
  "$BUILD/venv/bin/python" -m pip install --disable-pip-version-check -q "${PKGS[@]}" >&2 ||
    { log "pip cannot install ${PKGS[*]} (no network?)"; exit 1; }
  PY=$("$REPO/scripts/setup_venv.sh" "$BUILD" "${PKGS[@]}" | tail -n 1)
fi
have=$("$PY" -c 'import onnxruntime; print(onnxruntime.__version__)')
[ "$have" = "$ORT_VERSION" ] || { log "venv has onnxruntime $have, want $ORT_VERSION"; exit 1; }

case " $CASES " in
  *_int8_*|*_fp16*)
    if [ ! -f "$QZOO/STAMP" ]; then
      log "making the quantized zoo in $QZOO"
      "$PY" -W ignore "$REPO/tests/models/make_quant_zoo.py" "$ZOO" "$QZOO" >&2
    fi ;;
esac
INPUTS=$BUILD/bench_inputs
"$PY" "$REPO/bench/make_inputs.py" "$INPUTS"

STAMP=$(date -u +%Y%m%d-%H%M%S)
COMMIT=$(git -C "$REPO" rev-parse --short HEAD)
OUT=$BUILD/bench_results/$STAMP
mkdir -p "$OUT"
log "results in $OUT"

feeds_of() {  # NAME=FILE arguments for a case
  local f
  for f in "$INPUTS/$1"/*.npy; do
    printf '%s=%s\n' "$(basename "$f" .npy)" "$f"
  done
}

# --- machine and FLOP counts ----------------------------------------------
log "measuring peak FMA rate"
"$FMA" --json > "$OUT/fma.json"
cat "$OUT/fma.json" >&2
for c in $CASES; do
  mapfile -t feeds < <(feeds_of "$c")
  "$PY" "$REPO/bench/flops.py" "$(model_of "$c")" "${feeds[@]}" > "$OUT/flops_$c.json" ||
    log "flops.py: some shapes of $c stayed unknown (see $OUT/flops_$c.json)"
done
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
isa=$(grep -o -w 'avx512f\|avx2\|fma\|avx512_bf16\|avx512_vnni\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')
"$PY" - "$OUT/meta.json" "$cpu" "$(nproc)" "$isa" "$COMMIT" \
  "$(git -C "$REPO" status --porcelain --untracked-files=no | wc -l)" "$ROUNDS" "$THREADS" "$WARMUP" "$(uptime)" \
  "$PRECISION" <<'PYEOF'
import json, sys, datetime
out, cpu, cores, isa, commit, dirty, rounds, threads, warmup, uptime, precision = sys.argv[1:]
json.dump({"date_utc": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), "cpu": cpu, "cores": int(cores),
           "isa_flags": isa.split(), "commit": commit, "modified_tracked_files": int(dirty), "rounds": int(rounds),
           "threads": threads.split(), "warmup": int(warmup), "uptime_at_start": uptime.strip(),
           "dlrt_precision": precision},
          open(out, "w"), indent=1)
PYEOF

# --- the comparison ---------------------------------------------------------
run_dlrt() {  # case threads round
  local c=$1 t=$2 r=$3 n
  n=$(iters_of "$c")
  local args=()
  for f in "${feeds[@]}"; do args+=(--input "$f"); done
  "$DLRT" bench "$(model_of "$c")" --device cpu --threads "$t" --warmup "$WARMUP" --iterations "$n" --precision "$PRECISION" "${args[@]}" --json \
    > "$OUT/${c}_t${t}_r${r}_dlrt.json" 2> "$OUT/${c}_t${t}_r${r}_dlrt.err" ||
    { log "dlrt bench failed on $c (threads $t): $(tail -n 3 "$OUT/${c}_t${t}_r${r}_dlrt.err")"; rm -f "$OUT/${c}_t${t}_r${r}_dlrt.json"; }
}
run_ort() {
  local c=$1 t=$2 r=$3 n
  n=$(iters_of "$c")
  "$PY" "$REPO/bench/ort_rss.py" "$PEER/ort_run.py" --model "$(model_of "$c")" "${feeds[@]}" --threads "$t" \
    --iters "$n" --warmup "$WARMUP" --quiet > "$OUT/${c}_t${t}_r${r}_ort.json" 2> "$OUT/${c}_t${t}_r${r}_ort.err" ||
    { log "ORT failed on $c (threads $t): $(tail -n 3 "$OUT/${c}_t${t}_r${r}_ort.err")"; rm -f "$OUT/${c}_t${t}_r${r}_ort.json"; }
}

run_one() {  # who case threads round
  case "$1" in
    dlrt) run_dlrt "$2" "$3" "$4" ;;
    ort) run_ort "$2" "$3" "$4" ;;
  esac
}
who_list=(dlrt ort)
run_rounds

# The FMA rates again: on a shared host the machine's state can change during the rounds.
"$FMA" --json > "$OUT/fma_end.json" || rm -f "$OUT/fma_end.json"
"$PY" "$REPO/bench/summarize.py" "$OUT"
echo
echo "Machine: $cpu, $(nproc) cores; onnxruntime $ORT_VERSION (Python, CPU EP, fp32); dlrt $COMMIT, precision $PRECISION (working tree at the start; the binary as built then); $(date -u +%Y-%m-%d)."
echo "Raw reports: $OUT"
