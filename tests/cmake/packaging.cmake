# Packaging: a build without a Debian package it needs stops at configure with
# `apt-get install <package>` (cmake/deps/require.cmake), as a user building the
# sdist meets it.
add_test(NAME packaging.missing_package_named
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/missing_package_test.sh ${PROJECT_SOURCE_DIR})
# The wheel phase on a machine with only some of the supported CPythons: the ones
# found are tested, the others named with how to add them, and
# DLRT_REQUIRE_ALL_PYTHONS=1 (.ci/run) fails on a missing one (scripts/wheel_pythons.sh).
add_test(NAME packaging.wheel_pythons_missing_named
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/wheel_pythons_test.sh ${PROJECT_SOURCE_DIR})
