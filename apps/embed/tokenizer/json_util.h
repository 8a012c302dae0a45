// Exception-free accessors over nlohmann::json for the model-folder files:
// a missing key or a value of the wrong type gives the default.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/tokenizer_limits.h"

namespace dlrt::embed::jsonu {

inline const nlohmann::json* member(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}
inline std::string get_string(const nlohmann::json& j, const std::string& key, const std::string& def) {
  const nlohmann::json* v = member(j, key);
  return v && v->is_string() ? v->get<std::string>() : def;
}
inline bool get_bool(const nlohmann::json& j, const std::string& key, bool def) {
  const nlohmann::json* v = member(j, key);
  return v && v->is_boolean() ? v->get<bool>() : def;
}
inline int64_t get_int(const nlohmann::json& j, const std::string& key, int64_t def) {
  const nlohmann::json* v = member(j, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : def;
}

// The deepest nesting of objects and arrays in `text` (strings skipped),
// counted no further than `limit` + 1. Exact for valid JSON; the parser
// refuses the rest anyway.
inline size_t nesting_depth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// kInvalidModel when the JSON text of `what` (a path; "" for none) nests past kMaxJsonDepth: checked
// before parsing, since code that walks the parsed tree (dump(), copies, the
// tokenizer's builders) recurses once per level.
inline Status check_json_depth(std::string_view text, const std::string& what) {
  if (nesting_depth(text, kMaxJsonDepth) <= kMaxJsonDepth) return Status::Ok();
  return InvalidModel((what.empty() ? "" : what + ": ") + "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                      " levels (the most dlrt reads, as Hugging Face's serde_json)");
}

// An optional JSON file of a model folder: null when absent, an error when
// unreadable, broken or nested past kMaxJsonDepth.
inline Result<nlohmann::json> read_optional_json(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nlohmann::json();
  DLRT_ASSIGN_OR_RETURN(std::string text, read_folder_file(path.string()));
  DLRT_RETURN_IF_ERROR(check_json_depth(text, path.string()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidModel(path.string() + ": not valid JSON");
  return j;
}

}  // namespace dlrt::embed::jsonu
