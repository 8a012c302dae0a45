// Sessions placed on real dlopen'ed backends: the test plugins of
// tests/backends/test_plugin.cpp, driven through the public Session API and
// the CLI exactly as an application would (the in-process fake backend of
// fallback_test.cpp covers the same paths without dlopen).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "../backend/plugin_test_util.h"
#include "../tools/cli_test_util.h"
#include "backend/plugin_backend.h"
#include "backend/registry.h"
#include "dlrt/session.h"
#include "runtime/backends.h"

namespace dlrt {
namespace {

using testing::plugin_dir;
using testing::ScopedEnv;

// Registers plugin `name` in the process-wide registry once (the registry reads
// DLRT_PLUGINS only when first used, which may have happened in this process).
void ensure_plugin(const std::string& name) {
  auto& reg = dlrt::global_backends();
  if (!reg.find(name)) {
    ASSERT_TRUE(reg.add(std::make_shared<backend::PluginBackend>(name)).ok());
  }
}

// y = Softmax(Relu(x * w + b)): Mul, Add, Relu run on the plugins, Softmax does not.
std::string model_bytes() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("mul_add_relu_softmax");
  auto io = [](onnx::ValueInfoProto* vi, const char* name) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  };
  io(g->add_input(), "x");
  io(g->add_output(), "y");
  for (const char* name : {"w", "b"}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    for (int i = 0; i < 4; ++i) t->add_float_data(name[0] == 'w' ? 0.5f * (i + 1) : 0.25f * i - 0.5f);
  }
  auto node = [&](const char* op, std::vector<const char*> in, const char* out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(std::string(op) + "_node");
    for (auto* i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  node("Mul", {"x", "w"}, "xw");
  node("Add", {"xw", "b"}, "s");
  node("Relu", {"s"}, "r");
  node("Softmax", {"r"}, "y");
  return m.SerializeAsString();
}

Tensor input_tensor(float offset) {
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = static_cast<float>(i) - 3.5f + offset;
  return Tensor::from_vector<float>({2, 4}, v);
}

std::vector<float> reference(float offset) {
  std::vector<float> y(8);
  for (int r = 0; r < 2; ++r) {
    float v[4], sum = 0, mx = -1e30f;
    for (int c = 0; c < 4; ++c) {
      float x = static_cast<float>(r * 4 + c) - 3.5f + offset;
      v[c] = std::max(0.0f, x * 0.5f * (c + 1) + (0.25f * c - 0.5f));
      mx = std::max(mx, v[c]);
    }
    for (int c = 0; c < 4; ++c) sum += (v[c] = std::exp(v[c] - mx));
    for (int c = 0; c < 4; ++c) y[r * 4 + c] = v[c] / sum;
  }
  return y;
}

bool matches(const Tensor& t, const std::vector<float>& want) {
  if (t.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::fabs(t.data<float>()[i] - want[i]) > 1e-5f) return false;
  return true;
}

TEST(PluginSession, MixedPartitionsReportBothDevices) {
  ScopedEnv lib("DLRT_PLUGIN_GOOD_LIB", plugin_dir());
  ensure_plugin("good");
  SessionOptions o;
  o.device = "good";
  o.strict = true;
  auto s = Session::create_from_bytes(model_bytes(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RunReport rep;
  auto out = (*s)->run({{"x", input_tensor(0)}}, &rep);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_TRUE(matches((*out)[0], reference(0)));
  ASSERT_EQ(rep.partitions.size(), 2u);
  EXPECT_EQ(rep.partitions[0].backend, "good");
  EXPECT_EQ(rep.partitions[0].node_count, 3);
  EXPECT_FALSE(rep.partitions[0].degraded);
  EXPECT_EQ(rep.partitions[1].backend, "cpu");
  EXPECT_EQ(rep.partitions[1].node_count, 1);
  EXPECT_NE(rep.partitions[1].reason.find("Softmax"), std::string::npos) << rep.partitions[1].reason;
}

TEST(PluginSession, VirtualDeviceIsRefusedForRunningWithTheFix) {
  ScopedEnv lib("DLRT_PLUGIN_GOOD_LIB", plugin_dir());
  ensure_plugin("good");
  SessionOptions o;
  o.device = "good:V";
  o.strict = true;
  auto s = Session::create_from_bytes(model_bytes(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_NE(s.status().message().find("virtual"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("dlrt compile"), std::string::npos) << s.status().message();
}

// 16 threads share one session while its backend starts failing mid-run:
// every result is right, and the reports switch from the plugin to a degraded CPU.
TEST(PluginSession, SixteenThreadsWhileTheBackendDegrades) {
  ScopedEnv lib("DLRT_PLUGIN_EXECFAIL_LIB", plugin_dir());
  ScopedEnv after("DLRT_TEST_FAIL_AFTER", "40");
  ensure_plugin("execfail");
  SessionOptions o;
  o.device = "execfail";
  auto s = Session::create_from_bytes(model_bytes(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  std::atomic<int> wrong{0}, errors{0}, on_plugin{0}, degraded{0}, bad_reports{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const float offset = static_cast<float>(t) * 0.1f + static_cast<float>(i) * 0.01f;
        RunReport rep;
        auto out = (*s)->run({{"x", input_tensor(offset)}}, &rep);
        if (!out.ok()) {
          ++errors;
          continue;
        }
        if (!matches((*out)[0], reference(offset))) ++wrong;
        if (rep.partitions.size() != 2) {
          ++bad_reports;
          continue;
        }
        const auto& p = rep.partitions[0];
        if (p.backend == "execfail" && !p.degraded) ++on_plugin;
        else if (p.backend == "cpu" && p.degraded && p.reason.find("execfail") != std::string::npos) ++degraded;
        else ++bad_reports;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(bad_reports.load(), 0);
  EXPECT_GT(on_plugin.load(), 0);
  EXPECT_GT(degraded.load(), 0);
  EXPECT_EQ(on_plugin.load() + degraded.load(), 16 * 25);
  // In strict mode the failure surfaces as an error instead.
  o.strict = true;
  auto strict = Session::create_from_bytes(model_bytes(), o);
  ASSERT_TRUE(strict.ok()) << strict.status().to_string();
  Status first_error;
  for (int i = 0; i < 60 && first_error.ok(); ++i) first_error = (*strict)->run({{"x", input_tensor(0)}}).status();
  EXPECT_FALSE(first_error.ok());
  EXPECT_NE(first_error.message().find("execfail"), std::string::npos) << first_error.message();
}

// A missing library is remembered, but the next session create retries it:
// fixing the variable in-process is enough, no restart.
TEST(PluginSession, NextSessionRetriesAfterTheEnvironmentIsFixed) {
  if (auto b = dlrt::global_backends().find("good"); b && b->is_available().available)
    GTEST_SKIP() << "the good plugin was already loaded by an earlier test in this process; a loaded library "
                    "stays loaded, so run this test in a process of its own (ctest does)";
  ScopedEnv lib("DLRT_PLUGIN_GOOD_LIB", "/nonexistent/dlrt-plugins");
  ensure_plugin("good");
  SessionOptions o;
  o.device = "good";
  auto before = Session::create_from_bytes(model_bytes(), o);
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  auto p = (*before)->placement();
  ASSERT_EQ(p.partitions.size(), 1u);
  EXPECT_EQ(p.partitions[0].backend, "cpu");
  EXPECT_TRUE(p.partitions[0].degraded);
  EXPECT_NE(p.partitions[0].reason.find("/nonexistent/dlrt-plugins"), std::string::npos) << p.partitions[0].reason;
  lib.set(plugin_dir());
  auto after = Session::create_from_bytes(model_bytes(), o);
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  EXPECT_EQ((*after)->placement().partitions[0].backend, "good");
  auto out = (*after)->run({{"x", input_tensor(1)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_TRUE(matches((*out)[0], reference(1)));
}

// The same through the CLI: DLRT_PLUGINS registers the plugin, `dlrt run --json`
// reports both devices, `dlrt inspect --device` explains each CPU node.
TEST(PluginSession, CliRunAndInspectThroughAPlugin) {
  const std::string dir = ::testing::TempDir() + "plugin_session_cli";
  std::filesystem::create_directories(dir);
  const std::string model = dir + "/m.onnx";
  {
    std::ofstream f(model, std::ios::binary);
    f << model_bytes();
  }
  const std::string env = "env -u DLRT_CONFIG -u DLRT_STRICT -u DLRT_DEVICE DLRT_PLUGINS=good DLRT_PLUGIN_GOOD_LIB=" +
                          testing::quote(plugin_dir()) + " ";
  const std::string bin = testing::quote(testing::dlrt_binary());
  auto run = testing::run_command(env + bin + " run " + testing::quote(model) + " --device good --json 2>/dev/null");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto j = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.output;
  ASSERT_EQ(j["report"].size(), 2u) << j["report"].dump();
  EXPECT_EQ(j["report"][0]["backend"], "good");
  EXPECT_EQ(j["report"][1]["backend"], "cpu");
  auto inspect = testing::run_command(env + bin + " inspect " + testing::quote(model) + " --device good");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("3 nodes on good"), std::string::npos) << inspect.output;
  EXPECT_NE(inspect.output.find("on cpu, and why:"), std::string::npos) << inspect.output;
  EXPECT_NE(inspect.output.find("1 x Softmax (Softmax_node): good:0"), std::string::npos) << inspect.output;
  auto ij = testing::run_command(env + bin + " inspect " + testing::quote(model) + " --device good --json");
  auto jj = nlohmann::json::parse(ij.output, nullptr, false);
  ASSERT_FALSE(jj.is_discarded()) << ij.output;
  ASSERT_EQ(jj["nodes"].size(), 4u);
  EXPECT_EQ(jj["nodes"][3]["backend"], "cpu");
  EXPECT_TRUE(jj["nodes"][3].contains("cpu_reason"));
  EXPECT_FALSE(jj["nodes"][0].contains("cpu_reason"));
}

}  // namespace
}  // namespace dlrt
