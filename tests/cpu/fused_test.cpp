// com.dlrt FusedConv / FusedMatMul / FusedGemm against the unfused ONNX ops
// (Conv/MatMul/Gemm, then bias, residual and the activation op itself), the
// vector activations against their scalar definitions, and the pre-packed
// weight path through the executor.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../ir/graph_builder.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;

Tensor rnd(Shape s, uint32_t seed, float scale = 1.0f) { return dlrt::testing::random_tensor(std::move(s), seed, -scale, scale); }

struct ActCase {
  std::string name;
  std::vector<float> params;
  std::string op;  // the ONNX op computing the same thing ("" when checked by formula)
  ir::Attributes op_attrs;
  int opset = 17;
};

std::vector<ActCase> act_cases() {
  return {
      {"", {}, "", {}},
      {"Relu", {}, "Relu", {}},
      {"Clip", {-0.5f, 0.75f}, "Clip", {{"min", attr_float(-0.5f)}, {"max", attr_float(0.75f)}}, 6},
      {"Sigmoid", {}, "Sigmoid", {}},
      {"Tanh", {}, "Tanh", {}},
      {"LeakyRelu", {0.3f}, "LeakyRelu", {{"alpha", attr_float(0.3f)}}},
      {"HardSigmoid", {0.25f, 0.4f}, "HardSigmoid", {{"alpha", attr_float(0.25f)}, {"beta", attr_float(0.4f)}}},
      {"HardSwish", {}, "HardSwish", {}},
      {"Gelu", {}, "Gelu", {}, 20},
      {"Gelu_tanh", {}, "Gelu", {{"approximate", attr_string("tanh")}}, 20},
  };
}

// Applies the activation with the real ONNX op (unfused reference).
Tensor activate_with_op(const ActCase& c, const Tensor& x) {
  if (c.op.empty()) return x;
  auto r = run_op(c.op, {x}, c.op_attrs, 1, c.opset);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? (*r)[0] : x;
}

Tensor add(const Tensor& a, const Tensor& b) {
  auto r = run_op("Add", {a, b});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return (*r)[0];
}

ir::Attributes with_act(ir::Attributes attrs, const ActCase& c) {
  if (!c.name.empty()) attrs["activation"] = attr_string(c.name);
  if (!c.params.empty()) attrs["activation_params"] = attr_floats(c.params);
  return attrs;
}

void expect_close(const Tensor& got, const Tensor& want, float tol = 2e-5f) { dlrt::testing::expect_close(got, want, tol); }

TEST(FusedActivation, VectorMatchesScalarDefinition) {
  std::vector<float> xs;
  for (float v = -12.0f; v <= 12.0f; v += 0.01f) xs.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-6f, -1e-6f, 30.0f, -30.0f, 100.0f, -100.0f}) xs.push_back(v);
  for (const auto& c : act_cases()) {
    auto act = make_activation(c.name, c.params);
    ASSERT_TRUE(act.ok());
    std::vector<float> y = xs;
    apply_activation(*act, y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = activate(*act, xs[i]);
      EXPECT_NEAR(y[i], want, 2e-6 + 2e-6 * std::abs(want)) << c.name << " at x=" << xs[i];
    }
  }
  // NaN stays NaN.
  for (const auto& c : act_cases()) {
    auto act = make_activation(c.name, c.params);
    float v[9] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    apply_activation(*act, v, 9);
    for (float f : v) EXPECT_TRUE(std::isnan(f)) << c.name;
  }
}

TEST(FusedActivation, UnknownNameIsAnError) {
  EXPECT_FALSE(make_activation("Swishy", {}).ok());
  auto r = run_op("FusedMatMul", {rnd({2, 3}, 1), rnd({3, 4}, 2)}, {{"activation", attr_string("Nope")}}, 1, 1,
                  "com.dlrt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Nope"), std::string::npos);
}

struct ConvShape {
  Shape x, w;
  ir::Attributes attrs;
};

