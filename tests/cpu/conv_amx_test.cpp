// Conv in precision bf16x3 (filters packed for AMX at prepack, the GEMM of
// gemm_amx.h at run time) against a double reference: pointwise, padded,
// strided, grouped, 1-D and batched convs with their fused stages; that
// Winograd keeps the convs it takes; patch embeddings transposed with Wᵀ on
// AMX; and the fp32 fallback when AMX is capped after packing. Where the real
// tiles do not run, all but the fallback test run on the scalar tile model
// (ScopedAmxTileModel); that one skips with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"
#include "conv_test_util.h"
#include "exec/kernel_build_options.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

#define SKIP_WITHOUT_AMX()                                                                                    \
  if (!amx_bf16x3_available())                                                                                \
  GTEST_SKIP() << "no AMX-BF16 + AVX512-BF16 here (or Linux refused the tile state, or DLRT_CPU_ISA is below " \
                  "avx512): Conv never runs on AMX on this machine"

// The real tiles where they run, else the scalar tile model (any CPU).
#define AMX_OR_MODEL()                       \
  std::optional<ScopedAmxTileModel> model_; \
  if (amx_tiles_unavailable()) model_.emplace()

struct Case {
  int64_t N = 1, C = 1, M = 1, group = 1, H = 1, W = 1, KH = 1, KW = 1, S = 1, P = 0;
  bool two_d = true, bias = false, residual = false;
  Activation act;
  int threads = 2;
};

std::string describe(const Case& c) {
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " g" +
         std::to_string(c.group) + " in " + std::to_string(c.H) + "x" + std::to_string(c.W) + " k " +
         std::to_string(c.KH) + "x" + std::to_string(c.KW) + " s" + std::to_string(c.S) + " p" + std::to_string(c.P) +
         (c.two_d ? "" : " 1-D") + (c.bias ? " bias" : "") + (c.residual ? " residual" : "") + " threads " +
         std::to_string(c.threads);
}

struct Data {
  testing::RefConvShape s;
  std::vector<float> x, w, b, z;
  Tensor tx, tw, tb, tz;
};

Data make_data(const Case& c, std::mt19937& rng) {
  Data d;
  d.s.N = c.N, d.s.C = c.C, d.s.M = c.M, d.s.group = c.group, d.s.H = c.H, d.s.W = c.W, d.s.KH = c.KH, d.s.KW = c.KW;
  d.s.SH = c.two_d ? c.S : 1, d.s.SW = c.S, d.s.PT = c.two_d ? c.P : 0, d.s.PL = c.P;
  d.s.OH = (c.H + 2 * d.s.PT - c.KH) / d.s.SH + 1, d.s.OW = (c.W + 2 * c.P - c.KW) / c.S + 1;
  std::uniform_real_distribution<float> u(-1, 1);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& e : v) e = u(rng);
    return v;
  };
  const int64_t Cg = c.C / c.group;
  d.x = fill(static_cast<size_t>(c.N * c.C * c.H * c.W));
  d.w = fill(static_cast<size_t>(c.M * Cg * c.KH * c.KW));
  Shape xs = {c.N, c.C}, ws = {c.M, Cg}, ys = {c.N, c.M};
  if (c.two_d) {
    xs.insert(xs.end(), {c.H, c.W});
    ws.insert(ws.end(), {c.KH, c.KW});
    ys.insert(ys.end(), {d.s.OH, d.s.OW});
  } else {
    xs.push_back(c.W);
    ws.push_back(c.KW);
    ys.push_back(d.s.OW);
  }
  d.tx = Tensor::from_vector<float>(xs, d.x);
  d.tw = Tensor::from_vector<float>(ws, d.w);
  if (c.bias) {
    d.b = fill(static_cast<size_t>(c.M));
    d.tb = Tensor::from_vector<float>({c.M}, d.b);
  }
  if (c.residual) {
    d.z = fill(static_cast<size_t>(element_count(ys)));
    d.tz = Tensor::from_vector<float>(ys, d.z);
  }
  return d;
}

// Conv through conv_run, its weights pre-packed under `precision`.
Result<Tensor> run(const Case& c, const Data& d, GemmPrecision precision) {
  KernelBuildOptions options;
  options.precision = precision;
  ScopedKernelBuildOptions scope(options);
  ir::Node node;
  node.name = "amx_conv";
  const std::vector<int64_t> s = c.two_d ? std::vector<int64_t>{c.S, c.S} : std::vector<int64_t>{c.S};
  const std::vector<int64_t> p = c.two_d ? std::vector<int64_t>(4, c.P) : std::vector<int64_t>(2, c.P);
  const std::vector<int64_t> one = c.two_d ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1};
  node.attributes = {{"strides", attr_ints(s)}, {"dilations", attr_ints(one)}, {"pads", attr_ints(p)},
                     {"group", attr_int(c.group)}};
  return testing::run_conv_prepacked(node, {d.tx, d.tw, d.tb, d.tz}, c.act, c.threads);
}

