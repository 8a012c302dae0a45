// Kernel body (simd/simd.h), compiled once per vector width by
// conv_direct_whole_k.cpp: the direct convolution (conv_direct.h) for
// weights packed in 8-row panels (the 512-bit GEMM's layout): the phase
// copy of the input, the 8-row register tile over the offset-addressed B
// operand with the whole K in registers, the compacting store with the
// fused epilogue, and the split over threads. At 512 bits the tile is
// 8 x 48 (24 zmm accumulators) and runs the instruction sequences of the
// former AVX-512-only kernel (ymm narrow tiles and extra column, the
// permuted copy of small planes, masked two-piece stores); at 256 bits it
// is 8 x 8, at 128 bits 8 x 12 on aarch64 (32 registers) and 8 x 4 on x86:
// only tests run those (the callers run the 512-bit tile, on weights packed
// for AVX-512).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace conv_direct_whole_k_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"
#include "backends/cpu/kernels/activation_simd.h"

constexpr int kMR = 8;  // rows of a packed A panel
constexpr int kL = kLanes;
// Vectors of a tile's row: the 8 x kNV accumulators, kNV B vectors and a
// broadcast fit the register file (3 at 512 bits and on aarch64, 1 below).
constexpr int kNV = kRegisters >= 32 ? 3 : 1;
constexpr int kNR = kNV * kL;  // grid columns of a tile
static_assert(kMR * kNV + kNV + 1 <= kRegisters, "the tile's accumulators and operands fit the registers");
static_assert(kWidth != SimdWidth::k512 || kNR == kConvDirectAvx512Cols, "the 512-bit tile is conv_direct.h's");
// Half vectors that hold one packed A column (the 8 rows of a panel): one ymm at 512 bits.
constexpr int kPH = kMR / kHalfLanes;
static_assert(kMR % kHalfLanes == 0, "a panel column is whole half vectors");

// Input bytes of one column block (all its channels' phase rows) kept in L2
// while every M panel runs over the block.
constexpr int64_t kBlockBytes = 512 * 1024;

void zero_floats(float* dst, int64_t n) {
  int64_t c = 0;
  for (; c + kL <= n; c += kL) storeu(dst + c, zero());
  if (c < n) store_first(dst + c, zero(), n - c);
}

