#include "runtime/run_options.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace dlrt {

Result<RunLimits> run_limits_of(const RunOptions& options, const Session& session) {
  if (options.timeout_ms < 0) return InvalidArgument("RunOptions::timeout_ms must not be negative");
  RunLimits l;
  l.cancel = options.cancel;
  l.timeout_ms = options.timeout_ms;
  if (options.timeout_ms > 0)
    l.deadline = std::chrono::steady_clock::now() +
                 std::chrono::microseconds(static_cast<int64_t>(std::min(options.timeout_ms, 1e12) * 1000));
  if (options.item_lengths.empty()) return l;
  for (int64_t n : options.item_lengths)
    if (n < 0) return InvalidArgument("RunOptions::item_lengths must not be negative");
  for (const PartitionReport& p : session.placement().partitions)
    if (p.backend != "cpu")
      return Unsupported("RunOptions::item_lengths: the partition on " + p.device +
                         " does not quantize per item (only the CPU backend does)");
  l.item_lengths = &options.item_lengths;
  return l;
}

}  // namespace dlrt
