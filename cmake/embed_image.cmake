# The embedding app's image library (apps/embed/image/, docs/images.md): encoded
# bytes -> RGB (Debian's codec libraries) -> a processor's pixel values.
#  - dlrt_embed_image (OBJECT), over dlrt's public headers and the tokenizer's
#    folder-file helpers; its consumers link the codecs through it.
# The codecs are required, as the build's other libraries are: a build without
# one would refuse that format at run time, which a model folder cannot tell.
# libwebpdemux is libwebp's animation decoder, which reads every WebP as PIL does.
dlrt_require_pkg_config(DLRT_LIBJPEG libjpeg libjpeg62-turbo-dev)
dlrt_require_pkg_config(DLRT_LIBPNG libpng libpng-dev)
dlrt_require_pkg_config(DLRT_LIBWEBPDEMUX libwebpdemux libwebp-dev)
dlrt_require_pkg_config(DLRT_LIBGIF libgif libgif-dev)

file(GLOB DLRT_EMBED_IMAGE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/embed/image/*.cpp)
add_library(dlrt_embed_image OBJECT ${DLRT_EMBED_IMAGE_SOURCES})
target_include_directories(dlrt_embed_image PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                                                   ${PROJECT_SOURCE_DIR}/apps)
target_compile_options(dlrt_embed_image PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_embed_image PUBLIC nlohmann_json::nlohmann_json PkgConfig::DLRT_LIBJPEG
                      PkgConfig::DLRT_LIBPNG PkgConfig::DLRT_LIBWEBPDEMUX PkgConfig::DLRT_LIBGIF)
set_target_properties(dlrt_embed_image PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
