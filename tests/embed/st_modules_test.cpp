// Folders sentence-transformers 5.x and 6.x saved (tests/models/st_modules/,
// written by tests/models/make_st_modules.py) against that library's torch
// outputs: Transformer + Pooling + Dense + LayerNorm + Normalize, SPLADE,
// StaticEmbedding and SparseStaticEmbedding, Transformer + WeightedLayerPooling
// + Pooling, through the Embedder and `dlrt embed`; 6.x's Qwen3-style decoder embedder with its prompts
// through the Embedder and `dlrt embed`; CrossEncoder folders of 5.3, 5.7 and 6.2 and 6.x's LogitScore
// LLM reranker through `dlrt rerank`; each Dense activation against torch's values; and the refusal of
// a module type dlrt does not implement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/classifier.h"
#include "embed/models/dense.h"
#include "embed/models/embedder.h"
#include "embed/models/modules.h"
#include "dlrt/dtype.h"
#include "embed/models/sparse.h"
#include "embed_test_util.h"
#include "st_folders.h"
#include "retrieval_reference.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_modules_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::st_cpu_options;
using testing::st_folder;
using testing::st_reference;

double cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += a[i] * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(std::max(aa * bb, 1e-300));
}

class StModules : public ::testing::TestWithParam<int> {};

TEST_P(StModules, ModuleTypesAreTheLibrarysAndAllImplemented) {
  const json ref = st_reference(GetParam());
  EXPECT_EQ(ref["sentence_transformers"].get<std::string>().substr(0, 2), std::to_string(GetParam()) + ".");
  for (const auto& [name, outputs] : ref["folders"].items()) {
    if (!outputs.contains("module_types")) continue;  // a 5.x CrossEncoder: no modules.json
    if (name.rfind("llm_reranker", 0) == 0) continue;  // LogitScore: the LLM reranker reads it, not the pipeline
    auto modules = read_modules(st_folder(GetParam(), name));
    ASSERT_TRUE(modules.ok()) << name << ": " << modules.status().to_string();
    ASSERT_EQ(modules->size(), outputs["module_types"].size()) << name;
    for (size_t i = 0; i < modules->size(); ++i)
      EXPECT_EQ((*modules)[i].type_name, outputs["module_types"][i].get<std::string>()) << name;
  }
}

TEST_P(StModules, DenseAndStaticMatchTorch) {
  const json ref = st_reference(GetParam());
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  for (const char* name : {"dense", "static", "wlp"}) {
    SCOPED_TRACE(name);
    auto e = Embedder::create(st_folder(GetParam(), name).string(), st_cpu_options());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ((*e)->kind(), ModelKind::kDense);
    auto got = (*e)->embed(texts);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const json& want = ref["folders"][name]["embeddings"];
    ASSERT_EQ(got->vectors.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const auto w = want[i].get<std::vector<double>>();
      ASSERT_EQ(got->vectors[i].size(), w.size());
      // The empty text of a static model is all zeros in torch and here.
      const bool zero = std::all_of(w.begin(), w.end(), [](double v) { return v == 0; });
      if (zero) {
        for (float v : got->vectors[i]) EXPECT_EQ(v, 0.0f) << "text " << i;
        continue;
      }
      EXPECT_GE(cosine(got->vectors[i], w), 0.99999) << "text " << i;
      for (size_t k = 0; k < w.size(); ++k) EXPECT_NEAR(got->vectors[i][k], w[k], 1e-4) << "text " << i;
    }
  }
}

