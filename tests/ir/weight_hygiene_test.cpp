// flush-subnormal-weights (subnormal elements of product weights become zero,
// other constants stay exact) and identity (Identity nodes removed): what
// fires, what is left alone, and that the graph computes the same values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "graph_builder.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;

constexpr float kTiny = std::numeric_limits<float>::denorm_min() * 1000;  // about 1.4e-42, subnormal

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Conv weights [4, 3, 1, 1] with a positive and a negative subnormal among normal values.
Tensor weights_with_subnormals() {
  Tensor w = random_tensor({4, 3, 1, 1}, 3);
  w.data<float>()[1] = kTiny;
  w.data<float>()[7] = -kTiny;
  return w;
}

TEST(WeightHygiene, SubnormalConvAndMatMulWeightsBecomeSignedZeros) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 5, 5});
  auto w = b.constant("w", weights_with_subnormals());
  Tensor m = random_tensor({5, 2}, 4);
  m.data<float>()[3] = -kTiny;
  auto conv = b.node("Conv", {x, w});
  b.output(b.node("MatMul", {conv, b.constant("m", m)}));
  auto g = b.graph();
  const Tensor in = random_tensor({1, 3, 5, 5}, 5);
  auto before = run_graph(g, {in});
  p::PassContext ctx;
  EXPECT_EQ(p::flush_subnormal_weights(*g, ctx), 2);
  EXPECT_EQ(ctx.fired["flush-subnormal-weights"], 2);
  const Tensor& nw = *g->values[w].constant;
  EXPECT_EQ(bits_of(nw.data<float>()[1]), 0u);
  EXPECT_EQ(bits_of(nw.data<float>()[7]), 0x80000000u);  // -0
  EXPECT_EQ(nw.data<float>()[0], weights_with_subnormals().data<float>()[0]);  // normal values untouched
  EXPECT_EQ(p::flush_subnormal_weights(*g, ctx), 0) << "nothing left to flush";
  auto after = run_graph(g, {in});
  ASSERT_EQ(after.size(), 1u);
  expect_close(after[0], before[0], 1e-6f);
}

float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Subnormal means a zero exponent and a non-zero mantissa, of either sign; the
// patterns around those bounds (zeros, the smallest normals, infinities, NaNs)
// are left alone.
TEST(WeightHygiene, OnlySubnormalBitPatternsAreFlushed) {
  const std::vector<uint32_t> kept = {0x00000000u, 0x80000000u, 0x00800000u, 0x80800000u,
                                      0x7f800000u, 0xff800000u, 0x7fc00000u, 0x3f800000u};
  const std::vector<uint32_t> subnormal = {0x00000001u, 0x007fffffu, 0x80000001u, 0x807fffffu};
  std::vector<float> kept_values, subnormal_values;
  for (uint32_t k : kept) kept_values.push_back(float_of(k));
  for (uint32_t k : subnormal) subnormal_values.push_back(float_of(k));
  GraphBuilder b;
  auto x = b.input("x", {1, 8});
  auto y = b.input("y", {1, 4});
  auto wk = b.constant("wk", Tensor::from_vector<float>({8, 1}, kept_values));
  auto ws = b.constant("ws", Tensor::from_vector<float>({4, 1}, subnormal_values));
  b.output(b.node("MatMul", {x, wk}));
  b.output(b.node("MatMul", {y, ws}));
  auto g = b.graph();
  p::PassContext ctx;
  EXPECT_EQ(p::flush_subnormal_weights(*g, ctx), 1);
  for (size_t i = 0; i < kept.size(); ++i)
    EXPECT_EQ(bits_of(g->values[wk].constant->data<float>()[i]), kept[i]) << "element " << i;
  for (size_t i = 0; i < subnormal.size(); ++i)
    EXPECT_EQ(bits_of(g->values[ws].constant->data<float>()[i]), subnormal[i] & 0x80000000u) << "element " << i;
}

TEST(WeightHygiene, ConstantsReadOtherwiseStayExact) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 5, 5});
  auto shared = b.constant("w", weights_with_subnormals());  // Conv weights, also read by an Add
  auto eps = b.constant("eps", Tensor::from_vector<float>({1}, {kTiny}));  // an epsilon under a Div
  auto conv = b.node("Conv", {x, shared});
  auto sum = b.node("Add", {b.node("ReduceSum", {shared}), b.node("ReduceSum", {conv})});
  b.output(b.node("Div", {sum, b.node("Add", {b.node("Abs", {sum}), eps})}));
  auto g = b.graph();
  p::PassContext ctx;
  EXPECT_EQ(p::flush_subnormal_weights(*g, ctx), 0);
  EXPECT_EQ(g->values[shared].constant->data<float>()[1], kTiny);
  EXPECT_EQ(g->values[eps].constant->data<float>()[0], kTiny);
}

TEST(WeightHygiene, IdentitiesRemovedExceptAtGraphOutputs) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto i1 = b.node("Identity", {x});
  auto r = b.node("Relu", {b.node("Identity", {i1})});
  b.output(b.node("Identity", {r}));  // a graph output: its name must stay
  auto g = b.graph();
  const Tensor in = random_tensor({2, 3}, 6);
  auto before = run_graph(g, {in});
  p::PassContext ctx;
  EXPECT_EQ(p::eliminate_identities(*g, ctx), 2);
  EXPECT_EQ(ctx.fired["identity"], 2);
  EXPECT_EQ(count_ops(*g, "Identity"), 1);
  EXPECT_EQ(count_ops(*g, "Relu"), 1);
  EXPECT_EQ(g->nodes[0].inputs[0], x) << "Relu reads the graph input directly";
  auto after = run_graph(g, {in});
  ASSERT_EQ(after.size(), 1u);
  expect_close(after[0], before[0], 0.0f);
}

}  // namespace
}  // namespace dlrt::testing
