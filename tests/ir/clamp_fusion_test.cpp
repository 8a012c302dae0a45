// activation-clamp: Max / Min by a scalar constant after a fused op (or a
// plain Conv / Gemm / MatMul) -> the op's post-clamp in every kernel path,
// against the unfused graph on every ISA level, NaN included; the near
// misses that must not fuse; Max / Min by a scalar inside blocked regions;
// the LeakyRelu op on the vector path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/isa.h"
#include "fusion_test_util.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"
#include "runtime/optimize.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();


// activation-clamp against the unfused graph (check_pass).
std::shared_ptr<ir::Graph> check(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, int expect_fired,
                                 float tol = 1e-5f) {
  return check_pass(std::move(g), inputs, p::fuse_activation_clamp, "activation-clamp", expect_fired, tol);
}

// The post-clamp alone (no activation) against dlrt's Max and Min kernels,
// bit for bit, on NaN, both zeros, infinities and values at the bounds:
// the scalar reference and the vector paths of every ISA level.
TEST(ActivationClamp, MatchesMaxMinKernelsBitForBit) {
  std::vector<float> xs = {kNaN, -kNaN, 0.0f, -0.0f, kInf, -kInf, -0.4f, 0.4f, 1.0f, -1.0f, 2.5f, -3.0f};
  for (int i = 0; i < 100; ++i) xs.push_back(-3.0f + 0.0625f * static_cast<float>(i));  // crosses both bounds
  const int64_t n = static_cast<int64_t>(xs.size());
  const std::vector<std::pair<float, float>> bounds = {{-0.4f, 1.0f},  {0.0f, 0.0f}, {-0.0f, kInf},
                                                       {-kInf, -0.0f}, {kInf, kInf}, {-3.0f, -3.0f}};
  for (auto [lo, hi] : bounds) {
    SCOPED_TRACE("bounds " + std::to_string(lo) + " " + std::to_string(hi));
    GraphBuilder b;
    auto x = b.input("x", {n});
    b.output(b.node("Min", {b.node("Max", {x, b.scalar("lo", lo)}), b.scalar("hi", hi)}));
    const Tensor in = filled({n}, xs);
    const auto want = run_graph(b.graph(), {in});
    ASSERT_EQ(want.size(), 1u);
    cpu::Activation a;
    a.bounded = true;
    a.lo = lo;
    a.hi = hi;
    for (cpu::CpuIsa isa : runnable_isas()) {
      cpu::ScopedCpuIsa cap(isa);
      SCOPED_TRACE(std::string("isa ") + cpu::cpu_isa_name(isa));
      std::vector<float> got = xs;
      cpu::apply_activation(a, got.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float w = want[0].data<float>()[i], r = cpu::activate(a, xs[static_cast<size_t>(i)]);
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(got[static_cast<size_t>(i)]) && std::isnan(r)) << "at " << i;
        } else {
          EXPECT_EQ(std::memcmp(&got[static_cast<size_t>(i)], &w, 4), 0) << "at " << i << ": " << got[i] << " vs " << w;
          EXPECT_EQ(std::memcmp(&r, &w, 4), 0) << "at " << i << ": " << r << " vs " << w;
        }
      }
    }
  }
}

// The LeakyRelu op (vectorised through the epilogue's LeakyRelu) against
// x >= 0 ? x : alpha * x, bit for bit, on NaN, both zeros and infinities,
// a length with a vector tail, on every ISA level.
TEST(ActivationClamp, LeakyReluOpMatchesScalarBitForBit) {
  std::vector<float> xs = {kNaN, 0.0f, -0.0f, kInf, -kInf, 1e-40f, -1e-40f, -3.5f, 2.0f};
  for (int i = 0; i < 60; ++i) xs.push_back(-2.0f + 0.07f * static_cast<float>(i));
  const int64_t n = static_cast<int64_t>(xs.size());
  for (cpu::CpuIsa isa : runnable_isas()) {
    cpu::ScopedCpuIsa cap(isa);
    SCOPED_TRACE(std::string("isa ") + cpu::cpu_isa_name(isa));
    GraphBuilder b;
    auto x = b.input("x", {n});
    b.output(b.node("LeakyRelu", {x}, {{"alpha", af(0.2f)}}));
    const auto got = run_graph(b.graph(), {filled({n}, xs)});
    ASSERT_EQ(got.size(), 1u);
    for (int64_t i = 0; i < n; ++i) {
      const float v = xs[static_cast<size_t>(i)], w = v >= 0.0f ? v : 0.2f * v, g = got[0].data<float>()[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << "at " << i;
      } else {
        EXPECT_EQ(std::memcmp(&g, &w, 4), 0) << "at " << i << ": " << g << " vs " << w;
      }
    }
  }
}

