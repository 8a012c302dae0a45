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

# The size limits of issues 36 and 78 (tests/layers/check_sizes.py): no file of src/,
# apps/, tools/ or python/src
# over 700 lines, no function over 150, beyond its shrinking EXCEPTIONS list.
# The two tests after it plant a long file and a long function and must see
# the check fail on them.
add_test(NAME layers.sizes
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --root ${PROJECT_SOURCE_DIR})
add_test(NAME layers.sizes_rejects_long_file
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --root ${PROJECT_SOURCE_DIR}
          --plant-lines src/core/tensor.cpp:700)
set_tests_properties(layers.sizes_rejects_long_file PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: file over 700 lines: src/core/tensor.cpp: [0-9]+ lines")
add_test(NAME layers.sizes_rejects_long_function
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --root ${PROJECT_SOURCE_DIR}
          --plant-function src/core/tensor.cpp:151)
set_tests_properties(layers.sizes_rejects_long_function PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: function over 150 lines: src/core/tensor.cpp:planted_function: 151 lines")
add_test(NAME layers.sizes_self_test
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --self-test)

# python/, apps/ and tools/ use the runtime through include/dlrt/ only (core
# utilities aside): a planted include of a runtime internal must fail the check.
add_test(NAME layers.check_rejects_internal_include
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_layers.py --root ${PROJECT_SOURCE_DIR}
          --plant tools/dlrt/main.cpp:runtime/session_internal.h)
set_tests_properties(layers.check_rejects_internal_include PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: internal include: tools/dlrt/main.cpp \\(tools\\) includes src/runtime/session_internal.h")

# The size limits cover tools/, python/src and apps/ too (issue 78).
add_test(NAME layers.sizes_reach_tools
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --root ${PROJECT_SOURCE_DIR}
          --plant-function tools/dlrt/main.cpp:151)
set_tests_properties(layers.sizes_reach_tools PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: function over 150 lines: tools/dlrt/main.cpp:planted_function: 151 lines")
add_test(NAME layers.sizes_reach_python
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_sizes.py --root ${PROJECT_SOURCE_DIR}
          --plant-lines python/src/module.cpp:700)
set_tests_properties(layers.sizes_reach_python PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: file over 700 lines: python/src/module.cpp: [0-9]+ lines")
