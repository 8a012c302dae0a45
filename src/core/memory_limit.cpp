#include "core/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream f(path);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

// A limit file's value: bytes, or none for "max" and v1's "unlimited" (a
// page-counter maximum near 2^63).
std::optional<uint64_t> parse_limit(const std::string& text, bool* valid) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  *valid = false;
  if (t == "max") {
    *valid = true;
    return std::nullopt;
  }
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 20) return std::nullopt;
  *valid = true;
  const unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
  if (v >= (uint64_t{1} << 62)) return std::nullopt;
  return static_cast<uint64_t>(v);
}

// "VmRSS:	  12345 kB" in /proc/self/status, in bytes.
uint64_t status_field_kb(const std::string& status, const std::string& key) {
  size_t p = status.find("\n" + key + ":");
  if (p == std::string::npos) {
    if (status.rfind(key + ":", 0) != 0) return 0;
    p = 0;
  } else {
    ++p;
  }
  return std::strtoull(status.c_str() + p + key.size() + 1, nullptr, 10) * 1024;
}

void lower_to(std::optional<uint64_t>& v, uint64_t x) { v = v ? std::min(*v, x) : x; }

}  // namespace

std::string MemoryBudget::describe() const {
  std::string held = source == "RLIMIT_AS" ? format_bytes(vm_size) + " mapped" : format_bytes(rss) + " resident";
  const uint64_t bound = source == "RLIMIT_AS"         ? rlimit_as.value_or(0)
                         : source == "physical memory" ? physical
                                                       : cgroup.value_or(0);
  return source + " " + format_bytes(bound) + " less " + held;
}

MemoryBudget compute_memory_budget(MemoryBudget b) {
  auto less = [](uint64_t bound, uint64_t held) { return bound > held ? bound - held : 0; };
  b.available = less(b.physical, b.rss);
  b.source = "physical memory";
  if (b.physical == 0) b.available = 0;
  if (b.cgroup && (b.physical == 0 || less(*b.cgroup, b.rss) < b.available)) {
    b.available = less(*b.cgroup, b.rss);
    b.source = b.cgroup_source.empty() ? "cgroup memory.max" : b.cgroup_source;
  }
  if (b.rlimit_as && ((b.physical == 0 && !b.cgroup) || less(*b.rlimit_as, b.vm_size) < b.available)) {
    b.available = less(*b.rlimit_as, b.vm_size);
    b.source = "RLIMIT_AS";
  }
  if (b.source == "physical memory") b.tensor_default = std::max(kGiB, b.available / 2);
  else b.tensor_default = std::max(16 * kMiB, b.available / 2);
  return b;
}

std::optional<uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& root,
                                            std::string* source) {
  std::optional<uint64_t> v2, v1;
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-ID:controller-list:cgroup-path"
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    const bool is_v2 = id == "0" && controllers.empty();
    bool is_v1_memory = false;
    for (size_t s = 0; !is_v2 && s <= controllers.size();) {
      size_t e = controllers.find(',', s);
      if (e == std::string::npos) e = controllers.size();
      if (controllers.compare(s, e - s, "memory") == 0) is_v1_memory = true;
      s = e + 1;
    }
    if (!is_v2 && !is_v1_memory) continue;
    const std::string base = is_v2 ? root : root + "/memory";
    const std::string file = is_v2 ? "memory.max" : "memory.limit_in_bytes";
    // The process's cgroup and each ancestor (a parent's limit binds too).
    // Inside a cgroup namespace the path may not exist under `root`: the
    // files at `root` itself are then the container's.
    while (true) {
      std::string text;
      if (read_text(base + (path == "/" ? "" : path) + "/" + file, text)) {
        bool valid = false;
        if (auto l = parse_limit(text, &valid)) lower_to(is_v2 ? v2 : v1, *l);
      }
      if (path == "/" || path.empty()) break;
      const size_t slash = path.find_last_of('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  if (v2) {
    if (source) *source = "cgroup memory.max";
    return v2;
  }
  if (v1) {
    if (source) *source = "cgroup v1 memory.limit_in_bytes";
    return v1;
  }
  return std::nullopt;
}

MemoryBudget read_memory_budget() {
  MemoryBudget b;
  b.physical = physical_memory();
  std::string text;
  if (read_text("/proc/self/cgroup", text)) b.cgroup = cgroup_memory_limit(text, "/sys/fs/cgroup", &b.cgroup_source);
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) b.rlimit_as = static_cast<uint64_t>(rl.rlim_cur);
  if (read_text("/proc/self/status", text)) {
    b.rss = status_field_kb(text, "VmRSS");
    b.vm_size = status_field_kb(text, "VmSize");
  }
  return compute_memory_budget(std::move(b));
}

const MemoryBudget& process_memory_budget() {
  static const MemoryBudget budget = read_memory_budget();
  return budget;
}

namespace {

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
    const MemoryBudget& b = process_memory_budget();
    return TensorLimit{b.tensor_default, "the default, half the memory available: " + b.describe() +
                                             "; set it with DLRT_MAX_TENSOR_MB, SessionOptions::max_tensor_bytes "
                                             "or max_tensor_mb in the config file"};
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
