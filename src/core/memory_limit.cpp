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

std::optional<uint64_t> read_env_limit() {
  if (const char* v = env::get("DLRT_MAX_TENSOR_MB"); v && *v) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && mb > 0 && mb < (uint64_t{1} << 44)) return mb * kMiB;
  }
  return std::nullopt;
}

uint64_t half_physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  return std::max(kGiB, physical / 2);
}

const TensorLimit*& thread_limit() {
  thread_local const TensorLimit* limit = nullptr;
  return limit;
}

}  // namespace

std::optional<uint64_t> env_max_tensor_bytes() {
  static const std::optional<uint64_t> limit = read_env_limit();
  return limit;
}

const TensorLimit& default_tensor_limit() {
  static const TensorLimit limit = [] {
    if (auto e = env_max_tensor_bytes()) return TensorLimit{*e, "DLRT_MAX_TENSOR_MB"};
    return TensorLimit{half_physical_memory(),
                       "the default, half the physical memory; raise it with DLRT_MAX_TENSOR_MB, "
                       "SessionOptions::max_tensor_bytes or max_tensor_mb in the config file"};
  }();
  return limit;
}

TensorLimit resolve_tensor_limit(uint64_t option_bytes, std::optional<uint64_t> config_mb) {
  if (option_bytes > 0) return {option_bytes, "SessionOptions::max_tensor_bytes"};
  if (env_max_tensor_bytes()) return default_tensor_limit();
  if (config_mb && *config_mb > 0) return {*config_mb * kMiB, "max_tensor_mb in the config file"};
  return default_tensor_limit();
}

uint64_t max_tensor_bytes() {
  const TensorLimit* l = thread_limit();
  return l ? l->bytes : default_tensor_limit().bytes;
}

ScopedTensorLimit::ScopedTensorLimit(const TensorLimit* limit) : previous_(thread_limit()) {
  if (limit) thread_limit() = limit;
}

ScopedTensorLimit::~ScopedTensorLimit() { thread_limit() = previous_; }

std::string format_bytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= kGiB) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  else if (bytes >= kMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

Status check_tensor_bytes(uint64_t bytes, const std::string& what) {
  const TensorLimit* l = thread_limit();
  const TensorLimit& limit = l ? *l : default_tensor_limit();
  if (bytes <= limit.bytes) return Status::Ok();
  return Status(StatusCode::kOutOfMemory, what + " would allocate " + format_bytes(bytes) + ", over the " +
                                              format_bytes(limit.bytes) + " limit (" + limit.source + ")");
}

}  // namespace dlrt
