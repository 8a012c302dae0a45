// Several models in one server (model_registry.h) over fake models whose
// vectors differ in length (a: 4 values, b: 6), so a request routed to the
// wrong model shows: selection by the "model" field and the /models/NAME/
// prefix (on the sparse, rerank, similarity and per-token routes too), a
// model of the wrong kind named in the refusal, unknown names, /v1/models,
// /health and /metrics per model, a model that failed to load, and the run
// slots the models share.
#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "embed/serve/batcher.h"
#include "embed/serve/server.h"
#include "fake_model.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::FakeModel;

// A server of models a (dimension 4) and b (dimension 6) unless `c` names
// others; load_a and load_b say which are set.
struct MultiServer {
  explicit MultiServer(ServiceConfig c = {}, bool load_a = true, bool load_b = true) {
    c.host = "127.0.0.1";
    c.port = 0;
    if (c.models.empty()) c.models = {{"a", "/models/a", 0}, {"b", "/models/b", 0}};
    server = std::make_unique<EmbedServer>(c);
    EXPECT_TRUE(server->bind().ok());
    if (load_a) server->set_model("a", a);
    if (load_b) server->set_model("b", b);
    thread = std::thread([this] { server->run(); });
  }
  ~MultiServer() {
    a->open_gate();
    b->open_gate();
    server->shutdown();
    thread.join();
  }
  httplib::Result post(const std::string& path, const std::string& body) const {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(20, 0);
    return c.Post(path.c_str(), body, "application/json");
  }
  httplib::Result get(const std::string& path) const {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(20, 0);
    return c.Get(path.c_str());
  }

  std::shared_ptr<FakeModel> a = std::make_shared<FakeModel>("model-a", 4);
  std::shared_ptr<FakeModel> b = std::make_shared<FakeModel>("model-b", 6);
  std::unique_ptr<EmbedServer> server;
  std::thread thread;
};

size_t openai_dim(const httplib::Result& r) { return body_json(r)["data"][0]["embedding"].size(); }

