# The layer check of DESIGN.md (tests/layers/check_layers.py): no file of a
# lower layer includes a higher one, beyond the allowed cross edges and the
# listed exceptions. It writes the include-level layer graph to layers.dot in
# the build folder. The second test plants an upward include and must see the
# check fail on it, proving the check itself works.
add_test(NAME layers.dependencies
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_layers.py --root ${PROJECT_SOURCE_DIR}
          --dot ${CMAKE_BINARY_DIR}/layers.dot)
add_test(NAME layers.check_rejects_upward_include
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_layers.py --root ${PROJECT_SOURCE_DIR}
          --plant src/core/tensor.cpp:runtime/session_internal.h)
set_tests_properties(layers.check_rejects_upward_include PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: upward include: src/core/tensor.cpp \\(core\\) includes src/runtime/session_internal.h")
