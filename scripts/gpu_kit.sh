#!/usr/bin/env bash
# gpu_kit.sh BUILD_DIR OUT_DIR - the self-contained kit that scripts/gpu_check.sh runs on a lent GPU machine.
#
# The device tool sends the repo's working tree plus a few carried ignored paths (64 MiB in all); the
# GPU image has no libonnx/libprotobuf/cpp-httplib and the zoo (~240 MiB) cannot travel. This writes
#   OUT_DIR/kit.tar.gz  (gpu_check.sh unpacks it into a temp folder on the device) holding kit/:
#     bin/dlrt                 BUILD_DIR/dlrt as built
#     lib/                     every shared library `ldd dlrt` resolves outside glibc/libstdc++/libgcc/libz
#                              (libonnx, libprotobuf, cpp-httplib, brotli, libssl/libcrypto): LD_LIBRARY_PATH
#     lib-fallback/            libstdc++.so.6, libgcc_s.so.1, libz.so.1: used only if the device's own are
#                              too old for the binary (gpu_check.sh tries without them first)
#     opencl/libOpenCL.so.1    Debian's ICD loader (ocl-icd-libopencl1), for DLRT_OPENCL_LIB
#     zoo/                     manifest.json, make_zoo.py, every case's sample inputs in the zoo's layout
#                              (identical files hard-linked: the image models share their inputs)
#     skel/                    weight-free skeletons (scripts/zoo_skeleton.py make): graph + weight statistics
#     KIT.json                 what was packed: dlrt version, git commit, files, sizes
#   OUT_DIR/KIT.txt            the same, readable
# Put OUT_DIR at the repo root as .gpukit (ignored by .gitignore) and carry it: carry: [".gpukit"].
#
# Environment: DLRT_ZOO_DIR (default ../shared/models), GPU_KIT_PYTHON (a python with onnx, onnxruntime
# and numpy; default: the first of build/venv/bin/python, python3, /usr/bin/python3 that has them).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
OUT=$2
ZOO=${DLRT_ZOO_DIR:-$ROOT/../shared/models}
ZOO=$(cd "$ZOO" && pwd)
[ -x "$BUILD/dlrt" ] || { echo "gpu_kit: $BUILD/dlrt is missing" >&2; exit 1; }
[ -f "$ZOO/manifest.json" ] || { echo "gpu_kit: no zoo at $ZOO (set DLRT_ZOO_DIR)" >&2; exit 1; }

PY=""
for p in ${GPU_KIT_PYTHON:-} "$ROOT/build/venv/bin/python" python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "import onnx, onnxruntime, numpy" >/dev/null 2>&1; then
    PY=$p
    break
  fi
done
[ -n "$PY" ] || { echo "gpu_kit: no python with onnx, onnxruntime and numpy (set GPU_KIT_PYTHON)" >&2; exit 1; }

STAGE=$(mktemp -d /tmp/gpu_kit.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
K=$STAGE/kit
mkdir -p "$K/bin" "$K/lib" "$K/lib-fallback" "$K/opencl" "$K/zoo" "$K/skel"

# --- the binary and its libraries
cp "$BUILD/dlrt" "$K/bin/dlrt"
while read -r soname path; do
  case "$soname" in
    linux-vdso*|ld-linux*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*) ;;
    libstdc++.so.*|libgcc_s.so.*|libz.so.*) cp -L "$path" "$K/lib-fallback/$soname" ;;
    *) cp -L "$path" "$K/lib/$soname" ;;
  esac
