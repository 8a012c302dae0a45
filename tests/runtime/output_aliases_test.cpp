// A session's outputs never alias the model's constants or each other
// (runtime/output_aliases.h): an output that is a view of an initializer
// (Reshape, Unsqueeze, Identity, ... of it, an If branch returning one) is
// handed out as a copy, so writing into it cannot change later runs; two
// outputs that are one value get independent storage. Also: the thread bound
// every surface shares (dlrt::kMaxThreads).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"
#include "runtime/output_aliases.h"

namespace dlrt {
namespace {

using testing::add_int64_initializer;
using testing::add_onnx_node;
using testing::add_unshaped_value_info;
using testing::add_value_info;
using testing::start_model;

// w = 0..5 (float[6]), an initializer of `g`.
void add_weight(onnx::GraphProto* g, const std::string& name) {
  auto* w = g->add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(6);
  for (int i = 0; i < 6; ++i) w->add_float_data(static_cast<float>(i));
}

std::unique_ptr<Session> session_of(const onnx::ModelProto& m, bool optimize = true) {
  SessionOptions o;
  o.threads = 1;
  o.optimize = optimize;
  auto s = Session::create_from_bytes(m.SerializeAsString(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

// Writes 999 into every element of `t`.
void scribble(Tensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = 999;
}

void expect_weight(const Tensor& t, const std::string& what) {
  ASSERT_EQ(t.dtype(), DType::kFloat32) << what;
  ASSERT_EQ(t.size(), 6) << what;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], static_cast<float>(i)) << what << " element " << i;
}

// Runs `s` three ways (run, run_values, run_into without a buffer), writes
// into output 0 each time and checks the next run still returns the weight.
void expect_output_is_a_copy(const Session& s, const std::map<std::string, Tensor>& feeds, const std::string& what) {
  for (int round = 0; round < 2; ++round) {
    auto out = s.run(feeds);
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
    expect_weight((*out)[0], what + " run, round " + std::to_string(round));
    scribble((*out)[0]);
  }
  std::map<std::string, Value> values;
  for (const auto& [name, t] : feeds) values.emplace(name, Value::of(t));
  for (int round = 0; round < 2; ++round) {
    auto out = s.run_values(values);
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
    expect_weight((*out)[0].tensor, what + " run_values, round " + std::to_string(round));
    scribble((*out)[0].tensor);
  }
  for (int round = 0; round < 2; ++round) {
    std::map<std::string, Tensor> outs{{s.outputs()[0].name, Tensor()}};
    ASSERT_TRUE(s.run_into(feeds, outs).ok()) << what;
    expect_weight(outs.begin()->second, what + " run_into, round " + std::to_string(round));
    scribble(outs.begin()->second);
  }
}

// y = Reshape(w, s): the shape is an input, so nothing folds it at load.
TEST(OutputAliases, ReshapeOfAnInitializerIsCopied) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "reshape_init");
  add_weight(g, "w");
  add_value_info(g->add_input(), "s", onnx::TensorProto::INT64, {2});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Reshape", {"w", "s"}, "y");
  auto s = session_of(m);
  ASSERT_TRUE(s);
  expect_output_is_a_copy(*s, {{"s", Tensor::from_vector<int64_t>({2}, {2, 3})}}, "Reshape(w, s)");
}

// y = Unsqueeze(w, axes) with the axes an input (opset 13).
TEST(OutputAliases, UnsqueezeOfAnInitializerIsCopied) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "unsqueeze_init");
  add_weight(g, "w");
  add_value_info(g->add_input(), "a", onnx::TensorProto::INT64, {1});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Unsqueeze", {"w", "a"}, "y");
  auto s = session_of(m);
  ASSERT_TRUE(s);
  expect_output_is_a_copy(*s, {{"a", Tensor::from_vector<int64_t>({1}, {0})}}, "Unsqueeze(w, a)");
}

// Views of an initializer that constant folding would otherwise fold into a
// constant output: with optimize off they reach the executor as views.
TEST(OutputAliases, ViewOpsOfAnInitializerAreCopiedWithoutOptimization) {
  for (const char* op : {"Identity", "Flatten", "Squeeze"}) {
    onnx::ModelProto m;
    auto* g = start_model(m, 17, "view_init");
    add_weight(g, "w");
    add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1});
    add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
    add_unshaped_value_info(g->add_output(), "x2", onnx::TensorProto::FLOAT);
    add_onnx_node(g, op, {"w"}, "y");
    add_onnx_node(g, "Relu", {"x"}, "x2");
    for (bool optimize : {false, true}) {
      auto s = session_of(m, optimize);
      ASSERT_TRUE(s) << op;
      expect_output_is_a_copy(*s, {{"x", Tensor::from_vector<float>({1}, {1})}},
                              std::string(op) + "(w), optimize " + (optimize ? "on" : "off"));
    }
  }
}

