#include "core/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/env.h"

namespace dlrt {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

uint64_t limit_from_environment() {
  if (const char* v = env::get("DLRT_MAX_TENSOR_MB"); v && *v) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && mb > 0 && mb < (uint64_t{1} << 44)) return mb * kMiB;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  return std::max(kGiB, physical / 2);
}

}  // namespace

uint64_t max_tensor_bytes() {
  static const uint64_t limit = limit_from_environment();
  return limit;
}

std::string format_bytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= kGiB) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  else if (bytes >= kMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

Status check_tensor_bytes(uint64_t bytes, const std::string& what) {
  const uint64_t limit = max_tensor_bytes();
  if (bytes <= limit) return Status::Ok();
  return Status(StatusCode::kOutOfMemory, what + " would allocate " + format_bytes(bytes) + ", over the " +
                                              format_bytes(limit) + " limit (DLRT_MAX_TENSOR_MB)");
}

}  // namespace dlrt
