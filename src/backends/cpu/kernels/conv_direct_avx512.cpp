// AVX-512 direct convolution (see conv_direct.h): the phase copy of the
// input, the 8 x 48 register tile over the offset-addressed B operand, the
// compacting store with the fused epilogue, and the split over threads.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_direct_fill.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "device/cpu_caches.h"

#ifdef DLRT_HAVE_AVX512_PATHS

namespace dlrt::cpu {
namespace {

constexpr int kMR = kSgemmAvx512MR;  // 8
constexpr int kNR = kSgemmAvx512NR;  // 48
static_assert(kMR == 8 && kNR == 48, "the direct conv tile is written for the 8 x 48 AVX-512 GEMM panels");
static_assert(kNR == kConvDirectAvx512Cols, "conv_direct_avx512_extra_column counts the tile's columns");

// Input bytes of one column block (all its channels' phase rows) kept in L2
// while every M panel runs over the block.
constexpr int64_t kBlockBytes = 512 * 1024;

DLRT_AVX512 inline void zero_floats(float* dst, int64_t n) {
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) _mm512_storeu_ps(dst + c, _mm512_setzero_ps());
  if (c < n) _mm512_mask_storeu_ps(dst + c, avx512::tail_mask(n - c), _mm512_setzero_ps());
}

// dst[j] = src[j * s] for j < n (reads nothing past src[(n - 1) * s]).
DLRT_AVX512 inline void gather_row(const float* src, int64_t s, int64_t n, float* dst) {
  if (s == 1) {
    int64_t c = 0;
    for (; c + 16 <= n; c += 16) _mm512_storeu_ps(dst + c, _mm512_loadu_ps(src + c));
    if (c < n) {
      const __mmask16 k = avx512::tail_mask(n - c);
      _mm512_mask_storeu_ps(dst + c, k, _mm512_maskz_loadu_ps(k, src + c));
    }
    return;
  }
  if (s == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const int64_t span = 2 * n - 1;  // inputs read
    for (int64_t i = 0; i < n; i += 16) {
      const int64_t at = 2 * i;
      const __m512 a = _mm512_maskz_loadu_ps(avx512::tail_mask(span - at), src + at);
      const __m512 b = _mm512_maskz_loadu_ps(avx512::tail_mask(std::max<int64_t>(0, span - at - 16)), src + at + 16);
      _mm512_mask_storeu_ps(dst + i, avx512::tail_mask(n - i), _mm512_permutex2var_ps(a, even, b));
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j * s];
}

// The phase copy's row primitives (conv_direct_fill.h), inlined into fill_channel.
struct Rows {
  DLRT_AVX512 static void zero(float* dst, int64_t n) { zero_floats(dst, n); }
  DLRT_AVX512 static void gather(const float* src, int64_t s, int64_t n, float* dst) { gather_row(src, s, n, dst); }
};

// Rows [r0, r1) of the copied planes of one input channel xc [in_h, in_w] into dst (nphase planes of hq x wq).
DLRT_AVX512 void fill_channel(const ConvDirectPlan& P, const float* xc, float* dst, int64_t r0, int64_t r1) {
  conv_direct_fill_phases<Rows>(P, xc, dst, r0, r1);
}

// Channels of at most kSmallPlane input floats (7x7 and 8x8 planes:
// resnet18's layer4) are copied as permutes of their four input vectors
// rather than row by row (27 rows of 7 floats per channel there; docs/performance-decisions.md):
// entry e of a channel's copied planes is input float from[e], or 0
// where from[e] < 0. The table comes from the row copy itself, run once on
// a channel whose values are their own indices.
constexpr int64_t kSmallPlane = 64;
// conv_direct_copy_input's split: over the threads from 64K copied floats, chunks of about 16K.
constexpr int64_t kCopySplitFloats = 65536, kCopyChunkFloats = 16384;
// The row copy on a channel of indices: gathers as Rows does (the indices
// are floats like any input), and marks padding with -1 instead of zeros.
struct IndexRows : Rows {
  static void zero(float* dst, int64_t n) {
    for (int64_t j = 0; j < n; ++j) dst[j] = -1.0f;
  }
};

DLRT_AVX512 const float* copy_small_planes(const ConvDirectPlan& P, const float* x, ThreadPool* pool) {
  const ConvDirectGeometry& g = P.g;
  const int64_t in = g.in_h * g.in_w, per = P.nphase * P.hq * P.wq, chunks = ceil_div(per, 16);
  thread_local std::vector<float> ids, from;  // grow only
  thread_local std::vector<int32_t> idx;
  if (static_cast<int64_t>(ids.size()) < in) ids.resize(static_cast<size_t>(in));
  for (int64_t i = 0; i < in; ++i) ids[static_cast<size_t>(i)] = static_cast<float>(i);
  if (static_cast<int64_t>(from.size()) < chunks * 16) from.resize(static_cast<size_t>(chunks * 16));
  if (static_cast<int64_t>(idx.size()) < chunks * 16) idx.resize(static_cast<size_t>(chunks * 16));
  conv_direct_fill_phases<IndexRows>(P, ids.data(), from.data(), 0, P.hq);
  for (int64_t e = per; e < chunks * 16; ++e) from[static_cast<size_t>(e)] = -1.0f;
  for (int64_t e = 0; e < chunks * 16; ++e) idx[static_cast<size_t>(e)] = static_cast<int32_t>(from[static_cast<size_t>(e)]);
  const int32_t* table = idx.data();  // the caller's; pool tasks only read it
  // Whole channels only (split_rows false below).
  auto fill = [&](const ConvDirectPlan&, const float* xc, float* dc, int64_t, int64_t) DLRT_AVX512 {
    __m512 v[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
      v[q] = _mm512_maskz_loadu_ps(avx512::tail_mask(std::max<int64_t>(0, in - 16 * q)), xc + 16 * q);
    const __m512i lanes32 = _mm512_set1_epi32(32);
    for (int64_t t = 0; t < chunks; ++t) {
      const __m512i ix = _mm512_loadu_si512(table + 16 * t);
      const __mmask16 real = _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512());
      const __mmask16 high = _mm512_cmpge_epi32_mask(ix, lanes32);
      const __m512 lo = _mm512_permutex2var_ps(v[0], ix, v[1]), hi = _mm512_permutex2var_ps(v[2], ix, v[3]);
      const __m512 r = _mm512_maskz_mov_ps(real, _mm512_mask_blend_ps(high, lo, hi));
      _mm512_mask_storeu_ps(dc + 16 * t, avx512::tail_mask(per - 16 * t), r);
    }
  };
  return conv_direct_copy_input(P, x, pool, fill, zero_floats, kCopySplitFloats, kCopyChunkFloats, false);
}

// Where a finished tile goes: the tile buffer `t` (8 rows of kNR floats,
// stored by store_tile), or straight from the registers through the
// epilogue into y. From the registers, grid column c is output (c / wq,
// c % wq): 1x1 grids (wq == out_w) are the output columns themselves; wider
// grids (out_w >= 16, so a 16-column vector spans at most two grid rows)
// store each vector as two masked pieces, one per row, dropping the columns
// past out_w. Relu and Clip are a clamp in registers; any other activation
// (other_act) runs on a row's vectors in registers too (act_ps_array),
// before the store: once applied to the stored row through
// apply_activation, it re-read masked stores that do not forward and cost
// a dispatch per row, which made a fused SiLU slower than none.
struct TileOut {
  float* t = nullptr;  // non-null: write the raw tile here
  float* y = nullptr;  // else: output row m is y + m * plane
  int64_t plane = 0, wq = 0, out_w = 0;
  const float* bias = nullptr;      // per output row, or null
  const float* residual = nullptr;  // like y, or null
  bool clamp = false, other_act = false;
  float lo = 0.0f, hi = 0.0f;
  const Activation* act = nullptr;
};

// The terms [begin, end) of the K-long sum (all of it but for a partial product).
struct KRange {
  int64_t K = 0, begin = 0, end = 0;
};

DLRT_AVX512 inline __mmask16 lanes(int64_t a, int64_t b) {  // lanes [a, b), 0 <= a <= b <= 16
  return static_cast<__mmask16>((1u << b) - (1u << a));
}

// One 8 x (16*NV) tile at grid column j0 (src already offset by j0) of M
// panel q: the whole K in registers, slice by slice of the packed weights.
// kMask: the last zmm column is partial (loads through `mask`, so nothing
// past the grid is read). Rows [0, rows) are stored (output rows m0 + i).
// kExtra (NV == 3, no mask, stored from the registers only): one more grid
// column, j0 + 48, the last of the grid, as one 8-lane FMA per K step over
// the panel's rows (the weights the tile broadcasts, loaded as a vector)
// instead of a 1-column tile of its own that re-reads the panel and a B
// row per K step (resnet18's 7x7 layer4: 49 columns).
template <int NV, bool kMask, bool kExtra = false>
DLRT_AVX512 void direct_tile(const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, bool prefetch_next,
                             const float* src, const int64_t* off, __mmask16 mask, int rows, int64_t m0, int64_t j0,
                             int64_t n, const TileOut& out) {
  __m512 acc[kMR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  static_assert(!kExtra || (NV == 3 && !kMask), "the extra column follows a full tile");
  __m256 extra = _mm256_setzero_ps();
  for (int64_t p0 = kr.begin / KC * KC; p0 < kr.end; p0 += KC) {
    const int64_t kc = std::min(KC, kr.K - p0);
    const float* __restrict a = w + Mp * p0 + q * kMR * kc;
    // The panel the next tile reads, pulled towards L2 while this tile
    // computes: the next M panel (contiguous in the slice), or this one again.
    const float* pf = prefetch_next ? a + kMR * kc : a;
    const int64_t* o = off + p0;
    const int64_t pe = std::min(kc, kr.end - p0);
#pragma GCC unroll 4
    for (int64_t p = std::max<int64_t>(0, kr.begin - p0); p < pe; ++p) {
      _mm_prefetch(reinterpret_cast<const char*>(pf + p * kMR), _MM_HINT_T1);
      const float* s = src + o[p];
      __m512 b[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        b[v] = (kMask && v == NV - 1) ? _mm512_maskz_loadu_ps(mask, s + 16 * v) : _mm512_loadu_ps(s + 16 * v);
#pragma GCC unroll 8
      for (int i = 0; i < kMR; ++i) {
        const __m512 av = _mm512_set1_ps(a[p * kMR + i]);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, b[v], acc[i][v]);
      }
      if constexpr (kExtra) extra = _mm256_fmadd_ps(_mm256_loadu_ps(a + p * kMR), _mm256_set1_ps(s[16 * NV]), extra);
    }
  }
  if (out.t) {
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) _mm512_store_ps(out.t + i * kNR + 16 * v, acc[i][v]);
    return;
  }
  // Per zmm column: the output index and lanes of its piece in grid row
  // oh (o1, k1) and of the piece in row oh + 1 (o2, k2; none for 1x1 grids).
  int64_t o1[NV], o2[NV];
  __mmask16 k1[NV], k2[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    const __mmask16 mk = (kMask && v == NV - 1) ? mask : __mmask16(0xFFFF);
    const int64_t c = j0 + 16 * v;
    if (out.wq == out.out_w) {
      o1[v] = o2[v] = c;
      k1[v] = mk;
      k2[v] = 0;
      continue;
    }
    const int64_t oh = c / out.wq, ow0 = c - oh * out.wq;
    const int64_t split = std::min<int64_t>(16, out.wq - ow0);  // lanes [0, split) are row oh
    o1[v] = oh * out.out_w + ow0;
    k1[v] = ow0 < out.out_w ? static_cast<__mmask16>(lanes(0, std::min(split, out.out_w - ow0)) & mk) : 0;
    o2[v] = (oh + 1) * out.out_w - split;  // lane k >= split is column k - split of row oh + 1
    k2[v] = static_cast<__mmask16>(lanes(split, std::min<int64_t>(16, split + out.out_w)) & mk);
  }
  const __m512 lo = _mm512_set1_ps(out.lo), hi = _mm512_set1_ps(out.hi);
  alignas(32) float ex[kMR];
  int64_t ex_at = -1;  // the extra column's output index (-1: none, or a dropped grid column)
  if constexpr (kExtra) {
    _mm256_store_ps(ex, extra);
    const int64_t c = j0 + 16 * NV, oh = c / out.wq, ow = c - oh * out.wq;
    if (ow < out.out_w) ex_at = oh * out.out_w + ow;
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    if (i >= rows) break;
    const int64_t m = m0 + i;
    float* ym = out.y + m * out.plane;
    const float* zm = out.residual ? out.residual + m * out.plane : nullptr;
    const __m512 bias = _mm512_set1_ps(out.bias ? out.bias[m] : 0.0f);
    auto pre = [&](int v) DLRT_AVX512 {  // bias and residual
      __m512 r = _mm512_add_ps(acc[i][v], bias);
      if (zm) {
        __m512 z = _mm512_maskz_loadu_ps(k1[v], zm + o1[v]);
        if (k2[v]) z = _mm512_mask_loadu_ps(z, k2[v], zm + o2[v]);
        r = _mm512_add_ps(r, z);
      }
      return r;
    };
    auto put = [&](int v, __m512 r) DLRT_AVX512 {
      _mm512_mask_storeu_ps(ym + o1[v], k1[v], r);
      if (k2[v]) _mm512_mask_storeu_ps(ym + o2[v], k2[v], r);
    };
    if (out.other_act) {
      // (Apart from the clamp path, whose values never go through memory.)
      __m512 r[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) r[v] = pre(v);
      avx512::act_ps_array(*out.act, r, NV);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) put(v, r[v]);
    } else {
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        __m512 r = pre(v);
        if (out.clamp) r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
        put(v, r);
      }
    }
    if (kExtra && ex_at >= 0) {
      float e = ex[i] + (out.bias ? out.bias[m] : 0.0f);
      if (zm) e += zm[ex_at];
      if (out.clamp) e = std::min(out.hi, std::max(out.lo, e));
      if (out.other_act) e = activate(*out.act, e);
      ym[ex_at] = e;
    }
  }
}

