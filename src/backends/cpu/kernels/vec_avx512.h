// AVX-512 pieces of the loops still written for 512 bits only (the AVX-512
// attention, the fused expand-depthwise block, the int8 kernels): tail
// masks, exp of non-positive
// inputs in lockstep and horizontal reductions. Every function is compiled
// for AVX-512 only (DLRT_AVX512 attribute); call them only from functions
// with the same attribute, reached after cpu_has_avx512() (isa.h) said yes.
// Kernels written once for every width use kernels/simd/ instead
// (docs/cpu-kernels.md), whose math_simd.h has these operations too.
//
// Accuracy (checked against <cmath> in tests/cpu/isa_kernels_test.cpp): exp
// within a few float ulps down to ln(FLT_MIN) (0 below it: no denormals).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized reports once they are inlined, and -Wuninitialized
// too at -O2 (the unpacks of depthwise_c16_avx512's transpose, in the
// sanitizer build): false positives.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/kernels/isa_target.h"

#define DLRT_HAVE_AVX512_PATHS 1

namespace dlrt::cpu::avx512 {

// Mask selecting the first n lanes: none for n <= 0, all 16 for n >= 16.
DLRT_AVX512 inline __mmask16 tail_mask(int64_t n) {
  if (n <= 0) return 0;
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

// exp for U vectors of x <= 0 (a softmax input less its maximum; NaN
// stays NaN), in lockstep so their dependency chains overlap: no clamps
// (nothing overflows, and a lane below ln(FLT_MIN), -inf included, is set to
// 0 by the final mask) and e^r as one degree-6 polynomial, 11 operations a
// vector. Coefficients: a minimax fit of e^r on
// |r| <= ln(2)/2 with p(0) = 1 (relative error 2e-9 in exact arithmetic,
// below 1e-7 evaluated in float).
template <int U>
DLRT_AVX512 __attribute__((always_inline)) inline void exp_nonpositive_lockstep(__m512 (&x)[U]) {
  __mmask16 normal[U];
  __m512 n[U], r[U], p[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) normal[u] = _mm512_cmp_ps_mask(x[u], _mm512_set1_ps(-87.33f), _CMP_NLT_UQ);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
    n[u] = _mm512_roundscale_ps(_mm512_mul_ps(x[u], _mm512_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) r[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(0.693359375f), x[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) r[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(-2.12194440e-4f), r[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(_mm512_set1_ps(1.3843653723597527e-3f), r[u], _mm512_set1_ps(8.37415549904108e-3f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(4.166800156235695e-2f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(1.6666431725025177e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(4.999999403953552e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(1.0f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], r[u], _mm512_set1_ps(1.0f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) x[u] = _mm512_maskz_scalef_ps(normal[u], p[u], n[u]);
}

DLRT_AVX512 inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
DLRT_AVX512 inline float hmax(__m512 v) { return _mm512_reduce_max_ps(v); }

}  // namespace dlrt::cpu::avx512

#endif  // x86
