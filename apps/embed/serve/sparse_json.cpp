#include "embed/serve/sparse_json.h"


#include "embed/serve/server_util.h"
#include "embed/models/sparse.h"

namespace dlrt::embed {

std::string tei_sparse_body(const std::vector<SparseVector>& vectors) {
  std::string out = "[";
  for (size_t i = 0; i < vectors.size(); ++i) {
    const SparseVector& v = vectors[i];
    out += i ? ",[" : "[";
    for (size_t k = 0; k < v.indices.size(); ++k) {
      out += k ? ",{\"index\":" : "{\"index\":";
      out += std::to_string(v.indices[k]);
      out += ",\"value\":";
      server_util::append_json_float(out, v.values[k]);
      out += '}';
    }
    out += ']';
  }
  out += ']';
  return out;
}

std::string openai_sparse_body(const std::vector<SparseVector>& vectors, const std::string& model, size_t tokens) {
  std::string out = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < vectors.size(); ++i) {
    const SparseVector& v = vectors[i];
    if (i) out += ',';
    out += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":{\"indices\":[";
    for (size_t k = 0; k < v.indices.size(); ++k) {
      if (k) out += ',';
      out += std::to_string(v.indices[k]);
    }
    out += "],\"values\":[";
    for (size_t k = 0; k < v.values.size(); ++k) {
      if (k) out += ',';
      server_util::append_json_float(out, v.values[k]);
    }
    out += "]}}";
  }
  out += "],\"model\":" + server_util::json_string(model) + ",\"usage\":{\"prompt_tokens\":" + std::to_string(tokens) +
         ",\"total_tokens\":" + std::to_string(tokens) + "}}";
  return out;
}

}  // namespace dlrt::embed
