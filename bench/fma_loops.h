// The register-only FMA loops of dlrt_fma_peak, shared with dlrt_isa_share:
// kChains independent chains of fused multiply-adds (enough to cover the FMA
// latency on two FMA ports), no memory traffic. fn(iters) runs iters * kChains
// FMAs of 16 (avx512), 8 (avx2) or 1 (scalar) lanes; each returns a value that
// depends on every accumulator. The vector ones are one body (fma_loops_simd.h)
// over the CPU backend's vector layer, compiled per width in target regions:
// call them only where the CPU has the ISA.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_X86 1
#else
#define DLRT_X86 0
#endif

namespace fma_loops {

constexpr int kChains = 12;  // independent accumulators per thread

// The sum of n lanes stored from a vector (a result that depends on every accumulator).
inline float sum_lanes(const float* lanes, int n) {
  float total = 0;
  for (int i = 0; i < n; ++i) total += lanes[i];
  return total;
}

inline float fma_scalar(int64_t iters) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = static_cast<float>(i) * 0.001f;
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = std::fma(acc[i], 0.999999f, 1e-6f);
  return sum_lanes(acc, kChains);
}

}  // namespace fma_loops

#if DLRT_X86
#define DLRT_SIMD_BODY "bench/fma_loops_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace fma_loops {
inline float fma_avx512(int64_t iters) { return dlrt::cpu::simd::w512::fma_chains(iters); }
inline float fma_avx2(int64_t iters) { return dlrt::cpu::simd::w256::fma_chains(iters); }
}  // namespace fma_loops
#endif
