// Blocked GEMM (BLIS-style loop nest): for each KC slice of K, op(A) is packed
// into MR-row panels and op(B) into NR-column panels; each task of the
// parallel loop takes one MC x (part of NC) block of C and sweeps the packed
// panels with a register-tiled microkernel that keeps an MR x NR tile of C in
// registers.
#include "backends/cpu/kernels/gemm.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/gemm_blocking.h"
#include "backends/cpu/kernels/gemm_internal.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/gemm_whole_b.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/packed_store.h"
#include "backends/cpu/scratch.h"
#include "core/env.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu {
namespace {

using namespace gemm_detail;

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Per-thread packing buffers that only grow, so steady-state calls allocate
// nothing. Slot kScratchA/kScratchB belong to the thread driving a GEMM (its
// tasks only read them); kScratchRow is used inside pack tasks. The pool runs
// one job's chunks at a time on each thread and nested work inline, so a
// slot is never used by two GEMMs on one thread at once.
enum ScratchSlot { kScratchA = 0, kScratchB = 1, kScratchRow = 2, kScratchSlots = 3 };
template <typename T>
T* scratch(int slot, size_t n) {
  thread_local AlignedScratch slots[kScratchSlots];
  return slots[slot].get<T>(std::max<size_t>(n, 1), AlignedScratch::Growth::kByHalf);
}

// The MR of the tile NR columns wide for T (the float AVX-512 and AVX2 tiles, the double tile).
template <typename T, int NR>
constexpr int tile_mr() {
  if constexpr (sizeof(T) == 8) return kDMR;
  return NR == kSgemmAvx512NR ? kSgemmAvx512MR : kSMR;
}

// The block sizes of the tile on this machine's caches (gemm_blocking.h): a
// KC x NR sliver of packed B in L1 (8 x 48 on a 48 KiB 12-way L1: 192 deep,
// 36 KiB), an MC x KC block of A in half of L2, a KC x NC block of B in L2
// (AVX-512) or L3 (AVX2).
template <typename T, int NR>
const GemmBlocking& blocks() {
  return machine_gemm_blocking<tile_mr<T, NR>(), NR, static_cast<int>(sizeof(T))>();
}

// Depth of the K slices for a K-long product (same rule for packed operands and on-the-fly packing).
// On the AVX-512 tile a float K of up to two slices' depth is one slice:
// its B sliver then streams from L2 instead of staying in L1, but each tile
// of C is stored once, not stored, reloaded and stored again (about 1% on
// minilm_l6, docs/performance-decisions.md).
template <typename T, int NR>
int64_t kc_for(int64_t K) {
  const int64_t kKC = blocks<T, NR>().kc;
  if (K <= 0) return 8;  // no slices; still a valid depth for the scratch sizes
  if (sizeof(T) == 4 && NR >= 32 && K <= 2 * kKC) return round_up(K, 8);
  const int64_t kslices = ceil_div(K, kKC);
  return round_up(ceil_div(K, kslices), 8);
}

// DLRT_GEMM_PACK_A=1: pack op(A) even against a pre-packed B (the blocked
// path), to compare the two in one build.
bool rows_a_disabled() {
  static const bool off = [] {
    const char* e = env::get("DLRT_GEMM_PACK_A");
    return e && e[0] == '1';
  }();
  return off;
}

// Packs rows [i0, i0+mc) x cols [p0, p0+kc) of op(A) into MR-row panels,
// zero-padding the last panel.
template <typename T, int MR>
void pack_a(bool trans, const T* A, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* dst) {
  SgemmPackPanel pack_panel = nullptr;
  if constexpr (std::is_same_v<T, float>) pack_panel = trans ? nullptr : sgemm_pack_panel_for(MR);
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = std::min<int64_t>(MR, mc - ir);
    T* d = dst + ir * kc;
    if (!trans) {
      // op(A)(i, p) = A[i*lda + p]: read each row contiguously.
      if constexpr (std::is_same_v<T, float>) {
        if (mr == MR && pack_panel) {  // transposes in vector registers
          pack_panel(A + (i0 + ir) * lda + p0, lda, kc, d);
          continue;
        }
      }
      if (mr == MR) {
        // MR row streams in step, contiguous stores.
        const T* src[MR];
        for (int r = 0; r < MR; ++r) src[r] = A + (i0 + ir + r) * lda + p0;
        for (int64_t p = 0; p < kc; ++p)
          for (int r = 0; r < MR; ++r) d[p * MR + r] = src[r][p];
      } else {
        std::fill(d, d + MR * kc, T(0));
        for (int64_t r = 0; r < mr; ++r) {
          const T* src = A + (i0 + ir + r) * lda + p0;
          for (int64_t p = 0; p < kc; ++p) d[p * MR + r] = src[p];
        }
      }
    } else {
      // op(A)(i, p) = A[p*lda + i]: each packed column is contiguous in A.
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = A + (p0 + p) * lda + i0 + ir;
        T* dp = d + p * MR;
        int64_t r = 0;
        for (; r < mr; ++r) dp[r] = src[r];
        for (; r < MR; ++r) dp[r] = T(0);
      }
    }
  }
}

