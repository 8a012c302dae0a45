// Session: loading from bytes, input validation, running, reports.
// Models are built here with ONNX's protobuf classes (test code only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <onnx/onnx_pb.h>

#include "dlrt/session.h"
#include "ir/onnx_import.h"
#include "runtime/session_internal.h"

namespace dlrt {
namespace {

void add_io(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<std::string> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* sh = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = sh->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + out[0] : name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// An empty model (IR 8, opset 17) whose graph is called `name`.
onnx::ModelProto new_model(const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  m.mutable_graph()->set_name(name);
  return m;
}

// y = Relu(x + b), x: float[batch, 3], b initializer [3].
onnx::ModelProto add_relu_model() {
  onnx::ModelProto m = new_model("add_relu");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"batch", "3"});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {"batch", "3"});
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {1.0f, -2.0f, 0.5f}) b->add_float_data(v);
  add_node(g, "Add", {"x", "b"}, {"s"});
  add_node(g, "Relu", {"s"}, {"y"});
  return m;
}

std::unique_ptr<Session> make_session(const onnx::ModelProto& m, SessionOptions opts = {}) {
  auto r = Session::create_from_bytes(m.SerializeAsString(), opts);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : nullptr;
}

TEST(Session, RunsAddRelu) {
  auto s = make_session(add_relu_model());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->inputs().size(), 1u);
  EXPECT_EQ(s->inputs()[0].name, "x");
  EXPECT_EQ(s->inputs()[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(s->inputs()[0].dim_names[0], "batch");
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 1, 1, -5, 5, -5});
  RunReport report;
  auto out = s->run({{"x", x}}, &report);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  std::vector<float> want = {2, 0, 1.5, 0, 3, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], want[i]);
  ASSERT_EQ(report.partitions.size(), 1u);
  EXPECT_EQ(report.partitions[0].backend, "cpu");
  EXPECT_FALSE(report.partitions[0].degraded);
}

TEST(Session, RejectsBadInputs) {
  auto s = make_session(add_relu_model());
  ASSERT_TRUE(s);
  Tensor good = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  auto wrong_name = s->run({{"z", good}});
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_NE(wrong_name.status().message().find("no input named 'z'"), std::string::npos);
  EXPECT_FALSE(s->run({}).ok());
  auto wrong_dtype = s->run({{"x", Tensor::from_vector<int64_t>({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.status().message().find("float32"), std::string::npos);
  auto wrong_rank = s->run({{"x", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_rank.ok());
  EXPECT_NE(wrong_rank.status().message().find("rank"), std::string::npos);
  auto wrong_dim = s->run({{"x", Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4})}});
  EXPECT_FALSE(wrong_dim.ok());
  EXPECT_EQ(wrong_dim.status().code(), StatusCode::kInvalidArgument);
}

TEST(Session, RunIntoCallerBuffers) {
  auto s = make_session(add_relu_model());
  ASSERT_TRUE(s);
  float buf[3] = {9, 9, 9};
  std::map<std::string, Tensor> outs{{"y", Tensor::view(DType::kFloat32, {1, 3}, buf)}};
  ASSERT_TRUE(s->run_into({{"x", Tensor::from_vector<float>({1, 3}, {0, 0, 0})}}, outs).ok());
  EXPECT_FLOAT_EQ(buf[0], 1);
  EXPECT_FLOAT_EQ(buf[1], 0);
  std::map<std::string, Tensor> wrong{{"y", Tensor::view(DType::kFloat32, {3}, buf)}};
  EXPECT_FALSE(s->run_into({{"x", Tensor::from_vector<float>({1, 3}, {0, 0, 0})}}, wrong).ok());
  // Later runs of the same shapes write into the buffer directly; the values are the same.
  for (float x0 : {2.0f, -5.0f, 0.25f}) {
    std::fill(buf, buf + 3, 9.0f);
    ASSERT_TRUE(s->run_into({{"x", Tensor::from_vector<float>({1, 3}, {x0, 1, 1})}}, outs).ok());
    EXPECT_FLOAT_EQ(buf[0], std::max(0.0f, x0 + 1.0f));
    EXPECT_FLOAT_EQ(buf[1], 0.0f);
    EXPECT_FLOAT_EQ(buf[2], 1.5f);
    EXPECT_EQ(outs["y"].raw_data(), static_cast<void*>(buf));
  }
}

// Two inputs sharing the symbolic dim "batch" must agree on it.
TEST(Session, SymbolicDimsMustAgreeAcrossInputs) {
  onnx::ModelProto m = new_model("two_inputs");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"batch", "3"});
  add_io(g->add_input(), "z", onnx::TensorProto::FLOAT, {"batch", "3"});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {"batch", "3"});
  add_node(g, "Add", {"x", "z"}, {"y"});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto ok = s->run({{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                    {"z", Tensor::from_vector<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_FLOAT_EQ((*ok)[0].data<float>()[5], 7.0f);
  auto bad = s->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 2, 3})},
                     {"z", Tensor::from_vector<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("dim 'batch' is 1 in one input but 2 in input 'z'"), std::string::npos)
      << bad.status().to_string();
}

// "?" is what exporters (paddle2onnx) write for an unknown dim: each is its own.
TEST(Session, QuestionMarkDimsAreEachTheirOwn) {
  onnx::ModelProto m = new_model("unknown_dims");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"?", "?"});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {"?", "?"});
  add_node(g, "Relu", {"x"}, {"y"});
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto ok = s->run({{"x", Tensor::from_vector<float>({1, 3}, {-1, 2, -3})}});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_FLOAT_EQ((*ok)[0].data<float>()[1], 2.0f);
}

