// Bounds of one run (dlrt::RunOptions): a deadline and a cancel flag, checked
// between the nodes the run executes (subgraphs of Loop/Scan/If included), so
// that a run stops promptly with kCancelled and the session stays usable.
// Also the run's per-item quantization rows, which the quantizing kernels read.
// The session installs them for the calling thread while the run executes
// (RunLimitsScope); the executor checks them (check_run_limits()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "dlrt/status.h"

namespace dlrt {

struct RunLimits {
  std::chrono::steady_clock::time_point deadline{};  // epoch: none
  const std::atomic<bool>* cancel = nullptr;
  double timeout_ms = 0;
  // RunOptions::item_lengths (null or empty: per-tensor dynamic quantization).
  const std::vector<int64_t>* item_lengths = nullptr;
};

// The limits of the run executing on this thread (null: none).
inline const RunLimits*& current_run_limits() {
  thread_local const RunLimits* limits = nullptr;
  return limits;
}

// kCancelled when the current run's deadline passed or it was cancelled.
inline Status check_run_limits() {
  const RunLimits* l = current_run_limits();
  if (!l) return Status::Ok();
  if (l->cancel && l->cancel->load(std::memory_order_relaxed))
    return Status(StatusCode::kCancelled, "the run was cancelled");
  if (l->deadline != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > l->deadline)
    return Status(StatusCode::kCancelled, "the run took longer than its timeout of " +
                                              std::to_string(static_cast<int64_t>(l->timeout_ms)) + " ms");
  return Status::Ok();
}

// Installs `limits` for this thread until the scope ends (nested runs keep the outer ones).
class RunLimitsScope {
 public:
  explicit RunLimitsScope(const RunLimits* limits) : previous_(current_run_limits()) {
    if (limits) current_run_limits() = limits;
  }
  ~RunLimitsScope() { current_run_limits() = previous_; }
  RunLimitsScope(const RunLimitsScope&) = delete;
  RunLimitsScope& operator=(const RunLimitsScope&) = delete;

 private:
  const RunLimits* previous_;
};

}  // namespace dlrt
