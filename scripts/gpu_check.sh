#!/usr/bin/env bash
# gpu_check.sh - verify the CUDA backend on a lent GPU machine in one call (issue 42, deliverable 5).
#
# Runs from the repo root with the kit (scripts/gpu_kit.sh) at .gpukit, writes $OUT/gpu_check.json
# (everything), $OUT/gpu_check.log (readable) and prints a compact summary. Device call:
#   bash scripts/gpu_check.sh            with carry: [".gpukit"]
# What it does: unpack the kit into a temp folder, pick the pythons, make a dlrt wrapper with the kit's
# libraries (adding the kit's libstdc++ only if the system's is too old), point OpenCL at the kit's ICD
# loader and NVIDIA's OpenCL driver, then scripts/gpu_check.py (see there): dlrt devices, regenerated zoo,
# ONNX Runtime references, `dlrt run --strict` on cuda and cpu, dlrt bench b1 on cuda and opencl,
# b8 against PyTorch eager. Ends in < 6 min; every step has a timeout; failures are recorded, not fatal.
#
# Environment (all optional):
#   GPU_CHECK_DEVICES=cpu      local test without a GPU: cpu wherever cuda would be, no opencl bench,
#                              torch on the cpu, fewer iterations
#   GPU_CHECK_RUN_DEVICES      correctness devices, comma-separated (default cuda,cpu)
#   GPU_CHECK_BENCH_DEVICES    batch-1 bench devices (default cuda,opencl)
#   GPU_CHECK_B8_DEVICE, GPU_CHECK_TORCH_DEVICE (default cuda), GPU_CHECK_MODELS (subset), GPU_CHECK_ITERS,
#   GPU_CHECK_WARMUP, GPU_CHECK_B8_ITERS, GPU_CHECK_B8_WARMUP, GPU_CHECK_BUDGET_S (default 300)
#   GPU_KIT_DIR (default .gpukit), GPU_CHECK_DLRT (another dlrt binary), GPU_CHECK_PYTHON,
#   GPU_CHECK_TORCH_PYTHON, GPU_CHECK_CUDA_LIB_PATH (exported as DLRT_CUDA_LIB_PATH from the start)
set -u

T_START=$(date +%s)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
LOG=$OUT/gpu_check.log
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
logonly() { echo "$*" >> "$LOG"; }

KIT_SRC=${GPU_KIT_DIR:-$ROOT/.gpukit}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
say "gpu_check: repo $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)), kit $KIT_SRC, work $WORK, out $OUT"

# --- mode
if [ "${GPU_CHECK_DEVICES:-}" = cpu ]; then
  RUN_DEVS=${GPU_CHECK_RUN_DEVICES:-cpu}; BENCH_DEVS=${GPU_CHECK_BENCH_DEVICES:-cpu}
  B8_DEV=${GPU_CHECK_B8_DEVICE:-cpu}; TORCH_DEV=${GPU_CHECK_TORCH_DEVICE:-cpu}
  ITERS=${GPU_CHECK_ITERS:-5}; WARMUP=${GPU_CHECK_WARMUP:-1}
  B8_ITERS=${GPU_CHECK_B8_ITERS:-5}; B8_WARMUP=${GPU_CHECK_B8_WARMUP:-1}
else
  RUN_DEVS=${GPU_CHECK_RUN_DEVICES:-cuda,cpu}; BENCH_DEVS=${GPU_CHECK_BENCH_DEVICES:-cuda,opencl}
  B8_DEV=${GPU_CHECK_B8_DEVICE:-cuda}; TORCH_DEV=${GPU_CHECK_TORCH_DEVICE:-cuda}
  ITERS=${GPU_CHECK_ITERS:-50}; WARMUP=${GPU_CHECK_WARMUP:-10}
  B8_ITERS=${GPU_CHECK_B8_ITERS:-100}; B8_WARMUP=${GPU_CHECK_B8_WARMUP:-20}
fi

# --- unpack the kit
if [ -f "$KIT_SRC/kit.tar.gz" ]; then
  timeout 120 tar -C "$WORK" -xzf "$KIT_SRC/kit.tar.gz" || say "gpu_check: unpacking $KIT_SRC/kit.tar.gz failed"
elif [ -d "$KIT_SRC/kit" ]; then
  cp -a "$KIT_SRC/kit" "$WORK/kit"
