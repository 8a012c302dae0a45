// AVX-512F float GEMM microkernels (see gemm_kernels.h for the contract).
// Each k step loads one NR-wide row of the packed B panel (NR/16 zmm) and
// broadcasts MR values of the packed A column into MR*NR/16 FMAs; the
// MR x NR tile of C stays in zmm registers for the whole kc loop. Edge tiles
// store through k-masks (columns) and skip rows past mr, so they need no
// scratch tile; a narrow edge (nr <= NR - 16) also skips the FMAs of the
// all-padding zmm columns.
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace dlrt::cpu {
namespace {


// One k step of an R x (16*NV) tile: NV loads of B (the packed row at bp),
// R broadcasts of A (column p of the rows r[i]), R*NV FMAs.
template <int R, int NV>
DLRT_AVX512F_FMA __attribute__((always_inline)) inline void rows_step(__m512 (&acc)[R][NV], const float* const* r,
                                                                int64_t p, const float* bp) {
  __m512 bv[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(bp + 16 * v);
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const __m512 av = _mm512_set1_ps(r[i][p]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
  }
}

// R x (16*NV) tile with A read in place: row i from ar[i] (k step 1), B a
// packed panel (rows NR floats apart). Writes rows [0, mr) through `mask`.
template <int R, int NV, int NR>
DLRT_AVX512F_FMA __attribute__((always_inline)) inline void tile_rows_avx512(int64_t kc, const float* const* ar,
                                                                       const float* __restrict b, float* c,
                                                                       int64_t ldc, float alpha, float beta, int mr,
                                                                       const __mmask16* mask, const float* pf,
                                                                       int64_t pf_rows, const TileAdd* add) {
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * NV - 1), _MM_HINT_T0);
  }
  const float* r[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) r[i] = ar[i];
  // The prefetch of the next panel: pf_rows packed B rows (NR floats each),
  // one cache line every kPfEvery k steps rather than a row per step, so the
  // misses to DRAM it starts are spread over the tile and leave line fill
  // buffers for the tile's own loads.
  constexpr int kPfEvery = 4;
  const int64_t lines = pf_rows * (NR / 16), groups = kc / kPfEvery;
  int64_t p = 0;
  if (lines > 0 && groups > 0) {
    // Lines per group of kPfEvery steps: all of them within the tile's steps.
    // One or two lines per group (the common cases: 1 thread, and 2 threads
    // splitting the rows) get loops of their own with a fixed prefetch count.
    // With a counted inner prefetch loop GCC kept the prefetch pointer on the
    // stack, spilled a zmm register and added register moves to the 24 FMAs
    // of each step. A last group of two may touch one line past the share;
    // a prefetch never faults.
    const int64_t per = (lines + groups - 1) / groups, pf_steps = kPfEvery * ((lines + per - 1) / per);
    if (per == 1) {
      for (; p < pf_steps; p += kPfEvery, pf += 16) {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += NR) rows_step<R, NV>(acc, r, p + u, b);
      }
    } else if (per == 2) {
      for (; p < pf_steps; p += kPfEvery, pf += 32) {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T1);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += NR) rows_step<R, NV>(acc, r, p + u, b);
      }
    } else {
      for (int64_t left = lines; p < pf_steps; p += kPfEvery, left -= per) {
        for (int64_t l = 0; l < per && l < left; ++l, pf += 16)
          _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += NR) rows_step<R, NV>(acc, r, p + u, b);
      }
    }
  }
  // Unrolled: the loop's scalar uops (counter, pointers, branch) otherwise
  // take an FMA port now and then.
#pragma GCC unroll 4
  for (; p < kc; ++p) {
    rows_step<R, NV>(acc, r, p, b);
    b += NR;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  const __m512 vb = _mm512_set1_ps(beta);
  const float* cb = add ? add->col_bias : nullptr;
  const float* res = add ? add->residual : nullptr;
  __m512 bias[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bias[v] = cb ? _mm512_maskz_loadu_ps(mask[v], cb + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      __m512 x = _mm512_mul_ps(va, acc[i][v]);
      if (beta == 1.0f) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v));
      else if (beta != 0.0f) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v), x);
      if (cb) x = _mm512_add_ps(x, bias[v]);
      if (res) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], res + i * add->ldr + 16 * v));
      _mm512_mask_storeu_ps(ci + 16 * v, mask[v], x);
    }
  }
}

