// Winograd F(2x2, 3x3) and F(4x4, 3x3) (backends/cpu/kernels/conv_winograd.h)
// through conv_run, as a model's Conv with pre-packed weights runs it,
// against a double-precision reference: output sizes that end in partial
// runs of 8 tiles (16 for F(4x4, 3x3)) and odd rows, every padding it
// takes, channel counts off the GEMM tile, batches, bias, residual and
// activations; and the shapes it must leave to other paths. cpu_isa() is
// capped at AVX2 for most F(2x2, 3x3) cases (forced there: AVX2 picks F(4x4,
// 3x3) where its filters fit, ConvWinogradAvx2); on AVX-512 CPUs F(4x4, 3x3)
// runs 64-128 input channels on planes of 32+ tiles, F(2x2, 3x3) the other
// convs of 128+ input channels, with the AVX-512 GEMM between the transforms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "core/thread_pool.h"
#include "backends/cpu/ops/conv_impl.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

struct Case {
  int64_t N = 1, C = 8, M = 8, H = 14, W = 14;
  int64_t pt = 1, pl = 1, pb = 1, pr = 1;  // pads
  int64_t stride = 1, dilation = 1, group = 1, k = 3;
  bool bias = false, residual = false;
  Activation act;
  int64_t out_h() const { return (H + pt + pb - dilation * (k - 1) - 1) / stride + 1; }
  int64_t out_w() const { return (W + pl + pr - dilation * (k - 1) - 1) / stride + 1; }
  std::string describe() const {
    return "N" + std::to_string(N) + " C" + std::to_string(C) + " M" + std::to_string(M) + " " + std::to_string(H) +
           "x" + std::to_string(W) + " pads " + std::to_string(pt) + "," + std::to_string(pl) + "," +
           std::to_string(pb) + "," + std::to_string(pr) + " s" + std::to_string(stride) + " d" +
           std::to_string(dilation) + " g" + std::to_string(group) + " k" + std::to_string(k);
  }
};

// Conv through conv_run with pre-packed weights; the Winograd runs it added
// to *runs, those of F(4x4, 3x3) to *runs4 (when given).
std::vector<float> run(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& b, const std::vector<float>& z, uint64_t* runs,
                       uint64_t* runs4 = nullptr) {
  ir::Node node;
  node.name = "winograd_conv";
  node.attributes = {{"strides", attr_ints({c.stride, c.stride})},
                     {"dilations", attr_ints({c.dilation, c.dilation})},
                     {"pads", attr_ints({c.pt, c.pl, c.pb, c.pr})},
                     {"group", attr_int(c.group)}};
  const Tensor tx = Tensor::from_vector<float>({c.N, c.C, c.H, c.W}, x);
  const Tensor tw = Tensor::from_vector<float>({c.M, c.C / c.group, c.k, c.k}, w);
  const Tensor tb = c.bias ? Tensor::from_vector<float>({c.M}, b) : Tensor();
  const Tensor tz = c.residual ? Tensor::from_vector<float>({c.N, c.M, c.out_h(), c.out_w()}, z) : Tensor();
  const uint64_t before = conv_winograd_runs(), before4 = conv_winograd4_runs();
  Result<Tensor> y = testing::run_conv_prepacked(node, {tx, tw, tb, tz}, c.act);
  *runs = conv_winograd_runs() - before;
  if (runs4) *runs4 = conv_winograd4_runs() - before4;
  EXPECT_TRUE(y.ok()) << y.status().to_string();
  if (!y.ok()) return {};
  return std::vector<float>(y->data<float>(), y->data<float>() + y->size());
}

