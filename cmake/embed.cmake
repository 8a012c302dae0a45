# The embedding application (issue 7), from apps/embed, in two parts:
#  - dlrt_embed_core (OBJECT): model folder -> tokenizer -> session -> vectors
#    (embedder, tokenizer, Unicode tables). Also compiled into libdlrt.so,
#    whose C API (src/capi) offers the embedder.
#  - dlrt_embed (STATIC): the HTTP service over it (server, batcher, metrics,
#    service config).
# Both use only dlrt's public headers (include/) and their own (apps/); the
# public API symbols come from dlrt_internal, which consumers (dlrt_cli,
# dlrt_tests) link after them.
dlrt_require_package(PkgConfig pkg-config)
dlrt_require_package(nlohmann_json nlohmann-json3-dev)
# toml++ is used header-only, as by the runtime's config file (src/runtime/config.cpp): one
# mode per binary, and no run-time dependency on libtomlplusplus.
dlrt_require_pkg_config(DLRT_HTTPLIB cpp-httplib libcpp-httplib-dev)
# The server's own TLS connection loop (apps/embed/http_server.cpp) calls OpenSSL, as httplib does.
dlrt_require_package(OpenSSL libssl-dev)

set(DLRT_EMBED_CORE_FILES batch_dependence classifier dense embedder folder_check length_groups llm_reranker modules multi_vector sparse
    token_inputs tokenizer unicode_lookup unicode_tables)
# The tokenizer's parts (apps/embed/tokenizer_*.cpp, tokenizer_parts.h).
list(APPEND DLRT_EMBED_CORE_FILES tokenizer_bpe tokenizer_checked tokenizer_decode tokenizer_normalize tokenizer_postprocess tokenizer_precompiled
     tokenizer_pretokenize tokenizer_regex tokenizer_unigram tokenizer_wordpiece)
list(TRANSFORM DLRT_EMBED_CORE_FILES PREPEND ${PROJECT_SOURCE_DIR}/apps/embed/)
list(TRANSFORM DLRT_EMBED_CORE_FILES APPEND .cpp)
add_library(dlrt_embed_core OBJECT ${DLRT_EMBED_CORE_FILES})
target_include_directories(dlrt_embed_core PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                                                  ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed_core PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed_core PUBLIC nlohmann_json::nlohmann_json)
set_target_properties(dlrt_embed_core PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
dlrt_unity(dlrt_embed_core)
# Its anonymous-namespace types are members of Regex::Program, declared in a header:
# GCC's -Wsubobject-linkage refuses that once the file is part of a unity source.
set_source_files_properties(${PROJECT_SOURCE_DIR}/apps/embed/tokenizer_regex.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

file(GLOB DLRT_EMBED_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/embed/*.cpp)
list(REMOVE_ITEM DLRT_EMBED_SOURCES ${DLRT_EMBED_CORE_FILES})
add_library(dlrt_embed STATIC ${DLRT_EMBED_SOURCES} $<TARGET_OBJECTS:dlrt_embed_core>)
dlrt_unity(dlrt_embed)
dlrt_cold_code(dlrt_embed)  # the server; the tokenizer and embedder (dlrt_embed_core) keep -O3
target_include_directories(dlrt_embed PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed
  PUBLIC nlohmann_json::nlohmann_json PkgConfig::DLRT_HTTPLIB OpenSSL::SSL Threads::Threads
  # Link-only: dlrt_embed must not see src/ headers, but its users link dlrt after it.
  INTERFACE $<LINK_ONLY:dlrt_internal>)

target_link_libraries(dlrt_cli PRIVATE dlrt_embed)
# dlrt_tests is defined later (tests/), so its link to dlrt_embed is in tests/cmake/embed.cmake.

