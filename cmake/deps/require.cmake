# The system packages the build needs, each found or the configure stopped
# with one line that names the Debian/Ubuntu package to install (a build from
# the sdist, `pip install dlrt-*.tar.gz`, meets these first).
# scripts/install_deps.sh build installs all of them.
#   dlrt_require_package(<Name> "<debian packages>" [find_package arguments...])
#   dlrt_require_pkg_config(<prefix> <module> "<debian packages>")
macro(dlrt_require_package name debian)
  find_package(${name} ${ARGN})
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "dlrt needs ${name}, which CMake did not find: apt-get install ${debian} "
                        "(Debian/Ubuntu; scripts/install_deps.sh build installs everything the build needs)")
  endif()
endmacro()

macro(dlrt_require_pkg_config prefix module debian)
  pkg_check_modules(${prefix} IMPORTED_TARGET ${module})
  if(NOT ${prefix}_FOUND)
    message(FATAL_ERROR "dlrt needs ${module}, which pkg-config did not find: apt-get install ${debian} "
                        "(Debian/Ubuntu; scripts/install_deps.sh build installs everything the build needs)")
  endif()
endmacro()
