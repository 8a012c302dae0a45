// Cache sizes per core (cpu_caches.h): cpuid, sysfs, sysconf, defaults, then DLRT_CACHE_SIZES.
#include "device/cpu_caches.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "core/env.h"
#include "device/device_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_CACHES_X86 1
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <unistd.h>
#endif

namespace dlrt::device {
namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
// Conservative defaults: the smallest caches of the x86 server and desktop
// cores of the last decade (32 KiB L1d, 1 MiB L2, about 1 MiB L3 per core).
constexpr int64_t kDefaultL1d = 32 * kKiB, kDefaultL2 = 1 * kMiB, kDefaultL3 = 1 * kMiB;

// One cache level as cpuid leaf 4 / 0x8000001D or sysfs describe it.
struct Level {
  int64_t size = 0;  // bytes, the whole cache
  int ways = 0;
  int sharing = 0;   // logical processors sharing it (0: unknown)
};

struct Levels {
  Level l1d, l2, l3;
  bool any() const { return l1d.size > 0 || l2.size > 0; }
};

// Per-core sizes from whole-cache sizes: a cache shared by `sharing` logical
// processors serves sharing / smt cores (smt: the logical processors sharing
// one L1d, i.e. one core).
CpuCaches per_core(const Levels& lv, const char* source) {
  CpuCaches c;
  const int smt = std::max(1, lv.l1d.sharing);
  auto share = [&](const Level& l) {
    const int cores = std::max(1, l.sharing / smt);
    return l.size / cores;
  };
  c.l1d = lv.l1d.size;
  c.l1d_ways = lv.l1d.ways;
  c.l2 = share(lv.l2);
  c.l2_ways = lv.l2.ways;
  c.l3 = share(lv.l3);
  c.source = source;
  return c;
}

#if DLRT_CACHES_X86
// Deterministic cache parameters (Intel leaf 4 and AMD leaf 0x8000001D share
// the layout): EAX[4:0] type (1 data, 3 unified), EAX[7:5] level, EAX[25:14]
// sharing IDs - 1; EBX ways-1, partitions-1, line-1; ECX sets-1.
bool deterministic_leaf(unsigned leaf, Levels* lv) {
  bool found = false;
  for (unsigned sub = 0; sub < 16; ++sub) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(leaf, sub, a, b, c, d);
    const unsigned type = a & 31u;
    if (type == 0) break;
    if (type != 1 && type != 3) continue;  // instruction caches
    Level l;
    l.ways = static_cast<int>(((b >> 22) & 0x3ffu) + 1);
    const int64_t parts = ((b >> 12) & 0x3ffu) + 1, line = (b & 0xfffu) + 1, sets = int64_t{c} + 1;
    l.size = l.ways * parts * line * sets;
    l.sharing = static_cast<int>(((a >> 14) & 0xfffu) + 1);
    switch ((a >> 5) & 7u) {
      case 1: lv->l1d = l; break;
      case 2: lv->l2 = l; break;
      case 3: lv->l3 = l; break;
      default: continue;
    }
    found = true;
  }
  return found;
}

bool probe_cpuid(Levels* lv) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  const unsigned max_leaf = a;
  const bool intel_like = !(b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u);  // "AuthenticAMD"
  if (intel_like && max_leaf >= 4 && deterministic_leaf(4, lv) && lv->any()) return true;
  __cpuid(0x80000000u, a, b, c, d);
  const unsigned max_ext = a;
  if (max_ext >= 0x8000001Du) {
    __cpuid(0x80000001u, a, b, c, d);
    if (((c >> 22) & 1u) && deterministic_leaf(0x8000001Du, lv) && lv->any()) return true;  // TopologyExtensions
  }
  if (max_ext < 0x80000006u) return false;
  *lv = Levels{};
  __cpuid(0x80000005u, a, b, c, d);
  lv->l1d.size = int64_t{c >> 24} * kKiB;
  lv->l1d.ways = static_cast<int>((c >> 16) & 0xffu);
  __cpuid(0x80000006u, a, b, c, d);
  lv->l2.size = int64_t{c >> 16} * kKiB;
  lv->l2.ways = amd_cache_ways(c >> 12);
  lv->l3.size = int64_t{d >> 18} * 512 * kKiB;
  // No sharing count here: the L3 serves every core this process sees (conservative).
  lv->l3.sharing = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  lv->l1d.sharing = 1;
  return lv->any();
}
#endif

