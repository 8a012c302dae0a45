// dlrt serve with Router folders sentence-transformers 5.x and 6.x saved
// (tests/models/st_modules/st<N>_router*): the request's "is_query" picks the
// query or document route (and prompt) on /embed, /v1/embeddings and
// /embed_sparse, against that library's encode_query / encode_document.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../embed/retrieval_reference.h"
#include "embed/models/registry.h"
#include "test_server.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_router_serve_test {
namespace {

using json = nlohmann::json;
using testing::body_json;

std::filesystem::path st_dir() { return std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules"; }

struct RouterServer {
  RouterServer(int major, const std::string& name) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto m = open_model((st_dir() / ("st" + std::to_string(major) + "_" + name)).string(), o);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    if (m.ok()) server.server->set_model(std::move(m).value());
  }
  testing::TestServer server{ServiceConfig{}, /*with_model=*/false};
};

json reference(int major) {
  return json::parse(testing::slurp(st_dir() / ("st" + std::to_string(major) + "_reference.json")));
}

// The reference's non-empty texts (the routes refuse empty inputs) and their places.
json texts_of(const json& ref, std::vector<size_t>& at) {
  json texts = json::array();
  for (size_t i = 0; i < ref["texts"].size(); ++i)
    if (!ref["texts"][i].get<std::string>().empty()) texts.push_back(ref["texts"][i]), at.push_back(i);
  return texts;
}

void expect_cosine(const json& got, const json& want, const std::string& what) {
  const auto g = got.get<std::vector<double>>();
  const auto w = want.get<std::vector<double>>();
  ASSERT_EQ(g.size(), w.size()) << what;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < w.size(); ++i) ab += g[i] * w[i], aa += g[i] * g[i], bb += w[i] * w[i];
  EXPECT_GE(ab / std::sqrt(aa * bb), 0.99999) << what;
}

class ServeStRouter : public ::testing::TestWithParam<int> {};

TEST_P(ServeStRouter, IsQueryPicksTheRouteOnEmbedAndOpenAI) {
  const json ref = reference(GetParam());
  RouterServer s(GetParam(), "router");
  std::vector<size_t> at;
  const json texts = texts_of(ref, at);
  for (const auto& [field, name] :
       {std::pair{json(true), "query"}, std::pair{json(false), "document"}, std::pair{json(nullptr), "default"}}) {
    json body{{"inputs", texts}};
    if (!field.is_null()) body["is_query"] = field;
    auto r = s.server.post("/embed", body.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json got = body_json(r);
    ASSERT_EQ(got.size(), at.size());
    for (size_t k = 0; k < at.size(); ++k)
      expect_cosine(got[k], ref["folders"]["router"][name][at[k]], std::string("/embed ") + name);
  }
  auto r = s.server.post("/v1/embeddings", json{{"input", texts[0]}, {"is_query", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_cosine(body_json(r)["data"][0]["embedding"], ref["folders"]["router"]["query"][at[0]], "/v1/embeddings");
  // Token ids have no route of their own to pick.
  r = s.server.post("/embed", json{{"inputs", json::array({json::array({1, 2, 3})})}, {"is_query", true}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  r = s.server.post("/embed", json{{"inputs", texts[0]}, {"is_query", "yes"}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
}

TEST_P(ServeStRouter, IsQueryPicksTheSparseRoute) {
  const json ref = reference(GetParam());
  RouterServer s(GetParam(), "router_sparse");
  std::vector<size_t> at;
  const json texts = texts_of(ref, at);
  for (const auto& [is_query, name] : {std::pair{true, "query"}, std::pair{false, "document"}}) {
    auto r = s.server.post("/embed_sparse", json{{"inputs", texts}, {"is_query", is_query}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json got = body_json(r);
    ASSERT_EQ(got.size(), at.size());
    for (size_t k = 0; k < at.size(); ++k) {
      std::vector<int64_t> indices;
      std::vector<float> values;
      for (const json& e : got[k]) {
        indices.push_back(e.at("index").get<int64_t>());
        values.push_back(e.at("value").get<float>());
      }
      testing::expect_sparse_row(indices, values, ref["folders"]["router_sparse"][name][at[k]],
                                 std::string("/embed_sparse ") + name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SentenceTransformers, ServeStRouter, ::testing::Values(5, 6),
                         [](const ::testing::TestParamInfo<int>& i) { return "st" + std::to_string(i.param); });

}  // namespace
}  // namespace dlrt::embed::st_router_serve_test
