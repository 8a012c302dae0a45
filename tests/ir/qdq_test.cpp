// fuse_qdq: QDQ-format groups become integer ops where ONNX Runtime's rules
// allow it, stay as they are otherwise, and compute the same values (up to
// one quantisation step: the float path rounds a float sum, the integer
// kernels an exact one).
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cpu/kernel.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"
#include "runtime/optimize.h"

namespace dlrt::testing {
namespace {

using ir::Attribute;
using ir::ValueId;
namespace p = ir::passes;

bool has_kernel(const std::string& op, const std::string& domain) {
  return cpu::builtin_kernels().find(op, domain, 1) != nullptr;
}

// Builds QDQ graphs: float activations quantised to uint8 between ops.
struct QdqBuilder {
  GraphBuilder b;
  int n = 0;
  std::string name(const char* base) { return std::string(base) + std::to_string(n++); }
  ValueId u8(uint8_t v) { return b.constant(name("zp"), Tensor::scalar<uint8_t>(v)); }
  ValueId q(ValueId x, float scale, uint8_t zp) { return b.node("QuantizeLinear", {x, b.scalar(name("s"), scale), u8(zp)}); }
  ValueId dq(ValueId x, float scale, uint8_t zp) {
    return b.node("DequantizeLinear", {x, b.scalar(name("s"), scale), u8(zp)});
  }
  ValueId qdq(ValueId x, float scale, uint8_t zp) { return dq(q(x, scale, zp), scale, zp); }
  // DQ of a constant int8 weight [m, c, k, k] with per-channel scales (axis 0).
  ValueId weight(int64_t m, int64_t c, int64_t k, std::vector<float> scales, bool per_channel = true) {
    std::vector<int8_t> w(static_cast<size_t>(m * c * k * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    ValueId wt = b.constant(name("w"), Tensor::from_vector<int8_t>({m, c, k, k}, w));
    ValueId s = per_channel ? b.constant(name("ws"), Tensor::from_vector<float>({m}, scales)) : b.scalar(name("ws"), scales[0]);
    ValueId z = per_channel ? b.constant(name("wz"), Tensor::from_vector<int8_t>({m}, std::vector<int8_t>(m, 0)))
                            : b.constant(name("wz"), Tensor::scalar<int8_t>(0));
    return b.node("DequantizeLinear", {wt, s, z}, {{"axis", ai(0)}});
  }
  ValueId bias(std::vector<float> scales, bool zero_zp = true) {
    std::vector<int32_t> v(scales.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i * 91) - 100;
    const int64_t m = static_cast<int64_t>(scales.size());
    return b.node("DequantizeLinear",
                  {b.constant(name("b"), Tensor::from_vector<int32_t>({m}, v)),
                   b.constant(name("bs"), Tensor::from_vector<float>({m}, scales)),
                   b.constant(name("bz"), Tensor::from_vector<int32_t>({m}, std::vector<int32_t>(m, zero_zp ? 0 : 1)))},
                  {{"axis", ai(0)}});
  }
};

// Runs g before and after fuse_qdq; outputs agree within `tol` (absolute).
std::shared_ptr<ir::Graph> check(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, int expect_fired,
                                 float tol) {
  auto before = run_graph(g, inputs);
  auto opt = std::make_shared<ir::Graph>(*g);
  p::PassContext ctx = cpu_kernels_context();
  p::fold_shapes(*opt, ctx);  // value types, as the session's standard passes give them
  EXPECT_EQ(p::fuse_qdq(*opt, ctx), expect_fired);
  EXPECT_TRUE(opt->topological_sort().ok());
  auto after = run_graph(opt, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    EXPECT_EQ(before[i].dtype(), DType::kFloat32);
    EXPECT_EQ(before[i].shape(), after[i].shape());
    if (before[i].dtype() != DType::kFloat32 || before[i].shape() != after[i].shape()) continue;
    for (int64_t k = 0; k < before[i].size(); ++k)
      EXPECT_NEAR(after[i].data<float>()[k], before[i].data<float>()[k], tol) << "output " << i << " at " << k;
  }
  return opt;
}

constexpr float kXs = 0.02f, kYs = 0.05f;

std::vector<float> wscales() { return {0.01f, 0.02f, 0.015f, 0.03f}; }
std::vector<float> bscales() {
  std::vector<float> r;
  for (float s : wscales()) r.push_back(kXs * s);
  return r;
}

TEST(QdqFusion, ConvGroupBecomesQLinearConv) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 6, 6});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 3, wscales()), q.bias(bscales())},
                       {{"pads", ais({1, 1, 1, 1})}});
  q.b.output(q.dq(q.q(conv, kYs, 120), kYs, 120));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 6, 6}, 7)}, 1, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearConv"), 1);
  EXPECT_EQ(count_ops(*opt, "Conv"), 0);
  // The input's Q, the output's DQ stay; the weight/bias/activation DQs go.
  EXPECT_EQ(count_ops(*opt, "DequantizeLinear"), 1);
  EXPECT_EQ(count_ops(*opt, "QuantizeLinear"), 1);
}