int64_t parse_size(const std::string& text);

// /sys/devices/system/cpu/cpu0/cache/index*/: level, type, size ("48K"), ways, shared_cpu_list.
bool probe_sysfs(const std::string& root, Levels* lv) {
  const std::string dir = under_root(root, "/sys/devices/system/cpu/cpu0/cache");
  bool found = false;
  for (const std::string& n : list_dir(dir)) {
    if (n.compare(0, 5, "index") != 0) continue;
    const std::string p = dir + "/" + n + "/";
    const std::string type = read_trimmed(p + "type");
    if (type != "Data" && type != "Unified") continue;
    Level l;
    l.size = parse_size(read_trimmed(p + "size"));
    if (l.size <= 0) continue;
    l.ways = static_cast<int>(read_uint(p + "ways_of_associativity").value_or(0));
    l.sharing = count_cpu_list(read_file(p + "shared_cpu_list", 4096));
    switch (read_uint(p + "level").value_or(0)) {
      case 1: lv->l1d = l; break;
      case 2: lv->l2 = l; break;
      case 3: lv->l3 = l; break;
      default: continue;
    }
    found = true;
  }
  return found && lv->any();
}

bool probe_sysconf(Levels* lv) {
#if defined(__linux__) && defined(_SC_LEVEL1_DCACHE_SIZE)
  lv->l1d.size = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  lv->l1d.ways = static_cast<int>(std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_ASSOC)));
  lv->l2.size = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  lv->l2.ways = static_cast<int>(std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_ASSOC)));
  lv->l3.size = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
  // The whole L3, shared by an unknown number of cores: all this process sees.
  lv->l3.sharing = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  lv->l1d.sharing = 1;
  return lv->any();
#else
  (void)lv;
  return false;
#endif
}

// "48K", "2048K", "1M", "32768" -> bytes; -1 when malformed or implausible.
int64_t parse_size(const std::string& text) {
  if (text.empty() || text.size() > 24) return -1;
  size_t i = 0;
  double v = 0;
  bool digits = false, dot = false;
  double scale = 1;
  for (; i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (dot) return -1;
      dot = true;
      continue;
    }
    digits = true;
    if (dot) {
      scale /= 10;
      v += (text[i] - '0') * scale;
    } else {
      v = v * 10 + (text[i] - '0');
    }
  }
  if (!digits) return -1;
  std::string unit = text.substr(i);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() > 1 && (unit.back() == 'i' || unit.back() == 'I')) unit.pop_back();
  double mult = 1;
  if (unit == "K" || unit == "k") mult = kKiB;
  else if (unit == "M" || unit == "m") mult = kMiB;
  else if (unit == "G" || unit == "g") mult = 1024.0 * kMiB;
  else if (!unit.empty()) return -1;
  const double bytes = v * mult;
  if (bytes > 64.0 * 1024 * kMiB) return -1;  // 64 GiB: not a cache
  return static_cast<int64_t>(bytes);
}

std::string format_size(int64_t bytes) {
  char buf[32];
  if (bytes >= kMiB && bytes % (kMiB / 4) == 0 && bytes % kMiB != 0)
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / kMiB);
  else if (bytes >= kMiB && bytes % kMiB == 0)
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes / kMiB));
  else if (bytes >= kKiB && bytes % kKiB == 0)
    std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(bytes / kKiB));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

