// Precision bf16's GEMM (gemm_bf16.h). On every CPU: the scalar models of
// VCVTNE2PS2BF16 and VDPBF16PS against the SDM's rules, and the whole GEMM
// (packing, tiles, edge tiles, odd K, transposes, alpha/beta, epilogues,
// threads) run on the model against a double-precision product of the
// bf16-rounded inputs. Where the CPU has AVX512-BF16: the instruction's
// conversion and tile bit for bit against the models (skipped elsewhere,
// with the reason).
#include "backends/cpu/kernels/gemm_bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"
#include "gemm_bf16_cases.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

#if defined(__x86_64__)
#define SKIP_WITHOUT_BF16()                                                                 \
  if (!bf16_dot_available())                                                                \
  GTEST_SKIP() << "the VDPBF16PS kernel cannot run here (" << bf16_dot_unavailable_reason() \
               << "); its packing and tiling are tested on the scalar model above"
#else
#define SKIP_WITHOUT_BF16() \
  GTEST_SKIP() << "VDPBF16PS is x86 code; gemm_bf16_mmla_test.cpp tests this CPU's bf16 tile (BFMMLA)"
#endif

// The scalar model of the engine kAuto runs where the instruction cannot:
// VDPBF16PS's, on aarch64 BFMMLA's.
#if defined(__aarch64__)
constexpr Bf16Engine kCpuModel = Bf16Engine::kMmlaModel;
#else
constexpr Bf16Engine kCpuModel = Bf16Engine::kModel;
#endif

float f(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t pair(float lo, float hi) { return bf16_round(lo) | (uint32_t{bf16_round(hi)} << 16); }

TEST(Bf16Model, RoundIsTheInstructionsConversion) {
  EXPECT_EQ(bf16_round(1.0f), 0x3f80);
  EXPECT_EQ(bf16_round(-2.0f), 0xc000);
  EXPECT_EQ(bf16_round(f(0x3f808000)), 0x3f80);  // tie, even below: stays
  EXPECT_EQ(bf16_round(f(0x3f818000)), 0x3f82);  // tie, odd below: up to even
  EXPECT_EQ(bf16_round(f(0x3f808001)), 0x3f81);  // past the tie: up
  EXPECT_EQ(bf16_round(f(0x3f807fff)), 0x3f80);  // short of it: down
  EXPECT_EQ(bf16_round(f(0x00000001)), 0x0000);  // denormal: zero
  EXPECT_EQ(bf16_round(f(0x807fffff)), 0x8000);  // negative denormal: -0
  EXPECT_EQ(bf16_round(f(0x00800000)), 0x0080);  // smallest normal stays
  EXPECT_EQ(bf16_round(f(0x7f7fffff)), 0x7f80);  // largest float rounds to infinity
  EXPECT_EQ(bf16_round(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(bf16_round(f(0x7f800001)), 0x7fc0);  // signalling NaN: quiet
  EXPECT_EQ(bf16_round(f(0xffc12345)), 0xffc1);
}

TEST(Bf16Model, DotLaneOrderAndFlushes) {
  // The high pair first: 1 + (-1) = 0, then + 2^-30. Adding 2^-30 to 1 first would lose it.
  EXPECT_EQ(bf16_dot_model(1.0f, pair(f(0x30800000), -1.0f), pair(1.0f, 1.0f)), f(0x30800000));
  // Each product is added with its own rounding: 1 + 2^-24 ties to 1, twice
  // (one rounding of 1 + 2^-23 would keep it).
  EXPECT_EQ(bf16_dot_model(1.0f, pair(f(0x33800000), f(0x33800000)), pair(1.0f, 1.0f)), 1.0f);
  // A denormal accumulator counts as zero.
  EXPECT_EQ(bf16_dot_model(f(0x00000005), pair(0.0f, 0.0f), pair(0.0f, 0.0f)), 0.0f);
  // A denormal result is flushed, with its sign (the low product comes last:
  // after the high one, +0 + -0 would give +0).
  const float tiny = f(0x1d800000);  // 2^-68: its square is 2^-136, denormal
  const float r = bf16_dot_model(0.0f, pair(-tiny, 0.0f), pair(tiny, 0.0f));
  EXPECT_EQ(std::bit_cast<uint32_t>(r), 0x80000000u);
  // A denormal bf16 input (packed by hand, as bf16_round never makes one) counts as zero.
  EXPECT_EQ(bf16_dot_model(1.0f, 0x0001u << 16, 0x7f00u << 16), 1.0f);
  // Infinities and NaN propagate.
  EXPECT_TRUE(std::isinf(bf16_dot_model(0.0f, pair(0.0f, 1e38f), pair(0.0f, 1e38f))));
  EXPECT_TRUE(std::isnan(bf16_dot_model(0.0f, pair(std::nanf(""), 1.0f), pair(1.0f, 1.0f))));
}

using bf16_cases::Case;
using bf16_cases::make_run;
using bf16_cases::name_of;
using bf16_cases::Operands;
using bf16_cases::run_gemm;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {1, 1, 1, false, false, 1.0f, 0.0f, 1, false},    {8, 48, 2, false, false, 1.0f, 0.0f, 1, false},
      {7, 47, 3, false, false, 1.0f, 0.0f, 1, false},   {9, 49, 33, false, true, 0.5f, 1.0f, 2, true},
      {17, 97, 64, true, false, 1.0f, 0.5f, 3, false},  {33, 20, 127, true, true, -1.0f, 0.0f, 2, true},
      {64, 144, 65, false, false, 1.0f, 0.0f, 3, true}, {5, 150, 1, false, false, 2.0f, 0.0f, 1, false},
      {16, 33, 0, false, false, 1.0f, 0.5f, 1, false},  {130, 40, 17, false, true, 1.0f, 0.0f, 2, false},
  };
  return all;
}

double bf(float x) { return bf16_widen(bf16_round(x)); }

// The model's GEMM against a double product of the rounded inputs: within
// fp32 summation error (the products of bf16 values are exact), so a wrong
// pair, panel or edge shows; padding columns untouched.
TEST(Bf16Gemm, ModelMatchesRoundedProduct) {
  std::mt19937 rng(7);
  for (const Case& cs : cases()) {
    const Operands r = make_run(cs, rng);
    const std::vector<float> c = run_gemm(cs, r, Bf16Engine::kModel);
    for (int64_t i = 0; i < cs.M; ++i) {
      for (int64_t j = 0; j < cs.N; ++j) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < cs.K; ++p) {
          const double a = bf(cs.ta ? r.A[p * r.lda + i] : r.A[i * r.lda + p]);
          const double b = bf(cs.tb ? r.B[j * r.ldb + p] : r.B[p * r.ldb + j]);
          sum += a * b;
          mag += std::fabs(a * b);
        }
        double want = cs.alpha * sum + (cs.beta != 0.0f ? cs.beta * r.c0[i * r.ldc + j] : 0.0);
        if (cs.epilogue) want = std::max(0.0, want + r.bias[j] + r.res[i * cs.N + j]);
        const double tol = (cs.K + 2) * 1.2e-7 * (std::fabs(cs.alpha) * mag + 2) + 1e-7;
        ASSERT_NEAR(c[i * r.ldc + j], want, tol) << name_of(cs) << " at (" << i << ", " << j << ")";
      }
      for (int64_t j = cs.N; j < r.ldc; ++j)
        ASSERT_EQ(c[i * r.ldc + j], r.c0[i * r.ldc + j]) << name_of(cs) << " wrote padding column " << j;
    }
  }
}

