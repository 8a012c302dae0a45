// com.dlrt FusedExpandDepthwise against the two FusedConvs it replaces (the
// 1x1 expand conv or a small stem conv, then the depthwise conv) on the
// portable path (the scalar reference), on the portable path itself and at
// each vector width (expand_depthwise_simd.h at 512, 256 and 128 bits):
// pairs and single blocks of 16, 8 or 4 channels, every tail after each
// width's tiles, strides 1 and 2 (also per axis), uneven pads, 3x3 and 5x5
// kernels, batch 2, planes tall enough for row bands; with the 1x1
// projection folded in.
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/expand_depthwise.h"
#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;

Tensor rnd(Shape s, uint32_t seed, float scale = 1.0f) { return dlrt::testing::random_tensor(std::move(s), seed, -scale, scale); }

struct Case {
  int64_t n, k, m, h, w, kh, kw, sh, sw;
  std::vector<int64_t> pads;
  // The first conv: 1x1/1 unless set (kernel, strides, pads).
  int64_t ekh = 1, ekw = 1;
  std::vector<int64_t> estrides = {1, 1}, epads = {0, 0, 0, 0};
};

struct Act {
  std::string name;
  std::vector<float> params;
};

void add_act(ir::Attributes& attrs, const std::string& key, const Act& a) {
  if (a.name.empty()) return;
  attrs[key] = attr_string(a.name);
  if (!a.params.empty()) attrs[key + "_params"] = attr_floats(a.params);
}

// Calls fn(name) on the portable path and at each vector width this CPU
// runs, under the ISA level that selects the width (neon: 128 bits, on x86
// too); `m` expanded channels: at 512 bits a count not a multiple of 16
// takes 8-channel blocks at 256. Checks that the width's tiles ran.
void for_each_path(int64_t m, const std::function<void(const std::string&)>& fn) {
  {
    ScopedCpuIsa cap(CpuIsa::kGeneric);
    fn("portable");
  }
  testing::for_each_runnable_width([&](SimdWidth w) {
    const CpuIsa isa = w == SimdWidth::k512 ? CpuIsa::kAvx512 : w == SimdWidth::k256 ? CpuIsa::kAvx2 : CpuIsa::kNeon;
    const SimdWidth ran = w == SimdWidth::k512 && m % 16 != 0 ? SimdWidth::k256 : w;
    const uint64_t calls0 = simd_calls("expand_block_rows", ran);
    ScopedCpuIsa cap(isa);
    fn(simd_width_name(w) + std::string(" bits"));
    EXPECT_GT(simd_calls("expand_block_rows", ran), calls0) << simd_width_name(ran) << " bits, " << m << " channels";
  });
}

