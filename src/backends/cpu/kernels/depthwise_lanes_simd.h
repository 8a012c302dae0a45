// Kernel body (simd/simd.h), compiled once per vector width by
// depthwise_lanes.cpp: the depthwise conv of kLanes channels at once, one
// per lane (depthwise_lanes.h).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace depthwise_lanes_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"
#include "backends/cpu/kernels/activation_simd.h"

constexpr int kL = kLanes;
// Output positions per step: the 3x3 weights (9 vectors) stay in registers
// beside them (with 16 registers some spill; measured no worse than fewer).
constexpr int kU = 8;

// The input rows [r0, r0 + rows) of the padded planes (padded row r is input
// row r - pad_top) into buf [rows][Wp][kL], zeros outside the input. Lanes
// past `channels` repeat the last real channel (read, never stored; kPartial
// only, so whole groups keep the plain addressing).
template <bool kPartial>
void fill(const float* x, int64_t in_plane, const DepthwiseGeometry& g, int64_t Wp, int64_t r0, int64_t rows,
          float* buf, int channels) {
  auto plane = [&](int c) { return (kPartial ? std::min(c, channels - 1) : c) * in_plane; };
  const int64_t pl = g.pad_left, W = g.in_w;
  const int64_t lead = std::min(pl, Wp);                    // padded columns before the input
  const int64_t body = std::clamp<int64_t>(Wp - pl, 0, W);  // input columns that land in the scratch
  int64_t ih0 = r0 - g.pad_top, ih1 = ih0 + rows;           // input rows of the band
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = ih0 + r;
    float* dst = buf + r * Wp * kL;
    if (ih < 0 || ih >= g.in_h) {
      for (int64_t c = 0; c < Wp; ++c) storeu(dst + kL * c, zero());
      continue;
    }
    for (int64_t c = 0; c < lead; ++c) storeu(dst + kL * c, zero());
    for (int64_t c = lead + body; c < Wp; ++c) storeu(dst + kL * c, zero());
  }
  ih0 = std::max<int64_t>(ih0, 0);
  ih1 = std::min(ih1, g.in_h);
  if (ih0 >= ih1) return;
  // The band's input rows are contiguous in each plane: kL positions at a
  // time, each position to (row, pl + column) of the scratch; columns at or
  // past `body` do not land in it.
  const int64_t first = ih0 * W, count = (ih1 - ih0) * W;
  int64_t col = 0;
  float* dst = buf + ((ih0 - (r0 - g.pad_top)) * Wp + pl) * kL;
  const int64_t row_skip = (Wp - W) * kL;  // from past a row's last input column to the next row's first
  auto put = [&](const Vf& v) __attribute__((always_inline)) {
    if (col < body) storeu(dst, v);
    dst += kL;
    if (++col == W) col = 0, dst += row_skip;
  };
  int64_t p = 0;
  const float* xs = x + first;
  for (; p + kL <= count; p += kL, xs += kL) {  // whole loads stay inside each plane's band rows
    Vf r[kL];
#pragma GCC unroll 16
    for (int c = 0; c < kL; ++c) r[c] = loadu(xs + plane(c));
    transpose_square(r);
    if (col + kL < W && col + kL <= body) {  // all kL in one row and in the scratch
#pragma GCC unroll 16
      for (int q = 0; q < kL; ++q) storeu(dst + kL * q, r[q]);
      dst += kL * kL;
      col += kL;
      continue;
    }
#pragma GCC unroll 16
    for (int q = 0; q < kL; ++q) put(r[q]);
  }
  if (p < count) {  // the last 1 to kL - 1 positions: partial loads, the same transpose
    Vf r[kL];
#pragma GCC unroll 16
    for (int c = 0; c < kL; ++c) r[c] = load_first(xs + plane(c), count - p);
    transpose_square(r);
    for (int q = 0; q < count - p; ++q) put(r[q]);
  }
}

