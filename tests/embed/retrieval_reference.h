// The committed retrieval test models (tests/models/retrieval/, written by
// tests/models/make_retrieval_models.py) and their reference outputs, which
// sentence-transformers computed in torch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed_test_util.h"

namespace dlrt::embed::testing {

inline std::filesystem::path retrieval_dir() { return std::filesystem::path(DLRT_TEST_DIR) / "models" / "retrieval"; }
inline std::filesystem::path splade_tiny() { return retrieval_dir() / "splade_tiny"; }
inline nlohmann::json splade_reference() {
  return nlohmann::json::parse(slurp(retrieval_dir() / "splade_tiny_reference.json"));
}

// `indices`/`values` against a reference row {"indices": [...], "values": [...]}:
// the same non-zero indices, values within 1e-4 relative, or 1e-6 absolute for
// values under 0.01 (float32 rounding of the torch reference itself: a weight of
// 0.002 differs by 2.8e-7 between the AVX2 and AVX-512 kernels).
inline void expect_sparse_row(const std::vector<int64_t>& indices, const std::vector<float>& values,
                              const nlohmann::json& want, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(indices, want["indices"].get<std::vector<int64_t>>());
  const auto w = want["values"].get<std::vector<double>>();
  ASSERT_EQ(values.size(), w.size());
  for (size_t k = 0; k < w.size(); ++k)
    EXPECT_NEAR(values[k], w[k], std::max(1e-4 * std::fabs(w[k]), 1e-6)) << "index " << (k < indices.size() ? indices[k] : -1);
}

}  // namespace dlrt::embed::testing
