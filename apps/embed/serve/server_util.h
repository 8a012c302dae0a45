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

// An accelerator failure (503 in strict mode) rather than another run error.
inline bool is_device_failure(StatusCode c) { return c == StatusCode::kBackendError || c == StatusCode::kDeviceUnavailable; }

// The text to put in front of a request's texts: its prompt_name's, else the
// server's default_prompt_name's, else the model's default prompt's, else none
// (""); nullopt when the name it gives is not a prompt of the model.
std::optional<std::string> resolve_prompt(const EmbedModel& m, const std::optional<std::string>& requested,
                                          const std::string& server_default);

// The request handled on this thread (server_dispatch.cpp): its inputs and
// tokens (the access log's fields), the model its /models/NAME/ route prefix
// names ("" for none), and the model it went to (its per-model metrics).
void note_request_size(size_t inputs, size_t tokens);
const std::string& path_model();
void note_request_model(const std::string& name);

}  // namespace dlrt::embed::server_util
