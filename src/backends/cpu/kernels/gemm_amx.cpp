// AMX bf16x3 GEMM (see gemm_amx.h).
//
// Tiles: every tile is 16 rows of 64 bytes. C blocks are 32 x 32 (tmm0-3:
// rows 0-15 / 16-31 x columns 0-15 / 16-31) or 16 x 32 (tmm0-1); tmm4-5 hold
// two 16-row A tiles (16 rows x 32 k), tmm6-7 two B tiles (16 k-pairs x 16
// columns x 2 k: TDPBF16PS multiplies A[m][2p + e] by B[p][2n + e]).
//
// B tile sets: per 32-column block, per 32-deep K step, four 1 KiB tiles:
// hi columns 0-15, hi columns 16-31, lo columns 0-15, lo columns 16-31.
// A tile sets: per 16-row block, per K step, a hi tile and a lo tile (1 KiB
// each, adjacent).
//
// Two drivers share the block kernel. amx_bf16x3_gemm: B packed once (the
// weights), A converted at run time in per-thread scratch.
// amx_bf16x3_gemm_packed_a: A packed once (Conv's filters), B (the image,
// or its im2col rows) converted at run time.
#include "backends/cpu/kernels/gemm_amx.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(__clang__)
// GCC 12's AVX-512 intrinsics: the false positives described in vec_avx512.h.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#define DLRT_AMX 1
#endif

namespace dlrt::cpu {
namespace {

constexpr int64_t kStep = 32;          // K per tile product (16 bf16 pairs)
constexpr int64_t kBlockN = 32;        // columns per C block (two tiles)
constexpr int64_t kTileElems = 512;    // bf16 per tile (16 x 32)
constexpr int64_t kBTileSet = 4 * kTileElems;  // one K step of one column block
constexpr int64_t kATileSet = 2 * kTileElems;  // one K step of one 16-row block (hi, lo)
constexpr int64_t kAPairSet = 2 * kATileSet;   // one K step of a row pair, as amx_bf16x3_pack_a lays it out
constexpr int64_t kAL2Bytes = 1 << 20;         // converted A kept in L2 at once
constexpr int64_t kBL2Bytes = 1 << 20;         // converted B (one pass) kept in L2 at once
constexpr int64_t kMaxPassSteps = 36;          // K steps per pass over converted B (1152 deep)

// Lanes [0, n) of 16 (none when n <= 0).
inline uint32_t lanes(int64_t n) { return n >= 16 ? 0xffffu : n <= 0 ? 0u : (1u << n) - 1; }

inline int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// fp32 -> bf16, round to nearest even; NaN stays a (quiet) NaN and a finite
// value that would round up to infinity is truncated instead.
uint16_t to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  const uint32_t r = u + 0x7fffu + ((u >> 16) & 1u);
  if ((r & 0x7f800000u) == 0x7f800000u && (u & 0x7f800000u) != 0x7f800000u) return static_cast<uint16_t>(u >> 16);
  return static_cast<uint16_t>(r >> 16);
}

float from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// hi = bf16(x), lo = bf16(x - hi); lo is 0 when hi is not finite.
void split(float x, uint16_t& hi, uint16_t& lo) {
  hi = to_bf16(x);
  const float h = from_bf16(hi);
  lo = std::isfinite(h) ? to_bf16(x - h) : 0;
}

#ifdef DLRT_AMX


// Palette 1, all eight tiles 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
const TileConfig kTileConfig{};

// 16 floats -> their bf16 hi and lo parts (the vector form of split()).
DLRT_AMX_TARGET inline void split16(__m512 x, __m256i& hi, __m256i& lo) {
  const __m256i h = (__m256i)_mm512_cvtneps_pbh(x);
  const __m512 hf = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  const __mmask16 finite =
      _mm512_cmp_ps_mask(_mm512_abs_ps(hf), _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
  hi = h;
  lo = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_sub_ps(finite, x, hf));
}

// Converts rows [0, rows) (rows <= 16) of a 16-row block of op(A) into KS K
// steps of (hi, lo) tiles, step s at dst + s * step (elements); rows past
// `rows` and k past K are zeros. `row` is a K-float buffer for a transposed A.
DLRT_AMX_TARGET void convert_a_block(const float* A, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t K,
                                     int64_t KS, uint16_t* dst, float* row, int64_t step = kATileSet) {
  for (int64_t r = 0; r < 16; ++r) {
    if (r >= rows) {
      for (int64_t s = 0; s < KS; ++s) {
        _mm512_store_si512(dst + s * step + r * 32, _mm512_setzero_si512());
        _mm512_store_si512(dst + s * step + kTileElems + r * 32, _mm512_setzero_si512());
      }
      continue;
    }
    const float* a = A + (i0 + r) * lda;
    if (trans) {
      for (int64_t k = 0; k < K; ++k) row[k] = A[k * lda + i0 + r];
      a = row;
    }
    for (int64_t s = 0; s < KS; ++s) {
      const int64_t k0 = s * kStep, n = std::min<int64_t>(kStep, K - k0);
      const __mmask16 m0 = static_cast<__mmask16>(lanes(n)), m1 = static_cast<__mmask16>(lanes(n - 16));
      __m256i h0, l0, h1, l1;
      split16(_mm512_maskz_loadu_ps(m0, a + k0), h0, l0);
      split16(_mm512_maskz_loadu_ps(m1, a + k0 + 16), h1, l1);
      uint16_t* t = dst + s * step + r * 32;
      _mm512_store_si512(t, _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1));
      _mm512_store_si512(t + kTileElems, _mm512_inserti64x4(_mm512_castsi256_si512(l0), l1, 1));
    }
  }
}

