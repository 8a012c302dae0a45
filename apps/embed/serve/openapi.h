// The OpenAPI 3.0 description of `dlrt serve`'s routes, served at
// GET /openapi.json and checked against the running server by
// tests/serve/test_clients.py (schemathesis).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlrt::embed {

// What the served model allows, written into the schemas when known.
struct ModelLimits {
  size_t dimension = 0;                   // largest "dimensions"
  size_t vocab_size = 0;                  // token ids below it
  std::vector<std::string> prompt_names;  // the only valid "prompt_name" values
};

// The document as JSON text; `version` is dlrt's; `limits` null while no
// model is loaded.
std::string openapi_document(const std::string& version, const ModelLimits* limits);

}  // namespace dlrt::embed