TEST_P(StModules, SparseAndSparseStaticMatchTorch) {
  const json ref = st_reference(GetParam());
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  for (const char* name : {"sparse", "sparse_static"}) {
    SCOPED_TRACE(name);
    auto e = Embedder::create(st_folder(GetParam(), name).string(), st_cpu_options());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ((*e)->kind(), ModelKind::kSparse);
    auto got = (*e)->encode_sparse(texts);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const json& want = ref["folders"][name]["sparse"];
    ASSERT_EQ(got->vectors.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      testing::expect_sparse_row(got->vectors[i].indices, got->vectors[i].values, want[i], "text " + std::to_string(i));
  }
}

std::string embed_cmd(const fs::path& model, const std::string& args) {
  return dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " + dlrt::testing::quote(model.string()) +
         " --device cpu --threads 2 --quiet " + args;
}

TEST_P(StModules, CliMatchesTorch) {
  const json ref = st_reference(GetParam());
  std::string quoted;
  for (const auto& t : ref["texts"]) quoted += " " + dlrt::testing::quote(t.get<std::string>());
  for (const char* name : {"dense", "static", "wlp"}) {
    auto r = dlrt::testing::run_command(embed_cmd(st_folder(GetParam(), name), "--json" + quoted));
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    const json& want = ref["folders"][name]["embeddings"];
    ASSERT_EQ(j["data"].size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      const auto w = want[i].get<std::vector<double>>();
      if (std::all_of(w.begin(), w.end(), [](double v) { return v == 0; })) continue;
      EXPECT_GE(cosine(j["data"][i]["embedding"].get<std::vector<float>>(), w), 0.99999) << name << " text " << i;
    }
  }
  for (const char* name : {"sparse", "sparse_static"}) {
    auto r = dlrt::testing::run_command(embed_cmd(st_folder(GetParam(), name), "--sparse --json" + quoted));
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    const json& want = ref["folders"][name]["sparse"];
    ASSERT_EQ(j["data"].size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i)
      testing::expect_sparse_row(j["data"][i]["indices"].get<std::vector<int64_t>>(),
                                 j["data"][i]["values"].get<std::vector<float>>(), want[i],
                                 std::string(name) + " cli text " + std::to_string(i));
  }
}

// A CrossEncoder as each version saves it: 6.2 and 5.7 a modules.json of one sequence-classification
// Transformer, 5.3 a plain transformers folder (config.json names the activation); dlrt rerank reads
// each as the cross-encoder its config.json names and scores as predict() does.
void expect_cross_encoder_rerank(int major, const std::string& name) {
  SCOPED_TRACE("st" + std::to_string(major) + "_" + name);
  const json ref = st_reference(major);
  const json& want = ref["folders"][name];
  ASSERT_TRUE(want.contains("scores"));
  std::string args = "--json --query " + dlrt::testing::quote(want["query"].get<std::string>());
  for (const json& t : ref["texts"]) args += " " + dlrt::testing::quote(t.get<std::string>());
  auto r = dlrt::testing::run_command(dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " rerank --model " +
                                      dlrt::testing::quote(st_folder(major, name).string()) +
                                      " --device cpu --threads 2 " + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["kind"], "cross_encoder");
  ASSERT_EQ(j["results"].size(), ref["texts"].size());
  for (const json& res : j["results"]) {
    const size_t i = res["index"].get<size_t>();
    EXPECT_NEAR(res["score"].get<double>(), want["scores"].at(i).get<double>(), 1e-5) << "text " << i;
  }
}

TEST(StModuleCrossEncoder, St6RerankMatchesPredict) { expect_cross_encoder_rerank(6, "cross_encoder"); }

TEST(StModuleCrossEncoder, St5RerankMatchesPredict) {
  expect_cross_encoder_rerank(5, "cross_encoder");        // 5.7: modules.json
  expect_cross_encoder_rerank(5, "cross_encoder_plain");  // 5.3: a plain transformers folder
}

// The same model saved with activation_fn Identity: predict() gives the logits, and so does dlrt rerank.
TEST(StModuleCrossEncoder, St6IdentityActivationRerankMatchesPredict) {
  expect_cross_encoder_rerank(6, "cross_encoder_identity");  // config_sentence_transformers.json
}

TEST(StModuleCrossEncoder, St5IdentityActivationRerankMatchesPredict) {
  expect_cross_encoder_rerank(5, "cross_encoder_identity");        // 5.7: config_sentence_transformers.json
  expect_cross_encoder_rerank(5, "cross_encoder_identity_plain");  // 5.3: config.json's "sentence_transformers"
}

// 6.x's Qwen3-Embedding-shaped folder (last-token pooling, left padding, an appended <|endoftext|>):
// each prompt's token ids are sentence-transformers' and the vectors of one mixed batch are within
// cosine 1e-5 of encode / encode_query / encode_document / encode(prompt_name="classification").
TEST(StModuleDecoderEmbedder, St6PromptsMatchEncode) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["decoder_embed"];
  auto e = Embedder::create(st_folder(6, "decoder_embed").string(), st_cpu_options());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->pooling(), Pooling::kLastToken);
  EXPECT_TRUE((*e)->normalize());
  EXPECT_EQ((*e)->default_prompt_name(), "");
  for (const char* key : {"default", "query", "document", "classification"}) {
    SCOPED_TRACE(key);
    const std::string prompt = want["prompts"].value(key, "");
    if (std::string(key) != "default") {
      EXPECT_EQ((*e)->prompts().at(key), prompt);
    }
    std::vector<Encoding> batch;
    for (size_t i = 0; i < want["texts"].size(); ++i) {
      auto enc = (*e)->tokenize(prompt + want["texts"][i].get<std::string>());
      ASSERT_TRUE(enc.ok()) << enc.status().to_string();
      EXPECT_EQ(enc->ids, want["ids"][key][i].get<std::vector<int64_t>>()) << "text " << i;
      batch.push_back(*enc);
    }
    auto got = (*e)->embed_encoded(batch);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->vectors.size(), want["texts"].size());
    for (size_t i = 0; i < got->vectors.size(); ++i)
      EXPECT_GE(cosine(got->vectors[i], want[key][i].get<std::vector<double>>()), 0.99999) << "text " << i;
  }
}

