// Models of the ONNX release dlrt's model layer is built from (1.23.2): newer
// IR versions and opsets, model-local functions, ops expanded into their ONNX
// function bodies, and op definitions newer than dlrt runs.
#include <gtest/gtest.h>

#include <cmath>

#include <onnx/onnx_pb.h>

#include "dlrt/session.h"
#include "ir/onnx_definitions.h"
#include "ir/onnx_import.h"
#include "../onnx_proto_util.h"

namespace dlrt {
namespace {

using testing::add_onnx_node;
using testing::add_value_info;

// y = OP(x) over float[4], at `opset`, with IR version `ir`.
onnx::ModelProto unary_model(const std::string& op, int opset, int ir) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name(op);
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_onnx_node(g, op, {"x"}, "y");
  return m;
}

std::vector<float> run(const onnx::ModelProto& m, std::vector<float> x) {
  auto s = Session::create_from_bytes(m.SerializeAsString());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return {};
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({4}, x)}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0];
  return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
}

TEST(OnnxRelease, MaxOpsetIsTheLibrarys) { EXPECT_EQ(ir::kMaxOpset, ir::onnx_library_max_opset()); }

TEST(OnnxRelease, IrVersion10AndTheNewestOpsetLoad) {
  for (int ir : {9, 10, 11}) {
    for (int opset : {17, 21, ir::kMaxOpset}) {
      auto y = run(unary_model("Relu", opset, ir), {-1, 0, 2, -3});
      EXPECT_EQ(y, (std::vector<float>{0, 0, 2, 0})) << "IR " << ir << " opset " << opset;
    }
  }
}

TEST(OnnxRelease, OpsetBeyondTheLibraryIsRefusedNamingTheRange) {
  auto s = Session::create_from_bytes(unary_model("Relu", ir::kMaxOpset + 1, 10).SerializeAsString());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(s.status().message().find("opset " + std::to_string(ir::kMaxOpset + 1)), std::string::npos)
      << s.status().message();
}

// Swish (opset 24) has no CPU kernel: it runs as its ONNX function body,
// x * Sigmoid(alpha * x), with alpha's default 1 filled in.
TEST(OnnxRelease, FunctionOpWithoutKernelRunsAsItsBody) {
  const std::vector<float> x{-2, -0.5f, 0, 3};
  auto y = run(unary_model("Swish", 24, 10), x);
  ASSERT_EQ(y.size(), 4u);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i] / (1 + std::exp(-x[i])), 1e-6) << i;
}

// A model-local function (custom domain) is inlined at load.
TEST(OnnxRelease, LocalFunctionIsInlined) {
  onnx::ModelProto m = unary_model("Relu", 21, 10);
  m.add_opset_import()->set_domain("my.functions");
  m.mutable_opset_import(1)->set_version(1);
  auto* f = m.add_functions();
  f->set_name("ReluTwice");
  f->set_domain("my.functions");
  f->add_input("a");
  f->add_output("b");
  f->add_opset_import()->set_version(21);
  auto* n1 = f->add_node();
  n1->set_op_type("Neg");
  n1->add_input("a");
  n1->add_output("t");
  auto* n2 = f->add_node();
  n2->set_op_type("Relu");
  n2->add_input("t");
  n2->add_output("b");
  auto* call = m.mutable_graph()->mutable_node(0);
  call->set_op_type("ReluTwice");
  call->set_domain("my.functions");
  auto y = run(m, {-1, 0, 2, -3});
  EXPECT_EQ(y, (std::vector<float>{1, 0, 0, 3}));
}

// QuantizeLinear 23 computes x / scale in `precision`: dlrt runs float32 only
// and says so instead of computing in another precision.
TEST(OnnxRelease, NewerDefinitionPartsDlrtDoesNotRunAreRefused) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(23);
  auto* g = m.mutable_graph();
  g->set_name("q");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_value_info(g->add_output(), "y", onnx::TensorProto::UINT8, {4});
  auto* s = g->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_float_data(0.5f);
  auto* q = add_onnx_node(g, "QuantizeLinear", {"x", "s"}, "y");
  auto* a = q->add_attribute();
  a->set_name("precision");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(onnx::TensorProto::FLOAT16);
  auto r = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("precision"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace dlrt
