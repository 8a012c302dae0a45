// ConvTranspose whose kernel windows do not overlap (stride == kernel,
// dilation 1 or kernel 1, no padding, output exactly input * stride): every
// output element is one product row of the GEMM W_g^T X_g plus the bias, so
// no col2im accumulation and no zero fill. The GEMM runs on blocks of input
// rows whose columns stay in the L2, and the block's rows are written
// straight into the output rows they tile, one task per (image, group, block).
#include <algorithm>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu::conv_detail {
namespace {

#ifdef DLRT_HAVE_AVX512_PATHS
// out[2 i] = a[i] + bias, out[2 i + 1] = b[i] + bias for i < n.
DLRT_AVX512 void interleave2_bias(const float* a, const float* b, float bias, float* out, int64_t n) {
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  const __m512 vb = _mm512_set1_ps(bias);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = avx512::tail_mask(n - i);
    const __m512 va = _mm512_add_ps(_mm512_maskz_loadu_ps(k, a + i), vb);
    const __m512 vc = _mm512_add_ps(_mm512_maskz_loadu_ps(k, b + i), vb);
    _mm512_mask_storeu_ps(out + 2 * i, avx512::tail_mask(2 * (n - i)), _mm512_permutex2var_ps(va, lo, vc));
    _mm512_mask_storeu_ps(out + 2 * i + 16, avx512::tail_mask(2 * (n - i) - 16), _mm512_permutex2var_ps(va, hi, vc));
  }
}

// col [R, nc] = W^T X for few product rows (R = Mg * kernel size <= 8, e.g.
// a one-channel head): W [Cg, R], X [Cg, nc] with row stride ldx; 2 x R
// accumulators over 32 columns, each X vector loaded once (the GEMM would
// pack X and run its 8-row tile half empty).
template <int R>
DLRT_AVX512 void few_rows_avx512(const float* W, const float* X, int64_t ldx, int64_t Cg, int64_t nc, float* col) {
  for (int64_t p = 0; p < nc; p += 32) {
    const __mmask16 k0 = avx512::tail_mask(nc - p), k1 = avx512::tail_mask(nc - p - 16);
    __m512 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < Cg; ++c) {
      const __m512 x0 = _mm512_maskz_loadu_ps(k0, X + c * ldx + p), x1 = _mm512_maskz_loadu_ps(k1, X + c * ldx + p + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 w = _mm512_set1_ps(W[c * R + r]);
        a0[r] = _mm512_fmadd_ps(w, x0, a0[r]);
        a1[r] = _mm512_fmadd_ps(w, x1, a1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(col + r * nc + p, k0, a0[r]);
      _mm512_mask_storeu_ps(col + r * nc + p + 16, k1, a1[r]);
    }
  }
}

// few_rows_avx512 for R in 1..8; false for more rows.
bool few_rows(int64_t R, const float* W, const float* X, int64_t ldx, int64_t Cg, int64_t nc, float* col) {
  switch (R) {
    case 1: few_rows_avx512<1>(W, X, ldx, Cg, nc, col); return true;
    case 2: few_rows_avx512<2>(W, X, ldx, Cg, nc, col); return true;
    case 3: few_rows_avx512<3>(W, X, ldx, Cg, nc, col); return true;
    case 4: few_rows_avx512<4>(W, X, ldx, Cg, nc, col); return true;
    case 5: few_rows_avx512<5>(W, X, ldx, Cg, nc, col); return true;
    case 6: few_rows_avx512<6>(W, X, ldx, Cg, nc, col); return true;
    case 7: few_rows_avx512<7>(W, X, ldx, Cg, nc, col); return true;
    case 8: few_rows_avx512<8>(W, X, ldx, Cg, nc, col); return true;
    default: return false;
  }
}
#endif

// col [col_rows, nc] = W_g^T X_g block.
template <typename T>
void products(const T* W, const T* X, int64_t ldx, int64_t Cg, int64_t col_rows, int64_t nc, T* col) {
#ifdef DLRT_HAVE_AVX512_PATHS
  if constexpr (std::is_same_v<T, float>) {
    if (Cg > 0 && cpu_has_avx512() && few_rows(col_rows, W, X, ldx, Cg, nc, col)) return;
  }
#endif
  gemm_t<T>(true, false, col_rows, nc, Cg, W, col_rows, X, ldx, T(0), col, nc, nullptr);
}

// One output row segment: out[iw * kw + j] = rows[j][iw] + bias (rows[j] =
// first + j * row_stride) for iw < n, j < kw.
template <typename T>
void tile_row(const T* first, int64_t row_stride, int64_t kw, T bias, T* out, int64_t n) {
#ifdef DLRT_HAVE_AVX512_PATHS
  if constexpr (std::is_same_v<T, float>) {
    if (kw == 2 && cpu_has_avx512()) return interleave2_bias(first, first + row_stride, bias, out, n);
  }
#endif
  for (int64_t j = 0; j < kw; ++j) {
    const T* src = first + j * row_stride;
    for (int64_t iw = 0; iw < n; ++iw) out[iw * kw + j] = src[iw] + bias;
  }
}

}  // namespace

