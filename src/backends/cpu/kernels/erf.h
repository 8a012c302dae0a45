// erf over a float32 array: the Erf operator's kernel.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

// y[i] = erf(x[i]) for i < n (y may be x). With AVX-512, AVX2 or NEON (cpu_isa())
// every element, the last ones included, goes through one vector algorithm,
// within 2 float ulps of the exact erf (tests/cpu/erf_kernel_test.cpp checks
// floats across [-5, 5]); erf(-0) = -0, erf(+-inf) = +-1, NaN stays NaN.
// Without them, std::erf.
void erf_f32(const float* x, float* y, int64_t n);

// The vector algorithm at `width` (simd_width() or narrower; 128 bits too).
void erf_f32(SimdWidth width, const float* x, float* y, int64_t n);

}  // namespace dlrt::cpu
