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
#include "st_serve_util.h"
#include "test_server.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_router_serve_test {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::StFolderServer;
using testing::st_modules_reference;
using testing::expect_st_cosine;
using testing::st_nonempty_texts;

class ServeStRouter : public ::testing::TestWithParam<int> {};

TEST_P(ServeStRouter, IsQueryPicksTheRouteOnEmbedAndOpenAI) {
  const json ref = st_modules_reference(GetParam());
  StFolderServer s(GetParam(), "router");
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(ref, at);
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
      expect_st_cosine(got[k], ref["folders"]["router"][name][at[k]], std::string("/embed ") + name);
  }
  auto r = s.server.post("/v1/embeddings", json{{"input", texts[0]}, {"is_query", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_st_cosine(body_json(r)["data"][0]["embedding"], ref["folders"]["router"]["query"][at[0]], "/v1/embeddings");
  // Token ids have no route of their own to pick.
  r = s.server.post("/embed", json{{"inputs", json::array({json::array({1, 2, 3})})}, {"is_query", true}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  r = s.server.post("/embed", json{{"inputs", texts[0]}, {"is_query", "yes"}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
}

TEST_P(ServeStRouter, IsQueryPicksTheSparseRoute) {
  const json ref = st_modules_reference(GetParam());
  StFolderServer s(GetParam(), "router_sparse");
  std::vector<size_t> at;
  const json texts = st_nonempty_texts(ref, at);
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
