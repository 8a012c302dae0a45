// The CPU: brand and ISA from cpuid (honouring what the OS enabled in XCR0;
// on aarch64 Linux the ISA from HWCAP),
// cores and threads from /proc/cpuinfo or /sys/devices/system/cpu, memory
// from /proc/meminfo.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "core/env.h"
#include "device/cpu_caches.h"
#include "device/cpu_features.h"
#include "device/device_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_X86 1
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#define DLRT_ARM64_HWCAP 1
#include <asm/hwcap.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

namespace dlrt::device {
namespace {

struct CpuIdentity {
  std::string vendor;  // "GenuineIntel"; "" off x86
  std::string brand;   // "Intel(R) Xeon(R) ..."; "" when cpuid has none
  CpuFeatures features;
};

std::string collapse_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\0') break;
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

#if DLRT_X86
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned sub) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

unsigned long long xgetbv0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

CpuIdentity probe_cpuid() {
  CpuIdentity id;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf == 0) return id;
  Regs v = cpuid(0, 0);
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  id.vendor = vendor;

  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = cpuid(0x80000002u + i, 0);
      std::memcpy(brand + 16 * i, &r.a, 4);
      std::memcpy(brand + 16 * i + 4, &r.b, 4);
      std::memcpy(brand + 16 * i + 8, &r.c, 4);
      std::memcpy(brand + 16 * i + 12, &r.d, 4);
    }
    id.brand = collapse_spaces(brand);
  }

  CpuFeatures& f = id.features;
  Regs l1 = cpuid(1, 0);
  f.sse4_2 = bit(l1.c, 20);
  // The OS must have enabled the register state (XCR0) before AVX-class
  // instructions can be used, whatever cpuid says about the silicon.
  const bool osxsave = bit(l1.c, 27);
  const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;                         // SSE + AVX state
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;          // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & (3ull << 17)) == (3ull << 17);       // XTILECFG + XTILEDATA
  f.avx = os_avx && bit(l1.c, 28);
  f.fma = f.avx && bit(l1.c, 12);
  f.f16c = f.avx && bit(l1.c, 29);
  if (max_leaf >= 7) {
    Regs l7 = cpuid(7, 0);
    f.avx2 = f.avx && bit(l7.b, 5);
    f.avx512f = os_avx512 && bit(l7.b, 16);
    f.avx512bw = f.avx512f && bit(l7.b, 30);
    f.avx512vl = f.avx512f && bit(l7.b, 31);
    f.avx512_vnni = f.avx512f && bit(l7.c, 11);
    f.avx512_vbmi = f.avx512f && bit(l7.c, 1);
    f.avx512_fp16 = f.avx512f && bit(l7.d, 23);
    f.amx_bf16 = os_amx && bit(l7.d, 22);
    f.amx_tile = os_amx && bit(l7.d, 24);
    f.amx_int8 = os_amx && bit(l7.d, 25);
    if (l7.a >= 1) {
      Regs l71 = cpuid(7, 1);
      f.avx_vnni = f.avx && bit(l71.a, 4);
      f.avx512_bf16 = f.avx512f && bit(l71.a, 5);
    }
  }
  return id;
}
#elif DLRT_ARM64_HWCAP
CpuIdentity probe_cpuid() {
  CpuIdentity id;
  id.features.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  id.features.i8mm = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
  id.features.bf16 = (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
  return id;
}
#else
CpuIdentity probe_cpuid() { return {}; }
#endif

// Every feature flag with its name (as `dlrt devices` and DLRT_CPU_FEATURES_OFF
// spell it); `width` marks those DLRT_CPU_ISA caps instead.
struct FeatureName {
  bool CpuFeatures::*flag;
  const char* name;
  bool width;
};
constexpr FeatureName kFeatureNames[] = {
    {&CpuFeatures::sse4_2, "sse4_2", true},          {&CpuFeatures::avx, "avx", true},
    {&CpuFeatures::avx2, "avx2", true},              {&CpuFeatures::fma, "fma", true},
    {&CpuFeatures::f16c, "f16c", false},             {&CpuFeatures::avx512f, "avx512f", true},
    {&CpuFeatures::avx512bw, "avx512bw", true},      {&CpuFeatures::avx512vl, "avx512vl", true},
    {&CpuFeatures::avx512_vnni, "avx512_vnni", false}, {&CpuFeatures::avx512_bf16, "avx512_bf16", false},
    {&CpuFeatures::avx512_fp16, "avx512_fp16", false}, {&CpuFeatures::amx_tile, "amx_tile", false},
    {&CpuFeatures::amx_bf16, "amx_bf16", false},     {&CpuFeatures::amx_int8, "amx_int8", false},
    {&CpuFeatures::avx_vnni, "avx_vnni", false},     {&CpuFeatures::avx512_vbmi, "avx512_vbmi", false},
    {&CpuFeatures::dotprod, "dotprod", false},       {&CpuFeatures::i8mm, "i8mm", false},
    {&CpuFeatures::bf16, "bf16", false},
};

const CpuIdentity& identity() {
  static const CpuIdentity id = [] {
    CpuIdentity i = probe_cpuid();
    if (const char* off = env::get_nonempty("DLRT_CPU_FEATURES_OFF")) {
      const std::string err = turn_features_off(off, &i.features);
      if (!err.empty()) std::fprintf(stderr, "dlrt: DLRT_CPU_FEATURES_OFF='%s': %s\n", off, err.c_str());
    }
    return i;
  }();
  return id;
}

}  // namespace

