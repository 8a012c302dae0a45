// The fused LSTM cell update (lstm_cell.h) at every vector width against the
// cell's formula in double precision: unit counts with full vectors, a
// partial last vector and fewer units than one vector; large
// pre-activations (saturated gates) and NaN, which must reach h and c.
#include "backends/cpu/kernels/lstm_cell.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

class LstmCell : public testing::SimdWidthTest {};

TEST_P(LstmCell, MatchesFormula) {
  const LstmCellFn cell = lstm_cell_at(GetParam());
  for (int64_t n : {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 64, 131}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    std::vector<float> gates(static_cast<size_t>(4 * n)), c(static_cast<size_t>(n + 3)),
        h(static_cast<size_t>(n + 3), -7.0f);
    for (float& v : gates) v = u(rng);
    for (float& v : c) v = u(rng);
    gates[0] = 60.0f, gates[static_cast<size_t>(2 * n)] = -60.0f;  // saturated input and forget gates
    gates[static_cast<size_t>(n)] = -100.0f;                       // the output gate past ln(FLT_MIN)
    gates[static_cast<size_t>(4 * n - 1)] = 0.1f;                  // tanh's odd series
    if (n > 2) gates[static_cast<size_t>(3 * n + 1)] = -30.0f;     // tanh saturated
    const std::vector<float> g0 = gates, c0 = c;
    cell(n, gates.data(), c.data(), h.data());
    EXPECT_EQ(gates, g0) << "the gates are read only";
    for (int64_t j = 0; j < n + 3; ++j) {
      const size_t at = static_cast<size_t>(j);
      if (j >= n) {
        ASSERT_EQ(c[at], c0[at]) << "wrote c past unit n";
        ASSERT_EQ(h[at], -7.0f) << "wrote h past unit n";
        continue;
      }
      const double i = sig(g0[at]), o = sig(g0[static_cast<size_t>(n + j)]),
                   f = sig(g0[static_cast<size_t>(2 * n + j)]);
      const double cn = f * c0[at] + i * std::tanh(static_cast<double>(g0[static_cast<size_t>(3 * n + j)]));
      ASSERT_NEAR(c[at], cn, 1e-5 * (1 + std::abs(cn))) << "n " << n << " unit " << j;
      ASSERT_NEAR(h[at], o * std::tanh(cn), 1e-5) << "n " << n << " unit " << j;
    }
  }
}

TEST_P(LstmCell, NanPropagates) {
  const LstmCellFn cell = lstm_cell_at(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> gates(12, 0.5f), c(3, 1.0f), h(3, 0.0f);
  gates[3 + 3 + 3 + 1] = nan;  // g of unit 1
  cell(3, gates.data(), c.data(), h.data());
  EXPECT_TRUE(std::isnan(c[1]) && std::isnan(h[1]));
  EXPECT_FALSE(std::isnan(c[0]) || std::isnan(h[0]) || std::isnan(c[2]) || std::isnan(h[2]));
}

INSTANTIATE_TEST_SUITE_P(Widths, LstmCell, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
