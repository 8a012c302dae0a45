// blocked_layout (ir/passes/blocked_layout.cpp) and the com.dlrt blocked ops
// (ops/blocked.cpp): random conv nets with odd channel counts, strides, pads,
// dilations, depthwise convs, residual adds, squeeze-excite blocks, pools and
// channel concats compute what the NCHW graph computes, with block 16 (the
// AVX-512 convs where the CPU has them) and block 8 (portable loops).
#include <gtest/gtest.h>

#include "blocked_test_net.h"
#include "backends/cpu/kernels/isa.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;
using ir::ValueId;

struct Net : BlockedNet {
  // Squeeze-excite: x * HardSigmoid(conv(relu(conv(GlobalAveragePool(x))))).
  ValueId se(ValueId x, int64_t c) {
    ValueId s = b.node("GlobalAveragePool", {x});
    s = relu(conv(s, c, 8, 1, 1));
    s = b.node("HardSigmoid", {conv(s, 8, c, 1, 1)});
    return b.node("Mul", {x, s});
  }
};

// g converted with blocked_layout(block) (the outputs checked), the pass
// having made at least min_rewrites rewrites.
std::shared_ptr<ir::Graph> check(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs, int block,
                                 int min_rewrites = 1) {
  int rewrites = 0;
  auto blocked = convert_blocked(g, inputs, block, nullptr, &rewrites);
  EXPECT_GE(rewrites, min_rewrites);
  return blocked;
}

// Both blocks; 16 also on the portable loops.
void check_all(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs) {
  check(g, inputs, 8);
  check(g, inputs, 16);
  cpu::ScopedCpuIsa generic(cpu::CpuIsa::kGeneric);
  check(g, inputs, 16);
}

TEST(BlockedLayout, ResidualNetWithStemPoolAndHead) {
  Net n;
  ValueId x = n.b.input("x", {2, 3, 23, 19});
  ValueId a = n.relu(n.conv(x, 3, 20, 7, 2));  // stem: NCHW input read directly
  a = n.b.node("MaxPool", {a}, {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}});
  ValueId r = n.relu(n.conv(a, 20, 20, 3, 1));
  r = n.conv(r, 20, 20, 3, 1);
  a = n.relu(n.b.node("Add", {r, a}));
  ValueId d = n.conv(a, 20, 36, 3, 2);  // odd channels, strided
  ValueId s = n.conv(a, 20, 36, 1, 2);  // strided 1x1 downsample
  a = n.b.node("Add", {d, s});
  n.b.output(n.b.node("GlobalAveragePool", {a}));
  n.b.output(a);
  auto g = n.b.graph();
  std::vector<Tensor> in{random_tensor({2, 3, 23, 19}, 99)};
  auto blocked = check(g, in, 16);
  EXPECT_EQ(count_ops(*blocked, "Conv"), 0);
  EXPECT_EQ(count_ops(*blocked, "ConvBlocked"), 5);
  EXPECT_EQ(count_ops(*blocked, "ToBlocked"), 0);    // the stem reads the image
  EXPECT_EQ(count_ops(*blocked, "FromBlocked"), 2);  // the two outputs
  check_all(g, in);
}

TEST(BlockedLayout, DepthwiseSqueezeExciteConcatDilation) {
  Net m;
  ValueId x2 = m.b.input("x", {1, 24, 15, 17});
  ValueId e2 = m.relu(m.conv(x2, 24, 40, 1, 1));
  ValueId dw2 = m.b.node("HardSwish", {m.conv(e2, 40, 40, 5, 2, 40)});
  dw2 = m.se(dw2, 40);
  ValueId pj2 = m.conv(dw2, 40, 32, 1, 1);
  ValueId dil2 = m.conv(pj2, 32, 32, 3, 1, 32, 2);
  ValueId silu2 = m.b.node("Mul", {dil2, m.b.node("Sigmoid", {dil2})});
  ValueId cat2 = m.b.node("Concat", {pj2, silu2, m.conv(silu2, 32, 13, 3, 1)}, {{"axis", ai(1)}});
  m.b.output(m.b.node("Sub", {m.conv(cat2, 77, 5, 1, 1), m.conv(cat2, 77, 5, 3, 1, 1, 2)}));
  auto g2 = m.b.graph();
  std::vector<Tensor> in2{random_tensor({1, 24, 15, 17}, 7)};
  auto blocked = check(g2, in2, 16);
  EXPECT_EQ(count_ops(*blocked, "Conv"), 0);
  EXPECT_EQ(count_ops(*blocked, "ToBlocked"), 1);
  EXPECT_EQ(count_ops(*blocked, "FromBlocked"), 1);
  EXPECT_EQ(count_ops(*blocked, "GlobalPoolBlocked"), 1);
  EXPECT_EQ(count_ops(*blocked, "ChannelScaleBlocked"), 1);  // the squeeze-excite scale
  EXPECT_EQ(count_ops(*blocked, "Mul"), 1);                  // SiLU's x * sigmoid(x)
  check_all(g2, in2);
}

