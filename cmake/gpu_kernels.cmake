# GPU kernels shared by the OpenCL and CUDA backends: src/backends/gpu/kernels/*.cl
# are embedded into dlrt at build time as one generated .cpp of raw string
# literals (common.cl first, then the others in name order), so the binary
# needs no kernel files at run time. No vendor header or library is used at
# build time: each backend declares its API and loads the vendor library at
# run time.
file(GLOB DLRT_GPU_KERNELS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backends/gpu/kernels/*.cl)
list(SORT DLRT_GPU_KERNELS)
set(DLRT_GPU_KERNELS_EMBEDDED ${CMAKE_BINARY_DIR}/generated/gpu_kernels.cpp)

add_custom_command(
  OUTPUT ${DLRT_GPU_KERNELS_EMBEDDED}
  COMMAND ${CMAKE_COMMAND} -DOUT=${DLRT_GPU_KERNELS_EMBEDDED} -DDIR=${PROJECT_SOURCE_DIR}/src/backends/gpu/kernels
          -P ${PROJECT_SOURCE_DIR}/cmake/gpu_kernels_embed.cmake.in
  DEPENDS ${DLRT_GPU_KERNELS} ${PROJECT_SOURCE_DIR}/cmake/gpu_kernels_embed.cmake.in
  COMMENT "Embedding GPU kernels"
  VERBATIM)
target_sources(dlrt_backend_gpu PRIVATE ${DLRT_GPU_KERNELS_EMBEDDED})
