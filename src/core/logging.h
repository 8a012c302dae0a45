// Minimal leveled logging to stderr. DLRT_LOG_LEVEL=debug|info|warn|error|off
// (default warn). Thread-safe.
#pragma once

#include <string>

namespace dlrt {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void log_message(LogLevel level, const std::string& message);
bool log_enabled(LogLevel level);

}  // namespace dlrt

#define DLRT_LOG(level, msg)                                                        \
  do {                                                                              \
    if (::dlrt::log_enabled(::dlrt::LogLevel::level)) ::dlrt::log_message(::dlrt::LogLevel::level, (msg)); \
  } while (0)
