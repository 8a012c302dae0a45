// Precision bf16 on BFMMLA (gemm_bf16_neon.cpp). On every CPU: the scalar
// model of the instruction against the Arm ARM's rules (products and sums
// each rounded to odd, flushes, default NaN) and its register tile against a
// double product of the bf16-rounded inputs. On aarch64 (make test-arm64 runs
// these under qemu-aarch64, then again as a Cortex-A76, which has no BF16):
// the NEON tile selected exactly where HWCAP2 has BF16 and DLRT_CPU_FEATURES_OFF
// leaves it on, counted per GEMM (simd_calls "gemm_bf16_neon"), so that the
// tests fail when a model ran in its place, and bit for bit the model's
// results on many shapes and on special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "core/thread_pool.h"
#include "device/cpu_features.h"
#include "gemm_bf16_cases.h"
#include "kernel_test_util.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace dlrt::cpu {
namespace {

float f(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t u(float x) { return std::bit_cast<uint32_t>(x); }
uint16_t h(float x) { return static_cast<uint16_t>(u(x) >> 16); }  // x must be a bf16 value
uint32_t pair(float lo, float hi) { return h(lo) | (uint32_t{h(hi)} << 16); }
uint32_t dot(float acc, float a0, float a1, float b0, float b1) {
  return u(bf16_mmla_dot_model(acc, pair(a0, a1), pair(b0, b1)));
}

TEST(Bf16MmlaModel, SumsRoundToOdd) {
  const float p30 = std::ldexp(1.0f, -30), p60 = std::ldexp(1.0f, -60);
  // 1 + 2^-30: inexact, so the last mantissa bit is set (nearest even would give 1).
  EXPECT_EQ(dot(1.0f, p30, 0, 1, 0), 0x3f800001u);
  EXPECT_EQ(dot(1.0f, 1.0f, 0, std::ldexp(1.0f, -23), 0), 0x3f800001u);  // exact: stays
  EXPECT_EQ(dot(3.0f, 1.0f, 0, std::ldexp(1.0f, -22), 0), 0x40400001u);  // exact 3 + 2^-22: odd by itself
  // 1 - 2^-60 (rounds to 1 in double): just below 1, odd: 1 - 2^-24.
  EXPECT_EQ(dot(1.0f, p30, 0, -p30, 0), 0x3f7fffffu);
  // The two products are summed (and rounded) before acc joins: 1 + 2^-30 rounds to
  // 1 + 2^-23, so acc -1 leaves 2^-23, not 2^-30.
  EXPECT_EQ(dot(-1.0f, 1.0f, p30, 1.0f, 1.0f), u(std::ldexp(1.0f, -23)));
  // 2^-30 - 2^-30 = 0 exactly, then 1 + 0 = 1 (added to acc one at a time, 1 - 2^-30 would round).
  EXPECT_EQ(dot(1.0f, p30, p30, 1.0f, -1.0f), 0x3f800000u);
  // Products of bf16 values are exact: 2^-60 survives when nothing else rounds.
  EXPECT_EQ(dot(0.0f, p30, 0, p30, 0), u(p60));
  // Exact zero sums are +0; zeros of one sign keep it.
  EXPECT_EQ(dot(1.0f, -1.0f, 0, 1.0f, 0), 0x00000000u);
  EXPECT_EQ(dot(-0.0f, -1.0f, -1.0f, 0.0f, 0.0f), 0x80000000u);
  EXPECT_EQ(dot(-0.0f, -1.0f, 1.0f, 0.0f, 0.0f), 0x00000000u);
}

TEST(Bf16MmlaModel, FlushesOverflowsAndNans) {
  const float tiny = std::ldexp(1.0f, -64);                                // its square, 2^-128, is below 2^-126
  EXPECT_EQ(dot(-0.0f, -tiny, -tiny, tiny, tiny), 0x80000000u);            // each product a -0
  EXPECT_EQ(dot(1.0f, tiny, 0, tiny, 0), 0x3f800000u);                     // flushed, not rounded into 1
  EXPECT_EQ(dot(f(0x00000005), 0, 0, 0, 0), 0x00000000u);                  // a denormal acc counts as zero
  EXPECT_EQ(u(bf16_mmla_dot_model(1.0f, 0x0001u, 0x7f00u)), 0x3f800000u);  // a denormal bf16 input too
  // 2^-126 stays (smallest normal); a sum that lands below it is a signed zero.
  EXPECT_EQ(dot(0.0f, std::ldexp(1.0f, -63), 0, std::ldexp(1.0f, -63), 0), 0x00800000u);
  EXPECT_EQ(dot(std::ldexp(1.0f, -125), -std::ldexp(1.5f, -63), 0, std::ldexp(1.0f, -63), 0), 0x00000000u);
  // Overflow: from 2^128 an infinity; above the largest float but below 2^128, the
  // largest float (rounding to odd never carries; nearest even would give infinity).
  EXPECT_EQ(dot(0.0f, std::ldexp(1.0f, 127), std::ldexp(1.0f, 127), 1.0f, 1.0f), 0x7f800000u);
  EXPECT_EQ(dot(std::numeric_limits<float>::max(), std::ldexp(1.5f, 103), 0, 1.0f, 0), 0x7f7fffffu);
  EXPECT_EQ(dot(0.0f, -std::ldexp(1.0f, 100), 0, std::ldexp(1.0f, 100), 0), 0xff800000u);
  // Any NaN, inf * 0 and inf - inf give the default NaN.
  EXPECT_EQ(u(bf16_mmla_dot_model(1.0f, 0xffc1u, 0x3f80u)), 0x7fc00000u);
  EXPECT_EQ(u(bf16_mmla_dot_model(f(0xff812345), 0, 0)), 0x7fc00000u);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(dot(1.0f, inf, 0, 0.0f, 0), 0x7fc00000u);
  EXPECT_EQ(dot(-inf, inf, 0, 1.0f, 0), 0x7fc00000u);
  EXPECT_EQ(dot(1.0f, -inf, 0, 1.0f, 0), 0xff800000u);
}

using testing::random_floats;

double bf(float x) { return bf16_widen(bf16_round(x)); }

// The model's tile (8 rows x 48 columns of packed panels) against a double
// product of the bf16-rounded inputs: within two ulps per step (rounding to
// odd errs by up to one ulp); and not the VDPBF16PS model's bits everywhere.
TEST(Bf16MmlaModel, TileMatchesRoundedProduct) {
  std::mt19937 rng(17);
  int differs = 0;
  for (int64_t K : {1, 2, 3, 4, 5, 31, 200}) {
    const int M = 7, N = 45;
    const std::vector<float> A = random_floats(static_cast<size_t>(M * K), rng),
                             B = random_floats(static_cast<size_t>(K * N), rng);
    std::vector<uint32_t> ap(bf16_packed_a_bytes(M, K) / 4), bp(bf16_packed_b_bytes(K, N) / 4);
    bf16_pack_a(false, M, K, A.data(), K, ap.data(), false);
    bf16_pack_b(false, K, N, B.data(), N, bp.data());
    const int64_t kp = (K + 1) / 2;
    std::vector<float> c(M * kBf16NR, 5.0f), x86(c.size(), 5.0f);
    bf16_kernel_mmla_model(kp, ap.data(), bp.data(), c.data(), kBf16NR, 1.0f, 0.0f, M, N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double sum = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          sum += bf(A[i * K + k]) * bf(B[k * N + j]);
          mag += std::fabs(bf(A[i * K + k]) * bf(B[k * N + j]));
        }
        ASSERT_NEAR(c[i * kBf16NR + j], sum, (2 * K + 2) * 2.4e-7 * (mag + 1e-3))
            << "K " << K << " (" << i << ", " << j << ")";
        float acc = 0;
        for (int64_t p = 0; p < kp; ++p) acc = bf16_dot_model(acc, ap[p * kBf16MR + i], bp[p * kBf16NR + j]);
        differs += u(acc) != u(c[i * kBf16NR + j]);
      }
    for (int i = 0; i < M; ++i)
      for (int j = N; j < kBf16NR; ++j) ASSERT_EQ(c[i * kBf16NR + j], 5.0f) << "wrote past nr";
  }
  EXPECT_GT(differs, 0) << "BFMMLA's model gave VDPBF16PS's bits everywhere: does it round to odd?";
}

#if defined(__aarch64__)

uint64_t neon_gemms() { return simd_calls("gemm_bf16_neon", SimdWidth::k128); }

// Whether this process should run the BFMMLA tile, from the kernel's HWCAP2
// and DLRT_CPU_FEATURES_OFF directly (not through cpu_features(), which is under test).
bool cpu_should_have_bf16() {
  bool turned_off = false;
  if (const char* off = std::getenv("DLRT_CPU_FEATURES_OFF")) {
    std::string names = off;
    for (char& ch : names) ch = ch == ',' ? ' ' : ch;
    std::istringstream in(names);
    for (std::string name; in >> name;) turned_off = turned_off || name == "bf16";
  }
  return (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0 && !turned_off;
}

using bf16_cases::Case;
using bf16_cases::make_run;
using bf16_cases::name_of;
using bf16_cases::Operands;
using bf16_cases::run_gemm;


#define SKIP_WITHOUT_BF16()                                                            \
  if (!bf16_dot_available())                                                           \
  GTEST_SKIP() << "the BFMMLA tile cannot run here (" << bf16_dot_unavailable_reason() \
               << "); NeonBf16.RunsWhereTheCpuHasBf16 checks that this is what the CPU says"

// The tile runs exactly where the CPU has BF16 (one count per GEMM), and
// the report's names say which engine ran and why not.
TEST(NeonBf16, RunsWhereTheCpuHasBf16) {
  EXPECT_EQ(device::cpu_features().bf16, cpu_should_have_bf16());
  const bool want = cpu_should_have_bf16() && cpu_isa() >= CpuIsa::kNeon;  // DLRT_CPU_ISA=generic: none
  EXPECT_EQ(bf16_dot_available(), want) << bf16_dot_unavailable_reason();
  std::printf("bf16 GEMM engine: %s%s%s\n", bf16_engine_name(),
              want ? "" : "; unavailable: ", want ? "" : bf16_dot_unavailable_reason());
  EXPECT_STREQ(bf16_engine_name(), want ? "neon-bfmmla" : "scalar model");
  EXPECT_EQ(std::string(bf16_dot_unavailable_reason()).empty(), want);
  std::mt19937 rng(1);
  const Case cs{9, 50, 20, false, false, 1.0f, 0.0f, 1, false};
  const Operands r = make_run(cs, rng);
  uint64_t before = neon_gemms();
  const std::vector<float> got = run_gemm(cs, r, Bf16Engine::kAuto);
  EXPECT_EQ(neon_gemms() - before, want ? 1u : 0u) << "kAuto ran " << (want ? "a model" : "the BFMMLA tile");
  before = neon_gemms();
  const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kMmlaModel);
  EXPECT_EQ(neon_gemms(), before) << "the model engine ran the tile";
  EXPECT_EQ(0, std::memcmp(got.data(), model.data(), got.size() * sizeof(float)));
  // Below neon no tile runs, and the reason says so.
  ScopedCpuIsa generic(CpuIsa::kGeneric);
  EXPECT_FALSE(bf16_dot_available());
  if (cpu_should_have_bf16()) {
    EXPECT_STREQ(bf16_dot_unavailable_reason(), "DLRT_CPU_ISA is below neon");
  }
  before = neon_gemms();
  const std::vector<float> capped = run_gemm(cs, r, Bf16Engine::kAuto);
  EXPECT_EQ(neon_gemms(), before);
  EXPECT_EQ(0, std::memcmp(capped.data(), model.data(), got.size() * sizeof(float)));
}

// The tile bit for bit against the model on shapes with every edge: rows
// short of a pair or a panel, columns short of a group of four, a block of
// eight or a panel, odd pair counts (a zero pair completes the last BFMMLA),
// K = 0, transposes, alpha/beta, epilogues and threads.
TEST(NeonBf16, TileMatchesModelBitForBit) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(9);
  std::vector<Case> cases;
  int n = 0;
  for (int64_t M : {1, 2, 3, 7, 8, 9, 17})
    for (int64_t N : {1, 4, 5, 8, 13, 48, 49, 97})
      for (int64_t K : {0, 1, 2, 3, 4, 5, 9, 64, 127}) {
        ++n;
        cases.push_back({M, N, K, n % 5 == 1, n % 3 == 2, n % 4 == 3 ? -0.5f : 1.0f, n % 6 == 4 ? 0.75f : 0.0f,
                         n % 7 == 0 ? 3 : 1, n % 8 == 5});
      }
  cases.push_back({130, 100, 300, false, true, 1.0f, 0.0f, 2, true});
  for (const Case& cs : cases) {
    const Operands r = make_run(cs, rng);
    const uint64_t before = neon_gemms();
    const std::vector<float> real = run_gemm(cs, r, Bf16Engine::kInstruction);
    ASSERT_EQ(neon_gemms() - before, 1u) << name_of(cs);
    const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kMmlaModel);
    for (size_t i = 0; i < model.size(); ++i)
      ASSERT_EQ(u(model[i]), u(real[i])) << name_of(cs) << " element " << i << ": model " << model[i] << ", tile "
                                         << real[i];
  }
}

