// Exception-free accessors over nlohmann::json for the model-folder files:
// a missing key or a value of the wrong type gives the default.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "embed/file_util.h"

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

// An optional JSON file of a model folder: null when absent, an error when
// unreadable or broken.
inline Result<nlohmann::json> read_optional_json(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nlohmann::json();
  DLRT_ASSIGN_OR_RETURN(std::string text, read_folder_file(path.string()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidModel(path.string() + ": not valid JSON");
  return j;
}

}  // namespace dlrt::embed::jsonu
