// conv-affine (per-channel Mul/Add folded into a conv's W and B),
// ConvTranspose + BatchNormalization, and activation-affine (scalar Mul/Add
// after a fused activation -> the fused op's post-affine in every kernel
// path): each against the unfused graph, with the near misses that must not fuse.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/isa.h"
#include "fusion_test_util.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"
#include "runtime/optimize.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;


template <typename Pass>
std::shared_ptr<ir::Graph> check(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, Pass pass,
                                 const std::string& name, int expect_fired, float tol = 1e-5f) {
  return check_pass(std::move(g), inputs, pass, name, expect_fired, tol);
}

// ---------------------------------------------------------------- conv-affine

// Conv (with and without B, grouped) then Mul / Add / Sub by scalars, [1],
// [C, 1, 1] and [1, C, 1, 1] constants: every node folds into the conv.
TEST(ConvAffine, FoldsPerChannelAndScalarChains) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4, 7, 7});
  auto c1 =
      b.node("Conv", {x, b.constant("w1", random_tensor({6, 4, 3, 3}, 1)), b.constant("b1", random_tensor({6}, 2))},
             {{"pads", ais({1, 1, 1, 1})}});
  auto m1 = b.node("Mul", {c1, b.constant("s1", filled({1}, {0.75f}))});
  auto a1 = b.node("Add", {b.constant("t1", random_tensor({1, 6, 1, 1}, 3)), m1});  // constant first
  auto c2 = b.node("Conv", {a1, b.constant("w2", random_tensor({6, 3, 1, 1}, 4))}, {{"group", ai(2)}});  // no B
  auto m2 = b.node("Mul", {c2, b.constant("s2", random_tensor({6, 1, 1}, 5, 0.5f, 1.5f))});
  auto a2 = b.node("Sub", {m2, b.scalar("t2", 0.25f)});
  b.output(b.node("Relu", {a2}));
  auto opt = check(b.graph(), {random_tensor({2, 4, 7, 7}, 6)}, p::fold_conv_affine, "conv-affine", 4, 1e-5f);
  EXPECT_EQ(count_ops(*opt, "Conv"), 2);
  EXPECT_EQ(count_ops(*opt, "Mul") + count_ops(*opt, "Add") + count_ops(*opt, "Sub"), 0);
  for (const auto& n : opt->nodes) {
    if (n.op_type == "Conv") {
      EXPECT_EQ(n.inputs.size(), 3u) << "B created for " << n.describe();
    }
  }
}

// A conv output that is a graph output keeps its name: the folded conv
// writes the Mul's output, so a Mul/Add output that is a graph output is fine.
TEST(ConvAffine, FoldsIntoAGraphOutput) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 5, 5});
  auto c = b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 1, 1}, 10))});
  b.output(b.node("Add", {c, b.constant("t", random_tensor({1, 4, 1, 1}, 11))}));
  auto opt = check(b.graph(), {random_tensor({1, 3, 5, 5}, 12)}, p::fold_conv_affine, "conv-affine", 1);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].outputs[0], opt->outputs[0]);
}

// Per-position and per-batch constants, a computed operand, a second reader
// of the conv output, a conv output that is a graph output, a non-float W and
// a non-finite scale: nothing folds.
TEST(ConvAffine, NearMissesLeftAlone) {
  struct Case {
    const char* what;
    int variant;
  };
  for (Case k : {Case{"per-position [1, 1, 5, 5]", 0}, Case{"per-batch [2, 1, 1, 1]", 1}, Case{"computed operand", 2},
                 Case{"second reader", 3}, Case{"conv output is a graph output", 4}, Case{"infinite scale", 5},
                 Case{"rank above the conv output's", 6}}) {
    SCOPED_TRACE(k.what);
    GraphBuilder b;
    auto x = b.input("x", {2, 3, 5, 5});
    auto y = b.input("y", {1});
    auto c =
        b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 1, 1}, 20)), b.constant("cb", random_tensor({4}, 21))});
    ir::ValueId operand;
    switch (k.variant) {
      case 0:
        operand = b.constant("t", random_tensor({1, 1, 5, 5}, 22));
        break;
      case 1:
        operand = b.constant("t", random_tensor({2, 1, 1, 1}, 22));
        break;
      case 2:
        operand = b.node("Neg", {y});
        break;
      case 5:
        operand = b.constant("t", filled({1}, {INFINITY}));
        break;
      case 6:
        operand = b.constant("t", random_tensor({1, 1, 1, 1, 1}, 22));
        break;
      default:
        operand = b.constant("t", random_tensor({1, 4, 1, 1}, 22));
        break;
    }
    b.output(b.node(k.variant == 5 ? "Mul" : "Add", {c, operand}));
    if (k.variant == 3) b.output(b.node("Relu", {c}));
    if (k.variant == 4) b.output(c);
    auto g = b.graph();
    if (k.variant == 5) {  // (infinite outputs: nothing to compare)
      p::PassContext ctx = cpu_kernels_context();
      EXPECT_EQ(p::fold_conv_affine(*g, ctx), 0);
      continue;
    }
    check(g, {random_tensor({2, 3, 5, 5}, 23), random_tensor({1}, 24)}, p::fold_conv_affine, "conv-affine", 0);
  }
}

