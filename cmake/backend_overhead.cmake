# bench/backend_overhead.cpp: cost of the backend/runtime layer on a CPU-only
# run versus the CPU executor called directly (issue 3). Not a test.
add_executable(dlrt_backend_overhead ${PROJECT_SOURCE_DIR}/bench/backend_overhead.cpp)
target_compile_options(dlrt_backend_overhead PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_backend_overhead PRIVATE dlrt_internal)
