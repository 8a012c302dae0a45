// AVX-512 convolutions on the 16-channel blocked layout (conv_blocked.h):
// group-1 convs keep NB output blocks x T positions of one output row in
// zmm accumulators, depthwise convs T positions of one 16-channel block.
// Positions whose window lies inside the input's columns take the T-wide
// tiles with no bounds checks on the columns (kernel rows outside the input
// are skipped). At a row's ends, group-1 convs run one position at a time
// with independent accumulator chains (where they read the input in place
// rather than a copy with the column padding), depthwise convs T-wide tiles
// on a copy of the rows they read, zeros in the padding.
#include <algorithm>
#include <limits>

#include "backends/cpu/kernels/conv_blocked_impl.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_caches.h"

#ifdef DLRT_HAVE_AVX512_PATHS

namespace dlrt::cpu::blocked_detail {
namespace {

constexpr int kB = 16;
constexpr int kBB = kB * kB;

// Stores T results of one output block (bias already in acc): adds the
// residual z, clamps, then applies any other activation to the stored row.
template <int T>
DLRT_AVX512 __attribute__((always_inline)) inline void store_row(const ConvJob& j, const __m512* acc, float* y,
                                                                 const float* z) {
  const ClampStage cs = clamp_stage(j.act);
  const __m512 lo = _mm512_set1_ps(cs.lo), hi = _mm512_set1_ps(cs.hi);
#pragma GCC unroll 32
  for (int t = 0; t < T; ++t) {
    __m512 v = acc[t];
    if (z) v = _mm512_add_ps(v, _mm512_loadu_ps(z + t * kB));
    if (cs.clamp) v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm512_storeu_ps(y + t * kB, v);
  }
  if (!cs.clamp && !j.act.none()) apply_activation(j.act, y, T * kB);
}

// NB output blocks from `ocb` on, output rows [oh, oh + R), positions
// [ow0, ow0 + T) (R > 1: every tap of those rows inside the input; every
// column tap of the T positions inside the input row). XS: floats between
// the inputs of neighbouring positions when the input is blocked (16 * stride,
// a constant so that every position is a displacement off one pointer), or 0
// (any layout: j.sx and j.sc).
template <int NB, int R, int T, int XS>
DLRT_AVX512 void conv_tile(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow0) {
  constexpr int P = R * T;
  const BlockedConvGeometry& g = j.g;
  const int64_t icbs = (g.C + kB - 1) / kB, kk = g.kh * g.kw, ocbs = (g.M + kB - 1) / kB;
  const int64_t w_ocb = icbs * kk * kBB;  // floats between output blocks' weights
  const int64_t xstep = XS ? XS : g.sw * j.sx, sc = XS ? 1 : j.sc, rs = g.sh * j.xs_h;
  __m512 acc[NB][P];
  auto y_at = [&](int b, int r) { return (((n * ocbs + ocb + b) * g.OH + oh + r) * g.OW + ow0) * kB; };
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) {
    const __m512 bv = _mm512_loadu_ps(j.bias + (ocb + b) * kB);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
      for (int t = 0; t < T; ++t)
        acc[b][r * T + t] = j.first ? bv : _mm512_loadu_ps(j.y + y_at(b, r) + t * kB);
  }
  const int64_t ib0 = j.icb0, ib1 = j.icb1 < 0 ? icbs : j.icb1;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (R == 1 && (ih < 0 || ih >= g.H)) continue;
    for (int64_t icb = ib0; icb < ib1; ++icb) {
      const int64_t icn = std::min<int64_t>(kB, g.C - icb * kB);
      const float* xr = j.x + n * j.xs_n + icb * j.xs_cb + ih * j.xs_h;
      const float* wk = j.w->w.data() + (ocb * icbs + icb) * kk * kBB + kh * g.kw * kBB;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw0 = ow0 * g.sw - g.pad_left + kw * g.dw;
        const float* xp = xr + iw0 * j.sx;
        const float* wp = wk + kw * kBB;
        for (int64_t ic = 0; ic < icn; ++ic) {
          __m512 wv[NB];
#pragma GCC unroll 4
          for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wp + b * w_ocb + ic * kB);
          const float* xi = xp + ic * sc;
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r) {
#pragma GCC unroll 32
            for (int t = 0; t < T; ++t) {
              const __m512 xv = _mm512_set1_ps(xi[r * rs + t * xstep]);
#pragma GCC unroll 4
              for (int b = 0; b < NB; ++b) acc[b][r * T + t] = _mm512_fmadd_ps(xv, wv[b], acc[b][r * T + t]);
            }
          }
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const int64_t off = y_at(b, r);
      if (j.last) {
        store_row<T>(j, acc[b] + r * T, j.y + off, j.z ? j.z + off : nullptr);
      } else {
#pragma GCC unroll 32
        for (int t = 0; t < T; ++t) _mm512_storeu_ps(j.y + off + t * kB, acc[b][r * T + t]);
      }
    }
}

