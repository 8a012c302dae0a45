// The decoder-family retrieval models of tests/models/retrieval (made by
// tests/models/make_decoder_models.py) against their families' own outputs in
// torch: Qwen3 embedders as sentence-transformers exports them, through ONNX
// Runtime's optimizer and its model builder (GQA, fp32 and int4), a Gemma3
// embedder with two Dense modules, and a Qwen3 LLM reranker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/classifier.h"
#include "embed_test_util.h"
#include "embed/models/embedder.h"
#include "embed/models/llm_reranker.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "retrieval";

const json& reference() {
  static const json r = json::parse(testing::slurp(kDir / "decoder_reference.json"));
  return r;
}

double cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) ab += a[i] * b[i], aa += double(a[i]) * a[i], bb += b[i] * b[i];
  return a.size() == b.size() ? ab / std::sqrt(aa * bb) : 0.0;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  return cosine(a, std::vector<double>(b.begin(), b.end()));
}

bool listed(const json& list, size_t i) {
  for (const json& v : list)
    if (v.get<size_t>() == i) return true;
  return false;
}

EmbedderOptions cpu_options(size_t max_length = 0) {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  o.max_length = max_length;
  return o;
}

std::unique_ptr<Embedder> open_embedder(const std::string& name) {
  auto e = Embedder::create((kDir / name).string(), cpu_options());
  EXPECT_TRUE(e.ok()) << name << ": " << e.status().to_string();
  return e.ok() ? std::move(e).value() : nullptr;
}

// Each text with `prompt` in front, in one padded batch of mixed lengths and
// alone: the ids are the reference's, every vector within cosine 1e-5 of the
// reference and within 1e-6 of the text's alone vector.
void check_family(const std::string& folder, const json& ref, const json& vectors, const std::string& key,
                  const std::string& prompt) {
  SCOPED_TRACE(folder + " prompt " + key);
  auto e = open_embedder(folder);
  ASSERT_TRUE(e);
  const json& texts = ref["texts"];
  const json& skip = ref["stripped"][key];  // sentence-transformers strips these, dlrt does not
  std::vector<Encoding> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto enc = e->tokenize(prompt + texts[i].get<std::string>());
    ASSERT_TRUE(enc.ok()) << enc.status().to_string();
    if (!listed(skip, i)) {
      EXPECT_EQ(enc->ids, ref["ids"][key][i].get<std::vector<int64_t>>()) << "text " << i;
    }
    batch.push_back(*enc);
  }
  auto together = e->embed_encoded(batch);
  ASSERT_TRUE(together.ok()) << together.status().to_string();
  ASSERT_EQ(together->vectors.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    auto alone = e->embed_encoded({batch[i]});
    ASSERT_TRUE(alone.ok());
    EXPECT_GE(cosine(together->vectors[i], alone->vectors[0]), 1 - 1e-6) << "text " << i << " in a batch";
    if (listed(skip, i)) continue;
    const auto want = vectors[i].get<std::vector<double>>();
    EXPECT_EQ(together->vectors[i].size(), want.size());
    EXPECT_GE(cosine(together->vectors[i], want), 0.99999) << "text " << i;
  }
}

TEST(DecoderEmbedder, Qwen3AsSentenceTransformersExportsIt) {
  const json& ref = reference()["qwen3_embed"];
  auto e = open_embedder("qwen3_embed");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pooling(), Pooling::kLastToken);
  EXPECT_TRUE(e->normalize());
  EXPECT_EQ(e->default_prompt_name(), "");
  // The tokenizer's post-processor appends <|endoftext|>, as Qwen3-Embedding's does.
  auto eos = e->tokenizer().token_to_id("<|endoftext|>");
  ASSERT_TRUE(eos.has_value());
  auto enc = e->tokenize("hello");
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(enc->ids.back(), *eos);
  check_family("qwen3_embed", ref, ref["vectors"]["default"], "default", "");
  check_family("qwen3_embed", ref, ref["vectors"]["query"], "query", e->prompts().at("query"));
  check_family("qwen3_embed", ref, ref["vectors"]["custom"], "custom", "custom: ");
}

