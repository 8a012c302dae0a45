// AVX-512 building blocks shared by the CPU kernels: 16-lane exp, sigmoid,
// tanh and erf approximations, horizontal reductions, masked tail helpers and
// the fused activations of activation_epilogue.h. Every function is compiled
// for AVX-512 only (DLRT_AVX512 attribute); call them only from functions with
// the same attribute, reached after cpu_has_avx512() (isa.h) said yes.
//
// Accuracy (checked against <cmath> in tests/cpu/isa_kernels_test.cpp): exp
// within a few float ulps down to ln(FLT_MIN) (0 below it: no denormals), inf
// above 88.73, NaN stays NaN; sigmoid/tanh within 2e-7 absolute; erf within 3e-7 absolute.
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

#include "backends/cpu/activation_epilogue.h"

#define DLRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
#define DLRT_HAVE_AVX512_PATHS 1

namespace dlrt::cpu::avx512 {

// Mask selecting the first n lanes: none for n <= 0, all 16 for n >= 16.
DLRT_AVX512 inline __mmask16 tail_mask(int64_t n) {
  if (n <= 0) return 0;
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

DLRT_AVX512 inline __m512 exp_ps(__m512 x) {
  // exp(x) = 2^n * e^r with n = round(x / ln 2), |r| <= ln(2)/2; scalef applies 2^n
  // (overflowing to inf above 88.72). Below ln(FLT_MIN) the result is 0, not a
  // denormal: denormal results (and later products with them) cost microcode
  // assists, e.g. on every masked key of an attention row. NaN passes the clamps.
  const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33f), _CMP_NLT_UQ);
  x = _mm512_min_ps(_mm512_set1_ps(88.7228394f), _mm512_max_ps(_mm512_set1_ps(-87.33f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(normal, p, n);
}

// exp_ps for U vectors of x <= 0 (a softmax input less its maximum; NaN
// stays NaN), in lockstep so their dependency chains overlap: no clamps
// (nothing overflows, and a lane below ln(FLT_MIN), -inf included, is set to
// 0 by the final mask) and e^r as one degree-6 polynomial, 11 operations a
// vector against exp_ps's 16. Coefficients: a minimax fit of e^r on
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

DLRT_AVX512 inline __m512 sigmoid_ps(__m512 x) {
  // 1 / (1 + e^-x); the exact division keeps sigmoid(-inf) = 0 and sigmoid(+inf) = 1.
  const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|); |x| < 0.25 uses the odd series.
DLRT_AVX512 inline __m512 tanh_ps(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
  const __m512 e = exp_ps(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 big = _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), e), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __m512 x2 = _mm512_mul_ps(ax, ax);
  __m512 p = _mm512_set1_ps(62.0f / 2835.0f);
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-17.0f / 315.0f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.0f / 15.0f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.0f / 3.0f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.0f));
  const __mmask16 small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.25f), _CMP_LT_OQ);  // false for NaN
  const __m512 r = _mm512_mask_mov_ps(big, small, _mm512_mul_ps(p, ax));
  return _mm512_or_ps(r, sign);
}

// erf(x): Abramowitz-Stegun 7.1.26 for |x| >= 0.3, its Taylor series below (relative accuracy near 0).
DLRT_AVX512 inline __m512 erf_ps(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 ax = _mm512_min_ps(_mm512_andnot_ps(_mm512_set1_ps(-0.0f), x), _mm512_set1_ps(6.0f));
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(ax, _mm512_set1_ps(0.3275911f), _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 x2 = _mm512_mul_ps(ax, ax);
  const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), x2));
  const __m512 big = _mm512_fnmadd_ps(p, e, _mm512_set1_ps(1.0f));
  __m512 s = _mm512_set1_ps(1.0f / 216.0f);  // 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216)
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(-1.0f / 42.0f));
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(1.0f / 10.0f));
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(-1.0f / 3.0f));
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(1.0f));
  const __m512 small = _mm512_mul_ps(_mm512_mul_ps(s, ax), _mm512_set1_ps(1.1283791670955126f));
  const __m512 r = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.3f), _CMP_LT_OQ), small);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(_mm512_or_ps(r, sign), nan, x);
}