// One output position of NB output blocks whose window reaches past the
// input (a row's ends read in place): taps outside the input are skipped, and
// the input channels alternate over kChains accumulators per block, so that
// the sum is not one chain of dependent FMAs as long as the window.
template <int NB, int XS>
DLRT_AVX512 void conv_point(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow) {
  constexpr int kChains = 4;
  const BlockedConvGeometry& g = j.g;
  const int64_t icbs = (g.C + kB - 1) / kB, kk = g.kh * g.kw, ocbs = (g.M + kB - 1) / kB;
  const int64_t w_ocb = icbs * kk * kBB, sc = XS ? 1 : j.sc;
  __m512 acc[NB][kChains];
  auto y_at = [&](int b) { return (((n * ocbs + ocb + b) * g.OH + oh) * g.OW + ow) * kB; };
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) {
    acc[b][0] = j.first ? _mm512_loadu_ps(j.bias + (ocb + b) * kB) : _mm512_loadu_ps(j.y + y_at(b));
#pragma GCC unroll 4
    for (int a = 1; a < kChains; ++a) acc[b][a] = _mm512_setzero_ps();
  }
  const int64_t ib0 = j.icb0, ib1 = j.icb1 < 0 ? icbs : j.icb1;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t icb = ib0; icb < ib1; ++icb) {
      const int64_t icn = std::min<int64_t>(kB, g.C - icb * kB);
      const float* xr = j.x + n * j.xs_n + icb * j.xs_cb + ih * j.xs_h;
      const float* wk = j.w->w.data() + (ocb * icbs + icb) * kk * kBB + kh * g.kw * kBB;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
        if (iw < 0 || iw >= g.W) continue;
        const float* xp = xr + iw * j.sx;
        const float* wp = wk + kw * kBB;
        int64_t ic = 0;
        for (; ic + kChains <= icn; ic += kChains) {
#pragma GCC unroll 4
          for (int a = 0; a < kChains; ++a) {
            const __m512 xv = _mm512_set1_ps(xp[(ic + a) * sc]);
#pragma GCC unroll 4
            for (int b = 0; b < NB; ++b)
              acc[b][a] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(wp + b * w_ocb + (ic + a) * kB), acc[b][a]);
          }
        }
        for (; ic < icn; ++ic) {
          const __m512 xv = _mm512_set1_ps(xp[ic * sc]);
#pragma GCC unroll 4
          for (int b = 0; b < NB; ++b)
            acc[b][0] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(wp + b * w_ocb + ic * kB), acc[b][0]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) {
    __m512 v = _mm512_add_ps(_mm512_add_ps(acc[b][0], acc[b][1]), _mm512_add_ps(acc[b][2], acc[b][3]));
    const int64_t off = y_at(b);
    if (j.last) store_row<1>(j, &v, j.y + off, j.z ? j.z + off : nullptr);
    else _mm512_storeu_ps(j.y + off, v);
  }
}

// The positions of an output row whose every tap lies inside the input: [lo, hi).
void interior(const BlockedConvGeometry& g, int64_t* lo, int64_t* hi) {
  *lo = std::min(g.OW, (g.pad_left + g.sw - 1) / g.sw);
  const int64_t last = g.W - 1 + g.pad_left - (g.kw - 1) * g.dw;  // ow * sw <= last
  *hi = last < 0 ? *lo : std::clamp(last / g.sw + 1, *lo, g.OW);
}

// Remainder tiles of 1..T-1 positions: a switch over the instantiations.
template <int NB, int R, int T, int XS>
DLRT_AVX512 void conv_rest(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh, int64_t ow0, int64_t count) {
  if constexpr (T > 1) {
    if (count == T - 1) return conv_tile<NB, R, T - 1, XS>(j, n, ocb, oh, ow0);
    return conv_rest<NB, R, T - 1, XS>(j, n, ocb, oh, ow0, count);
  }
}

