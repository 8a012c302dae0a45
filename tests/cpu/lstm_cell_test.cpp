// The fused LSTM cell update (lstm_cell_avx512.h) against the cell's formula
// in double precision: unit counts with full vectors, a masked last vector
// and fewer units than one vector; large pre-activations (saturated gates)
// and NaN, which must reach h and c.
#include "backends/cpu/kernels/lstm_cell_avx512.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/kernels/isa.h"

namespace dlrt::cpu {
namespace {

#if defined(__x86_64__)
double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(LstmCell, MatchesFormulaAvx512) {
  if (detected_cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "this CPU lacks AVX-512 (detected " << cpu_isa_name(detected_cpu_isa()) << ")";
  for (int64_t n : {1, 5, 16, 17, 64, 128, 131}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    std::vector<float> gates(static_cast<size_t>(4 * n)), c(static_cast<size_t>(n + 3)), h(static_cast<size_t>(n + 3), -7.0f);
    for (float& v : gates) v = u(rng);
    for (float& v : c) v = u(rng);
    gates[0] = 60.0f, gates[static_cast<size_t>(2 * n)] = -60.0f;  // saturated input and forget gates
    const std::vector<float> g0 = gates, c0 = c;
    lstm_cell_avx512(n, gates.data(), c.data(), h.data());
    EXPECT_EQ(gates, g0) << "the gates are read only";
    for (int64_t j = 0; j < n + 3; ++j) {
      const size_t at = static_cast<size_t>(j);
      if (j >= n) {
        ASSERT_EQ(c[at], c0[at]) << "wrote c past unit n";
        ASSERT_EQ(h[at], -7.0f) << "wrote h past unit n";
        continue;
      }
      const double i = sig(g0[at]), o = sig(g0[static_cast<size_t>(n + j)]), f = sig(g0[static_cast<size_t>(2 * n + j)]);
      const double cn = f * c0[at] + i * std::tanh(static_cast<double>(g0[static_cast<size_t>(3 * n + j)]));
      ASSERT_NEAR(c[at], cn, 1e-5 * (1 + std::abs(cn))) << "n " << n << " unit " << j;
      ASSERT_NEAR(h[at], o * std::tanh(cn), 1e-5) << "n " << n << " unit " << j;
    }
  }
}

TEST(LstmCell, NanPropagates) {
  if (detected_cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "this CPU lacks AVX-512 (detected " << cpu_isa_name(detected_cpu_isa()) << ")";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> gates(12, 0.5f), c(3, 1.0f), h(3, 0.0f);
  gates[3 + 3 + 3 + 1] = nan;  // g of unit 1
  lstm_cell_avx512(3, gates.data(), c.data(), h.data());
  EXPECT_TRUE(std::isnan(c[1]) && std::isnan(h[1]));
  EXPECT_FALSE(std::isnan(c[0]) || std::isnan(h[0]) || std::isnan(c[2]) || std::isnan(h[2]));
}
#else
TEST(LstmCell, X86Only) { GTEST_SKIP() << "the fused cell is x86 only (this build is not)"; }
#endif

}  // namespace
}  // namespace dlrt::cpu
