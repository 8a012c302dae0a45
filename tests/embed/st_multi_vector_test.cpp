// sentence-transformers 6.x MultiVectorEncoder folders (tests/models/st_modules/st6_multi_vector*,
// written by make_st_modules.py) against the library's encode_query / encode_document
// and similarity (MaxSim, MeanMaxSim): through open_model, `dlrt embed --query / --document` and `dlrt rerank`;
// the settings dlrt refuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/multi_vector.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "st_folders.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_multi_vector_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::st_cpu_options;
using testing::st_folder;
using testing::st_reference;

constexpr const char* kFolders[] = {"multi_vector", "multi_vector_min", "multi_vector_mean"};

// The library's similarity() of the folder's queries against its documents: MaxSim, or MeanMaxSim for
// multi_vector_mean (references made before it hold "maxsim" only).
const json& library_scores(const json& want) { return want.contains("similarity") ? want["similarity"] : want["maxsim"]; }

// Per text, the per-token vectors of the folder's model as encode_query (true) / encode_document do.
std::vector<std::vector<std::vector<float>>> encode(const EmbedModel& m, const json& texts, bool is_query) {
  const PerTokenOut* p = m.as<PerTokenOut>();
  std::vector<Encoding> batch;
  for (const auto& t : texts) {
    auto e = p->tokenize_tokens(per_token_task_prompt(m, is_query) + t.get<std::string>(), is_query, nullptr);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (e.ok()) batch.push_back(std::move(e).value());
  }
  auto r = p->embed_tokens(batch, is_query, {});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r->tokens : std::vector<std::vector<std::vector<float>>>{};
}

TEST(StMultiVectorEncoder, OpensAsMultiVectorAndMatchesTheLibrary) {
  const json ref = st_reference(6);
  for (const char* name : kFolders) {
    const json& want = ref["folders"][name];
    ASSERT_EQ(detect_kind(st_folder(6, name).string()), ModelKind::kMultiVector) << name;
    auto m = open_model(st_folder(6, name).string(), st_cpu_options());
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().to_string();
    std::vector<std::vector<std::vector<float>>> got[2];
    for (bool query : {true, false}) {
      const char* task = query ? "query" : "document";
      got[query] = encode(**m, ref["texts"], query);
      ASSERT_EQ(got[query].size(), want[task].size()) << name;
      double worst = 1.0;
      for (size_t i = 0; i < got[query].size(); ++i)
        worst = std::min(worst, testing::expect_st_token_vectors(got[query][i], want[task][i],
                                                                 std::string(name) + " " + task + " " + std::to_string(i)));
      std::printf("%s %s: worst per-token cosine 1 - %.1e\n", name, task, 1.0 - worst);
    }
    // The kept tokens' ids (the library's input_ids under its scoring mask) are the encoding's, in order, less
    // the dropped ones; "fixed" expansion keeps every query position.
    const PerTokenOut* p = (*m)->as<PerTokenOut>();
    for (bool query : {true, false}) {
      const char* task = query ? "query" : "document";
      for (size_t i = 0; i < ref["texts"].size(); ++i) {
        auto e = p->tokenize_tokens(per_token_task_prompt(**m, query) + ref["texts"][i].get<std::string>(), query, nullptr);
        ASSERT_TRUE(e.ok());
        const auto kept = want[std::string(task) + "_ids"][i].get<std::vector<int64_t>>();
        size_t k = 0;
        for (size_t t = 0; t < e->ids.size() && k < kept.size(); ++t) k += e->ids[t] == kept[k];
        EXPECT_EQ(k, kept.size()) << name << " " << task << " " << i << ": the kept ids are not in the encoding";
        if (query && std::string(name) == "multi_vector") {
          EXPECT_EQ(e->ids, kept) << name << " query " << i;
        }
      }
    }
    // MaxSim of each query against each document, and the folder's similarity() (MeanMaxSim divides by
    // the query's kept vector count).
    const std::string fn = (*m)->similarity_fn_name();
    EXPECT_EQ(fn, want.value("similarity_fn_name", std::string("maxsim"))) << name;
    for (size_t q = 0; q < got[1].size(); ++q)
      for (size_t d = 0; d < got[0].size(); ++d) {
        const double w = want["maxsim"][q][d].get<double>();
        EXPECT_NEAR(maxsim(got[1][q], got[0][d]), w, 1e-4 * std::max(1.0, std::fabs(w))) << name << " " << q << "," << d;
        const double s = library_scores(want)[q][d].get<double>();
        EXPECT_NEAR(late_interaction_score(fn, got[1][q], got[0][d]), s, 1e-4 * std::max(1.0, std::fabs(s)))
            << name << " " << fn << " " << q << "," << d;
      }
  }
}

