# Benchmark programs (issue 5): not part of the test suite. bench/fma_peak.cpp
# measures the machine's peak fp32 FMA rate (ISA picked at run time through
# target attributes, so no -march flag here). bench/compare_ort.sh builds and
# runs it.
add_executable(dlrt_fma_peak ${PROJECT_SOURCE_DIR}/bench/fma_peak.cpp)
target_compile_options(dlrt_fma_peak PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_fma_peak PRIVATE Threads::Threads)
# fma_loops.h's FMA chains are a body over the CPU backend's vector layer (headers only).
target_include_directories(dlrt_fma_peak PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
