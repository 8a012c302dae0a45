# The harnesses of fuzz/, one source each: fuzz_model, fuzz_npy, fuzz_tokenizer,
# fuzz_config, fuzz_request (the server's JSON request parsing), fuzz_folder
# (the config files of a model folder), fuzz_ops (single com.microsoft /
# ai.onnx.ml nodes with fuzzed attributes, shapes and values), fuzz_http (raw
# bytes of one connection through dlrt serve's request framing), fuzz_image (the
# image decoders and preprocessing, apps/embed/image/). Two builds:
#  - -DDLRT_FUZZ=ON with clang (issue 41; `make fuzz`): the whole library with
#    ASan, UBSan and libFuzzer's coverage (see the top-level CMakeLists.txt),
#    each harness one libFuzzer executable fuzz_<harness>;
#  - otherwise, with the tests: dlrt_fuzz_smoke, every harness in one
#    executable with fuzz/smoke_main.cpp's driver instead of libFuzzer (seed
#    replay and seeded random mutations on the build's own objects), for
#    `make test`'s fuzz smoke run.
# scripts/run_fuzz.sh builds the seed corpora and runs either.
set(DLRT_FUZZ_HARNESSES model npy tokenizer config request folder ops http image)
if(DLRT_FUZZ)
  foreach(h ${DLRT_FUZZ_HARNESSES})
    add_executable(fuzz_${h} ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${h}.cpp)
    target_compile_options(fuzz_${h} PRIVATE ${DLRT_WARNINGS})
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    target_include_directories(fuzz_${h} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/apps)
    target_link_libraries(fuzz_${h} PRIVATE dlrt_embed dlrt_embed_image dlrt_internal)
  endforeach()
elseif(DLRT_BUILD_TESTS)
  # fuzz_ops includes <fuzzer/FuzzedDataProvider.h>, which comes with clang
  # (Debian: libclang-common-<N>-dev); a copy of it in the build folder serves GCC
  # without clang's other headers.
  file(GLOB DLRT_FDP_CANDIDATES /usr/lib/llvm-*/lib/clang/*/include/fuzzer/FuzzedDataProvider.h)
  list(SORT DLRT_FDP_CANDIDATES COMPARE NATURAL ORDER DESCENDING)
  set(DLRT_SMOKE_HARNESSES ${DLRT_FUZZ_HARNESSES})
  if(DLRT_FDP_CANDIDATES)
    list(GET DLRT_FDP_CANDIDATES 0 DLRT_FDP)
    configure_file(${DLRT_FDP} ${CMAKE_BINARY_DIR}/fuzz-include/fuzzer/FuzzedDataProvider.h COPYONLY)
  else()
    list(REMOVE_ITEM DLRT_SMOKE_HARNESSES ops)
    message(STATUS "dlrt_fuzz_smoke: without the ops harness (no FuzzedDataProvider.h: apt-get install clang)")
  endif()
  # selftest: a harness that fails on purpose, for the driver's own tests (tests/cmake/fuzz_smoke.cmake).
  set(DLRT_SMOKE_SOURCES ${PROJECT_SOURCE_DIR}/fuzz/smoke_main.cpp)
  foreach(h ${DLRT_SMOKE_HARNESSES} selftest)
    set(src ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${h}.cpp)
    if(h STREQUAL "selftest")
      set(src ${PROJECT_SOURCE_DIR}/fuzz/smoke_selftest.cpp)
    endif()
    list(APPEND DLRT_SMOKE_SOURCES ${src})
    # Each harness's libFuzzer entry points under names of their own, for one executable.
    set_source_files_properties(${src} PROPERTIES COMPILE_DEFINITIONS
      "LLVMFuzzerTestOneInput=dlrt_fuzz_${h};LLVMFuzzerInitialize=dlrt_fuzz_init_${h}")
  endforeach()
  add_executable(dlrt_fuzz_smoke ${DLRT_SMOKE_SOURCES})
  target_compile_options(dlrt_fuzz_smoke PRIVATE ${DLRT_WARNINGS})
  target_include_directories(dlrt_fuzz_smoke PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/apps
                                                     ${CMAKE_BINARY_DIR}/fuzz-include)
  target_link_libraries(dlrt_fuzz_smoke PRIVATE dlrt_embed dlrt_embed_image dlrt_internal)
endif()
