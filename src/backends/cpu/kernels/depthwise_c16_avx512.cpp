// AVX-512 depthwise conv, 16 channels per vector (see depthwise_c16.h).
#include "backends/cpu/kernels/depthwise_c16.h"

#include <algorithm>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {

#ifdef DLRT_HAVE_AVX512_PATHS
namespace {

// The calling thread's scratch (filters, band input, band output): grows, never shrinks.
float* scratch(size_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(n);
}

// In-register 16 x 16 transpose: r[i] lane j -> r[j] lane i.
DLRT_AVX512 inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {  // 32-bit pairs: rows 2i, 2i+1
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m512 u[16];  // u[4g + k]: rows 4g..4g+3, columns k, k+4, k+8, k+12 in its four 128-bit lanes
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {  // gather each column's four 128-bit pieces
    const __m512 v0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88), v1 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
    r[k] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[k + 4] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[k + 12] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

// The input rows [r0, r0 + rows) of the padded planes (padded row r is input
// row r - pad_top) into buf [rows][Wp][16], zeros outside the input. Lanes
// past `channels` repeat the last real channel (read, never stored; kPartial
// only, so whole groups keep the plain addressing).
template <bool kPartial>
DLRT_AVX512 void fill_c16(const float* x, int64_t in_plane, const DepthwiseGeometry& g, int64_t Wp, int64_t r0,
                          int64_t rows, float* buf, int channels) {
  auto plane = [&](int c) { return (kPartial ? std::min(c, channels - 1) : c) * in_plane; };
  const __m512 zero = _mm512_setzero_ps();
  const int64_t pl = g.pad_left, W = g.in_w;
  const int64_t lead = std::min(pl, Wp);                    // padded columns before the input
  const int64_t body = std::clamp<int64_t>(Wp - pl, 0, W);  // input columns that land in the scratch
  int64_t ih0 = r0 - g.pad_top, ih1 = ih0 + rows;           // input rows of the band
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = ih0 + r;
    float* dst = buf + r * Wp * 16;
    if (ih < 0 || ih >= g.in_h) {
      for (int64_t c = 0; c < Wp; ++c) _mm512_store_ps(dst + 16 * c, zero);
      continue;
    }
    for (int64_t c = 0; c < lead; ++c) _mm512_store_ps(dst + 16 * c, zero);
    for (int64_t c = lead + body; c < Wp; ++c) _mm512_store_ps(dst + 16 * c, zero);
  }
  ih0 = std::max<int64_t>(ih0, 0);
  ih1 = std::min(ih1, g.in_h);
  if (ih0 >= ih1) return;
  // The band's input rows are contiguous in each plane: 16 positions at a
  // time, each position to (row, pl + column) of the scratch; columns at or
  // past `body` do not land in it.
  const int64_t first = ih0 * W, count = (ih1 - ih0) * W;
  int64_t col = 0;
  float* dst = buf + ((ih0 - (r0 - g.pad_top)) * Wp + pl) * 16;
  const int64_t row_skip = (Wp - W) * 16;  // from past a row's last input column to the next row's first
  auto put = [&](const __m512& v) DLRT_AVX512 {
    if (col < body) _mm512_store_ps(dst, v);
    dst += 16;
    if (++col == W) col = 0, dst += row_skip;
  };
  int64_t p = 0;
  const float* xs = x + first;
  for (; p + 16 <= count; p += 16, xs += 16) {  // whole loads stay inside each plane's band rows
    __m512 r[16];
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) r[c] = _mm512_loadu_ps(xs + plane(c));
    transpose16(r);
    if (col + 16 < W && col + 16 <= body) {  // all 16 in one row and in the scratch
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_store_ps(dst + 16 * q, r[q]);
      dst += 256;
      col += 16;
      continue;
    }
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q) put(r[q]);
  }
  if (p < count) {  // the last 1-15 positions: masked loads, the same transpose
    const __mmask16 m = avx512::tail_mask(count - p);
    __m512 r[16];
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) r[c] = _mm512_maskz_loadu_ps(m, xs + plane(c));
    transpose16(r);
    for (int q = 0; q < count - p; ++q) put(r[q]);
  }
}

