// The blocked GEMM's tile step, and its whole-B form for a pre-packed A and a
// B of few columns on several threads (a conv on a small plane: W times the
// im2col rows of a 10x4 output). Internal to gemm.cpp.
//
// The slice-by-slice loop (gemm_blocked) packs each K slice of B and then
// splits that slice's tiles over the threads: two parallel sections per
// slice, the packing on one thread where B has few panels. With a K of
// several slices (243 channels x 3x3 taps: 2187 deep) those barriers and
// the serial packing left a second thread 1.1-1.2x. Here every slice of B
// is packed once, in one parallel section, into a buffer laid out as a
// packed operand (slice p0 at round_up(N, NR) * p0, panel j at j * NR * kc
// within it), and then one parallel section runs the tiles: each task owns
// a block of C (a run of row tiles x a run of panels) and sweeps every K
// slice itself. A tile sees the same slices in the same order with the same
// kernel as in gemm_blocked, so the result is bit for bit that of one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/gemm_internal.h"

namespace dlrt::cpu::gemm_detail {

// One MR x NR tile (mr x nr valid) of C += a * b over one K slice, with the
// epilogue `ep` (null: none) at (i, j) after it; `tile`: an MR x NR scratch
// for kernels without an edge form.
template <typename T, int MR, int NR>
inline void gemm_tile(const Kernels<T>& kernels, int64_t kc, const T* apanel, const T* bpanel, T* cblk, int64_t ldc,
                      T alpha, T beta, int64_t mr, int64_t nr, const GemmEpilogue* ep, int64_t i, int64_t j, T* tile) {
  if (mr == MR && nr == NR) {
    kernels.full(kc, apanel, bpanel, cblk, ldc, alpha, beta);
  } else if (kernels.edge) {
    kernels.edge(kc, apanel, bpanel, cblk, ldc, alpha, beta, static_cast<int>(mr), static_cast<int>(nr));
  } else {
    kernels.full(kc, apanel, bpanel, tile, NR, alpha, T(0));
    for (int64_t r = 0; r < mr; ++r) {
      T* crow = cblk + r * ldc;
      const T* trow = tile + r * NR;
      if (beta == T(0)) {
        for (int64_t c = 0; c < nr; ++c) crow[c] = trow[c];
      } else {
        for (int64_t c = 0; c < nr; ++c) crow[c] = trow[c] + beta * crow[c];
      }
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (ep) kernels.epilogue(*ep, cblk, ldc, i, j, mr, nr);
  }
}

// Whether gemm_whole_b takes an M x N x K product on `threads` threads:
// several threads, K of two or more slices of depth KC, N within one
// column block of `nc` columns, and all of packed B within the L2
// (`l2_bytes`, 0 if unknown: never). A task reads each slice of it once,
// for all its tiles, from L2 or the other core's cache; the bound keeps
// the buffer small.
template <typename T, int NR>
bool whole_b_fits(int64_t N, int64_t K, int64_t KC, int64_t nc, int threads, int64_t l2_bytes) {
  const int64_t np = (N + NR - 1) / NR * NR;
  return threads > 1 && K > KC && N <= nc && l2_bytes > 0 && np * K * int64_t{sizeof(T)} <= l2_bytes;
}

// C = alpha * A * B + beta * C with A packed for every slice (slice p0 at
// a_packed + round_up(M, MR) * p0, row panel i at i * kc within it) and B
// packed here into `bp` (round_up(N, NR) * K elements) by
// pack(dst, p0, kc, panel_begin, panel_end), which writes panels of slice p0
// at dst + panel * NR * kc. `ep`: applied to each tile after its last slice.
template <typename T, int MR, int NR, typename Pack>
void gemm_whole_b(const Kernels<T>& kernels, int64_t M, int64_t N, int64_t K, int64_t KC, T alpha, const T* a_packed,
                  const Pack& pack, T* bp, T beta, T* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool& pool) {
  const int64_t np = (N + NR - 1) / NR * NR, mp = (M + MR - 1) / MR * MR, panels = np / NR;
  const int64_t slices = (K + KC - 1) / KC, threads = pool.num_threads();
  // Packing: (slice, panel) units.
  par_for(pool, slices * panels, 1, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t p0 = (u / panels) * KC, kc = std::min(KC, K - p0), panel = u % panels;
      pack(bp + np * p0, p0, kc, panel, panel + 1);
    }
  });
  // Tiles: row tiles split over the threads, panels too where the rows are
  // fewer than two tiles per thread.
  const int64_t row_tiles = mp / MR;
  const int64_t mblocks = std::min(row_tiles, threads);
  const int64_t nsplit = row_tiles >= 2 * threads ? 1 : std::min(panels, (threads + mblocks - 1) / mblocks);
  const int64_t rt_per = (row_tiles + mblocks - 1) / mblocks, pn_per = (panels + nsplit - 1) / nsplit;
  const GemmEpilogue* tile_ep = nullptr;
  if constexpr (std::is_same_v<T, float>) tile_ep = ep && !ep->empty() ? ep : nullptr;
  par_for(pool, mblocks * nsplit, 1, [&](int64_t tb, int64_t te) {
    alignas(64) T tile[MR * NR];
    for (int64_t t = tb; t < te; ++t) {
      const int64_t i0 = (t / nsplit) * rt_per * MR, i1 = std::min(M, i0 + rt_per * MR);
      const int64_t pb = (t % nsplit) * pn_per, pe = std::min(panels, pb + pn_per);
      for (int64_t p0 = 0; p0 < K; p0 += KC) {
        const int64_t kc = std::min(KC, K - p0);
        const T beta_eff = p0 == 0 ? beta : T(1);
        const GemmEpilogue* last_ep = p0 + kc >= K ? tile_ep : nullptr;
        for (int64_t panel = pb; panel < pe; ++panel) {
          const int64_t jr = panel * NR, nr = std::min<int64_t>(NR, N - jr);
          const T* bpanel = bp + np * p0 + jr * kc;
          for (int64_t i = i0; i < i1; i += MR)
            gemm_tile<T, MR, NR>(kernels, kc, a_packed + mp * p0 + i * kc, bpanel, C + i * ldc + jr, ldc, alpha,
                                 beta_eff, std::min<int64_t>(MR, M - i), nr, last_ep, i, jr, tile);
        }
      }
    }
  });
}

}  // namespace dlrt::cpu::gemm_detail
