// The log of `dlrt serve`: one line per event, with a UTC timestamp, as
// text ("2026-11-26T07:40:00.123Z dlrt serve: message key=value ...") or,
// with json_logs, as one JSON object per line ({"ts", "level", "msg", fields}).
// Info goes to stdout, warnings and errors to stderr; each line is written
// whole and flushed. Thread-safe.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlrt::embed {

class ServeLog {
 public:
  enum class Level { kInfo, kWarning, kError };
  using Fields = std::vector<std::pair<std::string, nlohmann::json>>;

  explicit ServeLog(bool json = false) : json_(json) {}
  void set_json(bool json) { json_ = json; }

  void info(const std::string& message, const Fields& fields = {}) { write(Level::kInfo, message, fields); }
  void warning(const std::string& message, const Fields& fields = {}) { write(Level::kWarning, message, fields); }
  void error(const std::string& message, const Fields& fields = {}) { write(Level::kError, message, fields); }
  void write(Level level, const std::string& message, const Fields& fields);

  // The line write() would print (for tests).
  std::string format(Level level, const std::string& message, const Fields& fields) const;

 private:
  bool json_;
  std::mutex mu_;
};

// "2026-11-26T07:40:00.123Z": now, UTC, milliseconds.
std::string utc_timestamp_ms();

}  // namespace dlrt::embed