TEST(FusedExpandDepthwise, MatchesExpandThenDepthwiseConv) {
  const std::vector<Case> cases = {
      {1, 5, 16, 9, 11, 3, 3, 1, 1, {1, 1, 1, 1}},   // one pair of blocks; 99 positions (tail of 3)
      {1, 3, 24, 7, 6, 3, 3, 2, 2, {1, 1, 1, 1}},    // a pair and a single block, stride 2
      {2, 16, 8, 14, 14, 3, 3, 2, 2, {0, 0, 1, 1}},  // batch 2, one block, uneven pads
      {1, 7, 32, 5, 13, 5, 5, 1, 1, {2, 2, 2, 2}},   // 5x5
      {1, 4, 16, 8, 8, 3, 3, 2, 1, {1, 0, 0, 1}},    // strides differ per axis
      {1, 2, 8, 3, 3, 3, 3, 1, 1, {0, 0, 0, 0}},     // a 1x1 output
      {1, 9, 48, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}},    // mobilenet_v2's 7x7 planes
      {1, 5, 32, 5, 4, 3, 3, 1, 1, {1, 1, 1, 1}},    // 20 positions: a 12-wide AVX-512 tile, then an 8-wide one
      // 28+ output rows: on run_op's 2 threads each also takes a band of rows.
      {1, 5, 16, 30, 9, 3, 3, 1, 1, {1, 1, 1, 1}},
      {1, 3, 24, 57, 10, 3, 3, 2, 2, {1, 1, 1, 1}},
      {2, 4, 8, 31, 6, 5, 5, 1, 1, {2, 2, 2, 2}},
      // A stem as the first conv (mobilenet_v2's 3x3/2 on RGB, then its depthwise 3x3/1).
      {1, 3, 32, 23, 20, 3, 3, 1, 1, {1, 1, 1, 1}, 3, 3, {2, 2}, {1, 1, 1, 1}},
      {2, 2, 16, 9, 8, 3, 3, 2, 2, {1, 1, 1, 1}, 2, 2, {1, 1}, {0, 0, 0, 0}},       // 2x2/1, no pads
      {1, 3, 8, 10, 9, 3, 3, 1, 1, {1, 1, 1, 1}, 3, 3, {1, 2}, {0, 1, 2, 1}},     // uneven pads, strides
  };
  const std::vector<std::pair<Act, Act>> acts = {
      {{"", {}}, {"", {}}}, {{"Clip", {0.0f, 6.0f}}, {"Clip", {0.0f, 6.0f}}}, {{"Relu", {}}, {"", {}}}};
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const Tensor x = rnd({c.n, c.k, c.h, c.w}, ++seed, 2.0f), we = rnd({c.m, c.k, c.ekh, c.ekw}, ++seed),
                 be = rnd({c.m}, ++seed), wd = rnd({c.m, 1, c.kh, c.kw}, ++seed), bd = rnd({c.m}, ++seed);
    ir::Attributes dw = {{"group", attr_int(c.m)},
                                               {"kernel_shape", attr_ints({c.kh, c.kw})},
                                               {"strides", attr_ints({c.sh, c.sw})},
                                               {"pads", attr_ints(c.pads)}};
    for (const auto& [ae, ad] : acts) {
      ir::Attributes ea = {{"strides", attr_ints(c.estrides)}, {"pads", attr_ints(c.epads)}};
      ir::Attributes da = dw, fa = dw;
      fa["expand_strides"] = attr_ints(c.estrides);
      fa["expand_pads"] = attr_ints(c.epads);
      add_act(ea, "activation", ae);
      add_act(da, "activation", ad);
      add_act(fa, "activation", ad);
      add_act(fa, "expand_activation", ae);
      std::optional<ScopedCpuIsa> scalar(CpuIsa::kGeneric);
      auto mid = run_op("FusedConv", {x, we, be}, ea, 1, 1, "com.dlrt");
      ASSERT_TRUE(mid.ok()) << mid.status().to_string();
      auto want = run_op("FusedConv", {(*mid)[0], wd, bd}, da, 1, 1, "com.dlrt");
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      auto mid0 = run_op("FusedConv", {x, we}, ea, 1, 1, "com.dlrt");
      ASSERT_TRUE(mid0.ok()) << mid0.status().to_string();
      auto want0 = run_op("FusedConv", {(*mid0)[0], wd}, da, 1, 1, "com.dlrt");
      ASSERT_TRUE(want0.ok()) << want0.status().to_string();
      scalar.reset();
      for_each_path(c.m, [&](const std::string& path) {
        SCOPED_TRACE("x " + shape_to_string(x.shape()) + " k " + std::to_string(c.kh) + " s " + std::to_string(c.sh) +
                     "x" + std::to_string(c.sw) + " acts '" + ae.name + "' '" + ad.name + "' " + path);
        auto got = run_op("FusedExpandDepthwise", {x, we, be, wd, bd}, fa, 1, 1, "com.dlrt");
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        dlrt::testing::expect_close((*got)[0], (*want)[0], 2e-5f);
        // Without biases.
        auto nb = run_op("FusedExpandDepthwise", {x, we, Tensor(), wd, Tensor()}, fa, 1, 1, "com.dlrt");
        ASSERT_TRUE(nb.ok()) << nb.status().to_string();
        dlrt::testing::expect_close((*nb)[0], (*want0)[0], 2e-5f);
      });
    }
  }
}

