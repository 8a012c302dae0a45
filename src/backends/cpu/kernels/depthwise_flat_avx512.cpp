// Depthwise convolution of one plane on a flattened grid (see depthwise_flat.h).
#include "backends/cpu/kernels/depthwise_flat.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/vec_avx512.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {

namespace {

constexpr int64_t kMaxGrid = int64_t{1} << 16;  // floats of scratch input per plane

// One grown, 64-byte-aligned buffer per thread and slot (no allocation once warm).
[[maybe_unused]] float* flat_scratch(int slot, size_t n) {  // the AVX-512 path only
  thread_local AlignedScratch bufs[2];
  return bufs[slot].get<float>(n);
}

}  // namespace

bool depthwise_flat_plan(const DepthwiseFlatGeometry& g, DepthwiseFlatPlan* plan) {
  if (!cpu_has_avx512()) return false;
  if (g.kh < 1 || g.kw < 1 || g.kh * g.kw > DepthwiseFlatPlan::kMaxTaps || g.pad_top < 0 || g.pad_left < 0) return false;
  if (g.out_h < 1 || g.out_w < 1 || g.in_h < 1 || g.in_w < 1) return false;
  DepthwiseFlatPlan& p = *plan;
  p.g = g;
  p.hq = g.out_h + g.kh - 1;
  p.wq = g.out_w + g.kw - 1;
  p.src_floats = p.hq * p.wq;
  if (p.src_floats > kMaxGrid) return false;
  p.grid = (g.out_h * p.wq + 15) / 16 * 16;
  // Taps read up to kw - 1 columns past the last grid row, and the grid is
  // rounded up to whole vectors: keep that tail in bounds (and zero).
  p.slack = (p.grid - g.out_h * p.wq) + g.kw - 1 + 16;
  p.taps = g.kh * g.kw;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) p.off[i * g.kw + j] = i * p.wq + j;
  return true;
}

#ifdef DLRT_HAVE_AVX512_PATHS
namespace {

// Lanes l of a 16-float load at x[base + l] that fall inside [0, n).
DLRT_AVX512 inline __mmask16 range_mask(int64_t base, int64_t n) {
  const int64_t lo = std::max<int64_t>(0, -base), hi = std::min<int64_t>(16, n - base);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(avx512::tail_mask(hi) & ~avx512::tail_mask(lo));
}

// Fills the zero-padded copy of plane x (rows of wq floats).
DLRT_AVX512 void fill_source(const float* x, const DepthwiseFlatPlan& p, float* src) {
  const DepthwiseFlatGeometry& g = p.g;
  const int64_t wq = p.wq;
  for (int64_t r = 0; r < p.hq; ++r) {
    float* dst = src + r * wq;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      for (int64_t c = 0; c < wq; c += 16) _mm512_mask_storeu_ps(dst + c, avx512::tail_mask(wq - c), _mm512_setzero_ps());
      continue;
    }
    const float* row = x + ih * g.in_w;
    for (int64_t c = 0; c < wq; c += 16) {
      // Padded column c is input column c - pad_left; lanes outside the row load zeros.
      const int64_t base = c - g.pad_left;
      _mm512_mask_storeu_ps(dst + c, avx512::tail_mask(wq - c),
                            _mm512_maskz_loadu_ps(range_mask(base, g.in_w), row + base));
    }
  }
}

// grid[j] = sum over taps t of w[t] * src[off[t] + j], j in [0, n) (n a multiple of 16).
DLRT_AVX512 void flat_taps(const float* src, const int64_t* off, const float* w, int64_t taps, int64_t n, float* grid) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      const __m512 wv = _mm512_set1_ps(w[t]);
      const float* p = src + off[t] + j;
      a0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p), a0);
      a1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 16), a1);
      a2 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 32), a2);
      a3 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + 48), a3);
    }
    _mm512_store_ps(grid + j, a0);
    _mm512_store_ps(grid + j + 16, a1);
    _mm512_store_ps(grid + j + 32, a2);
    _mm512_store_ps(grid + j + 48, a3);
  }
  for (; j < n; j += 16) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int64_t t = 0;
    for (; t + 1 < taps; t += 2) {
      a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(src + off[t] + j), a0);
      a1 = _mm512_fmadd_ps(_mm512_set1_ps(w[t + 1]), _mm512_loadu_ps(src + off[t + 1] + j), a1);
    }
    if (t < taps) a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(src + off[t] + j), a0);
    _mm512_store_ps(grid + j, _mm512_add_ps(a0, a1));
  }
}

