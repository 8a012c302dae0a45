# Embedding app tests (tests/embed/*_test.cpp are globbed into dlrt_tests).
target_link_libraries(dlrt_tests PRIVATE dlrt_embed)
target_compile_definitions(dlrt_tests PRIVATE DLRT_EMBED_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/embed/data")
add_dependencies(dlrt_tests dlrt_cli)  # the embed CLI tests run the built binary
