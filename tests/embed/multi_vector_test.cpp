// Multi-vector (ColBERT / PyLate) models against PyLate's own outputs: the
// C++ API (markers, query expansion, skip-list, Dense, normalisation, MaxSim)
// for three settings of the folder, sentence-transformers' token embeddings
// of a plain folder, folder errors, and `dlrt embed` on them.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "colbert_test_util.h"
#include "embed/models/multi_vector.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::colbert_dir;
using testing::colbert_expected;
using testing::colbert_variant;
using testing::expect_scores_match;
using testing::expect_tokens_match;

EmbedderOptions cpu() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  return o;
}

std::vector<std::string> strings(const json& j) { return j.get<std::vector<std::string>>(); }

TEST(MultiVector, FolderIsRecognised) {
  EXPECT_TRUE(is_multi_vector_folder(colbert_dir()));
  EXPECT_TRUE(is_multi_vector_module_type("pylate.models.Dense.Dense"));
  EXPECT_FALSE(is_multi_vector_module_type("sentence_transformers.models.Dense"));
  EXPECT_FALSE(is_multi_vector_module_type("pylate.models.Other"));
  EXPECT_FALSE(is_multi_vector_folder(fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert"));
  // The sentence-embedding path refuses it instead of mean-pooling.
  auto e = Embedder::create(colbert_dir().string(), cpu());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(e.status().message().find("multi-vector"), std::string::npos) << e.status().message();
}

TEST(MultiVector, MatchesPyLateForEachSetting) {
  const json& ex = colbert_expected();
  const auto queries = strings(ex["queries"]), documents = strings(ex["documents"]);
  for (const char* setting : {"default", "no_expansion", "attend_expansion"}) {
    const json& ref = ex[setting];
    fs::path dir = colbert_variant(setting, ref["overrides"]);
    auto m = MultiVectorEmbedder::create(dir.string(), cpu());
    ASSERT_TRUE(m.ok()) << setting << ": " << m.status().to_string();
    EXPECT_EQ((*m)->dimension(), 16u);
    // The ids PyLate feeds the model ([CLS], the marker, the text, [SEP], mask tokens).
    for (size_t i = 0; i < queries.size(); ++i) {
      auto e = (*m)->tokenize(queries[i], true);
      ASSERT_TRUE(e.ok()) << e.status().to_string();
      auto want_ids = ref["query_ids"][i].get<std::vector<int64_t>>();
      auto want_mask = ref["query_attention"][i].get<std::vector<int64_t>>();
      // Without expansion PyLate's ids are padded to the batch; ours are not.
      ASSERT_LE(e->ids.size(), want_ids.size()) << setting;
      for (size_t t = 0; t < want_ids.size(); ++t) {
        if (t < e->ids.size()) {
          EXPECT_EQ(e->ids[t], want_ids[t]) << setting << " query " << i << " position " << t;
          EXPECT_EQ(e->attention_mask[t], want_mask[t]) << setting << " query " << i << " position " << t;
        } else {
          EXPECT_EQ(want_mask[t], 0) << setting << " query " << i << " position " << t;
        }
      }
    }
    for (size_t i = 0; i < documents.size(); ++i) {
      bool truncated = false;
      auto e = (*m)->tokenize(documents[i], false, &truncated);
      ASSERT_TRUE(e.ok());
      EXPECT_EQ(e->ids, ref["document_ids"][i].get<std::vector<int64_t>>()) << setting << " document " << i;
      EXPECT_EQ(truncated, i == 3) << "only the long document is cut at document_length";
    }
    // Mixed lengths in one batch each.
    auto q = (*m)->embed(queries, true);
    auto d = (*m)->embed(documents, false);
    ASSERT_TRUE(q.ok() && d.ok()) << q.status().to_string() << d.status().to_string();
    for (size_t i = 0; i < queries.size(); ++i)
      expect_tokens_match(q->tokens[i], ref["queries"][i], std::string(setting) + " query " + std::to_string(i));
    for (size_t i = 0; i < documents.size(); ++i)
      expect_tokens_match(d->tokens[i], ref["documents"][i], std::string(setting) + " document " + std::to_string(i));
    for (size_t i = 0; i < queries.size(); ++i) {
      std::vector<float> scores;
      for (const auto& doc : d->tokens) scores.push_back(maxsim(q->tokens[i], doc));
      expect_scores_match(scores, ref["maxsim"][i], std::string(setting) + " query " + std::to_string(i));
    }
  }
}

TEST(MultiVector, BatchMatesDoNotChangeVectors) {
  auto m = MultiVectorEmbedder::create(colbert_dir().string(), cpu());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const auto documents = strings(colbert_expected()["documents"]);
  auto together = (*m)->embed(documents, false);
  auto alone = (*m)->embed({documents[2]}, false);
  ASSERT_TRUE(together.ok() && alone.ok());
  expect_tokens_match(alone->tokens[0], json(together->tokens[2]), "document 2 alone");
}

TEST(MultiVector, MaxSimIsTheSimilarityOfAMultiVectorFolderOnly) {
  auto m = MultiVectorEmbedder::create(colbert_dir().string(), cpu());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->base().similarity_fn_name(), "maxsim");
  // A plain folder naming MaxSim: its vectors are one per text, so the name is an error.
  fs::path dir = testing::copy_folder(fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert", testing::colbert_scratch("plain_maxsim"));
  testing::write_file(dir / "config_sentence_transformers.json", R"({"similarity_fn_name": "MaxSim"})");
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidModel) << e.status().to_string();
  EXPECT_NE(e.status().message().find("similarity_fn_name"), std::string::npos) << e.status().message();
}

TEST(MultiVector, PlainFolderTokenEmbeddingsMatchSentenceTransformers) {
  // The same transformer as a plain sentence-transformers folder.
  fs::path dir = testing::copy_folder(colbert_dir(), testing::colbert_scratch("plain"));
  fs::remove(dir / "config_sentence_transformers.json");
  fs::remove_all(dir / "1_Dense");
  testing::write_file(dir / "modules.json",
                      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                          {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])");
  testing::write_file(dir / "1_Pooling" / "config.json", R"({"word_embedding_dimension": 32, "pooling_mode": "mean"})");
  ASSERT_FALSE(is_multi_vector_folder(dir));
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->hidden_size(), 32u);
  const json& ref = colbert_expected()["plain"];
  std::vector<Encoding> batch;
  for (const auto& t : strings(ref["texts"])) batch.push_back(*(*e)->tokenize(t));
  auto r = (*e)->embed_tokens(batch);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->tokens.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i)
    expect_tokens_match(r->tokens[i], ref["token_embeddings"][i], "text " + std::to_string(i));
}

