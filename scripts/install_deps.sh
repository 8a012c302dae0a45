#!/usr/bin/env bash
# Installs the Debian 12 packages dlrt needs. Idempotent: installs only what
# is missing, runs `apt-get update` only when a missing package is unknown to
# apt, and uses sudo only when not root.
#   scripts/install_deps.sh build   what `make build` and `make demo` need
#   scripts/install_deps.sh [test]  that and what the tests need (`make test`)
#   scripts/install_deps.sh arm64   `build` and the aarch64 cross build (`make build-arm64`):
#                                   Debian's cross toolchain, qemu-user, and the :arm64
#                                   development packages dlrt links (enables dpkg's arm64
#                                   foreign architecture)
#   scripts/install_deps.sh test-arm64  `arm64` and the ONNX test data that `make test-arm64`
#                                   runs under qemu-aarch64
set -euo pipefail

# The build: compilers and tools, the libraries dlrt links or includes, GoogleTest
# (the test binaries share the build folder), python3-onnx/numpy for the
# generated test models (tests/models/make_test_models.py; the demo runs one),
# and pip, which fetches the pinned onnx sources (scripts/fetch_onnx.sh: dlrt's
# model layer is built from them; Debian's libonnx is too old).
BUILD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler python3-pip
  libgtest-dev nlohmann-json3-dev libtomlplusplus-dev libcpp-httplib-dev
  python3-onnx python3-numpy
  # The image codecs of apps/embed/image (docs/images.md).
  libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev
)
TEST_PACKAGES=(
  # ONNX's backend test data (the conformance suite) and venv for the pinned PyPI tools.
  libonnx-testdata python3-venv
  # The openssl tool, for the HTTPS test of dlrt serve (a throwaway certificate).
  openssl
  # Chromium and its WebDriver, headless, for the test of dlrt serve's Swagger UI page
  # (tests/serve/test_docs_browser.py, ctest serve.docs_browser).
  chromium chromium-driver
  # clang (with libFuzzer and the sanitizer runtimes) for the fuzz harnesses (make fuzz, and
  # the smoke run in make test).
  clang
  # Run-time only, for the OpenCL backend's tests: the ICD loader and PoCL
  # (OpenCL on the CPU). dlrt never links them; the backend dlopens them.
  ocl-icd-libopencl1 pocl-opencl-icd
  # Build-time, for one test only: the Khronos CL/cl.h that tests/opencl/cl_api_test.cpp checks
  # src/backends/opencl/cl_api.h against. dlrt itself includes no OpenCL header.
  opencl-c-headers
)
# The aarch64 cross build (cmake/toolchains/aarch64-linux-gnu.cmake): the host's protoc
# (protobuf-compiler above) generates the ONNX sources, which link libprotobuf-dev:arm64
# (the same version: multiarch packages of one source must match). nlohmann-json3-dev
# is header-only (Architecture: all), so the host's serves both. qemu-user runs the
# aarch64 binaries (qemu-aarch64, with libc6:arm64's loader and libc).
ARM64_PACKAGES=(
  crossbuild-essential-arm64 qemu-user
  libprotobuf-dev:arm64 libgtest-dev:arm64 libtomlplusplus-dev:arm64 libcpp-httplib-dev:arm64
  libssl-dev:arm64
  libjpeg62-turbo-dev:arm64 libpng-dev:arm64 libwebp-dev:arm64 libgif-dev:arm64
)
case "${1:-test}" in
  build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  test) PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  arm64) PACKAGES=("${BUILD_PACKAGES[@]}" "${ARM64_PACKAGES[@]}") ;;
  test-arm64) PACKAGES=("${BUILD_PACKAGES[@]}" "${ARM64_PACKAGES[@]}" libonnx-testdata) ;;
  *) echo "usage: $0 [build|test|arm64|test-arm64]" >&2; exit 2 ;;
esac

# The sources pip fetches (scripts/pins.sh): onnx's (required), and Swagger UI's dist for
# dlrt serve's /docs (optional: without it the build embeds dlrt's own page and says so).
fetch_sources() {
  "$(dirname "$0")/fetch_onnx.sh"
  "$(dirname "$0")/fetch_swagger_ui.sh" ||
    echo "install_deps: WARNING: no Swagger UI (scripts/fetch_swagger_ui.sh failed): dlrt serve's /docs will be its plain page" >&2
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages are installed"
  fetch_sources
  exit 0
fi
echo "install_deps: missing: ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_deps: apt-get not found; install these packages with your package manager: ${missing[*]}" >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install_deps: not root and sudo is not available; as root run: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# Refresh the package lists only when apt does not know a missing package.
need_update=0
if [[ "${1:-test}" == *arm64 ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install_deps: enabling the arm64 foreign architecture (dpkg --add-architecture arm64)"
  "${SUDO[@]}" dpkg --add-architecture arm64
  need_update=1
fi
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then need_update=1; fi
done
if [ $need_update -eq 1 ]; then
  "${SUDO[@]}" apt-get update
fi
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "install_deps: done"
fetch_sources
