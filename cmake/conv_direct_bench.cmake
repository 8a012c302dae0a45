# bench/conv_direct.cpp (issue 5): Conv on the direct path and the im2col/GEMM
# path alternately, on resnet18 and mobilenet_v2 shapes; not part of the test suite.
add_executable(dlrt_conv_direct ${PROJECT_SOURCE_DIR}/bench/conv_direct.cpp)
target_compile_options(dlrt_conv_direct PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_conv_direct PRIVATE dlrt_internal)
