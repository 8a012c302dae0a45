// The direct float32 convolution (backends/cpu/kernels/conv_direct.h) against the
// im2col/GEMM path and a naive reference loop, through conv_run with weights
// pre-packed as a model's constant would be. The ConvDirectIsa tests run once
// per tile and width: avx512 (the 8x48 kernel; AVX-512 CPUs only), avx2 (the
// 6x16 kernel at 256 bits: cpu_isa() capped at AVX2 while the weights are
// packed and the conv runs, so they are packed in the AVX2 layout) and neon
// (the same 6x16 kernel at 128 bits: NEON on aarch64, SSE on x86).
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"
#include "conv_test_util.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

struct Case {
  int64_t N = 1, C = 1, M = 1, group = 1;
  std::vector<int64_t> in, k, s, d, pb, pe;  // 1 or 2 spatial dims
  bool bias = false, residual = false;
  Activation act;
};

std::string describe(const Case& c) {
  auto v = [](const std::vector<int64_t>& a) {
    std::string s;
    for (int64_t x : a) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
  };
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " g" +
         std::to_string(c.group) + " in " + v(c.in) + " k " + v(c.k) + " s " + v(c.s) + " d " + v(c.d) + " pads " +
         v(c.pb) + "/" + v(c.pe) + (c.bias ? " bias" : "") + (c.residual ? " residual" : "") + " act " +
         std::to_string(static_cast<int>(c.act.kind));
}

std::vector<int64_t> out_dims(const Case& c) {
  std::vector<int64_t> o;
  for (size_t i = 0; i < c.in.size(); ++i)
    o.push_back((c.in[i] + c.pb[i] + c.pe[i] - ((c.k[i] - 1) * c.d[i] + 1)) / c.s[i] + 1);
  return o;
}

// act(conv + bias + z) by the definition, in double.
std::vector<float> reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, const std::vector<float>& z) {
  const bool two = c.in.size() == 2;
  const std::vector<int64_t> od = out_dims(c);
  testing::RefConvShape s;
  s.N = c.N, s.C = c.C, s.M = c.M, s.group = c.group;
  s.H = two ? c.in[0] : 1, s.W = c.in.back(), s.KH = two ? c.k[0] : 1, s.KW = c.k.back();
  s.SH = two ? c.s[0] : 1, s.SW = c.s.back(), s.DH = two ? c.d[0] : 1, s.DW = c.d.back();
  s.PT = two ? c.pb[0] : 0, s.PL = c.pb.back(), s.OH = two ? od[0] : 1, s.OW = od.back();
  return testing::reference_conv(s, x, w, c.bias ? b : std::vector<float>{}, c.residual ? z : std::vector<float>{},
                                 c.act);
}

// Runs Conv (or FusedConv's stage: residual input 3, activation) through
// conv_run with the weights pre-packed.
Result<Tensor> run(const Case& c, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z, int threads = 2) {
  ir::Node node;
  node.name = "direct_conv";
  std::vector<int64_t> pads = c.pb;
  pads.insert(pads.end(), c.pe.begin(), c.pe.end());
  node.attributes = {{"strides", attr_ints(c.s)}, {"dilations", attr_ints(c.d)}, {"pads", attr_ints(pads)},
                     {"group", attr_int(c.group)}};
  return testing::run_conv_prepacked(node, {x, w, b, z}, c.act, threads);
}

Shape shape_of(int64_t a, int64_t b, const std::vector<int64_t>& sp) {
  Shape s = {a, b};
  s.insert(s.end(), sp.begin(), sp.end());
  return s;
}

// Direct path vs reference, and vs the GEMM path; `expect_direct`: the direct path must have run.
void check(const Case& c, std::mt19937& rng, bool expect_direct = true) {
  SCOPED_TRACE(describe(c));
  std::uniform_real_distribution<float> dist(-1, 1);
  const Shape xs = shape_of(c.N, c.C, c.in), ws = shape_of(c.M, c.C / c.group, c.k), ys = shape_of(c.N, c.M, out_dims(c));
  std::vector<float> x(static_cast<size_t>(element_count(xs))), w(static_cast<size_t>(element_count(ws))), b, z;
  for (auto& v : x) v = dist(rng);
  for (auto& v : w) v = dist(rng);
  if (c.bias) {
    b.resize(static_cast<size_t>(c.M));
    for (auto& v : b) v = dist(rng);
  }
  if (c.residual) {
    z.resize(static_cast<size_t>(element_count(ys)));
    for (auto& v : z) v = dist(rng);
  }
  const Tensor tx = Tensor::from_vector<float>(xs, x), tw = Tensor::from_vector<float>(ws, w);
  const Tensor tb = c.bias ? Tensor::from_vector<float>({c.M}, b) : Tensor();
  const Tensor tz = c.residual ? Tensor::from_vector<float>(ys, z) : Tensor();
  const std::vector<float> want = reference(c, x, w, b, z);

  const uint64_t before = conv_direct_runs();
  Result<Tensor> direct = Status::Ok();
  {
    // Forced on (whatever DLRT_CONV_DIRECT says) where the direct path is expected.
    std::optional<ScopedConvDirect> on;
    if (expect_direct) on.emplace(true);
    direct = run(c, tx, tw, tb, tz);
  }
  ASSERT_TRUE(direct.ok()) << direct.status().to_string();
  if (expect_direct) {
    EXPECT_EQ(conv_direct_runs() - before, static_cast<uint64_t>(c.N * c.group)) << "the direct path did not run";
  }
  Result<Tensor> gemm = Status::Ok();
  {
    ScopedConvDirect off(false);
    ScopedWinograd no_winograd(false);  // the GEMM path itself, not Winograd's
    const uint64_t b0 = conv_direct_runs();
    gemm = run(c, tx, tw, tb, tz);
    EXPECT_EQ(conv_direct_runs(), b0) << "DLRT_CONV_DIRECT off still ran the direct path";
  }
  ASSERT_TRUE(gemm.ok()) << gemm.status().to_string();
  ASSERT_EQ(direct->shape(), ys);
  ASSERT_EQ(gemm->shape(), ys);
  const float* d = direct->data<float>();
  const float* gm = gemm->data<float>();
  // Sums of up to ~1000 products of [-1, 1] values: relative 1e-5 of the magnitude they add up from.
  const double scale = std::sqrt(static_cast<double>(c.C / c.group * element_count(Shape(c.k.begin(), c.k.end()))));
  const double tol = 1e-5 * (2.0 + scale);
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::abs(d[i] - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ++bad;
      ADD_FAILURE() << "direct vs reference at " << i << ": " << d[i] << " vs " << want[i];
    }
    if (!(std::abs(d[i] - gm[i]) <= tol * (1 + std::abs(gm[i])))) {
      ++bad;
      ADD_FAILURE() << "direct vs GEMM path at " << i << ": " << d[i] << " vs " << gm[i];
    }
  }
}

