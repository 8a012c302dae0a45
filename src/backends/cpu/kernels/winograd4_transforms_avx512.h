// The 1-D transforms of Winograd F(4x4, 3x3) (conv_winograd.h) on AVX-512
// vectors, shared by the NCHW kernel (lanes: tiles) and the blocked one
// (lanes: channels). Include only from files built with AVX-512 paths.
#pragma once

#include "backends/cpu/kernels/vec_avx512.h"

#ifdef DLRT_HAVE_AVX512_PATHS

namespace dlrt::cpu::winograd4 {

// y = Bᵀ x for one 6-vector (x and y may not alias).
DLRT_AVX512 __attribute__((always_inline)) inline void bt6(const __m512 (&x)[6], __m512 (&y)[6]) {
  const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(-5.0f), two = _mm512_set1_ps(2.0f);
  y[0] = _mm512_fmadd_ps(four, x[0], _mm512_fmadd_ps(five, x[2], x[4]));
  y[1] = _mm512_fnmadd_ps(four, _mm512_add_ps(x[1], x[2]), _mm512_add_ps(x[3], x[4]));
  y[2] = _mm512_fmadd_ps(four, _mm512_sub_ps(x[1], x[2]), _mm512_sub_ps(x[4], x[3]));
  y[3] = _mm512_fmadd_ps(two, _mm512_sub_ps(x[3], x[1]), _mm512_sub_ps(x[4], x[2]));
  y[4] = _mm512_fmadd_ps(two, _mm512_sub_ps(x[1], x[3]), _mm512_sub_ps(x[4], x[2]));
  y[5] = _mm512_fmadd_ps(four, x[1], _mm512_fmadd_ps(five, x[3], x[5]));
}

// y = Aᵀ x for one 6-vector.
DLRT_AVX512 __attribute__((always_inline)) inline void at6(const __m512 (&x)[6], __m512 (&y)[4]) {
  const __m512 p12 = _mm512_add_ps(x[1], x[2]), m12 = _mm512_sub_ps(x[1], x[2]);
  const __m512 p34 = _mm512_add_ps(x[3], x[4]), m34 = _mm512_sub_ps(x[3], x[4]);
  y[0] = _mm512_add_ps(_mm512_add_ps(x[0], p12), p34);
  y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), m34, m12);
  y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), p34, p12);
  y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), m34, m12), x[5]);
}

// The second pass of Bᵀ d B: column k of h (h[r]: patch row r after the
// first pass) transformed, out[i] the element (i, k).
DLRT_AVX512 __attribute__((always_inline)) inline void bt6_column(const __m512 (&h)[6][6], int k, __m512 (&out)[6]) {
  const __m512 col[6] = {h[0][k], h[1][k], h[2][k], h[3][k], h[4][k], h[5][k]};
  bt6(col, out);
}

}  // namespace dlrt::cpu::winograd4

#endif  // DLRT_HAVE_AVX512_PATHS