// Packs rows [p0, p0+kc) x cols [j0, j0+nc) of op(B) into NR-column panels,
// panel by panel in [panel_begin, panel_end).
template <typename T, int NR>
void pack_b(bool trans, const T* B, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc, T* dst,
            int64_t panel_begin, int64_t panel_end) {
  if (!trans) {
    // op(B)(p, j) = B[p*ldb + j]: walk each row of B once, left to right (rows
    // are far apart; reading a row sequentially lets the prefetcher stream it).
    const int64_t full_end = std::min(panel_end, nc / NR);
    for (int64_t p = 0; p < kc; ++p) {
      const T* src = B + (p0 + p) * ldb + j0;
      for (int64_t panel = panel_begin; panel < full_end; ++panel)
        std::memcpy(dst + panel * NR * kc + p * NR, src + panel * NR, NR * sizeof(T));
      if (full_end < panel_end) {  // the ragged last panel (memcpy and memset: the C library's widest vectors)
        const int64_t jr = full_end * NR, nr = nc - jr;
        T* dp = dst + jr * kc + p * NR;
        std::memcpy(dp, src + jr, static_cast<size_t>(nr) * sizeof(T));
        std::memset(static_cast<void*>(dp + nr), 0, static_cast<size_t>(NR - nr) * sizeof(T));  // all-zero bits: +0
      }
    }
    return;
  }
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const int64_t jr = panel * NR;
    const int64_t nr = std::min<int64_t>(NR, nc - jr);
    T* d = dst + jr * kc;
    {
      // op(B)(p, j) = B[j*ldb + p]: read each B row contiguously.
      if (nr < NR) std::fill(d, d + NR * kc, T(0));
      for (int64_t j = 0; j < nr; ++j) {
        const T* src = B + (j0 + jr + j) * ldb + p0;
        for (int64_t p = 0; p < kc; ++p) d[p * NR + j] = src[p];
      }
    }
  }
}

template <typename T>
void scale_c(int64_t M, int64_t N, T beta, T* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    T* c = C + i * ldc;
    if (beta == T(0)) {
      std::fill(c, c + N, T(0));
    } else if (beta != T(1)) {
      for (int64_t j = 0; j < N; ++j) c[j] *= beta;
    }
  }
}

// Packs op(B) supplied row by row by a BRowSource: each row segment lands in a
// small contiguous buffer first, then is split into the NR-column panels.
template <int NR>
void pack_b_rows(const BRowSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst,
                 int64_t panel_begin, int64_t panel_end) {
  const int64_t jb = panel_begin * NR, je = std::min(nc, panel_end * NR);
  // Sized for the whole block, not this task's share of it: which thread
  // packs which panels changes from run to run, and a share larger than
  // any its thread had packed before would grow the scratch on a warm run.
  float* r = scratch<float>(kScratchRow, static_cast<size_t>(round_up(nc, NR)));
  std::fill(r + (je - jb), r + round_up(je - jb, NR), 0.0f);
  for (int64_t p = 0; p < kc; ++p) {
    src(p0 + p, j0 + jb, je - jb, r);
    for (int64_t panel = panel_begin; panel < panel_end; ++panel)
      std::memcpy(dst + panel * NR * kc + p * NR, r + (panel - panel_begin) * NR, NR * sizeof(float));
  }
}

