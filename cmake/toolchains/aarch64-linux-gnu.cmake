# Cross build for aarch64 Linux (glibc) on a Debian/Ubuntu x86-64 host with Debian's
# cross toolchain and multiarch :arm64 libraries (scripts/install_deps.sh arm64;
# `make build-arm64` uses this file). Libraries and headers come from the host's
# /usr/lib/aarch64-linux-gnu and /usr/include (multiarch, no sysroot); programs that
# run during the build (protoc) are the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# find_library/find_package search the lib/aarch64-linux-gnu folders (CMAKE_LIBRARY_ARCHITECTURE)
# and never the host's lib/x86_64-linux-gnu; find_program finds the host's tools.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# The ONNX sources are generated at build time: with the host's protoc, whose version
# matches libprotobuf-dev:arm64 (one Debian source package; multiarch requires it).
find_program(DLRT_HOST_PROTOC protoc NO_CMAKE_FIND_ROOT_PATH)
if(DLRT_HOST_PROTOC)
  set(Protobuf_PROTOC_EXECUTABLE "${DLRT_HOST_PROTOC}" CACHE FILEPATH "The host's protoc")
endif()

# pkg-config (cpp-httplib): the aarch64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# try_run, gtest_discover_tests and ctest run the aarch64 binaries under user-mode QEMU, with
# the multiarch loader and libc (libc6:arm64); `-L /usr/aarch64-linux-gnu` mixes in the cross
# toolchain's libc copy, and thread creation hangs.
find_program(DLRT_QEMU_AARCH64 qemu-aarch64 NO_CMAKE_FIND_ROOT_PATH)
if(DLRT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${DLRT_QEMU_AARCH64}")
endif()
