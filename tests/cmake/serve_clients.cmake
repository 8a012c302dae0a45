# dlrt serve against the official openai client, TEI-style HTTP and
# schemathesis (scripts/test_serve_clients.sh; pinned tools from PyPI).
add_test(NAME serve.clients COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/test_serve_clients.sh ${CMAKE_BINARY_DIR})
# COST: the longest test (about a minute, most of it one process), started first
# so that the others run beside it instead of after it on a cold run (ctest
# learns the costs itself from then on).
set_tests_properties(serve.clients PROPERTIES TIMEOUT 600 COST 1000)
# dlrt serve's /docs (Swagger UI) in headless Chromium (scripts/test_docs_browser.sh): exit 77
# is its skip where Chromium or the embedded Swagger UI is missing (a failure in CI).
add_test(NAME serve.docs_browser COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/test_docs_browser.sh ${CMAKE_BINARY_DIR})
set_tests_properties(serve.docs_browser PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
