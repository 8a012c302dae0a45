// dlrt serve with the LLM reranker of tests/models/retrieval (qwen3_rerank):
// POST /v1/rerank (Cohere's and Jina's shapes) and POST /rerank against the
// model card's scores in torch; /v1/rerank's errors; an embedding model refused;
// sentence-transformers 6's LogitScore folders (tests/models/st_modules) on /rerank, without and
// with a chat template (the latter through the reranker_config.json python -m dlrt.reranker_config wrote).
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "embed/models/classifier.h"
#include "embed/models/registry.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TestServer;
using testing::body_json;

const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "retrieval";
const fs::path kStDir = fs::path(DLRT_TEST_DIR) / "models" / "st_modules";

// The options every model here is opened with.
EmbedderOptions rerank_options() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  return o;
}

const json& reference() {
  static const json r = [] {
    std::ifstream f(kDir / "decoder_reference.json");
    return json::parse(f);
  }()["qwen3_rerank"];
  return r;
}

struct RerankServer : TestServer {
  explicit RerankServer(ServiceConfig config = {}) : TestServer(std::move(config), /*with_model=*/false) {
    auto c = Classifier::create((kDir / "qwen3_rerank").string(), rerank_options());
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    if (c.ok()) server->set_model(classifier_model(std::shared_ptr<const Classifier>(std::move(c).value())));
  }
};

// CrossEncoder.predict's scores for the folders of tests/models/st_modules.
const json& st6_reference() {
  static const json r = [] {
    std::ifstream f(kStDir / "st6_reference.json");
    return json::parse(f);
  }();
  return r;
}

// The reference's scores of query q (pairs are query-major) against every document.
std::vector<double> want_scores(size_t q, const char* key = "scores") {
  const size_t n = reference()["documents"].size();
  std::vector<double> out;
  for (size_t d = 0; d < n; ++d) out.push_back(reference()[key][q * n + d].get<double>());
  return out;
}

