// The memory budget of this process, as sessions apply it: the largest tensor
// a run may allocate, and the memory available to the process that its
// default (half of it) derives from. `dlrt devices` and the server's /info
// report it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dlrt/export.h"

namespace dlrt {

struct MemoryInfo {
  uint64_t max_tensor_bytes = 0;   // the limit a session made now gets (SessionOptions::max_tensor_bytes unset)
  std::string max_tensor_source;   // where it comes from: "DLRT_MAX_TENSOR_MB", "the default, half ..."
  uint64_t available_bytes = 0;    // the smallest bound below less what the process holds against it
  std::string available_source;    // that bound: "physical memory", "cgroup memory.max", "RLIMIT_AS", ...
  uint64_t physical_bytes = 0;
  std::optional<uint64_t> cgroup_limit_bytes;  // the memory cgroup's limit (none: unlimited)
  std::string cgroup_source;                   // "cgroup memory.max" or "cgroup v1 memory.limit_in_bytes"
  std::optional<uint64_t> rlimit_as_bytes;     // RLIMIT_AS (none: unlimited)
  uint64_t rss_bytes = 0;                      // resident, when the budget was read
  uint64_t vm_size_bytes = 0;                  // mapped, when the budget was read
  std::string describe;                        // "RLIMIT_AS 7.6 GiB less 120.0 MiB mapped"
};

// The budget as read once per process (at the first session or call); the
// limit from the environment and the config file as a session would resolve it.
DLRT_API MemoryInfo memory_info();

}  // namespace dlrt
