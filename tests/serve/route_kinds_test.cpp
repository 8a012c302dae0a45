// Every model route against every model kind, generated from the route table
// (serve/route_kinds.h) and checked against the routes /openapi.json lists:
// a route serves a kind (200) or refuses it with one 400 naming the kind.
// The six kinds are the committed test folders, opened as dlrt serve opens
// them (open_model). Also /tokenize on the rerankers: special tokens marked,
// offsets given, add_special_tokens honoured.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "embed/models/kind.h"
#include "embed/serve/route_kinds.h"
#include "kind_folders.h"
#include "test_server.h"

namespace dlrt::embed::route_kinds_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::body_json;

using testing::kind_folders;

ServiceConfig every_kind() {
  ServiceConfig c;
  for (const auto& [name, dir] : kind_folders()) c.models.push_back({name, dir.string(), 0});
  return c;
}

struct KindServer : testing::TestServer {
  KindServer() : TestServer(every_kind(), /*with_model=*/false) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 1;
    for (const auto& [name, dir] : kind_folders()) {
      auto m = open_model(dir.string(), o);
      EXPECT_TRUE(m.ok()) << name << ": " << m.status().to_string();
      if (m.ok()) server->set_model(name, *m);
    }
  }
};

// A well-formed body for each route (the model named by the caller).
json sample_body(const RouteNeeds& r) {
  const std::string path = r.path;
  json b;
  if (path == "/v1/embeddings" || path == "/embeddings") {
    b = {{"input", "hello world"}};
    if (*r.variant) b["encoding_format"] = "sparse";
  } else if (path == "/embed" || path == "/embed_sparse" || path == "/embed_all" || path == "/tokenize") {
    b = {{"inputs", "hello world"}};
  } else if (path == "/similarity") {
    b = {{"inputs", {{"source_sentence", "hello"}, {"sentences", json::array({"world"})}}}};
  } else if (path == "/decode") {
    b = {{"ids", json::array({5, 6})}};
  } else if (path == "/rerank") {
    b = {{"query", "hello"}, {"texts", json::array({"world"})}};
  } else if (path == "/v1/rerank" || path == "/v2/rerank") {
    b = {{"query", "hello"}, {"documents", json::array({"world"})}};
  } else if (path == "/v1/embed" || path == "/v2/embed") {
    b = {{"texts", json::array({"hello world"})}, {"input_type", "search_document"}};
  } else if (path == "/predict") {
    b = {{"inputs", json::array({json::array({"hello", "world"})})}};
  }
  return b;
}

TEST(RouteKinds, FoldersAreDetectedAsTheirKind) {
  for (const auto& [name, dir] : kind_folders()) EXPECT_STREQ(model_kind_name(detect_kind(dir.string())), name.c_str());
  // A model file names its folder's kind too.
  EXPECT_EQ(detect_kind((testing::retrieval_models_dir() / "qwen3_rerank" / "model.onnx").string()), ModelKind::kLlmReranker);
}

