// dlrt serve with a multi-vector (ColBERT) model: POST /embed_all for queries
// and documents and /rerank by MaxSim against PyLate's outputs, the routes it
// refuses, and /embed_all of a plain embedding model; sentence-transformers 6.x's
// MultiVectorEncoder folders against encode_query / encode_document and similarity().
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../embed/colbert_test_util.h"
#include "../embed/st_folders.h"
#include "embed/models/multi_vector.h"
#include "embed/models/registry.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::colbert_expected;

std::shared_ptr<const EmbedModel> colbert_model() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto m = MultiVectorEmbedder::create(testing::colbert_dir().string(), o);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (!m.ok()) return nullptr;
  return multi_vector_model(std::shared_ptr<const MultiVectorEmbedder>(std::move(m).value()));
}

TEST(MultiVectorServer, EmbedAllAndMaxSimRerankMatchPyLate) {
  testing::TestServer ts({}, /*with_model=*/false);
  auto model = colbert_model();
  ASSERT_TRUE(model);
  ASSERT_TRUE(warm_up(*model).ok());
  ts.server->set_model(model);
  const json& ex = colbert_expected();
  for (bool query : {true, false}) {
    const json& texts = ex[query ? "queries" : "documents"];
    auto r = ts.post("/embed_all", json({{"inputs", texts}, {"is_query", query}}).dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = body_json(r);
    ASSERT_EQ(j.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i)
      testing::expect_tokens_match(j[i].get<std::vector<std::vector<float>>>(),
                                   ex["default"][query ? "queries" : "documents"][i],
                                   (query ? "query " : "document ") + std::to_string(i));
  }
  for (size_t i = 0; i < ex["queries"].size(); ++i) {
    auto r = ts.post("/rerank", json({{"query", ex["queries"][i]}, {"texts", ex["documents"]}, {"return_text", true}}).dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = body_json(r);
    ASSERT_EQ(j.size(), ex["documents"].size());
    std::vector<float> scores(j.size());
    for (size_t k = 0; k < j.size(); ++k) {
      const size_t index = j[k]["index"].get<size_t>();
      ASSERT_LT(index, scores.size());
      scores[index] = j[k]["score"].get<float>();
      EXPECT_EQ(j[k]["text"], ex["documents"][index]);
      if (k > 0) {
        EXPECT_GE(j[k - 1]["score"].get<float>(), j[k]["score"].get<float>()) << "highest first";
      }
    }
    testing::expect_scores_match(scores, ex["default"]["maxsim"][i], "query " + std::to_string(i));
  }
  // Every text those routes ran is counted, as the embedding routes' are: each
  // /embed_all input, and each /rerank document (its query runs on its own).
  const size_t ran = ex["queries"].size() + ex["documents"].size() * (1 + ex["queries"].size());
  auto m = ts.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("\ndlrt_inputs_total " + std::to_string(ran) + "\n"), std::string::npos) << ran << "\n" << m->body;
  EXPECT_EQ(m->body.find("\ndlrt_tokens_total 0\n"), std::string::npos) << m->body;
}

TEST(MultiVectorServer, RefusesPooledRoutesAndBadFields) {
  testing::TestServer ts({}, /*with_model=*/false);
  auto model = colbert_model();
  ASSERT_TRUE(model);
  ts.server->set_model(model);
  auto r = ts.post("/embed", R"({"inputs": "a cat"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("/embed_all"), std::string::npos) << r->body;
  r = ts.post("/v1/embeddings", R"({"input": "a cat"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  r = ts.post("/embed_all", R"({"inputs": "a cat", "is_query": "yes"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  r = ts.post("/embed_all", R"({"inputs": [1, 2]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  r = ts.post("/embed_all", R"({"inputs": []})");  // TEI's 400 Empty
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  r = ts.post("/rerank", R"({"query": "a cat", "texts": []})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  // Cohere/Jina's /v1/rerank is for cross-encoders and LLM rerankers: it names /rerank.
  r = ts.post("/v1/rerank", R"({"query": "a cat", "documents": ["a dog"]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("MaxSim on POST /rerank"), std::string::npos) << r->body;
  r = ts.post("/similarity", R"({"inputs": {"source_sentence": "a cat", "sentences": ["a dog"]}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("MaxSim with /rerank"), std::string::npos) << r->body;
  // One string in: still a list per input.
  r = ts.post("/embed_all", R"({"inputs": "dogs"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].size(), 12u);  // query_length: a query by default
}

TEST(MultiVectorServer, EmbedAllOfAPlainModel) {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto e = Embedder::create(std::string(DLRT_EMBED_TEST_DATA) + "/tiny_bert", o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::shared_ptr<const Embedder> embedder(std::move(e).value());
  testing::TestServer ts({}, /*with_model=*/false);
  ts.server->set_model(embedder_model(embedder));
  auto r = ts.post("/embed_all", R"({"inputs": ["the cat sat.", "hello"]})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  auto want = embedder->embed_tokens({*embedder->tokenize("the cat sat."), *embedder->tokenize("hello")});
  ASSERT_TRUE(want.ok());
  for (size_t i = 0; i < 2; ++i) testing::expect_tokens_match(j[i].get<std::vector<std::vector<float>>>(), json(want->tokens[i]), "text");
  EXPECT_EQ(j[0].size(), 6u);  // [CLS] the cat sat . [SEP]
  r = ts.post("/embed_all", R"({"inputs": "a cat", "is_query": true})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  // Optional fields given as null are not given (the OpenAPI document says nullable).
  r = ts.post("/embed_all", R"({"inputs": "a cat", "is_query": null, "model": null, "truncate": null, "prompt_name": null})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = ts.post("/rerank", R"({"query": "a cat", "texts": ["a dog"]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
}

// The task prompts ("query: " / "passage: " in one folder) go before the texts as
// encode_query / encode_document put them, unless the request names a prompt.
TEST(MultiVectorServer, St6EncoderEmbedAllAndRerankMatchTheLibrary) {
  const json ref = testing::st_reference(6);
  for (const char* name : {"multi_vector", "multi_vector_min", "multi_vector_mean"}) {
    auto model = open_model(testing::st_folder(6, name).string(), testing::st_cpu_options());
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    testing::TestServer ts({}, /*with_model=*/false);
    ts.server->set_model(*model);
    const json& want = ref["folders"][name];
    for (bool query : {true, false}) {
      const char* task = query ? "query" : "document";
      auto r = ts.post("/embed_all", json({{"inputs", ref["texts"]}, {"is_query", query}}).dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      const json j = body_json(r);
      ASSERT_EQ(j.size(), want[task].size());
      double worst = 1.0;
      for (size_t i = 0; i < j.size(); ++i)
        worst = std::min(worst, testing::expect_st_token_vectors(j[i].get<std::vector<std::vector<float>>>(), want[task][i],
                                                                 std::string("server ") + name + " " + task + " " +
                                                                     std::to_string(i)));
      std::printf("server %s %s: worst per-token cosine 1 - %.1e\n", name, task, 1.0 - worst);
    }
    for (size_t q = 0; q < ref["texts"].size(); ++q) {
      auto r = ts.post("/rerank", json({{"query", ref["texts"][q]}, {"texts", ref["texts"]}}).dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      std::vector<float> scores(ref["texts"].size());
      for (const json& row : body_json(r)) scores.at(row["index"].get<size_t>()) = row["score"].get<float>();
      // similarity(): MaxSim, or MeanMaxSim for the folder naming it (older references hold MaxSim only).
      const json& library = want.contains("similarity") ? want["similarity"] : want["maxsim"];
      testing::expect_scores_match(scores, library[q], std::string(name) + " query " + std::to_string(q));
    }
  }
  // A named prompt replaces the task's: "" (no prompt) changes the query's tokens.
  auto model = open_model(testing::st_folder(6, "multi_vector").string(), testing::st_cpu_options());
  ASSERT_TRUE(model.ok());
  testing::TestServer ts({}, /*with_model=*/false);
  ts.server->set_model(*model);
  auto with = ts.post("/embed_all", R"({"inputs": "search", "is_query": true})");
  auto named = ts.post("/embed_all", R"({"inputs": "search", "is_query": true, "prompt_name": "document"})");
  ASSERT_TRUE(with && named);
  ASSERT_EQ(named->status, 200) << named->body;
  EXPECT_NE(body_json(with)[0][1], body_json(named)[0][1]);
}

}  // namespace
}  // namespace dlrt::embed
