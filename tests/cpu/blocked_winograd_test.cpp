// com.dlrt ConvBlocked on 3x3 stride-1 convs that the NCHW Conv runs as
// Winograd F(4x4, 3x3): on AVX-512 CPUs it takes the same choice (64-128
// input and 48+ output channels, planes of 32+ 4x4 tiles) and runs
// kernels/conv_winograd4_blocked.cpp; the result matches a
// double-precision conv for channel counts off the 16-channel blocks, every
// padding Winograd takes, batches, bias, residual, activations, planes cut
// into several blocks of tile rows, and 1 or 3 threads. Smaller planes,
// fewer channels and the switch turned off keep the direct blocked conv.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/isa.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"
#include "exec/executor.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

struct Case {
  int64_t N = 1, C = 64, M = 64, H = 26, W = 30;
  int64_t pt = 1, pl = 1, pb = 1, pr = 1;
  bool residual = false;
  std::string act = "Silu";
  int64_t out_h() const { return H + pt + pb - 2; }
  int64_t out_w() const { return W + pl + pr - 2; }
  std::string describe() const {
    return "N" + std::to_string(N) + " C" + std::to_string(C) + " M" + std::to_string(M) + " " + std::to_string(H) +
           "x" + std::to_string(W) + " pads " + std::to_string(pt) + "," + std::to_string(pl) + "," +
           std::to_string(pb) + "," + std::to_string(pr) + (residual ? " residual " : " ") + act;
  }
};

Activation activation(const std::string& name) {
  Activation a;
  if (name == "Silu") a.kind = ActKind::kSilu;
  if (name == "Relu") a.kind = ActKind::kRelu;
  return a;
}

// x (NCHW) -> ToBlocked -> ConvBlocked(W, B, [ToBlocked(z)]) -> FromBlocked
// against the double reference; the F(4x4, 3x3) images run must be `runs4`.
void check(const Case& c, int threads, uint64_t runs4, uint32_t seed) {
  SCOPED_TRACE(c.describe() + " threads " + std::to_string(threads));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t OH = c.out_h(), OW = c.out_w();
  std::vector<float> x(static_cast<size_t>(c.N * c.C * c.H * c.W)), w(static_cast<size_t>(c.M * c.C * 9));
  std::vector<float> b(static_cast<size_t>(c.M)), z(static_cast<size_t>(c.N * c.M * OH * OW));
  for (auto* v : {&x, &w, &b, &z})
    for (auto& e : *v) e = dist(rng);

  dlrt::testing::GraphBuilder g;
  const ir::ValueId xi = g.input("x", {c.N, c.C, c.H, c.W});
  std::vector<ir::ValueId> ins = {g.node("ToBlocked", {xi}, {{"block", attr_int(16)}}, 1, "com.dlrt"),
                                  g.constant("w", Tensor::from_vector<float>({c.M, c.C, 3, 3}, w)),
                                  g.constant("b", Tensor::from_vector<float>({c.M}, b))};
  if (c.residual)
    ins.push_back(g.node("ToBlocked", {g.input("z", {c.N, c.M, OH, OW})}, {{"block", attr_int(16)}}, 1, "com.dlrt"));
  ir::Attributes a = {{"pads", attr_ints({c.pt, c.pl, c.pb, c.pr})}, {"block", attr_int(16)}};
  if (c.act != "none") a["activation"] = testing::attr_string(c.act);
  const ir::ValueId y = g.node("ConvBlocked", ins, a, 1, "com.dlrt");
  g.output(g.node("FromBlocked", {y}, {{"block", attr_int(16)}, {"channels", attr_int(c.M)}}, 1, "com.dlrt"));
  ThreadPool pool(threads);
  auto ex = Executor::create(g.graph(), pool, builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  std::vector<RunValue> feeds = {RunValue::of(Tensor::from_vector<float>({c.N, c.C, c.H, c.W}, x))};
  if (c.residual) feeds.push_back(RunValue::of(Tensor::from_vector<float>({c.N, c.M, OH, OW}, z)));
  const uint64_t before = conv_winograd4_runs();
  auto got = (*ex)->run(feeds);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(conv_winograd4_runs() - before, runs4) << "F(4x4, 3x3) images run";

  testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.H = c.H, s.W = c.W, s.KH = s.KW = 3, s.PT = c.pt, s.PL = c.pl, s.OH = OH,
  s.OW = OW;
  const std::vector<float> want =
      testing::reference_conv(s, x, w, b, c.residual ? z : std::vector<float>{}, activation(c.act));
  const Tensor& t = (*got)[0].tensor;
  ASSERT_EQ(t.size(), static_cast<int64_t>(want.size()));
  // Sums of 9*C products of [-1, 1] values; the transforms add a few roundings.
  const double tol = 2e-5 * (2.0 + std::sqrt(static_cast<double>(9 * c.C)));
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::abs(t.data<float>()[i] - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ++bad;
      ADD_FAILURE() << "at " << i << ": " << t.data<float>()[i] << " vs " << want[i];
    }
}

class BlockedWinograd : public ::testing::Test {
 protected:
  void SetUp() override {
    // The blocked layout and its Winograd run at AVX2 and AVX-512 (kernels/simd/); the portable
    // path has no blocked regions.
    if (!cpu_has_avx2())
      GTEST_SKIP() << "this CPU has no AVX2 (or DLRT_CPU_ISA caps it below): the blocked layout needs AVX2 or AVX-512";
  }
};

TEST_F(BlockedWinograd, MatchesReference) {
  ScopedWinograd on(true);
  uint32_t seed = 1;
  for (int threads : {1, 3}) {
    Case c;  // 7 x 8 tiles
    check(c, threads, 1, seed++);
    c.N = 2, c.C = 72, c.M = 56, c.H = 33, c.W = 17;  // partial blocks in and out, partial tiles
    c.pt = 0, c.pl = 2, c.pb = 2, c.pr = 1;
    c.residual = true;
    c.act = "Relu";
    check(c, threads, 2, seed++);
    c = Case();
    c.C = 128, c.M = 48, c.H = 20, c.W = 40, c.act = "none";  // 5 x 10 tiles
    check(c, threads, 1, seed++);
    c.pt = c.pl = c.pb = c.pr = 0;
    check(c, threads, 1, seed++);
    c = Case();
    c.C = 64, c.M = 48, c.H = c.W = 96, c.residual = true;  // V and M over kWinograd4BlockBytes: 2 blocks of rows
    check(c, threads, 1, seed++);
  }
}

// Planes under 32 tiles, fewer than 64 input or 48 output channels, and the
// switch off: the direct blocked conv, with the same result.
TEST_F(BlockedWinograd, OtherShapesRunDirect) {
  if (!cpu_has_avx512())
    GTEST_SKIP() << "which shapes run direct is AVX-512's choice (docs/performance-decisions.md); at AVX2 "
                    "F(4x4, 3x3) takes every shape whose filters fit, see ConvWinogradAvx2";
  uint32_t seed = 20;
  Case c;
  c.H = c.W = 20;  // 5 x 5 tiles
  {
    ScopedWinograd on(true);
    check(c, 2, 0, seed++);
    c = Case();
    c.C = 48;
    check(c, 2, 0, seed++);
    c = Case();
    c.M = 40;
    check(c, 2, 0, seed++);
  }
}

// The switch off: the direct blocked conv at every width with blocked regions.
TEST_F(BlockedWinograd, SwitchedOffRunsDirect) {
  ScopedWinograd off(false);
  check(Case(), 2, 0, 27);
}

}  // namespace
}  // namespace dlrt::cpu