std::string turn_features_off(const std::string& names, CpuFeatures* f) {
  std::string unknown, width;
  size_t b = 0;
  while (b < names.size()) {
    size_t e = names.find_first_of(", ", b);
    if (e == std::string::npos) e = names.size();
    const std::string name = names.substr(b, e - b);
    b = e + 1;
    if (name.empty()) continue;
    const FeatureName* known = nullptr;
    for (const FeatureName& fn : kFeatureNames)
      if (name == fn.name) known = &fn;
    if (!known) unknown += (unknown.empty() ? "" : ", ") + name;
    else if (known->width) width += (width.empty() ? "" : ", ") + name;
    else f->*known->flag = false;
  }
  std::string err;
  if (!unknown.empty()) err = "ignoring unknown feature names: " + unknown;
  if (!width.empty())
    err += (err.empty() ? "" : "; ") + std::string("ignoring ") + width + " (DLRT_CPU_ISA caps the vector width)";
  return err;
}

namespace {

[[maybe_unused]] std::string isa_string(const CpuFeatures& f) {  // x86 only
  std::string s;
  for (const FeatureName& fn : kFeatureNames)
    if (f.*fn.flag) s += (s.empty() ? "" : " ") + std::string(fn.name);
  return s;
}

// /proc/cpuinfo as (key, value) lines; a blank line separates processors.
struct CpuInfo {
  int processors = 0;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  bool complete_topology = true;                        // every processor had a core id
  std::string first(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return v;
    return "";
  }
  std::vector<std::pair<std::string, std::string>> fields;
};

std::string trim_ws(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo info;
  std::string physical = "0", core;
  bool in_processor = false;
  auto finish = [&] {
    if (!in_processor) return;
    if (core.empty()) info.complete_topology = false;
    else info.cores.insert({physical, core});
    physical = "0";
    core.clear();
    in_processor = false;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (trim_ws(line).empty()) finish();
      continue;
    }
    std::string key = trim_ws(line.substr(0, colon)), value = trim_ws(line.substr(colon + 1));
    if (key == "processor") {
      finish();
      in_processor = true;
      ++info.processors;
    } else if (key == "physical id") {
      physical = value;
    } else if (key == "core id") {
      core = value;
    }
    if (info.fields.size() < 256) info.fields.emplace_back(key, value);
  }
  finish();
  return info;
}