// Inputs of the graph's ChannelScaleBlocked nodes, in order.
std::vector<size_t> scale_arities(const ir::Graph& g) {
  std::vector<size_t> a;
  for (const auto& n : g.nodes)
    if (n.op_type == "ChannelScaleBlocked") a.push_back(n.inputs.size());
  return a;
}

// Squeeze-excite's residual form y + y * s (PP-OCR's RSE FPN): the Add
// joins the scale as its third input, on 20 channels (a partial last block)
// and batch 2, either operand order. Near misses keep their Add: the
// product read elsewhere too, and an Add of the product with another value.
TEST(BlockedLayout, SqueezeExciteResidualJoinsTheScale) {
  for (int order = 0; order < 2; ++order) {
    Net n;
    ValueId x = n.b.input("x", {2, 20, 9, 11});
    ValueId y = n.relu(n.conv(n.relu(n.conv(x, 20, 20, 3, 1)), 20, 20, 3, 1));
    ValueId ys = n.se(y, 20);
    ValueId sum = order == 0 ? n.b.node("Add", {y, ys}) : n.b.node("Add", {ys, y});
    n.b.output(n.conv(sum, 20, 6, 3, 1));
    auto g = n.b.graph();
    std::vector<Tensor> in{random_tensor({2, 20, 9, 11}, 5)};
    auto blocked = check(g, in, 16);
    EXPECT_EQ(count_ops(*blocked, "Add"), 0);
    EXPECT_EQ(scale_arities(*blocked), std::vector<size_t>{3});
    check_all(g, in);
  }
  {
    Net n;  // the product is also read by a conv
    ValueId x = n.b.input("x", {1, 20, 9, 11});
    ValueId y = n.relu(n.conv(n.relu(n.conv(x, 20, 20, 3, 1)), 20, 20, 3, 1));
    ValueId ys = n.se(y, 20);
    n.b.output(n.b.node("Add", {n.conv(n.b.node("Add", {y, ys}), 20, 6, 3, 1), n.conv(ys, 20, 6, 1, 1)}));
    auto g = n.b.graph();
    std::vector<Tensor> in{random_tensor({1, 20, 9, 11}, 6)};
    auto blocked = check(g, in, 16);
    EXPECT_EQ(count_ops(*blocked, "Add"), 2);
    EXPECT_EQ(scale_arities(*blocked), std::vector<size_t>{2});
  }
  {
    Net n;  // z + y * s with z another value (of y's shape)
    ValueId x = n.b.input("x", {1, 20, 9, 11});
    ValueId y = n.conv(n.relu(n.conv(x, 20, 20, 3, 1)), 20, 20, 3, 1);
    ValueId z = n.relu(y);
    n.b.output(n.conv(n.b.node("Add", {z, n.se(y, 20)}), 20, 6, 3, 1));
    auto g = n.b.graph();
    std::vector<Tensor> in{random_tensor({1, 20, 9, 11}, 7)};
    auto blocked = check(g, in, 16);
    EXPECT_EQ(count_ops(*blocked, "Add"), 1);
    EXPECT_EQ(scale_arities(*blocked), std::vector<size_t>{2});
  }
}

// The Resize of the graph: whether it runs on a blocked value.
bool resize_blocked(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    if (n.op_type == "Resize") {
      const std::string& in = g.values[static_cast<size_t>(n.inputs[0])].name;
      return in.size() > 8 && in.compare(in.size() - 8, 8, "_blocked") == 0;
    }
  ADD_FAILURE() << "no Resize";
  return false;
}

