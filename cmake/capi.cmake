# The C API (include/dlrt/dlrt_c.h, src/capi/) is part of libdlrt.so, with
# the embedder it offers (dlrt_embed_tokenizer and dlrt_embed_core, cmake/embed.cmake)
# and the image library its clip kind decodes with (dlrt_embed_image: its objects and codecs).
dlrt_require_package(nlohmann_json nlohmann-json3-dev)
file(GLOB DLRT_CAPI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/capi/*.cpp)
target_sources(dlrt PRIVATE ${DLRT_CAPI_SOURCES} $<TARGET_OBJECTS:dlrt_embed_tokenizer>
                           $<TARGET_OBJECTS:dlrt_embed_core>)
target_include_directories(dlrt PRIVATE ${PROJECT_SOURCE_DIR}/apps ${PROJECT_SOURCE_DIR}/src)
target_compile_options(dlrt PRIVATE ${DLRT_WARNINGS})
target_compile_definitions(dlrt PRIVATE DLRT_BUILDING_LIBRARY=1)
target_link_libraries(dlrt PRIVATE nlohmann_json::nlohmann_json dlrt_embed_image)
