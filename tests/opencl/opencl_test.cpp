// OpenCL backend (issue 4), run for real on whatever OpenCL driver the machine
// has (PoCL in CI). Every test skips, saying why, when no OpenCL platform is
// installed. Program binaries are cached under the build folder, so only the
// first test process pays for PoCL's kernel build.
#include <gtest/gtest.h>

// Test tables use brace-initialised structs with trailing defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <onnx/onnx_pb.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/registry.h"
#include "backends/opencl/opencl_backend.h"
#include "core/npy.h"
#include "../backends/op_cases.h"
#include "../cpu/kernel_test_util.h"
#include "../onnx_proto_util.h"
#include "../tools/cli_test_util.h"
#include "dlrt/session.h"
#include "runtime/backends.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

// Keeps DLRT_CACHE_DIR on a cache in the build folder for the test's duration.
class OpenClTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("DLRT_CACHE_DIR");
    had_cache_ = old != nullptr;
    if (old) old_cache_ = old;
    setenv("DLRT_CACHE_DIR", (std::string(DLRT_BINARY_DIR) + "/opencl-test-cache").c_str(), 1);
    auto be = dlrt::global_backends().find("opencl");
    ASSERT_NE(be, nullptr) << "opencl is not registered";
    auto a = be->is_available();
    if (!a.available) GTEST_SKIP() << "no usable OpenCL here: " << a.reason << " (fix: " << a.fix << ")";
  }
  void TearDown() override {
    if (had_cache_) setenv("DLRT_CACHE_DIR", old_cache_.c_str(), 1);
    else unsetenv("DLRT_CACHE_DIR");
  }
  bool had_cache_ = false;
  std::string old_cache_;
};

using cpu::testing::random_floats;
using testing::ops::f;
using testing::ops::max_rel_error;
using testing::ops::numel;
using testing::ops::one_node_model;
using testing::ops::run_on;

// ---- loading and devices ----

TEST_F(OpenClTest, ListsDevicesWithMetadata) {
  auto be = dlrt::global_backends().find("opencl");
  auto a = be->is_available();
  EXPECT_FALSE(a.library_path.empty());
  EXPECT_NE(a.version.find("OpenCL"), std::string::npos) << a.version;
  auto devs = be->devices({});
  ASSERT_FALSE(devs.empty());
  for (const auto& d : devs) {
    EXPECT_EQ(d.backend, "opencl");
    EXPECT_FALSE(d.is_virtual);
    for (const char* k : {"device_name", "vendor", "compute_units", "memory_bytes", "opencl_version", "driver_version"})
      EXPECT_TRUE(d.metadata.count(k)) << "missing metadata " << k;
    EXPECT_EQ(d.metadata.at("discovered_by"), "opencl");
  }
  EXPECT_EQ(devs[0].name, "0");
}

// An explicit DLRT_OPENCL_LIB that does not load makes the backend unavailable
// (never a silent other libOpenCL), with the paths tried and the fix; fixing
// the variable in-process and refreshing recovers.
TEST_F(OpenClTest, MissingLibraryOverrideIsUnavailableAndRetryRecovers) {
  const char* old = std::getenv("DLRT_OPENCL_LIB");
  std::string saved = old ? old : "";
  setenv("DLRT_OPENCL_LIB", "/nonexistent/dlrt-test/libOpenCL.so.1", 1);
  auto be = opencl::make_opencl_backend();
  auto a = be->is_available();
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("DLRT_OPENCL_LIB"), std::string::npos) << a.reason;
  EXPECT_NE(a.fix.find("DLRT_OPENCL_LIB"), std::string::npos) << a.fix;
  bool tried_override = false;
  for (const auto& t : a.tried) tried_override = tried_override || t.find("/nonexistent/dlrt-test") != std::string::npos;
  EXPECT_TRUE(tried_override);
  EXPECT_TRUE(be->devices({}).empty());
  if (old) setenv("DLRT_OPENCL_LIB", saved.c_str(), 1);
  else unsetenv("DLRT_OPENCL_LIB");
  EXPECT_TRUE(be->is_available(/*refresh=*/true).available);
}

