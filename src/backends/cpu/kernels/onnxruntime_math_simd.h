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

// p and m of each e = p * 2^m (the caller scales: exactly, subnormals too).
void exp_ort_parts_run(const float* x, float neg_max, float* p, float* m, int64_t n) {
  using erf_ort_body::exp_ort_parts;
  const Vf nm = set1(neg_max);
  int64_t i = 0;
  Vf vp, vm;
  for (; i + kLanes <= n; i += kLanes) {
    exp_ort_parts(loadu(x + i), nm, vp, vm);
    storeu(p + i, vp);
    storeu(m + i, vm);
  }
  if (i < n) {
    exp_ort_parts(load_first(x + i, n - i), nm, vp, vm);
    store_first(p + i, vp, n - i);
    store_first(m + i, vm, n - i);
  }
}

void erf_ort_run(const float* x, float* y, int64_t n) {
  using erf_ort_body::erf_ort_vec;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) storeu(y + i, erf_ort_vec(loadu(x + i)));
  if (i < n) store_first(y + i, erf_ort_vec(load_first(x + i, n - i)), n - i);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
