// Kernel body (simd/simd.h), compiled once per vector width by
// expand_depthwise.cpp: the expand conv's register tiles, one block of kLanes
// channels per vector (expand_depthwise.h), and the sum of the split-K
// projection's partial products. Each output is the bias, then one FMA per
// tap in tap order, then the clamp: the same bits at every tile size.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace expand_depthwise_body {
namespace {

using expand_depthwise_detail::Padded;
using expand_depthwise_detail::Taps;

// Positions per tile for NB blocks: the accumulators, NB weight vectors and
// a broadcast within the register file (32 registers: 12 x 2 + 3, and 8 for
// one block; 16: 6 x 2 + 3 either way).
template <int NB>
constexpr int tile_positions() {
  return kRegisters >= 32 ? (NB == 2 ? 12 : 8) : 6;
}

// R expanded positions from (h, c) on, for NB blocks, stored with bias and
// activation into each block's plane of `pd` at padded (h + pad_top, c +
// pad_left). kPointwise: the R positions are consecutive floats of each input
// channel plane (a 1x1/1 conv: tap t at src + t * channel_step), so no
// per-tap offset is loaded.
template <int R, int NB, bool kPointwise>
void tile(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* w, const Vf (&bias)[NB],
          Vf lo, Vf hi, int64_t h, int64_t c, float* buf) {
  Vf acc[R][NB];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int b = 0; b < NB; ++b) acc[i][b] = bias[b];
  const float* xp[R];
  {
    int64_t hh = h, cc = c;
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      xp[i] = tp.src + hh * tp.row_step + cc * tp.col_step;
      if (++cc == s.W) cc = 0, ++hh;
    }
  }
#pragma GCC unroll 4
  for (int64_t t = 0; t < tp.count; ++t) {
    const int64_t o = kPointwise ? t * tp.channel_step : tp.off[t];
    Vf wv[NB];
#pragma GCC unroll 2
    for (int b = 0; b < NB; ++b) wv[b] = loadu(w + (b * tp.count + t) * kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const Vf xv = set1((kPointwise ? xp[0] + i : xp[i])[o]);
#pragma GCC unroll 2
      for (int b = 0; b < NB; ++b) acc[i][b] = fmadd(xv, wv[b], acc[i][b]);
    }
  }
  const int64_t plane = pd.plane();
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const int64_t r = h + s.g.pad_top - pd.row0, col = c + s.g.pad_left;
    if (r >= 0 && r < pd.rows && col < pd.Wp) {
      float* dst = buf + (r * pd.Wp + col) * kLanes;
#pragma GCC unroll 2
      for (int b = 0; b < NB; ++b) {
        Vf v = acc[i][b];
        if (s.act_e.clamp) v = min(hi, max(lo, v));
        storeu(dst + b * plane, v);
      }
    }
    if (++c == s.W) c = 0, ++h;
  }
}

// The last n (< R) positions in one tile of n (each k step then waits on the
// FMA latency of fewer accumulators).
template <int R, int NB, bool kPointwise>
void tail(int64_t n, const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* w,
          const Vf (&bias)[NB], Vf lo, Vf hi, int64_t h, int64_t c, float* buf) {
  if constexpr (R > 1) {
    if (n == R - 1) return tile<R - 1, NB, kPointwise>(s, pd, tp, w, bias, lo, hi, h, c, buf);
    tail<R - 1, NB, kPointwise>(n, s, pd, tp, w, bias, lo, hi, h, c, buf);
  }
}

// Expanded rows [r0, r1) of blocks [blk, blk + NB) into their planes of `pd`
// (buf: block blk's): tiles of tile_positions, one of 8 where those are wider,
// then the rest.
template <int NB, bool kPointwise>
void rows(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* wp, const float* be,
          int64_t blk, int64_t r0, int64_t r1, float* buf) {
  const float* w = wp + blk * tp.count * kLanes;
  Vf bias[NB];
  for (int b = 0; b < NB; ++b) bias[b] = be ? loadu(be + (blk + b) * kLanes) : zero();
  const Vf lo = set1(s.act_e.lo), hi = set1(s.act_e.hi);
  const int64_t end = r1 * s.W;
  int64_t p = r0 * s.W, h = r0, c = 0;
  constexpr int RT = tile_positions<NB>();
  for (; p + RT <= end; p += RT) {
    tile<RT, NB, kPointwise>(s, pd, tp, w, bias, lo, hi, h, c, buf);
    c += RT;
    while (c >= s.W) c -= s.W, ++h;
  }
  constexpr int RS = RT > 8 ? 8 : RT;
  if constexpr (RT > 8) {
    if (p + 8 <= end) {
      tile<8, NB, kPointwise>(s, pd, tp, w, bias, lo, hi, h, c, buf);
      c += 8, p += 8;
      while (c >= s.W) c -= s.W, ++h;
    }
  }
  tail<RS, NB, kPointwise>(end - p, s, pd, tp, w, bias, lo, hi, h, c, buf);
}

}  // namespace
}  // namespace expand_depthwise_body

// Expanded rows [r0, r1) of blocks [blk, blk + nb) (nb 1 or 2) into their
// planes of `pd` (buf: block blk's).
inline void expand_block_rows(const ExpandDepthwiseShape& s, const expand_depthwise_detail::Padded& pd,
                              const expand_depthwise_detail::Taps& tp, const float* wp, const float* be, int64_t blk,
                              int64_t nb, int64_t r0, int64_t r1, float* buf) {
  using namespace expand_depthwise_body;
  if (tp.pointwise && nb == 2) rows<2, true>(s, pd, tp, wp, be, blk, r0, r1, buf);
  else if (tp.pointwise) rows<1, true>(s, pd, tp, wp, be, blk, r0, r1, buf);
  else if (nb == 2) rows<2, false>(s, pd, tp, wp, be, blk, r0, r1, buf);
  else rows<1, false>(s, pd, tp, wp, be, blk, r0, r1, buf);
}

// Rows [m0, m1) of y (n floats each, y_plane apart) = the sum of `parts`
// partial products (part t's row m at partial + t * part_floats + m * ld).
inline void expand_sum_partials(const float* partial, int64_t parts, int64_t part_floats, int64_t ld, int64_t n,
                                int64_t m0, int64_t m1, float* y, int64_t y_plane) {
  for (int64_t m = m0; m < m1; ++m) {
    const float* src = partial + m * ld;
    float* dst = y + m * y_plane;
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
      Vf v = loadu(src + j);
      for (int64_t t = 1; t < parts; ++t) v = add(v, loadu(src + t * part_floats + j));
      storeu(dst + j, v);
    }
    if (j < n) {
      Vf v = load_first(src + j, n - j);
      for (int64_t t = 1; t < parts; ++t) v = add(v, load_first(src + t * part_floats + j, n - j));
      store_first(dst + j, v, n - j);
    }
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
