// ConvTranspose whose kernel windows do not overlap (stride == kernel,
// dilation 1 or kernel 1, no padding, output exactly input * stride): every
// output element is one product row of the GEMM W_g^T X_g plus the bias, so
// no col2im accumulation and no zero fill. The GEMM runs on blocks of input
// rows whose columns stay in the L2, and the block's rows are written
// straight into the output rows they tile, one task per (image, group, block).
#include <algorithm>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_caches.h"

#define DLRT_SIMD_BODY "backends/cpu/ops/conv_transpose_disjoint_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::conv_detail {
namespace {

// Whether the few-row products (conv_transpose_disjoint_simd.h) take col_rows
// rows rather than the GEMM. One row stays on the GEMM below 512 bits: at 256
// it took 0.46-0.9x the GEMM's time on small blocks but 1.1-2.9x on blocks of
// 900-3600 columns; 2-8 rows took 0.1-0.6x (per block, min times).
bool few_rows_win(SimdWidth width, int64_t col_rows) {
  return col_rows <= 8 && (col_rows >= 2 || width == SimdWidth::k512);
}

// col [col_rows, nc] = W_g^T X_g block.
template <typename T>
void products(const T* W, const T* X, int64_t ldx, int64_t Cg, int64_t col_rows, int64_t nc, T* col) {
  if constexpr (std::is_same_v<T, float>) {
    const SimdWidth width = simd_width();
    if (Cg > 0 && cpu_has_simd_kernels() && few_rows_win(width, col_rows) &&
        DLRT_SIMD_CALL(width, conv_transpose_few_rows, col_rows, W, X, ldx, Cg, nc, col))
      return;
  }
  gemm_t<T>(true, false, col_rows, nc, Cg, W, col_rows, X, ldx, T(0), col, nc, nullptr);
}

// One output row segment: out[iw * kw + j] = rows[j][iw] + bias (rows[j] =
// first + j * row_stride) for iw < n, j < kw.
template <typename T>
void tile_row(const T* first, int64_t row_stride, int64_t kw, T bias, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (kw == 2 && cpu_has_simd_kernels())
      return DLRT_SIMD_PICK(simd_width(), conv_transpose_interleave2_bias, first, first + row_stride, bias, out, n);
  }
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
