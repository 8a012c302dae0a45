# The fuzz smoke driver (fuzz/smoke_main.cpp, cmake/fuzz.cmake) reports crashes,
# timeouts and crashes its mutations reach, through its selftest harness.
if(TARGET dlrt_fuzz_smoke)
  add_test(NAME fuzz.smoke_driver_reports_failures
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/smoke_test.sh $<TARGET_FILE:dlrt_fuzz_smoke>)
endif()
