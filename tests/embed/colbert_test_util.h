// The multi-vector test model (tests/models/retrieval/colbert_tiny, made by
// tests/models/make_colbert_models.py with PyLate) and PyLate's reference
// outputs, and the comparisons the multi-vector tests make against them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed_test_util.h"

namespace dlrt::embed::testing {

inline std::filesystem::path colbert_dir() {
  return std::filesystem::path(DLRT_TEST_DIR) / "models" / "retrieval" / "colbert_tiny";
}

inline const nlohmann::json& colbert_expected() {
  static const nlohmann::json j = nlohmann::json::parse(
      slurp(std::filesystem::path(DLRT_TEST_DIR) / "models" / "retrieval" / "colbert_tiny_expected.json"));
  return j;
}

// A scratch folder for this process (`name` inside it).
inline std::filesystem::path colbert_scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("dlrt_colbert_" + std::to_string(::getpid())) / name;
}

// A copy of the model whose config_sentence_transformers.json also has `overrides`.
inline std::filesystem::path colbert_variant(const std::string& name, const nlohmann::json& overrides) {
  auto dir = copy_folder(colbert_dir(), colbert_scratch(name));
  auto config = nlohmann::json::parse(slurp(dir / "config_sentence_transformers.json"));
  for (const auto& [k, v] : overrides.items()) config[k] = v;
  write_file(dir / "config_sentence_transformers.json", config.dump(2));
  return dir;
}

// Per-token vectors against the reference: the same number of tokens and a
// cosine of at least 0.99999 for each.
inline void expect_tokens_match(const std::vector<std::vector<float>>& got, const nlohmann::json& want,
                                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what << ": token count";
  for (size_t t = 0; t < got.size(); ++t) {
    const auto w = want[t].get<std::vector<double>>();
    ASSERT_EQ(got[t].size(), w.size()) << what << " token " << t;
    double dot = 0, na = 0, nb = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      dot += got[t][k] * w[k];
      na += static_cast<double>(got[t][k]) * got[t][k];
      nb += w[k] * w[k];
    }
    EXPECT_GE(dot / std::sqrt(na * nb), 0.99999) << what << " token " << t;
  }
}

// MaxSim scores of one query against the documents: within 1e-4 of PyLate's
// and in the same order.
inline void expect_scores_match(const std::vector<float>& got, const nlohmann::json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], want[j].get<double>(), 1e-4) << what << " document " << j;
  for (size_t a = 0; a < got.size(); ++a) {
    for (size_t b = 0; b < got.size(); ++b) {
      if (want[a].get<double>() > want[b].get<double>()) {
        EXPECT_GT(got[a], got[b]) << what << ": order of " << a << ", " << b;
      }
    }
  }
}

}  // namespace dlrt::embed::testing