// K steps ahead that block<..., true> prefetches A's tiles.
constexpr int64_t kStreamAhead = 4;

// One block of C over KS K steps: 32 x 32 from the A tiles of two 16-row
// blocks (a0, a1), or 16 x 32 from a0 alone (kTwoRows false); b is the
// column block's B tiles. Stores the fp32 block to out (row stride ldo).
// With `accumulate` the block starts from the sums already in out instead
// of zeros. Meanwhile prefetches pf_lines cache lines from pf to L2, spread
// over the K steps, and with kStreamA the A tiles kStreamAhead steps ahead
// (A read from memory once: a conv's filters).
template <bool kTwoRows, bool kStreamA = false>
DLRT_AMX_TARGET void block(const uint16_t* a0, const uint16_t* a1, const uint16_t* b, int64_t KS, float* out,
                           int64_t ldo, const char* pf, int64_t pf_lines, bool accumulate = false,
                           int64_t a_step = kATileSet) {
  asm volatile("" ::: "memory");  // the tile loads below read memory the compiler does not see them read
  if (accumulate) {  // out holds the sums of earlier K steps
    _tile_loadd(0, out, ldo * 4);
    _tile_loadd(1, out + 16, ldo * 4);
    if constexpr (kTwoRows) {
      _tile_loadd(2, out + 16 * ldo, ldo * 4);
      _tile_loadd(3, out + 16 * ldo + 16, ldo * 4);
    }
  } else {
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (kTwoRows) {
      _tile_zero(2);
      _tile_zero(3);
    }
  }
  const int64_t pf_step = ceil_div(pf_lines, std::max<int64_t>(KS, 1));
  for (int64_t s = 0; s < KS; ++s, a0 += a_step, a1 += a_step, b += kBTileSet) {
    for (int64_t l = 0; l < pf_step && pf_lines > 0; ++l, --pf_lines, pf += 64) _mm_prefetch(pf, _MM_HINT_T1);
    if constexpr (kStreamA) {
      if (s + kStreamAhead < KS) {
        const char* p0 = reinterpret_cast<const char*>(a0 + kStreamAhead * a_step);
        const char* p1 = reinterpret_cast<const char*>(a1 + kStreamAhead * a_step);
        for (int64_t l = 0; l < kATileSet * 2; l += 64) {
          _mm_prefetch(p0 + l, _MM_HINT_T1);
          if constexpr (kTwoRows) _mm_prefetch(p1 + l, _MM_HINT_T1);
        }
      }
    }
    // hi(A) x lo(B), hi(A) x hi(B), lo(A) x hi(B): 8 tile loads for 12
    // products (5 for 6 with one row block).
    _tile_loadd(4, a0, 64);
    if constexpr (kTwoRows) _tile_loadd(5, a1, 64);
    _tile_loadd(6, b + 2 * kTileElems, 64);
    _tile_loadd(7, b + 3 * kTileElems, 64);
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 1) {
        _tile_loadd(6, b, 64);
        _tile_loadd(7, b + kTileElems, 64);
      } else if (pass == 2) {
        _tile_loadd(4, a0 + kTileElems, 64);
        if constexpr (kTwoRows) _tile_loadd(5, a1 + kTileElems, 64);
      }
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      if constexpr (kTwoRows) {
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  _tile_stored(0, out, ldo * 4);
  _tile_stored(1, out + 16, ldo * 4);
  if constexpr (kTwoRows) {
    _tile_stored(2, out + 16 * ldo, ldo * 4);
    _tile_stored(3, out + 16 * ldo + 16, ldo * 4);
  }
}

// C[0:rows, 0:cols] = alpha * t + beta * C (C not read when beta == 0).
DLRT_AMX_TARGET void write_block(const float* t, int64_t rows, int64_t cols, float alpha, float beta, float* c,
                                 int64_t ldc) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; j += 16) {
      const int64_t n = std::min<int64_t>(16, cols - j);
      const __mmask16 m = n >= 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1);
      __m512 v = _mm512_mul_ps(va, _mm512_load_ps(t + r * 32 + j));
      if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, c + r * ldc + j), v);
      _mm512_mask_storeu_ps(c + r * ldc + j, m, v);
    }
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
};

