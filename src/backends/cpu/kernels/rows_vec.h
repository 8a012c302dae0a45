// Softmax, LogSoftmax and LayerNorm rows over the vector layer: one source
// (rows_vec_simd.h over simd/simd.h) at 512, 256 and 128 bits (NEON on
// aarch64), picked by simd_width(). Sums are taken in double as the scalar
// kernels of ops/softmax.cpp and ops/normalization.cpp take them.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

// Softmax (log = false) or LogSoftmax (log = true) of the n contiguous floats at in, into out.
void softmax_row_vec(SimdWidth width, bool log, const float* in, float* out, int64_t n);

// Columns reduced by one softmax_cols_vec call at `width`: four vectors.
constexpr int64_t softmax_cols_step(SimdWidth width) {
  return width == SimdWidth::k512 ? 64 : width == SimdWidth::k256 ? 32 : 16;
}

// Softmax or LogSoftmax down the n rows (stride inner) of cols <= softmax_cols_step(width)
// adjacent columns starting at in / out.
void softmax_cols_vec(SimdWidth width, bool log, const float* in, float* out, int64_t n, int64_t inner, int64_t cols);

// One LayerNormalization row of n floats with Scale s (and B b, or null) covering it:
// y = (x - mean) * inv * s + b, mean and inv = 1 / sqrt(var + eps) returned (in double).
void layer_norm_row_vec(SimdWidth width, const float* x, const float* s, const float* b, int64_t n, double eps,
                        float* y, double* mean, double* inv);

}  // namespace dlrt::cpu