// Against the unrounded f32 inputs the error is bf16's (a relative 2^-9 per
// input): far above f32's, so the products really are bf16.
TEST(Bf16Gemm, ModelErrorIsBf16s) {
  std::mt19937 rng(3);
  const Case cs{32, 64, 256, false, false, 1.0f, 0.0f, 1, false};
  const Operands r = make_run(cs, rng);
  const std::vector<float> c = run_gemm(cs, r, Bf16Engine::kModel);
  double err = 0, mag = 0;
  for (int64_t i = 0; i < cs.M; ++i)
    for (int64_t j = 0; j < cs.N; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < cs.K; ++p) sum += double(r.A[i * r.lda + p]) * r.B[p * r.ldb + j];
      err += std::fabs(c[i * r.ldc + j] - sum);
      mag += std::fabs(sum);
    }
  EXPECT_GT(err / mag, 1e-4);
  EXPECT_LT(err / mag, 1e-2);
}

// Through PackedMatrix and sgemm_ex (MatMul's path): the same bits as this CPU's model.
TEST(Bf16Gemm, SgemmExRunsPackedBf16) {
  std::mt19937 rng(11);
  const Case cs{21, 100, 37, false, false, 1.0f, 0.0f, 2, false};
  const Operands r = make_run(cs, rng);
  auto pm = PackedMatrix::pack_b(false, cs.K, cs.N, r.B.data(), r.ldb, GemmPrecision::kBf16);
  ASSERT_EQ(pm->precision(), GemmPrecision::kBf16);
  float unused = 0;
  EXPECT_FALSE(pm->unpack(&unused));
  std::vector<float> c = r.c0;
  ThreadPool pool(2);
  SgemmOperand a{r.A.data(), r.lda, false, nullptr, nullptr}, b{r.B.data(), r.ldb, false, pm.get(), nullptr};
  ASSERT_TRUE(sgemm_ex(cs.M, cs.N, cs.K, 1.0f, a, b, 0.0f, c.data(), r.ldc, nullptr, &pool).ok());
  const std::vector<float> model = run_gemm(cs, r, kCpuModel);
  EXPECT_EQ(0, std::memcmp(c.data(), model.data(), c.size() * sizeof(float)));
  // A packed A cannot meet a bf16 B.
  auto pa = PackedMatrix::pack_a(false, cs.M, cs.K, r.A.data(), r.lda);
  SgemmOperand packed_a{nullptr, 0, false, pa.get(), nullptr};
  EXPECT_FALSE(sgemm_ex(cs.M, cs.N, cs.K, 1.0f, packed_a, b, 0.0f, c.data(), r.ldc, nullptr, &pool).ok());
}

