// If/Loop/Scan with a stand-in subgraph runner: the "body" is a C++ lambda,
// so these tests pin the kernels' iteration and stacking rules without the
// executor (end-to-end runs are covered by the ONNX conformance cases).
#include <gtest/gtest.h>

#include <memory>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_ints;

using Body = std::function<Result<std::vector<RunValue>>(const ir::Graph&, std::vector<RunValue>)>;

// A graph with the given number of inputs and outputs (float tensors of unknown shape).
std::shared_ptr<ir::Graph> graph(const std::string& name, int inputs, int outputs) {
  auto g = std::make_shared<ir::Graph>();
  g->name = name;
  for (int i = 0; i < inputs; ++i) g->inputs.push_back(g->add_value(name + "_in" + std::to_string(i)));
  for (int i = 0; i < outputs; ++i) {
    ir::TypeInfo t;
    t.dtype = DType::kFloat32;
    t.shape = std::vector<ir::Dim>{ir::Dim{2, ""}};
    g->outputs.push_back(g->add_value(name + "_out" + std::to_string(i), t));
  }
  return g;
}

ir::Attribute graph_attr(std::shared_ptr<ir::Graph> g) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kGraph;
  a.g = std::move(g);
  return a;
}

Result<std::vector<RunValue>> run(const std::string& op, std::vector<RunValue> inputs,
                                  ir::Attributes attrs, int num_outputs, Body body,
                                  int opset = 16) {
  ir::Node node;
  node.name = "test_" + op;
  node.op_type = op;
  node.opset = opset;
  node.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].kind == RunValue::Kind::kNone ? ir::kNoValue : static_cast<ir::ValueId>(i));
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(100 + i);
  const KernelDef* def = builtin_kernels().find(op, "", opset);
  if (!def) return Unsupported("no kernel for " + op);
  DLRT_ASSIGN_OR_RETURN(auto kernel, def->factory(node));
  std::vector<const RunValue*> ptrs;
  for (auto& v : inputs) ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(static_cast<size_t>(num_outputs));
  static ThreadPool pool(1);
  KernelContext ctx(node, ptrs, outs, pool, body);
  DLRT_RETURN_IF_ERROR(kernel->compute(ctx));
  return outs;
}

RunValue f32(Shape s, std::vector<float> v) { return RunValue::of(Tensor::from_vector<float>(std::move(s), v)); }
RunValue boolean(bool b) { return RunValue::of(Tensor::scalar<bool>(b)); }
RunValue i64(int64_t v) { return RunValue::of(Tensor::scalar<int64_t>(v)); }
std::vector<float> floats(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.size()}; }

TEST(ControlFlowKernels, IfPicksTheBranch) {
  auto then_g = graph("then", 0, 1), else_g = graph("else", 0, 1);
  Body body = [&](const ir::Graph& g, std::vector<RunValue>) -> Result<std::vector<RunValue>> {
    return std::vector<RunValue>{f32({1}, {&g == then_g.get() ? 1.0f : 2.0f})};
  };
  ir::Attributes attrs{{"then_branch", graph_attr(then_g)}, {"else_branch", graph_attr(else_g)}};
  auto r = run("If", {boolean(true)}, attrs, 1, body);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(floats((*r)[0].tensor), std::vector<float>{1});
  r = run("If", {boolean(false)}, attrs, 1, body);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(floats((*r)[0].tensor), std::vector<float>{2});
  EXPECT_FALSE(run("If", {f32({1}, {1})}, attrs, 1, body).ok());  // cond must be bool
  EXPECT_FALSE(run("If", {boolean(true)}, attrs, 2, body).ok());  // output count mismatch
}

// Body: carried x -> x + i; scan output [i, i]; cond stays true while i < stop.
Body counting_body(int64_t stop, int* calls) {
  return [stop, calls](const ir::Graph&, std::vector<RunValue> in) -> Result<std::vector<RunValue>> {
    ++*calls;
    const int64_t i = in[0].tensor.data<int64_t>()[0];
    const float x = in[2].tensor.data<float>()[0];
    return std::vector<RunValue>{boolean(i + 1 < stop), f32({1}, {x + static_cast<float>(i)}),
                                 f32({2}, {static_cast<float>(i), static_cast<float>(i)})};
  };
}

