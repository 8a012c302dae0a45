# bench/gemm_bf16.cpp (issue 76): precision bf16's GEMM against f32 on
# transformer shapes, and VDPBF16PS's issue rate against FMA. Not a test.
add_executable(dlrt_gemm_bf16 ${PROJECT_SOURCE_DIR}/bench/gemm_bf16.cpp)
target_compile_options(dlrt_gemm_bf16 PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_gemm_bf16 PRIVATE dlrt_internal)