// Lanes where rounding to odd, flushing, overflow or a NaN decides the bits.
TEST(NeonBf16, SpecialValuesMatchModel) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(21);
  const float special[] = {1.0f,
                           -1.0f,
                           std::ldexp(1.0f, -30),
                           std::ldexp(1.0f, -64),
                           -std::ldexp(1.0f, -64),
                           3e38f,
                           std::ldexp(1.0f, 100),
                           std::nanf(""),
                           0.0f,
                           -0.0f,
                           std::ldexp(1.5f, -20)};
  constexpr int kSpecial = sizeof(special) / sizeof(special[0]);
  for (int trial = 0; trial < 200; ++trial) {
    const Case cs{8, 48, trial % 2 ? 8 : 6, false, false, 1.0f, 0.0f, 1, false};
    Operands r;
    r.lda = cs.K, r.ldb = 48, r.ldc = 48;
    r.A.resize(static_cast<size_t>(8 * cs.K));
    r.B.resize(static_cast<size_t>(cs.K * 48));
    for (auto& x : r.A) x = special[rng() % kSpecial];
    for (auto& x : r.B) x = special[rng() % kSpecial];
    r.c0.assign(8 * 48, 0.0f);
    const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kMmlaModel);
    const std::vector<float> real = run_gemm(cs, r, Bf16Engine::kInstruction);
    for (size_t i = 0; i < model.size(); ++i) {
      if (std::isnan(model[i])) {
        ASSERT_TRUE(std::isnan(real[i])) << "trial " << trial << " element " << i;
        continue;
      }
      ASSERT_EQ(u(model[i]), u(real[i])) << "trial " << trial << " element " << i << ": model " << model[i] << ", tile "
                                         << real[i];
    }
  }
}