// An integer constant operand (or W) is never folded (the pass alone: such a
// graph would not run).
TEST(ConvAffine, IntegerOperandLeftAlone) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 5, 5});
  auto c = b.node("Conv", {x, b.constant("w", random_tensor({4, 3, 1, 1}, 30))});
  b.output(b.node("Mul", {c, b.constant("s", Tensor::from_vector<int32_t>({1}, {2}))}));
  auto g = b.graph();
  p::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(p::fold_conv_affine(*g, ctx), 0);
}

// ConvTranspose (groups of output channels: W [C, M/group, kh, kw]) then a
// per-channel Add then BatchNormalization: both fold (the Add by conv-affine,
// the BatchNormalization by conv-bn), within float rounding.
TEST(ConvAffine, ConvTransposeAddBatchNormFold) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 5, 5});
  auto ct = b.node("ConvTranspose", {x, b.constant("w", random_tensor({4, 3, 2, 2}, 40))},
                   {{"group", ai(2)}, {"strides", ais({2, 2})}});
  auto ad = b.node("Add", {ct, b.constant("t", random_tensor({1, 6, 1, 1}, 41))});
  auto bn = b.node("BatchNormalization",
                   {ad, b.constant("s", random_tensor({6}, 42, 0.5f, 1.5f)), b.constant("bb", random_tensor({6}, 43)),
                    b.constant("m", random_tensor({6}, 44)), b.constant("v", random_tensor({6}, 45, 0.5f, 2.0f))},
                   {{"epsilon", af(1e-3f)}});
  b.output(bn);
  auto g = b.graph();
  const std::vector<Tensor> in = {random_tensor({1, 4, 5, 5}, 46)};
  auto opt = check(g, in, p::fold_conv_affine, "conv-affine", 1);
  opt = check(opt, in, p::fold_conv_batchnorm, "conv-bn", 1, 1e-5f);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].op_type, "ConvTranspose");
}

// --------------------------------------------------------- activation-affine

// Every conv kernel path (conv_kernel_paths) under every ISA this CPU runs,
// each activation kind through it, with and without a residual input, and
// Relu/Clip (whose clamp stages cannot hold the affine).
TEST(ActivationAffine, FusedConvEveryKernelPath) {
  const std::vector<ConvCase> convs = conv_kernel_paths();
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"HardSwish", {}}, {"Relu", {}}, {"Clip", {-0.5f, 0.5f}}, {"Sigmoid", {}}, {"Gelu", {}}, {"LeakyRelu", {0.1f}}};
  uint32_t seed = 100;
  for (cpu::CpuIsa isa : runnable_isas())
    for (const auto& cc : convs)
      for (const auto& [act, params] : acts)
        for (bool residual : {false, true}) {
          cpu::ScopedCpuIsa cap(isa);
          SCOPED_TRACE(std::string(cc.what) + " " + act + (residual ? " + residual" : "") + " isa " +
                       cpu::cpu_isa_name(isa));
          GraphBuilder b;
          ir::Attributes attrs = {{"activation", as(act)}};
          if (!params.empty()) attrs["activation_params"] = afs(params);
          std::vector<Tensor> inputs;
          auto f = add_fused_conv(b, cc, attrs, residual, false, seed, inputs);
          auto m = b.node("Mul", {f, b.constant("s", filled({1}, {-1.75f}))});
          b.output(b.node("Add", {m, b.scalar("t", 0.375f)}));
          auto opt = check(b.graph(), inputs, p::fuse_activation_affine, "activation-affine", 1, 1e-5f);
          ASSERT_EQ(opt->nodes.size(), 1u);
          const std::vector<float> st = opt->nodes[0].attr_floats("activation_affine");
          ASSERT_EQ(st.size(), 2u);
          EXPECT_EQ(st[0], -1.75f);
          EXPECT_EQ(st[1], 0.375f);
        }
}

