// The AVX-512 direct conv's private phase copies (conv_direct_private_copy):
// which plans take them, and that on several threads the products equal the
// single-threaded ones bit for bit, call after call on changing inputs (a
// thread must copy each call's input, not reuse an earlier call's copy).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu {
namespace {

ConvDirectGeometry strided3x3(int64_t channels, int64_t in) {
  ConvDirectGeometry g;
  g.channels = channels, g.in_h = g.in_w = in, g.kh = g.kw = 3, g.sh = g.sw = 2, g.pad_top = g.pad_left = 1;
  g.out_h = g.out_w = (in + 2 - 3) / 2 + 1;
  return g;
}

TEST(ConvDirectPrivateCopy, Policy) {
  ConvDirectPlan plan;
  ASSERT_TRUE(conv_direct_plan(strided3x3(128, 20), &plan));
  const int64_t bytes = plan.src_floats * int64_t{sizeof(float)};
  EXPECT_TRUE(conv_direct_private_copy(plan, 2, false, 4 * bytes));
  EXPECT_FALSE(conv_direct_private_copy(plan, 1, false, 4 * bytes));      // one thread
  EXPECT_FALSE(conv_direct_private_copy(plan, 2, true, 4 * bytes));       // banded: each thread copies its band
  EXPECT_FALSE(conv_direct_private_copy(plan, 2, false, 4 * bytes - 4));  // over a quarter of L2
  ConvDirectGeometry pointwise;
  pointwise.channels = 16, pointwise.in_w = pointwise.out_w = 200;
  ASSERT_TRUE(conv_direct_plan(pointwise, &plan));
  EXPECT_FALSE(conv_direct_private_copy(plan, 2, false, int64_t{1} << 30));  // no copy at all
}

TEST(ConvDirectPrivateCopy, ThreadsMatchOneThreadBitwise) {
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_isa() < CpuIsa::kAvx512) GTEST_SKIP() << "needs AVX-512 (the kernel under test)";
  // Weights outweigh the activations (not banded); the copy is small.
  const int64_t C = 64, M = 96, H = 12;
  ConvDirectPlan plan;
  ASSERT_TRUE(conv_direct_plan(strided3x3(C, H), &plan));
  ASSERT_TRUE(conv_direct_private_copy(plan, 2, false, device::cpu_caches().l2))
      << "L2 " << device::cpu_caches().l2 << " too small for this test's copy";
  std::vector<int64_t> off(static_cast<size_t>(plan.k));
  conv_direct_offsets(plan, off.data());
  std::mt19937 rng(54);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> w(static_cast<size_t>(M * plan.k)), bias(static_cast<size_t>(M));
  for (auto& v : w) v = dist(rng);
  for (auto& v : bias) v = dist(rng);
  auto packed = PackedMatrix::pack_a(false, M, plan.k, w.data(), plan.k);
  ASSERT_EQ(packed->mr(), 8);
  GemmEpilogue ep;
  ep.row_bias = bias.data();
  ep.act.kind = ActKind::kRelu;
  const int64_t out = M * plan.g.out_h * plan.g.out_w;
  ThreadPool pool(2);
  for (int call = 0; call < 4; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<float> x(static_cast<size_t>(C * H * H)), one(static_cast<size_t>(out)), two(static_cast<size_t>(out));
    for (auto& v : x) v = dist(rng);
    conv_direct_whole_k(SimdWidth::k512, plan, off.data(), x.data(), *packed, one.data(), ep, nullptr);
    conv_direct_whole_k(SimdWidth::k512, plan, off.data(), x.data(), *packed, two.data(), ep, &pool);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  }
#else
  GTEST_SKIP() << "built without the AVX-512 paths";
#endif
}

}  // namespace
}  // namespace dlrt::cpu
