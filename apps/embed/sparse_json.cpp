#include "embed/sparse_json.h"

#include <charconv>
#include <cmath>

#include "embed/server_util.h"
#include "embed/sparse.h"

namespace dlrt::embed {

namespace {

void append_number(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? p : buf);
}

}  // namespace

std::string tei_sparse_body(const std::vector<SparseVector>& vectors) {
  std::string out = "[";
  for (size_t i = 0; i < vectors.size(); ++i) {
    const SparseVector& v = vectors[i];
    out += i ? ",[" : "[";
    for (size_t k = 0; k < v.indices.size(); ++k) {
      out += k ? ",{\"index\":" : "{\"index\":";
      out += std::to_string(v.indices[k]);
      out += ",\"value\":";
      append_number(out, v.values[k]);
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
      append_number(out, v.values[k]);
    }
    out += "]}}";
  }
  out += "],\"model\":" + server_util::json_string(model) + ",\"usage\":{\"prompt_tokens\":" + std::to_string(tokens) +
         ",\"total_tokens\":" + std::to_string(tokens) + "}}";
  return out;
}

}  // namespace dlrt::embed