// FusedGemm and FusedMatMul: narrow (AVX2 tile epilogue) and wide (16-lane)
// outputs, Gelu's lockstep path and the others; a Mul alone, an Add alone
// and a Sub (y - c).
TEST(ActivationAffine, FusedGemmAndMatMul) {
  uint32_t seed = 300;
  for (cpu::CpuIsa isa : runnable_isas())
    for (int64_t n : {24, 100})
      for (const char* act : {"Gelu", "Tanh", "HardSigmoid", "Silu"})
        for (const char* tail : {"Mul", "Add", "Sub"}) {
          cpu::ScopedCpuIsa cap(isa);
          SCOPED_TRACE(std::string(act) + " N=" + std::to_string(n) + " then " + tail + " isa " +
                       cpu::cpu_isa_name(isa));
          for (bool gemm : {false, true}) {
            GraphBuilder b;
            auto a = b.input("a", {5, 33});
            auto f = gemm ? b.node("FusedGemm",
                                   {a, b.constant("w", random_tensor({33, n}, seed++)),
                                    b.constant("c", random_tensor({n}, seed++))},
                                   {{"activation", as(act)}}, 1, "com.dlrt")
                          : b.node("FusedMatMul",
                                   {a, b.constant("w", random_tensor({33, n}, seed++)),
                                    b.constant("c", random_tensor({n}, seed++))},
                                   {{"activation", as(act)}}, 1, "com.dlrt");
            b.output(b.node(tail, {f, b.constant("k", filled({1, 1}, {0.625f}))}));
            check(b.graph(), {random_tensor({5, 33}, seed++)}, p::fuse_activation_affine, "activation-affine", 1,
                  1e-5f);
          }
        }
}

// A per-channel operand, a computed one, c - y, a second reader of the
// activation's output, the fused output as a graph output, an integer
// constant and a fused op without an activation: nothing fuses.
TEST(ActivationAffine, NearMissesLeftAlone) {
  for (int variant = 0; variant < 7; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    GraphBuilder b;
    auto x = b.input("x", {1, 4, 6, 6});
    auto y = b.input("y", {1});
    ir::Attributes attrs;
    if (variant != 6) attrs["activation"] = as("HardSwish");
    auto f = b.node("FusedConv", {x, b.constant("w", random_tensor({4, 4, 1, 1}, 50))}, attrs, 1, "com.dlrt");
    ir::ValueId k = b.scalar("k", 0.5f);
    if (variant == 0) k = b.constant("k", random_tensor({1, 4, 1, 1}, 51));
    if (variant == 2) k = b.node("Neg", {y});
    const bool integer = variant == 5;
    if (integer) k = b.constant("k", Tensor::from_vector<int32_t>({1}, {2}));
    b.output(variant == 1 ? b.node("Sub", {k, f}) : b.node(variant == 4 ? "Add" : "Mul", {f, k}));
    if (variant == 3) b.output(b.node("Relu", {f}));
    if (variant == 4) b.output(f);
    auto g = b.graph();
    if (integer) {
      p::PassContext ctx = cpu_kernels_context();
      EXPECT_EQ(p::fuse_activation_affine(*g, ctx), 0);
      continue;
    }
    check(g, {random_tensor({1, 4, 6, 6}, 52), random_tensor({1}, 53)}, p::fuse_activation_affine, "activation-affine",
          0);
  }
}

// A FusedExpandDepthwise never takes a conv with a post-affine as its expand
// or depthwise conv (their clamp stages cannot hold it); without it the pair fuses.
TEST(ActivationAffine, ExpandDepthwiseRefusesAffineConvs) {
  for (bool affine : {false, true}) {
    GraphBuilder b;
    ir::Attributes e = {{"activation", as("Relu")}};
    if (affine) e["activation_affine"] = afs({2.0f, 1.0f});
    b.output(add_expand_depthwise(b, b.input("x", {1, 16, 14, 14}), e, 60));
    auto g = b.graph();
    p::PassContext ctx = cpu_kernels_context();
    EXPECT_EQ(p::fuse_expand_depthwise(*g, ctx), affine ? 0 : 1);
  }
}