// A last tile of NC <= 4 grid columns (a 7x7 grid leaves 1, 14x14 leaves 4):
// vectorised over the 8 rows of the A panel instead (one 8-lane FMA per
// column and K step); U partial sums per column hide the FMA latency. The
// raw tile goes to t (rows of kNR floats), columns [0, NC).
template <int NC>
DLRT_AVX512 void narrow_tile(const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, const float* src,
                             const int64_t* off, float* t) {
  constexpr int U = NC == 1 ? 4 : NC <= 3 ? 3 : 2;
  __m256 acc[NC][U];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) acc[j][u] = _mm256_setzero_ps();
  for (int64_t p0 = kr.begin / KC * KC; p0 < kr.end; p0 += KC) {
    const int64_t kc = std::min(KC, kr.K - p0);
    const float* a = w + Mp * p0 + q * kMR * kc;
    const int64_t* o = off + p0;
    const int64_t pe = std::min(kc, kr.end - p0);
    int64_t p = std::max<int64_t>(0, kr.begin - p0);
    for (; p + U <= pe; p += U) {
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) {
        const __m256 av = _mm256_loadu_ps(a + (p + u) * kMR);
        const float* s = src + o[p + u];
#pragma GCC unroll 4
        for (int j = 0; j < NC; ++j) acc[j][u] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(s + j), acc[j][u]);
      }
    }
    for (; p < pe; ++p) {
      const __m256 av = _mm256_loadu_ps(a + p * kMR);
      const float* s = src + o[p];
#pragma GCC unroll 4
      for (int j = 0; j < NC; ++j) acc[j][0] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(s + j), acc[j][0]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j) {
    __m256 sum = acc[j][0];
#pragma GCC unroll 4
    for (int u = 1; u < U; ++u) sum = _mm256_add_ps(sum, acc[j][u]);
    alignas(32) float col[kMR];
    _mm256_store_ps(col, sum);
    for (int i = 0; i < kMR; ++i) t[i * kNR + j] = col[i];
  }
}