// y[oh, ow] = act(grid[oh * wq + ow] + bias + residual[oh, ow]) for ow < out_w (and its post-stages).
template <ActKind K>
DLRT_AVX512 void compact(const float* grid, int64_t wq, const DepthwiseFlatGeometry& g, const DepthwiseFlatOutput& o,
                         float* y) {
  const __m512 bias = _mm512_set1_ps(o.bias);
  const __m512 p0 = _mm512_set1_ps(o.act.p0), p1 = _mm512_set1_ps(o.act.p1);
  const avx512::Post512 post = avx512::post_of(o.act);  // post-affine and post-clamp (activation_epilogue.h)
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const float* gr = grid + oh * wq;
    float* yr = y + oh * g.out_w;
    const float* rr = o.residual ? o.residual + oh * g.out_w : nullptr;
    for (int64_t c = 0; c < g.out_w; c += 16) {
      const __mmask16 m = avx512::tail_mask(g.out_w - c);
      __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, gr + c), bias);
      if (rr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, rr + c));
      v = avx512::act_ps<K>(v, p0, p1);
      _mm512_mask_storeu_ps(yr + c, m, post(v));
    }
  }
}

}  // namespace

DLRT_AVX512 void depthwise_flat_avx512(const float* x, const float* w, const DepthwiseFlatPlan& p, float* y,
                                       const DepthwiseFlatOutput& o) {
  float* src = flat_scratch(0, static_cast<size_t>(p.src_floats + p.slack));
  float* grid = flat_scratch(1, static_cast<size_t>(p.grid));
  fill_source(x, p, src);
  for (int64_t c = 0; c < p.slack; c += 16)
    _mm512_mask_storeu_ps(src + p.src_floats + c, avx512::tail_mask(p.slack - c), _mm512_setzero_ps());
  flat_taps(src, p.off, w, p.taps, p.grid, grid);
  const DepthwiseFlatGeometry& g = p.g;
  const int64_t wq = p.wq;
  switch (o.act.kind) {
    case ActKind::kNone: return compact<ActKind::kNone>(grid, wq, g, o, y);
    case ActKind::kRelu: return compact<ActKind::kRelu>(grid, wq, g, o, y);
    case ActKind::kClip: return compact<ActKind::kClip>(grid, wq, g, o, y);
    case ActKind::kSigmoid: return compact<ActKind::kSigmoid>(grid, wq, g, o, y);
    case ActKind::kTanh: return compact<ActKind::kTanh>(grid, wq, g, o, y);
    case ActKind::kLeakyRelu: return compact<ActKind::kLeakyRelu>(grid, wq, g, o, y);
    case ActKind::kHardSigmoid: return compact<ActKind::kHardSigmoid>(grid, wq, g, o, y);
    case ActKind::kHardSwish: return compact<ActKind::kHardSwish>(grid, wq, g, o, y);
    case ActKind::kGelu: return compact<ActKind::kGelu>(grid, wq, g, o, y);
    case ActKind::kGeluTanh: return compact<ActKind::kGeluTanh>(grid, wq, g, o, y);
    case ActKind::kSilu: return compact<ActKind::kSilu>(grid, wq, g, o, y);
  }
}
#else
void depthwise_flat_avx512(const float*, const float*, const DepthwiseFlatPlan&, float*, const DepthwiseFlatOutput&) {}
#endif

}  // namespace dlrt::cpu