[[maybe_unused]] std::string x86_vendor_name(const std::string& v) {
  if (v == "GenuineIntel") return "Intel";
  if (v == "AuthenticAMD") return "AMD";
  if (v == "HygonGenuine") return "Hygon";
  if (v == "CentaurHauls" || v == "  Shanghai  ") return "Zhaoxin";
  return collapse_spaces(v);
}

// Arm "CPU implementer" codes.
[[maybe_unused]] std::string arm_implementer_name(const std::string& code) {
  auto v = parse_uint(code);
  if (!v) return "";
  switch (*v) {
    case 0x41: return "Arm";
    case 0x42: return "Broadcom";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0xc0: return "Ampere";
    default: return "";
  }
}

// Arm features as Linux spells them (/proc/cpuinfo "Features") -> dlrt's names.
struct ArmFeature {
  const char* linux_name;
  const char* name;
};
constexpr ArmFeature kArmFeatures[] = {{"asimd", "neon"}, {"fphp", "fp16"}, {"asimddp", "dotprod"}, {"i8mm", "i8mm"},
                                       {"bf16", "bf16"},  {"sve", "sve"},   {"sve2", "sve2"},       {"sme", "sme"}};

[[maybe_unused]] std::string arm_isa(const std::string& features) {
  std::set<std::string> have;
  size_t pos = 0;
  while (pos < features.size()) {
    size_t sp = features.find(' ', pos);
    if (sp == std::string::npos) sp = features.size();
    have.insert(features.substr(pos, sp - pos));
    pos = sp + 1;
  }
  std::string s;
  for (const ArmFeature& f : kArmFeatures)
    if (have.count(f.linux_name)) s += (s.empty() ? "" : " ") + std::string(f.name);
  return s;
}

#if DLRT_ARM64_HWCAP
// The running CPU's features from the kernel's HWCAP words, as cpuinfo would
// spell them (cpuinfo may be the host's under user-mode emulation); dotprod,
// i8mm and bf16 as the kernels see them (less DLRT_CPU_FEATURES_OFF), as on x86.
std::string arm_hwcap_features() {
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  const CpuFeatures& f = cpu_features();
  const std::pair<const char*, bool> bits[] = {
      {"asimd", (hw & HWCAP_ASIMD) != 0}, {"fphp", (hw & HWCAP_FPHP) != 0}, {"asimddp", f.dotprod},
      {"i8mm", f.i8mm},                   {"bf16", f.bf16},                 {"sve", (hw & HWCAP_SVE) != 0},
      {"sve2", (hw2 & HWCAP2_SVE2) != 0}, {"sme", (hw2 & HWCAP2_SME) != 0}};
  std::string s;
  for (const auto& [name, on] : bits)
    if (on) s += (s.empty() ? "" : " ") + std::string(name);
  return s;
}

// The SVE vector length in bits of this thread, 0 without SVE.
int sve_vector_bits() {
  if (!(getauxval(AT_HWCAP) & HWCAP_SVE)) return 0;
  const int vl = ::prctl(PR_SVE_GET_VL);
  return vl < 0 ? 0 : (vl & PR_SVE_VL_LEN_MASK) * 8;
}
#endif

}  // namespace