// One BFMMLA on whole registers (acc included), for the test below.
__attribute__((target("arch=armv8.2-a+bf16"))) void bfmmla(const float* acc, const uint32_t* a, const uint32_t* b,
                                                           float* out) {
  vst1q_f32(out,
            vbfmmlaq_f32(vld1q_f32(acc), vreinterpretq_bf16_u32(vld1q_u32(a)), vreinterpretq_bf16_u32(vld1q_u32(b))));
}

// The model of one BFMMLA (for element (i, j): acc, then the dot steps of
// A's row i and B's column j, pairs 0 and 1) against the instruction on random
// bits: denormals, NaNs, infinities, cancellations and ties included.
TEST(NeonBf16, InstructionMatchesModelOnRandomBits) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(23);
  auto bf16_bits = [&](int kind) -> uint32_t {
    const uint32_t r = rng();
    if (kind == 0) return r & 0xffffu;                                    // any pattern
    if (kind == 1) return (r & 0x807fu) | ((0x78 + (r >> 16) % 8) << 7);  // 2^-7 .. 1: sums cancel
    return (r & 0x807fu) | ((r >> 20) % 3 == 0 ? 0u : 0x0080u);           // denormal or tiny
  };
  for (int trial = 0; trial < 20000; ++trial) {
    const int kind = trial % 3;
    uint32_t a[4], b[4];
    float acc[4], got[4];
    for (int i = 0; i < 4; ++i) {
      a[i] = bf16_bits(kind) | (bf16_bits(kind) << 16);
      b[i] = bf16_bits(kind) | (bf16_bits(kind) << 16);
      acc[i] = trial % 2 ? f(rng()) : f((rng() & 0x807fffffu) | (0x7e + rng() % 4) << 23);
    }
    bfmmla(acc, a, b, got);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const float want =
            bf16_mmla_dot_model(bf16_mmla_dot_model(acc[2 * i + j], a[2 * i], b[2 * j]), a[2 * i + 1], b[2 * j + 1]);
        ASSERT_EQ(u(want), u(got[2 * i + j])) << "trial " << trial << " element (" << i << ", " << j << ")";
      }
  }
}

