# libFuzzer harnesses (issue 41), built only with -DDLRT_FUZZ=ON and clang:
# the whole library is then compiled with ASan, UBSan and libFuzzer's
# coverage (see the top-level CMakeLists.txt), and each harness in fuzz/ is
# one executable (fuzz_model, fuzz_npy, fuzz_tokenizer, fuzz_config,
# fuzz_request: the server's JSON request parsing, fuzz_folder: the config
# files of a model folder, fuzz_ops: single com.microsoft / ai.onnx.ml nodes
# with fuzzed attributes, shapes and values, fuzz_http: raw bytes of one
# connection through dlrt serve's request framing).
# scripts/run_fuzz.sh builds the seed corpora and runs them (make fuzz).
if(DLRT_FUZZ)
  foreach(h model npy tokenizer config request folder ops http)
    add_executable(fuzz_${h} ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${h}.cpp)
    target_compile_options(fuzz_${h} PRIVATE ${DLRT_WARNINGS})
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    target_include_directories(fuzz_${h} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/apps)
    target_link_libraries(fuzz_${h} PRIVATE dlrt_embed dlrt_internal)
  endforeach()
endif()
