// What the public API says the runtime knows (issue 78): dlrt::backends(),
// read_model_info / model_info, node_placement, run_profiled,
// read_onnx_value_file and is_cpu_precision. Models are built here with
// ONNX's protobuf classes (test code only).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "dlrt/backends.h"
#include "dlrt/cpu_precision.h"
#include "dlrt/model_info.h"
#include "dlrt/onnx_data.h"
#include "dlrt/placement.h"
#include "dlrt/profile.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

TEST(PublicBackends, CpuComesFirstAvailableWithItsDevice) {
  const std::vector<BackendInfo> all = backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].name, "cpu");
  EXPECT_TRUE(all[0].available) << all[0].reason;
  ASSERT_FALSE(all[0].devices.empty());
  EXPECT_EQ(all[0].devices[0].backend, "cpu");
  EXPECT_EQ(all[0].devices[0].spec.rfind("cpu:", 0), 0u) << all[0].devices[0].spec;
  for (const BackendInfo& b : all) {
    if (b.available) continue;
    EXPECT_FALSE(b.reason.empty()) << b.name << " is unavailable without a reason";
    EXPECT_TRUE(b.devices.empty()) << b.name;
  }
}

TEST(PublicBackends, OnlyAsksTheNamedBackend) {
  BackendsOptions q;
  q.only = "cpu";
  const std::vector<BackendInfo> cpu = backends(q);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].name, "cpu");
  q.only = "no-such-backend";
  EXPECT_TRUE(backends(q).empty());
}

TEST(PublicBackends, PairsWithTheHardwareGiven) {
  BackendsOptions q;
  q.only = "cpu";
  q.hardware = discover_devices();
  ASSERT_FALSE(q.hardware->empty());
  const std::vector<BackendInfo> cpu = backends(q);
  ASSERT_EQ(cpu.size(), 1u);
  ASSERT_FALSE(cpu[0].devices.empty());
  ASSERT_TRUE(cpu[0].devices[0].hardware.has_value());
  EXPECT_EQ(cpu[0].devices[0].hardware->id, (*q.hardware)[0].id);
}

void add_io(onnx::ValueInfoProto* vi, const std::string& name, std::vector<std::string> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* sh = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = sh->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// y = Relu(x + b) with x: float[batch, 3], b [3]; an If whose branches hold
// one Identity each; producer, doc string, metadata_props.
std::string described_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  m.set_producer_name("dlrt-test");
  m.set_producer_version("1.2");
  m.set_doc_string("a test model");
  auto* prop = m.add_metadata_props();
  prop->set_key("author");
  prop->set_value("dlrt");
  auto* g = m.mutable_graph();
  g->set_name("described");
  add_io(g->add_input(), "x", {"batch", "3"});
  add_io(g->add_output(), "y", {"batch", "3"});
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {1.0f, -2.0f, 0.5f}) b->add_float_data(v);
  auto* c = g->add_initializer();
  c->set_name("cond");
  c->set_data_type(onnx::TensorProto::BOOL);
  c->add_int32_data(1);
  auto node = [](onnx::GraphProto* in, const std::string& op, std::vector<std::string> ins, const std::string& out) {
    auto* n = in->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + out);
    for (auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  node(g, "Add", {"x", "b"}, "s");
  auto* iff = node(g, "If", {"cond"}, "r");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = iff->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sg = a->mutable_g();
    sg->set_name(branch);
    node(sg, "Identity", {"s"}, std::string(branch) + "_out");
    add_io(sg->add_output(), std::string(branch) + "_out", {"batch", "3"});
  }
  node(g, "Relu", {"r"}, "y");
  return m.SerializeAsString();
}