// The value of one metric line ("NAME{labels} VALUE"), or -1.
double multi_metric(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(ServeMulti, TheModelFieldAndTheRoutePrefixPickTheModel) {
  MultiServer t;
  auto r = t.post("/v1/embeddings", R"({"input":"one two","model":"b"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(openai_dim(r), 6u);
  EXPECT_EQ(body_json(r)["model"], "b");
  r = t.post("/v1/embeddings", R"({"input":"one two","model":"a"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(openai_dim(r), 4u);
  EXPECT_EQ(body_json(r)["model"], "a");
  // None named: the default, the first.
  r = t.post("/v1/embeddings", R"({"input":"one two"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(openai_dim(r), 4u);
  // TEI: the body's "model", or the /models/NAME prefix.
  r = t.post("/embed", R"({"inputs":"one two","model":"b"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0].size(), 6u);
  r = t.post("/models/b/embed", R"({"inputs":["one","two three"]})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[1].size(), 6u);
  r = t.post("/models/a/embed", R"({"inputs":"one"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0].size(), 4u);
  r = t.post("/models/b/v1/embeddings", R"({"input":"one","model":"b"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(openai_dim(r), 6u);
  r = t.post("/models/b/tokenize", R"({"inputs":"one two"})");
  ASSERT_EQ(r->status, 200) << r->body;
  r = t.get("/models/b/info");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model_id"], "/models/b");  // the folder given, as TEI's --model-id
  EXPECT_EQ(body_json(r)["served_model_name"], "b");
  EXPECT_EQ(body_json(r)["dimension"], 6);
  r = t.get("/info");
  EXPECT_EQ(body_json(r)["served_model_name"], "a");
  EXPECT_EQ(t.a->batch_sizes().size(), 3u);  // the three requests to a, none of b's
  EXPECT_EQ(t.b->batch_sizes().size(), 4u);
}

TEST(ServeMulti, AnUnknownModelIs404WithTheServedNames) {
  MultiServer t;
  auto r = t.post("/v1/embeddings", R"({"input":"one","model":"text-embedding-3-small"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  json j = body_json(r);
  EXPECT_EQ(j["error"]["type"], "model_not_found");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("served models: a, b"), std::string::npos) << r->body;
  r = t.post("/models/zzz/embed", R"({"inputs":"one"})");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_json(r)["error_type"], "Validation");  // TEI's shape and error_type
  r = t.get("/models/zzz/health");
  EXPECT_EQ(r->status, 404);
  // The route names one model, the body another.
  r = t.post("/models/a/v1/embeddings", R"({"input":"one","model":"b"})");
  EXPECT_EQ(r->status, 422) << r->body;
  // A prefix on a route that is not a model's is no route.
  EXPECT_EQ(t.get("/models/a/metrics")->status, 404);
  EXPECT_EQ(t.a->batch_sizes().size() + t.b->batch_sizes().size(), 0u);
}

TEST(ServeMulti, OneModelServedTakesAnyModelName) {
  testing::TestServer t;  // as a server of one model always did
  auto r = t.post("/v1/embeddings", R"({"input":"one","model":"text-embedding-3-small"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model"], "fake-model");
  EXPECT_EQ(t.post("/models/fake-model/embed", R"({"inputs":"one"})")->status, 200);
}

TEST(ServeMulti, V1ModelsListsEveryModelTheDefaultFirst) {
  ServiceConfig c;
  c.default_model = "b";
  MultiServer t(c);
  auto r = t.get("/v1/models");
  ASSERT_EQ(r->status, 200) << r->body;
  json data = body_json(r)["data"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0]["id"], "b");
  EXPECT_EQ(data[1]["id"], "a");
  r = t.post("/v1/embeddings", R"({"input":"one"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(openai_dim(r), 6u);  // the default is b
}

TEST(ServeMulti, AModelThatFailedToLoadDoesNotTakeTheOthersDown) {
  MultiServer t({}, true, false);
  t.server->set_load_error("b", "broken folder: no model.onnx");
  auto h = t.get("/health");
  ASSERT_EQ(h->status, 200) << h->body;
  json j = body_json(h);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_NE(j["reason"].get<std::string>().find("model b failed to load: broken folder"), std::string::npos) << h->body;
  ASSERT_EQ(j["models"].size(), 2u);
  EXPECT_EQ(j["models"][0]["model"], "a");
  EXPECT_EQ(j["models"][0]["status"], "ok");
  EXPECT_EQ(j["models"][1]["model"], "b");
  EXPECT_EQ(j["models"][1]["status"], "failed");
  h = t.get("/models/b/health");
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(body_json(h)["status"], "failed");
  EXPECT_EQ(body_json(h)["reason"], "broken folder: no model.onnx");
  EXPECT_EQ(t.get("/models/a/health")->status, 200);
  EXPECT_EQ(t.get("/ready")->status, 200);
  EXPECT_EQ(t.get("/live")->status, 200);
  auto r = t.post("/v1/embeddings", R"({"input":"one","model":"b"})");
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("model 'b' failed to load: broken folder"), std::string::npos) << r->body;
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"one","model":"a"})")->status, 200);
  r = t.get("/v1/models");
  ASSERT_EQ(body_json(r)["data"].size(), 1u);
  EXPECT_EQ(body_json(r)["data"][0]["id"], "a");
  const std::string m = t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_load_failed{model=\"b\"}"), 1) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_ready{model=\"b\"}"), 0);
  EXPECT_EQ(multi_metric(m, "dlrt_model_ready{model=\"a\"}"), 1);
}

TEST(ServeMulti, HealthSaysLoadingUntilEveryModelLoadedAndFailedWhenAllFailed) {
  MultiServer t({}, true, false);
  auto h = t.get("/health");
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(body_json(h)["status"], "loading");
  EXPECT_NE(body_json(h)["reason"].get<std::string>().find("loading 1 of 2 models: b"), std::string::npos) << h->body;
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"one","model":"a"})")->status, 200);  // a serves meanwhile
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"one","model":"b"})")->status, 503);
  t.server->set_model("b", t.b);
  EXPECT_EQ(body_json(t.get("/health"))["status"], "ok");

  MultiServer none({}, false, false);
  none.server->set_load_error("a", "bad a");
  none.server->set_load_error("b", "bad b");
  h = none.get("/health");
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(body_json(h)["status"], "failed");
  EXPECT_EQ(none.get("/live")->status, 503);
  EXPECT_EQ(none.get("/ready")->status, 503);
}

