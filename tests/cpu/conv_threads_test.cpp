// Float32 Conv on 1 to 5 threads through the op (whatever path it takes:
// the direct tile with its phase copy split over bands of rows, the GEMM,
// Winograd): every thread count matches the plain conv and the
// single-threaded result. Batches, channel counts that are not multiples of
// 8 or 16, odd planes, strides, pads, dilations, inputs large enough that
// the copy is split over the threads, grids whose direct-tile blocks split
// the tiles' vectors evenly (a short last tile, 1x1 and strided).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/isa.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

struct Case {
  int64_t N, C, M, H, W, k, s, p, d;
};

TEST(ConvThreads, AnyThreadCountMatchesOneThread) {
  const std::vector<Case> cases = {
      {2, 37, 21, 45, 38, 3, 1, 1, 1},   // copy of 37 x 3 tap columns x 47 x 38 floats
      {1, 29, 40, 61, 53, 3, 2, 1, 1},   // strided
      {3, 3, 20, 160, 150, 7, 2, 3, 1},  // stem: 3 channels, 7x7 stride 2
      {1, 33, 17, 40, 41, 3, 1, 2, 2},   // dilated
      {2, 45, 50, 30, 31, 1, 1, 1, 1},   // padded 1x1: copied
      {1, 70, 33, 27, 29, 1, 1, 0, 1},   // pointwise: no copy
      {1, 24, 130, 19, 22, 5, 1, 2, 1},  // 5x5, many output panels
      // Activations outweigh the weights: the direct tile's column blocks,
      // a band per thread, split the tiles' 16-column vectors evenly.
      {1, 40, 24, 40, 40, 3, 2, 1, 1},   // strided, 20 x 21 = 420 grid columns
      {1, 48, 40, 20, 20, 1, 1, 0, 1},   // pointwise, 400 columns
      {1, 20, 16, 23, 29, 1, 1, 0, 1},   // pointwise, 667 columns
      {2, 16, 24, 9, 11, 3, 1, 1, 1},    // a grid of two tiles and a few columns
  };
  std::mt19937 rng(7);
  uint64_t direct_runs = 0;  // on 2+ threads
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Case& c : cases) {
    const int64_t oh = (c.H + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1, ow = (c.W + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1;
    SCOPED_TRACE("N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " " +
                 std::to_string(c.H) + "x" + std::to_string(c.W) + " k" + std::to_string(c.k) + " s" +
                 std::to_string(c.s) + " p" + std::to_string(c.p) + " d" + std::to_string(c.d));
    std::vector<float> x(static_cast<size_t>(c.N * c.C * c.H * c.W)), w(static_cast<size_t>(c.M * c.C * c.k * c.k)),
        b(static_cast<size_t>(c.M));
    for (auto& v : x) v = dist(rng);
    for (auto& v : w) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    const Tensor tx = Tensor::from_vector<float>({c.N, c.C, c.H, c.W}, x);
    const Tensor tw = Tensor::from_vector<float>({c.M, c.C, c.k, c.k}, w);
    const Tensor tb = Tensor::from_vector<float>({c.M}, b);
    ir::Node node;
    node.name = "conv";
    node.attributes = {{"strides", attr_ints({c.s, c.s})},
                       {"dilations", attr_ints({c.d, c.d})},
                       {"pads", attr_ints({c.p, c.p, c.p, c.p})},
                       {"group", attr_int(1)}};
    testing::RefConvShape s;
    s.N = c.N, s.C = c.C, s.M = c.M, s.H = c.H, s.W = c.W, s.KH = s.KW = c.k, s.SH = s.SW = c.s;
    s.DH = s.DW = c.d, s.PT = s.PL = c.p, s.OH = oh, s.OW = ow;
    const std::vector<float> want = testing::reference_conv(s, x, w, b, {}, Activation{});
    std::vector<float> one;
    for (int threads = 1; threads <= 5; ++threads) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      const uint64_t before = conv_direct_runs();
      auto y = testing::run_conv_prepacked(node, {tx, tw, tb, Tensor()}, Activation{}, threads);
      ASSERT_TRUE(y.ok()) << y.status().message();
      ASSERT_EQ(y->size(), static_cast<int64_t>(want.size()));
      const float* got = y->data<float>();
      const double tol = 2e-5 * std::sqrt(double(c.C * c.k * c.k));
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
      if (threads == 1) {
        one.assign(got, got + want.size());
        continue;
      }
      // Every path sums each output in one order on any thread count, up to
      // the kernel's rounding where the path changes with the threads.
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], one[i], 1e-5 * (1 + std::fabs(one[i]))) << "element " << i;
      direct_runs += conv_direct_runs() - before;
    }
  }
  // The direct tile (and its split copy) ran where the CPU has it.
  if (cpu_isa() >= CpuIsa::kAvx2) {
    EXPECT_GT(direct_runs, 0u);
  }
}

}  // namespace
}  // namespace dlrt::cpu