DLRT_AMX_TARGET void run_tasks(const Plan& p, int64_t tb, int64_t te) {
  thread_local AlignedScratch a_scratch, row_scratch;
  uint16_t* at = a_scratch.get<uint16_t>(static_cast<size_t>(ceil_div(p.mc, 16) * p.KS * kATileSet),
                                         AlignedScratch::Growth::kByHalf);
  float* row = p.trans_a ? row_scratch.get<float>(static_cast<size_t>(p.K), AlignedScratch::Growth::kByHalf) : nullptr;
  alignas(64) float out[32 * 32];
  _tile_loadconfig(&kTileConfig);
  int64_t converted = -1;  // the row block whose A tiles are in `at`
  for (int64_t t = tb; t < te; ++t) {
    // Column-run major: a thread's consecutive tasks share their B blocks.
    const int64_t nr = t / p.mblocks, mb = t % p.mblocks;
    const int64_t i_begin = mb * p.mc, i_end = std::min(p.M, i_begin + p.mc);
    const int64_t rblocks = ceil_div(i_end - i_begin, 16);
    if (converted != mb) {
      for (int64_t rb = 0; rb < rblocks; ++rb) {
        const int64_t i0 = i_begin + rb * 16;
        convert_a_block(p.A, p.lda, p.trans_a, i0, std::min<int64_t>(16, i_end - i0), p.K, p.KS,
                        at + rb * p.KS * kATileSet, row);
      }
      converted = mb;
    }
    const int64_t nb_end = std::min(p.nblocks_total, (nr + 1) * p.per_run);
    for (int64_t nb = nr * p.per_run; nb < nb_end; ++nb) {
      const uint16_t* b = p.packed_b + nb * p.KS * kBTileSet;
      const int64_t j0 = nb * kBlockN, cols = std::min(kBlockN, p.N - j0);
      // The next column block this thread reads (from L3, usually: weights
      // rarely stay in L2 between runs) is pulled toward L2 meanwhile, a
      // share by each row block.
      const int64_t next_nb = nb + 1 < nb_end ? nb + 1 : -1;
      const int64_t block_lines = p.KS * kBTileSet * 2 / 64, pairs = ceil_div(rblocks, 2);
      const int64_t share = ceil_div(block_lines, pairs);
      for (int64_t rb = 0; rb < rblocks; rb += 2) {
        const int64_t i0 = i_begin + rb * 16, rows = std::min<int64_t>(rb + 1 < rblocks ? 32 : 16, i_end - i0);
        const uint16_t* a0 = at + rb * p.KS * kATileSet;
        const int64_t pf_first = std::min(block_lines, rb / 2 * share);
        const int64_t pf_lines = next_nb < 0 ? 0 : std::min(block_lines, pf_first + share) - pf_first;
        const char* pf = next_nb < 0 ? nullptr
                                     : reinterpret_cast<const char*>(p.packed_b + next_nb * p.KS * kBTileSet) +
                                           pf_first * 64;
        float* c = p.C + i0 * p.ldc + j0;
        // A whole block with nothing to scale or add goes straight to C.
        const bool direct = rows == (rb + 1 < rblocks ? 32 : 16) && cols == kBlockN && p.alpha == 1.0f && p.beta == 0.0f;
        float* dst = direct ? c : out;
        const int64_t ldd = direct ? p.ldc : 32;
        if (rb + 1 < rblocks) block<true>(a0, a0 + p.KS * kATileSet, b, p.KS, dst, ldd, pf, pf_lines);
        else block<false>(a0, a0, b, p.KS, dst, ldd, pf, pf_lines);
        if (!direct) write_block(out, rows, cols, p.alpha, p.beta, c, p.ldc);
        if (p.ep) apply_epilogue_zmm_tile(*p.ep, c, p.ldc, i0, j0, rows, cols);
      }
    }
  }
  _tile_release();
}

void gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
          const uint16_t* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
  Plan p{};
  p.M = M, p.N = N, p.K = K, p.alpha = alpha, p.beta = beta, p.A = A, p.lda = lda, p.trans_a = trans_a;
  p.packed_b = packed_b, p.C = C, p.ldc = ldc, p.ep = ep && !ep->empty() ? ep : nullptr;
  p.KS = ceil_div(K, kStep);
  p.nblocks_total = ceil_div(N, kBlockN);
  // Rows of A converted at once: their tiles (4 bytes per element, up to
  // 1 MiB) stay in L2 while every column block streams past them once.
  const int64_t mc_max = std::max<int64_t>(32, (kAL2Bytes / (std::max<int64_t>(p.KS, 1) * kStep * 4)) / 32 * 32);
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
  if (tp && ntasks > 1) tp->parallel_for(ntasks, 1, [&p](int64_t b, int64_t e) { run_tasks(p, b, e); });
  else run_tasks(p, 0, ntasks);
}

// 16 bf16 of row 2p (even) and of row 2p + 1 (odd) as 16 k pairs.
DLRT_AMX_TARGET inline __m512i pairs(__m256i even, __m256i odd) {
  return _mm512_or_si512(_mm512_cvtepu16_epi32(even), _mm512_slli_epi32(_mm512_cvtepu16_epi32(odd), 16));
}

// One K step of one column block, from a row-major B (row stride ldb):
// rows [0, krows) and columns [0, cols) are split, and rows 2p and 2p + 1
// interleaved into k pairs; the rest of the set is zeros.
DLRT_AMX_TARGET void pack_set_avx512(const float* B, int64_t ldb, int64_t krows, int64_t cols, uint16_t* set) {
  const __mmask16 m[2] = {static_cast<__mmask16>(lanes(cols)), static_cast<__mmask16>(lanes(cols - 16))};
  for (int64_t kp = 0; kp < 16; ++kp) {
    const int64_t k = 2 * kp;
    for (int64_t t = 0; t < 2; ++t) {
      const __m512 x0 = k < krows ? _mm512_maskz_loadu_ps(m[t], B + k * ldb + 16 * t) : _mm512_setzero_ps();
      const __m512 x1 = k + 1 < krows ? _mm512_maskz_loadu_ps(m[t], B + (k + 1) * ldb + 16 * t) : _mm512_setzero_ps();
      __m256i h0, l0, h1, l1;
      split16(x0, h0, l0);
      split16(x1, h1, l1);
      _mm512_store_si512(set + t * kTileElems + kp * 32, pairs(h0, h1));
      _mm512_store_si512(set + (2 + t) * kTileElems + kp * 32, pairs(l0, l1));
    }
  }
}

