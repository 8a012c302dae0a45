// PluginBackend over the test plugins (tests/backends/test_plugin.cpp): every Backend method
// over `good`, and each failure path over the broken ones.
#include "backend/plugin_backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <thread>

#include "plugin_test_util.h"

namespace dlrt::backend {
namespace {

using testing::plugin_dir;
using testing::plugin_path;
using testing::ScopedEnv;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ir::TypeInfo f32(std::vector<int64_t> dims) {
  ir::TypeInfo t;
  t.dtype = DType::kFloat32;
  std::vector<ir::Dim> d;
  for (auto x : dims) d.push_back({x, ""});
  t.shape = d;
  return t;
}

ir::Node node(const std::string& op, std::vector<ir::ValueId> in, std::vector<ir::ValueId> out) {
  ir::Node n;
  n.name = op + "_" + std::to_string(out[0]);
  n.op_type = op;
  n.opset = 17;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// Z = Relu(X @ W + B)^2, Y = Relu(X @ W + B); W and B are constants. Outputs (Z, Y).
ir::Graph make_graph() {
  ir::Graph g;
  g.name = "partition";
  g.opsets[""] = 17;
  ir::ValueId x = g.add_value("X", f32({2, 3}));
  ir::ValueId w = g.add_value("W", f32({3, 2}));
  g.values[w].constant = Tensor::from_vector<float>({3, 2}, {1, 0, 0, 1, 1, -1});
  ir::ValueId b = g.add_value("B", f32({2}));
  g.values[b].constant = Tensor::from_vector<float>({2}, {0.5f, -0.5f});
  ir::ValueId m = g.add_value("M", f32({2, 2}));
  ir::ValueId a = g.add_value("A", f32({2, 2}));
  ir::ValueId y = g.add_value("Y", f32({2, 2}));
  ir::ValueId z = g.add_value("Z", f32({2, 2}));
  g.nodes = {node("MatMul", {x, w}, {m}), node("Add", {m, b}, {a}), node("Relu", {a}, {y}), node("Mul", {y, y}, {z})};
  g.inputs = {x};
  g.outputs = {z, y};
  return g;
}

Tensor x_input() { return Tensor::from_vector<float>({2, 3}, {1, 2, 3, -4, 5, -6}); }
const std::vector<float> kY = {4.5f, 0.f, 0.f, 10.5f};
const std::vector<float> kZ = {20.25f, 0.f, 0.f, 110.25f};

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.size()}; }

BackendDevice device_named(Backend& b, const std::string& name) {
  for (auto& d : b.devices({}))
    if (d.name == name) return d;
  ADD_FAILURE() << "no device " << name;
  return {};
}

// A plugin backend found through its env var naming the build's plugin folder.
struct PluginFixture {
  explicit PluginFixture(const std::string& name)
      : env("DLRT_PLUGIN_" + upper(name) + "_LIB", plugin_dir()), backend(std::make_shared<PluginBackend>(name)) {}
  static std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  ScopedEnv env;
  std::shared_ptr<PluginBackend> backend;
};

TEST(PluginBackend, IsAvailableLoadsTheGoodPlugin) {
  PluginFixture f("good");
  EXPECT_EQ(f.backend->name(), "good");
  EXPECT_EQ(f.backend->load_attempts(), 0);  // nothing loaded at construction
  Availability a = f.backend->is_available();
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_EQ(a.version, "test-1.0");
  EXPECT_TRUE(contains(a.library_path, "libdlrt_plugin_good.so")) << a.library_path;
  EXPECT_EQ(f.backend->load_attempts(), 1);
}

TEST(PluginBackend, DevicesIncludeAVirtualOne) {
  PluginFixture f("good");
  auto devs = f.backend->devices({});
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0].spec(), "good:0");
  EXPECT_EQ(devs[0].type, DeviceType::kGpu);
  EXPECT_FALSE(devs[0].is_virtual);
  EXPECT_EQ(devs[0].metadata["discovered_by"], "good");
  EXPECT_EQ(devs[0].metadata["memory_bytes"], std::to_string(1ull << 30));
  EXPECT_EQ(devs[0].metadata.count("is_virtual"), 0u);
  EXPECT_EQ(devs[1].spec(), "good:V");
  EXPECT_TRUE(devs[1].is_virtual);
  EXPECT_EQ(devs[1].metadata["is_virtual"], "1");
}

