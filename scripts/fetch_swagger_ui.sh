#!/usr/bin/env bash
# Puts Swagger UI's dist files (scripts/pins.sh SWAGGER_UI_VERSION) into
# third_party/swagger-ui-<version>/, which cmake/deps/swagger_ui.cmake embeds into
# dlrt serve's GET /docs: swagger-ui-bundle.js, swagger-ui.css and the dist's
# LICENSE, taken from PyPI's flask-swagger-ui wheel of that version (the package
# whose version follows Swagger UI's releases), downloaded once with pip,
# checked against the pinned sha256 and unpacked. Idempotent;
# scripts/install_deps.sh runs it, so the build itself never downloads anything.
# Without these files the build still works: /docs is then dlrt's own page.
#   scripts/fetch_swagger_ui.sh [DEST_DIR]   (default: third_party next to this script's folder)
# DLRT_SWAGGER_UI_WHEEL=FILE uses that file instead of downloading (offline
# machines; it must still have the pinned hash).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=pins.sh
. "$ROOT/scripts/pins.sh"
# shellcheck source=fetch_pinned.sh
. "$ROOT/scripts/fetch_pinned.sh"
DEST=${1:-$ROOT/third_party}
VER=$SWAGGER_UI_VERSION
OUT="$DEST/swagger-ui-$VER"
if pinned_present "$OUT" "$SWAGGER_UI_WHEEL_SHA256"; then
  echo "fetch_swagger_ui: Swagger UI $VER present in $OUT"
  exit 0
fi
mkdir -p "$DEST"
tmp=$(mktemp -d "$DEST/.fetch-swagger-ui.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
wheel="$tmp/flask_swagger_ui-$VER-py3-none-any.whl"
PY=${DLRT_VENV_PYTHON:-python3}
pinned_get fetch_swagger_ui "$wheel" "$SWAGGER_UI_WHEEL_SHA256" DLRT_SWAGGER_UI_WHEEL \
  --only-binary :all: "flask-swagger-ui==$VER"
mkdir "$tmp/out"
"$PY" - "$wheel" "$tmp/out" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "LICENSE"):
        with z.open("flask_swagger_ui/dist/" + name) as src, open(f"{out}/{name}", "wb") as dst:
            dst.write(src.read())
PY
rm -rf "$OUT"
mv "$tmp/out" "$OUT"
echo "$SWAGGER_UI_WHEEL_SHA256" > "$OUT/.dlrt-sha256"
echo "fetch_swagger_ui: Swagger UI $VER in $OUT"
