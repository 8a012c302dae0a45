// The register-only FMA loops of dlrt_fma_peak, shared with dlrt_isa_share:
// kChains independent chains of fused multiply-adds (enough to cover the FMA
// latency on two FMA ports), no memory traffic. fn(iters) runs iters * kChains
// FMAs of 16 (avx512), 8 (avx2) or 1 (scalar) lanes; each returns a value that
// depends on every accumulator. The vector ones carry target attributes: call
// them only where the CPU has the ISA.
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

#if DLRT_X86
__attribute__((target("avx512f"))) inline float fma_avx512(int64_t iters) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 0.001f);
  const __m512 mul = _mm512_set1_ps(0.999999f);
  const __m512 add = _mm512_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], mul, add);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  return sum_lanes(lanes, 16);
}

__attribute__((target("avx2,fma"))) inline float fma_avx2(int64_t iters) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 0.001f);
  const __m256 mul = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], mul, add);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return sum_lanes(lanes, 8);
}
#endif

inline float fma_scalar(int64_t iters) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = static_cast<float>(i) * 0.001f;
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = std::fma(acc[i], 0.999999f, 1e-6f);
  return sum_lanes(acc, kChains);
}

}  // namespace fma_loops