// The same through dlrt embed: no flag, --query, --document and --prompt-name classification, in batches of 3.
TEST(StModuleDecoderEmbedder, St6CliMatchesEncode) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["decoder_embed"];
  std::string quoted;
  for (const json& t : want["texts"]) quoted += " " + dlrt::testing::quote(t.get<std::string>());
  for (const auto& [flag, key] : {std::pair<std::string, std::string>{"", "default"},
                                  {"--query", "query"},
                                  {"--document", "document"},
                                  {"--prompt-name classification", "classification"}}) {
    auto r = dlrt::testing::run_command(embed_cmd(st_folder(6, "decoder_embed"), "--json --batch 3 " + flag + quoted));
    ASSERT_EQ(r.exit_code, 0) << flag << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_EQ(j["pooling"], "lasttoken");
    ASSERT_EQ(j["data"].size(), want["texts"].size()) << flag;
    for (size_t i = 0; i < want["texts"].size(); ++i)
      EXPECT_GE(cosine(j["data"][i]["embedding"].get<std::vector<float>>(), want[key][i].get<std::vector<double>>()),
                0.99999)
          << flag << " text " << i;
  }
}

// `dlrt rerank` on `dir` with `args` (--json, the query, the texts): an llm_reranker's `count`
// results, each score within `tol` of scores[its index]; `what` names the case in failures.
void expect_llm_rerank(const fs::path& dir, const std::string& args, size_t count, const json& scores, double tol,
                       const std::string& what) {
  auto r = dlrt::testing::run_command(dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " rerank --model " +
                                      dlrt::testing::quote(dir.string()) + " --device cpu --threads 2 " + args);
  ASSERT_EQ(r.exit_code, 0) << what << ": " << r.output;
  const json j = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["kind"], "llm_reranker");
  ASSERT_EQ(j["results"].size(), count);
  for (const json& res : j["results"]) {
    const size_t i = res["index"].get<size_t>();
    EXPECT_NEAR(res["score"].get<double>(), scores[i].get<double>(), tol) << what << ", text " << i;
  }
}

// 6.x's CrossEncoder over a causal LM (Transformer + LogitScore): dlrt rerank serves it as an
// llm_reranker, scoring as predict() does, truncated pairs included.
TEST(StModuleLlmReranker, St6RerankMatchesPredict) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["llm_reranker"];
  std::string args = "--json --query " + dlrt::testing::quote(want["query"].get<std::string>());
  for (const json& t : ref["texts"]) args += " " + dlrt::testing::quote(t.get<std::string>());
  expect_llm_rerank(st_folder(6, "llm_reranker"), args, ref["texts"].size(), want["scores"], 1e-4, "scores");
}