TEST(PluginBackend, SupportsAsksPerNode) {
  PluginFixture f("good");
  ir::Graph g = make_graph();
  ir::ValueId i64 = g.add_value("I", {});
  g.values[i64].type.dtype = DType::kInt64;
  ir::ValueId s = g.add_value("S", f32({2, 2}));
  ir::ValueId i2 = g.add_value("I2", {});
  g.nodes.push_back(node("Sigmoid", {g.outputs[0]}, {s}));
  g.nodes.push_back(node("Add", {i64, i64}, {i2}));
  auto sup = f.backend->supports(g, device_named(*f.backend, "0"));
  ASSERT_EQ(sup.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(sup[i].supported) << i << ": " << sup[i].reason;
  EXPECT_FALSE(sup[4].supported);
  EXPECT_TRUE(contains(sup[4].reason, "Sigmoid")) << sup[4].reason;
  EXPECT_FALSE(sup[5].supported);
  EXPECT_TRUE(contains(sup[5].reason, "float32")) << sup[5].reason;
}

TEST(PluginBackend, CompileInitExecuteDestroy) {
  PluginFixture f("good");
  BackendDevice dev = device_named(*f.backend, "0");
  CompileOptions opts;
  opts.values["performance_hint"] = "LATENCY";
  auto blob = f.backend->compile(make_graph(), dev, opts);
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  EXPECT_EQ(blob->format, "dlrt-plugin-good-v1");
  auto exe = f.backend->init(*blob, opts, dev);
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  EXPECT_EQ(f.backend->max_concurrent_runs(*exe), 0);
  Tensor x = x_input();
  auto out = f.backend->execute(*exe, std::span<const Tensor>(&x, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values((*out)[0]), kZ);
  EXPECT_EQ(values((*out)[1]), kY);

  auto none = f.backend->execute(*exe, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  f.backend->destroy(*exe);
}

TEST(PluginBackend, ExecuteFromSixteenThreads) {
  PluginFixture f("good");
  BackendDevice dev = device_named(*f.backend, "0");
  auto blob = f.backend->compile(make_graph(), dev, {});
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  auto exe = f.backend->init(*blob, {}, dev);
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  std::atomic<int> good_runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, -4, 5, -6});
        x.data<float>()[0] += static_cast<float>(t);  // row 0 of M grows by t in both columns
        auto out = f.backend->execute(*exe, std::span<const Tensor>(&x, 1));
        if (!out.ok()) continue;
        std::vector<float> y = values((*out)[1]);
        if (y == std::vector<float>{4.5f + t, 0.f, 0.f, 10.5f}) ++good_runs;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good_runs.load(), 16 * 20);
  f.backend->destroy(*exe);
}

TEST(PluginBackend, VirtualDeviceCompilesButNeverRuns) {
  PluginFixture f("good");
  BackendDevice v = device_named(*f.backend, "V");
  ASSERT_TRUE(v.is_virtual);
  auto blob = f.backend->compile(make_graph(), v, {});
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  auto exe = f.backend->init(*blob, {}, v);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_TRUE(contains(exe.status().message(), "virtual")) << exe.status().message();
  // The plugin refuses it too, should dlrt ever be told it is real.
  v.is_virtual = false;
  auto exe2 = f.backend->init(*blob, {}, v);
  ASSERT_FALSE(exe2.ok());
  EXPECT_EQ(exe2.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_TRUE(contains(exe2.status().message(), "virtual")) << exe2.status().message();
  // A blob compiled for the virtual device runs on the real one.
  auto exe3 = f.backend->init(*blob, {}, device_named(*f.backend, "0"));
  ASSERT_TRUE(exe3.ok()) << exe3.status().to_string();
  Tensor x = x_input();
  auto out = f.backend->execute(*exe3, std::span<const Tensor>(&x, 1));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), kZ);
  f.backend->destroy(*exe3);
}

