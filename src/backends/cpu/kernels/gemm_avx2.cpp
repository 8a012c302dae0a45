// AVX2+FMA float GEMM kernel on the 6 x 16 tile with op(A) read in place
// (see gemm_kernels.h for the contract). Each k step loads one 16-float row
// of the packed B panel (two ymm) and broadcasts one element of each A row
// straight from that row, so no A panel is packed and a tile of fewer rows
// (M = 16: tiles of 6, 6 and 4) runs only the FMAs of its real rows.
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/vec_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace dlrt::cpu {
namespace {


// Lanes [0, n) of a ymm store mask (n clamped to [0, 8]).
DLRT_AVX2 inline __m256i lane_mask(int n) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), iota);
}

// R rows x (8 * NV) columns; B panel rows kSgemmAvx2NR floats apart.
// Columns at or past nr are computed from B's zero padding and not stored.
template <int R, int NV>
DLRT_AVX2 void rows_tile(int64_t kc, const float* a, int64_t lda, const float* __restrict b, float* c,
                         int64_t ldc, float alpha, float beta, int nr, const float* pf, int64_t pf_rows,
                         const TileAdd* add) {
  constexpr int NR = kSgemmAvx2NR;
  __m256 acc[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
  const float* r[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) r[i] = a + i * lda;
  for (int64_t p = 0; p < kc; ++p) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
    if (p < pf_rows) {  // one packed B row (16 floats: one cache line) per k step
      _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
      pf += NR;
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 av = _mm256_broadcast_ss(r[i] + p);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
    b += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const bool full = nr >= 8 * NV;
  __m256i mask[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) mask[v] = lane_mask(nr - 8 * v);
  const float* cb = add ? add->col_bias : nullptr;
  const float* res = add ? add->residual : nullptr;
  __m256 bias[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
    bias[v] = !cb ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(cb + 8 * v) : _mm256_maskload_ps(cb + 8 * v, mask[v]);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* ci = c + i * ldc;
    const float* ri = res ? res + i * add->ldr : nullptr;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      __m256 x = _mm256_mul_ps(va, acc[i][v]);
      if (full) {
        if (beta == 1.0f) x = _mm256_add_ps(x, _mm256_loadu_ps(ci + 8 * v));
        else if (beta != 0.0f) x = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8 * v), x);
        if (cb) x = _mm256_add_ps(x, bias[v]);
        if (ri) x = _mm256_add_ps(x, _mm256_loadu_ps(ri + 8 * v));
        _mm256_storeu_ps(ci + 8 * v, x);
      } else {
        if (beta != 0.0f) x = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci + 8 * v, mask[v]), x);
        if (cb) x = _mm256_add_ps(x, bias[v]);
        if (ri) x = _mm256_add_ps(x, _mm256_maskload_ps(ri + 8 * v, mask[v]));
        _mm256_maskstore_ps(ci + 8 * v, mask[v], x);
      }
    }
  }
}

template <int R>
DLRT_AVX2 inline void rows_tile_cols(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                                     float alpha, float beta, int nr, const float* pf, int64_t pf_rows,
                                     const TileAdd* add) {
  if (nr > 8) return rows_tile<R, 2>(kc, a, lda, b, c, ldc, alpha, beta, nr, pf, pf_rows, add);
  rows_tile<R, 1>(kc, a, lda, b, c, ldc, alpha, beta, nr, pf, pf_rows, add);
}

// y[r] for R rows: 2R independent accumulator chains over 16 columns per
// step, x loaded once for all R rows (one chain per row is FMA-latency bound).
template <int R>
DLRT_AVX2 inline void dot_rows(int64_t cols, float alpha, const float* A, int64_t lda, const float* x, float beta,
                               float* y, int64_t incy) {
  __m256 acc0[R], acc1[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + c), x1 = _mm256_loadu_ps(x + c + 8);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(A + r * lda + c), x0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(A + r * lda + c + 8), x1, acc1[r]);
    }
  }
  if (c + 8 <= cols) {
    const __m256 x0 = _mm256_loadu_ps(x + c);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(A + r * lda + c), x0, acc0[r]);
    c += 8;
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    float s = avx2::hsum(_mm256_add_ps(acc0[r], acc1[r]));
    for (int64_t t = c; t < cols; ++t) s += A[r * lda + t] * x[t];
    float& out = y[r * incy];
    out = beta == 0.0f ? alpha * s : alpha * s + beta * out;
  }
}

}  // namespace

DLRT_AVX2 void sgemv_rows_avx2(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x,
                               float beta, float* y, int64_t incy) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot_rows<4>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
  for (; r < rows; ++r) dot_rows<1>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
}

void sgemm_kernel_avx2_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                            float alpha, float beta, int mr, int nr, const float* prefetch, int64_t pf_rows,
                            const TileAdd* add) {
  const int64_t pr = prefetch ? pf_rows : 0;
  switch (mr) {
    case 1: return rows_tile_cols<1>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
    case 2: return rows_tile_cols<2>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
    case 3: return rows_tile_cols<3>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
    case 4: return rows_tile_cols<4>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
    case 5: return rows_tile_cols<5>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
    default: return rows_tile_cols<6>(kc, a, lda, b, c, ldc, alpha, beta, nr, prefetch, pr, add);
  }
}

}  // namespace dlrt::cpu

#endif