// Every kernel against the CPU backend: Differential.EveryBackendMatchesCpu
// (tests/backends/differential_test.cpp) runs tests/backends/op_cases.cpp here.

// Half-precision graphs run in float32 on the device with Casts at the
// borders: every float16 bit pattern survives x * 1 exactly (NaN as NaN), and
// float32 -> float16 / bfloat16 rounds as the CPU does (to nearest even,
// subnormals, overflow to infinity).
std::string half_model(bool cast_from_float, int half_type) {
  using testing::add_onnx_node;
  using testing::add_value_info;
  using testing::start_model;
  onnx::ModelProto m;
  auto* g = start_model(m, 17, "half");
  if (cast_from_float) {
    add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {-1});
    auto* n = add_onnx_node(g, "Cast", {"x"}, "y");
    auto* a = n->add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(half_type);
  } else {
    add_value_info(g->add_input(), "x", half_type, {-1});
    auto* one = g->add_initializer();
    one->set_name("one");
    one->set_data_type(half_type);
    one->add_int32_data(half_type == onnx::TensorProto::FLOAT16 ? 0x3C00 : 0x3F80);
    add_onnx_node(g, "Mul", {"x", "one"}, "y");
  }
  add_value_info(g->add_output(), "y", half_type, {-1});
  return m.SerializeAsString();
}

TEST_F(OpenClTest, HalfPrecisionBordersConvertExactly) {
  // Every float16 / bfloat16 bit pattern through x * 1.
  for (int type : {int(onnx::TensorProto::FLOAT16), int(onnx::TensorProto::BFLOAT16)}) {
    SCOPED_TRACE(type == onnx::TensorProto::FLOAT16 ? "float16" : "bfloat16");
    DType dt = type == onnx::TensorProto::FLOAT16 ? DType::kFloat16 : DType::kBFloat16;
    auto x = Tensor::allocate(dt, {65536});
    ASSERT_TRUE(x.ok());
    for (int i = 0; i < 65536; ++i) static_cast<uint16_t*>(x->raw_data())[i] = static_cast<uint16_t>(i);
    RunReport report;
    auto y = run_on(half_model(false, type), {{"x", *x}}, "opencl", &report);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    ASSERT_FALSE(report.partitions.empty());
    EXPECT_EQ(report.partitions[0].backend, "opencl");
    ASSERT_EQ((*y)[0].dtype(), dt);
    const uint16_t* got = static_cast<const uint16_t*>((*y)[0].raw_data());
    int bad = 0;
    for (int i = 0; i < 65536; ++i) {
      bool nan = type == onnx::TensorProto::FLOAT16 ? ((i & 0x7c00) == 0x7c00 && (i & 0x3ff))
                                                     : ((i & 0x7f80) == 0x7f80 && (i & 0x7f));
      bool got_nan = type == onnx::TensorProto::FLOAT16 ? ((got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff))
                                                         : ((got[i] & 0x7f80) == 0x7f80 && (got[i] & 0x7f));
      if (nan ? !got_nan : got[i] != i) {
        if (++bad <= 5) ADD_FAILURE() << "bits " << i << " came back as " << got[i];
      }
    }
    EXPECT_EQ(bad, 0);
  }
  // float32 -> half: ties, both sides of the subnormal and overflow limits, NaN, infinities, random values.
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f, 6.1035156e-05f,
                          6.0975552e-05f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 8.9406967e-08f, 1e-10f,
                          INFINITY, -INFINITY, NAN, 1.0009765625f, 1.00048828125f, 1.00146484375f, 3.0517578e-05f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  for (int i = 0; i < 2000; ++i) v.push_back(std::ldexp(u(rng), static_cast<int>(rng() % 60) - 30));
  auto x = Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  for (int type : {int(onnx::TensorProto::FLOAT16), int(onnx::TensorProto::BFLOAT16)}) {
    SCOPED_TRACE(type == onnx::TensorProto::FLOAT16 ? "to float16" : "to bfloat16");
    RunReport report;
    auto cl = run_on(half_model(true, type), {{"x", x}}, "opencl", &report);
    auto cpu = run_on(half_model(true, type), {{"x", x}}, "cpu", nullptr);
    ASSERT_TRUE(cl.ok()) << cl.status().to_string();
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    ASSERT_FALSE(report.partitions.empty());
    EXPECT_EQ(report.partitions[0].backend, "opencl");
    const uint16_t* a = static_cast<const uint16_t*>((*cl)[0].raw_data());
    const uint16_t* b = static_cast<const uint16_t*>((*cpu)[0].raw_data());
    int bad = 0;
    for (size_t i = 0; i < v.size(); ++i)
      if (a[i] != b[i] && !(std::isnan(v[i]))) {
        if (++bad <= 5) ADD_FAILURE() << v[i] << ": device " << a[i] << ", cpu " << b[i];
      }
    EXPECT_EQ(bad, 0);
  }
}

