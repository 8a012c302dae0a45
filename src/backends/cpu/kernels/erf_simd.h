// Kernel body (simd/simd.h), compiled once per vector width by erf.cpp:
// the vector erf (erf.h; the algorithm is described in erf.cpp).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace erf_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"

__attribute__((always_inline)) inline Vf erf_vec(Vf x) {
  using namespace erf_detail;
  const Vf ax = bit_andnot(set1(-0.0f), x);
  const Vf u = mul(ax, ax);
  Vf p = set1(kP[5]);
  for (int k = 4; k >= 0; --k) p = fmadd(p, u, set1(kP[k]));
  const Vf small = fmadd(ax, p, ax);
  const Vf a = min(ax, set1(kClamp));  // NaN: 4 (the NaN is put back below)
  const Vf t = sub(a, set1(kCentre));
  Vf s = set1(kS[9]);
  for (int k = 8; k >= 0; --k) s = fmadd(s, t, set1(kS[k]));
  // S(a) - a^2 lies in [-20, 3] for every a in [0, 4]: in exp_in_range's range.
  const Vf big = sub(set1(1.0f), math::exp_in_range(fnmadd(a, a, s)));
  const Vf r = select(lt(ax, set1(kSmallBelow)), small, big);
  const Vf signed_r = bit_or(r, bit_and(x, set1(-0.0f)));
  return select(unord(x, x), x, signed_r);
}

}  // namespace
}  // namespace erf_body

void erf_run(const float* x, float* y, int64_t n) {
  using erf_body::erf_vec;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) storeu(y + i, erf_vec(loadu(x + i)));
  if (i < n) store_first(y + i, erf_vec(load_first(x + i, n - i)), n - i);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
