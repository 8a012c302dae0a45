// AVX2 depthwise plane (see depthwise_avx2.h).
#include "backends/cpu/kernels/depthwise_avx2.h"

#include <algorithm>
#include <cstddef>

#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlrt::cpu {

bool depthwise_avx2_ok(const DepthwiseGeometry& g) {
  return (g.sw == 1 || g.sw == 2) && g.sh >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh <= 16 && g.kw <= 16 &&
         g.pad_top >= 0 && g.pad_left >= 0 && g.out_h >= 1 && g.out_w >= 1;
}

int64_t depthwise_c8_row_bands(int64_t out_h, int64_t threads) {
  constexpr int64_t kMinRowsPerThread = 14;
  return threads > 1 && out_h >= kMinRowsPerThread * threads ? threads : 1;
}

bool depthwise_c8_avx2_ok(const DepthwiseGeometry& g) {
  return g.sh >= 1 && g.sw >= 1 && g.kh >= 1 && g.kw >= 1 && g.kh * g.kw <= 256 && g.pad_top >= 0 &&
         g.pad_left >= 0 && g.out_h >= 1 && g.out_w >= 1 && g.in_h >= 1 && g.in_w >= 1;
}

#if defined(__x86_64__) || defined(__i386__)
// For the row copies: no loop turned into a libc memset/memcpy call (per
// padded row of a 7x7 plane, such a call costs more than the row).
#define DLRT_AVX2_INLINE_COPIES DLRT_AVX2 __attribute__((optimize("no-tree-loop-distribute-patterns")))