TEST(MultiVector, BadFolderSettingsAreClearErrors) {
  struct Case {
    const char* name;
    json overrides;
    StatusCode code;
    const char* says;
  } cases[] = {
      {"marker", {{"query_prefix", "[NOPE] "}}, StatusCode::kInvalidModel, "not a token"},
      {"length_type", {{"query_length", "long"}}, StatusCode::kInvalidModel, "query_length"},
      {"length_small", {{"document_length", 1}}, StatusCode::kInvalidModel, "document_length"},
      {"length_big", {{"document_length", 4096}}, StatusCode::kInvalidModel, "over the model"},
      {"expansion_type", {{"do_query_expansion", "yes"}}, StatusCode::kInvalidModel, "do_query_expansion"},
      {"skiplist", {{"skiplist_words", "!?"}}, StatusCode::kInvalidModel, "skiplist_words"},
  };
  for (const Case& c : cases) {
    fs::path dir = colbert_variant(std::string("bad_") + c.name, c.overrides);
    auto m = MultiVectorEmbedder::create(dir.string(), cpu());
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_EQ(m.status().code(), c.code) << c.name << ": " << m.status().to_string();
    EXPECT_NE(m.status().message().find(c.says), std::string::npos) << c.name << ": " << m.status().message();
  }
  fs::path dir = colbert_variant("normalize_module", json::object());
  testing::write_file(dir / "modules.json",
                      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                          {"idx":1,"name":"1","path":"1_Dense","type":"pylate.models.Dense.Dense"},
                          {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])");
  auto other = MultiVectorEmbedder::create(dir.string(), cpu());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kUnsupported) << other.status().to_string();
  EXPECT_NE(other.status().message().find("Normalize"), std::string::npos) << other.status().message();

  dir = colbert_variant("residual", json::object());
  testing::write_file(dir / "1_Dense" / "config.json",
                      R"({"in_features": 32, "out_features": 16, "bias": false,
                          "activation_function": "torch.nn.modules.linear.Identity", "use_residual": true})");
  auto m = MultiVectorEmbedder::create(dir.string(), cpu());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported) << m.status().to_string();
}

