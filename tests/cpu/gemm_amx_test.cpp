// The AMX bf16x3 GEMM (gemm_amx.h) against a double reference: edge shapes,
// transposes, alpha/beta, epilogues, 1-3 threads, the weights packed as B
// (MatMul) or as A with B plain or from a BRowSource (Conv), and the
// fallback to fp32 when AMX is capped after packing. Where the real tiles do
// not run, the reference tests run on the scalar tile model (ScopedAmxTileModel)
// and the fallback ones skip with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/isa.h"
#include "gemm_amx_cases.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

#define SKIP_WITHOUT_AMX()                                                                                    \
  if (!amx_bf16x3_available())                                                                                \
  GTEST_SKIP() << "no AMX-BF16 + AVX512-BF16 here (or Linux refused the tile state, or DLRT_CPU_ISA is below " \
                  "avx512): the bf16x3 GEMM never runs on this machine"

// The real tiles where they run, else the scalar tile model (any CPU).
#define AMX_OR_MODEL()                       \
  std::optional<ScopedAmxTileModel> model_; \
  if (amx_tiles_unavailable()) model_.emplace()

using amx_cases::Case;

TEST(AmxBf16x3, MatchesReferenceOnEdgeShapes) {
  AMX_OR_MODEL();
  std::mt19937 rng(21);
  std::vector<Case> cases;
  // Row counts around the 16- and 32-row blocks, columns around the 32-column
  // block, K around the 32-deep step; M = 1 goes to the fp32 GEMV on B's data
  // only when that is given, so here it runs on the tiles.
  for (int64_t M : {1, 2, 15, 16, 17, 31, 32, 33, 48, 100})
    for (int64_t N : {1, 16, 31, 33, 64})
      for (int64_t K : {1, 31, 32, 33, 100})
        cases.push_back({M, N, K, false, false, 1.0f, 0.0f, 1});
  if (!model_) {  // the real shapes on the real tiles only (the model takes seconds)
    cases.push_back({128, 384, 384, false, false, 1.0f, 0.0f, 2});   // minilm projections
    cases.push_back({128, 384, 1536, false, false, 1.0f, 0.0f, 2});  // minilm FFN down
  }
  cases.push_back({300, 200, 1600, false, false, 0.5f, 1.0f, 3});   // several row chunks, K past 1 MiB of A tiles
  cases.push_back({37, 70, 90, true, false, 1.0f, -0.5f, 2});
  cases.push_back({37, 70, 90, false, true, 2.0f, 1.0f, 2});
  cases.push_back({37, 70, 90, true, true, 1.0f, 0.0f, 3});
  cases.push_back({5, 1000, 64, false, false, 1.0f, 0.0f, 2});
  for (const Case& cs : cases) {
    amx_cases::check_packed_b(GemmPrecision::kBf16x3, cs, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(AmxBf16x3, NanInAPropagatesToItsRow) {
  AMX_OR_MODEL();
  const int64_t M = 20, N = 40, K = 50;
  std::vector<float> a(M * K, 0.5f), b(K * N, 0.25f), c(M * N, 0.0f);
  a[3 * K + 7] = std::numeric_limits<float>::quiet_NaN();
  auto pb = PackedMatrix::pack_b(false, K, N, b.data(), N, GemmPrecision::kBf16x3);
  ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{a.data(), K, false, nullptr, nullptr},
           SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr, nullptr).ok());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if (i == 3) ASSERT_TRUE(std::isnan(c[i * N + j])) << "(" << i << "," << j << ")";
      else ASSERT_NEAR(c[i * N + j], 0.125 * K, 1e-4) << "(" << i << "," << j << ")";
    }
}

TEST(AmxBf16x3, PacksForFp32WhereAmxIsOff) {
  std::vector<float> b(64 * 48, 1.0f);
  ScopedCpuIsa cap(CpuIsa::kAvx2);
  EXPECT_FALSE(amx_bf16x3_available());
  auto pb = PackedMatrix::pack_b(false, 64, 48, b.data(), 48, GemmPrecision::kBf16x3);
  EXPECT_EQ(pb->precision(), GemmPrecision::kF32);
}

TEST(AmxBf16x3, RunsOnFp32WhenAmxIsCappedAfterPacking) {
  SKIP_WITHOUT_AMX();
  std::mt19937 rng(22);
  const int64_t M = 33, N = 50, K = 70;
  const auto a = random_floats(M * K, rng), b = random_floats(K * N, rng);
  auto pb = PackedMatrix::pack_b(false, K, N, b.data(), N, GemmPrecision::kBf16x3);
  ScopedCpuIsa cap(CpuIsa::kAvx2);
  std::vector<float> c(M * N);
  ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{a.data(), K, false, nullptr, nullptr},
           SgemmOperand{b.data(), N, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr, nullptr).ok());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p) s += double(a[i * K + p]) * b[p * N + j];
      ASSERT_NEAR(c[i * N + j], s, 1e-5 * (1 + std::fabs(s))) << "(" << i << "," << j << ")";
    }
  // Without the unpacked B there is nothing to run on.
  EXPECT_EQ(sgemm_ex(M, N, K, 1.0f, SgemmOperand{a.data(), K, false, nullptr, nullptr},
                        SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr, nullptr).code(),
            StatusCode::kInvalidArgument);
}