// Every tile the vector widths run: rows of 1-25 positions (one or two rows)
// cover each tail after the 12- and 8-position tiles (32 registers) and the
// 6-position ones (16), for pairs and single blocks of 16, 8 and 4 channels.
TEST(FusedExpandDepthwise, EveryTailTileMatchesTheScalarPath) {
  uint32_t seed = 500;
  for (int64_t m : {8, 16, 24, 48})
    for (int64_t h : {1, 2})
      for (int64_t w = 1; w <= 25; ++w) {
        const int64_t k = 3;
        const Tensor x = rnd({1, k, h, w}, ++seed, 2.0f), we = rnd({m, k, 1, 1}, ++seed), be = rnd({m}, ++seed),
                     wd = rnd({m, 1, 3, 3}, ++seed), bd = rnd({m}, ++seed);
        ir::Attributes a = {{"group", attr_int(m)}, {"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}};
        add_act(a, "expand_activation", {"Clip", {-0.5f, 0.5f}});
        std::optional<ScopedCpuIsa> scalar(CpuIsa::kGeneric);
        auto want = run_op("FusedExpandDepthwise", {x, we, be, wd, bd}, a, 1, 1, "com.dlrt", 1);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        scalar.reset();
        for_each_path(m, [&](const std::string& path) {
          SCOPED_TRACE(std::to_string(m) + " channels, " + std::to_string(h) + " x " + std::to_string(w) + ", " + path);
          auto got = run_op("FusedExpandDepthwise", {x, we, be, wd, bd}, a, 1, 1, "com.dlrt", 1);
          ASSERT_TRUE(got.ok()) << got.status().to_string();
          dlrt::testing::expect_close((*got)[0], (*want)[0], 2e-5f);
        });
      }
}

// With the projection (inputs Wp, Bp, Z): against the same node without it
// followed by the 1x1 FusedConv it replaces, on 1 and 2 threads; planes
// tall enough for several bands per thread, projections whose rows are not
// a multiple of the 6-row tile, no bias, a residual, and an activation the
// tile's store does not clamp.
TEST(FusedExpandDepthwise, MatchesWithProjection) {
  struct PCase {
    Case c;
    int64_t p;  // projection output channels
  };
  const std::vector<PCase> cases = {
      // 3 bands on 1 thread, 2 per thread on 2; AVX-512: bands of at most 28
      // rows (3 on 1 thread, 4 on 2), each projected by its thread.
      {{1, 5, 64, 60, 20, 3, 3, 1, 1, {1, 1, 1, 1}}, 24},
      {{1, 4, 64, 121, 22, 3, 3, 2, 2, {1, 1, 1, 1}}, 10},  // stride 2: 61 x 11, a last panel of 4 rows
      {{1, 4, 64, 160, 10, 3, 3, 2, 2, {1, 1, 1, 1}}, 24},  // 80 x 5: AVX-512, 3 bands on 1 thread, 4 on 2
      {{2, 9, 48, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}}, 16},     // a 7x7 plane, batch 2: AVX-512, 2 threads: split over K
      {{1, 6, 24, 14, 14, 3, 3, 1, 1, {1, 1, 1, 1}}, 8},    // 14x14: AVX2, 2 threads: the two-phase path
      {{1, 7, 64, 13, 13, 3, 3, 1, 1, {1, 1, 1, 1}}, 24},   // 13x13: AVX-512, 2 threads: split over K
      {{1, 5, 32, 29, 9, 3, 3, 1, 1, {1, 1, 1, 1}}, 8},     // 29 rows: uneven bands (14 + 15), own region each
      {{1, 3, 32, 46, 40, 3, 3, 1, 1, {1, 1, 1, 1}, 3, 3, {2, 2}, {1, 1, 1, 1}}, 16},  // a stem first
  };
  const Act clip{"Clip", {0.0f, 6.0f}};
  const std::vector<Act> project_acts = {{"", {}}, {"Relu", {}}, {"Sigmoid", {}}};
  uint32_t seed = 100;
  for (const auto& [c, P] : cases) {
    const Tensor x = rnd({c.n, c.k, c.h, c.w}, ++seed, 2.0f), we = rnd({c.m, c.k, c.ekh, c.ekw}, ++seed),
                 be = rnd({c.m}, ++seed), wd = rnd({c.m, 1, c.kh, c.kw}, ++seed), bd = rnd({c.m}, ++seed),
                 wp = rnd({P, c.m, 1, 1}, ++seed, 0.3f), bp = rnd({P}, ++seed);
    ir::Attributes fa = {{"group", attr_int(c.m)},
                                               {"kernel_shape", attr_ints({c.kh, c.kw})},
                                               {"strides", attr_ints({c.sh, c.sw})},
                                               {"pads", attr_ints(c.pads)},
                                               {"expand_strides", attr_ints(c.estrides)},
                                               {"expand_pads", attr_ints(c.epads)}};
    add_act(fa, "activation", clip);
    add_act(fa, "expand_activation", clip);
    ScopedCpuIsa scalar(CpuIsa::kGeneric);  // the references (a ScopedCpuIsa inside sets its own level)
    auto mid = run_op("FusedExpandDepthwise", {x, we, be, wd, bd}, fa, 1, 1, "com.dlrt");
    ASSERT_TRUE(mid.ok()) << mid.status().to_string();
    const Tensor& d = (*mid)[0];
    const Tensor z = rnd({c.n, P, d.dim(2), d.dim(3)}, ++seed);
    for (const Act& pa : project_acts)
      for (bool residual : {false, true})
        for (bool bias : {false, true}) {
          ir::Attributes ca, ga = fa;
          add_act(ca, "activation", pa);
          add_act(ga, "project_activation", pa);
          std::vector<Tensor> conv_in = {d, wp, bias ? bp : Tensor()}, fused_in = {x, we, be, wd, bd, wp, bias ? bp : Tensor()};
          if (residual) conv_in.push_back(z), fused_in.push_back(z);
          auto want = run_op("FusedConv", conv_in, ca, 1, 1, "com.dlrt");
          ASSERT_TRUE(want.ok()) << want.status().to_string();
          for (int threads : {1, 2})
            for_each_path(c.m, [&](const std::string& path) {
              SCOPED_TRACE("x " + shape_to_string(x.shape()) + " P " + std::to_string(P) + " act '" + pa.name +
                           "' residual " + std::to_string(residual) + " bias " + std::to_string(bias) + " " + path +
                           " threads " + std::to_string(threads));
              auto got = run_op("FusedExpandDepthwise", fused_in, ga, 1, 1, "com.dlrt", threads);
              ASSERT_TRUE(got.ok()) << got.status().to_string();
              dlrt::testing::expect_close((*got)[0], (*want)[0], 2e-5f);
            });
        }
  }
}

// The AVX-512 projection path's row bands: one per thread from 14 rows per
// thread, at most 28 rows each from 56 rows, a multiple of the threads.
TEST(FusedExpandDepthwise, RowBandsAreAMultipleOfTheThreads) {
  EXPECT_EQ(expand_row_bands(80, 1), 3);
  EXPECT_EQ(expand_row_bands(80, 2), 4);
  EXPECT_EQ(expand_row_bands(112, 2), 4);
  EXPECT_EQ(expand_row_bands(160, 3), 6);
  EXPECT_EQ(expand_row_bands(56, 2), 2);
  EXPECT_EQ(expand_row_bands(28, 2), 2);
  EXPECT_EQ(expand_row_bands(20, 2), 1);
  EXPECT_EQ(expand_row_bands(28, 1), 1);
  for (int64_t threads = 2; threads <= 5; ++threads)
    for (int64_t rows = 1; rows <= 300; ++rows) {
      const int64_t b = expand_row_bands(rows, threads);
      ASSERT_TRUE(b == 1 || b % threads == 0) << rows << " rows, " << threads << " threads";
    }
}

TEST(FusedExpandDepthwise, BadShapesAreErrors) {
  const Tensor x = rnd({1, 4, 6, 6}, 1), we = rnd({8, 4, 1, 1}, 2), wd = rnd({8, 1, 3, 3}, 3);
  ir::Attributes a = {{"group", attr_int(8)}, {"pads", attr_ints({1, 1, 1, 1})}};
  EXPECT_TRUE(run_op("FusedExpandDepthwise", {x, we, Tensor(), wd}, a, 1, 1, "com.dlrt").ok());
  auto bad_we = run_op("FusedExpandDepthwise", {x, rnd({8, 5, 1, 1}, 4), Tensor(), wd}, a, 1, 1, "com.dlrt");
  ASSERT_FALSE(bad_we.ok());
  EXPECT_EQ(bad_we.status().code(), StatusCode::kInvalidArgument);
  auto bad_bias = run_op("FusedExpandDepthwise", {x, we, rnd({7}, 5), wd}, a, 1, 1, "com.dlrt");
  ASSERT_FALSE(bad_bias.ok());
  EXPECT_EQ(bad_bias.status().code(), StatusCode::kInvalidArgument);
  auto dilated = run_op("FusedExpandDepthwise", {x, we, Tensor(), wd},
                        {{"group", attr_int(8)}, {"pads", attr_ints({1, 1, 1, 1})}, {"dilations", attr_ints({2, 2})}}, 1, 1,
                        "com.dlrt");
  ASSERT_FALSE(dilated.ok());
  EXPECT_EQ(dilated.status().code(), StatusCode::kUnsupported);
  auto small = run_op("FusedExpandDepthwise", {rnd({1, 4, 1, 1}, 6), we, Tensor(), rnd({8, 1, 5, 5}, 7)}, {{"group", attr_int(8)}},
                      1, 1, "com.dlrt");
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kInvalidArgument);
  // The projection: Wp must be [P, 8, 1, 1], Bp hold P values, Z have the output's shape; Bp or Z without Wp.
  const Tensor wp = rnd({4, 8, 1, 1}, 8);
  EXPECT_TRUE(run_op("FusedExpandDepthwise", {x, we, Tensor(), wd, Tensor(), wp}, a, 1, 1, "com.dlrt").ok());
  for (const std::vector<Tensor>& in :
       {std::vector<Tensor>{x, we, Tensor(), wd, Tensor(), rnd({4, 7, 1, 1}, 9)},
        std::vector<Tensor>{x, we, Tensor(), wd, Tensor(), rnd({4, 8, 3, 3}, 10)},
        std::vector<Tensor>{x, we, Tensor(), wd, Tensor(), wp, rnd({5}, 11)},
        std::vector<Tensor>{x, we, Tensor(), wd, Tensor(), wp, Tensor(), rnd({1, 4, 6, 5}, 12)},
        std::vector<Tensor>{x, we, Tensor(), wd, Tensor(), Tensor(), rnd({4}, 13)}}) {
    auto r = run_op("FusedExpandDepthwise", in, a, 1, 1, "com.dlrt");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
  }
}

}  // namespace
}  // namespace dlrt::cpu
