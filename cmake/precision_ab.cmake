# bench/precision_ab.cpp (issue 76): one model at f32 and another CPU
# precision in one process, runs alternating; medians, ratio and the error
# against f32. Not a test.
add_executable(dlrt_precision_ab ${PROJECT_SOURCE_DIR}/bench/precision_ab.cpp)
target_compile_options(dlrt_precision_ab PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_precision_ab PRIVATE dlrt_internal)
