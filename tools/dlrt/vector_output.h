// The text and --json forms of the float vectors dlrt embed prints
// (cmd_embed.cpp, embed_clip.cpp, embed_tokens.cpp).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_out.h"

namespace dlrt::cli {

// v's values ("%.7g", space-separated) and a newline, appended to out.
inline void append_vector_line(std::string& out, const std::vector<float>& v) {
  char buf[32];
  for (size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buf, sizeof buf, k ? " %.7g" : "%.7g", static_cast<double>(v[k]));
    out += buf;
  }
  out += '\n';
}

// One line per vector on standard output.
inline void print_vector_lines(const std::vector<std::vector<float>>& vectors) {
  std::string out;
  for (const auto& v : vectors) append_vector_line(out, v);
  std::fputs(out.c_str(), stdout);
}

// head and "data": [{index, tokens (where tokens is given), <key>: vectors[i]}],
// printed on one line.
template <class Vectors>
void print_vectors_json(nlohmann::ordered_json head, const char* key, const Vectors& vectors,
                        const std::vector<size_t>* tokens) {
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    nlohmann::ordered_json item;
    item["index"] = i;
    if (tokens) item["tokens"] = (*tokens)[i];
    item[key] = vectors[i];
    data.push_back(std::move(item));
  }
  head["data"] = std::move(data);
  print_json(head, -1);
}

}  // namespace dlrt::cli
