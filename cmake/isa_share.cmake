# bench/isa_share.cpp (issue 81): one model on the widest vector path and
# capped at AVX2 in one process, each beside its width's FMA peak, by thread
# CPU time; bench/isa_share.sh turns it into shares of the peak. Not a test.
add_executable(dlrt_isa_share ${PROJECT_SOURCE_DIR}/bench/isa_share.cpp)
target_compile_options(dlrt_isa_share PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_isa_share PRIVATE dlrt_internal)
target_include_directories(dlrt_isa_share PRIVATE ${PROJECT_SOURCE_DIR})  # bench/fma_loops_simd.h