// `a_slice(p0, kc, tp)` returns op(A)[:, p0:p0+kc] packed in MR-row panels
// (packing it if needed, with tp's help); `b_block(p0, kc, j0, nc, tp)`
// returns that block of op(B) packed in NR-column panels. `ep` (float only)
// is applied to each tile after its last K slice.
template <typename T, int MR, int NR, typename ASlice, typename BBlock>
void gemm_blocked(Kernels<T> kernels, int64_t M, int64_t N, int64_t K, int64_t KC, T alpha, const ASlice& a_slice,
                  const BBlock& b_block, T beta, T* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == T(0)) {
    scale_c(M, N, beta, C, ldc);
    if constexpr (std::is_same_v<T, float>) {
      if (ep) apply_epilogue(*ep, C, ldc, 0, 0, M, N);
    }
    return;
  }
  // Block sizes (KC: the caller's, kc_for or a packed operand's): an MC x
  // KC block of A stays in L2, a KC x NR sliver of B in L1.
  const int64_t kMC = blocks<T, NR>().mc;
  const int64_t NC = std::min<int64_t>(blocks<T, NR>().nc, round_up(N, NR));

  const double flops = 2.0 * static_cast<double>(M) * N * K;
  ThreadPool* tp = (pool && pool->num_threads() > 1 && flops > 2.0e5) ? pool : nullptr;
  const int threads = tp ? tp->num_threads() : 1;

  // Rows per M block: at most kMC, balanced (with kMC 336, 512 rows run as 2 x 256, not 336 + 176).
  const int64_t mc_default = round_up(ceil_div(M, ceil_div(M, kMC)), MR);
  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    const T beta_eff = p0 == 0 ? beta : T(1);
    const bool last = p0 + kc >= K;
    const GemmEpilogue* tile_ep = nullptr;
    if constexpr (std::is_same_v<T, float>) tile_ep = last && ep && !ep->empty() ? ep : nullptr;
    const T* ap = a_slice(p0, kc, tp);

    for (int64_t j0 = 0; j0 < N; j0 += NC) {
      const int64_t nc = std::min(NC, N - j0);
      const int64_t bpanels = ceil_div(nc, NR);
      const T* bp = b_block(p0, kc, j0, nc, tp);

      // Split the N range into sub-blocks when M alone gives too few tasks.
      int64_t nsplit = 1;
      int64_t mc = mc_default;
      int64_t mblocks = ceil_div(M, mc);
      if (threads > 1) {
        const int64_t want = static_cast<int64_t>(threads) * 3;
        nsplit = std::clamp<int64_t>(ceil_div(want, mblocks), 1, std::max<int64_t>(1, bpanels / 4));
        if (mblocks * nsplit < threads) {
          // Fewer tasks than threads (few columns, e.g. 256 x 196): smaller M
          // blocks so every thread gets work. Only then: a B panel read by
          // several M blocks on different cores crosses between their caches.
          const int64_t mb = std::min(ceil_div(M, MR), ceil_div(want, nsplit));
          mc = round_up(ceil_div(M, mb), MR);
          mblocks = ceil_div(M, mc);
        }
      }
      const int64_t panels_per_split = ceil_div(bpanels, nsplit);
      nsplit = ceil_div(bpanels, panels_per_split);

      auto task = [&](int64_t tb_, int64_t te_) {
        alignas(64) T tile[MR * NR];
        for (int64_t t = tb_; t < te_; ++t) {
          const int64_t mb = t / nsplit, ns = t % nsplit;
          const int64_t i_begin = mb * mc, i_end = std::min(M, i_begin + mc);
          const int64_t pb = ns * panels_per_split, pe = std::min(bpanels, pb + panels_per_split);
          for (int64_t panel = pb; panel < pe; ++panel) {
            const int64_t jr = panel * NR;
            const int64_t nr = std::min<int64_t>(NR, nc - jr);
            const T* bpanel = bp + jr * kc;
            for (int64_t i = i_begin; i < i_end; i += MR)
              gemm_tile<T, MR, NR>(kernels, kc, ap + i * kc, bpanel, C + i * ldc + j0 + jr, ldc, alpha, beta_eff,
                                   std::min<int64_t>(MR, M - i), nr, tile_ep, i, j0 + jr, tile);
          }
        }
      };
      const int64_t ntasks = mblocks * nsplit;
      if (tp && ntasks > 1) par_for(*tp, ntasks, 1, task);
      else task(0, ntasks);
    }
  }
}

// Packs op(A)[:, p0:p0+kc] into the calling thread's A scratch.
template <typename T, int MR, int NR>
const T* pack_a_slice(bool ta, const T* A, int64_t lda, int64_t M, int64_t K, int64_t p0, int64_t kc,
                      ThreadPool* tp) {
  T* ap = scratch<T>(kScratchA, static_cast<size_t>(round_up(M, MR) * std::max(kc, kc_for<T, NR>(K))));
  const int64_t apanels = ceil_div(M, MR);
  auto pack_a_range = [&](int64_t b, int64_t e) {
    const int64_t i0 = b * MR, i1 = std::min(M, e * MR);
    pack_a<T, MR>(ta, A, lda, i0, i1 - i0, p0, kc, ap + i0 * kc);
  };
  if (tp && apanels >= 8) par_for(*tp, apanels, 4, pack_a_range);
  else pack_a_range(0, apanels);
  return ap;
}

// Packs a block of op(B) (panels from `pack(dst, panel_begin, panel_end)`) into the B scratch.
template <typename T, int NR, typename Pack>
const T* pack_b_block(int64_t K, int64_t N, int64_t kc, int64_t nc, ThreadPool* tp, const Pack& pack) {
  T* bp = scratch<T>(kScratchB, static_cast<size_t>(std::min<int64_t>(blocks<T, NR>().nc, round_up(N, NR)) *
                                                    std::max(kc, kc_for<T, NR>(K))));
  const int64_t bpanels = ceil_div(nc, NR);
  auto pack_b_range = [&](int64_t b, int64_t e) { pack(bp, b, e); };
  if (tp && bpanels >= 8) par_for(*tp, bpanels, 4, pack_b_range);
  else pack_b_range(0, bpanels);
  return bp;
}

