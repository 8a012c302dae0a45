// Layer-norm rows in ONNX Runtime's (1.31, x86) order and rounding, for the
// nodes mark_onnxruntime_order tags (ir/onnxruntime_order.h): float32 rows,
// y may be x.
#pragma once

#include <cstdint>

namespace dlrt::cpu {

// LayerNormalization as ONNX Runtime's AVX2 row kernel computes it: the mean
// from a sum in double (four lanes, four floats a step), the variance from
// float (x - mean)^2 fused-multiply-added into eight lanes, 1 / sqrtf(var / n
// + eps), y = fma((x - mean) * inv, s, b). Rows under 8 values take the
// Welford order of skip_layer_norm_rows_ort (ONNX Runtime's scalar fallback).
// `b` may be null.
void layer_norm_row_ort(const float* x, const float* s, const float* b, int64_t n, float eps, float* y, float* mean,
                        float* inv);

// SkipLayerNormalization's normalisation of `rows` (at most kOrtRowBlock)
// row sums x = input + skip + bias, [rows, n], as ONNX Runtime computes it:
// Welford's running mean and M2 in float, one value at a time; sd =
// sqrtf(M2 / n + eps), y = (x - mean) / sd * s + b, each step rounded to
// float; inv = 1 / sd. `b` may be null; y may be x.
inline constexpr int64_t kOrtRowBlock = 8;
void skip_layer_norm_rows_ort(const float* x, int64_t rows, const float* s, const float* b, int64_t n, float eps,
                              float* y, float* mean, float* inv);

}  // namespace dlrt::cpu