// The LogitScore folder with a chat template, with the reranker_config.json `python -m dlrt.reranker_config`
// wrote for it (committed beside it): dlrt rerank scores as predict(), with and without an instruction
// (predict's prompt=), cut pairs included; and for the variant template whose tail starts with the line
// break after the document (its prompt is the committed one with that line break), which a cut pair keeps.
TEST(StModuleLlmReranker, St6ChatTemplateRerankMatchesPredict) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["llm_reranker_chat"];
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_llm_chat_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "llm_reranker_chat"), dir, fs::copy_options::recursive);
  json config = json::parse(testing::slurp(st_folder(6, "llm_reranker_chat").string() + ".reranker_config.json"));
  std::string variant = config["template"];
  const std::string end = "{document}<|im_end|>";
  ASSERT_NE(variant.find(end), std::string::npos);
  variant.replace(variant.find(end), end.size(), "{document}\n<|im_end|>");
  for (const auto& [key, instruction, tmpl] :
       {std::tuple<std::string, std::string, std::string>{"scores", "", config["template"]},
        {"scores_instruction", want["instruction"], config["template"]},
        {"scores_variant", "", variant}}) {
    config["template"] = tmpl;
    std::ofstream(dir / "reranker_config.json") << config.dump();
    std::string args = "--json --query " + dlrt::testing::quote(want["query"].get<std::string>());
    if (!instruction.empty()) args += " --instruction " + dlrt::testing::quote(instruction);
    for (const json& t : want["texts"]) args += " " + dlrt::testing::quote(t.get<std::string>());
    expect_llm_rerank(dir, args, want["texts"].size(), want[key], 1e-5, key);
  }
  fs::remove_all(dir);
}

// A Llama CrossEncoder whose tokenizer adds <bos> ... <eos> to every text and whose ChatML-style template
// starts with {{ bos_token }} and gives an instruction a system turn of its own: with the tool's
// reranker_config.json ("special_tokens": false, "instruction_template"), dlrt rerank scores as predict(),
// with and without an instruction, cut pairs included.
TEST(StModuleLlmReranker, St6BosChatTemplateRerankMatchesPredict) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["llm_reranker_bos"];
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_llm_bos_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "llm_reranker_bos"), dir, fs::copy_options::recursive);
  fs::copy_file(st_folder(6, "llm_reranker_bos").string() + ".reranker_config.json", dir / "reranker_config.json");
  size_t cut = 0;
  for (const json& l : want["lengths"]) cut += l.get<size_t>() == want["max_length"].get<size_t>() ? 1 : 0;
  EXPECT_GE(cut, 3u);
  for (const std::string key : {"scores", "scores_instruction"}) {
    std::string args = "--json --query " + dlrt::testing::quote(want["query"].get<std::string>());
    if (key == "scores_instruction") args += " --instruction " + dlrt::testing::quote(want["instruction"]);
    for (const json& t : want["texts"]) args += " " + dlrt::testing::quote(t.get<std::string>());
    expect_llm_rerank(dir, args, want["texts"].size(), want[key], 1e-5, key);
  }
  fs::remove_all(dir);
}

