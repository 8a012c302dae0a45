// The vectorised Sigmoid, SiLU and Tanh (a fast exp and a Newton-refined
// reciprocal instead of a division) in float ulps against the exact values
// (computed in double), on every vector ISA this CPU has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/isa.h"
#include "isa_test_util.h"

namespace dlrt::cpu {
namespace {

int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

// Distance in representable floats between got and the correctly rounded want.
int64_t ulps(float got, double want) {
  const int64_t d = ordered(got) - ordered(static_cast<float>(want));
  return d < 0 ? -d : d;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Case {
  const char* name;
  double (*exact)(double);
  float lo, hi;   // the range checked in ulps (results there are normal floats)
  int64_t max_ulps;
};

TEST(SigmoidAccuracy, WithinFewUlpsOfExact) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512 (detected generic): no vector path to check";
  const Case cases[] = {
      {"Sigmoid", sigmoid, -80.0f, 40.0f, 4},
      {"Silu", [](double x) { return x * sigmoid(x); }, -80.0f, 80.0f, 4},
      {"Tanh", [](double x) { return std::tanh(x); }, -12.0f, 12.0f, 4},
  };
  std::vector<float> xs;
  for (float v = -80.0f; v <= 80.0f; v += 0.00137f) xs.push_back(v);
  for (CpuIsa isa : testing::vector_isas()) {
    ScopedCpuIsa scope(isa);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " " + c.name);
      auto a = make_activation(c.name, {});
      ASSERT_TRUE(a.ok());
      std::vector<float> y = xs;
      apply_activation(*a, y.data(), static_cast<int64_t>(y.size()));
      int64_t worst = 0;
      float worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] < c.lo || xs[i] > c.hi || xs[i] == 0.0f) continue;
        const int64_t u = ulps(y[i], c.exact(static_cast<double>(xs[i])));
        if (u > worst) worst = u, worst_x = xs[i];
      }
      EXPECT_LE(worst, c.max_ulps) << "at x = " << worst_x;
    }
  }
}

TEST(SigmoidAccuracy, Extremes) {
  if (testing::vector_isas().empty()) GTEST_SKIP() << "this CPU has no AVX2/AVX-512 (detected generic): no vector path to check";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (CpuIsa isa : testing::vector_isas()) {
    ScopedCpuIsa scope(isa);
    SCOPED_TRACE(cpu_isa_name(isa));
    auto sig = make_activation("Sigmoid", {});
    auto silu = make_activation("Silu", {});
    ASSERT_TRUE(sig.ok() && silu.ok());
    std::vector<float> s = {-inf, -200.0f, 200.0f, inf, nan, 0.0f}, w = s;
    apply_activation(*sig, s.data(), static_cast<int64_t>(s.size()));
    apply_activation(*silu, w.data(), static_cast<int64_t>(w.size()));
    EXPECT_EQ(s[0], 0.0f);
    EXPECT_EQ(s[1], 0.0f);
    EXPECT_EQ(s[2], 1.0f);
    EXPECT_EQ(s[3], 1.0f);
    EXPECT_TRUE(std::isnan(s[4]));
    EXPECT_EQ(s[5], 0.5f);
    EXPECT_TRUE(std::isnan(w[0]));  // -inf * 0, as Mul(x, Sigmoid(x))
    EXPECT_EQ(w[1], 0.0f);
    EXPECT_EQ(w[2], 200.0f);
    EXPECT_EQ(w[3], inf);
    EXPECT_TRUE(std::isnan(w[4]));
  }
}

}  // namespace
}  // namespace dlrt::cpu