// Tiles of about equal width (at most T) over the interior of a row.
template <int NB, int T, int XS>
DLRT_AVX512 void conv_row(const ConvJob& j, int64_t n, int64_t ocb, int64_t oh) {
  int64_t lo, hi;
  interior(j.g, &lo, &hi);
  for (int64_t ow = 0; ow < lo; ++ow) conv_point<NB, XS>(j, n, ocb, oh, ow);
  const int64_t len = hi - lo, tiles = (len + T - 1) / T, width = tiles ? (len + tiles - 1) / tiles : 0;
  for (int64_t ow = lo; ow < hi; ow += width) {
    const int64_t cnt = std::min(width, hi - ow);
    if (cnt == T) conv_tile<NB, 1, T, XS>(j, n, ocb, oh, ow);
    else conv_rest<NB, 1, T, XS>(j, n, ocb, oh, ow, cnt);
  }
  for (int64_t ow = std::max(hi, lo); ow < j.g.OW; ++ow) conv_point<NB, XS>(j, n, ocb, oh, ow);
}

// Depthwise: T positions of one 16-channel block. EDGE: some windows of the
// tile reach past the input row; each input row the tile reads is then
// first copied with zeros in the padding (as the group-1 convs' padded copy),
// so the row's ends run as T-wide tiles too.
template <int T, bool EDGE>
DLRT_AVX512 void dw_tile(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow0) {
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  const int64_t xstep = g.sw * kB, x0 = ow0 * g.sw - g.pad_left;  // x0: the first window's first column
  __m512 acc[T];
  const __m512 bv = _mm512_loadu_ps(j.bias + cb * kB);
#pragma GCC unroll 32
  for (int t = 0; t < T; ++t) acc[t] = bv;
  const float* xc = j.x + (n * cbs + cb) * g.H * g.W * kB;
  const float* wc = j.w->w.data() + cb * g.kh * g.kw * kB;
  float* row = nullptr;
  const int64_t span = (T - 1) * g.sw + (g.kw - 1) * g.dw + 1;  // input columns the tile reads
  if constexpr (EDGE) {
    thread_local AlignedScratch row_buf;  // no heap allocation once a span was seen
    row = row_buf.get<float>(static_cast<size_t>(span * kB));
  }
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    const float* xr = xc + ih * g.W * kB;
    int64_t xb = x0;  // the input column xr[0] stands for
    if constexpr (EDGE) {
      for (int64_t v = 0; v < span; ++v) {
        const int64_t iw = x0 + v;
        _mm512_storeu_ps(row + v * kB, iw >= 0 && iw < g.W ? _mm512_loadu_ps(xr + iw * kB) : _mm512_setzero_ps());
      }
      xr = row;
      xb = 0;
    }
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw0 = xb + kw * g.dw;
      const __m512 wv = _mm512_loadu_ps(wc + (kh * g.kw + kw) * kB);
      const float* xp = xr + iw0 * kB;
#pragma GCC unroll 32
      for (int t = 0; t < T; ++t) acc[t] = _mm512_fmadd_ps(_mm512_loadu_ps(xp + t * xstep), wv, acc[t]);
    }
  }
  const int64_t off = (((n * cbs + cb) * g.OH + oh) * g.OW + ow0) * kB;
  store_row<T>(j, acc, j.y + off, j.z ? j.z + off : nullptr);
}

// Depthwise: one position of one 16-channel block, skipping the taps in the padding.
DLRT_AVX512 void dw_point(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow) {
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  __m512 acc = _mm512_loadu_ps(j.bias + cb * kB);
  const float* xc = j.x + (n * cbs + cb) * g.H * g.W * kB;
  const float* wc = j.w->w.data() + cb * g.kh * g.kw * kB;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
      if (iw < 0 || iw >= g.W) continue;
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(xc + (ih * g.W + iw) * kB), _mm512_loadu_ps(wc + (kh * g.kw + kw) * kB),
                            acc);
    }
  }
  const int64_t off = (((n * cbs + cb) * g.OH + oh) * g.OW + ow) * kB;
  store_row<1>(j, &acc, j.y + off, j.z ? j.z + off : nullptr);
}

template <int T, bool EDGE>
DLRT_AVX512 void dw_rest(const ConvJob& j, int64_t n, int64_t cb, int64_t oh, int64_t ow0, int64_t count) {
  if constexpr (T > 1) {
    if (count == T - 1) return dw_tile<T - 1, EDGE>(j, n, cb, oh, ow0);
    return dw_rest<T - 1, EDGE>(j, n, cb, oh, ow0, count);
  }
}

}  // namespace

constexpr int kConvT1 = 28;  // positions per tile with one output block
constexpr int kDwT = 8;

