// `dlrt serve` serving several models in one process (--model NAME=DIR
// repeated) with generated folders whose vectors differ in length (a: 8
// values, b: 12), so a misrouted request shows: a bounded load of mixed
// requests to each (/v1/embeddings, /embed, /similarity and /embed_all, by the
// body's "model" and the /models/NAME/ prefix; every one answered, by the
// right model; the per-model counters in /metrics add up to what was sent),
// and a folder that cannot load served beside a good one.
#include <gtest/gtest.h>
#include <httplib.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/dlrt_process.h"
#include "embed/models/embedder.h"
#include "serve_model_folder.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class ServeMultiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::serve_temp_dir("multi_cli");
    ASSERT_TRUE(testing::make_tiny_model_folder(dir_ / "a", 8));
    ASSERT_TRUE(testing::make_tiny_model_folder(dir_ / "b", 12));
    fs::create_directories(dir_ / "bad");  // no model.onnx, no vocabulary
    if (!fs::exists(dlrt::testing::dlrt_binary())) GTEST_SKIP() << dlrt::testing::dlrt_binary() << " is not built";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<dlrt::testing::DlrtProcess> serve(std::vector<std::string> args) {
    dlrt::testing::DlrtProcessOptions o;
    o.args = {"serve", "--port", "0", "--device", "cpu", "--access-log=false", "--pool-size", "2"};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.merge_stderr = false;
    return std::make_unique<dlrt::testing::DlrtProcess>(o);
  }
  // Polls /health until no model is loading: the last answer.
  static json wait_loaded(dlrt::testing::DlrtProcess& p) {
    httplib::Client c("127.0.0.1", p.port());
    c.set_read_timeout(10, 0);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    json j;
    while (std::chrono::steady_clock::now() < until && !p.exited()) {
      if (auto r = c.Get("/health")) {
        j = json::parse(r->body, nullptr, false);
        if (!j.is_discarded() && j.value("status", "") != "loading") return j;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return j;
  }
  fs::path dir_;
};

// The value of one metric line ("NAME{labels} VALUE"), or -1.
double multi_cli_metric(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST_F(ServeMultiCli, MixedLoadOnTwoModelsIsAnsweredByEachAndCounted) {
  auto p = serve({"--model", "a=" + (dir_ / "a").string(), "--model", "b=" + (dir_ / "b").string()});
  ASSERT_TRUE(p->started());
  ASSERT_GT(p->wait_port(), 0) << p->output();
  json h = wait_loaded(*p);
  ASSERT_EQ(h.value("status", ""), "ok") << h.dump() << p->output();

  // 8 clients x 40 requests, each picking a model and a route by turns:
  // OpenAI's "model" field, TEI's body field and the /models/NAME prefix on
  // the embedding routes, /similarity and /embed_all.
  constexpr int kClients = 8, kRequests = 40;
  const std::vector<std::string> kLoadRoutes = {"/v1/embeddings", "/embed", "/similarity", "/embed_all"};
  // Per model: requests by route, and the inputs it ran (through its batcher,
  // or for /embed_all on the HTTP thread: counted alike).
  std::map<std::string, int> sent[2];
  std::atomic<int> inputs[2] = {0, 0}, wrong{0};
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t)
    clients.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", p->port());
      c.set_keep_alive(true);
      c.set_read_timeout(30, 0);
      for (int i = 0; i < kRequests; ++i) {
        const int which = (t + i) % 2;  // a or b
        const std::string name = which ? "b" : "a";
        const size_t dim = which ? 12 : 8;
        const int n = 1 + (t * 3 + i) % 3;
        std::string texts;
        for (int k = 0; k < n; ++k)
          texts += std::string(k ? "," : "") + "\"" + testing::serve_sentence(3 + (i + k) % 7, t * 1000 + i * 10 + k) + "\"";
        const std::string route = kLoadRoutes[(t + i / 2) % kLoadRoutes.size()];
        const bool by_prefix = route != "/v1/embeddings" && (t + i) % 3 == 0;
        const std::string path = by_prefix ? "/models/" + name + route : route;
        const std::string model_field = by_prefix ? "" : "\"model\":\"" + name + "\",";
        std::string body;
        if (route == "/v1/embeddings") body = "{" + model_field + "\"input\":[" + texts + "]}";
        else if (route == "/similarity")
          body = "{" + model_field + "\"inputs\":{\"source_sentence\":\"the fox\",\"sentences\":[" + texts + "]}}";
        else body = "{" + model_field + "\"inputs\":[" + texts + "]}";
        auto r = c.Post(path.c_str(), body, "application/json");
        bool ok = r && r->status == 200;
        if (ok) {
          json j = json::parse(r->body, nullptr, false);
          const json& answers = route == "/v1/embeddings" ? j["data"] : j;
          ok = !j.is_discarded() && answers.size() == static_cast<size_t>(n);
          for (size_t v = 0; ok && v < answers.size(); ++v) {
            if (route == "/v1/embeddings") ok = answers[v]["embedding"].size() == dim;
            else if (route == "/embed") ok = answers[v].size() == dim;
            else if (route == "/similarity") ok = answers[v].is_number();
            else ok = !answers[v].empty() && answers[v][0].size() == dim;  // per token, the model's width
          }
          if (ok && route == "/v1/embeddings") ok = j["model"] == name;
        }
        std::lock_guard<std::mutex> lk(mu);
        if (!ok) {
          ++wrong;
          if (first_error.empty())
            first_error = path + " " + body + " -> " + (r ? std::to_string(r->status) + " " + r->body : "no answer");
        }
        ++sent[which][route];
        inputs[which] += n + (route == "/similarity" ? 1 : 0);
      }
    });
  for (auto& c : clients) c.join();
  EXPECT_EQ(wrong.load(), 0) << first_error;

  httplib::Client c("127.0.0.1", p->port());
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m && m->status == 200);
  int total = 0, tei_inference = 0;
  for (int which = 0; which < 2; ++which) {
    const std::string model = which ? "b" : "a";
    for (const std::string& route : kLoadRoutes) {
      const int n = sent[which][route];
      ASSERT_GT(n, 0) << model << " " << route;  // every route had its share
      total += n;
      if (route != "/embed_all") tei_inference += n;
      EXPECT_EQ(multi_cli_metric(m->body, "dlrt_model_requests_total{model=\"" + model + "\",route=\"" + route +
                                              "\",code=\"200\"}"),
                n)
          << model << " " << route << "\n" << m->body;
    }
    EXPECT_EQ(multi_cli_metric(m->body, "dlrt_model_inputs_total{model=\"" + model + "\"}"), inputs[which].load())
        << model;
  }
  EXPECT_EQ(total, kClients * kRequests);  // nothing lost
  EXPECT_EQ(multi_cli_metric(m->body, "dlrt_inputs_total"), inputs[0] + inputs[1]);
  // TEI's request counter (embedding, similarity and rerank routes) counts every model's.
  EXPECT_EQ(multi_cli_metric(m->body, "te_request_count"), tei_inference);

  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models && models->status == 200);
  json list = json::parse(models->body)["data"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], "a");
  EXPECT_EQ(list[1]["id"], "b");
  p->signal(SIGTERM);
  EXPECT_EQ(p->wait_exit(), 0) << p->output();
  // One line once every model serves (scripts wait for it), after each model's own.
  const std::string out = p->output();
  const size_t all = out.find("all models ready (2 of 2): a, b");
  EXPECT_NE(all, std::string::npos) << out;
  EXPECT_GT(all, out.rfind("ready in", all)) << out;
}

