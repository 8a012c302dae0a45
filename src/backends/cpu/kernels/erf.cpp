// The vector erf of erf.h. For a = |x|:
//   a < 0.9:  erf = a + a * P(a^2), P of degree 5 (P(0) = 2/sqrt(pi) - 1, so
//             the final fma adds a small correction to a and rounds once);
//   a >= 0.9: erf = 1 - exp(S(a) - a^2), S(a) = log(erfc(a)) + a^2 by a
//             degree-9 polynomial in a - 2.45 over [0.9, 4]; a is clamped to
//             4, where 1 - erfc already rounds to 1.
// Both are computed for every lane and blended, then the sign of x is put
// back. Coefficients: weighted least-squares fits (Lawson's iteration towards
// minimax) against double-precision erf/erfc, relative error 1.3e-8 for P and
// absolute 9.3e-9 for S, so the float evaluation dominates the error.
#include "backends/cpu/kernels/erf.h"

#include <cmath>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "backends/cpu/kernels/vec_avx2.h"
#include "backends/cpu/kernels/vec_avx512.h"
#define DLRT_ERF_X86 1
#endif

namespace dlrt::cpu {
namespace {

constexpr float kSmallBelow = 0.9f;
constexpr float kClamp = 4.0f;
constexpr float kCentre = 2.45f;
constexpr float kP[6] = {1.283791661e-01f,  -3.761255741e-01f, 1.128237993e-01f,
                         -2.678566799e-02f, 5.020301789e-03f,  -6.127733504e-04f};
constexpr float kS[10] = {-1.539039612e+00f, -3.583738804e-01f, 5.776815116e-02f, -1.130211912e-02f,
                          2.273144433e-03f,  -4.442622885e-04f, 8.217688446e-05f, -1.385292944e-05f,
                          1.611265475e-06f,  -1.833783969e-08f};

#ifdef DLRT_ERF_X86
DLRT_AVX512 inline __m512 erf_avx512(__m512 x) {
  const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
  const __m512 u = _mm512_mul_ps(ax, ax);
  __m512 p = _mm512_set1_ps(kP[5]);
  for (int k = 4; k >= 0; --k) p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(kP[k]));
  const __m512 small = _mm512_fmadd_ps(ax, p, ax);
  const __m512 a = _mm512_min_ps(ax, _mm512_set1_ps(kClamp));  // NaN: 4 (the NaN is put back below)
  const __m512 t = _mm512_sub_ps(a, _mm512_set1_ps(kCentre));
  __m512 s = _mm512_set1_ps(kS[9]);
  for (int k = 8; k >= 0; --k) s = _mm512_fmadd_ps(s, t, _mm512_set1_ps(kS[k]));
  const __m512 big = _mm512_sub_ps(_mm512_set1_ps(1.0f), avx512::exp_ps(_mm512_fnmadd_ps(a, a, s)));
  const __m512 r = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(kSmallBelow), _CMP_LT_OQ), small);
  const __m512 signed_r = _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
  return _mm512_mask_mov_ps(signed_r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

DLRT_AVX512 void erf_run_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, erf_avx512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = avx512::tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, erf_avx512(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

DLRT_AVX2 inline __m256 erf_avx2(__m256 x) {
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 u = _mm256_mul_ps(ax, ax);
  __m256 p = _mm256_set1_ps(kP[5]);
  for (int k = 4; k >= 0; --k) p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(kP[k]));
  const __m256 small = _mm256_fmadd_ps(ax, p, ax);
  const __m256 a = _mm256_min_ps(ax, _mm256_set1_ps(kClamp));
  const __m256 t = _mm256_sub_ps(a, _mm256_set1_ps(kCentre));
  __m256 s = _mm256_set1_ps(kS[9]);
  for (int k = 8; k >= 0; --k) s = _mm256_fmadd_ps(s, t, _mm256_set1_ps(kS[k]));
  const __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f), avx2::exp_ps(_mm256_fnmadd_ps(a, a, s)));
  const __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(kSmallBelow), _CMP_LT_OQ));
  const __m256 signed_r = _mm256_or_ps(r, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
  return _mm256_blendv_ps(signed_r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

DLRT_AVX2 void erf_run_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, erf_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float buf[8] = {};
    for (int64_t k = i; k < n; ++k) buf[k - i] = x[k];
    _mm256_store_ps(buf, erf_avx2(_mm256_load_ps(buf)));
    for (int64_t k = i; k < n; ++k) y[k] = buf[k - i];
  }
}
#endif

}  // namespace

void erf_f32(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
#ifdef DLRT_ERF_X86
  const CpuIsa isa = cpu_isa();
  if (isa >= CpuIsa::kAvx512) return erf_run_avx512(x, y, n);
  if (isa >= CpuIsa::kAvx2) return erf_run_avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}

}  // namespace dlrt::cpu
