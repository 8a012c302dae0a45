#!/usr/bin/env bash
# Puts the C++ sources of the pinned onnx release (scripts/pins.sh) into
# third_party/onnx-<version>/, which cmake/deps/onnx.cmake builds dlrt's model layer
# from: the PyPI sdist, downloaded once with pip, checked against the pinned
# sha256 and unpacked. Idempotent; scripts/install_deps.sh build runs it, so the
# build itself never downloads anything.
#   scripts/fetch_onnx.sh [DEST_DIR]   (default: third_party next to this script's folder)
# DLRT_ONNX_SDIST=FILE uses that file instead of downloading (offline machines;
# it must still have the pinned hash).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=pins.sh
. "$ROOT/scripts/pins.sh"
# shellcheck source=fetch_pinned.sh
. "$ROOT/scripts/fetch_pinned.sh"
DEST=${1:-$ROOT/third_party}
VER=$ONNX_SOURCE_VERSION
OUT="$DEST/onnx-$VER"
if pinned_present "$OUT" "$ONNX_SOURCE_SHA256"; then
  echo "fetch_onnx: onnx $VER sources present in $OUT"
  exit 0
fi
mkdir -p "$DEST"
tmp=$(mktemp -d "$DEST/.fetch-onnx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sdist="$tmp/onnx-$VER.tar.gz"
# --no-binary for onnx only: its build requirements (needed for pip's metadata
# step) may come as wheels.
pinned_get fetch_onnx "$sdist" "$ONNX_SOURCE_SHA256" DLRT_ONNX_SDIST --no-binary onnx "onnx==$VER"
tar xzf "$sdist" -C "$tmp"
rm -rf "$OUT"
mv "$tmp/onnx-$VER" "$OUT"
echo "$ONNX_SOURCE_SHA256" > "$OUT/.dlrt-sha256"
echo "fetch_onnx: onnx $VER sources in $OUT"
