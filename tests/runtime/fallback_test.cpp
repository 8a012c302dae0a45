// Placement, fallback, strict mode, probing and warm start, driven by an
// in-process fake backend with switches for each failure. (The same paths
// through a dlopen'ed plugin are covered in tests/backend/.)
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <atomic>
#include <set>
#include <thread>

#include "backend/registry.h"
#include "backends/cpu/cpu_backend.h"
#include "dlrt/session.h"
#include "runtime/placement.h"
#include "runtime/backends.h"

namespace dlrt {
namespace {

// Computes through the CPU backend; every failure is a switch.
class FakeBackend final : public backend::Backend {
 public:
  explicit FakeBackend(std::string name, std::set<std::string> ops) : name_(std::move(name)), ops_(std::move(ops)) {}

  std::atomic<bool> available{true};
  std::atomic<bool> init_fails{false};
  std::atomic<int> fail_execute_from{0};  // 1-based call number from which execute fails; 0 = never
  std::atomic<int> compile_ms{0};
  std::atomic<float> perturb{0};  // added to every output element
  std::atomic<int> executes{0};
  std::vector<DeviceType> device_types{DeviceType::kNpu};  // devices "0", "1", ... in this order

  std::string name() const override { return name_; }
  backend::Availability is_available(bool) override {
    backend::Availability a;
    a.available = available.load();
    if (!a.available) {
      a.reason = "libfake.so not found";
      a.fix = "install fake";
    }
    return a;
  }
  std::vector<backend::BackendDevice> devices(const std::vector<Device>&) override {
    std::vector<backend::BackendDevice> out;
    for (size_t i = 0; i < device_types.size(); ++i) {
      backend::BackendDevice d;
      d.backend = name_;
      d.name = std::to_string(i);
      d.type = device_types[i];
      out.push_back(d);
    }
    return out;
  }
  std::vector<backend::NodeSupport> supports(const ir::Graph& g, const backend::BackendDevice&) override {
    std::vector<backend::NodeSupport> r;
    for (const auto& n : g.nodes) r.push_back({ops_.count(n.op_type) > 0, "fake takes only some ops"});
    return r;
  }
  Result<backend::Blob> compile(const ir::Graph& g, const backend::BackendDevice& d,
                                const backend::CompileOptions& o) override {
    if (compile_ms.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(compile_ms.load()));
    return cpu_->compile(g, d, o);
  }
  Result<backend::Executable*> init(const backend::Blob& b, const backend::CompileOptions& o,
                                    const backend::BackendDevice& d) override {
    if (init_fails.load()) return Status(StatusCode::kBackendError, "fake init refused");
    return cpu_->init(b, o, d);
  }
  Result<std::vector<Tensor>> execute(backend::Executable* e, std::span<const Tensor> in) override {
    int n = ++executes;
    int from = fail_execute_from.load();
    if (from > 0 && n >= from) return Status(StatusCode::kBackendError, "fake device lost");
    DLRT_ASSIGN_OR_RETURN(auto out, cpu_->execute(e, in));
    if (float p = perturb.load(); p != 0)
      for (auto& t : out)
        for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] += p;
    return out;
  }
  void destroy(backend::Executable* e) override { cpu_->destroy(e); }

 private:
  std::string name_;
  std::set<std::string> ops_;
  std::shared_ptr<backend::Backend> cpu_ = cpu::make_cpu_backend();
};

// Fakes stay in the process-wide registry; each is made unavailable when its
// test ends so later tests (which may ask for `auto`) never pick it up.
std::vector<std::shared_ptr<FakeBackend>>& live_fakes() {
  static std::vector<std::shared_ptr<FakeBackend>> fakes;
  return fakes;
}

std::shared_ptr<FakeBackend> register_fake(const std::string& name, std::set<std::string> ops = {"Relu"}) {
  auto b = std::make_shared<FakeBackend>(name, std::move(ops));
  EXPECT_TRUE(dlrt::global_backends().add(b).ok());
  live_fakes().push_back(b);
  return b;
}

class Fallback : public ::testing::Test {
 protected:
  void SetUp() override { setenv("DLRT_CACHE", "0", 1); }  // every compile really compiles
  void TearDown() override {
    unsetenv("DLRT_CACHE");
    for (auto& f : live_fakes()) f->available = false;
    live_fakes().clear();
  }
};

// y = Relu(x + 1) * 2: Add and Mul stay on CPU, Relu can go to the fake.
std::string model_bytes() {
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
  for (auto [name, v] : {std::pair{"one", 1.0f}, std::pair{"two", 2.0f}}) {
    auto* c = g->add_initializer();
    c->set_name(name);
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(v);
  }
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(std::string(op) + "_node");
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Add", {"x", "one"}, "a");
  node("Relu", {"a"}, "r");
  node("Mul", {"r", "two"}, "y");
  return m.SerializeAsString();
}

Tensor input() { return Tensor::from_vector<float>({4}, {-3, -1, 0, 2}); }
const std::vector<float> kWant = {0, 0, 2, 6};

void expect_output(const Result<std::vector<Tensor>>& out) {
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], kWant[i]);
}

