# dlrt_opt_tests: only the optimiser and transformer-kernel tests plus the zoo
# check, for quick iteration on the graph passes (they also run in dlrt_tests;
# this target is not registered with ctest, so nothing runs twice).
add_executable(dlrt_opt_tests EXCLUDE_FROM_ALL
  ${CMAKE_CURRENT_SOURCE_DIR}/ir/passes_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/runtime/optimize_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/transformer_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tools/zoo_test.cpp)
target_compile_options(dlrt_opt_tests PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_opt_tests PRIVATE dlrt_internal GTest::gtest GTest::gtest_main)
target_compile_definitions(dlrt_opt_tests PRIVATE DLRT_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
  DLRT_BINARY_DIR="${CMAKE_BINARY_DIR}")