TEST(ServeLlmRerank, V1RerankAsCohereAndJina) {
  RerankServer s;
  const json& ref = reference();
  for (size_t q = 0; q < ref["queries"].size(); ++q) {
    // Documents as strings and as {"text"} objects, mixed.
    json docs = json::array();
    for (size_t d = 0; d < ref["documents"].size(); ++d)
      docs.push_back(d % 2 ? json{{"text", ref["documents"][d]}} : ref["documents"][d]);
    auto r = s.post("/v1/rerank", json{{"model", "anything"}, {"query", ref["queries"][q]}, {"documents", docs},
                                       {"top_n", 3}, {"return_documents", true}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json body = body_json(r);
    EXPECT_EQ(body["model"], "qwen3_rerank");
    EXPECT_GT(body["usage"]["total_tokens"].get<int>(), 0);
    const json& results = body["results"];
    ASSERT_EQ(results.size(), 3u);
    const std::vector<double> want = want_scores(q);
    double previous = 2;
    for (const json& res : results) {
      const size_t i = res["index"].get<size_t>();
      EXPECT_NEAR(res["relevance_score"].get<double>(), want[i], 1e-4) << "query " << q << " document " << i;
      EXPECT_LE(res["relevance_score"].get<double>(), previous);  // highest first
      previous = res["relevance_score"].get<double>();
      EXPECT_EQ(res["document"]["text"], ref["documents"][i]);
    }
    // The best document is the reference's best.
    EXPECT_EQ(results[0]["index"].get<size_t>(), static_cast<size_t>(std::max_element(want.begin(), want.end()) - want.begin()));
  }
  // Without return_documents and top_n: every document, no text.
  auto all = s.post("/v1/rerank", json{{"query", ref["queries"][0]}, {"documents", ref["documents"]}}.dump());
  ASSERT_TRUE(all);  // no answer (a client timeout) is a failure, not a null dereference
  ASSERT_EQ(all->status, 200) << all->body;
  EXPECT_EQ(body_json(all)["results"].size(), ref["documents"].size());
  EXPECT_FALSE(body_json(all)["results"][0].contains("document"));
}

TEST(ServeLlmRerank, TeiRerankWithInstruction) {
  RerankServer s;
  const json& ref = reference();
  auto r = s.post("/rerank", json{{"query", ref["queries"][1]}, {"texts", ref["documents"]},
                                  {"instruction", ref["custom_instruction"]}, {"return_text", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::vector<double> want = want_scores(1, "scores_custom");
  for (const json& res : body_json(r)) {
    const size_t i = res["index"].get<size_t>();
    EXPECT_NEAR(res["score"].get<double>(), want[i], 1e-4) << i;
    EXPECT_EQ(res["text"], ref["documents"][i]);
  }
  // raw_scores: logit(yes) - logit(no), whose sigmoid is the score.
  auto raw = s.post("/rerank", json{{"query", ref["queries"][0]}, {"texts", {ref["documents"][0]}}, {"raw_scores", true}}.dump());
  ASSERT_TRUE(raw);
  ASSERT_EQ(raw->status, 200) << raw->body;
  const double logit = body_json(raw)[0]["score"].get<double>();
  EXPECT_NEAR(1 / (1 + std::exp(-logit)), want_scores(0)[0], 1e-4);
  // /info calls it a reranker.
  auto info = s.get("/info");
  ASSERT_TRUE(info);
  ASSERT_EQ(info->status, 200);
  EXPECT_TRUE(body_json(info)["model_type"].contains("reranker")) << info->body;
}

TEST(ServeLlmRerank, V1RerankErrors) {
  RerankServer s;
  auto empty = s.post("/v1/rerank", R"({"query": "q", "documents": []})");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 400) << empty->body;  // no documents: a 400, as TEI's Empty
  for (const std::string& bad : {std::string(R"({"documents": ["a"]})"),
                                 std::string(R"({"query": "q", "documents": [3]})"),
                                 std::string(R"({"query": "q", "documents": [{"title": "t"}]})"),
                                 std::string(R"({"query": "q", "documents": ["a"], "top_n": 0})"),
                                 std::string(R"({"query": "q", "documents": ["a"], "top_n": "2"})"),
                                 std::string(R"({"query": "q", "documents": ["a"], "return_documents": "yes"})"),
                                 std::string(R"({"query": "q", "documents": ["a"], "instruction": 5})")}) {
    auto r = s.post("/v1/rerank", bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 422) << bad << " -> " << r->body;
    EXPECT_TRUE(body_json(r)["error"].contains("message")) << r->body;
  }
  auto broken = s.post("/v1/rerank", "{not json");
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->status, 400);
  // Over-long pairs: cut by default on /v1/rerank, a 413 when truncate is false.
  const std::string long_doc(20000, 'a');
  auto cut = s.post("/v1/rerank", json{{"query", "q"}, {"documents", {long_doc}}}.dump());
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->status, 200) << cut->body;
  auto refused = s.post("/v1/rerank", json{{"query", "q"}, {"documents", {long_doc}}, {"truncate", false}}.dump());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 413) << refused->body;
}

TEST(ServeLlmRerank, EmbeddingModelIsRefused) {
  TestServer s;  // the fake embedding model
  auto r = s.post("/v1/rerank", R"({"query": "q", "documents": ["a"]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("embedding model"), std::string::npos) << r->body;
}

// Issue 80: run in chunks of max_batch_size, the scores are the one-batch
// run's; a query that alone fills the model's length is a 413 (tokenized
// once, not once per document).
TEST(ServeLlmRerank, ChunkedRunsScoreAsTheReferenceAndALongQueryIs413) {
  ServiceConfig c;
  c.max_batch_size = 2;
  RerankServer s(c);
  const json& ref = reference();
  auto r =
      s.post("/rerank", json{{"query", ref["queries"][0]}, {"texts", ref["documents"]}, {"raw_scores", false}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::vector<double> want = want_scores(0);
  for (const json& res : body_json(r)) EXPECT_NEAR(res["score"].get<double>(), want[res["index"].get<size_t>()], 1e-4);
  std::string query;
  for (int i = 0; i < 20000; ++i) query += "word ";
  auto long_query = s.post("/rerank", json{{"query", query}, {"texts", json::array({"a", "b"})}}.dump());
  ASSERT_TRUE(long_query);
  EXPECT_EQ(long_query->status, 413) << long_query->body;
  EXPECT_NE(long_query->body.find("the query alone has"), std::string::npos) << long_query->body;
}

// sentence-transformers 6's CrossEncoder over a causal LM (Transformer + LogitScore), opened as
// any folder is (its kind detected): /rerank's scores are CrossEncoder.predict's; it takes no
// instruction (no prompt template).
TEST(ServeLlmRerank, St6LogitScoreFolderMatchesPredict) {
  const json& ref = st6_reference();
  const json& want = ref["folders"]["llm_reranker"];
  const EmbedderOptions o = rerank_options();
  ASSERT_EQ(detect_kind((kStDir / "st6_llm_reranker").string()), ModelKind::kLlmReranker);
  auto m = open_model((kStDir / "st6_llm_reranker").string(), o);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  TestServer s({}, /*with_model=*/false);
  s.server->set_model(*m);
  auto r = s.post("/rerank", json{{"query", want["query"]}, {"texts", ref["texts"]}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_EQ(body_json(r).size(), ref["texts"].size());
  for (const json& res : body_json(r)) {
    const size_t i = res["index"].get<size_t>();
    EXPECT_NEAR(res["score"].get<double>(), want["scores"][i].get<double>(), 1e-4) << "text " << i;
  }
  auto instructed =
      s.post("/rerank", json{{"query", want["query"]}, {"texts", {"a"}}, {"instruction", "judge"}}.dump());
  ASSERT_TRUE(instructed);
  EXPECT_TRUE(instructed->status >= 400 && instructed->status < 500) << instructed->body;
  EXPECT_NE(instructed->body.find("prompt template"), std::string::npos) << instructed->body;
}

// The same kind of folder whose tokenizer has a chat template: refused as sentence-transformers saved
// it, naming the tool; with the reranker_config.json that `python -m dlrt.reranker_config` wrote for it
// (committed beside it, tests/python/test_st_modules.py checks it is the tool's output), /rerank's scores
// are CrossEncoder.predict's, with and without an instruction (predict's prompt=), cut pairs included.
void expect_chat_template_folder(const std::string& name) {
  const json& ref = st6_reference();
  const json& want = ref["folders"][name];
  const EmbedderOptions o = rerank_options();
  auto refused = open_model((kStDir / ("st6_" + name)).string(), o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("python -m dlrt.reranker_config"), std::string::npos)
      << refused.status().to_string();
  const fs::path dir = fs::temp_directory_path() / ("dlrt_serve_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kStDir / ("st6_" + name), dir, fs::copy_options::recursive);
  fs::copy_file(kStDir / ("st6_" + name + ".reranker_config.json"), dir / "reranker_config.json");
  auto m = open_model(dir.string(), o);
  fs::remove_all(dir);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->kind(), ModelKind::kLlmReranker);
  TestServer s({}, /*with_model=*/false);
  s.server->set_model(*m);
  size_t cut = 0;
  for (const json& l : want["lengths"]) cut += l.get<size_t>() == want["max_length"].get<size_t>() ? 1 : 0;
  EXPECT_GE(cut, 3u);  // pairs sentence-transformers cut to the maximum length are among those compared
  for (const char* key : {"scores", "scores_instruction"}) {
    json body{{"query", want["query"]}, {"texts", want["texts"]}, {"truncate", true}};
    if (std::string(key) == "scores_instruction") body["instruction"] = want["instruction"];
    auto r = s.post("/rerank", body.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    ASSERT_EQ(body_json(r).size(), want["texts"].size());
    for (const json& res : body_json(r)) {
      const size_t i = res["index"].get<size_t>();
      EXPECT_NEAR(res["score"].get<double>(), want[key][i].get<double>(), 1e-5) << key << ", text " << i;
    }
  }
}


TEST(ServeLlmRerank, St6ChatTemplateFolderMatchesPredict) { expect_chat_template_folder("llm_reranker_chat"); }

// A Llama CrossEncoder whose tokenizer adds <bos> ... <eos> to a text and whose ChatML-style template starts with
// the BOS token and gives an instruction a system turn of its own (reranker_config.json's "special_tokens": false
// and "instruction_template"): /rerank's scores are predict()'s, with and without an instruction.
TEST(ServeLlmRerank, St6BosChatTemplateFolderMatchesPredict) { expect_chat_template_folder("llm_reranker_bos"); }

}  // namespace
}  // namespace dlrt::embed
