// Kernel body (simd/simd.h), compiled once per vector width by
// depthwise_plane.cpp: the depthwise conv of one plane (depthwise_plane.h).
// At 512 bits it runs the instruction sequences of the former AVX-512 plane
// kernel (conv_depthwise.cpp), at 256 those of the former AVX2 one.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace depthwise_plane_body {
namespace {

constexpr int kL = kLanes;
// Output vectors per step and row: 2 rows x 4 vectors of accumulators, 4
// loaded input vectors and a broadcast weight are 13 registers, within the
// 16 of AVX2 and SSE.
constexpr int kMaxNV = 4;

// d[0, n) = 0 in whole vectors: writes up to kL - 1 floats past d + n. The
// plane is filled row by row in address order and the scratch has kL floats
// of slack, so whatever lands past a row is rewritten by the next row.
// (Inline stores: a libc memset per padded row cost a quarter of a
// stride-2 112x112 layer.)
__attribute__((always_inline)) inline void zero_over(float* d, int64_t n) {
  for (int64_t c = 0; c < n; c += kL) storeu(d + c, zero());
}

// The padded plane: Hp rows of Wp floats. Stride 1: padded column c at c.
// Stride 2: padded column c at (c & 1) * half + (c >> 1), so the taps of
// one output vector read kL consecutive floats of one half.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void fill_plane(const float* x,
                                                                              const DepthwiseGeometry& g, int64_t Hp,
                                                                              int64_t Wp, int64_t half, float* buf) {
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
      // may copy a few floats of the next input row: zeroed just below);
      // the plane's last row ends with a partial one.
      const int64_t avail = (g.in_h - ih) * g.in_w;
      int64_t c = 0;
      for (; c < n && c + kL <= avail; c += kL) storeu(body + c, loadu(src + c));
      if (c < n) store_first(body + c, load_first(src + c, n - c), n - c);
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
    for (int64_t k = 0; k < std::max(n_ev, n_od); k += kL) {
      const int64_t i = 2 * k;  // first input of these 2 kL
      // Plain loads inside the row (AVX2's masked loads are slow: Zen 1).
      const bool full = i + 2 * kL <= g.in_w;
      const Vf a = full ? loadu(src + i) : load_first(src + i, g.in_w - i);
      const Vf b = full ? loadu(src + i + kL) : load_first(src + i + kL, g.in_w - i - kL);
      Vf e, o;
      deinterleave2(a, b, e, o);
      if (k + kL <= n_ev) storeu(ev + k, e);
      else if (k < n_ev) store_first(ev + k, e, n_ev - k);
      if (k + kL <= n_od) storeu(od + k, o);
      else if (k < n_od) store_first(od + k, o, n_od - k);
    }
  }
}

// R output rows from oh, NV vectors from column ow. KH, KW, S > 0: the
// kernel's height, width and height stride as constants (the loops over
// them unrolled, so the accumulators stay in registers); 0: at run time.
template <int R, int NV, bool kS2, int KH, int KW, int S>
__attribute__((always_inline)) inline void step(const float* buf, int64_t Wp, int64_t half, const float* w,
                                                int64_t kh_rt, int64_t kw_rt, int64_t sh_rt, int64_t oh, int64_t ow,
                                                int64_t out_w, float* y, const DepthwiseOutput& o) {
  const int64_t kh = KH > 0 ? KH : kh_rt, kw = KW > 0 ? KW : kw_rt, sh = S > 0 ? S : sh_rt;
  Vf acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) acc[r][q] = zero();
  const int64_t nrows = (R - 1) * sh + kh;
  const float* base = buf + oh * sh * Wp + ow;