TEST(RouteKinds, TableCoversEveryModelRoute) {
  KindServer s;
  auto r = s.get("/openapi.json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const json doc = body_json(r);
  std::set<std::string> posts;
  for (const auto& [path, item] : doc["paths"].items())
    if (item.contains("post")) posts.insert(path);
  ASSERT_FALSE(posts.empty());
  for (const std::string& p : posts) EXPECT_NE(find_route_needs(p), nullptr) << p << " has no row in route_needs()";
  for (const RouteNeeds& n : route_needs()) {
    EXPECT_TRUE(posts.count(n.path)) << n.path << " is in route_needs() but not in /openapi.json";
    EXPECT_FALSE(sample_body(n).is_null()) << n.path << " has no sample body in this test";
  }
}

TEST(RouteKinds, EachRouteServesOrRefusesEachKindByName) {
  KindServer s;
  const std::vector<ModelKind> kinds = {ModelKind::kDense,        ModelKind::kSparse,      ModelKind::kMultiVector,
                                        ModelKind::kCrossEncoder, ModelKind::kLlmReranker, ModelKind::kClip};
  size_t served = 0, refused = 0;
  for (const RouteNeeds& n : route_needs()) {
    for (ModelKind kind : kinds) {
      const std::string name = model_kind_name(kind);
      json body = sample_body(n);
      body["model"] = name;
      auto r = s.post(n.path, body.dump());
      ASSERT_TRUE(r) << n.path << " " << name;
      const std::string what = std::string(n.path) + (*n.variant ? std::string(" ") + n.variant : "") + " on " + name;
      bool has = false;
      for (Capability c : n.any_of) has = has || has_capability(kind, c);
      if (has) {
        EXPECT_EQ(r->status, 200) << what << ": " << r->body;
        ++served;
      } else {
        EXPECT_EQ(r->status, 400) << what << ": " << r->body;
        EXPECT_NE(r->body.find("model '" + name + "' is "), std::string::npos) << what << ": " << r->body;
        EXPECT_NE(r->body.find("(kind " + name + ")"), std::string::npos) << what << ": " << r->body;
        ++refused;
      }
    }
  }
  // The findings of issue 80 among them: /embed_all and /similarity refuse a sparse model.
  EXPECT_FALSE(has_capability(ModelKind::kSparse, Capability::kPerToken));
  EXPECT_FALSE(has_capability(ModelKind::kSparse, Capability::kDense));
  EXPECT_GT(served, 0u);
  EXPECT_GT(refused, 0u);
}

// docs/serve-kinds.md's table of routes x kinds says what the route table does: a
// cell "served..." for a plain route the kind has the capability for, "400"
// otherwise; the sparse variant of a route served only where the cell names
// "encoding_format"; every route of the table has a row.
TEST(RouteKinds, DocsTableMatchesTheRouteTable) {
  std::ifstream f(std::filesystem::path(DLRT_TEST_DIR) / ".." / "docs" / "serve-kinds.md");
  ASSERT_TRUE(f) << "docs/serve-kinds.md";
  const std::vector<ModelKind> kinds = {ModelKind::kDense,        ModelKind::kSparse,      ModelKind::kMultiVector,
                                        ModelKind::kCrossEncoder, ModelKind::kLlmReranker, ModelKind::kClip};
  std::set<std::string> documented;
  std::string line;
  bool in_table = false;
  size_t cells_checked = 0;
  while (std::getline(f, line)) {
    if (line == "| route | `dense` | `sparse` | `multi_vector` | `cross_encoder` | `llm_reranker` | `clip` |") {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| `/", 0) != 0) break;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell.substr(1, cell.size() - 2));
    ASSERT_EQ(cells.size(), kinds.size() + 1) << line;
    for (size_t b = cells[0].find('`'); b != std::string::npos; b = cells[0].find('`', cells[0].find('`', b + 1) + 1)) {
      const std::string path = cells[0].substr(b + 1, cells[0].find('`', b + 1) - b - 1);
      documented.insert(path);
      for (const RouteNeeds& n : route_needs()) {
        if (path != n.path) continue;
        for (size_t k = 0; k < kinds.size(); ++k) {
          const std::string& cell = cells[k + 1];
          bool has = false;
          for (Capability c : n.any_of) has = has || has_capability(kinds[k], c);
          const bool says = *n.variant ? cell.find("encoding_format") != std::string::npos
                                       : cell.rfind("served", 0) == 0;
          EXPECT_EQ(has, says) << path << (*n.variant ? " (sparse)" : "") << " on " << model_kind_name(kinds[k])
                               << ": the table says \"" << cell << "\"";
          if (!*n.variant) {
            EXPECT_TRUE(says || cell == "400" || cell.find("encoding_format") != std::string::npos)
                << path << ": \"" << cell << "\"";
          }
          ++cells_checked;
        }
      }
    }
  }
  for (const RouteNeeds& n : route_needs())
    EXPECT_TRUE(documented.count(n.path)) << n.path << " has no row in docs/serve-kinds.md";
  EXPECT_GE(cells_checked, route_needs().size() * kinds.size());
}

// [(text, special, start, stop)] of /tokenize's first input.
std::vector<std::tuple<std::string, bool, json, json>> tokens_of(const httplib::Result& r) {
  std::vector<std::tuple<std::string, bool, json, json>> out;
  const json body = body_json(r);
  for (const json& t : body[0]) out.emplace_back(t["text"], t["special"], t["start"], t["stop"]);
  return out;
}

TEST(RouteKinds, TokenizeOnACrossEncoderMarksSpecialTokensWithOffsets) {
  KindServer s;
  for (const char* model : {"dense", "cross_encoder"}) {
    auto r = s.post("/tokenize", json{{"model", model}, {"inputs", "hello world"}}.dump());
    ASSERT_EQ(r->status, 200) << r->body;
    auto t = tokens_of(r);
    ASSERT_EQ(t.size(), 4u) << model << ": " << r->body;
    EXPECT_EQ(t[0], std::make_tuple(std::string("[CLS]"), true, json(nullptr), json(nullptr))) << model;
    EXPECT_EQ(t[1], std::make_tuple(std::string("hello"), false, json(0), json(5))) << model;
    EXPECT_EQ(t[2], std::make_tuple(std::string("world"), false, json(6), json(11))) << model;
    EXPECT_EQ(t[3], std::make_tuple(std::string("[SEP]"), true, json(nullptr), json(nullptr))) << model;
    r = s.post("/tokenize", json{{"model", model}, {"inputs", "hello world"}, {"add_special_tokens", false}}.dump());
    ASSERT_EQ(r->status, 200) << r->body;
    t = tokens_of(r);
    ASSERT_EQ(t.size(), 2u) << model << ": " << r->body;
    EXPECT_EQ(std::get<0>(t[0]), "hello");
  }
}

TEST(RouteKinds, TokenizeOnAnLlmRerankerGivesTheTextsTokens) {
  KindServer s;
  auto r = s.post("/tokenize", json{{"model", "llm_reranker"}, {"inputs", "hello world"}}.dump());
  ASSERT_EQ(r->status, 200) << r->body;
  const auto t = tokens_of(r);
  ASSERT_FALSE(t.empty());
  std::string joined;
  for (const auto& [text, special, start, stop] : t) {
    EXPECT_FALSE(special) << r->body;
    ASSERT_TRUE(start.is_number() && stop.is_number()) << r->body;
    joined += text;
  }
  EXPECT_EQ(joined, "hello world");  // the text's own tokens, no prompt template
}

}  // namespace
}  // namespace dlrt::embed::route_kinds_test
