// The float GEMM with a pre-packed A and a B of few columns over several K
// slices (kernels/gemm_whole_b.h: every slice of B packed at once, then one
// parallel section of tasks that each sweep all slices): on 1 to 5 threads
// the result equals the single-threaded one bit for bit and matches a
// double-precision reference, for B read from memory (plain and transposed)
// and through a BRowSource, row counts not a multiple of the tile, ragged
// last panels, beta 0 and 1, and a fused epilogue; and a conv of that shape
// (243 channels, 3x3, on 10x4) gives the same output on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::random_floats;

struct Case {
  int64_t M, N, K;
  bool trans_b, rows_b, residual;
  float beta;
};

std::string name(const Case& c) {
  return std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K) + (c.trans_b ? " Bt" : "") +
         (c.rows_b ? " rows" : "") + (c.residual ? " +residual relu" : "") + " beta " + std::to_string(c.beta);
}

void check(CpuIsa isa) {
  ScopedCpuIsa scoped(isa);
  const std::vector<Case> cases = {
      {243, 40, 2187, false, true, false, 0.0f},   // a conv's W x im2col rows: one ragged panel
      {486, 10, 4374, false, false, true, 0.0f},   // deeper, narrow, epilogue
      {37, 50, 1000, true, false, false, 1.0f},    // two panels (one ragged), few row tiles, accumulate
      {9, 97, 777, false, true, true, 0.0f},       // fewer row tiles than two per thread: panels split too
      {5, 3, 3001, false, false, false, 1.0f},     // one row tile
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(name(c));
    const auto a = random_floats(static_cast<size_t>(c.M * c.K), 1);
    const auto b = random_floats(static_cast<size_t>(c.K * c.N), 2);
    const auto c0 = random_floats(static_cast<size_t>(c.M * c.N), 3);
    const auto z = random_floats(static_cast<size_t>(c.M * c.N), 4);
    const auto row_bias = random_floats(static_cast<size_t>(c.M), 5);
    auto pa = PackedMatrix::pack_a(false, c.M, c.K, a.data(), c.K);
    // op(B)(p, j): B row-major K x N, or stored transposed (N x K).
    std::vector<float> bt(b.size());
    for (int64_t p = 0; p < c.K; ++p)
      for (int64_t j = 0; j < c.N; ++j) bt[static_cast<size_t>(j * c.K + p)] = b[static_cast<size_t>(p * c.N + j)];
    BRowSource rows = [&](int64_t p, int64_t j0, int64_t n, float* dst) {
      std::memcpy(dst, b.data() + p * c.N + j0, static_cast<size_t>(n) * sizeof(float));
    };
    SgemmOperand ob;
    if (c.rows_b) ob.rows = &rows;
    else if (c.trans_b) ob = SgemmOperand{bt.data(), c.K, true, nullptr, nullptr};
    else ob = SgemmOperand{b.data(), c.N, false, nullptr, nullptr};
    GemmEpilogue ep;
    if (c.residual) {
      ep.residual = z.data();
      ep.ldr = c.N;
      ep.row_bias = row_bias.data();
      ep.act.kind = ActKind::kRelu;
    }
    auto run = [&](ThreadPool* pool) {
      std::vector<float> out = c0;
      EXPECT_TRUE(sgemm_ex(c.M, c.N, c.K, 1.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr}, ob, c.beta,
                           out.data(), c.N, c.residual ? &ep : nullptr, pool)
                      .ok());
      return out;
    };
    const std::vector<float> single = run(nullptr);
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        double acc = c.beta * double(c0[static_cast<size_t>(i * c.N + j)]);
        for (int64_t p = 0; p < c.K; ++p)
          acc += double(a[static_cast<size_t>(i * c.K + p)]) * b[static_cast<size_t>(p * c.N + j)];
        if (c.residual) acc = std::max(0.0, acc + row_bias[static_cast<size_t>(i)] + z[static_cast<size_t>(i * c.N + j)]);
        ASSERT_NEAR(single[static_cast<size_t>(i * c.N + j)], acc, 2e-3 * (1.0 + std::fabs(acc))) << i << " " << j;
      }
    for (int threads = 1; threads <= 5; ++threads) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      ThreadPool pool(threads);
      const std::vector<float> got = run(&pool);
      ASSERT_EQ(std::memcmp(got.data(), single.data(), got.size() * sizeof(float)), 0);
    }
  }
}

// alpha 0 reads neither operand (a NaN in B stays out of C), on a shape
// the whole-B path would take.
TEST(GemmWholeB, AlphaZeroReadsNoOperand) {
  const int64_t M = 64, N = 40, K = 2000;
  auto a = random_floats(static_cast<size_t>(M * K), 1);
  auto b = random_floats(static_cast<size_t>(K * N), 2);
  b[17] = NAN;
  auto pa = PackedMatrix::pack_a(false, M, K, a.data(), K);
  ThreadPool pool(2);
  std::vector<float> c(static_cast<size_t>(M * N), 3.0f);
  ASSERT_TRUE(sgemm_ex(M, N, K, 0.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr},
                       SgemmOperand{b.data(), N, false, nullptr, nullptr}, 0.5f, c.data(), N, nullptr, &pool)
                  .ok());
  for (float v : c) ASSERT_EQ(v, 1.5f);
}