// Columns [0, cols) (cols <= 32) of a row-major K x cols B as the KS tile
// sets of one column block.
DLRT_AMX_TARGET void convert_b_block(const float* B, int64_t ldb, int64_t K, int64_t KS, int64_t cols, uint16_t* dst) {
  for (int64_t s = 0; s < KS; ++s)
    pack_set_avx512(B + s * kStep * ldb, ldb, std::min(kStep, K - s * kStep), cols, dst + s * kBTileSet);
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
};

DLRT_AMX_TARGET void run_tasks_packed_a(const PlanA& p, int64_t tb, int64_t te) {
  thread_local AlignedScratch b_scratch, rows_scratch, sums_scratch;
  uint16_t* bt = b_scratch.get<uint16_t>(static_cast<size_t>(p.chunk_blocks * p.kc_steps * kBTileSet),
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
  _tile_loadconfig(&kTileConfig);
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
          convert_b_block(b + cb * kBlockN, ldb, p.K - k0, steps, std::min(kBlockN, width - cb * kBlockN),
                          bt + cb * steps * kBTileSet);
        converted = chunk;
      }
      const bool last = pass + 1 == p.passes;
      for (int64_t rb = rb_begin; rb < rb_end; rb += 2) {
        const bool two = rb + 1 < rb_end;
        const uint16_t* a0 = p.packed_a + rb / 2 * pair_elems + s0 * kAPairSet;
        const uint16_t* a1 = a0 + kATileSet;
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
          const uint16_t* b = bt + cb * steps * kBTileSet;
          // The run's first row pair reads its A from memory (filters rarely
          // stay in cache between runs), prefetched a few steps ahead.
          const bool acc = pass > 0;
          const int64_t pf_first = std::min(next_lines, cb * share);
          const int64_t pf_lines = std::min(next_lines, pf_first + share) - pf_first;
          const char* pf = pf_lines > 0 ? next + pf_first * 64 : nullptr;
          const bool stream = cb == 0 && rb == rb_begin;
          if (two && stream) block<true, true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else if (two) block<true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else if (stream) block<false, true>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          else block<false>(a0, a1, b, steps, dst, ldd, pf, pf_lines, acc, kAPairSet);
          if (!last) continue;
          if (dst != c) write_block(dst, rows, cols, p.alpha, p.beta, c, p.ldc);
          if (p.ep) apply_epilogue_zmm_tile(*p.ep, c, p.ldc, i0, j0, rows, cols);
        }
      }
    }
  }
  _tile_release();
}

void gemm_packed_a(int64_t M, int64_t N, int64_t K, float alpha, const uint16_t* packed_a, const float* B,
                   int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
                   ThreadPool* pool) {
  PlanA p{};
  p.M = M, p.N = N, p.K = K, p.alpha = alpha, p.beta = beta, p.packed_a = packed_a;
  p.B = B, p.ldb = ldb, p.b_rows = b_rows, p.C = C, p.ldc = ldc, p.ep = ep && !ep->empty() ? ep : nullptr;
  p.KS = ceil_div(K, kStep);
  p.rblocks = ceil_div(M, 16);
  p.nblocks = ceil_div(N, kBlockN);
  // Passes of at most kMaxPassSteps K steps, and as many column blocks per
  // chunk as keep a pass's B tiles within kBL2Bytes.
  p.passes = std::max<int64_t>(1, ceil_div(p.KS, kMaxPassSteps));
  p.kc_steps = std::max<int64_t>(1, ceil_div(p.KS, p.passes));
  const int64_t chunk_max = std::max<int64_t>(1, kBL2Bytes / (p.kc_steps * kBTileSet * 2));
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
  if (tp && ntasks > 1) tp->parallel_for(ntasks, 1, [&p](int64_t b, int64_t e) { run_tasks_packed_a(p, b, e); });
  else run_tasks_packed_a(p, 0, ntasks);
}

#endif  // DLRT_AMX

}  // namespace

bool amx_bf16x3_available() {
#ifdef DLRT_AMX
  const device::CpuFeatures& f = device::cpu_features();
  if (!f.amx_tile || !f.amx_bf16 || !f.avx512_bf16) return false;
  if (cpu_isa() < CpuIsa::kAvx512) return false;
  return device::request_amx_permission();
#else
  return false;
#endif
}