Case make(int64_t C, int64_t M, int64_t group, std::vector<int64_t> in, std::vector<int64_t> k,
          std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> pb, std::vector<int64_t> pe) {
  Case c;
  c.C = C, c.M = M, c.group = group;
  c.in = std::move(in), c.k = std::move(k), c.s = std::move(s), c.d = std::move(d), c.pb = std::move(pb),
  c.pe = std::move(pe);
  return c;
}

// The direct kernels, one per packed-weight tile, each run under a cap of
// cpu_isa() at its ISA (the weights are packed for the layout of cpu_isa()).
class ConvDirectIsa : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    const CpuIsa want = GetParam();
    if (detected_cpu_isa() < want)
      GTEST_SKIP() << "this CPU has no " << cpu_isa_name(want) << ": the " << cpu_isa_name(want)
                   << " direct kernel cannot run here";
    if (cpu_isa() < want)
      GTEST_SKIP() << "cpu_isa() is capped at " << cpu_isa_name(cpu_isa()) << " (DLRT_CPU_ISA): the "
                   << cpu_isa_name(want) << " direct kernel is not chosen";
    cap_.emplace(want);
    ASSERT_EQ(cpu_isa(), want);
  }
  void TearDown() override { cap_.reset(); }

 private:
  std::optional<ScopedCpuIsa> cap_;
};

INSTANTIATE_TEST_SUITE_P(Tiles, ConvDirectIsa, ::testing::Values(CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kNeon),
                         [](const ::testing::TestParamInfo<CpuIsa>& info) {
                           return std::string(cpu_isa_name(info.param));
                         });

// Output planes of at most 64 positions on AVX2 (kernels larger than 1x1),
// and patch embeddings (kernel = stride) of any size on AVX2 and AVX-512,
// run as Yᵀ = im2colᵀ · Wᵀ against Wᵀ packed on first use: square and
// non-square planes and kernels, strides, dilation, asymmetric padding,
// channel counts off the 6 x 16 and 8 x 48 tiles (M 20, 40; K odd), batch
// 2, bias, residual and activations, against the reference. On AVX-512 the
// small planes take the direct or GEMM path instead (PlanGeometry).
// The neon level's own path choices around the direct conv (transposed,
// Winograd) are not the x86 ones; its direct-path policy is AVX2's (the same
// 6 x 16 tile), checked at avx2.
#define SKIP_POLICY_AT_NEON()                                                                              \
  if (GetParam() == CpuIsa::kNeon)                                                                         \
  GTEST_SKIP() << "path choices around the direct conv are x86's here; the neon tile's policy is AVX2's, " \
                  "tested at avx2"

