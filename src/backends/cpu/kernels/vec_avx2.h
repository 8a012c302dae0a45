// AVX2 building blocks shared by the CPU kernels. Every function is compiled
// for AVX2 + FMA only (DLRT_AVX2_FN); call them only from functions with the
// same target, reached after cpu_has_avx2() (isa.h) said yes.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "backends/cpu/kernels/isa_target.h"

namespace dlrt::cpu::avx2 {

// x[u] = exp(x[u]) for U vectors (Cephes-style: 2^n times a degree-5
// polynomial on the reduced argument; within a few float ulps, inputs clamped
// to [-87.3, 88.3] so results stay normal floats; NaN stays NaN). Every step
// runs for all U vectors before the next: on Zen 1 the scheduler overlaps too
// little of one vector's dependency chain, and 4 in lockstep run about 1.3x
// faster per vector than one at a time.
template <int U>
DLRT_AVX2_FN void exp_lockstep(__m256 (&x)[U]) {
  __m256 n[U], r[U], p[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) x[u] = _mm256_min_ps(_mm256_set1_ps(88.3f), _mm256_max_ps(_mm256_set1_ps(-87.3f), x[u]));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u)
    n[u] = _mm256_round_ps(_mm256_mul_ps(x[u], _mm256_set1_ps(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) r[u] = _mm256_fnmadd_ps(n[u], _mm256_set1_ps(0.693359375f), x[u]);
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) r[u] = _mm256_fnmadd_ps(n[u], _mm256_set1_ps(-2.12194440e-4f), r[u]);
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u)
    p[u] = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500e-4f), r[u], _mm256_set1_ps(1.3981999507e-3f));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(8.3334519073e-3f));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(4.1665795894e-2f));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(1.6666665459e-1f));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(5.0000001201e-1f));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u)
    p[u] = _mm256_fmadd_ps(p[u], _mm256_mul_ps(r[u], r[u]), _mm256_add_ps(r[u], _mm256_set1_ps(1.0f)));
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n[u]), _mm256_set1_epi32(127)), 23);
    x[u] = _mm256_mul_ps(p[u], _mm256_castsi256_ps(e));
  }
}

// Sums of the lanes.
DLRT_AVX2_FN float hsum(__m256 v) {
  __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  m = _mm_add_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

DLRT_AVX2_FN double hsum(__m256d v) {
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

DLRT_AVX2_FN __m256 exp_ps(__m256 x) {
  __m256 v[1] = {x};
  exp_lockstep<1>(v);
  return v[0];
}

}  // namespace dlrt::cpu::avx2

#endif
