// Run-time ISA selection for the CPU kernels (see isa.h).
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/env.h"
#include "device/cpu_features.h"

namespace dlrt::cpu {
namespace {

// device::cpu_features() also checks that the OS saves the AVX/ZMM state (XCR0).
CpuIsa detect() {
#if defined(__aarch64__) && defined(__ARM_NEON)
  return CpuIsa::kNeon;  // Advanced SIMD: the aarch64 baseline this build targets
#endif
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
  else if (std::strcmp(env, "neon") == 0) want = CpuIsa::kNeon;
  else if (std::strcmp(env, "avx2") == 0) want = CpuIsa::kAvx2;
  else if (std::strcmp(env, "avx512") == 0) want = CpuIsa::kAvx512;
  else {
    std::fprintf(stderr, "dlrt: ignoring DLRT_CPU_ISA='%s' (expected generic, neon, avx2 or avx512)\n", env);
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
    case CpuIsa::kNeon: return "neon";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "unknown";
}

SimdWidth simd_width() {
  switch (cpu_isa()) {
    case CpuIsa::kAvx512: return SimdWidth::k512;
    case CpuIsa::kAvx2: return SimdWidth::k256;
    case CpuIsa::kNeon:
    case CpuIsa::kGeneric: break;
  }
  return SimdWidth::k128;
}

bool simd_width_runs(SimdWidth w) {
  switch (w) {
    case SimdWidth::k128: return true;
    case SimdWidth::k256: return detected_cpu_isa() >= CpuIsa::kAvx2;
    case SimdWidth::k512: return detected_cpu_isa() >= CpuIsa::kAvx512;
  }
  return false;
}

const char* simd_width_name(SimdWidth w) {
  switch (w) {
    case SimdWidth::k128: return "128";
    case SimdWidth::k256: return "256";
    case SimdWidth::k512: return "512";
  }
  return "unknown";
}

namespace {
std::mutex simd_counters_mutex;
const SimdCallCounter* simd_counters = nullptr;  // newest first; guarded by simd_counters_mutex
}  // namespace

SimdCallCounter::SimdCallCounter(const char* entry) : entry_(entry) {
  std::lock_guard<std::mutex> lock(simd_counters_mutex);
  next_ = simd_counters;
  simd_counters = this;
}

uint64_t simd_calls(std::string_view entry, SimdWidth w) {
  std::lock_guard<std::mutex> lock(simd_counters_mutex);
  uint64_t n = 0;
  for (const SimdCallCounter* c = simd_counters; c; c = c->next_)
    if (entry == c->entry_) n += c->calls_[static_cast<int>(w)].load(std::memory_order_relaxed);
  return n;
}

ScopedCpuIsa::ScopedCpuIsa(CpuIsa limit) : previous_(cpu_isa()) {
  current().store(static_cast<uint8_t>(std::min(limit, detected_cpu_isa())), std::memory_order_relaxed);
}

ScopedCpuIsa::~ScopedCpuIsa() { current().store(static_cast<uint8_t>(previous_), std::memory_order_relaxed); }

}  // namespace dlrt::cpu
