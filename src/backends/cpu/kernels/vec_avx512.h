// AVX-512 building blocks shared by the CPU kernels: 16-lane exp, sigmoid,
// tanh and erf approximations, horizontal reductions, masked tail helpers and
// the fused activations of activation_epilogue.h. Every function is compiled
// for AVX-512 only (DLRT_AVX512 attribute); call them only from functions with
// the same attribute, reached after cpu_has_avx512() (isa.h) said yes.
//
// Accuracy (checked against <cmath> in tests/cpu/isa_kernels_test.cpp): exp
// within a few float ulps down to ln(FLT_MIN) (0 below it: no denormals), inf
// above 88.73, NaN stays NaN; sigmoid (and SiLU) within a few ulps relative
// (exp of -|x| and a Newton-refined reciprocal, no division); tanh within
// 2e-7 absolute; erf within 3e-7 absolute.
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
#include <type_traits>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/kernels/isa_target.h"

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

// 1 / d for d in [1, 2] (or NaN): the 14-bit reciprocal estimate and one
// Newton step, y + y (1 - d y), within an ulp of the division at a fraction
// of its cost (vdivps zmm issues once per 10-16 cycles on Skylake-X).
DLRT_AVX512 inline __m512 recip_1_2_ps(__m512 d) {
  const __m512 y = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(y, _mm512_fnmadd_ps(d, y, _mm512_set1_ps(1.0f)), y);
}

DLRT_AVX512 inline __m512 sigmoid_ps(__m512 x) {
  // With e = exp(-|x|) in [0, 1] (never overflows): 1 / (1 + e) for x >= 0,
  // e / (1 + e) for x < 0, relative accuracy on both sides and no division.
  // sigmoid(-inf) = 0, sigmoid(+inf) = 1, NaN stays NaN.
  __m512 e[1] = {_mm512_or_ps(x, _mm512_set1_ps(-0.0f))};
  exp_nonpositive_lockstep<1>(e);
  const __m512 r = recip_1_2_ps(_mm512_add_ps(_mm512_set1_ps(1.0f), e[0]));
  return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), e[0], r);
}

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|); |x| < 0.25 uses the odd series.
DLRT_AVX512 inline __m512 tanh_ps(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
  __m512 e[1] = {_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f))};
  exp_nonpositive_lockstep<1>(e);
  const __m512 big = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), e[0]),
                                   recip_1_2_ps(_mm512_add_ps(_mm512_set1_ps(1.0f), e[0])));
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

// Gelu (erf form) = v Phi(v), Phi the standard normal CDF, on U vectors in
// lockstep (their dependency chains overlap). Phi on [-6, 6] is piecewise: 32
// segments of 0.375, on each a degree-5 polynomial in the position w in
// [-1/2, 1/2] about the segment's middle, its coefficients picked from
// kGeluPhiTable by the segment number with vpermt2ps (a 32-entry lookup in two
// registers). Above 6 Phi is 1 to float precision (the last segments reach
// it); below -6 it is taken as 0, so Gelu(-inf) = -inf * 0 = NaN as in the
// definition, and a NaN v stays NaN through the final product (its clamped
// copy picks a segment). Error: at most 0.29 of the tests' 3e-7 + 4e-7
// |Gelu| (tools/fit/gelu_phi_table.py fits the table and checks this); 21
// operations a vector against 33 for Abramowitz-Stegun's erf with its
// reciprocal and exp. The table, as that script prints it: gelu_phi_table.h.

// Coefficient k (of w^k) of the segments seg: a 32-entry lookup in kGeluPhiTable[k].
DLRT_AVX512 __attribute__((always_inline)) inline __m512 gelu_phi_coef(int k, __m512i seg) {
  return _mm512_permutex2var_ps(_mm512_load_ps(kGeluPhiTable[k]), seg, _mm512_load_ps(kGeluPhiTable[k] + 16));
}

template <int U>
DLRT_AVX512 __attribute__((always_inline)) inline void gelu_lockstep(__m512 (&v)[U]) {
  __m512 w[U], p[U];
  __m512i seg[U];
  // s = v / 0.375 + 15.5 for v clamped to [-6, 6] (a NaN to -6), so s is in
  // [-0.5, 31.5]; the segment is s rounded to nearest (31.5 rounds to 32,
  // capped at 31 with w = 0.5) and w = s - segment.
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i) {
    const __m512 t = _mm512_min_ps(_mm512_max_ps(v[i], _mm512_set1_ps(-6.0f)), _mm512_set1_ps(6.0f));
    const __m512 s = _mm512_fmadd_ps(t, _mm512_set1_ps(1.0f / 0.375f), _mm512_set1_ps(15.5f));
    seg[i] = _mm512_min_epi32(_mm512_cvt_roundps_epi32(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                              _mm512_set1_epi32(31));
    w[i] = _mm512_sub_ps(s, _mm512_cvtepi32_ps(seg[i]));
  }
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i) p[i] = _mm512_fmadd_ps(gelu_phi_coef(5, seg[i]), w[i], gelu_phi_coef(4, seg[i]));
#pragma GCC unroll 4
  for (int k = 3; k >= 0; --k)
