// The vector erf (kernels/erf.h) against double-precision std::erf across
// [-5, 5], special values and tails, on every ISA this CPU has, and its
// instantiation at every vector width (128 bits too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/erf.h"
#include "backends/cpu/kernels/isa.h"
#include "isa_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

// The distance from got to the exact value, in ulps of the float nearest it.
double ulps(float got, double exact) {
  const float near = static_cast<float>(exact);
  const double ulp = std::nextafter(std::fabs(near), std::numeric_limits<float>::infinity()) - std::fabs(near);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

TEST(ErfKernel, WithinTwoUlpsOnFloatsAcrossMinusFiveToFive) {
  // Every 211th float bit pattern of [0, 5] (5.1 million, every exponent),
  // both signs, and the region boundaries: every float would take too long.
  std::vector<float> x;
  const float hi = 5.0f;
  uint32_t hi_bits;
  std::memcpy(&hi_bits, &hi, 4);
  for (uint32_t b = 0; b <= hi_bits; b += 211) {
    float v;
    std::memcpy(&v, &b, 4);
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0.9f, std::nextafter(0.9f, 0.0f), 4.0f, std::nextafter(4.0f, 0.0f), 3.92f, 1e-30f, 1e-45f})
    x.push_back(v), x.push_back(-v);
  std::vector<float> y(x.size());
  // The neon level (aarch64's; 128-bit SSE on x86) too.
  std::vector<CpuIsa> isas = testing::vector_isas();
  if (detected_cpu_isa() >= CpuIsa::kNeon) isas.insert(isas.begin(), CpuIsa::kNeon);
  for (CpuIsa isa : isas) {
    ScopedCpuIsa cap(isa);
    erf_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = ulps(y[i], std::erf(static_cast<double>(x[i])));
      if (e > worst) worst = e, worst_x = x[i];
      ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i])) << x[i];
    }
    EXPECT_LE(worst, 2.0) << "isa " << static_cast<int>(isa) << ": worst at x = " << worst_x;
  }
}

TEST(ErfKernel, SpecialValuesAndEveryTailLength) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    const std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, 1e30f, -1e30f, 6.0f};
    std::vector<float> y(x.size());
    erf_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_FALSE(std::signbit(y[0]));
    EXPECT_TRUE(std::signbit(y[1]) && y[1] == 0.0f);
    EXPECT_EQ(y[2], 1.0f);
    EXPECT_EQ(y[3], -1.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], 1.0f);
    EXPECT_EQ(y[6], -1.0f);
    EXPECT_EQ(y[7], 1.0f);
    // An element gives the same bits wherever it sits in the array (a tail
    // lane or a whole vector), so any split of the work gives one answer.
    std::vector<float> in(40), whole(40);
    for (size_t i = 0; i < in.size(); ++i) in[i] = -2.0f + 0.1037f * static_cast<float>(i);
    erf_f32(in.data(), whole.data(), 40);
    for (int64_t n = 1; n <= 40; ++n)
      for (int64_t start = 0; start + n <= 40; start += 13) {
        std::vector<float> part(static_cast<size_t>(n));
        erf_f32(in.data() + start, part.data(), n);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(std::memcmp(&part[static_cast<size_t>(i)], &whole[static_cast<size_t>(start + i)], 4), 0)
              << "isa " << static_cast<int>(isa) << " n " << n << " start " << start;
      }
  }
}

TEST(ErfKernel, InPlace) {
  std::vector<float> x = {-3.0f, -0.5f, 0.25f, 1.5f, 2.0f};
  std::vector<float> want(x.size());
  erf_f32(x.data(), want.data(), 5);
  erf_f32(x.data(), x.data(), 5);
  EXPECT_EQ(x, want);
}

class ErfWidths : public testing::SimdWidthTest {};

TEST_P(ErfWidths, WithinTwoUlpsWithSpecialsAndTails) {
  const SimdWidth width = GetParam();
  std::vector<float> x;
  const float hi = 5.0f;
  uint32_t hi_bits;
  std::memcpy(&hi_bits, &hi, 4);
  for (uint32_t b = 0; b <= hi_bits; b += 1013) {
    float v;
    std::memcpy(&v, &b, 4);
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0.9f, std::nextafter(0.9f, 0.0f), 4.0f, std::nextafter(4.0f, 0.0f), 1e-45f})
    x.push_back(v), x.push_back(-v);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {inf, -inf, 1e30f, -1e30f, 6.0f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  erf_f32(width, x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      ASSERT_TRUE(std::isnan(y[i]));
      continue;
    }
    ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i])) << x[i];
    ASSERT_LE(ulps(y[i], std::erf(static_cast<double>(x[i]))), 2.0) << "x = " << x[i];
  }
  // The last 40 elements (the specials among them) in every tail length at
  // this width: the same bits as in the whole run, nothing written past n.
  const size_t first = x.size() - 40;
  for (int64_t n = 24; n <= 40; ++n) {
    std::vector<float> part(41, 7.0f);
    erf_f32(width, x.data() + first, part.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::memcmp(&part[static_cast<size_t>(i)], &y[first + static_cast<size_t>(i)], 4), 0) << "n " << n;
    for (size_t i = static_cast<size_t>(n); i < part.size(); ++i) ASSERT_EQ(part[i], 7.0f) << "wrote past n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, ErfWidths, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
