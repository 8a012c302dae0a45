#include "backends/cpu/ops/onnxruntime_norm_rows.h"

#include <cmath>

namespace dlrt::cpu {

void skip_layer_norm_rows_ort(const float* x, int64_t rows, const float* s, const float* b, int64_t n, float eps,
                              float* y, float* mean, float* inv) {
  // Up to kOrtRowBlock rows side by side: each row's chain of divisions is
  // sequential, the rows' chains are independent (the CPU overlaps them).
  float m[kOrtRowBlock] = {}, m2[kOrtRowBlock] = {};
  for (int64_t k = 0; k < n; ++k) {
    const float count = static_cast<float>(k + 1);
    for (int64_t r = 0; r < rows; ++r) {
      const float v = x[r * n + k];
      const float d = v - m[r];
      m[r] += d / count;
      const float d2 = v - m[r];
      m2[r] += d * d2;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float sd = std::sqrt(m2[r] / static_cast<float>(n) + eps);
    const float* xr = x + r * n;
    float* yr = y + r * n;
    for (int64_t k = 0; k < n; ++k) {
      const float t = (xr[k] - m[r]) / sd * s[k];
      yr[k] = b ? t + b[k] : t;
    }
    mean[r] = m[r];
    inv[r] = 1.0f / sd;
  }
}

void layer_norm_row_ort(const float* x, const float* s, const float* b, int64_t n, float eps, float* y, float* mean,
                        float* inv) {
  if (n < 8) return skip_layer_norm_rows_ort(x, 1, s, b, n, eps, y, mean, inv);
  double ds[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) ds[l] += static_cast<double>(x[i + l]);
  double dsum = (ds[0] + ds[2]) + (ds[1] + ds[3]);
  for (; i < n; ++i) dsum += static_cast<double>(x[i]);
  const float m = static_cast<float>(dsum / static_cast<double>(n));
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (i = 0; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const float d = x[i + l] - m;
      acc[l] = std::fma(d, d, acc[l]);
    }
  // The horizontal sum as the lanes pair up: halves, then quarters, then the last two.
  float var = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  for (; i < n; ++i) {
    const float d = x[i] - m;
    var = std::fma(d, d, var);
  }
  const float iv = 1.0f / std::sqrt(var / static_cast<float>(n) + eps);
  for (i = 0; i < n; ++i) {
    const float t = (x[i] - m) * iv;
    y[i] = b ? std::fma(t, s[i], b[i]) : t * s[i];
  }
  *mean = m;
  *inv = iv;
}

}  // namespace dlrt::cpu