// Winograd (forced on) against a double reference; `expect_runs`: images
// it must have run, `expect_runs4` of them with F(4x4, 3x3).
void check(const Case& c, std::mt19937& rng, uint64_t expect_runs, uint64_t expect_runs4 = 0) {
  SCOPED_TRACE(c.describe());
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t OH = c.out_h(), OW = c.out_w(), Cg = c.C / c.group;
  std::vector<float> x(static_cast<size_t>(c.N * c.C * c.H * c.W)), w(static_cast<size_t>(c.M * Cg * c.k * c.k));
  std::vector<float> b(static_cast<size_t>(c.M)), z(static_cast<size_t>(c.N * c.M * OH * OW));
  for (auto* v : {&x, &w, &b, &z})
    for (auto& e : *v) e = dist(rng);
  testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.group = c.group, s.H = c.H, s.W = c.W, s.KH = s.KW = c.k;
  s.SH = s.SW = c.stride, s.DH = s.DW = c.dilation, s.PT = c.pt, s.PL = c.pl, s.OH = OH, s.OW = OW;
  const std::vector<float> want = testing::reference_conv(s, x, w, c.bias ? b : std::vector<float>{},
                                                          c.residual ? z : std::vector<float>{}, c.act);
  uint64_t runs = 0, runs4 = 0;
  std::vector<float> got;
  {
    ScopedWinograd on(true);
    got = run(c, x, w, b, z, &runs, &runs4);
  }
  EXPECT_EQ(runs, expect_runs) << "Winograd images run";
  EXPECT_EQ(runs4, expect_runs4) << "F(4x4, 3x3) images run";
  ASSERT_EQ(got.size(), want.size());
  // Sums of 9*Cg products of [-1, 1] values; the transforms add a few roundings.
  const double tol = 2e-5 * (2.0 + std::sqrt(static_cast<double>(9 * Cg)));
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ++bad;
      ADD_FAILURE() << "at " << i << ": " << got[i] << " vs " << want[i];
    }
}

class ConvWinograd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (detected_cpu_isa() < CpuIsa::kAvx2)
      GTEST_SKIP() << "this CPU has no AVX2: the Winograd path runs on AVX2 CPUs only";
  }
  ScopedCpuIsa avx2_{CpuIsa::kAvx2};  // AVX-512 CPUs keep the direct path; test the AVX2 one there too
  ScopedWinogradTile f2_{2};          // AVX2 picks F(4x4, 3x3) where its filters fit (ConvWinogradAvx2)
};

// Without a forced variant, AVX2 runs F(4x4, 3x3) wherever its filters (36 x
// M x C floats) fit kWinogradMaxBytes, bounded by its own scratch, and
// F(2x2, 3x3) for wider convs.
TEST(ConvWinogradAvx2, F4x4WhereItsFiltersFit) {
  if (detected_cpu_isa() < CpuIsa::kAvx2) GTEST_SKIP() << "this CPU has no AVX2: the AVX2 choice does not apply";
  ScopedCpuIsa avx2(CpuIsa::kAvx2);
  std::mt19937 rng(46);
  Case c;
  c.C = 16, c.M = 16, c.H = c.W = 14;
  check(c, rng, 1, 1);
  c.C = 5, c.M = 7, c.H = 13, c.W = 11;
  check(c, rng, 1, 1);
  // 8 -> 8 on 400 x 400: F(2x2, 3x3)'s whole-image scratch would pass the bound, F(4x4, 3x3)'s blocks do not.
  c.C = 8, c.M = 8, c.H = c.W = 400;
  check(c, rng, 1, 1);
  // 224 x 224 channels: 7.2 MB of F(4x4, 3x3) filters, 3.2 MB of F(2x2, 3x3) ones.
  c.C = 224, c.M = 224, c.H = c.W = 10;
  c.bias = true;
  check(c, rng, 1, 0);
}