TEST(Session, UnsupportedOpNamesOpDomainOpsetAndNode) {
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_node(1)->set_op_type("FancyOp");
  m.mutable_graph()->mutable_node(1)->set_name("my_node");
  auto r = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("FancyOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ai.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 17"), std::string::npos) << msg;
  EXPECT_NE(msg.find("my_node"), std::string::npos) << msg;
}

TEST(Session, CycleIsInvalidModel) {
  onnx::ModelProto m = add_relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(1, "y");  // Add reads Relu's output, which reads Add's
  auto r = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("cycle"), std::string::npos) << r.status().message();
}

TEST(Session, UnsortedNodesAreSorted) {
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);
  auto s = make_session(m);
  ASSERT_TRUE(s);
  auto out = s->run({{"x", Tensor::from_vector<float>({1, 3}, {0, 0, 0})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
}

TEST(Session, NotOnnxAndEmptyAndOpsetErrors) {
  auto empty = Session::create_from_bytes("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidModel);
  auto junk = Session::create_from_bytes("this is plainly not a protobuf \xff\xff\xff");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), StatusCode::kInvalidModel);
  std::string bytes = add_relu_model().SerializeAsString();
  auto truncated = Session::create_from_bytes(bytes.substr(0, bytes.size() / 2));
  ASSERT_FALSE(truncated.ok());
  onnx::ModelProto m = add_relu_model();
  m.mutable_opset_import(0)->set_version(99);
  auto opset = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(opset.ok());
  EXPECT_EQ(opset.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(opset.status().message().find("opset 99"), std::string::npos);
}

TEST(Session, ShortInitializerIsRejected) {
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_initializer(0)->mutable_float_data()->RemoveLast();
  auto r = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(r.ok());
  // ONNX's checker or dlrt's own reader, whichever sees it first, names the tensor.
  const std::string& msg = r.status().message();
  EXPECT_TRUE(msg.find("initializer 'b'") != std::string::npos || msg.find("tensor name: b)") != std::string::npos)
      << msg;
}

TEST(Session, StrictModeRefusesMissingDevice) {
  SessionOptions opts;
  opts.device = "npu";
  auto s = make_session(add_relu_model(), opts);
  ASSERT_TRUE(s);
  auto placement = s->placement();
  ASSERT_EQ(placement.partitions.size(), 1u);
  EXPECT_TRUE(placement.partitions[0].degraded);
  EXPECT_NE(placement.partitions[0].reason.find("npu"), std::string::npos) << placement.partitions[0].reason;
  opts.strict = true;
  auto strict = Session::create_from_bytes(add_relu_model().SerializeAsString(), opts);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kDeviceUnavailable);
  opts.device = "warp_drive";
  auto bad = Session::create_from_bytes(add_relu_model().SerializeAsString(), opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// y = x @ W, x: float[rows, 64], W an initializer [64, 48].
onnx::ModelProto matmul_model() {
  onnx::ModelProto m = new_model("matmul");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"rows", "64"});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {"rows", "48"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(64);
  w->add_dims(48);
  for (int i = 0; i < 64 * 48; ++i) w->add_float_data(static_cast<float>((i * 37) % 101) / 50.0f - 1.0f);
  add_node(g, "MatMul", {"x", "w"}, {"y"});
  return m;
}

// cpu_precision picks the matmul precision, is reported per CPU partition,
// and an unknown value is an error naming where it came from.
TEST(Session, CpuPrecisionIsAppliedAndReported) {
  std::vector<float> xv(40 * 64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 13) % 29) / 14.0f - 1.0f;
  const Tensor x = Tensor::from_vector<float>({40, 64}, xv);
  auto f32 = make_session(matmul_model());
  ASSERT_TRUE(f32);
  EXPECT_EQ(f32->placement().partitions[0].precision, "f32");
  auto want = f32->run({{"x", x}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  SessionOptions opts;
  opts.cpu_precision = "bf16x3";
  auto amx = make_session(matmul_model(), opts);
  ASSERT_TRUE(amx);
  RunReport report;
  auto got = amx->run({{"x", x}}, &report);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(report.partitions.size(), 1u);
  // bf16x3 where this CPU has AMX-BF16, f32 elsewhere: the report says which.
  const std::string ran = report.partitions[0].precision;
  EXPECT_TRUE(ran == "bf16x3" || ran == "f32") << ran;
  const float* w = (*want)[0].data<float>();
  const float* g = (*got)[0].data<float>();
  double max_diff = 0;
  for (int64_t i = 0; i < 40 * 48; ++i) {
    ASSERT_NEAR(g[i], w[i], 2e-4 * (1 + std::fabs(w[i]))) << "element " << i << " precision " << ran;
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(g[i] - w[i])));
  }
  if (ran == "bf16x3") {
    EXPECT_GT(max_diff, 0.0) << "bf16x3 gave bit-identical results: did it run at all?";
  }

  // bf16: one bf16 product per term on AMX tiles where they run, else on
  // AVX512-BF16 (x86) or BF16 (aarch64), else f32 with the reason in the report.
  opts.cpu_precision = "bf16";
  auto one = make_session(matmul_model(), opts);
  ASSERT_TRUE(one);
  auto got16 = one->run({{"x", x}}, &report);
  ASSERT_TRUE(got16.ok()) << got16.status().to_string();
  const std::string ran16 = report.partitions[0].precision;
  const bool bf16_ran = ran16 == "bf16 (amx)" || ran16 == "bf16 (avx512_bf16)" || ran16 == "bf16 (neon-bfmmla)";
  EXPECT_TRUE(bf16_ran || ran16.rfind("f32 (bf16 unavailable: ", 0) == 0) << ran16;
  const float* g16 = (*got16)[0].data<float>();
  double max16 = 0;
  for (int64_t i = 0; i < 40 * 48; ++i) {
    // Inputs rounded to 8 significant bits: each term off by about 2^-8.
    ASSERT_NEAR(g16[i], w[i], 2e-2 * (1 + std::fabs(w[i]))) << "element " << i << " precision " << ran16;
    max16 = std::max(max16, static_cast<double>(std::fabs(g16[i] - w[i])));
  }
  if (bf16_ran) EXPECT_GT(max16, 1e-4) << "bf16 as close as f32: did it run at all?";
  else EXPECT_EQ(max16, 0.0) << "the f32 fallback differs from f32";

  opts.cpu_precision = "bf17";
  auto bad = Session::create_from_bytes(matmul_model().SerializeAsString(), opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cpu_precision"), std::string::npos) << bad.status().message();
}

TEST(Session, IfBranchReadsOuterScope) {
  // y = If(cond) then { x + b } else { x }
  onnx::ModelProto m = new_model("if_model");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"3"});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {"3"});
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {10.0f, 20.0f, 30.0f}) b->add_float_data(v);
  auto* node = add_node(g, "If", {"cond"}, {"y"}, "the_if");
  auto* then_attr = node->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* tg = then_attr->mutable_g();
  tg->set_name("then");
  add_node(tg, "Add", {"x", "b"}, {"t_out"});
  add_io(tg->add_output(), "t_out", onnx::TensorProto::FLOAT, {"3"});
  auto* else_attr = node->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* eg = else_attr->mutable_g();
  eg->set_name("else");
  add_node(eg, "Identity", {"x"}, {"e_out"});
  add_io(eg->add_output(), "e_out", onnx::TensorProto::FLOAT, {"3"});

  auto s = make_session(m);
  ASSERT_TRUE(s);
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  auto yes = s->run({{"cond", Tensor::scalar<bool>(true)}, {"x", x}});
  ASSERT_TRUE(yes.ok()) << yes.status().to_string();
  EXPECT_FLOAT_EQ((*yes)[0].data<float>()[2], 33.0f);
  auto no = s->run({{"cond", Tensor::scalar<bool>(false)}, {"x", x}});
  ASSERT_TRUE(no.ok()) << no.status().to_string();
  EXPECT_FLOAT_EQ((*no)[0].data<float>()[2], 3.0f);
}

