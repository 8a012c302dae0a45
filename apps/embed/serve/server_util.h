// Helpers shared by the files of dlrt serve's server (server.cpp, its routes
// in server_dispatch.cpp and server_*.cpp); not part of server.h's interface.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"

namespace dlrt::embed {
class EmbedModel;
}

namespace dlrt::embed::server_util {

// `s` as a JSON string literal (invalid UTF-8 replaced).
inline std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A float as JSON: the shortest text that reads back as the same float; null when not finite.
inline void append_json_float(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? p : buf);
}

// `j` as compact JSON (invalid UTF-8 replaced), its numbers that are float32
// values (the scores and vectors the server computes) at float32's shortest
// round-trip precision, as append_json_float, rather than a double's 17 digits.
inline void append_json(std::string& out, const nlohmann::json& j) {
  using nlohmann::json;
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ',';
      first = false;
      out += json_string(it.key());
      out += ':';
      append_json(out, it.value());
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (size_t i = 0; i < j.size(); ++i) {
      if (i) out += ',';
      append_json(out, j[i]);
    }
    out += ']';
  } else if (j.is_number_float() && static_cast<double>(static_cast<float>(j.get<double>())) == j.get<double>()) {
    append_json_float(out, static_cast<float>(j.get<double>()));
  } else {
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}
inline std::string dump_json(const nlohmann::json& j) {
  std::string out;
  append_json(out, j);
  return out;
}

// An accelerator failure (503 in strict mode) rather than another run error.
inline bool is_device_failure(StatusCode c) { return c == StatusCode::kBackendError || c == StatusCode::kDeviceUnavailable; }

// TEI's error_type for an error answered on a TEI route: "Empty" (no inputs),
// "Tokenizer", "Overloaded" (429), "Unhealthy" (503), "Backend" (other 5xx),
// else "Validation" (TEI's ErrorType values; `type` is the server's own).
inline const char* tei_error_type(int status, const std::string& type) {
  if (type == "empty") return "Empty";
  if (type == "tokenizer") return "Tokenizer";
  if (status == 429) return "Overloaded";
  if (status == 503) return "Unhealthy";
  return status >= 500 ? "Backend" : "Validation";
}
// OpenAI's error type for the same: the TEI-only kinds are invalid requests.
inline std::string openai_error_type(const std::string& type) {
  return type == "empty" || type == "tokenizer" ? std::string("invalid_request_error") : type;
}

// The request handled on this thread (server_dispatch.cpp): its inputs and
// tokens (the access log's fields), the model its /models/NAME/ route prefix
// names ("" for none), and the model it went to (its per-model metrics).
void note_request_size(size_t inputs, size_t tokens);
void add_request_size(size_t inputs, size_t tokens);  // one more run of the request (in_run_slots)
const std::string& path_model();
void note_request_model(const std::string& name);
const std::string& request_model();

}  // namespace dlrt::embed::server_util
