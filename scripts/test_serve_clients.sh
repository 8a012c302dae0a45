#!/usr/bin/env bash
# dlrt serve against real clients (run by ctest as serve.clients):
#   1. the official openai Python client and TEI-style plain HTTP
#      (tests/serve/test_clients.py, pytest);
#   2. schemathesis: property-based requests generated from the server's own
#      GET /openapi.json, every answer checked against that document
#      (bounded to SCHEMATHESIS_SECONDS, default 30).
# Both against `dlrt serve` on tests/embed/data/tiny_bert. Pinned tools from
# PyPI in BUILD/serve-clients/venv; no PyPI is a failure, not a skip.
#
#   scripts/test_serve_clients.sh BUILD
set -euo pipefail
BUILD=$(cd "${1:?usage: test_serve_clients.sh BUILD}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_BUDGET=${SCHEMATHESIS_SECONDS:-30}

PY=$("$ROOT/scripts/setup_venv.sh" "$BUILD/serve-clients" openai==3.57.0 schemathesis==4.32.5 pytest==8.4.2 | tail -n 1) || {
  echo "test_serve_clients: FAILED: pip could not install openai, schemathesis and pytest (no PyPI?)"
  exit 1
}
WORK=$(mktemp -d)
"$BUILD/dlrt" serve --model "$ROOT/tests/embed/data/tiny_bert" --port 0 --device cpu --threads 1 \
  --access-log false > "$WORK/serve.out" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
  grep -q "ready in" "$WORK/serve.out" && break
  kill -0 $SERVER 2>/dev/null || { cat "$WORK/serve.out"; echo "test_serve_clients: the server exited"; exit 1; }
  sleep 0.1
done
PORT=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$WORK/serve.out")
[ -n "$PORT" ] && grep -q "ready in" "$WORK/serve.out" || { cat "$WORK/serve.out"; echo "test_serve_clients: no ready server"; exit 1; }
export DLRT_SERVE_URL="http://127.0.0.1:$PORT"

echo "== openai client and TEI-style HTTP ($DLRT_SERVE_URL)"
(cd "$WORK" && "$PY" -m pytest -q -p no:cacheprovider "$ROOT/tests/serve/test_clients.py")

echo "== schemathesis against $DLRT_SERVE_URL/openapi.json (${SECONDS_BUDGET}s)"
# Left out, with reasons:
#  - positive_data_acceptance: some schema-valid requests are refused on purpose
#    (an input over the model's token limit is a 413 unless truncation is asked for);
#  - unsupported_method: cpp-httplib answers 400 to methods it cannot parse
#    (TRACE, QUERY) before any route sees them; methods it parses get 405
#    (tests/serve/server_test.cpp checks that).
(cd "$WORK" && "$(dirname "$PY")/schemathesis" run "$DLRT_SERVE_URL/openapi.json" --max-time "$SECONDS_BUDGET" \
  --workers 2 --checks all --exclude-checks positive_data_acceptance,unsupported_method --seed 7)
echo "test_serve_clients: ok"
