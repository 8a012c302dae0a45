# bench/pool_overhead.cpp (issue 5): the cost of one ThreadPool::parallel_for
# (empty and small bodies; spinning vs sleeping workers vs 1 thread); not part
# of the test suite.
add_executable(dlrt_pool_overhead ${PROJECT_SOURCE_DIR}/bench/pool_overhead.cpp)
target_compile_options(dlrt_pool_overhead PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_pool_overhead PRIVATE dlrt_internal)
