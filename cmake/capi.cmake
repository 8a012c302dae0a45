# The C API (include/dlrt/dlrt_c.h, src/capi/) is part of libdlrt.so, with
# the embedder it offers (dlrt_embed_core, cmake/embed.cmake).
find_package(nlohmann_json REQUIRED)
target_sources(dlrt PRIVATE ${PROJECT_SOURCE_DIR}/src/capi/dlrt_c.cpp $<TARGET_OBJECTS:dlrt_embed_core>)
target_include_directories(dlrt PRIVATE ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt PRIVATE ${DLRT_WARNINGS})
target_compile_definitions(dlrt PRIVATE DLRT_BUILDING_LIBRARY=1)
target_link_libraries(dlrt PRIVATE nlohmann_json::nlohmann_json)
