# Installing dlrt: `cmake --install build --prefix P` puts the public headers
# (include/dlrt, with the generated version.h), the versioned libdlrt.so, a
# CMake package (find_package(dlrt CONFIG) gives dlrt::dlrt) and dlrt.pc
# under P. scripts/test_install.sh builds a consumer against such a prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

target_include_directories(dlrt PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(dlrt PUBLIC cxx_std_20)  # the public headers use C++20

install(TARGETS dlrt EXPORT dlrtTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/dlrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/dlrt/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlrt)

set(DLRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dlrt)
install(EXPORT dlrtTargets NAMESPACE dlrt:: DESTINATION ${DLRT_CMAKE_DIR})
configure_package_config_file(cmake/dlrtConfig.cmake.in ${PROJECT_BINARY_DIR}/dlrtConfig.cmake
                              INSTALL_DESTINATION ${DLRT_CMAKE_DIR})
# 0.x: a minor version may break the API; from 1.0 the major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(DLRT_COMPATIBILITY SameMinorVersion)
else()
  set(DLRT_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dlrtConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY ${DLRT_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/dlrtConfig.cmake ${PROJECT_BINARY_DIR}/dlrtConfigVersion.cmake
        DESTINATION ${DLRT_CMAKE_DIR})

# The .pc file finds the prefix from its own folder (relocatable).
file(RELATIVE_PATH DLRT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/dlrt.pc.in ${PROJECT_BINARY_DIR}/dlrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dlrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