// Every output against the double reference, within 2e-5 of the sum of
// |x w| over its taps (bf16x3) or 1e-5 relative (fp32, `fp32` true).
void expect_matches(const Case& c, const Data& d, const Tensor& y, bool fp32) {
  testing::RefConvShape s = d.s;
  const std::vector<float> want = testing::reference_conv(s, d.x, d.w, d.b, d.z, c.act);
  // |x| |w| summed per output: the same reference on the magnitudes, no bias or stage.
  std::vector<float> ax(d.x), aw(d.w);
  for (auto& v : ax) v = std::fabs(v);
  for (auto& v : aw) v = std::fabs(v);
  const std::vector<float> mag = testing::reference_conv(s, ax, aw, {}, {}, Activation{});
  ASSERT_EQ(static_cast<size_t>(y.size()), want.size());
  const float* got = y.data<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double tol = fp32 ? 1e-5 * (1 + mag[i]) : 2e-5 * mag[i] + 1e-6 * (1 + std::fabs(want[i]));
    ASSERT_NEAR(got[i], want[i], tol) << describe(c) << " at " << i;
  }
}

TEST(ConvAmx, MatchesReference) {
  AMX_OR_MODEL();
  std::mt19937 rng(31);
  std::vector<Case> cases;
  auto add = [&](Case c) { cases.push_back(c); };
  Case c;
  // Pointwise (B is the image itself), output channels around the 16- and 32-row blocks.
  c = {};
  c.C = 40, c.M = 33, c.H = 9, c.W = 7, c.bias = true;
  add(c);
  // resnet18's stem (7x7/2, K = 147) and a strided 3x3 with residual and Relu.
  c = {};
  c.C = 3, c.M = 64, c.H = 40, c.W = 36, c.KH = c.KW = 7, c.S = 2, c.P = 3, c.bias = true;
  c.act.kind = ActKind::kRelu;
  add(c);
  c = {};
  c.C = 24, c.M = 48, c.H = 15, c.W = 15, c.KH = c.KW = 3, c.S = 2, c.P = 1, c.residual = true;
  c.act.kind = ActKind::kRelu;
  add(c);
  // A small plane with deep K (several passes over B) on 1 and 2 threads.
  c = {};
  c.C = 160, c.M = 96, c.H = c.W = 7, c.KH = c.KW = 3, c.P = 1, c.bias = true, c.residual = true;
  for (int t : {1, 2}) {
    c.threads = t;
    add(c);
  }
  // Grouped, batched, 1-D.
  c = {};
  c.N = 2, c.C = 12, c.M = 20, c.group = 4, c.H = c.W = 10, c.KH = c.KW = 3, c.P = 1, c.bias = true;
  add(c);
  c = {};
  c.N = 3, c.C = 16, c.M = 40, c.H = 1, c.W = 50, c.KH = 1, c.KW = 5, c.P = 2, c.two_d = false;
  c.act.kind = ActKind::kClip;
  c.act.p0 = -0.5f, c.act.p1 = 0.5f;
  add(c);
  for (const Case& cs : cases) {
    const Data d = make_data(cs, rng);
    const uint64_t before = conv_amx_runs();
    Result<Tensor> y = run(cs, d, GemmPrecision::kBf16x3);
    ASSERT_TRUE(y.ok()) << describe(cs) << ": " << y.status().message();
    EXPECT_EQ(conv_amx_runs() - before, 1u) << describe(cs) << ": did not run on AMX";
    expect_matches(cs, d, *y, false);
    if (HasFatalFailure()) return;
  }
}

TEST(ConvAmx, Fp32SessionsAndWinogradConvsStayOffAmx) {
  AMX_OR_MODEL();
  if (!cpu_has_simd_kernels())
    GTEST_SKIP() << "DLRT_CPU_ISA=generic: Winograd, which keeps the 3x3 conv off AMX, runs on vector kernels only";
  std::mt19937 rng(32);
  Case c;
  c.C = 32, c.M = 32, c.H = c.W = 7, c.KH = c.KW = 3, c.P = 1;
  Data d = make_data(c, rng);
  uint64_t before = conv_amx_runs();
  Result<Tensor> y = run(c, d, GemmPrecision::kF32);
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(conv_amx_runs(), before) << "an f32 session's conv ran on AMX";
  expect_matches(c, d, *y, true);

  // A 3x3 stride-1 conv with 64 channels on a 28x28 plane (resnet18's
  // layer2 shape, fewer output channels): Winograd multiplies 4x less, so
  // it keeps it under bf16x3.
  c.C = 64, c.H = c.W = 28;
  d = make_data(c, rng);
  before = conv_amx_runs();
  const uint64_t winograd_before = conv_winograd_runs();
  y = run(c, d, GemmPrecision::kBf16x3);
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(conv_amx_runs(), before) << "a Winograd conv ran on AMX";
  EXPECT_GT(conv_winograd_runs(), winograd_before) << "the 28x28 3x3 conv did not run Winograd";
  expect_matches(c, d, *y, true);
}