// The tile of an fp32 packed operand. Only pack_a/pack_b below make
// PackedMatrix, always with one of these two tiles (kBf16x3 operands never
// get here), so another tile is a bug, not an input: debug builds check it.
SLayout layout_of(const PackedMatrix& pm) {
  assert((pm.mr() == kSgemmAvx512MR && pm.nr() == kSgemmAvx512NR) || (pm.mr() == kSMR && pm.nr() == kSNR));
  return pm.mr() == kSgemmAvx512MR && pm.nr() == kSgemmAvx512NR ? SLayout::kAvx512 : SLayout::k6x16;
}

void set_tile(SLayout layout, int& mr, int& nr) {
  switch (layout) {
    case SLayout::kAvx512: mr = kSgemmAvx512MR; nr = kSgemmAvx512NR; return;
    default: mr = kSMR; nr = kSNR; return;
  }
}

// Blocked float GEMM on an MR x NR tile (packed operands must use that layout).
template <int MR, int NR>
void sgemm_tiled(Kernels<float> kernels, int64_t M, int64_t N, int64_t K, float alpha, const SgemmOperand& a,
                 const SgemmOperand& b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
  auto a_slice = [&](int64_t p0, int64_t kc, ThreadPool* tp) -> const float* {
    if (a.packed) return a.packed->data() + round_up(M, MR) * p0;
    return pack_a_slice<float, MR, NR>(a.trans, a.data, a.ld, M, K, p0, kc, tp);
  };
  auto b_block = [&](int64_t p0, int64_t kc, int64_t j0, int64_t nc, ThreadPool* tp) -> const float* {
    if (b.packed) return b.packed->data() + round_up(N, NR) * p0 + j0 * kc;
    if (b.rows) {
      return pack_b_block<float, NR>(K, N, kc, nc, tp, [&](float* dst, int64_t pb, int64_t pe) {
        pack_b_rows<NR>(*b.rows, p0, kc, j0, nc, dst, pb, pe);
      });
    }
    return pack_b_block<float, NR>(K, N, kc, nc, tp, [&](float* dst, int64_t pb, int64_t pe) {
      pack_b<float, NR>(b.trans, b.data, b.ld, p0, kc, j0, nc, dst, pb, pe);
    });
  };
  // Packed operands fix the K slices (sgemm_ex checks that two packed ones agree).
  const int64_t KC = a.packed ? packed_kc(*a.packed) : b.packed ? packed_kc(*b.packed) : kc_for<float, NR>(K);
  // Pre-packed A, B of few columns, several slices, several threads: every
  // slice of B packed at once, one parallel section (gemm_whole_b.h).
  const int threads = pool && 2.0 * static_cast<double>(M) * N * K > 2.0e5 ? pool->num_threads() : 1;
  const int64_t NC = blocks<float, NR>().nc;
  if (a.packed && !b.packed && M > 0 && N > 0 && alpha != 0.0f &&
      whole_b_fits<float, NR>(N, K, KC, NC, threads, device::cpu_caches().l2)) {
    float* bp = scratch<float>(kScratchB, static_cast<size_t>(round_up(N, NR) * K));
    auto pack = [&](float* dst, int64_t p0, int64_t kc, int64_t pb, int64_t pe) {
      if (b.rows) pack_b_rows<NR>(*b.rows, p0, kc, 0, N, dst, pb, pe);
      else pack_b<float, NR>(b.trans, b.data, b.ld, p0, kc, 0, N, dst, pb, pe);
    };
    return gemm_whole_b<float, MR, NR>(kernels, M, N, K, KC, alpha, a.packed->data(), pack, bp, beta, C, ldc, ep,
                                       *pool);
  }
  gemm_blocked<float, MR, NR>(kernels, M, N, K, KC, alpha, a_slice, b_block, beta, C, ldc, ep, pool);
}

// The epilogue for the tiles a rows kernel (gemm_kernels.h) stores.
using TileEpilogue = void (*)(const GemmEpilogue&, float*, int64_t, int64_t, int64_t, int64_t, int64_t);

