#include "core/logging.h"
#include "core/log_level.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/env.h"

namespace dlrt {

namespace {
LogLevel level_from_env() {
  const char* v = env::get("DLRT_LOG_LEVEL");
  if (!v) return LogLevel::kWarn;
  if (!std::strcmp(v, "debug")) return LogLevel::kDebug;
  if (!std::strcmp(v, "info")) return LogLevel::kInfo;
  if (!std::strcmp(v, "error")) return LogLevel::kError;
  if (!std::strcmp(v, "off")) return LogLevel::kOff;
  return LogLevel::kWarn;
}
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    default: return "";
  }
}
}  // namespace

static std::atomic<int>& threshold() {
  static std::atomic<int> t{static_cast<int>(level_from_env())};
  return t;
}

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= threshold().load(std::memory_order_relaxed) && level != LogLevel::kOff;
}

void set_log_level(LogLevel level) { threshold().store(static_cast<int>(level), std::memory_order_relaxed); }

void log_message(LogLevel level, const std::string& message) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lk(mu);
  std::fprintf(stderr, "dlrt %s: %s\n", level_name(level), message.c_str());
}

}  // namespace dlrt