// U output positions of the row whose first tap row is `in`, from output
// column ox: bias + the taps (3 x 3 with the weights in registers when K3,
// else kh x kw from wv), stored to out [U][kL]. D1: undilated (constant tap
// offsets, no multiply per tap address).
template <int U, bool K3, bool D1>
__attribute__((always_inline)) inline void block(const float* in, int64_t Wp, const Vf (&w3)[9], const float* wv,
                                                 const DepthwiseGeometry& g, int64_t ox, Vf bias, float* out) {
  const int64_t kh = K3 ? 3 : g.kh, kw = K3 ? 3 : g.kw, sw = g.sw, dh = D1 ? 1 : g.dh, dw = D1 ? 1 : g.dw;
  Vf acc[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = bias;
  // Pointers and strides in floats, so that each load is a pointer plus a
  // multiple of one stride (an index scaled after the sum cost an address
  // computation per load).
  const int64_t step = sw * kL;
#pragma GCC unroll 3
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float* row = in + ky * dh * Wp * kL + ox * step;
#pragma GCC unroll 3
    for (int64_t kx = 0; kx < kw; ++kx) {
      const Vf w = K3 ? w3[ky * 3 + kx] : loadu(wv + (ky * kw + kx) * kL);
      const float* p = row + kx * dw * kL;
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) acc[u] = fmadd(w, loadu(p + u * step), acc[u]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) storeu(out + (ox + u) * kL, acc[u]);
}

template <bool K3, bool D1>
void row(const float* in, int64_t Wp, const Vf (&w3)[9], const float* wv, const DepthwiseGeometry& g, Vf bias,
         float* out) {
  const int64_t OW = g.out_w;
  int64_t ox = 0;
  for (; ox + kU <= OW; ox += kU) block<kU, K3, D1>(in, Wp, w3, wv, g, ox, bias, out);
  if (ox + 4 <= OW) block<4, K3, D1>(in, Wp, w3, wv, g, ox, bias, out), ox += 4;
  if (ox + 2 <= OW) block<2, K3, D1>(in, Wp, w3, wv, g, ox, bias, out), ox += 2;
  if (ox < OW) block<1, K3, D1>(in, Wp, w3, wv, g, ox, bias, out);
}

// The band's output positions [0, n) in out [n][kL] back to the kL planes
// at y (position p at y + c * out_plane + p), with the residual (same
// layout), the clamp and any other activation (o.act: all kL vectors of a
// step in one call); planes [0, channels) only. out has room for n rounded
// up to kL.
template <bool kPartial>
void store(const float* out, int64_t n, float* y, int64_t out_plane, const DepthwiseC8Output& o, const float* res,
           int channels) {
  const Vf lo = set1(o.lo), hi = set1(o.hi);
  for (int64_t p = 0; p < n; p += kL) {
    Vf r[kL];
#pragma GCC unroll 16
    for (int q = 0; q < kL; ++q) r[q] = loadu(out + (p + q) * kL);
    transpose_square(r);
#pragma GCC unroll 16
    for (int c = 0; c < kL; ++c) {
      if (res && (!kPartial || c < channels)) r[c] = add(r[c], load_first(res + c * out_plane + p, n - p));
      if (o.clamp) r[c] = min(hi, max(lo, r[c]));
    }
    if (o.act) {
      // Through a copy: r itself stays in registers on the clamp path (an
      // array passed to the out-of-line call would live in memory).
      Vf a[kL];
#pragma GCC unroll 16
      for (int c = 0; c < kL; ++c) a[c] = r[c];
      if constexpr (kWidth == SimdWidth::k512)
        act::apply_array(*o.act, a, kL);  // in registers
      else
        depthwise_lanes_detail::activate_vectors(*o.act, a, kL);
#pragma GCC unroll 16
      for (int c = 0; c < kL; ++c) r[c] = a[c];
    }
#pragma GCC unroll 16
    for (int c = 0; c < kL; ++c)
      if (!kPartial || c < channels) store_first(y + c * out_plane + p, r[c], n - p);
  }
}

// The kL-channel filters w (channel c at w + c * kh * kw) as [taps][kL]
// vectors in wv, the 3x3 ones also in registers, and the bias; lanes past
// `channels` repeat the last real filter and take no bias.
struct Filters {
  bool k3 = false;
  Vf w3[9];
  Vf bias;
};

inline Filters filters(const float* w, const DepthwiseGeometry& g, const float* bias, float* wv, int channels) {
  const int64_t kk = g.kh * g.kw;
  for (int64_t t = 0; t < kk; ++t)
    for (int c = 0; c < kL; ++c) wv[t * kL + c] = w[std::min(c, channels - 1) * kk + t];
  Filters f;
  f.k3 = g.kh == 3 && g.kw == 3;
  for (int t = 0; t < 9; ++t) f.w3[t] = f.k3 ? loadu(wv + t * kL) : zero();
  f.bias = bias ? load_first(bias, channels) : zero();
  return f;
}

// Output rows [0, rows) of a band whose first tap row is ibuf (padded rows
// of Wp positions x kL channels, sh rows per output row) into obuf [rows * OW][kL].
inline void band(const float* ibuf, int64_t Wp, const float* wv, const Filters& f, const DepthwiseGeometry& g,
                 int64_t rows, float* obuf) {
  const bool d1 = g.dh == 1 && g.dw == 1;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = ibuf + r * g.sh * Wp * kL;
    float* out = obuf + r * g.out_w * kL;
    if (f.k3 && d1) row<true, true>(in, Wp, f.w3, wv, g, f.bias, out);
    else if (f.k3) row<true, false>(in, Wp, f.w3, wv, g, f.bias, out);
    else if (d1) row<false, true>(in, Wp, f.w3, wv, g, f.bias, out);
    else row<false, false>(in, Wp, f.w3, wv, g, f.bias, out);
  }
}

}  // namespace
}  // namespace depthwise_lanes_body

