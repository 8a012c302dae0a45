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
DEST=${1:-$ROOT/third_party}
VER=$ONNX_SOURCE_VERSION
OUT="$DEST/onnx-$VER"
if [ -f "$OUT/.dlrt-sha256" ] && [ "$(cat "$OUT/.dlrt-sha256")" = "$ONNX_SOURCE_SHA256" ]; then
  echo "fetch_onnx: onnx $VER sources present in $OUT"
  exit 0
fi
mkdir -p "$DEST"
tmp=$(mktemp -d "$DEST/.fetch-onnx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "${DLRT_ONNX_SDIST:-}" ]; then
  cp "$DLRT_ONNX_SDIST" "$tmp/onnx-$VER.tar.gz"
else
  PY=${DLRT_VENV_PYTHON:-python3}
  if ! "$PY" -m pip --version >/dev/null 2>&1; then
    echo "fetch_onnx: '$PY -m pip' is not available (Debian: apt-get install python3-pip), or set" \
         "DLRT_ONNX_SDIST to a copy of onnx-$VER.tar.gz" >&2
    exit 1
  fi
  echo "fetch_onnx: downloading the onnx $VER sdist from PyPI"
  # --no-binary for onnx only: its build requirements (needed for pip's metadata
  # step) may come as wheels.
  if ! "$PY" -m pip download --quiet --no-deps --no-binary onnx "onnx==$VER" -d "$tmp" >&2; then
    echo "fetch_onnx: pip could not download onnx==$VER (no network?); set DLRT_ONNX_SDIST to a copy" \
         "of onnx-$VER.tar.gz" >&2
    exit 1
  fi
fi
sdist="$tmp/onnx-$VER.tar.gz"
have=$(sha256sum "$sdist" | cut -d' ' -f1)
if [ "$have" != "$ONNX_SOURCE_SHA256" ]; then
  echo "fetch_onnx: onnx-$VER.tar.gz has sha256 $have, expected $ONNX_SOURCE_SHA256 (scripts/pins.sh)" >&2
  exit 1
fi
tar xzf "$sdist" -C "$tmp"
rm -rf "$OUT"
mv "$tmp/onnx-$VER" "$OUT"
echo "$ONNX_SOURCE_SHA256" > "$OUT/.dlrt-sha256"
echo "fetch_onnx: onnx $VER sources in $OUT"
