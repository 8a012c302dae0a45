// The row kernels of rows_vec.h: the body rows_vec_simd.h at every vector width.
#include "backends/cpu/kernels/rows_vec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/rows_vec_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void softmax_row_vec(SimdWidth width, bool log, const float* in, float* out, int64_t n) {
  if (n <= 0) return;
  DLRT_SIMD_CALL(width, softmax_row, log, in, out, n);
}

void softmax_cols_vec(SimdWidth width, bool log, const float* in, float* out, int64_t n, int64_t inner, int64_t cols) {
  if (n <= 0 || cols <= 0) return;
  DLRT_SIMD_CALL(width, softmax_cols, log, in, out, n, inner, cols);
}

void layer_norm_row_vec(SimdWidth width, const float* x, const float* s, const float* b, int64_t n, double eps,
                        float* y, double* mean, double* inv) {
  DLRT_SIMD_CALL(width, layer_norm_row, x, s, b, n, eps, y, mean, inv);
}

}  // namespace dlrt::cpu