TEST(PluginBackend, ForeignStaleOrTruncatedBlobsAreRefused) {
  PluginFixture f("good");
  BackendDevice dev = device_named(*f.backend, "0");
  auto blob = f.backend->compile(make_graph(), dev, {});
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  Blob foreign = *blob;
  foreign.format = "dlrt-plugin-other-v1";
  EXPECT_EQ(f.backend->init(foreign, {}, dev).status().code(), StatusCode::kBackendError);
  Blob truncated = *blob;
  truncated.data.resize(4);
  EXPECT_EQ(f.backend->init(truncated, {}, dev).status().code(), StatusCode::kBackendError);
  Blob garbage = *blob;
  garbage.data.resize(20);
  garbage.data[10] ^= 0xff;
  auto r = f.backend->init(garbage, {}, dev);
  EXPECT_EQ(r.status().code(), StatusCode::kBackendError) << r.status().to_string();
}

TEST(PluginBackend, CompileOfUnsupportedOpIsUnsupported) {
  PluginFixture f("good");
  ir::Graph g = make_graph();
  g.nodes[2].op_type = "Sigmoid";
  auto blob = f.backend->compile(g, device_named(*f.backend, "0"), {});
  ASSERT_FALSE(blob.ok());
  EXPECT_EQ(blob.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(blob.status().message(), "Sigmoid")) << blob.status().message();
}

TEST(PluginBackend, MissingSymbolMakesItUnavailableNamingSymbolAndFile) {
  PluginFixture f("nosym");
  Availability a = f.backend->is_available();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "dlrt_plugin_execute")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "libdlrt_plugin_nosym.so")) << a.reason;
  EXPECT_FALSE(a.fix.empty());
  EXPECT_TRUE(f.backend->devices({}).empty());
  BackendDevice dev;
  dev.backend = "nosym";
  dev.name = "0";
  auto sup = f.backend->supports(make_graph(), dev);
  ASSERT_EQ(sup.size(), 4u);
  EXPECT_FALSE(sup[0].supported);
  EXPECT_TRUE(contains(sup[0].reason, "dlrt_plugin_execute")) << sup[0].reason;
  auto blob = f.backend->compile(make_graph(), dev, {});
  EXPECT_EQ(blob.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_TRUE(contains(blob.status().message(), "Fix: set DLRT_PLUGIN_NOSYM_LIB")) << blob.status().message();
}

TEST(PluginBackend, InitFailureIsAStatus) {
  PluginFixture f("initfail");
  BackendDevice dev = device_named(*f.backend, "0");
  auto blob = f.backend->compile(make_graph(), dev, {});
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  auto exe = f.backend->init(*blob, {}, dev);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kBackendError);
  EXPECT_TRUE(contains(exe.status().message(), "initfail:0 init failed: init fails on purpose")) << exe.status().message();
}

TEST(PluginBackend, ExecuteFailsFromTheNthCall) {
  PluginFixture f("execfail");
  ScopedEnv n("DLRT_TEST_FAIL_AFTER", "3");
  BackendDevice dev = device_named(*f.backend, "0");
  auto blob = f.backend->compile(make_graph(), dev, {});
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  auto exe = f.backend->init(*blob, {}, dev);
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  Tensor x = x_input();
  for (int call = 1; call <= 4; ++call) {
    auto out = f.backend->execute(*exe, std::span<const Tensor>(&x, 1));
    if (call < 3) {
      ASSERT_TRUE(out.ok()) << call << ": " << out.status().to_string();
      EXPECT_EQ(values((*out)[0]), kZ);
    } else {
      ASSERT_FALSE(out.ok()) << call;
      EXPECT_EQ(out.status().code(), StatusCode::kBackendError);
      EXPECT_TRUE(contains(out.status().message(), "fails on purpose")) << out.status().message();
    }
  }
  f.backend->destroy(*exe);
}

