// The sentence-transformers module test folders (tests/models/st_modules,
// made by make_st_modules.py) and their torch references, for the tests that
// read them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/models/embedder.h"
#include "embed_test_util.h"

namespace dlrt::embed::testing {

inline std::filesystem::path st_dir() { return std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules"; }

// stN_reference.json: every folder's reference outputs as that sentence-transformers version gives them.
inline nlohmann::json st_reference(int major) {
  return nlohmann::json::parse(slurp(st_dir() / ("st" + std::to_string(major) + "_reference.json")));
}

inline std::filesystem::path st_folder(int major, const std::string& name) {
  return st_dir() / ("st" + std::to_string(major) + "_" + name);
}

// Two CPU threads, as every test bounds its threads.
inline EmbedderOptions st_cpu_options() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  return o;
}

// A multi-vector encoder's per-token vectors against encode_query /
// encode_document's: the same count, each cosine >= 0.9999. The worst cosine.
inline double expect_st_token_vectors(const std::vector<std::vector<float>>& got, const nlohmann::json& want,
                                      const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what << ": kept token count";
  double worst = 1.0;
  for (size_t t = 0; t < got.size() && t < want.size(); ++t) {
    const auto w = want[t].get<std::vector<double>>();
    double ab = 0, aa = 0, bb = 0;
    for (size_t k = 0; k < w.size() && k < got[t].size(); ++k) {
      ab += got[t][k] * w[k];
      aa += static_cast<double>(got[t][k]) * got[t][k];
      bb += w[k] * w[k];
    }
    EXPECT_EQ(got[t].size(), w.size()) << what << " token " << t;
    const double cos = ab / std::sqrt(std::max(aa * bb, 1e-300));
    EXPECT_GE(cos, 0.9999) << what << " token " << t;
    worst = std::min(worst, cos);
  }
  return worst;
}

}  // namespace dlrt::embed::testing