namespace {

// The calling thread's padded-plane scratch: grows, never shrinks.
float* scratch(size_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(n);
}

// Lanes [0, n) set (n clamped to [0, 8]), for maskload/maskstore.
DLRT_AVX2 inline __m256i first_lanes(int64_t n) {
  const int k = static_cast<int>(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// d[0, n) = 0 in whole vectors: writes up to 7 floats past d + n. The plane
// is filled row by row in address order and the scratch has 8 floats of
// slack, so whatever lands past a row is rewritten by the next row.
DLRT_AVX2 inline void zero_over(float* d, int64_t n) {
  for (int64_t c = 0; c < n; c += 8) _mm256_storeu_ps(d + c, _mm256_setzero_ps());
}

// The padded plane: Hp rows of Wp floats. Stride 1: padded column c at c.
// Stride 2: padded column c at (c & 1) * half + (c >> 1), so the taps of
// one output vector read 8 consecutive floats of one half.
DLRT_AVX2_INLINE_COPIES void fill_plane(const float* x, const DepthwiseGeometry& g, int64_t Hp, int64_t Wp, int64_t half,
                          float* buf) {
  const int64_t pl = g.pad_left;
  for (int64_t r = 0; r < Hp; ++r) {
    float* dst = buf + r * Wp;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      zero_over(dst, Wp);
      continue;
    }
    const float* src = x + ih * g.in_w;
    if (g.sw == 1) {
      const int64_t lead = std::min(pl, Wp), n = std::max<int64_t>(0, std::min(g.in_w, Wp - lead));
      zero_over(dst, lead);
      float* body = dst + lead;
      // Whole vectors while they stay inside the input plane (the last one
      // may copy a few floats of the next input row: zeroed just below).
      const int64_t avail = (g.in_h - ih) * g.in_w;
      int64_t c = 0;
      for (; c < n && c + 8 <= avail; c += 8) _mm256_storeu_ps(body + c, _mm256_loadu_ps(src + c));
      for (; c < n; ++c) body[c] = src[c];
      zero_over(body + n, Wp - lead - n);
      continue;
    }
    zero_over(dst, Wp);
    // Input i is padded column i + pl: the even inputs start at padded
    // column pl, the odd ones at pl + 1.
    float* ev = dst + (pl & 1) * half + (pl >> 1);
    float* od = dst + ((pl + 1) & 1) * half + ((pl + 1) >> 1);
    const int64_t n_ev = std::min((g.in_w + 1) / 2, half - (pl >> 1));
    const int64_t n_od = std::min(g.in_w / 2, half - ((pl + 1) >> 1));
    for (int64_t k = 0; k < std::max(n_ev, n_od); k += 8) {
      const int64_t i = 2 * k;  // first input of these 16
      // Plain loads inside the row: vmaskmovps loads are slow (Zen 1: most of this function's time).
      const bool full = i + 16 <= g.in_w;
      const __m256 a = full ? _mm256_loadu_ps(src + i) : _mm256_maskload_ps(src + i, first_lanes(g.in_w - i));
      const __m256 b = full ? _mm256_loadu_ps(src + i + 8) : _mm256_maskload_ps(src + i + 8, first_lanes(g.in_w - i - 8));
      // shuffle: [a0 a2 b0 b2 | a4 a6 b4 b6]; the 64-bit permute puts the pairs in order.
      const __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
      const __m256 o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
      if (k + 8 <= n_ev) _mm256_storeu_ps(ev + k, e);
      else if (k < n_ev) _mm256_maskstore_ps(ev + k, first_lanes(n_ev - k), e);
      if (k + 8 <= n_od) _mm256_storeu_ps(od + k, o);
      else if (k < n_od) _mm256_maskstore_ps(od + k, first_lanes(n_od - k), o);
    }
  }
}

// R output rows from oh, NV vectors from column ow. K > 0: a K x K kernel
// at height stride S, all loops with constant trip counts (so the
// accumulators stay in registers); K == 0: kh, kw and sh at run time.
template <int R, int NV, bool kS2, int K, int S>
DLRT_AVX2 inline void dw_step(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh_rt, int64_t kw_rt,
                              int64_t sh_rt, int64_t oh, int64_t ow, int64_t out_w, float* y, const DepthwiseOutput& o) {
  const int64_t kh = K > 0 ? K : kh_rt, kw = K > 0 ? K : kw_rt, sh = K > 0 ? S : sh_rt;
  __m256 acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) acc[r][q] = _mm256_setzero_ps();
  const int64_t nrows = (R - 1) * sh + kh;
  const float* base = buf + oh * sh * Wp + ow;
#pragma GCC unroll 8
  for (int64_t ii = 0; ii < nrows; ++ii) {
    const float* row = base + ii * Wp;
#pragma GCC unroll 8
    for (int64_t j = 0; j < kw; ++j) {
      const float* p = kS2 ? row + (j & 1) * half + (j >> 1) : row + j;
      __m256 v[NV];
#pragma GCC unroll 4
      for (int q = 0; q < NV; ++q) v[q] = _mm256_loadu_ps(p + 8 * q);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const int64_t i = ii - r * sh;
        if (i < 0 || i >= kh) continue;
        const __m256 wv = _mm256_broadcast_ss(w + i * kw + j);
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) acc[r][q] = _mm256_fmadd_ps(wv, v[q], acc[r][q]);
      }
    }
  }
  const __m256 bias = _mm256_set1_ps(o.bias), lo = _mm256_set1_ps(o.lo), hi = _mm256_set1_ps(o.hi);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    float* yr = y + (oh + r) * out_w;
    const float* rr = o.residual ? o.residual + (oh + r) * out_w : nullptr;
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) {
      const int64_t c = ow + 8 * q;
      __m256 v = _mm256_add_ps(acc[r][q], bias);
      if (c + 8 <= out_w) {
        if (rr) v = _mm256_add_ps(v, _mm256_loadu_ps(rr + c));
        if (o.clamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
        _mm256_storeu_ps(yr + c, v);
      } else {
        const __m256i m = first_lanes(out_w - c);
        if (rr) v = _mm256_add_ps(v, _mm256_maskload_ps(rr + c, m));
        if (o.clamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
        _mm256_maskstore_ps(yr + c, m, v);
      }
    }
  }
}

template <int R, bool kS2, int K, int S>
DLRT_AVX2 inline void dw_rows(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw,
                              int64_t sh, int64_t oh, int64_t out_w, float* y, const DepthwiseOutput& o) {
  const int64_t nv = (out_w + 7) / 8;
  int64_t v = 0;
  for (; v + 4 <= nv; v += 4) dw_step<R, 4, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, v * 8, out_w, y, o);
  switch (nv - v) {
    case 3: dw_step<R, 3, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, v * 8, out_w, y, o); break;
    case 2: dw_step<R, 2, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, v * 8, out_w, y, o); break;
    case 1: dw_step<R, 1, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, v * 8, out_w, y, o); break;
    default: break;
  }
}

template <bool kS2, int K, int S>
DLRT_AVX2 void dw_plane(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw,
                        int64_t sh, int64_t out_h, int64_t out_w, float* y, const DepthwiseOutput& o) {
  int64_t oh = 0;
  for (; oh + 2 <= out_h; oh += 2) dw_rows<2, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
  if (oh < out_h) dw_rows<1, kS2, K, S>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
}

}  // namespace

