// Run-time ISA selection for the CPU kernels (see isa.h).
#include "backends/cpu/kernels/isa.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace dlrt::cpu {
namespace {

// device::cpu_features() also checks that the OS saves the AVX/ZMM state (XCR0).
CpuIsa detect() {
  const device::CpuFeatures& f = device::cpu_features();
  if (!f.avx2 || !f.fma) return CpuIsa::kGeneric;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (f.avx512f && f.avx512bw && f.avx512vl && __builtin_cpu_supports("avx512dq")) return CpuIsa::kAvx512;
#endif
  return CpuIsa::kAvx2;
}

// The hardware's ISA capped by DLRT_CPU_ISA; an unknown value is reported once and ignored.
CpuIsa from_environment() {
  const CpuIsa hw = detected_cpu_isa();
  const char* env = env::get("DLRT_CPU_ISA");
  if (!env || !*env) return hw;
  CpuIsa want;
  if (std::strcmp(env, "generic") == 0) want = CpuIsa::kGeneric;
  else if (std::strcmp(env, "avx2") == 0) want = CpuIsa::kAvx2;
  else if (std::strcmp(env, "avx512") == 0) want = CpuIsa::kAvx512;
  else {
    std::fprintf(stderr, "dlrt: ignoring DLRT_CPU_ISA='%s' (expected generic, avx2 or avx512)\n", env);
    return hw;
  }
  return std::min(hw, want);
}

std::atomic<uint8_t>& current() {
  static std::atomic<uint8_t> isa{static_cast<uint8_t>(from_environment())};
  return isa;
}

}  // namespace

CpuIsa detected_cpu_isa() {
  static const CpuIsa hw = detect();
  return hw;
}

CpuIsa cpu_isa() { return static_cast<CpuIsa>(current().load(std::memory_order_relaxed)); }

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kGeneric: return "generic";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "unknown";
}

namespace {

// The deterministic cache parameters leaf (4 on Intel, 0x8000001D on AMD):
// subleaf i describes one cache until its type field is 0.
CpuCacheSizes read_cache_sizes() {
  CpuCacheSizes c;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &cx, &d)) return c;
  const bool amd = b == 0x68747541;  // "Auth"enticAMD
  unsigned leaf = 4;
  if (amd) {
    unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
    if (max_ext < 0x8000001D) return c;
    leaf = 0x8000001D;
  } else if (a < 4) {
    return c;
  }
  for (unsigned i = 0; i < 16; ++i) {
    if (!__get_cpuid_count(leaf, i, &a, &b, &cx, &d)) break;
    const unsigned type = a & 0x1F, level = (a >> 5) & 0x7;
    if (type == 0) break;
    if (type == 2) continue;  // instruction cache
    const int64_t bytes = int64_t{((b >> 22) & 0x3FF) + 1} * (((b >> 12) & 0x3FF) + 1) * ((b & 0xFFF) + 1) * (int64_t{cx} + 1);
    if (level == 1) c.l1d = bytes;
    else if (level == 2) c.l2 = bytes;
    else if (level == 3) c.l3 = bytes;
  }
#endif
  return c;
}

}  // namespace

const CpuCacheSizes& cpu_cache_sizes() {
  static const CpuCacheSizes sizes = read_cache_sizes();
  return sizes;
}

ScopedCpuIsa::ScopedCpuIsa(CpuIsa limit) : previous_(cpu_isa()) {
  current().store(static_cast<uint8_t>(std::min(limit, detected_cpu_isa())), std::memory_order_relaxed);
}

ScopedCpuIsa::~ScopedCpuIsa() { current().store(static_cast<uint8_t>(previous_), std::memory_order_relaxed); }

}  // namespace dlrt::cpu
