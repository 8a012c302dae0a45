# The embedding application (issue 7): apps/embed as the static library
# dlrt_embed. It uses only dlrt's public headers (include/) and its own
# (apps/); the public API symbols come from dlrt_internal, which consumers
# (dlrt_cli, dlrt_tests) link after it.
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json REQUIRED)
# toml++ is used header-only, as by the runtime's config file (src/runtime/config.cpp): one
# mode per binary, and no run-time dependency on libtomlplusplus.
pkg_check_modules(DLRT_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

file(GLOB DLRT_EMBED_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/embed/*.cpp)
add_library(dlrt_embed STATIC ${DLRT_EMBED_SOURCES})
target_include_directories(dlrt_embed PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed
  PUBLIC nlohmann_json::nlohmann_json PkgConfig::DLRT_HTTPLIB Threads::Threads
  # Link-only: dlrt_embed must not see src/ headers, but its users link dlrt after it.
  INTERFACE $<LINK_ONLY:dlrt_internal>)

target_link_libraries(dlrt_cli PRIVATE dlrt_embed)
# dlrt_tests is defined later (tests/), so its link to dlrt_embed is in tests/cmake/embed.cmake.