DLRT_AVX2 void depthwise_plane_avx2(const float* x, const float* w, const DepthwiseGeometry& g, float* y,
                                    const DepthwiseOutput& o) {
  const int64_t ow8 = (g.out_w + 7) / 8 * 8;
  const int64_t Hp = (g.out_h - 1) * g.sh + g.kh;
  // Stride 1: output vectors read columns [ow, ow + 8 + kw - 1) < ow8 + kw.
  // Stride 2: tap j reads half (j & 1) from (j >> 1) + ow, below ow8 + kw / 2.
  const int64_t half = ow8 + g.kw;
  const int64_t Wp = g.sw == 1 ? ow8 + g.kw : 2 * half;
  float* buf = scratch(static_cast<size_t>(Hp * Wp + 8));
  fill_plane(x, g, Hp, Wp, half, buf);
  // mobilenet's 3x3 kernels at strides 1 and 2 get the constant-shape steps.
  const bool k3 = g.kh == 3 && g.kw == 3 && g.sh == g.sw;
  if (g.sw == 1) {
    if (k3) return dw_plane<false, 3, 1>(buf, Wp, half, w, 3, 3, 1, g.out_h, g.out_w, y, o);
    return dw_plane<false, 0, 0>(buf, Wp, half, w, g.kh, g.kw, g.sh, g.out_h, g.out_w, y, o);
  }
  if (k3) return dw_plane<true, 3, 2>(buf, Wp, half, w, 3, 3, 2, g.out_h, g.out_w, y, o);
  dw_plane<true, 0, 0>(buf, Wp, half, w, g.kh, g.kw, g.sh, g.out_h, g.out_w, y, o);
}


namespace {

// In-register 8 x 8 transpose: r[i] lane j -> r[j] lane i.
DLRT_AVX2 inline void transpose8(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// The input rows [r0, r0 + rows) of the padded planes (padded row r is input
// row r - pad_top) into buf [rows][Wp][8], zeros outside the input.
DLRT_AVX2 void fill_c8(const float* x, int64_t in_plane, const DepthwiseGeometry& g, int64_t Wp, int64_t r0,
                       int64_t rows, float* buf) {
  const __m256 zero = _mm256_setzero_ps();
  const int64_t pl = g.pad_left, W = g.in_w;
  const int64_t lead = std::min(pl, Wp);                          // padded columns before the input
  const int64_t body = std::clamp<int64_t>(Wp - pl, 0, W);        // input columns that land in the scratch
  const int64_t right = Wp - lead - body;                         // padded columns after them
  int64_t ih0 = r0 - g.pad_top, ih1 = ih0 + rows;           // input rows of the band
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = ih0 + r;
    float* dst = buf + r * Wp * 8;
    if (ih < 0 || ih >= g.in_h) {
      for (int64_t c = 0; c < Wp; ++c) _mm256_store_ps(dst + 8 * c, zero);
      continue;
    }
    for (int64_t c = 0; c < lead; ++c) _mm256_store_ps(dst + 8 * c, zero);
    for (int64_t c = lead + body; c < lead + body + right; ++c) _mm256_store_ps(dst + 8 * c, zero);
  }
  ih0 = std::max<int64_t>(ih0, 0);
  ih1 = std::min(ih1, g.in_h);
  if (ih0 >= ih1) return;
  // The band's input rows are contiguous in each plane: transpose them 8
  // positions at a time, each position to (row, pl + column) of the scratch.
  const int64_t first = ih0 * W, count = (ih1 - ih0) * W;
  // Position p goes to dst (scratch row of its input row, column pl + col);
  // columns at or past `body` do not land in the scratch.
  int64_t col = 0;
  float* dst = buf + ((ih0 - (r0 - g.pad_top)) * Wp + pl) * 8;
  const int64_t row_skip = (Wp - W) * 8;  // from past a row's last input column to the next row's first
  auto put = [&](const __m256& v) DLRT_AVX2 {
    if (col < body) _mm256_store_ps(dst, v);
    dst += 8;
    if (++col == W) col = 0, dst += row_skip;
  };
  int64_t p = 0;
  // Whole 8-position loads stay inside each plane's band rows (never past
  // the last plane's end).
  const float* xs = x + first;
  for (; p + 8 <= count; p += 8, xs += 8) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(xs + c * in_plane);
    transpose8(r);
    if (col + 8 < W && col + 8 <= body) {  // all 8 in one row and in the scratch: plain stores
#pragma GCC unroll 8
      for (int q = 0; q < 8; ++q) _mm256_store_ps(dst + 8 * q, r[q]);
      dst += 64;
      col += 8;
      continue;
    }
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) put(r[q]);
  }
  for (; p < count; ++p) {
    alignas(32) float t[8];
    for (int c = 0; c < 8; ++c) t[c] = x[c * in_plane + first + p];
    put(_mm256_load_ps(t));
  }
}