TEST(Bf16Instruction, ConversionMatchesModel) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  for (int64_t K : {1, 2, 15, 16, 17, 31, 32, 33, 100}) {
    for (int mr : {1, 5, 8}) {
      std::vector<float> A(static_cast<size_t>(mr * (K + 2)));
      for (size_t i = 0; i < A.size(); ++i) {
        // Random bit patterns (denormals, NaNs, infinities, ties) and ordinary values.
        A[i] = i % 3 ? random_floats(1, rng)[0] : std::bit_cast<float>(bits(rng));
        if (i % 7 == 0) A[i] = std::bit_cast<float>((bits(rng) & 0xffff0000u) | 0x8000u);  // a tie
      }
      std::vector<uint8_t> want(bf16_packed_a_bytes(mr, K)), got(want.size());
      bf16_pack_a(false, mr, K, A.data(), K + 2, want.data(), false);
      bf16_pack_a(false, mr, K, A.data(), K + 2, got.data(), true);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size())) << "K " << K << " rows " << mr;
      // B: an untransposed B converts with the instruction, its transpose in portable code.
      const int64_t N = 3 * mr + 40;
      std::vector<float> B(static_cast<size_t>(K * N)), Bt(B.size());
      for (size_t i = 0; i < B.size(); ++i) B[i] = A[i % A.size()] * (i % 2 ? 1.0f : -3.0f);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j) Bt[j * K + k] = B[k * N + j];
      std::vector<uint8_t> bw(bf16_packed_b_bytes(K, N) + 64, 0xab), bg(bw.size(), 0xcd);
      bf16_pack_b(true, K, N, Bt.data(), K, bw.data());
      bf16_pack_b(false, K, N, B.data(), N, bg.data());
      ASSERT_EQ(0, std::memcmp(bw.data(), bg.data(), bf16_packed_b_bytes(K, N))) << "B, K " << K << " N " << N;
    }
  }
}

TEST(Bf16Instruction, TileMatchesModelBitForBit) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(9);
  for (const Case& cs : cases()) {
    const Operands r = make_run(cs, rng);
    const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kModel);
    const std::vector<float> real = run_gemm(cs, r, Bf16Engine::kInstruction);
    for (size_t i = 0; i < model.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(model[i]), std::bit_cast<uint32_t>(real[i])) << name_of(cs) << " element " << i;
  }
  // Lanes where the order of the two products, flushing or a NaN decides the bits.
  const float special[] = {1.0f, -1.0f, f(0x30800000), f(0x1d800000), f(0x9d800000), 3e38f, std::nanf(""), 0.0f};
  std::vector<float> A(8 * 2), B(2 * 48);
  for (int trial = 0; trial < 200; ++trial) {
    for (auto& x : A) x = special[rng() % 8];
    for (auto& x : B) x = special[rng() % 8];
    const Case cs{8, 48, 2, false, false, 1.0f, 0.0f, 1, false};
    Operands r;
    r.A = A, r.B = B, r.lda = 2, r.ldb = 48, r.ldc = 48;
    r.c0.assign(8 * 48, 0.0f);
    const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kModel);
    const std::vector<float> real = run_gemm(cs, r, Bf16Engine::kInstruction);
    for (size_t i = 0; i < model.size(); ++i) {
      if (std::isnan(model[i])) {
        ASSERT_TRUE(std::isnan(real[i])) << "trial " << trial << " element " << i;
        continue;
      }
      ASSERT_EQ(std::bit_cast<uint32_t>(model[i]), std::bit_cast<uint32_t>(real[i]))
          << "trial " << trial << " element " << i << ": model " << model[i] << ", instruction " << real[i];
    }
  }
}

// Capped below AVX-512 after packing, the packed B still runs, on the model,
// with the same bits.
TEST(Bf16Instruction, IsaCapRunsTheModel) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(13);
  const Case cs{10, 60, 19, false, false, 1.0f, 0.0f, 1, false};
  const Operands r = make_run(cs, rng);
  const std::vector<float> real = run_gemm(cs, r, Bf16Engine::kAuto);
  ScopedCpuIsa cap(CpuIsa::kAvx2);
  ASSERT_FALSE(bf16_dot_available());
  EXPECT_STREQ(bf16_engine_name(), "scalar model");
  const std::vector<float> capped = run_gemm(cs, r, Bf16Engine::kAuto);
  EXPECT_EQ(0, std::memcmp(real.data(), capped.data(), real.size() * sizeof(float)));
}

}  // namespace
}  // namespace dlrt::cpu