TEST_F(ServeMultiCli, AFolderThatCannotLoadIsNamedAndTheOtherServes) {
  auto p = serve({"--model", "good=" + (dir_ / "a").string(), "--model", "bad=" + (dir_ / "bad").string()});
  ASSERT_TRUE(p->started());
  ASSERT_GT(p->wait_port(), 0) << p->output();
  json h = wait_loaded(*p);
  EXPECT_EQ(h.value("status", ""), "degraded") << h.dump() << p->output();
  EXPECT_NE(h.value("reason", "").find("model bad failed to load"), std::string::npos) << h.dump();
  httplib::Client c("127.0.0.1", p->port());
  auto bad = c.Get("/models/bad/health");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 503);
  json j = json::parse(bad->body, nullptr, false);
  EXPECT_EQ(j.value("status", ""), "failed");
  EXPECT_FALSE(j.value("reason", "").empty());
  auto r = c.Post("/v1/embeddings", R"({"model":"bad","input":"the fox"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  r = c.Post("/v1/embeddings", R"({"model":"good","input":"the fox"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(c.Get("/ready")->status, 200);
  p->signal(SIGTERM);
  EXPECT_EQ(p->wait_exit(), 0) << p->output();
}

TEST_F(ServeMultiCli, ExitsWhenNoModelLoads) {
  auto p = serve({"--model", "x=" + (dir_ / "bad").string(), "--model", "y=" + (dir_ / "nowhere").string()});
  ASSERT_TRUE(p->started());
  EXPECT_EQ(p->wait_exit(), 3) << p->output();  // a missing or invalid model folder, as with one model
}

}  // namespace
}  // namespace dlrt::embed
