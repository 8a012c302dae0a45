// Contiguous float32 reductions (see reduce_rows.h): portable, and the body
// reduce_rows_simd.h at every vector width.
#include "backends/cpu/kernels/reduce_rows.h"

#include <cmath>
#include <limits>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"

namespace dlrt::cpu {

namespace reduce_rows_detail {

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

}  // namespace reduce_rows_detail

double reduce_row_combine(RowReduce op, double a, double b) {
  switch (op) {
    case RowReduce::kMax:
    case RowReduce::kMin:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
      return op == RowReduce::kMax ? (b > a ? b : a) : (b < a ? b : a);
    default: return a + b;
  }
}

}  // namespace dlrt::cpu

#define DLRT_SIMD_BODY "backends/cpu/kernels/reduce_rows_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void reduce_rows_f32(SimdWidth width, RowReduce op, const float* x, int64_t n, int64_t rows, double* out) {
  if (rows > 0) DLRT_SIMD_CALL(width, reduce_rows, op, x, n, rows, out);
}

void reduce_rows_f32(RowReduce op, const float* x, int64_t n, int64_t rows, double* out) {
  if (cpu_has_simd_kernels()) return reduce_rows_f32(simd_width(), op, x, n, rows, out);
  for (int64_t r = 0; r < rows; ++r) out[r] = reduce_rows_detail::reduce_generic(op, x + r * n, n);
}

double reduce_row_f32(RowReduce op, const float* x, int64_t n) {
  double r;
  reduce_rows_f32(op, x, n, 1, &r);
  return r;
}

}  // namespace dlrt::cpu