TEST(DecoderEmbedder, Qwen3ThroughOrtOptimizerAndModelBuilder) {
  const json& ref = reference()["qwen3_embed"];
  // SimplifiedLayerNormalization fusions; GroupQueryAttention with rotary
  // inside and empty past_key_values inputs (fp32: the torch reference holds).
  check_family("qwen3_embed_fused", ref, ref["vectors"]["default"], "default", "");
  check_family("qwen3_embed_gqa", ref, ref["vectors"]["default"], "default", "");
  // int4 (MatMulNBits) changes the weights: ONNX Runtime's run of the same file is the reference.
  check_family("qwen3_embed_int4", ref, reference()["qwen3_embed_int4"]["vectors"], "default", "");
  for (const char* ops : {"qwen3_embed_fused_ops", "qwen3_embed_gqa_ops", "qwen3_embed_int4_ops"}) {
    const auto list = reference()[ops].get<std::vector<std::string>>();
    const std::string want = std::string(ops) == "qwen3_embed_fused_ops" ? "SimplifiedLayerNormalization"
                             : std::string(ops) == "qwen3_embed_gqa_ops" ? "GroupQueryAttention"
                                                                         : "MatMulNBits";
    EXPECT_NE(std::find(list.begin(), list.end(), want), list.end()) << ops;
  }
}

TEST(DecoderEmbedder, GemmaWithDenseStackAndDefaultPrompt) {
  const json& ref = reference()["dense_embed"];
  auto e = open_embedder("dense_embed");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->dimension(), 24u);  // 32 -> 2_Dense 96 -> 3_Dense 24
  EXPECT_EQ(e->default_prompt_name(), "query");
  // The default prompt is what a caller gets without naming one (as dlrt embed and serve apply it).
  check_family("dense_embed", ref, ref["vectors"]["default"], "default", e->prompts().at("query"));
  check_family("dense_embed", ref, ref["vectors"]["document"], "document", e->prompts().at("document"));
}

TEST(DecoderEmbedder, CliWithPromptName) {
  // dlrt embed --prompt-name query over the model-builder GQA form, in batches of 3.
  const json& ref = reference()["qwen3_embed"];
  const fs::path file = fs::path(DLRT_BINARY_DIR) / "embed_test" / "decoder_texts.txt";
  std::string lines;
  for (const json& t : ref["texts"]) lines += t.get<std::string>() + "\n";
  testing::write_file(file, lines);
  using dlrt::testing::quote;
  auto r = dlrt::testing::run_command(quote(dlrt::testing::dlrt_binary()) + " embed --model " +
                                      quote((kDir / "qwen3_embed_gqa").string()) +
                                      " --device cpu --threads 2 --quiet --json --batch 3 --prompt-name query --file " +
                                      quote(file.string()) + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json out = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.output;
  EXPECT_EQ(out["pooling"], "lasttoken");
  ASSERT_EQ(out["data"].size(), ref["texts"].size());
  for (size_t i = 0; i < ref["texts"].size(); ++i)
    EXPECT_GE(cosine(out["data"][i]["embedding"].get<std::vector<float>>(),
                     ref["vectors"]["query"][i].get<std::vector<double>>()),
              0.99999)
        << "text " << i;
}

// ---- the LLM reranker ---------------------------------------------------------

std::unique_ptr<Classifier> open_reranker(const fs::path& dir, size_t max_length = 0) {
  auto c = Classifier::create(dir.string(), cpu_options(max_length));
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return c.ok() ? std::move(c).value() : nullptr;
}

std::vector<float> sigmoid_scores(const Classifier& c, const json& ref, const std::string& instruction,
                                  const json* want_ids = nullptr) {
  std::vector<Encoding> batch;
  for (size_t i = 0; i < ref["pairs"].size(); ++i) {
    const json& p = ref["pairs"][i];
    auto enc = c.tokenize({p[0].get<std::string>(), p[1].get<std::string>(), true, instruction});
    EXPECT_TRUE(enc.ok()) << enc.status().to_string();
    if (!enc.ok()) return {};
    if (want_ids) {
      EXPECT_EQ(enc->ids, (*want_ids)[i].get<std::vector<int64_t>>()) << "pair " << i;
    }
    batch.push_back(*enc);
  }
  auto r = c.score_encoded(batch);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  std::vector<float> out;
  if (r.ok())
    for (const auto& row : r->logits) out.push_back(static_cast<float>(1 / (1 + std::exp(-double(row.at(0))))));
  return out;
}

void expect_scores(const std::vector<float>& got, const json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i].get<double>(), 1e-4) << "pair " << i;
  // Same order.
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t j = 0; j < got.size(); ++j)
      if (want[i].get<double>() > want[j].get<double>() + 1e-4) {
        EXPECT_GT(got[i], got[j]) << i << " vs " << j;
      }
}