// ---- dlrt embed ---------------------------------------------------------------

std::string embed_cmd(const fs::path& model, const std::string& args) {
  return dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " + dlrt::testing::quote(model.string()) +
         " --device cpu --threads 2 --quiet " + args;
}

std::string quoted(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) out += " " + dlrt::testing::quote(t);
  return out;
}

TEST(MultiVectorCli, QueriesAndDocumentsMatchPyLate) {
  const json& ex = colbert_expected();
  for (const char* role : {"--query", "--document"}) {
    const bool query = std::string(role) == "--query";
    const auto texts = strings(ex[query ? "queries" : "documents"]);
    auto r = dlrt::testing::run_command(embed_cmd(colbert_dir(), std::string(role) + " --json" + quoted(texts)));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_EQ(j["kind"], "multi_vector");
    EXPECT_EQ(j["dimension"], 16);
    EXPECT_EQ(j["is_query"], query);
    ASSERT_EQ(j["data"].size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i)
      expect_tokens_match(j["data"][i]["embeddings"].get<std::vector<std::vector<float>>>(),
                          ex["default"][query ? "queries" : "documents"][i], std::string(role) + " " + std::to_string(i));
  }
  // Without --query or --document: queries, as PyLate's encode.
  auto r = dlrt::testing::run_command(embed_cmd(colbert_dir(), quoted({strings(ex["queries"])[1]})));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t lines = 0, pos = 0;
  while ((pos = r.output.find('\n', pos)) != std::string::npos) ++lines, ++pos;
  EXPECT_EQ(lines, 12u + 1u) << "query_length vectors and an empty line:\n" << r.output;
}

TEST(MultiVectorCli, TokensOfAPlainFolderAndUsageErrors) {
  const fs::path tiny = fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert";
  auto r = dlrt::testing::run_command(embed_cmd(tiny, "--tokens --json 'the cat sat.'"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["kind"], "token_embeddings");
  EXPECT_EQ(j["data"][0]["embeddings"].size(), 6u);  // [CLS] the cat sat . [SEP]
  EXPECT_EQ(j["data"][0]["embeddings"][0].size(), 8u);

  // On another folder --query picks its query prompt and route (one vector per text), not its tokens.
  r = dlrt::testing::run_command(embed_cmd(tiny, "--tokens --query 'the cat'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("multi-vector"), std::string::npos) << r.output;
  r = dlrt::testing::run_command(embed_cmd(colbert_dir(), "--query --document 'the cat'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = dlrt::testing::run_command(embed_cmd(colbert_dir(), "--npy /dev/null 'the cat'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--json"), std::string::npos) << r.output;
  // A multi-vector folder has no sparse vectors, and --tokens is not --sparse.
  r = dlrt::testing::run_command(embed_cmd(colbert_dir(), "--sparse 'the cat'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("multi-vector (ColBERT) folder: --sparse needs"), std::string::npos) << r.output;
  r = dlrt::testing::run_command(embed_cmd(tiny, "--tokens --sparse 'the cat'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--tokens and --sparse exclude each other"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dlrt::embed
