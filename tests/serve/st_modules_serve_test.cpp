// dlrt serve with folders sentence-transformers 6.x saved (tests/models/st_modules/):
// POST /embed on a StaticEmbedding folder (no ONNX model) and on a Transformer +
// WeightedLayerPooling + Pooling folder, and POST /embed_sparse on a
// SparseStaticEmbedding folder against that library's torch outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../embed/retrieval_reference.h"
#include "embed/models/embedder.h"
#include "test_server.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_modules_serve_test {
namespace {

using json = nlohmann::json;
using testing::body_json;

std::filesystem::path st6(const std::string& name) {
  return std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules" / ("st6_" + name);
}

struct StServer {
  explicit StServer(const std::string& name) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto e = Embedder::create(st6(name).string(), o);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (e.ok()) server.server->set_model(embedder_model(std::shared_ptr<const Embedder>(std::move(e).value())));
  }
  testing::TestServer server{ServiceConfig{}, /*with_model=*/false};
};

json reference() {
  return json::parse(testing::slurp(std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules" / "st6_reference.json"));
}

// POST /embed on the folder `name` against its reference embeddings (the empty text left out:
// /embed refuses empty inputs; torch gives a static model's a zero vector).
void expect_embed_matches(const std::string& name) {
  const json ref = reference();
  StServer s(name);
  json texts = json::array();
  std::vector<size_t> at;
  for (size_t i = 0; i < ref["texts"].size(); ++i)
    if (!ref["texts"][i].get<std::string>().empty()) texts.push_back(ref["texts"][i]), at.push_back(i);
  auto r = s.server.post("/embed", json{{"inputs", texts}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json got = body_json(r);
  ASSERT_EQ(got.size(), at.size());
  for (size_t k = 0; k < at.size(); ++k) {
    const auto w = ref["folders"][name]["embeddings"][at[k]].get<std::vector<double>>();
    const auto g = got[k].get<std::vector<double>>();
    ASSERT_EQ(g.size(), w.size());
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < w.size(); ++i) ab += g[i] * w[i], aa += g[i] * g[i], bb += w[i] * w[i];
    EXPECT_GE(ab / std::sqrt(aa * bb), 0.99999) << "text " << at[k];
  }
}

TEST(ServeStModules, StaticEmbeddingMatchesTorch) { expect_embed_matches("static"); }

TEST(ServeStModules, WeightedLayerPoolingMatchesTorch) { expect_embed_matches("wlp"); }

TEST(ServeStModules, SparseStaticEmbeddingMatchesTorch) {
  const json ref = reference();
  StServer s("sparse_static");
  auto r = s.server.post("/embed_sparse", json{{"inputs", ref["texts"][0]}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json got = body_json(r);
  ASSERT_EQ(got.size(), 1u) << got.dump();
  std::vector<int64_t> indices;
  std::vector<float> values;
  for (const json& e : got[0]) {
    indices.push_back(e.at("index").get<int64_t>());
    values.push_back(e.at("value").get<float>());
  }
  testing::expect_sparse_row(indices, values, ref["folders"]["sparse_static"]["sparse"][0], "/embed_sparse");
}

}  // namespace
}  // namespace dlrt::embed::st_modules_serve_test