inline void depthwise_lanes(const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g, float* y,
                            int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin, int64_t row_end,
                            int channels) {
  using namespace depthwise_lanes_body;
  channels = std::clamp(channels, 1, kL);
  const int64_t span = depthwise_lanes_detail::tap_rows(g), sh = g.sh, OW = g.out_w;
  const int64_t Wp = (OW - 1) * g.sw + (g.kw - 1) * g.dw + 1;  // padded columns the taps read
  const int64_t bnd = depthwise_lanes_detail::band_rows(g, Wp, kL);
  const int64_t in_rows = (bnd - 1) * sh + span, kk = g.kh * g.kw;
  float* wv = depthwise_lanes_detail::scratch(kk * kL + in_rows * Wp * kL + (bnd * OW + kL - 1) / kL * kL * kL);
  float* ibuf = wv + kk * kL;
  float* obuf = ibuf + in_rows * Wp * kL;
  const Filters f = filters(w, g, o.bias, wv, channels);
  const int64_t end = row_end < 0 ? g.out_h : std::min(row_end, g.out_h);
  for (int64_t oy0 = std::max<int64_t>(row_begin, 0); oy0 < end; oy0 += bnd) {
    const int64_t rows = std::min(bnd, end - oy0);
    const float* res = o.residual ? o.residual + oy0 * OW : nullptr;
    if (channels == kL) {
      fill<false>(x, in_plane, g, Wp, oy0 * sh, (rows - 1) * sh + span, ibuf, kL);
      band(ibuf, Wp, wv, f, g, rows, obuf);
      store<false>(obuf, rows * OW, y + oy0 * OW, out_plane, o, res, kL);
    } else {
      fill<true>(x, in_plane, g, Wp, oy0 * sh, (rows - 1) * sh + span, ibuf, channels);
      band(ibuf, Wp, wv, f, g, rows, obuf);
      store<true>(obuf, rows * OW, y + oy0 * OW, out_plane, o, res, channels);
    }
  }
}

inline void depthwise_lanes_padded(const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g, float* y,
                                   int64_t out_plane, const DepthwiseC8Output& o) {
  using namespace depthwise_lanes_body;
  const int64_t OW = g.out_w, OH = g.out_h, kk = g.kh * g.kw;
  const int64_t bnd = depthwise_lanes_detail::band_rows(g, Wp, kL);
  float* wv = depthwise_lanes_detail::scratch(kk * kL + (bnd * OW + kL - 1) / kL * kL * kL);
  float* obuf = wv + kk * kL;
  const Filters f = filters(w, g, o.bias, wv, kL);
  for (int64_t oy0 = 0; oy0 < OH; oy0 += bnd) {
    const int64_t rows = std::min(bnd, OH - oy0);
    band(buf + oy0 * g.sh * Wp * kL, Wp, wv, f, g, rows, obuf);
    store<false>(obuf, rows * OW, y + oy0 * OW, out_plane, o, o.residual ? o.residual + oy0 * OW : nullptr, kL);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
