#!/usr/bin/env bash
# dlrt from Python vs the C++ `dlrt bench` figure and vs ONNX Runtime's Python API, at 1
# thread (bench/python_overhead.py). Usage:
#   bench/python_overhead.sh [BUILD] [python_overhead.py options...]
# BUILD (default build) holds the dlrt CLI and test_models/mlp.onnx (the tiny model). The
# Python side is the wheel of build-wheel/wheelhouse (`make wheel`, built here when missing),
# installed with numpy and onnxruntime (pinned) into build-wheel/bench/venv; set
# DLRT_PYTHONPATH=BUILD/python to use an in-tree module instead. JSON goes to
# bench/results/<date>_python_overhead.json unless --out is given.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then BUILD=$1; shift; fi
BUILD=$(cd "$BUILD" && pwd)
[ -x "$BUILD/dlrt" ] || { echo "no $BUILD/dlrt: build it first (make build)" >&2; exit 1; }
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
PACKAGES="numpy==2.4.6 onnxruntime==1.30.0"

PY=$("$ROOT/scripts/setup_venv.sh" "$ROOT/build-wheel/bench" $PACKAGES | tail -n 1) ||
  { echo "pip could not install $PACKAGES (PyPI unreachable?)" >&2; exit 1; }
if [ -n "${DLRT_PYTHONPATH:-}" ]; then
  export PYTHONPATH=$DLRT_PYTHONPATH
  "$PY" -m pip uninstall -q -y dlrt >/dev/null 2>&1 || true
else
  whl=$(ls -t "$ROOT"/build-wheel/wheelhouse/dlrt-*manylinux*.whl 2>/dev/null | head -1 || true)
  if [ -z "$whl" ]; then whl=$("$ROOT/scripts/build_wheel.sh" | tail -1); fi
  "$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$whl"
fi
tiny=()
if [ -f "$BUILD/test_models/mlp.onnx" ]; then
  tiny=(--tiny "$BUILD/test_models/mlp.onnx:x=$BUILD/test_models/mlp_input.npy")
fi
out=()
case " $* " in *" --out "*) ;; *) out=(--out "$ROOT/bench/results/$(date -u +%Y-%m-%d)_python_overhead.json") ;; esac
cd "$ROOT/bench"
exec "$PY" python_overhead.py --cli "$BUILD/dlrt" --zoo "$ZOO" "${tiny[@]}" "${out[@]}" "$@"