std::vector<ConvShape> conv_shapes() {
  return {
      {{1, 3, 9, 11}, {7, 3, 3, 3}, {{"pads", attr_ints({1, 1, 1, 1})}}},
      {{2, 8, 6, 6}, {13, 8, 1, 1}, {}},                                          // pointwise
      {{1, 48, 7, 5}, {17, 48, 3, 3}, {{"pads", attr_ints({1, 0, 1, 2})}}},      // K = 432: two K slices
      {{1, 6, 10, 10}, {6, 1, 3, 3}, {{"group", attr_int(6)}, {"pads", attr_ints({1, 1, 1, 1})}}},  // depthwise
      {{1, 6, 11, 10}, {6, 1, 3, 3},
       {{"group", attr_int(6)}, {"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}}},  // depthwise s2
      {{2, 4, 9, 9}, {8, 2, 3, 3}, {{"group", attr_int(2)}, {"strides", attr_ints({2, 2})}}},         // grouped
      {{1, 5, 17}, {9, 5, 4}, {{"dilations", attr_ints({2})}}},                                       // 1-D
  };
}

TEST(FusedConv, MatchesConvPlusBiasResidualActivation) {
  uint32_t seed = 10;
  for (const auto& sh : conv_shapes()) {
    const Tensor x = rnd(sh.x, ++seed, 2.0f), w = rnd(sh.w, ++seed), b = rnd({sh.w[0]}, ++seed);
    auto conv = run_op("Conv", {x, w, b}, sh.attrs);
    ASSERT_TRUE(conv.ok()) << conv.status().to_string();
    const Tensor y = (*conv)[0];
    const Tensor z = rnd(y.shape(), ++seed);
    for (const auto& c : act_cases()) {
      SCOPED_TRACE("x " + shape_to_string(sh.x) + " act '" + c.name + "'");
      // with bias and residual
      auto f = run_op("FusedConv", {x, w, b, z}, with_act(sh.attrs, c), 1, 1, "com.dlrt");
      ASSERT_TRUE(f.ok()) << f.status().to_string();
      expect_close((*f)[0], activate_with_op(c, add(y, z)));
      // no bias, no residual
      auto f2 = run_op("FusedConv", {x, w}, with_act(sh.attrs, c), 1, 1, "com.dlrt");
      ASSERT_TRUE(f2.ok()) << f2.status().to_string();
      auto plain = run_op("Conv", {x, w}, sh.attrs);
      expect_close((*f2)[0], activate_with_op(c, (*plain)[0]));
    }
  }
}

TEST(FusedConv, ResidualWithoutBias) {
  const Tensor x = rnd({1, 4, 5, 5}, 1), w = rnd({3, 4, 3, 3}, 2);
  auto y = run_op("Conv", {x, w}, {{"pads", attr_ints({1, 1, 1, 1})}});
  const Tensor z = rnd((*y)[0].shape(), 3);
  auto f = run_op("FusedConv", {x, w, Tensor(), z}, {{"pads", attr_ints({1, 1, 1, 1})}, {"activation", attr_string("Relu")}},
                  1, 1, "com.dlrt");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_close((*f)[0], activate_with_op(act_cases()[1], add((*y)[0], z)));
}

TEST(FusedConv, BadResidualShapeIsAnError) {
  const Tensor x = rnd({1, 4, 5, 5}, 1), w = rnd({3, 4, 3, 3}, 2);
  auto f = run_op("FusedConv", {x, w, Tensor(), rnd({1, 3, 5, 5}, 3)}, {}, 1, 1, "com.dlrt");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
}

TEST(FusedMatMul, MatchesMatMulAlphaBiasActivation) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {{5, 7}, {7, 19}},           {{1, 12, 9, 8}, {1, 12, 8, 9}},  // attention-style batch
      {{3, 10, 33}, {33, 20}},     // folded Linear
      {{2, 1, 4, 6}, {3, 6, 5}},   // broadcast batch
      {{1, 300}, {300, 37}},       // M = 1 (gemv)
      {{7}, {7, 3}},               // 1-D A
  };
  uint32_t seed = 100;
  for (const auto& cs : cases) {
    const Tensor a = rnd(cs.a, ++seed), b = rnd(cs.b, ++seed);
    const int64_t n = cs.b.back();
    const Tensor bias = rnd({n}, ++seed);
    auto mm = run_op("MatMul", {a, b});
    ASSERT_TRUE(mm.ok()) << mm.status().to_string();
    auto scaled = run_op("Mul", {(*mm)[0], Tensor::scalar<float>(0.5f)});
    for (const auto& c : act_cases()) {
      SCOPED_TRACE("A " + shape_to_string(cs.a) + " act '" + c.name + "'");
      auto attrs = with_act({{"alpha", attr_float(0.5f)}}, c);
      auto f = run_op("FusedMatMul", {a, b, bias}, attrs, 1, 1, "com.dlrt");
      ASSERT_TRUE(f.ok()) << f.status().to_string();
      expect_close((*f)[0], activate_with_op(c, add((*scaled)[0], bias)));
      auto f2 = run_op("FusedMatMul", {a, b}, with_act({}, c), 1, 1, "com.dlrt");
      ASSERT_TRUE(f2.ok()) << f2.status().to_string();
      expect_close((*f2)[0], activate_with_op(c, (*mm)[0]));
    }
  }
}

TEST(FusedMatMul, MatchesMatMulBiasResidualActivation) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {{5, 7}, {7, 19}},
      {{2, 16, 40}, {40, 100}},  // folded Linear (the in-place A path on AVX-512)
      {{2, 3, 4, 6}, {2, 3, 6, 5}},  // per-batch products: Z offset with each C
      {{1, 300}, {300, 37}},  // M = 1 (gemv)
  };
  uint32_t seed = 300;
  for (const auto& cs : cases) {
    const Tensor a = rnd(cs.a, ++seed), b = rnd(cs.b, ++seed);
    auto mm = run_op("MatMul", {a, b});
    ASSERT_TRUE(mm.ok()) << mm.status().to_string();
    const Tensor bias = rnd({cs.b.back()}, ++seed), z = rnd((*mm)[0].shape(), ++seed);
    for (const auto& c : act_cases()) {
      SCOPED_TRACE("A " + shape_to_string(cs.a) + " act '" + c.name + "'");
      auto f = run_op("FusedMatMul", {a, b, bias, z}, with_act({}, c), 1, 1, "com.dlrt");
      ASSERT_TRUE(f.ok()) << f.status().to_string();
      expect_close((*f)[0], activate_with_op(c, add(add((*mm)[0], bias), z)));
      auto f2 = run_op("FusedMatMul", {a, b, Tensor(), z}, with_act({}, c), 1, 1, "com.dlrt");
      ASSERT_TRUE(f2.ok()) << f2.status().to_string();
      expect_close((*f2)[0], activate_with_op(c, add((*mm)[0], z)));
    }
  }
}