CpuCaches with_override(CpuCaches c) {
  const char* spec = env::get_nonempty("DLRT_CACHE_SIZES");
  if (!spec) return c;
  const std::string err = apply_cache_override(spec, &c);
  if (!err.empty()) std::fprintf(stderr, "dlrt: ignoring DLRT_CACHE_SIZES='%s': %s\n", spec, err.c_str());
  return c;
}

}  // namespace

int amd_cache_ways(unsigned code) {
  // 6 is 8 ways, 8 is 16; 9 points to leaf 0x8000001D, 15 is fully associative (no count).
  static const int ways[16] = {0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0};
  return ways[code & 15u];
}

CpuCaches probe_cpu_caches(const std::string& root) {
  Levels lv;
  CpuCaches c;
  bool found = false;
  const bool this_machine = root.empty() || root == "/";
#if DLRT_CACHES_X86
  if (this_machine && probe_cpuid(&lv)) {
    c = per_core(lv, "cpuid");
    found = true;
  }
#endif
  if (!found && (lv = Levels{}, probe_sysfs(root, &lv))) {
    c = per_core(lv, "sysfs");
    found = true;
  }
  if (!found && this_machine && (lv = Levels{}, probe_sysconf(&lv))) {
    c = per_core(lv, "sysconf");
    found = true;
  }
  if (!found) c.source = "default";
  // Whatever a source left out (or reported as implausible) takes the default.
  if (c.l1d < 4 * kKiB || c.l1d > 4 * kMiB) c.l1d = kDefaultL1d, c.l1d_ways = 0;
  if (c.l2 < c.l1d || c.l2 > 1024 * kMiB) c.l2 = std::max(kDefaultL2, c.l1d), c.l2_ways = 0;
  if (c.l3 < 0 || c.l3 > 64 * 1024 * kMiB) c.l3 = kDefaultL3;
  if (c.source == "default") c.l3 = kDefaultL3;
  return c;
}

std::string apply_cache_override(const std::string& spec, CpuCaches* caches) {
  CpuCaches c = *caches;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    const std::string item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return "'" + item + "' is not key:value (e.g. l1d:32K,l2:1M)";
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    const int64_t v = parse_size(value);
    if (v < 0) return "'" + value + "' is not a size (e.g. 32K, 1M, 1.5M)";
    if (key == "l1d" || key == "l2") {
      if (v < 4 * kKiB) return key + " of " + value + " is below 4K";
      (key == "l1d" ? c.l1d : c.l2) = v;
      (key == "l1d" ? c.l1d_ways : c.l2_ways) = 0;  // the ways of another machine: say them too if they matter
    } else if (key == "l3") {
      c.l3 = v;
    } else if (key == "l1d_ways" || key == "l2_ways") {
      if (v < 1 || v > 256) return key + " must be 1 to 256";
      (key == "l1d_ways" ? c.l1d_ways : c.l2_ways) = static_cast<int>(v);
    } else {
      return "unknown key '" + key + "' (expected l1d, l2, l3, l1d_ways or l2_ways)";
    }
  }
  if (c.l2 < c.l1d) return "l2 is smaller than l1d";
  c.source += "+DLRT_CACHE_SIZES";
  *caches = c;
  return "";
}

const CpuCaches& cpu_caches() {
  static const CpuCaches c = with_override(probe_cpu_caches());
  return c;
}

std::string describe_cpu_caches(const CpuCaches& c) {
  auto ways = [](int w) { return w > 0 ? " (" + std::to_string(w) + "-way)" : std::string(); };
  std::string s = "L1d " + format_size(c.l1d) + ways(c.l1d_ways) + ", L2 " + format_size(c.l2) + ways(c.l2_ways);
  s += c.l3 > 0 ? ", L3 " + format_size(c.l3) + " per core" : ", no L3";
  return s + " (" + c.source + ")";
}

}  // namespace dlrt::device
