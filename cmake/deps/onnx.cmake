# ONNX's C++ library (model format, operator schemas, checker, shape inference,
# function inliner, version converter), built from the sources of the onnx
# release that scripts/fetch_onnx.sh unpacks (the PyPI sdist, pinned by hash in
# scripts/pins.sh). Built here rather than by onnx's own CMake project, which
# needs a newer CMake than Debian 12 has: the sources and the generated .proto
# files are what that project compiles too. The result is a static, position-
# independent library `dlrt_onnx` (namespace `onnx`, traditional-ML ops on).
set(DLRT_ONNX_VERSION "1.23.2")
set(DLRT_ONNX_SOURCE_DIR "${PROJECT_SOURCE_DIR}/third_party/onnx-${DLRT_ONNX_VERSION}"
    CACHE PATH "Unpacked onnx ${DLRT_ONNX_VERSION} sources (scripts/fetch_onnx.sh puts them there)")
if(NOT EXISTS "${DLRT_ONNX_SOURCE_DIR}/onnx/onnx-ml.proto")
  message(FATAL_ERROR "onnx ${DLRT_ONNX_VERSION} sources not found in ${DLRT_ONNX_SOURCE_DIR}: "
                      "run scripts/fetch_onnx.sh (scripts/install_deps.sh build runs it)")
endif()

set(_onnx_gen "${PROJECT_BINARY_DIR}/onnx_gen")
set(_onnx_pb_srcs)
foreach(_name onnx-ml onnx-operators-ml onnx-data)
  set(_src "${DLRT_ONNX_SOURCE_DIR}/onnx/${_name}.proto")
  set(_dst "${_onnx_gen}/onnx/${_name}.proto")
  # protoc names the generated files after the path under its -I folder, and
  # onnx-operators-ml.proto imports "onnx/onnx-ml.proto": copy into onnx/.
  add_custom_command(OUTPUT "${_onnx_gen}/onnx/${_name}.pb.cc" "${_onnx_gen}/onnx/${_name}.pb.h"
    COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_src}" "${_dst}"
    COMMAND protobuf::protoc -I "${_onnx_gen}" --cpp_out "${_onnx_gen}" "${_dst}"
    DEPENDS "${_src}" protobuf::protoc
    COMMENT "protoc onnx/${_name}.proto (onnx ${DLRT_ONNX_VERSION})")
  list(APPEND _onnx_pb_srcs "${_onnx_gen}/onnx/${_name}.pb.cc")
endforeach()
file(MAKE_DIRECTORY "${_onnx_gen}/onnx")

file(GLOB_RECURSE _onnx_srcs CONFIGURE_DEPENDS
     "${DLRT_ONNX_SOURCE_DIR}/onnx/*.cc")
list(FILTER _onnx_srcs EXCLUDE REGEX "/(test|backend|reference|cpp2py_export\\.cc)")
add_library(dlrt_onnx STATIC ${_onnx_srcs} ${_onnx_pb_srcs})
target_compile_features(dlrt_onnx PUBLIC cxx_std_17)
target_compile_definitions(dlrt_onnx PUBLIC ONNX_NAMESPACE=onnx ONNX_ML=1)
# The generated headers first, so that no other onnx headers on the system
# (Debian's libonnx-dev, an older release) are picked up instead.
target_include_directories(dlrt_onnx SYSTEM BEFORE PUBLIC "${_onnx_gen}" "${DLRT_ONNX_SOURCE_DIR}")
target_link_libraries(dlrt_onnx PUBLIC protobuf::libprotobuf)
set_target_properties(dlrt_onnx PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                                           VISIBILITY_INLINES_HIDDEN ON)
# Third-party code: its warnings are not ours to fix (the project's -Werror
# applies to dlrt's own sources).
target_compile_options(dlrt_onnx PRIVATE -w)
# ONNX records __FILE__ in every operator schema: relative to the source tree,
# so the binary holds no build path and ccache reuses these objects from a
# tree elsewhere (the sdist's build in pip's temporary folder reuses the wheel's).
target_compile_options(dlrt_onnx PRIVATE "-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=")
# Load-time code (schemas, checker, shape inference, inliner, version converter):
# -O1 compiles it in less than half of -O2's CPU time; the first session create
# of a process, which builds the schema registry, takes about 1.3 ms longer than
# with -O2 (17.5 -> 18.8 ms for a small MLP), once per process.
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  target_compile_options(dlrt_onnx PRIVATE -O1)
endif()
if(DLRT_UNITY)
  set_target_properties(dlrt_onnx PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH UNITY_BUILD_BATCH_SIZE 8)
  # Each defines explicit specializations of templates that other files of a
  # batch would already have instantiated (GetOpSchema<T>, ParseData<T>).
  set_source_files_properties("${DLRT_ONNX_SOURCE_DIR}/onnx/defs/schema.cc"
                              "${DLRT_ONNX_SOURCE_DIR}/onnx/defs/tensor_proto_util.cc"
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endif()
