#include "dlrt/memory.h"

#include "core/memory_limit.h"
#include "runtime/config.h"

namespace dlrt {

MemoryInfo memory_info() {
  const MemoryBudget& b = process_memory_budget();
  auto config = load_runtime_config();
  const TensorLimit limit = resolve_tensor_limit(0, config.ok() ? config->max_tensor_mb : std::nullopt);
  MemoryInfo m;
  m.max_tensor_bytes = limit.bytes;
  m.max_tensor_source = limit.source;
  m.available_bytes = b.available;
  m.available_source = b.source;
  m.physical_bytes = b.physical;
  m.cgroup_limit_bytes = b.cgroup;
  m.cgroup_source = b.cgroup_source;
  m.rlimit_as_bytes = b.rlimit_as;
  m.rss_bytes = b.rss;
  m.vm_size_bytes = b.vm_size;
  m.describe = b.describe();
  return m;
}

}  // namespace dlrt
