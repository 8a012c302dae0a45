// The activations and the GEMM/Conv output stage over the vector layer
// (kernels/activation_simd.h, gemm_epilogue_simd.h) at every width this CPU
// runs (the others skipped, saying so): against activate() (<cmath>) with
// the tolerances of the ISA tests (isa_kernels_test.cpp, sigmoid_accuracy_test.cpp),
// in float ulps against exact values, with tails of every length and
// nothing written past the end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/simd/width.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

class ActivationSimd : public testing::SimdWidthTest {};

const std::vector<std::pair<std::string, std::vector<float>>>& all_acts() {
  static const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"Relu", {}},      {"Clip", {-0.5f, 0.75f}},       {"Sigmoid", {}},   {"Tanh", {}},      {"LeakyRelu", {0.3f}},
      {"HardSigmoid", {0.25f, 0.4f}}, {"HardSwish", {}}, {"Gelu", {}},      {"Gelu_tanh", {}}, {"Silu", {}}};
  return acts;
}

std::vector<float> sweep_with_extremes() {
  std::vector<float> xs;
  for (float v = -20.0f; v <= 20.0f; v += 0.003f) xs.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.2999f, 0.3001f, 0.2499f, 0.2501f, 60.0f, -60.0f,
                  88.0f, -88.0f, 89.0f, -89.0f, 104.0f, -104.0f, 1e30f, -1e30f, 3.4e38f, -3.4e38f, inf, -inf})
    xs.push_back(v);
  return xs;
}

