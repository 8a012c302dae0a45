# bench/conv_winograd.cpp (issue 81): 3x3 stride-1 convs on the path asked
# (the default choice, the GEMM/direct path, F(2x2, 3x3) or F(4x4, 3x3)) at
# the ISA DLRT_CPU_ISA allows, for timing or callgrind; not part of the test suite.
add_executable(dlrt_conv_winograd ${PROJECT_SOURCE_DIR}/bench/conv_winograd.cpp)
target_compile_options(dlrt_conv_winograd PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_conv_winograd PRIVATE dlrt_internal)
