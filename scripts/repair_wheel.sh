# shellcheck shell=bash
# Sourced by scripts/build_wheel.sh and scripts/build_wheel_arm64.sh: the manylinux repair
# of a raw dlrt wheel and the checks of its result. Needs the caller's fail (prints
# "FAILED: ..." and exits 1).

# repair_wheel RAW OUT PLAT REPAIR_PLAT BIN AWLOG
#   Removes OUT's earlier dlrt wheels of RAW's version, tags and architecture (other
#   Pythons' and architectures' wheels share the folder), runs BIN/auditwheel repair
#   --plat REPAIR_PLAT (PLAT itself, or auto) on RAW into OUT with its log in AWLOG, then
#   requires a PLAT wheel that `auditwheel show` calls PLAT and that needs no external
#   library. Prints auditwheel show's report; sets WHL to the repaired wheel's path.
repair_wheel() {
  local raw=$1 out=$2 plat=$3 repair_plat=$4 bin=$5 awlog=$6
  local name version tags arch show
  name=$(basename "$raw")       # dlrt-VERSION-PYTAG-ABITAG-linux_ARCH.whl
  version=$(echo "$name" | cut -d- -f2)
  tags=$(echo "$name" | cut -d- -f3,4)
  arch=${plat#*linux_*_*_}      # manylinux_2_34_x86_64 -> x86_64
  if [ "$repair_plat" = "$plat" ]; then
    echo "== auditwheel repair --plat $plat"
  else
    echo "== auditwheel repair --plat $repair_plat (expected: $plat)"
  fi
  rm -f "$out"/dlrt-"$version"-"$tags"-*"$arch".whl
  if ! PATH="$bin:$PATH" "$bin/auditwheel" repair --plat "$repair_plat" -w "$out" "$raw" > "$awlog" 2>&1; then
    tail -20 "$awlog"
    fail "auditwheel repair --plat $repair_plat (see $awlog)"
  fi
  WHL=$(ls "$out"/dlrt-"$version"-"$tags"-*"$plat"*.whl 2> /dev/null | head -1)
  [ -n "$WHL" ] || fail "auditwheel wrote no $plat wheel to $out (see $awlog)"
  show=$(PATH="$bin:$PATH" "$bin/auditwheel" show "$WHL" 2>&1)
  echo "$show" | sed 's/^/  /'
  show=$(echo "$show" | tr -s ' \n' '  ')   # one line: auditwheel wraps its sentences
  grep -q "consistent with the following platform tag: \"$plat\"" <<< "$show" ||
    fail "auditwheel show: $(basename "$WHL") is not $plat"
  ! grep -qi 'external shared libraries are required' <<< "$show" ||
    fail "auditwheel show: the repaired wheel still needs external libraries"
}
