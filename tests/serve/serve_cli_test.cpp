// `dlrt serve` as a process on loopback with a real model folder: SIGTERM
// (graceful shutdown), the accelerator-failure path with the test plugin
// backends (execfail: CPU fallback, degraded /health, same vectors; strict:
// 503), usage errors. Needs the built dlrt binary and a working Embedder.
#include <gtest/gtest.h>
#include <httplib.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "../tools/dlrt_process.h"
#include "embed/models/embedder.h"
#include "embed/serve/openapi.h"
#include "serve_model_folder.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Why the real-model tests cannot run here ("" when they can).
std::string real_model_skip_reason(const std::string& folder) {
  const std::string binary = dlrt::testing::dlrt_binary();
  if (!fs::exists(binary)) return binary + " is not built (ninja dlrt_cli)";
  EmbedderOptions o;
  o.device = "cpu";
  auto e = Embedder::create(folder, o);
  if (!e.ok()) return "the Embedder cannot load the test folder: " + e.status().to_string();
  return "";
}

// `dlrt serve ARGS...` with `env` added, its stdout in output(), and HTTP
// clients to the port it listens on.
class ServeProcess : public dlrt::testing::DlrtProcess {
 public:
  ServeProcess(std::vector<std::string> args, std::map<std::string, std::string> env, bool merge_stderr = false)
      : DlrtProcess(options(std::move(args), std::move(env), merge_stderr)) {}

  int wait_port(int timeout_ms = 20000) { return DlrtProcess::wait_port(timeout_ms); }
  int wait_exit(int timeout_ms = 30000) { return DlrtProcess::wait_exit(timeout_ms); }
  // Polls /health until 200 (ready) or the timeout.
  bool wait_ready(int timeout_ms = 60000) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < until) {
      auto r = client().Get("/health");
      if (r && r->status == 200) return true;
      if (exited()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(30, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }

 private:
  static dlrt::testing::DlrtProcessOptions options(std::vector<std::string> args,
                                                   std::map<std::string, std::string> env, bool merge_stderr) {
    dlrt::testing::DlrtProcessOptions o;
    o.args = {"serve"};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.env = std::move(env);
    o.merge_stderr = merge_stderr;
    return o;
  }
};

std::vector<float> embedding(const httplib::Result& r) {
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.contains("data")) return {};
  return j["data"][0]["embedding"].get<std::vector<float>>();
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return ab / (std::sqrt(aa * bb) + 1e-30);
}

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::serve_temp_dir("cli");
    ASSERT_TRUE(testing::make_tiny_model_folder(dir_ / "tiny"));
    std::string why = real_model_skip_reason((dir_ / "tiny").string());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::map<std::string, std::string> plugin_env(int fail_after) const {
    return {{"DLRT_PLUGINS", "execfail"},
            {"DLRT_PLUGIN_EXECFAIL_LIB", DLRT_TEST_PLUGIN_DIR},
            {"DLRT_TEST_FAIL_AFTER", std::to_string(fail_after)},
            {"DLRT_CACHE_DIR", (dir_ / "cache").string()},
            {"DLRT_DEVICE", ""}};
  }
  std::string model() const { return (dir_ / "tiny").string(); }
  fs::path dir_;
};

TEST_F(ServeCli, SigtermFinishesInFlightRequestsAndExitsZero) {
  ServeProcess p({"--model", model(), "--port", "0", "--device", "cpu", "--max-wait-ms", "600"}, {});
  ASSERT_TRUE(p.started());
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  // A request waits ~600 ms for its batch to fill; SIGTERM arrives meanwhile.
  int status = 0;
  std::thread in_flight([&] {
    auto r = p.client().Post("/v1/embeddings", R"({"input":"the quick brown fox"})", "application/json");
    status = r ? r->status : -1;
  });
  // SIGTERM once the request is in flight (on a loaded machine the thread may
  // take a while to send it).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < give_up) {
    auto m = p.client().Get("/metrics");
    seen = m && m->body.find("\ndlrt_requests_in_flight 1") != std::string::npos;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  p.signal(SIGTERM);
  in_flight.join();
  ASSERT_TRUE(seen) << "the request never got in flight";
  EXPECT_EQ(status, 200) << "the in-flight request was not finished";
  EXPECT_EQ(p.wait_exit(), 0) << p.output();
  EXPECT_NE(p.output().find("stopped"), std::string::npos) << p.output();
  EXPECT_FALSE(p.client().Get("/health")) << "still accepting connections";
}