// U output positions of the row whose first tap row is `in`, from output
// column ox: bias + the taps (3 x 3 with the weights in registers when K3,
// else kh x kw from wv), stored to out [U][16].
template <int U, bool K3>
DLRT_AVX512 inline void dw_c16_block(const float* in, int64_t Wp, const __m512 (&w3)[9], const float* wv,
                                     const DepthwiseGeometry& g, int64_t ox, __m512 bias, float* out) {
  const int64_t kh = K3 ? 3 : g.kh, kw = K3 ? 3 : g.kw, sw = g.sw, dh = g.dh, dw = g.dw;
  __m512 acc[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = bias;
#pragma GCC unroll 3
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float* row = in + (ky * dh * Wp + ox * sw) * 16;
#pragma GCC unroll 3
    for (int64_t kx = 0; kx < kw; ++kx) {
      const __m512 w = K3 ? w3[ky * 3 + kx] : _mm512_load_ps(wv + (ky * kw + kx) * 16);
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) acc[u] = _mm512_fmadd_ps(w, _mm512_load_ps(row + (u * sw + kx * dw) * 16), acc[u]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) _mm512_store_ps(out + (ox + u) * 16, acc[u]);
}

template <bool K3>
DLRT_AVX512 void c16_row(const float* in, int64_t Wp, const __m512 (&w3)[9], const float* wv,
                         const DepthwiseGeometry& g, __m512 bias, float* out) {
  const int64_t OW = g.out_w;
  int64_t ox = 0;
  for (; ox + 8 <= OW; ox += 8) dw_c16_block<8, K3>(in, Wp, w3, wv, g, ox, bias, out);
  if (ox + 4 <= OW) dw_c16_block<4, K3>(in, Wp, w3, wv, g, ox, bias, out), ox += 4;
  if (ox + 2 <= OW) dw_c16_block<2, K3>(in, Wp, w3, wv, g, ox, bias, out), ox += 2;
  if (ox < OW) dw_c16_block<1, K3>(in, Wp, w3, wv, g, ox, bias, out);
}

// The band's output positions [0, n) in out [n][16] back to the 16 planes at
// y (position p at y + c * out_plane + p), with the residual (same layout),
// the clamp and any other activation (o.act: all 16 vectors of a block in one
// call); planes [0, channels) only. out has room for n rounded up to 16.
template <bool kPartial>
DLRT_AVX512 void store_c16(const float* out, int64_t n, float* y, int64_t out_plane, const DepthwiseC8Output& o,
                           const float* res, int channels) {
  const __m512 lo = _mm512_set1_ps(o.lo), hi = _mm512_set1_ps(o.hi);
  for (int64_t p = 0; p < n; p += 16) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q) r[q] = _mm512_load_ps(out + (p + q) * 16);
    transpose16(r);
    const __mmask16 m = avx512::tail_mask(n - p);
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) {
      if (res && (!kPartial || c < channels))
        r[c] = _mm512_add_ps(r[c], _mm512_maskz_loadu_ps(m, res + c * out_plane + p));
      if (o.clamp) r[c] = _mm512_min_ps(hi, _mm512_max_ps(lo, r[c]));
    }
    if (o.act) {
      // Through a copy: r itself stays in registers on the clamp path (an
      // array passed to the out-of-line call would live in memory).
      __m512 a[16];
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c) a[c] = r[c];
      avx512::act_ps_array(*o.act, a, 16);
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c) r[c] = a[c];
    }
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c)
      if (!kPartial || c < channels) _mm512_mask_storeu_ps(y + c * out_plane + p, m, r[c]);
  }
}

// Output rows per band: the band's input rows in about 48 KiB of scratch.
// (The rows one output row's taps span: (kh - 1) * dh + 1.)
int64_t c16_tap_rows(const DepthwiseGeometry& g) { return (g.kh - 1) * g.dh + 1; }
int64_t c16_band_rows(const DepthwiseGeometry& g, int64_t Wp) {
  const int64_t span = c16_tap_rows(g);
  const int64_t max_in_rows = std::max<int64_t>(span, (48 * 1024 / 64) / Wp);
  return std::clamp<int64_t>((max_in_rows - span) / g.sh + 1, 1, g.out_h);
}

// The 16-channel filters w (channel c at w + c * kh * kw) as [taps][16]
// vectors in wv, the 3x3 ones also in registers, and the bias; lanes past
// `channels` repeat the last real filter and take no bias.
struct C16Filters {
  bool k3 = false;
  __m512 w3[9];
  __m512 bias;
};

