#!/usr/bin/env bash
# Server vs raw throughput at the same batch size (issue 7; a benchmark, not a test).
#
#   bench/serve_throughput.sh MODEL_DIR [--batch 32] [--seq 32] [--seconds 20] [--clients 32]
#                             [--inputs-per-request 1] [--pool-size 2] [--device cpu] [--threads 0]
#                             [--max-wait-ms 5] [--build build]
#
# 1. raw:    dlrt bench MODEL --shape <each input>=BATCHxSEQ  -> runs/s x BATCH = inputs/s
# 2. server: dlrt serve --max-batch-size BATCH, CLIENTS keep-alive clients (python3 stdlib,
#            one thread each) posting /v1/embeddings with INPUTS_PER_REQUEST texts of SEQ tokens
#            each ("the" x (SEQ-2) + [CLS]/[SEP]; checked with usage.prompt_tokens) for SECONDS.
# Prints both rates, the server's latency p50/p99, mean batch size (from /metrics) and the
# ratio server/raw (target >= 0.90). The client runs on the same machine and takes some CPU.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
MODEL_DIR=$1; shift
BATCH=32 SEQ=32 SECONDS_=20 CLIENTS=32 PER_REQ=1 POOL=2 DEVICE=cpu THREADS=0 WAIT=5
BUILD=${BUILD:-build}
while [ $# -gt 0 ]; do
  case $1 in
    --batch) BATCH=$2; shift 2 ;;
    --seq) SEQ=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --inputs-per-request) PER_REQ=$2; shift 2 ;;
    --pool-size) POOL=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --max-wait-ms) WAIT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) usage ;;
  esac
done
DLRT=$BUILD/dlrt
[ -x "$DLRT" ] || { echo "no $DLRT: build it (ninja dlrt_cli) or pass --build DIR" >&2; exit 1; }
MODEL=$MODEL_DIR/model.onnx
[ -f "$MODEL" ] || MODEL=$MODEL_DIR/onnx/model.onnx
[ -f "$MODEL" ] || { echo "no model.onnx or onnx/model.onnx in $MODEL_DIR" >&2; exit 1; }
PY=${PYTHON:-python3}
TMP=$(mktemp -d)
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

echo "== model $MODEL_DIR, batch $BATCH x seq $SEQ, device $DEVICE, threads $THREADS"

# ---- raw: dlrt bench at BATCHxSEQ -------------------------------------------------------------
shapes=()
for name in input_ids attention_mask token_type_ids; do shapes+=(--shape "$name=${BATCH}x${SEQ}"); done
if ! "$DLRT" bench "$MODEL" --device "$DEVICE" --threads "$THREADS" "${shapes[@]}" --warmup 3 --iterations 30 \
    --json > "$TMP/raw.json" 2> "$TMP/raw.err"; then
  # Models without token_type_ids.
  shapes=(--shape "input_ids=${BATCH}x${SEQ}" --shape "attention_mask=${BATCH}x${SEQ}")
  "$DLRT" bench "$MODEL" --device "$DEVICE" --threads "$THREADS" "${shapes[@]}" --warmup 3 --iterations 30 \
    --json > "$TMP/raw.json" || { cat "$TMP/raw.err" >&2; exit 1; }
fi
RAW=$("$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['throughput_per_s']*$BATCH)" "$TMP/raw.json")
RAW_MED=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['latency_ms']['median'])" "$TMP/raw.json")
echo "raw:    $(printf '%.1f' "$RAW") inputs/s (dlrt bench, median run $RAW_MED ms per batch of $BATCH)"

# ---- server --------------------------------------------------------------------------------------
"$DLRT" serve --model "$MODEL_DIR" --port 0 --device "$DEVICE" --threads "$THREADS" --pool-size "$POOL" \
  --max-batch-size "$BATCH" --max-batch-tokens $((BATCH * SEQ)) --max-wait-ms "$WAIT" \
  --max-queue $((CLIENTS * PER_REQ * 4 + BATCH)) --max-inputs-per-request "$PER_REQ" --http-threads $((CLIENTS + 8)) > "$TMP/serve.out" 2> "$TMP/serve.err" &
SERVER_PID=$!
PORT=
for _ in $(seq 1 200); do
  PORT=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$TMP/serve.out")
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { cat "$TMP/serve.out" "$TMP/serve.err" >&2; exit 1; }

"$PY" - "$PORT" "$SEQ" "$SECONDS_" "$CLIENTS" "$PER_REQ" "$RAW" > "$TMP/client.out" <<'EOF'
import http.client, json, sys, threading, time
port, seq, seconds, clients, per_req, raw = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
def post(conn, body):
    conn.request("POST", "/v1/embeddings", body, {"Content-Type": "application/json"})
    r = conn.getresponse(); data = r.read(); return r.status, data
# Wait until ready.
for _ in range(1200):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); c.request("GET", "/health")
        if c.getresponse().status == 200: break
    except OSError: pass
    time.sleep(0.1)
text = " ".join(["the"] * (seq - 2))
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
st, data = post(c, json.dumps({"input": text}))
assert st == 200, data[:300]
tokens = json.loads(data)["usage"]["prompt_tokens"]
if tokens != seq: print(f"note: each text is {tokens} tokens, not {seq}", file=sys.stderr)
body = json.dumps({"input": [text] * per_req})
lat, errors, done = [], [0], [0]
lock = threading.Lock()
deadline = time.monotonic() + seconds
def client():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    mine = []
    while time.monotonic() < deadline:
        t = time.monotonic()
        try:
            st, _ = post(conn, body)
        except OSError:
            st = -1; conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine.append((time.monotonic() - t) * 1000)
        with lock:
            if st == 200: done[0] += per_req
            else: errors[0] += 1
    with lock: lat.extend(mine)
t0 = time.monotonic()
ths = [threading.Thread(target=client) for _ in range(clients)]
for t in ths: t.start()
for t in ths: t.join()
wall = time.monotonic() - t0
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
m = http.client.HTTPConnection("127.0.0.1", port, timeout=10); m.request("GET", "/metrics"); metrics = m.getresponse().read().decode()
val = lambda n: float(next((l.split()[-1] for l in metrics.splitlines() if l.startswith(n + " ")), "0"))
batches, batch_inputs = val("dlrt_batch_size_count"), val("dlrt_batch_size_sum")
rate = done[0] / wall
print(f"server: {rate:.1f} inputs/s ({len(lat)} requests, {errors[0]} errors, {clients} clients x {per_req} input(s) of {tokens} tokens, {wall:.1f} s)")
print(f"        latency ms p50 {p(0.5):.1f} p99 {p(0.99):.1f}; {batches:.0f} batches, mean batch {batch_inputs / max(batches, 1):.1f} inputs")
print(f"ratio server/raw: {rate / raw:.3f} (target >= 0.90)")
EOF
cat "$TMP/client.out"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=
