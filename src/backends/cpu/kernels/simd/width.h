// The vector width a kernel written over simd/ (simd.h) runs at: one
// instantiation per width, picked from cpu_isa() (isa.h; defined in isa.cpp,
// so the choice stays in one place).
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/isa.h"

namespace dlrt::cpu {

enum class SimdWidth : uint8_t {
  k128 = 0,  // simd::w128: 4 floats (NEON's width; portable vector code on x86)
  k256 = 1,  // simd::w256: AVX2 + FMA
  k512 = 2,  // simd::w512: AVX-512
};

// kAvx512 -> k512, kAvx2 -> k256, generic -> k128.
SimdWidth simd_width();
// Whether this build has `w` and the hardware (not DLRT_CPU_ISA or a
// ScopedCpuIsa) can run it.
bool simd_width_runs(SimdWidth w);
const char* simd_width_name(SimdWidth w);

}  // namespace dlrt::cpu