TEST_P(ActivationSimd, MatchScalarIncludingExtremesAndTails) {
  const SimdWidth w = GetParam();
  const std::vector<float> xs = sweep_with_extremes();
  for (const auto& [name, params] : all_acts()) {
    SCOPED_TRACE(std::string(simd_width_name(w)) + " " + name);
    auto a = make_activation(name, params);
    ASSERT_TRUE(a.ok());
    std::vector<float> y = xs;
    apply_activation_at(w, *a, y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = activate(*a, xs[i]);
      if (std::isnan(want)) {  // e.g. Gelu(-inf) = -inf * 0
        ASSERT_TRUE(std::isnan(y[i])) << name << "(" << xs[i] << ") = " << y[i];
      } else if (std::isinf(want)) {
        ASSERT_EQ(y[i], want) << name << "(" << xs[i] << ")";
      } else {
        ASSERT_NEAR(y[i], want, 3e-7f + 4e-7f * std::abs(want)) << name << "(" << xs[i] << ")";
      }
    }
    for (int64_t n : {1, 5, 16, 17, 33}) {
      std::vector<float> z(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
      apply_activation_at(w, *a, z.data(), n);
      for (float v : z) ASSERT_TRUE(std::isnan(v)) << name << " n=" << n;
    }
    for (int64_t n = 1; n <= 130; ++n) {
      std::vector<float> z(static_cast<size_t>(n) + 17, 7.0f);
      for (int64_t i = 0; i < n; ++i) z[static_cast<size_t>(i)] = static_cast<float>(i % 33) * 0.37f - 5.0f;
      apply_activation_at(w, *a, z.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(z[static_cast<size_t>(i)], activate(*a, static_cast<float>(i % 33) * 0.37f - 5.0f), 1e-6f)
            << "n " << n;
      for (size_t i = static_cast<size_t>(n); i < z.size(); ++i) ASSERT_EQ(z[i], 7.0f) << "wrote past n " << n;
    }
  }
}

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
double gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// Float ulps against the exact values (in double) where the results are
// normal floats; the bounds are the measured worst cases rounded up (the
// figures printed). Gelu's and Gelu_tanh's are taken on [-3, 12], where
// |Gelu| is above 4e-3: their errors are absolute (Abramowitz-Stegun's erfc
// 1.5e-7 below 512 bits; 1 + tanh cancelling towards -3), so in ulps they
// grow as Gelu tends to 0, where the absolute bound of the first test
// governs. The table Phi at 512 bits stays within 13 ulps there.
TEST_P(ActivationSimd, UlpsAgainstExact) {
  const SimdWidth w = GetParam();
  struct Case {
    const char* name;
    double (*exact)(double);
    float lo, hi;
    int64_t max_ulps;
  };
  const Case cases[] = {
      {"Sigmoid", sigmoid, -80.0f, 40.0f, 4},
      {"Silu", [](double x) { return x * sigmoid(x); }, -80.0f, 80.0f, 4},
      {"Tanh", [](double x) { return std::tanh(x); }, -12.0f, 12.0f, 4},
      {"Gelu", gelu, -3.0f, 12.0f, w == SimdWidth::k512 ? 16 : 480},
      {"Gelu_tanh", gelu_tanh, -3.0f, 12.0f, 512},
  };
  std::vector<float> xs;
  for (float v = -80.0f; v <= 80.0f; v += 0.00137f) xs.push_back(v);
  for (const Case& c : cases) {
    auto a = make_activation(c.name, {});
    ASSERT_TRUE(a.ok());
    std::vector<float> y = xs;
    apply_activation_at(w, *a, y.data(), static_cast<int64_t>(y.size()));
    int64_t worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (xs[i] < c.lo || xs[i] > c.hi || xs[i] == 0.0f) continue;
      const int64_t u = ulps(y[i], c.exact(static_cast<double>(xs[i])));
      if (u > worst) worst = u, worst_x = xs[i];
    }
    std::printf("%s %s: worst %lld ulps on [%g, %g] (at %g)\n", simd_width_name(w), c.name,
                static_cast<long long>(worst), c.lo, c.hi, worst_x);
    EXPECT_LE(worst, c.max_ulps) << simd_width_name(w) << " " << c.name << " at x = " << worst_x;
  }
}

// The output stage on blocks with row bias, column bias and residual, widths
// 1..33 and 63..97 (every tail, on either side of the 64-column switch to 16
// lanes), against the portable version; the columns past the block untouched.
TEST_P(ActivationSimd, EpilogueTailsMatchGeneric) {
  const SimdWidth w = GetParam();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<int64_t> widths;
  for (int64_t c = 1; c <= 33; ++c) widths.push_back(c);
  for (int64_t c = 63; c <= 97; ++c) widths.push_back(c);
  for (const char* name : {"Gelu", "Sigmoid", "HardSwish"}) {
    for (int variant = 0; variant < 2; ++variant) {
      for (int64_t cols : widths) {
        const int64_t rows = 3, ldc = cols + 5;
        std::vector<float> c(static_cast<size_t>(rows * ldc)), rb(static_cast<size_t>(rows + 2)),
            cb(static_cast<size_t>(cols + 4)), res(static_cast<size_t>((rows + 2) * (cols + 7)));
        for (auto* v : {&c, &rb, &cb, &res})
          for (auto& x : *v) x = u(rng);
        GemmEpilogue ep;
        ep.act = *make_activation(name, {});
        if (variant == 0) {
          ep.row_bias = rb.data();
          ep.col_bias = cb.data();
          ep.residual = res.data();
          ep.ldr = cols + 7;
        } else {  // a column bias only, and the post-affine and post-clamp
          ep.col_bias = cb.data();
          ep.act.affine = true, ep.act.scale = 1.5f, ep.act.shift = -0.25f;
          ep.act.bounded = true, ep.act.lo = -0.5f, ep.act.hi = 2.0f;
        }
        std::vector<float> want = c;
        {
          ScopedCpuIsa s(CpuIsa::kGeneric);
          apply_epilogue(ep, want.data(), ldc, 1, 2, rows, cols);
        }
        std::vector<float> got = c;
        apply_epilogue_at(w, ep, got.data(), ldc, 1, 2, rows, cols);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i])))
              << simd_width_name(w) << " " << name << " variant " << variant << " cols " << cols << " at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, ActivationSimd, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
