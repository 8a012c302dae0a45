// Kernel body (simd/simd.h), compiled once per vector width by onnxruntime_math.cpp.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace erf_ort_body {
namespace {

__attribute__((always_inline)) inline Vf erf_ort_vec(Vf x) {
  using namespace erf_ort_detail;
  const Vf ax = bit_andnot(set1(-0.0f), x);
  const Vf sq = mul(ax, ax);
  Vf small = set1(kSmall[0]);
  for (int k = 1; k < 6; ++k) small = fmadd(small, sq, set1(kSmall[k]));
  small = fmadd(small, ax, ax);
  Vf big = set1(kBig[0]);
  for (int k = 1; k < 7; ++k) big = fmadd(big, ax, set1(kBig[k]));
  big = fmadd(big, ax, ax);
  big = max(set1(kExpLower), sub(zero(), big));
  const Vf r = sub(fmadd(set1(kLog2e), big, set1(kRoundMagic)), set1(kRoundMagic));
  Vf f = fmadd(r, set1(kLn2Hi), big);
  f = fmadd(r, set1(kLn2Lo), f);
  Vf p = set1(kExp[0]);
  for (int k = 1; k < 7; ++k) p = fmadd(p, f, set1(kExp[k]));
  big = sub(set1(1.0f), scale2(p, r));
  const Vf res = select(lt(set1(kSplit), ax), big, small);
  return bit_or(res, bit_and(x, set1(-0.0f)));
}

__attribute__((always_inline)) inline void exp_ort_parts(Vf x, Vf neg_max, Vf& p, Vf& m) {
  using namespace erf_ort_detail;
  const Vf v0 = max(set1(kSoftmaxLower), add(x, neg_max));
  m = sub(fmadd(v0, set1(kLog2e), set1(kRoundMagic)), set1(kRoundMagic));
  Vf v = fmadd(m, set1(kLn2Hi), v0);
  v = fmadd(m, set1(kLn2Lo), v);
  p = set1(kSoftmaxExp[0]);
  for (int k = 1; k < 6; ++k) p = fmadd(p, v, set1(kSoftmaxExp[k]));
  p = fmadd(p, v, set1(kSoftmaxExp[5]));
}

}  // namespace
}  // namespace erf_ort_body

// e = exp(x + neg_max) into y and the sum of e in sixteen lanes (MLAS's
// AVX-512 order: one 16-float vector after another; here 16 / kLanes vectors
// of kLanes), returned added as sum_lanes16 does.
float softmax_exp_sum_ort_run(const float* x, float* y, int64_t n, float neg_max) {
  using erf_ort_body::exp_ort_parts;
  constexpr int kAcc = 16 / kLanes;
  const Vf nm = set1(neg_max);
  Vf acc[kAcc];
  for (int a = 0; a < kAcc; ++a) acc[a] = zero();
  // p * 2^m exactly, subnormal results too: p * 2^max(m, -125) is normal, then one rounding.
  auto exp_of = [&](Vf v) {
    Vf p, m;
    exp_ort_parts(v, nm, p, m);
    const Vf e = mul(scale2(p, max(m, set1(-125.0f))), scale2(set1(1.0f), min(add(m, set1(125.0f)), zero())));
    return select(unord(m, m), m, e);
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int a = 0; a < kAcc; ++a) {
      const Vf e = exp_of(loadu(x + i + a * kLanes));
      storeu(y + i + a * kLanes, e);
      acc[a] = add(acc[a], e);
    }
  for (int a = 0; a < kAcc && i + a * kLanes < n; ++a) {
    const int64_t rem = n - i - a * kLanes;
    const Vf e = exp_of(load_first(x + i + a * kLanes, rem));
    store_first(y + i + a * kLanes, e, rem);
    acc[a] = add(acc[a], select(first_lanes(rem), e, zero()));
  }
  float lanes[16];
  for (int a = 0; a < kAcc; ++a) storeu(lanes + a * kLanes, acc[a]);
  return erf_ort_detail::sum_lanes16(lanes);
}

void erf_ort_run(const float* x, float* y, int64_t n) {
  using erf_ort_body::erf_ort_vec;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) storeu(y + i, erf_ort_vec(loadu(x + i)));
  if (i < n) store_first(y + i, erf_ort_vec(load_first(x + i, n - i)), n - i);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