TEST(ServeMulti, PerModelMetricsAddUp) {
  MultiServer t;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(t.post("/v1/embeddings", R"({"input":["one","two"],"model":"a"})")->status, 200);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(t.post("/models/b/embed", R"({"inputs":"one"})")->status, 200);
  ASSERT_EQ(t.post("/v1/embeddings", R"({"input":"one","model":"nope"})")->status, 404);
  const std::string m = t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"a\",route=\"/v1/embeddings\",code=\"200\"}"), 3) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"b\",route=\"/embed\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_inputs_total{model=\"a\"}"), 6);
  EXPECT_EQ(multi_metric(m, "dlrt_model_inputs_total{model=\"b\"}"), 2);
  // The totals keep their names and count every model's.
  EXPECT_EQ(multi_metric(m, "dlrt_inputs_total"), 8);
  EXPECT_EQ(multi_metric(m, "dlrt_http_requests_total{route=\"/v1/embeddings\",code=\"200\"}"), 3);
  EXPECT_EQ(multi_metric(m, "dlrt_http_requests_total{route=\"/embed\",code=\"200\"}"), 2);
  EXPECT_EQ(m.find("model=\"nope\""), std::string::npos);  // an unknown name makes no series
}

TEST(ServeMulti, EachModelHasItsOwnTokenLimit) {
  ServiceConfig c;
  c.max_input_tokens = 8;
  c.models = {{"a", "/models/a", 0}, {"b", "/models/b", 4}};
  MultiServer t(c);
  // 7 tokens with [CLS] and [SEP]; truncation off, so a limit shows as a 413.
  const std::string five_words = R"({"inputs":"one two three four five","truncate":false})";
  EXPECT_EQ(t.post("/models/a/embed", five_words)->status, 200);  // the server's limit, 8
  auto r = t.post("/models/b/embed", five_words);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("the limit is 4"), std::string::npos) << r->body;
  // By default the input is cut to b's 4 tokens (the fake's first value: its token count).
  r = t.post("/models/b/embed", R"({"inputs":"one two three four five","normalize":false})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0][0], 4);
  EXPECT_EQ(body_json(t.get("/models/b/info"))["max_input_length"], 4);
}

TEST(ServeMulti, TheModelsShareThePoolOfRuns) {
  ServiceConfig c;
  c.pool_size = 1;
  MultiServer t(c);
  t.a->close_gate();
  auto first = std::async(std::launch::async, [&] { return t.post("/v1/embeddings", R"({"input":"one","model":"a"})")->status; });
  ASSERT_TRUE(t.a->wait_batches(1));
  auto second = std::async(std::launch::async, [&] { return t.post("/v1/embeddings", R"({"input":"one","model":"b"})")->status; });
  // b's batch waits for the one run slot a holds.
  EXPECT_FALSE(t.b->wait_batches(1, 300));
  t.a->open_gate();
  EXPECT_EQ(first.get(), 200);
  EXPECT_EQ(second.get(), 200);
  EXPECT_EQ(t.b->batch_sizes().size(), 1u);
}

// Models of every kind side by side: a dense (a), a sparse (s), two
// rerankers whose scores have opposite signs (r1: +words, r2: -words), so the
// order of an answer shows which one scored it, and a multi-vector model (m).
struct KindsServer {
  explicit KindsServer(ServiceConfig c = {}) : t(with_models(std::move(c)), true, false) {
    s->sparse = true;
    m->multi_vector = true;
    t.server->set_model("s", s);
    t.server->set_model("r1", r1);
    t.server->set_model("r2", r2);
    t.server->set_model("m", m);
  }
  ~KindsServer() {
    r1->open_gate();
    r2->open_gate();
  }
  static ServiceConfig with_models(ServiceConfig c) {
    c.models = {{"a", "/models/a", 0},
                {"s", "/models/s", 0},
                {"r1", "/models/r1", 0},
                {"r2", "/models/r2", 0},
                {"m", "/models/m", 0}};
    return c;
  }
  std::shared_ptr<FakeModel> s = std::make_shared<FakeModel>("model-s", 6);
  std::shared_ptr<FakeModel> m = std::make_shared<FakeModel>("model-m", 5);
  std::shared_ptr<testing::FakeReranker> r1 = std::make_shared<testing::FakeReranker>("reranker-1", 1.f);
  std::shared_ptr<testing::FakeReranker> r2 = std::make_shared<testing::FakeReranker>("reranker-2", -1.f);
  MultiServer t;
};

