# The C API test (tests/capi/capi_test.c): a strict C11 program linked to
# libdlrt.so, built and run under AddressSanitizer (leaks included) and
# UBSan, whatever the build type of the library.
add_executable(dlrt_capi_test ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.c)
set_target_properties(dlrt_capi_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(dlrt_capi_test PRIVATE -Wall -Wextra -Werror -pedantic -fsanitize=address,undefined
                                              -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
target_link_options(dlrt_capi_test PRIVATE -fsanitize=address,undefined)
target_link_libraries(dlrt_capi_test PRIVATE dlrt m Threads::Threads)
add_test(NAME capi.c_api
  COMMAND dlrt_capi_test ${CMAKE_BINARY_DIR}/test_models/mlp.onnx ${CMAKE_BINARY_DIR}/test_models/mlp_input.npy
          ${CMAKE_BINARY_DIR}/test_models/mlp_expected.npy ${CMAKE_CURRENT_SOURCE_DIR}/embed/data/tiny_bert
          ${CMAKE_CURRENT_SOURCE_DIR}/embed/data/tiny_bert_expected.json
          ${CMAKE_CURRENT_SOURCE_DIR}/models/retrieval/qwen3_rerank "(kind llm_reranker)"
          ${CMAKE_CURRENT_SOURCE_DIR}/embed/data/cross_encoder_tiny "(kind cross_encoder)"
          ${CMAKE_CURRENT_SOURCE_DIR}/models/retrieval/colbert_tiny "(kind multi_vector)"
          ${CMAKE_CURRENT_SOURCE_DIR}/models/retrieval/splade_tiny "(kind sparse)")

# The C API's backends, model info and node placement (tests/capi/capi_introspect_test.c),
# built and run as the test above.
add_executable(dlrt_capi_introspect_test ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_introspect_test.c)
set_target_properties(dlrt_capi_introspect_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(dlrt_capi_introspect_test PRIVATE -Wall -Wextra -Werror -pedantic -fsanitize=address,undefined
                                                         -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
target_link_options(dlrt_capi_introspect_test PRIVATE -fsanitize=address,undefined)
target_link_libraries(dlrt_capi_introspect_test PRIVATE dlrt)
add_test(NAME capi.introspection COMMAND dlrt_capi_introspect_test ${CMAKE_BINARY_DIR}/test_models/mlp.onnx)

# dlrt_session_options_set_outputs (tests/capi/capi_outputs_test.c), built and run as the tests above.
add_executable(dlrt_capi_outputs_test ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_outputs_test.c)
set_target_properties(dlrt_capi_outputs_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(dlrt_capi_outputs_test PRIVATE -Wall -Wextra -Werror -pedantic -fsanitize=address,undefined
                                                      -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
target_link_options(dlrt_capi_outputs_test PRIVATE -fsanitize=address,undefined)
target_link_libraries(dlrt_capi_outputs_test PRIVATE dlrt)
add_test(NAME capi.outputs COMMAND dlrt_capi_outputs_test ${CMAKE_BINARY_DIR}/test_models/two_towers.onnx)
