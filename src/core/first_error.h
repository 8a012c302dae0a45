// The first failing Status of work split across threads (parallel_for
// bodies return nothing, so a body that can fail records its Status here).
//
// Thread-safety: record() may be called from any thread; take() after the
// parallel work has joined.
#pragma once

#include <atomic>
#include <mutex>
#include <utility>

#include "dlrt/status.h"

namespace dlrt {

class FirstError {
 public:
  // Keeps `s` if it is the first failure; ok statuses are ignored.
  void record(Status s) {
    if (s.ok() || failed_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.load(std::memory_order_relaxed)) return;
    first_ = std::move(s);
    failed_.store(true, std::memory_order_release);
  }
  // Whether a failure was recorded (a body may stop early on it).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The first failure, or ok.
  Status take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(first_);
  }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  Status first_;
};

}  // namespace dlrt
