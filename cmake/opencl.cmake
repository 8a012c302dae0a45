# OpenCL backend (issue 4): the OpenCL C kernels in src/backends/opencl/kernels/
# are embedded into dlrt at build time as one generated .cpp of raw string
# literals (common.cl first, then the others in name order), so the binary
# needs no kernel files at run time. No OpenCL header or library is used at
# build time: src/backends/opencl/cl_api.h declares the API and the ICD loader
# is dlopened at run time.
file(GLOB DLRT_OPENCL_KERNELS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/opencl/kernels/*.cl)
list(SORT DLRT_OPENCL_KERNELS)
set(DLRT_OPENCL_EMBEDDED ${CMAKE_BINARY_DIR}/generated/opencl_kernels.cpp)

add_custom_command(
  OUTPUT ${DLRT_OPENCL_EMBEDDED}
  COMMAND ${CMAKE_COMMAND} -DOUT=${DLRT_OPENCL_EMBEDDED} -DDIR=${PROJECT_SOURCE_DIR}/src/backends/opencl/kernels
          -P ${PROJECT_SOURCE_DIR}/cmake/opencl_embed.cmake.in
  DEPENDS ${DLRT_OPENCL_KERNELS} ${PROJECT_SOURCE_DIR}/cmake/opencl_embed.cmake.in
  COMMENT "Embedding OpenCL kernels"
  VERBATIM)
target_sources(dlrt_internal PRIVATE ${DLRT_OPENCL_EMBEDDED})
