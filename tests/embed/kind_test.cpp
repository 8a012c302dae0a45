// The kind check at the embedding entry points (models/kind.h): the Embedder
// behind `dlrt embed`, Python's dlrt.Embedder and dlrt_embedder_create refuses
// a reranker folder naming its kind, instead of taking its logits for an
// embedding; `dlrt embed --tokens` refuses a sparse (SPLADE) folder, whose
// per-token rows are vocabulary-wide logits.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../tools/cli_test_util.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/models/registry.h"

namespace dlrt::embed::kind_test {
namespace {

namespace fs = std::filesystem;
using dlrt::testing::quote;
using dlrt::testing::run_command;

const fs::path kRetrieval = fs::path(DLRT_TEST_DIR) / "models" / "retrieval";
const fs::path kEmbedData = fs::path(DLRT_EMBED_TEST_DATA);

EmbedderOptions cpu() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 1;
  return o;
}

TEST(EmbedKind, EmbedderRefusesRerankerFoldersByKind) {
  for (const auto& [dir, kind] : {std::pair{kRetrieval / "qwen3_rerank", "llm_reranker"},
                                  std::pair{kEmbedData / "cross_encoder_tiny", "cross_encoder"}}) {
    auto e = Embedder::create(dir.string(), cpu());
    ASSERT_FALSE(e.ok()) << dir;
    EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().to_string();
    EXPECT_NE(e.status().message().find(std::string("(kind ") + kind + ")"), std::string::npos) << e.status().message();
  }
  // The kinds it serves still open.
  for (const fs::path& dir : {kEmbedData / "tiny_bert", kRetrieval / "splade_tiny"}) {
    auto e = Embedder::create(dir.string(), cpu());
    EXPECT_TRUE(e.ok()) << dir << ": " << e.status().to_string();
  }
}

// The registry's rows (one line each in registry.cpp, the row in its kind's
// file): every kind once, by value and by name, and the last row takes any
// folder (a new kind's own value must not alias another's row).
TEST(EmbedKind, RegistryRowsAreDistinctKinds) {
  const std::vector<KindRow>& rows = kind_rows();
  ASSERT_GE(rows.size(), 6u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(&kind_row(rows[i].kind), &rows[i]) << rows[i].name;
    EXPECT_STREQ(model_kind_name(rows[i].kind), rows[i].name);
    for (size_t j = 0; j < i; ++j) EXPECT_STRNE(rows[i].name, rows[j].name);
  }
  EXPECT_EQ(rows.back().kind, ModelKind::kDense);
  EXPECT_TRUE(rows.back().detect("/no/such/folder"));
  EXPECT_EQ(detect_kind((kEmbedData / "tiny_bert").string()), ModelKind::kDense);
  EXPECT_EQ(detect_kind((kRetrieval / "splade_tiny").string()), ModelKind::kSparse);
  EXPECT_EQ(detect_kind((kRetrieval / "colbert_tiny").string()), ModelKind::kMultiVector);
  EXPECT_EQ(detect_kind((kEmbedData / "cross_encoder_tiny").string()), ModelKind::kCrossEncoder);
  EXPECT_EQ(detect_kind((kRetrieval / "qwen3_rerank").string()), ModelKind::kLlmReranker);
  EXPECT_EQ(detect_kind((fs::path(DLRT_TEST_DIR) / "models" / "image" / "clip_tiny").string()), ModelKind::kClip);
}

TEST(EmbedKind, RefusalNamesKindAndWhatItServes) {
  const std::string e = kind_refusal(ModelKind::kSparse, {Capability::kPerToken}, "model 's'", "/embed_all");
  EXPECT_NE(e.find("model 's' is "), std::string::npos) << e;
  EXPECT_NE(e.find("(kind sparse)"), std::string::npos) << e;
  EXPECT_NE(e.find("/embed_all needs"), std::string::npos) << e;
  EXPECT_NE(e.find("/embed_sparse"), std::string::npos) << e;  // where a sparse model is served
  EXPECT_EQ(kind_refusal(ModelKind::kDense, {Capability::kPerToken}, "m", "/embed_all"), "");
  EXPECT_EQ(kind_refusal(ModelKind::kMultiVector, {Capability::kPairScore, Capability::kMaxSim}, "m", "/rerank"), "");
}

std::string embed_cmd(const fs::path& model, const std::string& args) {
  return quote(dlrt::testing::dlrt_binary()) + " embed --model " + quote(model.string()) +
         " --device cpu --threads 1 --quiet " + args + " 2>&1";
}

TEST(EmbedKind, CliRefusesWhatTheKindCannotGive) {
  auto r = run_command(embed_cmd(kRetrieval / "qwen3_rerank", "'some text'"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("(kind llm_reranker)"), std::string::npos) << r.output;
  r = run_command(embed_cmd(kRetrieval / "splade_tiny", "--tokens --json 'some text'"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("(kind sparse)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dlrt embed --tokens needs"), std::string::npos) << r.output;
  r = run_command(embed_cmd(kEmbedData / "tiny_bert", "--tokens --json 'the cat'"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace dlrt::embed::kind_test