// R x (16*NV) tile (R <= AS rows of an A panel whose columns are AS floats
// apart; B panel rows NR floats apart, NV*16 <= NR). With ROWS, A is not
// packed: row i of the tile is A's row-major row a + i*lda (k step 1); rows
// at or past mr read row mr-1 (computed, never stored), so nothing past A's
// last row is touched.
template <int R, int NV, int NR, int AS, bool ROWS = false>
DLRT_AVX512F_FMA __attribute__((always_inline)) inline void tile_avx512(int64_t kc, const float* __restrict a,
                                                                  const float* __restrict b, float* c, int64_t ldc,
                                                                  float alpha, float beta, int mr,
                                                                  const __mmask16* mask, int64_t lda = 0,
                                                                  const float* pf = nullptr, int64_t pf_rows = 0,
                                                                  const TileAdd* add = nullptr) {
  if constexpr (ROWS) {
    const float* ar[R];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) ar[i] = a + static_cast<int64_t>(i < mr ? i : mr - 1) * lda;
    tile_rows_avx512<R, NV, NR>(kc, ar, b, c, ldc, alpha, beta, mr, mask, pf, pf ? pf_rows : 0, add);
    return;
  }
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  // The C rows are read (beta != 0) or written after the loop: start their lines moving now.
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * NV - 1), _MM_HINT_T0);
  }
  // The next A panel (contiguous after this one in the packed A) is what the
  // next tile reads: pull it in while this tile computes (pre-packed weights
  // that serve few columns, e.g. 512 x 49, otherwise stream from DRAM at the
  // kernel's pace).
  const float* a_next = a + AS * kc;
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    _mm_prefetch(reinterpret_cast<const char*>(a_next + p * AS), _MM_HINT_T1);
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
    a += AS;
    b += NR;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      __m512 r = _mm512_mul_ps(va, acc[i][v]);
      if (beta == 1.0f) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v));
      else if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v), r);
      _mm512_mask_storeu_ps(ci + 16 * v, mask[v], r);
    }
  }
}

// A last panel with NC < 8 real columns (N = 49 leaves 1, N = 196 leaves 4):
// vectorised over the 8 rows of the A panel instead of over columns, so each
// k step costs NC 8-lane FMAs instead of 8 zmm FMAs. Column j's accumulators
// are U partial sums over k (enough independent chains to hide FMA latency).
template <int NC, int NR>
DLRT_AVX512F_FMA __attribute__((always_inline)) inline void narrow_edge(int64_t kc, const float* __restrict a,
                                                                      const float* __restrict b, float* c,
                                                                      int64_t ldc, float alpha, float beta, int mr) {
  constexpr int U = NC == 1 ? 4 : NC <= 3 ? 3 : 2;
  __m256 acc[NC][U];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) acc[j][u] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + U <= kc; p += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const __m256 av = _mm256_load_ps(a + (p + u) * 8);
#pragma GCC unroll 8
      for (int j = 0; j < NC; ++j)
        acc[j][u] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(b + (p + u) * NR + j), acc[j][u]);
    }
  }
  for (; p < kc; ++p) {
    const __m256 av = _mm256_load_ps(a + p * 8);
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) acc[j][0] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(b + p * NR + j), acc[j][0]);
  }
  alignas(32) float col[NC][8];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j) {
    __m256 s = acc[j][0];
#pragma GCC unroll 4
    for (int u = 1; u < U; ++u) s = _mm256_add_ps(s, acc[j][u]);
    _mm256_store_ps(col[j], _mm256_mul_ps(_mm256_set1_ps(alpha), s));
  }
  for (int i = 0; i < mr; ++i) {
    float* ci = c + i * ldc;
    for (int j = 0; j < NC; ++j) ci[j] = beta == 0.0f ? col[j][i] : col[j][i] + beta * ci[j];
  }
}

