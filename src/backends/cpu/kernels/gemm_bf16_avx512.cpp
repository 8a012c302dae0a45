// The bf16 GEMM's AVX512-BF16 pieces (contracts in gemm_bf16.h): the
// VDPBF16PS register tile and the VCVTNE2PS2BF16 conversion of A panels.
// Each pair step loads one packed B row (NV zmm of 16 bf16 pairs) and
// broadcasts kBf16MR A pairs into kBf16MR * NV dot products; the tile stays
// in zmm registers for the whole K, so a lane's sum is the scalar model's
// sequence of steps exactly.
// Per ISA, not on kernels/simd/: VDPBF16PS and VCVTNE2PS2BF16 are AVX512-BF16
// instructions with no AVX2 or generic form; the packing, blocking and scalar
// model around them are width-free code in gemm_bf16.cpp.
#include <algorithm>

#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__)
#if !defined(__clang__)
// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(),
// which the uninitialized-use warnings report once inlined: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace dlrt::cpu {
namespace {

inline __mmask16 lanes(int n) { return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }

template <int NV>
DLRT_AVX512_BF16 __attribute__((always_inline)) inline void tile(int64_t kp, const uint32_t* __restrict a,
                                                                 const uint32_t* __restrict b, float* c, int64_t ldc,
                                                                 float alpha, float beta, int mr, int nr) {
  constexpr int R = kBf16MR;
  __m512 acc[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t p = 0; p < kp; ++p, a += R, b += kBf16NR) {
    __m512bh bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, bv[v]);
    }
  }
  __mmask16 mask[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) mask[v] = lanes(nr - 16 * v);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      __m512 x = _mm512_mul_ps(va, acc[i][v]);
      if (beta != 0.0f) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v), x);
      _mm512_mask_storeu_ps(ci + 16 * v, mask[v], x);
    }
  }
}

}  // namespace

DLRT_AVX512_BF16 void bf16_kernel_avx512(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                                         float alpha, float beta, int mr, int nr) {
  static_assert(kBf16NR == 48, "the tile is three zmm wide");
  // A narrow edge panel skips the dot products of its all-padding vectors.
  if (nr > 32)
    tile<3>(kp, a, b, c, ldc, alpha, beta, mr, nr);
  else if (nr > 16)
    tile<2>(kp, a, b, c, ldc, alpha, beta, mr, nr);
  else
    tile<1>(kp, a, b, c, ldc, alpha, beta, mr, nr);
}

DLRT_AVX512_BF16 void bf16_pack_a_panel_avx512(const float* A, int64_t lda, int mr, int64_t K, uint32_t* dst) {
  // 32 columns of a row give 16 pairs: VCVTNE2PS2BF16 writes its second
  // operand's 16 values to words 0-15 and its first's to 16-31, so with
  // (cols 16-31, cols 0-15) word w is column w and dword q the pair (2q, 2q+1).
  const int64_t kp = (K + 1) / 2;
  for (int r = 0; r < kBf16MR; ++r) {
    if (r >= mr) {
      for (int64_t p = 0; p < kp; ++p) dst[p * kBf16MR + r] = 0;
      continue;
    }
    const float* row = A + r * lda;
    alignas(64) uint32_t pairs[16];
    for (int64_t k = 0; k < K; k += 32) {
      const int64_t n = std::min<int64_t>(32, K - k);
      const __m512 lo = _mm512_maskz_loadu_ps(lanes(static_cast<int>(n)), row + k);
      const __m512 hi = _mm512_maskz_loadu_ps(lanes(static_cast<int>(n - 16)), row + k + 16);
      _mm512_store_si512(pairs, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      const int64_t np = (n + 1) / 2;
      for (int64_t q = 0; q < np; ++q) dst[(k / 2 + q) * kBf16MR + r] = pairs[q];
    }
  }
}

DLRT_AVX512_BF16 void bf16_pack_b_panel_avx512(const float* B, int64_t ldb, int64_t K, int nr, uint32_t* dst) {
  // Rows 2p and 2p + 1 converted together put row 2p's 16 words first; the
  // permute interleaves them into (row 2p, row 2p + 1) pairs per column.
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                       5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const int64_t kp = (K + 1) / 2;
  for (int64_t p = 0; p < kp; ++p) {
    const float* r0 = B + 2 * p * ldb;
    const bool has_odd = 2 * p + 1 < K;
    for (int v = 0; v < kBf16NR / 16; ++v) {
      const __mmask16 m = lanes(nr - 16 * v);
      const __m512 x0 = _mm512_maskz_loadu_ps(m, r0 + 16 * v);
      const __m512 x1 = has_odd ? _mm512_maskz_loadu_ps(m, r0 + ldb + 16 * v) : _mm512_setzero_ps();
      const __m512i w = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);
      _mm512_storeu_si512(dst + p * kBf16NR + 16 * v, _mm512_permutexvar_epi16(idx, w));
    }
  }
}

}  // namespace dlrt::cpu
#endif
