# tests/opencl/cl_api_test.cpp checks src/backends/opencl/cl_api.h against the
# Khronos headers when they are installed (Debian's opencl-c-headers, which
# scripts/install_deps.sh installs; header-only: nothing is linked).
find_path(DLRT_OPENCL_HEADERS_DIR CL/cl.h)
if(DLRT_OPENCL_HEADERS_DIR AND EXISTS ${DLRT_OPENCL_HEADERS_DIR}/CL/cl_ext.h)
  message(STATUS "OpenCL headers for the cl_api.h check: ${DLRT_OPENCL_HEADERS_DIR}")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/opencl/cl_api_test.cpp PROPERTIES
    COMPILE_DEFINITIONS "DLRT_OPENCL_HEADERS=1;DLRT_OPENCL_HEADERS_DIR=\"${DLRT_OPENCL_HEADERS_DIR}\"")
else()
  message(STATUS "OpenCL headers for the cl_api.h check: none (ClApi.TablesMatchKhronosHeaders will skip)")
endif()