// Edge tile of R <= 4 real rows (M = 49: one row in the last panel): only
// R rows of FMAs, on the zmm columns that hold output.
template <int R, int MR, int NR>
DLRT_AVX512F_FMA inline void short_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                   float beta, int mr, int nv, const __mmask16* mask) {
  constexpr int NV = NR / 16;
  if constexpr (NV >= 2) {
    if (nv == 1) return tile_avx512<R, 1, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
  }
  if constexpr (NV >= 3) {
    if (nv == 2) return tile_avx512<R, 2, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
  }
  tile_avx512<R, NV, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
}

template <int MR, int NR, bool kNarrow = true>
DLRT_AVX512F_FMA inline void kernel_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                      float beta, int mr, int nr) {
  constexpr int NV = NR / 16;
  static_assert(NR % 16 == 0 && NV >= 1 && NV <= 4, "NR: 16, 32, 48 or 64");
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const int left = nr - 16 * v;
    mask[v] = left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << left) - 1u);
  }
  if (mr == MR && nr == NR) {
    tile_avx512<MR, NV, NR, MR>(kc, a, b, c, ldc, alpha, beta, MR, mask);
    return;
  }
  if constexpr (MR == 8 && kNarrow) {
    switch (nr) {
      case 1: return narrow_edge<1, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      case 2: return narrow_edge<2, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      case 3: return narrow_edge<3, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      case 4: return narrow_edge<4, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      case 5: return narrow_edge<5, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      case 6: return narrow_edge<6, NR>(kc, a, b, c, ldc, alpha, beta, mr);
      default: break;
    }
  }
  const int nv = (nr + 15) / 16;  // zmm columns holding real output
  if constexpr (MR == 8 && NR / 16 <= 3) {
    if (mr == 1) return short_tile<1, MR, NR>(kc, a, b, c, ldc, alpha, beta, mr, nv, mask);
    if (mr == 2) return short_tile<2, MR, NR>(kc, a, b, c, ldc, alpha, beta, mr, nv, mask);
    if (mr <= 4) return short_tile<4, MR, NR>(kc, a, b, c, ldc, alpha, beta, mr, nv, mask);
  }
  if constexpr (NV >= 2) {
    if (nv == 1) return tile_avx512<MR, 1, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
  }
  if constexpr (NV >= 3) {
    if (nv == 2) return tile_avx512<MR, 2, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
  }
  if constexpr (NV >= 4) {
    if (nv == 3) return tile_avx512<MR, 3, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
  }
  tile_avx512<MR, NV, NR, MR>(kc, a, b, c, ldc, alpha, beta, mr, mask);
}

}  // namespace

DLRT_AVX512F_FMA void sgemm_kernel_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                     float beta, int mr, int nr) {
  kernel_avx512<kSgemmAvx512MR, kSgemmAvx512NR>(kc, a, b, c, ldc, alpha, beta, mr, nr);
}

DLRT_AVX512F_FMA void sgemm_kernel_avx512_uniform(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                 float alpha, float beta, int mr, int nr) {
  kernel_avx512<kSgemmAvx512MR, kSgemmAvx512NR, false>(kc, a, b, c, ldc, alpha, beta, mr, nr);
}

namespace {
// R rows (A in place) on the nv zmm columns that hold output.
template <int R, int NR>
DLRT_AVX512F_FMA inline void rows_tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                                  float alpha, float beta, int mr, int nv, const __mmask16* mask, const float* pf,
                                  int64_t pr, const TileAdd* add) {
  if (nv == 1)
    return tile_avx512<R, 1, NR, kSgemmAvx512MR, true>(kc, a, b, c, ldc, alpha, beta, mr, mask, lda, pf, pr, add);
  if (nv == 2)
    return tile_avx512<R, 2, NR, kSgemmAvx512MR, true>(kc, a, b, c, ldc, alpha, beta, mr, mask, lda, pf, pr, add);
  tile_avx512<R, NR / 16, NR, kSgemmAvx512MR, true>(kc, a, b, c, ldc, alpha, beta, mr, mask, lda, pf, pr, add);
}
}  // namespace

