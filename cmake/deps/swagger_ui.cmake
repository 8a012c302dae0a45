# Swagger UI for dlrt serve's GET /docs (apps/embed/serve/docs_page.cpp), embedded at build
# time: cmake/deps/swagger_ui_embed.cmake turns the dist's swagger-ui-bundle.js, swagger-ui.css and
# LICENSE into a generated .cpp (swagger_ui.h's swagger_ui()), so one binary serves them with
# nothing fetched at run time. scripts/fetch_swagger_ui.sh (run by scripts/install_deps.sh)
# puts the pinned release (scripts/pins.sh SWAGGER_UI_VERSION) in third_party/; any other
# Swagger UI 5 dist folder with those three files can be named with DLRT_SWAGGER_UI_DIR.
# Without them the build goes on: /docs is dlrt's own plain page, and both this message and
# `dlrt serve --help` say so.
file(STRINGS ${PROJECT_SOURCE_DIR}/scripts/pins.sh DLRT_SWAGGER_UI_PIN REGEX "^SWAGGER_UI_VERSION=")
string(REPLACE "SWAGGER_UI_VERSION=" "" DLRT_SWAGGER_UI_PIN "${DLRT_SWAGGER_UI_PIN}")
set(DLRT_SWAGGER_UI_DIR "" CACHE PATH "Swagger UI dist folder for dlrt serve's /docs (swagger-ui-bundle.js, \
swagger-ui.css, LICENSE); empty: third_party/swagger-ui-<the pinned version>")
set(_dlrt_swagger_ui_pinned "${PROJECT_SOURCE_DIR}/third_party/swagger-ui-${DLRT_SWAGGER_UI_PIN}")
set(_dlrt_swagger_ui_dir "${DLRT_SWAGGER_UI_DIR}")
if(NOT _dlrt_swagger_ui_dir)
  set(_dlrt_swagger_ui_dir "${_dlrt_swagger_ui_pinned}")
endif()
set(DLRT_SWAGGER_UI_FILES swagger-ui-bundle.js swagger-ui.css LICENSE)
# Configured again when the pin changes (files fetched later need a configure by hand).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/scripts/pins.sh)
set(_dlrt_swagger_ui_missing "")
foreach(_f ${DLRT_SWAGGER_UI_FILES})
  if(NOT EXISTS "${_dlrt_swagger_ui_dir}/${_f}")
    list(APPEND _dlrt_swagger_ui_missing ${_f})
  endif()
endforeach()
set(DLRT_SWAGGER_UI_CPP ${PROJECT_BINARY_DIR}/generated/swagger_ui_assets.cpp)
if(_dlrt_swagger_ui_missing)
  string(REPLACE ";" ", " _dlrt_swagger_ui_missing "${_dlrt_swagger_ui_missing}")
  set(DLRT_SWAGGER_UI_WHY "no ${_dlrt_swagger_ui_missing} in ${_dlrt_swagger_ui_dir} at build time "
                          "(scripts/fetch_swagger_ui.sh puts Swagger UI there)")
  string(REPLACE ";" "" DLRT_SWAGGER_UI_WHY "${DLRT_SWAGGER_UI_WHY}")
  # A wheel's build (scikit-build-core) has no use for the server's page: a status line there.
  if(SKBUILD)
    set(_level STATUS)
  else()
    set(_level WARNING)
  endif()
  message(${_level} "dlrt serve's /docs is its plain page, without Swagger UI: ${DLRT_SWAGGER_UI_WHY}; "
                    "run scripts/fetch_swagger_ui.sh (or set DLRT_SWAGGER_UI_DIR) and configure again")
  add_custom_command(OUTPUT ${DLRT_SWAGGER_UI_CPP}
    COMMAND ${CMAKE_COMMAND} -DOUT=${DLRT_SWAGGER_UI_CPP} "-DWHY=${DLRT_SWAGGER_UI_WHY}"
            -P ${PROJECT_SOURCE_DIR}/cmake/deps/swagger_ui_embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/deps/swagger_ui_embed.cmake
    COMMENT "Swagger UI: none (dlrt serve's /docs is the plain page)")
else()
  set(DLRT_SWAGGER_UI_VERSION "${DLRT_SWAGGER_UI_PIN}")
  # The version: the pin's for the fetched folder; another folder's is not known (and its path
  # stays out of the page).
  if(NOT _dlrt_swagger_ui_dir STREQUAL _dlrt_swagger_ui_pinned)
    set(DLRT_SWAGGER_UI_VERSION "(DLRT_SWAGGER_UI_DIR's)")
  endif()
  message(STATUS "dlrt serve's /docs: Swagger UI ${DLRT_SWAGGER_UI_VERSION}, embedded from ${_dlrt_swagger_ui_dir}")
  set(_deps "")
  foreach(_f ${DLRT_SWAGGER_UI_FILES})
    list(APPEND _deps "${_dlrt_swagger_ui_dir}/${_f}")
  endforeach()
  add_custom_command(OUTPUT ${DLRT_SWAGGER_UI_CPP}
    COMMAND ${CMAKE_COMMAND} -DOUT=${DLRT_SWAGGER_UI_CPP} -DDIR=${_dlrt_swagger_ui_dir}
            "-DVERSION=${DLRT_SWAGGER_UI_VERSION}" -P ${PROJECT_SOURCE_DIR}/cmake/deps/swagger_ui_embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/deps/swagger_ui_embed.cmake ${_deps}
    COMMENT "Embedding Swagger UI ${DLRT_SWAGGER_UI_VERSION} for dlrt serve's /docs")
  # Installed beside the binary's other documents: Swagger UI's license (also served at /docs/LICENSE).
  include(GNUInstallDirs)
  install(FILES ${_dlrt_swagger_ui_dir}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR}/swagger-ui)
endif()