TEST(QdqFusion, ConvWithScalarWeightScaleAndNoBias) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, {0.02f}, false)});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 8)}, 1, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearConv"), 1);
}

TEST(QdqFusion, RedundantReluBeforeQIsDropped) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales())});
  // zero point 0 of uint8: the Q clips negatives already.
  q.b.output(q.dq(q.q(q.b.node("Relu", {conv}), kYs, 0), kYs, 0));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 9)}, 2, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "Relu"), 0);
  EXPECT_EQ(count_ops(*opt, "QLinearConv"), 1);
}

TEST(QdqFusion, ReluThatCutsTheRangeStays) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales())});
  q.b.output(q.dq(q.q(q.b.node("Relu", {conv}), kYs, 100), kYs, 100));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 10)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Relu"), 1);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(QdqFusion, NonConstantWeightIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto w = q.b.input("w", {4, 3, 1, 1}, DType::kInt8);
  auto wdq = q.b.node("DequantizeLinear", {w, q.b.scalar("ws", 0.02f), q.b.constant("wz", Tensor::scalar<int8_t>(0))});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), wdq});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  std::vector<int8_t> wv(12);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<int8_t>(i * 11 - 60);
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 11), Tensor::from_vector<int8_t>({4, 3, 1, 1}, wv)}, 0,
                   1e-6f);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(QdqFusion, VectorActivationScaleIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  // Per-channel scale on the activation: QLinearConv wants a scalar.
  auto xs = q.b.constant("xs", Tensor::from_vector<float>({3}, {0.02f, 0.03f, 0.04f}));
  auto xz = q.b.constant("xz", Tensor::from_vector<uint8_t>({3}, {128, 128, 128}));
  auto xq = q.b.node("QuantizeLinear", {x, xs, xz}, {{"axis", ai(1)}});
  auto xdq = q.b.node("DequantizeLinear", {xq, xs, xz}, {{"axis", ai(1)}});
  auto conv = q.b.node("Conv", {xdq, q.weight(4, 3, 1, wscales())});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 12)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(QdqFusion, BiasWithAnotherScaleIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  std::vector<float> bs = bscales();
  bs[2] *= 2;
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales()), q.bias(bs)});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 13)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(QdqFusion, OutputWithTwoReadersIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales())});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  q.b.output(q.b.node("Neg", {conv}));  // the float result is read too
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 14)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Conv"), 1);
}

