// dlrt serve with the decoder embedders of tests/models/retrieval (made by
// tests/models/make_decoder_models.py with sentence-transformers): a Qwen3
// embedder (last-token pooling, a query prompt) and a Gemma embedder with a
// Dense stack and a default prompt, on /embed and /v1/embeddings with the
// prompt a request picks (none, "prompt_name", "is_query"), against the
// library's vectors in torch.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../embed/embed_test_util.h"
#include "embed/models/registry.h"
#include "test_server.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::decoder_embed_serve_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::body_json;

const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "retrieval";

struct DecoderServer {
  explicit DecoderServer(const std::string& name) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto m = open_model((kDir / name).string(), o);
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().to_string();
    if (m.ok()) server.server->set_model(std::move(m).value());
  }
  testing::TestServer server{ServiceConfig{}, /*with_model=*/false};
};

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return a.size() == b.size() ? ab / std::sqrt(aa * bb) : 0.0;
}

// The folder's texts but the empty one (the routes refuse empty inputs) in one /embed request with
// `fields`, and on /v1/embeddings too, against the reference's vectors[key].
void expect_route_vectors(const std::string& name, const json& fields, const std::string& key) {
  SCOPED_TRACE(name + " " + fields.dump() + " -> " + key);
  const json ref = json::parse(testing::slurp(kDir / "decoder_reference.json"))[name];
  DecoderServer s(name);
  json texts = json::array();
  std::vector<size_t> at;
  for (size_t i = 0; i < ref["texts"].size(); ++i) {
    if (ref["texts"][i].get<std::string>().empty()) continue;
    texts.push_back(ref["texts"][i]);
    at.push_back(i);
  }
  json tei = fields, openai = fields;
  tei["inputs"] = texts;
  openai["input"] = texts;
  auto r = s.server.post("/embed", tei.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json got = body_json(r);
  ASSERT_EQ(got.size(), at.size());
  r = s.server.post("/v1/embeddings", openai.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json data = body_json(r)["data"];
  ASSERT_EQ(data.size(), at.size());
  for (size_t k = 0; k < at.size(); ++k) {
    const auto want = ref["vectors"][key][at[k]].get<std::vector<double>>();
    EXPECT_GE(cosine(got[k].get<std::vector<double>>(), want), 0.99999) << "/embed text " << at[k];
    EXPECT_GE(cosine(data[k]["embedding"].get<std::vector<double>>(), want), 0.99999) << "/v1/embeddings text " << at[k];
  }
}

TEST(ServeDecoderEmbedder, Qwen3PromptsAsTheRequestPicks) {
  expect_route_vectors("qwen3_embed", json::object(), "default");
  expect_route_vectors("qwen3_embed", {{"prompt_name", "query"}}, "query");
  expect_route_vectors("qwen3_embed", {{"is_query", true}}, "query");
}

TEST(ServeDecoderEmbedder, GemmaDenseStackWithTheDefaultPrompt) {
  expect_route_vectors("dense_embed", json::object(), "default");  // default_prompt_name: query
  expect_route_vectors("dense_embed", {{"prompt_name", "document"}}, "document");
  expect_route_vectors("dense_embed", {{"is_query", false}}, "document");
}

}  // namespace
}  // namespace dlrt::embed::decoder_embed_serve_test