TEST_F(ConvWinograd, MatchesReferenceOnEveryEdge) {
  std::mt19937 rng(41);
  Case c;
  c.C = 16, c.M = 16, c.H = c.W = 14;  // resnet18's layer3 plane, few channels
  check(c, rng, 1);
  c.H = 11, c.W = 13;  // odd rows and columns, a last run of 7 tiles
  check(c, rng, 1);
  c.H = 9, c.W = 40;  // runs of 8, 8 and 4 tiles per row
  check(c, rng, 1);
  c.H = 50, c.W = 3;  // 2-tile rows: a run's spare lanes reach three rows on
  check(c, rng, 1);
  c.H = 12, c.W = 20, c.pt = c.pl = c.pb = c.pr = 0;  // unpadded: 10 x 18
  check(c, rng, 1);
  c.H = c.W = 10, c.pt = c.pl = c.pb = c.pr = 2;  // pad 2: 12 x 12
  check(c, rng, 1);
  c.H = 12, c.W = 14, c.pt = 1, c.pl = 0, c.pb = 0, c.pr = 2;  // asymmetric: 11 x 14
  check(c, rng, 1);
  c = Case{};
  c.C = 5, c.M = 7, c.H = c.W = 12;  // channels off the GEMM tile
  check(c, rng, 1);
  c.C = 70, c.M = 37, c.H = c.W = 16;  // K and M past one 6 x 16 tile
  check(c, rng, 1);
}

TEST_F(ConvWinograd, BatchesAndEpilogues) {
  std::mt19937 rng(42);
  Activation relu;
  relu.kind = ActKind::kRelu;
  Activation sig;
  sig.kind = ActKind::kSigmoid;
  for (int variant = 0; variant < 3; ++variant) {
    Case c;
    c.N = 2, c.C = 12, c.M = 10, c.H = 13, c.W = 15;
    c.bias = variant != 1;
    c.residual = variant >= 1;
    c.act = variant == 0 ? Activation{} : variant == 1 ? relu : sig;
    check(c, rng, 2);
  }
}

TEST_F(ConvWinograd, LeavesOtherShapesToOtherPaths) {
  std::mt19937 rng(43);
  Case c;
  c.H = c.W = 16;
  c.stride = 2;  // strided
  check(c, rng, 0);
  c.stride = 1, c.dilation = 2;  // dilated
  check(c, rng, 0);
  c.dilation = 1, c.group = 2;  // grouped
  check(c, rng, 0);
  c.group = 1, c.k = 5, c.pt = c.pl = c.pb = c.pr = 2;  // 5x5
  check(c, rng, 0);
  c.k = 3, c.pt = c.pl = c.pb = c.pr = 1, c.H = c.W = 7;  // 7x7 outputs: under kWinogradMinPlane
  check(c, rng, 0);
  // A large image: its V and M scratch (16 x (8 + 8) floats x 40000 tiles, 41 MB) would pass
  // kWinogradMaxScratchBytes.
  c.C = 8, c.M = 8, c.H = c.W = 400;
  check(c, rng, 0);
  // Switched off: the same conv that ran above runs elsewhere.
  Case on;
  std::vector<float> x(static_cast<size_t>(on.C * on.H * on.W), 0.5f), w(static_cast<size_t>(on.M * on.C * 9), 0.25f);
  std::vector<float> b, z;
  uint64_t runs = 0;
  ScopedWinograd off(false);
  const std::vector<float> y = run(on, x, w, b, z, &runs);
  EXPECT_EQ(runs, 0u);
  ASSERT_FALSE(y.empty());
  EXPECT_FLOAT_EQ(y[on.W + 1], 0.5f * 0.25f * 9 * on.C);  // an interior output: every tap inside
}