// reranker_config.json's keys for a rendered chat template are checked at load: booleans, an
// instruction_template without its placeholders; "special_tokens": false with a post-processor that
// adds a token to every text takes that token off again; a prompt without {instruction} refuses an
// instruction.
TEST(StModuleLlmReranker, RenderedPromptKeysAreChecked) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_llm_keys_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "llm_reranker_chat"), dir, fs::copy_options::recursive);
  const json config = json::parse(testing::slurp(st_folder(6, "llm_reranker_chat").string() + ".reranker_config.json"));
  json bad = config;
  bad["restore_suffix"] = "yes";
  std::ofstream(dir / "reranker_config.json") << bad.dump();
  auto b = Classifier::create(dir.string(), st_cpu_options());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidModel) << b.status().to_string();
  bad = config;
  bad["instruction_template"] = "{query} {document}";
  std::ofstream(dir / "reranker_config.json") << bad.dump();
  auto bt = Classifier::create(dir.string(), st_cpu_options());
  ASSERT_FALSE(bt.ok());
  EXPECT_NE(bt.status().message().find("instruction_template"), std::string::npos) << bt.status().to_string();
  json plain = config;
  plain["template"] = "<Query>: {query}\n<Document>: {document}<|im_end|>";
  std::ofstream(dir / "reranker_config.json") << plain.dump();
  auto p = Classifier::create(dir.string(), st_cpu_options());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_FALSE((*p)->takes_instruction());
  auto refused = (*p)->tokenize(ClassifierInput{"q", "d", true, "judge"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no place for an instruction"), std::string::npos);
  // A post-processor that appends <|endoftext|> to every text: apply_chat_template would not add it.
  std::ofstream(dir / "reranker_config.json") << config.dump();
  auto before = Classifier::create(dir.string(), st_cpu_options());
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  const ClassifierInput pair{"what is it", std::string(400, 'x'), true, ""};
  bool cut_before = false, cut_after = false;
  auto want_ids = (*before)->tokenize(pair, &cut_before);
  ASSERT_TRUE(want_ids.ok()) << want_ids.status().to_string();
  json tok = json::parse(testing::slurp(dir / "tokenizer.json"));
  int64_t eot = -1;
  for (const json& t : tok["added_tokens"])
    if (t["content"] == "<|endoftext|>") eot = t["id"].get<int64_t>();
  ASSERT_GE(eot, 0);
  const json seq = {{"Sequence", {{"id", "A"}, {"type_id", 0}}}};
  const json end = {{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}};
  tok["post_processor"] = {{"type", "TemplateProcessing"},
                           {"single", {seq, end}},
                           {"pair", {seq, end, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}, end}},
                           {"special_tokens", {{"<|endoftext|>", {{"id", "<|endoftext|>"}, {"ids", {eot}},
                                                                   {"tokens", {"<|endoftext|>"}}}}}}};
  std::ofstream(dir / "tokenizer.json") << tok.dump();
  auto s = Classifier::create(dir.string(), st_cpu_options());
  fs::remove_all(dir);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto got_ids = (*s)->tokenize(pair, &cut_after);  // a pair cut to the maximum length: the same ids
  ASSERT_TRUE(got_ids.ok()) << got_ids.status().to_string();
  EXPECT_EQ(got_ids->ids, want_ids->ids);
  EXPECT_TRUE(cut_before);
  EXPECT_TRUE(cut_after);
}

// A copy whose pairs go through a chat template, or whose LogitScore config is broken, is
// refused with the reason.
TEST(StModuleLlmReranker, ChatTemplateAndBrokenConfigAreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_llm_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "llm_reranker"), dir, fs::copy_options::recursive);
  json st = json::parse(testing::slurp(dir / "sentence_bert_config.json"));
  st["modality_config"]["message"] = {{"method", "forward"}, {"method_output_name", "logits"}, {"format", "flat"}};
  std::ofstream(dir / "sentence_bert_config.json") << st.dump();
  auto e = Classifier::create(dir.string(), st_cpu_options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().to_string();
  EXPECT_NE(e.status().message().find("chat template"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("python -m dlrt.reranker_config"), std::string::npos) << e.status().message();
  std::ofstream(dir / "sentence_bert_config.json") << testing::slurp(st_folder(6, "llm_reranker") / "sentence_bert_config.json");
  for (const char* bad : {R"({"false_token_id": 3})", R"({"true_token_id": "yes"})", R"({"true_token_id": -1})"}) {
    std::ofstream(dir / "1_LogitScore" / "config.json") << bad;
    auto b = Classifier::create(dir.string(), st_cpu_options());
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidModel) << bad << ": " << b.status().to_string();
  }
  fs::remove_all(dir);
}

