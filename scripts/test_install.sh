#!/usr/bin/env bash
# Installs a build into a fresh prefix and builds consumers outside the
# source tree against it (a C++ and a C program, each through the CMake
# package and through pkg-config), then runs them on MODEL:
#
#   scripts/test_install.sh BUILD MODEL
#
# Also checks that only public headers were installed and that they compile
# on their own (no private include path, no dependency's headers).
# A cross build (scripts/test_arm64.sh: the aarch64 one) sets DLRT_INSTALL_CC and
# DLRT_INSTALL_CXX (the consumers' compilers, default cc and c++), DLRT_INSTALL_TOOLCHAIN
# (the consumer project's CMAKE_TOOLCHAIN_FILE) and DLRT_INSTALL_RUN (what runs the
# consumers, e.g. qemu-aarch64).
set -euo pipefail

BUILD=${1:?usage: test_install.sh BUILD MODEL}
MODEL=${2:?usage: test_install.sh BUILD MODEL}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ICC=${DLRT_INSTALL_CC:-cc}
ICXX=${DLRT_INSTALL_CXX:-c++}
read -r -a RUN <<< "${DLRT_INSTALL_RUN:-}"
TOOLCHAIN=()
[ -n "${DLRT_INSTALL_TOOLCHAIN:-}" ] && TOOLCHAIN=(-DCMAKE_TOOLCHAIN_FILE="$DLRT_INSTALL_TOOLCHAIN")
PREFIX=$WORK/prefix
# A sanitizer build's libdlrt.so needs the sanitizer runtime loaded first: its
# consumers are built with the same -fsanitize flags.
SAN=""
if grep -q '^DLRT_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then SAN="-fsanitize=address,undefined"; fi

cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log"
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libdlrt.so' | head -1)")
[ -n "$LIBDIR" ] || { echo "test_install: no libdlrt.so under $PREFIX"; exit 1; }

# Only include/dlrt/*.h, each compiling alone with only the prefix's include folder.
extra=$(find "$PREFIX/include" -type f ! -path "$PREFIX/include/dlrt/*.h")
[ -z "$extra" ] || { echo "test_install: unexpected installed files: $extra"; exit 1; }
for h in "$PREFIX"/include/dlrt/*.h; do
  # Includes: dlrt's own public headers and the standard library only.
  bad=$(grep -E '^\s*#\s*include' "$h" | grep -vE '#\s*include\s+("dlrt/[a-z_]+\.h"|<[a-z_]+(\.h)?>)' || true)
  [ -z "$bad" ] || { echo "test_install: $h includes $bad"; exit 1; }
  echo "#include \"dlrt/$(basename "$h")\"" > "$WORK/one.cpp"
  "$ICXX" -std=c++20 -fsyntax-only -I"$PREFIX/include" "$WORK/one.cpp" 2> "$WORK/one.err" ||
    { echo "test_install: $h alone:"; cat "$WORK/one.err"; exit 1; }
done
# The C headers also compile as strict C11.
for h in dlrt_c.h plugin.h version.h; do
  [ -f "$PREFIX/include/dlrt/$h" ] || { echo "test_install: include/dlrt/$h was not installed"; exit 1; }
  printf '#include "dlrt/%s"\ntypedef int not_empty;\n' "$h" > "$WORK/one.c"
  "$ICC" -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$PREFIX/include" "$WORK/one.c" 2> "$WORK/one.err" ||
    { echo "test_install: $h as C11:"; cat "$WORK/one.err"; exit 1; }
done

# The SONAME carries the ABI major.
soname=$(objdump -p "$LIBDIR/libdlrt.so" | awk '/SONAME/ {print $2}')
version=$(sed -n 's/^#define DLRT_VERSION_MAJOR \([0-9]*\)$/\1/p' "$PREFIX/include/dlrt/version.h")
[ "$soname" = "libdlrt.so.$version" ] || { echo "test_install: SONAME $soname, major $version"; exit 1; }

# Consumer 1: find_package(dlrt CONFIG).
cmake -S "$ROOT/tests/install/consumer" -B "$WORK/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" "${TOOLCHAIN[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" > "$WORK/configure.log" || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/cmake-build" > "$WORK/build.log" || { cat "$WORK/build.log"; exit 1; }
LD_LIBRARY_PATH=$LIBDIR "${RUN[@]}" "$WORK/cmake-build/consumer" "$MODEL"
LD_LIBRARY_PATH=$LIBDIR "${RUN[@]}" "$WORK/cmake-build/c_consumer" "$MODEL"

# Consumer 2: pkg-config.
flags="$(PKG_CONFIG_PATH="$LIBDIR/pkgconfig" pkg-config --cflags --libs dlrt) $SAN"
[ "$(PKG_CONFIG_PATH="$LIBDIR/pkgconfig" pkg-config --modversion dlrt)" = "$(sed -n 's/^#define DLRT_VERSION_STRING "\(.*\)"$/\1/p' "$PREFIX/include/dlrt/version.h")" ]
# shellcheck disable=SC2086
"$ICXX" -std=c++20 "$ROOT/tests/install/consumer/main.cpp" $flags -o "$WORK/pc-consumer"
LD_LIBRARY_PATH=$LIBDIR "${RUN[@]}" "$WORK/pc-consumer" "$MODEL"
# shellcheck disable=SC2086
"$ICC" -std=c11 -pedantic -Wall -Wextra -Werror "$ROOT/tests/install/consumer/main.c" $flags -o "$WORK/pc-c-consumer"
LD_LIBRARY_PATH=$LIBDIR "${RUN[@]}" "$WORK/pc-c-consumer" "$MODEL"
# The README's snippets (each fenced block after a "<!-- snippet: LANG -->" line),
# built against the prefix and run on the test MLP (input x float32 [2, 4]).
MLP=$(dirname "$MODEL")/mlp.onnx
snippets=0
for lang in cpp c; do
  awk -v want="<!-- snippet: $lang -->" '
    $0 == want { armed = 1; next }
    armed && /^```/ { if (inside) { armed = 0; inside = 0; n++ } else inside = 1; next }
    inside { print > (dir "/snippet" n "." lang) }' dir="$WORK" lang="$lang" "$ROOT/README.md"
  for src in "$WORK"/snippet*."$lang"; do
    [ -f "$src" ] || { echo "test_install: README.md has no $lang snippet"; exit 1; }
    if [ "$lang" = cpp ]; then
      # shellcheck disable=SC2086
      "$ICXX" -std=c++20 -Wall -Wextra -Werror "$src" $flags -o "$src.bin" || { echo "test_install: README snippet $src"; exit 1; }
    else
      # shellcheck disable=SC2086
      "$ICC" -std=c11 -pedantic -Wall -Wextra -Werror "$src" $flags -o "$src.bin" || { echo "test_install: README snippet $src"; exit 1; }
    fi
    out=$(LD_LIBRARY_PATH=$LIBDIR "${RUN[@]}" "$src.bin" "$MLP") || { echo "test_install: README snippet $src failed: $out"; exit 1; }
    echo "README $lang snippet: $out"
    snippets=$((snippets + 1))
    rm -f "$src"
  done
done
echo "test_install: ok (C and C++ consumers through the CMake package and pkg-config, $snippets README snippets, $soname)"