DLRT_AVX512F_FMA void sgemm_kernel_avx512_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c,
                                          int64_t ldc, float alpha, float beta, int mr, int nr,
                                          const float* prefetch, int64_t pf_rows, const TileAdd* add) {
  constexpr int MR = kSgemmAvx512MR, NR = kSgemmAvx512NR, NV = NR / 16;
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const int left = nr - 16 * v;
    mask[v] = left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << left) - 1u);
  }
  const int nv = (nr + 15) / 16;  // zmm columns holding real output
  const float* pf = prefetch;
  const int64_t pr = prefetch ? pf_rows : 0;
  if (mr == MR && nv == NV)
    return tile_avx512<MR, NV, NR, MR, true>(kc, a, b, c, ldc, alpha, beta, mr, mask, lda, pf, pr, add);
  if (mr == 1) return rows_tile<1, NR>(kc, a, lda, b, c, ldc, alpha, beta, mr, nv, mask, pf, pr, add);
  if (mr == 2) return rows_tile<2, NR>(kc, a, lda, b, c, ldc, alpha, beta, mr, nv, mask, pf, pr, add);
  if (mr <= 4) return rows_tile<4, NR>(kc, a, lda, b, c, ldc, alpha, beta, mr, nv, mask, pf, pr, add);
  rows_tile<MR, NR>(kc, a, lda, b, c, ldc, alpha, beta, mr, nv, mask, pf, pr, add);
}

namespace {
DLRT_AVX512F_FMA inline float hsum(__m512 v) {
  // Through memory: GCC 12's lane-extract intrinsics trip -Wuninitialized.
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  float s8[8];
  for (int i = 0; i < 8; ++i) s8[i] = t[i] + t[i + 8];
  return ((s8[0] + s8[4]) + (s8[1] + s8[5])) + ((s8[2] + s8[6]) + (s8[3] + s8[7]));
}

// y[r] for R rows: 2R independent accumulator chains over 32 columns per step.
template <int R>
DLRT_AVX512F_FMA inline void dot_rows(int64_t cols, float alpha, const float* A, int64_t lda, const float* x, float beta,
                                 float* y, int64_t incy) {
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 32 <= cols; c += 32) {
    const __m512 x0 = _mm512_loadu_ps(x + c), x1 = _mm512_loadu_ps(x + c + 16);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(A + r * lda + c), x0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(_mm512_loadu_ps(A + r * lda + c + 16), x1, acc1[r]);
    }
  }
  for (; c < cols; c += 16) {
    const int64_t left = cols - c;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + c);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc0[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, A + r * lda + c), xv, acc0[r]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const float s = hsum(_mm512_add_ps(acc0[r], acc1[r]));
    float& out = y[r * incy];
    out = beta == 0.0f ? alpha * s : alpha * s + beta * out;
  }
}
}  // namespace

DLRT_AVX512F_FMA void sgemv_rows_avx512(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda,
                                   const float* x, float beta, float* y, int64_t incy) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot_rows<4>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
  for (; r < rows; ++r) dot_rows<1>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
}

DLRT_AVX512F_FMA void sgemm_pack_a8_avx512(const float* A, int64_t lda, int64_t kc, float* dst) {
  const float* r[8];
  for (int i = 0; i < 8; ++i) r[i] = A + i * lda;
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    // 8 x 8 transpose: rows i of A (8 columns p..p+7) -> packed columns p..p+7 (8 rows each).
    const __m256 x0 = _mm256_loadu_ps(r[0] + p), x1 = _mm256_loadu_ps(r[1] + p);
    const __m256 x2 = _mm256_loadu_ps(r[2] + p), x3 = _mm256_loadu_ps(r[3] + p);
    const __m256 x4 = _mm256_loadu_ps(r[4] + p), x5 = _mm256_loadu_ps(r[5] + p);
    const __m256 x6 = _mm256_loadu_ps(r[6] + p), x7 = _mm256_loadu_ps(r[7] + p);
    const __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
    const __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
    const __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
    const __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    float* d = dst + p * 8;
    _mm256_storeu_ps(d + 0, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 16, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 32, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 40, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 48, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 56, _mm256_permute2f128_ps(u3, u7, 0x31));
  }
  for (; p < kc; ++p)
    for (int i = 0; i < 8; ++i) dst[p * 8 + i] = r[i][p];
}

}  // namespace dlrt::cpu

#endif
