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

#endif

}  // namespace dlrt::cpu
