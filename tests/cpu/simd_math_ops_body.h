// Body of simd_math_test.cpp (simd/instantiate.h compiles it once per
// width): simd/math_simd.h's functions applied to arrays.
namespace dlrt::cpu::simd::DLRT_SIMD_NS::math_ops {

namespace {
#include "backends/cpu/kernels/simd/math_simd.h"
}  // namespace

int lanes() { return kLanes; }
// y = exp(x) for n floats x <= 0 (n a multiple of kLanes), one vector a call of the lockstep exp.
void exp_nonpositive_op(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += kLanes) {
    Vf v[1] = {loadu(x + i)};
    math::exp_nonpositive_lockstep<1>(v);
    storeu(y + i, v[0]);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS::math_ops