#pragma GCC unroll 8
  for (int64_t ii = 0; ii < nrows; ++ii) {
    const float* row = base + ii * Wp;
#pragma GCC unroll 8
    for (int64_t j = 0; j < kw; ++j) {
      const float* p = kS2 ? row + (j & 1) * half + (j >> 1) : row + j;
      Vf v[NV];
#pragma GCC unroll 4
      for (int q = 0; q < NV; ++q) v[q] = loadu(p + kL * q);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const int64_t i = ii - r * sh;
        if (i < 0 || i >= kh) continue;
        const Vf wv = set1(w[i * kw + j]);
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) acc[r][q] = fmadd(wv, v[q], acc[r][q]);
      }
    }
  }
  const Vf bias = set1(o.bias), lo = set1(o.lo), hi = set1(o.hi);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    float* yr = y + (oh + r) * out_w;
    const float* rr = o.residual ? o.residual + (oh + r) * out_w : nullptr;
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) {
      const int64_t c = ow + kL * q;
      Vf v = add(acc[r][q], bias);
      if (c + kL <= out_w) {
        if (rr) v = add(v, loadu(rr + c));
        if (o.clamp) v = min(hi, max(lo, v));
        storeu(yr + c, v);
      } else {
        if (rr) v = add(v, load_first(rr + c, out_w - c));
        if (o.clamp) v = min(hi, max(lo, v));
        store_first(yr + c, v, out_w - c);
      }
    }
  }
}

template <int R, bool kS2, int KH, int KW, int S>
__attribute__((always_inline)) inline void rows(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh,
                                                int64_t kw, int64_t sh, int64_t oh, int64_t out_w, float* y,
                                                const DepthwiseOutput& o) {
  const int64_t nv = (out_w + kL - 1) / kL;
  int64_t v = 0;
  for (; v + kMaxNV <= nv; v += kMaxNV)
    step<R, kMaxNV, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, v * kL, out_w, y, o);
  switch (nv - v) {
    case 3: step<R, 3, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, v * kL, out_w, y, o); break;
    case 2: step<R, 2, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, v * kL, out_w, y, o); break;
    case 1: step<R, 1, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, v * kL, out_w, y, o); break;
    default: break;
  }
}

template <bool kS2, int KH, int KW, int S>
void plane(const float* buf, int64_t Wp, int64_t half, const float* w, int64_t kh, int64_t kw, int64_t sh,
           int64_t out_h, int64_t out_w, float* y, const DepthwiseOutput& o) {
  int64_t oh = 0;
  for (; oh + 2 <= out_h; oh += 2) rows<2, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
  if (oh < out_h) rows<1, kS2, KH, KW, S>(buf, Wp, half, w, kh, kw, sh, oh, out_w, y, o);
}

// The steps for this shape: mobilenet's 3x3 kernels at equal strides with
// every loop bound a constant, other kernels 3 wide with the tap loop
// unrolled, the rest at run time.
template <bool kS2>
void plane_for(const float* buf, int64_t Wp, int64_t half, const float* w, const DepthwiseGeometry& g, float* y,
               const DepthwiseOutput& o) {
  const int64_t kh = g.kh, kw = g.kw, sh = g.sh;
  if (kh == 3 && kw == 3 && sh == g.sw) return plane<kS2, 3, 3, kS2 ? 2 : 1>(buf, Wp, half, w, kh, kw, sh, g.out_h, g.out_w, y, o);
  if (kw == 3) return plane<kS2, 0, 3, 0>(buf, Wp, half, w, kh, kw, sh, g.out_h, g.out_w, y, o);
  plane<kS2, 0, 0, 0>(buf, Wp, half, w, kh, kw, sh, g.out_h, g.out_w, y, o);
}

}  // namespace
}  // namespace depthwise_plane_body

void depthwise_plane(const float* x, const float* w, const DepthwiseGeometry& g, float* y, const DepthwiseOutput& o) {
  using namespace depthwise_plane_body;
  const int64_t owv = (g.out_w + kL - 1) / kL * kL;
  const int64_t Hp = (g.out_h - 1) * g.sh + g.kh;
  // Stride 1: output vectors read columns [ow, ow + kL + kw - 1) < owv + kw.
  // Stride 2: tap j reads half (j & 1) from (j >> 1) + ow, below owv + kw / 2.
  const int64_t half = owv + g.kw;
  const int64_t Wp = g.sw == 1 ? owv + g.kw : 2 * half;
  float* buf = depthwise_plane_scratch(Hp * Wp + kL);
  fill_plane(x, g, Hp, Wp, half, buf);
  if (g.sw == 1) return plane_for<false>(buf, Wp, half, w, g, y, o);
  plane_for<true>(buf, Wp, half, w, g, y, o);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