// On AVX-512 (no cap): 128+ input channels run Winograd, through the
// AVX-512 GEMM on filters packed for its tile; 64 keep the direct path
// (on planes too small for F(4x4, 3x3)).
// F(2x2, 3x3)'s transforms at 128 bits (NEON's width; SSE on x86), which no
// caller chooses yet: conv_winograd called directly with cpu_isa() at neon,
// on planes ending in partial runs of 4 tiles, every padding, against the
// double reference.
TEST(ConvWinograd2, TransformsAt128Bits) {
  ScopedCpuIsa neon(CpuIsa::kNeon);
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> dist(-1, 1);
  ThreadPool pool(2);
  const uint64_t calls0 = simd_calls("winograd2_input_transform", SimdWidth::k128);
  for (int64_t hw : {5, 9, 14, 17})
    for (int64_t pad = 0; pad <= 2; ++pad) {
      const int64_t C = 5, M = 7, O = hw + 2 * pad - 2;
      std::vector<float> x(static_cast<size_t>(C * hw * hw)), w(static_cast<size_t>(M * C * 9)),
          y(static_cast<size_t>(M * O * O));
      for (auto* v : {&x, &w})
        for (auto& e : *v) e = dist(rng);
      WinogradGeometry g;
      g.in_h = g.in_w = hw, g.out_h = g.out_w = O, g.pad_top = g.pad_left = pad;
      conv_winograd(*winograd_filters(w.data(), M, C), g, x.data(), y.data(), GemmEpilogue{}, pool);
      testing::RefConvShape s;
      s.C = C, s.M = M, s.H = s.W = hw, s.KH = s.KW = 3, s.PT = s.PL = pad, s.OH = s.OW = O;
      const std::vector<float> want = testing::reference_conv(s, x, w, {}, {}, Activation{});
      const double tol = 2e-5 * (2.0 + std::sqrt(9.0 * C));
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y[i], want[i], tol * (1 + std::abs(want[i]))) << hw << "x" << hw << " pad " << pad << " at " << i;
    }
  EXPECT_GT(simd_calls("winograd2_input_transform", SimdWidth::k128), calls0);
}

