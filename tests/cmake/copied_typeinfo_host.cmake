# A host program that copy-relocates the C++ runtime's type information
# (tests/openvino/copied_typeinfo_host.cpp), run by
# RealOpenVino.ProgramThatCopiesTypeinfo against the pinned OpenVINO wheels.
add_executable(dlrt_copied_typeinfo_host ${CMAKE_CURRENT_SOURCE_DIR}/openvino/copied_typeinfo_host.cpp)
target_link_libraries(dlrt_copied_typeinfo_host PRIVATE dlrt_internal)
add_dependencies(dlrt_tests dlrt_copied_typeinfo_host)
