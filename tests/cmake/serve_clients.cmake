# dlrt serve against the official openai client, TEI-style HTTP and
# schemathesis (scripts/test_serve_clients.sh; pinned tools from PyPI).
add_test(NAME serve.clients COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/test_serve_clients.sh ${CMAKE_BINARY_DIR})
set_tests_properties(serve.clients PROPERTIES TIMEOUT 600)
