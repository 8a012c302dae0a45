// Helpers shared by the files of dlrt serve's server (server.cpp, the
// embedding routes in server_routes.cpp); not part of server.h's interface.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"

namespace dlrt::embed::server_util {

// `s` as a JSON string literal (invalid UTF-8 replaced).
inline std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An accelerator failure (503 in strict mode) rather than another run error.
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

inline bool is_device_failure(StatusCode c) { return c == StatusCode::kBackendError || c == StatusCode::kDeviceUnavailable; }

// The inputs and tokens of the request handled on this thread (the access log's fields).
void note_request_size(size_t inputs, size_t tokens);

}  // namespace dlrt::embed::server_util
