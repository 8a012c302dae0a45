#include "backend/search_summary.h"

#include "core/logging.h"

namespace dlrt::backend {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// An attempt that only says the library was not at that place.
bool is_absence(const std::string& entry) {
  return ends_with(entry, ": not set") || entry.find("no such folder") != std::string::npos ||
         ends_with(entry, " there") || ends_with(entry, "No such file or directory");
}

// The attempt a reader wants to see: a set environment variable, else a file
// that exists but did not load; empty when every attempt found nothing.
std::string notable_attempt(const std::vector<std::string>& tried) {
  for (const auto& t : tried)
    if (!t.empty() && t[0] == '$' && !ends_with(t, ": not set")) return t;
  for (const auto& t : tried)
    if (!is_absence(t) && !ends_with(t, ": loaded")) return t;
  return "";
}

}  // namespace

std::string search_failure_summary(const std::string& what, const std::vector<std::string>& tried) {
  if (log_enabled(LogLevel::kDebug)) {
    std::string all;
    for (const auto& t : tried) all += (all.empty() ? "" : "; ") + t;
    log_message(LogLevel::kDebug, what + ": searched " + all);
  }
  const std::string notable = notable_attempt(tried);
  const std::string count = std::to_string(tried.size()) + (tried.size() == 1 ? " place" : " places") +
                            " searched; `dlrt devices --verbose` lists them";
  if (notable.empty()) return what + " not found (" + count + ")";
  return what + " not found or not loadable (" + notable + "; " + count + ")";
}

}  // namespace dlrt::backend