size_t amx_bf16x3_packed_bytes(int64_t K, int64_t N) {
  return static_cast<size_t>(round_up(std::max<int64_t>(K, 1), kStep) * round_up(std::max<int64_t>(N, 1), kBlockN)) *
         4;
}

void amx_bf16x3_pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst) {
  const int64_t KS = ceil_div(K, kStep), NB = ceil_div(N, kBlockN);
  auto* out = static_cast<uint16_t*>(dst);
#ifdef DLRT_AMX
  if (!trans && amx_bf16x3_available()) {
    for (int64_t nb = 0; nb < NB; ++nb)
      convert_b_block(B + nb * kBlockN, ldb, K, KS, std::min(kBlockN, N - nb * kBlockN), out + nb * KS * kBTileSet);
    return;
  }
#endif
  std::memset(dst, 0, amx_bf16x3_packed_bytes(K, N));
  for (int64_t nb = 0; nb < NB; ++nb)
    for (int64_t s = 0; s < KS; ++s) {
      uint16_t* set = out + (nb * KS + s) * kBTileSet;
      for (int64_t kk = 0; kk < kStep; ++kk) {
        const int64_t k = s * kStep + kk;
        if (k >= K) break;
        for (int64_t jj = 0; jj < kBlockN; ++jj) {
          const int64_t j = nb * kBlockN + jj;
          if (j >= N) break;
          const float v = trans ? B[j * ldb + k] : B[k * ldb + j];
          // Tile (jj / 16) of the set, row kk / 2, element 2 * (jj % 16) + kk % 2.
          const int64_t at = (jj / 16) * kTileElems + (kk / 2) * 32 + 2 * (jj % 16) + (kk % 2);
          split(v, set[at], set[2 * kTileElems + at]);
        }
      }
    }
}

size_t amx_bf16x3_packed_a_bytes(int64_t M, int64_t K) {
  return static_cast<size_t>(round_up(std::max<int64_t>(M, 1), 32) * round_up(std::max<int64_t>(K, 1), kStep)) * 4;
}

void amx_bf16x3_pack_a(int64_t M, int64_t K, const float* A, int64_t lda, void* dst) {
#ifdef DLRT_AMX
  const int64_t KS = ceil_div(std::max<int64_t>(K, 1), kStep), pairs = ceil_div(std::max<int64_t>(M, 1), 32);
  auto* out = static_cast<uint16_t*>(dst);
  for (int64_t rp = 0; rp < pairs; ++rp)
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t i0 = rp * 32 + h * 16;
      convert_a_block(A, lda, false, i0, std::clamp<int64_t>(M - i0, 0, 16), K, KS,
                      out + rp * KS * kAPairSet + h * kATileSet, nullptr, kAPairSet);
    }
#else
  (void)M, (void)K, (void)A, (void)lda, (void)dst;
#endif
}

void amx_bf16x3_gemm_packed_a(int64_t M, int64_t N, int64_t K, float alpha, const void* packed_a, const float* B,
                              int64_t ldb, const BRowSource* b_rows, float beta, float* C, int64_t ldc,
                              const GemmEpilogue* ep, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
#ifdef DLRT_AMX
  gemm_packed_a(M, N, K, alpha, static_cast<const uint16_t*>(packed_a), B, ldb, b_rows, beta, C, ldc, ep, pool);
#else
  (void)K, (void)alpha, (void)packed_a, (void)B, (void)ldb, (void)b_rows, (void)beta, (void)C, (void)ldc, (void)ep,
      (void)pool;
#endif
}

void amx_bf16x3_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
                     const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep,
                     ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
#ifdef DLRT_AMX
  gemm(M, N, K, alpha, A, lda, trans_a, static_cast<const uint16_t*>(packed_b), beta, C, ldc, ep, pool);
#else
  (void)K, (void)alpha, (void)A, (void)lda, (void)trans_a, (void)packed_b, (void)beta, (void)C, (void)ldc, (void)ep,
      (void)pool;
#endif
}

}  // namespace dlrt::cpu
