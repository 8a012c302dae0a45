#include "backends/cpu/kernels/onnxruntime_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"

namespace dlrt::cpu::erf_ort_detail {

// MLAS's erf constants (ONNX Runtime's core/mlas/lib/erf.cpp): the two
// polynomials, the split between them and those of its exp.
constexpr float kSplit = 0.921875f;
constexpr float kSmall[6] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                             1.12818025e-1f,  -3.76124859e-1f, 1.28379151e-1f};
constexpr float kBig[7] = {1.72948930e-5f,  -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                           1.06777847e-1f,  6.34846687e-1f,  1.28717512e-1f};
constexpr float kExpLower = -88.3762626647949f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = -6.93145752e-1f;
constexpr float kLn2Lo = -1.42860677e-6f;
constexpr float kExp[7] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f,
                           4.99999851e-1f, 1.0f,           1.0f};
constexpr float kRoundMagic = 1.25829120e+7f;  // 1.5 * 2^23: adding it rounds to an integer
// Softmax's exp (MLAS's MlasExpConstants): its lower clamp and polynomial (the
// last coefficient, 1, serves twice).
constexpr float kSoftmaxLower = -103.9720840454f;
constexpr float kSoftmaxExp[6] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f,
                                  0x1.555450p-3f,  0x1.fffff6p-2f, 0x1.000000p+0f};

// MLAS's sum of its sixteen softmax lanes: halves, then pairs, pairs of pairs.
inline float sum_lanes16(const float* l) {
  float h[8];
  for (int k = 0; k < 8; ++k) h[k] = l[k] + l[k + 8];
  return ((h[0] + h[1]) + (h[2] + h[3])) + ((h[4] + h[5]) + (h[6] + h[7]));
}

}  // namespace dlrt::cpu::erf_ort_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/onnxruntime_math_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

namespace {

float erf_ort_scalar(float x) {
  using namespace erf_ort_detail;
  const float ax = std::fabs(x);
  float r;
  if (ax > kSplit) {
    float b = kBig[0];
    for (int k = 1; k < 7; ++k) b = std::fma(b, ax, kBig[k]);
    b = std::max(kExpLower, -std::fma(b, ax, ax));
    const float n = std::fma(kLog2e, b, kRoundMagic) - kRoundMagic;
    float f = std::fma(n, kLn2Hi, b);
    f = std::fma(n, kLn2Lo, f);
    float p = kExp[0];
    for (int k = 1; k < 7; ++k) p = std::fma(p, f, kExp[k]);
    r = 1.0f - std::ldexp(p, static_cast<int>(n));
  } else {
    const float sq = ax * ax;
    float p = kSmall[0];
    for (int k = 1; k < 6; ++k) p = std::fma(p, sq, kSmall[k]);
    r = std::fma(p, ax, ax);
  }
  return std::copysign(r, x);
}

float softmax_exp_sum_scalar(const float* x, float* y, int64_t n, float neg_max) {
  using namespace erf_ort_detail;
  float acc[16] = {};
  for (int64_t i = 0; i < n; ++i) {
    const float s = x[i] + neg_max;
    const float v0 = std::isnan(s) ? s : std::max(kSoftmaxLower, s);  // NaN stays, as MAXPS keeps it
    const float k = std::fma(v0, kLog2e, kRoundMagic) - kRoundMagic;
    float v = std::fma(k, kLn2Hi, v0);
    v = std::fma(k, kLn2Lo, v);
    float q = kSoftmaxExp[0];
    for (int j = 1; j < 6; ++j) q = std::fma(q, v, kSoftmaxExp[j]);
    q = std::fma(q, v, kSoftmaxExp[5]);
    y[i] = std::isnan(k) ? k : std::ldexp(q, static_cast<int>(k));
    acc[i % 16] += y[i];
  }
  return sum_lanes16(acc);
}

}  // namespace

void softmax_row_ort(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  float mx = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]);
  const float sum = cpu_has_simd_kernels() ? DLRT_SIMD_CALL(simd_width(), softmax_exp_sum_ort_run, x, y, n, -mx)
                                           : softmax_exp_sum_scalar(x, y, n, -mx);
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

void erf_ort_f32(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  if (cpu_has_simd_kernels()) {
    DLRT_SIMD_CALL(simd_width(), erf_ort_run, x, y, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = erf_ort_scalar(x[i]);
}

}  // namespace dlrt::cpu
