// The memory budget of one tensor: every tensor a model's shapes imply (a
// kernel's output, an input dlrt makes, a planned buffer) is checked against
// it before it is allocated, so that a hostile or mistaken shape (a Resize
// scale of 1e10) fails with a clear error instead of an OOM kill or an abort.
//
// The limit of a session (resolved once, at create): SessionOptions::
// max_tensor_bytes, else DLRT_MAX_TENSOR_MB (read once per process), else the
// config file's max_tensor_mb, else the default: half the memory available to
// the process (MemoryBudget below). The session installs it (ScopedTensorLimit)
// on the thread that builds or runs it; elsewhere the process default applies
// (DLRT_MAX_TENSOR_MB, else that default).
//
// The memory available (read once per process, at the first use of the
// default): the smallest of
//   - the physical memory, less the process's resident set (VmRSS),
//   - the memory cgroup's limit (cgroup v2 memory.max of the process's cgroup
//     and its ancestors, "max" being none; v1 memory.limit_in_bytes), less the
//     resident set,
//   - the address-space limit (getrlimit RLIMIT_AS, as `ulimit -v` sets it),
//     less what the process has mapped already (VmSize),
// each "less" from /proc/self/status. The default limit of one tensor is half
// of it: never less than 1 GiB when the physical memory is the bound (as
// before), never less than 16 MiB otherwise.
//
// Thread-safety: safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dlrt/status.h"

namespace dlrt {

struct TensorLimit {
  uint64_t bytes = 0;
  std::string source;  // where it came from, for messages: "DLRT_MAX_TENSOR_MB"
};

// What bounds the memory of this process, and the memory available under it.
struct MemoryBudget {
  uint64_t physical = 0;            // the machine's physical memory
  std::optional<uint64_t> cgroup;   // the memory cgroup's limit (none: unlimited or no cgroup)
  std::string cgroup_source;        // "cgroup memory.max", "cgroup v1 memory.limit_in_bytes"
  std::optional<uint64_t> rlimit_as;  // RLIMIT_AS (none: RLIM_INFINITY)
  uint64_t rss = 0;                 // VmRSS: resident now
  uint64_t vm_size = 0;             // VmSize: mapped now
  uint64_t available = 0;           // the smallest bound less what the process holds against it
  std::string source;               // that bound: "physical memory", "cgroup memory.max", "RLIMIT_AS", ...
  uint64_t tensor_default = 0;      // the default limit of one tensor: half of `available` (floors above)
  // "RLIMIT_AS 7.6 GiB less 96.0 MiB mapped": how `available` was found.
  std::string describe() const;
};

// The bounds as given (no reading of the system): `available`, `source` and
// `tensor_default` computed from the other fields.
MemoryBudget compute_memory_budget(MemoryBudget b);
// The cgroup memory limit of the process described by `proc_self_cgroup` (the
// text of /proc/self/cgroup) under the cgroup file systems at `root`
// (/sys/fs/cgroup): the smallest memory.max of its cgroup v2 path and its
// ancestors, else v1's memory.limit_in_bytes. `source` names the file kind.
std::optional<uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& root,
                                            std::string* source);
// The bounds of this process now (fresh readings of /proc and getrlimit).
MemoryBudget read_memory_budget();
// read_memory_budget() as of the first use of the default limit (read once per process).
const MemoryBudget& process_memory_budget();

// DLRT_MAX_TENSOR_MB in bytes, when set to a valid value (read once per process).
std::optional<uint64_t> env_max_tensor_bytes();
// The process default: DLRT_MAX_TENSOR_MB, else process_memory_budget().tensor_default.
const TensorLimit& default_tensor_limit();
// A session's limit from its option, the environment and the config file (0: not set).
TensorLimit resolve_tensor_limit(uint64_t option_bytes, std::optional<uint64_t> config_mb);

// The limit in force on this thread, in bytes.
uint64_t max_tensor_bytes();

// Installs `limit` on this thread until the scope ends (null: keep the current one).
class ScopedTensorLimit {
 public:
  explicit ScopedTensorLimit(const TensorLimit* limit);
  ~ScopedTensorLimit();
  ScopedTensorLimit(const ScopedTensorLimit&) = delete;
  ScopedTensorLimit& operator=(const ScopedTensorLimit&) = delete;

 private:
  const TensorLimit* previous_;
};

// "19.2 GiB", "512 MiB", "300 B".
std::string format_bytes(uint64_t bytes);

// Ok when `bytes` is within the limit; otherwise kOutOfMemory:
// "<what> would allocate 19.2 GiB, over the 12.0 GiB limit (DLRT_MAX_TENSOR_MB)".
Status check_tensor_bytes(uint64_t bytes, const std::string& what);

}  // namespace dlrt
