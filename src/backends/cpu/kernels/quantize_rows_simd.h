// Kernel body (simd/simd.h), compiled once per vector width by
// quantize_rows.cpp: float rows to 8-bit integers (quantize_linear, the
// requantization of int32 accumulators, quantize_u8) and min_max, each the
// portable loop's operations in the same order a vector at a time (whole
// vectors, then one partial). Rounding is to nearest even; once clamped, a
// value plus the zero point is an integer of the 8-bit type, exact in
// float, stored as its low byte (a NaN as 0, as the portable loops give).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace quantize_rows_body {
namespace {

#include "backends/cpu/kernels/simd/for_vectors_simd.h"

template <bool kBiasV, bool kMultV>
void requantize(const int32_t* acc, int64_t n, const int32_t* bias_v, int32_t bias, const float* mult_v, float mult,
                float lo, float hi, float zp, uint8_t* d) {
  const Vf m = set1(mult), vlo = set1(lo), vhi = set1(hi), z = set1(zp);
  const Vi32 b = set1_i32(bias);
  for_vectors(n, [&](int64_t i, auto k) {
    Vi32 a = load_first_i32(acc + i, k);
    if constexpr (kBiasV)
      a = add_i32(a, load_first_i32(bias_v + i, k));
    else if constexpr (!kMultV)
      a = add_i32(a, b);
    const Vf v = mul(to_float(a), kMultV ? load_first(mult_v + i, k) : m);
    store_bytes(d + i, add(round_nearest(min(vhi, max(vlo, v))), z), k);
  });
}

}  // namespace
}  // namespace quantize_rows_body

// x / scale, clamped to [lo, hi] (max(lo, .) then min(hi, .) keep a NaN, as
// std::max / std::min do), rounded, plus zp; a NaN lane gives 0.
void quantize_linear_row(const float* x, int64_t n, float scale, float lo, float hi, float zp, void* dst) {
  const Vf s = set1(scale), vlo = set1(lo), vhi = set1(hi), z = set1(zp);
  uint8_t* d = static_cast<uint8_t*>(dst);
  quantize_rows_body::for_vectors(n, [&](int64_t i, auto k) {
    const Vf v = div(load_first(x + i, k), s);
    store_bytes(d + i, add(round_nearest(min(vhi, max(vlo, v))), z), k);
  });
}

// (acc + bias) * mult, clamped to [lo, hi], rounded, plus zp: the scalars
// bias and mult, or per element mult_v with bias_v (or no bias; the scalar
// bias is not added then).
void requantize_row(const int32_t* acc, int64_t n, const int32_t* bias_v, int32_t bias, const float* mult_v,
                    float mult, float lo, float hi, float zp, void* dst) {
  using namespace quantize_rows_body;
  uint8_t* d = static_cast<uint8_t*>(dst);
  if (mult_v && bias_v) return requantize<true, true>(acc, n, bias_v, bias, mult_v, mult, lo, hi, zp, d);
  if (mult_v) return requantize<false, true>(acc, n, bias_v, bias, mult_v, mult, lo, hi, zp, d);
  requantize<false, false>(acc, n, bias_v, bias, mult_v, mult, lo, hi, zp, d);
}

// The whole vectors of x: rounded x / scale plus zero_point, clamped to
// [0, 255] (max first, so NaN gives 0); returns how many floats were done.
int64_t quantize_u8_row(const float* x, int64_t n, float scale, float zero_point, uint8_t* y) {
  const Vf s = set1(scale), z = set1(zero_point), top = set1(255.0f), bottom = zero();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vf r = add(round_nearest(div(loadu(x + i), s)), z);
    store_bytes(y + i, min(max(r, bottom), top), kLanes);
  }
  return i;
}

// lo / hi lowered / raised to the minimum / maximum of x's whole vectors;
// false (lo, hi unspecified) if one is NaN. The floats done go to `done`.
bool min_max_row(const float* x, int64_t n, float& lo, float& hi, int64_t& done) {
  Vf vlo = set1(lo), vhi = set1(hi);
  Mask nan = unord(zero(), zero());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vf v = loadu(x + i);
    nan = mask_or(nan, unord(v, v));
    vlo = min(vlo, v);
    vhi = max(vhi, v);
  }
  done = i;
  if (any(nan)) return false;
  lo = hmin(vlo);
  hi = hmax(vhi);
  return true;
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