TEST(ServeMulti, SparseRoutesPickTheModel) {
  KindsServer k;
  auto r = k.t.post("/embed_sparse", R"({"inputs":["one","two words"],"model":"s"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1][0]["index"], 0);
  EXPECT_EQ(j[1][0]["value"], 4);  // the fake's first value: 4 tokens
  r = k.t.post("/models/s/embed_sparse", R"({"inputs":"one"})");
  ASSERT_EQ(r->status, 200) << r->body;
  r = k.t.post("/v1/embeddings", R"({"input":"one","model":"s","encoding_format":"sparse"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model"], "s");
  EXPECT_EQ(k.s->batch_sizes().size(), 3u);
  // The default (a) is dense: the sparse route refuses it; s refuses the dense one.
  r = k.t.post("/embed_sparse", R"({"inputs":"one"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("dense embedding model"), std::string::npos) << r->body;
  r = k.t.post("/models/s/embed", R"({"inputs":"one"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("sparse (SPLADE) encoder"), std::string::npos) << r->body;
  r = k.t.post("/embed_sparse", R"({"inputs":"one","model":"zzz"})");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_json(r)["error_type"], "Validation");
  EXPECT_EQ(k.t.a->batch_sizes().size(), 0u);
  const std::string m = k.t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"s\",route=\"/embed_sparse\",code=\"200\"}"), 2) << m;
}

TEST(ServeMulti, RerankRoutesPickTheModel) {
  KindsServer k;
  const std::string docs = R"("query":"q","documents":["one","one two three"])";
  auto r = k.t.post("/v1/rerank", "{" + docs + R"(,"model":"r1"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model"], "r1");
  EXPECT_EQ(body_json(r)["results"][0]["index"], 1);  // r1: more words score higher
  r = k.t.post("/v1/rerank", "{" + docs + R"(,"model":"r2"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model"], "r2");
  EXPECT_EQ(body_json(r)["results"][0]["index"], 0);  // r2: fewer
  r = k.t.post("/models/r2/v1/rerank", "{" + docs + "}");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["model"], "r2");
  // TEI's /rerank (raw scores: the logits), by the body's model or the prefix.
  r = k.t.post("/rerank", R"({"query":"q","texts":["one","one two three"],"raw_scores":true,"model":"r1"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0]["index"], 1);
  EXPECT_EQ(body_json(r)[0]["score"], 3);
  r = k.t.post("/models/r2/rerank", R"({"query":"q","texts":["one","one two three"],"raw_scores":true})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0]["score"], -1);
  EXPECT_EQ(k.r1->runs(), 2);
  EXPECT_EQ(k.r2->runs(), 3);
  // The default (a) is an embedding model; an unknown name is a 404 in OpenAI's shape.
  r = k.t.post("/v1/rerank", "{" + docs + "}");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("embedding model"), std::string::npos) << r->body;
  r = k.t.post("/v1/rerank", "{" + docs + R"(,"model":"zzz"})");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_json(r)["error"]["type"], "model_not_found");
  r = k.t.post("/models/r1/v1/rerank", "{" + docs + R"(,"model":"r2"})");
  EXPECT_EQ(r->status, 422) << r->body;
  const std::string m = k.t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"r2\",route=\"/v1/rerank\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"r1\",route=\"/rerank\",code=\"200\"}"), 1) << m;
}

TEST(ServeMulti, RerankRunsTakeASharedRunSlot) {
  ServiceConfig c;
  c.pool_size = 1;
  KindsServer k(c);
  k.t.a->close_gate();
  auto embed = std::async(std::launch::async, [&] { return k.t.post("/embed", R"({"inputs":"one","model":"a"})")->status; });
  ASSERT_TRUE(k.t.a->wait_batches(1));
  auto rerank = std::async(std::launch::async, [&] {
    return k.t.post("/v1/rerank", R"({"query":"q","documents":["one"],"model":"r1"})")->status;
  });
  // The rerank waits for the one run slot a's batch holds.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(k.r1->runs(), 0);
  k.t.a->open_gate();
  EXPECT_EQ(embed.get(), 200);
  EXPECT_EQ(rerank.get(), 200);
  EXPECT_EQ(k.r1->runs(), 1);
}