// dst[j] = src[j * s] for j < n (reads nothing past src[(n - 1) * s]).
void gather_row(const float* src, int64_t s, int64_t n, float* dst) {
  if (s == 1) {
    int64_t c = 0;
    for (; c + kL <= n; c += kL) storeu(dst + c, loadu(src + c));
    if (c < n) store_first(dst + c, load_first(src + c, n - c), n - c);
    return;
  }
  if (s == 2) {
    const int64_t span = 2 * n - 1;  // inputs read
    for (int64_t i = 0; i < n; i += kL) {
      const int64_t at = 2 * i;
      Vf e, o;
      deinterleave2(load_first(src + at, span - at), load_first(src + at + kL, span - at - kL), e, o);
      store_first(dst + i, e, n - i);
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j * s];
}

// The phase copy's row primitives (conv_direct_fill.h), inlined into fill_channel.
struct Rows {
  static void zero(float* dst, int64_t n) { zero_floats(dst, n); }
  static void gather(const float* src, int64_t s, int64_t n, float* dst) { gather_row(src, s, n, dst); }
};

// Rows [r0, r1) of the copied planes of one input channel xc [in_h, in_w] into dst (nphase planes of hq x wq).
void fill_channel(const ConvDirectPlan& P, const float* xc, float* dst, int64_t r0, int64_t r1) {
  conv_direct_fill_phases<Rows>(P, xc, dst, r0, r1);
}

// Channels of at most kSmallPlane input floats (7x7 and 8x8 planes:
// resnet18's layer4) are copied through a table rather than row by row (27
// rows of 7 floats per channel there; docs/performance-decisions.md): entry
// e of a channel's copied planes is input float from[e], or 0 where
// from[e] < 0. The table comes from the row copy itself, run once on a
// channel whose values are their own indices. Where the channel fits four
// vectors (64 floats at 512 bits, 32 at 256, 16 at NEON's 128) the entries
// are lookups in them (lookup4); otherwise scalar loads.
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

// The copied planes of one channel xc (in floats) from the table (padded
// with -1 to a multiple of 16 entries): where the channel fits 4 vectors,
// each vector of entries is one lookup4 of them.
__attribute__((always_inline)) inline void fill_from_table(const float* xc, int64_t in, const int32_t* table,
                                                           int64_t per, float* dc) {
  if constexpr (kNativePermute) {
    if (in <= 4 * kLanes) {
      Vf v[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) v[q] = load_first(xc + q * kLanes, in - q * kLanes);
      for (int64_t e = 0; e < per; e += kLanes) store_first(dc + e, lookup4(v, load_index(table + e)), per - e);
      return;
    }
  }
  for (int64_t e = 0; e < per; ++e) dc[e] = table[e] >= 0 ? xc[table[e]] : 0.0f;
}

const float* copy_small_planes(const ConvDirectPlan& P, const float* x, ThreadPool* pool) {
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
  for (int64_t e = 0; e < chunks * 16; ++e)
    idx[static_cast<size_t>(e)] = static_cast<int32_t>(from[static_cast<size_t>(e)]);
  const int32_t* table = idx.data();  // the caller's; pool tasks only read it
  // Whole channels only (split_rows false below).
  auto fill = [&](const ConvDirectPlan&, const float* xc, float* dc, int64_t, int64_t) {
    fill_from_table(xc, in, table, per, dc);
  };
  return conv_direct_copy_input(P, x, pool, fill, zero_floats, kCopySplitFloats, kCopyChunkFloats, false);
}

// Where a finished tile goes: the tile buffer `t` (8 rows of kNR floats,
// stored by store_tile), or straight from the registers through the
// epilogue into y. From the registers, grid column c is output (c / wq,
// c % wq): 1x1 grids (wq == out_w) are the output columns themselves; wider
// grids (out_w >= kL, so a vector spans at most two grid rows) store each
// vector as two masked pieces, one per row, dropping the columns past
// out_w. Relu and Clip are a clamp in registers; any other activation
// (other_act) runs on a row's vectors in registers too (act::apply_array of
// activation_simd.h), before the store: once applied to the stored row
// through apply_activation, it re-read masked stores that do not forward
// and cost a dispatch per row, which made a fused SiLU slower than none.
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

// One 8 x (kL*NV) tile at grid column j0 (src already offset by j0) of M
// panel q: the whole K in registers, slice by slice of the packed weights.
// kMask: the last vector column is partial (loads its first `last` lanes,
// so nothing past the grid is read). Rows [0, rows) are stored (output rows
// m0 + i). kExtra (NV == kNV, no mask, stored from the registers only): one
// more grid column, j0 + kNR, the last of the grid, as half-vector FMAs per
// K step over the panel's rows (the weights the tile broadcasts, loaded as
// vectors) instead of a 1-column tile of its own that re-reads the panel
// and a B row per K step (resnet18's 7x7 layer4: 49 columns).
template <int NV, bool kMask, bool kExtra = false>
void direct_tile(const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, bool prefetch_next, const float* src,
                 const int64_t* off, int64_t last, int rows, int64_t m0, int64_t j0, const TileOut& out) {
  Vf acc[kMR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  static_assert(!kExtra || (NV == kNV && !kMask), "the extra column follows a full tile");
  Vh extra[kPH];
#pragma GCC unroll 4
  for (int h = 0; h < kPH; ++h) extra[h] = zero_h();
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
      __builtin_prefetch(pf + p * kMR, 0, 2);
      const float* s = src + o[p];
      Vf b[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) b[v] = (kMask && v == NV - 1) ? load_first(s + kL * v, last) : loadu(s + kL * v);
#pragma GCC unroll 8
      for (int i = 0; i < kMR; ++i) {
        const Vf av = set1(a[p * kMR + i]);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[i][v] = fmadd(av, b[v], acc[i][v]);
      }
      if constexpr (kExtra) {
        const Vh sx = set1_h(s[kNR]);
#pragma GCC unroll 4
        for (int h = 0; h < kPH; ++h) extra[h] = fmadd_h(loadu_h(a + p * kMR + kHalfLanes * h), sx, extra[h]);
      }
    }
  }
  if (out.t) {
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) storeu(out.t + i * kNR + kL * v, acc[i][v]);
    return;
  }
  // Per vector column: the output index and lanes of its piece in grid row
  // oh (o1, k1) and of the piece in row oh + 1 (o2, k2; none for 1x1 grids).
  int64_t o1[NV], o2[NV];
  Mask k1[NV], k2[NV];
  bool two[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    const int64_t n_v = (kMask && v == NV - 1) ? last : kL;  // real lanes of this vector
    const int64_t c = j0 + kL * v;
    if (out.wq == out.out_w) {
      o1[v] = o2[v] = c;
      k1[v] = first_lanes(n_v);
      k2[v] = first_lanes(0);
      two[v] = false;
      continue;
    }
    const int64_t oh = c / out.wq, ow0 = c - oh * out.wq;
    const int64_t split = std::min<int64_t>(kL, out.wq - ow0);  // lanes [0, split) are row oh
    o1[v] = oh * out.out_w + ow0;
    k1[v] = first_lanes(ow0 < out.out_w ? std::min({split, out.out_w - ow0, n_v}) : 0);
    o2[v] = (oh + 1) * out.out_w - split;  // lane k >= split is column k - split of row oh + 1
    const int64_t e2 = std::min({int64_t{kL}, split + out.out_w, n_v});
    k2[v] = lanes_range(split, e2);
    two[v] = e2 > split;
  }
  const Vf lo = set1(out.lo), hi = set1(out.hi);
  alignas(64) float ex[kMR];
  int64_t ex_at = -1;  // the extra column's output index (-1: none, or a dropped grid column)
  if constexpr (kExtra) {
#pragma GCC unroll 4
    for (int h = 0; h < kPH; ++h) storeu_h(ex + kHalfLanes * h, extra[h]);
    const int64_t c = j0 + kNR, oh = c / out.wq, ow = c - oh * out.wq;
    if (ow < out.out_w) ex_at = oh * out.out_w + ow;
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    if (i >= rows) break;
    const int64_t m = m0 + i;
    float* ym = out.y + m * out.plane;
    const float* zm = out.residual ? out.residual + m * out.plane : nullptr;
    const Vf bias = set1(out.bias ? out.bias[m] : 0.0f);
    auto pre = [&](int v) {  // bias and residual
      Vf r = add(acc[i][v], bias);
      if (zm) {
        Vf z = load_where(k1[v], zm + o1[v]);
        if (two[v]) z = bit_or(z, load_where(k2[v], zm + o2[v]));  // disjoint lanes, zero elsewhere
        r = add(r, z);
      }
      return r;
    };
    auto put = [&](int v, Vf r) {
      store_where(ym + o1[v], k1[v], r);
      if (two[v]) store_where(ym + o2[v], k2[v], r);
    };
    if (out.other_act) {
      // (Apart from the clamp path, whose values never go through memory.)
      Vf r[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) r[v] = pre(v);
      act::apply_array(*out.act, r, NV);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) put(v, r[v]);
    } else {
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        Vf r = pre(v);
        if (out.clamp) r = min(hi, max(lo, r));
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
// vectorised over the 8 rows of the A panel instead (kPH half-vector FMAs
// per column and K step: one ymm at 512 bits); U partial sums per column
// hide the FMA latency. The raw tile goes to t (rows of kNR floats),
// columns [0, NC).
template <int NC>
void narrow_tile(const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, const float* src, const int64_t* off,
                 float* t) {
  constexpr int U = NC == 1 ? 4 : NC <= 3 ? 3 : 2;
  Vh acc[NC][U][kPH];
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 4
      for (int h = 0; h < kPH; ++h) acc[j][u][h] = zero_h();
  auto step = [&](const float* a, int64_t p, const float* s, int u) __attribute__((always_inline)) {
    Vh av[kPH];
#pragma GCC unroll 4
    for (int h = 0; h < kPH; ++h) av[h] = loadu_h(a + p * kMR + kHalfLanes * h);
#pragma GCC unroll 4
    for (int j = 0; j < NC; ++j) {
      const Vh sj = set1_h(s[j]);
#pragma GCC unroll 4
      for (int h = 0; h < kPH; ++h) acc[j][u][h] = fmadd_h(av[h], sj, acc[j][u][h]);
    }
  };
  for (int64_t p0 = kr.begin / KC * KC; p0 < kr.end; p0 += KC) {
    const int64_t kc = std::min(KC, kr.K - p0);
    const float* a = w + Mp * p0 + q * kMR * kc;
    const int64_t* o = off + p0;
    const int64_t pe = std::min(kc, kr.end - p0);
    int64_t p = std::max<int64_t>(0, kr.begin - p0);
    for (; p + U <= pe; p += U) {
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) step(a, p + u, src + o[p + u], u);
    }
    for (; p < pe; ++p) step(a, p, src + o[p], 0);
  }
#pragma GCC unroll 4
  for (int j = 0; j < NC; ++j) {
    alignas(64) float col[kMR];
#pragma GCC unroll 4
    for (int h = 0; h < kPH; ++h) {
      Vh sum = acc[j][0][h];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) sum = add_h(sum, acc[j][u][h]);
      storeu_h(col + kHalfLanes * h, sum);
    }
    for (int i = 0; i < kMR; ++i) t[i * kNR + j] = col[i];
  }
}

