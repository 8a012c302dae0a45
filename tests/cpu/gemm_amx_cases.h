// The AMX tile GEMM's cases shared by amx_bf16_test.cpp (precision bf16, and
// bf16x3 on the model) and gemm_amx_test.cpp (bf16x3): a shape with its
// transposes, alpha/beta and threads, random operands with row strides past
// the shape, C through sgemm_ex with B or A packed for the tiles, and C
// against a double reference within the precision's bound.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::amx_cases {

struct Case {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  int threads;
};

// Every element of C (M x N, row stride ldc, c0 before the call) against
// act(alpha * sum_p x(i, p) y(p, j) + beta * c0 + extra(i, j)) in double, act
// Relu or none, x and y rounded to bf16 for precision bf16 (the contract: one
// bf16 product per term, fp32 sums), else not (bf16x3). bf16: within
// (K + 4) * 2^-24 of alpha * sum |x y| (fp32 sums in any order), far below
// the ~2^-9 a term not rounded like the reference (or a missing one) moves
// it. bf16x3: within 2e-5 (it drops terms near 2^-17 of each product), and a
// mean error below the same bound, so that the error of a single bf16
// product (near 1e-3 of the sum) fails. Padding columns must be untouched.
template <typename X, typename Y, typename Extra>
void expect_close(GemmPrecision pr, const std::string& what, int64_t M, int64_t N, int64_t K, int64_t ldc,
                  const std::vector<float>& c, const std::vector<float>& c0, float alpha, float beta, bool relu,
                  const X& x, const Y& y, const Extra& extra) {
  const bool bf16 = pr == GemmPrecision::kBf16;
  auto rb = [](float v) { return bf16_widen(bf16_round(v)); };
  double err_sum = 0, mag_sum = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0, mag = 0;
      for (int64_t p = 0; p < K; ++p) {
        const double xy = bf16 ? double(rb(x(i, p))) * rb(y(p, j)) : double(x(i, p)) * y(p, j);
        sum += xy;
        mag += std::fabs(xy);
      }
      double w = alpha * sum + (beta == 0.0f ? 0.0 : beta * c0[i * ldc + j]) + extra(i, j);
      if (relu) w = std::max(w, 0.0);
      const double rel = bf16 ? std::ldexp(double(K + 4), -24) : 2e-5;
      const double tol = rel * std::fabs(alpha) * mag + 1e-6 * (1 + std::fabs(w));
      const double got = c[i * ldc + j];
      ASSERT_NEAR(got, w, tol) << what << " at (" << i << "," << j << ")";
      err_sum += std::fabs(got - w);
      mag_sum += std::fabs(alpha) * mag;
    }
    for (int64_t j = N; j < ldc; ++j) {
      const float got = c[i * ldc + j], was = c0[i * ldc + j];
      ASSERT_TRUE(std::isnan(was) ? std::isnan(got) : got == was) << what << " wrote padding column " << j;
    }
  }
  if (!bf16 && mag_sum > 0) {
    EXPECT_LT(err_sum / mag_sum, 2e-5) << what << ": mean error too large for bf16x3";
  }
}

// A case in words, for failure messages.
inline std::string name_of(GemmPrecision pr, const char* side, const Case& cs) {
  return std::string(pr == GemmPrecision::kBf16 ? "bf16" : "bf16x3") + " packed " + side +
         ": M=" + std::to_string(cs.M) + " N=" + std::to_string(cs.N) + " K=" + std::to_string(cs.K) +
         " ta=" + std::to_string(cs.ta) + " tb=" + std::to_string(cs.tb) + " alpha=" + std::to_string(cs.alpha) +
         " beta=" + std::to_string(cs.beta) + " threads=" + std::to_string(cs.threads);
}

