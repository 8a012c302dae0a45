# bench/gemm_isa.cpp (issue 5): the float GEMM on its AVX2 and AVX-512
# kernels, on zoo-model shapes; not part of the test suite.
add_executable(dlrt_gemm_isa ${PROJECT_SOURCE_DIR}/bench/gemm_isa.cpp)
target_compile_options(dlrt_gemm_isa PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_gemm_isa PRIVATE dlrt_internal)

# bench/gemm_int8.cpp (issue 35): the 8-bit GEMM on each of its kernels.
add_executable(dlrt_gemm_int8 ${PROJECT_SOURCE_DIR}/bench/gemm_int8.cpp)
target_compile_options(dlrt_gemm_int8 PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_gemm_int8 PRIVATE dlrt_internal)
