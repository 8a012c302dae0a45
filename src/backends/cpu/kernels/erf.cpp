// The vector erf of erf.h. For a = |x|:
//   a < 0.9:  erf = a + a * P(a^2), P of degree 5 (P(0) = 2/sqrt(pi) - 1, so
//             the final fma adds a small correction to a and rounds once);
//   a >= 0.9: erf = 1 - exp(S(a) - a^2), S(a) = log(erfc(a)) + a^2 by a
//             degree-9 polynomial in a - 2.45 over [0.9, 4]; a is clamped to
//             4, where 1 - erfc already rounds to 1.
// Both are computed for every lane and blended, then the sign of x is put
// back. Coefficients: weighted least-squares fits (Lawson's iteration towards
// minimax) against double-precision erf/erfc, relative error 1.3e-8 for P and
// absolute 9.3e-9 for S, so the float evaluation dominates the error. One
// source at every vector width (erf_simd.h over simd/simd.h).
#include "backends/cpu/kernels/erf.h"

#include <cmath>

#include "backends/cpu/kernels/simd/simd.h"

namespace dlrt::cpu::erf_detail {

constexpr float kSmallBelow = 0.9f;
constexpr float kClamp = 4.0f;
constexpr float kCentre = 2.45f;
constexpr float kP[6] = {1.283791661e-01f,  -3.761255741e-01f, 1.128237993e-01f,
                         -2.678566799e-02f, 5.020301789e-03f,  -6.127733504e-04f};
constexpr float kS[10] = {-1.539039612e+00f, -3.583738804e-01f, 5.776815116e-02f, -1.130211912e-02f,
                          2.273144433e-03f,  -4.442622885e-04f, 8.217688446e-05f, -1.385292944e-05f,
                          1.611265475e-06f,  -1.833783969e-08f};

}  // namespace dlrt::cpu::erf_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/erf_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void erf_f32(SimdWidth width, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  DLRT_SIMD_CALL(width, erf_run, x, y, n);
}

void erf_f32(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  // The portable level keeps std::erf; neon and up run the vector algorithm.
  const SimdWidth width = simd_width();
  if (width != SimdWidth::k128 || cpu_has_simd_kernels()) return erf_f32(width, x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}

}  // namespace dlrt::cpu
