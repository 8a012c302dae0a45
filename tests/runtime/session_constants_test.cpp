// A CPU session holds a packed weight once: after Session::create, neither
// the graph it runs nor the model's graph keeps the data of the conv and
// Gemm weights its kernels packed (Executor::create_freeing_constants), only
// what no kernel copied (the biases); and its outputs match the graph run
// with every constant kept.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "../ir/graph_builder.h"
#include "dlrt/session.h"
#include "ir/onnx_export.h"
#include "runtime/session_internal.h"

namespace dlrt {
namespace {

using testing::GraphBuilder;
using testing::random_tensor;

// Bytes of constant data `g` still holds (its own values; freed stand-ins hold none).
size_t held_constant_bytes(const ir::Graph& g) {
  size_t n = 0;
  for (const ir::Value& v : g.values)
    if (v.constant && v.constant->raw_data()) n += v.constant->nbytes();
  return n;
}

// The conv has stride 2: no ISA takes it for Winograd, whose convs keep W.
TEST(SessionConstants, PackedWeightsAreHeldOnce) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 16, 8, 8});
  const ir::ValueId c =
      b.node("Conv", {x, b.constant("w", random_tensor({32, 16, 3, 3}, 1)), b.constant("bc", random_tensor({32}, 2))},
             {{"pads", testing::ais({1, 1, 1, 1})}, {"strides", testing::ais({2, 2})}});
  const ir::ValueId p = b.node("GlobalAveragePool", {b.node("Relu", {c})});
  const ir::ValueId f = b.node("Flatten", {p});
  const ir::ValueId y =
      b.node("Gemm", {f, b.constant("wg", random_tensor({10, 32}, 3)), b.constant("bg", random_tensor({10}, 4))},
             {{"transB", testing::ai(1)}});
  b.output(y, DType::kFloat32, {1, 10});
  auto graph = b.graph();
  auto bytes = ir::export_onnx(*graph);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const Tensor in = random_tensor({1, 16, 8, 8}, 5);
  const std::vector<Tensor> want = testing::run_graph(graph, {in});
  ASSERT_EQ(want.size(), 1u);
  const size_t biases = (32 + 10) * sizeof(float);  // the weights are 50 times as many bytes

  for (bool optimize : {true, false}) {
    SCOPED_TRACE(optimize ? "optimized" : "not optimized");
    SessionOptions o;
    o.device = "cpu";
    o.threads = 1;
    o.optimize = optimize;
    auto s = Session::create_from_bytes(*bytes, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const ir::Graph& run_graph = session_run_graph(**s);
    EXPECT_EQ(held_constant_bytes(session_graph(**s)), 0u) << "the model's graph kept constant data";
    EXPECT_LE(held_constant_bytes(run_graph), biases) << "a packed weight is still held as a constant";
    for (const ir::Node& n : run_graph.nodes) {
      if (n.inputs.size() < 2 || !run_graph.values[n.inputs[1]].constant) continue;
      EXPECT_TRUE(exec::is_freed_constant(*run_graph.values[n.inputs[1]].constant)) << n.describe() << "'s weight";
    }
    for (int rep = 0; rep < 2; ++rep) {
      auto out = (*s)->run({{"x", in}});
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      ASSERT_EQ(out->size(), 1u);
      ASSERT_EQ((*out)[0].shape(), want[0].shape());
      for (int64_t i = 0; i < want[0].size(); ++i)
        EXPECT_NEAR((*out)[0].data<float>()[i], want[0].data<float>()[i],
                    1e-4f * (1 + std::abs(want[0].data<float>()[i])));
    }
  }
}

}  // namespace
}  // namespace dlrt
