// `dlrt compile` with the CPU backend (available everywhere): compile ->
// run gives the original model's outputs, the compiled blob is used, side
// files, recompiling when the blob does not fit, usage errors. Plus the same
// path in-process with a fake accelerator whose runtime version changes.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/registry.h"
#include "backends/cpu/cpu_backend.h"
#include "cli_test_util.h"
#include "core/npy.h"
#include "dlrt/session.h"
#include "runtime/compiled_model.h"
#include "runtime/backends.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using testing::quote;
using testing::run_command;

class CompileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    models_ = testing::test_models_dir(&err);
    if (models_.empty()) GTEST_SKIP() << err;
    if (!fs::exists(testing::dlrt_binary())) GTEST_SKIP() << testing::dlrt_binary() << " is missing: build dlrt_cli";
    tmp_ = fs::temp_directory_path() /
           ("dlrt_compile_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }
  // dlrt with the blob cache in the test's folder.
  std::string dlrt(const std::string& args) const {
    return "env DLRT_CACHE_DIR=" + quote((tmp_ / "cache").string()) + " " + quote(testing::dlrt_binary()) + " " + args;
  }
  std::string model(const std::string& name) const { return (fs::path(models_) / name).string(); }

  std::string models_;
  fs::path tmp_;
};

nlohmann::json parse_json(const std::string& out) {
  auto start = out.find('{');
  if (start == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(out.substr(start), nullptr, false);
}

// Max |a-b| <= atol + rtol |b| over float32 tensors of the same shape.
::testing::AssertionResult close(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << "dtype/shape differ: " << shape_to_string(a.shape()) << " vs "
                                         << shape_to_string(b.shape());
  if (a.dtype() != DType::kFloat32) return ::testing::AssertionFailure() << "not float32";
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.data<float>()[i], y = b.data<float>()[i];
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(CompileCli, CpuCompileThenRunMatchesTheOriginal) {
  const std::string out = (tmp_ / "mlp.compiled.onnx").string();
  auto c = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu -o " + quote(out)));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("partition 0: 6 nodes for cpu:0, blob"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("embedded"), std::string::npos) << c.output;
  ASSERT_TRUE(fs::exists(out));

  // The compiled model is one com.dlrt.CompiledPartition node with the subgraph kept.
  onnx::ModelProto m;
  {
    std::ifstream f(out, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&f));
  }
  ASSERT_EQ(m.graph().node_size(), 1);
  const auto& n = m.graph().node(0);
  EXPECT_EQ(n.domain(), "com.dlrt");
  EXPECT_EQ(n.op_type(), "CompiledPartition");
  std::map<std::string, const onnx::AttributeProto*> at;
  for (const auto& a : n.attribute()) at[a.name()] = &a;
  for (const char* k : {"backend", "device", "runtime_version", "driver_version", "options", "blob", "blob_format",
                        "blob_checksum", "subgraph", "format_version"})
    EXPECT_TRUE(at.count(k)) << "missing attribute " << k;
  EXPECT_EQ(at["backend"]->s(), "cpu");
  EXPECT_EQ(at["subgraph"]->g().node_size(), 6);
  EXPECT_EQ(m.graph().initializer_size(), 0) << "weights only the partition reads belong in its subgraph";

  const std::string outdir = (tmp_ / "o").string();
  auto r = run_command(dlrt("run " + quote(out) + " --device cpu --json --input x=" + quote(model("mlp_input.npy")) +
                            " --output-dir " + quote(outdir)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = parse_json(r.output);
  ASSERT_TRUE(j.is_object()) << r.output;
  ASSERT_EQ(j["report"].size(), 1u) << r.output;
  EXPECT_EQ(j["report"][0]["backend"], "cpu");
  EXPECT_EQ(j["report"][0]["node_count"], 6);
  EXPECT_FALSE(j["report"][0]["degraded"].get<bool>());
  EXPECT_NE(j["report"][0]["reason"].get<std::string>().find("compiled blob used"), std::string::npos) << r.output;
  auto got = read_npy_file(outdir + "/probs.npy");
  auto want = read_npy_file(model("mlp_expected.npy"));
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_TRUE(close(*got, *want, 1e-5, 1e-6));
}

TEST_F(CompileCli, ConvIfExternalDataAndDynamicModelsGiveTheSameOutputs) {
  struct Case {
    std::string file, inputs;
  };
  for (const Case& c : {Case{"conv_net.onnx", ""}, Case{"if_model.onnx", ""}, Case{"external_data.onnx", ""},
                        Case{"dynamic_batch.onnx", "--shape x=3x5"}}) {
    SCOPED_TRACE(c.file);
    const std::string out = (tmp_ / ("c_" + c.file)).string();
    auto comp = run_command(dlrt("compile " + quote(model(c.file)) + " --device cpu -o " + quote(out)));
    ASSERT_EQ(comp.exit_code, 0) << comp.output;
    const std::string a = (tmp_ / ("a_" + c.file)).string(), b = (tmp_ / ("b_" + c.file)).string();
    auto r1 = run_command(dlrt("run " + quote(model(c.file)) + " --device cpu --seed 7 " + c.inputs + " --output-dir " + quote(a)));
    auto r2 = run_command(dlrt("run " + quote(out) + " --device cpu --seed 7 " + c.inputs + " --output-dir " + quote(b)));
    ASSERT_EQ(r1.exit_code, 0) << r1.output;
    ASSERT_EQ(r2.exit_code, 0) << r2.output;
    int files = 0;
    for (const auto& e : fs::directory_iterator(a)) {
      ++files;
      auto x = read_npy_file(e.path().string());
      auto y = read_npy_file((fs::path(b) / e.path().filename()).string());
      ASSERT_TRUE(x.ok() && y.ok()) << e.path();
      EXPECT_TRUE(close(*y, *x)) << e.path().filename();
    }
    EXPECT_GT(files, 0);
  }
}

TEST_F(CompileCli, SideFileBlobAndRecompileWhenItIsMissing) {
  const std::string out = (tmp_ / "m.onnx").string();
  auto c = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu --embed-limit-mb 0 --json -o " + quote(out)));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  auto j = parse_json(c.output);
  ASSERT_TRUE(j.is_object()) << c.output;
  const std::string side = j["partitions"][0]["blob_file"].get<std::string>();
  ASSERT_FALSE(side.empty()) << c.output;
  ASSERT_TRUE(fs::exists(side)) << side;
  EXPECT_EQ(fs::path(side).parent_path(), tmp_);

  const std::string run = "run " + quote(out) + " --device cpu --json --input x=" + quote(model("mlp_input.npy"));
  auto r = run_command(dlrt(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto rj = parse_json(r.output);
  EXPECT_NE(rj["report"][0]["reason"].get<std::string>().find("compiled blob used"), std::string::npos) << r.output;

  // Corrupt, then missing: the kept subgraph is recompiled and the report says why.
  {
    std::fstream f(side, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x7f');
  }
  r = run_command(dlrt(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  rj = parse_json(r.output);
  std::string reason = rj["report"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("checksum"), std::string::npos) << reason;
  EXPECT_NE(reason.find("recompiled from the kept subgraph"), std::string::npos) << reason;
  fs::remove(side);
  r = run_command(dlrt(run));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  rj = parse_json(r.output);
  reason = rj["report"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("missing"), std::string::npos) << reason;
  EXPECT_EQ(rj["outputs"][0]["shape"], nlohmann::json({2, 3})) << r.output;
}

TEST_F(CompileCli, UsageAndModelErrors) {
  const std::string out = (tmp_ / "x.onnx").string();
  auto r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("-o"), std::string::npos) << r.output;
  r = run_command(dlrt("compile --device cpu -o " + quote(out)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device nosuchthing -o " + quote(out)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu --option novalue -o " + quote(out)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu -o " + quote(model("mlp.onnx"))));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile " + quote((tmp_ / "absent.onnx").string()) + " --device cpu -o " + quote(out)));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.signaled);
  r = run_command(dlrt("compile " + quote(model("bad/cycle.onnx")) + " --device cpu -o " + quote(out)));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu -o " + quote((tmp_ / "no/such/dir/x.onnx").string())));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile " + quote(model("mlp.onnx")) + " --device cpu -o" + quote(out) + " --embed-limit-mb 5000"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_command(dlrt("compile --help"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("CompiledPartition"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

// ---- In process: a fake accelerator whose runtime version can change ----

class VersionedFake final : public backend::Backend {
 public:
  std::string version = "1.0";
  int compiles = 0;
  std::atomic<bool> available{false};  // only while a test uses it: `auto` elsewhere must not pick it
  std::string name() const override { return "vfake"; }
  backend::Availability is_available(bool) override {
    backend::Availability a;
    a.available = available.load();
    if (!a.available) a.reason = "vfake is switched off";
    a.version = version;
    return a;
  }
  std::vector<backend::BackendDevice> devices(const std::vector<Device>&) override {
    backend::BackendDevice d;
    d.backend = "vfake";
    d.name = "NPU";
    d.type = DeviceType::kNpu;
    d.metadata["driver_version"] = "7";
    return {d};
  }
  std::vector<backend::NodeSupport> supports(const ir::Graph& g, const backend::BackendDevice&) override {
    std::vector<backend::NodeSupport> r;
    for (const auto& n : g.nodes) r.push_back({n.op_type == "Relu", "vfake takes Relu only"});
    return r;
  }
  Result<backend::Blob> compile(const ir::Graph& g, const backend::BackendDevice& d, const backend::CompileOptions& o) override {
    ++compiles;
    DLRT_ASSIGN_OR_RETURN(auto b, cpu_->compile(g, d, o));
    b.format = "vfake-" + version;
    return b;
  }
  Result<backend::Executable*> init(const backend::Blob& b, const backend::CompileOptions& o,
                                    const backend::BackendDevice& d) override {
    if (b.format != "vfake-" + version) return Status(StatusCode::kBackendError, "vfake: blob of another version");
    backend::Blob c = b;
    c.format = "dlrt-cpu-onnx-v1";
    return cpu_->init(c, o, d);
  }
  Result<std::vector<Tensor>> execute(backend::Executable* e, std::span<const Tensor> in) override {
    return cpu_->execute(e, in);
  }
  void destroy(backend::Executable* e) override { cpu_->destroy(e); }

 private:
  std::shared_ptr<backend::Backend> cpu_ = cpu::make_cpu_backend();
};

std::shared_ptr<VersionedFake> vfake() {
  static std::shared_ptr<VersionedFake> f = [] {
    auto b = std::make_shared<VersionedFake>();
    EXPECT_TRUE(dlrt::global_backends().add(b).ok());
    return b;
  }();
  return f;
}

// y = Relu(x) + 1, with Add left to the CPU.
std::string write_relu_model(const fs::path& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto io = [](onnx::ValueInfoProto* vi, const char* name) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  };
  io(g->add_input(), "x");
  io(g->add_output(), "y");
  auto* one = g->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_float_data(1.0f);
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("x");
  relu->add_output("r");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("r");
  add->add_input("one");
  add->add_output("y");
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path.string();
}

TEST(CompiledModel, BlobUsedWhenCompatibleRecompiledWhenTheRuntimeChanged) {
  auto fake = vfake();
  fake->version = "1.0";
  fake->available = true;
  setenv("DLRT_CACHE", "0", 1);
  const fs::path dir = fs::temp_directory_path() / ("dlrt_compiled_model_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string src = write_relu_model(dir / "relu.onnx");
  const std::string out = (dir / "relu.compiled.onnx").string();
  CompileModelOptions o;
  o.device = "vfake:NPU";
  o.options["performance_hint"] = "LATENCY";
  auto r = compile_model_file(src, out, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->partitions.size(), 1u);
  EXPECT_TRUE(r->partitions[0].compiled);
  EXPECT_EQ(r->partitions[0].device, "vfake:NPU");
  EXPECT_EQ(r->plain_nodes, 1);

  std::map<std::string, Tensor> in = {{"x", Tensor::from_vector<float>({4}, {-1, 2, -3, 4})}};
  auto run = [&](const std::string& device, RunReport& rep) {
    SessionOptions so;
    so.device = device;
    auto s = Session::create(out, so);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    if (!s.ok()) return std::vector<float>();
    auto y = (*s)->run(in, &rep);
    EXPECT_TRUE(y.ok()) << y.status().to_string();
    if (!y.ok()) return std::vector<float>();
    return std::vector<float>((*y)[0].data<float>(), (*y)[0].data<float>() + 4);
  };
  const std::vector<float> want = {1, 3, 1, 5};
  int compiles = fake->compiles;
  RunReport rep;
  EXPECT_EQ(run("vfake:NPU", rep), want);
  ASSERT_EQ(rep.partitions.size(), 2u);
  EXPECT_EQ(rep.partitions[0].backend, "vfake");
  EXPECT_EQ(rep.partitions[0].device, "vfake:NPU");
  EXPECT_FALSE(rep.partitions[0].degraded);
  EXPECT_NE(rep.partitions[0].reason.find("compiled blob used"), std::string::npos) << rep.partitions[0].reason;
  EXPECT_EQ(rep.partitions[0].node_count, 1);
  EXPECT_EQ(fake->compiles, compiles) << "the blob must be used, not recompiled";

  fake->version = "2.0";
  EXPECT_EQ(run("vfake:NPU", rep), want);
  EXPECT_EQ(rep.partitions[0].backend, "vfake");
  EXPECT_NE(rep.partitions[0].reason.find("compiled with vfake 1.0, this machine has 2.0"), std::string::npos)
      << rep.partitions[0].reason;
  EXPECT_EQ(fake->compiles, compiles + 1);

  // A run that does not use the device runs the kept subgraph on the CPU and says so.
  EXPECT_EQ(run("cpu", rep), want);
  EXPECT_EQ(rep.partitions[0].backend, "cpu");
  EXPECT_TRUE(rep.partitions[0].degraded);
  EXPECT_NE(rep.partitions[0].reason.find("compiled for vfake:NPU, which this run does not use"), std::string::npos)
      << rep.partitions[0].reason;

  // Warm start: serves at once, the compiled partition still runs.
  fake->version = "1.0";
  SessionOptions so;
  so.device = "vfake:NPU";
  so.warm_start = true;
  auto s = Session::create(out, so);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (int i = 0; i < 3; ++i) {
    auto y = (*s)->run(in, &rep);
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(std::vector<float>((*y)[0].data<float>(), (*y)[0].data<float>() + 4), want);
  }
  s->reset();
  fake->available = false;
  unsetenv("DLRT_CACHE");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(CompiledModel, MalformedCompiledNodeIsAClearModelError) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_compiled_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* dom = m.add_opset_import();
  dom->set_domain("com.dlrt");
  dom->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (auto* vi : {g->add_input(), g->add_output()}) {
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  }
  g->mutable_input(0)->set_name("x");
  g->mutable_output(0)->set_name("y");
  auto* n = g->add_node();
  n->set_op_type("CompiledPartition");
  n->set_domain("com.dlrt");
  n->add_input("x");
  n->add_output("y");
  auto* a = n->add_attribute();
  a->set_name("format_version");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  std::string bytes;
  m.SerializeToString(&bytes);
  auto s = Session::create_from_bytes(bytes, {}, dir.string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
  EXPECT_NE(s.status().message().find("lacks attribute 'backend'"), std::string::npos) << s.status().to_string();
  a->set_i(99);
  m.SerializeToString(&bytes);
  s = Session::create_from_bytes(bytes, {}, dir.string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("format_version 99"), std::string::npos) << s.status().to_string();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace dlrt