done < <(ldd "$BUILD/dlrt" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
if ldd "$BUILD/dlrt" | grep -q "not found"; then
  echo "gpu_kit: ldd $BUILD/dlrt has unresolved libraries:" >&2
  ldd "$BUILD/dlrt" | grep "not found" >&2
  exit 1
fi
if ldd "$BUILD/dlrt" | grep -Eiq "libcuda|libcublas|libnvrtc|libcudart|libOpenCL"; then
  echo "gpu_kit: warning: ldd $BUILD/dlrt lists a vendor library (issue 42 says it must not)" >&2
fi

# --- the OpenCL ICD loader (Debian's ocl-icd-libopencl1)
OCL=/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
if [ -e "$OCL" ] && dpkg -S "$OCL" 2>/dev/null | grep -q ocl-icd-libopencl1; then
  cp -L "$OCL" "$K/opencl/libOpenCL.so.1"
else
  (cd "$STAGE" && apt-get download ocl-icd-libopencl1 >/dev/null && dpkg -x ocl-icd-libopencl1_*.deb ocl \
    && cp -L ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 "$K/opencl/libOpenCL.so.1" && rm -rf ocl ./*.deb)
fi

# --- zoo: manifest, make_zoo.py, sample inputs (hard links for identical files), skeletons
cp "$ZOO/manifest.json" "$ZOO/make_zoo.py" "$K/zoo/"
"$PY" - "$ZOO" "$K/zoo" <<'EOF'
import hashlib, json, os, shutil, sys
zoo, out = sys.argv[1:3]
seen = {}
for name, e in json.load(open(os.path.join(zoo, "manifest.json")))["models"].items():
    for case, ce in e["cases"].items():
        for rel in ce["inputs"].values():
            src, dst = os.path.join(zoo, rel), os.path.join(out, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            h = hashlib.sha256(open(src, "rb").read()).hexdigest()
            if h in seen:
                os.link(seen[h], dst)
            else:
                shutil.copyfile(src, dst)
                seen[h] = dst
EOF
"$PY" "$ROOT/scripts/zoo_skeleton.py" make "$ZOO" "$K/skel" | sed 's/^/  /'

# --- what was packed
"$PY" - "$K" "$BUILD" "$ROOT" "$ZOO" <<'EOF'
import datetime, hashlib, json, os, subprocess, sys
k, build, root, zoo = sys.argv[1:5]
def out(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:
        return f"({e})"
files, inodes = [], set()
for d, _, fs in os.walk(k):
    for f in sorted(fs):
        p = os.path.join(d, f)
        st = os.stat(p)
        files.append({"path": os.path.relpath(p, k), "bytes": st.st_size, "linked": st.st_ino in inodes})
        inodes.add(st.st_ino)
info = {"made": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "build_dir": build, "dlrt_version": out(os.path.join(k, "bin", "dlrt"), "--version"),
        "dlrt_sha256": hashlib.sha256(open(os.path.join(k, "bin", "dlrt"), "rb").read()).hexdigest(),
        "git_commit": out("git", "-C", root, "rev-parse", "HEAD"),
        "git_dirty": out("git", "-C", root, "status", "--porcelain", "--untracked-files=no") != "",
        "zoo": zoo, "bytes": sum(f["bytes"] for f in files if not f["linked"]),
        "files": sorted(files, key=lambda f: f["path"])}
json.dump(info, open(os.path.join(k, "KIT.json"), "w"), indent=1)
EOF

mkdir -p "$OUT"
rm -f "$OUT/kit.tar.gz" "$OUT/KIT.txt"
tar -C "$STAGE" -czf "$OUT/kit.tar.gz" kit
{
  echo "dlrt GPU kit (scripts/gpu_kit.sh): unpacked by scripts/gpu_check.sh"
  "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
print('made', d['made'], 'from', d['build_dir'], '| git', d['git_commit'][:12], '(dirty)' if d['git_dirty'] else '')
print('dlrt', d['dlrt_version'], 'sha256', d['dlrt_sha256'][:16])
print('unpacked bytes', d['bytes'])
for f in d['files']:
    print(f\"{f['bytes']:>10}  {f['path']}{'  (hard link)' if f['linked'] else ''}\")
" "$K/KIT.json"
} > "$OUT/KIT.txt"
echo "gpu_kit: $OUT/kit.tar.gz $(du -h "$OUT/kit.tar.gz" | cut -f1) ($(stat -c %s "$OUT/kit.tar.gz") bytes;" \
     "unpacked $(du -sh "$K" | cut -f1)); dlrt $("$K/bin/dlrt" --version 2>&1 | head -1)"