namespace {

// Rows per unit: 2 where a row has few positions (a 7x7 plane: 14 per tile
// instead of 7, half the weight loads per product) and every tap of every
// row lies inside the input (the padded copy), else 1.
int64_t rows_per_unit(const BlockedConvGeometry& g) {
  int64_t lo, hi;
  interior(g, &lo, &hi);
  const bool inside = lo == 0 && hi == g.OW && g.pad_top == 0 && (g.OH - 1) * g.sh + (g.kh - 1) * g.dh < g.H;
  return inside && g.OW <= kConvT / 2 && g.OH >= 2 ? 2 : 1;
}

// Input blocks per K chunk: a chunk of a block pair's weights fills about
// half the L1 data cache the CPU reports, so that every tile of the rows a
// call runs reads them from L1.
int64_t chunk_blocks(const BlockedConvGeometry& g) {
  const int64_t pair_bytes = 2 * g.kh * g.kw * kBB * int64_t{sizeof(float)};
  return std::max<int64_t>(1, device::cpu_caches().l1d / 2 / pair_bytes);
}

template <int XS>
DLRT_AVX512 void conv_units(const ConvJob& j, int64_t u0, int64_t u1) {
  const BlockedConvGeometry& g = j.g;
  const int64_t ocbs = (g.M + kB - 1) / kB, pairs = (ocbs + 1) / 2, rpu = rows_per_unit(g);
  const int64_t row_units = (g.OH + rpu - 1) / rpu, icbs = (g.C + kB - 1) / kB, chunk = chunk_blocks(g);
  ConvJob jc = j;
  for (int64_t ua = u0; ua < u1;) {
    // The units of one (image, band, block pair) run chunk by chunk of K.
    const UnitPos pos = unit_at(ua, pairs, row_units, j.band_rows);
    const int64_t n = pos.n, ub = std::min(u1, pos.end), ocb = pos.group * 2;
    const bool two = ocb + 1 < ocbs;
    for (int64_t c0 = 0; c0 < icbs; c0 += chunk) {
      jc.icb0 = c0;
      jc.icb1 = std::min(icbs, c0 + chunk);
      jc.first = c0 == 0;
      jc.last = jc.icb1 == icbs;
      for (int64_t u = ua; u < ub; ++u) {
        const int64_t oh = (pos.row + u - ua) * rpu;
        if (rpu == 2 && oh + 1 < g.OH) {
          if (two) conv_rest<2, 2, kConvT / 2 + 1, XS>(jc, n, ocb, oh, 0, g.OW);
          else conv_rest<1, 2, kConvT / 2 + 1, XS>(jc, n, ocb, oh, 0, g.OW);
        } else if (two) {
          conv_row<2, kConvT, XS>(jc, n, ocb, oh);
        } else {
          conv_row<1, kConvT1, XS>(jc, n, ocb, oh);
        }
      }
    }
    ua = ub;
  }
}

}  // namespace

DLRT_AVX512 void conv_units_avx512(const ConvJob& j, int64_t u0, int64_t u1) {
  if (j.sx == kB && j.sc == 1 && j.g.sw == 1) return conv_units<kB>(j, u0, u1);
  if (j.sx == kB && j.sc == 1 && j.g.sw == 2) return conv_units<2 * kB>(j, u0, u1);
  conv_units<0>(j, u0, u1);
}

int64_t conv_row_units_avx512(const BlockedConvGeometry& g) {
  const int64_t rpu = rows_per_unit(g);
  return (g.OH + rpu - 1) / rpu;
}

DLRT_AVX512 void depthwise_units_avx512(const ConvJob& j, int64_t u0, int64_t u1) {
  const BlockedConvGeometry& g = j.g;
  const int64_t cbs = (g.C + kB - 1) / kB;
  int64_t lo, hi;
  interior(g, &lo, &hi);
  // A row end with one position whose window reaches into the padding runs
  // it alone (one FMA chain, taps in the padding skipped); an end with more
  // joins the tiles, which copy the rows they read (one position at a time,
  // each would be a serial chain of every tap).
  const int64_t first = lo < 2 ? lo : 0, end = g.OW - hi < 2 ? hi : g.OW;
  const int64_t len = end - first, tiles = (len + kDwT - 1) / kDwT, width = tiles ? (len + tiles - 1) / tiles : 1;
  for (int64_t u = u0; u < u1; ++u) {
    const UnitPos pos = unit_at(u, cbs, g.OH, j.band_rows);
    const int64_t oh = pos.row, cb = pos.group, n = pos.n;
    // Tiles of about equal width (at most kDwT) over [first, end); those
    // reaching past the interior [lo, hi) copy their rows.
    for (int64_t ow = 0; ow < first; ++ow) dw_point(j, n, cb, oh, ow);
    for (int64_t ow = first; ow < end; ow += width) {
      const int64_t cnt = std::min(width, end - ow);
      if (ow < lo || ow + cnt > hi) {
        if (cnt == kDwT) dw_tile<kDwT, true>(j, n, cb, oh, ow);
        else dw_rest<kDwT, true>(j, n, cb, oh, ow, cnt);
      } else if (cnt == kDwT) {
        dw_tile<kDwT, false>(j, n, cb, oh, ow);
      } else {
        dw_rest<kDwT, false>(j, n, cb, oh, ow, cnt);
      }
    }
    for (int64_t ow = end; ow < g.OW; ++ow) dw_point(j, n, cb, oh, ow);
  }
}