// config_sentence_transformers.json's default prompt: CrossEncoder.predict puts it before each
// pair's query, so a copy with prompt P scores (q, d) as the folder scores (P + q, d).
TEST(StModuleLlmReranker, DefaultPromptGoesBeforeTheQuery) {
  const json ref = st_reference(6);
  const std::string query = ref["folders"]["llm_reranker"]["query"];
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_llm_prompt_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "llm_reranker"), dir, fs::copy_options::recursive);
  json cst = json::parse(testing::slurp(dir / "config_sentence_transformers.json"));
  cst["prompts"] = {{"rank", "Judge the passage: "}};
  cst["default_prompt_name"] = "rank";
  std::ofstream(dir / "config_sentence_transformers.json") << cst.dump();
  auto prompted = Classifier::create(dir.string(), st_cpu_options());
  auto plain = Classifier::create(st_folder(6, "llm_reranker").string(), st_cpu_options());
  fs::remove_all(dir);
  ASSERT_TRUE(prompted.ok()) << prompted.status().to_string();
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  auto a = (*prompted)->tokenize_pairs(query, texts, "", nullptr);
  auto b = (*plain)->tokenize_pairs("Judge the passage: " + query, texts, "", nullptr);
  auto c = (*plain)->tokenize_pairs(query, texts, "", nullptr);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*a)[i].ids, (*b)[i].ids) << i;
    EXPECT_NE((*a)[i].ids, (*c)[i].ids) << i;
    auto one = (*prompted)->tokenize(ClassifierInput{query, texts[i], true, {}});
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one->ids, (*b)[i].ids) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(SentenceTransformers, StModules, ::testing::Values(5, 6),
                         [](const ::testing::TestParamInfo<int>& i) { return "st" + std::to_string(i.param); });

TEST(StModuleActivations, MatchTorch) {
  const json ref = st_reference(6);
  const auto x = ref["activations"]["x"].get<std::vector<float>>();
  size_t checked = 0;
  for (const auto& [name, values] : ref["activations"].items()) {
    if (name == "x") continue;
    fs::path dir = fs::temp_directory_path() / ("dlrt_st_act_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(dir);
    // A 1 -> 1 Dense with weight 1 and bias 0: the activation itself.
    std::ofstream(dir / "config.json") << json{{"in_features", 1}, {"out_features", 1}, {"bias", false},
                                               {"activation_function", "torch.nn.modules.activation." + name}}.dump();
    const std::string header = R"({"linear.weight":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}})";
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    const float one = 1.0f;
    file += header + std::string(reinterpret_cast<const char*>(&one), 4);
    std::ofstream(dir / "model.safetensors", std::ios::binary) << file;
    auto d = DenseLayer::load(dir);
    fs::remove_all(dir);
    ASSERT_TRUE(d.ok()) << name << ": " << d.status().to_string();
    const auto want = values.get<std::vector<double>>();
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(d->apply({x[i]})[0], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << name << " at " << x[i];
    ++checked;
  }
  EXPECT_GE(checked, 19u);
}

// Replaces `path` by renaming a new file over it: a loaded static table maps the
// old file, which truncating it in place would take from under the mapping.
void replace_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path.string() + ".new", std::ios::binary) << bytes;
  fs::rename(path.string() + ".new", path);
}

// A .safetensors file of one tensor `name` ([rows, cols], or [rows] when cols is 0) of `dtype`.
std::string safetensors(const std::string& name, const std::string& dtype, size_t rows, size_t cols,
                        const std::string& data) {
  const std::string shape = cols ? "[" + std::to_string(rows) + "," + std::to_string(cols) + "]" : "[" + std::to_string(rows) + "]";
  const std::string header = "{\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
                             ",\"data_offsets\":[0," + std::to_string(data.size()) + "]}}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return file + header + data;
}