// Every conv kernel path (GEMM, direct, Winograd, depthwise planes / flat /
// 8-channel, strided) under every ISA level, with each activation kind, a
// post-affine or not, a residual or not, and Max, Min and Max-then-Min
// tails; channel 0's bias is NaN (a NaN channel in every path).
TEST(ActivationClamp, FusedConvEveryKernelPath) {
  const std::vector<ConvCase> convs = conv_kernel_paths();
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"", {}}, {"LeakyRelu", {0.2f}}, {"Relu", {}}, {"Clip", {-0.5f, 0.5f}}, {"HardSwish", {}}, {"Gelu", {}}};
  const std::vector<std::vector<std::pair<const char*, float>>> tails = {
      {{"Max", -0.4f}}, {{"Min", 0.3f}}, {{"Max", -0.25f}, {"Min", 0.75f}}};
  uint32_t seed = 700;
  int k = 0;
  for (cpu::CpuIsa isa : runnable_isas())
    for (const auto& cc : convs)
      for (const auto& [act, params] : acts)
        for (const auto& tail : tails) {
          cpu::ScopedCpuIsa cap(isa);
          const bool residual = k % 2 == 1, affine = k % 3 == 2;
          ++k;
          SCOPED_TRACE(std::string(cc.what) + " act '" + act + "' tail " + tail[0].first +
                       (tail.size() > 1 ? "+Min" : "") + (residual ? " + residual" : "") + (affine ? " + affine" : "") +
                       " isa " + cpu::cpu_isa_name(isa));
          GraphBuilder b;
          ir::Attributes attrs;
          if (!act.empty()) attrs["activation"] = as(act);
          if (!params.empty()) attrs["activation_params"] = afs(params);
          if (affine) attrs["activation_affine"] = afs({-1.25f, 0.125f});
          std::vector<Tensor> inputs;
          ir::ValueId v = add_fused_conv(b, cc, attrs, residual, true, seed, inputs);
          int c = 0;
          for (auto [op, val] : tail) v = b.node(op, {v, b.constant("c" + std::to_string(c++), filled({1}, {val}))});
          b.output(v);
          auto opt = check(b.graph(), inputs, 1);
          ASSERT_EQ(opt->nodes.size(), 1u);
          const std::vector<float> lh = opt->nodes[0].attr_floats("activation_clamp");
          ASSERT_EQ(lh.size(), 2u);
          EXPECT_EQ(lh[0], tail[0].first == std::string("Max") ? tail[0].second : -kInf);
          EXPECT_EQ(lh[1], tail.back().first == std::string("Min") ? tail.back().second : kInf);
        }
}

// FusedGemm, FusedMatMul and plain Conv / Gemm / MatMul (which become fused
// ops), narrow and wide outputs, Max(c, y) with the constant first; NaN in
// the input reaches the output through every row it touches.
TEST(ActivationClamp, GemmMatMulAndPlainOps) {
  uint32_t seed = 900;
  for (cpu::CpuIsa isa : runnable_isas())
    for (int64_t n : {24, 100})
      for (const char* op : {"FusedGemm", "FusedMatMul", "Gemm", "MatMul", "Conv"}) {
        cpu::ScopedCpuIsa cap(isa);
        SCOPED_TRACE(std::string(op) + " N=" + std::to_string(n) + " isa " + cpu::cpu_isa_name(isa));
        const bool conv = std::string(op) == "Conv", fused = std::string(op).rfind("Fused", 0) == 0;
        GraphBuilder b;
        const Shape xs = conv ? Shape{1, 33, 5, 7} : Shape{5, 33};
        auto a = b.input("a", xs);
        auto w = b.constant("w", random_tensor(conv ? Shape{n, 33, 1, 1} : Shape{33, n}, seed++));
        auto c = b.constant("c", random_tensor({n}, seed++));
        ir::Attributes attrs;
        if (fused) attrs["activation"] = as("Tanh");
        std::vector<ir::ValueId> ins = {a, w, c};
        if (std::string(op) == "MatMul") ins.pop_back();  // no bias input
        auto f = b.node(op, ins, attrs, fused ? 1 : 17, fused ? "com.dlrt" : "");
        auto m = b.node("Max", {b.constant("lo", filled({1, 1}, {-0.375f})), f});
        b.output(b.node("Min", {m, b.scalar("hi", 0.5f)}));
        Tensor x = random_tensor(xs, seed++, -2, 2);
        x.data<float>()[3] = kNaN;
        auto opt = check(b.graph(), {x}, 1);
        ASSERT_EQ(opt->nodes.size(), 1u);
        EXPECT_EQ(opt->nodes[0].domain, "com.dlrt");
        EXPECT_EQ(opt->nodes[0].attr_floats("activation_clamp"), (std::vector<float>{-0.375f, 0.5f}));
      }
}