// An FPN-style upsample: conv -> stride-2 conv -> nearest Resize x2 -> Add
// with the first conv's output -> conv. A nearest Resize by constant [1, 1,
// sh, sw] joins the region (one reorder in, one out); its near misses (modes
// whose scale-1 axes need not be identities, linear, sizes, a channel scale)
// stay NCHW, and every variant computes what the NCHW graph does.
TEST(BlockedLayout, NearestResizeJoinsRegions) {
  using cpu::testing::attr_string;
  struct Variant {
    std::string mode, coord, nearest;
    bool sizes, joins;
  };
  const std::vector<Variant> variants = {
      {"nearest", "asymmetric", "floor", false, true},
      {"nearest", "half_pixel", "round_prefer_floor", false, true},
      {"nearest", "align_corners", "ceil", false, true},
      {"nearest", "pytorch_half_pixel", "round_prefer_ceil", false, true},
      {"nearest", "half_pixel_symmetric", "floor", false, true},
      {"nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", false, false},
      {"linear", "half_pixel", "round_prefer_floor", false, false},
      {"nearest", "asymmetric", "floor", true, false},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.mode + " " + v.coord + " " + v.nearest + (v.sizes ? " sizes" : ""));
    Net n;
    ValueId x = n.b.input("x", {2, 20, 10, 8});
    ValueId a = n.relu(n.conv(x, 20, 24, 3, 1));
    ValueId d = n.relu(n.conv(a, 24, 24, 3, 2));  // [2, 24, 5, 4]
    ValueId sc = n.b.constant("scales", Tensor::from_vector<float>({4}, {1, 1, 2, 2}));
    ValueId empty = n.b.constant("empty", Tensor::from_vector<float>({0}, {}));
    std::vector<ValueId> ins = {d, ir::kNoValue, sc};
    if (v.sizes) ins = {d, ir::kNoValue, empty, n.b.constant("sizes", Tensor::from_vector<int64_t>({4}, {2, 24, 10, 8}))};
    ValueId u = n.b.node("Resize", ins,
                         {{"mode", attr_string(v.mode)},
                          {"coordinate_transformation_mode", attr_string(v.coord)},
                          {"nearest_mode", attr_string(v.nearest)}},
                         19);
    n.b.output(n.conv(n.relu(n.conv(n.relu(n.b.node("Add", {a, u})), 24, 24, 3, 1)), 24, 16, 1, 1));
    auto g = n.b.graph();
    std::vector<Tensor> in{random_tensor({2, 20, 10, 8}, 5)};
    auto blocked = check(g, in, 16, v.joins ? 1 : 0);
    EXPECT_EQ(resize_blocked(*blocked), v.joins);
    if (v.joins) {
      EXPECT_EQ(count_ops(*blocked, "ToBlocked"), 1);
      EXPECT_EQ(count_ops(*blocked, "FromBlocked"), 1);
    }
    check(g, in, 8, 0);
  }
  // A scale on the channel axis: not a blocked Resize (the NCHW result is [2, 48, 10, 8]).
  Net n;
  ValueId x = n.b.input("x", {1, 20, 6, 6});
  ValueId d = n.relu(n.conv(n.relu(n.conv(x, 20, 24, 3, 1)), 24, 24, 3, 1));
  ValueId u = n.b.node("Resize", {d, ir::kNoValue, n.b.constant("scales", Tensor::from_vector<float>({4}, {1, 2, 1, 1}))},
                       {}, 19);
  n.b.output(n.conv(n.conv(u, 48, 16, 3, 1), 16, 16, 3, 1));
  auto g = n.b.graph();
  auto blocked = check(g, {random_tensor({1, 20, 6, 6}, 6)}, 16, 0);
  EXPECT_FALSE(resize_blocked(*blocked));
}

// 3x3 stride-1 one-group convs of 64+ input channels stay NCHW (the NCHW
// path's Winograd, or its GEMM on small planes) unless they have at most 128
// input and 48+ output channels (ConvBlocked runs F(4x4, 3x3) itself).
TEST(BlockedLayout, WinogradShapedConvsStayNchw) {
  struct Variant {
    int64_t c, m;
    bool nchw;
  };
  for (const Variant v : {Variant{160, 160, true}, Variant{129, 64, true}, Variant{128, 128, false},
                          Variant{64, 48, false}, Variant{64, 47, true}, Variant{96, 24, true}, Variant{63, 24, false}}) {
    SCOPED_TRACE(std::to_string(v.c) + " -> " + std::to_string(v.m) + " channels");
    Net n;
    ValueId x = n.b.input("x", {1, v.c, 12, 12});
    ValueId a = n.relu(n.conv(x, v.c, v.m, 3, 1));  // the Winograd-shaped conv
    a = n.relu(n.conv(a, v.m, 64, 3, 2));           // strided: blocked
    a = n.conv(n.conv(a, 64, 64, 1, 1), 64, 64, 3, 1, 64);
    n.b.output(n.conv(n.conv(a, 64, 64, 1, 1), 64, 64, 3, 1, 64));
    auto g = n.b.graph();
    auto blocked = check(g, {random_tensor({1, v.c, 12, 12}, 3)}, 16);
    EXPECT_EQ(count_ops(*blocked, "Conv"), v.nchw ? 1 : 0);
    EXPECT_EQ(count_ops(*blocked, "ConvBlocked"), v.nchw ? 5 : 6);
  }
}

