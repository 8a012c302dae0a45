// One row of a float32 layer normalization, on the vector layer at
// simd_width() where it is selected (rows_vec.h; normalization.cpp):
// y = (x - mean) / sqrt(var + eps) * s (+ b), with the row's mean and
// 1/sqrt(var + eps) out (statistics in double). `b` may be null. Used by
// LayerNormalization and the com.microsoft *LayerNormalization ops.
#pragma once

#include <cstdint>

namespace dlrt::cpu {

void layer_norm_row(const float* x, const float* s, const float* b, int64_t n, double eps, float* y, double* mean,
                    double* inv);

}  // namespace dlrt::cpu