fs::path write_temp(const std::string& name, const std::string& bytes) {
  const fs::path p = fs::temp_directory_path() / ("dlrt_public_api_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

void expect_described(const ModelInfo& info) {
  EXPECT_EQ(info.ir_version, 8);
  EXPECT_EQ(info.opsets.at(""), 17);
  EXPECT_EQ(info.metadata.producer_name, "dlrt-test");
  EXPECT_EQ(info.metadata.producer_version, "1.2");
  EXPECT_EQ(info.metadata.description, "a test model");
  EXPECT_EQ(info.metadata.graph_name, "described");
  EXPECT_EQ(info.metadata.custom.at("author"), "dlrt");
  ASSERT_EQ(info.inputs.size(), 1u);
  const ModelValueInfo& x = info.inputs[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.kind, "tensor");
  EXPECT_EQ(x.dtype, DType::kFloat32);
  EXPECT_TRUE(x.has_shape);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(x.dim_names, (std::vector<std::string>{"batch", ""}));
  EXPECT_EQ(x.type, "tensor(float)");
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].name, "y");
  EXPECT_EQ(info.node_count, 5);  // Add, If, Relu and one Identity per branch
  EXPECT_EQ(info.subgraph_count, 2);
  std::map<std::string, int64_t> ops;
  for (const OpCount& op : info.ops) ops[op.domain + ":" + op.op_type] = op.count;
  EXPECT_EQ(ops, (std::map<std::string, int64_t>{{":Add", 1}, {":Identity", 2}, {":If", 1}, {":Relu", 1}}));
  EXPECT_EQ(info.parameter_count, 4);  // b (3 floats) and cond (1 bool)
  EXPECT_EQ(info.parameter_bytes, 13);
}

TEST(PublicModelInfo, FromTheFileAndFromTheSession) {
  const fs::path path = write_temp("described.onnx", described_model());
  auto read = read_model_info(path.string());
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  expect_described(*read);

  SessionOptions o;
  o.device = "cpu";
  o.threads = 1;
  auto session = Session::create(path.string(), o);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  // As imported, before graph optimisation (which may fold or fuse nodes).
  expect_described(model_info(**session));
  fs::remove(path);
}

TEST(PublicModelInfo, RefusesWhatIsNotAModel) {
  auto missing = read_model_info("/nonexistent/dlrt/model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError) << missing.status().to_string();
  const fs::path junk = write_temp("junk.onnx", "this is not protobuf \x01\x02\x03");
  auto bad = read_model_info(junk.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel) << bad.status().to_string();
  fs::remove(junk);
}

TEST(PublicPlacement, EveryPlannedNodeHasAPartition) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 1;
  auto session = Session::create_from_bytes(described_model(), o);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  const RunReport placement = (*session)->placement();
  const std::vector<NodePlacement>& nodes = node_placement(**session);
  ASSERT_FALSE(nodes.empty());
  for (const NodePlacement& n : nodes) {
    EXPECT_FALSE(n.op_type.empty());
    ASSERT_GE(n.partition, 0);
    ASSERT_LT(static_cast<size_t>(n.partition), placement.partitions.size());
    EXPECT_EQ(placement.partitions[static_cast<size_t>(n.partition)].backend, "cpu");
    EXPECT_TRUE(n.cpu_reason.empty()) << n.node << ": " << n.cpu_reason;  // nothing else was asked for
  }
}

TEST(PublicProfile, TimesEveryNodeOfTheRun) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 1;
  auto session = Session::create_from_bytes(described_model(), o);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  auto x = Tensor::allocate(DType::kFloat32, {2, 3});
  ASSERT_TRUE(x.ok());
  RunReport report;
  auto nodes = run_profiled(**session, {{"x", *x}}, &report);
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  ASSERT_FALSE(nodes->empty());
  for (const NodeProfile& n : *nodes) {
    EXPECT_FALSE(n.node.empty());
    EXPECT_FALSE(n.op_type.empty());
    EXPECT_GE(n.ms, 0.0);
  }
  EXPECT_FALSE(report.partitions.empty());
  auto bad = run_profiled(**session, {{"nope", *x}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(PublicOnnxData, ReadsATensorProtoFile) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(3);
  for (int64_t v : {4, -5, 6}) t.add_int64_data(v);
  const fs::path path = write_temp("input_0.pb", t.SerializeAsString());
  auto v = read_onnx_value_file(path.string());
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  ASSERT_EQ(v->kind, Value::Kind::kTensor);
  ASSERT_EQ(v->tensor.dtype(), DType::kInt64);
  ASSERT_EQ(v->tensor.size(), 3);
  EXPECT_EQ(v->tensor.data<int64_t>()[1], -5);
  auto wrong = read_onnx_value_file(path.string(), "map");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  fs::remove(path);
}

TEST(PublicCpuPrecision, NamesTheSessionTakes) {
  EXPECT_TRUE(is_cpu_precision("f32"));
  EXPECT_TRUE(is_cpu_precision("bf16x3"));
  EXPECT_FALSE(is_cpu_precision(""));
  EXPECT_FALSE(is_cpu_precision("F32"));
  EXPECT_FALSE(is_cpu_precision("fp64"));
}

}  // namespace
}  // namespace dlrt