// Three convs between two reorders do not pay for them (kConvsPerBorder).
TEST(BlockedLayout, SmallRegionsBetweenReordersStayNchw) {
  Net n;
  ValueId x = n.b.input("x", {1, 24, 10, 10});
  ValueId a = n.conv(n.conv(n.conv(x, 24, 48, 1, 1), 48, 48, 3, 1, 48), 48, 24, 1, 1);
  n.b.output(n.b.node("Softmax", {a}, {{"axis", ai(1)}}));
  auto g = n.b.graph();
  p::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(p::blocked_layout(*g, ctx, 16), 0);
}

TEST(BlockedLayout, SingleConvRegionsStayNchw) {
  Net n;
  ValueId x = n.b.input("x", {1, 8, 9, 9});
  ValueId a = n.b.node("Softmax", {n.conv(x, 8, 16, 3, 1)}, {{"axis", ai(1)}});
  n.b.output(n.conv(a, 16, 16, 3, 1, 4));  // 4 groups: not blocked
  auto g = n.b.graph();
  p::PassContext ctx = cpu_kernels_context();
  EXPECT_EQ(p::blocked_layout(*g, ctx, 16), 0);
  EXPECT_EQ(count_ops(*g, "ConvBlocked"), 0);
}

// ToBlocked then FromBlocked gives the tensor back (odd channels and planes,
// both blocks, vector and portable code); the pad lanes are zero.
TEST(BlockedLayout, ReordersRoundTrip) {
  using cpu::testing::attr_int;
  using cpu::testing::run_op;
  const Tensor x = random_tensor({2, 19, 3, 7}, 5);
  for (bool generic : {false, true}) {
    std::unique_ptr<cpu::ScopedCpuIsa> cap;
    if (generic) cap = std::make_unique<cpu::ScopedCpuIsa>(cpu::CpuIsa::kGeneric);
    for (int64_t b : {8, 16}) {
      auto blocked = run_op("ToBlocked", {x}, {{"block", attr_int(b)}}, 1, 1, "com.dlrt");
      ASSERT_TRUE(blocked.ok()) << blocked.status().to_string();
      const Tensor& t = (*blocked)[0];
      ASSERT_EQ(t.shape(), (Shape{2, (19 + b - 1) / b, 3, 7, b}));
      EXPECT_EQ(t.data<float>()[t.size() - 1], 0.0f);  // channel ceil(19/b)*b - 1 does not exist
      auto back = run_op("FromBlocked", {t}, {{"block", attr_int(b)}, {"channels", attr_int(19)}}, 1, 1, "com.dlrt");
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      expect_close((*back)[0], x, 0.0f);
    }
  }
}

// Bad inputs and attributes are errors, not crashes.
TEST(BlockedLayout, BadInputsAreErrors) {
  using cpu::testing::attr_int;
  using cpu::testing::run_op;
  const Tensor blocked = random_tensor({1, 2, 3, 3, 16}, 1);
  auto r = run_op("FromBlocked", {blocked}, {{"block", attr_int(16)}, {"channels", attr_int(40)}}, 1, 1, "com.dlrt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("channels 40"), std::string::npos) << r.status().to_string();
  EXPECT_FALSE(run_op("ToBlocked", {random_tensor({1, 4, 3, 3}, 1)}, {{"block", attr_int(12)}}, 1, 1, "com.dlrt").ok());
  EXPECT_FALSE(run_op("ToBlocked", {random_tensor({4, 3, 3}, 1)}, {{"block", attr_int(16)}}, 1, 1, "com.dlrt").ok());
  EXPECT_FALSE(run_op("GlobalPoolBlocked", {random_tensor({1, 2, 3, 3, 8}, 1)}, {{"block", attr_int(16)}}, 1, 1,
                      "com.dlrt")
                   .ok());
  EXPECT_FALSE(run_op("ChannelScaleBlocked", {blocked, random_tensor({1, 2, 2, 2, 16}, 2)}, {{"block", attr_int(16)}},
                      1, 1, "com.dlrt")
                   .ok());
  auto conv = run_op("ConvBlocked", {blocked, random_tensor({16, 32, 1, 1}, 3)}, {{"block", attr_int(16)}}, 1, 1,
                     "com.dlrt");
  ASSERT_FALSE(conv.ok());
  EXPECT_NE(conv.status().message().find("constant"), std::string::npos) << conv.status().to_string();
}

}  // namespace
}  // namespace dlrt::testing