// A two-layer MLP with fused bias/activation, run twice with different batch
// sizes (two plans) and again with the first (plan reused).
TEST_F(OpenClTest, FusedChainsAndPlanReuse) {
  std::mt19937 rng(7);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  auto* vi = g->add_input();
  vi->set_name("x");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("batch");
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(19);
  auto add_w = [&](const std::string& name, Shape s) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : s) t->add_dims(d);
    for (float v : random_floats(numel(s), rng, -0.5f, 0.5f)) t->add_float_data(v);
  };
  add_w("w1", {19, 33});
  add_w("b1", {33});
  add_w("w2", {33, 7});
  auto node = [&](const std::string& op, std::vector<std::string> in, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("MatMul", {"x", "w1"}, "h");
  node("Add", {"h", "b1"}, "hb");
  node("Relu", {"hb"}, "r");
  node("MatMul", {"r", "w2"}, "o");
  node("Sigmoid", {"o"}, "y");
  auto* vy = g->add_output();
  vy->set_name("y");
  vy->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  vy->mutable_type()->mutable_tensor_type()->mutable_shape();
  std::string model = m.SerializeAsString();
  SessionOptions o;
  o.device = "opencl";
  o.strict = true;
  auto cl = Session::create_from_bytes(model, o);
  ASSERT_TRUE(cl.ok()) << cl.status().to_string();
  o.device = "cpu";
  o.strict = false;
  auto cpu = Session::create_from_bytes(model, o);
  ASSERT_TRUE(cpu.ok());
  for (int64_t batch : {3, 8, 3}) {
    std::map<std::string, Tensor> feeds{{"x", Tensor::from_vector<float>({batch, 19}, random_floats(batch * 19, rng, -2.0f, 2.0f))}};
    auto a = (*cl)->run(feeds);
    auto b = (*cpu)->run(feeds);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    ASSERT_TRUE(b.ok());
    EXPECT_LE(max_rel_error((*a)[0], (*b)[0]), 1e-4) << "batch " << batch;
  }
}

