// Expand conv + depthwise conv in one pass (see expand_depthwise.h).
#include "backends/cpu/expand_depthwise.h"

#include <algorithm>

#include "backends/cpu/isa.h"
#include "backends/cpu/scratch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_EXPAND_DW_AVX2 1
#endif

namespace dlrt::cpu {

namespace {

struct Padded {
  int64_t Hp = 0, Wp = 0;  // rows and columns of the padded planes the depthwise taps read
};

Padded padded_of(const DepthwiseGeometry& g) {
  return {(g.out_h - 1) * g.sh + g.kh, (g.out_w - 1) * g.sw + g.kw};
}

// Where the first conv reads: tap t of expanded position (h, c) is
// src[off[t] + h * row_step + c * col_step]. For a 1x1/1 conv off[t] is
// t * channel_step.
struct Taps {
  const float* src = nullptr;
  const int64_t* off = nullptr;
  int64_t count = 0, row_step = 0, col_step = 0, channel_step = 0;
};

// As the vector clamp: NaN stays NaN.
float clamp(const ClampStage& c, float v) { return c.clamp ? (v < c.lo ? c.lo : (v > c.hi ? c.hi : v)) : v; }

// Zeros the padded positions of NB planes [Hp][Wp][8] that no input lands on.
void zero_border(const ExpandDepthwiseShape& s, const Padded& pd, int NB, float* buf) {
  const int64_t plane = pd.Hp * pd.Wp * 8;
  const int64_t c0 = s.g.pad_left, c1 = std::min(pd.Wp, s.g.pad_left + s.W);
  for (int b = 0; b < NB; ++b)
    for (int64_t r = 0; r < pd.Hp; ++r) {
      float* row = buf + b * plane + r * pd.Wp * 8;
      const int64_t ih = r - s.g.pad_top;
      if (ih < 0 || ih >= s.H) {
        std::fill(row, row + pd.Wp * 8, 0.0f);
        continue;
      }
      std::fill(row, row + std::min(c0, pd.Wp) * 8, 0.0f);
      if (c1 < pd.Wp) std::fill(row + c1 * 8, row + pd.Wp * 8, 0.0f);
    }
}

// Expanded rows [0, rows): those the depthwise taps read.
int64_t needed_rows(const ExpandDepthwiseShape& s, const Padded& pd) { return std::min(s.H, pd.Hp - s.g.pad_top); }

// Channels [8 blk, 8 blk + 8) in portable C++: the first conv into buf, then the depthwise taps.
void block_generic(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* wp, const float* be,
                   const float* wd, const float* bd, float* y, int64_t blk, float* buf) {
  const int64_t out_plane = s.g.out_h * s.g.out_w, kk = s.g.kh * s.g.kw;
  zero_border(s, pd, 1, buf);
  const float* w = wp + blk * tp.count * 8;
  for (int64_t h = 0; h < needed_rows(s, pd); ++h)
    for (int64_t c = 0; c < s.W && c + s.g.pad_left < pd.Wp; ++c) {
      float acc[8] = {};
      const float* xp = tp.src + h * tp.row_step + c * tp.col_step;
      for (int64_t t = 0; t < tp.count; ++t)
        for (int j = 0; j < 8; ++j) acc[j] += xp[tp.off[t]] * w[t * 8 + j];
      float* dst = buf + ((h + s.g.pad_top) * pd.Wp + c + s.g.pad_left) * 8;
      for (int j = 0; j < 8; ++j) dst[j] = clamp(s.act_e, acc[j] + (be ? be[blk * 8 + j] : 0.0f));
    }
  for (int j = 0; j < 8; ++j) {
    const int64_t m = blk * 8 + j;
    for (int64_t oh = 0; oh < s.g.out_h; ++oh)
      for (int64_t ow = 0; ow < s.g.out_w; ++ow) {
        float acc = bd ? bd[m] : 0.0f;
        for (int64_t i = 0; i < s.g.kh; ++i)
          for (int64_t t = 0; t < s.g.kw; ++t)
            acc += wd[m * kk + i * s.g.kw + t] * buf[((oh * s.g.sh + i) * pd.Wp + ow * s.g.sw + t) * 8 + j];
        y[m * out_plane + oh * s.g.out_w + ow] = clamp(s.act_d, acc);
      }
  }
}

#ifdef DLRT_EXPAND_DW_AVX2
#define DLRT_AVX2 __attribute__((target("avx2,fma")))

// R expanded positions from (h, c) on, for NB blocks (12 accumulators at
// R = 6, NB = 2, as the GEMM's tile), stored with bias and activation into
// each block's padded plane at (h + pad_top, c + pad_left). kPointwise: the
// R positions are consecutive floats of each input channel plane (a 1x1/1
// conv: tap t at src + t * plane), so no per-tap offset is loaded.
template <int R, int NB, bool kPointwise>
DLRT_AVX2 void expand_tile(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* w,
                           const __m256 (&bias)[NB], __m256 lo, __m256 hi, int64_t h, int64_t c, float* buf) {
  __m256 acc[R][NB];
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int b = 0; b < NB; ++b) acc[i][b] = bias[b];
  if constexpr (kPointwise) {
    const float* xp = tp.src + h * tp.row_step + c;
    for (int64_t t = 0; t < tp.count; ++t, xp += tp.channel_step) {
      __m256 wv[NB];
#pragma GCC unroll 2
      for (int b = 0; b < NB; ++b) wv[b] = _mm256_loadu_ps(w + (b * tp.count + t) * 8);
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i) {
        const __m256 xv = _mm256_broadcast_ss(xp + i);
#pragma GCC unroll 2
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm256_fmadd_ps(xv, wv[b], acc[i][b]);
      }
    }
  } else {
    const float* xp[R];
    int64_t hh = h, cc = c;
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      xp[i] = tp.src + hh * tp.row_step + cc * tp.col_step;
      if (++cc == s.W) cc = 0, ++hh;
    }
    for (int64_t t = 0; t < tp.count; ++t) {
      const int64_t o = tp.off[t];
      __m256 wv[NB];
#pragma GCC unroll 2
      for (int b = 0; b < NB; ++b) wv[b] = _mm256_loadu_ps(w + (b * tp.count + t) * 8);
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i) {
        const __m256 xv = _mm256_broadcast_ss(xp[i] + o);
#pragma GCC unroll 2
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm256_fmadd_ps(xv, wv[b], acc[i][b]);
      }
    }
  }
  const int64_t plane = pd.Hp * pd.Wp * 8;
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    const int64_t r = h + s.g.pad_top, col = c + s.g.pad_left;
    if (r < pd.Hp && col < pd.Wp) {
      float* dst = buf + (r * pd.Wp + col) * 8;
#pragma GCC unroll 2
      for (int b = 0; b < NB; ++b) {
        __m256 v = acc[i][b];
        if (s.act_e.clamp) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
        _mm256_store_ps(dst + b * plane, v);
      }
    }
    if (++c == s.W) c = 0, ++h;
  }
}