TEST(GemmWholeB, SameResultOnAnyThreadCount) {
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (detected_cpu_isa() < isa) continue;
    SCOPED_TRACE(cpu_isa_name(isa));
    check(isa);
  }
}

// The direct-path policy on AVX-512: on several threads the GEMM where the
// one-thread rule takes it and the conv is 1x1 or its weights exceed half
// the L2 (the whole-B GEMM then runs it on any thread count); the direct
// path for the other small grids on several threads, as before.
TEST(GemmWholeB, DirectPolicyOnSmallGrids) {
  auto plan_of = [](int64_t C, int64_t H, int64_t W, int64_t k) {
    ConvDirectGeometry g;
    g.channels = C, g.in_h = H, g.in_w = W, g.kh = g.kw = k, g.pad_top = g.pad_left = k / 2;
    g.out_h = H, g.out_w = W;
    ConvDirectPlan plan;
    EXPECT_TRUE(conv_direct_plan(g, &plan, false, false));
    return plan;
  };
  const int64_t l2 = int64_t{2} << 20;
  const ConvDirectPlan big = plan_of(243, 10, 4, 3);    // 243 x 2187 weights: 2.1 MB
  const ConvDirectPlan small = plan_of(96, 9, 9, 3);    // 96 x 864: 332 KB
  const ConvDirectPlan point = plan_of(256, 5, 5, 1);   // 1x1
  EXPECT_FALSE(conv_direct_worth(big, CpuIsa::kAvx512, 1, 243, l2));
  EXPECT_FALSE(conv_direct_worth(big, CpuIsa::kAvx512, 2, 243, l2));
  EXPECT_TRUE(conv_direct_worth(big, CpuIsa::kAvx512, 2, 243, 0));  // L2 unknown: as before
  EXPECT_FALSE(conv_direct_worth(small, CpuIsa::kAvx512, 1, 96, l2));
  EXPECT_TRUE(conv_direct_worth(small, CpuIsa::kAvx512, 2, 96, l2));
  EXPECT_FALSE(conv_direct_worth(point, CpuIsa::kAvx512, 1, 256, l2));
  EXPECT_FALSE(conv_direct_worth(point, CpuIsa::kAvx512, 2, 256, l2));
  const ConvDirectPlan large_grid = plan_of(64, 14, 14, 3);
  EXPECT_TRUE(conv_direct_worth(large_grid, CpuIsa::kAvx512, 1, 64, l2));
  EXPECT_TRUE(conv_direct_worth(large_grid, CpuIsa::kAvx512, 2, 64, l2));
}

// A 243 -> 243 3x3 conv on a 10x4 plane (a ResNet's layer3 on a small
// spectrogram) through conv_run with packed weights: on 2 threads it now
// runs the GEMM as on 1 thread (before, the direct path: a different sum
// order), so both give the same output bit for bit, within the reference's
// tolerance; a 96-channel one on 9x9 keeps the direct path on 2 threads.
TEST(GemmWholeB, SmallPlaneConvSameOnOneAndTwoThreads) {
  if (!cpu_has_avx512() || !conv_direct_enabled()) GTEST_SKIP() << "the policy under test is AVX-512's default";
  const int64_t C = 243, H = 10, W = 4;
  const auto x = random_floats(static_cast<size_t>(C * H * W), 11);
  const auto w = random_floats(static_cast<size_t>(C * C * 9), 12);
  const auto b = random_floats(static_cast<size_t>(C), 13);
  ir::Node node;
  node.name = "small_plane";
  node.attributes = {{"pads", testing::attr_ints({1, 1, 1, 1})}, {"group", testing::attr_int(1)}};
  const Tensor tx = Tensor::from_vector<float>({1, C, H, W}, x), tw = Tensor::from_vector<float>({C, C, 3, 3}, w);
  const Tensor tb = Tensor::from_vector<float>({C}, b);
  Activation act;
  const uint64_t runs0 = conv_direct_runs();
  auto one = testing::run_conv_prepacked(node, {tx, tw, tb, Tensor()}, act, 1);
  auto two = testing::run_conv_prepacked(node, {tx, tw, tb, Tensor()}, act, 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(conv_direct_runs(), runs0) << "the direct path ran";
  ASSERT_EQ(std::memcmp(one->data<float>(), two->data<float>(), x.size() * sizeof(float)), 0);
  testing::RefConvShape s;
  s.C = s.M = C, s.H = s.OH = H, s.W = s.OW = W, s.KH = s.KW = 3, s.PT = s.PL = 1;
  const auto want = testing::reference_conv(s, x, w, b, {}, act);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(two->data<float>()[i], want[i], 2e-3f * (1.0f + std::fabs(want[i])));
  // 96 channels on 9x9: small weights, the direct path on 2 threads.
  const int64_t c2 = 96;
  const Tensor x2 = Tensor::from_vector<float>({1, c2, 9, 9}, random_floats(static_cast<size_t>(c2 * 81), 14));
  const Tensor w2 = Tensor::from_vector<float>({c2, c2, 3, 3}, random_floats(static_cast<size_t>(c2 * c2 * 9), 15));
  const uint64_t runs1 = conv_direct_runs();
  ASSERT_TRUE(testing::run_conv_prepacked(node, {x2, w2, Tensor(), Tensor()}, act, 2).ok());
  EXPECT_EQ(conv_direct_runs(), runs1 + 1);
}

}  // namespace
}  // namespace dlrt::cpu