// Gelu (erf form) on U vectors in lockstep: each step for all U before the
// next, so U independent dependency chains (a reciprocal, the polynomial, an
// exp) overlap in the instruction stream. Gelu = 0.5 v (1 + erf(v / sqrt 2))
// with erf(|x|) = 1 - p(t) exp(-x^2), t = 1 / (1 + 0.3275911 |x|)
// (Abramowitz-Stegun 7.1.26, absolute error < 2e-7, all Gelu needs since the
// result scales it by v), |x| capped at 6; the division as rcp14 and one
// Newton step (relative error about 2^-28), and exp(-x^2) without exp_ps's
// clamps (-x^2 >= -36 never leaves exp's normal range). A NaN v stays NaN
// through the final product. minilm_l6's 128 x 1536 Gelu epilogue, 1
// thread, SPR-class Xeon: see gemm_epilogue.cpp.
template <int U>
DLRT_AVX512 __attribute__((always_inline)) inline void gelu_lockstep(__m512 (&v)[U]) {
  __m512 ax[U], t[U], p[U], e[U];
  const __m512 one = _mm512_set1_ps(1.0f);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
    ax[u] = _mm512_min_ps(_mm512_abs_ps(_mm512_mul_ps(v[u], _mm512_set1_ps(0.70710678118654752f))),
                          _mm512_set1_ps(6.0f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(ax[u], _mm512_set1_ps(0.3275911f), one);  // w
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_rcp14_ps(p[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_mul_ps(t[u], _mm512_fnmadd_ps(p[u], t[u], _mm512_set1_ps(2.0f)));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(_mm512_set1_ps(1.061405429f), t[u], _mm512_set1_ps(-1.453152027f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], t[u], _mm512_set1_ps(1.421413741f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], t[u], _mm512_set1_ps(-0.284496736f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_fmadd_ps(p[u], t[u], _mm512_set1_ps(0.254829592f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) p[u] = _mm512_mul_ps(p[u], t[u]);
  // e = exp(-ax^2) = 2^n * e^r, n = round(-ax^2 / ln 2) in [-52, 0].
  __m512 n[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) e[u] = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), ax[u]), ax[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
    n[u] = _mm512_roundscale_ps(_mm512_mul_ps(e[u], _mm512_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) e[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(0.693359375f), e[u]);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) e[u] = _mm512_fnmadd_ps(n[u], _mm512_set1_ps(-2.12194440e-4f), e[u]);  // r
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), e[u], _mm512_set1_ps(1.3981999507e-3f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(t[u], e[u], _mm512_set1_ps(8.3334519073e-3f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(t[u], e[u], _mm512_set1_ps(4.1665795894e-2f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(t[u], e[u], _mm512_set1_ps(1.6666665459e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(t[u], e[u], _mm512_set1_ps(5.0000001201e-1f));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) t[u] = _mm512_fmadd_ps(t[u], _mm512_mul_ps(e[u], e[u]), _mm512_add_ps(e[u], one));
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) e[u] = _mm512_scalef_ps(t[u], n[u]);
  // erf(|x|) = 1 - p e; Gelu = 0.5 v (1 + sign(v) erf(|x|)).
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    const __m512 erf_abs = _mm512_fnmadd_ps(p[u], e[u], one);
    const __m512 sign = _mm512_and_ps(v[u], _mm512_set1_ps(-0.0f));
    v[u] = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v[u]), _mm512_add_ps(one, _mm512_or_ps(erf_abs, sign)));
  }
}

DLRT_AVX512 inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
DLRT_AVX512 inline float hmax(__m512 v) { return _mm512_reduce_max_ps(v); }

// The activation `K` of activation_epilogue.h on 16 lanes (p0/p1: its parameters broadcast).
template <ActKind K>
DLRT_AVX512 inline __m512 act_ps(__m512 v, __m512 p0, __m512 p1) {
  if constexpr (K == ActKind::kNone) {
    return v;
  } else if constexpr (K == ActKind::kRelu) {
    return _mm512_max_ps(_mm512_setzero_ps(), v);  // NaN stays NaN (max returns its second operand)
  } else if constexpr (K == ActKind::kClip) {
    return _mm512_min_ps(p1, _mm512_max_ps(p0, v));
  } else if constexpr (K == ActKind::kSigmoid) {
    return sigmoid_ps(v);
  } else if constexpr (K == ActKind::kTanh) {
    return tanh_ps(v);
  } else if constexpr (K == ActKind::kLeakyRelu) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, p0);
  } else if constexpr (K == ActKind::kHardSigmoid) {
    return _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(v, p0, p1)));
  } else if constexpr (K == ActKind::kHardSwish) {
    const __m512 h = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    return _mm512_mul_ps(v, _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(_mm512_set1_ps(1.0f), h)));
  } else if constexpr (K == ActKind::kGelu) {
    __m512 one[1] = {v};
    gelu_lockstep<1>(one);
    return one[0];
  } else {  // kGeluTanh
    const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    const __m512 in = _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_fmadd_ps(v3, _mm512_set1_ps(0.044715f), v));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), tanh_ps(in)));
  }
}

}  // namespace dlrt::cpu::avx512

#endif  // x86
