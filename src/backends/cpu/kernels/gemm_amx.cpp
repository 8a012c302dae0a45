// The AMX float GEMM (see gemm_amx.h).
//
// Tiles: every tile is 16 rows of 64 bytes. C blocks are 32 x 32 (tmm0-3:
// rows 0-15 / 16-31 x columns 0-15 / 16-31) or 16 x 32 (tmm0-1); tmm4-5 hold
// two 16-row A tiles (16 rows x 32 k), tmm6-7 two B tiles (16 k-pairs x 16
// columns x 2 k: TDPBF16PS multiplies A[m][2p + e] by B[p][2n + e]).
//
// B tile sets: per 32-column block, per 32-deep K step, 1 KiB tiles: hi
// columns 0-15, hi columns 16-31, and for bf16x3 lo columns 0-15, lo
// columns 16-31. A tile sets: per 16-row block, per K step, a hi tile and
// for bf16x3 a lo tile (adjacent). bf16 is bf16x3 without the lo tiles and
// their two extra products per step.
//
// Two drivers share the block kernel. amx_gemm: B packed once (the
// weights), A converted at run time in per-thread scratch.
// amx_gemm_packed_a: A packed once (Conv's filters), B (the image, or its
// im2col rows) converted at run time. Both are templates over the tile
// operations (amx_tiles.h): the real instructions or the scalar model.
#include "backends/cpu/kernels/gemm_amx.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/amx_tiles.h"
#include "backends/cpu/kernels/amx_tile_moves.h"
#include "backends/cpu/kernels/gemm_amx_convert.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DLRT_AMX 1
// The kernel templates carry the tile target for both instantiations: Clang
// accepts the tile builtins only there, and no compiler emits tile
// instructions of its own, so the model's instantiation runs on any x86-64.
#define DLRT_TILE_TARGET __attribute__((target("amx-tile,amx-bf16")))
#else
#define DLRT_TILE_TARGET
#endif