fi
KIT=$WORK/kit
if [ ! -f "$KIT/KIT.json" ]; then
  say "gpu_check: no kit at $KIT_SRC (make it with scripts/gpu_kit.sh BUILD_DIR .gpukit and carry .gpukit)"
  exit 1
fi
logonly "kit: $(head -c 600 "$KIT/KIT.json" | tr '\n' ' ')"

# --- pythons: one with onnx + onnxruntime + numpy (main), one with torch + torchvision + onnx (eager)
pick() {  # pick MODULES CANDIDATES...
  local mods=$1; shift
  for p in "$@"; do
    [ -n "$p" ] || continue
    if command -v "$p" >/dev/null 2>&1 && timeout 60 "$p" -c "import $mods" >/dev/null 2>&1; then
      command -v "$p"; return 0
    fi
  done
  return 1
}
PY=$(pick "onnx, onnxruntime, numpy" "${GPU_CHECK_PYTHON:-}" /opt/torch/.venv/bin/python3 \
     "$ROOT/build/venv/bin/python" python3 /usr/bin/python3) || { say "gpu_check: no python with onnx, onnxruntime and numpy"; exit 1; }
TPY=$(pick "torch, torchvision, onnx, numpy" "${GPU_CHECK_TORCH_PYTHON:-}" /opt/torch/.venv/bin/python3 \
      python3 /usr/bin/python3) || TPY=""
say "python: $PY ; torch python: ${TPY:-none}"

# --- dlrt with the kit's libraries
DLRT_BIN=${GPU_CHECK_DLRT:-$KIT/bin/dlrt}
LIBS=$KIT/lib
if ! LD_LIBRARY_PATH=$LIBS timeout 30 "$DLRT_BIN" --version >/dev/null 2>"$WORK/version.err"; then
  logonly "dlrt --version with $LIBS failed: $(cat "$WORK/version.err")"
  LIBS=$KIT/lib:$KIT/lib-fallback
  export GPU_CHECK_LIB_NOTE="system libstdc++/libgcc too old: using the kit's lib-fallback"
  say "gpu_check: $GPU_CHECK_LIB_NOTE"
fi
cat > "$WORK/dlrt" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$LIBS\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$DLRT_BIN" "\$@"
EOF
chmod +x "$WORK/dlrt"
logonly "ldd dlrt (LD_LIBRARY_PATH=$LIBS):"
LD_LIBRARY_PATH=$LIBS ldd "$DLRT_BIN" >> "$LOG" 2>&1
if LD_LIBRARY_PATH=$LIBS ldd "$DLRT_BIN" 2>&1 | grep -q "not found"; then
  say "gpu_check: WARNING: unresolved libraries: $(LD_LIBRARY_PATH=$LIBS ldd "$DLRT_BIN" 2>&1 | grep 'not found' | tr '\n' ' ')"
fi
say "dlrt: $("$WORK/dlrt" --version 2>&1 | head -1)"

export DLRT_CACHE_DIR=$WORK/cache
mkdir -p "$DLRT_CACHE_DIR"

# --- OpenCL: the kit's ICD loader; NVIDIA's OpenCL driver through a vendors folder
export DLRT_OPENCL_LIB=$KIT/opencl/libOpenCL.so.1
NVOCL=""
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib /usr/lib; do
  if [ -e "$d/libnvidia-opencl.so.1" ]; then NVOCL=$d/libnvidia-opencl.so.1; break; fi
done
if [ -z "$NVOCL" ]; then
  NVOCL=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 .*x86-64/ {print $NF; exit}')
fi
if [ -n "$NVOCL" ]; then
  mkdir -p "$WORK/icd"
  echo "$NVOCL" > "$WORK/icd/nvidia.icd"
  export OCL_ICD_VENDORS=$WORK/icd
  if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && mkdir -p /etc/OpenCL/vendors 2>/dev/null; then
    echo "$NVOCL" > /etc/OpenCL/vendors/nvidia.icd 2>/dev/null && logonly "wrote /etc/OpenCL/vendors/nvidia.icd"
  fi
  export GPU_CHECK_OPENCL_NOTE="NVIDIA OpenCL driver $NVOCL (OCL_ICD_VENDORS=$WORK/icd)"