// y = If(c) then { w } else { w2 }, each branch returning an initializer as it is.
TEST(OutputAliases, IfBranchReturningAnInitializerIsCopied) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "if_init");
  add_value_info(g->add_input(), "c", onnx::TensorProto::BOOL, {});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  auto* node = add_onnx_node(g, "If", {"c"}, "y");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = node->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = a->mutable_g();
    b->set_name(branch);
    add_weight(b, std::string(branch) + "_w");
    add_unshaped_value_info(b->add_output(), std::string(branch) + "_w", onnx::TensorProto::FLOAT);
  }
  auto s = session_of(m);
  ASSERT_TRUE(s);
  expect_output_is_a_copy(*s, {{"c", Tensor::scalar<bool>(true)}}, "If then-branch initializer");
  expect_output_is_a_copy(*s, {{"c", Tensor::scalar<bool>(false)}}, "If else-branch initializer");
}

// y = Relu(x), z = Identity(y): z's storage would be y's; each comes back on its own.
TEST(OutputAliases, TwoOutputsOfOneValueAreIndependent) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "two_outputs");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {6});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  add_unshaped_value_info(g->add_output(), "z", onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Relu", {"x"}, "y");
  add_onnx_node(g, "Identity", {"y"}, "z");
  for (bool optimize : {false, true}) {
    auto s = session_of(m, optimize);
    ASSERT_TRUE(s);
    const std::map<std::string, Tensor> feeds{{"x", Tensor::from_vector<float>({6}, {0, 1, 2, 3, 4, 5})}};
    auto out = s->run(feeds);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_NE((*out)[0].raw_data(), (*out)[1].raw_data());
    scribble((*out)[0]);
    expect_weight((*out)[1], "z after writing y");

    std::map<std::string, Tensor> outs{{"y", Tensor()}, {"z", Tensor()}};
    ASSERT_TRUE(s->run_into(feeds, outs).ok());
    EXPECT_NE(outs["y"].raw_data(), outs["z"].raw_data());
    scribble(outs["y"]);
    expect_weight(outs["z"], "run_into: z after writing y");
  }
}

// An ordinary output is handed out as the run made it: the constant ranges
// do not catch freshly allocated storage.
TEST(OutputAliases, ComputedOutputsAreNotConstants) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "computed");
  add_weight(g, "w");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {6});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Add", {"x", "w"}, "y");
  auto s = session_of(m);
  ASSERT_TRUE(s);
  auto out = s->run({{"x", Tensor::from_vector<float>({6}, {0, 0, 0, 0, 0, 0})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // The alias finder over a graph holding a weight: the output is not in it.
  ir::Graph graph;
  graph.values.emplace_back();
  graph.values[0].constant = Tensor::from_vector<float>({6}, {0, 1, 2, 3, 4, 5});
  OutputAliases aliases(graph);
  EXPECT_TRUE(aliases.in_constant(*graph.values[0].constant));
  EXPECT_TRUE(aliases.in_constant(*graph.values[0].constant->reshaped({2, 3})));
  EXPECT_FALSE(aliases.in_constant((*out)[0]));
  EXPECT_FALSE(aliases.in_constant(Tensor()));
}

// The threads of this process, from /proc/self/status.
int process_threads() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// threads above kMaxThreads (or negative) is refused before the model is read
// and before a thread starts: an unbounded count once started threads until
// the process limit and never returned.
TEST(SessionThreads, AboveTheBoundIsRefusedBeforeAnyThreadStarts) {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "relu");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Relu", {"x"}, "y");
  const std::string bytes = m.SerializeAsString();
  const int before = process_threads();
  ASSERT_GT(before, 0);
  for (int threads : {kMaxThreads + 1, 100000, -1}) {
    SessionOptions o;
    o.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    auto s = Session::create_from_bytes(bytes, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(s.ok()) << threads;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("threads is " + std::to_string(threads) + "; use 0 (one per core) to 4096"),
              std::string::npos)
        << s.status().message();
    EXPECT_LT(seconds, 1.0);
    EXPECT_EQ(process_threads(), before) << threads;
    // The same from a path (the file is never opened).
    auto from_path = Session::create("/nonexistent/model.onnx", o);
    ASSERT_FALSE(from_path.ok());
    EXPECT_EQ(from_path.status().code(), StatusCode::kInvalidArgument) << from_path.status().to_string();
  }
  EXPECT_EQ(kMaxThreads, 4096);
  SessionOptions two;
  two.threads = 2;
  EXPECT_TRUE(Session::create_from_bytes(bytes, two).ok());
}

}  // namespace
}  // namespace dlrt
