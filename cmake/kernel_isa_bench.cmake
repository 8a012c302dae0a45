# bench/kernel_isa.cpp (issue 5): the non-GEMM float kernels on their AVX2 and
# AVX-512 paths, alternately, with zoo shapes; prints medians and ratios.
add_executable(dlrt_kernel_isa ${PROJECT_SOURCE_DIR}/bench/kernel_isa.cpp)
target_compile_options(dlrt_kernel_isa PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_kernel_isa PRIVATE dlrt_internal)
