// Helpers shared by the files of dlrt serve's server (server.cpp, the
// embedding routes in server_routes.cpp); not part of server.h's interface.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"

namespace dlrt::embed::server_util {

// `s` as a JSON string literal (invalid UTF-8 replaced).
inline std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The "model" field of a request body ("" when it names none).
inline std::string body_model(const nlohmann::json& body) {
  if (!body.is_object()) return "";
  auto f = body.find("model");
  return f != body.end() && f->is_string() ? f->get<std::string>() : "";
}

// An accelerator failure (503 in strict mode) rather than another run error.
inline bool is_device_failure(StatusCode c) { return c == StatusCode::kBackendError || c == StatusCode::kDeviceUnavailable; }

// The inputs and tokens of the request handled on this thread (the access log's fields).
void note_request_size(size_t inputs, size_t tokens);

}  // namespace dlrt::embed::server_util