TEST(LlmReranker, Qwen3ScoresAsTheModelCard) {
  const json& ref = reference()["qwen3_rerank"];
  EXPECT_TRUE(is_llm_reranker_folder((kDir / "qwen3_rerank").string()));
  EXPECT_TRUE(is_classifier_folder((kDir / "qwen3_rerank").string()));
  EXPECT_FALSE(is_llm_reranker_folder((kDir / "qwen3_embed").string()));  // modules.json: an embedder
  EXPECT_FALSE(is_classifier_folder((kDir / "qwen3_embed").string()));
  auto c = open_reranker(kDir / "qwen3_rerank");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->is_llm_reranker());
  EXPECT_EQ(c->labels(), std::vector<std::string>{"yes"});
  expect_scores(sigmoid_scores(*c, ref, "", &ref["ids"]), ref["scores"]);
  expect_scores(sigmoid_scores(*c, ref, ref["custom_instruction"]), ref["scores_custom"]);
  // One pair alone gives its score in the batch.
  auto one = c->score({{ref["pairs"][3][0], ref["pairs"][3][1], true, ""}});
  ASSERT_TRUE(one.ok());
  EXPECT_NEAR(1 / (1 + std::exp(-one->logits[0][0])), ref["scores"][3].get<double>(), 1e-4);
  // A single text is not a pair.
  auto single = c->tokenize({"just a text", "", false, ""});
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("pairs"), std::string::npos);
}

TEST(LlmReranker, TruncatesTheMiddleAsTheModelCard) {
  const json& ref = reference()["qwen3_rerank"];
  const size_t max_length = ref["truncated_max_length"].get<size_t>();
  auto c = open_reranker(kDir / "qwen3_rerank", max_length);
  ASSERT_TRUE(c);
  expect_scores(sigmoid_scores(*c, ref, "", &ref["ids_truncated"]), ref["scores_truncated"]);
  bool truncated = false;
  auto enc = c->tokenize({ref["pairs"][1][0], ref["pairs"][1][1], true, ""}, &truncated);
  ASSERT_TRUE(enc.ok());
  EXPECT_TRUE(truncated);
  EXPECT_EQ(enc->ids.size(), max_length);
  // No room past the prompt: a clear error.
  auto tiny = open_reranker(kDir / "qwen3_rerank", 8);
  ASSERT_TRUE(tiny);
  auto none = tiny->tokenize({"q", "d", true, ""});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
}

TEST(LlmReranker, FolderConfigGivesThePrompt) {
  const json& ref = reference()["qwen3_rerank"];
  const fs::path dir = testing::copy_folder(kDir / "qwen3_rerank", fs::path(DLRT_BINARY_DIR) / "embed_test" / "llm_rerank_config");
  testing::write_file(dir / "reranker_config.json",
                      json{{"instruction", ref["custom_instruction"]}}.dump());
  auto c = open_reranker(dir);
  ASSERT_TRUE(c);
  expect_scores(sigmoid_scores(*c, ref, ""), ref["scores_custom"]);  // the folder's instruction is the default
  // Broken configs are refused at load, naming the file.
  for (const std::string& bad : {std::string(R"({"template": "<Query>: {query}"})"), std::string(R"({"prefix": 3})"),
                                 std::string(R"({"yes_token": "no-such-token"})"), std::string("[1]")}) {
    testing::write_file(dir / "reranker_config.json", bad);
    auto broken = Classifier::create(dir.string(), cpu_options());
    ASSERT_FALSE(broken.ok()) << bad;
    EXPECT_EQ(broken.status().code(), StatusCode::kInvalidModel) << bad;
    EXPECT_NE(broken.status().message().find("reranker_config.json"), std::string::npos) << broken.status().message();
  }
  // An embedder's model in a reranker folder: no logits output, said so.
  fs::remove(dir / "reranker_config.json");
  fs::copy_file(kDir / "qwen3_embed" / "onnx" / "model.onnx", dir / "model.onnx", fs::copy_options::overwrite_existing);
  auto no_logits = Classifier::create(dir.string(), cpu_options());
  ASSERT_FALSE(no_logits.ok());
  EXPECT_NE(no_logits.status().message().find("logits"), std::string::npos) << no_logits.status().message();
}

}  // namespace
}  // namespace dlrt::embed
