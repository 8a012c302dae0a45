// Helpers for tests that build ONNX models with ONNX's protobuf classes.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dlrt::testing {

// Appends node `op` (named "<op>_<out>") reading `in` and writing `out` to `g`.
inline onnx::NodeProto* add_onnx_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                      const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// `m` as an IR 8 model importing default-domain `opset`; its graph, named `name`.
inline onnx::GraphProto* start_model(onnx::ModelProto& m, int opset, const std::string& name) {
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name(name);
  return g;
}

// A tensor value of element type `elem` and unknown shape.
inline void add_unshaped_value_info(onnx::ValueInfoProto* vi, const std::string& name, int elem) {
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

// An int64 initializer of shape `dims`.
inline void add_int64_initializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                                  std::vector<int64_t> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

inline void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* sh = tt->mutable_shape();
  for (int64_t d : dims) sh->add_dim()->set_dim_value(d);
}

// y = x + 1 repeated m times by a Loop: inputs m (int64 scalar, the trip
// count, so it can be huge: a model made slow on purpose) and x (float[64]).
inline std::string loop_model() {
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "loop");
  add_value_info(g->add_input(), "m", onnx::TensorProto::INT64, {});
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {64});
  add_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {64});
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
  add_value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  add_value_info(body->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  add_value_info(body->add_input(), "v_in", onnx::TensorProto::FLOAT, {64});
  add_value_info(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  add_value_info(body->add_output(), "v_out", onnx::TensorProto::FLOAT, {64});
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

}  // namespace dlrt::testing