// The static table as float16 gives the float32 table's vectors within
// float16's precision; a broken or mismatched table is InvalidModel, not a crash.
TEST(StModuleStatic, Float16TableAndBrokenTables) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_static_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "static"), dir, fs::copy_options::recursive);
  auto f32 = Embedder::create(dir.string(), st_cpu_options());
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  const std::string bytes = testing::slurp(dir / "model.safetensors");
  const uint64_t n = static_cast<uint8_t>(bytes[0]) | static_cast<uint64_t>(static_cast<uint8_t>(bytes[1])) << 8;
  const json header = json::parse(bytes.substr(8, n));
  const auto shape = header["embedding.weight"]["shape"].get<std::vector<size_t>>();
  std::string half;
  for (size_t i = 0; i < shape[0] * shape[1]; ++i) {
    float f;
    std::memcpy(&f, bytes.data() + 8 + n + 4 * i, 4);
    const uint16_t h = Float16::from_float(f);
    half.append(reinterpret_cast<const char*>(&h), 2);
  }
  replace_file(dir / "model.safetensors", safetensors("embedding.weight", "F16", shape[0], shape[1], half));
  auto f16 = Embedder::create(dir.string(), st_cpu_options());
  ASSERT_TRUE(f16.ok()) << f16.status().to_string();
  const std::vector<std::string> texts = {"the quick brown fox", "search"};
  auto a = (*f32)->embed(texts), b = (*f16)->embed(texts);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_GE(cosine(a->vectors[i], std::vector<double>(b->vectors[i].begin(), b->vectors[i].end())), 0.9999);

  const struct {
    const char* what;
    std::string file;
  } broken[] = {
      {"no embedding.weight", safetensors("other", "F32", 2, 2, std::string(16, '\0'))},
      {"too few rows", safetensors("embedding.weight", "F32", 2, 24, std::string(2 * 24 * 4, '\0'))},
      {"a 1-D table", safetensors("embedding.weight", "F32", 8, 0, std::string(32, '\0'))},
      {"past the end", safetensors("embedding.weight", "F32", shape[0], shape[1], std::string(64, '\0'))},
      {"a truncated header", std::string("\xff\x00\x00\x00\x00\x00\x00\x00{", 9)},
  };
  for (const auto& c : broken) {
    replace_file(dir / "model.safetensors", c.file);
    auto e = Embedder::create(dir.string(), st_cpu_options());
    ASSERT_FALSE(e.ok()) << c.what;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidModel) << c.what << ": " << e.status().to_string();
  }
  fs::remove_all(dir);
}

// A copy of st6_wlp in a temporary folder, for tests that change it.
struct WlpCopy {
  WlpCopy() {
    fs::remove_all(dir);
    fs::copy(st_folder(6, "wlp"), dir, fs::copy_options::recursive);
  }
  ~WlpCopy() { fs::remove_all(dir); }
  void set_json(const std::string& file, const std::string& key, const json& value) const {
    json j = json::parse(testing::slurp(dir / file));
    j[key] = value;
    replace_file(dir / file, j.dump());
  }
  Status open() const {
    auto e = Embedder::create(dir.string(), st_cpu_options());
    return e.ok() ? Status::Ok() : e.status();
  }
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_wlp_" + std::to_string(::getpid()));
};

// Without output_hidden_states in the Transformer's config.json,
// sentence-transformers 6.x runs the folder as if the module were not there;
// so does dlrt (the reference's vectors of that folder).
TEST(StModuleWeightedLayerPooling, WithoutOutputHiddenStatesTheModuleIsSkipped) {
  const json ref = st_reference(6);
  const json& want = ref["folders"]["wlp"];
  WlpCopy copy;
  copy.set_json("config.json", "output_hidden_states", false);
  auto e = Embedder::create(copy.dir.string(), st_cpu_options());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto got = (*e)->embed(ref["texts"].get<std::vector<std::string>>());
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  double closest = -1;  // to the layer average's vectors
  for (size_t i = 0; i < got->vectors.size(); ++i) {
    EXPECT_GE(cosine(got->vectors[i], want["embeddings_no_hidden_states"][i].get<std::vector<double>>()), 0.99999)
        << "text " << i;
    closest = std::max(closest, cosine(got->vectors[i], want["embeddings"][i].get<std::vector<double>>()));
  }
  EXPECT_LT(closest, 0.999) << "the layer average and the last layer should differ on every text of this model";
}