bool conv_transpose_is_disjoint(const Geo3& g) {
  for (int i = 0; i < 3; ++i)
    if (g.s[i] != g.k[i] || (g.d[i] != 1 && g.k[i] != 1) || g.pb[i] != 0 || g.in[i] != g.out[i] * g.s[i]) return false;
  return true;
}

template <typename T>
void conv_transpose_disjoint(ThreadPool& pool, const T* X, const T* W, const T* B, T* Y, int64_t N, int64_t group,
                             int64_t Cg, int64_t Mg, const Geo3& g) {
  const int64_t C = Cg * group, M = Mg * group;
  const int64_t ks = g.k_size(), col_rows = Mg * ks;
  const int64_t in_rows = g.out[0] * g.out[1], in_w = g.out[2], cols = in_rows * in_w;
  const int64_t img = g.in_size();
  // Input rows per block: the block's columns (col_rows x rows * in_w) and
  // input (Cg x rows * in_w) in half the L2, and enough blocks for every thread.
  const int64_t l2 = std::max<int64_t>(device::cpu_caches().l2, 256 << 10);
  const int64_t row_bytes = (col_rows + Cg) * in_w * static_cast<int64_t>(sizeof(T));
  int64_t rows = std::clamp<int64_t>(l2 / 2 / std::max<int64_t>(1, row_bytes), 1, in_rows);
  const int64_t want_tasks = 4 * pool.num_threads();
  if (N * group * ((in_rows + rows - 1) / rows) < want_tasks)
    rows = std::max<int64_t>(1, in_rows * N * group / want_tasks);
  const int64_t blocks = (in_rows + rows - 1) / rows;
  const int64_t tasks = N * group * blocks;
  auto body = [&](int64_t b, int64_t e) {
    static thread_local AlignedScratch scratch;
    T* col = scratch.get<T>(static_cast<size_t>(col_rows * rows * in_w));
    for (int64_t t = b; t < e; ++t) {
      const int64_t blk = t % blocks, ng = t / blocks, n = ng / group, gi = ng % group;
      const int64_t r0 = blk * rows, r1 = std::min(in_rows, r0 + rows), nc = (r1 - r0) * in_w;
      products<T>(W + gi * Cg * col_rows, X + (n * C + gi * Cg) * cols + r0 * in_w, cols, Cg, col_rows, nc, col);
      for (int64_t c = 0; c < Mg; ++c) {
        T* yc = Y + (n * M + gi * Mg + c) * img;
        const T bias = B ? B[gi * Mg + c] : T(0);
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            // The kw product rows of (c, kd, kh), one input row at a time.
            const T* first = col + ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] * nc;
            for (int64_t r = r0; r < r1; ++r) {
              const int64_t id = r / g.out[1], ih = r % g.out[1];
              T* out = yc + ((id * g.s[0] + kd) * g.in[1] + ih * g.s[1] + kh) * g.in[2];
              tile_row<T>(first + (r - r0) * in_w, nc, g.k[2], bias, out, in_w);
            }
          }
      }
    }
  };
  if (tasks == 1) body(0, 1);
  else pool.parallel_for(tasks, pool.balanced_grain(tasks, 1), body);
}

template void conv_transpose_disjoint<float>(ThreadPool&, const float*, const float*, const float*, float*, int64_t,
                                             int64_t, int64_t, int64_t, const Geo3&);
template void conv_transpose_disjoint<double>(ThreadPool&, const double*, const double*, const double*, double*,
                                              int64_t, int64_t, int64_t, int64_t, const Geo3&);

}  // namespace dlrt::cpu::conv_detail
