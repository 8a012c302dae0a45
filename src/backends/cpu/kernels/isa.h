// Which vector ISA the CPU kernels may use, decided at run time: the
// hardware's (cpuid; NEON on every aarch64 build) capped by the DLRT_CPU_ISA
// environment variable (generic | neon | avx2 | avx512, read once) and by a
// test's ScopedCpuIsa. One binary
// runs on SSE2-only, AVX2 and AVX-512 CPUs; the vector paths live in functions
// compiled with __attribute__((target(...))) and are chosen through cpu_isa().
#pragma once

#include <cstdint>

namespace dlrt::cpu {

enum class CpuIsa : uint8_t {
  kGeneric = 0,  // portable C++ (whatever the baseline target vectorises)
  // The kernels written over simd/ at 128 bits (simd::w128), the rest portable:
  // what aarch64 runs (Advanced SIMD is part of its baseline). Below kAvx2, so
  // the x86 paths (>= kAvx2) stay off; on x86 a ScopedCpuIsa or DLRT_CPU_ISA=neon
  // selects it to run aarch64's kernel choice with SSE.
  kNeon = 1,
  kAvx2 = 2,    // AVX2 + FMA
  kAvx512 = 3,  // AVX-512 F/BW/DQ/VL (+ FMA)
};

// What the hardware supports (neon on aarch64, generic on other non-x86 builds).
CpuIsa detected_cpu_isa();

// The ISA kernels should use now: detected_cpu_isa() capped by DLRT_CPU_ISA and
// any ScopedCpuIsa in effect. Cheap (one relaxed atomic load).
CpuIsa cpu_isa();

inline bool cpu_has_avx2() { return cpu_isa() >= CpuIsa::kAvx2; }
inline bool cpu_has_avx512() { return cpu_isa() >= CpuIsa::kAvx512; }
// Whether the kernels written over simd/ (any width) are selected: NEON, AVX2 or AVX-512.
inline bool cpu_has_simd_kernels() { return cpu_isa() >= CpuIsa::kNeon; }

const char* cpu_isa_name(CpuIsa isa);

// Caps cpu_isa() at `limit` (never above the hardware) while alive; for tests
// that compare a vector path against the portable one. Not thread-safe against
// kernels running concurrently on other threads.
class ScopedCpuIsa {
 public:
  explicit ScopedCpuIsa(CpuIsa limit);
  ~ScopedCpuIsa();
  ScopedCpuIsa(const ScopedCpuIsa&) = delete;
  ScopedCpuIsa& operator=(const ScopedCpuIsa&) = delete;

 private:
  CpuIsa previous_;
};

}  // namespace dlrt::cpu