TEST(FusedMatMul, ResidualOfAnotherShapeIsAnError) {
  auto f = run_op("FusedMatMul", {rnd({2, 3}, 1), rnd({3, 4}, 2), Tensor(), rnd({1, 4}, 3)}, {}, 1, 1, "com.dlrt");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
}

TEST(FusedMatMul, BiasOfWrongLengthIsAnError) {
  auto f = run_op("FusedMatMul", {rnd({2, 3}, 1), rnd({3, 4}, 2), rnd({3}, 3)}, {}, 1, 1, "com.dlrt");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
}

TEST(FusedGemm, MatchesGemmActivation) {
  struct Case {
    bool ta, tb;
    Shape c;
    float beta;
  };
  const int64_t M = 13, N = 21, K = 30;
  const std::vector<Case> cases = {
      {false, false, {N}, 1.0f},   {false, true, {M, N}, 1.0f}, {true, false, {M, 1}, 1.0f},
      {true, true, {1, N}, 0.5f},  {false, true, {}, 1.0f},    {false, false, {M, N}, 2.0f},
  };
  uint32_t seed = 300;
  for (const auto& cs : cases) {
    const Tensor a = rnd(cs.ta ? Shape{K, M} : Shape{M, K}, ++seed), b = rnd(cs.tb ? Shape{N, K} : Shape{K, N}, ++seed);
    const Tensor c = cs.c.empty() ? Tensor() : rnd(cs.c, ++seed);
    ir::Attributes attrs = {{"transA", attr_int(cs.ta)}, {"transB", attr_int(cs.tb)},
                                                  {"alpha", attr_float(0.75f)}, {"beta", attr_float(cs.beta)}};
    auto g = run_op("Gemm", {a, b, c}, attrs);
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    for (const auto& ac : act_cases()) {
      SCOPED_TRACE("case C " + shape_to_string(cs.c) + " act '" + ac.name + "'");
      auto f = run_op("FusedGemm", {a, b, c}, with_act(attrs, ac), 1, 1, "com.dlrt");
      ASSERT_TRUE(f.ok()) << f.status().to_string();
      expect_close((*f)[0], activate_with_op(ac, (*g)[0]));
    }
  }
}

