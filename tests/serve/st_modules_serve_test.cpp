// dlrt serve with folders sentence-transformers 5.x and 6.x saved (tests/models/st_modules/),
// opened as dlrt serve opens them, against that library's torch outputs: POST /embed and
// /v1/embeddings on the dense folder (Transformer + Pooling + Dense + LayerNorm + Dense +
// Normalize), the StaticEmbedding folder (no ONNX model) and the Transformer +
// WeightedLayerPooling + Pooling folder, POST /embed_sparse on the SPLADE and
// SparseStaticEmbedding folders, POST /embed and /v1/embeddings with prompts on 6.x's decoder
// embedder, and POST /rerank on the CrossEncoder folders of 5.3, 5.7 and 6.2.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../embed/retrieval_reference.h"
#include "embed/models/registry.h"
#include "st_serve_util.h"
#include "test_server.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_modules_serve_test {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::StFolderServer;
using testing::st_modules_reference;
using testing::expect_st_cosine;
using testing::st_nonempty_texts;

class ServeStModules : public ::testing::TestWithParam<int> {};

// All the texts in one request to /embed and /v1/embeddings, the long one cut to the folder's
// maximum length as truncation (the default) does.
void expect_dense_routes(int major, const std::string& name) {
  const json ref = st_modules_reference(major);
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(ref, at);
  StFolderServer s(major, name);
  const json& want = ref["folders"][name]["embeddings"];
  auto r = s.server.post("/embed", json{{"inputs", texts}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << name << ": " << r->body;
  const json got = body_json(r);
  ASSERT_EQ(got.size(), at.size()) << name;
  for (size_t k = 0; k < at.size(); ++k)
    expect_st_cosine(got[k], want[at[k]], std::string(name) + " /embed text " + std::to_string(at[k]));
  r = s.server.post("/v1/embeddings", json{{"input", texts}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << name << ": " << r->body;
  const json data = body_json(r)["data"];
  ASSERT_EQ(data.size(), at.size()) << name;
  for (size_t k = 0; k < at.size(); ++k)
    expect_st_cosine(data[k]["embedding"], want[at[k]], std::string(name) + " /v1/embeddings text " + std::to_string(at[k]));
}

TEST_P(ServeStModules, DenseAndStaticMatchTorch) {
  for (const char* name : {"dense", "static"}) expect_dense_routes(GetParam(), name);
}

TEST_P(ServeStModules, WeightedLayerPoolingMatchesTorch) { expect_dense_routes(GetParam(), "wlp"); }

TEST_P(ServeStModules, SparseAndSparseStaticMatchTorch) {
  const json ref = st_modules_reference(GetParam());
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(ref, at);
  for (const char* name : {"sparse", "sparse_static"}) {
    StFolderServer s(GetParam(), name);
    auto r = s.server.post("/embed_sparse", json{{"inputs", texts}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << name << ": " << r->body;
    const json got = body_json(r);
    ASSERT_EQ(got.size(), at.size()) << name;
    for (size_t k = 0; k < at.size(); ++k) {
      std::vector<int64_t> indices;
      std::vector<float> values;
      for (const json& e : got[k]) {
        indices.push_back(e.at("index").get<int64_t>());
        values.push_back(e.at("value").get<float>());
      }
      testing::expect_sparse_row(indices, values, ref["folders"][name]["sparse"][at[k]],
                                 std::string(name) + " /embed_sparse text " + std::to_string(at[k]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SentenceTransformers, ServeStModules, ::testing::Values(5, 6),
                         [](const ::testing::TestParamInfo<int>& i) { return "st" + std::to_string(i.param); });

// A CrossEncoder as each version saves it (6.2 and 5.7: a modules.json of one sequence-classification
// Transformer; 5.3: a plain transformers folder): /rerank scores each text as CrossEncoder.predict does
// (the sigmoid of its one logit).
void expect_rerank(int major, const std::string& name) {
  SCOPED_TRACE("st" + std::to_string(major) + "_" + name);
  const json ref = st_modules_reference(major);
  const json& want = ref["folders"][name];
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(ref, at);
  StFolderServer s(major, name);
  auto r = s.server.post("/rerank", json{{"query", want["query"]}, {"texts", texts}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json got = body_json(r);
  ASSERT_EQ(got.size(), at.size());
  for (const json& res : got) {
    const size_t i = at.at(res["index"].get<size_t>());
    EXPECT_NEAR(res["score"].get<double>(), want["scores"][i].get<double>(), 1e-5) << "text " << i;
  }
}

TEST(ServeStModuleCrossEncoder, St6RerankMatchesPredict) { expect_rerank(6, "cross_encoder"); }

TEST(ServeStModuleCrossEncoder, St5RerankMatchesPredict) {
  expect_rerank(5, "cross_encoder");
  expect_rerank(5, "cross_encoder_plain");
}

// Saved with activation_fn Identity: /rerank and /predict give the logits, as predict() does;
// raw_scores gives them too.
void expect_identity_scores(int major, const std::string& name) {
  expect_rerank(major, name);
  SCOPED_TRACE("st" + std::to_string(major) + "_" + name + " /predict");
  const json ref = st_modules_reference(major);
  const json& want = ref["folders"][name];
  StFolderServer s(major, name);
  for (const bool raw : {false, true}) {
    json inputs = json::array();
    for (const json& t : ref["texts"]) inputs.push_back(json::array({want["query"], t}));
    auto r = s.server.post("/predict", json{{"inputs", inputs}, {"raw_scores", raw}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json got = body_json(r);
    ASSERT_EQ(got.size(), ref["texts"].size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i][0]["score"].get<double>(), want["scores"][i].get<double>(), 1e-5) << "text " << i;
  }
}

TEST(ServeStModuleCrossEncoder, St6IdentityActivationMatchesPredict) { expect_identity_scores(6, "cross_encoder_identity"); }

TEST(ServeStModuleCrossEncoder, St5IdentityActivationMatchesPredict) {
  expect_identity_scores(5, "cross_encoder_identity");
  expect_identity_scores(5, "cross_encoder_identity_plain");
}

// 6.x's Qwen3-Embedding-shaped folder: the prompt a request picks (none, "prompt_name", "is_query"
// true / false) on /embed and /v1/embeddings, against encode / encode_query / encode_document /
// encode(prompt_name="classification").
TEST(ServeStModuleDecoderEmbedder, St6PromptsAsTheRequestPicks) {
  const json want = st_modules_reference(6)["folders"]["decoder_embed"];
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(want, at);
  StFolderServer s(6, "decoder_embed");
  for (const auto& [fields, key] : {std::pair<json, std::string>{json::object(), "default"},
                                    {{{"is_query", true}}, "query"},
                                    {{{"prompt_name", "query"}}, "query"},
                                    {{{"is_query", false}}, "document"},
                                    {{{"prompt_name", "classification"}}, "classification"}}) {
    json tei = fields, openai = fields;
    tei["inputs"] = texts;
    openai["input"] = texts;
    auto r = s.server.post("/embed", tei.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << fields.dump() << ": " << r->body;
    const json got = body_json(r);
    ASSERT_EQ(got.size(), at.size());
    r = s.server.post("/v1/embeddings", openai.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << fields.dump() << ": " << r->body;
    const json data = body_json(r)["data"];
    ASSERT_EQ(data.size(), at.size());
    for (size_t k = 0; k < at.size(); ++k) {
      const std::string what = fields.dump() + " text " + std::to_string(at[k]);
      expect_st_cosine(got[k], want[key][at[k]], "/embed " + what);
      expect_st_cosine(data[k]["embedding"], want[key][at[k]], "/v1/embeddings " + what);
    }
  }
}

}  // namespace
}  // namespace dlrt::embed::st_modules_serve_test