TEST_F(ServeCli, AcceleratorFailureFallsBackToCpuWithTheSameVectors) {
  // execfail executes twice (warm-up, first request), then fails from call 3 on.
  ServeProcess p({"--model", model(), "--port", "0", "--device", "execfail,cpu", "--max-wait-ms", "0"},
                 plugin_env(3));
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  json h = json::parse(p.client().Get("/health")->body);
  EXPECT_EQ(h["status"], "ok") << h.dump();
  EXPECT_EQ(h["backend"], "execfail") << h.dump();
  EXPECT_EQ(h["degraded"], false);

  const std::string body = R"({"input":"the river bank at night"})";
  auto on_accel = p.client().Post("/v1/embeddings", body, "application/json");
  ASSERT_TRUE(on_accel);
  ASSERT_EQ(on_accel->status, 200) << on_accel->body;
  auto after_failure = p.client().Post("/v1/embeddings", body, "application/json");  // call 3 fails -> cpu
  ASSERT_TRUE(after_failure);
  ASSERT_EQ(after_failure->status, 200) << after_failure->body;
  auto a = embedding(on_accel), b = embedding(after_failure);
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), 8u);
  EXPECT_GE(cosine(a, b), 0.999);

  h = json::parse(p.client().Get("/health")->body);
  EXPECT_EQ(h["status"], "degraded") << h.dump();
  EXPECT_EQ(h["degraded"], true);
  EXPECT_EQ(h["backend"], "cpu");
  EXPECT_NE(h["reason"].get<std::string>().find("execute fails on purpose"), std::string::npos) << h.dump();
  // It keeps answering (and re-probing the plugin in the background of runs).
  for (int i = 0; i < 5; ++i) {
    auto r = p.client().Post("/v1/embeddings", body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_GE(cosine(a, embedding(r)), 0.999);
  }
  std::string metrics = p.client().Get("/metrics")->body;
  EXPECT_NE(metrics.find("dlrt_degraded 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("dlrt_device_batches_total{device=\"cpu:0\"}"), std::string::npos) << metrics;
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

// The server compiles accelerator partitions for throughput: through the OpenVINO double
// (tests/openvino_double/) on its NPU, every compile carries PERFORMANCE_HINT=THROUGHPUT.
TEST_F(ServeCli, CompilesForThroughputOnAnAccelerator) {
  const std::string lib_dir = DLRT_OV_DOUBLE_DIR;
  if (!fs::exists(lib_dir + "/libopenvino_c.so")) GTEST_SKIP() << "the OpenVINO double was not built: " << lib_dir;
  const fs::path stats = dir_ / "ov_stats";
  ServeProcess p({"--model", model(), "--port", "0", "--device", "openvino:NPU", "--strict", "--max-wait-ms", "0"},
                 {{"OPENVINO_LIB_PATH", lib_dir},
                  {"DLRT_OPENVINO_NO_PYTHON", "1"},
                  {"OV_DOUBLE_STATS", stats.string()},
                  {"DLRT_CACHE", "0"},
                  {"DLRT_CANARY", "skip"},  // the double's version is not a tested release
                  {"DLRT_DEVICE", ""}});
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  json h = json::parse(p.client().Get("/health")->body);
  EXPECT_EQ(h["backend"], "openvino") << h.dump();
  auto r = p.client().Post("/v1/embeddings", R"({"input":"the river bank"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0) << p.output();
  std::ifstream f(stats);
  std::map<std::string, long> st;
  for (std::string line; std::getline(f, line);)
    if (auto eq = line.find('='); eq != std::string::npos) st[line.substr(0, eq)] = std::atol(line.c_str() + eq + 1);
  EXPECT_GE(st["compiles"], 1) << p.output();
  EXPECT_EQ(st["throughput_compiles"], st["compiles"]) << p.output();
}

// --warm-start with a slowly compiling accelerator (the "slow" test plugin): /health says
// "warming" on the CPU while it compiles, then "ok" on the accelerator once its first result
// agreed with the CPU's; requests are answered throughout.
TEST_F(ServeCli, WarmStartServesOnCpuThenHealthShowsTheAccelerator) {
  ServeProcess p({"--model", model(), "--port", "0", "--device", "slow,cpu", "--warm-start", "--max-wait-ms", "0"},
                 {{"DLRT_PLUGINS", "slow"},
                  {"DLRT_PLUGIN_SLOW_LIB", DLRT_TEST_PLUGIN_DIR},
                  {"DLRT_TEST_COMPILE_MS", "1500"},
                  {"DLRT_CACHE", "0"},
                  {"DLRT_CANARY", "skip"},  // the double's version is not a tested release
                  {"DLRT_DEVICE", ""}});
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  json h = json::parse(p.client().Get("/health")->body);
  EXPECT_EQ(h["status"], "warming") << h.dump();
  EXPECT_EQ(h["backend"], "cpu") << h.dump();
  EXPECT_EQ(h["reason"].get<std::string>().rfind("warm start", 0), 0u) << h.dump();

  const std::string body = R"({"input":"the river bank at night"})";
  auto first = p.client().Post("/v1/embeddings", body, "application/json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    auto r = p.client().Post("/v1/embeddings", body, "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_GE(cosine(embedding(first), embedding(r)), 0.999);
    h = json::parse(p.client().Get("/health")->body);
    // Each partition on the accelerator switches after its own first
    // agreeing run: /health may show "slow" while another still warms.
    if (h["backend"] == "slow" && h["status"] == "ok") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(h["backend"], "slow") << h.dump();
  EXPECT_EQ(h["status"], "ok") << h.dump();
  EXPECT_EQ(h["degraded"], false) << h.dump();
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0) << p.output();
}

TEST_F(ServeCli, StrictModeAnswers503WhenTheAcceleratorFails) {
  ServeProcess p({"--model", model(), "--port", "0", "--device", "execfail", "--strict", "--max-wait-ms", "0"},
                 plugin_env(3));
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  const std::string body = R"({"input":"green light"})";
  auto ok = p.client().Post("/v1/embeddings", body, "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto failed = p.client().Post("/v1/embeddings", body, "application/json");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 503) << failed->body;
  EXPECT_NE(failed->body.find("strict mode"), std::string::npos) << failed->body;
  json h = json::parse(p.client().Get("/health")->body);
  EXPECT_EQ(h["degraded"], true) << h.dump();
  EXPECT_NE(h["reason"].get<std::string>().find("fails on purpose"), std::string::npos) << h.dump();
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

TEST_F(ServeCli, UsageErrors) {
  {
    ServeProcess p({"--bogus"}, {});
    EXPECT_EQ(p.wait_exit(), 2);
  }
  {
    ServeProcess p({"--port", "0"}, {{"DLRT_SERVE_MODEL", ""}});
    EXPECT_EQ(p.wait_exit(), 2);  // no model
  }
  {
    ServeProcess p({"--model", model(), "--port", "99999"}, {});
    EXPECT_EQ(p.wait_exit(), 2);
  }
  {
    ServeProcess p({"--model", (dir_ / "missing").string(), "--port", "0"}, {});
    EXPECT_EQ(p.wait_exit(), 3);  // a missing model folder, as dlrt embed says
  }
}

// A TEI launcher command line works as it is; TEI's variables and a misspelt
// DLRT_ one are read (or warned about) once.
TEST_F(ServeCli, TeiLauncherFlagsAndVariables) {
  ServeProcess p({"--model-id", model(), "--hostname", "127.0.0.1", "-p", "0", "--device", "cpu", "--auto-truncate",
                  "--max-client-batch-size", "8", "--dtype", "float32", "--json-output"},
                 {{"MAX_BATCH_REQUESTS", "4"}, {"DLRT_SERVE_AUTO_TRUNCATE", "1"}}, /*merge_stderr=*/true);
  ASSERT_TRUE(p.started());
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  json info = json::parse(p.client().Get("/info")->body);
  EXPECT_EQ(info["max_client_batch_size"], 8) << info.dump();
  EXPECT_EQ(info["truncate"], true);
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "hello ";
  auto r = p.client().Post("/embed", json({{"inputs", long_text}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const std::string out = p.output();
  const std::string warning = "DLRT_SERVE_AUTO_TRUNCATE is not a dlrt variable and is ignored (did you mean DLRT_SERVE_TRUNCATE?)";
  const size_t at = out.find(warning);
  EXPECT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.find(warning, at + 1), std::string::npos) << "warned twice:\n" << out;
  EXPECT_NE(out.find("\"level\":\"warning\""), std::string::npos) << "--json-output: JSON log lines\n" << out;
  EXPECT_EQ(info["model_id"], model()) << "TEI's model_id is the --model-id value";
  EXPECT_NE(out.find("all models ready (1 of 1)"), std::string::npos) << out;
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

TEST_F(ServeCli, NoTruncateRestoresThe413) {
  ServeProcess p({"--model", model(), "--port", "0", "--device", "cpu", "--no-truncate"}, {});
  ASSERT_TRUE(p.started());
  ASSERT_GT(p.wait_port(), 0) << p.output();
  ASSERT_TRUE(p.wait_ready()) << p.output();
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "hello ";
  auto r = p.client().Post("/embed", json({{"inputs", long_text}}).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

// --help lists every route of the OpenAPI document.
TEST_F(ServeCli, HelpListsEveryRoute) {
  ServeProcess p({"--help"}, {});
  EXPECT_EQ(p.wait_exit(), 0);
  const std::string help = p.output();
  const json doc = json::parse(openapi_document("0", nullptr));
  ASSERT_GT(doc["paths"].size(), 10u);
  for (const auto& [path, item] : doc["paths"].items())
    EXPECT_NE(help.find(" " + path), std::string::npos) << path << " is not in dlrt serve --help:\n" << help;
}

TEST_F(ServeCli, UnknownAndUnsupportedFlagsSayWhy) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--model", model(), "--pooling", "mean"}, "--pooling is a text-embeddings-inference option that dlrt serve does not have"},
      {{"--model", model(), "--revision", "main"}, "dlrt does not download models"},
      {{"--model", model(), "--dtype", "float16"}, "--dtype float16"},
      {{"--modle", model()}, "unknown option '--modle' (did you mean --model?)"},
      {{"--model", model(), "--max-batch-token", "9"}, "(did you mean --max-batch-tokens?)"},
      // A misspelt TEI flag: the TEI flag, not a dlrt flag of another setting (--max-batch-size).
      {{"--model", model(), "--max-clint-batch-size", "9"}, "(did you mean --max-client-batch-size?)"},
      {{"--model", model(), "--model-id", model()}, "'--model' given more than once"},
  };
  for (const auto& [args, message] : cases) {
    ServeProcess p(args, {}, /*merge_stderr=*/true);
    EXPECT_EQ(p.wait_exit(), 2) << message;
    EXPECT_NE(p.output().find(message), std::string::npos) << p.output();
  }
}

}  // namespace
}  // namespace dlrt::embed
