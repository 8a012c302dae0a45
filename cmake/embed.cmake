# The embedding application (issue 7), from apps/embed, in three parts:
#  - dlrt_embed_tokenizer (OBJECT): apps/embed/tokenizer/, tokenizer.json or
#    vocab.txt -> Encoding (the tokenizers, Unicode tables, folder-file reading).
#  - dlrt_embed_core (OBJECT): apps/embed/models/, model folder -> tokenizer ->
#    session -> vectors. With the tokenizer's objects it is also compiled into
#    libdlrt.so, whose C API (src/capi) offers the embedder, and into the Python module.
#  - dlrt_embed (STATIC): apps/embed/serve/, the HTTP service over them
#    (server, routes, batcher, metrics, service config), with both parts' objects.
# All use only dlrt's public headers (include/) and their own (apps/); the
# public API symbols come from dlrt_internal, which consumers (dlrt_cli,
# dlrt_tests) link after them.
dlrt_require_package(PkgConfig pkg-config)
dlrt_require_package(nlohmann_json nlohmann-json3-dev)
# toml++ is used header-only, as by the runtime's config file (src/runtime/config.cpp): one
# mode per binary, and no run-time dependency on libtomlplusplus.
dlrt_require_pkg_config(DLRT_HTTPLIB cpp-httplib libcpp-httplib-dev)
# The server's own TLS connection loop (apps/embed/serve/http_server.cpp) calls OpenSSL, as httplib does.
dlrt_require_package(OpenSSL libssl-dev)

set(DLRT_EMBED_DIR ${PROJECT_SOURCE_DIR}/apps/embed)
file(GLOB DLRT_EMBED_TOKENIZER_SOURCES CONFIGURE_DEPENDS ${DLRT_EMBED_DIR}/tokenizer/*.cpp)
add_library(dlrt_embed_tokenizer OBJECT ${DLRT_EMBED_TOKENIZER_SOURCES})
target_include_directories(dlrt_embed_tokenizer PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                                                       ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed_tokenizer PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed_tokenizer PUBLIC nlohmann_json::nlohmann_json)
set_target_properties(dlrt_embed_tokenizer PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
dlrt_unity(dlrt_embed_tokenizer)
# Its anonymous-namespace types are members of Regex::Program, declared in a header:
# GCC's -Wsubobject-linkage refuses that once the file is part of a unity source.
set_source_files_properties(${DLRT_EMBED_DIR}/tokenizer/tokenizer_regex.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

# An object library's objects reach only the target that names it, so the
# models' consumers (libdlrt.so, the Python module, dlrt_embed) add the
# tokenizer's objects with dlrt_embed_core's.
file(GLOB DLRT_EMBED_MODELS_SOURCES CONFIGURE_DEPENDS ${DLRT_EMBED_DIR}/models/*.cpp)
add_library(dlrt_embed_core OBJECT ${DLRT_EMBED_MODELS_SOURCES})
target_include_directories(dlrt_embed_core PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                                                  ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed_core PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed_core PUBLIC nlohmann_json::nlohmann_json)
set_target_properties(dlrt_embed_core PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
dlrt_unity(dlrt_embed_core)

file(GLOB DLRT_EMBED_SOURCES CONFIGURE_DEPENDS ${DLRT_EMBED_DIR}/serve/*.cpp)
include(cmake/deps/swagger_ui.cmake)  # DLRT_SWAGGER_UI_CPP: Swagger UI's files for GET /docs, generated
add_library(dlrt_embed STATIC ${DLRT_EMBED_SOURCES} ${DLRT_SWAGGER_UI_CPP} $<TARGET_OBJECTS:dlrt_embed_tokenizer>
                              $<TARGET_OBJECTS:dlrt_embed_core>)
dlrt_unity(dlrt_embed)
# Megabytes of string literal: compiled alone (not in a unity source) and only when it changes.
set_source_files_properties(${DLRT_SWAGGER_UI_CPP} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
dlrt_cold_code(dlrt_embed)  # the server; the tokenizer and embedder (dlrt_embed_core) keep -O3
target_include_directories(dlrt_embed PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed
  PUBLIC nlohmann_json::nlohmann_json PkgConfig::DLRT_HTTPLIB OpenSSL::SSL Threads::Threads
  # The clip kind (models/clip.cpp) decodes images: the image library's objects and codecs.
  PRIVATE dlrt_embed_image
  # Link-only: dlrt_embed must not see src/ headers, but its users link dlrt after it.
  INTERFACE $<LINK_ONLY:dlrt_internal>)

target_link_libraries(dlrt_cli PRIVATE dlrt_embed)
# dlrt_tests is defined later (tests/), so its link to dlrt_embed is in tests/cmake/embed.cmake.