// Grid columns [j0, j0 + n) of tile t (rows [0, rows) are real, output rows
// m0 + i) to their compact places in y, through the epilogue.
DLRT_AVX512 void store_tile(const float* t, int rows, int64_t m0, int64_t j0, int64_t n, const ConvDirectPlan& P,
                            float* y, int64_t plane, const GemmEpilogue& ep) {
  const int64_t out_w = P.g.out_w, wq = P.wq;
  const ClampStage cs = clamp_stage(ep.act);
  const bool clamp = cs.clamp;
  const bool other_act = !clamp_or_none(ep.act);
  const __m512 lo = _mm512_set1_ps(cs.lo);
  const __m512 hi = _mm512_set1_ps(cs.hi);
  int64_t oh = j0 / wq, ow = j0 - oh * wq;
  for (int64_t jj = 0; jj < n; ow = 0, ++oh) {
    const int64_t len = std::min(n - jj, wq - ow);
    const int64_t valid = ow < out_w ? std::min(len, out_w - ow) : 0;
    if (valid > 0) {
      const int64_t idx = oh * out_w + ow;
      for (int i = 0; i < rows; ++i) {
        const int64_t m = m0 + i;
        const float* ti = t + i * kNR + jj;
        float* yi = y + m * plane + idx;
        const float* zi = ep.residual ? ep.residual + m * ep.ldr + idx : nullptr;
        const __m512 bias = _mm512_set1_ps(ep.row_bias ? ep.row_bias[m] : 0.0f);
        __m512 v[kNR / 16];  // valid <= kNR
        __mmask16 mk[kNR / 16];
        int nv = 0;
        for (int64_t c = 0; c < valid; c += 16, ++nv) {
          mk[nv] = avx512::tail_mask(valid - c);
          v[nv] = _mm512_add_ps(_mm512_maskz_loadu_ps(mk[nv], ti + c), bias);
          if (zi) v[nv] = _mm512_add_ps(v[nv], _mm512_maskz_loadu_ps(mk[nv], zi + c));
          if (clamp) v[nv] = _mm512_min_ps(hi, _mm512_max_ps(lo, v[nv]));
        }
        if (other_act) avx512::act_ps_array(ep.act, v, nv);
        for (int k = 0; k < nv; ++k) _mm512_mask_storeu_ps(yi + 16 * k, mk[k], v[k]);
      }
    }
    jj += len;
  }
}

