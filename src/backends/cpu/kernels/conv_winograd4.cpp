// Winograd F(4x4, 3x3) (see conv_winograd.h), one source for every vector
// width (conv_winograd4_simd.h over simd/simd.h): 4x4 outputs per
// tile from a 6x6 input patch, 36 products per channel pair instead of 144.
// Interpolation points 0, ±1, ±2 and ∞:
//
//   Bᵀ = [4  0 -5  0  1  0]   G = [ 1/4     0    0 ]   Aᵀ = [1  1  1  1  1  0]
//        [0 -4 -4  1  1  0]       [-1/6 -1/6 -1/6 ]        [0  1 -1  2 -2  0]
//        [0  4 -4 -1  1  0]       [-1/6  1/6 -1/6 ]        [0  1  1  4  4  0]
//        [0 -2 -1  2  1  0]       [1/24 1/12  1/6 ]        [0  1 -1  8 -8  1]
//        [0  2 -1 -2  1  0]       [1/24 -1/12 1/6 ]
//        [0  4  0 -5  0  1]       [   0    0    1 ]
//
// One image: three parallel phases, like F(2x2, 3x3), run per block of
// tile rows (kWinograd4BlockBytes bounds a block's V and M):
//  1. per input channel: the rows the block's patches read copied
//     zero-padded into a buffer of the thread, then one vector of tiles at a
//     time (groups of 4 consecutive tiles of a tile row, one group per 128
//     bits, their patch rows loaded whole and transposed in registers) are
//     transformed into V [36][C][tiles of the block];
//  2. the 36 GEMMs M_e = U_e · V_e of the block;
//  3. per output channel: a vector of tiles at a time back to 4x4 outputs
//     each, transposed back into 16 consecutive output columns per group and row.
// The epilogue runs over each plane after the last block's output
// transform of it. Against one gather per patch element and one scatter
// per output (resnet18 1 thread, per conv: transforms 0.45 -> 0.24 ms).
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/scratch.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_winograd4_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

namespace {
std::atomic<uint64_t> g_runs4{0};
}  // namespace

uint64_t conv_winograd4_runs() { return g_runs4.load(std::memory_order_relaxed); }
void count_conv_winograd4_run() { g_runs4.fetch_add(1, std::memory_order_relaxed); }

std::shared_ptr<const WinogradFilters> winograd4_filters(const float* w, int64_t M, int64_t C, bool transposed) {
  static constexpr double G[6][3] = {{1.0 / 4, 0.0, 0.0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0.0, 0.0, 1.0}};
  std::vector<float> u(static_cast<size_t>(36 * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      double t[6][3];  // G g, in double: U is rounded once
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      for (int i = 0; i < 6; ++i)
        for (int l = 0; l < 6; ++l)
          u[static_cast<size_t>(((i * 6 + l) * M + m) * C + c)] =
              static_cast<float>(t[i][0] * G[l][0] + t[i][1] * G[l][1] + t[i][2] * G[l][2]);
    }
  auto f = std::make_shared<WinogradFilters>();
  f->M = M;
  f->C = C;
  f->tile = 4;
  f->transposed = transposed;
  for (int e = 0; e < 36; ++e)
    f->u.push_back(transposed ? PackedMatrix::pack_b(true, C, M, u.data() + e * M * C, C)
                              : PackedMatrix::pack_a(false, M, C, u.data() + e * M * C, C));
  return f;
}

void conv_winograd4(SimdWidth w, const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                    const GemmEpilogue& ep, ThreadPool& pool) {
  DLRT_SIMD_CALL(w, conv_winograd4, f, g, x, y, ep, pool);
  count_conv_winograd4_run();
}

void conv_winograd4(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                    const GemmEpilogue& ep, ThreadPool& pool) {
  conv_winograd4(simd_width(), f, g, x, y, ep, pool);
}

}  // namespace dlrt::cpu
