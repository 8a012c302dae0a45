// RunOptions: a run stops with kCancelled once its timeout passes or its
// cancel flag is set, inside a Loop too, and the session stays usable.
// Models are built here with ONNX's protobuf classes (test code only).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "dlrt/session.h"

namespace dlrt {
namespace {

void add_io(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* sh = tt->mutable_shape();
  for (int64_t d : dims) sh->add_dim()->set_dim_value(d);
}

// y = x + 1 repeated m times by a Loop (m: an input, so it can be huge).
std::string loop_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("loop");
  add_io(g->add_input(), "m", onnx::TensorProto::INT64, {});
  add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {64});
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {64});
  auto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  auto* loop = g->add_node();
  loop->set_op_type("Loop");
  loop->set_name("loop");
  loop->add_input("m");
  loop->add_input("cond");
  loop->add_input("x");
  loop->add_output("y");
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  auto* body = attr->mutable_g();
  body->set_name("body");
  add_io(body->add_input(), "i", onnx::TensorProto::INT64, {});
  add_io(body->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  add_io(body->add_input(), "v_in", onnx::TensorProto::FLOAT, {64});
  add_io(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  add_io(body->add_output(), "v_out", onnx::TensorProto::FLOAT, {64});
  auto* one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_float_data(1.0f);
  auto* id = body->add_node();
  id->set_op_type("Identity");
  id->add_input("c_in");
  id->add_output("c_out");
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("v_in");
  add->add_input("one");
  add->add_output("v_out");
  return m.SerializeAsString();
}

std::map<std::string, Tensor> feeds(int64_t m) {
  return {{"m", Tensor::scalar<int64_t>(m)}, {"x", Tensor::from_vector<float>({64}, std::vector<float>(64, 0.0f))}};
}

TEST(RunLimits, TimeoutStopsALongLoopAndTheSessionStaysUsable) {
  auto s = Session::create_from_bytes(loop_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RunOptions o;
  o.timeout_ms = 200;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = (*s)->run(feeds(int64_t{1} << 40), o);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_NE(r.status().message().find("200 ms"), std::string::npos) << r.status().message();
  EXPECT_LT(ms, 5000) << "the run did not stop promptly";
  // Usable afterwards, and a run within its timeout is unaffected.
  auto ok = (*s)->run(feeds(5), o);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_FLOAT_EQ((*ok)[0].data<float>()[0], 5.0f);
  RunOptions bad;
  bad.timeout_ms = -1;
  EXPECT_EQ((*s)->run(feeds(1), bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(RunLimits, CancelFlagFromAnotherThread) {
  auto s = Session::create_from_bytes(loop_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  std::atomic<bool> cancel{false};
  RunOptions o;
  o.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel.store(true);
  });
  auto r = (*s)->run(feeds(int64_t{1} << 40), o);
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(std::string(status_code_name(r.status().code())), "Cancelled");
  // run_into takes the same options.
  std::map<std::string, Tensor> out{{"y", Tensor()}};  // an empty tensor: replaced by the output
  EXPECT_EQ((*s)->run_into(feeds(3), out, o).code(), StatusCode::kCancelled);  // still cancelled
  cancel.store(false);
  ASSERT_TRUE((*s)->run_into(feeds(3), out, o).ok());
  ASSERT_TRUE(out["y"].valid());
  EXPECT_FLOAT_EQ(out["y"].data<float>()[0], 3.0f);
}

}  // namespace
}  // namespace dlrt
