// The recurrent step product (rnn_step_gemm.h) at every vector width this
// CPU runs (the others skipped, saying so) against a double-precision
// reference: every row count it blocks (1-4 at a time) and column counts
// that exercise the full blocks, each narrower unmasked block and the masked
// last vector, nothing written past column N.
#include "backends/cpu/kernels/rnn_step_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/simd/width.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

void check(SimdWidth width, int64_t M, int64_t N, int64_t K) {
  const int64_t lda = K + 3, ldb = N + 5, ldc = N + 7;  // strides wider than the rows
  std::mt19937 rng(static_cast<uint32_t>(M * 1000003 + N * 101 + K));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(static_cast<size_t>(M * lda)), B(static_cast<size_t>(K * ldb)), C(static_cast<size_t>(M * ldc));
  for (float& v : A) v = u(rng);
  for (float& v : B) v = u(rng);
  for (float& v : C) v = u(rng);
  std::vector<float> C0 = C;
  few_rows_gemm_acc(width, M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= N) {
        ASSERT_EQ(C[at], C0[at]) << "wrote past column N at row " << i << " column " << j;
        continue;
      }
      double want = C0[at];
      for (int64_t k = 0; k < K; ++k) want += static_cast<double>(A[i * lda + k]) * B[k * ldb + j];
      ASSERT_NEAR(C[at], want, 1e-5 * (1 + K)) << "M " << M << " N " << N << " K " << K << " at " << i << "," << j;
    }
}

class RnnStepGemm : public testing::SimdWidthTest {};

// Column counts around each width's blocks: 16 NV at 512 bits is up to 256
// columns, the narrower widths' tails and rest blocks fall in between.
TEST_P(RnnStepGemm, MatchesReference) {
  for (int64_t M : {1, 2, 3, 4, 5, 8})
    for (int64_t N : {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 80, 128, 200, 256, 384, 512, 521})
      for (int64_t K : {1, 7, 128}) check(GetParam(), M, N, K);
}

// The entry ran at the width asked for (not a fallback).
TEST_P(RnnStepGemm, RunsTheWidthAsked) {
  const uint64_t before = simd_calls("few_rows_gemm_acc", GetParam());
  check(GetParam(), 2, 40, 3);
  EXPECT_EQ(simd_calls("few_rows_gemm_acc", GetParam()), before + 1);
}

INSTANTIATE_TEST_SUITE_P(Widths, RnnStepGemm, ::testing::Values(SimdWidth::k128, SimdWidth::k256, SimdWidth::k512),
                         [](const ::testing::TestParamInfo<SimdWidth>& i) {
                           return std::string("w") + simd_width_name(i.param);
                         });

}  // namespace
}  // namespace dlrt::cpu
