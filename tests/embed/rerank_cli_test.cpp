// `dlrt rerank` driven as a user would, on the committed retrieval test models:
// an LLM reranker (Qwen3) and a multi-vector (ColBERT) folder against the
// references their own libraries computed, --file / --top-n / --raw-scores /
// --instruction, and the usage and folder errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "retrieval_reference.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using dlrt::testing::quote;
using dlrt::testing::run_command;
using testing::retrieval_dir;

std::string rerank_cmd(const fs::path& model, const std::string& query, const std::string& rest) {
  return quote(dlrt::testing::dlrt_binary()) + " rerank --model " + quote(model.string()) + " --device cpu --query " +
         quote(query) + " " + rest;
}

nlohmann::json read_reference(const char* file) {
  return nlohmann::json::parse(testing::slurp(retrieval_dir() / file));
}

// --json's results as index -> score.
std::vector<double> scores_by_index(const nlohmann::json& j, size_t count) {
  std::vector<double> out(count, NAN);
  for (const auto& r : j["results"]) out.at(r["index"].get<size_t>()) = r["score"].get<double>();
  return out;
}

nlohmann::json run_json(const std::string& cmd) {
  auto r = run_command(cmd + " --json --quiet 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

TEST(RerankCli, LlmRerankerMatchesTheReferenceBestFirst) {
  const nlohmann::json ref = read_reference("decoder_reference.json")["qwen3_rerank"];
  const auto docs = ref["documents"].get<std::vector<std::string>>();
  const auto want = ref["scores"].get<std::vector<double>>();
  const std::string query = ref["pairs"][0][0];
  std::string args;
  for (const auto& d : docs) args += " " + quote(d);
  const fs::path model = retrieval_dir() / "qwen3_rerank";

  nlohmann::json j = run_json(rerank_cmd(model, query, args));
  EXPECT_EQ(j["kind"], "llm_reranker");
  ASSERT_EQ(j["results"].size(), docs.size());
  const auto got = scores_by_index(j, docs.size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << docs[i];
  for (size_t k = 1; k < docs.size(); ++k)
    EXPECT_GE(j["results"][k - 1]["score"].get<double>(), j["results"][k]["score"].get<double>());
  EXPECT_EQ(j["results"][0]["document"], docs[j["results"][0]["index"].get<size_t>()]);

  // The folder's instruction replaced; the logit instead of the probability.
  const std::string instruction = ref["custom_instruction"];
  const auto want_custom = ref["scores_custom"].get<std::vector<double>>();
  j = run_json(rerank_cmd(model, query, "--instruction " + quote(instruction) + args));
  const auto custom = scores_by_index(j, docs.size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_NEAR(custom[i], want_custom[i], 1e-4) << docs[i];
  j = run_json(rerank_cmd(model, query, "--raw-scores" + args));
  const auto raw = scores_by_index(j, docs.size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_NEAR(1 / (1 + std::exp(-raw[i])), want[i], 1e-4) << docs[i];
}

TEST(RerankCli, MultiVectorScoresByMaxSim) {
  const nlohmann::json ref = read_reference("colbert_tiny_expected.json");
  const auto docs = ref["documents"].get<std::vector<std::string>>();
  const auto queries = ref["queries"].get<std::vector<std::string>>();
  const auto maxsim = ref["default"]["maxsim"].get<std::vector<std::vector<double>>>();
  std::string args;
  for (const auto& d : docs) args += " " + quote(d);
  for (size_t q = 0; q < queries.size(); ++q) {
    nlohmann::json j = run_json(rerank_cmd(retrieval_dir() / "colbert_tiny", queries[q], args));
    EXPECT_EQ(j["kind"], "multi_vector");
    const auto got = scores_by_index(j, docs.size());
    for (size_t i = 0; i < docs.size(); ++i) EXPECT_NEAR(got[i], maxsim[q][i], 1e-4 * std::fabs(maxsim[q][i]));
  }
}

// Text output: SCORE, index and document tab-separated, best first; --file and --top-n.
TEST(RerankCli, TextOutputFromAFileKeepsTheTopN) {
  const nlohmann::json ref = read_reference("decoder_reference.json")["qwen3_rerank"];
  const auto docs = ref["documents"].get<std::vector<std::string>>();
  const fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "rerank_cli";
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "docs.txt");
    for (const auto& d : docs) f << d << "\r\n";
  }
  auto r = run_command(rerank_cmd(retrieval_dir() / "qwen3_rerank", ref["pairs"][0][0], "--quiet --top-n 2 --file " +
                                                                                        quote((dir / "docs.txt").string())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Reference order: document 1 (0.967), then 0 (0.425), then 2 (0.331).
  std::istringstream lines(r.output);
  std::string line;
  std::vector<std::string> got;
  while (std::getline(lines, line)) got.push_back(line);
  ASSERT_EQ(got.size(), 2u) << r.output;
  EXPECT_EQ(got[0].substr(got[0].find('\t')), "\t1\t" + docs[1]);
  EXPECT_EQ(got[1].substr(got[1].find('\t')), "\t0\t" + docs[0]);
  EXPECT_NEAR(std::stod(got[0].substr(0, got[0].find('\t'))), ref["scores"][1].get<double>(), 1e-4);
}

TEST(RerankCli, WrongFoldersAndOptionsAreClearErrors) {
  const fs::path r = retrieval_dir();
  struct Case {
    std::string cmd, message;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {rerank_cmd(r / "dense_embed", "q", "a"), "is not a reranker", 2},
      {rerank_cmd(r / "splade_tiny", "q", "a"), "is not a reranker", 2},
      {rerank_cmd(r / "colbert_tiny", "q", "--instruction x a"), "--instruction applies to LLM rerankers", 2},
      {rerank_cmd(r / "qwen3_rerank", "q", ""), "no DOCUMENT given", 2},
      {rerank_cmd(r / "qwen3_rerank", "q", "--top-n 0 a"), "--top-n must be at least 1", 2},
      {rerank_cmd(r / "qwen3_rerank", "q", "--file /nonexistent/docs.txt"), "cannot read --file", 2},
      {rerank_cmd(r / "no_such_folder", "q", "a"), "does not exist", 3},
      {quote(dlrt::testing::dlrt_binary()) + " rerank --model " + quote((r / "qwen3_rerank").string()) + " a",
       "missing --query", 2},
  };
  for (const Case& c : cases) {
    auto res = run_command(c.cmd + " 2>&1");
    EXPECT_EQ(res.exit_code, c.exit_code) << c.cmd << "\n" << res.output;
    EXPECT_NE(res.output.find(c.message), std::string::npos) << c.cmd << "\n" << res.output;
  }
}

}  // namespace
}  // namespace dlrt::embed