DLRT_AVX512 C16Filters c16_filters(const float* w, const DepthwiseGeometry& g, const float* bias, float* wv,
                                   int channels) {
  const int64_t kk = g.kh * g.kw;
  for (int64_t t = 0; t < kk; ++t)
    for (int c = 0; c < 16; ++c) wv[t * 16 + c] = w[std::min(c, channels - 1) * kk + t];
  C16Filters f;
  f.k3 = g.kh == 3 && g.kw == 3;
  for (int t = 0; t < 9; ++t) f.w3[t] = f.k3 ? _mm512_load_ps(wv + t * 16) : _mm512_setzero_ps();
  f.bias = bias ? _mm512_maskz_loadu_ps(avx512::tail_mask(channels), bias) : _mm512_setzero_ps();
  return f;
}

// Output rows [0, rows) of a band whose first tap row is ibuf (padded rows
// of Wp positions x 16 channels, sh rows per output row) into obuf [rows * OW][16].
DLRT_AVX512 void c16_band(const float* ibuf, int64_t Wp, const float* wv, const C16Filters& f,
                          const DepthwiseGeometry& g, int64_t rows, float* obuf) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = ibuf + r * g.sh * Wp * 16;
    float* out = obuf + r * g.out_w * 16;
    if (f.k3) c16_row<true>(in, Wp, f.w3, wv, g, f.bias, out);
    else c16_row<false>(in, Wp, f.w3, wv, g, f.bias, out);
  }
}

}  // namespace

DLRT_AVX512 void depthwise_c16_avx512(const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g,
                                      float* y, int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin,
                                      int64_t row_end, int channels) {
  channels = std::clamp(channels, 1, 16);
  const int64_t span = c16_tap_rows(g), sh = g.sh, OW = g.out_w;
  const int64_t Wp = (OW - 1) * g.sw + (g.kw - 1) * g.dw + 1;  // padded columns the taps read
  const int64_t band = c16_band_rows(g, Wp);
  const int64_t in_rows = (band - 1) * sh + span, kk = g.kh * g.kw;
  float* wv = scratch(static_cast<size_t>(kk * 16 + in_rows * Wp * 16 + (band * OW + 15) / 16 * 16 * 16));
  float* ibuf = wv + kk * 16;
  float* obuf = ibuf + in_rows * Wp * 16;
  const C16Filters f = c16_filters(w, g, o.bias, wv, channels);
  const int64_t end = row_end < 0 ? g.out_h : std::min(row_end, g.out_h);
  for (int64_t oy0 = std::max<int64_t>(row_begin, 0); oy0 < end; oy0 += band) {
    const int64_t rows = std::min(band, end - oy0);
    const float* res = o.residual ? o.residual + oy0 * OW : nullptr;
    if (channels == 16) {
      fill_c16<false>(x, in_plane, g, Wp, oy0 * sh, (rows - 1) * sh + span, ibuf, 16);
      c16_band(ibuf, Wp, wv, f, g, rows, obuf);
      store_c16<false>(obuf, rows * OW, y + oy0 * OW, out_plane, o, res, 16);
    } else {
      fill_c16<true>(x, in_plane, g, Wp, oy0 * sh, (rows - 1) * sh + span, ibuf, channels);
      c16_band(ibuf, Wp, wv, f, g, rows, obuf);
      store_c16<true>(obuf, rows * OW, y + oy0 * OW, out_plane, o, res, channels);
    }
  }
}

DLRT_AVX512 void depthwise_c16_padded_avx512(const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g,
                                             float* y, int64_t out_plane, const DepthwiseC8Output& o) {
  const int64_t OW = g.out_w, OH = g.out_h, kk = g.kh * g.kw;
  const int64_t band = c16_band_rows(g, Wp);
  float* wv = scratch(static_cast<size_t>(kk * 16 + (band * OW + 15) / 16 * 16 * 16));
  float* obuf = wv + kk * 16;
  const C16Filters f = c16_filters(w, g, o.bias, wv, 16);
  for (int64_t oy0 = 0; oy0 < OH; oy0 += band) {
    const int64_t rows = std::min(band, OH - oy0);
    c16_band(buf + oy0 * g.sh * Wp * 16, Wp, wv, f, g, rows, obuf);
    store_c16<false>(obuf, rows * OW, y + oy0 * OW, out_plane, o, o.residual ? o.residual + oy0 * OW : nullptr, 16);
  }
}

#else

void depthwise_c16_avx512(const float*, int64_t, const float*, const DepthwiseGeometry&, float*, int64_t,
                          const DepthwiseC8Output&, int64_t, int64_t, int) {}
void depthwise_c16_padded_avx512(const float*, int64_t, const float*, const DepthwiseGeometry&, float*, int64_t,
                                 const DepthwiseC8Output&) {}

#endif

}  // namespace dlrt::cpu
