// dlrt serve with a sparse (SPLADE) model folder: POST /embed_sparse and
// /v1/embeddings "encoding_format": "sparse" against sentence-transformers'
// SparseEncoder (tests/models/retrieval/splade_tiny's reference), and the
// 4xx answers when a request asks for the other kind of vector.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../embed/retrieval_reference.h"
#include "embed/models/embedder.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::expect_sparse_row;

// A server whose model is the splade_tiny folder (the fake model stays unused).
struct SparseServer {
  SparseServer() {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto e = Embedder::create(testing::splade_tiny().string(), o);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (e.ok()) server.server->set_model(embedder_model(std::shared_ptr<const Embedder>(std::move(e).value())));
  }
  testing::TestServer server{ServiceConfig{}, /*with_model=*/false};
};

void expect_tei_rows(const json& got, const json& want, const std::string& what) {
  ASSERT_TRUE(got.is_array()) << got.dump();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<int64_t> indices;
    std::vector<float> values;
    for (const json& e : got[i]) {
      indices.push_back(e.at("index").get<int64_t>());
      values.push_back(e.at("value").get<float>());
    }
    expect_sparse_row(indices, values, want[i], what + " text " + std::to_string(i));
  }
}

TEST(ServeSparse, EmbedSparseMatchesTheReference) {
  const json ref = testing::splade_reference();
  SparseServer s;
  // All texts in one request (one of them past max_seq_length: truncate).
  auto r = s.server.post("/embed_sparse", json{{"inputs", ref["texts"]}, {"truncate", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_tei_rows(body_json(r), ref["outputs"]["max_relu"], "/embed_sparse");
  // One string gives a list of one; top_k keeps the largest weights.
  r = s.server.post("/embed_sparse", json{{"inputs", ref["texts"][1]}, {"top_k", 5}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_tei_rows(body_json(r), json::array({ref["outputs"]["max_relu_top5"][1]}), "top_k");
  // With "truncate": false, the long text is refused as on /embed (truncation is the default).
  r = s.server.post("/embed_sparse", json{{"inputs", ref["texts"]}, {"truncate", false}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
}

TEST(ServeSparse, OpenAIEmbeddingsWithSparseEncodingFormat) {
  const json ref = testing::splade_reference();
  SparseServer s;
  auto r = s.server.post("/v1/embeddings",
                         json{{"input", {ref["texts"][0], ref["texts"][3]}}, {"encoding_format", "sparse"}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["model"], "splade_tiny");
  EXPECT_EQ(j["usage"]["prompt_tokens"], ref["token_counts"][0].get<int>() + ref["token_counts"][3].get<int>());
  for (size_t k = 0; k < 2; ++k) {
    const json& e = j["data"][k]["embedding"];
    EXPECT_EQ(j["data"][k]["index"], k);
    expect_sparse_row(e["indices"].get<std::vector<int64_t>>(), e["values"].get<std::vector<float>>(),
                      ref["outputs"]["max_relu"][k == 0 ? 0 : 3], "openai");
  }
}

TEST(ServeSparse, TheOtherKindOfVectorIsA4xxNamingTheKind) {
  SparseServer s;
  // Dense requests on the sparse model.
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/embed", R"({"inputs": "a text"})"}, {"/v1/embeddings", R"({"input": "a text"})"}}) {
    auto r = s.server.post(path, body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path << ": " << r->body;
    EXPECT_NE(r->body.find("sparse (SPLADE) encoder"), std::string::npos) << r->body;
  }
  // Fields that do not apply to sparse vectors, and top_k on a dense request.
  for (const auto& [path, body, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"/embed_sparse", R"({"inputs": "a", "normalize": true})", "'normalize'"},
           {"/embed_sparse", R"({"inputs": "a", "top_k": 0})", "'top_k'"},
           {"/v1/embeddings", R"({"input": "a", "encoding_format": "sparse", "dimensions": 4})", "'dimensions'"},
           {"/embed", R"({"inputs": "a", "top_k": 3})", "'top_k'"}}) {
    auto r = s.server.post(path, body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 422) << body << ": " << r->body;
    EXPECT_NE(r->body.find(says), std::string::npos) << r->body;
  }
  auto info = s.server.get("/info");
  ASSERT_TRUE(info);
  json j = body_json(info);
  EXPECT_EQ(j["model_kind"], "sparse");
  EXPECT_EQ(j["model_type"]["embedding"]["pooling"], "splade");

  // Sparse requests on a dense model.
  testing::TestServer dense;
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/embed_sparse", R"({"inputs": "a text"})"}, {"/v1/embeddings", R"({"input": "a", "encoding_format": "sparse"})"}}) {
    auto r = dense.post(path, body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path << ": " << r->body;
    EXPECT_NE(r->body.find("dense embedding model"), std::string::npos) << r->body;
  }
}

}  // namespace
}  // namespace dlrt::embed