TEST(ConvAmx, PatchEmbeddingsRunTransposedWithWtOnAmx) {
  AMX_OR_MODEL();
  if (!cpu_has_avx2())
    GTEST_SKIP() << "cpu_isa() is below AVX2 (DLRT_CPU_ISA, or not x86): the transposed patch product needs it";
  std::mt19937 rng(34);
  Case c;
  c.N = 2, c.C = 3, c.M = 40, c.H = 48, c.W = 40, c.KH = c.KW = 8, c.S = 8, c.bias = true;
  const Data d = make_data(c, rng);
  ir::Node node;
  node.name = "patch_embed";
  node.op_type = "Conv";
  node.opset = 17;
  node.attributes = {{"strides", attr_ints({8, 8})}, {"dilations", attr_ints({1, 1})},
                     {"pads", attr_ints({0, 0, 0, 0})}, {"group", attr_int(1)}};
  KernelBuildOptions options;
  options.precision = GemmPrecision::kBf16x3;
  std::shared_ptr<const ConvPrepacked> pre;
  {
    ScopedKernelBuildOptions scope(options);
    auto packed = prepack_conv_weights(node, &d.tw);
    ASSERT_TRUE(packed.ok());
    pre = *packed;
  }
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->transposed().precision(), GemmPrecision::kBf16x3) << "Wᵀ was not packed for AMX";
  const uint64_t amx_before = conv_amx_runs(), transposed_before = conv_transposed_runs();
  Result<Tensor> y = testing::run_conv_with(node, {d.tx, d.tw, d.tb}, c.act, 2, pre.get());
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(conv_transposed_runs() - transposed_before, 2u) << "one transposed product per image expected";
  EXPECT_EQ(conv_amx_runs(), amx_before);
  expect_matches(c, d, *y, false);
}

TEST(ConvAmx, RunsOnFp32WhenAmxIsCappedAfterPacking) {
  SKIP_WITHOUT_AMX();
  std::mt19937 rng(33);
  Case c;
  c.C = 20, c.M = 36, c.H = c.W = 9, c.KH = c.KW = 3, c.S = 2, c.P = 1, c.bias = true;
  const Data d = make_data(c, rng);
  KernelBuildOptions options;
  options.precision = GemmPrecision::kBf16x3;
  ir::Node node;
  node.name = "amx_conv";
  node.attributes = {{"strides", attr_ints({2, 2})}, {"dilations", attr_ints({1, 1})},
                     {"pads", attr_ints({1, 1, 1, 1})}, {"group", attr_int(1)}};
  node.op_type = "Conv";
  node.opset = 17;
  std::shared_ptr<const ConvPrepacked> pre;
  {
    ScopedKernelBuildOptions scope(options);
    auto packed = prepack_conv_weights(node, &d.tw);
    ASSERT_TRUE(packed.ok());
    pre = *packed;
  }
  ASSERT_TRUE(pre && pre->amx_group(0)) << "the filters were not packed for AMX";
  // And a patch embedding, whose Wᵀ is packed for AMX.
  Case pc;
  pc.C = 3, pc.M = 24, pc.H = pc.W = 32, pc.KH = pc.KW = 8, pc.S = 8;
  const Data pd = make_data(pc, rng);
  ir::Node patch = node;
  patch.attributes = {{"strides", attr_ints({8, 8})}, {"dilations", attr_ints({1, 1})},
                      {"pads", attr_ints({0, 0, 0, 0})}, {"group", attr_int(1)}};
  std::shared_ptr<const ConvPrepacked> ppre;
  {
    ScopedKernelBuildOptions scope(options);
    auto packed = prepack_conv_weights(patch, &pd.tw);
    ASSERT_TRUE(packed.ok());
    ppre = *packed;
  }
  ASSERT_EQ(ppre->transposed().precision(), GemmPrecision::kBf16x3);

  ScopedCpuIsa cap(CpuIsa::kAvx2);
  const uint64_t before = conv_amx_runs();
  Result<Tensor> y = testing::run_conv_with(node, {d.tx, d.tw, d.tb}, c.act, 2, pre.get());
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(conv_amx_runs(), before);
  expect_matches(c, d, *y, true);
  // The patch embedding's transposed product runs on W itself (the fp32 GEMM
  // against Wᵀ), not on the tiles.
  y = testing::run_conv_with(patch, {pd.tx, pd.tw}, pc.act, 2, ppre.get());
  ASSERT_TRUE(y.ok()) << y.status().message();
  expect_matches(pc, pd, *y, true);
}

}  // namespace
}  // namespace dlrt::cpu
