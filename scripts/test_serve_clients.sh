#!/usr/bin/env bash
# dlrt serve against real clients (run by ctest as serve.clients):
#   1. the official openai Python client and TEI-style plain HTTP
#      (tests/serve/test_clients.py, pytest), and the client libraries users
#      already have, with their own defaults: huggingface_hub's InferenceClient,
#      Cohere's v1 and v2 clients (rerank; embed, with images on the tiny CLIP
#      tests/models/image/clip_tiny), LlamaIndex's TEI embeddings, LangChain's
#      OpenAIEmbeddings, openai with 2048 inputs (tests/serve/test_client_libraries.py);
#   2. deploy/kubernetes.yaml checked against the running server, and three
#      replicas behind a round-robin client with one stopped by SIGTERM
#      mid-load (tests/serve/test_deploy.py, test_replicas.py);
#   3. schemathesis: property-based requests generated from the server's own
#      GET /openapi.json, every answer checked against that document
#      (bounded to SCHEMATHESIS_SECONDS, default 30).
# Both against `dlrt serve` on tests/embed/data/tiny_bert; and, when
# DLRT_ZOO_DIR has minilm_l6, /rerank and /predict of two cross-encoder
# folders made from it (tests/embed/make_cross_encoder.py) against ONNX
# Runtime. Pinned tools from PyPI in BUILD/serve-clients/venv; no PyPI is a
# failure, not a skip.
#
#   scripts/test_serve_clients.sh BUILD
set -euo pipefail
BUILD=$(cd "${1:?usage: test_serve_clients.sh BUILD}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_BUDGET=${SCHEMATHESIS_SECONDS:-30}

. "$ROOT/scripts/pins.sh"
# shellcheck disable=SC2086  # the pins are words
PY=$("$ROOT/scripts/setup_venv.sh" "$BUILD/serve-clients" $SERVE_CLIENT_PACKAGES | tail -n 1) || {
  echo "test_serve_clients: FAILED: pip could not install SERVE_CLIENT_PACKAGES of scripts/pins.sh (no PyPI?)"
  exit 1
}
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; wait $p 2>/dev/null; done; rm -rf "$WORK"' EXIT

# Starts `dlrt serve` on folder $1 (log $WORK/$2.out) and sets URL once it is
# ready. Called in this shell, not in $(...), so that PIDS (and the trap that
# stops the servers) sees it.
serve() {
  "$BUILD/dlrt" serve --model "$1" --port 0 --device cpu --threads 1 --access-log false > "$WORK/$2.out" 2>&1 &
  local pid=$!
  PIDS+=($pid)
  for _ in $(seq 300); do
    grep -q "ready in" "$WORK/$2.out" && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  grep -q "ready in" "$WORK/$2.out" || { cat "$WORK/$2.out" >&2; echo "test_serve_clients: $2: no ready server" >&2; return 1; }
  URL="http://127.0.0.1:$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$WORK/$2.out")"
}
serve "$ROOT/tests/embed/data/tiny_bert" embed || exit 1
DLRT_SERVE_URL=$URL
serve "$ROOT/tests/embed/data/cross_encoder_tiny" tiny_reranker || exit 1
DLRT_TINY_RERANK_URL=$URL
serve "$ROOT/tests/models/image/clip_tiny" clip || exit 1
DLRT_CLIP_URL=$URL
export DLRT_SERVE_URL DLRT_TINY_RERANK_URL DLRT_CLIP_URL

if [ -n "${DLRT_ZOO_DIR:-}" ] && [ -f "$DLRT_ZOO_DIR/minilm_l6.onnx" ]; then
  CROSS="$BUILD/cross_encoder"
  VOCAB=${DLRT_SHARED_DIR:-$ROOT/../shared}/data/bert-uncased-vocab.txt
  want=$(cat "$ROOT/tests/embed/make_cross_encoder.py" "$ROOT/tests/embed/model_folder.py" "$DLRT_ZOO_DIR/manifest.json" |
    sha256sum | cut -c1-16)
  if [ "$(cat "$CROSS/SOURCE" 2>/dev/null)" != "$want" ]; then
    rm -rf "$CROSS"
    /usr/bin/python3 "$ROOT/tests/embed/make_cross_encoder.py" "$DLRT_ZOO_DIR" "$VOCAB" "$CROSS" && echo "$want" > "$CROSS/SOURCE" ||
      { echo "test_serve_clients: FAILED to make the cross-encoder folders"; exit 1; }
  fi
  serve "$CROSS/reranker" reranker || exit 1
  DLRT_RERANK_URL=$URL
  serve "$CROSS/classifier" classifier || exit 1
  DLRT_CLASSIFIER_URL=$URL
  export DLRT_RERANK_URL DLRT_CLASSIFIER_URL DLRT_CROSS_ENCODER_DIR="$CROSS"
else
  echo "test_serve_clients: no DLRT_ZOO_DIR with minilm_l6.onnx: the /rerank and /predict tests are skipped (pytest says why)"
fi

echo "== openai client, TEI-style HTTP and the client libraries ($DLRT_SERVE_URL, $DLRT_TINY_RERANK_URL)"
(cd "$WORK" && DLRT_TINY_BERT="$ROOT/tests/embed/data/tiny_bert" "$PY" -m pytest -q -rs -p no:cacheprovider \
  "$ROOT/tests/serve/test_clients.py" "$ROOT/tests/serve/test_client_libraries.py")

echo "== deploy/kubernetes.yaml against the server; three replicas, one stopped mid-load"
(cd "$WORK" && DLRT_BIN="$BUILD/dlrt" DLRT_TINY_BERT="$ROOT/tests/embed/data/tiny_bert" "$PY" -m pytest -q -s -rs \
  -p no:cacheprovider "$ROOT/tests/serve/test_deploy.py" "$ROOT/tests/serve/test_replicas.py")

echo "== schemathesis against $DLRT_SERVE_URL/openapi.json (${SECONDS_BUDGET}s)"
# Left out, with reasons:
#  - positive_data_acceptance: some schema-valid requests are refused on purpose
#    (an input over the model's token limit with "truncate": false is a 413);
#  - unsupported_method: cpp-httplib answers 400 to methods it cannot parse
#    (TRACE, QUERY) before any route sees them; methods it parses get 405
#    (tests/serve/server_test.cpp checks that).
(cd "$WORK" && "$(dirname "$PY")/schemathesis" run "$DLRT_SERVE_URL/openapi.json" --max-time "$SECONDS_BUDGET" \
  --workers 2 --checks all --exclude-checks positive_data_acceptance,unsupported_method --seed 7)
echo "test_serve_clients: ok"