TEST(ServeMulti, SimilarityPicksTheModel) {
  MultiServer t;
  t.b->similarity = "dot";  // a's cosine is at most 1, b's dot product of these vectors far more
  const std::string inputs = R"("inputs":{"source_sentence":"one two","sentences":["one two","three"]})";
  auto r = t.post("/similarity", "{" + inputs + R"(,"model":"a"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NEAR(body_json(r)[0].get<double>(), 1.0, 1e-6);
  r = t.post("/similarity", "{" + inputs + R"(,"model":"b"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_GT(body_json(r)[0].get<double>(), 1000.0);
  r = t.post("/models/b/similarity", "{" + inputs + "}");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_GT(body_json(r)[0].get<double>(), 1000.0);
  r = t.post("/similarity", "{" + inputs + "}");  // the default, a
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_LE(body_json(r)[1].get<double>(), 1.0);
  EXPECT_EQ(t.a->batch_sizes().size(), 2u);
  EXPECT_EQ(t.b->batch_sizes().size(), 2u);
  r = t.post("/similarity", "{" + inputs + R"(,"model":"zzz"})");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_json(r)["error_type"], "Validation");
  r = t.post("/models/a/similarity", "{" + inputs + R"(,"model":"b"})");
  EXPECT_EQ(r->status, 422) << r->body;
  const std::string m = t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"a\",route=\"/similarity\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"b\",route=\"/similarity\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_inputs_total{model=\"a\"}"), 6);  // the source and 2 sentences, twice
  EXPECT_EQ(multi_metric(m, "dlrt_model_inputs_total{model=\"b\"}"), 6);
  // TEI's counters count the requests of every model (the 404 and 422 as validation failures).
  EXPECT_EQ(multi_metric(m, "te_request_count"), 6);
  EXPECT_EQ(multi_metric(m, "te_request_success"), 4);
  // A "model" that is not a name is refused on every route that reads it.
  for (const char* route : {"/similarity", "/embed_all", "/rerank", "/predict", "/decode", "/embed"}) {
    r = t.post(route, R"({"inputs":"one","query":"q","texts":["one"],"ids":[1],"model":{}})");
    EXPECT_EQ(r->status, 422) << route << " " << r->body;
    EXPECT_NE(r->body.find("'model' must be a string"), std::string::npos) << route << " " << r->body;
  }
}

TEST(ServeMulti, EmbedAllPicksTheModel) {
  KindsServer k;
  auto r = k.t.post("/embed_all", R"({"inputs":["one","one two"],"model":"a"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1].size(), 4u);     // [CLS] one two [SEP]
  EXPECT_EQ(j[1][0].size(), 4u);  // a's vectors: 4 values
  r = k.t.post("/models/m/embed_all", R"({"inputs":"one","is_query":true})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0][0].size(), 5u);  // m's: 5
  r = k.t.post("/embed_all", R"({"inputs":"one","model":"m","is_query":false})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(k.m->token_runs.load(), 2);
  EXPECT_EQ(k.t.a->token_runs.load(), 1);
  // is_query is for multi-vector models; a classifier gives no token vectors.
  r = k.t.post("/embed_all", R"({"inputs":"one","model":"a","is_query":true})");
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(r->body.find("model 'a' is not one"), std::string::npos) << r->body;
  r = k.t.post("/models/r1/embed_all", R"({"inputs":"one"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 'r1' is a sequence classifier"), std::string::npos) << r->body;
  r = k.t.post("/embed_all", R"({"inputs":"one","model":"zzz"})");
  EXPECT_EQ(r->status, 404);
  const std::string m = k.t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"m\",route=\"/embed_all\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"a\",route=\"/embed_all\",code=\"200\"}"), 1) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"a\",route=\"/embed_all\",code=\"422\"}"), 1) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"r1\",route=\"/embed_all\",code=\"400\"}"), 1) << m;
}

TEST(ServeMulti, RerankOfAMultiVectorModelScoresByMaxSim) {
  KindsServer k;
  const std::string texts = R"("query":"one two","texts":["one","two three four"])";
  auto r = k.t.post("/rerank", "{" + texts + R"(,"model":"m"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["score"], 4);  // MaxSim of the fake: the query's 4 tokens
  r = k.t.post("/models/m/rerank", "{" + texts + "}");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[1]["score"], 4);
  EXPECT_EQ(k.m->token_runs.load(), 4);  // the query and the texts, per request
  // The cross-encoder beside it scores as one.
  r = k.t.post("/rerank", "{" + texts + R"(,"raw_scores":true,"model":"r1"})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0]["score"], 3);
  // A multi-vector model refuses the dense and Cohere-style routes, naming itself and its kind.
  r = k.t.post("/v1/rerank", R"({"query":"q","documents":["one"],"model":"m"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 'm' is a multi-vector (ColBERT) model"), std::string::npos) << r->body;
  r = k.t.post("/models/m/embed", R"({"inputs":"one"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 'm' is a multi-vector (ColBERT) model"), std::string::npos) << r->body;
  r = k.t.post("/similarity", R"({"inputs":{"source_sentence":"a","sentences":["b"]},"model":"m"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 'm' is a multi-vector (ColBERT) model"), std::string::npos) << r->body;
  r = k.t.post("/similarity", R"({"inputs":{"source_sentence":"a","sentences":["b"]},"model":"r2"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 'r2' is a sequence classifier"), std::string::npos) << r->body;
  r = k.t.post("/rerank", "{" + texts + R"(,"model":"s"})");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("model 's' is an embedding model"), std::string::npos) << r->body;
  EXPECT_EQ(k.m->batch_sizes().size() + k.t.a->batch_sizes().size() + k.s->batch_sizes().size(), 0u);
  const std::string m = k.t.get("/metrics")->body;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"m\",route=\"/rerank\",code=\"200\"}"), 2) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"m\",route=\"/similarity\",code=\"400\"}"), 1) << m;
  EXPECT_EQ(multi_metric(m, "dlrt_model_requests_total{model=\"r1\",route=\"/rerank\",code=\"200\"}"), 1) << m;
}

