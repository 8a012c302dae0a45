#!/usr/bin/env bash
# dlrt serve's GET /docs (Swagger UI) in headless Chromium, run by ctest as
# serve.docs_browser: tests/serve/test_docs_browser.py (selenium, Debian's chromium and
# chromium-driver) against `dlrt serve` on tests/embed/data/tiny_bert. The page's
# screenshot is BUILD/docs_browser.png. selenium from PyPI in BUILD/docs-browser/venv (pinned).
# Skipped (exit 77, saying why) where Chromium or the embedded Swagger UI is missing,
# except with DLRT_REQUIRE_BROWSER=1 (.ci/run), where that is a failure.
#   scripts/test_docs_browser.sh BUILD
set -euo pipefail
BUILD=$(cd "${1:?usage: test_docs_browser.sh BUILD}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHROMIUM=${DLRT_CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${DLRT_CHROMEDRIVER:-/usr/bin/chromedriver}

skip() {
  if [ "${DLRT_REQUIRE_BROWSER:-0}" = 1 ]; then
    echo "test_docs_browser: FAILED (DLRT_REQUIRE_BROWSER=1): $*"
    exit 1
  fi
  echo "test_docs_browser: SKIPPED: $*"
  exit 77
}
runnable() { [ -f "$1" ] && [ -x "$1" ]; }
if ! runnable "$CHROMIUM" || ! runnable "$CHROMEDRIVER"; then
  skip "no $CHROMIUM or $CHROMEDRIVER (Debian's chromium and chromium-driver: scripts/install_deps.sh test installs them)"
fi
docs_line=$("$BUILD/dlrt" serve --help | grep "GET  /docs") || true
case $docs_line in
  *"GET  /docs           Swagger UI"*) ;;
  *) skip "this dlrt has no Swagger UI (dlrt serve --help: ${docs_line:-no /docs line})" ;;
esac

# shellcheck source=pins.sh
. "$ROOT/scripts/pins.sh"
# shellcheck disable=SC2086  # the pins are words
PY=$("$ROOT/scripts/setup_venv.sh" "$BUILD/docs-browser" $DOCS_BROWSER_PACKAGES | tail -n 1) || {
  echo "test_docs_browser: FAILED: pip could not install DOCS_BROWSER_PACKAGES of scripts/pins.sh (no PyPI?)"
  exit 1
}
WORK=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && { kill $PID 2>/dev/null; wait $PID 2>/dev/null; }; rm -rf "$WORK"' EXIT
"$BUILD/dlrt" serve --model "$ROOT/tests/embed/data/tiny_bert" --port 0 --device cpu --threads 1 --access-log false \
  > "$WORK/serve.out" 2>&1 &
PID=$!
for _ in $(seq 300); do
  grep -q "ready in" "$WORK/serve.out" && break
  kill -0 $PID 2>/dev/null || break
  sleep 0.1
done
grep -q "ready in" "$WORK/serve.out" || { cat "$WORK/serve.out" >&2; echo "test_docs_browser: no ready server"; exit 1; }
URL="http://127.0.0.1:$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$WORK/serve.out")"

echo "== /docs in headless Chromium ($("$CHROMIUM" --version 2>/dev/null)) against $URL"
# SE_OFFLINE: selenium's driver manager never downloads (Debian's chromedriver is named).
(cd "$WORK" && SE_OFFLINE=true DLRT_SERVE_URL=$URL DLRT_CHROMIUM=$CHROMIUM DLRT_CHROMEDRIVER=$CHROMEDRIVER \
  DLRT_DOCS_SCREENSHOT="$BUILD/docs_browser.png" timeout 120 "$PY" -m pytest -q -rs -p no:cacheprovider \
  "$ROOT/tests/serve/test_docs_browser.py")
echo "test_docs_browser: ok (screenshot $BUILD/docs_browser.png)"