#pragma GCC unroll 4
    for (int i = 0; i < U; ++i) p[i] = _mm512_fmadd_ps(p[i], w[i], gelu_phi_coef(k, seg[i]));
  // Phi = 0 below -6 (-inf included); v >= -6 or NaN keeps the polynomial.
#pragma GCC unroll 4
  for (int i = 0; i < U; ++i) {
    const __mmask16 keep = _mm512_cmp_ps_mask(v[i], _mm512_set1_ps(-6.0f), _CMP_NLT_UQ);
    v[i] = _mm512_mul_ps(v[i], _mm512_maskz_mov_ps(keep, p[i]));
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
  } else if constexpr (K == ActKind::kGeluTanh) {
    const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    const __m512 in = _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_fmadd_ps(v3, _mm512_set1_ps(0.044715f), v));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), tanh_ps(in)));
  } else {  // kSilu
    return _mm512_mul_ps(v, sigmoid_ps(v));
  }
}

// The post-affine and post-clamp of an Activation (activation_epilogue.h)
// on 16 lanes, their constants broadcast once: post_of(a)(v).
struct Post512 {
  bool affine, bounded;
  __m512 sc, sh, lo, hi;
  DLRT_AVX512 __attribute__((always_inline)) __m512 operator()(__m512 v) const {
    if (affine) v = _mm512_fmadd_ps(v, sc, sh);
    if (bounded) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));  // NaN and ties keep v (second operand)
    return v;
  }
};
DLRT_AVX512 inline Post512 post_of(const Activation& a) {
  return {a.affine, a.bounded, _mm512_set1_ps(a.scale), _mm512_set1_ps(a.shift), _mm512_set1_ps(a.lo),
          _mm512_set1_ps(a.hi)};
}

// act_ps on v[0, n) for an activation known at run time only: one branch on
// the kind for all n vectors, out of line, for output stages that store a few
// vectors per row from registers (the direct conv's tiles) where one template
// per kind would multiply their instantiations. Relu and Clip belong in the
// caller's clamp (ClampStage); they work here too. The post-affine and
// post-clamp follow.
DLRT_AVX512 __attribute__((noinline)) inline void act_ps_array(const Activation& a, __m512* v, int n) {
  const __m512 p0 = _mm512_set1_ps(a.p0), p1 = _mm512_set1_ps(a.p1);
  auto each = [&](auto kind) DLRT_AVX512 {
    for (int i = 0; i < n; ++i) v[i] = act_ps<decltype(kind)::value>(v[i], p0, p1);
  };
  switch (a.kind) {
    case ActKind::kNone: break;
    case ActKind::kRelu: each(std::integral_constant<ActKind, ActKind::kRelu>{}); break;
    case ActKind::kClip: each(std::integral_constant<ActKind, ActKind::kClip>{}); break;
    case ActKind::kSigmoid: each(std::integral_constant<ActKind, ActKind::kSigmoid>{}); break;
    case ActKind::kTanh: each(std::integral_constant<ActKind, ActKind::kTanh>{}); break;
    case ActKind::kLeakyRelu: each(std::integral_constant<ActKind, ActKind::kLeakyRelu>{}); break;
    case ActKind::kHardSigmoid: each(std::integral_constant<ActKind, ActKind::kHardSigmoid>{}); break;
    case ActKind::kHardSwish: each(std::integral_constant<ActKind, ActKind::kHardSwish>{}); break;
    case ActKind::kGelu: each(std::integral_constant<ActKind, ActKind::kGelu>{}); break;
    case ActKind::kGeluTanh: each(std::integral_constant<ActKind, ActKind::kGeluTanh>{}); break;
    case ActKind::kSilu: each(std::integral_constant<ActKind, ActKind::kSilu>{}); break;
  }
  if (a.affine || a.bounded) {
    const Post512 post = post_of(a);
    for (int i = 0; i < n; ++i) v[i] = post(v[i]);
  }
}

}  // namespace dlrt::cpu::avx512

#endif  // x86
