// Kernel body (simd/simd.h), compiled once per vector width by
// attention.cpp: the fused scale / mask / softmax numerators of the
// attention kernels' score rows (the AVX2 path at 256 bits, the portable
// one's callers at 128 on NEON).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace attention_softmax_body {
namespace {
#include "backends/cpu/kernels/simd/math_simd.h"
}  // namespace
}  // namespace attention_softmax_body

// Rows [0, rows) of scores at s (lds apart), query rows i0.. of head (b, h):
// x = score * scale + mask, then exp(x - max) in place; inv[r] = 1 / the
// row's sum. A fully masked row (max -inf) takes max 0, NaN-free as unfused.
// Four vectors a step go through the exp in lockstep; the tail lanes past
// the row load -inf and so add 0.
void attention_softmax_rows(const attention::Problem& p, int64_t b, int64_t h, int64_t i0, int rows, float* s,
                            int64_t lds, float* inv) {
  using namespace attention_softmax_body;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t n = p.Skv;
  const Vf sc = set1(p.scale);
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    const float* m = p.mask_row(b, h, i0 + r);
    const bool mask_keys = m && p.mk == 1;  // else one mask value for every key
    const Vf madd = set1(m && !mask_keys ? m[0] : 0.0f);
    Vf vmx = set1(kNegInf);
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
      const Vf x = fmadd(loadu(row + j), sc, mask_keys ? loadu(m + j) : madd);
      storeu(row + j, x);
      vmx = max(vmx, x);
    }
    if (j < n) {
      const int64_t k = n - j;
      const Vf x = fmadd(load_first(row + j, k), sc, mask_keys ? load_first(m + j, k) : madd);
      store_first(row + j, x, k);
      vmx = max(vmx, select(first_lanes(k), x, set1(kNegInf)));
    }
    float mx = hmax(vmx);
    if (mx == kNegInf) mx = 0;
    const Vf vm = set1(mx);
    Vf vs = zero();
    j = 0;
    for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
      Vf e[4];
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) e[u] = sub(loadu(row + j + kLanes * u), vm);
      math::exp_nonpositive_lockstep<4>(e);
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) storeu(row + j + kLanes * u, e[u]);
      vs = add(vs, add(add(e[0], e[1]), add(e[2], e[3])));
    }
    for (; j < n; j += kLanes) {
      const int64_t k = n - j;
      Vf e[1] = {sub(k >= kLanes ? loadu(row + j) : select(first_lanes(k), load_first(row + j, k), set1(kNegInf)), vm)};
      math::exp_nonpositive_lockstep<1>(e);
      if (k >= kLanes)
        storeu(row + j, e[0]);
      else
        store_first(row + j, e[0], k);
      vs = add(vs, e[0]);
    }
    inv[r] = 1.0f / hsum(vs);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
