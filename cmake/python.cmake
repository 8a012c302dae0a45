# The Python package dlrt (python/): the pure-Python files in python/dlrt/
# over one native module, dlrt._dlrt, built with nanobind from
# python/src/*.cpp and linking the embedder core (dlrt_embed_tokenizer, dlrt_embed_core) and
# dlrt_internal statically (one native file in the wheel). Off by default, so the C++ build needs no
# nanobind; `pip install .` (scikit-build-core, pyproject.toml) turns it on,
# and scripts/run_tests.sh turns it on in the test build folder.
#
# In-tree, the package is assembled in BUILD/python/dlrt (the .py/.pyi files
# copied beside _dlrt*.so on every build), so PYTHONPATH=BUILD/python imports it.
option(DLRT_BUILD_PYTHON "Build the Python package dlrt (needs nanobind: python -m pip install nanobind)" OFF)

if(DLRT_BUILD_PYTHON)
  # SKBUILD_SABI_COMPONENT: Development.SABIModule when scikit-build-core builds the
  # stable-ABI wheel (pyproject.toml: wheel.py-api, CPython >= 3.12); empty otherwise.
  find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module ${SKBUILD_SABI_COMPONENT})
  # nanobind from PyPI, installed for the Python found above (or its venv).
  # Asked every configure: pip's isolated build environments move it.
  execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                  OUTPUT_VARIABLE DLRT_NANOBIND_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE DLRT_NANOBIND_RC ERROR_QUIET)
  if(DLRT_NANOBIND_RC EQUAL 0)
    set(nanobind_DIR ${DLRT_NANOBIND_DIR} CACHE PATH "nanobind's CMake folder" FORCE)
  elseif(NOT EXISTS "${nanobind_DIR}")
    message(FATAL_ERROR "DLRT_BUILD_PYTHON=ON needs nanobind for ${Python_EXECUTABLE}: "
                        "install it with '${Python_EXECUTABLE} -m pip install nanobind', or set nanobind_DIR")
  endif()
  find_package(nanobind CONFIG REQUIRED)

  file(GLOB DLRT_PYTHON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/src/*.cpp)
  # NB_STATIC: nanobind's own runtime is linked in, not a shared libnanobind.
  # NOMINSIZE: the project's -O3, not nanobind's default -Os.
  # STABLE_ABI: the limited C API of CPython 3.12 (_dlrt.abi3.so, one module for
  # 3.12 and every later CPython) where Python::SABIModule exists, i.e. in the
  # abi3 wheel's build; nanobind ignores it otherwise (a version-specific module).
  nanobind_add_module(_dlrt NB_STATIC NOMINSIZE STABLE_ABI ${DLRT_PYTHON_SOURCES})
  target_include_directories(_dlrt PRIVATE ${PROJECT_SOURCE_DIR}/python/src)
  target_compile_options(_dlrt PRIVATE ${DLRT_WARNINGS})
  # The embedder core's objects (not dlrt_embed: its HTTP server would add
  # OpenSSL and friends to the module's dependencies), then dlrt_internal for
  # the public API they use.
  target_sources(_dlrt PRIVATE $<TARGET_OBJECTS:dlrt_embed_tokenizer>)
  # dlrt_embed_image: the clip kind's image decoding (its codecs become the module's dependencies).
  target_link_libraries(_dlrt PRIVATE dlrt_embed_core dlrt_embed_image dlrt_internal)
  # The static libraries' symbols stay inside the module: no clash with a
  # libdlrt.so or another extension loaded into the same process.
  target_link_options(_dlrt PRIVATE -Wl,--exclude-libs,ALL)
  # The wheel (pyproject.toml turns it on): libstdc++ linked in, its symbols hidden like the
  # rest (--exclude-libs), so the module needs no GLIBCXX_3.4.30 (GCC 12's libstdc++.so,
  # newer than manylinux_2_34 allows). libgcc stays shared: GCC 12's static unwinder calls
  # _dl_find_object (glibc 2.35). docs/python-wheel.md ("The platform tag") says what else sets the tag.
  option(DLRT_PYTHON_STATIC_LIBSTDCXX "Link libstdc++ statically into the Python module" OFF)
  if(DLRT_PYTHON_STATIC_LIBSTDCXX)
    target_link_options(_dlrt PRIVATE -static-libstdc++)
  endif()

  set(DLRT_PYTHON_PACKAGE_DIR ${PROJECT_BINARY_DIR}/python/dlrt)
  set_target_properties(_dlrt PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DLRT_PYTHON_PACKAGE_DIR})
  add_custom_target(dlrt_python_files ALL
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${PROJECT_SOURCE_DIR}/python/dlrt ${DLRT_PYTHON_PACKAGE_DIR}
    COMMENT "Copying python/dlrt to ${DLRT_PYTHON_PACKAGE_DIR}")
  add_dependencies(_dlrt dlrt_python_files)

  # Only this component goes into the wheel (pyproject.toml: install.components).
  install(TARGETS _dlrt LIBRARY DESTINATION dlrt COMPONENT python)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/dlrt/ DESTINATION dlrt COMPONENT python
          PATTERN "__pycache__" EXCLUDE)
endif()