// Output rows [oh0, oh1) of blocks [blk, blk + NB): the expanded rows their
// taps read, then the depthwise conv.
template <int NB, bool kPointwise>
DLRT_AVX2 void blocks_avx2(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* wp,
                           const float* be, const float* wd, const float* bd, float* y, int64_t blk, int64_t oh0,
                           int64_t oh1, float* buf) {
  const int64_t out_plane = s.g.out_h * s.g.out_w, kk = s.g.kh * s.g.kw;
  zero_border(s, pd, NB, buf);
  const float* w = wp + blk * tp.count * 8;
  __m256 bias[NB];
  for (int b = 0; b < NB; ++b) bias[b] = be ? _mm256_loadu_ps(be + (blk + b) * 8) : _mm256_setzero_ps();
  const __m256 lo = _mm256_set1_ps(s.act_e.lo), hi = _mm256_set1_ps(s.act_e.hi);
  const int64_t r0 = std::max<int64_t>(0, oh0 * s.g.sh - s.g.pad_top);
  const int64_t r1 = std::min(needed_rows(s, pd), (oh1 - 1) * s.g.sh - s.g.pad_top + s.g.kh);
  const int64_t end = r1 * s.W;
  int64_t p = r0 * s.W, h = r0, c = 0;
  for (; p + 6 <= end; p += 6) {
    expand_tile<6, NB, kPointwise>(s, pd, tp, w, bias, lo, hi, h, c, buf);
    c += 6;
    while (c >= s.W) c -= s.W, ++h;
  }
  for (; p < end; ++p) {
    expand_tile<1, NB, kPointwise>(s, pd, tp, w, bias, lo, hi, h, c, buf);
    if (++c == s.W) c = 0, ++h;
  }
  DepthwiseC8Output o;
  o.clamp = s.act_d.clamp;
  o.lo = s.act_d.lo;
  o.hi = s.act_d.hi;
  DepthwiseGeometry band = s.g;
  band.out_h = oh1 - oh0;
  for (int b = 0; b < NB; ++b) {
    const int64_t m = (blk + b) * 8;
    o.bias = bd ? bd + m : nullptr;
    depthwise_c8_padded_avx2(buf + (b * pd.Hp + oh0 * s.g.sh) * pd.Wp * 8, pd.Wp, wd + m * kk, band,
                             y + m * out_plane + oh0 * s.g.out_w, out_plane, o);
  }
}
#endif

}  // namespace

bool expand_depthwise_ok(const ExpandDepthwiseShape& s) {
  const DepthwiseGeometry& g = s.g;
  const ExpandConvGeometry& e = s.e;
  return s.K >= 1 && s.M >= 8 && s.M % 8 == 0 && s.H >= 1 && s.W >= 1 && g.in_h == s.H && g.in_w == s.W &&
         depthwise_c8_avx2_ok(g) && g.pad_top < g.kh && g.pad_left < g.kw && e.kh >= 1 && e.kw >= 1 && e.sh >= 1 &&
         e.sw >= 1 && e.pad_top >= 0 && e.pad_left >= 0 && s.in_h >= 1 && s.in_w >= 1 &&
         (!e.pointwise() || (s.in_h == s.H && s.in_w == s.W));
}

