// Node arity at load (ir/onnx_arity.h), issue 41 finding 10: a node with
// too few or too many inputs or outputs is refused with kInvalidModel and
// the same message at opset 17 (where libonnx's checker also runs) and at
// 18 and 21 (where it does not), before anything runs.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

using testing::add_int64_initializer;
using testing::add_onnx_node;
using testing::add_unshaped_value_info;
using testing::add_value_info;

// A graph over float input x [1, 2, 4, 4] (and w, a [2, 2, 1, 1] input),
// output y of unknown shape, whose nodes `build` adds.
std::string model_with(int opset, const std::function<void(onnx::GraphProto*)>& build) {
  onnx::ModelProto m;
  auto* g = testing::start_model(m, opset, "arity");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 2, 4, 4});
  add_value_info(g->add_input(), "w", onnx::TensorProto::FLOAT, {2, 2, 1, 1});
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  build(g);
  return m.SerializeAsString();
}

struct Broken {
  const char* name;
  std::function<void(onnx::GraphProto*)> build;
  const char* message;  // part of the message
};

std::vector<Broken> broken_graphs() {
  return {
      {"add_one_input", [](onnx::GraphProto* g) { add_onnx_node(g, "Add", {"x"}, "y"); },
       "node 'Add_y' (Add) has 1 input; Add takes 2 inputs"},
      {"conv_no_weights", [](onnx::GraphProto* g) { add_onnx_node(g, "Conv", {"x"}, "y"); },
       "node 'Conv_y' (Conv) has 1 input; Conv takes 2 to 3 inputs"},
      {"relu_two_outputs",
       [](onnx::GraphProto* g) { add_onnx_node(g, "Relu", {"x"}, "y")->add_output("y2"); },
       "node 'Relu_y' (Relu) has 2 outputs; Relu makes 1 output"},
      {"gemm_four_inputs", [](onnx::GraphProto* g) { add_onnx_node(g, "Gemm", {"x", "w", "w", "w"}, "y"); },
       "(Gemm) has 4 inputs; Gemm takes 2 to 3 inputs"},
      {"concat_no_inputs", [](onnx::GraphProto* g) { add_onnx_node(g, "Concat", {}, "y"); },
       "(Concat) has 0 inputs; Concat takes 1 or more inputs"},
      {"mul_required_input_empty", [](onnx::GraphProto* g) { add_onnx_node(g, "Mul", {"x", ""}, "y"); },
       "(Mul): input 1 ('B') is required but has no name"},
      {"inside_an_if",
       [](onnx::GraphProto* g) {
         auto* iff = add_onnx_node(g, "If", {"c"}, "y");
         auto* c = g->add_initializer();
         c->set_name("c");
         c->set_data_type(onnx::TensorProto::BOOL);
         c->add_int32_data(1);
         for (const char* branch : {"then_branch", "else_branch"}) {
           auto* a = iff->add_attribute();
           a->set_name(branch);
           a->set_type(onnx::AttributeProto::GRAPH);
           auto* b = a->mutable_g();
           b->set_name(branch);
           add_unshaped_value_info(b->add_output(), std::string(branch) + "_y", onnx::TensorProto::FLOAT);
           add_onnx_node(b, "Sub", {"x"}, std::string(branch) + "_y");
         }
       },
       "(Sub) has 1 input; Sub takes 2 inputs"},
  };
}

TEST(OnnxArity, BrokenGraphsFailAtLoadWithTheSameMessageAtEveryOpset) {
  for (const Broken& b : broken_graphs()) {
    std::string first;
    for (int opset : {17, 18, 21}) {
      SCOPED_TRACE(std::string(b.name) + " at opset " + std::to_string(opset));
      auto s = Session::create_from_bytes(model_with(opset, b.build));
      ASSERT_FALSE(s.ok());
      EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
      EXPECT_NE(s.status().message().find(b.message), std::string::npos) << s.status().message();
      EXPECT_NE(s.status().message().find("fix the graph"), std::string::npos) << s.status().message();
      if (first.empty()) first = s.status().message();
      EXPECT_EQ(s.status().message(), first);
    }
  }
}

// Inputs added after opset 17 (the schema of the model's opset decides): a
// ReduceMean with axes as an input and a Pad with axes load at opset 18, and
// are refused at 17.
TEST(OnnxArity, InputsAddedAfterOpset17AreAccepted) {
  auto with_axes = [](onnx::GraphProto* g) {
    add_int64_initializer(g, "axes", {1}, {1});
    add_onnx_node(g, "ReduceMean", {"x", "axes"}, "y");
  };
  auto s18 = Session::create_from_bytes(model_with(18, with_axes));
  ASSERT_TRUE(s18.ok()) << s18.status().to_string();
  auto s17 = Session::create_from_bytes(model_with(17, with_axes));
  ASSERT_FALSE(s17.ok());
  EXPECT_NE(s17.status().message().find("ReduceMean takes 1 input"), std::string::npos) << s17.status().message();
  auto pad_axes = [](onnx::GraphProto* g) {
    add_int64_initializer(g, "pads", {2}, {1, 1});
    add_int64_initializer(g, "axes", {1}, {3});
    add_onnx_node(g, "Pad", {"x", "pads", "", "axes"}, "y");
  };
  auto pad = Session::create_from_bytes(model_with(19, pad_axes));
  ASSERT_TRUE(pad.ok()) << pad.status().to_string();
  // A graph that is right at both opsets loads at both.
  for (int opset : {17, 18, 21}) {
    auto ok = Session::create_from_bytes(model_with(opset, [](onnx::GraphProto* g) { add_onnx_node(g, "Conv", {"x", "w"}, "y"); }));
    EXPECT_TRUE(ok.ok()) << opset << ": " << ok.status().to_string();
  }
}

}  // namespace
}  // namespace dlrt