TEST(PluginBackend, SlowCompileTakesItsTime) {
  PluginFixture f("slow");
  ScopedEnv ms("DLRT_TEST_COMPILE_MS", "300");
  BackendDevice dev = device_named(*f.backend, "0");
  auto t0 = std::chrono::steady_clock::now();
  auto blob = f.backend->compile(make_graph(), dev, {});
  auto elapsed = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  EXPECT_GE(elapsed, std::chrono::milliseconds(300));
}

TEST(PluginBackend, RefreshSucceedsAfterTheEnvVarIsFixedInProcess) {
  ScopedEnv env("DLRT_PLUGIN_GOOD_LIB", "/nonexistent/plugins");
  PluginBackend b("good");
  Availability a = b.is_available();
  ASSERT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "$DLRT_PLUGIN_GOOD_LIB -> /nonexistent/plugins")) << a.reason;
  EXPECT_TRUE(contains(a.fix, "set DLRT_PLUGIN_GOOD_LIB")) << a.fix;
  env.set(plugin_dir());
  EXPECT_FALSE(b.is_available().available);  // remembered until refreshed
  Availability fixed = b.is_available(/*refresh=*/true);
  EXPECT_TRUE(fixed.available) << fixed.reason;
  EXPECT_EQ(b.load_attempts(), 2);
  EXPECT_EQ(b.devices({}).size(), 2u);
}

TEST(PluginBackend, PluginReportingItsRuntimeMissingCanBeRetried) {
  PluginFixture f("good");
  ScopedEnv off("DLRT_TEST_PLUGIN_UNAVAILABLE", "1");
  Availability a = f.backend->is_available();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "test runtime switched off")) << a.reason;
  off.set(std::nullopt);
  EXPECT_TRUE(f.backend->is_available(true).available);
}

TEST(PluginBackend, SixteenThreadsAskingAtOnceLoadOnce) {
  PluginFixture f("slow");
  std::atomic<int> ready{0}, available{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&] {
      ++ready;
      while (ready.load() < 16) std::this_thread::yield();
      if (f.backend->is_available().available) ++available;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(available.load(), 16);
  EXPECT_EQ(f.backend->load_attempts(), 1);
}

TEST(PluginBackend, AWrongPluginNameIsRefused) {
  LibrarySearch s = plugin_library_search("other");
  s.names = {plugin_path("good")};
  PluginBackend b("other", s);
  Availability a = b.is_available();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "is plugin 'good', not 'other'")) << a.reason;
}

TEST(PluginBackend, RegisterFromEnvRegistersEachNameAndLoadsNothing) {
  ScopedEnv plugins("DLRT_PLUGINS", " good, slow ,,");
  BackendRegistry reg;
  ASSERT_TRUE(register_plugin_backends_from_env(reg).ok());
  auto all = reg.all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name(), "good");
  EXPECT_EQ(all[1]->name(), "slow");
  auto good = std::dynamic_pointer_cast<PluginBackend>(all[0]);
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->load_attempts(), 0);

  plugins.set("good,Bad-Name,good,execfail");
  BackendRegistry reg2;
  Status st = register_plugin_backends_from_env(reg2);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "Bad-Name")) << st.message();
  EXPECT_EQ(reg2.all().size(), 2u);  // good, execfail

  plugins.set(std::nullopt);
  BackendRegistry reg3;
  EXPECT_TRUE(register_plugin_backends_from_env(reg3).ok());
  EXPECT_TRUE(reg3.all().empty());
}

}  // namespace
}  // namespace dlrt::backend
