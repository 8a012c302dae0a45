#!/bin/sh
# Fails when any given ELF file links a vendor runtime (DESIGN.md: vendor libraries are only
# ever dlopen'ed). Checks DT_NEEDED with readelf, then the full dependency closure with ldd.
# Usage: check_no_vendor_libs.sh FILE...
VENDOR='openvino|OpenCL|libcuda|cudart|cublas|cudnn|nvrtc|libnvidia|nvjitlink|libze_|ze_loader|level.zero|amdhip|libhip|rocm|hsa-runtime|rocblas|MIOpen|libnpu|intel_npu'
status=0
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
for f in "$@"; do
  if [ ! -f "$f" ]; then echo "FAIL: $f does not exist" >&2; status=1; continue; fi
  needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if [ -z "$needed" ] && ! readelf -h "$f" >/dev/null 2>&1; then
    echo "FAIL: $f is not an ELF file" >&2; status=1; continue
  fi
  bad=$(printf '%s\n' "$needed" | grep -E -i "$VENDOR")
  if [ -n "$bad" ]; then
    echo "FAIL: $f links vendor runtime(s) (DT_NEEDED): $bad" >&2; status=1; continue
  fi
  closure=$(ldd "$f" 2>/dev/null | awk '{print $1}')
  bad=$(printf '%s\n' "$closure" | grep -E -i "$VENDOR")
  if [ -n "$bad" ]; then
    echo "FAIL: $f pulls in vendor runtime(s) indirectly (ldd): $bad" >&2; status=1; continue
  fi
  echo "ok: $f needs only: $(printf '%s ' $needed)"
done
exit $status
