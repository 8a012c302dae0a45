// Contiguous float32 reductions (see reduce_rows.h).
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/reduce_rows.h"

#include <cmath>
#include <limits>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/vec_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_REDUCE_ROWS_AVX2 1
#endif

namespace dlrt::cpu {

namespace {

double reduce_generic(RowReduce op, const float* x, int64_t n) {
  switch (op) {
    case RowReduce::kMax:
    case RowReduce::kMin: {
      float m = x[0];
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) return std::numeric_limits<double>::quiet_NaN();
        m = op == RowReduce::kMax ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
      }
      return m;
    }
    default: {
      // Four chains, so the adds overlap.
      double s[4] = {0, 0, 0, 0};
      int64_t i = 0;
      auto term = [op](float v) {
        const double d = v;
        return op == RowReduce::kSumSquare ? d * d : (op == RowReduce::kAbsSum ? std::fabs(d) : d);
      };
      for (; i + 4 <= n; i += 4)
        for (int u = 0; u < 4; ++u) s[u] += term(x[i + u]);
      for (; i < n; ++i) s[0] += term(x[i]);
      return (s[0] + s[1]) + (s[2] + s[3]);
    }
  }
}

#ifdef DLRT_REDUCE_ROWS_AVX2

// 16 floats per step into four double accumulators (each float widened
// exactly); the tail through the generic loop.
template <RowReduce kOp>
DLRT_AVX2 double sum_avx2(const float* x, int64_t n) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  const __m256d sign = _mm256_set1_pd(-0.0);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      __m256d d = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * u));
      if constexpr (kOp == RowReduce::kSumSquare) {
        acc[u] = _mm256_fmadd_pd(d, d, acc[u]);
      } else {
        if constexpr (kOp == RowReduce::kAbsSum) d = _mm256_andnot_pd(sign, d);
        acc[u] = _mm256_add_pd(acc[u], d);
      }
    }
  }
  double s = avx2::hsum(_mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
  if (i < n) s += reduce_generic(kOp, x + i, n - i);
  return s;
}

// Max/min over 32 floats per step; NaNs tracked apart (vmaxps drops them).
template <bool kMax>
DLRT_AVX2 double extreme_avx2(const float* x, int64_t n) {
  if (n < 32) return reduce_generic(kMax ? RowReduce::kMax : RowReduce::kMin, x, n);
  __m256 m[4], nan = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int u = 0; u < 4; ++u) m[u] = _mm256_loadu_ps(x + 8 * u);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * u);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      m[u] = kMax ? _mm256_max_ps(m[u], v) : _mm256_min_ps(m[u], v);
    }
  }
  if (_mm256_movemask_ps(nan)) return std::numeric_limits<double>::quiet_NaN();
  const __m256 a = kMax ? _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]))
                        : _mm256_min_ps(_mm256_min_ps(m[0], m[1]), _mm256_min_ps(m[2], m[3]));
  alignas(32) float t[8];
  _mm256_store_ps(t, a);
  double r = t[0];
  for (int u = 1; u < 8; ++u) r = kMax ? std::fmax(r, t[u]) : std::fmin(r, t[u]);
  if (i < n) r = reduce_row_combine(kMax ? RowReduce::kMax : RowReduce::kMin, r,
                                    reduce_generic(kMax ? RowReduce::kMax : RowReduce::kMin, x + i, n - i));
  return r;
}

double reduce_avx2(RowReduce op, const float* x, int64_t n) {
  switch (op) {
    case RowReduce::kSum: return sum_avx2<RowReduce::kSum>(x, n);
    case RowReduce::kSumSquare: return sum_avx2<RowReduce::kSumSquare>(x, n);
    case RowReduce::kAbsSum: return sum_avx2<RowReduce::kAbsSum>(x, n);
    case RowReduce::kMax: return extreme_avx2<true>(x, n);
    case RowReduce::kMin: return extreme_avx2<false>(x, n);
  }
  return 0;
}
#endif

}  // namespace

double reduce_row_combine(RowReduce op, double a, double b) {
  switch (op) {
    case RowReduce::kMax:
    case RowReduce::kMin:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
      return op == RowReduce::kMax ? (b > a ? b : a) : (b < a ? b : a);
    default: return a + b;
  }
}

double reduce_row_f32(RowReduce op, const float* x, int64_t n) {
#ifdef DLRT_REDUCE_ROWS_AVX2
  if (cpu_has_avx2()) return reduce_avx2(op, x, n);
#endif
  return reduce_generic(op, x, n);
}

}  // namespace dlrt::cpu
