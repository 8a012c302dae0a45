# Packaging: a build without a Debian package it needs stops at configure with
# `apt-get install <package>` (cmake/deps/require.cmake), as a user building the
# sdist meets it.
add_test(NAME packaging.missing_package_named
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/missing_package_test.sh ${PROJECT_SOURCE_DIR})