// "0-3,5,7-8" -> 7
int count_cpu_list(const std::string& list) {
  int count = 0;
  size_t pos = 0;
  std::string t = trim_ws(list);
  while (pos < t.size()) {
    size_t comma = t.find(',', pos);
    if (comma == std::string::npos) comma = t.size();
    std::string part = t.substr(pos, comma - pos);
    pos = comma + 1;
    size_t dash = part.find('-');
    auto lo = parse_uint(part.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_uint(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 1u << 20) return 0;
    count += static_cast<int>(*hi - *lo + 1);
  }
  return count;
}

const CpuFeatures& cpu_features() { return identity().features; }

bool request_amx_permission() {
#if DLRT_X86 && defined(__linux__) && defined(SYS_arch_prctl)
  static const bool granted = [] {
    if (!cpu_features().amx_tile) return false;
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return ::syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

Device discover_cpu(const std::string& root) {
  Device d;
  d.type = DeviceType::kCpu;
  const CpuInfo info = parse_cpuinfo(read_file(under_root(root, "/proc/cpuinfo"), 4 << 20));

#if DLRT_X86
  const CpuIdentity& id = identity();
  d.metadata["discovered_by"] = "cpuid";
  d.vendor = x86_vendor_name(id.vendor.empty() ? info.first("vendor_id") : id.vendor);
  d.name = id.brand;
  d.metadata["isa"] = isa_string(id.features);
#else
  d.metadata["discovered_by"] = "procfs";
  d.vendor = arm_implementer_name(info.first("CPU implementer"));
  if (d.vendor.empty()) d.vendor = collapse_spaces(info.first("vendor_id"));
  d.metadata["isa"] = arm_isa(info.first("Features"));
#if DLRT_ARM64_HWCAP
  // The running machine (not a tree a test points at): the kernel's HWCAP.
  if (root.empty() || root == "/") {
    d.metadata["discovered_by"] = "hwcap";
    d.metadata["isa"] = arm_isa(arm_hwcap_features());
    if (const int bits = sve_vector_bits(); bits > 0) d.metadata["sve_vector_bits"] = std::to_string(bits);
  }
#endif
#endif
  for (const char* key : {"model name", "Hardware", "cpu model", "Processor"})
    if (d.name.empty()) d.name = collapse_spaces(info.first(key));
  if (d.name.empty()) d.name = d.vendor.empty() ? "CPU" : d.vendor + " CPU";

  // Threads: processors listed, else the online set, else what the process sees.
  int threads = info.processors;
  if (threads <= 0) threads = count_cpu_list(read_file(under_root(root, "/sys/devices/system/cpu/online"), 4096));
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  // Physical cores: distinct (package, core) pairs, from cpuinfo or sysfs topology.
  int cores = info.complete_topology && info.processors > 0 ? static_cast<int>(info.cores.size()) : 0;
  if (cores <= 0) {
    std::set<std::pair<uint64_t, uint64_t>> pairs;
    bool complete = true;
    const std::string cpu_dir = under_root(root, "/sys/devices/system/cpu");
    for (const std::string& n : list_dir(cpu_dir)) {
      if (n.size() < 4 || n.compare(0, 3, "cpu") != 0 || !std::all_of(n.begin() + 3, n.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      auto core = read_uint(cpu_dir + "/" + n + "/topology/core_id");
      auto package = read_uint(cpu_dir + "/" + n + "/topology/physical_package_id");
      if (!core) {
        complete = false;
        break;
      }
      pairs.insert({package.value_or(0), *core});
    }
    if (complete) cores = static_cast<int>(pairs.size());
  }
  if (cores > threads && threads > 0) cores = threads;
  if (cores > 0) d.metadata["cores"] = std::to_string(cores);
  if (threads > 0) d.metadata["threads"] = std::to_string(threads);
  // The caches one core sees (the kernels' block sizes follow them); the
  // running machine's, with DLRT_CACHE_SIZES applied, else the tree's.
  const CpuCaches caches = root.empty() || root == "/" ? cpu_caches() : probe_cpu_caches(root);
  d.metadata["caches"] = describe_cpu_caches(caches);

  // Host memory: "MemTotal:  16318200 kB".
  std::string meminfo = read_file(under_root(root, "/proc/meminfo"), 16384);
  if (size_t p = meminfo.find("MemTotal:"); p != std::string::npos) {
    size_t end = meminfo.find('\n', p);
    std::string v = trim_ws(meminfo.substr(p + 9, end == std::string::npos ? std::string::npos : end - p - 9));
    if (v.size() > 3 && v.compare(v.size() - 3, 3, " kB") == 0) v = trim_ws(v.substr(0, v.size() - 3));
    if (auto kb = parse_uint(v); kb && *kb > 0 && *kb < (1ull << 50)) d.metadata["memory_bytes"] = std::to_string(*kb * 1024);
  }
  return d;
}

}  // namespace dlrt::device
