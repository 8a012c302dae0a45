# The image library's tests (tests/image/image_tests.cpp): a binary of its own,
# linked with the image objects and dlrt's core only, so an edit there does not
# relink dlrt_tests. Its data (tests/image/data/) is made by make_image_set.py.
add_executable(dlrt_image_tests ${CMAKE_CURRENT_SOURCE_DIR}/image/image_tests.cpp)
target_compile_options(dlrt_image_tests PRIVATE ${DLRT_WARNINGS})
target_include_directories(dlrt_image_tests PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(dlrt_image_tests PRIVATE dlrt_embed_image dlrt_core GTest::gtest GTest::gtest_main)
target_compile_definitions(dlrt_image_tests PRIVATE DLRT_IMAGE_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/image/data")
gtest_discover_tests(dlrt_image_tests DISCOVERY_TIMEOUT ${DLRT_TEST_DISCOVERY_TIMEOUT} PROPERTIES TIMEOUT 120)
