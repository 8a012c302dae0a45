// The recurrent step product (rnn_step_gemm.h) against a double-precision
// reference: every row count it blocks (1-4 at a time) and column counts
// that exercise the full blocks, each narrower unmasked block and the masked
// last vector.
#include "backends/cpu/kernels/rnn_step_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels/isa.h"

namespace dlrt::cpu {
namespace {

#if defined(__x86_64__)
using StepFn = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t);

void check(StepFn fn, int64_t M, int64_t N, int64_t K) {
  const int64_t lda = K + 3, ldb = N + 5, ldc = N + 7;  // strides wider than the rows
  std::mt19937 rng(static_cast<uint32_t>(M * 1000003 + N * 101 + K));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(static_cast<size_t>(M * lda)), B(static_cast<size_t>(K * ldb)), C(static_cast<size_t>(M * ldc));
  for (float& v : A) v = u(rng);
  for (float& v : B) v = u(rng);
  for (float& v : C) v = u(rng);
  std::vector<float> C0 = C;
  fn(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc);
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

TEST(RnnStepGemm, MatchesReferenceAvx512) {
  if (detected_cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "this CPU lacks AVX-512 (detected " << cpu_isa_name(detected_cpu_isa()) << ")";
  for (int64_t M : {1, 2, 3, 4, 5, 8})
    for (int64_t N : {1, 15, 16, 17, 80, 128, 200, 256, 384, 512, 521})
      for (int64_t K : {1, 7, 128}) check(few_rows_gemm_acc_avx512, M, N, K);
}

TEST(RnnStepGemm, MatchesReferenceAvx2) {
  if (detected_cpu_isa() < CpuIsa::kAvx2)
    GTEST_SKIP() << "this CPU lacks AVX2 (detected " << cpu_isa_name(detected_cpu_isa()) << ")";
  for (int64_t M : {1, 3, 8})
    for (int64_t N : {1, 17, 128, 521})
      for (int64_t K : {1, 64}) check(few_rows_gemm_acc_avx2, M, N, K);
}
#else
TEST(RnnStepGemm, X86Only) { GTEST_SKIP() << "the step kernels are x86 only (this build is not)"; }
#endif

}  // namespace
}  // namespace dlrt::cpu