TEST_P(ConvDirectIsa, SmallPlanesAndPatchesRunTransposed) {
  SKIP_POLICY_AT_NEON();
  const bool avx2 = GetParam() == CpuIsa::kAvx2;
  std::mt19937 rng(31);
  std::vector<Case> cases{make(8, 16, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                          make(13, 20, 1, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
                          make(24, 40, 1, {7, 7}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {1, 1}),
                          make(5, 7, 1, {9, 6}, {3, 2}, {1, 1}, {2, 1}, {1, 0}, {1, 1}),
                          make(3, 33, 1, {8, 8}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),
                          make(6, 9, 1, {1, 50}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}),
                          // Patch embeddings (kernel = stride): 12x12 and 6x5 outputs.
                          make(3, 20, 1, {96, 96}, {8, 8}, {8, 8}, {1, 1}, {0, 0}, {0, 0}),
                          make(2, 17, 1, {24, 23}, {4, 4}, {4, 4}, {1, 1}, {0, 0}, {0, 0})};
  cases[0].bias = true;
  cases[1].residual = true;
  cases[1].act.kind = ActKind::kRelu;
  cases[2].bias = cases[2].residual = true;
  cases[2].act.kind = ActKind::kClip;
  cases[2].act.p0 = -0.5f;
  cases[2].act.p1 = 0.5f;
  cases[3].N = 2;
  cases[3].act.kind = ActKind::kSigmoid;
  cases[4].bias = true;
  cases[5].N = 2;
  cases[6].bias = true;
  cases[7].N = 2;
  cases[7].residual = true;
  for (size_t i = avx2 ? 0 : 6; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const uint64_t before = conv_transposed_runs();
    check(c, rng, false);
    if (HasFatalFailure()) return;
    EXPECT_GE(conv_transposed_runs() - before, static_cast<uint64_t>(c.N)) << describe(c) << ": not transposed";
  }
}

// On AVX-512, planes under the tile's 48 columns run transposed where that
// wastes less of the 8 x 48 tile (positions in rows of 8, channels in panels
// of 48): 200 channels on a 5x2 plane (58% of the tile against 21%), with
// bias, residual and an activation, batch 2, over 1 and 2 threads' epilogue
// blocks; 64 channels on a 10x4 plane stay on W · im2col (83% against 67%).
TEST(ConvDirect, Avx512SmallPlanesRunTransposedWhereTheTileWastesLess) {
  if (cpu_isa() < CpuIsa::kAvx512) GTEST_SKIP() << "cpu_isa() is below AVX-512: the 8 x 48 tile does not run";
  std::mt19937 rng(37);
  Case few = make(24, 200, 1, {5, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  few.N = 2;
  few.bias = few.residual = true;
  few.act.kind = ActKind::kRelu;
  uint64_t before = conv_transposed_runs();
  check(few, rng, false);
  if (HasFatalFailure()) return;
  EXPECT_GE(conv_transposed_runs() - before, 2u) << "a 5x2 plane of 200 channels did not run transposed";
  before = conv_transposed_runs();
  check(make(16, 64, 1, {10, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_transposed_runs(), before) << "a 10x4 plane of 64 channels ran transposed";
}

TEST(ConvDirect, PlanGeometry) {
  ConvDirectPlan p;
  ConvDirectGeometry g;
  // resnet18 layer1: 3x3 pad 1 on 56x56 -> one phase of 58x58, grid rows of 58.
  g.channels = 64, g.in_h = g.in_w = g.out_h = g.out_w = 56, g.kh = g.kw = 3, g.pad_top = g.pad_left = 1;
  ASSERT_TRUE(conv_direct_plan(g, &p));
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.nphase, 1);
  EXPECT_EQ(p.hq, 58);
  EXPECT_EQ(p.wq, 58);
  EXPECT_EQ(p.grid, 56 * 58);
  EXPECT_EQ(p.k, 576);
  std::vector<int64_t> off(static_cast<size_t>(p.k));
  conv_direct_offsets(p, off.data());
  EXPECT_EQ(off[4], 58 + 1);                // channel 0, tap (1, 1)
  EXPECT_EQ(off[9 + 2], 58 * 58 + 2);       // channel 1, tap (0, 2)
  // Stride 2, 3x3 pad 1 on 56x56 -> 28x28: four phases of 29x29.
  g.out_h = g.out_w = 28, g.sh = g.sw = 2;
  ASSERT_TRUE(conv_direct_plan(g, &p));
  EXPECT_EQ(p.nphase, 4);
  EXPECT_EQ(p.hq, 29);
  EXPECT_EQ(p.wq, 29);
  conv_direct_offsets(p, off.data());
  EXPECT_EQ(off[8], p.phase_slot[0] * 29 * 29 + 29 + 1);  // tap (2, 2): phase (0, 0), one row and column on
  // 1x1 stride 2 (resnet's downsample): only phase (0, 0) is copied.
  g.kh = g.kw = 1, g.pad_top = g.pad_left = 0;
  ASSERT_TRUE(conv_direct_plan(g, &p));
  EXPECT_EQ(p.nphase, 1);
  EXPECT_EQ(p.wq, 28);
  // 1x1 stride 1 unpadded: the input itself.
  g.sh = g.sw = 1, g.out_h = g.out_w = 56;
  ASSERT_TRUE(conv_direct_plan(g, &p));
  EXPECT_FALSE(p.copy);
  EXPECT_EQ(p.grid, 56 * 56);
  // Shared pad columns (the AVX2 kernel's layout): 3x3 pad 1 on 7x7 -> pitch 8, not 9.
  g.in_h = g.in_w = g.out_h = g.out_w = 7, g.kh = g.kw = 3, g.pad_top = g.pad_left = 1;
  ASSERT_TRUE(conv_direct_plan(g, &p, true));
  EXPECT_TRUE(p.shared_pad);
  EXPECT_EQ(p.wq, 8);
  EXPECT_EQ(p.grid, 7 * 8);
  conv_direct_offsets(p, off.data());
  EXPECT_EQ(off[4], 8 + 1);  // tap (1, 1)
  // Stride 2 on 56x56 (phase columns 0..28 hold data 1..28 and 0..27): no shorter pitch.
  g.in_h = g.in_w = 56, g.out_h = g.out_w = 28, g.sh = g.sw = 2;
  ASSERT_TRUE(conv_direct_plan(g, &p, true));
  EXPECT_FALSE(p.shared_pad);
  EXPECT_EQ(p.wq, 29);
  // Pad 2 on the left only (1x3 taps): the leading zeros need a pitch of in_w + 2.
  g.sh = g.sw = 1, g.in_h = g.out_h = 5, g.in_w = 10, g.out_w = 10, g.kh = 1, g.kw = 3, g.pad_top = 0,
  g.pad_left = 2;
  ASSERT_TRUE(conv_direct_plan(g, &p, true));
  EXPECT_EQ(p.wq, 12);
  // Tap columns (the AVX2 kernel on 12-20 wide outputs): 3x3 pad 1 on 14x14,
  // one 16 x 14 plane per tap column, no dropped grid columns.
  g.in_h = g.in_w = g.out_h = g.out_w = 14, g.kh = g.kw = 3, g.pad_top = g.pad_left = 1;
  EXPECT_TRUE(conv_direct_tap_columns(g));
  ASSERT_TRUE(conv_direct_plan(g, &p, true, true));
  EXPECT_TRUE(p.tap_columns);
  EXPECT_EQ(p.nphase, 3);
  EXPECT_EQ(p.hq, 16);
  EXPECT_EQ(p.wq, 14);
  EXPECT_EQ(p.grid, 14 * 14);
  conv_direct_offsets(p, off.data());
  EXPECT_EQ(off[5], 2 * 16 * 14 + 14);            // channel 0, tap (1, 2): plane 2, one row down
  EXPECT_EQ(off[9 + 1], (3 + 1) * 16 * 14);       // channel 1, tap (0, 1): plane 3 + 1
  g.out_w = g.in_w = 7;
  EXPECT_FALSE(conv_direct_tap_columns(g));
  // Strided tap columns (mobilenet_v2's stem, 3x3/2 pad 1 on 3 x 224 x 224,
  // K 27): one plane per (row phase, tap column), rows of out_w.
  {
    ConvDirectGeometry s;
    s.channels = 3, s.in_h = s.in_w = 224, s.out_h = s.out_w = 112, s.kh = s.kw = 3, s.sh = s.sw = 2;
    s.pad_top = s.pad_left = 1;
    EXPECT_TRUE(conv_direct_tap_columns(s));
    ConvDirectPlan sp;
    ASSERT_TRUE(conv_direct_plan(s, &sp, true, true));
    EXPECT_TRUE(sp.tap_columns);
    EXPECT_EQ(sp.nphase, 6);
    EXPECT_EQ(sp.hq, 113);
    EXPECT_EQ(sp.wq, 112);
    EXPECT_EQ(sp.grid, 112 * 112);
    std::vector<int64_t> so(static_cast<size_t>(sp.k));
    conv_direct_offsets(sp, so.data());
    const int64_t plane = 113 * 112;
    EXPECT_EQ(so[5], 5 * plane);              // channel 0, tap (1, 2): row phase 1, column 2, row 0
    EXPECT_EQ(so[6], 0 * plane + 112);        // tap (2, 0): row phase 0, column 0, row 1
    EXPECT_EQ(so[9 + 4], (6 + 4) * plane);    // channel 1, tap (1, 1): plane 6 + 3 + 1
    // resnet18's 7x7/2 stem (K 147) too; a 3x3/2 of K 576 (layer2.0) and
    // 1x1/2 downsamples keep the phases.
    s.kh = s.kw = 7, s.pad_top = s.pad_left = 3;
    EXPECT_TRUE(conv_direct_tap_columns(s));
    s.channels = 64, s.kh = s.kw = 3, s.pad_top = s.pad_left = 1;
    EXPECT_FALSE(conv_direct_tap_columns(s));
    s.kh = s.kw = 1, s.pad_top = s.pad_left = 0;
    EXPECT_FALSE(conv_direct_tap_columns(s));
  }
  // The AVX-512 tile takes tap columns on outputs at most 8 wide, strided
  // too (resnet18's layer4.0 3x3/2, 14x14 -> 7x7: 49 grid columns, not 56).
  {
    ConvDirectGeometry s;
    s.channels = 256, s.in_h = s.in_w = 14, s.out_h = s.out_w = 7, s.kh = s.kw = 3, s.sh = s.sw = 2;
    s.pad_top = s.pad_left = 1;
    EXPECT_TRUE(conv_direct_tap_columns(s, CpuIsa::kAvx512));
    ConvDirectPlan sp;
    ASSERT_TRUE(conv_direct_plan(s, &sp, false, true));
    EXPECT_EQ(sp.nphase, 6);
    EXPECT_EQ(sp.wq, 7);
    EXPECT_EQ(sp.grid, 49);
    s.kh = s.kw = 1, s.pad_top = s.pad_left = 0;  // a 1x1/2 downsample keeps phase (0, 0)
    EXPECT_FALSE(conv_direct_tap_columns(s, CpuIsa::kAvx512));
    s.kh = s.kw = 3, s.pad_top = s.pad_left = 1, s.in_h = s.in_w = 28, s.out_h = s.out_w = 14;
    EXPECT_FALSE(conv_direct_tap_columns(s, CpuIsa::kAvx512));  // 14 wide
  }
  g.kh = g.kw = 1, g.in_h = g.in_w = g.out_h = g.out_w = 56, g.pad_top = g.pad_left = 0;
  // Strides past kMaxStride and negative pads are left to the GEMM path.
  g.sh = 5, g.out_h = 12;
  EXPECT_FALSE(conv_direct_plan(g, &p));
  g.sh = 1, g.out_h = 56, g.pad_top = -1;
  EXPECT_FALSE(conv_direct_plan(g, &p));
}

TEST_P(ConvDirectIsa, MatchesReferenceAndGemmPath) {
  std::mt19937 rng(21);
  // Kernels 1x1/3x3/5x5/7x7/1x3 with strides 1-3, symmetric and asymmetric pads, dilation 2.
  check(make(5, 9, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng);
  check(make(13, 17, 1, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}), rng);
  check(make(7, 8, 1, {17, 20}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}), rng);
  check(make(3, 16, 1, {30, 30}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}), rng);  // resnet's stem shape, small
  check(make(6, 10, 1, {8, 13}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}), rng);
  check(make(6, 10, 1, {13, 16}, {3, 3}, {3, 3}, {1, 1}, {2, 1}, {0, 2}), rng);
  check(make(4, 12, 1, {12, 12}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}), rng);
  check(make(4, 12, 1, {14, 17}, {3, 5}, {2, 1}, {2, 3}, {1, 0}, {3, 2}), rng);
  check(make(11, 9, 1, {9, 9}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}), rng);  // downsample: phase (0, 0) only
  check(make(11, 20, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), rng);  // pointwise: no copy
  check(make(9, 7, 1, {5, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 0}, {0, 2}), rng);    // padded 1x1: copied
  check(make(8, 24, 1, {6, 6}, {3, 3}, {3, 2}, {1, 1}, {0, 0}, {2, 1}), rng);
  check(make(7, 3, 1, {10, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng);  // fewer rows than one panel
  check(make(5, 13, 1, {9, 21}, {2, 4}, {1, 4}, {1, 1}, {0, 1}, {1, 2}), rng);  // stride 4 (kMaxStride), even taps
}

TEST_P(ConvDirectIsa, OutputWidthsAndPartialTiles) {
  std::mt19937 rng(22);
  // Output widths 1, 2, 7, 15, 49, 57: grids that end in a partial tile of
  // 1-47 columns (1-15 for the 16-column AVX2 tile: its narrow 1-4 column
  // tiles, one ymm, two).
  for (int64_t ow : {1, 2, 7, 15, 49, 57}) {
    for (int64_t oh : {1, 3, 5}) {
      check(make(5, 11, 1, {oh, ow}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng);
      check(make(6, 8, 1, {oh * 2, ow * 2}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}), rng);
      check(make(4, 9, 1, {oh, ow}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), rng);
    }
  }
  // Many M panels and columns: a grid of several column blocks, M not a multiple of 8.
  check(make(40, 70, 1, {33, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng);
  check(make(130, 20, 1, {60, 61}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng);
}

TEST_P(ConvDirectIsa, GroupsBatchAndEpilogues) {
  std::mt19937 rng(23);
  Activation relu;
  relu.kind = ActKind::kRelu;
  Activation clip;
  clip.kind = ActKind::kClip, clip.p0 = -0.3f, clip.p1 = 0.4f;
  Activation sig;
  sig.kind = ActKind::kSigmoid;
  for (int64_t group : {1, 2, 4}) {
    for (int variant = 0; variant < 4; ++variant) {
      Case c = make(4 * group + (group == 1 ? 3 : 0), 6 * group, group, {9, 10}, {3, 3}, {1 + variant % 2, 1},
                    {1, 1}, {1, 1}, {1, 0});
      c.N = 2;
      c.bias = variant != 1;
      c.residual = variant >= 2;
      c.act = variant == 0 ? Activation{} : variant == 1 ? relu : variant == 2 ? clip : sig;
      check(c, rng);
    }
  }
  // Grid rows wider than 16 (stored from the registers in two pieces per
  // vector) and narrower ones (AVX2: vectors spanning up to three grid rows)
  // with each epilogue.
  for (int64_t w : {37, 12, 5}) {
    for (int variant = 0; variant < 4; ++variant) {
      Case c = make(6, 13, 1, {11, w}, {3, 3}, {1 + variant / 2, 1}, {1, 1}, {1, 1}, {1, 1});
      c.bias = true;
      c.residual = variant != 0;
      c.act = variant == 0 ? Activation{} : variant == 1 ? relu : variant == 2 ? clip : sig;
      check(c, rng);
    }
  }
  // 7x7 outputs of a 3x3 (stride 1 on 7x7, stride 2 on 14x14 and 13x13):
  // on AVX-512 a 49-column grid whose last column rides on the full tile,
  // with M past one panel and each epilogue.
  for (int64_t stride : {1, 2}) {
    for (int variant = 0; variant < 4; ++variant) {
      const int64_t in = stride == 1 ? 7 : 13 + variant % 2;
      Case c = make(9, 21, 1, {in, in}, {3, 3}, {stride, stride}, {1, 1}, {1, 1}, {1, 1});
      c.bias = variant != 1;
      c.residual = variant >= 2;
      c.act = variant == 0 ? Activation{} : variant == 1 ? relu : variant == 2 ? clip : sig;
      check(c, rng);
    }
  }
  // Pointwise 7x7 (a 49-column grid: a 1-column last tile) with a residual and Sigmoid.
  {
    Case c = make(10, 14, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0});
    c.bias = true, c.residual = true, c.act = sig;
    check(c, rng);
  }
  // Pointwise with bias, residual and Relu (mobilenet's project + add, resnet's block end).
  Case c = make(24, 40, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0});
  c.N = 2, c.bias = true, c.residual = true, c.act = relu;
  check(c, rng);
  // Pointwise grids ending in a masked tile of 5, 10 or 7 positions (21, 26,
  // 55 outputs), K of one AVX2 slice (256: the pointwise tile) and just past
  // it (257: the general tile), with the residual and each epilogue.
  int variant = 0;
  for (int64_t k : {9, 256, 257})
    for (std::vector<int64_t> hw : {std::vector<int64_t>{3, 7}, {2, 13}, {5, 11}}) {
      Case p = make(k, 13, 1, hw, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0});
      p.bias = true, p.residual = true;
      p.act = variant % 3 == 0 ? clip : variant % 3 == 1 ? sig : Activation{};
      ++variant;
      check(p, rng);
    }
}

// Every activation that is not a clamp (Sigmoid, Tanh, LeakyRelu,
// HardSigmoid, HardSwish, Gelu, Gelu_tanh, SiLU) through each way a tile is
// stored: a pointwise grid (output columns), grid rows wider than 16 (two
// pieces per vector from the registers), narrower ones (the tile buffer on
// AVX-512), 7x7 outputs (the 49th column riding on the full tile) and a
// strided conv, with bias and residual.
TEST_P(ConvDirectIsa, EveryActivationInEveryStore) {
  std::mt19937 rng(24);
  std::vector<Activation> acts;
  for (ActKind k : {ActKind::kSigmoid, ActKind::kTanh, ActKind::kLeakyRelu, ActKind::kHardSigmoid, ActKind::kHardSwish,
                    ActKind::kGelu, ActKind::kGeluTanh, ActKind::kSilu}) {
    Activation a;
    a.kind = k;
    if (k == ActKind::kLeakyRelu) a.p0 = 0.1f;
    if (k == ActKind::kHardSigmoid) a.p0 = 0.2f, a.p1 = 0.5f;
    acts.push_back(a);
  }
  std::vector<Case> shapes{make(10, 14, 1, {9, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),
                           make(6, 13, 1, {11, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                           make(6, 13, 1, {9, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                           make(9, 21, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                           make(8, 11, 1, {13, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1})};
  for (const Activation& a : acts)
    for (Case c : shapes) {
      c.bias = true;
      c.residual = c.k[0] == 3;
      c.act = a;
      check(c, rng);
      if (HasFatalFailure()) return;
    }
}

// Depthwise convs with every non-clamp activation, bias and residual: the
// 16-channel kernel on AVX-512 (strided, rows narrower than 16, dilated and
// channel counts off 16; the activation in its store), the 8-channel one's fallback on AVX2 (the
// plane kernels or the dilated split, then the epilogue), and wide stride-1
// planes (plane kernels).
TEST_P(ConvDirectIsa, DepthwiseEveryActivation) {
  std::mt19937 rng(25);
  std::vector<Case> shapes{make(32, 32, 32, {14, 14}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}),
                           make(16, 16, 16, {7, 7}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}),
                           make(16, 16, 16, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                           make(16, 16, 16, {20, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                           // Dilated (lraspp's d=2 5x5 on 20x20, and uneven ones, a stride among them).
                           make(32, 32, 32, {20, 20}, {5, 5}, {1, 1}, {2, 2}, {4, 4}, {4, 4}),
                           make(16, 16, 16, {19, 23}, {3, 5}, {1, 2}, {3, 2}, {2, 1}, {3, 4}),
                           make(16, 16, 16, {11, 9}, {3, 3}, {2, 1}, {2, 3}, {1, 0}, {0, 2}),
                           // Channel counts off 16 (a partial last group of 8, 4 and 1 channels).
                           make(72, 72, 72, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
                           make(20, 20, 20, {9, 18}, {5, 5}, {1, 1}, {2, 2}, {4, 4}, {4, 4}),
                           make(17, 17, 17, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})};
  for (ActKind k : {ActKind::kSigmoid, ActKind::kHardSwish, ActKind::kHardSigmoid, ActKind::kGelu, ActKind::kSilu}) {
    for (Case c : shapes) {
      c.act.kind = k;
      if (k == ActKind::kHardSigmoid) c.act.p0 = 0.2f, c.act.p1 = 0.5f;
      c.bias = true;
      c.residual = c.in[0] != 7;
      check(c, rng, false);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(ConvDirectIsa, OneDimensional) {
  std::mt19937 rng(24);
  Case c = make(6, 10, 2, {50}, {5}, {2}, {2}, {3}, {1});
  c.bias = true;
  check(c, rng);
  check(make(6, 10, 1, {70}, {3}, {1}, {1}, {1}, {1}), rng);
}

TEST(ConvDirect, OffUnderGenericIsa) {
  std::mt19937 rng(25);
  // DLRT_CPU_ISA=generic (here a ScopedCpuIsa) keeps the GEMM path, with weights packed 6x16 as for AVX2.
  ScopedCpuIsa generic(CpuIsa::kGeneric);
  EXPECT_FALSE(conv_direct_enabled());
  const uint64_t before = conv_direct_runs();
  check(make(5, 9, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_direct_runs(), before);
}

TEST_P(ConvDirectIsa, OffForDepthwise) {
  std::mt19937 rng(25);
  // Depthwise keeps its own kernels, even forced on.
  ScopedConvDirect on(true);
  const uint64_t before = conv_direct_runs();
  check(make(8, 8, 8, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_direct_runs(), before);
}

// `n` floats that end where an inaccessible page begins.
class GuardedFloats {
 public:
  explicit GuardedFloats(int64_t n) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    span_ = (bytes + page_ - 1) / page_ * page_;
    mem_ = mmap(nullptr, span_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem_ == MAP_FAILED || mprotect(static_cast<char*>(mem_) + span_, page_, PROT_NONE) != 0) std::abort();
    data_ = reinterpret_cast<float*>(static_cast<char*>(mem_) + span_ - bytes);
  }
  ~GuardedFloats() { munmap(mem_, span_ + page_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  size_t page_ = 0, span_ = 0;
  void* mem_ = nullptr;
  float* data_ = nullptr;
};

// Input, residual and output each end where an inaccessible page begins: a
// read or write past them (a partial last tile, the unpadded 1x1 case reading
// x in place, the phase copy, the two-piece stores of grid rows) crashes the test.
TEST_P(ConvDirectIsa, TouchesNothingPastItsBuffers) {
  struct Shape {
    int64_t C, M, H, W, k, s, pad;
  };
  // Unpadded 1x1 grids of 49, 25, 196, 6, 15 and 40 columns end in partial
  // tiles of every kind (AVX2: 1 and 4 columns narrow, 6 one ymm, 9 and 15 two).
  const Shape shapes[] = {{5, 9, 7, 7, 1, 1, 0},   {3, 16, 5, 5, 1, 1, 0},   {4, 8, 14, 14, 1, 1, 0},
                          {6, 10, 9, 11, 3, 1, 1}, {3, 12, 15, 15, 7, 2, 3}, {7, 9, 13, 13, 1, 2, 0},
                          {4, 9, 5, 21, 3, 1, 1},  {5, 11, 7, 40, 3, 2, 1},  {3, 8, 3, 17, 3, 1, 0},
                          {6, 7, 2, 3, 1, 1, 0},   {5, 13, 3, 5, 1, 1, 0},   {9, 5, 5, 8, 1, 1, 0},
                          {4, 7, 14, 14, 3, 1, 1}, {3, 5, 6, 13, 5, 1, 2}};
  std::mt19937 rng(27);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Shape& sh : shapes) {
    ConvDirectGeometry g;
    g.channels = sh.C, g.in_h = sh.H, g.in_w = sh.W, g.kh = g.kw = sh.k, g.sh = g.sw = sh.s;
    g.pad_top = g.pad_left = sh.pad;
    g.out_h = (sh.H + 2 * sh.pad - sh.k) / sh.s + 1, g.out_w = (sh.W + 2 * sh.pad - sh.k) / sh.s + 1;
    ConvDirectPlan plan;
    // Both layouts (AVX2: shared pad or phases; AVX-512: phases; then tap
    // columns) for every shape but unstrided 1x1.
    for (int layout = 0; layout < (sh.s > 1 || sh.k > 1 ? 2 : 1); ++layout) {
      ASSERT_TRUE(conv_direct_plan(g, &plan, GetParam() != CpuIsa::kAvx512, layout == 1));
      ASSERT_EQ(plan.tap_columns, layout == 1);
      std::vector<int64_t> off(static_cast<size_t>(plan.k));
      conv_direct_offsets(plan, off.data());
      SCOPED_TRACE("C " + std::to_string(sh.C) + " M " + std::to_string(sh.M) + " in " + std::to_string(sh.H) + "x" +
                   std::to_string(sh.W) + " k " + std::to_string(sh.k) + " s " + std::to_string(sh.s));
      const int64_t out_plane = g.out_h * g.out_w;
      GuardedFloats gx(sh.C * sh.H * sh.W), gz(sh.M * out_plane), gy(sh.M * out_plane);
      float* x = gx.data();
      float* z = gz.data();
      float* y = gy.data();
      std::vector<float> w(static_cast<size_t>(sh.M * plan.k));
      for (int64_t i = 0; i < sh.C * sh.H * sh.W; ++i) x[i] = dist(rng);
      for (int64_t i = 0; i < sh.M * out_plane; ++i) z[i] = dist(rng), y[i] = -7.0f;
      for (auto& v : w) v = dist(rng);
      auto packed = PackedMatrix::pack_a(false, sh.M, plan.k, w.data(), plan.k);
      GemmEpilogue ep;
      ep.ldr = out_plane;
      ep.residual = z;
      ep.act.kind = ActKind::kRelu;
      const uint64_t before = conv_direct_runs();
      if (GetParam() == CpuIsa::kAvx512) {
        ASSERT_EQ(packed->mr(), 8);
#if defined(__x86_64__) || defined(__i386__)
        conv_direct_whole_k(SimdWidth::k512, plan, off.data(), x, *packed, y, ep, nullptr);
#endif
      } else {
        ASSERT_EQ(packed->mr(), 6);
        ASSERT_EQ(packed->nr(), 16);
        conv_direct_sliced(conv_direct_sliced_width(), plan, off.data(), x, *packed, y, ep, nullptr);
      }
      ASSERT_EQ(conv_direct_runs() - before, 1u);
      // Spot-check against the definition (the full comparison is in the tests above).
      for (int64_t m = 0; m < sh.M; m += 4)
        for (int64_t o = 0; o < out_plane; o += 3) {
          const int64_t oh = o / g.out_w, ow = o % g.out_w;
          double acc = 0;
          for (int64_t c = 0; c < sh.C; ++c)
            for (int64_t i = 0; i < sh.k; ++i)
              for (int64_t j = 0; j < sh.k; ++j) {
                const int64_t ih = oh * sh.s - sh.pad + i, iw = ow * sh.s - sh.pad + j;
                if (ih < 0 || ih >= sh.H || iw < 0 || iw >= sh.W) continue;
                acc += static_cast<double>(x[(c * sh.H + ih) * sh.W + iw]) * w[((m * sh.C + c) * sh.k + i) * sh.k + j];
              }
          acc = std::max(0.0, acc + z[m * out_plane + o]);
          EXPECT_NEAR(y[m * out_plane + o], acc, 1e-4 * (1 + std::abs(acc)))
              << "m " << m << " o " << o << " layout " << layout;
        }
    }
  }
}

TEST_P(ConvDirectIsa, DefaultModePolicy) {
  if (std::getenv("DLRT_CONV_DIRECT")) GTEST_SKIP() << "DLRT_CONV_DIRECT is set: the default policy is not in effect";
  SKIP_POLICY_AT_NEON();
  ASSERT_EQ(conv_direct_mode(), ConvDirectMode::kAuto);
  std::mt19937 rng(26);
  const bool avx2 = GetParam() == CpuIsa::kAvx2;
  // 28x28 outputs, 3x3 pad 1: on AVX2 Winograd F(4x4, 3x3) unless it is
  // switched off (conv_winograd.h); otherwise a 28 x 30 grid (840 columns)
  // runs direct.
  uint64_t before = conv_direct_runs();
  const uint64_t winograd_before = conv_winograd_runs();
  check(make(8, 16, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  const bool winograd = avx2 && winograd_enabled();
  EXPECT_EQ(conv_winograd_runs() - winograd_before, winograd ? 1u : 0u);
  EXPECT_EQ(conv_direct_runs() - before, winograd ? 0u : 1u);
  {
    ScopedWinograd off(false);
    before = conv_direct_runs();
    check(make(8, 16, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
    EXPECT_EQ(conv_direct_runs() - before, 1u);
  }
  // 7x7 outputs: on AVX-512 a 49-column grid (one plane per tap column),
  // the 49th column riding on the 48-column tile, direct on 1 and 2
  // threads; on AVX2 it runs transposed (im2colᵀ · Wᵀ) either way.
  before = conv_direct_runs();
  const uint64_t transposed_before = conv_transposed_runs();
  check(make(8, 16, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_direct_runs() - before, avx2 ? 0u : 1u) << "2 threads";
  if (avx2) {
    EXPECT_GE(conv_transposed_runs() - transposed_before, 1u);
  } else {
    EXPECT_EQ(conv_transposed_runs(), transposed_before);
  }
  {
    const Case small = make(8, 16, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
    const Tensor x = Tensor::from_vector<float>({1, 8, 7, 7}, std::vector<float>(8 * 49, 0.5f));
    const Tensor w = Tensor::from_vector<float>({16, 8, 3, 3}, std::vector<float>(16 * 8 * 9, 0.25f));
    before = conv_direct_runs();
    ASSERT_TRUE(run(small, x, w, Tensor(), Tensor(), 1).ok());
    EXPECT_EQ(conv_direct_runs() - before, avx2 ? 0u : 1u) << "1 thread";
    // Strided 3x3 to 7x7 (resnet18's layer4.0): on AVX-512 direct (tap
    // columns: a 49-column grid) on 1 and 2 threads; on AVX2 transposed.
    const Case strided = make(8, 16, 1, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1});
    const Tensor xs = Tensor::from_vector<float>({1, 8, 14, 14}, std::vector<float>(8 * 196, 0.5f));
    before = conv_direct_runs();
    ASSERT_TRUE(run(strided, xs, w, Tensor(), Tensor(), 1).ok());
    EXPECT_EQ(conv_direct_runs() - before, avx2 ? 0u : 1u) << "strided, 1 thread";
    // 8x8 outputs (64 columns: a full tile and a 16-column one): the GEMM on 1 thread.
    const Case eight = make(8, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
    const Tensor x8 = Tensor::from_vector<float>({1, 8, 8, 8}, std::vector<float>(8 * 64, 0.5f));
    before = conv_direct_runs();
    ASSERT_TRUE(run(eight, x8, w, Tensor(), Tensor(), 1).ok());
    EXPECT_EQ(conv_direct_runs() - before, 0u) << "8x8, 1 thread";
    before = conv_direct_runs();
    ASSERT_TRUE(run(strided, xs, w, Tensor(), Tensor()).ok());
    EXPECT_EQ(conv_direct_runs() - before, avx2 ? 0u : 1u) << "strided, 2 threads";
    // Strided 1x1 on a 196-column grid (a downsample): direct on 1 thread;
    // on 2 the AVX-512 tile leaves it to the GEMM.
    const Case down = make(8, 16, 1, {28, 28}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0});
    const Tensor xd = Tensor::from_vector<float>({1, 8, 28, 28}, std::vector<float>(8 * 784, 0.5f));
    const Tensor wd = Tensor::from_vector<float>({16, 8, 1, 1}, std::vector<float>(16 * 8, 0.25f));
    before = conv_direct_runs();
    ASSERT_TRUE(run(down, xd, wd, Tensor(), Tensor(), 1).ok());
    EXPECT_EQ(conv_direct_runs() - before, 1u) << "strided 1x1, 1 thread";
    before = conv_direct_runs();
    ASSERT_TRUE(run(down, xd, wd, Tensor(), Tensor()).ok());
    EXPECT_EQ(conv_direct_runs() - before, avx2 ? 1u : 0u) << "strided 1x1, 2 threads";
  }
  // Stride-2 3x3 with 64 channels to 28x28 (resnet18's layer2.0): direct for
  // AVX-512 only. With 8 channels: direct for both.
  before = conv_direct_runs();
  check(make(64, 8, 1, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_direct_runs() - before, avx2 ? 0u : 1u);
  before = conv_direct_runs();
  check(make(8, 8, 1, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}), rng, false);
  EXPECT_EQ(conv_direct_runs() - before, 1u);
  // Pointwise on 14x14: direct for both.
  before = conv_direct_runs();
  check(make(16, 8, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), rng, false);
  EXPECT_EQ(conv_direct_runs() - before, 1u);
}

}  // namespace
}  // namespace dlrt::cpu
