// AVX-512F float GEMM microkernel (see gemm_kernels.h for the contract).
// Each k step loads one 32-wide row of the packed B panel (two zmm) and
// broadcasts MR values of the packed A column into 2*MR FMAs; the MR x 32
// tile of C stays in zmm registers for the whole kc loop. Edge tiles store
// through k-masks (columns) and skip rows past mr, so they need no scratch.
#include "backends/cpu/gemm_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace dlrt::cpu {
namespace {

#define DLRT_AVX512 __attribute__((target("avx512f")))

template <int MR>
DLRT_AVX512 __attribute__((always_inline)) inline void tile_avx512(int64_t kc, const float* __restrict a,
                                                                  const float* __restrict b, float* c, int64_t ldc,
                                                                  float alpha, float beta, int mr, __mmask16 m0,
                                                                  __mmask16 m1) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i] = _mm512_setzero_ps();
    acc1[i] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
    b += 32;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      if (i >= mr) break;
      float* ci = c + i * ldc;
      _mm512_mask_storeu_ps(ci, m0, _mm512_mul_ps(va, acc0[i]));
      _mm512_mask_storeu_ps(ci + 16, m1, _mm512_mul_ps(va, acc1[i]));
    }
  } else if (beta == 1.0f) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      if (i >= mr) break;
      float* ci = c + i * ldc;
      _mm512_mask_storeu_ps(ci, m0, _mm512_fmadd_ps(va, acc0[i], _mm512_maskz_loadu_ps(m0, ci)));
      _mm512_mask_storeu_ps(ci + 16, m1, _mm512_fmadd_ps(va, acc1[i], _mm512_maskz_loadu_ps(m1, ci + 16)));
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      if (i >= mr) break;
      float* ci = c + i * ldc;
      _mm512_mask_storeu_ps(ci, m0, _mm512_fmadd_ps(va, acc0[i], _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, ci))));
      _mm512_mask_storeu_ps(ci + 16, m1,
                            _mm512_fmadd_ps(va, acc1[i], _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m1, ci + 16))));
    }
  }
}

}  // namespace

DLRT_AVX512 void sgemm_kernel_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                     float beta, int mr, int nr) {
  static_assert(kSgemmAvx512NR == 32, "two zmm per row");
  if (mr == kSgemmAvx512MR && nr == kSgemmAvx512NR) {
    tile_avx512<kSgemmAvx512MR>(kc, a, b, c, ldc, alpha, beta, kSgemmAvx512MR, 0xFFFF, 0xFFFF);
    return;
  }
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << nr) - 1u);
  const __mmask16 m1 = nr <= 16 ? __mmask16(0) : static_cast<__mmask16>((1u << (nr - 16)) - 1u);
  tile_avx512<kSgemmAvx512MR>(kc, a, b, c, ldc, alpha, beta, mr, m0, m1);
}

}  // namespace dlrt::cpu

#endif