TEST(QdqFusion, SharedInputDqServesEveryReader) {
  // One DQ read by two Convs and a float op: ONNX Runtime gives each reader
  // its own DQ, so both Convs fuse and the DQ stays for the float reader.
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto xdq = q.qdq(x, kXs, 128);
  auto c1 = q.b.node("Conv", {xdq, q.weight(4, 3, 1, wscales())});
  auto c2 = q.b.node("Conv", {xdq, q.weight(4, 3, 3, wscales())}, {{"pads", ais({1, 1, 1, 1})}});
  q.b.output(q.dq(q.q(c1, kYs, 128), kYs, 128));
  q.b.output(q.dq(q.q(c2, kYs, 128), kYs, 128));
  q.b.output(q.b.node("Neg", {xdq}));
  auto opt = check(q.b.graph(), {random_tensor({1, 3, 5, 5}, 15)}, 2, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearConv"), 2);
  EXPECT_EQ(count_ops(*opt, "DequantizeLinear"), 3);  // the shared one and the two outputs'
}

TEST(QdqFusion, MaxPoolAndReshapeRunOnQuantisedValues) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 2, 4, 4});
  auto xq = q.q(x, kXs, 128);
  auto pool = q.b.node("MaxPool", {q.dq(xq, kXs, 128)}, {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}});
  auto pq = q.q(pool, kXs, 128);
  auto flat = q.b.node("Reshape", {q.dq(pq, kXs, 128), q.b.ints("shape", {1, -1})});
  q.b.output(q.dq(q.q(flat, kXs, 128), kXs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 2, 4, 4}, 16)}, 2, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "DequantizeLinear"), 1);
  EXPECT_EQ(count_ops(*opt, "QuantizeLinear"), 1);
  for (const auto& n : opt->nodes) {
    if (n.op_type == "MaxPool") {
      EXPECT_EQ(opt->values[n.outputs[0]].type.dtype, DType::kUInt8);
    }
  }
}

TEST(QdqFusion, SplitRunsOnQuantisedValues) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 4, 3});
  ir::Node split;
  split.name = "split";
  split.op_type = "Split";
  split.opset = 17;
  split.inputs = {q.qdq(x, kXs, 128)};
  split.attributes["axis"] = ai(1);
  auto g = q.b.graph();
  ValueId a = g->add_value("a"), b = g->add_value("b");
  split.outputs = {a, b};
  g->nodes.push_back(split);
  q.b.output(q.dq(q.q(a, kXs, 128), kXs, 128));
  q.b.output(q.dq(q.q(b, kXs, 128), kXs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 4, 3}, 30)}, 1, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "QuantizeLinear"), 1);
  EXPECT_EQ(count_ops(*opt, "DequantizeLinear"), 2);
}

TEST(QdqFusion, DropNeedsEqualParameters) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 2, 4, 4});
  auto pool = q.b.node("MaxPool", {q.qdq(x, kXs, 128)}, {{"kernel_shape", ais({2, 2})}});
  q.b.output(q.dq(q.q(pool, kYs, 128), kYs, 128));  // requantised: not a plain move
  auto opt = check(q.b.graph(), {random_tensor({1, 2, 4, 4}, 17)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "QuantizeLinear"), 2);
}

TEST(QdqFusion, AddBecomesQLinearAddWhenTheKernelExists) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 2, 4, 4});
  auto y = q.b.input("y", {1, 2, 4, 4});
  auto add = q.b.node("Add", {q.qdq(x, kXs, 128), q.qdq(y, 0.03f, 120)});
  q.b.output(q.dq(q.q(add, kYs, 128), kYs, 128));
  const bool kernel = has_kernel("QLinearAdd", "com.microsoft");
  auto opt = check(q.b.graph(), {random_tensor({1, 2, 4, 4}, 18), random_tensor({1, 2, 4, 4}, 19)}, kernel ? 1 : 0,
                   kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "Add"), kernel ? 0 : 1);
}

TEST(QdqFusion, AddWithVectorScaleIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 2, 4, 4});
  auto y = q.b.input("y", {1, 2, 4, 4});
  auto ys = q.b.constant("ys", Tensor::from_vector<float>({2}, {0.02f, 0.04f}));
  auto yz = q.b.constant("yz", Tensor::from_vector<uint8_t>({2}, {128, 128}));
  auto ydq = q.b.node("DequantizeLinear", {q.b.node("QuantizeLinear", {y, ys, yz}, {{"axis", ai(1)}}), ys, yz},
                      {{"axis", ai(1)}});
  auto add = q.b.node("Add", {q.qdq(x, kXs, 128), ydq});
  q.b.output(q.dq(q.q(add, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 2, 4, 4}, 20), random_tensor({1, 2, 4, 4}, 21)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Add"), 1);
}

