# The layer link check: for each layer library (DLRT_LAYERS, CMakeLists.txt)
# a program that links the whole layer (every object of it) and only what the
# layer declares it depends on. A call from a layer into a higher one is then
# an undefined symbol, and the build fails naming it.
foreach(layer ${DLRT_LAYERS})
  add_executable(dlrt_layer_link_${layer} ${CMAKE_CURRENT_SOURCE_DIR}/layers/link_main.cpp)
  target_link_libraries(dlrt_layer_link_${layer} PRIVATE -Wl,--whole-archive ${layer} -Wl,--no-whole-archive)
endforeach()