// The phase copy the tiles read. Shared: one copy, split over the threads
// by bands of rows (or by channels), that every thread then reads. Private
// (conv_direct_private_copy): each thread copies the whole input into its
// own scratch on its first unit of the call, so a thread whose units are M
// panels over all the grid reads the copy from its own core's caches rather
// than the other core's, and the threads copy at the same time instead of
// the others waiting for a copy too small to split.
struct Source {
  const float* shared = nullptr;  // null: private copies
  uint64_t call = 0;              // the call's token for the private copies

  DLRT_AVX512 const float* get(const ConvDirectPlan& plan, const float* x) const {
    if (shared) return shared;
    thread_local uint64_t copied_for = 0;
    thread_local const float* copy = nullptr;
    if (copied_for != call) {
      copy = conv_direct_copy_input(plan, x, nullptr, &fill_channel, zero_floats, kCopySplitFloats, kCopyChunkFloats,
                                    false);
      copied_for = call;
    }
    return copy;
  }
};

DLRT_AVX512 Source prepare_source(const ConvDirectPlan& plan, const float* x, ThreadPool* pool, bool banded) {
  static std::atomic<uint64_t> calls{0};
  Source s;
  const ConvDirectGeometry& g = plan.g;
  const int threads = pool ? pool->num_threads() : 1;
  if (!plan.copy) s.shared = x;
  else if (g.in_h * g.in_w <= kSmallPlane) s.shared = copy_small_planes(plan, x, pool);
  else if (conv_direct_private_copy(plan, threads, banded, device::cpu_caches().l2)) s.call = ++calls;
  else
    s.shared =
        conv_direct_copy_input(plan, x, pool, &fill_channel, zero_floats, kCopySplitFloats, kCopyChunkFloats, true);
  return s;
}

}  // namespace