// U output positions of row `in` (the scratch row of the first tap row) from
// output column ox: acc = bias + sum of taps, stored to out [U][8].
template <int U>
DLRT_AVX2 inline void dw_c8_block(const float* in, int64_t Wp, const float* wv, int64_t kh, int64_t kw, int64_t sw,
                                  int64_t ox, __m256 bias, float* out) {
  __m256 acc[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = bias;
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float* row = in + ky * Wp * 8 + ox * sw * 8;
    for (int64_t kx = 0; kx < kw; ++kx) {
      const __m256 w = _mm256_load_ps(wv + (ky * kw + kx) * 8);
      const float* p = row + kx * 8;
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) acc[u] = _mm256_fmadd_ps(w, _mm256_load_ps(p + u * sw * 8), acc[u]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) _mm256_store_ps(out + (ox + u) * 8, acc[u]);
}

// 3 x 3 taps with the 9 weight vectors in registers.
template <int U>
DLRT_AVX2 inline void dw_c8_block3(const float* in, int64_t Wp, const __m256 (&w)[9], int64_t sw, int64_t ox,
                                   __m256 bias, float* out) {
  __m256 acc[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = bias;
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
    const float* row = in + ky * Wp * 8 + ox * sw * 8;
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; ++kx) {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u)
        acc[u] = _mm256_fmadd_ps(w[ky * 3 + kx], _mm256_load_ps(row + (u * sw + kx) * 8), acc[u]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) _mm256_store_ps(out + (ox + u) * 8, acc[u]);
}

// The band's output positions [0, n) in out [n][8] back to the 8 planes at
// y (position p of the band at y + c * out_plane + p), with the residual
// (same layout) and the clamp. out has room for n rounded up to 8.
DLRT_AVX2 void store_c8(const float* out, int64_t n, float* y, int64_t out_plane, const DepthwiseC8Output& o,
                        const float* res) {
  const __m256 lo = _mm256_set1_ps(o.lo), hi = _mm256_set1_ps(o.hi);
  for (int64_t p = 0; p < n; p += 8) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) r[q] = _mm256_load_ps(out + (p + q) * 8);
    transpose8(r);
    const bool full = p + 8 <= n;
    const __m256i m = first_lanes(n - p);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      __m256 v = r[c];
      float* dst = y + c * out_plane + p;
      if (res) v = _mm256_add_ps(v, full ? _mm256_loadu_ps(res + c * out_plane + p)
                                         : _mm256_maskload_ps(res + c * out_plane + p, m));
      if (o.clamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
      if (full) _mm256_storeu_ps(dst, v);
      else _mm256_maskstore_ps(dst, m, v);
    }
  }
}

}  // namespace

