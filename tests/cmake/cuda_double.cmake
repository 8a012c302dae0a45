# The fake NVIDIA stack (tests/cuda_double/cuda_double.cpp), built three times
# into ${CMAKE_CURRENT_BINARY_DIR}/cuda_double as libcuda.so.1, libnvrtc.so.13
# and libcublas.so.13 (no DT_SONAME, so that a later dlopen by bare soname never
# matches the copy a test loaded by path). Tests point DLRT_CUDA_LIB_PATH at the
# folder, or at folders of links to some of the three.
set(DLRT_CUDA_DOUBLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/cuda_double)
foreach(part driver nvrtc cublas)
  string(TOUPPER ${part} part_upper)
  add_library(dlrt_cuda_double_${part} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/cuda_double/cuda_double.cpp)
  target_compile_options(dlrt_cuda_double_${part} PRIVATE ${DLRT_WARNINGS})
  target_compile_definitions(dlrt_cuda_double_${part} PRIVATE DLRT_FAKE_PART_${part_upper}=1)
  # dlrt's headers only (cuda_api.h): nothing of dlrt is linked in.
  target_include_directories(dlrt_cuda_double_${part} PRIVATE $<TARGET_PROPERTY:dlrt_internal,INTERFACE_INCLUDE_DIRECTORIES>)
  set_target_properties(dlrt_cuda_double_${part} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${DLRT_CUDA_DOUBLE_DIR} CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    NO_SONAME ON PREFIX "lib")
  add_dependencies(dlrt_tests dlrt_cuda_double_${part})
endforeach()
set_target_properties(dlrt_cuda_double_driver PROPERTIES OUTPUT_NAME cuda SUFFIX ".so.1")
set_target_properties(dlrt_cuda_double_nvrtc PROPERTIES OUTPUT_NAME nvrtc SUFFIX ".so.13")
set_target_properties(dlrt_cuda_double_cublas PROPERTIES OUTPUT_NAME cublas SUFFIX ".so.13")
target_compile_definitions(dlrt_tests PRIVATE DLRT_CUDA_DOUBLE_DIR="${DLRT_CUDA_DOUBLE_DIR}")

# tests/cuda/cuda_api_test.cpp checks cuda_api.h against NVIDIA's headers when a
# toolkit is installed here (header-only: nothing is linked).
find_path(DLRT_CUDA_HEADERS_DIR cuda.h
  PATHS $ENV{CUDA_HOME}/include $ENV{CUDA_PATH}/include /usr/local/cuda/include NO_DEFAULT_PATH)
if(DLRT_CUDA_HEADERS_DIR AND EXISTS ${DLRT_CUDA_HEADERS_DIR}/nvrtc.h AND EXISTS ${DLRT_CUDA_HEADERS_DIR}/cublas_api.h)
  message(STATUS "CUDA headers for the cuda_api.h check: ${DLRT_CUDA_HEADERS_DIR}")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda_api_test.cpp PROPERTIES
    COMPILE_OPTIONS "-isystem;${DLRT_CUDA_HEADERS_DIR}"
    COMPILE_DEFINITIONS "DLRT_CUDA_HEADERS=1;DLRT_CUDA_HEADERS_DIR=\"${DLRT_CUDA_HEADERS_DIR}\"")
else()
  message(STATUS "CUDA headers for the cuda_api.h check: none (CudaApi.TablesMatchNvidiaHeaders will skip)")
endif()
