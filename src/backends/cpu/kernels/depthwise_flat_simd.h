// Kernel body (simd/simd.h), compiled once per vector width by
// depthwise_flat.cpp: the depthwise conv of one plane on a flattened grid
// (depthwise_flat.h).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace depthwise_flat_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"
#include "backends/cpu/kernels/activation_simd.h"

// Fills the zero-padded copy of plane x (rows of wq floats).
void fill_source(const float* x, const DepthwiseFlatPlan& p, float* src) {
  const DepthwiseFlatGeometry& g = p.g;
  const int64_t wq = p.wq;
  for (int64_t r = 0; r < p.hq; ++r) {
    float* dst = src + r * wq;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      for (int64_t c = 0; c < wq; c += kLanes) store_first(dst + c, zero(), wq - c);
      continue;
    }
    const float* row = x + ih * g.in_w;
    for (int64_t c = 0; c < wq; c += kLanes) {
      // Padded column c is input column c - pad_left; lanes outside the row load zeros.
      const int64_t base = c - g.pad_left;
      store_first(dst + c, load_lanes(row + base, -base, g.in_w - base), wq - c);
    }
  }
}

// grid[j] = sum over taps t of w[t] * src[off[t] + j], j in [0, n) (n a multiple of kLanes).
void flat_taps(const float* src, const int64_t* off, const float* w, int64_t taps, int64_t n, float* grid) {
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    Vf a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
    for (int64_t t = 0; t < taps; ++t) {
      const Vf wv = set1(w[t]);
      const float* p = src + off[t] + j;
      a0 = fmadd(wv, loadu(p), a0);
      a1 = fmadd(wv, loadu(p + kLanes), a1);
      a2 = fmadd(wv, loadu(p + 2 * kLanes), a2);
      a3 = fmadd(wv, loadu(p + 3 * kLanes), a3);
    }
    storeu(grid + j, a0);
    storeu(grid + j + kLanes, a1);
    storeu(grid + j + 2 * kLanes, a2);
    storeu(grid + j + 3 * kLanes, a3);
  }
  for (; j < n; j += kLanes) {
    Vf a0 = zero(), a1 = zero();
    int64_t t = 0;
    for (; t + 1 < taps; t += 2) {
      a0 = fmadd(set1(w[t]), loadu(src + off[t] + j), a0);
      a1 = fmadd(set1(w[t + 1]), loadu(src + off[t + 1] + j), a1);
    }
    if (t < taps) a0 = fmadd(set1(w[t]), loadu(src + off[t] + j), a0);
    storeu(grid + j, add(a0, a1));
  }
}

// y[oh, ow] = act(grid[oh * wq + ow] + bias + residual[oh, ow]) for ow < out_w
// (and its post-stages): in registers at 512 bits, by apply_activation on
// each stored row at the narrower widths.
template <ActKind K>
void compact(const float* grid, int64_t wq, const DepthwiseFlatGeometry& g, const DepthwiseFlatOutput& o, float* y) {
  constexpr bool kInRegisters = kWidth == SimdWidth::k512;
  const Vf bias = set1(o.bias), p0 = set1(o.act.p0), p1 = set1(o.act.p1);
  const act::Post post = act::post_of(o.act);
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const float* gr = grid + oh * wq;
    float* yr = y + oh * g.out_w;
    const float* rr = o.residual ? o.residual + oh * g.out_w : nullptr;
    for (int64_t c = 0; c < g.out_w; c += kLanes) {
      const int64_t m = g.out_w - c;
      Vf v = add(load_first(gr + c, m), bias);
      if (rr) v = add(v, load_first(rr + c, m));
      if constexpr (kInRegisters) v = post(act::apply<K>(v, p0, p1));
      store_first(yr + c, v, m);
    }
    if constexpr (!kInRegisters) {
      if (!o.act.none()) apply_activation(o.act, yr, g.out_w);
    }
  }
}

}  // namespace
}  // namespace depthwise_flat_body

void depthwise_flat(const float* x, const float* w, const DepthwiseFlatPlan& p, float* y, const DepthwiseFlatOutput& o,
                    float* src, float* grid) {
  using namespace depthwise_flat_body;
  fill_source(x, p, src);
  for (int64_t c = 0; c < p.slack; c += kLanes) store_first(src + p.src_floats + c, zero(), p.slack - c);
  flat_taps(src, p.off, w, p.taps, p.grid, grid);
  const DepthwiseFlatGeometry& g = p.g;
  const int64_t wq = p.wq;
  switch (o.act.kind) {
    case ActKind::kNone:
      return compact<ActKind::kNone>(grid, wq, g, o, y);
    case ActKind::kRelu:
      return compact<ActKind::kRelu>(grid, wq, g, o, y);
    case ActKind::kClip:
      return compact<ActKind::kClip>(grid, wq, g, o, y);
    case ActKind::kSigmoid:
      return compact<ActKind::kSigmoid>(grid, wq, g, o, y);
    case ActKind::kTanh:
      return compact<ActKind::kTanh>(grid, wq, g, o, y);
    case ActKind::kLeakyRelu:
      return compact<ActKind::kLeakyRelu>(grid, wq, g, o, y);
    case ActKind::kHardSigmoid:
      return compact<ActKind::kHardSigmoid>(grid, wq, g, o, y);
    case ActKind::kHardSwish:
      return compact<ActKind::kHardSwish>(grid, wq, g, o, y);
    case ActKind::kGelu:
      return compact<ActKind::kGelu>(grid, wq, g, o, y);
    case ActKind::kGeluTanh:
      return compact<ActKind::kGeluTanh>(grid, wq, g, o, y);
    case ActKind::kSilu:
      return compact<ActKind::kSilu>(grid, wq, g, o, y);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