DLRT_AVX512 void conv_direct_avx512(const ConvDirectPlan& plan, const int64_t* off, const float* x,
                                    const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool,
                                    int64_t y_plane, int64_t k_begin, int64_t k_end) {
  conv_direct_note_run();
  const ConvDirectGeometry& g = plan.g;
  const int threads = pool ? pool->num_threads() : 1;
  const int64_t M = w.rows(), K = plan.k, KC = packed_kc(w);
  KRange kr;
  kr.K = K;
  kr.begin = std::clamp<int64_t>(k_begin, 0, K);
  kr.end = k_end < 0 ? K : std::clamp<int64_t>(k_end, kr.begin, K);
  const int64_t panels = ceil_div(M, kMR), Mp = panels * kMR;
  // Tiles store from the registers where TileOut allows; the others through a tile buffer.
  const bool other_act = !clamp_or_none(ep.act);
  const bool from_registers = plan.wq == g.out_w || g.out_w >= 16;
  // A 1-column remainder (7x7 grids: 49 columns) rides on the last full
  // tile (direct_tile's kExtra) where that tile stores from the registers.
  const bool absorb = from_registers && conv_direct_avx512_extra_column(plan);
  const int64_t tiles = absorb ? plan.grid / kNR : ceil_div(plan.grid, kNR);
  // Column blocks whose input window stays in L2 while every M panel runs
  // over them; more blocks where the M panels alone leave a thread short.
  const int64_t col_bytes = (plan.copy ? g.channels * plan.nphase : g.channels) * int64_t{sizeof(float)};
  const int64_t halo = plan.copy ? (plan.hq - g.out_h + 1) * plan.wq : 0;
  const int64_t block_cols = std::max<int64_t>(kNR, kBlockBytes / col_bytes - halo);
  // On 2+ threads a narrow last tile (1-4 columns: 7x7 and 14x14 grids)
  // rides in the last block: a block of its own made units of almost no
  // work that still read their panel's weights, and split the weights
  // between the threads by positions (resnet18's layer4 3x3 with tap
  // columns: 7x7 grids of 49 columns). On one thread the blocks stay as they
  // were (merged was slower there; docs/performance-decisions.md).
  const bool narrow_tail = threads > 1 && tiles > 1 && plan.grid - (tiles - 1) * kNR <= 4;
  const int64_t wide = tiles - (narrow_tail ? 1 : 0);
  int64_t per_block = std::max<int64_t>(1, block_cols / kNR);
  int64_t blocks = ceil_div(wide, per_block);
  if (threads > 1 && blocks * panels < 4 * threads) blocks = std::min(wide, ceil_div(4 * threads, panels));
  // The units run block by block (all M panels of a block, then the next),
  // and the pool deals each thread one contiguous run of them. Where the
  // activations outweigh the weights, the blocks are a multiple of the
  // threads: each thread then takes whole blocks, a band of output rows of
  // every channel, reading the input rows it wrote (or copied) before and
  // writing the rows it reads next (a row the other core wrote crosses
  // between the cores' caches), at the price of reading every panel's
  // weights. Else a thread's run may end inside a block: its part is M
  // panels of all the columns, half the weights each.
  const int64_t weight_bytes = M * K * int64_t{sizeof(float)};
  const int64_t act_bytes = (g.channels * g.in_h * g.in_w + M * g.out_h * g.out_w) * int64_t{sizeof(float)};
  const bool banded = threads > 1 && wide >= threads && act_bytes >= weight_bytes;
  if (banded) blocks = std::min(wide, ceil_div(blocks, threads) * threads);
  per_block = ceil_div(wide, blocks);
  // Banded, the blocks split the tiles' 16-column vectors evenly (a short
  // last tile costs its vectors): block b starts at the tile nearest to
  // b / blocks of them, a tie going to the earlier blocks, as long as every
  // block still gets a tile. Equal tile counts left one thread the more work
  // where the last tile is short (a 1640-column grid, 34 tiles and 8
  // columns: 18 and 16 + 8 columns; now 17 and 17 + 8).
  const int64_t vecs = 3 * (tiles - 1) + (absorb ? 3 : ceil_div(plan.grid - (tiles - 1) * kNR, 16));
  const bool by_vectors = banded && vecs >= 3 * blocks;
  if (!by_vectors) blocks = ceil_div(wide, per_block);
  auto block_tile = [&](int64_t b) -> int64_t {
    if (b >= blocks) return tiles;
    if (by_vectors) return (2 * b * vecs + 3 * blocks) / (6 * blocks);
    return std::min(tiles, b * per_block);
  };
  const int64_t units = blocks * panels;
  const float* wd = w.data();

  TileOut direct_out;
  direct_out.y = y;
  const int64_t plane = y_plane > 0 ? y_plane : g.out_h * g.out_w;
  direct_out.plane = plane;
  direct_out.wq = plan.wq;
  direct_out.out_w = g.out_w;
  direct_out.bias = ep.row_bias;
  direct_out.residual = ep.residual;
  {
    const ClampStage c = clamp_stage(ep.act);
    direct_out.clamp = c.clamp;
    direct_out.other_act = other_act;
    direct_out.lo = c.lo;
    direct_out.hi = c.hi;
    direct_out.act = &ep.act;
  }

  const Source source = prepare_source(plan, x, pool, banded);
  auto body = [&](int64_t ub, int64_t ue) {
    const float* src = source.get(plan, x);
    alignas(64) float t[kMR * kNR];
    TileOut buffered;
    buffered.t = t;
    const TileOut& out = from_registers ? direct_out : buffered;
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t blk = u / panels, q = u % panels;
      const int64_t t0 = block_tile(blk), t1 = block_tile(blk + 1);
      const int rows = static_cast<int>(std::min<int64_t>(kMR, M - q * kMR));
      const int64_t m0 = q * kMR;
      // The first tile of the run prefetches the next panel, so the rest of
      // the run gives it time to arrive; the others re-touch this one. (In
      // the last tile it came too late where that tile is short: the narrow
      // 1-4 columns of 7x7 and 14x14 grids, which do not prefetch at all, or
      // the 15 columns of resnet18's layer4 3x3 after a 48-column tile.
      // resnet18 2 threads x0.973, 1 thread x0.993; mobilenet_v2 1 thread
      // x0.984, 2 threads x1.00.)
      const int64_t pf_tile = t0;
      for (int64_t ti = t0; ti < t1; ++ti) {
        const int64_t j0 = ti * kNR, n = std::min<int64_t>(kNR, plan.grid - j0);
        const bool pf = ti == pf_tile && q + 1 < panels;
        const float* sj = src + j0;
        if (absorb && ti + 1 == tiles) {
          direct_tile<3, false, true>(wd, Mp, KC, kr, q, pf, sj, off, 0xFFFF, rows, m0, j0, kNR + 1, out);
          continue;
        }
        if (n == kNR) {
          direct_tile<3, false>(wd, Mp, KC, kr, q, pf, sj, off, 0xFFFF, rows, m0, j0, n, out);
          if (!from_registers) store_tile(t, rows, m0, j0, n, plan, y, plane, ep);
          continue;
        }
        if (n <= 4) {
          switch (n) {
            case 1: narrow_tile<1>(wd, Mp, KC, kr, q, sj, off, t); break;
            case 2: narrow_tile<2>(wd, Mp, KC, kr, q, sj, off, t); break;
            case 3: narrow_tile<3>(wd, Mp, KC, kr, q, sj, off, t); break;
            default: narrow_tile<4>(wd, Mp, KC, kr, q, sj, off, t); break;
          }
          store_tile(t, rows, m0, j0, n, plan, y, plane, ep);
          continue;
        }
        const int nv = static_cast<int>(ceil_div(n, 16));
        const __mmask16 mk = avx512::tail_mask(n - 16 * (nv - 1));
        if (nv == 3) direct_tile<3, true>(wd, Mp, KC, kr, q, pf, sj, off, mk, rows, m0, j0, n, out);
        else if (nv == 2) direct_tile<2, true>(wd, Mp, KC, kr, q, pf, sj, off, mk, rows, m0, j0, n, out);
        else direct_tile<1, true>(wd, Mp, KC, kr, q, pf, sj, off, mk, rows, m0, j0, n, out);
        if (!from_registers) store_tile(t, rows, m0, j0, n, plan, y, plane, ep);
      }
    }
  };
  if (threads > 1 && units > 1) pool->parallel_for(units, 1, body);
  else body(0, units);
}

}  // namespace dlrt::cpu

#endif
