// TEI's root routes as rows of the route table (issue 79, items 1 and 10):
// POST / and POST /invocations answer as the route of the model's kind
// (/embed, /embed_sparse, /embed_all, /rerank, /predict), GET / and GET /ping
// as TEI's health, and GET /api-doc/openapi.json is the OpenAPI document.
// The six kinds are the committed test folders; a classifier of three labels
// is a test double.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "embed/models/kind.h"
#include "kind_folders.h"
#include "test_server.h"

namespace dlrt::embed::tei_root_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::body_json;

using testing::kind_folders;

// A sequence classifier of three labels: logits (1, 3, 2) for every input.
class ThreeLabels final : public EmbedModel, public PairScorer {
 public:
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    Encoding e;
    e.ids = {101, 1000, 102};
    e.type_ids.assign(3, 0);
    e.attention_mask.assign(3, 1);
    if (truncated) *truncated = false;
    return e;
  }
  Result<Encoding> tokenize_pair(std::string_view first, std::string_view, bool* truncated) const override {
    return tokenize(first, truncated);
  }
  Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                   const dlrt::RunOptions&) const override {
    return std::vector<std::vector<float>>(batch.size(), {1.f, 3.f, 2.f});
  }
  ModelKind kind() const override { return ModelKind::kCrossEncoder; }
  std::vector<std::string> labels() const override { return {"neg", "pos", "neutral"}; }
  size_t dimension() const override { return 3; }
  std::string model_name() const override { return "three"; }
  size_t max_length() const override { return 16; }
  dlrt::RunReport placement() const override { return {}; }
};

ServiceConfig six_models() {
  ServiceConfig c;
  for (const auto& [name, dir] : kind_folders()) c.models.push_back({name, dir.string(), 0});
  c.models.push_back({"classifier", "three", 0});
  return c;
}

struct RootServer : testing::TestServer {
  explicit RootServer(ServiceConfig c = six_models()) : TestServer(std::move(c), /*with_model=*/false) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 1;
    for (const auto& [name, dir] : kind_folders()) {
      auto m = open_model(dir.string(), o);
      EXPECT_TRUE(m.ok()) << name << ": " << m.status().to_string();
      if (m.ok()) server->set_model(name, *m);
    }
    server->set_model("classifier", std::make_shared<ThreeLabels>());
  }
};

struct Case {
  const char* model;
  const char* route;  // the route its kind answers POST / as
  json body;
};

std::vector<Case> cases() {
  const json pair = {{"query", "hello"}, {"texts", json::array({"world", "hello there"})}};
  return {{"dense", "/embed", {{"inputs", json::array({"hello world", "a cat"})}}},
          {"sparse", "/embed_sparse", {{"inputs", "hello world"}}},
          {"multi_vector", "/embed_all", {{"inputs", "hello world"}}},
          {"cross_encoder", "/rerank", pair},
          {"llm_reranker", "/rerank", pair},
          {"classifier", "/predict", {{"inputs", "hello world"}}},
          {"clip", "/embed", {{"inputs", json::array({"a photo of a cat"})}}}};
}

TEST(TeiRoot, PostRootAnswersAsTheRouteOfTheModelsKind) {
  RootServer s;
  for (const Case& c : cases()) {
    json named = c.body;
    named["model"] = c.model;
    auto expected = s.post(c.route, named.dump());
    ASSERT_TRUE(expected) << c.model;
    ASSERT_EQ(expected->status, 200) << c.model << " " << c.route << ": " << expected->body;
    for (const char* root : {"/", "/invocations"}) {
      auto r = s.post(root, named.dump());
      ASSERT_TRUE(r) << c.model << " " << root;
      EXPECT_EQ(r->status, 200) << c.model << " " << root << ": " << r->body;
      EXPECT_EQ(r->body, expected->body) << c.model << " " << root << " answers as " << c.route;
    }
    // The model named by the route prefix, as InferenceClient(base_url=".../models/NAME/") posts.
    auto r = s.post(std::string("/models/") + c.model + "/", c.body.dump());
    ASSERT_TRUE(r) << c.model;
    EXPECT_EQ(r->body, expected->body) << c.model << " by its prefix";
  }
  // The classifier's labels by score: pos (3), neutral (2), neg (1).
  auto r = s.post("/", json{{"model", "classifier"}, {"inputs", "x"}}.dump());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0]["label"], "pos") << r->body;
}

