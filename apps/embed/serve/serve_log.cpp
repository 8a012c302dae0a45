// ServeLog (serve_log.h).
#include "embed/serve/serve_log.h"

#include <chrono>
#include <ctime>

namespace dlrt::embed {

std::string utc_timestamp_ms() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}

std::string ServeLog::format(Level level, const std::string& message, const Fields& fields) const {
  const char* name = level == Level::kInfo ? "info" : level == Level::kWarning ? "warning" : "error";
  if (json_) {
    nlohmann::json j = {{"ts", utc_timestamp_ms()}, {"level", name}, {"msg", message}};
    for (const auto& [k, v] : fields) j[k] = v;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line = utc_timestamp_ms() + " dlrt serve: ";
  if (level != Level::kInfo) line += std::string(name) + ": ";
  line += message;
  for (const auto& [k, v] : fields) {
    line += ' ';
    line += k;
    line += '=';
    line += v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return line;
}

void ServeLog::write(Level level, const std::string& message, const Fields& fields) {
  const std::string line = format(level, message, fields) + "\n";
  FILE* out = level == Level::kInfo ? stdout : stderr;
  std::lock_guard<std::mutex> lk(mu_);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace dlrt::embed