// op(A) row-major in place (no A packing) against a pre-packed B on an
// MR x NR tile (a Linear layer: activations times constant weights). One
// parallel section for the whole product: each task owns a block of C (rows
// x a run of B panels) and sweeps every K slice itself, so there is no
// barrier per K slice and no shared packed A; tasks split N before M, since
// splitting N costs nothing here (no A block is packed twice). Blocks of
// blocks<float, NR>().mc rows of A, kept in L2 across the block's panels.
template <int MR, int NR>
void sgemm_rows_a_packed_b(SgemmRowsKernel kernel, TileEpilogue tile_epilogue, int64_t M, int64_t N, int64_t K,
                           float alpha, const float* A, int64_t lda, const PackedMatrix& packed_b, float beta,
                           float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
  const int64_t kMC = blocks<float, NR>().mc;
  const int64_t kPC = blocks<float, NR>().nc / NR;  // panels per block (a KC x NC block of B in L2)
  const int64_t KC = packed_kc(packed_b);            // the slices pack_b_whole used
  const int64_t Np = round_up(N, NR), bpanels = Np / NR;
  const double flops = 2.0 * static_cast<double>(M) * N * K;
  ThreadPool* tp = (pool && pool->num_threads() > 1 && flops > 2.0e5) ? pool : nullptr;
  const int64_t threads = tp ? tp->num_threads() : 1;

  int64_t mblocks = ceil_div(M, kMC), nblocks = ceil_div(bpanels, kPC);
  if (threads > 1) {
    // A row block per thread at least (columns split only to give each
    // thread a task), taken row-block major below: each thread then reads
    // only its own rows of A (which it usually wrote in the op before) and
    // all of B; split by columns, each thread read all of A. Few rows (fewer
    // than 4 row tiles per thread: minilm at sequence 16 or 32) split the
    // columns only: streaming B is then most of the work, and a row split
    // made every thread stream all of it. One task per thread, not more: a
    // task's panels then follow each other under the next-panel prefetch.
    // Measured on 2-vCPU Xeon VMs: docs/performance-decisions.md, "GEMM".
    const int64_t want = threads;
    const bool split_rows = ceil_div(M, MR) >= 4 * threads;
    if (mblocks < threads && split_rows) mblocks = std::min(ceil_div(M, MR), int64_t{threads});
    if (mblocks * nblocks < want) nblocks = std::min(bpanels, ceil_div(want, mblocks));
  }
  const bool row_major = threads > 1;
  const int64_t mc = round_up(ceil_div(M, mblocks), MR);
  mblocks = ceil_div(M, mc);
  // As many tasks as a multiple of the threads, of panel runs that differ by
  // one panel at most: the pool deals equal runs of tasks, and 22 panels in
  // blocks of at most 10 had made 3 tasks of 8, 8 and 6 panels, two of them
  // on one thread (a 1024-column Linear at 2 threads ran 1.3x faster than at
  // 1, against 1.9x for 768 columns).
  if (threads > 1)
    while ((mblocks * nblocks) % threads != 0 && nblocks < bpanels) ++nblocks;
  nblocks = std::min(nblocks, bpanels);
  // The column bias and the residual go in with the last K slice's store
  // (TileAdd); the epilogue then runs only for what is left (a row bias, an
  // activation). minilm_l6's projections (bias + residual, no activation)
  // then make one pass over each tile instead of two.
  const bool fuse_add = ep && !ep->row_bias && (ep->col_bias || ep->residual);
  GemmEpilogue rest;
  if (ep) rest = *ep;
  if (fuse_add) rest.col_bias = rest.residual = nullptr;
  const bool use_ep = !rest.empty();

  auto task = [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      // One thread: column-block major, consecutive tasks share their B
      // block. Several: row-block major, a thread's tasks share its rows.
      const int64_t nb = row_major ? t % nblocks : t / mblocks, mb = row_major ? t / nblocks : t % mblocks;
      const int64_t i_begin = mb * mc, i_end = std::min(M, i_begin + mc);
      const int64_t pb = nb * bpanels / nblocks, pe = (nb + 1) * bpanels / nblocks;
      const int64_t tiles = ceil_div(i_end - i_begin, MR);  // row tiles per panel
      for (int64_t p0 = 0; p0 < K; p0 += KC) {
        const int64_t kc = std::min(KC, K - p0);
        const float beta_eff = p0 == 0 ? beta : 1.0f;
        const bool last = p0 + kc >= K;
        const float* bslice = packed_b.data() + Np * p0;
        for (int64_t panel = pb; panel < pe; ++panel) {
          const int64_t jr = panel * NR;
          const int nr = static_cast<int>(std::min<int64_t>(NR, N - jr));
          const float* bpanel = bslice + jr * kc;
          // The panel this task reads next (this slice's next one, or the
          // first of the next slice): the row tiles of this panel pull it
          // toward L2 together, each a share of its rows, so a weight matrix
          // read from DRAM arrives ahead of the kernel even when a panel
          // serves many row tiles.
          const float* next = nullptr;
          int64_t next_rows = 0;
          if (panel + 1 < pe) {
            next = bpanel + NR * kc;
            next_rows = kc;
          } else if (!last) {
            next_rows = std::min(KC, K - p0 - kc);
            next = packed_b.data() + Np * (p0 + kc) + pb * NR * next_rows;
          }
          const int64_t share = ceil_div(next_rows, tiles);
          for (int64_t i = i_begin, ti = 0; i < i_end; i += MR, ++ti) {
            const int mr = static_cast<int>(std::min<int64_t>(MR, M - i));
            float* cblk = C + i * ldc + jr;
            const int64_t pf_begin = std::min(next_rows, ti * share);
            const int64_t pf_rows = std::min(next_rows, pf_begin + share) - pf_begin;
            TileAdd add;
            if (last && fuse_add) {
              add.col_bias = ep->col_bias ? ep->col_bias + jr : nullptr;
              add.residual = ep->residual ? ep->residual + i * ep->ldr + jr : nullptr;
              add.ldr = ep->ldr;
            }
            kernel(kc, A + i * lda + p0, lda, bpanel, cblk, ldc, alpha, beta_eff, mr, nr,
                   pf_rows > 0 ? next + pf_begin * NR : nullptr, pf_rows, last && fuse_add ? &add : nullptr);
            if (last && use_ep) tile_epilogue(rest, cblk, ldc, i, jr, mr, nr);
          }
        }
      }
    }
  };
  const int64_t ntasks = mblocks * nblocks;
  if (tp && ntasks > 1) par_for(*tp, ntasks, 1, task);
  else task(0, ntasks);
}