TEST(ConvWinogradAvx512, WideConvsOnly) {
  if (cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "no AVX-512 here (detected " << cpu_isa_name(detected_cpu_isa()) << ", in use "
                 << cpu_isa_name(cpu_isa()) << ", DLRT_CPU_ISA caps it): the AVX-512 channel threshold does not apply";
  std::mt19937 rng(44);
  Case c;
  c.C = 128, c.M = 136, c.H = 13, c.W = 11;  // M past 2 tiles of 48, partial runs of tiles
  c.bias = true, c.residual = true;
  c.act.kind = ActKind::kRelu;
  check(c, rng, 1);
  c.N = 2, c.C = 130, c.M = 9, c.H = c.W = 10, c.residual = false;
  check(c, rng, 2);
  c.N = 1, c.C = 64, c.M = 64, c.H = c.W = 16;  // resnet18's layer1 width on 16 4x4 tiles: direct
  check(c, rng, 0);
}

// F(4x4, 3x3) is bounded by its own scratch (blocks of tile rows), not by
// F(2x2, 3x3)'s whole-image V and M: a plane whose F(2x2, 3x3) scratch
// passes kWinogradMaxScratchBytes still runs F(4x4, 3x3), batch 2 included;
// one whose single tile row passes it too runs the direct path.
TEST(ConvWinogradAvx512, LargePlanesByTheirOwnScratch) {
  if (cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "no AVX-512 here (detected " << cpu_isa_name(detected_cpu_isa()) << ", in use "
                 << cpu_isa_name(cpu_isa()) << ", DLRT_CPU_ISA caps it): F(4x4, 3x3) runs on AVX-512 only";
  std::mt19937 rng(45);
  Case c;
  // 16 x (72 + 20) floats x 80 x 80 2x2 tiles: 37.7 MB as F(2x2, 3x3); 7.6 MB of padded planes.
  c.N = 2, c.C = 72, c.M = 20, c.H = 161, c.W = 157;
  c.bias = true;
  c.act.kind = ActKind::kRelu;
  check(c, rng, 2, 2);
  // One tile row of 1716 tiles: 36 x (128 + 8) floats each, 33.6 MB: past the bound.
  c.N = 1, c.C = 128, c.M = 8, c.H = 2, c.W = 6862;
  c.act = Activation{};
  check(c, rng, 0, 0);
  c.W = 6000;  // 1500 tiles, 29.4 MB: within
  check(c, rng, 1, 1);
}

// F(4x4, 3x3) on AVX-512: 64-128 input channels on planes of 32+ 4x4 tiles.
// Partial tiles at the right and bottom edges, partial runs of 16 tiles,
// several blocks of tile rows (V and M of a 75 x 75 plane pass
// kWinograd4BlockBytes),
// every padding, channel counts off the 8 x 48 tile, batches, bias,
// residual and activations; and the planes and widths it leaves to F(2x2,
// 3x3) or the direct path.
TEST(ConvWinogradAvx512, Winograd4MatchesReference) {
  if (cpu_isa() < CpuIsa::kAvx512)
    GTEST_SKIP() << "no AVX-512 here (detected " << cpu_isa_name(detected_cpu_isa()) << ", in use "
                 << cpu_isa_name(cpu_isa()) << ", DLRT_CPU_ISA caps it): F(4x4, 3x3) runs on AVX-512 only";
  std::mt19937 rng(45);
  Case c;
  c.C = 64, c.M = 64, c.H = c.W = 24;  // 6 x 6 tiles
  check(c, rng, 1, 1);
  c.H = 25, c.W = 27;  // 7 x 7 tiles, the last row and column of each partial
  check(c, rng, 1, 1);
  // 11 x 11 tiles of 64 + 64 channels: V and M 2.2 MiB, one block.
  c.H = c.W = 41;
  check(c, rng, 1, 1);
  // 19 x 19 tiles of 64 + 16 channels: V and M 4.2 MiB, so two blocks of
  // 10 and 9 tile rows; the bottom tiles are partial (rows past the plane
  // would land on the next channel's top rows, stored by the first block).
  c.M = 16, c.H = c.W = 75;
  check(c, rng, 1, 1);
  c.M = 64;
  c.H = 26, c.W = 30, c.pt = c.pl = c.pb = c.pr = 0;  // unpadded: 24 x 28
  check(c, rng, 1, 1);
  c.H = c.W = 22, c.pt = c.pl = c.pb = c.pr = 2;  // pad 2: 24 x 24
  check(c, rng, 1, 1);
  c.H = 24, c.W = 26, c.pt = 1, c.pl = 0, c.pb = 0, c.pr = 2;  // asymmetric: 23 x 26
  check(c, rng, 1, 1);
  c = Case{};
  c.C = 70, c.M = 37, c.H = c.W = 28;  // channels off the tile; resnet18's layer2 plane
  check(c, rng, 1, 1);
  c.C = 128, c.M = 136, c.H = c.W = 28, c.bias = c.residual = true;  // layer2's width, M past 2 tiles of 48
  c.act.kind = ActKind::kRelu;
  check(c, rng, 1, 1);
  c.C = 64, c.M = 24, c.H = 130, c.W = 14, c.residual = false;  // one group of 4 tiles per tile row, the last partial
  check(c, rng, 1, 1);
  c.N = 2, c.C = 96, c.M = 20, c.H = 23, c.W = 35;  // 9 tiles a row: groups of 4 straddle rows
  c.act.kind = ActKind::kSigmoid;
  check(c, rng, 2, 2);
  // Left to other paths: 129+ channels (F(2x2, 3x3)), planes under 32 tiles
  // (F(2x2, 3x3) from 128 channels, else direct), under 64 channels (direct).
  c = Case{};
  c.C = 130, c.M = 16, c.H = c.W = 28;
  check(c, rng, 1, 0);
  c.C = 128, c.H = c.W = 20;  // 25 tiles
  check(c, rng, 1, 0);
  c.C = 64, c.H = c.W = 20;
  check(c, rng, 0, 0);
  c.C = 48, c.H = c.W = 28;
  check(c, rng, 0, 0);
}

}  // namespace
}  // namespace dlrt::cpu