// As the project conv of a FusedExpandDepthwise a conv keeps its post-affine
// (project_activation_affine), and the fused op computes it.
TEST(ActivationAffine, ExpandDepthwiseProjectKeepsTheAffine) {
  GraphBuilder b;
  auto c2 = add_expand_depthwise(b, b.input("x", {1, 16, 14, 14}), {{"activation", as("Relu")}}, 62);
  ir::Attributes pa = {{"activation", as("HardSwish")}, {"activation_affine", afs({-1.5f, 0.25f})}};
  b.output(b.node("FusedConv",
                  {c2, b.constant("wp", random_tensor({16, 32, 1, 1}, 64)), b.constant("bp", random_tensor({16}, 65))},
                  pa, 1, "com.dlrt"));
  const std::vector<Tensor> in = {random_tensor({1, 16, 14, 14}, 66)};
  auto opt = check(b.graph(), in, p::fuse_expand_depthwise, "expand-depthwise", 1);
  opt = check(opt, in, p::fuse_expand_depthwise_project, "expand-depthwise-project", 1);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].attr_floats("project_activation_affine"), (std::vector<float>{-1.5f, 0.25f}));
}

// ------------------------------------------------------------- end to end

// The learnable-affine block PP-OCR exports (Conv, Mul and Add by [1]
// constants, HardSwish as x * Clip(x + 3, 0, 6) / 6, Mul and Add by [1]
// constants, the next Conv): the optimiser's two stages leave convs alone
// (the affine ops folded or fused; blocked on AVX-512 CPUs) and the numbers
// match the unoptimised graph on every ISA level.
TEST(ActivationAffine, LearnableAffineBlocksEndToEnd) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 24, 24});
  ir::ValueId v = x;
  uint32_t seed = 400;
  const std::vector<std::pair<int64_t, int64_t>> layers = {{3, 16}, {16, 16}, {16, 32}, {32, 32}};
  int k = 0;
  for (auto [cin, cout] : layers) {
    const std::string s = std::to_string(k++);
    v = add_conv3x3(b, v, cin, cout, s, seed, 0.4f);
    v = b.node("Mul", {v, b.constant("s" + s, filled({1}, {1.25f}))});
    v = b.node("Add", {v, b.constant("t" + s, filled({1}, {-0.125f}))});
    auto clip = b.node(
        "Clip", {b.node("Add", {v, b.scalar("three" + s, 3.0f)}), b.scalar("lo" + s, 0.0f), b.scalar("hi" + s, 6.0f)});
    v = b.node("Div", {b.node("Mul", {v, clip}), b.scalar("six" + s, 6.0f)});
    v = b.node("Mul", {v, b.constant("s2" + s, filled({1}, {0.875f}))});
    v = b.node("Add", {v, b.constant("t2" + s, filled({1}, {0.0625f}))});
  }
  b.output(v);
  auto g = b.graph();
  const std::vector<Tensor> in = {random_tensor({1, 3, 24, 24}, seed++, -2, 2)};
  auto want = run_graph(g, in);
  auto opt = std::make_shared<ir::Graph>(*g);
  ThreadPool pool(1);
  auto std_fired = optimize_standard(*opt, pool);
  ASSERT_TRUE(std_fired.ok());
  EXPECT_EQ((*std_fired)["conv-affine"], 8);
  auto fused = optimize_cpu_fusions(*opt);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ((*fused)["activation-affine"], 4);
  EXPECT_EQ(count_ops(*opt, "Mul") + count_ops(*opt, "Add") + count_ops(*opt, "Div"), 0);
  int with_affine = 0;
  for (const auto& n : opt->nodes) with_affine += n.has_attr("activation_affine");
  EXPECT_EQ(with_affine, 4);
  if (cpu::cpu_kernels_have_avx512()) {
    EXPECT_GT(count_ops(*opt, "ConvBlocked"), 0);
  }
  // The optimised graph (ConvBlocked where the CPU has AVX-512) under every ISA level: each kernel path.
  expect_same_on_every_isa(opt, in, want[0], 1e-4f);
}

}  // namespace
}  // namespace dlrt::testing