// Chains compose: Min then Max above it (every value the Max's constant),
// Max twice, Max below an earlier Max.
TEST(ActivationClamp, ChainsCompose) {
  const std::vector<std::vector<std::pair<const char*, float>>> chains = {
      {{"Min", 0.25f}, {"Max", 0.5f}},
      {{"Max", -0.5f}, {"Max", 0.125f}},
      {{"Max", 0.125f}, {"Max", -0.5f}, {"Min", 0.25f}, {"Min", 0.5f}},
  };
  const std::vector<std::vector<float>> want = {{0.5f, 0.5f}, {0.125f, kInf}, {0.125f, 0.25f}};
  for (size_t i = 0; i < chains.size(); ++i) {
    GraphBuilder b;
    auto x = b.input("x", {1, 8, 6, 6});
    ir::ValueId v = b.node("FusedConv", {x, b.constant("w", random_tensor({8, 8, 1, 1}, 70))},
                           {{"activation", as("LeakyRelu")}}, 1, "com.dlrt");
    int c = 0;
    for (auto [op, val] : chains[i]) v = b.node(op, {v, b.scalar("c" + std::to_string(c++), val)});
    b.output(v);
    auto opt = check(b.graph(), {random_tensor({1, 8, 6, 6}, 71, -2, 2)}, 1);
    ASSERT_EQ(opt->nodes.size(), 1u);
    EXPECT_EQ(opt->nodes[0].attr_floats("activation_clamp"), want[i]);
  }
}

// Nothing fuses: a per-channel constant, a one-element constant of higher
// rank than the output (it would change the shape), Max of two computed
// values, a second reader of the conv's output, the conv's output a graph
// output, a NaN constant, an integer constant, a three-input Max, and
// Max(0, y) (its ties of +0 and -0 return the constant).
TEST(ActivationClamp, NearMissesLeftAlone) {
  for (int variant = 0; variant < 9; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    GraphBuilder b;
    auto x = b.input("x", {1, 4, 6, 6});
    auto y = b.input("y", {1});
    auto f = b.node("FusedConv", {x, b.constant("w", random_tensor({4, 4, 1, 1}, 50))},
                    {{"activation", as("LeakyRelu")}}, 1, "com.dlrt");
    ir::ValueId k = b.scalar("k", 0.25f);
    if (variant == 0) k = b.constant("k", random_tensor({1, 4, 1, 1}, 51));
    if (variant == 1) k = b.constant("k", filled({1, 1, 1, 1, 1}, {0.25f}));
    if (variant == 2) k = b.node("Neg", {y});
    if (variant == 5) k = b.scalar("k", kNaN);
    const bool integer = variant == 6;
    if (integer) k = b.constant("k", Tensor::from_vector<int32_t>({1}, {2}));
    if (variant == 7) {
      b.output(b.node("Max", {f, k, b.scalar("k2", 0.5f)}));
    } else if (variant == 8) {
      b.output(b.node("Max", {b.scalar("z", 0.0f), f}));
    } else {
      b.output(b.node("Max", {f, k}));
    }
    if (variant == 3) b.output(b.node("Relu", {f}));
    if (variant == 4) b.output(f);
    auto g = b.graph();
    if (integer) {
      p::PassContext ctx = cpu_kernels_context();
      EXPECT_EQ(p::fuse_activation_clamp(*g, ctx), 0);
      continue;
    }
    check(g, {random_tensor({1, 4, 6, 6}, 52), random_tensor({1}, 53)}, 0);
  }
  // Max(y, 0) and Max(y, -0) (the constant second) fuse.
  for (float zero : {0.0f, -0.0f}) {
    GraphBuilder b;
    auto x = b.input("x", {1, 4, 6, 6});
    auto f = b.node("FusedConv", {x, b.constant("w", random_tensor({4, 4, 1, 1}, 54))},
                    {{"activation", as("LeakyRelu")}}, 1, "com.dlrt");
    b.output(b.node("Max", {f, b.scalar("z", zero)}));
    check(b.graph(), {random_tensor({1, 4, 6, 6}, 55)}, 1);
  }
}