// The MatMul side: B packed once (PackedMatrix::pack_b) at `pr`, op(A) plain;
// column bias, Relu where M + N is odd; C through expect_close.
inline void check_packed_b(GemmPrecision pr, const Case& cs, std::mt19937& rng) {
  using testing::random_floats;
  const int64_t M = cs.M, N = cs.N, K = cs.K;
  const int64_t lda = (cs.ta ? M : K) + 1, ldb = (cs.tb ? K : N) + 2, ldc = N + 3;
  const auto a = random_floats(static_cast<size_t>((cs.ta ? K : M) * lda), rng);
  const auto b = random_floats(static_cast<size_t>((cs.tb ? N : K) * ldb), rng);
  const auto bias = random_floats(static_cast<size_t>(N), rng);
  auto c0 = random_floats(static_cast<size_t>(M * ldc), rng);
  if (cs.beta == 0.0f)
    for (auto& x : c0) x = std::numeric_limits<float>::quiet_NaN();
  GemmEpilogue ep;
  ep.col_bias = bias.data();
  ep.act.kind = (M + N) % 2 ? ActKind::kRelu : ActKind::kNone;
  auto pb = PackedMatrix::pack_b(cs.tb, K, N, b.data(), ldb, pr);
  ASSERT_TRUE(packed_for_amx(*pb));
  ASSERT_EQ(pb->precision(), pr);
  ThreadPool pool(cs.threads);
  std::vector<float> c = c0;
  ASSERT_TRUE(sgemm_ex(M, N, K, cs.alpha, SgemmOperand{a.data(), lda, cs.ta, nullptr, nullptr},
                       SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, cs.beta, c.data(), ldc, &ep,
                       cs.threads > 1 ? &pool : nullptr)
                  .ok());
  expect_close(
      pr, name_of(pr, "B", cs), M, N, K, ldc, c, c0, cs.alpha, cs.beta, ep.act.kind == ActKind::kRelu,
      [&](int64_t i, int64_t p) { return cs.ta ? a[p * lda + i] : a[i * lda + p]; },
      [&](int64_t p, int64_t j) { return cs.tb ? b[j * ldb + p] : b[p * ldb + j]; },
      [&](int64_t, int64_t j) { return double(bias[j]); });
}

// The Conv side: A packed once (PackedMatrix::pack_a, never transposed) at
// `pr`, B plain or, where `rows`, from a BRowSource; row bias, a residual
// where M + K is odd, Relu where M + N is odd; C through expect_close.
inline void check_packed_a(GemmPrecision pr, const Case& cs, bool rows, std::mt19937& rng) {
  using testing::random_floats;
  const int64_t M = cs.M, N = cs.N, K = cs.K;
  const int64_t lda = K + 1, ldb = N + 2, ldc = N + 3, ldr = N + 1;
  const auto a = random_floats(static_cast<size_t>(M * lda), rng);
  const auto b = random_floats(static_cast<size_t>(K * ldb), rng);
  const auto bias = random_floats(static_cast<size_t>(M), rng);
  const auto res = random_floats(static_cast<size_t>(M * ldr), rng);
  auto c0 = random_floats(static_cast<size_t>(M * ldc), rng);
  if (cs.beta == 0.0f)
    for (auto& x : c0) x = std::numeric_limits<float>::quiet_NaN();
  GemmEpilogue ep;
  ep.row_bias = bias.data();
  ep.residual = (M + K) % 2 ? res.data() : nullptr;
  ep.ldr = ldr;
  ep.act.kind = (M + N) % 2 ? ActKind::kRelu : ActKind::kNone;
  auto pa = PackedMatrix::pack_a(false, M, K, a.data(), lda, pr);
  ASSERT_TRUE(packed_for_amx(*pa));
  ASSERT_EQ(pa->precision(), pr);
  BRowSource source = [&](int64_t p, int64_t j0, int64_t n, float* dst) {
    for (int64_t j = 0; j < n; ++j) dst[j] = b[p * ldb + j0 + j];
  };
  SgemmOperand ob{b.data(), ldb, false, nullptr, nullptr};
  if (rows) ob = SgemmOperand{nullptr, 0, false, nullptr, &source};
  ThreadPool pool(cs.threads);
  std::vector<float> c = c0;
  ASSERT_TRUE(sgemm_ex(M, N, K, cs.alpha, SgemmOperand{nullptr, 0, false, pa.get(), nullptr}, ob, cs.beta, c.data(),
                       ldc, &ep, cs.threads > 1 ? &pool : nullptr)
                  .ok());
  expect_close(
      pr, name_of(pr, "A", cs) + (rows ? " B rows" : " B plain"), M, N, K, ldc, c, c0, cs.alpha, cs.beta,
      ep.act.kind == ActKind::kRelu, [&](int64_t i, int64_t p) { return a[i * lda + p]; },
      [&](int64_t p, int64_t j) { return b[p * ldb + j]; },
      [&](int64_t i, int64_t j) { return bias[i] + (ep.residual ? double(res[i * ldr + j]) : 0.0); });
}

}  // namespace dlrt::cpu::amx_cases