TEST(ControlFlowKernels, LoopTripCountCondAndScanOutputs) {
  auto body_g = graph("body", 3, 3);
  ir::Attributes attrs{{"body", graph_attr(body_g)}};
  int calls = 0;
  // M = 4, cond stays true: 4 iterations, x = 0+0+1+2+3.
  auto r = run("Loop", {i64(4), boolean(true), f32({1}, {0})}, attrs, 2, counting_body(100, &calls));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(floats((*r)[0].tensor), std::vector<float>{6});
  EXPECT_EQ((*r)[1].tensor.shape(), (Shape{4, 2}));
  EXPECT_EQ(floats((*r)[1].tensor), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));

  // No M: the body's cond ends it after 3 iterations.
  calls = 0;
  r = run("Loop", {RunValue{}, boolean(true), f32({1}, {0})}, attrs, 2, counting_body(3, &calls));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(calls, 3);
  EXPECT_EQ((*r)[1].tensor.shape(), (Shape{3, 2}));

  // No cond input: the body's cond is ignored, M rules.
  calls = 0;
  r = run("Loop", {i64(5), RunValue{}, f32({1}, {0})}, attrs, 2, counting_body(1, &calls));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(calls, 5);

  // Initial cond false: no iteration, empty scan output with the declared element shape.
  calls = 0;
  r = run("Loop", {i64(5), boolean(false), f32({1}, {7})}, attrs, 2, counting_body(100, &calls));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(floats((*r)[0].tensor), std::vector<float>{7});
  EXPECT_EQ((*r)[1].tensor.shape(), (Shape{0, 2}));

  // Neither M nor cond would never end.
  EXPECT_FALSE(run("Loop", {RunValue{}, RunValue{}, f32({1}, {0})}, attrs, 2, counting_body(1, &calls)).ok());
}

TEST(ControlFlowKernels, LoopPassesSequencesThrough) {
  auto body_g = graph("body", 3, 2);
  ir::Attributes attrs{{"body", graph_attr(body_g)}};
  Body append = [](const ir::Graph&, std::vector<RunValue> in) -> Result<std::vector<RunValue>> {
    RunValue seq = in[2];
    seq.sequence.push_back(Tensor::from_vector<float>({1}, {static_cast<float>(in[0].tensor.data<int64_t>()[0])}));
    return std::vector<RunValue>{boolean(true), seq};
  };
  auto r = run("Loop", {i64(3), RunValue{}, RunValue::of_sequence({}, DType::kFloat32)}, attrs, 1, append);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].kind, RunValue::Kind::kSequence);
  EXPECT_EQ((*r)[0].sequence.size(), 3u);
}

TEST(ControlFlowKernels, ScanAxesAndDirections) {
  // State: running sum of the slices; scan output: the slice itself.
  auto body_g = graph("body", 2, 2);
  Body body = [](const ir::Graph&, std::vector<RunValue> in) -> Result<std::vector<RunValue>> {
    const Tensor& s = in[0].tensor;
    const Tensor& x = in[1].tensor;
    std::vector<float> sum(2);
    for (int i = 0; i < 2; ++i) sum[i] = s.data<float>()[i] + x.data<float>()[i];
    return std::vector<RunValue>{f32({2}, sum), RunValue::of(x)};
  };
  // x is [2, 3]; scanning along axis 1 gives three slices of length 2.
  RunValue x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ir::Attributes attrs{{"body", graph_attr(body_g)},
                                             {"num_scan_inputs", attr_int(1)},
                                             {"scan_input_axes", attr_ints({1})},
                                             {"scan_input_directions", attr_ints({1})},
                                             {"scan_output_axes", attr_ints({-1})}};
  auto r = run("Scan", {f32({2}, {0, 0}), x}, attrs, 2, body);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(floats((*r)[0].tensor), (std::vector<float>{6, 15}));
  // Slices came in reverse order (3,6), (2,5), (1,4), stacked along the last axis.
  EXPECT_EQ((*r)[1].tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(floats((*r)[1].tensor), (std::vector<float>{3, 2, 1, 6, 5, 4}));

  // Reversed output direction puts them back in order.
  attrs["scan_output_directions"] = attr_ints({1});
  r = run("Scan", {f32({2}, {0, 0}), x}, attrs, 2, body);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(floats((*r)[1].tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // Wrong attribute lengths.
  attrs["scan_input_axes"] = attr_ints({0, 1});
  EXPECT_FALSE(run("Scan", {f32({2}, {0, 0}), x}, attrs, 2, body).ok());
}

TEST(ControlFlowKernels, Scan8BatchesAndSequenceLengths) {
  auto body_g = graph("body", 2, 2);
  Body body = [](const ir::Graph&, std::vector<RunValue> in) -> Result<std::vector<RunValue>> {
    const float s = in[0].tensor.data<float>()[0] + in[1].tensor.data<float>()[0];
    return std::vector<RunValue>{f32({1}, {s}), f32({1}, {s})};
  };
  ir::Attributes attrs{{"body", graph_attr(body_g)}, {"num_scan_inputs", attr_int(1)}};
  // batch 2, sequence 3, element [1]; the second entry only uses 2 steps.
  auto r = run("Scan",
               {RunValue::of(Tensor::from_vector<int32_t>({2}, {3, 2})), f32({2, 1}, {0, 10}),
                f32({2, 3, 1}, {1, 2, 3, 4, 5, 6})},
               attrs, 2, body, 8);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(floats((*r)[0].tensor), (std::vector<float>{6, 19}));
  EXPECT_EQ((*r)[1].tensor.shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(floats((*r)[1].tensor), (std::vector<float>{1, 3, 6, 14, 19, 0}));
}

}  // namespace
}  // namespace dlrt::cpu