// Constant weights are packed when the executor creates the kernels; results must not change.
TEST(FusedPrepacked, ExecutorWithConstantWeightsMatchesRunOp) {
  dlrt::testing::GraphBuilder gb;
  const Tensor x = rnd({1, 8, 9, 9}, 1), w1 = rnd({16, 8, 3, 3}, 2), b1 = rnd({16}, 3);
  const Tensor w2 = rnd({16, 16, 1, 1}, 4), wdw = rnd({16, 1, 3, 3}, 5);
  const Tensor fcw = rnd({10, 16 * 81}, 6), fcb = rnd({10}, 7), mmw = rnd({10, 12}, 8);
  ir::ValueId in = gb.input("x", {1, 8, 9, 9});
  ir::ValueId c1 = gb.node("FusedConv", {in, gb.constant("w1", w1), gb.constant("b1", b1)},
                           {{"pads", attr_ints({1, 1, 1, 1})}, {"activation", attr_string("Relu")}}, 1, "com.dlrt");
  ir::ValueId c2 = gb.node("Conv", {c1, gb.constant("w2", w2)});
  ir::ValueId c3 = gb.node("FusedConv", {c2, gb.constant("wdw", wdw), ir::kNoValue, c1},
                           {{"group", attr_int(16)}, {"pads", attr_ints({1, 1, 1, 1})},
                            {"activation", attr_string("Clip")}, {"activation_params", attr_floats({0.0f, 6.0f})}},
                           1, "com.dlrt");
  ir::ValueId flat = gb.node("Flatten", {c3});
  ir::ValueId fc = gb.node("FusedGemm", {flat, gb.constant("fcw", fcw), gb.constant("fcb", fcb)},
                           {{"transB", attr_int(1)}, {"activation", attr_string("Tanh")}}, 1, "com.dlrt");
  ir::ValueId mm = gb.node("MatMul", {fc, gb.constant("mmw", mmw)});
  ir::ValueId g2 = gb.node("Gemm", {fc, gb.constant("mmw2", mmw)});
  gb.output(mm);
  gb.output(g2);
  auto graph = gb.graph();

  // The same computation with run_op (weights are ordinary inputs there: no packing).
  auto r1 = run_op("FusedConv", {x, w1, b1}, {{"pads", attr_ints({1, 1, 1, 1})}, {"activation", attr_string("Relu")}}, 1, 1,
                   "com.dlrt");
  ASSERT_TRUE(r1.ok());
  auto r2 = run_op("Conv", {(*r1)[0], w2});
  auto r3 = run_op("FusedConv", {(*r2)[0], wdw, Tensor(), (*r1)[0]},
                   {{"group", attr_int(16)}, {"pads", attr_ints({1, 1, 1, 1})}, {"activation", attr_string("Clip")},
                    {"activation_params", attr_floats({0.0f, 6.0f})}},
                   1, 1, "com.dlrt");
  auto rf = run_op("Flatten", {(*r3)[0]});
  auto rfc = run_op("FusedGemm", {(*rf)[0], fcw, fcb}, {{"transB", attr_int(1)}, {"activation", attr_string("Tanh")}}, 1, 1,
                    "com.dlrt");
  auto rmm = run_op("MatMul", {(*rfc)[0], mmw});
  auto rg = run_op("Gemm", {(*rfc)[0], mmw});
  ASSERT_TRUE(rmm.ok() && rg.ok());
  // One executor for every run: the first records the arena plan, the later
  // ones run in it (their values, the packed kernels' outputs among them,
  // placed in the arena instead of on the heap).
  ThreadPool pool(2);
  auto ex = Executor::create(graph, pool, cpu::builtin_kernels());
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  for (int rep = 0; rep < 3; ++rep) {
    SCOPED_TRACE("run " + std::to_string(rep));
    EXPECT_EQ(rep > 0, (*ex)->memory_stats().has_value()) << "a plan recorded by the first run, used by the later ones";
    auto out = (*ex)->run({RunValue::of(x)});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 2u);
    expect_close((*out)[0].tensor, (*rmm)[0], 1e-4f);
    expect_close((*out)[1].tensor, (*rg)[0], 1e-4f);
  }
}