std::unique_ptr<Session> session_on(const std::string& device, bool strict = false, bool warm = false) {
  SessionOptions o;
  o.device = device;
  o.strict = strict;
  o.warm_start = warm;
  o.threads = 1;
  auto s = Session::create_from_bytes(model_bytes(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST_F(Fallback, PartitionsAroundUnsupportedNodes) {
  auto fake = register_fake("fake_part");
  auto s = session_on("fake_part");
  ASSERT_TRUE(s);
  RunReport r;
  expect_output(s->run({{"x", input()}}, &r));
  ASSERT_EQ(r.partitions.size(), 3u);
  EXPECT_EQ(r.partitions[0].backend, "cpu");
  EXPECT_EQ(r.partitions[1].backend, "fake_part");
  EXPECT_EQ(r.partitions[1].device, "fake_part:0");
  EXPECT_FALSE(r.partitions[1].degraded);
  EXPECT_EQ(r.partitions[2].backend, "cpu");
  EXPECT_NE(r.partitions[2].reason.find("fake takes only some ops"), std::string::npos) << r.partitions[2].reason;
  EXPECT_EQ(fake->executes.load(), 1);
}

TEST_F(Fallback, MissingBackendRunsOnCpuAndSaysWhy) {
  auto fake = register_fake("fake_missing");
  fake->available = false;
  auto s = session_on("fake_missing");
  ASSERT_TRUE(s);
  RunReport r;
  expect_output(s->run({{"x", input()}}, &r));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].backend, "cpu");
  EXPECT_TRUE(r.partitions[0].degraded);
  EXPECT_NE(r.partitions[0].reason.find("libfake.so not found"), std::string::npos) << r.partitions[0].reason;

  SessionOptions o;
  o.device = "fake_missing";
  o.strict = true;
  auto strict = Session::create_from_bytes(model_bytes(), o);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_NE(strict.status().message().find("install fake"), std::string::npos) << strict.status().message();
}

// `--device npu` with no usable backend: the strict error names each missing
// runtime's own fix (which library to install, which variable to set).
TEST_F(Fallback, StrictDeviceTypeErrorNamesEachBackendsFix) {
  auto fake = register_fake("fake_npu_missing");
  fake->available = false;
  SessionOptions o;
  o.device = "npu";
  o.strict = true;
  auto strict = Session::create_from_bytes(model_bytes(), o);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kDeviceUnavailable);
  const std::string& m = strict.status().message();
  EXPECT_NE(m.find("libfake.so not found"), std::string::npos) << m;
  EXPECT_NE(m.find("fake_npu_missing: install fake"), std::string::npos) << m;
  EXPECT_NE(m.find("--device cpu"), std::string::npos) << m;
}

TEST_F(Fallback, InitFailureDegradesOrFailsInStrictMode) {
  auto fake = register_fake("fake_init");
  fake->init_fails = true;
  auto s = session_on("fake_init");
  ASSERT_TRUE(s);
  RunReport r;
  expect_output(s->run({{"x", input()}}, &r));
  ASSERT_EQ(r.partitions.size(), 3u);
  EXPECT_EQ(r.partitions[1].backend, "cpu");
  EXPECT_TRUE(r.partitions[1].degraded);
  EXPECT_NE(r.partitions[1].reason.find("fake init refused"), std::string::npos) << r.partitions[1].reason;
  SessionOptions o;
  o.device = "fake_init";
  o.strict = true;
  auto strict = Session::create_from_bytes(model_bytes(), o);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("fake init refused"), std::string::npos);
}

TEST_F(Fallback, ExecuteFailureMidRunFallsBackThenProbesBack) {
  auto fake = register_fake("fake_exec");
  fake->fail_execute_from = 3;
  auto s = session_on("fake_exec");
  ASSERT_TRUE(s);
  for (int i = 1; i <= 4; ++i) {
    RunReport r;
    expect_output(s->run({{"x", input()}}, &r));
    ASSERT_EQ(r.partitions.size(), 3u);
    if (i < 3) {
      EXPECT_EQ(r.partitions[1].backend, "fake_exec") << "run " << i;
    } else {
      EXPECT_EQ(r.partitions[1].backend, "cpu") << "run " << i;
      EXPECT_TRUE(r.partitions[1].degraded);
      EXPECT_NE(r.partitions[1].reason.find("fake device lost"), std::string::npos);
    }
  }
  // The device comes back: after the backoff a probe returns the partition to it.
  fake->fail_execute_from = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  RunReport r;
  expect_output(s->run({{"x", input()}}, &r));
  EXPECT_EQ(r.partitions[1].backend, "fake_exec") << r.partitions[1].reason;
  EXPECT_FALSE(r.partitions[1].degraded);
}