// A graph without the per-layer outputs (st6_dense's: last_hidden_state only) is refused, saying how to
// export one; broken module files, and outputs that disagree with the module's config, are kInvalidModel.
TEST(StModuleWeightedLayerPooling, MissingHiddenStatesAndBrokenModulesAreRefused) {
  {
    WlpCopy copy;
    fs::copy_file(st_folder(6, "dense") / "onnx" / "model.onnx", copy.dir / "onnx" / "model.onnx",
                  fs::copy_options::overwrite_existing);
    const Status s = copy.open();
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    for (const char* says : {"hidden_states.0 .. hidden_states.3", "output_hidden_states", "torch.onnx.export"})
      EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
  }
  const std::string module = "1_WeightedLayerPooling";
  const struct {
    const char* what;
    const char* key;  // in the module's config.json, or none
    json value;
    std::string weights;  // replaces its model.safetensors, or none
  } broken[] = {
      {"num_hidden_layers past the graph's outputs", "num_hidden_layers", 4,
       safetensors("layer_weights", "F32", 4, 0, std::string(16, '\x3f'))},
      {"fewer hidden states than the graph's", "num_hidden_layers", 2,
       safetensors("layer_weights", "F32", 2, 0, std::string(8, '\x3f'))},
      {"layer_weights of the wrong length", "layer_start", 2, ""},
      {"layer_start past the last layer", "layer_start", 5, ""},
      {"layer_start not an integer", "layer_start", "1", ""},
      {"no layer_weights", nullptr, nullptr, safetensors("weights", "F32", 3, 0, std::string(12, '\x3f'))},
      {"weights summing to 0", nullptr, nullptr, safetensors("layer_weights", "F32", 3, 0, std::string(12, '\0'))},
  };
  for (const auto& c : broken) {
    WlpCopy copy;
    if (c.key) copy.set_json(module + "/config.json", c.key, c.value);
    if (!c.weights.empty()) replace_file(copy.dir / module / "model.safetensors", c.weights);
    const Status s = copy.open();
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << c.what << ": " << s.to_string();
  }
  {
    WlpCopy copy;
    fs::remove(copy.dir / module / "model.safetensors");
    EXPECT_EQ(copy.open().code(), StatusCode::kNotFound);
  }
  {  // After the Pooling: the pooling has already read the token vectors.
    WlpCopy copy;
    json modules = json::parse(testing::slurp(copy.dir / "modules.json"));
    std::swap(modules[1]["type"], modules[2]["type"]);
    std::swap(modules[1]["path"], modules[2]["path"]);
    replace_file(copy.dir / "modules.json", modules.dump());
    const Status s = copy.open();
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.to_string();
    EXPECT_NE(s.message().find("WeightedLayerPooling"), std::string::npos) << s.message();
  }
}

TEST(StModuleRefusals, AnUnimplementedTypeIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_refuse_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "dense"), dir, fs::copy_options::recursive);
  for (const char* type : {"sentence_transformers.sentence_transformer.modules.cnn.CNN",
                           "sentence_transformers.sentence_transformer.modules.lstm.LSTM",
                           "sentence_transformers.cross_encoder.modules.logit_score.LogitScore"}) {
    json modules = json::parse(testing::slurp(st_folder(6, "dense") / "modules.json"));
    modules[1]["type"] = type;
    std::ofstream(dir / "modules.json") << modules.dump();
    auto e = Embedder::create(dir.string(), st_cpu_options());
    ASSERT_FALSE(e.ok()) << type;
    EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().to_string();
    EXPECT_NE(e.status().message().find(type), std::string::npos) << e.status().message();
  }
  // A 6.x MultiVectorEncoder (its model_type) is the multi-vector kind: the sentence-embedding API refuses it
  // by that kind, never pooling its tokens (st_multi_vector_test.cpp runs it).
  std::ofstream(dir / "modules.json") << testing::slurp(st_folder(6, "dense") / "modules.json");
  std::ofstream(dir / "config_sentence_transformers.json") << R"({"model_type": "MultiVectorEncoder"})";
  auto e = Embedder::create(dir.string(), st_cpu_options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().to_string();
  EXPECT_NE(e.status().message().find("multi_vector"), std::string::npos) << e.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlrt::embed::st_modules_test