// Packed operands with an epilogue against plain sgemm. With A read in place
// and B packed (the rows kernels), the column bias and the residual are added
// by the kernel's last store (TileAdd) and the activation, if any, after it:
// every mix of the three, K deep enough for several slices, 1 and 2 threads,
// on each kernel this CPU has (the weights packed under the same ISA cap).
TEST(PackedMatrix, SgemmExMatchesPlainSgemm) {
  std::mt19937 rng(7);
  static ThreadPool pool(2);
  std::vector<CpuIsa> isas = {CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) isas.push_back(CpuIsa::kAvx512);
  for (int run = 0; run < 60 * static_cast<int>(isas.size()); ++run) {
    ScopedCpuIsa scope(isas[static_cast<size_t>(run / 60)]);
    const int it = run % 60;  // the same 60 mixes on each ISA
    const int64_t M = 1 + rng() % 40, N = 1 + rng() % 70, K = 1 + rng() % 600;
    const bool ta = rng() % 2, tb = rng() % 2;
    const bool with_bias = it % 4 != 3, with_res = it % 2 == 1;
    const ActKind act = it % 3 == 0 ? ActKind::kNone : ActKind::kRelu;
    SCOPED_TRACE(std::string(cpu_isa_name(cpu_isa())) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                 std::to_string(K) + (with_bias ? " bias" : "") + (with_res ? " residual" : "") +
                 (act == ActKind::kRelu ? " relu" : ""));
    const Tensor a = rnd(ta ? Shape{K, M} : Shape{M, K}, rng()), b = rnd(tb ? Shape{N, K} : Shape{K, N}, rng());
    const Tensor bias = rnd({N}, rng());
    const int64_t ldr = N + 3;  // the residual's rows are not C's
    const Tensor res = rnd({M, ldr}, rng());
    std::vector<float> want(M * N);
    sgemm(ta, tb, M, N, K, 1.0f, a.data<float>(), a.dim(1), b.data<float>(), b.dim(1), 0.0f, want.data(), N, nullptr);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float v = want[i * N + j];
        if (with_bias) v += bias.data<float>()[j];
        if (with_res) v += res.data<float>()[i * ldr + j];
        want[i * N + j] = act == ActKind::kRelu ? std::max(0.0f, v) : v;
      }
    auto pa = PackedMatrix::pack_a(ta, M, K, a.data<float>(), a.dim(1));
    auto pb = PackedMatrix::pack_b(tb, K, N, b.data<float>(), b.dim(1));
    GemmEpilogue ep;
    ep.col_bias = with_bias ? bias.data<float>() : nullptr;
    ep.residual = with_res ? res.data<float>() : nullptr;
    ep.ldr = ldr;
    ep.act.kind = act;
    SgemmOperand oa{nullptr, 0, false, pa.get(), nullptr}, ob{nullptr, 0, false, pb.get(), nullptr};
    SgemmOperand oa2{a.data<float>(), a.dim(1), ta, nullptr, nullptr}, ob2{b.data<float>(), b.dim(1), tb, pb.get(), nullptr};
    std::vector<float> got(M * N, 123.0f), got2(M * N, 7.0f), got3(M * N, -5.0f);
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, oa, ob, 0.0f, got.data(), N, &ep, &pool).ok());
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, oa2, ob2, 0.0f, got2.data(), N, &ep, nullptr).ok());
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, oa2, ob2, 0.0f, got3.data(), N, &ep, &pool).ok());
    for (int64_t i = 0; i < M * N; ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "packed A, at " << i;
      ASSERT_NEAR(got2[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "A in place, at " << i;
      ASSERT_NEAR(got3[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "A in place, 2 threads, at " << i;
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