namespace {

// The 8-channel filters w (channel c at w + c * kh * kw) as [taps][8] vectors
// in wv, and the 3x3 ones in registers.
struct C8Filters {
  bool k3 = false;
  __m256 w3[9];
  __m256 bias;
};

DLRT_AVX2 C8Filters c8_filters(const float* w, const DepthwiseGeometry& g, const float* bias, float* wv) {
  const int64_t kk = g.kh * g.kw;
  for (int64_t t = 0; t < kk; ++t)
    for (int c = 0; c < 8; ++c) wv[t * 8 + c] = w[c * kk + t];
  C8Filters f;
  f.k3 = g.kh == 3 && g.kw == 3;
  for (int t = 0; t < 9; ++t) f.w3[t] = f.k3 ? _mm256_load_ps(wv + t * 8) : _mm256_setzero_ps();
  f.bias = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  return f;
}

// Output rows [0, rows) of a band whose first tap row is ibuf (padded rows
// of Wp positions x 8 channels, sh rows per output row) into obuf [rows * OW][8].
DLRT_AVX2 void c8_band(const float* ibuf, int64_t Wp, const float* wv, const C8Filters& f,
                       const DepthwiseGeometry& g, int64_t rows, float* obuf) {
  const int64_t OW = g.out_w, sw = g.sw;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = ibuf + r * g.sh * Wp * 8;
    float* out = obuf + r * OW * 8;
    int64_t ox = 0;
    if (f.k3) {
      for (; ox + 8 <= OW; ox += 8) dw_c8_block3<8>(in, Wp, f.w3, sw, ox, f.bias, out);
      if (ox + 4 <= OW) dw_c8_block3<4>(in, Wp, f.w3, sw, ox, f.bias, out), ox += 4;
      if (ox + 2 <= OW) dw_c8_block3<2>(in, Wp, f.w3, sw, ox, f.bias, out), ox += 2;
      if (ox < OW) dw_c8_block3<1>(in, Wp, f.w3, sw, ox, f.bias, out);
    } else {
      for (; ox + 8 <= OW; ox += 8) dw_c8_block<8>(in, Wp, wv, g.kh, g.kw, sw, ox, f.bias, out);
      if (ox + 4 <= OW) dw_c8_block<4>(in, Wp, wv, g.kh, g.kw, sw, ox, f.bias, out), ox += 4;
      if (ox + 2 <= OW) dw_c8_block<2>(in, Wp, wv, g.kh, g.kw, sw, ox, f.bias, out), ox += 2;
      if (ox < OW) dw_c8_block<1>(in, Wp, wv, g.kh, g.kw, sw, ox, f.bias, out);
    }
  }
}

// Output rows per band: the band's input rows in about 48 KiB of scratch.
int64_t c8_band_rows(const DepthwiseGeometry& g, int64_t Wp) {
  const int64_t max_in_rows = std::max<int64_t>(g.kh, (48 * 1024 / 32) / Wp);
  return std::clamp<int64_t>((max_in_rows - g.kh) / g.sh + 1, 1, g.out_h);
}

}  // namespace

DLRT_AVX2 void depthwise_c8_avx2(const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g,
                                 float* y, int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin,
                                 int64_t row_end) {
  const int64_t kh = g.kh, kw = g.kw, sh = g.sh, sw = g.sw, OW = g.out_w, OH = g.out_h;
  const int64_t Wp = (OW - 1) * sw + kw;  // padded columns the taps read
  const int64_t band = c8_band_rows(g, Wp);
  const int64_t in_rows = (band - 1) * sh + kh;
  const int64_t kk = kh * kw;
  float* wv = scratch(static_cast<size_t>(kk * 8 + in_rows * Wp * 8 + ((band * OW + 7) / 8 * 8) * 8));
  float* ibuf = wv + kk * 8;
  float* obuf = ibuf + in_rows * Wp * 8;
  const C8Filters f = c8_filters(w, g, o.bias, wv);
  const int64_t end = row_end < 0 ? OH : std::min(row_end, OH);
  for (int64_t oy0 = std::max<int64_t>(row_begin, 0); oy0 < end; oy0 += band) {
    const int64_t rows = std::min(band, end - oy0);
    fill_c8(x, in_plane, g, Wp, oy0 * sh, (rows - 1) * sh + kh, ibuf);
    c8_band(ibuf, Wp, wv, f, g, rows, obuf);
    store_c8(obuf, rows * OW, y + oy0 * OW, out_plane, o, o.residual ? o.residual + oy0 * OW : nullptr);
  }
}

DLRT_AVX2 void depthwise_c8_padded_avx2(const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g,
                                        float* y, int64_t out_plane, const DepthwiseC8Output& o) {
  const int64_t OW = g.out_w, OH = g.out_h, kk = g.kh * g.kw;
  const int64_t band = c8_band_rows(g, Wp);
  float* wv = scratch(static_cast<size_t>(kk * 8 + ((band * OW + 7) / 8 * 8) * 8));
  float* obuf = wv + kk * 8;
  const C8Filters f = c8_filters(w, g, o.bias, wv);
  for (int64_t oy0 = 0; oy0 < OH; oy0 += band) {
    const int64_t rows = std::min(band, OH - oy0);
    c8_band(buf + oy0 * g.sh * Wp * 8, Wp, wv, f, g, rows, obuf);
    store_c8(obuf, rows * OW, y + oy0 * OW, out_plane, o, o.residual ? o.residual + oy0 * OW : nullptr);
  }
}

#endif

}  // namespace dlrt::cpu