template <int MR, int NR>
void pack_a_whole(bool trans, int64_t M, int64_t K, const float* A, int64_t lda, float* dst) {
  const int64_t Mp = round_up(M, MR);
  const int64_t KC = kc_for<float, NR>(K);
  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    cpu::pack_a<float, MR>(trans, A, lda, 0, M, p0, kc, dst + Mp * p0);
  }
}

template <int NR>
void pack_b_whole(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, float* dst) {
  const int64_t Np = round_up(N, NR);
  const int64_t KC = kc_for<float, NR>(K);
  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0);
    // The whole N range as one block: NC blocks of a GEMM are runs of its panels.
    cpu::pack_b<float, NR>(trans, B, ldb, p0, kc, 0, N, dst + Np * p0, 0, ceil_div(N, NR));
  }
}

}  // namespace

void PackedMatrix::Free::operator()(float* p) const { packed_free(p, bytes); }

void PackedMatrix::init(bool is_a, int64_t rows, int64_t cols, int mr, int nr, GemmPrecision precision,
                        size_t bytes) {
  is_a_ = is_a;
  rows_ = rows;
  cols_ = cols;
  mr_ = mr;
  nr_ = nr;
  precision_ = precision;
  bytes_ = bytes;
  data_ = std::unique_ptr<float[], Free>(static_cast<float*>(packed_alloc(bytes)), Free{bytes});
}

std::shared_ptr<const PackedMatrix> PackedMatrix::pack_a(bool trans, int64_t M, int64_t K, const float* A,
                                                         int64_t lda, GemmPrecision precision) {
  auto pm = std::make_shared<PackedMatrix>();
  if (is_amx_precision(precision) && !trans && amx_engine() != AmxEngine::kNone) {
    pm->init(true, M, K, 16, 32, precision, amx_packed_a_bytes(precision, M, K));
    amx_pack_a(precision, M, K, A, lda, pm->data_.get());
    return pm;
  }
  const SLayout layout = pick_slayout();
  int mr = 0, nr = 0;
  set_tile(layout, mr, nr);
  const int64_t Mp = round_up(std::max<int64_t>(M, 1), mr);
  pm->init(true, M, K, mr, nr, GemmPrecision::kF32, static_cast<size_t>(Mp * std::max<int64_t>(K, 1)) * sizeof(float));
  pm->kc_ = layout == SLayout::kAvx512 ? kc_for<float, kSgemmAvx512NR>(K) : kc_for<float, kSNR>(K);
  if (M > 0 && K > 0) {
    if (layout == SLayout::kAvx512) pack_a_whole<kSgemmAvx512MR, kSgemmAvx512NR>(trans, M, K, A, lda, pm->data_.get());
    else pack_a_whole<kSMR, kSNR>(trans, M, K, A, lda, pm->data_.get());
  }
  return pm;
}

int64_t packed_kc(const PackedMatrix& pm) { return pm.kc_; }

// bf16's tiles are 32 columns wide (pack_a, pack_b above), VDPBF16PS's panels kBf16NR.
static_assert(kBf16NR != 32);
bool packed_for_amx(const PackedMatrix& pm) {
  return pm.precision() == GemmPrecision::kBf16x3 || (pm.precision() == GemmPrecision::kBf16 && pm.nr() == 32);
}

