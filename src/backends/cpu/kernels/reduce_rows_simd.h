// Kernel body (simd/simd.h), compiled once per vector width by
// reduce_rows.cpp: the contiguous float32 reductions of reduce_rows.h. At
// 256 bits the operations of the former AVX2 kernels.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace reduce_body {
namespace {

// Two vectors a step into four double accumulators (each float widened
// exactly: |x| and x * x taken in double as the scalar path does); the tail
// through the generic loop.
template <RowReduce kOp>
double sum(const float* x, int64_t n) {
  Vd acc[4] = {zero_d(), zero_d(), zero_d(), zero_d()};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
#pragma GCC unroll 2
    for (int u = 0; u < 2; ++u) {
      Vd lo, hi;
      load_wide(x + i + kLanes * u, lo, hi);
      if constexpr (kOp == RowReduce::kAbsSum) lo = abs_d(lo), hi = abs_d(hi);
      if constexpr (kOp == RowReduce::kSumSquare) {
        acc[2 * u] = fmadd_d(lo, lo, acc[2 * u]);
        acc[2 * u + 1] = fmadd_d(hi, hi, acc[2 * u + 1]);
      } else {
        acc[2 * u] = add_d(acc[2 * u], lo);
        acc[2 * u + 1] = add_d(acc[2 * u + 1], hi);
      }
    }
  }
  double s = hsum_d(add_d(add_d(acc[0], acc[1]), add_d(acc[2], acc[3])));
  if (i < n) s += reduce_rows_detail::reduce_generic(kOp, x + i, n - i);
  return s;
}

// Max / min over four vectors a step; NaNs tracked apart (max and min drop them).
template <bool kMax>
double extreme(const float* x, int64_t n) {
  constexpr RowReduce kOp = kMax ? RowReduce::kMax : RowReduce::kMin;
  if (n < 4 * kLanes) return reduce_rows_detail::reduce_generic(kOp, x, n);
  Vf m[4];
  Mask nan = unord(zero(), zero());
#pragma GCC unroll 4
  for (int u = 0; u < 4; ++u) m[u] = loadu(x + kLanes * u);
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const Vf v = loadu(x + i + kLanes * u);
      nan = mask_or(nan, unord(v, v));
      m[u] = kMax ? max(m[u], v) : min(m[u], v);
    }
  }
  if (any(nan)) return std::numeric_limits<double>::quiet_NaN();
  const Vf a = kMax ? max(max(m[0], m[1]), max(m[2], m[3])) : min(min(m[0], m[1]), min(m[2], m[3]));
  float t[kLanes];
  storeu(t, a);
  double r = t[0];
  for (int u = 1; u < kLanes; ++u) r = kMax ? std::fmax(r, t[u]) : std::fmin(r, t[u]);
  if (i < n) r = reduce_row_combine(kOp, r, reduce_rows_detail::reduce_generic(kOp, x + i, n - i));
  return r;
}

__attribute__((always_inline)) inline double reduce_one(RowReduce op, const float* x, int64_t n) {
  switch (op) {
    case RowReduce::kSum: return sum<RowReduce::kSum>(x, n);
    case RowReduce::kSumSquare: return sum<RowReduce::kSumSquare>(x, n);
    case RowReduce::kAbsSum: return sum<RowReduce::kAbsSum>(x, n);
    case RowReduce::kMax: return extreme<true>(x, n);
    case RowReduce::kMin: return extreme<false>(x, n);
  }
  return 0;
}

}  // namespace
}  // namespace reduce_body

// out[r] = the reduction of x[r * n, (r + 1) * n), r < rows.
void reduce_rows(RowReduce op, const float* x, int64_t n, int64_t rows, double* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = reduce_body::reduce_one(op, x + r * n, n);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