else
  export GPU_CHECK_OPENCL_NOTE="libnvidia-opencl.so.1 not found (looked in /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu, /usr/lib64, ldconfig -p): opencl can only use the system's ICDs ($(ls /etc/OpenCL/vendors 2>/dev/null | tr '\n' ' '))"
fi
say "opencl: $GPU_CHECK_OPENCL_NOTE"

# --- CUDA: the pip wheels' library folders (reported; DLRT_CUDA_LIB_PATH only if dlrt needs it)
WHEEL_DIRS=""
for p in "$TPY" "$PY"; do
  [ -n "$p" ] || continue
  WHEEL_DIRS=$(timeout 60 "$p" - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for d in sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib"))):
        if any(glob.glob(os.path.join(d, pat)) for pat in ("libcublas*.so*", "libnvrtc*.so*", "libcudart*.so*")):
            dirs.append(d)
print(":".join(dict.fromkeys(dirs)))
EOF
)
  [ -n "$WHEEL_DIRS" ] && break
done
say "cuda wheel lib folders: ${WHEEL_DIRS:-none found}"
# DLRT_CUDA_LIB_PATH, when set, is the only place dlrt searches (libcuda.so.1 included): the retry list
# (used only if `dlrt devices` finds no cuda without it) is libcuda.so.1's folder, then the wheels' folders
LIBCUDA=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
if [ -z "$LIBCUDA" ]; then
  for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/lib64 /usr/lib/wsl/lib; do
    if [ -e "$d/libcuda.so.1" ]; then LIBCUDA=$d/libcuda.so.1; break; fi
  done
fi
say "libcuda.so.1: ${LIBCUDA:-not found}"
RETRY_DIRS=$WHEEL_DIRS
[ -n "$LIBCUDA" ] && RETRY_DIRS=$(dirname "$LIBCUDA")${WHEEL_DIRS:+:$WHEEL_DIRS}
for d in ${WHEEL_DIRS//:/ }; do logonly "  $d: $(ls "$d" | tr '\n' ' ')"; done
logonly "libcuda: $(ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libnvidia-opencl' | tr '\n' ' ')"
if [ -n "${GPU_CHECK_CUDA_LIB_PATH:-}" ]; then
  export DLRT_CUDA_LIB_PATH=$GPU_CHECK_CUDA_LIB_PATH
  say "DLRT_CUDA_LIB_PATH=$DLRT_CUDA_LIB_PATH (from GPU_CHECK_CUDA_LIB_PATH)"
fi
CHECK_CUDA=--no-cuda-backend-check
case ",$RUN_DEVS,$BENCH_DEVS,$B8_DEV," in *,cuda*) CHECK_CUDA="" ;; esac

# --- the checks (python); the budget leaves room for the summary within 6 minutes overall
ELAPSED=$(( $(date +%s) - T_START ))
BUDGET=${GPU_CHECK_BUDGET_S:-$(( 330 - ELAPSED ))}
say "setup took ${ELAPSED} s; checks budget ${BUDGET} s"
timeout $(( BUDGET + 30 )) "$PY" "$ROOT/scripts/gpu_check.py" --kit "$KIT" --work "$WORK" --out "$OUT" \
  --dlrt "$WORK/dlrt" --torch-python "$TPY" --torch-device "$TORCH_DEV" --run-devices "$RUN_DEVS" \
  --bench-devices "$BENCH_DEVS" --b8-device "$B8_DEV" --models "${GPU_CHECK_MODELS:-}" \
  --warmup "$WARMUP" --iters "$ITERS" --b8-warmup "$B8_WARMUP" --b8-iters "$B8_ITERS" \
  --budget-s "$BUDGET" --cuda-wheel-dirs "$RETRY_DIRS" $CHECK_CUDA 2>&1 | tail -n 400
RC=${PIPESTATUS[0]}
if [ "$RC" != 0 ]; then
  say "gpu_check.py exited with $RC (124: killed at the time limit); summary of what was recorded:"
  timeout 30 "$PY" "$ROOT/scripts/gpu_check.py" summary "$OUT/gpu_check.json" 2>&1 | tee -a "$LOG"
fi
say "gpu_check: done in $(( $(date +%s) - T_START )) s; $OUT: $(ls "$OUT" | tr '\n' ' ')"
[ -n "${GPU_CHECK_KEEP:-}" ] || rm -rf "$WORK"
exit 0
