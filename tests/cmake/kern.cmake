# dlrt_kern_tests: only the CPU GEMM/Conv/MatMul/fused/executor tests, for
# quick iteration on those kernels (they also run in dlrt_tests; this target
# is not registered with ctest, so nothing runs twice).
add_executable(dlrt_kern_tests EXCLUDE_FROM_ALL
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/matmul_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/conv_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/fused_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tools/zoo_test.cpp)
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/cpu/executor_test.cpp)
  target_sources(dlrt_kern_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cpu/executor_test.cpp)
endif()
target_compile_options(dlrt_kern_tests PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_kern_tests PRIVATE dlrt_internal GTest::gtest GTest::gtest_main)
target_compile_definitions(dlrt_kern_tests PRIVATE DLRT_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
  DLRT_BINARY_DIR="${CMAKE_BINARY_DIR}")
