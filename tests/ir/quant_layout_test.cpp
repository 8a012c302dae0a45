// quant_convs_channels_last: a QDQ network's convs run channels-last with
// Transposes only at the layout's borders, and compute the same bytes.
#include <gtest/gtest.h>

#include "backends/cpu/kernel.h"
#include "graph_builder.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

using ir::ValueId;
namespace p = ir::passes;

int count(const ir::Graph& g, const std::string& op, const std::string& domain) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op && node.domain == domain;
  return n;
}

// A QDQ graph: float input, quantised activations (uint8) between the ops.
struct Net {
  GraphBuilder b;
  int n = 0;
  std::string name(const char* base) { return std::string(base) + std::to_string(n++); }
  ValueId q(ValueId x, float s, uint8_t zp) {
    return b.node("QuantizeLinear", {x, b.scalar(name("s"), s), b.constant(name("z"), Tensor::scalar<uint8_t>(zp))});
  }
  ValueId dq(ValueId x, float s, uint8_t zp) {
    return b.node("DequantizeLinear", {x, b.scalar(name("s"), s), b.constant(name("z"), Tensor::scalar<uint8_t>(zp))});
  }
  // Conv of a quantised x (scale 0.02, zero point 128) with int8 weights
  // [m, c / group, k, k], requantised (scale ys, zero point 120).
  ValueId conv(ValueId xq, int64_t c, int64_t m, int64_t k, int64_t group, float ys) {
    std::vector<int8_t> w(static_cast<size_t>(m * (c / group) * k * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>((i + n) * 37 % 255) - 127);
    ValueId wq = b.constant(name("w"), Tensor::from_vector<int8_t>({m, c / group, k, k}, w));
    ValueId wdq = b.node("DequantizeLinear", {wq, b.constant(name("ws"), Tensor::from_vector<float>({m}, std::vector<float>(m, 0.01f))),
                                               b.constant(name("wz"), Tensor::from_vector<int8_t>({m}, std::vector<int8_t>(m, 0)))},
                         {{"axis", ai(0)}});
    const int64_t pad = k / 2;
    ValueId y = b.node("Conv", {dq(xq, 0.02f, 128), wdq},
                       {{"pads", ais({pad, pad, pad, pad})}, {"group", ai(group)}});
    return q(y, ys, 120);
  }
};

// Runs g after fuse_qdq, then after quant_convs_channels_last too: the same bytes.
std::shared_ptr<ir::Graph> convert(std::shared_ptr<ir::Graph> g, const std::vector<Tensor>& inputs) {
  auto fused = std::make_shared<ir::Graph>(*g);
  p::PassContext ctx = cpu_kernels_context();
  p::fold_shapes(*fused, ctx);
  p::fuse_qdq(*fused, ctx);
  auto nhwc = std::make_shared<ir::Graph>(*fused);
  EXPECT_GT(p::quant_convs_channels_last(*nhwc, ctx), 0);
  EXPECT_TRUE(nhwc->topological_sort().ok());
  auto want = run_graph(fused, inputs), got = run_graph(nhwc, inputs);
  EXPECT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_EQ(want[i].shape(), got[i].shape());
    if (want[i].shape() != got[i].shape()) continue;
    int64_t differ = 0;
    for (int64_t k = 0; k < want[i].size(); ++k) differ += want[i].data<float>()[k] != got[i].data<float>()[k];
    EXPECT_EQ(differ, 0) << "output " << i;
  }
  return nhwc;
}

TEST(QuantLayout, ResidualBlockRunsChannelsLastBetweenTwoTransposes) {
  Net net;
  auto x = net.b.input("x", {1, 8, 9, 9});
  auto a = net.conv(net.q(x, 0.02f, 128), 8, 16, 3, 1, 0.05f);   // 3 x 3
  auto d = net.conv(a, 16, 16, 3, 16, 0.05f);                     // depthwise
  auto p1 = net.conv(d, 16, 16, 1, 1, 0.05f);                     // 1 x 1
  auto sum = net.q(net.b.node("Add", {net.dq(p1, 0.05f, 120), net.dq(a, 0.05f, 120)}), 0.08f, 125);
  net.b.output(net.dq(sum, 0.08f, 125));
  auto g = convert(net.b.graph(), {random_tensor({1, 8, 9, 9}, 3)});
  EXPECT_EQ(count(*g, "QLinearConvNhwc", "com.dlrt"), 3);
  EXPECT_EQ(count(*g, "QLinearConv", ""), 0);
  EXPECT_EQ(count(*g, "QLinearAdd", "com.microsoft"), 1);
  EXPECT_EQ(count(*g, "Transpose", ""), 2);  // into the first conv, out of the Add
}

TEST(QuantLayout, StemAndGroupedConvsStayAndShareTransposes) {
  Net net;
  auto x = net.b.input("x", {1, 3, 10, 10});
  auto stem = net.conv(net.q(x, 0.02f, 128), 3, 8, 3, 1, 0.05f);  // 3 input channels: stays NCHW
  auto grouped = net.conv(stem, 8, 8, 3, 2, 0.05f);               // 2 groups: stays NCHW
  auto pw = net.conv(grouped, 8, 8, 1, 1, 0.05f);                  // runs channels-last
  net.b.output(net.dq(pw, 0.05f, 120));
  net.b.output(net.dq(grouped, 0.05f, 120));                       // read NCHW as well
  auto g = convert(net.b.graph(), {random_tensor({1, 3, 10, 10}, 4)});
  EXPECT_EQ(count(*g, "QLinearConvNhwc", "com.dlrt"), 1);
  EXPECT_EQ(count(*g, "QLinearConv", ""), 2);
  EXPECT_EQ(count(*g, "Transpose", ""), 2);
}

}  // namespace
}  // namespace dlrt::testing

namespace dlrt::testing {
namespace {

TEST(QuantLayout, StemPoolGoesChannelsLastBeforeTheConvsItFeeds) {
  Net net;
  auto x = net.b.input("x", {1, 3, 16, 16});
  auto stem = net.conv(net.q(x, 0.02f, 128), 3, 8, 3, 1, 0.05f);  // 3 channels: stays NCHW
  auto pooled = net.q(net.b.node("MaxPool", {net.dq(stem, 0.05f, 120)},
                                 {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}}),
                      0.05f, 120);
  auto a = net.conv(pooled, 8, 8, 3, 1, 0.05f);
  net.b.output(net.dq(a, 0.05f, 120));
  auto g = convert(net.b.graph(), {random_tensor({1, 3, 16, 16}, 5)});
  EXPECT_EQ(count(*g, "MaxPoolNhwc", "com.dlrt"), 1);
  EXPECT_EQ(count(*g, "QLinearConvNhwc", "com.dlrt"), 1);
  EXPECT_EQ(count(*g, "Transpose", ""), 2);  // into the pool, out of the last conv
}

}  // namespace
}  // namespace dlrt::testing