TEST_F(Fallback, StrictExecuteFailureIsAnError) {
  auto fake = register_fake("fake_strict_exec");
  fake->fail_execute_from = 1;
  auto s = session_on("fake_strict_exec", /*strict=*/true);
  ASSERT_TRUE(s);
  auto out = s->run({{"x", input()}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kBackendError);
  EXPECT_NE(out.status().message().find("fake device lost"), std::string::npos);
}

TEST_F(Fallback, SixteenThreadsWhileTheBackendDegrades) {
  auto fake = register_fake("fake_threads");
  fake->fail_execute_from = 50;
  auto s = session_on("fake_threads");
  ASSERT_TRUE(s);
  std::atomic<int> wrong{0}, errors{0}, on_cpu{0}, on_fake{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        RunReport r;
        auto out = s->run({{"x", input()}}, &r);
        if (!out.ok()) {
          ++errors;
          continue;
        }
        for (int k = 0; k < 4; ++k)
          if ((*out)[0].data<float>()[k] != kWant[k]) ++wrong;
        if (r.partitions.size() == 3 && r.partitions[1].backend == "cpu" && r.partitions[1].degraded) ++on_cpu;
        if (r.partitions.size() == 3 && r.partitions[1].backend == "fake_threads") ++on_fake;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(on_cpu.load() + on_fake.load(), 320);
  EXPECT_GT(on_cpu.load(), 0);
  EXPECT_GE(on_fake.load(), 49);
}

TEST_F(Fallback, WarmStartServesOnCpuThenSwitches) {
  auto fake = register_fake("fake_warm");
  fake->compile_ms = 600;
  auto s = session_on("fake_warm", false, /*warm=*/true);
  ASSERT_TRUE(s);
  RunReport r;
  expect_output(s->run({{"x", input()}}, &r));
  EXPECT_EQ(r.partitions[1].backend, "cpu");
  EXPECT_NE(r.partitions[1].reason.find("warm start"), std::string::npos) << r.partitions[1].reason;
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  expect_output(s->run({{"x", input()}}, &r));  // verifies against the CPU, answers with the CPU's result
  expect_output(s->run({{"x", input()}}, &r));
  EXPECT_EQ(r.partitions[1].backend, "fake_warm") << r.partitions[1].reason;
}

TEST_F(Fallback, WarmStartRefusesAnAcceleratorThatDisagrees) {
  auto fake = register_fake("fake_wrong");
  fake->compile_ms = 100;
  fake->perturb = 0.5f;
  auto s = session_on("fake_wrong", false, /*warm=*/true);
  ASSERT_TRUE(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  RunReport r;
  for (int i = 0; i < 3; ++i) expect_output(s->run({{"x", input()}}, &r));
  EXPECT_EQ(r.partitions[1].backend, "cpu");
  EXPECT_NE(r.partitions[1].reason.find("differs from cpu"), std::string::npos) << r.partitions[1].reason;
}

TEST_F(Fallback, DuplicateBackendNameIsAnError) {
  register_fake("fake_dup");
  auto again = std::make_shared<FakeBackend>("fake_dup", std::set<std::string>{});
  EXPECT_FALSE(dlrt::global_backends().add(again).ok());
}

// A bare backend name takes that backend's accelerators before its CPU devices, whatever
// order the backend lists them in (PoCL's CPU device is listed before an NVIDIA GPU).
TEST_F(Fallback, BareBackendNamePrefersItsGpuOverItsCpuDevice) {
  auto fake = register_fake("fakecl");
  fake->device_types = {DeviceType::kCpu, DeviceType::kGpu};
  auto spec = parse_device_spec("fakecl");
  ASSERT_TRUE(spec.ok());
  Resolution r = resolve_devices(*spec, dlrt::global_backends(), {});
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].device.type, DeviceType::kGpu);
  EXPECT_EQ(r.candidates[0].device.name, "1");
  EXPECT_EQ(r.candidates[1].device.type, DeviceType::kCpu);
  // Naming the device still gets exactly that one.
  auto one = parse_device_spec("fakecl:0");
  ASSERT_TRUE(one.ok());
  Resolution r0 = resolve_devices(*one, dlrt::global_backends(), {});
  ASSERT_EQ(r0.candidates.size(), 1u);
  EXPECT_EQ(r0.candidates[0].device.type, DeviceType::kCpu);
}

// `--device gpu` where the only devices are of another type (OpenCL on PoCL is
// a CPU device): the reason names each device passed over and why.
TEST_F(Fallback, GpuRequestNamesTheDevicesItPassedOver) {
  auto fake = register_fake("fakepocl");
  fake->device_types = {DeviceType::kCpu};
  auto spec = parse_device_spec("gpu");
  ASSERT_TRUE(spec.ok());
  Resolution r = resolve_devices(*spec, dlrt::global_backends(), {});
  if (!r.candidates.empty()) GTEST_SKIP() << "this machine has a usable gpu: " << r.candidates[0].device.spec();
  ASSERT_EQ(r.unavailable.size(), 1u);
  const std::string& why = r.unavailable[0].reason;
  EXPECT_NE(why.find("no gpu was found"), std::string::npos) << why;
  EXPECT_NE(why.find("passed over"), std::string::npos) << why;
  EXPECT_NE(why.find("fakepocl:0 (a cpu device)"), std::string::npos) << why;
}

}  // namespace
}  // namespace dlrt