// Grid columns [j0, j0 + n) of tile t (rows [0, rows) are real, output rows
// m0 + i) to their compact places in y, through the epilogue.
void store_tile(const float* t, int rows, int64_t m0, int64_t j0, int64_t n, const ConvDirectPlan& P, float* y,
                int64_t plane, const GemmEpilogue& ep) {
  const int64_t out_w = P.g.out_w, wq = P.wq;
  const ClampStage cs = clamp_stage(ep.act);
  const bool clamp = cs.clamp;
  const bool other_act = !clamp_or_none(ep.act);
  const Vf lo = set1(cs.lo);
  const Vf hi = set1(cs.hi);
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
        const Vf bias = set1(ep.row_bias ? ep.row_bias[m] : 0.0f);
        Vf v[kNV];  // valid <= kNR
        int nv = 0;
        for (int64_t c = 0; c < valid; c += kL, ++nv) {
          v[nv] = add(load_first(ti + c, valid - c), bias);
          if (zi) v[nv] = add(v[nv], load_first(zi + c, valid - c));
          if (clamp) v[nv] = min(hi, max(lo, v[nv]));
        }
        if (other_act) act::apply_array(ep.act, v, nv);
        for (int k = 0; k < nv; ++k) store_first(yi + kL * k, v[k], valid - kL * k);
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

  const float* get(const ConvDirectPlan& plan, const float* x) const {
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

Source prepare_source(const ConvDirectPlan& plan, const float* x, ThreadPool* pool, bool banded) {
  Source s;
  const ConvDirectGeometry& g = plan.g;
  const int threads = pool ? pool->num_threads() : 1;
  if (!plan.copy)
    s.shared = x;
  else if (g.in_h * g.in_w <= kSmallPlane)
    s.shared = copy_small_planes(plan, x, pool);
  else if (conv_direct_private_copy(plan, threads, banded, device::cpu_caches().l2))
    s.call = conv_direct_whole_k_detail::next_call();
  else
    s.shared =
        conv_direct_copy_input(plan, x, pool, &fill_channel, zero_floats, kCopySplitFloats, kCopyChunkFloats, true);
  return s;
}

// The tile of n columns (kNR > n > 4) at grid column j0: NV = ceil(n / kL) vectors, the last partial.
void partial_tile(const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, bool pf, const float* src,
                  const int64_t* off, int rows, int64_t m0, int64_t j0, int64_t n, const TileOut& out) {
  const int nv = static_cast<int>(ceil_div(n, kL));
  const int64_t last = n - kL * (nv - 1);
  if constexpr (kNV >= 3) {
    if (nv == 3) return direct_tile<3, true>(w, Mp, KC, kr, q, pf, src, off, last, rows, m0, j0, out);
    if (nv == 2) return direct_tile<2, true>(w, Mp, KC, kr, q, pf, src, off, last, rows, m0, j0, out);
  }
  direct_tile<1, true>(w, Mp, KC, kr, q, pf, src, off, last, rows, m0, j0, out);
}

void any_narrow_tile(int64_t n, const float* w, int64_t Mp, int64_t KC, KRange kr, int64_t q, const float* src,
                     const int64_t* off, float* t) {
  switch (n) {
    case 1:
      return narrow_tile<1>(w, Mp, KC, kr, q, src, off, t);
    case 2:
      return narrow_tile<2>(w, Mp, KC, kr, q, src, off, t);
    case 3:
      return narrow_tile<3>(w, Mp, KC, kr, q, src, off, t);
    default:
      return narrow_tile<4>(w, Mp, KC, kr, q, src, off, t);
  }
}

}  // namespace
}  // namespace conv_direct_whole_k_body

