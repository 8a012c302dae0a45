# The OpenVINO conformance double (tests/openvino_double/ov_double.cpp): a
# libopenvino_c.so exporting only ov_* symbols, implemented over dlrt's CPU
# executor (a private static copy). Tests point OPENVINO_LIB_PATH at
# ${CMAKE_CURRENT_BINARY_DIR}/ov_double (or ov_double_nosym for the variant
# without ov_core_import_model).
set(DLRT_OV_DOUBLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/ov_double)
set(DLRT_OV_DOUBLE_NOSYM_DIR ${CMAKE_CURRENT_BINARY_DIR}/ov_double_nosym)
set(DLRT_OV_DOUBLE_MAP ${CMAKE_CURRENT_BINARY_DIR}/ov_double_exports.map)
file(WRITE ${DLRT_OV_DOUBLE_MAP} "{ global: ov_*; local: *; };\n")
foreach(variant full nosym)
  add_library(dlrt_ov_double_${variant} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/openvino_double/ov_double.cpp)
  target_compile_options(dlrt_ov_double_${variant} PRIVATE ${DLRT_WARNINGS})
  target_link_libraries(dlrt_ov_double_${variant} PRIVATE dlrt_internal)
  target_link_options(dlrt_ov_double_${variant} PRIVATE "LINKER:--version-script=${DLRT_OV_DOUBLE_MAP}")
  set_target_properties(dlrt_ov_double_${variant} PROPERTIES
    OUTPUT_NAME openvino_c CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON NO_SONAME ON
    LINK_DEPENDS ${DLRT_OV_DOUBLE_MAP})
  add_dependencies(dlrt_tests dlrt_ov_double_${variant})
endforeach()
set_target_properties(dlrt_ov_double_full PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DLRT_OV_DOUBLE_DIR})
set_target_properties(dlrt_ov_double_nosym PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DLRT_OV_DOUBLE_NOSYM_DIR})
target_compile_definitions(dlrt_ov_double_nosym PRIVATE OV_DOUBLE_OMIT_SYMBOL=1)
target_compile_definitions(dlrt_tests PRIVATE
  DLRT_OV_DOUBLE_DIR="${DLRT_OV_DOUBLE_DIR}" DLRT_OV_DOUBLE_NOSYM_DIR="${DLRT_OV_DOUBLE_NOSYM_DIR}")