namespace dlrt::cpu {
namespace {

using namespace amx_float;  // NOLINT: the tile layout's constants

constexpr int64_t kAL2Bytes = 1 << 20;  // converted A kept in L2 at once
constexpr int64_t kBL2Bytes = 1 << 20;  // converted B (one pass) kept in L2 at once
constexpr int64_t kMaxPassSteps = 36;   // K steps per pass over converted B (1152 deep)

inline int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// K steps ahead that block<..., true> prefetches A's tiles.
constexpr int64_t kStreamAhead = 4;

// C += A x B per (row block, column tile) from the A tiles in tmm4 (and
// tmm5) and the B tiles in tmm6 and tmm7.
template <class Ops, bool kTwoRows>
DLRT_TILE_TARGET inline void products() {
  Ops::template dpbf16ps<0, 4, 6>();
  Ops::template dpbf16ps<1, 4, 7>();
  if constexpr (kTwoRows) {
    Ops::template dpbf16ps<2, 5, 6>();
    Ops::template dpbf16ps<3, 5, 7>();
  }
}

// One block of C over KS K steps: 32 x 32 from the A tiles of two 16-row
// blocks (a0, a1), or 16 x 32 from a0 alone (kTwoRows false); b is the
// column block's B tiles. Stores the fp32 block to out (row stride ldo).
// With `accumulate` the block starts from the sums already in out instead
// of zeros. Meanwhile prefetches pf_lines cache lines from pf to L2, spread
// over the K steps, and with kStreamA the A tiles kStreamAhead steps ahead
// (A read from memory once: a conv's filters). kLo: bf16x3's three products
// per step, else bf16's one.
template <class Ops, bool kLo, bool kTwoRows, bool kStreamA = false>
DLRT_TILE_TARGET void block(const uint16_t* a0, const uint16_t* a1, const uint16_t* b, int64_t KS, float* out,
                            int64_t ldo, const char* pf, int64_t pf_lines, bool accumulate, int64_t a_step) {
  constexpr int64_t kT = kTileElems;
  if (accumulate) {  // out holds the sums of earlier K steps
    Ops::template load<0>(out, ldo * 4);
    Ops::template load<1>(out + 16, ldo * 4);
    if constexpr (kTwoRows) {
      Ops::template load<2>(out + 16 * ldo, ldo * 4);
      Ops::template load<3>(out + 16 * ldo + 16, ldo * 4);
    }
  } else {
    Ops::template zero<0>();
    Ops::template zero<1>();
    if constexpr (kTwoRows) {
      Ops::template zero<2>();
      Ops::template zero<3>();
    }
  }
  const int64_t pf_step = ceil_div(pf_lines, std::max<int64_t>(KS, 1));
  for (int64_t s = 0; s < KS; ++s, a0 += a_step, a1 += a_step, b += b_set(kLo)) {
    for (int64_t l = 0; l < pf_step && pf_lines > 0; ++l, --pf_lines, pf += 64) __builtin_prefetch(pf, 0, 2);
    if constexpr (kStreamA) {
      if (s + kStreamAhead < KS) {
        const char* p0 = reinterpret_cast<const char*>(a0 + kStreamAhead * a_step);
        const char* p1 = reinterpret_cast<const char*>(a1 + kStreamAhead * a_step);
        for (int64_t l = 0; l < a_set(kLo) * 2; l += 64) {
          __builtin_prefetch(p0 + l, 0, 2);
          if constexpr (kTwoRows) __builtin_prefetch(p1 + l, 0, 2);
        }
      }
    }
    Ops::template load<4>(a0, 64);
    if constexpr (kTwoRows) Ops::template load<5>(a1, 64);
    if constexpr (kLo) {
      // hi(A) x lo(B), hi(A) x hi(B), lo(A) x hi(B): 8 tile loads for 12
      // products (5 for 6 with one row block).
      Ops::template load<6>(b + 2 * kT, 64);
      Ops::template load<7>(b + 3 * kT, 64);
      products<Ops, kTwoRows>();
      Ops::template load<6>(b, 64);
      Ops::template load<7>(b + kT, 64);
      products<Ops, kTwoRows>();
      Ops::template load<4>(a0 + kT, 64);
      if constexpr (kTwoRows) Ops::template load<5>(a1 + kT, 64);
      products<Ops, kTwoRows>();
    } else {
      Ops::template load<6>(b, 64);
      Ops::template load<7>(b + kT, 64);
      products<Ops, kTwoRows>();
    }
  }
  Ops::template store<0>(out, ldo * 4);
  Ops::template store<1>(out + 16, ldo * 4);
  if constexpr (kTwoRows) {
    Ops::template store<2>(out + 16 * ldo, ldo * 4);
    Ops::template store<3>(out + 16 * ldo + 16, ldo * 4);
  }
}

// The pool a GEMM of this size splits over: none on one thread or below
// about 0.4 MFLOP, where a parallel section costs more than it saves.
ThreadPool* pool_for(int64_t M, int64_t N, int64_t K, ThreadPool* pool) {
  const double flops = 2.0 * static_cast<double>(M) * N * K;
  return pool && pool->num_threads() > 1 && flops > 4.0e5 ? pool : nullptr;
}

// One GEMM's blocking: tasks are (run of column blocks, block of mc rows).
struct Plan {
  int64_t M, N, K, KS, nblocks_total, mc, mblocks, per_run;
  float alpha, beta;
  const float* A;
  int64_t lda;
  bool trans_a;
  const uint16_t* packed_b;
  float* C;
  int64_t ldc;
  const GemmEpilogue* ep;  // null when empty
  Convert cv;
};

template <class Ops, bool kLo>
void run_tasks(const Plan& p, int64_t tb, int64_t te) {
  constexpr int64_t kASet = a_set(kLo), kBSet = b_set(kLo);
  thread_local AlignedScratch a_scratch, row_scratch;
  uint16_t* at = a_scratch.get<uint16_t>(static_cast<size_t>(ceil_div(p.mc, 16) * p.KS * kASet),
                                         AlignedScratch::Growth::kByHalf);
  float* row = p.trans_a ? row_scratch.get<float>(static_cast<size_t>(p.K), AlignedScratch::Growth::kByHalf) : nullptr;
  alignas(64) float out[32 * 32];
  Ops::configure(amx::full_tiles());
  int64_t converted = -1;  // the row block whose A tiles are in `at`
  for (int64_t t = tb; t < te; ++t) {
    // Column-run major: a thread's consecutive tasks share their B blocks.
    const int64_t nr = t / p.mblocks, mb = t % p.mblocks;
    const int64_t i_begin = mb * p.mc, i_end = std::min(p.M, i_begin + p.mc);
    const int64_t rblocks = ceil_div(i_end - i_begin, 16);
    if (converted != mb) {
      for (int64_t rb = 0; rb < rblocks; ++rb) {
        const int64_t i0 = i_begin + rb * 16;
        p.cv.a_block(p.A, p.lda, p.trans_a, i0, std::min<int64_t>(16, i_end - i0), p.K, p.KS,
                     at + rb * p.KS * kASet, row, kASet, kLo);
      }
      converted = mb;
    }
    const int64_t nb_end = std::min(p.nblocks_total, (nr + 1) * p.per_run);
    for (int64_t nb = nr * p.per_run; nb < nb_end; ++nb) {
      const uint16_t* b = p.packed_b + nb * p.KS * kBSet;
      const int64_t j0 = nb * kBlockN, cols = std::min(kBlockN, p.N - j0);
      // The next column block this thread reads (from L3, usually: weights
      // rarely stay in L2 between runs) is pulled toward L2 meanwhile, a
      // share by each row block.
      const int64_t next_nb = nb + 1 < nb_end ? nb + 1 : -1;
      const int64_t block_lines = p.KS * kBSet * 2 / 64, pairs = ceil_div(rblocks, 2);
      const int64_t share = ceil_div(block_lines, pairs);
      for (int64_t rb = 0; rb < rblocks; rb += 2) {
        const int64_t i0 = i_begin + rb * 16, rows = std::min<int64_t>(rb + 1 < rblocks ? 32 : 16, i_end - i0);
        const uint16_t* a0 = at + rb * p.KS * kASet;
        const int64_t pf_first = std::min(block_lines, rb / 2 * share);
        const int64_t pf_lines = next_nb < 0 ? 0 : std::min(block_lines, pf_first + share) - pf_first;
        const char* pf = next_nb < 0 ? nullptr
                                     : reinterpret_cast<const char*>(p.packed_b + next_nb * p.KS * kBSet) +
                                           pf_first * 64;
        float* c = p.C + i0 * p.ldc + j0;
        // A whole block with nothing to scale or add goes straight to C.
        const bool direct = rows == (rb + 1 < rblocks ? 32 : 16) && cols == kBlockN && p.alpha == 1.0f && p.beta == 0.0f;
        float* dst = direct ? c : out;
        const int64_t ldd = direct ? p.ldc : 32;
        if (rb + 1 < rblocks)
          block<Ops, kLo, true>(a0, a0 + p.KS * kASet, b, p.KS, dst, ldd, pf, pf_lines, false, kASet);
        else
          block<Ops, kLo, false>(a0, a0, b, p.KS, dst, ldd, pf, pf_lines, false, kASet);
        if (!direct) p.cv.write(out, rows, cols, p.alpha, p.beta, c, p.ldc);
        if (p.ep) p.cv.epilogue(*p.ep, c, p.ldc, i0, j0, rows, cols);
      }
    }
  }
  Ops::release();
}

// run_tasks over a Plan's tasks, on `pool` or the calling thread.
using PlanRunner = void (*)(const Plan&, int64_t, int64_t);

void gemm(PlanRunner run, bool lo, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          bool trans_a, const uint16_t* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
          ThreadPool* pool) {
  Plan p{};
  p.cv = convert_best();
  p.M = M, p.N = N, p.K = K, p.alpha = alpha, p.beta = beta, p.A = A, p.lda = lda, p.trans_a = trans_a;
  p.packed_b = packed_b, p.C = C, p.ldc = ldc, p.ep = ep && !ep->empty() ? ep : nullptr;
  p.KS = ceil_div(K, kStep);
  p.nblocks_total = ceil_div(N, kBlockN);
  // Rows of A converted at once: their tiles (4 bytes per element for
  // bf16x3, 2 for bf16; up to 1 MiB) stay in L2 while every column block streams past them once.
  const int64_t row_bytes = std::max<int64_t>(p.KS, 1) * a_set(lo) / 16 * 2;
  const int64_t mc_max = std::max<int64_t>(32, kAL2Bytes / row_bytes / 32 * 32);
  ThreadPool* tp = pool_for(M, N, K, pool);
  const int64_t threads = tp ? tp->num_threads() : 1;
  int64_t mblocks = ceil_div(M, mc_max);
  int64_t nruns = 1;
  if (threads > 1) {
    // Split M first (each thread then converts only its share of A; all
    // read B), then N: faster than N first on 2 threads (docs/performance-decisions.md).
    if (mblocks < threads) mblocks = std::min(ceil_div(M, 32), threads);
    if (mblocks * nruns < threads) nruns = std::min(p.nblocks_total, ceil_div(threads, mblocks));
  }
  p.mc = round_up(ceil_div(M, mblocks), 16);
  p.mblocks = ceil_div(M, p.mc);
  p.per_run = ceil_div(p.nblocks_total, nruns);
  nruns = ceil_div(p.nblocks_total, p.per_run);
  const int64_t ntasks = p.mblocks * nruns;
  if (tp && ntasks > 1) tp->parallel_for(ntasks, 1, [&p, run](int64_t b, int64_t e) { run(p, b, e); });
  else run(p, 0, ntasks);
}

// amx_bf16x3_gemm_packed_a's blocking. Tasks are (run of 16-row blocks,
// chunk of column blocks), run-major. A task goes over K in passes of
// kc_steps K steps: each pass converts its slice of the chunk's B into the
// thread's scratch (at most 1 MiB, kept in L2), then every row pair of the
// run passes over it, A streaming from memory once per chunk. With several
// passes the sums wait in a per-thread buffer, written to C after the last.
struct PlanA {
  int64_t M, N, K, KS;
  float alpha, beta;
  const uint16_t* packed_a;
  const float* B;
  int64_t ldb;
  const BRowSource* b_rows;
  float* C;
  int64_t ldc;
  const GemmEpilogue* ep;  // null when empty
  int64_t rblocks, run_blocks, nblocks, chunk_blocks, nchunks, kc_steps, passes;
  Convert cv;
};

template <class Ops, bool kLo>
void run_tasks_packed_a(const PlanA& p, int64_t tb, int64_t te) {
  constexpr int64_t kASet = a_set(kLo), kBSet = b_set(kLo), kAPairSet = 2 * kASet;
  thread_local AlignedScratch b_scratch, rows_scratch, sums_scratch;
  uint16_t* bt = b_scratch.get<uint16_t>(static_cast<size_t>(p.chunk_blocks * p.kc_steps * kBSet),
                                         AlignedScratch::Growth::kByHalf);
  const int64_t chunk_cols = p.chunk_blocks * kBlockN;
  float* rows_buf = p.b_rows ? rows_scratch.get<float>(static_cast<size_t>(p.kc_steps * kStep * chunk_cols),
                                                       AlignedScratch::Growth::kByHalf)
                             : nullptr;
  // Sums between passes: per (row pair, column block) a 32 x 32 block.
  float* sums = p.passes > 1 ? sums_scratch.get<float>(static_cast<size_t>(round_up(p.run_blocks, 2) / 2 *
                                                                           p.chunk_blocks * 1024),
                                                       AlignedScratch::Growth::kByHalf)
                             : nullptr;
  alignas(64) float out[32 * 32];
  Ops::configure(amx::full_tiles());
  const int64_t pair_elems = p.KS * kAPairSet;  // one row pair of packed A
  int64_t converted = -1;                       // the chunk whose B tiles are in `bt` (one pass only)
  for (int64_t t = tb; t < te; ++t) {
    const int64_t run = t / p.nchunks, chunk = t % p.nchunks;
    const int64_t j_begin = chunk * chunk_cols, width = std::min(p.N - j_begin, chunk_cols);
    const int64_t cblocks = ceil_div(width, kBlockN);
    const int64_t rb_begin = run * p.run_blocks, rb_end = std::min(p.rblocks, rb_begin + p.run_blocks);
    for (int64_t pass = 0; pass < p.passes; ++pass) {
      const int64_t s0 = pass * p.kc_steps, steps = std::min(p.kc_steps, p.KS - s0), k0 = s0 * kStep;
      if (converted != chunk || p.passes > 1) {
        const float* b = p.B + k0 * p.ldb + j_begin;
        int64_t ldb = p.ldb;
        if (p.b_rows) {
          const int64_t k1 = std::min(p.K, k0 + steps * kStep);
          for (int64_t k = k0; k < k1; ++k) (*p.b_rows)(k, j_begin, width, rows_buf + (k - k0) * width);
          b = rows_buf;
          ldb = width;
        }
        for (int64_t cb = 0; cb < cblocks; ++cb)
          p.cv.b_block(b + cb * kBlockN, ldb, p.K - k0, steps, std::min(kBlockN, width - cb * kBlockN),
                       bt + cb * steps * kBSet, kLo);
        converted = chunk;
      }
      const bool last = pass + 1 == p.passes;
      for (int64_t rb = rb_begin; rb < rb_end; rb += 2) {
        const bool two = rb + 1 < rb_end;
        const uint16_t* a0 = p.packed_a + rb / 2 * pair_elems + s0 * kAPairSet;
        const uint16_t* a1 = a0 + kASet;
        const int64_t i0 = rb * 16, rows = std::min<int64_t>(two ? 32 : 16, p.M - i0);
        // The run's next row pair is pulled toward L2 meanwhile, a share by
        // each column block: its slice of this pass is contiguous.
        const int64_t next_lines = rb + 2 < rb_end ? steps * kAPairSet * 2 / 64 : 0;
        const int64_t share = ceil_div(next_lines, cblocks);
        const char* next = reinterpret_cast<const char*>(a0 + pair_elems);
        for (int64_t cb = 0; cb < cblocks; ++cb) {
          const int64_t j0 = j_begin + cb * kBlockN, cols = std::min(kBlockN, p.N - j0);
          float* c = p.C + i0 * p.ldc + j0;
          // One pass: a whole block with nothing to scale or add goes
          // straight to C. Several: the block's sums stay in `sums`.
          float* dst = out;
          int64_t ldd = 32;
          if (sums) dst = sums + ((rb - rb_begin) / 2 * p.chunk_blocks + cb) * 1024;
          else if (rows == (two ? 32 : 16) && cols == kBlockN && p.alpha == 1.0f && p.beta == 0.0f) dst = c, ldd = p.ldc;
          const uint16_t* b = bt + cb * steps * kBSet;
          // The run's first row pair reads its A from memory (filters rarely
          // stay in cache between runs), prefetched a few steps ahead.
          const bool acc = pass > 0;
          const int64_t pf_first = std::min(next_lines, cb * share);
          const int64_t pf_lines = std::min(next_lines, pf_first + share) - pf_first;
          const char* pf = pf_lines > 0 ? next + pf_first * 64 : nullptr;
          const bool stream = cb == 0 && rb == rb_begin;
          if (two && stream) block<Ops, kLo, true, true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else if (two) block<Ops, kLo, true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else if (stream) block<Ops, kLo, false, true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else block<Ops, kLo, false>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          if (!last) continue;
          if (dst != c) p.cv.write(dst, rows, cols, p.alpha, p.beta, c, p.ldc);
          if (p.ep) p.cv.epilogue(*p.ep, c, p.ldc, i0, j0, rows, cols);
        }
      }
    }
  }
  Ops::release();
}

using PlanARunner = void (*)(const PlanA&, int64_t, int64_t);

void gemm_packed_a(PlanARunner run, bool lo, int64_t M, int64_t N, int64_t K, float alpha, const uint16_t* packed_a,
                   const float* B, int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc,
                   const GemmEpilogue* ep, ThreadPool* pool) {
  PlanA p{};
  p.cv = convert_best();
  p.M = M, p.N = N, p.K = K, p.alpha = alpha, p.beta = beta, p.packed_a = packed_a;
  p.B = B, p.ldb = ldb, p.b_rows = b_rows, p.C = C, p.ldc = ldc, p.ep = ep && !ep->empty() ? ep : nullptr;
  p.KS = ceil_div(K, kStep);
  p.rblocks = ceil_div(M, 16);
  p.nblocks = ceil_div(N, kBlockN);
  // Passes of at most kMaxPassSteps K steps, and as many column blocks per
  // chunk as keep a pass's B tiles within kBL2Bytes.
  p.passes = std::max<int64_t>(1, ceil_div(p.KS, kMaxPassSteps));
  p.kc_steps = std::max<int64_t>(1, ceil_div(p.KS, p.passes));
  const int64_t chunk_max = std::max<int64_t>(1, kBL2Bytes / (p.kc_steps * b_set(lo) * 2));
  ThreadPool* tp = pool_for(M, N, K, pool);
  const int64_t threads = tp ? tp->num_threads() : 1;
  int64_t nchunks = ceil_div(p.nblocks, chunk_max), nruns = 1;
  if (threads > 1) {
    // Wide outputs split over columns (each thread converts only its share
    // of B); narrow ones (a few column blocks: small planes) over rows, so
    // that each thread streams only its share of the filters.
    if (p.nblocks >= 2 * threads) nchunks = round_up(nchunks, threads);
    else nruns = std::min(ceil_div(p.rblocks, 2), threads);
  }
  p.chunk_blocks = ceil_div(p.nblocks, nchunks);
  p.nchunks = ceil_div(p.nblocks, p.chunk_blocks);
  p.run_blocks = round_up(ceil_div(p.rblocks, nruns), 2);
  nruns = ceil_div(p.rblocks, p.run_blocks);
  const int64_t ntasks = nruns * p.nchunks;
  if (tp && ntasks > 1) tp->parallel_for(ntasks, 1, [&p, run](int64_t b, int64_t e) { run(p, b, e); });
  else run(p, 0, ntasks);
}

#ifdef DLRT_AMX
// The real instructions: amx_tile_moves.h's loads, stores and zeroing, and
// TDPBF16PS, its tile numbers spelled out as there.
struct RealTileOps : amx::RealTileMoves {
  DLRT_TILE_TARGET static void configure(const amx::TileConfig& c) {
    asm volatile("" ::: "memory");
    _tile_loadconfig(&c);
  }
  DLRT_TILE_TARGET static void release() { _tile_release(); }
  template <int C, int A, int B>
  DLRT_TILE_TARGET static void dpbf16ps() {
    if constexpr (C == 0 && A == 4 && B == 6)
      _tile_dpbf16ps(0, 4, 6);
    else if constexpr (C == 1 && A == 4 && B == 7)
      _tile_dpbf16ps(1, 4, 7);
    else if constexpr (C == 2 && A == 5 && B == 6)
      _tile_dpbf16ps(2, 5, 6);
    else if constexpr (C == 3 && A == 5 && B == 7)
      _tile_dpbf16ps(3, 5, 7);
    else
      static_assert(C < 0, "a tile triple this kernel does not use");
  }
};

// One 32 x 32 block of random bf16 tiles over three K steps, from random
// sums, on Ops with tiles configured.
template <class Ops>
void self_check_block(const uint16_t* a, const uint16_t* b, float* c) {
  Ops::configure(amx::full_tiles());
  block<Ops, false, true>(a, a + 3 * kTileElems, b, 3, c, 32, nullptr, 0, true, kTileElems);
  Ops::release();
}

// The real tiles against the model on the one-pass block (bf16x3's blocks
// issue the same instructions on other tiles of the same sets): true when
// every sum lies within amx::tdpbf16ps_tolerance of the model's.
bool real_matches_model() {
  constexpr int64_t kSteps = 3;
  std::mt19937 rng(76);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<uint16_t> a(2 * kSteps * kTileElems), b(kSteps * b_set(false));
  for (auto& v : a) v = bf16_round(u(rng));
  for (auto& v : b) v = bf16_round(u(rng));
  alignas(64) float got[32 * 32], want[32 * 32];
  for (int64_t i = 0; i < 32 * 32; ++i) got[i] = want[i] = u(rng);
  std::vector<float> c0(want, want + 32 * 32);
  self_check_block<RealTileOps>(a.data(), b.data(), got);
  self_check_block<amx::ModelTileOps>(a.data(), b.data(), want);
  for (int64_t m = 0; m < 32; ++m)
    for (int64_t n = 0; n < 32; ++n) {
      // Row m of A: block m / 16, row m % 16 of each step's tile; column n of
      // B: tile n / 16 of each step's set, element 2 * (n % 16) + e.
      double mag = std::fabs(c0[m * 32 + n]);
      for (int64_t s = 0; s < kSteps; ++s)
        for (int64_t k = 0; k < 32; ++k) {
          const float x = bf16_widen(a[(m / 16) * kSteps * kTileElems + s * kTileElems + (m % 16) * 32 + k]);
          const float y = bf16_widen(b[s * b_set(false) + (n / 16) * kTileElems + (k / 2) * 32 + 2 * (n % 16) + k % 2]);
          mag += std::fabs(static_cast<double>(x) * y);
        }
      if (!(std::fabs(static_cast<double>(got[m * 32 + n]) - want[m * 32 + n]) <=
            amx::tdpbf16ps_tolerance(static_cast<int>(kSteps * 16), mag)))
        return false;
    }
  return true;
}
#endif  // DLRT_AMX

std::atomic<int> g_model_scopes{0};  // ScopedAmxTileModel's that live

bool lo_tiles(GemmPrecision precision) { return precision != GemmPrecision::kBf16; }

}  // namespace

ScopedAmxTileModel::ScopedAmxTileModel() { g_model_scopes.fetch_add(1); }
ScopedAmxTileModel::~ScopedAmxTileModel() { g_model_scopes.fetch_sub(1); }

const char* amx_tiles_unavailable() {
#ifdef DLRT_AMX
  const device::CpuFeatures& f = device::cpu_features();
  if (!f.amx_tile || !f.amx_bf16 || !f.avx512_bf16) return "not present";
  if (cpu_isa() < CpuIsa::kAvx512) return "off (DLRT_CPU_ISA below avx512)";
  if (!device::request_amx_permission()) return "the OS refused the tile state (arch_prctl)";
  static const bool agrees = real_matches_model();
  if (!agrees) return "off (its self-check against the tile model failed)";
  return nullptr;
#else
  return "not built for this architecture";
#endif
}

AmxEngine amx_engine() {
  if (g_model_scopes.load(std::memory_order_relaxed) > 0) return AmxEngine::kModel;
  return amx_tiles_unavailable() ? AmxEngine::kNone : AmxEngine::kTiles;
}

bool amx_bf16x3_available() { return amx_engine() != AmxEngine::kNone; }

size_t amx_packed_b_bytes(GemmPrecision precision, int64_t K, int64_t N) {
  return static_cast<size_t>(ceil_div(std::max<int64_t>(K, 1), kStep) * ceil_div(std::max<int64_t>(N, 1), kBlockN) *
                             b_set(lo_tiles(precision))) *
         2;
}

void amx_pack_b(GemmPrecision precision, bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst) {
  const bool lo = lo_tiles(precision);
  const int64_t KS = ceil_div(std::max<int64_t>(K, 1), kStep), NB = ceil_div(std::max<int64_t>(N, 1), kBlockN);
  auto* out = static_cast<uint16_t*>(dst);
  const Convert cv = convert_best();
  std::vector<float> block_t;  // a transposed B's column block, row-major
  for (int64_t nb = 0; nb < NB; ++nb) {
    const int64_t j0 = nb * kBlockN, cols = std::clamp<int64_t>(N - j0, 0, kBlockN);
    const float* src = B + j0;
    int64_t ld = ldb;
    if (trans) {
      block_t.assign(static_cast<size_t>(std::max<int64_t>(K, 1) * kBlockN), 0.0f);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < cols; ++j) block_t[k * kBlockN + j] = B[(j0 + j) * ldb + k];
      src = block_t.data(), ld = kBlockN;
    }
    cv.b_block(src, ld, K, KS, cols, out + nb * KS * b_set(lo), lo);
  }
}

