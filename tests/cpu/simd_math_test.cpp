// The vector layer's math (simd/math_simd.h) at every width this CPU runs
// (the others skipped, saying so), against <cmath>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/simd/simd.h"
#include "simd_width_test_util.h"

// The body's path from simd/instantiate.h's folder, where its #include looks first.
#define DLRT_SIMD_BODY "../../../../../tests/cpu/simd_math_ops_body.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

class SimdMath : public testing::SimdWidthTest {};

// The softmax exp (inputs <= 0, the attention's and the softmax rows') from
// 0 down past ln(FLT_MIN): within 2 float ulps where the result is normal,
// 0 below (never a denormal), 0 at -inf, NaN at NaN.
TEST_P(SimdMath, ExpOfNonPositiveMatchesCmath) {
  std::vector<float> xs = {0.0f, -0.0f, -1e-30f, -87.33f, -87.336f, -87.34f, -88.0f, -103.0f, -1e30f,
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i <= 200000; ++i) xs.push_back(-90.0f * static_cast<float>(i) / 200000.0f);
  while (xs.size() % 16) xs.push_back(-1.0f);
  std::vector<float> ys(xs.size());
  DLRT_SIMD_PICK(GetParam(), math_ops::exp_nonpositive_op, xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], y = ys[i];
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(y)) << "exp(NaN) = " << y;
      continue;
    }
    EXPECT_TRUE(y == 0.0f || y >= std::numeric_limits<float>::min()) << "exp(" << x << ") = " << y << " (denormal)";
    const double want = std::exp(static_cast<double>(x));
    if (x < -87.33f) {
      EXPECT_LE(y, 1.2e-38f) << "exp(" << x << ")";
      continue;
    }
    const double rel = std::abs(y - want) / want;
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 2.4e-7) << "exp(" << x << ") = " << y << ", want " << want;
  }
  std::printf("exp_nonpositive_lockstep at %s bits: worst relative error %.3g over [ln(FLT_MIN), 0]\n",
              simd_width_name(GetParam()), worst);
}

INSTANTIATE_TEST_SUITE_P(Widths, SimdMath, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