bool PackedMatrix::unpack(float* out) const {
  if (precision_ != GemmPrecision::kF32) return false;
  // op(A)(i, p) and op(B)(p, j) alike: the tiled dimension (A's rows, B's
  // columns) in panels of `t`, K in slices of kc_ (packed_kc's layout).
  const int64_t t = is_a_ ? mr_ : nr_, K = is_a_ ? cols_ : rows_, R = is_a_ ? rows_ : cols_;
  const int64_t Rp = round_up(std::max<int64_t>(R, 1), t);
  for (int64_t p0 = 0; p0 < K; p0 += kc_) {
    const int64_t kc = std::min(kc_, K - p0);
    for (int64_t r = 0; r < R; ++r) {
      const float* src = data_.get() + Rp * p0 + (r / t) * t * kc + r % t;
      for (int64_t p = 0; p < kc; ++p) {
        const float v = src[p * t];
        if (is_a_)
          out[r * K + p0 + p] = v;
        else
          out[(p0 + p) * R + r] = v;
      }
    }
  }
  return true;
}

std::shared_ptr<const PackedMatrix> PackedMatrix::pack_b(bool trans, int64_t K, int64_t N, const float* B,
                                                         int64_t ldb, GemmPrecision precision) {
  auto pm = std::make_shared<PackedMatrix>();
  if (is_amx_precision(precision) && amx_engine() != AmxEngine::kNone) {
    pm->init(false, K, N, 32, 32, precision, amx_packed_b_bytes(precision, K, N));
    amx_pack_b(precision, trans, K, N, B, ldb, pm->data_.get());
    return pm;
  }
  if (precision == GemmPrecision::kBf16) {  // the same bytes on every CPU (gemm_bf16.h)
    pm->init(false, K, N, kBf16MR, kBf16NR, GemmPrecision::kBf16, bf16_packed_b_bytes(K, N));
    bf16_pack_b(trans, K, N, B, ldb, pm->data_.get());
    return pm;
  }
  const SLayout layout = pick_slayout();
  int mr = 0, nr = 0;
  set_tile(layout, mr, nr);
  const int64_t Np = round_up(std::max<int64_t>(N, 1), nr);
  pm->init(false, K, N, mr, nr, GemmPrecision::kF32, static_cast<size_t>(Np * std::max<int64_t>(K, 1)) * sizeof(float));
  pm->kc_ = layout == SLayout::kAvx512 ? kc_for<float, kSgemmAvx512NR>(K) : kc_for<float, kSNR>(K);
  if (N > 0 && K > 0) {
    if (layout == SLayout::kAvx512) pack_b_whole<kSgemmAvx512NR>(trans, K, N, B, ldb, pm->data_.get());
    else pack_b_whole<kSNR>(trans, K, N, B, ldb, pm->data_.get());
  }
  return pm;
}

