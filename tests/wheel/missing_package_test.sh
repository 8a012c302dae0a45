#!/usr/bin/env bash
# A build (from the sdist, or a checkout) on a machine without a Debian package
# the build needs stops at configure with one line naming the package:
# configures the source tree in a temporary folder with CMake told not to find
# one package (CMAKE_DISABLE_FIND_PACKAGE_<Name>), for each package below, and
# checks the error says `apt-get install <debian package>`.
#   tests/wheel/missing_package_test.sh SOURCE_DIR
set -uo pipefail
SRC=${1:?usage: missing_package_test.sh SOURCE_DIR}
tmp=$(mktemp -d /tmp/dlrt-missing-pkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
# CMake package name -> the Debian package the message must name.
for pair in Protobuf:libprotobuf-dev nlohmann_json:nlohmann-json3-dev PkgConfig:pkg-config; do
  name=${pair%%:*} deb=${pair#*:}
  out=$(cmake -S "$SRC" -B "$tmp/$name" -G Ninja -DDLRT_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_"$name"=ON 2>&1)
  status=$?
  if [ $status -eq 0 ]; then
    echo "FAIL: configure without $name succeeded"; rc=1
  elif ! echo "$out" | tr -s ' \n' '  ' | grep -q "dlrt needs $name, which CMake did not find: apt-get install $deb"; then
    echo "FAIL: configure without $name did not name $deb:"; echo "$out" | grep -A3 'CMake Error' | head -8; rc=1
  else
    echo "ok: without $name: $(echo "$out" | tr -s ' \n' '  ' | grep -o "dlrt needs $name[^(]*")"
  fi
done
exit $rc
