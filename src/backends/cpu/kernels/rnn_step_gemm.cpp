// The step products of the recurrent layers (rnn_step_gemm.h).
#include "backends/cpu/kernels/rnn_step_gemm.h"

#include <algorithm>
#include <type_traits>

#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx512.h"

namespace dlrt::cpu {
#if defined(__x86_64__)
namespace {

// C[M, N] += A[M, K] B[K, N] for the recurrence's few rows (the batch); the
// wrappers below compile it for AVX-512 and AVX2, where the loop over n
// vectorises.
__attribute__((always_inline)) inline void few_rows_gemm_acc(int64_t M, int64_t N, int64_t K, const float* A,
                                                             int64_t lda, const float* B, int64_t ldb, float* C,
                                                             int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    float* __restrict c = C + i * ldc;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * lda + k];
      const float* __restrict b = B + k * ldb;
      for (int64_t n = 0; n < N; ++n) c[n] += a * b[n];
    }
  }
}

// R rows of C[:, n0, n0 + 16 NV) kept in registers over the whole K (a loop
// that loads and stores C for every k is store-bound: 12K cycles per LSTM
// step of 512 x 128 on Zen 5); B's row k is loaded once for the R rows, as
// 16 NV contiguous floats (rows of R^T are read front to back: 1 KiB runs
// that the prefetchers stream from L2). Full blocks load without masks: 16
// masks do not fit the 8 mask registers, and their spills and reloads made
// the step about 1.5x slower on a Sapphire Rapids VM (1 row x 512 x 128: 3.7
// against 5.4 us). kMasked: the last columns, `cols` of them (< 16 NV).
template <int R, int NV, bool kMasked>
DLRT_AVX512 void rows_block_avx512(int64_t cols, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                                   float* C, int64_t ldc) {
  __mmask16 mk[NV];
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) mk[v] = kMasked ? avx512::tail_mask(cols - 16 * v) : static_cast<__mmask16>(0xFFFF);
  __m512 acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v)
      acc[r][v] = kMasked ? _mm512_maskz_loadu_ps(mk[v], C + r * ldc + 16 * v) : _mm512_loadu_ps(C + r * ldc + 16 * v);
  for (int64_t k = 0; k < K; ++k) {
    const float* b = B + k * ldb;
    __m512 bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) bv[v] = kMasked ? _mm512_maskz_loadu_ps(mk[v], b + 16 * v) : _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(A[r * lda + k]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(a, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) {
      if constexpr (kMasked) _mm512_mask_storeu_ps(C + r * ldc + 16 * v, mk[v], acc[r][v]);
      else _mm512_storeu_ps(C + r * ldc + 16 * v, acc[r][v]);
    }
}

// Columns [0, N) for R rows: blocks of 16 NV, then the rest in unmasked
// blocks of 8, 4, 2 and 1 vectors, then one masked vector.
template <int R, int NV>
DLRT_AVX512 void rows_gemm_acc_avx512(int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                                      float* C, int64_t ldc) {
  int64_t n0 = 0;
  for (; n0 + 16 * NV <= N; n0 += 16 * NV) rows_block_avx512<R, NV, false>(0, K, A, lda, B + n0, ldb, C + n0, ldc);
  auto rest = [&](auto nv) DLRT_AVX512 {
    constexpr int kNv = decltype(nv)::value;
    if (kNv < NV && n0 + 16 * kNv <= N) {
      rows_block_avx512<R, kNv, false>(0, K, A, lda, B + n0, ldb, C + n0, ldc);
      n0 += 16 * kNv;
    }
  };
  rest(std::integral_constant<int, 8>{});
  rest(std::integral_constant<int, 4>{});
  rest(std::integral_constant<int, 2>{});
  rest(std::integral_constant<int, 1>{});
  if (n0 < N) rows_block_avx512<R, 1, true>(N - n0, K, A, lda, B + n0, ldb, C + n0, ldc);
}

}  // namespace

DLRT_AVX512 void few_rows_gemm_acc_avx512(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                                          int64_t ldb, float* C, int64_t ldc) {
  // Up to 4 rows at a time; accumulators and B vectors within the 32 zmm.
  for (int64_t i = 0; i < M;) {
    switch (std::min<int64_t>(4, M - i)) {
      case 4: rows_gemm_acc_avx512<4, 6>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 4; break;
      case 3: rows_gemm_acc_avx512<3, 8>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 3; break;
      case 2: rows_gemm_acc_avx512<2, 12>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 2; break;
      default: rows_gemm_acc_avx512<1, 16>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 1; break;
    }
  }
}
DLRT_AVX2 void few_rows_gemm_acc_avx2(int64_t M, int64_t N, int64_t K, const float* A,
                                                                int64_t lda, const float* B, int64_t ldb, float* C,
                                                                int64_t ldc) {
  few_rows_gemm_acc(M, N, K, A, lda, B, ldb, C, ldc);
}
#endif

}  // namespace dlrt::cpu