std::vector<float> pack_expand_weights(const float* We, int64_t M, int64_t T) {
  std::vector<float> p(static_cast<size_t>(M * T));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t t = 0; t < T; ++t) p[static_cast<size_t>(((m / 8) * T + t) * 8 + m % 8)] = We[m * T + t];
  return p;
}

void expand_depthwise(const ExpandDepthwiseShape& s, const float* x, const float* we_packed, const float* be,
                      const float* wd, const float* bd, float* y, ThreadPool& pool) {
  const Padded pd = padded_of(s.g);
  const int64_t blocks = s.M / 8, plane = pd.Hp * pd.Wp * 8;
  const ExpandConvGeometry& e = s.e;
  const int64_t T = s.K * e.kh * e.kw;
  // The tap offsets; a conv other than 1x1/1 reads a zero-padded copy of the
  // input (rows and columns its taps reach), shared read-only by the threads.
  thread_local AlignedScratch off_buf, pad_buf;
  int64_t* off = off_buf.get<int64_t>(static_cast<size_t>(T));
  Taps tp;
  tp.off = off;
  tp.count = T;
  if (e.pointwise()) {
    tp.src = x, tp.row_step = s.W, tp.col_step = 1, tp.channel_step = s.in_h * s.in_w;
    for (int64_t t = 0; t < T; ++t) off[t] = t * tp.channel_step;
  } else {
    const int64_t Hq = (s.H - 1) * e.sh + e.kh, Wq = (s.W - 1) * e.sw + e.kw;
    float* xq = pad_buf.get<float>(static_cast<size_t>(s.K * Hq * Wq));
    // Input columns [0, body) land at pad_left; the rest of a row is zero.
    const int64_t lead = std::min(e.pad_left, Wq), body = std::clamp<int64_t>(Wq - e.pad_left, 0, s.in_w);
    pool.parallel_for(s.K * Hq, 32, [&](int64_t b, int64_t e2) {
      for (int64_t kr = b; kr < e2; ++kr) {
        const int64_t k = kr / Hq, ih = kr % Hq - e.pad_top;
        float* dst = xq + kr * Wq;
        if (ih < 0 || ih >= s.in_h) {
          std::fill(dst, dst + Wq, 0.0f);
          continue;
        }
        std::fill(dst, dst + lead, 0.0f);
        std::copy_n(x + (k * s.in_h + ih) * s.in_w, body, dst + lead);
        std::fill(dst + lead + body, dst + Wq, 0.0f);
      }
    });
    for (int64_t k = 0, t = 0; k < s.K; ++k)
      for (int64_t i = 0; i < e.kh; ++i)
        for (int64_t j = 0; j < e.kw; ++j) off[t++] = (k * Hq + i) * Wq + j;
    tp.src = xq, tp.row_step = e.sh * Wq, tp.col_step = e.sw;
  }
#ifdef DLRT_EXPAND_DW_AVX2
  if (cpu_has_avx2()) {
    // Pairs of blocks: the expand tile then has the GEMM's 12 accumulators.
    // Row bands as the depthwise layers take them (a band expands the few
    // rows its taps share with the next band again).
    const int64_t pairs = (blocks + 1) / 2, bands = depthwise_c8_row_bands(s.g.out_h, pool.num_threads());
    const bool pw = e.pointwise();
    pool.parallel_for(bands * pairs, 1, [&](int64_t b, int64_t e2) {
      thread_local AlignedScratch sbuf;
      float* buf = sbuf.get<float>(static_cast<size_t>(2 * plane));
      for (int64_t u = b; u < e2; ++u) {
        const int64_t band = u / pairs, blk = 2 * (u % pairs);
        const int64_t oh0 = s.g.out_h * band / bands, oh1 = s.g.out_h * (band + 1) / bands;
        const bool two = blk + 2 <= blocks;
        if (pw && two) blocks_avx2<2, true>(s, pd, tp, we_packed, be, wd, bd, y, blk, oh0, oh1, buf);
        else if (pw) blocks_avx2<1, true>(s, pd, tp, we_packed, be, wd, bd, y, blk, oh0, oh1, buf);
        else if (two) blocks_avx2<2, false>(s, pd, tp, we_packed, be, wd, bd, y, blk, oh0, oh1, buf);
        else blocks_avx2<1, false>(s, pd, tp, we_packed, be, wd, bd, y, blk, oh0, oh1, buf);
      }
    });
    return;
  }
#endif
  pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e2) {
    thread_local AlignedScratch sbuf;
    float* buf = sbuf.get<float>(static_cast<size_t>(plane));
    for (int64_t blk = b; blk < e2; ++blk) block_generic(s, pd, tp, we_packed, be, wd, bd, y, blk, buf);
  });
}

}  // namespace dlrt::cpu