TEST(QdqFusion, MatMulBecomesQLinearMatMul) {
  QdqBuilder q;
  auto x = q.b.input("x", {2, 3, 8});
  std::vector<int8_t> w(8 * 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 29 % 200) - 100);
  auto wdq = q.b.node("DequantizeLinear", {q.b.constant("w", Tensor::from_vector<int8_t>({8, 5}, w)),
                                           q.b.constant("ws", Tensor::from_vector<float>({5}, {0.01f, 0.02f, 0.01f, 0.03f, 0.02f})),
                                           q.b.constant("wz", Tensor::from_vector<int8_t>({5}, {0, 0, 0, 0, 0}))},
                      {{"axis", ai(1)}});
  auto mm = q.b.node("MatMul", {q.qdq(x, kXs, 128), wdq});
  q.b.output(q.dq(q.q(mm, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({2, 3, 8}, 22)}, 1, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearMatMul"), 1);
}

// A constant int8 [k, n] (or [n, k]) matrix with per-column (per-row) scales.
ValueId gemm_weight(QdqBuilder& q, int64_t rows, int64_t cols, int64_t axis, std::vector<float> scales) {
  std::vector<int8_t> w(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 53 % 230) - 115);
  const int64_t n = static_cast<int64_t>(scales.size());
  return q.b.node("DequantizeLinear", {q.b.constant(q.name("w"), Tensor::from_vector<int8_t>({rows, cols}, w)),
                                       q.b.constant(q.name("ws"), Tensor::from_vector<float>({n}, scales)),
                                       q.b.constant(q.name("wz"), Tensor::from_vector<int8_t>({n}, std::vector<int8_t>(n, 0)))},
                  {{"axis", ai(axis)}});
}