// A node OpenCL lacks (CumSum) splits the graph: opencl, cpu, opencl; the
// report names both devices and the result matches the CPU.
// x -> Relu -> OP(r, initializers...) -> Sigmoid -> y: a node OpenCL runs on each side of `op`.
// `x_dims` empty: x has no shape at all (unknown rank). `add_initializers` adds OP's other inputs.
onnx::ModelProto relu_op_sigmoid(const std::string& op, const std::vector<int64_t>& x_dims,
                                 const std::vector<std::string>& initializers,
                                 const std::function<void(onnx::GraphProto*)>& add_initializers) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("relu_" + op + "_sigmoid");
  auto* vi = g->add_input();
  vi->set_name("x");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x_dims) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  add_initializers(g);
  auto node = [&](const std::string& type, std::vector<std::string> in, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(out);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  std::vector<std::string> op_inputs = {"r"};
  op_inputs.insert(op_inputs.end(), initializers.begin(), initializers.end());
  node("Relu", {"x"}, "r");
  node(op, op_inputs, "c");
  node("Sigmoid", {"c"}, "y");
  auto* vy = g->add_output();
  vy->set_name("y");
  vy->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

TEST_F(OpenClTest, MixedPartitionsReportBothDevices) {
  std::mt19937 rng(3);
  onnx::ModelProto m = relu_op_sigmoid("CumSum", {4, 6}, {"axis"}, [](onnx::GraphProto* g) {
    auto* ax = g->add_initializer();
    ax->set_name("axis");
    ax->set_data_type(onnx::TensorProto::INT64);
    ax->add_int64_data(1);
  });
  std::map<std::string, Tensor> feeds{{"x", Tensor::from_vector<float>({4, 6}, random_floats(24, rng, -2.0f, 2.0f))}};
  RunReport report;
  auto a = run_on(m.SerializeAsString(), feeds, "opencl", &report);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  auto b = run_on(m.SerializeAsString(), feeds, "cpu", nullptr);
  ASSERT_TRUE(b.ok());
  EXPECT_LE(max_rel_error((*a)[0], (*b)[0]), 1e-4);
  std::set<std::string> backends;
  for (const auto& p : report.partitions) backends.insert(p.backend);
  EXPECT_TRUE(backends.count("opencl") && backends.count("cpu")) << report.partitions.size() << " partitions";
}

// Placement claims only what the kernels run: a 1-D Conv (the kernels are
// 2-D only) and a Conv whose input has no known rank stay on the cpu, the
// elementwise nodes around them go to OpenCL, and strict mode does not fail.
TEST_F(OpenClTest, PlacementLeavesWhatTheKernelsCannotRunOnCpu) {
  std::mt19937 rng(5);
  const std::vector<float> weights = random_floats(8 * 4 * 3, rng, -0.5f, 0.5f);
  for (bool known_rank : {true, false}) {
    // Without dims, x has no shape at all: its rank is unknown.
    std::vector<int64_t> x_dims = known_rank ? std::vector<int64_t>{2, 4, 16} : std::vector<int64_t>{};
    onnx::ModelProto m = relu_op_sigmoid("Conv", x_dims, {"w"}, [&](onnx::GraphProto* g) {
      auto* wt = g->add_initializer();
      wt->set_name("w");
      wt->set_data_type(onnx::TensorProto::FLOAT);
      for (int d : {8, 4, 3}) wt->add_dims(d);
      for (float v : weights) wt->add_float_data(v);
    });
    std::map<std::string, Tensor> feeds{{"x", Tensor::from_vector<float>({2, 4, 16}, random_floats(128, rng, -2.0f, 2.0f))}};
    RunReport report;
    auto a = run_on(m.SerializeAsString(), feeds, "opencl", &report);
    ASSERT_TRUE(a.ok()) << (known_rank ? "rank 3: " : "unknown rank: ") << a.status().to_string();
    auto b = run_on(m.SerializeAsString(), feeds, "cpu", nullptr);
    ASSERT_TRUE(b.ok());
    EXPECT_LE(max_rel_error((*a)[0], (*b)[0]), 1e-4);
    int conv_on_cpu = 0;
    std::set<std::string> backends;
    for (const auto& p : report.partitions) {
      backends.insert(p.backend);
      EXPECT_FALSE(p.degraded) << p.reason;
      if (p.backend == "cpu") conv_on_cpu += p.node_count;
    }
    EXPECT_EQ(conv_on_cpu, 1) << "only the Conv should stay on the cpu (" << (known_rank ? "rank 3)" : "unknown rank)");
    EXPECT_TRUE(backends.count("opencl")) << "the elementwise nodes should run on OpenCL";
  }
}

// ---- the CLI: fallback with a missing library, strict-mode failure ----

// Runs `ENV dlrt ARGS` (stderr to /dev/null unless ARGS redirects it); stdout into *out.
int run_cli(const std::string& args, std::string* out, const std::string& env = "") {
  const testing::CommandResult r =
      testing::run_command((env.empty() ? "" : "env " + env + " ") + testing::dlrt_binary() + " " + args +
                           (args.find("2>&1") == std::string::npos ? " 2>/dev/null" : ""));
  *out += r.output;
  return r.signaled ? -1 : r.exit_code;
}

// The compatibility check (backend/canary.h) of an OpenCL driver, run by hand: the built-in
// model on OpenCL matches the CPU backend. The driver CI tests with is not checked on load.
TEST_F(OpenClTest, CanaryCommandPassesAndTheTestedDriverIsNotChecked) {
  std::string out;
  ASSERT_EQ(run_cli("canary opencl", &out), 0) << out;
  auto j = nlohmann::json::parse(out.substr(std::min(out.rfind("{\"canary\""), out.size())), nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_TRUE(j["ok"].get<bool>()) << out;
  EXPECT_NE(j["detail"].get<std::string>().find("on opencl"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(run_cli("devices --json", &out), 0) << out;
  auto d = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(d.is_object()) << out;
  for (const auto& b : d["backends"])
    if (b["name"] == "opencl") {
      const std::string driver = b.value("version", "");
      if (driver.find("PoCL 3.1") != std::string::npos) EXPECT_EQ(b.value("compatibility", ""), "tested driver") << b.dump();
      else EXPECT_NE(b.value("compatibility", "").find("compatibility check"), std::string::npos) << b.dump();
    }
}

TEST_F(OpenClTest, CliFallsBackWhenLibraryMissingAndStrictExits4) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "opencl-test-tmp";
  fs::create_directories(dir);
  std::mt19937 rng(5);
  std::map<std::string, Tensor> feeds;
  std::string model = one_node_model({"relu", "Relu", {f("x", {2, 3})}}, rng, feeds);
  fs::path path = dir / "relu.onnx";
  std::ofstream(path, std::ios::binary) << model;
  std::string env = "env -u DLRT_STRICT DLRT_OPENCL_LIB=/nonexistent/dlrt-test/libOpenCL.so.1 ";
  std::string out;
  int rc = run_cli("run " + path.string() + " --device opencl --json", &out);  // sanity: works normally
  ASSERT_EQ(rc, 0) << out;
  out.clear();
  rc = std::system(("true; " + env + std::string(DLRT_BINARY_DIR) + "/dlrt run " + path.string() +
                    " --device opencl --json > " + (dir / "fallback.json").string() + " 2>/dev/null").c_str());
  ASSERT_EQ(WEXITSTATUS(rc), 0);
  std::ifstream jf(dir / "fallback.json");
  auto j = nlohmann::json::parse(jf, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  std::string dump = j.dump();
  EXPECT_NE(dump.find("\"degraded\":true"), std::string::npos) << dump;
  EXPECT_NE(dump.find("DLRT_OPENCL_LIB"), std::string::npos) << dump;
  rc = std::system((env + "DLRT_STRICT=1 " + std::string(DLRT_BINARY_DIR) + "/dlrt run " + path.string() +
                    " --device opencl > /dev/null 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 4);
}

// The program cache: a process with an empty cache builds the program and stores its binary;
// the next process loads it (the info log says which), and `dlrt bench` reports both creates.
TEST_F(OpenClTest, ProgramBinaryIsCachedAcrossProcesses) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "opencl-test-tmp";
  fs::path cache = dir / "program-cache";
  fs::remove_all(cache);
  fs::create_directories(dir);
  std::mt19937 rng(7);
  std::map<std::string, Tensor> feeds;
  std::string model = one_node_model({"relu", "Relu", {f("x", {2, 3})}}, rng, feeds);
  fs::path path = dir / "relu_cache.onnx";
  std::ofstream(path, std::ios::binary) << model;
  auto run = [&]() {
    std::string out;
    int rc = run_cli("bench " + path.string() + " --device opencl --strict --warmup 0 --iterations 1 --json 2>&1", &out,
                     "DLRT_CACHE_DIR=" + cache.string() + " DLRT_LOG_LEVEL=info");
    EXPECT_EQ(rc, 0) << out;
    return out;
  };
  std::string first = run();
  EXPECT_NE(first.find("opencl: program for"), std::string::npos) << first;
  EXPECT_NE(first.find("built in"), std::string::npos) << first;
  EXPECT_EQ(first.find("loaded from cache"), std::string::npos) << first;
  EXPECT_FALSE(fs::is_empty(cache)) << "no program binary was cached";
  std::string second = run();
  EXPECT_NE(second.find("loaded from cache"), std::string::npos) << second;
  for (const std::string* out : {&first, &second}) {
    auto j = nlohmann::json::parse(out->substr(std::min(out->find('{'), out->size())), nullptr, false);
    ASSERT_TRUE(j.is_object()) << *out;
    EXPECT_GT(j["session_create_ms"].get<double>(), 0) << *out;
    EXPECT_GT(j["session_create_warm_ms"].get<double>(), 0) << *out;
  }
  fs::remove_all(cache);
}

}  // namespace

// ---- the model zoo (ctest -R ^Zoo; skipped unless DLRT_ZOO_DIR is set) ----

TEST(Zoo, OpenClMatchesCpu) {
  const char* root = std::getenv("DLRT_ZOO_DIR");
  if (!root || !*root) GTEST_SKIP() << "DLRT_ZOO_DIR is not set";
  auto be = dlrt::global_backends().find("opencl");
  if (!be || !be->is_available().available) GTEST_SKIP() << "no usable OpenCL here";
  if (!std::getenv("DLRT_CACHE_DIR")) setenv("DLRT_CACHE_DIR", (std::string(DLRT_BINARY_DIR) + "/opencl-test-cache").c_str(), 1);
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ".onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  ASSERT_FALSE(models.empty()) << "no .onnx in " << root;
  for (const auto& onnx_path : models) {
    // The case with the smallest inputs keeps PoCL's time down.
    fs::path best;
    uintmax_t best_size = UINTMAX_MAX;
    for (const auto& d : fs::directory_iterator(onnx_path.parent_path() / onnx_path.stem())) {
      if (!d.is_directory()) continue;
      uintmax_t total = 0;
      for (const auto& e : fs::directory_iterator(d.path()))
        if (e.path().extension() == ".npy") total += fs::file_size(e.path());
      if (total < best_size) best_size = total, best = d.path();
    }
    ASSERT_FALSE(best.empty()) << "no case for " << onnx_path;
    std::map<std::string, Tensor> feeds;
    for (const auto& e : fs::directory_iterator(best))
      if (e.path().extension() == ".npy") {
        auto t = read_npy_file(e.path().string());
        ASSERT_TRUE(t.ok()) << t.status().to_string();
        feeds[e.path().stem().string()] = *t;
      }
    SessionOptions o;
    o.device = "opencl";
    o.strict = true;
    auto cl = Session::create(onnx_path.string(), o);
    ASSERT_TRUE(cl.ok()) << cl.status().to_string();
    RunReport report;
    auto a = (*cl)->run(feeds, &report);
    ASSERT_TRUE(a.ok()) << onnx_path << ": " << a.status().to_string();
    o.device = "cpu";
    o.strict = false;
    auto cpu = Session::create(onnx_path.string(), o);
    ASSERT_TRUE(cpu.ok());
    auto b = (*cpu)->run(feeds);
    ASSERT_TRUE(b.ok());
    ASSERT_EQ(a->size(), b->size());
    int on_cl = 0;
    for (const auto& p : report.partitions) on_cl += p.backend == "opencl" ? p.node_count : 0;
    for (size_t i = 0; i < b->size(); ++i) {
      double err = max_rel_error((*a)[i], (*b)[i]);
      std::printf("zoo: opencl %s/%s output %zu max rel err %.2e (%d nodes on opencl)\n", onnx_path.stem().c_str(),
                  best.filename().c_str(), i, err, on_cl);
      EXPECT_LE(err, 1e-3) << onnx_path.stem();
    }
    EXPECT_GT(on_cl, 0);
  }
}

}  // namespace dlrt
