#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/env.h"

namespace dlrt::cli {

bool progress_wanted(bool quiet, bool forced) {
  if (quiet) return false;
  if (forced) return true;
  if (const char* v = env::get("DLRT_PROGRESS"); v && *v) return std::strcmp(v, "0") != 0;
  return ::isatty(STDERR_FILENO) == 1;
}

Progress::Progress(bool enabled, std::string what, std::string unit, size_t total)
    : enabled_(enabled), what_(std::move(what)), unit_(std::move(unit)), total_(total),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(size_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  const int pct = total_ ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total_)) : 100;
  std::fprintf(stderr, "\r%s %zu/%zu %s (%d%%)", what_.c_str(), done, total_, unit_.c_str(), pct);
  std::fflush(stderr);
}

void Progress::finish(const std::string& summary) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s%s\n", drawn_ ? "\n" : "", summary.c_str());
  std::fflush(stderr);
}

}  // namespace dlrt::cli