size_t amx_packed_a_bytes(GemmPrecision precision, int64_t M, int64_t K) {
  // Row pairs x K steps x two 16-row blocks' tiles.
  return static_cast<size_t>(ceil_div(std::max<int64_t>(M, 1), 32) * ceil_div(std::max<int64_t>(K, 1), kStep) * 2 *
                             a_set(lo_tiles(precision))) *
         2;
}

void amx_pack_a(GemmPrecision precision, int64_t M, int64_t K, const float* A, int64_t lda, void* dst) {
  const bool lo = lo_tiles(precision);
  const int64_t KS = ceil_div(std::max<int64_t>(K, 1), kStep), pairs = ceil_div(std::max<int64_t>(M, 1), 32);
  auto* out = static_cast<uint16_t*>(dst);
  const Convert cv = convert_best();
  for (int64_t rp = 0; rp < pairs; ++rp)
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t i0 = rp * 32 + h * 16;
      cv.a_block(A, lda, false, i0, std::clamp<int64_t>(M - i0, 0, 16), K, KS,
                 out + rp * KS * 2 * a_set(lo) + h * a_set(lo), nullptr, 2 * a_set(lo), lo);
    }
}

void amx_gemm_packed_a(GemmPrecision precision, int64_t M, int64_t N, int64_t K, float alpha, const void* packed_a,
                       const float* B, int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc,
                       const GemmEpilogue* ep, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
  const bool lo = lo_tiles(precision), model = amx_engine() == AmxEngine::kModel;
  PlanARunner run = lo ? run_tasks_packed_a<amx::ModelTileOps, true> : run_tasks_packed_a<amx::ModelTileOps, false>;
#ifdef DLRT_AMX
  if (!model) run = lo ? run_tasks_packed_a<RealTileOps, true> : run_tasks_packed_a<RealTileOps, false>;
#else
  (void)model;
#endif
  gemm_packed_a(run, lo, M, N, K, alpha, static_cast<const uint16_t*>(packed_a), B, ldb, b_rows, beta, C, ldc, ep,
                pool);
}

void amx_gemm(GemmPrecision precision, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              bool trans_a, const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
              ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
  const bool lo = lo_tiles(precision), model = amx_engine() == AmxEngine::kModel;
  PlanRunner run = lo ? run_tasks<amx::ModelTileOps, true> : run_tasks<amx::ModelTileOps, false>;
#ifdef DLRT_AMX
  if (!model) run = lo ? run_tasks<RealTileOps, true> : run_tasks<RealTileOps, false>;
#else
  (void)model;
#endif
  gemm(run, lo, M, N, K, alpha, A, lda, trans_a, static_cast<const uint16_t*>(packed_b), beta, C, ldc, ep, pool);
}

}  // namespace dlrt::cpu