TEST(TeiRoot, PostRootErrorsAreTheTargetRoutesInTeisShape) {
  RootServer s;
  auto r = s.post("/", json{{"model", "dense"}}.dump());  // /embed without inputs
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("\"error_type\""), std::string::npos) << r->body;
  // An empty list: /predict's is 422 as TEI's (its parser refuses it; docs/migrate.md), the
  // embedding routes' 400 Empty.
  for (const char* route : {"/", "/predict"}) {
    r = s.post(route, json{{"model", "classifier"}, {"inputs", json::array()}}.dump());
    EXPECT_EQ(r->status, 422) << route << ": " << r->body;
    EXPECT_EQ(body_json(r)["error_type"], "Validation") << route << ": " << r->body;
  }
  r = s.post("/", json{{"model", "dense"}, {"inputs", json::array()}}.dump());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  r = s.post("/", json{{"model", "nope"}, {"inputs", "x"}}.dump());
  EXPECT_EQ(r->status, 404) << r->body;
  r = s.post("/invocations", "{not json");
  EXPECT_EQ(r->status, 400) << r->body;
  r = s.client().Put("/", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405) << r->body;
  EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD, POST");
}

TEST(TeiRoot, GetRootAndPingAnswerAsTeisHealth) {
  ServiceConfig c;
  c.models = {{"a", "a", 0}, {"b", "b", 0}};
  testing::TestServer t(c, /*with_model=*/false);
  // Loading: 503 with TEI's error, for the server and for a model.
  for (const char* path : {"/", "/ping", "/models/a/"}) {
    auto r = t.get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 503) << path << ": " << r->body;
    EXPECT_EQ(body_json(r)["error"], "unhealthy") << path;
  }
  t.server->set_model("a", std::make_shared<testing::FakeModel>());
  EXPECT_EQ(t.get("/models/a/")->status, 200);
  EXPECT_EQ(t.get("/models/b/")->status, 503);
  EXPECT_EQ(t.get("/")->status, 503);  // the server loads while any model does
  t.server->set_model("b", std::make_shared<testing::FakeModel>());
  for (const char* path : {"/", "/ping", "/models/b/"}) {
    auto r = t.get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_EQ(r->body, "") << path;
  }
  EXPECT_EQ(t.get("/models/zzz/")->status, 404);
}

TEST(TeiRoot, TheHealthRoutesAreOpenAndPostRootNeedsTheKey) {
  ServiceConfig c;
  c.api_key = "secret";
  testing::TestServer t(c);
  EXPECT_EQ(t.get("/")->status, 200);
  EXPECT_EQ(t.get("/ping")->status, 200);
  EXPECT_EQ(t.post("/", json{{"inputs", "x"}}.dump())->status, 401);
  EXPECT_EQ(t.post("/invocations", json{{"inputs", "x"}}.dump())->status, 401);
  httplib::Headers auth = {{"Authorization", "Bearer secret"}};
  auto r = t.client().Post("/", auth, json{{"inputs", "x"}}.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(t.get("/api-doc/openapi.json")->status, 401);
}

TEST(TeiRoot, ApiDocPathIsTheOpenApiDocument) {
  testing::TestServer t;
  auto doc = t.get("/openapi.json");
  auto tei = t.get("/api-doc/openapi.json");
  ASSERT_TRUE(doc && tei);
  ASSERT_EQ(tei->status, 200);
  EXPECT_EQ(tei->body, doc->body);
  const json paths = body_json(tei)["paths"];
  EXPECT_TRUE(paths.contains("/api-doc/openapi.json"));
  // As in TEI's document, the root routes are the routes they answer as.
  EXPECT_FALSE(paths.contains("/"));
  EXPECT_FALSE(paths.contains("/invocations"));
  // A 404 lists them.
  auto r = t.get("/nope");
  EXPECT_NE(r->body.find("GET /, POST /"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("POST /invocations"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("GET /ping"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace dlrt::embed::tei_root_test