TEST(QdqFusion, GemmBecomesQGemm) {
  if (!has_kernel("QGemm", "com.microsoft")) GTEST_SKIP() << "no QGemm kernel";
  QdqBuilder q;
  auto x = q.b.input("x", {2, 6});
  // transB: B is [n, k], its per-channel axis 0.
  auto gemm = q.b.node("Gemm", {q.qdq(x, kXs, 128), gemm_weight(q, 4, 6, 0, wscales()), q.bias(bscales())},
                       {{"transB", ai(1)}});
  q.b.output(q.dq(q.q(gemm, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({2, 6}, 23)}, 1, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QGemm"), 1);
  EXPECT_EQ(count_ops(*opt, "Gemm"), 0);
}

TEST(QdqFusion, GemmWithoutQGivesFloatQGemm) {
  if (!has_kernel("QGemm", "com.microsoft")) GTEST_SKIP() << "no QGemm kernel";
  QdqBuilder q;
  auto x = q.b.input("x", {3, 6});
  auto gemm = q.b.node("Gemm", {q.qdq(x, kXs, 128), gemm_weight(q, 6, 4, 1, wscales()), q.bias(bscales())});
  q.b.output(gemm);
  auto opt = check(q.b.graph(), {random_tensor({3, 6}, 24)}, 1, 1e-4f);
  EXPECT_EQ(count_ops(*opt, "QGemm"), 1);
}

TEST(QdqFusion, GemmWithBetaIsLeft) {
  QdqBuilder q;
  auto x = q.b.input("x", {3, 6});
  Attribute beta;
  beta.kind = Attribute::Kind::kFloat;
  beta.f = 0.5f;
  auto gemm = q.b.node("Gemm", {q.qdq(x, kXs, 128), gemm_weight(q, 6, 4, 1, wscales()), q.bias(bscales())},
                       {{"beta", beta}});
  q.b.output(q.dq(q.q(gemm, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({3, 6}, 25)}, 0, 1e-6f);
  EXPECT_EQ(count_ops(*opt, "Gemm"), 1);
}

TEST(QdqFusion, SiluBecomesQLinearSigmoidAndQLinearMul) {
  // x * Sigmoid(x) with one DQ of x read by both (efficientnet's blocks).
  if (!has_kernel("QLinearSigmoid", "com.microsoft") || !has_kernel("QLinearMul", "com.microsoft"))
    GTEST_SKIP() << "no QLinearSigmoid/QLinearMul kernel";
  QdqBuilder q;
  auto x = q.b.input("x", {1, 4, 3, 3});
  auto xdq = q.qdq(x, kXs, 128);
  auto sig = q.b.node("Sigmoid", {xdq});
  auto mul = q.b.node("Mul", {xdq, q.qdq(sig, 1.0f / 255, 0)});
  q.b.output(q.dq(q.q(mul, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 4, 3, 3}, 26, -3, 3)}, 2, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearSigmoid"), 1);
  EXPECT_EQ(count_ops(*opt, "QLinearMul"), 1);
  EXPECT_EQ(count_ops(*opt, "DequantizeLinear"), 1);
}

TEST(QdqFusion, ConcatBecomesQLinearConcat) {
  if (!has_kernel("QLinearConcat", "com.microsoft")) GTEST_SKIP() << "no QLinearConcat kernel";
  QdqBuilder q;
  auto x = q.b.input("x", {1, 2, 3});
  auto y = q.b.input("y", {1, 3, 3});
  auto cat = q.b.node("Concat", {q.qdq(x, kXs, 128), q.qdq(y, 0.03f, 100)}, {{"axis", ai(1)}});
  q.b.output(q.dq(q.q(cat, kYs, 128), kYs, 128));
  auto opt = check(q.b.graph(), {random_tensor({1, 2, 3}, 27), random_tensor({1, 3, 3}, 28)}, 1, kYs * 1.01f);
  EXPECT_EQ(count_ops(*opt, "QLinearConcat"), 1);
}

TEST(QdqFusion, SessionPassesFuseAndFoldTheRest) {
  // One Conv fuses; the other (bias scale off) stays float, and its weight's
  // DQ, kept by the standard passes, is folded after fuse_qdq.
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  std::vector<float> bad = bscales();
  bad[0] *= 3;
  auto c1 = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales()), q.bias(bscales())});
  auto c2 = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales()), q.bias(bad)});
  q.b.output(q.dq(q.q(c1, kYs, 128), kYs, 128));
  q.b.output(q.dq(q.q(c2, kYs, 128), kYs, 128));
  auto g = q.b.graph();
  auto want = run_graph(g, {random_tensor({1, 3, 5, 5}, 29)});
  ThreadPool tp(1);
  ASSERT_TRUE(optimize_standard(*g, tp).ok());
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 8);  // nothing folded yet
  OptimizeOptions oo;
  oo.pool = &tp;
  auto fired = optimize_cpu_fusions(*g, oo);
  ASSERT_TRUE(fired.ok());
  EXPECT_EQ((*fired)["qdq"], 1);
  // (channels-last on AVX-512 CPUs: quant_layout.cpp)
  EXPECT_EQ(count_ops(*g, "QLinearConv") + count_ops(*g, "QLinearConvNhwc"), 1);
  // Left: the float Conv's x DQ and the two output DQs.
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 3);
  auto got = run_graph(g, {random_tensor({1, 3, 5, 5}, 29)});
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < got[i].size(); ++k) EXPECT_NEAR(got[i].data<float>()[k], want[i].data<float>()[k], kYs * 1.01f);
}

TEST(QdqFusion, ConstantFoldingKeepsDequantizeWhenAsked) {
  QdqBuilder q;
  auto x = q.b.input("x", {1, 3, 5, 5});
  auto conv = q.b.node("Conv", {q.qdq(x, kXs, 128), q.weight(4, 3, 1, wscales())});
  q.b.output(q.dq(q.q(conv, kYs, 128), kYs, 128));
  auto g = q.b.graph();
  p::PassContext ctx = cpu_kernels_context();
  ctx.evaluate = [](const ir::Node&, const std::vector<const Tensor*>&) -> Result<std::vector<Tensor>> {
    return Unsupported("evaluator must not run");
  };
  ctx.keep_dequantize_linear = true;
  EXPECT_EQ(p::fold_constants(*g, ctx), 0);
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 3);
}

}  // namespace
}  // namespace dlrt::testing
