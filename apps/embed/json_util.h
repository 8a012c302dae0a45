// Exception-free accessors over nlohmann::json for the model-folder files:
// a missing key or a value of the wrong type gives the default.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace dlrt::embed::jsonu