void conv_direct_whole_k(const ConvDirectPlan& plan, const int64_t* off, const float* x, const PackedMatrix& w,
                         float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane, int64_t k_begin,
                         int64_t k_end) {
  using namespace conv_direct_whole_k_body;
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
  const bool from_registers = plan.wq == g.out_w || g.out_w >= kL;
  // A 1-column remainder (7x7 grids: 49 columns) rides on the last full
  // tile (direct_tile's kExtra) where that tile stores from the registers.
  const bool absorb = from_registers && plan.grid > kNR && plan.grid % kNR == 1;
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
  // Banded, the blocks split the tiles' vectors evenly (a short last tile
  // costs its vectors): block b starts at the tile nearest to b / blocks of
  // them, a tie going to the earlier blocks, as long as every block still
  // gets a tile. Equal tile counts left one thread the more work where the
  // last tile is short (a 1640-column grid, 34 tiles and 8 columns at 512
  // bits: 18 and 16 + 8 columns; now 17 and 17 + 8).
  const int64_t vecs = kNV * (tiles - 1) + (absorb ? kNV : ceil_div(plan.grid - (tiles - 1) * kNR, kL));
  const bool by_vectors = banded && vecs >= kNV * blocks;
  if (!by_vectors) blocks = ceil_div(wide, per_block);
  auto block_tile = [&](int64_t b) -> int64_t {
    if (b >= blocks) return tiles;
    if (by_vectors) return (2 * b * vecs + kNV * blocks) / (2 * kNV * blocks);
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
          direct_tile<kNV, false, true>(wd, Mp, KC, kr, q, pf, sj, off, kL, rows, m0, j0, out);
          continue;
        }
        if (n == kNR) {
          direct_tile<kNV, false>(wd, Mp, KC, kr, q, pf, sj, off, kL, rows, m0, j0, out);
        } else if (n <= 4) {
          any_narrow_tile(n, wd, Mp, KC, kr, q, sj, off, t);
          store_tile(t, rows, m0, j0, n, plan, y, plane, ep);
          continue;
        } else {
          partial_tile(wd, Mp, KC, kr, q, pf, sj, off, rows, m0, j0, n, out);
        }
        if (!from_registers) store_tile(t, rows, m0, j0, n, plan, y, plane, ep);
      }
    }
  };
  if (threads > 1 && units > 1)
    pool->parallel_for(units, 1, body);
  else
    body(0, units);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