namespace {

// r[i][j] -> r[j][i] for a 16 x 16 tile in registers.
DLRT_AVX512 __attribute__((always_inline)) inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + k], 128-bit lane L: column 4L + k of rows 4i .. 4i + 3.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
    t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
    t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
    r[4 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xdd);
  }
}

}  // namespace

// One output position of max_pool16_avx512 with bounds checks (the row's ends).
DLRT_AVX512 inline __m512 max_pool16_edge(const float* xs, const BlockedConvGeometry& g, int64_t oh, int64_t ow) {
  __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    const float* xr = xs + ih * g.W * kB;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
      if (iw >= 0 && iw < g.W) m = _mm512_max_ps(m, _mm512_loadu_ps(xr + iw * kB));
    }
  }
  return m;
}

DLRT_AVX512 void max_pool16_avx512(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1) {
  // Output columns [ow0, ow1) have every tap inside the row: no bounds checks there.
  const int64_t ow0 = std::min(g.OW, (g.pad_left + g.sw - 1) / g.sw);
  const int64_t last = g.W - 1 + g.pad_left - (g.kw - 1) * g.dw;
  const int64_t ow1 = last < 0 ? ow0 : std::clamp(last / g.sw + 1, ow0, g.OW);
  constexpr int64_t kMaxRows = 16;
  int64_t rows[kMaxRows];  // offsets of the rows in the plane
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t oh = u % g.OH, plane = u / g.OH;
    const float* xs = x + plane * g.H * g.W * kB;
    float* yd = y + u * g.OW * kB;
    int64_t nr = 0;  // the input rows the window covers, in kh order
    for (int64_t kh = 0; kh < g.kh && nr <= kMaxRows; ++kh) {
      const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
      if (ih < 0 || ih >= g.H) continue;
      if (nr < kMaxRows) rows[nr] = ih * g.W * kB;
      ++nr;
    }
    const int64_t mid0 = nr <= kMaxRows ? ow0 : g.OW, mid1 = nr <= kMaxRows ? ow1 : g.OW;
    for (int64_t ow = 0; ow < mid0; ++ow) _mm512_storeu_ps(yd + ow * kB, max_pool16_edge(xs, g, oh, ow));
    for (int64_t ow = mid0; ow < mid1; ++ow) {
      __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
      const float* xw = xs + (ow * g.sw - g.pad_left) * kB;
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t kw = 0; kw < g.kw; ++kw) m = _mm512_max_ps(m, _mm512_loadu_ps(xw + rows[r] + kw * g.dw * kB));
      _mm512_storeu_ps(yd + ow * kB, m);
    }
    for (int64_t ow = std::max(mid0, mid1); ow < g.OW; ++ow)
      _mm512_storeu_ps(yd + ow * kB, max_pool16_edge(xs, g, oh, ow));
  }
}

DLRT_AVX512 void to_block16_avx512(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  __m512 r[16];
  for (int64_t p0 = 0; p0 < hw; p0 += 16) {
    const int64_t pn = std::min<int64_t>(16, hw - p0);
    const __mmask16 m = avx512::tail_mask(pn);
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) r[c] = c < cn ? _mm512_maskz_loadu_ps(m, x + c * plane + p0) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t p = 0; p < pn; ++p) _mm512_storeu_ps(y + (p0 + p) * kB, r[p]);
  }
}

DLRT_AVX512 void from_block16_avx512(const float* x, int64_t cn, int64_t hw, int64_t plane, float* y) {
  __m512 r[16];
  for (int64_t p0 = 0; p0 < hw; p0 += 16) {
    const int64_t pn = std::min<int64_t>(16, hw - p0);
    const __mmask16 m = avx512::tail_mask(pn);
#pragma GCC unroll 16
    for (int p = 0; p < 16; ++p) r[p] = p < pn ? _mm512_loadu_ps(x + (p0 + p) * kB) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t c = 0; c < cn; ++c) _mm512_mask_storeu_ps(y + c * plane + p0, m, r[c]);
  }
}

}  // namespace dlrt::cpu::blocked_detail

#endif  // DLRT_HAVE_AVX512_PATHS