struct CaseA {
  int64_t M, N, K;
  float alpha, beta;
  int threads;
  bool rows;  // B through a BRowSource instead of a plain matrix
};

// A packed for bf16x3 against B (plain or through a BRowSource), against
// amx_cases' double reference; row bias, residual and Relu epilogue.
void check_packed_a(const CaseA& cs, std::mt19937& rng) {
  amx_cases::check_packed_a(GemmPrecision::kBf16x3, Case{cs.M, cs.N, cs.K, false, false, cs.alpha, cs.beta, cs.threads},
                            cs.rows, rng);
}

TEST(AmxBf16x3, PackedAMatchesReference) {
  AMX_OR_MODEL();
  std::mt19937 rng(23);
  std::vector<CaseA> cases;
  // Rows around the 16-row blocks and 32-row pairs, columns around the
  // 32-column blocks, K around the 32-deep step and past one pass (36 steps).
  for (int64_t M : {1, 15, 16, 17, 32, 33, 70})
    for (int64_t N : {1, 31, 33, 49})
      for (int64_t K : {1, 33, 100, 1200})
        cases.push_back({M, N, K, 1.0f, 0.0f, 1, (M + N + K) % 2 == 0});
  if (!model_) {  // the real shapes on the real tiles only (the model takes seconds)
    cases.push_back({64, 3136, 576, 1.0f, 0.0f, 2, true});  // resnet18 layer1: B in chunks, split over columns
    cases.push_back({512, 49, 4608, 1.0f, 0.0f, 2, true});  // layer4: four passes, split over rows
  }
  cases.push_back({16, 300, 1152, 1.0f, 0.0f, 2, false});   // B in chunks (7 blocks of 36 steps each)
  cases.push_back({40, 20, 4608, 1.0f, 0.0f, 2, true});     // four passes, split over rows
  cases.push_back({96, 40, 300, 0.5f, 1.0f, 3, false});     // alpha, beta, an odd thread count
  cases.push_back({50, 300, 70, -1.0f, 0.25f, 2, true});
  for (const CaseA& cs : cases) {
    check_packed_a(cs, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(AmxBf16x3, PackedARunsOnFp32WhenAmxIsCappedAfterPacking) {
  SKIP_WITHOUT_AMX();
  std::mt19937 rng(24);
  const int64_t M = 40, N = 30, K = 50;
  const auto a = random_floats(M * K, rng), b = random_floats(K * N, rng);
  auto pa = PackedMatrix::pack_a(false, M, K, a.data(), K, GemmPrecision::kBf16x3);
  ASSERT_EQ(pa->precision(), GemmPrecision::kBf16x3);
  ScopedCpuIsa cap(CpuIsa::kAvx2);
  std::vector<float> c(M * N);
  ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{a.data(), K, false, pa.get(), nullptr},
           SgemmOperand{b.data(), N, false, nullptr, nullptr}, 0.0f, c.data(), N, nullptr, nullptr).ok());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p) s += double(a[i * K + p]) * b[p * N + j];
      ASSERT_NEAR(c[i * N + j], s, 1e-5 * (1 + std::fabs(s))) << "(" << i << "," << j << ")";
    }
  // Without the unpacked A there is nothing to run on.
  EXPECT_EQ(sgemm_ex(M, N, K, 1.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr},
                        SgemmOperand{b.data(), N, false, nullptr, nullptr}, 0.0f, c.data(), N, nullptr, nullptr).code(),
            StatusCode::kInvalidArgument);
}

TEST(AmxBf16x3, PacksAForFp32WhereAmxIsOffOrATransposed) {
  std::vector<float> a(48 * 64, 1.0f);
  {
    ScopedCpuIsa cap(CpuIsa::kAvx2);
    EXPECT_EQ(PackedMatrix::pack_a(false, 48, 64, a.data(), 64, GemmPrecision::kBf16x3)->precision(),
              GemmPrecision::kF32);
  }
  EXPECT_EQ(PackedMatrix::pack_a(true, 64, 48, a.data(), 64, GemmPrecision::kBf16x3)->precision(), GemmPrecision::kF32);
}

}  // namespace
}  // namespace dlrt::cpu