Status sgemm_ex(int64_t M, int64_t N, int64_t K, float alpha, const SgemmOperand& a, const SgemmOperand& b, float beta,
              float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return Status::Ok();
  if (ep && ep->empty()) ep = nullptr;
  // One row or column: the GEMV on the unpacked operands (also for a B packed for AMX, where
  // a 16-row tile would be mostly padding); not with uniform_edges (it sums in another order).
  if (a.data && b.data && !b.rows && !b.uniform_edges &&
      try_gemv(a.trans, b.trans, M, N, K, alpha, a.data, a.ld, b.data, b.ld, beta, C, ldc, pool)) {
    if (ep) apply_epilogue(*ep, C, ldc, 0, 0, M, N);
    return Status::Ok();
  }
  if (a.packed && packed_for_amx(*a.packed)) {
    const bool b_fits = !b.packed && !b.trans && (b.data || b.rows);
    if (b_fits && amx_engine() != AmxEngine::kNone) {
      amx_gemm_packed_a(a.packed->precision(), M, N, K, alpha, a.packed->data(), b.data, b.ld, b.rows, beta, C, ldc,
                        ep, pool);
      return Status::Ok();
    }
    if (!a.data)
      return InvalidArgument(
          "sgemm_ex: A was packed for AMX, which cannot run this call, and has no unpacked copy (pass A's data too)");
    SgemmOperand plain_a = a;
    plain_a.packed = nullptr;
    return sgemm_ex(M, N, K, alpha, plain_a, b, beta, C, ldc, ep, pool);
  }
  if (b.packed && b.packed->precision() == GemmPrecision::kBf16 && !packed_for_amx(*b.packed)) {  // VDPBF16PS or its model
    if (!a.packed && a.data) bf16_gemm(M, N, K, alpha, a.data, a.ld, a.trans, b.packed->data(), beta, C, ldc, ep, pool);
    return a.packed || !a.data ? InvalidArgument("sgemm_ex: a B packed for bf16 needs a plain A") : Status::Ok();
  }
  if (b.packed && packed_for_amx(*b.packed)) {
    if (a.packed || !a.data) return InvalidArgument("sgemm_ex: a B packed for AMX needs a plain (unpacked) A");
    if (amx_engine() != AmxEngine::kNone) {
      amx_gemm(b.packed->precision(), M, N, K, alpha, a.data, a.ld, a.trans, b.packed->data(), beta, C, ldc, ep, pool);
      return Status::Ok();
    }
    if (!b.data)
      return InvalidArgument(
          "sgemm_ex: B was packed for AMX, which this thread may no longer use, and has no unpacked copy (pass B's data "
          "too)");
    SgemmOperand plain_b = b;
    plain_b.packed = nullptr;
    return sgemm_ex(M, N, K, alpha, a, plain_b, beta, C, ldc, ep, pool);
  }
  // Pre-packed operands fix the tile; otherwise the current ISA picks it.
  SLayout layout = pick_slayout();
  if (a.packed) layout = layout_of(*a.packed);
  if (b.packed) {
    const SLayout lb = layout_of(*b.packed);
    if (a.packed && lb != layout)
      return InvalidArgument(
          "sgemm_ex: A and B were packed for different tile layouts (the CPU ISA changed between); pack them again");
    if (a.packed && packed_kc(*a.packed) != packed_kc(*b.packed))
      return InvalidArgument("sgemm_ex: A and B were packed in K slices of different depths; pack them again");
    layout = lb;
  }
  // A plain row-major op(A) against a pre-packed B: A is read in place.
  if (b.packed && !a.packed && a.data && !a.trans && K > 0 && alpha != 0.0f && !rows_a_disabled()) {
    const RowsPath rows = rows_path_for(layout);
    if (rows.kernel && layout == SLayout::kAvx512) {
      sgemm_rows_a_packed_b<kSgemmAvx512MR, kSgemmAvx512NR>(rows.kernel, rows.epilogue, M, N, K, alpha, a.data, a.ld,
                                                            *b.packed, beta, C, ldc, ep, pool);
      return Status::Ok();
    }
    if (rows.kernel) {
      sgemm_rows_a_packed_b<kSMR, kSNR>(rows.kernel, rows.epilogue, M, N, K, alpha, a.data, a.ld, *b.packed, beta, C,
                                        ldc, ep, pool);
      return Status::Ok();
    }
  }
  const Kernels<float> kernels = skernels_for(layout, b.uniform_edges);
  if (layout == SLayout::kAvx512)
    sgemm_tiled<kSgemmAvx512MR, kSgemmAvx512NR>(kernels, M, N, K, alpha, a, b, beta, C, ldc, ep, pool);
  else
    sgemm_tiled<kSMR, kSNR>(kernels, M, N, K, alpha, a, b, beta, C, ldc, ep, pool);
  return Status::Ok();
}

void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool) {
  SgemmOperand a{A, lda, trans_a, nullptr, nullptr}, b{B, ldb, trans_b, nullptr, nullptr};
  // Nothing is packed, and only packed operands can fail: debug builds check.
  [[maybe_unused]] const Status s = sgemm_ex(M, N, K, alpha, a, b, beta, C, ldc, nullptr, pool);
  assert(s.ok());
}

void sgemm_rows(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                const BRowSource& b_rows, float beta, float* C, int64_t ldc, ThreadPool* pool) {
  SgemmOperand a{A, lda, trans_a, nullptr, nullptr}, b{nullptr, 0, false, nullptr, &b_rows};
  [[maybe_unused]] const Status s = sgemm_ex(M, N, K, alpha, a, b, beta, C, ldc, nullptr, pool);  // as in sgemm
  assert(s.ok());
}

void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc, ThreadPool* pool) {
  const MicroKernel<double> kernel = pick_dkernel();
  if (try_gemv(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool)) return;
  auto a_slice = [&](int64_t p0, int64_t kc, ThreadPool* tp) -> const double* {
    return pack_a_slice<double, kDMR, kDNR>(trans_a, A, lda, M, K, p0, kc, tp);
  };
  auto b_block = [&](int64_t p0, int64_t kc, int64_t j0, int64_t nc, ThreadPool* tp) -> const double* {
    return pack_b_block<double, kDNR>(K, N, kc, nc, tp, [&](double* dst, int64_t pb, int64_t pe) {
      pack_b<double, kDNR>(trans_b, B, ldb, p0, kc, j0, nc, dst, pb, pe);
    });
  };
  gemm_blocked<double, kDMR, kDNR>(Kernels<double>{kernel, nullptr}, M, N, K, kc_for<double, kDNR>(K), alpha, a_slice, b_block, beta, C, ldc, nullptr, pool);
}

}  // namespace dlrt::cpu
