// Helpers shared by the server tests of folders sentence-transformers saved (tests/models/st_modules/).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../embed/retrieval_reference.h"
#include "embed/models/registry.h"
#include "test_server.h"

namespace dlrt::embed::testing {

inline std::filesystem::path st_modules_dir() {
  return std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules";
}

// A server (2 CPU threads) over the folder `name` that sentence-transformers `major` saved.
struct StFolderServer {
  StFolderServer(int major, const std::string& name) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto m = open_model((st_modules_dir() / ("st" + std::to_string(major) + "_" + name)).string(), o);
    EXPECT_TRUE(m.ok()) << name << ": " << m.status().to_string();
    if (m.ok()) server.server->set_model(std::move(m).value());
  }
  TestServer server{ServiceConfig{}, /*with_model=*/false};
};

inline nlohmann::json st_modules_reference(int major) {
  return nlohmann::json::parse(slurp(st_modules_dir() / ("st" + std::to_string(major) + "_reference.json")));
}

// The reference's non-empty texts (the routes refuse empty inputs) and their places.
inline nlohmann::json st_nonempty_texts(const nlohmann::json& ref, std::vector<size_t>& at) {
  nlohmann::json texts = nlohmann::json::array();
  for (size_t i = 0; i < ref["texts"].size(); ++i)
    if (!ref["texts"][i].get<std::string>().empty()) texts.push_back(ref["texts"][i]), at.push_back(i);
  return texts;
}

// A vector from a route against the library's: cosine >= 0.99999.
inline void expect_st_cosine(const nlohmann::json& got, const nlohmann::json& want, const std::string& what) {
  const auto g = got.get<std::vector<double>>();
  const auto w = want.get<std::vector<double>>();
  ASSERT_EQ(g.size(), w.size()) << what;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < w.size(); ++i) ab += g[i] * w[i], aa += g[i] * g[i], bb += w[i] * w[i];
  EXPECT_GE(ab / std::sqrt(aa * bb), 0.99999) << what;
}

}  // namespace dlrt::embed::testing