TEST(StMultiVectorEncoder, CliMatchesTheLibrary) {
  const json ref = st_reference(6);
  std::string quoted;
  for (const auto& t : ref["texts"]) quoted += " " + dlrt::testing::quote(t.get<std::string>());
  for (const char* name : kFolders) {
    for (const char* task : {"query", "document"}) {
      const std::string cmd = dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " +
                              dlrt::testing::quote(st_folder(6, name).string()) + " --device cpu --threads 2 --quiet --" +
                              task + " --json" + quoted;
      auto r = dlrt::testing::run_command(cmd);
      ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
      const json j = json::parse(r.output, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << r.output;
      const json& want = ref["folders"][name][task];
      ASSERT_EQ(j["data"].size(), want.size()) << name;
      double worst = 1.0;
      for (size_t i = 0; i < want.size(); ++i)
        worst = std::min(worst, testing::expect_st_token_vectors(
                                    j["data"][i]["embeddings"].get<std::vector<std::vector<float>>>(), want[i],
                                    std::string("cli ") + name + " " + task + " " + std::to_string(i)));
      std::printf("cli %s %s: worst per-token cosine 1 - %.1e\n", name, task, 1.0 - worst);
    }
    // dlrt rerank: the folder's similarity() of the query (its task prompt) against the documents (theirs).
    const size_t q = 1;
    auto r = dlrt::testing::run_command(dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " rerank --model " +
                                        dlrt::testing::quote(st_folder(6, name).string()) +
                                        " --device cpu --threads 2 --json --query " +
                                        dlrt::testing::quote(ref["texts"][q].get<std::string>()) + quoted);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    ASSERT_EQ(j["results"].size(), ref["texts"].size()) << r.output;
    for (const json& row : j["results"]) {
      const double w = library_scores(ref["folders"][name])[q][row["index"].get<size_t>()].get<double>();
      EXPECT_NEAR(row["score"].get<double>(), w, 1e-4 * std::max(1.0, std::fabs(w))) << name << " " << row;
    }
  }
}

// A copy of a folder with FILE's JSON changed by `edit`; open_model's status.
Status open_edited(const char* name, const std::string& file, const std::function<void(json&)>& edit) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_mve_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, name), dir, fs::copy_options::recursive);
  json j = json::parse(testing::slurp(dir / file));
  edit(j);
  std::ofstream(dir / file) << j.dump();
  Status s = open_model(dir.string(), st_cpu_options()).status();
  fs::remove_all(dir);
  return s;
}

TEST(StMultiVectorEncoder, SettingsItDoesNotImplementAreRefused) {
  const struct {
    const char* folder;
    std::string file;
    std::function<void(json&)> edit;
    const char* says;
  } cases[] = {
      {"multi_vector_min", "3_HierarchicalTokenPooling/config.json", [](json& j) { j["pool_factor"] = 2.0; },
       "pool_factor"},
      {"multi_vector", "modules.json",
       [](json& j) { j[2]["type"] = "sentence_transformers.multi_vector_encoder.modules.token_pooling.LambdaTokenPooling"; },
       "LambdaTokenPooling"},
      {"multi_vector", "sentence_bert_config.json", [](json& j) { j["transformer_task"] = "retrieval"; }, "retrieval"},
      {"multi_vector", "1_Dense/config.json", [](json& j) { j["module_input_name"] = "sentence_embedding"; },
       "sentence_embedding"},
  };
  for (const auto& c : cases) {
    Status s = open_edited(c.folder, c.file, c.edit);
    ASSERT_FALSE(s.ok()) << c.says;
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
  }
  // A malformed query_expansion is the folder's error.
  Status s = open_edited("multi_vector", "sentence_bert_config.json",
                         [](json& j) { j["query_expansion"] = {{"strategy", "longest"}, {"length", 8}}; });
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.to_string();
  // The sentence-embedding API refuses it by its kind, never pooling its tokens.
  auto e = Embedder::create(st_folder(6, "multi_vector").string(), st_cpu_options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported) << e.status().to_string();
}

}  // namespace
}  // namespace dlrt::embed::st_multi_vector_test
