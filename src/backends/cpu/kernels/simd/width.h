// The vector width a kernel written over simd/ (simd.h) runs at: one
// instantiation per width, picked from cpu_isa() (isa.h; defined in isa.cpp,
// so the choice stays in one place).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "backends/cpu/kernels/isa.h"

namespace dlrt::cpu {

enum class SimdWidth : uint8_t {
  k128 = 0,  // simd::w128: 4 floats (NEON's width; portable vector code on x86)
  k256 = 1,  // simd::w256: AVX2 + FMA
  k512 = 2,  // simd::w512: AVX-512
};

// kAvx512 -> k512, kAvx2 -> k256, neon and generic -> k128 (generic runs the
// simd/ kernels only where a caller passes no choice: cpu_has_simd_kernels()).
SimdWidth simd_width();
// Whether this build has `w` and the hardware (not DLRT_CPU_ISA or a
// ScopedCpuIsa) can run it.
bool simd_width_runs(SimdWidth w);
const char* simd_width_name(SimdWidth w);

// Calls of one kernel entry written over simd/ per width, counted by
// DLRT_SIMD_CALL (simd.h; one static counter per call site), so that a test
// can tell which instantiation a kernel family ran, or that none did (the
// portable path ran instead). Relaxed atomics: one add per call.
class SimdCallCounter {
 public:
  explicit SimdCallCounter(const char* entry);  // links itself into the list simd_calls reads
  void add(SimdWidth w) { calls_[static_cast<int>(w)].fetch_add(1, std::memory_order_relaxed); }

 private:
  friend uint64_t simd_calls(std::string_view entry, SimdWidth w);
  const char* entry_;
  std::atomic<uint64_t> calls_[3] = {};
  const SimdCallCounter* next_ = nullptr;
};

// Calls of `entry` (the name DLRT_SIMD_CALL was given) at width `w` since
// the process started, summed over its call sites.
uint64_t simd_calls(std::string_view entry, SimdWidth w);

}  // namespace dlrt::cpu