// Two towers in one graph: a = Relu(x), b = Neg(z), c = a + b.
onnx::ModelProto two_tower_model() {
  onnx::ModelProto m = new_model("two_towers");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {"3"});
  add_io(g->add_input(), "z", onnx::TensorProto::FLOAT, {"3"});
  for (const char* name : {"a", "b", "c"}) add_io(g->add_output(), name, onnx::TensorProto::FLOAT, {"3"});
  add_node(g, "Relu", {"x"}, {"a"});
  add_node(g, "Neg", {"z"}, {"b"});
  add_node(g, "Add", {"a", "b"}, {"c"});
  return m;
}

TEST(Session, OutputsSelectTheNodesAndInputsThatRun) {
  for (bool optimize : {true, false}) {
    SessionOptions opts;
    opts.optimize = optimize;
    opts.outputs = {"b"};
    auto s = make_session(two_tower_model(), opts);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->inputs().size(), 1u);  // x feeds only the dropped outputs
    EXPECT_EQ(s->inputs()[0].name, "z");
    ASSERT_EQ(s->outputs().size(), 1u);
    EXPECT_EQ(s->outputs()[0].name, "b");
    auto out = s->run({{"z", Tensor::from_vector<float>({3}, {1, -2, 3})}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_FLOAT_EQ((*out)[0].data<float>()[1], 2.0f);
    EXPECT_EQ(s->placement().partitions.at(0).node_count, 1);

    opts.outputs = {"c", "a"};  // kept in the model's order
    s = make_session(two_tower_model(), opts);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->inputs().size(), 2u);
    ASSERT_EQ(s->outputs().size(), 2u);
    EXPECT_EQ(s->outputs()[0].name, "a");
  }
  SessionOptions opts;
  opts.outputs = {"logits"};
  auto bad = Session::create_from_bytes(two_tower_model().SerializeAsString(), opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"logits\", which is not an output of the model (its outputs: a, b, c)"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace dlrt