// A FusedExpandDepthwise never takes a conv with a post-clamp as its expand
// or depthwise conv; as its project conv the conv keeps it.
TEST(ActivationClamp, ExpandDepthwise) {
  for (bool clamp : {false, true}) {
    GraphBuilder b;
    ir::Attributes e = {{"activation", as("Relu")}};
    if (clamp) e["activation_clamp"] = afs({-1.0f, 4.0f});
    b.output(add_expand_depthwise(b, b.input("x", {1, 16, 14, 14}), e, 60));
    auto g = b.graph();
    p::PassContext ctx = cpu_kernels_context();
    EXPECT_EQ(p::fuse_expand_depthwise(*g, ctx), clamp ? 0 : 1);
  }
  GraphBuilder b;
  auto c2 = add_expand_depthwise(b, b.input("x", {1, 16, 14, 14}), {{"activation", as("Relu")}}, 62);
  auto c3 = b.node("FusedConv",
                   {c2, b.constant("wp", random_tensor({16, 32, 1, 1}, 64)), b.constant("bp", random_tensor({16}, 65))},
                   {{"activation", as("LeakyRelu")}}, 1, "com.dlrt");
  b.output(b.node("Min", {b.node("Max", {c3, b.scalar("lo", -0.1f)}), b.scalar("hi", 0.2f)}));
  const std::vector<Tensor> in = {random_tensor({1, 16, 14, 14}, 66)};
  auto want = run_graph(b.graph(), in);
  auto opt = std::make_shared<ir::Graph>(*b.graph());
  p::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(p::fuse_activation_clamp(*opt, ctx), 1);
  EXPECT_EQ(p::fuse_expand_depthwise(*opt, ctx), 1);
  EXPECT_EQ(p::fuse_expand_depthwise_project(*opt, ctx), 1);
  ASSERT_EQ(opt->nodes.size(), 1u);
  EXPECT_EQ(opt->nodes[0].attr_floats("project_activation_clamp"), (std::vector<float>{-0.1f, 0.2f}));
  auto got = run_graph(opt, in);
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], want[0], 1e-5f);
}

// A conv net as tf2onnx exports Keras' LeakyRelu + maximum (Conv,
// LeakyRelu, Max by a [1, 1, 1, 1] constant, MaxPool, channel counts not
// multiples of 16), with a standalone LeakyRelu + Max after a
// BatchNormalization that stays, and a Min by a scalar and 1 - y after the
// MaxPool: the optimiser fuses every Max next to a conv, the convs run
// blocked on AVX-512 CPUs with the Min and the Sub inside their region, and
// the numbers match the unoptimised graph on every ISA level.
TEST(ActivationClamp, LeakyMaxConvNetEndToEnd) {
  GraphBuilder b;
  auto x = b.input("x", {1, 1, 30, 16});
  uint32_t seed = 500;
  auto lo = b.constant("lo", filled({1, 1, 1, 1}, {-0.4f}));
  ir::ValueId v = b.node("Relu", {b.node("Conv", {x, b.constant("w0", random_tensor({24, 1, 3, 3}, seed++))})});
  v = b.node(
      "BatchNormalization",
      {v, b.constant("g", random_tensor({24}, seed++, 0.5f, 1.5f)), b.constant("be", random_tensor({24}, seed++)),
       b.constant("mu", random_tensor({24}, seed++)), b.constant("var", random_tensor({24}, seed++, 0.5f, 1.5f))});
  v = b.node("Max", {b.node("LeakyRelu", {v}, {{"alpha", af(0.2f)}}), lo});
  const std::vector<std::pair<int64_t, int64_t>> layers = {{24, 24}, {24, 48}, {48, 48}, {48, 72}};
  int k = 0;
  for (auto [cin, cout] : layers) {
    const std::string s = std::to_string(k++);
    v = add_conv3x3(b, v, cin, cout, s, seed, 0.2f);
    v = b.node("Max", {b.node("LeakyRelu", {v}, {{"alpha", af(0.2f)}}), lo});
    if (k == 2) {
      v = b.node("MaxPool", {v}, {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}});
      v = b.node("Min", {v, b.scalar("hi", 1.5f)});
      v = b.node("Sub", {b.constant("one", filled({1}, {1.0f})), v});  // the constant first
    }
  }
  b.output(v);
  auto g = b.graph();
  Tensor in = random_tensor({1, 1, 30, 16}, seed++, -2, 2);
  auto want = run_graph(g, {in});
  auto opt = std::make_shared<ir::Graph>(*g);
  ThreadPool pool(1);
  ASSERT_TRUE(optimize_standard(*opt, pool).ok());
  auto fused = optimize_cpu_fusions(*opt);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ((*fused)["activation-clamp"], 4);
  EXPECT_EQ(count_ops(*opt, "Max"), 1);
  EXPECT_EQ(count_ops(*opt, "Min"), 1);
  EXPECT_EQ(count_ops(*opt, "Sub"), 1);
  if (cpu::cpu_kernels_have_avx512()) {
    EXPECT_EQ(count_ops(*opt, "ConvBlocked"), 4);
    // The Min and the Sub run on the blocked tensor: one reorder in, one out.
    EXPECT_EQ(count_ops(*opt, "ToBlocked"), 1);
    EXPECT_EQ(count_ops(*opt, "FromBlocked"), 1);
  }
  expect_same_on_every_isa(opt, {in}, want[0], 1e-4f);
}

}  // namespace
}  // namespace dlrt::testing