// MatMul's path (PackedMatrix, sgemm_ex) runs the tile.
TEST(NeonBf16, SgemmExRunsTheTile) {
  SKIP_WITHOUT_BF16();
  std::mt19937 rng(11);
  const Case cs{21, 100, 37, false, false, 1.0f, 0.0f, 2, false};
  const Operands r = make_run(cs, rng);
  auto pm = PackedMatrix::pack_b(false, cs.K, cs.N, r.B.data(), r.ldb, GemmPrecision::kBf16);
  std::vector<float> c = r.c0;
  ThreadPool pool(2);
  SgemmOperand a{r.A.data(), r.lda, false, nullptr, nullptr}, b{r.B.data(), r.ldb, false, pm.get(), nullptr};
  const uint64_t before = neon_gemms();
  ASSERT_TRUE(sgemm_ex(cs.M, cs.N, cs.K, 1.0f, a, b, 0.0f, c.data(), r.ldc, nullptr, &pool).ok());
  EXPECT_EQ(neon_gemms() - before, 1u);
  const std::vector<float> model = run_gemm(cs, r, Bf16Engine::kMmlaModel);
  EXPECT_EQ(0, std::memcmp(c.data(), model.data(), c.size() * sizeof(float)));
}

#else

TEST(NeonBf16, RunsWhereTheCpuHasBf16) {
  GTEST_SKIP() << "the BFMMLA tile is aarch64 code (this build runs " << cpu_isa_name(detected_cpu_isa())
               << "): make test-arm64 runs it under qemu-aarch64; its model is tested above";
}

#endif

}  // namespace
}  // namespace dlrt::cpu
