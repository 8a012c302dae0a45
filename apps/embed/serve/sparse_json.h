// The JSON answers of dlrt serve's sparse routes: POST /embed_sparse (TEI's
// shape) and POST /v1/embeddings with "encoding_format": "sparse".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlrt::embed {

struct SparseVector;

// TEI: [[{"index": i, "value": v}, ...], ...], one list per input, indices ascending.
std::string tei_sparse_body(const std::vector<SparseVector>& vectors);

// OpenAI's list shape with each "embedding" an object {"indices": [...], "values": [...]}.
std::string openai_sparse_body(const std::vector<SparseVector>& vectors, const std::string& model, size_t tokens);

}  // namespace dlrt::embed