TEST(ServeMulti, InfoSaysEachModelsKind) {
  KindsServer k;
  EXPECT_EQ(body_json(k.t.get("/info"))["model_kind"], "dense");
  EXPECT_EQ(body_json(k.t.get("/models/s/info"))["model_kind"], "sparse");
  EXPECT_EQ(body_json(k.t.get("/models/r1/info"))["model_kind"], "classifier");
  EXPECT_EQ(body_json(k.t.get("/models/m/info"))["model_kind"], "multi_vector");
}

TEST(ServeMulti, DocsIsTheServersAndTakesNoPrefixOpenApiNamesTheModelField) {
  MultiServer t;
  auto r = t.get("/docs");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_EQ(t.get("/models/a/docs")->status, 404);
  r = t.get("/models/a/openapi.json");
  ASSERT_EQ(r->status, 200);
  // The document says the TEI bodies name a model too.
  const json schemas = body_json(r)["components"]["schemas"];
  for (const char* request : {"EmbedRequest", "EmbedAllRequest", "SimilarityRequest", "RerankRequest"})
    EXPECT_TRUE(schemas[request]["properties"].contains("model")) << request;
}

TEST(ServeMulti, EmbedAllAndMaxSimRunsTakeASharedRunSlot) {
  ServiceConfig c;
  c.pool_size = 1;
  KindsServer k(c);
  k.t.a->close_gate();
  auto embed = std::async(std::launch::async, [&] {
    return k.t.post("/embed", R"({"inputs":"one","model":"a"})")->status;
  });
  ASSERT_TRUE(k.t.a->wait_batches(1));
  auto all = std::async(std::launch::async, [&] {
    return k.t.post("/models/m/embed_all", R"({"inputs":"one"})")->status;
  });
  auto maxsim = std::async(std::launch::async, [&] {
    return k.t.post("/models/m/rerank", R"({"query":"q","texts":["one"]})")->status;
  });
  // Both wait for the one run slot a's batch holds.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(k.m->token_runs.load(), 0);
  k.t.a->open_gate();
  EXPECT_EQ(embed.get(), 200);
  EXPECT_EQ(all.get(), 200);
  EXPECT_EQ(maxsim.get(), 200);
  EXPECT_EQ(k.m->token_runs.load(), 3);
}

TEST(RunSlots, HandsSlotsOutFirstComeFirstServed) {
  RunSlots slots(1);
  ASSERT_TRUE(slots.acquire());
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&, i] {
      ASSERT_TRUE(slots.acquire());
      {
        std::lock_guard<std::mutex> lk(mu);
        order.push_back(i);
      }
      slots.release();
    });
    // Each waits before the next arrives.
    for (int k = 0; k < 500 && slots.waiting() < static_cast<size_t>(i + 1); ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_EQ(slots.waiting(), static_cast<size_t>(i + 1));
  }
  slots.release();
  for (auto& w : waiters) w.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(slots.in_use(), 0);
}

TEST(RunSlots, AWaitEndsAtItsDeadline) {
  RunSlots slots(1);
  ASSERT_TRUE(slots.acquire());
  EXPECT_FALSE(slots.acquire(std::chrono::steady_clock::now() + std::chrono::milliseconds(30)));
  EXPECT_EQ(slots.waiting(), 0u);  // the caller that gave up left the line
  slots.release();
  EXPECT_TRUE(slots.acquire(std::chrono::steady_clock::now() + std::chrono::milliseconds(30)));
  slots.release();
}

}  // namespace
}  // namespace dlrt::embed
